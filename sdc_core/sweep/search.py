"""Combined grids: every combination of the settings of a sweep, and the search for the
cheapest one that meets a risk target.

A combined grid has one **dimension** per grid setting: its values ordered from the weakest
protection to the strongest (a method's ``main`` parameter in the direction its declaration
calls ``stronger``; the ``off`` value, which leaves the step out, comes first). A
**combination** picks one value per dimension: a vector x of value positions. Its recipe holds
the chosen steps in the Protect page's order (the methods' ``order``, then the grid's order).

Target. A combination *meets* the target when its risk measure r(x) ≤ ``at_most`` and, when the
target also names a utility to keep (``keep``: the mean CI overlap of the benchmark analyses
≥ 0.9, say), that utility is kept. The **best** combination has the least loss among those that
meet it — the headline ``IL1_release`` (:mod:`sdc_core.utility.il1`) or the loss the grid names
(``1 − mean CI overlap``, the worst table's TVD, S_pMSE: :mod:`sdc_core.utility.validity`); ties
go to fewer suppressed values, then fewer steps, then the earlier combination in enumeration
order (the lexicographic order of x, dimensions in recipe order).

Pruned search. Two orders on combinations: x ≤ y *for risk* when y is at least as strong in
every monotone dimension (a method's ``main`` parameter) and equal in the others; x ≤ y *for
loss* the same, over the dimensions whose loss is also assumed monotone (not one that a later
step works on: wider bands before local suppression leave fewer values to suppress). Assume
**monotonicity**: x ≤ y for risk implies r(y) ≤ r(x); x ≤ y for loss implies IL1(x) ≤ IL1(y)
and suppressed(x) ≤ suppressed(y). Then
  - if x fails the target, every y ≤ x (risk) fails it; if x meets it, every y ≥ x (risk)
    meets it — neither needs evaluating to know;
  - if x meets the target, no y ≥ x (loss) can be better than x (it costs at least as much
    and loses the ties: it has at least as many steps and comes later), so y is skipped;
    with a utility to keep, the search bisects on the risk alone, and a y ≥ x (loss) of an x
    that meets the risk is skipped either way: it costs at least as much as x if x keeps the
    utility, and (the utility assumed monotone like the loss) keeps it no better if x does
    not.
The search walks the *lines* of one monotone dimension (loss-monotone if there is one, then the
one with the most values) over every combination of the others; on each line it finds the
weakest combination that meets the target by bisection, then evaluates the ones above it that
can still be the best (none, when loss is monotone along the line). Under monotonicity the
search returns the same best combination as trying every combination. Without it (PRAM risk
fluctuates between seeds; bands of width 15 are not nested in bands of width 10) it is a
heuristic: :func:`violations` counts the evaluated pairs that contradict the assumption, and a
grid may ask for ``"search": "exhaustive"``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

Combination = tuple[int, ...]


@dataclass(frozen=True)
class Dimension:
    """One setting of a combined grid: ``values`` weakest first, and the steps each makes
    (one, or one per column with the same value; None: the method is off). ``monotone``:
    risk is assumed not to rise along ``values``; ``loss_monotone``: nor loss to fall (not
    assumed when a later step works on one of its columns, e.g. bands before local
    suppression: wider bands leave less to suppress)."""

    label: str
    param: str
    values: tuple[Any, ...]
    steps: tuple[tuple[dict[str, Any], ...] | None, ...]
    monotone: bool
    loss_monotone: bool = True


@dataclass(frozen=True)
class Keep:
    """A utility a setting must keep besides the risk target: ``measure`` ≥ ``at_least`` (a
    figure where higher is better, such as the mean CI overlap) or ≤ ``at_most``."""

    measure: str
    at_least: float | None = None
    at_most: float | None = None

    def met(self, value: float) -> bool:
        """NaN (a figure that could not be had) does not meet it."""
        if self.at_least is not None:
            return bool(value >= self.at_least)
        assert self.at_most is not None, "a Keep has at_least or at_most"
        return bool(value <= self.at_most)

    def describe(self) -> str:
        return f"{self.measure} ≥ {self.at_least:g}" if self.at_least is not None \
            else f"{self.measure} ≤ {self.at_most:g}"


@dataclass(frozen=True)
class Target:
    """Meet ``measure`` ≤ ``at_most`` (the risk), and keep ``keep`` when it is given."""

    measure: str
    at_most: float
    keep: Keep | None = None

    def met(self, value: float) -> bool:
        """Whether the risk part is met (what the pruned search bisects on)."""
        return bool(value <= self.at_most)

    def describe(self) -> str:
        return f"{self.measure} ≤ {self.at_most:g}" + (
            f" and {self.keep.describe()}" if self.keep else "")


def recipe_steps(dims: Sequence[Dimension], x: Combination) -> list[dict[str, Any]]:
    """The steps of combination ``x``, in the dimensions' (recipe) order."""
    return [step for d, i in zip(dims, x) for step in (d.steps[i] or ())]


def combinations(dims: Sequence[Dimension]) -> Iterator[Combination]:
    """Every combination in enumeration order (lexicographic, weakest first)."""
    return itertools.product(*(range(len(d.values)) for d in dims))


def count(dims: Sequence[Dimension]) -> int:
    return int(np.prod([len(d.values) for d in dims], dtype=np.int64))


def _le(mask: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a ≤ b in the order that compares the ``mask`` dimensions and needs the others equal
    (broadcast over rows)."""
    return (a[..., mask] <= b[..., mask]).all(axis=-1) & (a[..., ~mask] == b[..., ~mask]).all(
        axis=-1)


class Lattice:
    """The evaluated combinations that met the target and those that failed it, and what they
    settle about the others: by the risk order whether a combination meets the target, by the
    loss order whether it can still be the best."""

    def __init__(self, dims: Sequence[Dimension]) -> None:
        self.risk = np.array([d.monotone for d in dims], dtype=bool)
        self.loss = self.risk & np.array([d.loss_monotone for d in dims], dtype=bool)
        self.met: list[np.ndarray] = []
        self.failed: list[np.ndarray] = []

    def meets(self, x: Combination) -> bool | None:
        """True if x is stronger than a combination that met the target, False if weaker
        than one that failed it, else None (unknown)."""
        v = np.array(x)
        if self.met and _le(self.risk, np.array(self.met), v).any():
            return True
        if self.failed and _le(self.risk, v, np.array(self.failed)).any():
            return False
        return None

    def beaten(self, x: Combination) -> bool:
        """x is at least as costly as a different combination that met the target (and loses
        the ties to it), so it cannot be the best."""
        if not self.met:
            return False
        met, v = np.array(self.met), np.array(x)
        return bool((_le(self.loss, met, v) & (met != v).any(axis=1)).any())

    def add(self, x: Combination, met: bool) -> None:
        (self.met if met else self.failed).append(np.array(x))


def pruned_search(dims: Sequence[Dimension], meets: Callable[[Combination], bool]) -> None:
    """Evaluate (through ``meets``) the combinations the pruned search needs (module
    docstring); ``meets`` records each result itself."""
    lines = [i for i, d in enumerate(dims) if d.monotone]
    if not lines:
        for x in combinations(dims):
            meets(x)
        return
    axis = max(lines, key=lambda i: (dims[i].loss_monotone, len(dims[i].values), i))
    along = dims[axis].loss_monotone  # the cheapest that meets it on a line is its weakest
    rest = [d for i, d in enumerate(dims) if i != axis]
    lattice = Lattice(dims)
    n = len(dims[axis].values)
    evaluated: set[Combination] = set()

    def at(prefix: Combination, j: int) -> Combination:
        return prefix[:axis] + (j,) + prefix[axis:]

    def evaluate(x: Combination) -> bool:
        met = meets(x)
        evaluated.add(x)
        lattice.add(x, met)
        return met

    for prefix in combinations(rest):
        if along and lattice.beaten(at(prefix, 0)):
            continue  # the whole line costs at least as much as a combination that met it
        lo, hi = 0, n  # the weakest combination on the line that meets the target: in [lo, hi]
        while lo < hi:
            mid = (lo + hi) // 2
            known = lattice.meets(at(prefix, mid))
            if known if known is not None else evaluate(at(prefix, mid)):
                hi = mid
            else:
                lo = mid + 1
        for j in range(hi, n):  # the line's combinations that meet it, while one can be best
            x = at(prefix, j)
            if lattice.beaten(x):
                if along:
                    break
                continue
            if x not in evaluated:
                evaluate(x)


def violations(dims: Sequence[Dimension], xs: Sequence[Combination], risk: Sequence[float],
               loss: Sequence[float], tolerance: float = 1e-9) -> int:
    """Evaluated pairs x ≤ y (x ≠ y) where y is riskier or cheaper than x: evidence against
    the monotonicity the pruned search assumes."""
    if len(xs) < 2:
        return 0
    lattice = Lattice(dims)
    a = np.array(xs)
    r, c = np.asarray(risk, dtype=float), np.asarray(loss, dtype=float)
    off = ~np.eye(len(a), dtype=bool)
    risk_le = _le(lattice.risk, a[:, None, :], a[None, :, :]) & off
    loss_le = _le(lattice.loss, a[:, None, :], a[None, :, :]) & off
    return int((risk_le & (r[None, :] > r[:, None] + tolerance)).sum()
               + (loss_le & (c[None, :] < c[:, None] - tolerance)).sum())
