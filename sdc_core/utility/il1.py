"""IL1 information loss between an original table x and a protected table x′ (rows aligned).

- numeric column c, with R = max x − min x (range of the original; a constant column uses
  R = 1) and d_i = |x′_i − x_i| / R:

  - ``missing="max"`` (the default): IL1_c = (1/m_c) Σ d_i over the m_c rows where x is
    present, a value present in x and missing in x′ (suppressed) counting d_i = 1, the maximum;
  - ``missing="ignore"`` (sdcMicro's reading, for parity): IL1_c = (1/m_c) Σ d_i
    over the m_c rows where both are present, so suppressed values cost nothing;

- categorical column c: IL1_c = share of the rows with an original value whose released value
  differs (a value that became missing counts as changed, whatever ``missing`` says);
- ``IL1_release``, the **headline loss**: the mean IL1_c over the released columns C,

      IL1_release = (1/|C|) Σ_{c∈C} IL1_c      (0 when C is empty)

  where C is the columns of the original table not named ``not_released`` (the columns tagged
  "not released"), an unchanged column counts IL1_c = 0 and a column of C absent from the
  protected table (dropped from the release) counts the maximum IL1_c = 1. C does not depend on
  the protection and IL1_c only on what was done to c, so adding a step on another column can
  never lower IL1_release;
- ``IL1_numeric`` / ``IL1_categorical``: mean of IL1_c over the *changed* columns of that kind
  (0 when none changed); ``IL1_overall`` (seed 003's figure): mean of the components that exist,
  i.e. of the kinds with a changed column (0 when nothing changed). A mean over the changed
  columns, it falls when a cheap step on another column is added; a dropped column is not
  compared, so it is not among the changed ones.

Every figure is over the released columns: a column not released costs nothing, whatever was
done to it.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
import pandas as pd

from sdc_core.data.columns import compare_keys, is_number
from sdc_core.errors import SdcInputError
from sdc_core.methods.banding import measured

#: Readings of a numeric value that protection turned into a missing one (module docstring).
IL1_MISSING = ("max", "ignore")


@dataclass(frozen=True)
class IL1Result:
    """The IL1 figures of one release (module docstring).

    The headline ``IL1_release``, then seed 003's ``IL1_numeric``, ``IL1_categorical`` and
    ``IL1_overall``. Made by :func:`il1`; ``summary`` gives the four figures.

    Parameters
    ----------
    IL1_release : float
        (1/|C|) Σ_{c∈C} IL1_c over the released columns C.
    IL1_numeric, IL1_categorical : float
        Mean IL1_c over the changed columns of that kind (0 when none changed).
    IL1_overall : float
        Mean of the components that exist.
    per_column : dict of str to float
        IL1_c of each compared column.
    changed : list of str
        The columns whose values changed.
    il1_missing : str
        The reading of a numeric value that became missing (``"max"`` or ``"ignore"``).
    released, dropped, numbers : list of str
        The released columns C, those the release dropped, those compared as numbers.

    Examples
    --------
    >>> from sdc_core import apply_recipe, example, load_example, parse_recipe
    >>> df, roles = load_example(), example("actg175").roles
    >>> recipe = parse_recipe({"seed": 42, "steps": [
    ...     {"method": "band", "column": "age", "width": 10},
    ...     {"method": "pram", "column": "race", "p": 0.05}]})
    >>> protected = apply_recipe(recipe, df).data
    >>> from sdc_core import il1
    >>> loss = il1(df, protected, numeric=roles.numeric, not_released=roles.ignore)
    >>> loss.changed, round(loss.per_column["age"], 4), round(loss.per_column["race"], 4)
    (['age', 'race'], 0.0439, 0.0584)
    """

    IL1_release: float
    IL1_numeric: float
    IL1_categorical: float
    IL1_overall: float
    #: IL1_c of the released columns compared (1 for a dropped one)
    per_column: dict[str, float] = field(default_factory=dict)
    changed: list[str] = field(default_factory=list)
    #: how numeric values that became missing were read: ``"max"`` or ``"ignore"``
    il1_missing: str = "max"
    #: C, the released columns: the mean of ``IL1_release`` is over them
    released: list[str] = field(default_factory=list)
    #: the columns of C absent from the protected table (IL1_c = 1)
    dropped: list[str] = field(default_factory=list)
    #: the compared columns read as numbers (the others as categories)
    numbers: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, float]:
        """The four headline figures by name."""
        return {"IL1_release": self.IL1_release, "IL1_numeric": self.IL1_numeric,
                "IL1_categorical": self.IL1_categorical, "IL1_overall": self.IL1_overall}

    def without(self, not_released: Sequence[str]) -> IL1Result:
        """The same comparison with the columns ``not_released`` left out of the release (out
        of C and of every figure)."""
        out = set(not_released)
        return combine({c: v for c, v in self.per_column.items() if c not in out},
                       self.numbers, self.changed, [c for c in self.released if c not in out],
                       [c for c in self.dropped if c not in out], self.il1_missing)


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

    def plus(self, other: NumericParts) -> NumericParts:
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
    by what they are (:func:`sdc_core.data.columns.compare_keys`): a True/False column recoded to
    the text "True"/"False", or codes 1, 2 recoded to "1", "2", has not changed."""
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


def check_aligned(original: pd.DataFrame, protected: pd.DataFrame,
                  dropped: bool = False, rows: bool = True) -> None:
    """The tables are compared row by row: the same number of rows, and the same columns in the
    same order; with ``dropped``, the protected table may lack some of the original's columns
    (dropped from the release), the others in their order; ``rows=False``: column by column
    only, as distributions (any number of records)."""
    if rows and original.shape[0] != protected.shape[0]:
        raise SdcInputError(f"the tables differ in length: {original.shape[0]} and "
                            f"{protected.shape[0]} rows (rows are compared by position)")
    kept = [c for c in original.columns if not dropped or c in protected.columns]
    if list(protected.columns) != kept:
        only_a = [] if dropped else [c for c in original.columns if c not in protected.columns]
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
    return [c for c in numeric if c in protected.columns and is_number(original[c])
            and is_number(protected[c])]


#: A column name (released_columns keeps the type of the names it is given).
H = TypeVar("H", bound=Hashable)


def released_columns(columns: Sequence[H],
                     not_released: Sequence[Hashable] = ()) -> list[H]:
    """C: the original table's ``columns`` not named in ``not_released`` (each of which must be
    one of them)."""
    known, out = set(columns), set(not_released)
    unknown = [c for c in not_released if c not in known]
    if unknown:
        raise SdcInputError(f"unknown not-released column(s): {', '.join(map(str, unknown))}")
    return [c for c in columns if c not in out]


def il1(original: pd.DataFrame, protected: pd.DataFrame, numeric: Sequence[str] = (),
        columns: Sequence[str] | None = None, missing: str = "max",
        not_released: Sequence[str] = ()) -> IL1Result:
    """IL1 information loss between ``original`` and ``protected`` (module docstring).

    For a numeric column c with range R = max x − min x, IL1_c = (1/m_c) Σ |x′ − x| / R (a value
    blanked by protection counts 1 unless ``missing="ignore"``); for a categorical one, the share
    of changed values; the headline IL1_release = (1/|C|) Σ_{c∈C} IL1_c over the released columns
    C (the original's, less ``not_released``).

    Those in ``numeric`` are compared as numbers, the others as categories (a numeric column
    whose release is no longer numbers, codes recoded to "other", is compared as categories:
    :func:`numbers_in_both`); a column of C absent from ``protected`` is dropped (IL1_c = 1).
    ``columns`` limits the comparison to the columns that may have changed (the others are then
    taken as unchanged without looking); ``missing`` is the reading of numeric values that
    became missing, ``"max"`` (loss 1) or ``"ignore"`` (sdcMicro's), see the module
    docstring. Band labels ("15–19") are compared as their band midpoints
    (:func:`sdc_core.methods.banding.measured`), the numbers a midpoint release holds.

    Parameters
    ----------
    original : pandas.DataFrame
        The original table x.
    protected : pandas.DataFrame
        The release x′, rows aligned with ``original``.
    numeric : sequence of str, optional
        The columns compared as numbers.
    columns : sequence of str, optional
        The columns that may have changed (default: every column).
    missing : {"max", "ignore"}, default "max"
        The reading of a numeric value that became missing.
    not_released : sequence of str, optional
        Columns of the original that are not released (not in C).

    Returns
    -------
    IL1Result
        ``IL1_release``, ``IL1_numeric``, ``IL1_categorical``, ``IL1_overall`` and IL1_c per
        column.

    Raises
    ------
    SdcInputError
        When the tables differ in length, ``missing`` is unknown, or a ``numeric`` column is not
        in the original.

    Examples
    --------
    >>> from sdc_core import apply_recipe, example, load_example, parse_recipe
    >>> df, roles = load_example(), example("actg175").roles
    >>> recipe = parse_recipe({"seed": 42, "steps": [
    ...     {"method": "band", "column": "age", "width": 10},
    ...     {"method": "pram", "column": "race", "p": 0.05}]})
    >>> protected = apply_recipe(recipe, df).data
    >>> from sdc_core import il1
    >>> loss = il1(df, protected, numeric=roles.numeric, not_released=roles.ignore)
    >>> {name: round(value, 4) for name, value in loss.summary().items()}
    {'IL1_release': 0.0039, 'IL1_numeric': 0.0439, 'IL1_categorical': 0.0584, 'IL1_overall': 0.0511}
    """
    check_aligned(original, protected, dropped=True)
    check_il1_missing(missing)
    protected = measured(original, protected)  # band labels as their midpoints
    unknown = sorted(set(numeric) - set(original.columns))
    if unknown:
        raise SdcInputError(f"unknown numeric column(s): {', '.join(map(str, unknown))}")
    released = released_columns(list(original.columns), not_released)
    dropped = [c for c in released if c not in protected.columns]
    num = numbers_in_both(original, protected, numeric)
    per_column: dict[str, float] = {}
    changed: list[str] = []
    looked = set(released if columns is None else columns) - set(dropped)
    for c in (c for c in released if c in looked):
        value, is_changed = numeric_il1(original[c], protected[c], missing) if c in num \
            else categorical_il1(original[c], protected[c])
        per_column[c] = value
        if is_changed:
            changed.append(c)
    return combine(per_column, num, changed, released, dropped, missing)


def combine(per_column: dict[str, float], numbers: Collection[str], changed: Sequence[str],
            released: Sequence[str], dropped: Sequence[str] = (),
            missing: str = "max") -> IL1Result:
    """The IL1 figures from the per-column IL1_c (computed with the reading ``missing`` of
    numeric values that became missing), ``numbers`` the columns compared as numbers,
    ``changed`` those that changed, ``released`` C and ``dropped`` the columns of C absent from
    the release: IL1_release = (1/|C|) Σ_{c∈C} IL1_c (an exactly rounded sum, so the figure does
    not depend on the order of the columns), the means over the changed columns for seed 003's
    figures (module docstring). Columns outside C are left out."""
    kept = set(released)
    gone = [c for c in dropped if c in kept]
    values = {c: v for c, v in per_column.items() if c in kept and c not in gone} \
        | dict.fromkeys(gone, 1.0)
    moved = [c for c in changed if c in values and c not in gone]
    num = [values[c] for c in moved if c in numbers]
    cat = [values[c] for c in moved if c not in numbers]
    parts = [float(np.mean(v)) for v in (num, cat) if v]
    return IL1Result(math.fsum(values.values()) / len(released) if released else 0.0,
                     float(np.mean(num)) if num else 0.0, float(np.mean(cat)) if cat else 0.0,
                     float(np.mean(parts)) if parts else 0.0, values, moved, missing,
                     list(released), gone, [c for c in values if c in numbers])
