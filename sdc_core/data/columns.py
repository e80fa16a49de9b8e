"""The column model: what each dtype a reader can produce is for roles, methods and measures.

Every method, measure and page asks this module what a column is; none re-derives it from the
dtype. The table (also in ``docs/columns.md``):

============  ======================================  =========================================
storage       dtypes                                  methods
============  ======================================  =========================================
boolean       ``bool``, ``boolean`` (with NA), an     categories only (PRAM, relabeling,
              object column of True/False             recoding, randomized response,
                                                      suppression); not numbers
integer       ``int*``, ``uint*``, ``Int*``/``UInt*`` numbers *and* categories (codes)
float         ``float*``, ``Float*`` (NaN = missing)  numbers and categories
text          ``str``, ``string``, object of text     categories
category      ``category`` (ordered or not)           categories (its values' kind decides how
                                                      it compares)
datetime      ``datetime64`` (with or without a       dates: banding, rank swapping, top/bottom
              time zone); calendar dates (Parquet     coding, and categories
              ``date32``) are read as datetime
mixed         an object column of several kinds       categories
              (numbers and text, say)
============  ======================================  =========================================

Written back: a method keeps the column's storage where its values allow (True/False stays
True/False, a category stays a category, whole numbers stay whole); a value set to missing
turns ``bool`` into ``boolean`` and ``int64`` into ``Int64`` (:func:`nullable`). A recoding
whose labels are not of the column's kind ("other" in a True/False column) writes text.

Compared (IL1, the linkage attack, "did this step change anything"): a value is compared by
what it *is*, not by its dtype (:func:`compare_keys`). Two columns of one family (numbers,
True/False, text, dates) compare their values directly; otherwise each value is read as its
canonical text (:func:`canonical`): True/False → ``"True"``/``"False"`` (also from the text
``true``/``TRUE``), numbers → ``"3"``, ``"2.5"`` (also from text that reads as one, ``"03"``),
dates → ``"2024-03-01"`` or ``"2024-03-01 12:30:00"``. So a release compares the same in memory
and read back from its CSV or Parquet file.
"""

from __future__ import annotations

import datetime as dt
import math
import numbers
import re
from collections.abc import Iterable
from typing import Any, cast

import numpy as np
import pandas as pd

from sdc_core.data.codes import number_text
from sdc_core.errors import SdcInputError

#: The storages of the module table, in its order.
STORAGES = ("boolean", "integer", "float", "text", "category", "datetime", "mixed")
#: What a method may take: ``number`` (integer, float), ``date`` (datetime) and ``category``
#: (every storage).
TAKES = ("number", "date", "category")

_WORDS = {"boolean": "True/False values", "integer": "whole numbers", "float": "numbers",
          "text": "text", "category": "categories", "datetime": "dates",
          "mixed": "values of several kinds"}
_TAKES_WORDS = {"number": "numbers", "date": "dates", "category": "categories"}


def _object_family(values: Iterable[Any]) -> str:
    """The family of the distinct non-missing values of an object column."""
    seen = set()
    for v in values:
        if isinstance(v, (bool, np.bool_)):
            seen.add("boolean")
        elif isinstance(v, numbers.Number):
            seen.add("number")
        elif isinstance(v, str):
            seen.add("text")
        elif isinstance(v, (dt.date, np.datetime64)):
            seen.add("datetime")
        else:
            seen.add("mixed")
        if len(seen) > 1:
            return "mixed"
    return seen.pop() if seen else "text"


def storage(s: pd.Series) -> str:
    """The storage of ``s`` (module table)."""
    dtype = s.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return "category"
    if pd.api.types.is_bool_dtype(dtype):
        return "boolean"
    if pd.api.types.is_integer_dtype(dtype):
        return "integer"
    if pd.api.types.is_float_dtype(dtype):
        return "float"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "datetime"
    if isinstance(dtype, pd.StringDtype):
        return "text"
    family = _object_family(pd.unique(s.dropna()))
    return {"boolean": "boolean", "text": "text", "number": "mixed",
            "datetime": "mixed"}.get(family, "mixed")


def family(s: pd.Series) -> str:
    """How the values of ``s`` compare: ``number``, ``boolean``, ``text``, ``datetime`` or
    ``mixed`` (a category by its categories, an object column by its values)."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        return family(pd.Series(s.cat.categories))
    kind = storage(s)
    if kind in ("integer", "float"):
        return "number"
    if kind == "mixed":
        return _object_family(pd.unique(s.dropna()))
    return kind


def is_number(s: pd.Series) -> bool:
    """Whether numeric methods and measures take ``s``: integers or floats, not True/False."""
    return storage(s) in ("integer", "float")


def is_date(s: pd.Series) -> bool:
    return storage(s) == "datetime"


def describe(s: pd.Series) -> str:
    """What ``s`` holds, for a message: "True/False values (bool)"."""
    return f"{_WORDS[storage(s)]} ({s.dtype})"


def takes(s: pd.Series) -> tuple[str, ...]:
    """What ``s`` can be given to, among :data:`TAKES`."""
    return storage_takes(storage(s))


def storage_takes(kind: str) -> tuple[str, ...]:
    """What a column of storage ``kind`` can be given to, among :data:`TAKES`."""
    if kind in ("integer", "float"):
        return ("number", "category")
    if kind == "datetime":
        return ("date", "category")
    return ("category",)


def require(s: pd.Series, accepted: Iterable[str], method: str) -> None:
    """An :class:`SdcInputError` in one line naming the column and its kind when ``method``
    takes none of what ``s`` is (``accepted`` among :data:`TAKES`)."""
    require_storage(storage(s), s.name, accepted, method, str(s.dtype))


def require_storage(kind: str, name: Any, accepted: Iterable[str], method: str,
                    dtype: str) -> None:
    """:func:`require` for a column known by its storage ``kind`` and type name ``dtype``
    (an engine's column)."""
    accepted = tuple(accepted)
    if not set(accepted) & set(storage_takes(kind)):
        wanted = " or ".join(_TAKES_WORDS[a] for a in accepted)
        raise SdcInputError(f"{method} takes {wanted}; column '{name}' holds "
                            f"{_WORDS[kind]} ({dtype})")


def nullable(s: pd.Series) -> pd.Series:
    """``s`` in a dtype that can hold a missing value without changing kind: ``bool`` →
    ``boolean``, ``int*`` → ``Int*``, ``uint*`` → ``UInt*``; others unchanged."""
    dtype = s.dtype
    if isinstance(dtype, np.dtype):
        if dtype.kind == "b":
            return s.astype("boolean")
        if dtype.kind in "iu":
            return s.astype(dtype.name.replace("uint", "UInt").replace("int", "Int"))
    return s


def blank(s: pd.Series, rows: np.ndarray) -> pd.Series:
    """A copy of ``s`` with the values at the boolean mask ``rows`` set to missing."""
    out = nullable(s).copy()
    out[rows] = None
    return out


# --- comparison --------------------------------------------------------------------------------

_TRUE, _FALSE = {"True", "TRUE", "true"}, {"False", "FALSE", "false"}
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([+-]\d{2}:\d{2}|Z)?)?$")


def _date_text(v: Any) -> str:
    t = pd.Timestamp(v)
    if t.tzinfo is None and t == t.normalize():
        return t.strftime("%Y-%m-%d")
    return t.isoformat(sep=" ")


def canonical(v: Any) -> Any:
    """The canonical text of one non-missing value (module docstring); a value of another kind
    (a tuple, say) is returned as it is."""
    if isinstance(v, (bool, np.bool_)):
        return "True" if v else "False"
    if isinstance(v, numbers.Number):
        f = complex(cast(complex, v))  # every Number converts: NumPy's, Fraction, Decimal
        if f.imag == 0 and math.isfinite(f.real):
            return number_text(v if isinstance(v, numbers.Integral) else float(f.real))
        return str(v)
    if isinstance(v, (dt.date, np.datetime64)):
        return _date_text(v)
    if isinstance(v, str):
        if v in _TRUE:
            return "True"
        if v in _FALSE:
            return "False"
        if v and v[0] in "+-.0123456789":
            try:
                f = float(v)
            except ValueError:
                pass
            else:
                if math.isfinite(f):
                    return number_text(f)
        if _ISO.match(v):
            try:
                return _date_text(v)
            except ValueError:
                pass
        return v
    return v


def canonical_values(s: pd.Series) -> np.ndarray:
    """:func:`canonical` of every value of ``s`` (None where missing), computed once per
    distinct value."""
    codes, uniques = pd.factorize(s, use_na_sentinel=True)
    keys = np.empty(len(uniques) + 1, dtype=object)
    keys[:-1] = [canonical(v) for v in np.asarray(uniques, dtype=object)]
    keys[-1] = None
    return keys[codes]


def native_values(s: pd.Series) -> np.ndarray:
    """The values of ``s`` as an object array, None where missing."""
    values = np.asarray(s, dtype=object).copy()
    values[s.isna().to_numpy()] = None
    return values


def compare_keys(x: pd.Series, y: pd.Series, mixed: bool | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Two object arrays (None = missing) in which equal values of ``x`` and ``y`` are equal:
    native values when both columns are of one family, canonical text otherwise (``mixed``
    forces the choice; an engine's batch passes the whole columns' answer)."""
    if mixed is None:
        fx, fy = family(x), family(y)
        mixed = fx != fy or fx == "mixed"
    if mixed:
        return canonical_values(x), canonical_values(y)
    return native_values(x), native_values(y)


_NESTED = (list, tuple, dict, set, np.ndarray)


def check_flat(df: pd.DataFrame) -> None:
    """An :class:`SdcInputError` naming the columns that hold nested values (lists, records:
    Parquet's list, struct and map types), which no method or measure can compare."""
    nested = []
    for c in df.columns:
        s = df[c]
        if (s.dtype == object
                and pd.api.types.infer_dtype(s, skipna=True) in ("mixed", "unknown-array")
                and any(isinstance(v, _NESTED) for v in s.dropna())):
            nested.append(str(c))
    if nested:
        raise nested_error(nested)


def nested_error(columns: list[str]) -> SdcInputError:
    """The refusal of columns that hold nested values (from a table or a file's schema)."""
    return SdcInputError(f"column(s) {', '.join(columns[:5])}"
                         + (f" and {len(columns) - 5} more" if len(columns) > 5 else "")
                         + " hold nested values (lists or records); flatten them into "
                         "columns of their own first")


def read_dates(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with every column of calendar dates (Python ``date`` objects, as a reader gives a
    Parquet ``date32`` column) as datetime64, the one date kind of the model."""
    out = df
    for c in df.columns:
        s = df[c]
        if s.dtype == object and s.notna().any():
            values = pd.unique(s.dropna())
            if all(isinstance(v, dt.date) and not isinstance(v, dt.datetime) for v in values):
                out = out.assign(**{c: pd.to_datetime(s)})
    return out


def for_parquet(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` as Parquet can store it: a column of mixed values, or a category whose categories
    are, is written as canonical text (a missing value stays missing)."""
    out = df
    for c in df.columns:
        s = df[c]
        if family(s) == "mixed":
            out = out.assign(**{c: pd.Series(canonical_values(s), index=s.index,
                                             dtype="str")})
    return out


def read_like(released: pd.DataFrame, original: pd.DataFrame) -> pd.DataFrame:
    """A release read back from a file that keeps no kinds (CSV), with the dates of the
    original read as dates again where every value is one (the linkage attack measures dates
    by distance); every other value compares by what it is as it stands."""
    out = released
    for c in original.columns:
        if c in released.columns and is_date(original[c]) and storage(released[c]) == "text":
            tz = getattr(original[c].dt, "tz", None)
            try:
                dates = pd.to_datetime(released[c], format="ISO8601", utc=tz is not None)
            except (ValueError, TypeError):
                continue
            out = out.assign(**{c: dates.dt.tz_convert(tz) if tz is not None else dates})
    return out


def restore(original: pd.Series, released: pd.Series) -> pd.Series:
    """``released`` (text labels of a category method) back in the kind of ``original`` when
    every released value is of that kind: True/False stay True/False, numbers numbers (codes
    recoded to text and then back to codes only), a category stays a category (released labels
    not among its categories are added, and then it is no longer ordered), dates of no time
    zone (read back from band labels, in UTC) in the column's time zone; otherwise
    ``released`` as it is. A CSV reader would read the written file the same way."""
    dtype = original.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        present = pd.unique(released.dropna())
        old = list(dtype.categories)
        keys = {canonical(c): c for c in old}
        mapped = [keys.get(canonical(v), v) for v in present]
        new = [v for v in mapped if v not in set(old)]
        if new and family(pd.Series(new, dtype=object)) != family(original):
            # labels of another kind ("other" among codes): the categories become text
            old, mapped = [canonical(c) for c in old], [canonical(v) for v in mapped]
            new = [v for v in mapped if v not in set(old)]
        cats = pd.CategoricalDtype(old + new, ordered=dtype.ordered and not new)
        lookup = dict(zip(present, mapped))
        values = pd.Series([lookup.get(v) for v in released.astype(object)],
                           index=released.index, name=released.name, dtype=object)
        return values.astype(cats)
    if is_number(original) and storage(released) in ("text", "mixed"):
        texts = canonical_values(released)
        try:
            numbers = np.array([np.nan if t is None else float(t) for t in texts])
        except ValueError:
            return released
        out = pd.Series(numbers, index=released.index, name=released.name)
        whole = bool(np.all(np.mod(numbers[~np.isnan(numbers)], 1) == 0))
        if storage(original) == "integer" and whole:
            return out.astype(original.dtype if not np.isnan(numbers).any()
                              else nullable(original).dtype)
        return out.astype(original.dtype) if storage(original) == "float" else out
    if storage(original) == "boolean":
        texts = canonical_values(released)
        present = texts[texts != np.array(None)]
        if all(t in ("True", "False") for t in set(present)):
            out = pd.array([None if t is None else t == "True" for t in texts], dtype="boolean")
            series = pd.Series(out, index=released.index, name=released.name)
            return series if series.isna().any() or isinstance(dtype, pd.BooleanDtype) \
                else series.astype(bool)
    tz = getattr(dtype, "tz", None)
    if tz is not None and is_date(released) and getattr(released.dt, "tz", None) is None:
        # dates read back from band labels (days counted in UTC) in the column's time zone
        return released.dt.tz_localize("UTC").dt.tz_convert(tz)
    return released
