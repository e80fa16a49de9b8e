"""Secondary suppression by Gaussian elimination (docs/tables.md, "Secondary suppression by
Gaussian elimination"), written from the method's published description (Langsrud 2024,
"Secondary cell suppression by Gaussian elimination: an algorithm suitable for handling issues
with zeros and singletons", PSD 2024, LNCS 14915; Statistics Norway's GaussSuppression): the
candidates for publication are taken one at a time, most wanted first, and used to reduce the
primary cells by Gaussian elimination; a candidate that would eliminate a primary cell entirely
— make it a linear combination of the published cells — is suppressed instead. So no primary
cell depends linearly on what is published.

Each cell of a cross table (a margin too, an inner node of a hierarchy too) is a sum of inner
cells (the leaf cells): its vector x_c over the inner cells. The published cells span a space
S; a primary cell p can be worked out exactly when x_p ∈ S. The elimination keeps a basis of
S in echelon form (each vector's first inner cell is its pivot, and no two share one) and
each primary's residual r_p, x_p reduced by it (its first inner cell is no pivot; it is
never zero while p is safe). A candidate c reduced the same way
gives v: v = 0 adds nothing (publish it); otherwise v would enter with pivot min(v), and the
residuals that start at that pivot are reduced further — if one reduces to zero, S + x_c holds
x_p and c is suppressed instead (the basis and residuals as they were); else c is published.

**The order of the inner cells** ("first" above) changes no decision — whether x_p ∈ S does
not depend on how S is written — but it decides how dense the basis grows (fill-in). The
inner cells are numbered so that the one whose own cell is tried last comes first, the inner
cells never tried (primary, never published) before all (:func:`pivot_order`). The costliest
candidates, the grand total and the margins, are tried first; in the table's own order the
grand total's pivot is the first inner cell, the margin of its row is then reduced by the
grand total into a vector of every other row, and so on row after row: at 10⁶ cells the
elimination decided 317 of its 775,248 candidates in 90 s. With the margins' pivots on the
inner cells tried last, each margin enters as it is and the one that depends on the others
reduces to nothing one margin at a time (docs/tables.md, "Secondary suppression by Gaussian
elimination").

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
from collections.abc import Callable, Sequence

import numpy as np

from sdc_core.tables.crosstab import CrossTable
from sdc_core.tables.hierarchy import Parents, flat_parents, leaves_under

#: Below this a coefficient is zero (the vectors hold small integers and their ratios)
TOL = 1e-9

Vector = dict[int, float]


def cell_vectors(shape: tuple[int, ...],
                 trees: Sequence[Parents] | None = None) -> list[list[int]]:
    """Each cell's leaf cells (flat indices into the array of leaf cells), in the table's
    order: on each axis a position stands for the leaves under it
    (:func:`sdc_core.tables.hierarchy.leaves_under`: a level itself, an inner node of a
    hierarchy its leaves, the margin every level); ``trees`` None: every axis flat."""
    trees = list(trees) if trees is not None else [flat_parents(s - 1) for s in shape]
    under = [leaves_under(p) for p in trees]
    inner = tuple(len(u[-1]) for u in under)  # the grand total's leaves: every leaf
    out = []
    for coords in itertools.product(*(range(s) for s in shape)):
        axes = [u[c] for u, c in zip(under, coords)]
        out.append([int(np.ravel_multi_index(k, inner)) for k in itertools.product(*axes)]
                   if inner else [0])
    return out


def pivot_order(shape: tuple[int, ...], trees: Sequence[Parents], tried: np.ndarray
                ) -> np.ndarray:
    """The number each inner cell takes in the elimination (module docstring): by when its own
    cell is tried, ``tried`` (one position per cell of the table, C order; the cells never
    tried the largest), latest first, ties in the table's order.

    Parameters
    ----------
    shape : tuple of int
        The table's positions per axis (its levels first on every axis).
    trees : sequence of Parents
        Each axis's tree (the number of its leaves: the first positions).
    tried : numpy.ndarray
        When each cell of the table is tried.

    Returns
    -------
    numpy.ndarray
        ``rank[i]``, the number of inner cell i (its flat index among the inner cells).

    Examples
    --------
    >>> from sdc_core.tables.hierarchy import flat_parents
    >>> pivot_order((3,), [flat_parents(2)], np.array([0, 5, 1])).tolist()
    [1, 0]
    """
    inner = tuple(len(leaves_under(p)[-1]) for p in trees)
    own = np.ravel_multi_index(np.unravel_index(np.arange(int(np.prod(inner))), inner), shape)
    rank = np.empty(len(own), dtype=np.int64)
    rank[np.argsort(-np.asarray(tried)[own], kind="stable")] = np.arange(len(own))
    return rank


def _reduce(v: Vector, basis: dict[int, Vector]) -> Vector:
    """``v`` reduced by the echelon ``basis`` (pivot → vector whose smallest inner cell is
    its pivot, 1 there): while v's smallest inner cell is a pivot, subtract that vector (which
    changes v only at that cell and above). v lies in the basis's span exactly when it
    reduces to nothing (in place; returned)."""
    while v:
        m = min(v)
        b = basis.get(m)
        if b is None:
            return v
        a = v[m]
        for j, w in b.items():
            x = v.get(j, 0.0) - a * w
            if abs(x) <= TOL:
                v.pop(j, None)
            else:
                v[j] = x
    return v


def gauss_pattern(table: CrossTable, primary: np.ndarray, weights: np.ndarray,
                  never: np.ndarray, tick: Callable[[], None] | None = None) -> np.ndarray:
    """The suppressed cells (module docstring): the ``primary`` cells, the cells ``never``
    published, and the candidates whose publication would make a primary cell a linear
    combination of published cells; candidates tried by ``weights``, largest first.
    ``tick()`` is called before each candidate (an exception it raises stops the
    elimination: a time limit).

    The published cells' span is kept as an echelon basis (each vector's first inner cell,
    in the order of :func:`pivot_order`, its pivot) and each primary cell's residual reduced
    by it (its first inner cell no pivot). A candidate reduced to v ≠ 0 would enter with
    pivot min(v): only the residuals whose first cell is that pivot change, each reduced
    further; one that reduces to
    nothing would be a combination of the published cells, and the candidate is suppressed
    (the residuals it changed put back)."""
    suppressed = primary | never
    order = np.flatnonzero(~suppressed)
    order = order[np.argsort(-weights[order], kind="stable")]
    tried = np.full(len(suppressed), len(order), dtype=np.int64)
    tried[order] = np.arange(len(order))
    rank = pivot_order(table.shape, table.tree, tried).tolist()
    vectors = [[rank[i] for i in v] for v in cell_vectors(table.shape, table.tree)]
    residual: dict[int, Vector] = {}
    by_min: dict[int, set[int]] = {}  # first inner cell → the residuals starting there
    for cell in np.flatnonzero(primary).tolist():
        residual[cell] = {i: 1.0 for i in vectors[cell]}
        by_min.setdefault(min(vectors[cell]), set()).add(cell)
    basis: dict[int, Vector] = {}
    for c in order:
        if tick is not None:
            tick()
        v = _reduce({i: 1.0 for i in vectors[c]}, basis)
        if not v:
            continue  # already known from what is published
        piv = min(v)
        scale = v[piv]
        basis[piv] = {j: w / scale for j, w in v.items()}
        touched = by_min.get(piv, set())
        changed = {p: _reduce(dict(residual[p]), basis) for p in touched}
        if any(not r for r in changed.values()):
            del basis[piv]  # publishing c would give a primary cell away
            suppressed[c] = True
            continue
        by_min.pop(piv, None)
        for p, r in changed.items():
            residual[p] = r
            by_min.setdefault(min(r), set()).add(p)
    return suppressed
