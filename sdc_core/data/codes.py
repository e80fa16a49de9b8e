"""Numbers read as category labels: a code written without a trailing ".0" (3 → "3",
3.0 → "3", 2.5 → "2.5"), so that a numeric column recoded to text keeps its codes' spelling
and the text can be compared with the numbers it came from."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np


def number_text(v: Any) -> str:
    """One number as text: 3 → "3", 3.0 → "3", 2.5 → "2.5"."""
    if isinstance(v, numbers.Integral):
        return str(int(v))
    f = float(v)
    return str(int(f)) if f.is_integer() else repr(f)


def numbers_as_text(values: np.ndarray) -> np.ndarray:
    """``number_text`` of a float array (no missing values), whole numbers in one vectorised
    pass."""
    out = np.empty(len(values), dtype=object)
    whole = (np.mod(values, 1) == 0) & (np.abs(values) < 2.0**63)
    out[whole] = values[whole].astype(np.int64).astype(str)
    out[~whole] = [repr(float(v)) for v in values[~whole]]
    return out
