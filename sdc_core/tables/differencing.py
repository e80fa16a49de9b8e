"""Differencing between two published tables (docs/tables.md, "Differencing between two
tables").

A steward publishes the cross table of ``columns`` (the fine table) and the same table with some
levels of one column merged into one (the coarse table, the merged level labelled
``"a+b"``), both by :func:`sdc_core.tables.table_release.release_table` with the same method and
settings. A reader holding both subtracts.

- ``suppress``: for every cell hidden in the fine table, its feasible interval given both
  tables: [lo_c, hi_c] = [min x_c, max x_c] over the fine table's cells and margins x ≥ 0
  subject to A·x = 0 (the fine table adds up,
  :attr:`~sdc_core.tables.crosstab.CrossTable.constraints`), x_i = v_i for every published fine
  figure i, and Σ_{i ∈ C} x_i = w_C for every published coarse figure C, the fine figures it covers
  (a merged level covers its levels; every other label, ``Total`` included, covers the same label).
  Linear programming (``scipy.optimize.linprog``, HiGHS; ``integer=True``: ``scipy.optimize.milp``);
  counts are whole numbers, so the bounds round inwards. A primary cell of value v is exposed when
  lo > v − lower or hi < v + upper (:func:`sdc_core.tables.table_release.primary_cells`), as in the
  release's own audit (sdc_core/tables/suppression_audit.py), which gives the cells exposed by the
  fine table alone.
- ``dp``/``ckm``: :func:`sdc_core.tables.count_tables.differencing` — a fine cell recovered as the
  published coarse figure minus the other published fine figures it covers; how many are
  recovered, how many have a true count 1–4 and how many of those come out exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from sdc_core.errors import SdcInputError
from sdc_core.tables.cell_rules import Rule
from sdc_core.tables.count_tables import Differencing, differencing
from sdc_core.tables.crosstab import TOTAL, level_codes
from sdc_core.tables.suppression_audit import TOL, Progress, intervals
from sdc_core.tables.table_release import (
    DEFAULT_RULE,
    TABLE_METHODS,
    TIME_LIMIT,
    TableRelease,
    primary_cells,
    release_table,
)

#: Joins the merged levels into the coarse level's label
JOIN = "+"


@dataclass(frozen=True)
class DifferencingResult:
    """What a reader of both tables learns (module docstring); made by
    :func:`differencing_risk`.

    ``frame`` (``suppress``): one row per cell hidden in the fine table — its labels, ``value``,
    ``status``, ``lower``/``upper`` (the rule's protection, 0 for a secondary cell), the
    interval of the fine table alone (``lo_alone``, ``hi_alone``, ``exposed_alone``) and of both
    tables (``lo``, ``hi``, ``exact``, ``checked``, ``pinned``, ``exposed``; a cell not checked
    within ``time_limit`` has no interval and is never exposed nor protected).
    ``counts`` (``dp``/``ckm``): the recovered differences."""

    method: str
    columns: tuple[str, ...]
    column: str
    merged: tuple[str, ...]
    label: str
    fine: TableRelease
    coarse: TableRelease
    frame: pd.DataFrame = field(default_factory=pd.DataFrame)
    counts: Differencing | None = None
    time_limit: float | None = None

    @property
    def exposed_alone(self) -> int:
        """Primary cells the fine table exposes by itself (its own audit)."""
        return int(self.frame["exposed_alone"].sum()) if "exposed_alone" in self.frame else 0

    @property
    def exposed(self) -> int:
        """Primary cells exposed by the two tables together."""
        return int(self.frame["exposed"].sum()) if "exposed" in self.frame else 0

    @property
    def unchecked(self) -> int:
        """Hidden cells whose interval given both tables was not decided in the time allowed."""
        return int((~self.frame["checked"]).sum()) if "checked" in self.frame else 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "method": self.method, "columns": list(self.columns), "column": self.column,
            "merged": list(self.merged), "label": self.label, "household": self.fine.household,
            "summary": self.summary()}
        if self.method == "suppress":
            out["rule"] = None if self.fine.rule is None else self.fine.rule.text
            out["fine_audit_passes"] = bool(self.fine.audit.passes) \
                if self.fine.audit is not None else None
            out["exposed_alone"] = self.exposed_alone
            out["exposed"] = self.exposed
            out["unchecked_cells"] = self.unchecked
            keep = list(self.columns) + ["value", "status", "lo_alone", "hi_alone", "lo", "hi",
                                         "exact", "checked", "exposed_alone", "exposed"]
            rows = self.frame[keep].astype(object).to_dict(orient="records")
            out["hidden"] = [{k: _plain(v) for k, v in r.items()} for r in rows]
        else:
            out["epsilon"] = self.fine.epsilon
            out["differences"] = self.counts.to_json() if self.counts is not None else None
        return out

    def summary(self) -> str:
        """One line: what the pair exposes beyond the fine table."""
        head = (f"{' × '.join(self.columns)} and the same with {self.column} "
                f"{self.label} merged ({self.method})")
        if self.method == "suppress":
            within = f" within {self.time_limit:g} s" if self.time_limit is not None else ""
            return (f"{head}: {len(self.frame)} hidden cells; primary cells exposed by the "
                    f"table alone {self.exposed_alone}, by the two tables {self.exposed}" + (
                        f"; {self.unchecked} hidden cells not checked{within}: the pair may "
                        "expose them" if self.unchecked else ""))
        c = self.counts
        assert c is not None
        return (f"{head}: {c.pairs} fine cells recovered by subtraction, {c.small} of true "
                f"count 1–4, {c.exposed} of those exactly; mean error {c.mean_error:.3g}")


def _plain(v: object) -> object:
    """A figure for JSON: a NumPy scalar as Python's, a missing number (a cell not checked) as
    None."""
    if isinstance(v, float | np.floating) and np.isnan(v):
        return None
    return v.item() if isinstance(v, np.generic) else v


def _coarse_column(s: pd.Series, merged: list[str], label: str) -> pd.Series:
    """``s`` as the cross table labels it (its levels' text, :func:`sdc_core.tables.crosstab.
    level_codes`) with the levels ``merged`` replaced by ``label``; a blank stays blank; a
    categorical column keeps its categories' order, the merged one where the first of them
    stood."""
    codes, levels = level_codes(s, None)
    text = pd.Series(np.asarray(levels + [None], dtype=object)[codes], index=s.index,
                     name=s.name)  # −1: a blank, None
    hit = text.isin(merged).to_numpy()
    coarse = text.where(~hit, label)
    if isinstance(s.dtype, pd.CategoricalDtype):
        cats: list[str] = []
        for c in (str(c) for c in s.cat.categories):
            name = label if c in merged else c
            if name not in cats:
                cats.append(name)
        return pd.Series(pd.Categorical(coarse, categories=cats), index=s.index, name=s.name)
    return coarse


def cover_matrix(fine: TableRelease, coarse: TableRelease, column: str,
           merged: list[str], label: str) -> sparse.csr_matrix:
    """Which fine figures add into each coarse one: a matrix of the coarse frame's rows × the
    fine frame's rows, 1 where the fine label equals the coarse one on every column, or the
    coarse label on ``column`` is ``label`` and the fine one is among ``merged``."""
    cols = list(fine.truth.columns)
    at = cols.index(column)
    fkeys = [tuple(str(v) for v in r)
             for r in fine.truth.frame[cols].itertuples(index=False, name=None)]
    where = {k: i for i, k in enumerate(fkeys)}
    rows, cells = [], []
    for j, r in enumerate(coarse.truth.frame[cols].itertuples(index=False, name=None)):
        key = [str(v) for v in r]
        for lev in (merged if key[at] == label else [key[at]]):
            key[at] = lev
            i = where.get(tuple(key))
            if i is not None:
                rows.append(j)
                cells.append(i)
    return sparse.csr_matrix((np.ones(len(rows)), (rows, cells)),
                             shape=(len(coarse.truth.frame), len(fine.truth.frame)))


@dataclass(frozen=True)
class PairIntervals:
    """The interval of each cell hidden in the fine table given both tables
    (:func:`pair_intervals`), in the order of the fine frame: ``lo``, ``hi`` (NaN when not
    checked), ``exact`` (the reader's interval; else [lo, hi] lies inside it, found by tables
    that already show the cell protected) and ``checked`` (decided in the time allowed)."""

    lo: np.ndarray
    hi: np.ndarray
    exact: np.ndarray
    checked: np.ndarray

    @property
    def unchecked(self) -> int:
        """How many hidden cells were not decided in the time allowed."""
        return int((~self.checked).sum())


def pair_intervals(fine: TableRelease, coarse: TableRelease, cover: sparse.csr_matrix,
                   want: tuple[np.ndarray, np.ndarray] | None = None, integer: bool = False,
                   exact: bool | None = None, time_limit: float | None = None,
                   progress: Progress | None = None) -> PairIntervals:
    """The interval of every cell hidden in ``fine`` given both published tables.

    [lo_c, hi_c] = [min x_c, max x_c] subject to x ≥ 0, A·x = 0, x_i = v_i (published fine
    figures) and cover_C · x = w_C (published coarse figures); bounds rounded inwards to whole
    numbers. Decided as the audit decides (:func:`sdc_core.tables.suppression_audit.intervals`;
    docs/tables.md, "The audit's bound"): each published coarse figure w_C is a column of its
    own, never hidden, with the row cover_C · x − w_C = 0, and a cell is decided once the
    tables found reach its ``want`` and differ.

    Parameters
    ----------
    fine, coarse : TableRelease
        The two suppressed releases (``method="suppress"``).
    cover : scipy.sparse.csr_matrix
        Coarse rows × fine rows, 1 where a fine figure adds into a coarse one.
    want : (numpy.ndarray, numpy.ndarray), optional
        Per fine figure, the least and the largest value its interval must reach (the
        protection of a primary cell, v − lower and v + upper; ∞ and −∞ for none, the
        default: a cell is decided once it is not pinned).
    integer : bool, default False
        Whole-number cells by integer programming (else the LP relaxation, rounded inwards).
    exact, time_limit, progress
        As :func:`sdc_core.tables.suppression_audit.audit`'s: True, every interval exact; a cell not
        decided within ``time_limit`` seconds is not checked.

    Returns
    -------
    PairIntervals
        One entry per hidden fine figure in the order of the fine frame.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.tables.table_release import release_table
    >>> df = pd.DataFrame({"a": list("x" * 3 + "y" * 5 + "z" * 20 + "w" * 8)})
    >>> fine = release_table(df, ["a"], rule=Rule("threshold", (4,)))
    >>> coarse = release_table(df.replace({"a": {"y": "y+z", "z": "y+z"}}), ["a"],
    ...                        rule=Rule("threshold", (4,)))
    >>> cover = cover_matrix(fine, coarse, "a", ["y", "z"], "y+z")
    >>> got = pair_intervals(fine, coarse, cover, exact=True)
    >>> fine.audit.passes, got.lo.tolist(), got.hi.tolist()
    (True, [3.0, 3.0], [5.0, 5.0])
    """
    x = fine.truth.values
    n = len(x)
    hidden = fine.frame[fine.value].isna().to_numpy()
    shown_c = coarse.frame[coarse.value].notna().to_numpy()
    w = coarse.truth.values[shown_c]
    k = len(w)
    rows = fine.truth.constraints.shape[0]
    a = sparse.vstack([sparse.hstack([fine.truth.constraints, sparse.csr_matrix((rows, k))]),
                       sparse.hstack([cover[shown_c], -sparse.identity(k)])]).tocsr()
    if want is None:
        want = (np.full(n, np.inf), np.full(n, -np.inf))
    got = intervals(a, np.r_[x, w], np.r_[hidden, np.zeros(k, dtype=bool)],
                    (np.r_[want[0], np.full(k, np.inf)], np.r_[want[1], np.full(k, -np.inf)]),
                    integer=integer, exact=exact, time_limit=time_limit, progress=progress,
                    label="the hidden cells given both tables")
    lo, hi = got.lo, got.hi
    if integer:  # the integer programmes' optima, whole numbers up to the solver's tolerance
        lo, hi = np.ceil(lo - 1e-6) + 0.0, np.floor(hi + 1e-6) + 0.0
    return PairIntervals(lo, hi, got.exact, got.checked)


def _check(df: pd.DataFrame, columns: list[str], column: str, merged: list[str]) -> list[str]:
    if not isinstance(df, pd.DataFrame):
        raise SdcInputError("differencing reads a data frame of records")
    cols = [columns] if isinstance(columns, str) else [str(c) for c in columns]
    if column not in df.columns:
        raise SdcInputError(f"unknown column to merge: {column!r}")
    if column not in cols:
        raise SdcInputError(f"the merged column {column!r} must be one of the table's columns "
                            f"({', '.join(cols)})")
    names = [str(m) for m in merged] if isinstance(merged, (list, tuple)) else []
    if len(set(names)) < 2 or len(set(names)) != len(names):
        raise SdcInputError("merge at least 2 different levels, e.g. --difference COLUMN=L1,L2")
    return cols


def differencing_risk(df: pd.DataFrame, columns: list[str], column: str, merged: list[str],
                      method: str = "suppress", rule: Rule = DEFAULT_RULE, epsilon: float = 1.0,
                      seed: int = 0, threshold: int = 10, integer: bool = False,
                      household: str | None = None,
                      max_contributions: int | None = None,
                      time_limit: float | None = TIME_LIMIT,
                      progress: Progress | None = None) -> DifferencingResult:
    """Publish the table of ``columns`` and the same with ``merged`` levels of ``column`` as one,
    and measure what subtracting one from the other tells (module docstring).

    Suppression: the interval of each hidden fine cell given both tables (:func:`pair_intervals`)
    against the protection lo ≤ v − lower, hi ≥ v + upper. DP and the cell key method:
    recovered f = w_C − Σ_{g ∈ C, g ≠ f} v_g (:func:`sdc_core.tables.count_tables.differencing`).

    Parameters
    ----------
    df : pandas.DataFrame
        One row per record.
    columns : list of str
        The table's 1 to 3 columns; ``column`` among them.
    column : str
        The column whose levels the coarse table merges.
    merged : list of str
        At least 2 levels of ``column`` (as text), published as one labelled "L1+L2".
    method : {"suppress", "dp", "ckm"}
    rule, epsilon, seed, threshold
        As :func:`sdc_core.tables.table_release.release_table`, the same for both tables.
    integer : bool, default False
        ``suppress``: whole-number intervals by integer programming.
    household, max_contributions
        The unit of protection, as :func:`sdc_core.tables.table_release.release_table`.
    time_limit : float or None, default :data:`~sdc_core.tables.table_release.TIME_LIMIT`
        ``suppress``: seconds allowed to each table's suppression and audit (as the table is
        published alone) and to the pair's intervals (None: no limit); a hidden cell not
        decided by then is not checked (:attr:`DifferencingResult.unchecked`), never counted
        as protected.
    progress : callable, optional
        ``progress(done, total, label)`` as the tables are published and the pair's cells
        decided (an exception it raises stops it).

    Returns
    -------
    DifferencingResult

    Raises
    ------
    SdcInputError
        An unknown column, a column not in the table, fewer than 2 levels, a level not in the
        column, or a merged label that is already a level.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": list("x" * 3 + "y" * 5 + "z" * 20 + "w" * 8)})
    >>> r = differencing_risk(df, ["a"], "a", ["y", "z"], rule=Rule("threshold", (4,)))
    >>> r.exposed_alone, r.exposed
    (0, 1)
    """
    cols = _check(df, columns, column, merged)
    if method not in TABLE_METHODS:
        raise SdcInputError(f"method must be one of {', '.join(TABLE_METHODS)}, not {method!r}")
    merged = [str(m) for m in merged]
    label = JOIN.join(merged)
    fine = release_table(df, cols, None, method, rule, epsilon, seed, threshold, household,
                         max_contributions, time_limit, progress)
    levels = fine.truth.levels[cols.index(column)]
    missing = [m for m in merged if m not in levels]
    if missing:
        raise SdcInputError(f"column {column!r} has no level {', '.join(map(repr, missing))}; "
                            f"its levels: {', '.join(levels[:20])}")
    if label in levels or label == TOTAL:
        raise SdcInputError(f"column {column!r} already has a level {label!r}")
    data = df.copy()
    data[column] = _coarse_column(df[column], merged, label)
    coarse = release_table(data, cols, None, method, rule, epsilon, seed, threshold, household,
                           max_contributions, time_limit, progress)
    if method != "suppress":
        truth = fine.truth.frame.loc[~fine.truth.margin, cols + ["count"]]
        counts = differencing(truth, fine.frame, coarse.frame, column,
                              {m: label for m in merged})
        return DifferencingResult(method, tuple(cols), column, tuple(merged), label, fine,
                                  coarse, counts=counts)
    cover = cover_matrix(fine, coarse, column, merged, label)
    need = primary_cells(fine.truth, rule)
    want = (np.where(need.primary, fine.truth.values - need.lower, np.inf),
            np.where(need.primary, fine.truth.values + need.upper, -np.inf))
    got = pair_intervals(fine, coarse, cover, want, integer, time_limit=time_limit,
                         progress=progress)
    hidden = np.flatnonzero(fine.frame[fine.value].isna().to_numpy())
    v = fine.truth.values[hidden]
    primary = need.primary[hidden]
    lower, upper = need.lower[hidden], need.upper[hidden]
    alone = fine.audit.frame.set_index("cell") if fine.audit is not None else pd.DataFrame()
    frame = fine.truth.frame.loc[hidden, cols].reset_index(drop=True)
    frame["value"] = v
    frame["status"] = fine.frame["status"].to_numpy()[hidden]
    frame["lower"], frame["upper"] = np.where(primary, lower, 0.0), np.where(primary, upper, 0.0)
    frame["lo_alone"] = alone["lo"].reindex(hidden).to_numpy(dtype=np.float64)
    frame["hi_alone"] = alone["hi"].reindex(hidden).to_numpy(dtype=np.float64)
    frame["exposed_alone"] = alone["exposed"].reindex(hidden).fillna(False).to_numpy(dtype=bool)
    lo, hi = got.lo, got.hi
    frame["lo"], frame["hi"] = lo, hi
    frame["exact"], frame["checked"] = got.exact, got.checked
    # whole counts: a shortfall of a whole number, never within the tolerance
    frame["pinned"] = got.exact & (hi - lo <= TOL)
    frame["exposed"] = primary & got.checked & ((lo - (v - lower) > TOL)
                                                | (v + upper - hi > TOL))
    return DifferencingResult("suppress", tuple(cols), column, tuple(merged), label, fine,
                              coarse, frame, time_limit=time_limit)
