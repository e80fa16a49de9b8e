"""Cross tables with all their margins (docs/tables.md, "Building the table").

A 1-, 2- or 3-way table of chosen columns: every combination of the columns' levels (empty cells
included, count 0), every margin (a margin's label is :data:`TOTAL`) and the grand total, one row
each in a tidy frame. A count table holds ``count`` per cell; a magnitude table also the ``sum``
of a numeric column and what the primary rules need (sdc_core/tables/cell_rules.py): the number of
contributors and the ``top`` largest contributions x₁ ≥ x₂ ≥ … (columns ``x1``, ``x2``, …), so
memory is bounded by cells × ``top``, never by the records.

**The unit of protection** (docs/tables.md, "The unit of protection"). By default every record is
a contributor of its own. With a ``unit`` column (the household or person id), the contributors
are its distinct values: ``persons`` holds the distinct ids with a record in each cell and margin
(a margin counts a person once, however many of its cells the person falls in, so ``persons`` of
a margin is not the sum of its cells'), ``contributors`` those with an amount, and x₁ ≥ x₂ ≥ …
are the largest *per-person sums* of the amounts in the cell (a person's records in a cell add
up to one contribution). ``count`` and ``sum`` stay the records' count and sum.

The table's additivity is kept as linear constraints for the audit: for a margin cell m and an
axis d on which m is "Total", x_m − Σ_l x_(m with level l on d) = 0, one row of the sparse
matrix :attr:`CrossTable.constraints` per (margin cell, axis).

Levels are the values present, sorted, as text; a categorical column has all its categories, in
their order, used or not. Blanks (a missing value in a table column) are left out by default
(``blank_label=None``: the record is counted in no cell and no margin,
:attr:`CrossTable.left_out` says how many); with a ``blank_label`` they are a level of their own
with that label. Contributions must be non-negative (the rules assume it): a negative amount is
refused; a missing amount contributes nothing (the record still counts in ``count``).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse

from sdc_core.checks import check_whole, numeric_values, shown
from sdc_core.errors import SdcInputError
from sdc_core.households import household_codes
from sdc_core.tables.hierarchy import (
    ROOT,
    Hierarchy,
    Parents,
    Prefixes,
    aggregation,
    axis_tree,
    chains,
    children,
    flat_parents,
)

#: The label of a margin on an axis
TOTAL = ROOT
#: The most cells (margins included) a table may have
MAX_CELLS = 1_000_000
#: The most a sum column's amounts may add up to: 2^53, below which float64 holds every whole
#: sum exactly; the rules' protections (at most 100 times a cell's sum) and the comparisons'
#: whole numbers then stay far from overflowing
MAX_TOTAL = 2**53
#: The most table columns
MAX_COLUMNS = 3


@dataclass(frozen=True)
class CrossTable:
    """A cross table with its margins (module docstring); made by :func:`crosstab`.

    Parameters
    ----------
    columns : tuple of str
        The table's columns (1 to 3).
    levels : tuple of tuple of str
        Each column's levels (sorted, as text), without :data:`TOTAL`.
    frame : pandas.DataFrame
        One row per cell and per margin, in C order of the array of shape ``shape`` (the last
        column varies fastest, ``Total`` after the levels): the columns' labels, ``count``,
        ``margin`` (True for a margin or the grand total) and, for a magnitude table, ``sum``,
        ``contributors`` and ``x1``…``x{top}`` (0 where the cell has fewer contributors); with a
        ``unit``, ``persons`` (the distinct ids with a record in the cell).
    constraints : scipy.sparse.csr_matrix
        A with A·x = 0 for the table's values x (one row per margin cell and axis on which it is
        "Total": +1 on the margin, −1 on each cell it adds up).
    sum_column : str or None
        The summed column of a magnitude table.
    left_out : int
        Records left out because of a blank in a table column.
    unit : str or None
        The column whose distinct values are the contributors (the household or person id);
        None: every record is a contributor of its own.
    nodes : tuple of tuple of str
        Each column's inner nodes of its hierarchy (docs/tables.md, "Hierarchical code
        lists"), sorted; empty for a column without one (and ``()``: no column has one).
    parents : tuple of tuple of int
        Each column's tree (:func:`sdc_core.tables.hierarchy.axis_tree`): the parent of each
        position (levels, then nodes, then ``Total``, whose parent is −1); ``()``: every
        column flat (:attr:`tree` gives them).

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.tables.crosstab import crosstab
    >>> df = pd.DataFrame({"a": ["x", "x", "y"], "b": ["u", "v", "v"]})
    >>> t = crosstab(df, ["a", "b"])
    >>> t.frame[["a", "b", "count"]].values.tolist()[:3]
    [['x', 'u', 1], ['x', 'v', 1], ['x', 'Total', 2]]
    >>> t.shape, t.constraints.shape
    ((3, 3), (6, 9))
    """

    columns: tuple[str, ...]
    levels: tuple[tuple[str, ...], ...]
    frame: pd.DataFrame
    constraints: sparse.csr_matrix
    sum_column: str | None = None
    left_out: int = 0
    unit: str | None = None
    nodes: tuple[tuple[str, ...], ...] = ()
    parents: tuple[Parents, ...] = ()

    @property
    def tree(self) -> tuple[Parents, ...]:
        """Each column's tree (:attr:`parents`, or every level under the grand total)."""
        return self.parents or tuple(flat_parents(len(lv)) for lv in self.levels)

    def aggregate(self, leaf: np.ndarray) -> np.ndarray:
        """Every cell's and margin's sum of ``leaf`` (one value per leaf cell, in C order of
        the levels), in the order of :attr:`frame`: each node the sum of the leaves below
        it."""
        return self._grid.aggregate(leaf)

    def unit_sums(self, flat: np.ndarray, units: np.ndarray, weights: np.ndarray
                  ) -> np.ndarray:
        """Every cell's and margin's Σ w_u over the distinct units u with a record there
        (records in leaf cells ``flat``, :func:`record_cells`, of units ``units``; w =
        ``weights`` indexed by unit), in the order of :attr:`frame`: a unit counts once in a
        cell however many of its records fall there."""
        return _distinct_per_cell(self._grid, flat, units, weights)

    @property
    def _grid(self) -> _Grid:
        return _Grid(tuple(len(lv) for lv in self.levels), self.tree)

    @property
    def hierarchical(self) -> bool:
        """Whether some column has inner nodes besides the grand total."""
        return any(self.nodes)

    @property
    def shape(self) -> tuple[int, ...]:
        """The positions per column: its levels, its inner nodes and the margin."""
        return tuple(len(p) for p in self.tree)

    @property
    def value_column(self) -> str:
        """``sum`` for a magnitude table, else ``count``: the values the audit protects."""
        return "sum" if self.sum_column is not None else "count"

    @property
    def values(self) -> np.ndarray:
        """The protected values (``value_column``) as float64, one per row of ``frame``."""
        return self.frame[self.value_column].to_numpy(dtype=np.float64)

    @property
    def margin(self) -> np.ndarray:
        """True for a margin or the grand total."""
        return self.frame["margin"].to_numpy(dtype=bool)

    @property
    def contributors(self) -> np.ndarray:
        """The contributors of each cell and margin, as the threshold rule counts them: the
        distinct ids of ``unit`` with a record there (``persons``), else the records
        (``count``)."""
        column = "persons" if self.unit is not None else "count"
        return self.frame[column].to_numpy(dtype=np.float64)


def crosstab(df: pd.DataFrame, columns: Sequence[str], sum_column: str | None = None,
             blank_label: str | None = None, top: int = 2,
             unit: str | None = None,
             hierarchies: Mapping[str, Hierarchy | Prefixes] | None = None) -> CrossTable:
    """The 1-, 2- or 3-way table of ``columns`` with all margins (module docstring).

    With a hierarchy on a column, the inner nodes q of its code list are positions of that
    axis too: x_q = Σ_{l leaf under q} x_l, and q's contributions are the largest among all
    its records (docs/tables.md, "Hierarchical code lists").

    n_c = #records in cell c; with ``sum_column`` y, s_c = Σ_{r ∈ c} y_r and x₁ ≥ x₂ ≥ … the
    largest contributions y_r of the cell (kept up to ``top``). A margin is the sum of the cells
    it covers (counts and sums); its contributions are the largest among all its records.
    With ``unit`` u: persons_c = #{u_r : r ∈ c} and the contributions are the per-person sums
    y_(c,p) = Σ_{r ∈ c, u_r = p} y_r, for a margin over all its records.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per record (contributor).
    columns : sequence of str
        1 to 3 columns.
    sum_column : str, optional
        A numeric column of non-negative amounts: a magnitude table.
    blank_label : str, optional
        None (default): records with a blank in a table column are left out; else blanks are a
        level with this label.
    top : int, default 2
        How many of the largest contributions to keep per cell (at least 2; the dominance rule
        (n, k) needs n).
    unit : str, optional
        The household or person id: its distinct values are the contributors (read by
        :func:`sdc_core.households.household_codes`, which refuses a blank id).
    hierarchies : mapping of str to Hierarchy or Prefixes, optional
        A code list for some of the columns (:mod:`sdc_core.tables.hierarchy`).

    Returns
    -------
    CrossTable
        The tidy frame and the constraints.

    Raises
    ------
    SdcInputError
        An unknown column, none or more than 3 columns, a column twice, a level labelled
        "Total" (or the blank label), a sum column that is not numeric or holds a negative
        amount, more than :data:`MAX_CELLS` cells, or a ``unit`` column that is absent, has a
        blank id, or is a table column or the sum column; a hierarchy of a column not in the
        table, or one the column's codes do not fit (:meth:`Hierarchy.for_codes`).

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.tables.crosstab import crosstab
    >>> df = pd.DataFrame({"a": ["x", "x", "y"], "y": [5.0, 2.0, 7.0]})
    >>> crosstab(df, ["a"], sum_column="y").frame[["a", "count", "sum", "x1", "x2"]]
           a  count   sum   x1   x2
    0      x      2   7.0  5.0  2.0
    1      y      1   7.0  7.0  0.0
    2  Total      3  14.0  7.0  5.0
    """
    cols = [columns] if isinstance(columns, str) else list(columns)
    if not 1 <= len(cols) <= MAX_COLUMNS:
        raise SdcInputError(f"a table takes 1 to {MAX_COLUMNS} columns, not {len(cols)}")
    if len(set(cols)) != len(cols):
        raise SdcInputError(f"a table column is named twice: {', '.join(cols)}")
    unknown = [c for c in cols if c not in df.columns]
    if unknown:
        raise SdcInputError(f"unknown table column(s): {', '.join(unknown)}")
    top = max(2, check_whole("top", top))
    units = unit_codes(df, unit, cols, sum_column)
    keep = np.ones(len(df), dtype=bool)
    codes, levels = [], []
    for c in cols:
        code, lv = level_codes(df[c], blank_label)
        codes.append(code)
        levels.append(lv)
        keep &= code >= 0
    nodes, trees = _trees(cols, levels, hierarchies or {})
    shape = tuple(len(p) for p in trees)
    n_cells = int(np.prod(shape, dtype=np.int64))
    if n_cells > MAX_CELLS:
        raise SdcInputError(f"the table would have {n_cells:,} cells (margins included), more "
                            f"than the {MAX_CELLS:,} allowed: choose columns with fewer levels")
    amounts = None
    if sum_column is not None:
        if sum_column not in df.columns:
            raise SdcInputError(f"unknown sum column '{sum_column}'")
        amounts = numeric_values(df[sum_column], "a magnitude table")
        if (amounts < 0).any():
            raise SdcInputError(f"sum column '{sum_column}' holds negative amounts: the "
                                "dominance and p % rules take non-negative contributions")
        if np.nanmax(amounts, initial=0.0) > MAX_TOTAL or np.nansum(amounts) > MAX_TOTAL:
            raise SdcInputError(f"sum column '{sum_column}' holds amounts adding up to more "
                                f"than 2^53 ({MAX_TOTAL:,}): the rules, the audit and the "
                                "comparison of tables count with exact sums; give the amounts "
                                "in larger units (thousands, millions)")
    grid = _Grid(tuple(len(lv) for lv in levels), trees)
    inner = grid.inner
    flat = np.ravel_multi_index(tuple(c[keep] for c in codes), inner) if keep.any() else \
        np.zeros(0, dtype=np.int64)
    n_inner = int(np.prod(inner))
    count = grid.aggregate(np.bincount(flat, minlength=n_inner))
    labels = _labels([lv + list(nd) for lv, nd in zip(levels, nodes)], shape)
    data: dict[str, object] = {c: lab for c, lab in zip(cols, labels)}
    data["count"] = count
    # a margin: the grand total or an inner node on some axis (not a leaf on every axis)
    data["margin"] = np.any([g >= n for g, n in zip(np.indices(shape).reshape(len(shape), -1),
                                                    inner)], axis=0)
    if amounts is not None:
        y = amounts[keep]
        present = ~np.isnan(y)
        fl, yv = flat[present], y[present]
        data["sum"] = grid.aggregate(np.bincount(fl, weights=yv, minlength=n_inner))
        data["contributors"] = grid.aggregate(np.bincount(fl, minlength=n_inner))
        if units is None:
            tops = _top_contributions(grid, fl, yv, top)
        else:
            data["contributors"], tops = _per_person_contributions(grid, fl,
                                                                   units[keep][present], yv,
                                                                   top)
        for j in range(top):
            data[f"x{j + 1}"] = tops[:, j]
    if units is not None:
        data["persons"] = _distinct_per_cell(grid, flat, units[keep])
    frame = pd.DataFrame(data)
    hier = any(nodes)
    return CrossTable(tuple(cols), tuple(tuple(lv) for lv in levels), frame,
                      margin_constraints(shape, trees), sum_column, int((~keep).sum()), unit,
                      tuple(nodes) if hier else (), tuple(trees) if hier else ())


def _trees(cols: list[str], levels: list[list[str]],
           hierarchies: Mapping[str, Hierarchy | Prefixes]
           ) -> tuple[list[tuple[str, ...]], list[Parents]]:
    """Each column's inner nodes and tree (:func:`sdc_core.tables.hierarchy.axis_tree`; a
    column without a hierarchy flat)."""
    unknown = [c for c in hierarchies if c not in cols]
    if unknown:
        raise SdcInputError(f"a hierarchy is given for {shown(unknown[0])}, which is not a "
                            "column of the table")
    nodes: list[tuple[str, ...]] = []
    trees: list[Parents] = []
    for c, lv in zip(cols, levels):
        spec = hierarchies.get(c)
        if not isinstance(spec, (Hierarchy, Prefixes, type(None))):
            raise SdcInputError(f"the hierarchy of column {shown(c)} must be a Hierarchy or "
                                f"Prefixes, not {type(spec).__name__}")
        if spec is None:
            nodes.append(())
            trees.append(flat_parents(len(lv)))
            continue
        nd, parents = axis_tree(lv, spec.for_codes(c, lv))
        nodes.append(nd)
        trees.append(parents)
    return nodes, trees


@dataclass(frozen=True)
class _Grid:
    """The leaf cells of a table (``inner``: the levels per axis) and its axes' trees: how a
    record's leaf cell reaches every cell and margin that holds it."""

    inner: tuple[int, ...]
    trees: Sequence[Parents]

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(len(p) for p in self.trees)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def aggregate(self, leaf: np.ndarray) -> np.ndarray:
        """Every cell's sum of the ``leaf`` values (one per leaf cell, C order), in C order of
        the full array: on each axis d, the positions × leaves matrix M_d
        (:func:`sdc_core.tables.hierarchy.aggregation`) applied along d."""
        a = np.asarray(leaf).reshape(self.inner)
        for d, parents in enumerate(self.trees):
            m = aggregation(parents, self.inner[d]).astype(a.dtype)
            moved = np.moveaxis(a, d, 0)
            a = np.moveaxis(np.asarray(m @ moved.reshape(moved.shape[0], -1))
                            .reshape((m.shape[0],) + moved.shape[1:]), 0, d)
        return a.ravel()

    def cells(self, flat: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """For records in leaf cells ``flat``: for each combination of generations (g_d, the
        g_d-th ancestor on axis d, 0 the leaf itself), the records that have one on every
        axis and the cell (C order of the full array) it makes; every (record, cell holding
        it) pair comes once."""
        coords = np.unravel_index(flat, self.inner) if len(flat) else \
            tuple(np.zeros(0, np.int64) for _ in self.inner)
        ch = [chains(p, n) for p, n in zip(self.trees, self.inner)]
        for gens in itertools.product(*(range(c.shape[1]) for c in ch)):
            pos = [c[k, g] for c, k, g in zip(ch, coords, gens)]
            sel = np.logical_and.reduce([q >= 0 for q in pos])
            yield sel, np.ravel_multi_index(tuple(q[sel] for q in pos), self.shape)


def unit_codes(df: pd.DataFrame, unit: str | None, columns: Sequence[str],
               sum_column: str | None = None) -> np.ndarray | None:
    """Each record's person (household) as an integer code (:func:`sdc_core.households.
    household_codes`), or None without a ``unit``; refused (one sentence) when ``unit`` is not a
    column name of ``df``, is one of the table's ``columns`` or its ``sum_column``, or has a
    blank id."""
    if unit is None:
        return None
    if not isinstance(unit, str) or not unit.strip():
        raise SdcInputError(f"the household column must be a column name, not {shown(unit)}")
    if unit not in df.columns:
        raise SdcInputError(f"there is no household column {shown(unit)} in the table")
    if unit in columns:
        raise SdcInputError(f"the household column {shown(unit)} is also a table column: the "
                            "table would put every person in a cell of their own id")
    if unit == sum_column:
        raise SdcInputError(f"the household column {shown(unit)} is also the column summed")
    codes, _ = household_codes(df, unit)
    return codes


def _distinct_per_cell(grid: _Grid, flat: np.ndarray, units: np.ndarray,
                       weights: np.ndarray | None = None) -> np.ndarray:
    """#{u_r : r in cell} for every cell and margin (C order of the full array), or with
    ``weights`` (one per unit code) Σ w_u over those units: the distinct (cell, person) keys of
    every way a record reaches a cell (an inner node of a hierarchy is reached from leaves of
    several depths), each one more person of its cell."""
    n_units = int(units.max()) + 1 if len(units) else 1
    keys = [np.unique(cell * n_units + units[sel]) for sel, cell in grid.cells(flat)]
    found = np.unique(np.concatenate(keys)) if keys else np.zeros(0, dtype=np.int64)
    w = None if weights is None else np.asarray(weights, dtype=np.float64)[found % n_units]
    return np.bincount(found // n_units, weights=w, minlength=grid.size)


def record_cells(df: pd.DataFrame, table: CrossTable, keep: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Each record's leaf cell of ``table`` (its flat index in C order of the levels) for the
    records kept, and which are kept: those ``keep`` marks (default all) without a blank in a
    table column, the levels read as :func:`crosstab` reads them (:func:`level_codes`, blanks
    left out), so a level only dropped records hold stays a cell.

    Examples
    --------
    >>> df = pd.DataFrame({"a": ["x", None, "y"], "b": ["u", "v", "v"]})
    >>> flat, kept = record_cells(df, crosstab(df, ["a", "b"]))
    >>> flat.tolist(), kept.tolist()
    ([0, 3], [True, False, True])
    """
    kept = np.ones(len(df), dtype=bool) if keep is None else np.asarray(keep, dtype=bool).copy()
    codes = []
    for c in table.columns:
        code, _ = level_codes(df[c], None)
        codes.append(code)
        kept &= code >= 0
    inner = tuple(len(lv) for lv in table.levels)
    return np.ravel_multi_index(tuple(code[kept] for code in codes), inner), kept


def _per_person_contributions(grid: _Grid, flat: np.ndarray, units: np.ndarray,
                              y: np.ndarray, top: int) -> tuple[np.ndarray, np.ndarray]:
    """For every cell and margin: the number of persons with an amount there, and the ``top``
    largest per-person sums Σ_{r ∈ cell, u_r = p} y_r (0 past the last person). The
    (cell, person) keys of every way a record reaches a cell, sorted, give each pair's sum;
    the pairs sorted by cell, then by sum (largest first), give each cell's ranks."""
    persons = np.zeros(grid.size, dtype=np.int64)
    tops = np.zeros((grid.size, top))
    if len(units) == 0:
        return persons, tops
    n_units = int(units.max()) + 1
    parts = []
    for sel, cell in grid.cells(flat):  # each way's (cell, person) sums first: fewer pairs
        pair, at = np.unique(cell * n_units + units[sel], return_inverse=True)
        parts.append((pair, np.bincount(at.ravel(), weights=y[sel], minlength=len(pair))))
    keys, amounts = np.concatenate([k for k, _ in parts]), np.concatenate([a for _, a in parts])
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    sums = np.add.reduceat(amounts[order], starts)
    where = keys[starts] // n_units
    persons += np.bincount(where, minlength=grid.size)
    ranked = np.lexsort((-sums, where))  # by cell, then largest sum first
    where, sums = where[ranked], sums[ranked]
    rank = np.arange(len(where)) - np.searchsorted(where, where, side="left")
    keep = rank < top
    tops[where[keep], rank[keep]] = sums[keep]
    return persons, tops


def level_codes(s: pd.Series, blank_label: str | None) -> tuple[np.ndarray, list[str]]:
    """Each record's level in a table column, as :func:`crosstab` reads it: codes (−1 for a
    blank left out) and the sorted levels as text."""
    blank = s.isna().to_numpy().copy()
    if s.dtype == object or pd.api.types.is_string_dtype(s):
        blank |= (s.astype(str).str.strip() == "").to_numpy()
    if isinstance(s.dtype, pd.CategoricalDtype):  # every category, in its order, used or not
        code = np.where(blank, -1, s.cat.codes.to_numpy())
        lv = [str(u) for u in s.cat.categories]
    else:
        code, uniques = pd.factorize(s.where(~blank), sort=True)
        lv = [str(u) for u in uniques]
    if blank_label is not None and blank.any():
        code = np.where(blank, len(lv), code)
        lv.append(str(blank_label))
    if TOTAL in lv:
        raise SdcInputError(f"column '{s.name}' has a level '{TOTAL}', the label of a margin")
    if len(set(lv)) != len(lv):
        raise SdcInputError(f"column '{s.name}' has two levels with the same text (or a level "
                            "equal to the blank label)")
    return np.asarray(code, dtype=np.int64), lv


def _labels(levels: list[list[str]], shape: tuple[int, ...]) -> list[np.ndarray]:
    """Each column's label per cell of the full array (C order): its position's (levels and
    inner nodes, then the margin)."""
    grids = np.indices(shape).reshape(len(shape), -1)
    return [np.asarray(lv + [TOTAL], dtype=object)[g] for lv, g in zip(levels, grids)]


def _top_contributions(grid: _Grid, flat: np.ndarray, y: np.ndarray, top: int) -> np.ndarray:
    """The ``top`` largest contributions of every cell and margin (0 past the contributors):
    for each way a record reaches a cell (:meth:`_Grid.cells`), the ``top`` largest of each
    cell, then the ``top`` largest of those per cell (an inner node of a hierarchy is reached
    from leaves of several depths)."""
    out = np.zeros((grid.size, top))
    if len(y) == 0:
        return out
    parts = []
    for sel, cell in grid.cells(flat):
        order = np.lexsort((-y[sel], cell))
        cell, ys = cell[order], y[sel][order]
        rank = np.arange(len(cell)) - np.searchsorted(cell, cell, side="left")
        parts.append((cell[rank < top], ys[rank < top]))
    cell, ys = np.concatenate([c for c, _ in parts]), np.concatenate([v for _, v in parts])
    order = np.lexsort((-ys, cell))
    cell, ys = cell[order], ys[order]
    rank = np.arange(len(cell)) - np.searchsorted(cell, cell, side="left")
    keep = rank < top
    out[cell[keep], rank[keep]] = ys[keep]
    return out


def margin_constraints(shape: tuple[int, ...],
                       trees: Sequence[Parents] | None = None) -> sparse.csr_matrix:
    """The additivity of a table of ``shape`` (positions per axis): for every axis d, every
    inner position q of its tree (one with children; without ``trees`` the margin, the last
    index, whose children are every level) and every cell m at q on d,
    x_m − Σ_{c child of q} x_(m with c on d) = 0.

    Parameters
    ----------
    shape : tuple of int
        Positions per axis (levels, inner nodes, the margin).
    trees : sequence of tuples of int, optional
        Each axis's tree (each position's parent, −1 for the grand total;
        :func:`sdc_core.tables.hierarchy.axis_tree`); None: every axis flat.

    Returns
    -------
    scipy.sparse.csr_matrix
        One row per (axis, inner position, cell at it), one column per cell (C order).

    Examples
    --------
    >>> from sdc_core.tables.crosstab import margin_constraints
    >>> margin_constraints((3,)).toarray().tolist()
    [[-1.0, -1.0, 1.0]]
    >>> margin_constraints((4,), [(2, 3, 3, -1)]).toarray().tolist()  # 0 under 2, under Total
    [[-1.0, 0.0, 1.0, 0.0], [0.0, -1.0, -1.0, 1.0]]
    """
    trees = list(trees) if trees is not None else [flat_parents(s - 1) for s in shape]
    idx = np.arange(int(np.prod(shape))).reshape(shape)
    rows, cols, vals = [], [], []
    n_rows = 0
    for d, parents in enumerate(trees):
        for q, kids in enumerate(children(parents)):
            if not kids and parents[q] >= 0:  # a leaf (the grand total of no level: 0)
                continue
            m = np.take(idx, q, axis=d).ravel()
            members = np.moveaxis(np.take(idx, kids, axis=d), d, -1).reshape(len(m), -1)
            eq = n_rows + np.arange(len(m))
            rows += [eq, np.repeat(eq, members.shape[1])]
            cols += [m, members.ravel()]
            vals += [np.ones(len(m)), -np.ones(members.size)]
            n_rows += len(m)
    return sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows),
                                                     np.concatenate(cols))),
                             shape=(n_rows, idx.size))
