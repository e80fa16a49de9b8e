"""What the methods share: the result type, parameter checks, category codes."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sdc_core import rng
from sdc_core.errors import SdcInputError


@dataclass(frozen=True)
class MethodResult:
    """The protected column, JSON-ready figures about what the method did, and (for PRAM-like
    methods) the transition matrix used: rows = original category, columns = released one."""

    values: pd.Series
    info: dict[str, object] = field(default_factory=dict)
    matrix: pd.DataFrame | None = None


@dataclass(frozen=True)
class TableResult:
    """The protected columns of a method that works on several columns at once (a frame with
    the input's index and the given columns), and JSON-ready figures about what it did."""

    values: pd.DataFrame
    info: dict[str, object] = field(default_factory=dict)


def resolve_ids(n: int, rid: np.ndarray | None) -> np.ndarray:
    if rid is None:
        return rng.record_ids(n)
    rid = np.asarray(rid, dtype=np.uint64)
    if len(rid) != n:
        raise SdcInputError(f"{len(rid)} record ids for {n} records")
    return rid


@dataclass(frozen=True)
class Levels:
    """What a category method knows of a whole column: its distinct non-missing values in
    sorted order and the number of records holding each. A method given the ``Levels`` of the
    whole column can run on any part of it (a batch of an out-of-core engine) and give each
    record the value it gets when run on the whole column."""

    values: pd.Index
    counts: np.ndarray


def category_codes(s: pd.Series, levels: Levels | None = None) -> tuple[np.ndarray, pd.Index]:
    """Codes in the *sorted* order of the categories (so that draws do not depend on row order);
    ``-1`` for missing values. With ``levels`` (of the whole column) the codes index its values."""
    if levels is not None:
        codes = levels.values.get_indexer(s)
        if (codes[s.notna().to_numpy()] < 0).any():
            raise SdcInputError(f"column '{s.name}' holds values outside its levels")
        return codes.astype(np.int64, copy=False), levels.values
    codes, found = pd.factorize(s, sort=True)
    return codes.astype(np.int64, copy=False), pd.Index(found)


def from_codes(s: pd.Series, levels: pd.Index, codes: np.ndarray) -> pd.Series:
    """The column rebuilt from category codes (``-1`` = missing), keeping its dtype, index and
    name: one vectorised ``take`` on the categories in the column's own array type."""
    typed = pd.array(levels, dtype=s.dtype)
    return pd.Series(typed.take(codes, allow_fill=True), index=s.index, name=s.name)


def apply_transition(codes: np.ndarray, matrix: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Draw each record's new category from the row of ``matrix`` of its current one, by
    inverse CDF on its uniform ``u``: one vectorised pass per category, not per record."""
    cum = np.cumsum(matrix, axis=1)
    cum[:, -1] = 1.0
    out = codes.copy()
    for c in range(matrix.shape[0]):
        rows = codes == c
        if rows.any():
            out[rows] = np.minimum(np.searchsorted(cum[c], u[rows], side="right"),
                                   matrix.shape[1] - 1)
    return out
