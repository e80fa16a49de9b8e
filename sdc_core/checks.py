"""Parameter checks shared by the whole library: each returns the value or raises
:class:`~sdc_core.errors.SdcInputError` with a message naming the parameter."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from sdc_core.data.columns import require
from sdc_core.errors import SdcInputError


def check_probability(name: str, value: float, low_open: bool = False) -> float:
    """A number in [0, 1] (in (0, 1] with ``low_open``)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise SdcInputError(f"{name} must be a number in [0, 1], not {value!r}") from None
    if not 0.0 <= v <= 1.0 or (low_open and v == 0.0):
        interval = "(0, 1]" if low_open else "[0, 1]"
        raise SdcInputError(f"{name} must lie in {interval}, not {v:g}")
    return v


def check_positive(name: str, value: float) -> float:
    """A finite number above 0."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise SdcInputError(f"{name} must be a positive number, not {value!r}") from None
    if not np.isfinite(v) or v <= 0:
        raise SdcInputError(f"{name} must be a positive number, not {value!r}")
    return v


def check_bounded(name: str, value: object, upper: float, lower: float = 0.0,
                  upper_text: str | None = None) -> float:
    """A number in (0, ``upper``], at least ``lower`` (a bool, text, NaN or ±∞ refused),
    named in the refusal with ``upper`` as ``upper_text`` says (default ``{upper:g}``).

    Examples
    --------
    >>> check_bounded("alpha", 0.05, 0.5)
    0.05
    """
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating) \
            or not np.isfinite(float(value)) or not 0 < float(value) <= upper \
            or float(value) < lower:
        least = f"at least {lower:g}" if lower else "above 0"
        raise SdcInputError(f"{name} must be a number {least} and at most "
                            f"{upper_text or f'{upper:g}'}, not {shown(value)}")
    return float(value)


def check_whole(name: str, value: int) -> int:
    """A whole number ≥ 1 (``2.0`` is accepted as 2, ``True`` is not)."""
    if isinstance(value, bool) or not float(value).is_integer() or value < 1:
        raise SdcInputError(f"{name} must be a whole number ≥ 1, not {value}")
    return int(value)


def check_k(k: int) -> int:
    """The k-anonymity threshold: a whole number ≥ 1."""
    return check_whole("k", k)


def numeric_values(s: pd.Series, what: str) -> np.ndarray:
    """The column as float64 (NaN = missing), or an error when it is not numeric (booleans
    are not numbers here) or holds infinite values; ``what`` names the method asking."""
    require(s, ("number",), what)
    x = s.to_numpy(dtype=np.float64, na_value=np.nan)
    if np.isinf(x).any():
        raise infinite_values(s.name)
    return x


def infinite_values(name: object) -> SdcInputError:
    """The error of a column that holds infinite values, which no numeric method takes (the
    engines find them in their first pass over a column, sdc_core/engines/kernels.py)."""
    return SdcInputError(f"column '{name}' holds infinite values")


#: The largest JSON file a visitor may hand the dashboard (an analysis spec, a recipe, a
#: workspace): they hold settings, a few kilobytes; JSON takes about twenty times its size in
#: memory once read, outside the data sets' memory budget, so a larger file is refused before
#: it is decoded.
MAX_JSON_BYTES = 2_000_000


def check_json_size(size: int, what: str) -> None:
    """Refuse a JSON file of ``size`` bytes past :data:`MAX_JSON_BYTES`, before it is
    decoded."""
    if size > MAX_JSON_BYTES:
        raise SdcInputError(f"the {what} is larger than {MAX_JSON_BYTES // 1_000_000} MB; it "
                            "holds settings only, a few kilobytes")


def shown(value: object) -> str:
    """A value for a one-line message: its ``repr``, at most 40 characters; a NumPy scalar as
    the plain value it holds (``1``, not ``np.int64(1)``).

    Examples
    --------
    >>> shown(np.int64(1)), shown("a"), shown(np.float64(0.5))
    ('1', "'a'", '0.5')
    """
    if isinstance(value, np.generic):
        value = value.item()
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def parse_json_bytes(raw: bytes, what: str) -> object:
    """An uploaded JSON file's values (:func:`parse_json`), refused before it is decoded when
    it is larger than :data:`MAX_JSON_BYTES`; bytes that are not UTF-8 are refused."""
    check_json_size(len(raw), what)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SdcInputError(f"the {what} is not UTF-8 text") from None
    return parse_json(text, what)


def parse_json(text: str, what: str,
               pairs: Callable[[list[tuple[str, Any]]], Any] | None = None) -> object:
    """JSON text as Python values, or one line saying why not: invalid JSON, nesting deeper
    than Python's parser goes, or a number too long to read (more than 4,300 digits); each
    object built by ``pairs`` from its (key, value) pairs when given (its own refusals pass
    through)."""
    try:
        return json.loads(text, object_pairs_hook=pairs)
    except json.JSONDecodeError as err:
        raise SdcInputError(f"the {what} is not valid JSON ({err.msg}, line {err.lineno})") \
            from None
    except RecursionError:
        raise SdcInputError(f"the {what} is nested too deeply to be read") from None
    except SdcInputError:
        raise
    except ValueError:  # Python reads whole numbers of at most 4,300 digits
        raise SdcInputError(f"the {what} holds a number of more than 4,300 digits") from None
