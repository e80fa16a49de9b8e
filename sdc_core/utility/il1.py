"""IL1 information loss between an original table x and a protected table x′ (rows aligned).

- numeric column c, with R = max x − min x (range of the original; a constant column uses
  R = 1) and d_i = |x′_i − x_i| / R:

  - ``missing="max"`` (the default): IL1_c = (1/m_c) Σ d_i over the m_c rows where x is
    present, a value present in x and missing in x′ (suppressed) counting d_i = 1, the maximum;
  - ``missing="ignore"`` (sdcMicro's reading, for parity): IL1_c = (1/m_c) Σ d_i
    over the m_c rows where both are present, so suppressed values cost nothing;

- categorical column c: IL1_c = share of the rows with an original value whose released value
  differs (a value that became missing counts as changed, whatever ``missing`` says);
- ``IL1_numeric`` / ``IL1_categorical``: mean of IL1_c over the *changed* columns of that kind
  (0 when none changed); ``IL1_overall``: mean of the components that exist, i.e. of the kinds
  with a changed column (0 when nothing changed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sdc_core.columns import compare_keys, is_number
from sdc_core.errors import SdcInputError

#: Readings of a numeric value that protection turned into a missing one (module docstring).
IL1_MISSING = ("max", "ignore")


@dataclass(frozen=True)
class IL1Result:
    IL1_numeric: float
    IL1_categorical: float
    IL1_overall: float
    per_column: dict[str, float] = field(default_factory=dict)
    changed: list[str] = field(default_factory=list)
    #: how numeric values that became missing were read: ``"max"`` or ``"ignore"``
    il1_missing: str = "max"

    def summary(self) -> dict[str, float]:
        return {"IL1_numeric": self.IL1_numeric, "IL1_categorical": self.IL1_categorical,
                "IL1_overall": self.IL1_overall}


def check_il1_missing(missing: str) -> str:
    """``missing`` if it is one of :data:`IL1_MISSING`, else an error naming the choices."""
    if missing not in IL1_MISSING:
        raise SdcInputError(f"il1_missing must be one of {', '.join(IL1_MISSING)}, "
                            f"not {missing!r}")
    return missing


def numeric_il1(x: pd.Series, y: pd.Series, missing: str = "max") -> tuple[float, bool]:
    """(IL1 of one numeric column, whether any value changed).

    IL1_c = (Σ_both |x′ − x| + L·R) / (m_c · R): the L values present in x and missing in x′
    count the maximum loss 1 and m_c counts the rows where x is present (``missing="max"``), or
    L = 0 and m_c counts the rows where both are present (``missing="ignore"``).
    """
    parts = numeric_il1_parts(x, y, missing)
    return parts.finish(), parts.changed


@dataclass(frozen=True)
class NumericParts:
    """The sums behind one numeric column's IL1, over some rows: Σ_both |x′ − x|, the number of
    rows where both are present, L (present in x, missing in x′; 0 with ``missing="ignore"``),
    whether a value changed, and the least and largest x. Parts of a column add up
    (:meth:`plus`), so an engine computes them batch by batch."""

    total: float
    both: int
    lost: int
    changed: bool
    low: float
    high: float

    def plus(self, other: "NumericParts") -> "NumericParts":
        return NumericParts(self.total + other.total, self.both + other.both,
                            self.lost + other.lost, self.changed or other.changed,
                            float(np.fmin(self.low, other.low)),
                            float(np.fmax(self.high, other.high)))

    def finish(self) -> float:
        m = self.both + self.lost
        if m == 0:
            return 0.0
        span = self.high - self.low
        scale = span if span > 0 else 1.0
        return float((self.total + self.lost * scale) / m / scale)


def numeric_il1_parts(x: pd.Series, y: pd.Series, missing: str = "max") -> NumericParts:
    """The :class:`NumericParts` of the rows of ``x`` (original) and ``y`` (protected)."""
    check_il1_missing(missing)
    if not is_number(y):
        raise SdcInputError(f"column '{x.name}' is no longer numeric after protection; "
                            "compare it as categorical")
    a = x.to_numpy(dtype=np.float64, na_value=np.nan)
    b = y.to_numpy(dtype=np.float64, na_value=np.nan)
    present = ~np.isnan(a)
    both = present & ~np.isnan(b)
    changed = bool((np.isnan(b) != ~present).any() or (a[both] != b[both]).any())
    lost = int((present & ~both).sum()) if missing == "max" else 0
    low, high = (float(a[present].min()), float(a[present].max())) if present.any() \
        else (np.nan, np.nan)
    return NumericParts(float(np.abs(b[both] - a[both]).sum()), int(both.sum()), lost, changed,
                        low, high)


def categorical_il1(x: pd.Series, y: pd.Series) -> tuple[float, bool]:
    """(share of original values that changed, whether any value changed). Values are compared
    by what they are (:func:`sdc_core.columns.compare_keys`): a True/False column recoded to the
    text "True"/"False", or codes 1, 2 recoded to "1", "2", has not changed."""
    differs, present, changed = categorical_il1_parts(x, y)
    return (differs / present if present else 0.0), changed


def categorical_il1_parts(x: pd.Series, y: pd.Series,
                          mixed: bool | None = None) -> tuple[int, int, bool]:
    """(number of original values that changed, number present, whether any value changed)
    on these rows: the sums behind :func:`categorical_il1`, which add up over parts of a
    column. ``mixed``: whether the two sides are of different families (default: read from the
    two columns; an engine's batch passes the whole columns' answer)."""
    present = x.notna().to_numpy()
    released = y.notna().to_numpy()
    a, b = compare_keys(x, y, mixed)
    differs = np.zeros(len(a), dtype=bool)
    both = present & released
    differs[both] = a[both] != b[both]
    differs |= present & ~released
    changed = bool(differs.any() or (released & ~present).any())
    return int(differs[present].sum()), int(present.sum()), changed


def check_aligned(original: pd.DataFrame, protected: pd.DataFrame) -> None:
    if original.shape[0] != protected.shape[0]:
        raise SdcInputError(f"the tables differ in length: {original.shape[0]} and "
                            f"{protected.shape[0]} rows (rows are compared by position)")
    if list(original.columns) != list(protected.columns):
        only_a = [c for c in original.columns if c not in protected.columns]
        only_b = [c for c in protected.columns if c not in original.columns]
        detail = "; ".join(filter(None, [
            f"only in the original: {', '.join(map(str, only_a))}" if only_a else "",
            f"only in the protected: {', '.join(map(str, only_b))}" if only_b else ""])) \
            or "the same columns in another order"
        raise SdcInputError(f"the tables have different columns ({detail})")


def numbers_in_both(original: pd.DataFrame, protected: pd.DataFrame,
                    numeric: Sequence[str]) -> list[str]:
    """The columns of ``numeric`` that hold numbers in both tables: the ones IL1 and the
    eigenvalue similarity compare as numbers (the page, the report, ``compare`` and a sweep all
    ask this function)."""
    return [c for c in numeric if is_number(original[c]) and is_number(protected[c])]


def il1(original: pd.DataFrame, protected: pd.DataFrame, numeric: Sequence[str] = (),
        columns: Sequence[str] | None = None, missing: str = "max") -> IL1Result:
    """IL1 over all columns: those in ``numeric`` as numbers, the others as categories (a
    numeric column whose release is no longer numbers, codes recoded to "other", is compared as
    categories: :func:`numbers_in_both`). ``columns`` limits the comparison to the columns that
    may have changed (the others are then taken as unchanged without looking); ``missing`` is
    the reading of numeric values that became missing, ``"max"`` (loss 1) or ``"ignore"``
    (sdcMicro's), see the module docstring."""
    check_aligned(original, protected)
    check_il1_missing(missing)
    unknown = sorted(set(numeric) - set(original.columns))
    if unknown:
        raise SdcInputError(f"unknown numeric column(s): {', '.join(map(str, unknown))}")
    num = set(numbers_in_both(original, protected, numeric))
    per_column: dict[str, float] = {}
    changed_num: list[float] = []
    changed_cat: list[float] = []
    changed: list[str] = []
    for c in (original.columns if columns is None else columns):
        value, is_changed = numeric_il1(original[c], protected[c], missing) if c in num \
            else categorical_il1(original[c], protected[c])
        per_column[c] = value
        if is_changed:
            changed.append(c)
            (changed_num if c in num else changed_cat).append(value)
    return combine(per_column, changed_num, changed_cat, changed, missing)


def combine(per_column: dict[str, float], changed_num: list[float], changed_cat: list[float],
            changed: list[str], missing: str = "max") -> IL1Result:
    """The IL1 summary from the per-column figures of the changed columns (computed with the
    reading ``missing`` of numeric values that became missing)."""
    parts = [float(np.mean(v)) for v in (changed_num, changed_cat) if v]
    return IL1Result(float(np.mean(changed_num)) if changed_num else 0.0,
                     float(np.mean(changed_cat)) if changed_cat else 0.0,
                     float(np.mean(parts)) if parts else 0.0, per_column, changed, missing)
