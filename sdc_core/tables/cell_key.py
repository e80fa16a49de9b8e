"""The cell key method (the ONS method; docs/tables.md, "The cell key method").

Every record has a key, a uniform integer 0–255 drawn from a counter-based stream keyed by its
record id (:mod:`sdc_core.rng`), so a record keeps its key in every table; a cell's key is the
sum of its records' keys mod 256; a perturbation table (ptable: ``pcv``, ``ckey``, ``pvalue``)
gives the published count n + pvalue(pcv, ckey), with pcv = n for n ≤ M (the largest pcv of the
ptable) and (M − W + 1) + ((n − 1) mod W) above (W = 250 as the ONS package); a published count
below the threshold (default 10) is blank. Margins are cells like the others (their own cell
key), so equal record sets give equal cell keys and so equal published values, in any table.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sdc_core import rng
from sdc_core.errors import SdcInputError
from sdc_core.tables.count_tables import full_grid, with_margins

#: Record keys and cell keys run over 0 … KEY_RANGE − 1.
KEY_RANGE = 256
#: The recipe step whose stream draws the record keys (:func:`sdc_core.rng.key`).
RECORD_KEY_STEP = 44
#: Most rows a user's ptable may have.
MAX_PTABLE_ROWS = 5_000_000
#: ONS's wrap width: counts above the largest pcv reuse its last W rows.
WRAP = 250


def record_keys(ids: np.ndarray, seed: int) -> np.ndarray:
    """Each record's key: ⌊u64(r, K) / 2⁵⁶⌋, a uniform integer 0–255 of a counter-based
    stream (K = ``rng.key(seed, RECORD_KEY_STEP, 0)``) at the record id r, so a record keeps
    its key whatever the table or row order.

    Parameters
    ----------
    ids : numpy.ndarray
        Record ids (:func:`sdc_core.rng.record_ids`, :func:`sdc_core.rng.ids_from_column`).
    seed : int

    Returns
    -------
    numpy.ndarray
        int64 keys in 0 … 255.

    Examples
    --------
    >>> k = record_keys(np.arange(5, dtype=np.uint64), 7)
    >>> bool(((k >= 0) & (k < 256)).all()), len(k)
    (True, 5)
    """
    stream = rng.key(int(seed), RECORD_KEY_STEP, 0)
    return (rng.u64(np.asarray(ids, dtype=np.uint64), stream) >> np.uint64(56)).astype(np.int64)


def default_ptable(threshold: int = 10, base: int = 5, max_pcv: int = 750) -> pd.DataFrame:
    """The default perturbation table: counts 1 … threshold − 1 go to 0 (then blank), the
    others are rounded to a multiple of ``base``: up when base·ckey < 256·r (r = pcv mod base),
    else down, so that over uniform cell keys a cell rounds up with probability
    ⌈256·r/base⌉/256 ≈ r/base and its expected published value is its count within
    base/256.

    Parameters
    ----------
    threshold : int
    base : int
    max_pcv : int
        Largest pcv (a multiple of 250, the ONS wrap).

    Returns
    -------
    pandas.DataFrame
        Columns ``pcv``, ``ckey``, ``pvalue``.

    Examples
    --------
    >>> p = default_ptable()
    >>> twelve = p[p.pcv == 12].set_index("ckey").pvalue
    >>> int(twelve[0]), int(twelve[255])
    (3, -2)
    """
    pcv = np.repeat(np.arange(1, max_pcv + 1), KEY_RANGE)
    ckey = np.tile(np.arange(KEY_RANGE), max_pcv)
    r = pcv % base
    up = KEY_RANGE * r > base * ckey
    pvalue = np.where(r == 0, 0, np.where(up, base - r, -r))
    pvalue = np.where(pcv < threshold, -pcv, pvalue)
    return pd.DataFrame({"pcv": pcv, "ckey": ckey, "pvalue": pvalue.astype(np.int64)})


def check_ptable(ptable: Any) -> np.ndarray:
    """A user's ptable as a dense array P[pcv − 1, ckey] of perturbations, after checks: a
    DataFrame with whole-number columns ``pcv`` (1 … M, every one), ``ckey`` (0 … 255, every
    one for each pcv), ``pvalue``; M a multiple of 250 (or at most 250: no wrap needed below
    it); no published count negative (pcv + pvalue ≥ 0).

    Parameters
    ----------
    ptable : pandas.DataFrame

    Returns
    -------
    numpy.ndarray
        Shape (M, 256), int64.

    Examples
    --------
    >>> check_ptable(default_ptable()).shape
    (750, 256)
    """
    if not isinstance(ptable, pd.DataFrame) or not {"pcv", "ckey", "pvalue"} <= set(
            ptable.columns):
        raise SdcInputError("a ptable must be a table with columns pcv, ckey and pvalue")
    if len(ptable) > MAX_PTABLE_ROWS or len(ptable) == 0:
        raise SdcInputError(f"a ptable must have 1 to {MAX_PTABLE_ROWS:,} rows, not "
                            f"{len(ptable):,}")
    cols = {}
    for c in ("pcv", "ckey", "pvalue"):
        v = pd.to_numeric(ptable[c], errors="coerce").to_numpy(dtype=np.float64)
        if not np.all(np.isfinite(v)) or np.any(v != np.floor(v)) or np.any(np.abs(v) > 1e9):
            raise SdcInputError(f"ptable column {c} must hold whole numbers")
        cols[c] = v.astype(np.int64)
    pcv, ckey, pvalue = cols["pcv"], cols["ckey"], cols["pvalue"]
    top = int(pcv.max())
    if pcv.min() < 1 or ckey.min() < 0 or ckey.max() >= KEY_RANGE:
        raise SdcInputError(f"ptable pcv must be 1 or more and ckey 0 to {KEY_RANGE - 1}")
    if len(ptable) != top * KEY_RANGE or pd.Series(pcv * KEY_RANGE + ckey).duplicated().any():
        raise SdcInputError(f"a ptable needs exactly one row per pcv 1 … {top} and ckey 0 … "
                            f"{KEY_RANGE - 1}")
    if top > WRAP and top % WRAP:
        raise SdcInputError(f"the largest pcv must be a multiple of {WRAP} (counts above it "
                            f"reuse its last {WRAP} rows), not {top}")
    if np.any(pcv + pvalue < 0):
        raise SdcInputError("a ptable must not make a count negative (pcv + pvalue < 0)")
    dense = np.zeros((top, KEY_RANGE), dtype=np.int64)
    dense[pcv - 1, ckey] = pvalue
    return dense


def pcv_of(counts: np.ndarray, top: int) -> np.ndarray:
    """The ptable row of each count: n for n ≤ M, else (M − W + 1) + ((n − 1) mod W), W =
    min(250, M).

    Parameters
    ----------
    counts : numpy.ndarray
    top : int
        M, the largest pcv.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> pcv_of(np.array([5, 750, 751, 780]), 750).tolist()
    [5, 750, 501, 530]
    """
    n = np.asarray(counts, dtype=np.int64)
    w = min(WRAP, top)
    return np.where(n <= top, n, (top - w + 1) + (n - 1) % w)


@dataclass(frozen=True)
class CkmTable:
    """A cell-key table: ``table`` holds the key columns, ``count`` (published; missing when
    blank), ``ckey``, ``margin`` and ``status`` ("published" unchanged, "perturbed" changed,
    "primary" blank below the threshold)."""

    table: pd.DataFrame
    keys: tuple[Hashable, ...]
    threshold: int
    seed: int | None

    def to_json(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "seed": self.seed,
                "cells": self.table.astype(object).where(self.table.notna(), None)
                .to_dict(orient="records")}


def cell_keys(records: pd.DataFrame, columns: Sequence[Hashable], keys: np.ndarray
              ) -> pd.DataFrame:
    """The table of ``columns`` with each cell's count and cell key Σ record keys mod 256.

    Parameters
    ----------
    records : pandas.DataFrame
        One row per record.
    columns : sequence of column names
    keys : numpy.ndarray
        Each record's key (:func:`record_keys`, or the user's).

    Returns
    -------
    pandas.DataFrame
        The full grid of the columns' levels: ``columns``, ``count``, ``ckey`` (0 for an
        empty cell).

    Examples
    --------
    >>> r = pd.DataFrame({"a": ["x", "x", "y"]})
    >>> cell_keys(r, ["a"], np.array([200, 100, 7]))[["count", "ckey"]].values.tolist()
    [[2, 44], [1, 7]]
    """
    columns = list(columns)
    missing = [str(c) for c in columns if c not in records.columns]
    if not columns or missing:
        raise SdcInputError(f"unknown column(s): {', '.join(missing) or '(none chosen)'}")
    keys = np.asarray(keys)
    if len(keys) != len(records) or not np.issubdtype(keys.dtype, np.integer) \
            or np.any(keys < 0) or np.any(keys >= KEY_RANGE):
        raise SdcInputError(f"record keys must be whole numbers 0 to {KEY_RANGE - 1}, one per "
                            "record")
    frame = records[columns].copy()
    for c in columns:
        if frame[c].isna().any():
            raise SdcInputError(f"column {c!r} has missing values: recode them first")
        frame[c] = frame[c].astype(str)
    frame["count"] = 1
    frame["ckey"] = keys.astype(np.int64)
    agg = frame.groupby(columns, sort=True).agg(count=("count", "sum"), ckey=("ckey", "sum"))
    agg = agg.reset_index()
    grid = full_grid(agg[columns + ["count"]])
    out = grid.merge(agg[columns + ["ckey"]], on=columns, how="left")
    out["ckey"] = (out["ckey"].fillna(0).astype(np.int64)) % KEY_RANGE
    return out


def ckm_table(records: pd.DataFrame, columns: Sequence[Hashable], seed: int = 0,
              ids: np.ndarray | None = None, record_key: Hashable | None = None,
              ptable: pd.DataFrame | None = None, threshold: int = 10,
              margins: bool = True) -> CkmTable:
    """The cell key method on the table of ``columns`` (module docstring).

    Published count = n + P[pcv(n), ckey] for n ≥ 1 (0 stays 0); blank when it is below
    ``threshold``; ckey = Σ record keys mod 256, for the margins too.

    Parameters
    ----------
    records : pandas.DataFrame
    columns : sequence of column names
    seed : int
        Seed of the record keys (ignored with ``record_key``).
    ids : numpy.ndarray, optional
        Record ids (default: row positions; pass an id column through
        :func:`sdc_core.rng.ids_from_column` for keys that do not depend on row order).
    record_key : column name, optional
        A column of the records holding their keys (0–255), as the ONS package takes them.
    ptable : pandas.DataFrame, optional
        ``pcv``, ``ckey``, ``pvalue`` (default :func:`default_ptable`).
    threshold : int
        Published counts below it are blank (0 … 10⁶).
    margins : bool
        Add every margin (:func:`with_margins`).

    Returns
    -------
    CkmTable

    Examples
    --------
    >>> r = pd.DataFrame({"a": ["x"] * 23 + ["y"] * 4})
    >>> t = ckm_table(r, ["a"], seed=3).table
    >>> bool(t["count"].isna().iloc[1]), t["status"].iloc[1], int(t["count"].iloc[0]) % 5
    (True, 'primary', 0)
    """
    if isinstance(threshold, bool) or not isinstance(threshold, int | np.integer) \
            or not 0 <= threshold <= 10 ** 6:
        raise SdcInputError(f"threshold must be a whole number from 0 to 1,000,000, not "
                            f"{threshold!r}")
    dense = check_ptable(default_ptable() if ptable is None else ptable)
    if record_key is not None:
        if record_key not in records.columns:
            raise SdcInputError(f"record key column {record_key!r} is not in the table")
        raw = pd.to_numeric(records[record_key], errors="coerce").to_numpy(dtype=np.float64)
        if not np.all(np.isfinite(raw)) or np.any(raw != np.floor(raw)):
            raise SdcInputError(f"record key column {record_key!r} must hold whole numbers")
        keys = raw.astype(np.int64)
        used_seed = None
    else:
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) \
                or not 0 <= int(seed) <= rng.MAX_SEED:
            raise SdcInputError(f"seed must be a whole number from 0 to 2^64 − 1, not {seed!r}")
        rid = rng.record_ids(len(records)) if ids is None else np.asarray(ids)
        if len(rid) != len(records):
            raise SdcInputError("one record id per record is needed")
        keys, used_seed = record_keys(rid, int(seed)), int(seed)
    cells = cell_keys(records, columns, keys)
    cols = list(columns)
    if margins:
        full = with_margins(cells, cols, "count")
        full["ckey"] = with_margins(cells, cols, "ckey", KEY_RANGE)["ckey"].to_numpy()
    else:
        full = cells.assign(margin=False)
    n = full["count"].to_numpy(dtype=np.int64)
    ck = full["ckey"].to_numpy(dtype=np.int64)
    pert = np.zeros(len(n), dtype=np.int64)
    pos = n > 0
    pert[pos] = dense[pcv_of(n[pos], dense.shape[0]) - 1, ck[pos]]
    post = n + pert
    blank = post < threshold
    full["count"] = pd.array(np.where(blank, 0, post), dtype="Int64")
    full.loc[blank, "count"] = pd.NA
    full["status"] = np.where(blank, "primary", np.where(pert != 0, "perturbed", "published"))
    return CkmTable(full[cols + ["count", "ckey", "margin", "status"]].reset_index(drop=True),
                    tuple(cols), int(threshold), used_seed)
