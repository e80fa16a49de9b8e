"""Secondary suppression by Gaussian elimination (docs/tables.md, "Secondary suppression by
Gaussian elimination"), written from the method's published description (Langsrud 2024,
"Secondary cell suppression by Gaussian elimination: an algorithm suitable for handling issues
with zeros and singletons", PSD 2024, LNCS 14915; Statistics Norway's GaussSuppression): the
candidates for publication are taken one at a time, most wanted first, and used to reduce the
primary cells by Gaussian elimination; a candidate that would eliminate a primary cell entirely
— make it a linear combination of the published cells — is suppressed instead. So no primary
cell depends linearly on what is published.

Each cell of a cross table (a margin too) is a sum of inner cells: its vector over the inner
cells, x_c. The published cells span a space S; a primary cell p can be worked out exactly when
x_p ∈ S. The elimination keeps a basis of S in reduced form (each basis vector has a pivot, an
inner cell where it alone of the basis is not zero) and each primary's residual r_p = x_p minus
its part in S (zero at every pivot). A candidate c reduced the same way, v = x_c minus its part
in S: v = 0 adds nothing (publish it); r_p = α v for some primary p means S + x_c holds x_p
(suppress c); otherwise c is published and v joins the basis, every residual and basis vector
reduced at v's pivot.

Linear independence is necessary, not sufficient: a primary cell that cannot be worked out
exactly may still be narrowed below its protection by the non-negativity of the cells. The
result is therefore audited with the same rules as today's algorithm
(sdc_core/tables/suppression_audit.py), and a primary cell the audit still finds exposed gets
hypercubes until it passes (``gauss+hypercube``).

The candidates are ordered by the cost of suppressing them, largest first (the cells most
worth publishing are tried first); ties in the table's order.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

from sdc_core.tables.crosstab import CrossTable

#: Below this a coefficient is zero (the vectors hold small integers and their ratios)
TOL = 1e-9

Vector = dict[int, float]


def cell_vectors(shape: tuple[int, ...]) -> list[list[int]]:
    """Each cell's inner cells (flat indices into the inner array), in the table's order: a
    level on an axis is itself, the margin (the last index) every level."""
    inner = tuple(s - 1 for s in shape)
    out = []
    for coords in itertools.product(*(range(s) for s in shape)):
        axes = [range(n) if c == n else (c,) for c, n in zip(coords, inner)]
        out.append([int(np.ravel_multi_index(k, inner)) for k in itertools.product(*axes)]
                   if inner else [0])
    return out


def _reduce(v: Vector, basis: dict[int, Vector]) -> Vector:
    """``v`` minus its part in the span of ``basis`` (pivot → vector, each zero at the other
    pivots): zero at every pivot."""
    for piv in [i for i in v if i in basis]:
        a = v.get(piv, 0.0)
        if abs(a) <= TOL:
            continue
        for j, b in basis[piv].items():
            w = v.get(j, 0.0) - a * b
            if abs(w) <= TOL:
                v.pop(j, None)
            else:
                v[j] = w
    return v


def _eliminate(target: Vector, piv: int, v: Vector) -> None:
    """Subtract from ``target`` the multiple of ``v`` (1 at ``piv``) that zeroes ``piv``."""
    a = target.get(piv, 0.0)
    if abs(a) <= TOL:
        return
    for j, b in v.items():
        w = target.get(j, 0.0) - a * b
        if abs(w) <= TOL:
            target.pop(j, None)
        else:
            target[j] = w


class _Indexed:
    """Sparse vectors by key, and for each inner cell the keys of the vectors not zero there
    (so that eliminating a pivot touches only the vectors that hold it)."""

    def __init__(self) -> None:
        self.vectors: dict[int, Vector] = {}
        self.at: dict[int, set[int]] = {}

    def add(self, key: int, v: Vector) -> None:
        self.vectors[key] = v
        for i in v:
            self.at.setdefault(i, set()).add(key)

    def eliminate(self, piv: int, v: Vector) -> None:
        """Zero ``piv`` in every vector that holds it, by the multiple of ``v`` (1 at
        ``piv``)."""
        for key in list(self.at.get(piv, ())):
            target = self.vectors[key]
            before = set(target)
            _eliminate(target, piv, v)
            for i in before.difference(target):
                self.at[i].discard(key)
            for i in set(target).difference(before):
                self.at.setdefault(i, set()).add(key)


def gauss_pattern(table: CrossTable, primary: np.ndarray, weights: np.ndarray,
                  never: np.ndarray, tick: Callable[[], None] | None = None) -> np.ndarray:
    """The suppressed cells (module docstring): the ``primary`` cells, the cells ``never``
    published, and the candidates whose publication would make a primary cell a linear
    combination of published cells; candidates tried by ``weights``, largest first.
    ``tick()`` is called before each candidate (an exception it raises stops the
    elimination: a time limit)."""
    vectors = cell_vectors(table.shape)
    suppressed = primary | never
    residual = _Indexed()  # each primary's residual, zero at every pivot
    for p in np.flatnonzero(primary):
        residual.add(int(p), {i: 1.0 for i in vectors[p]})
    basis = _Indexed()  # by pivot: each zero at the other pivots, 1 at its own
    order = np.flatnonzero(~suppressed)
    order = order[np.argsort(-weights[order], kind="stable")]
    for c in order:
        if tick is not None:
            tick()
        v = _reduce({i: 1.0 for i in vectors[c]}, basis.vectors)
        if not v:
            continue  # already known from what is published
        piv = min(v)
        scale = v[piv]
        v = {j: w / scale for j, w in v.items()}
        if any(_parallel(residual.vectors[p], v, piv) for p in residual.at.get(piv, ())):
            suppressed[c] = True
            continue
        basis.eliminate(piv, v)
        residual.eliminate(piv, v)
        basis.add(piv, v)
    return suppressed


def _parallel(r: Vector, v: Vector, piv: int) -> bool:
    """Whether r = α v (v is 1 at ``piv``)."""
    a = r.get(piv, 0.0)
    if abs(a) <= TOL or len(r) != len(v):
        return False
    return all(abs(r.get(j, 0.0) - a * w) <= TOL * max(1.0, abs(a)) for j, w in v.items())
