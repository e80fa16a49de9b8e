"""Distance to the closest record: how near each released record lies to some original record
(docs/measures.md, "Distance to the closest record").

For the numeric columns C (p of them) that hold numbers in both tables, each scaled by the
original's range R_c = max x_c − min x_c (a constant column: R_c = 1), the distance of a
released record z to an original record x is the root mean square of the scaled differences

    d(z, x) = √[(1/p) Σ_{c∈C} ((z_c − x_c)/R_c)²]  ∈ [0, 1] for values in the original's range,

and the distance to the closest record of z is DCR(z) = min_x d(z, x) over every original
record, whichever row it is in: the measure reads the release as a set of records, so it
applies to a release that does not keep the original's rows (a synthetic file) as well as to
a masked one. A released record with DCR 0 is a copy of an original record on C. Records with a
blank among C (either side) are left out and counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree

from sdc_core.errors import SdcInputError
from sdc_core.utility.il1 import numbers_in_both


@dataclass(frozen=True)
class ClosestRecord:
    """The distance to the closest original record of every released record measured
    (``distances``), the columns read, and the released records left out for a blank."""

    distances: np.ndarray
    columns: tuple[str, ...]
    left_out: int

    def summary(self) -> dict[str, Any]:
        """``dcr_median``, ``dcr_zero_percent`` (released records that copy an original one
        on the columns, in % of those measured), ``dcr_n`` and ``dcr_columns``."""
        d = self.distances
        return {"dcr_median": float(np.median(d)),
                "dcr_zero_percent": 100.0 * float(np.mean(d == 0.0)),
                "dcr_n": int(d.size), "dcr_columns": list(self.columns)}


def closest_record(original: pd.DataFrame, released: pd.DataFrame,
                   numeric: Sequence[str]) -> ClosestRecord:
    """The distance to the closest record (module docstring) of each released record.

    Parameters
    ----------
    original, released : pandas.DataFrame
        The data as loaded and the release (any number of records, in any order).
    numeric : sequence of str
        The numeric columns; those that hold numbers in both tables are read.

    Returns
    -------
    ClosestRecord

    Raises
    ------
    SdcInputError
        No numeric column holds numbers in both tables, no record of either table is
        complete on them, or a column's values lie so far apart on the scale of its range
        (a range of 1e-320 and values 1 apart) that a distance overflows floating point.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.risk.closest import closest_record
    >>> x = pd.DataFrame({"a": [0.0, 10.0]})
    >>> r = closest_record(x, pd.DataFrame({"a": [0.0, 5.0, 9.0]}), ["a"])
    >>> round(r.summary()["dcr_median"], 12)
    0.1
    """
    columns, (x, z), (_, keep) = scaled_points([original, released], numeric)
    return ClosestRecord(nearest(x, z), tuple(columns), int((~keep).sum()))


def nearest(x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """The Euclidean distance of each point of ``z`` to its nearest point of ``x``, by a k-d
    tree. The tree sums squares, which overflow past about 1e154 though the distance does not:
    points that large are first divided by a power of two (exactly) and the distances
    multiplied back by it."""
    top = max(float(np.abs(x).max(initial=0.0)), float(np.abs(z).max(initial=0.0)))
    shift = max(0, int(np.frexp(top)[1]) - 500)  # 2⁵⁰⁰ squared, over many columns, stays finite
    distances, _ = cKDTree(np.ldexp(x, -shift)).query(np.ldexp(z, -shift), k=1)
    return np.ldexp(np.asarray(distances, dtype=np.float64), shift)


def scaled_points(tables: Sequence[pd.DataFrame], numeric: Sequence[str], reference: int = 1
                  ) -> tuple[list[str], list[np.ndarray], list[np.ndarray]]:
    """The records of each table as points of the distance of the module docstring: on the
    columns of ``numeric`` that hold numbers in every table, scaled by the range R_c of the
    complete records of the first ``reference`` tables (the original; R_c = 1 for a constant
    column) and by √p, so that the Euclidean distance of two points is d(z, x).

    Returns
    -------
    columns : list of str
        The columns read.
    points : list of numpy.ndarray
        Per table, its records complete on the columns, scaled (m_t, p).
    complete : list of numpy.ndarray
        Per table, the mask of its records complete on the columns (n_t,).

    Raises
    ------
    SdcInputError
        No column holds numbers in every table, no record of a table is complete on them, or a
        distance overflows floating point (:func:`closest_record`).
    """
    columns = [c for c in numeric if all(numbers_in_both(tables[0], t, [c]) for t in tables)]
    if not columns:
        raise SdcInputError("no numeric column holds numbers in every table: the distance to "
                            "the closest record reads numbers")
    values = [t[columns].astype("float64").to_numpy() for t in tables]
    complete = [~np.isnan(v).any(axis=1) for v in values]
    if not all(k.any() for k in complete):
        raise SdcInputError("no record is complete on the numeric columns "
                            f"{', '.join(map(str, columns))}")
    ranged = np.concatenate([v[k] for v, k in zip(values[:reference], complete)])
    low = ranged.min(axis=0)
    spread = ranged.max(axis=0) - low
    scale = np.where(spread > 0, spread, 1.0) * np.sqrt(len(columns))
    with np.errstate(over="ignore", invalid="ignore"):  # said below, column by column
        points = [(v[k] - low) / scale for v, k in zip(values, complete)]
    far = ~np.logical_and.reduce([np.isfinite(p).all(axis=0) for p in points])
    if far.any():
        raise SdcInputError(
            f"the values of {', '.join(str(c) for c, f in zip(columns, far) if f)} lie too far "
            "apart, on the scale of the original's range, for a distance in floating point")
    return columns, points, complete
