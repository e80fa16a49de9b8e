"""Banding (global recoding) of numeric and date columns, and top/bottom coding.

Banding with width w and origin o puts x in the band [a, a + w) with
a = ⌊(x − o)/w⌋·w + o (o = 0: ⌊x/w⌋·w, the classes of seed 003). The band is written as its
float midpoint a + w/2 (numeric, so utility measures still apply) or, on request, as the label
"[a, a+w)". Dates are banded on day numbers since 1970-01-01 (width in days) and written as the
band's middle day, a + ⌊w/2⌋.
Missing values stay missing. Banding is idempotent and monotone.

Top and bottom coding replace every value above ``top`` (below ``bottom``) by ``top``
(``bottom``); the thresholds may be given as percentiles of the column's present values instead,
numpy's default (linear) percentile: with m values sorted x_(0) ≤ … ≤ x_(m−1), v = (m − 1)·q/100,
i = ⌊v⌋, γ = v − i, the percentile is x_(i) + (x_(i+1) − x_(i))·γ (written as
x_(i+1) − (x_(i+1) − x_(i))·(1 − γ) when γ ≥ 0.5, as numpy does), x_(m−1) when v ≥ m − 1. It needs
only two order statistics, which is how the engines compute it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from sdc_core.checks import check_positive
from sdc_core.columns import is_date, require
from sdc_core.errors import SdcInputError
from sdc_core.methods.common import MethodResult
from sdc_core.methods.spec import Method, Param, Release

LABELS = ("midpoint", "interval")


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
    return f"{v:g}" if abs(v) < 1e15 else repr(v)


def band(s: pd.Series, width: float, origin: float = 0.0, label: str = "midpoint") -> MethodResult:
    """Band ``s`` into intervals of ``width`` (see the module docstring)."""
    w = check_positive("width", width)
    o = float(origin)
    if label not in LABELS:
        raise SdcInputError(f"label must be one of {', '.join(LABELS)}, not {label!r}")
    x, is_date = _numeric_view(s, "banding")
    index = np.floor((x - o) / w)
    start = index * w + o
    n_bands = _count_distinct(index[~np.isnan(index)])
    info = {"width": w, "origin": o, "bands": n_bands}
    if label == "interval":
        codes, starts = pd.factorize(start)  # one label per band, not per record
        if is_date:
            day = pd.to_datetime(starts * 86400.0, unit="s")
            end = pd.to_datetime((starts + w) * 86400.0, unit="s")
            names = [f"[{a.date()}, {b.date()})" for a, b in zip(day, end)]
        else:
            names = [f"[{_format_edge(a)}, {_format_edge(a + w)})" for a in starts]
        text = np.array(names + [None], dtype=object)[np.where(codes >= 0, codes, len(names))]
        return MethodResult(pd.Series(text, index=s.index, name=s.name, dtype="str"), info)
    if is_date:  # the middle day of the band
        mid = start + np.floor(w / 2.0)
        values = pd.Series(pd.to_datetime(mid * 86400.0, unit="s"), index=s.index, name=s.name)
        tz = getattr(s.dt, "tz", None)
        if tz is not None:  # days are counted in UTC; the column keeps its time zone
            values = values.dt.tz_localize("UTC").dt.tz_convert(tz)
    else:
        values = pd.Series(start + w / 2.0, index=s.index, name=s.name)
    return MethodResult(values, info)


def percentile(m: int, q: float, order_statistics: Callable[[list[int]], Sequence[float]]
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
                          m: int, order_statistics: Callable[[list[int]], Sequence[float]]
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


BAND = Method(
    name="band", label="Banding", order=10, run=band, release=Release.RECODING,
    target="column", columns="numeric_keys", default_columns="numeric_keys", per_column=True,
    summary="of numeric quasi-identifiers (0 = off)", main="width", off=0,
    sweep_values="5, 10, 15",
    params=(Param("width", "number", 0, low=0, high=_half_range, step=1, required=True,
                  label="Band width of {column}",
                  help="Values are replaced by the middle of their band ⌊x/w⌋·w + w/2: fewer "
                       "distinct values, larger classes."),
            Param("origin", "number", 0.0, control=False),
            Param("label", "choice", "midpoint", choices=LABELS, control=False)),
    describe=lambda r: f"Banding of {r['column']}: {r['bands']} bands of width {r['width']:g}.")

TOP_BOTTOM_CODE = Method(
    name="top_bottom_code", label="Top and bottom coding", order=12, run=top_bottom_code,
    release=Release.RECODING, target="column", columns="numeric", ui=False,
    summary="caps extreme values",
    params=tuple(Param(n, "number", None) for n in ("top", "bottom", "top_percentile",
                                                     "bottom_percentile")))
