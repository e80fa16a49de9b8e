"""Integer codes for key variables and their combination into one class key per record.

With :mod:`sdc_core.classes` this is the equivalence-class layer: it imports nothing from
``sdc_core.risk``, ``sdc_core.methods`` or ``sdc_core.utility``, which all build on it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sdc_core.errors import SdcInputError

NA_MODES = ("wildcard", "category")


@dataclass(frozen=True)
class KeyCodes:
    """Quasi-identifiers as integer codes.

    ``codes[j]`` holds, per record, the code of its value of ``names[j]`` in ``0..cards[j]-1``,
    or ``-1`` for a missing value (with ``na="category"`` a missing value is a code of its own
    and ``-1`` never occurs).
    """

    names: tuple[str, ...]
    codes: tuple[np.ndarray, ...]
    cards: tuple[int, ...]
    levels: tuple[pd.Index, ...]

    @property
    def n(self) -> int:
        return len(self.codes[0]) if self.codes else 0

    def with_column(self, name: str, values: pd.Series, na: str = "wildcard") -> KeyCodes:
        """The same keys with ``name`` re-encoded from new ``values`` (the others reused)."""
        j = self.names.index(name)
        code, uniq = pd.factorize(values, use_na_sentinel=(na == "wildcard"))
        codes, cards, levels = list(self.codes), list(self.cards), list(self.levels)
        codes[j], cards[j], levels[j] = code.astype(np.int64, copy=False), max(len(uniq), 1), \
            pd.Index(uniq)
        return KeyCodes(self.names, tuple(codes), tuple(cards), tuple(levels))


def check_columns(df: pd.DataFrame, columns: Sequence[str], role: str) -> list[str]:
    """The columns as a list, or an error naming those absent from ``df`` or repeated."""
    cols = list(columns)
    unknown = [c for c in cols if c not in df.columns]
    if unknown:
        raise SdcInputError(f"unknown {role} column(s): {', '.join(map(str, unknown))}")
    if len(set(cols)) != len(cols):
        raise SdcInputError(f"{role} columns are repeated: {', '.join(map(str, cols))}")
    return cols


def encode_keys(df: pd.DataFrame, qi: Sequence[str], na: str = "wildcard") -> KeyCodes:
    """Factorize every quasi-identifier (hash-based, O(n) per column)."""
    if na not in NA_MODES:
        raise SdcInputError(f"na must be one of {', '.join(NA_MODES)}, not {na!r}")
    cols = check_columns(df, qi, "quasi-identifier")
    if not cols:
        raise SdcInputError("at least one quasi-identifier is needed")
    codes, cards, levels = [], [], []
    for c in cols:
        code, uniq = pd.factorize(df[c], use_na_sentinel=(na == "wildcard"))
        codes.append(code.astype(np.int64, copy=False))
        cards.append(max(len(uniq), 1))
        levels.append(pd.Index(uniq))
    return KeyCodes(tuple(cols), tuple(codes), tuple(cards), tuple(levels))


def densify(key: np.ndarray) -> tuple[np.ndarray, int]:
    """Relabel arbitrary non-negative integer keys as ``0..g-1`` (order of first appearance)."""
    dense, uniq = pd.factorize(key)
    return dense.astype(np.int64, copy=False), len(uniq)


def combine_codes(codes: Sequence[np.ndarray], cards: Sequence[int]) -> tuple[np.ndarray, int]:
    """One non-negative integer key per row for the tuple of codes, and a bound on it.

    Mixed radix ``key = (…(c₀·K₁ + c₁)·K₂ + c₂…)``; whenever the radix product would exceed
    ``max(2n, 2¹⁶)`` (so that ``np.bincount(key)`` stays small) the partial key is first made
    dense with :func:`densify`. Equal tuples get equal keys, different tuples different keys;
    every key is below the returned bound.
    """
    n = len(codes[0]) if len(codes) else 0
    limit = max(2 * n, 1 << 16)
    key = np.zeros(n, dtype=np.int64)
    bound = 1
    for code, card in zip(codes, cards):
        if bound * card > limit and bound > 1:
            key, bound = densify(key)
        key = key * card + code if bound > 1 else code.astype(np.int64, copy=True)
        bound *= card
    if bound > limit:
        key, bound = densify(key)
    return key, max(bound, 1)
