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
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sdc_core import rng
from sdc_core.columns import restore
from sdc_core.errors import SdcInputError
from sdc_core.methods.common import category_codes
from sdc_core.methods.households import HouseholdPlan
from sdc_core.methods.spec import Release
from sdc_core.recipe import (
    METHODS,
    Recipe,
    check_step,
    labelled,
    recipe_households,
    run_step,
)

#: What a finite ε means, with {eps} and {ratio} = e^ε filled in.
MEANING = ("ε = {eps}: a respondent's answer is at most e^ε = {ratio} times likelier to have "
           "given this release than any other answer")
#: What ε = ∞ means.
NO_DENIABILITY = ("ε = ∞: no deniability; some released value rules a true answer out, so the "
                  "release can prove what a respondent did not answer")
#: The release kinds with a transition matrix of their own (value by value).
MODELLED = (Release.PERTURBATION, Release.RECODING)


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

    @property
    def deniable(self) -> bool:
        """Whether ε is finite (every released value leaves every true one possible)."""
        return math.isfinite(self.epsilon)

    @property
    def meaning(self) -> str:
        """What ε means, in one sentence (:data:`MEANING`, :data:`NO_DENIABILITY`)."""
        return meaning(self.epsilon)

    def to_json(self) -> dict[str, Any]:
        """The figures as JSON values: plain floats; ``epsilon`` is ``None`` (JSON null) when
        it is infinite (no deniability; ``deniable`` says so too). The matrix and the posterior
        are {true level: {released level: probability}}."""
        return {"column": self.column, "method": self.method,
                "epsilon": float(self.epsilon) if self.deniable else None,
                "deniable": self.deniable, "meaning": self.meaning,
                "guess_accuracy": float(self.guess_accuracy), "baseline": float(self.baseline),
                "n_blank": int(self.n_blank), "unreachable": list(self.unreachable),
                "steps": list(self.steps), "not_modelled": list(self.not_modelled),
                "prior": {str(k): float(v) for k, v in self.prior.items()},
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


def deniability(matrix: pd.DataFrame, pi: pd.Series, column: str = "", method: str = "",
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


def compose(first: pd.DataFrame, then: pd.DataFrame) -> pd.DataFrame:
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
    b = _with_rows(then, [str(v) for v in first.columns])
    return pd.DataFrame(first.to_numpy(dtype=np.float64)
                        @ b.loc[[str(v) for v in first.columns]].to_numpy(),
                        index=[str(v) for v in first.index], columns=b.columns)


def _pairs_matrix(before: pd.Series, after: pd.Series) -> pd.DataFrame:
    """Each true level's records by released level, as shares: the 0/1 matrix of a recoding."""
    c_in, lv_in = category_codes(before)
    c_out, lv_out = category_codes(after)
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


def step_matrix(step: dict[str, Any], column: pd.Series) -> pd.DataFrame:
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
        return matrix.astype(np.float64)
    return _pairs_matrix(frame[checked["column"]], out[checked["column"]])


def recipe_deniability(recipe: Recipe, original: pd.DataFrame, recodings: bool = False,
                       matrices: Mapping[int, pd.DataFrame] | None = None
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
    composed: dict[str, pd.DataFrame] = {}
    methods: dict[str, list[str]] = {c: [] for c in tracked}
    used: dict[str, list[int]] = {c: [] for c in tracked}
    skipped: dict[str, list[int]] = {c: [] for c in tracked}
    last = max(i for i, s in enumerate(recipe.steps)
               if set(_columns(s)) & set(tracked))
    current, plan = original, recipe_households(recipe, original)  # the release's households
    for i, step in enumerate(recipe.steps[: last + 1]):
        spec = METHODS[step["method"]]
        cols = [c for c in _columns(step) if c in methods]
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
            m = own.astype(np.float64) if own is not None \
                else _pairs_matrix(before, current[c])
            composed[c] = compose(composed[c], m) if c in composed else m
            methods[c].append(step["method"])
            used[c].append(i + 1)
    out = []
    for c in tracked:
        if c not in methods:
            continue
        pi, blanks = prior(original[c])
        out.append(deniability(composed[c], pi, column=c, method=" → ".join(methods[c]),
                               n_blank=blanks, steps=used[c], not_modelled=skipped[c]))
    return out


def _held_matrices(recipe: Recipe, original: pd.DataFrame, held: Mapping[int, pd.DataFrame],
                   tracked: list[str]) -> list[Deniability] | None:
    """:func:`recipe_deniability` from the step matrices ``held``, or None when a
    step on a tracked column is not a one-column perturbation with its matrix there."""
    used: dict[str, list[int]] = {c: [] for c in tracked}
    for i, step in enumerate(recipe.steps, start=1):
        on = [c for c in _columns(step) if c in used]
        if not on:
            continue
        spec = METHODS[step["method"]]
        if (spec.target != "column" or spec.release is not Release.PERTURBATION
                or i not in held):
            return None
        used[on[0]].append(i)
    out = []
    for c in tracked:
        matrix = held[used[c][0]].astype(np.float64)
        for i in used[c][1:]:
            matrix = compose(matrix, held[i].astype(np.float64))
        pi, blanks = prior(original[c])
        out.append(deniability(matrix, pi, column=c,
                               method=" → ".join(recipe.steps[i - 1]["method"] for i in used[c]),
                               n_blank=blanks, steps=used[c]))
    return out


def _columns(step: dict[str, Any]) -> list[str]:
    return [step["column"]] if "column" in step else list(step.get("columns", []))
