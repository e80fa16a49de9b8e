"""Banding (global recoding) of numeric and date columns, and top/bottom coding.

Banding with width w and origin o puts x in the band [a, a + w) with
a = ⌊(x − o)/w⌋·w + o (o = 0: ⌊x/w⌋·w, the classes of seed 003); with custom ``breaks``
b_0 < b_1 < … < b_m instead, in the band [b_i, b_{i+1}) that holds it (values outside
[b_0, b_m) are an error). The band [a, b) is written as (``label``):

- ``auto`` (the default): the band itself, as sdcMicro's ``globalRecode`` writes it, so that no
  released value poses as a true one: ``range`` labels for whole-number columns (integer
  storage) whose bands have whole edges, ``interval`` labels otherwise (dates: an interval of
  dates). The choice depends on the column's storage and the settings only, never on which
  values a part of the column holds;
- ``midpoint``: its float midpoint (a + b)/2, a number no record need hold (picked by the
  steward; :func:`release_note` says so wherever the release is written);
- ``lower``: its lower bound a (a band of ages 15–19 released as 15, never below the data);
- ``interval``: the text "[a, b)";
- ``range``: the text "a–c", c = b − 1, the last whole number of the band ("15–19"), for
  whole-number columns and whole edges.

One recipe writes its bands one way: when its ``auto`` band steps would give range labels to
one column and interval labels to another (ages beside years of schooling with halves), every
one of them writes interval labels ("[50, 60)" beside "[15, 18)", not "50–59"), wherever the
recipe runs (:func:`recipe_labels`, applied by the recipe, the attacks, the deniability, the
sweeps and the engines).

Edges are written as whole numbers when they are whole (below 10^15), else with 12 significant
digits. Measures that need numbers (IL1, the eigenvalues, distributions, the analyses, pMSE)
read a column of band labels back as its band midpoints (a + b)/2, the value ``midpoint``
writes, so a release gives the same figures whichever label it is written with
(:func:`read_bands`, :func:`measured`): "15–19" reads as 17.5, "[15, 20)" as 17.5, a band of
dates as its middle day. A method that takes numbers, given a column a band step labelled,
reads it the same way.

Dates are banded on day numbers since 1970-01-01 (width and origin in days; breaks are for
numbers) and written as "[a, b)" (the first day of the band and of the next), the band's
middle day a + ⌊w/2⌋, or its first day.
Missing values stay missing. Banding is idempotent (midpoints and lower bounds) and monotone.

Top and bottom coding replace every value above ``top`` (below ``bottom``) by ``top``
(``bottom``); the thresholds may be given as percentiles of the column's present values instead,
numpy's default (linear) percentile: with m values sorted x_(0) ≤ … ≤ x_(m−1), v = (m − 1)·q/100,
i = ⌊v⌋, γ = v − i, the percentile is x_(i) + (x_(i+1) − x_(i))·γ (written as
x_(i+1) − (x_(i+1) − x_(i))·(1 − γ) when γ ≥ 0.5, as numpy does), x_(m−1) when v ≥ m − 1. It needs
only two order statistics, which is how the engines compute it.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa

from sdc_core.checks import check_positive
from sdc_core.data.codes import number_text
from sdc_core.data.columns import is_date, require, storage
from sdc_core.errors import SdcInputError
from sdc_core.methods.common import MethodResult
from sdc_core.methods.spec import EngineRun, Method, Param, Release

LABELS = ("auto", "midpoint", "lower", "interval", "range")
#: The labels that write numbers standing for a band, not a true value (:func:`release_note`).
NUMBER_LABELS = ("midpoint", "lower")

#: The values at some 0-based ranks of a column's sorted values (a list, or an array).
OrderStatistics = Callable[[list[int]], Sequence[float] | np.ndarray]


def _numeric_view(s: pd.Series, what: str) -> tuple[np.ndarray, bool]:
    """Float values (NaN = missing) and whether the column holds dates (as day numbers)."""
    require(s, ("number", "date"), what)
    if is_date(s):
        days = s.to_numpy(dtype="datetime64[ns]").astype("datetime64[s]").astype(np.int64)
        x = days.astype(np.float64) / 86400.0
        x[s.isna().to_numpy()] = np.nan
        return x, True
    return s.to_numpy(dtype=np.float64, na_value=np.nan), False


def _count_distinct(index: np.ndarray) -> int:
    """Distinct band numbers: a histogram when their span is small, else hashing."""
    if len(index) == 0:
        return 0
    low, high = index.min(), index.max()
    if high - low < 4 * len(index) + 1024:
        return int(np.count_nonzero(np.bincount((index - low).astype(np.int64))))
    return int(pd.unique(index).size)


def _format_edge(v: float) -> str:
    """A band edge as text: a whole number as such ("15", "-10"), else 12 significant digits
    (float noise such as 0.30000000000000004 left out)."""
    if float(v).is_integer() and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.12g}"


@dataclass(frozen=True)
class Bands:
    """Bands of a width from an origin, or between breaks: :meth:`start` finds each value's
    band, :meth:`end` a band's upper bound."""

    width: float | None
    origin: float
    breaks: np.ndarray | None

    @classmethod
    def of(cls, width: float | None, origin: float, breaks: list[float] | None) -> Bands:
        if (width is None) == (breaks is None):
            raise SdcInputError("banding takes either a width or breaks")
        if breaks is None:
            assert width is not None  # exactly one of width and breaks
            return cls(check_positive("width", width), float(origin), None)
        if float(origin) != 0.0:
            raise SdcInputError("origin is for bands of a width; breaks place the bands "
                                "themselves")
        wrong = SdcInputError("breaks must be at least 2 finite numbers in increasing order")
        if not all(isinstance(b, numbers.Real) and not isinstance(b, bool) for b in breaks):
            raise wrong  # text, a list, null: not read as a number (float("1e3") would be)
        try:
            edges = np.array([float(b) for b in breaks])
        except OverflowError:  # a whole number too long for a float
            raise wrong from None
        if len(edges) < 2 or not np.all(np.isfinite(edges)) or np.any(np.diff(edges) <= 0):
            raise wrong
        return cls(None, float(origin), edges)

    @property
    def fixed_width(self) -> float:
        """The width of bands of a width (bands between breaks have none)."""
        assert self.width is not None, "bands between breaks have no width"
        return self.width

    def start(self, x: np.ndarray) -> np.ndarray:
        """Each value's band's lower bound (NaN where the value is missing)."""
        if self.breaks is None:
            return np.floor((x - self.origin) / self.fixed_width) * self.fixed_width \
                + self.origin
        edges, present = self.breaks, x[~np.isnan(x)]
        if len(present) and (present.min() < edges[0] or present.max() >= edges[-1]):
            raise SdcInputError(f"breaks [{_format_edge(edges[0])}, {_format_edge(edges[-1])}) "
                                f"do not hold every value (they run from "
                                f"{_format_edge(present.min())} to "
                                f"{_format_edge(present.max())})")
        i = np.searchsorted(edges, np.nan_to_num(x, nan=edges[0]), side="right") - 1
        return np.where(np.isnan(x), np.nan, edges[np.clip(i, 0, len(edges) - 2)])

    def end(self, start: np.ndarray) -> np.ndarray:
        """The upper bound of the bands that start at ``start``."""
        if self.breaks is None:
            return start + self.fixed_width
        return self.breaks[np.searchsorted(self.breaks, start) + 1]

    def middle(self, start: np.ndarray) -> np.ndarray:
        """The midpoint of the bands that start at ``start``."""
        if self.breaks is None:
            return start + self.fixed_width / 2.0
        return np.where(np.isnan(start), np.nan,
                        (start + self.end(np.nan_to_num(start, nan=self.breaks[0]))) / 2.0)


def _names(starts: np.ndarray, ends: np.ndarray, is_date: bool, label: str) -> list[str]:
    """The bands [a, b) as text: "a–(b − 1)" (``range``) or "[a, b)" (dates: of days)."""
    if label == "range":
        return [f"{_format_edge(a)}–{_format_edge(b - 1)}" for a, b in zip(starts, ends)]
    if is_date:
        day = pd.to_datetime(starts * 86400.0, unit="s")
        last = pd.to_datetime(ends * 86400.0, unit="s")
        return [f"[{a.date()}, {b.date()})" for a, b in zip(day, last)]
    return [f"[{_format_edge(a)}, {_format_edge(b)})" for a, b in zip(starts, ends)]


def _whole_bands(bands: Bands) -> bool:
    """Whether every band edge is a whole number (width and origin, or the breaks)."""
    edges = [bands.fixed_width, bands.origin] if bands.breaks is None else list(bands.breaks)
    return all(float(e).is_integer() for e in edges)


def auto_label(integer: bool, bands: Bands) -> str:
    """The label ``auto`` stands for (module docstring): ``range`` for a whole-number column
    (``integer``: integer storage, or an engine's integer column) with whole band edges, else
    ``interval``."""
    return "range" if integer and _whole_bands(bands) else "interval"


def recipe_labels(steps: Sequence[dict], integer: Callable[[str], bool]) -> list[dict]:
    """A recipe's steps with its band steps written alike (module docstring): when its band
    steps labelled ``auto`` would write range labels ("50–59") beside interval labels
    ("[15, 18)") — a whole-number column banded beside a column of fractions or dates — each
    of them is given ``interval``, so that a release, and every view of it, reads its bands
    one way. ``integer(column)``: whether the column the recipe starts from is a whole-number
    one (integer storage; an engine's integer column). Other steps, band steps with a label
    of their own, and a recipe whose auto labels agree are unchanged (a band step that cannot
    run says why when it runs).

    Examples
    --------
    >>> steps = [{"method": "band", "column": "age", "width": 10},
    ...          {"method": "band", "column": "educ", "width": 3}]
    >>> [s.get("label") for s in recipe_labels(steps, lambda c: c == "age")]
    ['interval', 'interval']
    >>> recipe_labels(steps, lambda c: True) == steps
    True
    """
    auto = [i for i, s in enumerate(steps)
            if s.get("method") == "band" and s.get("label", "auto") == "auto"]
    forms = set()
    for i in auto:
        s = steps[i]
        try:
            bands = Bands.of(s.get("width"), s.get("origin", 0.0), s.get("breaks"))
        except SdcInputError:
            return list(steps)
        forms.add(auto_label(integer(s["column"]), bands))
    if len(forms) < 2:
        return list(steps)
    return [s | {"label": "interval"} if i in auto else s for i, s in enumerate(steps)]


def whole_number_columns(df: pd.DataFrame) -> Callable[[str], bool]:
    """``integer`` of :func:`recipe_labels` for a table: its columns of integer storage."""
    return lambda c: c in df.columns and storage(df[c]) == "integer"


def _band_codes(bands: Bands, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each record's band as a code 0..m−1 (−1: missing) and the m bands' lower bounds, in
    increasing order: band k of a width starts at o + k·w (as :meth:`Bands.start` computes
    it), band i of breaks at b_i. Counted by ``bincount`` when the bands span few numbers,
    else by ``factorize``."""
    present = ~np.isnan(start)
    if bands.breaks is None:
        k = np.floor((start[present] - bands.origin) / bands.width + 0.5)
    else:
        k = np.searchsorted(bands.breaks, start[present]).astype(np.float64)
    if not len(k) or k.max() - k.min() >= 4 * len(k) + 1024:
        codes, starts = pd.factorize(start)
        return codes, np.asarray(starts, dtype=np.float64)
    low = k.min()
    offset = (k - low).astype(np.int64)
    used = np.flatnonzero(np.bincount(offset))
    lookup = np.full(used[-1] + 1, -1, dtype=np.int64)
    lookup[used] = np.arange(len(used))
    codes = np.full(len(start), -1, dtype=np.int64)
    codes[present] = lookup[offset]
    number = used + low
    starts = (number * bands.fixed_width + bands.origin if bands.breaks is None
              else bands.breaks[number.astype(np.int64)])
    return codes, starts


def _text_labels(s: pd.Series, bands: Bands, start: np.ndarray, x: np.ndarray, is_date: bool,
                 label: str) -> pd.Series:
    """The bands as text, one label per band (not per record), taken per record by Arrow."""
    codes, starts = _band_codes(bands, start)
    ends = bands.end(starts)
    if label == "range":
        whole = storage(s) == "integer" or bool(np.all(np.mod(x[~np.isnan(x)], 1) == 0))
        if is_date or not whole or not all(np.all(np.mod(v, 1) == 0) for v in (starts, ends)):
            raise SdcInputError("range labels (\"15–19\") take whole-number columns and bands "
                                "with whole edges; use interval labels")
    names = pa.array(_names(starts, ends, is_date, label) + [None], type=pa.string())
    text = names.take(pa.array(np.where(codes >= 0, codes, len(names) - 1)))
    return pd.Series(pd.array(text, dtype="str"), index=s.index, name=s.name)


def _example(s: pd.Series, bands: Bands, start: np.ndarray, is_date: bool, label: str) -> str:
    """The first band's released number and the band it stands for: "10 = 0–19"."""
    present = start[~np.isnan(start)]
    if not len(present):
        return ""
    a = np.array([present.min()])
    b = bands.end(a)
    band_text = _names(a, b, is_date, auto_label(storage(s) == "integer", bands))[0]
    if is_date:
        day = a[0] if label == "lower" else a[0] + np.floor((b[0] - a[0]) / 2.0)
        return f"{pd.to_datetime(day * 86400.0, unit='s').date()} = {band_text}"
    value = a[0] if label == "lower" else float(bands.middle(a)[0])
    return f"{number_text(value)} = {band_text}"


def band(s: pd.Series, width: float | None = None, origin: float = 0.0,
         label: str = "auto", breaks: list[float] | None = None) -> MethodResult:
    """Band ``s`` into intervals of ``width`` from ``origin``, or between ``breaks`` (see the
    module docstring). The report says which ``label`` was written (``auto`` resolved) and,
    for numbers that stand for bands, an ``example``: "10 = 0–19"."""
    bands = Bands.of(width, origin, breaks)
    if label not in LABELS:
        raise SdcInputError(f"label must be one of {', '.join(LABELS)}, not {label!r}")
    x, is_date = _numeric_view(s, "banding")
    if is_date and breaks is not None:
        raise SdcInputError("breaks are for numeric columns; band dates by a width in days")
    if label == "auto":
        label = auto_label(storage(s) == "integer", bands)
    start = bands.start(x)
    present = start[~np.isnan(start)]
    if bands.breaks is None:
        n_bands = _count_distinct(np.floor((x - bands.origin) / bands.fixed_width)[~np.isnan(x)])
        info: dict[str, object] = {"width": bands.width, "origin": bands.origin,
                                   "bands": n_bands}
    else:
        info = {"breaks": bands.breaks.tolist(), "bands": int(np.unique(present).size)}
    info["label"] = label
    if label in ("interval", "range"):
        return MethodResult(_text_labels(s, bands, start, x, is_date, label), info)
    info["example"] = _example(s, bands, start, is_date, label)
    if is_date:  # the band's middle day, or its first
        days = start if label == "lower" else start + np.floor(bands.fixed_width / 2.0)
        values = pd.Series(pd.to_datetime(days * 86400.0, unit="s"), index=s.index,
                           name=s.name)
        tz = getattr(s.dt, "tz", None)
        if tz is not None:  # days are counted in UTC; the column keeps its time zone
            values = values.dt.tz_localize("UTC").dt.tz_convert(tz)
    else:
        values = pd.Series(start if label == "lower" else bands.middle(start), index=s.index,
                           name=s.name)
    return MethodResult(values, info)


#: A range label "15–19" (an en dash; whole numbers, the first may be negative) and an interval
#: label "[15, 20)" of numbers or ISO dates.
_RANGE = re.compile(r"(-?\d{1,15})–(-?\d{1,15})")
_INTERVAL = re.compile(r"\[([^\[\],]{1,40}), ([^\[\],]{1,40})\)")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def _label_value(text: object) -> float | np.datetime64 | None:
    """The midpoint of one band label (module docstring), None when ``text`` is no band label:
    "15–19" → 17.5, "[15, 20)" → 17.5, "[2024-01-01, 2024-01-11)" → 2024-01-06. Only these
    patterns are read; any other text is a value, never evaluated."""
    if not isinstance(text, str):
        return None
    if m := _RANGE.fullmatch(text):
        a, c = int(m.group(1)), int(m.group(2))
        return (a + c + 1) / 2.0 if a <= c else None
    if not (m := _INTERVAL.fullmatch(text)):
        return None
    left, right = m.group(1), m.group(2)
    if _DAY.fullmatch(left) and _DAY.fullmatch(right):
        try:
            first, end = np.datetime64(left, "D"), np.datetime64(right, "D")
        except ValueError:
            return None
        days = int((end - first).astype(np.int64))
        return first + np.timedelta64(days // 2, "D") if days > 0 else None
    try:
        low, high = float(left), float(right)
    except ValueError:
        return None
    return (low + high) / 2.0 if math.isfinite(low) and math.isfinite(high) and low < high \
        else None


def read_bands(s: pd.Series, like: pd.Series | None = None) -> pd.Series:
    """``s`` with band labels read back as numbers (module docstring): when ``s`` holds text
    and every present value is a band label of numbers, their midpoints (float); of dates,
    their middle days (in the time zone of ``like``, the original column, if it has one).
    Any other column is returned as it is (its text is data). Parsed once per distinct value.
    """
    if storage(s) not in ("text", "category", "mixed") or not s.notna().any():
        return s
    codes, uniques = pd.factorize(s)
    values = [_label_value(u) for u in np.asarray(uniques, dtype=object)]
    if any(v is None for v in values):
        return s
    dates = [isinstance(v, np.datetime64) for v in values]
    if all(dates):
        days = np.array(values + [np.datetime64("NaT")], dtype="datetime64[ns]")[codes]
        out = pd.Series(days, index=s.index, name=s.name)
        tz = getattr(like.dt, "tz", None) if like is not None and is_date(like) else None
        return out.dt.tz_localize("UTC").dt.tz_convert(tz) if tz is not None else out
    if any(dates):
        return s
    return pd.Series(np.array(values + [np.nan], dtype=np.float64)[codes], index=s.index,
                     name=s.name)


def measured(original: pd.DataFrame, released: pd.DataFrame) -> pd.DataFrame:
    """``released`` as the measures that need numbers read it: every column of band labels
    whose ``original`` column holds numbers or dates read back as its band midpoints
    (:func:`read_bands`); the other columns as they are."""
    back = {}
    for c in _label_columns(released):
        if c in original.columns and storage(original[c]) in ("integer", "float", "datetime"):
            s = released[c]
            if storage(s) in ("text", "category", "mixed") and (v := read_bands(
                    s, original[c])) is not s:
                back[c] = v
    return released.assign(**back) if back else released


def _label_columns(df: pd.DataFrame) -> list[str]:
    """The columns of ``df`` that can hold band labels, read from the dtypes alone: every
    column but those whose storage is boolean, integer, float or datetime (as
    :func:`~sdc_core.data.columns.storage` reads the dtype), which hold no text."""
    out = []
    for c, dtype in df.dtypes.items():
        if isinstance(dtype, pd.CategoricalDtype) or not (
                pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_integer_dtype(dtype)
                or pd.api.types.is_float_dtype(dtype)
                or pd.api.types.is_datetime64_any_dtype(dtype)):
            out.append(c)
    return out


_LABEL_WORDS = {"midpoint": ("band midpoints", "band middle days"),
                "lower": ("band lower bounds", "band first days")}


def release_note(report: dict[str, object]) -> str | None:
    """One sentence when a band step's report says it wrote numbers that stand for bands
    (midpoints or lower bounds), not labels: "age is released as band midpoints (10 = 0–19),
    not as true values"; None for any other step. Export, the report and the command line
    say it with these words."""
    if report.get("method") != "band" or report.get("label") not in NUMBER_LABELS:
        return None
    numbers, days = _LABEL_WORDS[str(report["label"])]
    example = str(report.get("example") or "")
    words = days if _DAY.match(example) else numbers
    return (f"{report['column']} is released as {words}"
            + (f" ({example})" if example else "") + ", not as true values")


def percentile(m: int, q: float, order_statistics: OrderStatistics
               ) -> float:
    """The q-th percentile (0–100) of m present values, linear as numpy's default, from
    ``order_statistics(ranks)``: the values at those 0-based ranks of the sorted values (see
    the module docstring; equal bit for bit to :func:`numpy.percentile`)."""
    v = (m - 1) * (float(q) / 100.0)
    if v >= m - 1:
        return float(order_statistics([m - 1])[0])
    i = math.floor(v)
    gamma = v - i
    a, b = (float(x) for x in order_statistics([i, i + 1]))
    diff = b - a
    return b - diff * (1.0 - gamma) if gamma >= 0.5 else a + diff * gamma


def top_bottom_thresholds(top: float | None, bottom: float | None,
                          top_percentile: float | None, bottom_percentile: float | None,
                          m: int, order_statistics: OrderStatistics
                          ) -> tuple[float | None, float | None]:
    """The thresholds, percentiles resolved by :func:`percentile` over the m present values
    (left unset when there are none), after checking the settings."""
    if top is not None and top_percentile is not None:
        raise SdcInputError("give top or top_percentile, not both")
    if bottom is not None and bottom_percentile is not None:
        raise SdcInputError("give bottom or bottom_percentile, not both")
    for name, q in (("top_percentile", top_percentile), ("bottom_percentile", bottom_percentile)):
        if q is not None and not 0.0 <= float(q) <= 100.0:
            raise SdcInputError(f"{name} must lie in [0, 100], not {q!r}")
    if top_percentile is not None and m:
        top = percentile(m, top_percentile, order_statistics)
    if bottom_percentile is not None and m:
        bottom = percentile(m, bottom_percentile, order_statistics)
    return top, bottom


def top_bottom_code(s: pd.Series, top: float | None = None, bottom: float | None = None,
                    top_percentile: float | None = None,
                    bottom_percentile: float | None = None) -> MethodResult:
    """Cap values above ``top`` and below ``bottom`` (or the given percentiles, 0–100)."""
    x, is_date = _numeric_view(s, "top/bottom coding")
    if is_date:
        raise SdcInputError("top/bottom coding takes numeric columns; band dates instead")
    present = x[~np.isnan(x)]

    def order_statistics(ranks: list[int]) -> np.ndarray:
        return np.partition(present, ranks)[ranks]
    top, bottom = top_bottom_thresholds(top, bottom, top_percentile, bottom_percentile,
                                        len(present), order_statistics)
    if top is None and bottom is None:
        raise SdcInputError("top/bottom coding needs a top or a bottom threshold")
    if top is not None and bottom is not None and float(bottom) > float(top):
        raise SdcInputError(f"bottom ({bottom:g}) is above top ({top:g})")
    out = x.copy()
    n_top = n_bottom = 0
    if top is not None:
        above = out > float(top)
        n_top = int(above.sum())
        out[above] = float(top)
    if bottom is not None:
        below = out < float(bottom)
        n_bottom = int(below.sum())
        out[below] = float(bottom)
    values = pd.Series(out, index=s.index, name=s.name)
    if pd.api.types.is_integer_dtype(s) and np.all(np.mod(out[~np.isnan(out)], 1) == 0):
        values = values.astype(s.dtype)
    return MethodResult(values, {"top": top, "bottom": bottom, "top_coded": n_top,
                                 "bottom_coded": n_bottom})


def _half_range(s: pd.Series) -> float:
    """The largest band width offered for a column: half its range (at least 1)."""
    x, _ = _numeric_view(s, "banding")
    present = x[~np.isnan(x)]
    return max(1.0, float((present.max() - present.min()) // 2)) if len(present) else 1.0


def _describe_top_bottom(r: dict) -> str:
    """A top/bottom coding step's report in one line."""
    parts = [f"{r[f'{end}_coded']} values {side} {r[end]:g} set to it"
             for end, side in (("top", "above"), ("bottom", "below")) if r[end] is not None]
    return f"Top/bottom coding of {r['column']}: {'; '.join(parts)}."


def _describe_band(r: dict) -> str:
    """A banding step's report in one line, with :func:`release_note` when it wrote numbers."""
    text = f"Banding of {r['column']}: {r['bands']} bands " + (
        f"of width {r['width']:g}." if "width" in r
        else "between " + ", ".join(f"{b:g}" for b in r["breaks"]) + ".")
    note = release_note({"method": "band", **r})
    return f"{text[:-1]}; {note}." if note else text


BAND = Method(
    engine=EngineRun.WHOLE_COLUMN,
    name="band", label="Banding", order=10, run=band, release=Release.RECODING,
    target="column", columns="numeric_keys", default_columns="numeric_keys", per_column=True,
    summary="of numeric quasi-identifiers (0 = off)", main="width", off=0,
    sweep_values="5, 10, 15",
    params=(Param("width", "number", 0, low=0, high=_half_range, step=1,
                  label="Band width of {column}",
                  help="Values are replaced by their band [⌊x/w⌋·w, ⌊x/w⌋·w + w), written as "
                       "the band (\"15–19\") unless the labels say otherwise: fewer distinct "
                       "values, larger classes. A recipe gives a width or breaks."),
            Param("origin", "number", 0.0, more=True, sweep=True,
                  label="Band origin of {column}",
                  help="Bands start at this value: [o + i·w, o + (i + 1)·w) (dates: days since "
                       "1970-01-01)."),
            Param("label", "choice", "auto", choices=LABELS, more=True,
                  label="Band labels of {column}",
                  help="auto: the band itself, \"15–19\" for whole numbers with whole edges, "
                       "else \"[15, 20)\" (dates: an interval of days); midpoint: the middle "
                       "of the band (17.5), lower: its lower bound (15), numbers that stand "
                       "for the band and are said so on Export and in the report; interval: "
                       "\"[15, 20)\"; range: \"15–19\". Measures read labels as midpoints."),
            Param("breaks", "list", None, more=True, label="Custom breaks of {column}",
                  help="Bands between these numbers, e.g. 0, 18, 30, 65, 120 (the first at "
                       "most the smallest value, the last above the largest), instead of a "
                       "width: set the width to 0.")),
    switches=("breaks",), describe=_describe_band)

TOP_BOTTOM_CODE = Method(
    engine=EngineRun.WHOLE_COLUMN,
    name="top_bottom_code", label="Top and bottom coding", order=12, run=top_bottom_code,
    release=Release.RECODING, target="column", columns="numeric",
    summary="caps extreme values (empty = no threshold)",
    params=(Param("top", "number", None, sweep=True,
                  label="Top code: values above it become it"),
            Param("bottom", "number", None, sweep=True,
                  label="Bottom code: values below it become it"),
            Param("top_percentile", "number", None, low=0.0, high=100.0, most=100.0, more=True,
                  label="or top code at this percentile (0–100)",
                  help="The threshold is this percentile of the column's present values "
                       "(linear, as numpy's default); give it or a top code, not both."),
            Param("bottom_percentile", "number", None, low=0.0, high=100.0, most=100.0,
                  more=True,
                  label="or bottom code at this percentile (0–100)")),
    describe=_describe_top_bottom)
