"""Combined grids: every combination of the settings of a sweep, and the search for the
cheapest one that meets a risk target.

A combined grid has one **dimension** per grid setting: its values ordered from the weakest
protection to the strongest (a method's ``main`` parameter in the direction its declaration
calls ``stronger``; the ``off`` value, which leaves the step out, comes first). A
**combination** picks one value per dimension: a vector x of value positions. Its recipe holds
the chosen steps in the Protect page's order (the methods' ``order``, then the grid's order).

Target. A combination *meets* the target when its risk measure r(x) ≤ ``at_most``. The
**best** combination has the least ``IL1_overall`` among those that meet it; ties go to fewer
suppressed values, then fewer steps, then the earlier combination in enumeration order (the
lexicographic order of x, dimensions in recipe order).

Pruned search. Write x ≤ y when y is at least as strong as x in every monotone dimension and
equal in the others (a parameter other than ``main`` is not assumed monotone). Assume
**monotonicity**: x ≤ y implies r(y) ≤ r(x), IL1(x) ≤ IL1(y) and suppressed(x) ≤ suppressed(y).
Then
  - if x meets the target, no y ≥ x can be better than x (it meets it at no lower cost, and it
    loses the ties: it has at least as many steps and comes later), so y is skipped;
  - if x fails the target, every y ≤ x fails it and is skipped.
The search walks the *lines* of one monotone dimension (the one with the most values) over
every combination of the others, and on each line finds the weakest combination that meets the
target by bisection, skipping what the two rules settle. On a line only that combination can be
the best, so under monotonicity the search returns the same best combination as trying every
combination. Without monotonicity (e.g. PRAM risk fluctuates between seeds; a coarser band of
another width is not nested in a finer one) it is a heuristic: :func:`violations` counts the
evaluated pairs that contradict the assumption, and a grid may ask for ``"search":
"exhaustive"``.
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
    """One setting of a combined grid: ``values`` weakest first, and the step each makes
    (None: the method is off)."""

    label: str
    param: str
    values: tuple[Any, ...]
    steps: tuple[dict[str, Any] | None, ...]
    monotone: bool


@dataclass(frozen=True)
class Target:
    """Meet ``measure`` ≤ ``at_most``."""

    measure: str
    at_most: float

    def met(self, value: float) -> bool:
        return bool(value <= self.at_most)


def recipe_steps(dims: Sequence[Dimension], x: Combination) -> list[dict[str, Any]]:
    """The steps of combination ``x``, in the dimensions' (recipe) order."""
    return [step for d, i in zip(dims, x) if (step := d.steps[i]) is not None]


def combinations(dims: Sequence[Dimension]) -> Iterator[Combination]:
    """Every combination in enumeration order (lexicographic, weakest first)."""
    return itertools.product(*(range(len(d.values)) for d in dims))


def count(dims: Sequence[Dimension]) -> int:
    return int(np.prod([len(d.values) for d in dims], dtype=np.int64))


class Lattice:
    """The evaluated combinations that met the target and those that failed it, and what they
    settle about the others under monotonicity."""

    def __init__(self, dims: Sequence[Dimension]) -> None:
        self.monotone = np.array([d.monotone for d in dims], dtype=bool)
        self.met: list[np.ndarray] = []
        self.failed: list[np.ndarray] = []

    def _le(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Rows of ``a`` that are ≤ ``b`` (one combination), or ``b`` ≤ rows when swapped."""
        m = self.monotone
        return (a[..., m] <= b[..., m]).all(axis=-1) & (a[..., ~m] == b[..., ~m]).all(axis=-1)

    def above_met(self, x: Combination) -> bool:
        """x ≥ a combination that met the target (x cannot be the best)."""
        return bool(self.met) and bool(self._le(np.array(self.met), np.array(x)).any())

    def below_failed(self, x: Combination) -> bool:
        """x ≤ a combination that failed the target (x fails it too)."""
        return bool(self.failed) and bool(self._le(np.array(x), np.array(self.failed)).any())

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
    axis = max(lines, key=lambda i: (len(dims[i].values), i))
    rest = [d for i, d in enumerate(dims) if i != axis]
    lattice = Lattice(dims)
    n = len(dims[axis].values)

    def at(prefix: Combination, j: int) -> Combination:
        return prefix[:axis] + (j,) + prefix[axis:]

    def status(x: Combination) -> bool:
        """Met or failed, from the lattice when it settles it, else by evaluating x."""
        if lattice.above_met(x):
            return True
        if lattice.below_failed(x):
            return False
        met = meets(x)
        lattice.add(x, met)
        return met

    for prefix in combinations(rest):
        if lattice.above_met(at(prefix, 0)):
            continue  # every combination on this line is at least as strong as a met one
        lo, hi = 0, n  # the weakest combination that meets the target is in [lo, hi]
        while lo < hi:
            mid = (lo + hi) // 2
            if status(at(prefix, mid)):
                hi = mid
            else:
                lo = mid + 1


def violations(dims: Sequence[Dimension], xs: Sequence[Combination], risk: Sequence[float],
               loss: Sequence[float], tolerance: float = 1e-9) -> int:
    """Evaluated pairs x ≤ y (x ≠ y) where y is riskier or cheaper than x: evidence against
    the monotonicity the pruned search assumes."""
    if len(xs) < 2:
        return 0
    lattice = Lattice(dims)
    a = np.array(xs)
    r, c = np.asarray(risk, dtype=float), np.asarray(loss, dtype=float)
    le = lattice._le(a[:, None, :], a[None, :, :]) & ~np.eye(len(a), dtype=bool)
    bad = (r[None, :] > r[:, None] + tolerance) | (c[None, :] < c[:, None] - tolerance)
    return int((le & bad).sum())
