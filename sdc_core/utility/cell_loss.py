"""Cell-by-cell loss of chosen frequency tables, as sdcMicro's ``infoLoss`` measures record
swapping (docs/utility.md, "Tables after record swapping").

For a table of the columns C (any number of them), n_c is the count of cell c in the original x
and n′_c in the released x′, over the cells present in either (a cell empty on both sides adds
nothing to any measure):

- absD = Σ_c |n′_c − n_c|
- relabsD = Σ_{c : n_c > 0} |n′_c − n_c| / n_c (a cell empty in x has no relative change: it is
  a false non-zero)
- abssqrtD = Σ_c |√n′_c − √n_c|
- false zeros: cells with n_c > 0 and n′_c = 0; false non-zeros: cells with n_c = 0 and
  n′_c > 0

and, as sdcMicro reports them, the quantiles of the per-cell terms |n′ − n|, |n′ − n| / n
(cells with n > 0) and |√n′ − √n| at chosen probabilities (the empirical quantile, the smallest
value whose cumulative share reaches p). The summary keeps every table and the worst table by
each measure.

Cells are the value combinations of C, compared by what the values are, as in the table
fidelity of :mod:`sdc_core.utility.fidelity` (its :class:`~sdc_core.utility.fidelity.ColumnCoder`,
never binned here: a swap moves whole categories); a missing value is a cell of its own. With a
``household`` column each household counts once, by its first record (tables of household-level
columns such as region × household size).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sdc_core.errors import SdcInputError
from sdc_core.utility.fidelity import ColumnCoder

#: The measures each table reports, in order.
MEASURES = ("absD", "relabsD", "abssqrtD", "false_zeros", "false_nonzeros")
#: Default probabilities of the per-cell quantiles.
PROBS = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0)


@dataclass(frozen=True)
class TableLoss:
    """One table compared cell by cell (module docstring): ``cells`` the cells non-empty in x
    or x′; ``quantiles`` maps absD, relabsD and abssqrtD to the per-cell term's quantiles at
    ``probs``."""

    columns: tuple[Hashable, ...]
    cells: int
    absD: float
    relabsD: float
    abssqrtD: float
    false_zeros: int
    false_nonzeros: int
    probs: tuple[float, ...]
    quantiles: dict[str, tuple[float, ...]]

    def to_json(self) -> dict[str, Any]:
        return {"columns": list(self.columns), "cells": self.cells, "absD": self.absD,
                "relabsD": self.relabsD, "abssqrtD": self.abssqrtD,
                "false_zeros": self.false_zeros, "false_nonzeros": self.false_nonzeros,
                "probs": list(self.probs),
                "quantiles": {k: list(v) for k, v in self.quantiles.items()}}


@dataclass(frozen=True)
class CellLossReport:
    """Every chosen table (in the order given) and, for each measure of :data:`MEASURES`,
    the worst table: ``worst[m]`` = (largest value, that table's columns; the first such)."""

    tables: tuple[TableLoss, ...]
    worst: dict[str, tuple[float, tuple[Hashable, ...]]]

    def to_json(self) -> dict[str, Any]:
        return {"tables": [t.to_json() for t in self.tables],
                "worst": {m: {"value": v, "columns": list(c)}
                          for m, (v, c) in self.worst.items()}}


def _tables(tables: Any, original: pd.DataFrame, protected: pd.DataFrame
            ) -> list[tuple[Hashable, ...]]:
    """``tables`` as a non-empty list of non-empty tuples of distinct columns of both tables."""
    ok = isinstance(tables, list | tuple) and len(tables) > 0 and all(
        isinstance(t, list | tuple) and len(t) > 0 for t in tables)
    if not ok:
        raise SdcInputError("tables must be a non-empty list of non-empty lists of column "
                            "names, e.g. [[\"region\", \"sex\"], [\"district\"]]")
    out = []
    for t in tables:
        missing = [str(c) for c in t if c not in original.columns or c not in protected.columns]
        if missing:
            raise SdcInputError(f"column(s) not in both tables: {', '.join(missing)}")
        if len(set(t)) < len(t):
            raise SdcInputError(f"a table names a column twice: {', '.join(map(str, t))}")
        out.append(tuple(t))
    return out


def cell_counts(original: pd.DataFrame, protected: pd.DataFrame,
                columns: Sequence[Hashable]) -> tuple[np.ndarray, np.ndarray]:
    """The counts n and n′ of the table of ``columns`` in both tables, over the same cells: the
    value combinations present in either (module docstring: values compared by what they are,
    missing a value of its own)."""
    na, nb = len(original), len(protected)
    key = np.zeros(na + nb, dtype=np.int64)
    for c in columns:
        a, b, levels = ColumnCoder(original[c], binned=False).codes(protected[c])
        key = pd.factorize(key * levels + np.concatenate([a, b]))[0].astype(np.int64)
    width = int(key.max()) + 1 if len(key) else 0
    return (np.bincount(key[:na], minlength=width), np.bincount(key[na:], minlength=width))


def _quantiles(v: np.ndarray, probs: tuple[float, ...]) -> tuple[float, ...]:
    if not len(v):
        return tuple(0.0 for _ in probs)
    return tuple(float(q) for q in np.quantile(v, probs, method="inverted_cdf"))


def compare_counts(n: np.ndarray, n2: np.ndarray, columns: tuple[Hashable, ...] = (),
                   probs: tuple[float, ...] = PROBS) -> TableLoss:
    """The measures of one table from its counts ``n`` (original) and ``n2`` (released) over
    the same cells (module docstring)."""
    n, n2 = np.asarray(n, dtype=np.int64), np.asarray(n2, dtype=np.int64)
    seen = (n > 0) | (n2 > 0)
    n, n2 = n[seen], n2[seen]
    diff = np.abs(n2 - n)
    rel = diff[n > 0] / n[n > 0]
    root = np.abs(np.sqrt(n2) - np.sqrt(n))
    return TableLoss(columns, int(seen.sum()), float(diff.sum()), float(rel.sum()),
                     float(root.sum()), int(((n > 0) & (n2 == 0)).sum()),
                     int(((n == 0) & (n2 > 0)).sum()), tuple(probs),
                     {"absD": _quantiles(diff.astype(np.float64), probs),
                      "relabsD": _quantiles(rel, probs),
                      "abssqrtD": _quantiles(root, probs)})


def cell_loss(original: pd.DataFrame, protected: pd.DataFrame, tables: Any,
              household: Hashable | None = None,
              probs: Sequence[float] = PROBS) -> CellLossReport:
    """Compare the frequency tables of x and x′ cell by cell, as sdcMicro's ``infoLoss`` does
    after record swapping.

    For each table of columns C, with n_c and n′_c the counts of cell c in x and x′ (the cells
    present in either):

        absD = Σ_c |n′_c − n_c|,   relabsD = Σ_{c : n_c > 0} |n′_c − n_c| / n_c,
        abssqrtD = Σ_c |√n′_c − √n_c|,
        false zeros = #{c : n_c > 0, n′_c = 0},   false non-zeros = #{c : n_c = 0, n′_c > 0}.

    Parameters
    ----------
    original, protected : pandas.DataFrame
        x and x′; they need not have the same rows.
    tables : list of lists of column names
        The tables to compare, e.g. ``[["region", "sex"], ["district", "agegroup"]]``.
    household : column name, optional
        Count households, not records: each household once, by its first record.
    probs : sequence of float
        Probabilities of the per-cell quantiles, each in [0, 1].

    Returns
    -------
    CellLossReport
        One :class:`TableLoss` per table, in order, and the worst table by each measure.

    Examples
    --------
    >>> x = pd.DataFrame({"region": ["a", "a", "b", "b"], "sex": ["f", "m", "f", "m"]})
    >>> y = pd.DataFrame({"region": ["a", "b", "b", "b"], "sex": ["f", "m", "f", "m"]})
    >>> t = cell_loss(x, y, [["region"], ["region", "sex"]]).tables
    >>> t[0].absD, t[0].relabsD, t[1].absD, t[1].false_zeros, t[1].false_nonzeros
    (2.0, 1.0, 2.0, 1, 0)
    """
    chosen = _tables(tables, original, protected)
    p = tuple(float(v) for v in probs)
    if not p or not all(0.0 <= v <= 1.0 for v in p):
        raise SdcInputError("probs must be numbers in [0, 1]")
    if household is not None:
        for name, df in (("original", original), ("protected", protected)):
            if household not in df.columns:
                raise SdcInputError(f"household column {household!r} is not in the {name} "
                                    "table")
        original = original.loc[~original[household].duplicated().to_numpy()]
        protected = protected.loc[~protected[household].duplicated().to_numpy()]
    out = tuple(compare_counts(*cell_counts(original, protected, cols), cols, p)
                for cols in chosen)
    worst: dict[str, tuple[float, tuple[Hashable, ...]]] = {}
    for m in MEASURES:
        best = max(out, key=lambda t: float(getattr(t, m)))   # the first of the largest
        worst[m] = (float(getattr(best, m)), best.columns)
    return CellLossReport(out, worst)
