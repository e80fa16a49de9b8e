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

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse

from sdc_core.checks import check_whole, numeric_values, shown
from sdc_core.errors import SdcInputError
from sdc_core.households import household_codes

#: The label of a margin on an axis
TOTAL = "Total"
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

    @property
    def shape(self) -> tuple[int, ...]:
        """The number of levels plus one (the margin) per column."""
        return tuple(len(lv) + 1 for lv in self.levels)

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
             unit: str | None = None) -> CrossTable:
    """The 1-, 2- or 3-way table of ``columns`` with all margins (module docstring).

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
        blank id, or is a table column or the sum column.

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
    shape = tuple(len(lv) + 1 for lv in levels)
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
    inner = tuple(s - 1 for s in shape)
    flat = np.ravel_multi_index(tuple(c[keep] for c in codes), inner) if keep.any() else \
        np.zeros(0, dtype=np.int64)
    count = _with_margins(np.bincount(flat, minlength=int(np.prod(inner))).reshape(inner))
    labels = _labels(levels, shape)
    data: dict[str, object] = {c: lab for c, lab in zip(cols, labels)}
    data["count"] = count.ravel()
    data["margin"] = np.any([lab == TOTAL for lab in labels], axis=0) if labels else []
    if amounts is not None:
        y = amounts[keep]
        present = ~np.isnan(y)
        fl, yv = flat[present], y[present]
        n_inner = int(np.prod(inner))
        data["sum"] = _with_margins(np.bincount(fl, weights=yv, minlength=n_inner)
                                    .reshape(inner)).ravel()
        data["contributors"] = _with_margins(np.bincount(fl, minlength=n_inner)
                                             .reshape(inner)).ravel()
        if units is None:
            tops = _top_contributions(fl, yv, inner, top)
        else:
            data["contributors"], tops = _per_person_contributions(fl, units[keep][present], yv,
                                                                   inner, top)
        for j in range(top):
            data[f"x{j + 1}"] = tops[:, j]
    if units is not None:
        data["persons"] = _distinct_per_cell(flat, units[keep], inner)
    frame = pd.DataFrame(data)
    return CrossTable(tuple(cols), tuple(tuple(lv) for lv in levels), frame,
                      margin_constraints(shape), sum_column, int((~keep).sum()), unit)


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


def _cells_by_mask(flat: np.ndarray, inner: tuple[int, ...]) -> list[np.ndarray]:
    """Each record's cell in the full array (margins included) for every set of axes summed
    over (bit d of the list's index set: axis d is "Total"); each cell and margin belongs to
    exactly one set."""
    shape = tuple(s + 1 for s in inner)
    if len(flat) == 0:
        return [np.zeros(0, dtype=np.int64)] * 2 ** len(inner)
    coords = np.unravel_index(flat, inner)
    out = []
    for mask in range(2 ** len(inner)):
        full = [np.full(len(flat), inner[d]) if mask >> d & 1 else coords[d]
                for d in range(len(inner))]
        out.append(np.ravel_multi_index(tuple(full), shape))
    return out


def _distinct_per_cell(flat: np.ndarray, units: np.ndarray, inner: tuple[int, ...]) -> np.ndarray:
    """#{u_r : r in cell} for every cell and margin (C order of the full array): the sorted
    (cell, person) keys, each new key one more person of its cell."""
    n_full = int(np.prod(tuple(s + 1 for s in inner)))
    out = np.zeros(n_full, dtype=np.int64)
    n_units = int(units.max()) + 1 if len(units) else 1
    for cell in _cells_by_mask(flat, inner):
        keys = np.sort(cell * n_units + units)
        first = np.r_[True, keys[1:] != keys[:-1]] if len(keys) else np.zeros(0, dtype=bool)
        out += np.bincount(keys[first] // n_units, minlength=n_full)
    return out


def _per_person_contributions(flat: np.ndarray, units: np.ndarray, y: np.ndarray,
                              inner: tuple[int, ...], top: int
                              ) -> tuple[np.ndarray, np.ndarray]:
    """For every cell and margin: the number of persons with an amount there, and the ``top``
    largest per-person sums Σ_{r ∈ cell, u_r = p} y_r (0 past the last person). The records
    sorted by (cell, person) give each pair's sum; the pairs sorted by cell, then by sum
    (largest first), give each cell's ranks."""
    n_full = int(np.prod(tuple(s + 1 for s in inner)))
    persons = np.zeros(n_full, dtype=np.int64)
    tops = np.zeros((n_full, top))
    if len(units) == 0:
        return persons, tops
    n_units = int(units.max()) + 1
    for cell in _cells_by_mask(flat, inner):
        keys = cell * n_units + units
        order = np.argsort(keys)
        keys = keys[order]
        starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        sums = np.add.reduceat(y[order], starts)
        where = keys[starts] // n_units
        persons += np.bincount(where, minlength=n_full)
        by_sum = np.empty(len(sums), dtype=np.int64)
        by_sum[np.argsort(-sums)] = np.arange(len(sums))  # 0 for the largest sum
        ranked = np.argsort(where * len(sums) + by_sum)  # by cell, then largest sum first
        where, sums = where[ranked], sums[ranked]
        rank = np.arange(len(where)) - np.searchsorted(where, where, side="left")
        sel = rank < top
        tops[where[sel], rank[sel]] = sums[sel]
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


def _with_margins(a: np.ndarray) -> np.ndarray:
    """``a`` with one more entry per axis holding the sum over that axis (all margins)."""
    for d in range(a.ndim):
        a = np.concatenate([a, a.sum(axis=d, keepdims=True)], axis=d)
    return a


def _labels(levels: list[list[str]], shape: tuple[int, ...]) -> list[np.ndarray]:
    """Each column's label per cell of the full array (C order)."""
    grids = np.indices(shape).reshape(len(shape), -1)
    return [np.asarray(lv + [TOTAL], dtype=object)[g] for lv, g in zip(levels, grids)]


def _top_contributions(flat: np.ndarray, y: np.ndarray, inner: tuple[int, ...],
                       top: int) -> np.ndarray:
    """The ``top`` largest contributions of every cell and margin (0 past the contributors):
    one sort of the records by amount, then for each set of axes summed over, the first
    ``top`` records of each group in that order."""
    shape = tuple(s + 1 for s in inner)
    out = np.zeros((int(np.prod(shape)), top))
    order = np.argsort(-y, kind="stable")
    ys = y[order]
    coords = np.unravel_index(flat[order], inner) if len(flat) else [np.zeros(0, np.int64)] * \
        len(inner)
    for mask in range(2 ** len(inner)):
        # axis d is "Total" when bit d of mask is set
        full = [np.full(len(ys), inner[d]) if mask >> d & 1 else coords[d]
                for d in range(len(inner))]
        cell = np.ravel_multi_index(tuple(full), shape) if len(ys) else np.zeros(0, np.int64)
        rank = pd.Series(cell).groupby(cell, sort=False).cumcount().to_numpy()
        sel = rank < top
        out[cell[sel], rank[sel]] = ys[sel]
    return out


def margin_constraints(shape: tuple[int, ...]) -> sparse.csr_matrix:
    """The additivity of a table of ``shape`` (levels + 1 per axis, the last index the margin):
    for every cell m whose index on axis d is the margin, x_m − Σ_l x_(m, l on d) = 0.

    Parameters
    ----------
    shape : tuple of int
        Levels plus one per axis.

    Returns
    -------
    scipy.sparse.csr_matrix
        One row per (margin cell, axis), one column per cell (C order).

    Examples
    --------
    >>> from sdc_core.tables.crosstab import margin_constraints
    >>> margin_constraints((3,)).toarray().tolist()
    [[-1.0, -1.0, 1.0]]
    """
    idx = np.arange(int(np.prod(shape))).reshape(shape)
    rows, cols, vals = [], [], []
    n_rows = 0
    for d, size in enumerate(shape):
        m = np.take(idx, size - 1, axis=d).ravel()
        members = np.moveaxis(np.take(idx, range(size - 1), axis=d), d, -1).reshape(len(m), -1)
        eq = n_rows + np.arange(len(m))
        rows += [eq, np.repeat(eq, members.shape[1])]
        cols += [m, members.ravel()]
        vals += [np.ones(len(m)), -np.ones(members.size)]
        n_rows += len(m)
    return sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows),
                                                     np.concatenate(cols))),
                             shape=(n_rows, idx.size))
