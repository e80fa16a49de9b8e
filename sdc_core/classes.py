"""Equivalence classes: sample frequency f_k and weighted frequency F_k of every record.

Without missing key values the class of record i is the set of records with the same values on
the quasi-identifiers X; ``f_k(i)`` is its size and ``F_k(i)`` the sum of the weights over it
(``= f_k`` without weights).

Missing values (sdcMicro's ``freqCalc`` semantics, ``na="wildcard"``, the default): a missing
value matches any value. Record j counts towards record i when they agree on every key where both
are present. It counts 1 when j has exactly i's pattern (same values, same missing positions) or
j has no missing key, and ``alpha`` when j has a missing key and a different pattern. A record
whose keys are all missing gets ``f_k = n`` and ``F_k = Σ w``. With ``na="category"`` a missing
value is an ordinary value.

The wildcard case is computed on the table of exact classes (records with the same values *and*
missing positions), looping over pairs (P, Q) of missing-value patterns, not over records: for the
classes of pattern P, the classes of pattern Q are grouped by their values on the keys present in
both patterns, and their counts added with weight 1 or ``alpha``. Cost: O(#patterns² · #classes).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np
import pandas as pd

from sdc_core.checks import check_probability
from sdc_core.data.columns import require
from sdc_core.errors import SdcInputError
from sdc_core.keys import (
    KeyCodes,
    check_columns,
    combine_codes,
    densify,
    encode_keys,
)


@dataclass(frozen=True)
class ClassSizes:
    """Per-record class sizes and the exact-class labels they were computed from.

    ``class_id[i]`` labels record i's exact class (same values and same missing positions) with
    an integer below ``n_labels``; ``n_classes`` is the number of distinct exact classes. ``fk``
    and ``Fk`` are floats because ``alpha`` may weigh records fractionally.
    """

    fk: np.ndarray
    Fk: np.ndarray
    class_id: np.ndarray
    n_labels: int
    n_classes: int
    keys: KeyCodes
    alpha: float

    @property
    def has_missing(self) -> bool:
        return any(bool((c < 0).any()) for c in self.keys.codes)


@overload
def check_weights(df: pd.DataFrame, weight: str) -> np.ndarray: ...
@overload
def check_weights(df: pd.DataFrame, weight: None) -> None: ...
@overload
def check_weights(df: pd.DataFrame, weight: str | None) -> np.ndarray | None: ...
def check_weights(df: pd.DataFrame, weight: str | None) -> np.ndarray | None:
    """The weight column as float64 (None without a weight column), or an error when it is
    absent, non-numeric, missing or ≤ 0."""
    if weight is None:
        return None
    check_columns(df, [weight], "weight")
    s = df[weight]
    require(s, ("number",), "the weight")
    w = s.to_numpy(dtype=np.float64, na_value=np.nan)
    if np.isnan(w).any():
        raise SdcInputError(f"weight column '{weight}' has {int(np.isnan(w).sum())} missing values")
    if (w <= 0).any() or not np.isfinite(w).all():
        raise SdcInputError(f"weight column '{weight}' must be positive and finite")
    with np.errstate(over="ignore"):
        total = w.sum()
    if not np.isfinite(total):
        raise SdcInputError(f"weight column '{weight}' sums beyond the range of floating-point "
                            "numbers")
    return w


def check_alpha(alpha: float) -> float:
    return check_probability("alpha", alpha)


def class_sizes(df: pd.DataFrame, qi: Sequence[str], weight: str | None = None,
                na: str = "wildcard", alpha: float = 1.0) -> ClassSizes:
    """f_k and F_k of every record on the quasi-identifiers ``qi`` (see the module docstring)."""
    return sizes_from_keys(encode_keys(df, qi, na), check_weights(df, weight), alpha)


def sizes_from_keys(keys: KeyCodes, w: np.ndarray | None = None,
                    alpha: float = 1.0) -> ClassSizes:
    """:func:`class_sizes` from already encoded keys (sweeps re-encode only a changed key)."""
    alpha = check_alpha(alpha)
    if not any(bool((c < 0).any()) for c in keys.codes):
        key, bound = combine_codes(keys.codes, keys.cards)
        counts = np.bincount(key, minlength=bound)
        fk = counts[key].astype(np.float64)
        Fk = fk if w is None else np.bincount(key, weights=w, minlength=bound)[key]
        return ClassSizes(fk, Fk, key, bound, int(np.count_nonzero(counts)), keys, alpha)
    key, _ = combine_codes([c + 1 for c in keys.codes], [k + 1 for k in keys.cards])
    class_id, n_classes = densify(key)
    codes = class_table(class_id, n_classes, keys)
    counts = np.bincount(class_id, minlength=n_classes).astype(np.float64)
    wsum = counts if w is None else np.bincount(class_id, weights=w, minlength=n_classes)
    fk_c, Fk_c = _wildcard_sizes(codes, counts, wsum, alpha, keys.n)
    return ClassSizes(fk_c[class_id], Fk_c[class_id], class_id, n_classes, n_classes, keys, alpha)


def class_table(class_id: np.ndarray, n_classes: int, keys: KeyCodes) -> np.ndarray:
    """Key codes (-1 = missing) of each class, from labels ``0..n_classes-1`` that appear in
    order of first appearance (as :func:`densify` makes them): shape (n_classes, m)."""
    first = np.flatnonzero(np.diff(np.maximum.accumulate(class_id), prepend=-1) > 0)
    return np.column_stack([c[first] for c in keys.codes])


@dataclass(frozen=True)
class PatternPair:
    """Classes ``p_idx`` (pattern P) receive contributions from classes ``q_idx`` (pattern Q),
    matched on the key columns ``shared`` (present in both), with ``weight`` 1 or alpha."""

    p_idx: np.ndarray
    q_idx: np.ndarray
    shared: np.ndarray
    weight: float


def pattern_pairs(class_codes: np.ndarray, alpha: float) -> Iterator[PatternPair]:
    """Every pair (P, Q) of missing-value patterns among the classes, with P not all-missing."""
    present = class_codes >= 0
    m = present.shape[1]
    bits = present.astype(np.int64) @ (np.int64(1) << np.arange(m, dtype=np.int64))
    full = (1 << m) - 1
    patterns = np.unique(bits)
    members = {int(p): np.flatnonzero(bits == p) for p in patterns}
    for p in patterns:
        p = int(p)
        if p == 0:
            continue
        for q in patterns:
            q = int(q)
            weight = 1.0 if q in (p, full) else alpha
            if weight == 0.0:
                continue
            shared = np.flatnonzero(present[members[p][0]] & present[members[q][0]])
            yield PatternPair(members[p], members[q], shared, weight)


def shared_keys(class_codes: np.ndarray, pair: PatternPair) -> tuple[np.ndarray, np.ndarray, int]:
    """Joint keys of the P classes and the Q classes on the shared columns (equal key = match)."""
    rows = np.concatenate([pair.p_idx, pair.q_idx])
    if len(pair.shared) == 0:
        key = np.zeros(len(rows), dtype=np.int64)
        bound = 1
    else:
        sub = class_codes[rows][:, pair.shared]
        cards = sub.max(axis=0) + 1
        key, bound = combine_codes([sub[:, j] for j in range(sub.shape[1])], cards.tolist())
    return key[: len(pair.p_idx)], key[len(pair.p_idx):], bound


def _wildcard_sizes(class_codes: np.ndarray, counts: np.ndarray, wsum: np.ndarray,
                    alpha: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    fk = np.zeros(len(counts))
    Fk = np.zeros(len(counts))
    for pair in pattern_pairs(class_codes, alpha):
        key_p, key_q, bound = shared_keys(class_codes, pair)
        fk[pair.p_idx] += pair.weight * np.bincount(key_q, weights=counts[pair.q_idx],
                                                    minlength=bound)[key_p]
        Fk[pair.p_idx] += pair.weight * np.bincount(key_q, weights=wsum[pair.q_idx],
                                                    minlength=bound)[key_p]
    all_missing = ~(class_codes >= 0).any(axis=1)
    fk[all_missing] = n
    Fk[all_missing] = wsum.sum()
    return fk, Fk
