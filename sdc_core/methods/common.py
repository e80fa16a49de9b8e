"""What the methods share: the result type, parameter checks, category codes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sdc_core import rng
from sdc_core.errors import SdcInputError

#: The most categories whose K × K transition matrix is built densely (8 MB of float64): a
#: wider column's PRAM, relabeling or randomized response keeps it as :class:`RankOne`
#: (docs/measures.md, "Wide columns")
MAX_DENSE_LEVELS = 1_000
#: Query points from which a k-d tree (scipy's ``cKDTree.query``) is asked in threads: below
#: it, starting a thread per core costs more than the whole query (30 points: 0.04 ms in this
#: thread, 0.7 ms in threads)
THREADED_QUERIES = 10_000


def kdtree_workers(queries: int) -> int:
    """The k-d tree's ``workers`` for ``queries`` points: every core for a large query, this
    thread for a small one (the neighbours found are the same)."""
    return -1 if queries >= THREADED_QUERIES else 1


@dataclass(frozen=True, eq=False)
class RankOne:
    """A transition matrix P = a·I + 1·cᵀ over ``levels`` (true and released alike), kept as
    a, c: P(released k | true i) = a·[i = k] + c_k. Flip PRAM (a = 1 − p − p/(K − 1),
    c = p/(K − 1)), relabeling (a = 1 − α, c = α·π) and randomized response (a = q,
    c = (1 − q)/K) are of this form, and so is a product of two: (a₁I + 1c₁ᵀ)(a₂I + 1c₂ᵀ) =
    a₁a₂·I + 1·(a₁c₂ + a₂c₁ + (Σc₁)·c₂)ᵀ.

    Parameters
    ----------
    levels : tuple of str
        The categories, named as the dense matrices name them.
    a : float
        The weight of the identity.
    c : numpy.ndarray
        One per level.

    Examples
    --------
    >>> import numpy as np
    >>> m = RankOne(("x", "y", "z"), 0.7, np.full(3, 0.1))
    >>> m.dense().round(2).tolist()
    [[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]]
    """

    levels: tuple[str, ...]
    a: float
    c: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self.levels), len(self.levels))

    def then(self, other: RankOne) -> RankOne:
        """The product self·other (this step, then ``other`` on the same levels)."""
        if other.levels != self.levels:
            raise SdcInputError("two steps' matrices over different categories")
        return RankOne(self.levels, self.a * other.a,
                       self.a * other.c + other.a * self.c + float(self.c.sum()) * other.c)

    def dense(self) -> np.ndarray:
        """The K × K matrix (only for K ≤ :data:`MAX_DENSE_LEVELS`)."""
        k = len(self.levels)
        if k > MAX_DENSE_LEVELS:
            raise SdcInputError(f"a transition matrix over {k:,} categories is not built (at "
                                f"most {MAX_DENSE_LEVELS:,})")
        return self.a * np.eye(k) + np.broadcast_to(self.c, (k, k))

    def frame(self) -> pd.DataFrame:
        """:meth:`dense` with the levels as index and columns."""
        return pd.DataFrame(self.dense(), index=list(self.levels), columns=list(self.levels))


def transition(levels: Sequence[str], a: float, c: np.ndarray) -> pd.DataFrame | RankOne:
    """A method's matrix a·I + 1·cᵀ: dense (a DataFrame) up to :data:`MAX_DENSE_LEVELS`
    levels, else :class:`RankOne`."""
    m = RankOne(tuple(str(v) for v in levels), float(a), np.asarray(c, dtype=np.float64))
    return m.frame() if len(m.levels) <= MAX_DENSE_LEVELS else m


def wide_refused(what: str, k: int) -> None:
    """Refuse a dense K × K matrix past :data:`MAX_DENSE_LEVELS` (before it is built)."""
    if k > MAX_DENSE_LEVELS:
        raise SdcInputError(f"{what} builds a {k:,} × {k:,} transition matrix; at most "
                            f"{MAX_DENSE_LEVELS:,} categories: recode the column first, or use "
                            "PRAM with p, relabeling or randomized response")


@dataclass(frozen=True)
class MethodResult:
    """The protected column, JSON-ready figures about what the method did, and (for PRAM-like
    methods) the transition matrix used: rows = original category, columns = released one."""

    values: pd.Series
    info: dict[str, object] = field(default_factory=dict)
    matrix: pd.DataFrame | RankOne | None = None


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
