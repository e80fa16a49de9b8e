"""Aggregate response tables with small-count suppression (seed 004, docs/tables.md).

Per question (one row per participant, an empty cell = no response), with N participants,
question threshold Q (default 10) and option threshold T (default 5):

- the question is hidden when it has fewer than Q responses;
- an option's count is shown when it is ≥ T, else shown as "less than T";
- non-response is published as the interval [max(0, N − S − m·(T − 1)), N − S], with S the sum of
  the shown counts and m the number of hidden options (a single number when the interval has
  width 0). Everything in it is known to the reader already, so it adds no information; the
  naive N − Σ rᵢ would (it uses the hidden counts). The number of responses is published the
  same way, as N minus that interval, never exactly.

**Multi-select questions** (one column per option, or a delimited list in one cell): each
participant may pick several options, so the responses are the participants who picked at least
one option and Σ counts ≥ responses. The per-option rule still holds. Non-response cannot be
derived by subtraction, and its exact value is not safe (with shown counts S and one hidden
option, responses R reveals that the hidden count is ≥ R − S). What the reader already knows
is: every respondent picked something, so R ≤ min(N, S + m·(T − 1)); the largest count and the
question threshold bound R from below, R ≥ max(largest shown count, Q) (the question is shown);
so non-response is published as [N − min(N, S + m·(T−1)), N − max(largest shown count, Q)].

:func:`audit` checks a published table: for every hidden option it computes, by integer linear
programming (``scipy.optimize.milp``), the smallest and largest count consistent with everything
published, with and without the non-response figure. The table passes when no hidden count is
pinned to one value and the non-response figure narrows no interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.optimize import Bounds, LinearConstraint, milp

from sdc_core.checks import check_whole
from sdc_core.errors import SdcInputError


@dataclass(frozen=True)
class OptionCount:
    """One answer option as published: its ``count`` (None when hidden) and the text shown."""

    option: str
    count: int | None  # None when hidden ("less than T")
    display: str


@dataclass(frozen=True)
class Interval:
    """A published range [``low``, ``high``] of a count."""

    low: int
    high: int

    @property
    def display(self) -> str:
        """The number when ``low`` = ``high``, else "between low and high"."""
        return str(self.low) if self.low == self.high else f"between {self.low} and {self.high}"

    def to_dict(self) -> dict[str, object]:
        """``low``, ``high`` and ``display``."""
        return {"low": self.low, "high": self.high, "display": self.display}


@dataclass(frozen=True)
class PublishedQuestion:
    """One question as published (module docstring).

    Made by :func:`response_table`; :meth:`frame` is the table the reader sees and
    :func:`audit` checks it.

    Parameters
    ----------
    question : str
        The question.
    shown : bool
        False when it has fewer than ``q`` responses (then nothing else is published).
    participants : int
        N, the number of participants.
    q, t : int
        The question and option thresholds.
    multi : bool
        Whether the question is multi-select.
    options : list of OptionCount
        Each option with its ``count`` (None when hidden, shown from ``t`` on) and the text shown.
    nonresponse : Interval, optional
        The published non-response interval.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core import response_table
    >>> answers = pd.DataFrame({"favourite animal": ["Cat"] * 42 + ["Dog"] * 33 + ["Elephant"] * 2
    ...                         + ["Penguin"] * 4 + ["Dolphin"] * 9 + [None] * 10})
    >>> table = response_table(answers, "favourite animal")
    >>> table.shown, table.participants, [o.count for o in table.options]
    (True, 100, [42, 33, 9, None, None])
    >>> table.nonresponse.display
    'between 8 and 16'
    """

    question: str
    shown: bool
    participants: int
    q: int
    t: int
    multi: bool
    options: list[OptionCount] = field(default_factory=list)
    nonresponse: Interval | None = None

    @property
    def responses(self) -> Interval | None:
        """The number of responses as published: N minus the non-response interval."""
        if self.nonresponse is None:
            return None
        return Interval(self.participants - self.nonresponse.high,
                        self.participants - self.nonresponse.low)

    def frame(self) -> pd.DataFrame:
        """What the reader sees: one row per option and one for non-response, with the text
        shown (a count, "less than T", or an interval)."""
        return pd.DataFrame({"option": [o.option for o in self.options] + ["(no response)"],
                             "responses": [o.display for o in self.options]
                             + [self.nonresponse.display if self.nonresponse else ""]})

    def to_dict(self) -> dict[str, object]:
        """The published table as plain Python values (JSON-ready)."""
        return {"question": self.question, "shown": self.shown, "multi_select": self.multi,
                "responses": self.responses.to_dict() if self.responses else None,
                "options": [{"option": o.option, "count": o.count, "display": o.display}
                            for o in self.options],
                "nonresponse": self.nonresponse.to_dict() if self.nonresponse else None}


def publish(question: str, counts: dict[str, int], participants: int, responses: int,
            q: int = 10, t: int = 5, multi: bool = False) -> PublishedQuestion:
    """The table an organiser sees, from the raw option counts (module docstring)."""
    check_whole("q", q)
    check_whole("t", t)
    if responses > participants:
        raise SdcInputError(f"{question}: {responses} responses but only {participants} "
                            "participants")
    if responses < q:
        return PublishedQuestion(question, False, participants, q, t, multi)
    options = [OptionCount(str(o), int(c), str(int(c))) if c >= t
               else OptionCount(str(o), None, f"less than {t}") for o, c in counts.items()]
    shown_sum = sum(o.count for o in options if o.count is not None)
    hidden = sum(o.count is None for o in options)
    if multi:
        largest = max([o.count for o in options if o.count is not None], default=0)
        high = participants - max(largest, q)
        low = participants - min(participants, shown_sum + hidden * (t - 1))
    else:
        high = participants - shown_sum
        low = max(0, participants - shown_sum - hidden * (t - 1))
    return PublishedQuestion(question, True, participants, q, t, multi, options,
                             Interval(low, max(low, high)))


def _split_cells(s: pd.Series, delimiter: str) -> pd.Series:
    """Delimited multi-select cells → one row per (participant, option), blanks dropped. The
    delimiter is text, never a pattern (pandas reads a longer one as a regular expression)."""
    items = s.dropna().astype(str).str.split(delimiter, regex=False).explode().str.strip()
    return items[items != ""]


def question_counts(df: pd.DataFrame, question: str | Sequence[str], multi: bool = False,
                    delimiter: str = ";") -> tuple[str, dict[str, int], int]:
    """(name, option counts, responses) of a question: one column (single choice, or with
    ``multi`` a delimited list per cell), or a list of indicator columns (one per option,
    selected when true / non-zero / non-empty)."""
    if isinstance(question, str):
        if question not in df.columns:
            raise SdcInputError(f"unknown question column '{question}'")
        s = df[question]
        blank = s.isna() | (s.astype(str).str.strip() == "")
        if multi:
            items = _split_cells(s[~blank], delimiter)
            # a participant counts once per option even when a cell repeats it
            pairs = pd.DataFrame({"row": items.index, "option": items.to_numpy()})
            pairs = pairs.drop_duplicates()
            counts = pairs["option"].value_counts().sort_index()
            responses = int(pairs["row"].nunique())
        else:
            counts = s[~blank].astype(str).value_counts().sort_index()
            responses = int((~blank).sum())
        return question, {str(k): int(v) for k, v in counts.items()}, responses
    cols = list(question)
    unknown = [c for c in cols if c not in df.columns]
    if unknown:
        raise SdcInputError(f"unknown option column(s): {', '.join(unknown)}")
    picked = pd.DataFrame({c: _selected(df[c]) for c in cols})
    return ("+".join(cols), {c: int(picked[c].sum()) for c in cols},
            int(picked.any(axis=1).sum()))


def _selected(s: pd.Series) -> np.ndarray:
    if pd.api.types.is_bool_dtype(s):
        return s.fillna(False).to_numpy(dtype=bool)
    if pd.api.types.is_numeric_dtype(s):
        return (s.fillna(0) != 0).to_numpy()
    text = s.astype("str").str.strip().str.lower()
    return (s.notna() & ~text.isin(["", "0", "false", "no", "n"])).to_numpy(dtype=bool)


def response_table(df: pd.DataFrame, question: str | Sequence[str],
                   participants: int | None = None, q: int = 10, t: int = 5,
                   multi: bool = False, delimiter: str = ";",
                   options: Sequence[str] | None = None) -> PublishedQuestion:
    """Publish one question of ``df`` with small-count suppression (module docstring).

    With N participants (default: the number of rows), the question is hidden when it has fewer
    than ``q`` responses; an option's count is shown when it is ≥ ``t``, else as "less than t";
    non-response is the interval [max(0, N − S − m·(t − 1)), N − S], S the sum of the shown
    counts and m the number of hidden options. ``options`` lists every answer the survey offered,
    so that options nobody chose appear as well.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per participant; an empty cell is no response.
    question : str or sequence of str
        The question's column, or one column per option of a multi-select question.
    participants : int, optional
        N (default: the number of rows).
    q : int, default 10
        The question threshold Q.
    t : int, default 5
        The option threshold T.
    multi : bool, default False
        A multi-select question in one column, options separated by ``delimiter``.
    delimiter : str, default ";"
        The separator of a multi-select cell.
    options : sequence of str, optional
        Every option the survey offered.

    Returns
    -------
    PublishedQuestion
        The question as published; ``frame()`` is the table the reader sees.

    Raises
    ------
    SdcInputError
        When a column is unknown, ``participants`` is fewer than the rows, an answer is not
        among ``options``, ``q`` or ``t`` is not a whole number, or there are more responses than
        participants.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core import response_table
    >>> answers = pd.DataFrame({"favourite animal": ["Cat"] * 42 + ["Dog"] * 33 + ["Elephant"] * 2
    ...                         + ["Penguin"] * 4 + ["Dolphin"] * 9 + [None] * 10})
    >>> response_table(answers, "favourite animal").frame()
              option         responses
    0            Cat                42
    1            Dog                33
    2        Dolphin                 9
    3       Elephant       less than 5
    4        Penguin       less than 5
    5  (no response)  between 8 and 16
    """
    n = len(df) if participants is None else int(participants)
    if participants is not None and n < len(df):
        raise SdcInputError(f"participants ({n}) is fewer than the rows of the table "
                            f"({len(df)})")
    name, counts, responses = question_counts(df, question, multi, delimiter)
    if options is not None:
        unknown = sorted(set(counts) - {str(o) for o in options})
        if unknown:
            raise SdcInputError(f"{name}: answers not among the options: {', '.join(unknown)}")
        counts = {str(o): counts.get(str(o), 0) for o in options}
    is_multi = multi or not isinstance(question, str)
    return publish(name, counts, n, responses, q, t, is_multi)


#: Seed 004's pet question: the answers of 90 of 100 participants.
PET_ANSWERS = {"Cat": 42, "Dog": 33, "Elephant": 2, "Penguin": 4, "Dolphin": 9}


def pet_survey() -> pd.DataFrame:
    """Seed 004's example: one row per participant (100), the column ``favourite animal``
    empty for the 10 who did not answer."""
    cells = [o for o, c in PET_ANSWERS.items() for _ in range(c)]
    return pd.DataFrame({"favourite animal": cells + [None] * (100 - len(cells))})


def naive_publication(table: PublishedQuestion,
                      responses: int) -> PublishedQuestion:
    """The same table with the naive exact non-response N − responses (for comparison)."""
    nr = table.participants - responses
    return PublishedQuestion(table.question, table.shown, table.participants, table.q, table.t,
                             table.multi, table.options, Interval(nr, nr))


@dataclass(frozen=True)
class OptionAudit:
    """The range of counts of a hidden option consistent with the published table, with and
    without the non-response figure."""

    option: str
    low: int
    high: int
    low_without_nonresponse: int
    high_without_nonresponse: int

    @property
    def revealed(self) -> bool:
        """The table pins the count to one value."""
        return self.low == self.high

    @property
    def narrowed_by_nonresponse(self) -> bool:
        """The non-response figure narrows the range."""
        return (self.low, self.high) != (self.low_without_nonresponse,
                                         self.high_without_nonresponse)


@dataclass(frozen=True)
class AuditResult:
    """The audit of a published table (:func:`audit`).

    One :class:`OptionAudit` per hidden option: the smallest and largest count consistent with
    the table, with and without the non-response figure. ``passes`` when no hidden count is
    pinned and the non-response figure narrows none; ``findings()`` one sentence per hidden option
    the table gives away.

    Parameters
    ----------
    options : list of OptionAudit
        One per hidden option.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core import response_table
    >>> answers = pd.DataFrame({"favourite animal": ["Cat"] * 42 + ["Dog"] * 33 + ["Elephant"] * 2
    ...                         + ["Penguin"] * 4 + ["Dolphin"] * 9 + [None] * 10})
    >>> from sdc_core import audit
    >>> result = audit(response_table(answers, "favourite animal"))
    >>> result.passes, result.findings()
    (True, [])
    """

    options: list[OptionAudit]

    @property
    def passes(self) -> bool:
        """No hidden count is pinned and the non-response figure narrows none."""
        return not any(o.revealed or o.narrowed_by_nonresponse for o in self.options)

    def findings(self) -> list[str]:
        """One sentence per hidden option the table gives away (empty when it passes)."""
        out = []
        for o in self.options:
            if o.revealed:
                out.append(f"{o.option}: the published table pins its count to {o.low}")
            elif o.narrowed_by_nonresponse:
                out.append(f"{o.option}: the non-response figure narrows its count to "
                           f"{o.low}–{o.high} (else {o.low_without_nonresponse}–"
                           f"{o.high_without_nonresponse})")
        return out


def audit(table: PublishedQuestion) -> AuditResult:
    """Check a published table: whether any hidden count can be pinned down.

    For each hidden option, the range of counts consistent with the published table (module
    docstring), by integer programming over the hidden counts and the number of responses, with
    and without the non-response figure.

    Parameters
    ----------
    table : PublishedQuestion
        The published question (:func:`response_table`).

    Returns
    -------
    AuditResult
        One range per hidden option; ``passes`` when none is pinned and the non-response figure
        narrows none.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core import response_table
    >>> answers = pd.DataFrame({"favourite animal": ["Cat"] * 42 + ["Dog"] * 33 + ["Elephant"] * 2
    ...                         + ["Penguin"] * 4 + ["Dolphin"] * 9 + [None] * 10})
    >>> from sdc_core import audit
    >>> result = audit(response_table(answers, "favourite animal"))
    >>> result.passes, [(o.option, o.low, o.high) for o in result.options]
    (True, [('Elephant', 0, 4), ('Penguin', 0, 4)])
    """
    if not table.shown:
        return AuditResult([])
    hidden = [o.option for o in table.options if o.count is None]
    shown = [o.count for o in table.options if o.count is not None]
    with_nr = [_bounds(table, hidden, shown, j, use_nonresponse=True)
               for j in range(len(hidden))]
    without = [_bounds(table, hidden, shown, j, use_nonresponse=False)
               for j in range(len(hidden))]
    return AuditResult([OptionAudit(h, a[0], a[1], b[0], b[1])
                        for h, a, b in zip(hidden, with_nr, without)])


def _bounds(table: PublishedQuestion, hidden: list[str], shown: list[int], j: int,
            use_nonresponse: bool) -> tuple[int, int]:
    """min and max of hidden count j. Variables: hidden counts h₀…h_{m−1} (0..T−1) and the
    number of responses R (max(Q, largest shown count)..N)."""
    m = len(hidden)
    n, s_sum = table.participants, sum(shown)
    lower = np.r_[np.zeros(m), max([table.q] + shown)]
    upper = np.r_[np.full(m, table.t - 1), n].astype(float)
    h_sum_minus_r = np.r_[np.ones(m), -1.0]  # Σh − R
    rows, lo, hi = [], [], []

    def constrain(row: np.ndarray, low: float, high: float) -> None:
        rows.append(row)
        lo.append(low)
        hi.append(high)

    if table.multi:
        # every respondent chose at least one option: R ≤ S + Σh; no count exceeds R
        constrain(h_sum_minus_r, -s_sum, np.inf)
        for i in range(m):
            row = np.zeros(m + 1)
            row[i], row[m] = 1.0, -1.0
            constrain(row, -np.inf, 0.0)
    else:
        constrain(h_sum_minus_r, -s_sum, -s_sum)  # R = S + Σh
    if use_nonresponse and table.nonresponse is not None:
        constrain(np.r_[np.zeros(m), 1.0], n - table.nonresponse.high, n - table.nonresponse.low)
    constraints = LinearConstraint(np.array(rows), np.array(lo), np.array(hi))
    result = []
    for sign in (1.0, -1.0):
        objective = np.zeros(m + 1)
        objective[j] = sign
        res = milp(objective, constraints=constraints, integrality=np.ones(m + 1),
                   bounds=Bounds(lower, upper))
        if not res.success:
            raise SdcInputError(f"{table.question}: the published table is inconsistent")
        result.append(int(round(res.x[j])))
    return result[0], result[1]
