"""Deniability: what perturbation buys a respondent, per perturbed column (docs/measures.md,
"Deniability: what perturbation buys").

A recipe step that moves categories at random (PRAM in every form, random relabeling,
randomized response) releases value k for a record whose true value is i with probability
P[i, k] = P(released k | true i), the step's **transition matrix**; a public recoding (category
recoding, banding, top/bottom coding) is its deterministic limit, a 0/1 matrix from each true
level to the level it becomes. A column moved by several steps has the product of their
matrices, in step order. From P and the column's original distribution π (its present values):

- the **local-DP ε** = ln max_k max_{i,j} P(k|i)/P(k|j): whatever a respondent's true answer, a
  given release is at most e^ε times likelier under it than under any other answer; ε = ∞
  (no deniability) when some release rules a true value out (P(k|j) = 0 < P(k|i));
- the attacker's **best-guess accuracy** Σ_k max_i P(k|i)·π_i, who guesses the likeliest true
  value of each released one (Bayes), beside the **baseline** max_i π_i (guess the commonest
  value, release unseen) and 1 (no protection);
- the **posterior** P(true i | released k) = P(k|i)·π_i / Σ_j P(k|j)·π_j, one column per
  released level (a released level no present value can produce has no column: it is listed in
  ``unreachable``).

Blanks: every one of these methods releases a blank as a blank and a value as a value, so a
blank tells only that the true value was blank. Blanks are left out of π, of the matrix and of
the figures (their number is reported as ``n_blank``).

Levels are named as the methods' own matrices name them (``str`` of the value), so the matrix of
a PRAM, relabeling or randomized response step is the table the method itself returns.

With a household (or person) id released beside the records (docs/measures.md, "Deniability
with a household id"), :func:`household_figures` adds what all of a household's records give
away together (:class:`HouseholdGuess`): the best of two attackers' accuracy when they guess
every member's true value from all of its household's released values (the majority vote, and
the Bayes guess for a value constant within the household), and the composed bound
ε_h = m·ε (m the most records with a value in one household), or ε itself when the column was
drawn once per household.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from sdc_core import rng
from sdc_core.data.columns import restore
from sdc_core.errors import SdcInputError
from sdc_core.households import NEARLY_CONSTANT, constant_shares, household_codes
from sdc_core.methods.common import MAX_DENSE_LEVELS, RankOne, category_codes
from sdc_core.methods.households import HouseholdPlan
from sdc_core.methods.spec import PER_HOUSEHOLD, Release
from sdc_core.recipe import (
    METHODS,
    Recipe,
    check_step,
    labelled,
    recipe_households,
    run_step,
    step_columns,
)

#: What a finite ε means, with {eps} and {ratio} = e^ε filled in.
MEANING = ("ε = {eps}: a respondent's answer is at most e^ε = {ratio} times likelier to have "
           "given this release than any other answer")
#: What ε = ∞ means.
NO_DENIABILITY = ("ε = ∞: no deniability; some released value rules a true answer out, so the "
                  "release can prove what a respondent did not answer")
#: The release kinds with a transition matrix of their own (value by value).
MODELLED = (Release.PERTURBATION, Release.RECODING)


class _Wide(Exception):
    """A column's figures need a matrix past the bound: they are not computed (the reason)."""


#: The household attackers of :class:`HouseholdGuess`, by their key in JSON.
HOUSEHOLD_ATTACKERS = {"majority": "majority vote", "bayes": "Bayes guess"}


@dataclass(frozen=True)
class HouseholdGuess:
    """What a household id released beside a perturbed column gives away (docs/measures.md,
    "Deniability with a household id").

    Parameters
    ----------
    household : str
        The household (or person) id column.
    households : int
        The households with a present true value of the column.
    max_records : int
        m, the most records with a present true value in one household.
    per_household : bool
        Whether every step on the column drew once per household (``per_household: true``,
        or a column constant within every household, which a recipe with this household keeps
        so): a household's records then carry one draw.
    epsilon : float
        The composed bound ε_h: ε when drawn once per household, else m·ε (``math.inf``: none).
    majority_accuracy : float
        The share of the records with a true value whose household's most frequent released
        value is that value (ties: the value commonest in π, then the first in the column's
        order; a household with no released value: the commonest in π).
    bayes_accuracy : float
        The same share for the Bayes guess argmax_i π_i·Π_{j∈h} P(y_j|i) of a value constant
        within the household (ties as the majority vote's).
    constant_share : float or None
        The share of the households of two or more records constant in the column in the
        original (None: no such household).
    column : str
        The column.
    record_accuracy : float
        The best-guess accuracy from one record (:attr:`Deniability.guess_accuracy`).
    record_epsilon : float
        The per-record ε.
    """

    household: str
    households: int
    max_records: int
    per_household: bool
    epsilon: float
    majority_accuracy: float
    bayes_accuracy: float
    constant_share: float | None
    column: str = ""
    record_accuracy: float = math.nan
    record_epsilon: float = math.nan

    @property
    def attacker(self) -> str:
        """The key of the attacker with the higher accuracy (the majority vote on a tie)."""
        return "majority" if self.majority_accuracy >= self.bayes_accuracy else "bayes"

    @property
    def guess_accuracy(self) -> float:
        """The household best-guess accuracy: the better of the two attackers'."""
        return max(self.majority_accuracy, self.bayes_accuracy)

    @property
    def undone(self) -> bool:
        """Whether the column is perturbed record by record although it is constant, or nearly
        so, within the households (a share ≥ :data:`NEARLY_CONSTANT`): the household id
        undoes part of the perturbation."""
        return (not self.per_household and self.constant_share is not None
                and self.constant_share >= NEARLY_CONSTANT)

    @property
    def meaning(self) -> str:
        """What the household id gives away, in a sentence or two."""
        eps = _eps_text(self.record_epsilon)
        told = (f"With {self.household} released, an attacker who reads all of a household's "
                f"records ({HOUSEHOLD_ATTACKERS[self.attacker]}) guesses {self.column} right "
                f"for {_pct(self.guess_accuracy)} of the records, against "
                f"{_pct(self.record_accuracy)} from one record. ")
        if self.per_household:
            return told + (f"Each household carries one draw, so a person's ε is the "
                           f"record's, {eps}.")
        return told + (f"Drawn record by record, a household of up to {self.max_records} "
                       f"records composes to ε = {self.max_records} × {eps} = "
                       f"{_eps_text(self.epsilon)}.")

    @property
    def warning(self) -> str | None:
        """When :attr:`undone`: that the household id undoes part of the perturbation."""
        if not self.undone:
            return None
        assert self.constant_share is not None
        return (f"{self.column} is constant within {_pct(self.constant_share)} of the "
                "households of two or more records and is perturbed record by record: the "
                f"household id {self.household} undoes part of the perturbation. Draw it once "
                "per household (per_household) to keep a person's ε the record's.")

    def to_json(self) -> dict[str, Any]:
        """The figures under their JSON keys; an infinite ε and a missing share are null."""
        return {"household": self.household, "households": int(self.households),
                "household_max_records": int(self.max_records),
                "per_household": bool(self.per_household),
                "household_epsilon": float(self.epsilon) if math.isfinite(self.epsilon)
                else None,
                "household_guess_accuracy": _number(self.guess_accuracy),
                "household_guess_attacker": HOUSEHOLD_ATTACKERS[self.attacker],
                "household_majority_accuracy": _number(self.majority_accuracy),
                "household_bayes_accuracy": _number(self.bayes_accuracy),
                "household_constant_share": self.constant_share,
                "household_meaning": self.meaning, "household_warning": self.warning}


def _number(v: float) -> float | None:
    return float(v) if math.isfinite(v) else None


def _pct(v: float) -> str:
    return f"{100 * v:.1f} %" if math.isfinite(v) else "n/a"


def _eps_text(eps: float) -> str:
    return f"{eps:.4g}" if math.isfinite(eps) else "∞"


@dataclass(frozen=True, eq=False)
class Deniability:
    """The exact deniability figures of one perturbed column.

    Parameters
    ----------
    column : str
        The column.
    method : str
        The steps composed, in order ("pram", "recode → relabel").
    epsilon : float
        The local-DP ε = ln max_k max_{i,j} P(k|i)/P(k|j); ``math.inf`` for no deniability.
    guess_accuracy : float
        Σ_k max_i P(k|i)·π_i, the attacker's chance of guessing the true value from the
        released one.
    baseline : float
        max_i π_i, the chance of guessing the commonest value without the release.
    matrix : pandas.DataFrame
        P(released k | true i): rows the true levels i, columns the released levels k.
    posterior : pandas.DataFrame
        P(true i | released k): rows the true levels, one column per reachable released level
        (each sums to 1).
    prior : pandas.Series
        π, the share of each true level among the present values of the original column.
    n_blank : int
        Blank values of the original column (released blank; not in π).
    unreachable : tuple of str
        Released levels no present true value can produce (no posterior column).
    steps : tuple of int
        The recipe steps composed (from 1); empty for a matrix given directly.
    not_modelled : tuple of int
        Steps that also touch the column without a per-value transition (local suppression):
        left out of the matrix.
    household : HouseholdGuess, optional
        With a household id: what all of a household's released records give away
        (:func:`household_figures`).
    wide : str
        Non-empty for a column of more than :data:`~sdc_core.methods.common.MAX_DENSE_LEVELS`
        levels: why ``matrix`` and ``posterior`` are empty (docs/measures.md, "Wide columns"),
        and, when ε and the accuracy could not be had in closed form either (NaN), why not.
    largest_posterior : float
        max over the released levels k of max_i P(true i | released k) (the posterior a reader
        is surest of; given for a wide column, whose posterior is not shown).

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.risk.deniability import deniability
    >>> m = pd.DataFrame([[0.75, 0.25], [0.25, 0.75]], index=["no", "yes"],
    ...                  columns=["no", "yes"])
    >>> d = deniability(m, pd.Series({"no": 0.8, "yes": 0.2}), column="drugs")
    >>> round(d.epsilon, 4), round(d.guess_accuracy, 2), d.baseline
    (1.0986, 0.8, 0.8)
    >>> round(d.to_json()["epsilon"], 6), d.to_json()["deniable"]
    (1.098612, True)
    """

    column: str
    method: str
    epsilon: float
    guess_accuracy: float
    baseline: float
    matrix: pd.DataFrame
    posterior: pd.DataFrame
    prior: pd.Series
    n_blank: int = 0
    unreachable: tuple[str, ...] = ()
    steps: tuple[int, ...] = ()
    not_modelled: tuple[int, ...] = ()
    household: HouseholdGuess | None = None
    wide: str = ""
    largest_posterior: float = math.nan

    @property
    def deniable(self) -> bool:
        """Whether ε is finite (every released value leaves every true one possible)."""
        return math.isfinite(self.epsilon)

    @property
    def meaning(self) -> str:
        """What ε means, in one sentence (:data:`MEANING`, :data:`NO_DENIABILITY`), or why it
        was not computed."""
        if math.isnan(self.epsilon):
            return self.wide
        return meaning(self.epsilon)

    def to_json(self) -> dict[str, Any]:
        """The figures as JSON values: plain floats; ``epsilon`` is ``None`` (JSON null) when
        it is infinite (no deniability; ``deniable`` says so too). The matrix and the posterior
        are {true level: {released level: probability}}; with household figures, their keys
        (:meth:`HouseholdGuess.to_json`) come before them."""
        out = {"column": self.column, "method": self.method,
               "epsilon": float(self.epsilon) if self.deniable else None,
               "deniable": self.deniable, "meaning": self.meaning,
               "guess_accuracy": float(self.guess_accuracy), "baseline": float(self.baseline),
               "n_blank": int(self.n_blank), "unreachable": list(self.unreachable),
               "steps": list(self.steps), "not_modelled": list(self.not_modelled)}
        if self.household is not None:
            out |= self.household.to_json()
        if self.wide:
            out |= {"guess_accuracy": _number(self.guess_accuracy), "not_shown": self.wide,
                    "largest_posterior": _number(self.largest_posterior)}
            return out | {"prior": {str(k): float(v) for k, v in self.prior.items()},
                          "matrix": None, "posterior": None}
        return out | {"prior": {str(k): float(v) for k, v in self.prior.items()},
                      "matrix": _nested(self.matrix), "posterior": _nested(self.posterior)}


def _nested(table: pd.DataFrame) -> dict[str, dict[str, float]]:
    return {str(i): {str(k): float(v) for k, v in row.items()} for i, row in table.iterrows()}


def meaning(epsilon: float) -> str:
    """What a local-DP ε means for a respondent, in one sentence.

    Parameters
    ----------
    epsilon : float
        The ε (``math.inf``: none).

    Returns
    -------
    str
        :data:`MEANING` with ε and e^ε, or :data:`NO_DENIABILITY`.

    Examples
    --------
    >>> import math
    >>> meaning(math.log(3))
    "ε = 1.099: a respondent's answer is at most e^ε = 3 times likelier to have given this release than any other answer"
    >>> meaning(math.inf).split(";")[0]
    'ε = ∞: no deniability'
    """  # noqa: E501
    if not math.isfinite(epsilon):
        return NO_DENIABILITY
    ratio = f"{math.exp(epsilon):.4g}" if epsilon < 700 else f"10^{epsilon / math.log(10):.0f}"
    return MEANING.format(eps=f"{epsilon:.4g}", ratio=ratio)


def local_epsilon(matrix: pd.DataFrame | np.ndarray) -> float:
    """The local-DP ε of a transition matrix.

    ε = ln max_k max_{i,j} P(k|i)/P(k|j) = max_k [ln max_i P(k|i) − ln min_j P(k|j)] over the
    released levels k some true level can produce; ∞ when P(k|j) = 0 < P(k|i) for some k. A
    matrix of one true level has ε = 0 (there is nothing to deny).

    Parameters
    ----------
    matrix : pandas.DataFrame or numpy.ndarray
        P[i, k] = P(released k | true i), rows summing to 1.

    Returns
    -------
    float
        ε ≥ 0, or ``math.inf``.

    Examples
    --------
    >>> import numpy as np
    >>> round(local_epsilon(np.array([[0.75, 0.25], [0.25, 0.75]])), 6)  # ln 3
    1.098612
    >>> local_epsilon(np.eye(2))
    inf
    """
    p = np.asarray(matrix, dtype=np.float64)
    if p.size == 0:
        return 0.0
    high, low = p.max(axis=0), p.min(axis=0)
    used = high > 0
    if (low[used] <= 0).any():
        return math.inf
    return float(max(np.max(np.log(high[used]) - np.log(low[used]), initial=0.0), 0.0))


def prior(s: pd.Series) -> tuple[pd.Series, int]:
    """π of a column: each present level's share of the present values, levels named as the
    methods' matrices name them (sorted, ``str``), and the number of blanks.

    Parameters
    ----------
    s : pandas.Series
        The original column.

    Returns
    -------
    tuple of (pandas.Series, int)
        π by level name, and the number of blank values (left out of π).

    Examples
    --------
    >>> import pandas as pd
    >>> pi, blanks = prior(pd.Series(["b", "a", None, "a"]))
    >>> pi.to_dict(), blanks
    ({'a': 0.6666666666666666, 'b': 0.3333333333333333}, 1)
    """
    codes, levels = category_codes(s)
    present = codes >= 0
    counts = np.bincount(codes[present], minlength=len(levels)).astype(np.float64)
    share = counts / max(counts.sum(), 1.0)
    return (pd.Series(share, index=pd.Index([str(v) for v in levels], dtype=object)),
            int((~present).sum()))


def deniability(matrix: pd.DataFrame | RankOne, pi: pd.Series, column: str = "",
                method: str = "",
                n_blank: int = 0, steps: Sequence[int] = (),
                not_modelled: Sequence[int] = ()) -> Deniability:
    """The exact figures of a transition matrix for a column of distribution π.

    ε as :func:`local_epsilon`; guess accuracy Σ_k max_i P(k|i)·π_i; baseline max_i π_i;
    posterior P(true i | released k) = P(k|i)·π_i / Σ_j P(k|j)·π_j. A level of π without a row
    of the matrix is released as it is (an identity row); a row without π has π = 0.

    Parameters
    ----------
    matrix : pandas.DataFrame
        P(released k | true i), rows the true levels, columns the released levels.
    pi : pandas.Series
        The original distribution by true level (shares of the present values).
    column, method : str
        What the figures are of (shown, not used).
    n_blank : int
        Blank values of the column (not in π).
    steps, not_modelled : sequence of int
        The recipe steps the matrix composes, and those left out of it.

    Returns
    -------
    Deniability
        The figures.

    Raises
    ------
    SdcInputError
        When a row of the matrix does not sum to 1 or holds a negative probability.

    Examples
    --------
    >>> import pandas as pd
    >>> m = pd.DataFrame([[0.95, 0.03, 0.02], [0.05, 0.93, 0.02], [0.05, 0.03, 0.92]],
    ...                  index=list("ABC"), columns=list("ABC"))
    >>> d = deniability(m, pd.Series({"A": 0.5, "B": 0.3, "C": 0.2}))
    >>> round(d.epsilon, 4), round(d.guess_accuracy, 3), d.baseline  # ln 46
    (3.8286, 0.938, 0.5)
    >>> d.posterior.round(2)["B"].tolist()
    [0.05, 0.93, 0.02]
    """
    if isinstance(matrix, RankOne):
        return _rank_one(matrix, pi, column, method, n_blank, steps, not_modelled)
    m = _with_rows(matrix.astype(np.float64), [str(v) for v in pi.index])
    p = m.to_numpy()
    if (p < 0).any() or (np.abs(p.sum(axis=1) - 1.0) > 1e-9).any():
        raise SdcInputError("a transition matrix's rows must be probabilities summing to 1")
    weights = pd.Series(pi.to_numpy(dtype=np.float64), index=[str(v) for v in pi.index])
    w = weights.reindex(m.index, fill_value=0.0).to_numpy()
    joint = p * w[:, None]  # P(true i, released k)
    released = joint.sum(axis=0)
    reach = released > 0
    posterior = pd.DataFrame(joint[:, reach] / released[reach], index=m.index,
                             columns=m.columns[reach])
    return Deniability(
        column=column, method=method, epsilon=local_epsilon(p),
        guess_accuracy=float(joint.max(axis=0, initial=0.0).sum()),
        baseline=float(w.max(initial=0.0)), matrix=m, posterior=posterior,
        prior=pd.Series(w, index=m.index), n_blank=int(n_blank),
        unreachable=tuple(str(k) for k in m.columns[~reach]), steps=tuple(steps),
        not_modelled=tuple(not_modelled))


def _rank_one(matrix: RankOne, pi: pd.Series, column: str, method: str, n_blank: int,
              steps: Sequence[int], not_modelled: Sequence[int]) -> Deniability:
    """:func:`deniability` of P = a·I + 1·cᵀ in closed form (O(K), no K × K array).

    With P(k|i) = a·[i = k] + c_k over the true levels i of π (those of π outside the matrix's
    levels are released as they are: then no closed form, the figures are NaN):

    - ε = max_k ln(max(a + c_k, c_k) / min(a + c_k, c_k)) over the released levels k some
      true level can produce (∞ when that minimum is 0; 0 for a single level);
    - accuracy Σ_k max((a + c_k)·π_k, c_k·max_{i≠k} π_i);
    - the largest posterior max_k max_i P(i|k), P(i|k) = P(k|i)·π_i / (a·π_k + c_k).
    """
    levels = [str(v) for v in pi.index]
    k = len(matrix.levels)
    note = (f"{column or 'the column'} has {k:,} levels, more than "
            f"{MAX_DENSE_LEVELS:,}: its transition matrix and posterior are not shown "
            "(ε, the best-guess accuracy and the largest posterior are exact, in closed form)")
    index = {v: j for j, v in enumerate(matrix.levels)}
    if any(v not in index for v in levels):
        return Deniability(column, method, math.nan, math.nan,
                           float(pi.max()) if len(pi) else 0.0, pd.DataFrame(), pd.DataFrame(),
                           pi.astype(np.float64), int(n_blank), (), tuple(steps),
                           tuple(not_modelled), wide=f"{column or 'the column'}: not computed, "
                           "a level of the original is not among the released levels of its "
                           f"{k:,}-level matrix")
    w = np.zeros(k)
    w[[index[v] for v in levels]] = pi.to_numpy(dtype=np.float64)
    present = np.zeros(k, dtype=bool)
    present[[index[v] for v in levels]] = True
    a, c = matrix.a, matrix.c
    top = np.sort(w)[::-1]
    first, second = top[0], (top[1] if k > 1 else 0.0)
    others = np.where(w == first, second, first)  # max_{i≠k} π_i
    own = (a + c) * w
    accuracy = float(np.maximum(own, c * others).sum())
    released = a * w + c
    reach = released > 0
    # ε over the columns k: the diagonal entry (if k is a true level) and the others c_k
    n_true = int(present.sum())
    hi = np.where(present, np.maximum(a + c, c if n_true > 1 else a + c), c)
    lo = np.where(present, np.minimum(a + c, c if n_true > 1 else a + c), c)
    used = hi > 0
    if n_true <= 1:
        eps = 0.0
    elif (lo[used] <= 0).any():
        eps = math.inf
    else:
        eps = float(max(np.max(np.log(hi[used]) - np.log(lo[used]), initial=0.0), 0.0))
    post = np.maximum(own, c * others)[reach] / released[reach]
    return Deniability(column, method, eps, accuracy, float(first), pd.DataFrame(),
                       pd.DataFrame(), pi.astype(np.float64), int(n_blank),
                       tuple(matrix.levels[j] for j in np.flatnonzero(~reach)),
                       tuple(steps), tuple(not_modelled), wide=note,
                       largest_posterior=float(post.max(initial=0.0)))


def _with_rows(m: pd.DataFrame, levels: Sequence[str]) -> pd.DataFrame:
    """``m`` with an identity row (the level released as it is) for each level it lacks."""
    m = m.copy()
    m.index, m.columns = [str(v) for v in m.index], [str(v) for v in m.columns]
    missing = [v for v in levels if v not in set(m.index)]
    if not missing:
        return m
    cols = [*m.columns, *[v for v in missing if v not in set(m.columns)]]
    extra = pd.DataFrame(0.0, index=missing, columns=cols)
    for v in missing:
        extra.loc[v, v] = 1.0
    return pd.concat([m.reindex(columns=cols, fill_value=0.0), extra])


def compose(first: pd.DataFrame | RankOne,
            then: pd.DataFrame | RankOne) -> pd.DataFrame | RankOne:
    """The matrix of two steps in order: P = P₁·P₂, the released levels of the first matched to
    the true levels of the second by name (a level the second step has no row for, because no
    record held it when it ran, is released as it is).

    Parameters
    ----------
    first, then : pandas.DataFrame
        The transition matrices of the earlier and the later step.

    Returns
    -------
    pandas.DataFrame
        Rows the true levels of ``first``, columns the released levels of ``then``.

    Examples
    --------
    >>> import pandas as pd
    >>> band = pd.DataFrame([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]], index=["1", "2", "3"],
    ...                     columns=["1–2", "3"])
    >>> flip = pd.DataFrame([[0.9, 0.1], [0.1, 0.9]], index=["1–2", "3"],
    ...                     columns=["1–2", "3"])
    >>> compose(band, flip).loc["2"].tolist()
    [0.9, 0.1]
    """
    if isinstance(first, RankOne) or isinstance(then, RankOne):
        if isinstance(first, RankOne) and isinstance(then, RankOne) \
                and first.levels == then.levels:
            return first.then(then)
        raise _Wide("its steps' matrices are too wide to compose (more than "
                    f"{MAX_DENSE_LEVELS:,} levels over different categories)")
    b = _with_rows(then, [str(v) for v in first.columns])
    return pd.DataFrame(first.to_numpy(dtype=np.float64)
                        @ b.loc[[str(v) for v in first.columns]].to_numpy(),
                        index=[str(v) for v in first.index], columns=b.columns)


def _pairs_matrix(before: pd.Series, after: pd.Series) -> pd.DataFrame:
    """Each true level's records by released level, as shares: the 0/1 matrix of a recoding."""
    c_in, lv_in = category_codes(before)
    c_out, lv_out = category_codes(after)
    if len(lv_in) * len(lv_out) > MAX_DENSE_LEVELS ** 2:
        raise _Wide(f"a {len(lv_in):,} × {len(lv_out):,} recoding matrix is not built (at most "
                    f"{MAX_DENSE_LEVELS:,}² entries)")
    both = (c_in >= 0) & (c_out >= 0)
    width = max(len(lv_out), 1)
    counts = np.bincount(c_in[both] * width + c_out[both], minlength=len(lv_in) * width)
    counts = counts.reshape(len(lv_in), width)[:, : len(lv_out)].astype(np.float64)
    rows = counts.sum(axis=1, keepdims=True)
    keep = rows[:, 0] > 0
    return pd.DataFrame(counts[keep] / rows[keep],
                        index=[str(v) for v in lv_in[keep]], columns=[str(v) for v in lv_out])


def _step_output(df: pd.DataFrame, step: dict[str, Any], seed: int, index: int,
                 rid: np.ndarray | None, household: str | None = None,
                 plan: HouseholdPlan | None = None
                 ) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The table after the step (as ``apply_recipe`` builds it: the new values restored to the
    original columns' kinds) and the step's own transition matrix (PRAM-like steps)."""
    done = run_step(df, step, seed, index, rid, household, plan)
    if done.dropped:
        return df.drop(columns=done.dropped), None
    out = df.copy()
    for c in done.values.columns:
        out[c] = restore(df[c], done.values[c])
    return out, done.matrix


def step_matrix(step: dict[str, Any], column: pd.Series) -> pd.DataFrame | RankOne:
    """The transition matrix of one recipe step on a column, P[i, k] = P(released k | true i).

    A PRAM, relabeling or randomized response step gives the matrix the method itself builds
    from its parameters and the column (``pram.flip_matrix``, ``pram.invariant_matrix`` with the
    column's marginal, a user matrix; relabeling (1 − α)·I + α·1πᵀ with π the column's
    distribution, as the method redraws from it; randomized response q·I + (1 − q)/K over its K
    categories). A public recoding (category recoding, banding, top/bottom coding) gives the
    0/1 matrix from each present level to the level it becomes. Blanks are left out.

    Parameters
    ----------
    step : dict
        A recipe step on one column (``{"method": "pram", "column": "x", "p": 0.1}``).
    column : pandas.Series
        The column as the step receives it.

    Returns
    -------
    pandas.DataFrame
        Rows the true levels, columns the released levels (named ``str(value)``).

    Raises
    ------
    SdcInputError
        When the step is not valid, or its method has no per-value transition (numeric
        perturbation, suppression, drop).

    Examples
    --------
    >>> import pandas as pd
    >>> s = pd.Series(["A"] * 5 + ["B"] * 3 + ["C"] * 2, name="q1")
    >>> step_matrix({"method": "relabel", "column": "q1", "alpha": 0.1}, s).round(2)
          A     B     C
    A  0.95  0.03  0.02
    B  0.05  0.93  0.02
    C  0.05  0.03  0.92
    """
    checked = check_step(0, step)
    spec = METHODS[checked["method"]]
    if spec.target != "column" or spec.release not in MODELLED:
        raise SdcInputError(f"{spec.label} has no per-value transition matrix (its release is "
                            f"a {spec.release.value})")
    frame = column.to_frame(checked["column"])
    out, matrix = _step_output(frame, checked, 0, 0, None)
    if matrix is not None:
        return _float(matrix)
    return _pairs_matrix(frame[checked["column"]], out[checked["column"]])


def recipe_deniability(recipe: Recipe, original: pd.DataFrame, recodings: bool = False,
                       matrices: Mapping[int, pd.DataFrame | RankOne] | None = None
                       ) -> list[Deniability]:
    """The exact figures of every perturbed column of a recipe applied to ``original``.

    A column is perturbed when a PRAM, relabeling or randomized response step names it
    (``recodings=True``: also when only a public recoding does). Its matrix is the product, in
    step order, of the matrices (:func:`step_matrix`) of every one-column step on it, each built
    on the column as that step receives it when the recipe is applied (the same draws as
    ``apply_recipe``: a relabeling after a PRAM redraws from the PRAM's output). A step of
    another kind that touches the column (local suppression) is left out of the matrix and
    listed in ``not_modelled``; a dropped column has no figures. π is the original column's
    distribution (:func:`prior`).

    Parameters
    ----------
    recipe : Recipe
        The recipe.
    original : pandas.DataFrame
        The original table.
    recodings : bool, default False
        Also report the columns only a public recoding touches (ε = ∞ when it keeps two
        levels apart).
    matrices : mapping of int to pandas.DataFrame, optional
        The step matrices of the recipe applied to ``original``, by step number (from 1), as
        ``apply_recipe(recipe, original).matrices`` holds them: when every step on a perturbed
        column is a one-column perturbation whose matrix is there, those matrices are composed
        instead of running the steps again (the same figures).

    Returns
    -------
    list of Deniability
        One per column, in the order the columns are first perturbed.

    Raises
    ------
    SdcInputError
        When a step cannot run on the table (as ``apply_recipe``).

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.recipe import parse_recipe
    >>> from sdc_core.risk.deniability import recipe_deniability
    >>> df = pd.DataFrame({"q1": ["A"] * 5 + ["B"] * 3 + ["C"] * 2})
    >>> recipe = parse_recipe({"seed": 1, "steps": [
    ...     {"method": "relabel", "column": "q1", "alpha": 0.1}]})
    >>> [(d.column, d.method, round(d.epsilon, 4), round(d.guess_accuracy, 3))
    ...  for d in recipe_deniability(recipe, df)]
    [('q1', 'relabel', 3.8286, 0.938)]
    """
    kinds = {Release.PERTURBATION} | ({Release.RECODING} if recodings else set())
    recipe = labelled(recipe, original)  # its bands written as the release writes them
    tracked: list[str] = []
    for step in recipe.steps:
        spec = METHODS[step["method"]]
        if spec.target == "column" and spec.release in kinds and step["column"] not in tracked:
            tracked.append(step["column"])
    if not tracked:
        return []
    if matrices is not None and not recodings:
        held = _held_matrices(recipe, original, matrices, tracked)
        if held is not None:
            return held
    if recipe.record_id is None:
        rid = rng.record_ids(len(original))
    elif recipe.record_id in original.columns:  # the draws apply_recipe makes
        rid = rng.ids_from_column(original[recipe.record_id].to_numpy())
    else:
        raise SdcInputError(f"recipe: record_id column '{recipe.record_id}' is not in the data")
    composed: dict[str, pd.DataFrame | RankOne] = {}
    wide: dict[str, str] = {}  # the columns past the bound: why their figures are not computed
    methods: dict[str, list[str]] = {c: [] for c in tracked}
    used: dict[str, list[int]] = {c: [] for c in tracked}
    skipped: dict[str, list[int]] = {c: [] for c in tracked}
    last = max(i for i, s in enumerate(recipe.steps)
               if set(step_columns(s)) & set(tracked))
    current, plan = original, recipe_households(recipe, original)  # the release's households
    for i, step in enumerate(recipe.steps[: last + 1]):
        spec = METHODS[step["method"]]
        cols = [c for c in step_columns(step) if c in methods]
        modelled = spec.target == "column" and spec.release in MODELLED and bool(cols)
        before = current[cols[0]] if modelled else None
        current, own = _step_output(current, step, recipe.seed, i, rid, recipe.household,
                                    plan)
        for c in cols:
            if spec.release is Release.DROP:
                methods.pop(c)
            elif not modelled:
                skipped[c].append(i + 1)
        if modelled:
            c = cols[0]
            assert before is not None
            if c not in wide:
                try:
                    m = _float(own) if own is not None else _pairs_matrix(before, current[c])
                    composed[c] = compose(composed[c], m) if c in composed else m
                except _Wide as why:
                    wide[c] = str(why)
            methods[c].append(step["method"])
            used[c].append(i + 1)
    out = []
    for c in tracked:
        if c not in methods:
            continue
        pi, blanks = prior(original[c])
        how = " → ".join(methods[c])
        out.append(_not_computed(c, how, pi, blanks, used[c], wide[c]) if c in wide else
                   deniability(composed[c], pi, column=c, method=how, n_blank=blanks,
                               steps=used[c], not_modelled=skipped[c]))
    return out


def _float(m: pd.DataFrame | RankOne) -> pd.DataFrame | RankOne:
    return m if isinstance(m, RankOne) else m.astype(np.float64)


def _not_computed(column: str, method: str, pi: pd.Series, blanks: int, steps: Sequence[int],
                  why: str) -> Deniability:
    """The figures of a column whose matrix is past the bound and has no closed form: NaN,
    with the reason (docs/measures.md, "Wide columns")."""
    return Deniability(column, method, math.nan, math.nan, float(pi.max()) if len(pi) else 0.0,
                       pd.DataFrame(), pd.DataFrame(), pi, int(blanks), (), tuple(steps),
                       wide=f"{column}: not computed, {why}")


def _held_matrices(recipe: Recipe, original: pd.DataFrame,
                   held: Mapping[int, pd.DataFrame | RankOne],
                   tracked: list[str]) -> list[Deniability] | None:
    """:func:`recipe_deniability` from the step matrices ``held``, or None when a
    step on a tracked column is not a one-column perturbation with its matrix there."""
    used: dict[str, list[int]] = {c: [] for c in tracked}
    for i, step in enumerate(recipe.steps, start=1):
        on = [c for c in step_columns(step) if c in used]
        if not on:
            continue
        spec = METHODS[step["method"]]
        if (spec.target != "column" or spec.release is not Release.PERTURBATION
                or i not in held):
            return None
        used[on[0]].append(i)
    out = []
    for c in tracked:
        pi, blanks = prior(original[c])
        how = " → ".join(recipe.steps[i - 1]["method"] for i in used[c])
        try:
            matrix = _float(held[used[c][0]])
            for i in used[c][1:]:
                matrix = compose(matrix, _float(held[i]))
        except _Wide as why:
            out.append(_not_computed(c, how, pi, blanks, used[c], str(why)))
            continue
        out.append(deniability(matrix, pi, column=c, method=how, n_blank=blanks,
                               steps=used[c]))
    return out


def household_figures(figures: Sequence[Deniability], recipe: Recipe, original: pd.DataFrame,
                      released: pd.DataFrame, household: str) -> list[Deniability]:
    """The figures with what the household id gives away added to each (docs/measures.md,
    "Deniability with a household id"; :class:`HouseholdGuess`).

    For each perturbed column c, with P its transition matrix and π its distribution (the
    figures'), x_i the true and y_i the released value of record i, and h(i) its household:

    - the **majority vote** guesses every member of h the value most frequent among the
      released values of h; the **Bayes guess** the true level i of largest
      log π_i + Σ_{j∈h} log P(y_j|i), the best guess of a value constant within h from records
      perturbed independently. Both break ties by the larger π_i, then the first level in the
      column's order; a household without a released value gets the commonest level of π. When
      the column was drawn once per household, each distinct released value of a household
      counts once (its records carry one draw). A released value with no column in P (a blank,
      a value a later step wrote) gives no vote.
    - the accuracy of each is the share of the records with a true value x_i equal to their
      household's guess; ``household_guess_accuracy`` is the larger of the two.
    - ε_h = m·ε with m = max_h |{i ∈ h : x_i present}| (m records each ε-deniable compose to
      m·ε), or ε when every step on c drew once per household (the recipe names the same
      household, and the steps set ``per_household`` or c is constant within every household
      of the original, which the recipe keeps so).

    Parameters
    ----------
    figures : sequence of Deniability
        The per-record figures (:func:`recipe_deniability` of ``recipe`` on ``original``).
    recipe : Recipe
        The recipe that made the release.
    original, released : pandas.DataFrame
        The true and the released table, rows aligned; ``original`` holds ``household``.
    household : str
        The household (or person) id column.

    Returns
    -------
    list of Deniability
        The figures, each with its :attr:`Deniability.household`.

    Raises
    ------
    SdcInputError
        When the household column is not in the original, has a blank id, or the tables'
        rows differ in number.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.recipe import apply_recipe, parse_recipe
    >>> df = pd.DataFrame({"id": [1, 1, 1, 2, 2, 2], "married": [1, 1, 1, 0, 0, 0]})
    >>> recipe = parse_recipe({"seed": 3, "steps": [
    ...     {"method": "pram", "column": "married", "p": 0.2}]})
    >>> out = apply_recipe(recipe, df).data
    >>> (d,) = household_figures(recipe_deniability(recipe, df), recipe, df, out, "id")
    >>> d.household.max_records, round(d.household.epsilon, 4)  # 3 × ln 4
    (3, 4.1589)
    """
    if len(original) != len(released):
        raise SdcInputError(f"the release has {len(released)} rows and the original "
                            f"{len(original)}: a household's records cannot be matched")
    codes, n = household_codes(original, household)
    plan_level = _constant_columns(recipe, original, household, [d.column for d in figures])
    out = []
    for d in figures:
        if d.column not in released.columns or d.wide:  # a wide column: no household guess
            out.append(d)
            continue
        drawn = [recipe.steps[i - 1] for i in d.steps
                 if METHODS[recipe.steps[i - 1]["method"]].release is Release.PERTURBATION]
        once = recipe.household == household and (d.column in plan_level or bool(drawn) and all(
            s.get(PER_HOUSEHOLD) for s in drawn))
        out.append(replace(d, household=_household_guess(d, original[d.column],
                                                         released[d.column], codes, n, once,
                                                         household, original)))
    return out


def _constant_columns(recipe: Recipe, original: pd.DataFrame, household: str,
                      columns: Sequence[str]) -> set[str]:
    """Which of ``columns`` a recipe with the household ``household`` runs on the households
    at every step: those constant within every household of the original."""
    if recipe.household != household:
        return set()
    shares = constant_shares(original[[household, *columns]], household, columns)
    return {c for c in columns if shares.get(c, 1.0) == 1.0}


#: The most cells (households × levels) one block of :func:`_guesses` holds at once.
BLOCK_CELLS = 2_000_000


def _household_guess(d: Deniability, x: pd.Series, y: pd.Series, codes: np.ndarray, n: int,
                     once: bool, household: str, original: pd.DataFrame) -> HouseholdGuess:
    """The household figures of one column (:func:`household_figures`). The true levels are
    taken in the column's order (:func:`prior`'s), which breaks the guesses' ties: a step drawn
    once per household lists the levels its households' first records hold first."""
    order = {str(v): i for i, v in enumerate(prior(x)[0].index)}
    matrix = d.matrix.iloc[np.argsort([order.get(str(v), len(order)) for v in d.matrix.index],
                                      kind="stable")]
    true_levels = [str(v) for v in matrix.index]
    pi = d.prior.reindex(true_levels, fill_value=0.0).to_numpy(dtype=np.float64)
    x_code = _codes_in(x, true_levels)
    y_code = _codes_in(y, [str(v) for v in matrix.columns])
    majority, bayes = _guesses(matrix, pi, codes, n, y_code, once)
    present = x_code >= 0
    m = int(np.bincount(codes[present], minlength=n).max(initial=0))
    share = constant_shares(original[[household, d.column]], household, [d.column])
    eps = d.epsilon if once else _times(max(m, 1), d.epsilon)
    return HouseholdGuess(
        household=household, households=int(len(np.unique(codes[present]))), max_records=m,
        per_household=once, epsilon=eps,
        majority_accuracy=_hits(majority, x_code, codes, present),
        bayes_accuracy=_hits(bayes, x_code, codes, present),
        constant_share=share.get(str(d.column)), column=str(d.column),
        record_accuracy=d.guess_accuracy, record_epsilon=d.epsilon)


def _guesses(matrix: pd.DataFrame, pi: np.ndarray, codes: np.ndarray, n: int,
             y_code: np.ndarray, once: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each household's majority-vote and Bayes guess (a true level's position), from the
    released levels ``y_code`` (−1: no vote), households taken in blocks of at most
    :data:`BLOCK_CELLS` cells (a column of many levels in many households)."""
    true_levels = [str(v) for v in matrix.index]
    released_levels = [str(v) for v in matrix.columns]
    where = {k: i for i, k in enumerate(true_levels)}
    # the majority vote reads a released level as the true level of the same name
    as_true = np.array([where.get(k, -1) for k in released_levels], dtype=np.int64)
    readable = as_true >= 0
    p = matrix.to_numpy(dtype=np.float64)
    log_p = np.log(np.where(p > 0, p, 1.0))
    log_pi = np.log(np.where(pi > 0, pi, 1.0))
    voted = np.flatnonzero(y_code >= 0)
    voted = voted[np.argsort(codes[voted], kind="stable")]  # by household
    owner = codes[voted]
    majority = np.empty(n, dtype=np.int64)
    bayes = np.empty(n, dtype=np.int64)
    step = max(1, BLOCK_CELLS // max(len(released_levels), len(true_levels), 1))
    for start in range(0, max(n, 1), step):
        stop = min(start + step, n)
        lo, hi = np.searchsorted(owner, [start, stop])
        counts = np.zeros((stop - start, len(released_levels)), dtype=np.float64)
        np.add.at(counts, (owner[lo:hi] - start, y_code[voted[lo:hi]]), 1.0)
        if once:  # the household's records repeat one draw: each value counts once
            counts = np.minimum(counts, 1.0)
        votes = np.zeros((stop - start, len(true_levels)), dtype=np.float64)
        votes[:, as_true[readable]] = counts[:, readable]
        majority[start:stop] = _pick(votes, pi)
        # the Bayes guess of a value constant within the household
        score = counts @ log_p.T + log_pi
        ruled_out = ((counts > 0).astype(np.float64) @ (p <= 0).T > 0) | (pi <= 0)[None, :]
        score[ruled_out] = -np.inf
        bayes[start:stop] = _pick(score, pi)
    return majority, bayes


def _codes_in(s: pd.Series, levels: Sequence[str]) -> np.ndarray:
    """Each value's position in ``levels`` (named as the matrices name them, ``str`` of the
    value); −1 for a blank or a value not among them."""
    codes, found = category_codes(s)
    where = {k: i for i, k in enumerate(levels)}
    lookup = np.array([where.get(str(v), -1) for v in found], dtype=np.int64)
    return np.where(codes >= 0, lookup[np.maximum(codes, 0)] if len(lookup) else -1, -1)


def _pick(score: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """Each household's guess: the level of highest score; within 1e-9 of it (a tie), the
    level of larger π, then the first; a household whose every level is ruled out (−∞) or
    with no level at all gets the commonest level of π."""
    if score.shape[1] == 0:
        return np.full(score.shape[0], -1, dtype=np.int64)
    best = score.max(axis=1, keepdims=True)
    finite = np.isfinite(best[:, 0])
    tied = np.isfinite(score) & (score >= best - 1e-9 * np.maximum(1.0, np.abs(best)))
    tied[~finite] = True  # nothing possible: the prior alone
    return np.argmax(np.where(tied, pi[None, :], -1.0), axis=1)


def _hits(guess: np.ndarray, x_code: np.ndarray, codes: np.ndarray,
          present: np.ndarray) -> float:
    """The share of the records with a true value that their household's guess gets right."""
    if not present.any():
        return math.nan
    return float((guess[codes[present]] == x_code[present]).mean())


def _times(m: int, eps: float) -> float:
    """m·ε for m ≥ 1 records (∞ stays ∞)."""
    return math.inf if not math.isfinite(eps) else m * eps
