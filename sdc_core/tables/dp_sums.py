"""Differentially private sums of a table (docs/tables.md, "Differential privacy sums").

Each contribution is clipped to [0, U] (U the steward's bound, ``clip``): a record's amount, or
with a household id a person's records in a cell summed first and then clipped, each person
keeping at most c records (:func:`sdc_core.tables.dp_tables.bound_contributions`, as the DP
counts). One person then falls in at most c cells and moves each by at most U, so the vector of
cell sums changes by at most Δ₁ = c · U in L1. Every cell of the full grid (empty ones too) gets
independent Laplace noise of scale s = c · U/ε: discrete Laplace when the amounts and U are whole
numbers (the sums stay whole), continuous Laplace otherwise. OpenDP's ``make_laplace`` on the
vector of cell sums (L1 distance) states the table's ε (``map(c · U)``) and a cell's ±95 %
accuracy; the margins are sums of the noisy cells (post-processing: no further privacy cost), and
each published figure is then clipped at 0, as the DP counts are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sdc_core import rng
from sdc_core.checks import check_bounded, numeric_values
from sdc_core.errors import SdcInputError
from sdc_core.households import household_codes
from sdc_core.tables.crosstab import MAX_TOTAL, CrossTable, record_cells
from sdc_core.tables.dp_tables import (
    _opendp,
    _seeded_noise,
    bound_contributions,
    check_contributions,
    sum_accuracy,
)

#: A margin's accuracy is computed on a grid of s / GRID_STEPS (a continuous noise, or a
#: discrete one of scale above it): within s / GRID_STEPS of the exact figure
GRID_STEPS = 100


def check_clip(clip: Any) -> float:
    """U, the bound of one contribution: a number above 0 and at most 2⁵³, else a readable
    refusal (a DP sum cannot be published without it)."""
    if clip is None:
        raise SdcInputError("a DP sum needs the bound of one contribution: give --clip U "
                            "(each contribution is clipped to [0, U], the noise scaled to U/ε)")
    return check_bounded("the clip bound U", clip, MAX_TOTAL, upper_text="2^53")


def bounded_sums(df: pd.DataFrame, table: CrossTable, clip: float,
                 keep: np.ndarray | None = None, units: np.ndarray | None = None) -> np.ndarray:
    """The clipped sum of each cell of ``table`` (margins left out, in the table's order):
    Σ_r min(max(y_r, 0), U) over the records, or with ``units`` Σ_p min(Σ_{r of p} y_r, U) over
    the persons of the cell (a person's records in the cell summed, then clipped); only the
    records ``keep`` marks count; a missing amount is 0.

    Parameters
    ----------
    df : pandas.DataFrame
    table : CrossTable
        A magnitude table of ``df``.
    clip : float
        U.
    keep : numpy.ndarray, optional
        The records kept (default all).
    units : numpy.ndarray, optional
        Each record's person code.

    Returns
    -------
    numpy.ndarray
        One float per cell (C order of the levels).

    Examples
    --------
    >>> from sdc_core.tables.crosstab import crosstab
    >>> r = pd.DataFrame({"a": list("xxy"), "y": [5.0, 30.0, 12.0], "h": [1, 1, 2]})
    >>> bounded_sums(r, crosstab(r, ["a"], "y"), 10.0).tolist()
    [15.0, 10.0]
    >>> bounded_sums(r, crosstab(r, ["a"], "y"), 10.0, units=np.array([0, 0, 1])).tolist()
    [10.0, 10.0]
    """
    assert table.sum_column is not None
    y = np.nan_to_num(numeric_values(df[table.sum_column], "a magnitude table"), nan=0.0)
    flat, ok = record_cells(df, table, keep)
    size = int(np.prod([len(lv) for lv in table.levels]))
    y = y[ok]
    if units is None:
        return np.bincount(flat, weights=np.clip(y, 0.0, clip), minlength=size)
    u = np.asarray(units, dtype=np.int64)[ok]
    pair, where = np.unique(flat * (int(u.max(initial=0)) + 1) + u, return_inverse=True)
    per_person = np.bincount(where, weights=y, minlength=len(pair))
    cell = pair // (int(u.max(initial=0)) + 1)
    return np.bincount(cell, weights=np.clip(per_person, 0.0, clip), minlength=size)


def margin_accuracy(scale: float, m: int, whole: bool, alpha: float = 0.05) -> float:
    """The ±accuracy at 1 − α of a sum of m independent Laplace noises of scale s: for a discrete
    noise of scale at most :data:`GRID_STEPS`, the exact figure
    (:func:`sdc_core.tables.dp_tables.sum_accuracy`); otherwise h · a, a the figure of the
    discrete Laplace of scale s/h on the grid of step h = s/:data:`GRID_STEPS`.

    Examples
    --------
    >>> margin_accuracy(1.0, 2, True), round(margin_accuracy(1.0, 1, False), 2)
    (5.0, 3.01)
    """
    if whole and scale <= GRID_STEPS:
        return sum_accuracy("laplace", scale, m, alpha)
    h = scale / GRID_STEPS
    return h * sum_accuracy("laplace", float(GRID_STEPS), m, alpha)


@dataclass(frozen=True)
class DpSums:
    """A DP magnitude table (module docstring): ``frame`` one row per cell and margin of the
    cross table (its order) with ``sum`` (published), ``accuracy`` (±, at 95 %), ``cells`` (the
    noisy cells it adds up), ``margin`` and ``status``; ``epsilon`` as OpenDP states it for a
    person of at most ``max_contributions`` records, each contribution at most ``clip``."""

    frame: pd.DataFrame
    epsilon: float
    scale: float
    clip: float
    whole: bool
    max_contributions: int
    records_dropped: int


def dp_sums(df: pd.DataFrame, table: CrossTable, clip: float | None, epsilon: float = 1.0,
            seed: int | None = 0, household: str | None = None,
            max_contributions: int = 1, alpha: float = 0.05) -> DpSums:
    """Differentially private sums of the cells of ``table``, its margins their sums (module
    docstring).

    Published cell = max(0, S_c + N_c), S_c the clipped sum (:func:`bounded_sums`), N_c Laplace
    of scale s = c · U/ε (discrete when the amounts and U are whole); a margin = max(0, Σ of its
    noisy cells). Accuracy of a cell: OpenDP's ``laplacian_scale_to_accuracy(s, α)`` (s·ln(1/α)),
    or ``discrete_laplacian_scale_to_accuracy``; of a margin of m cells, :func:`margin_accuracy`.

    Parameters
    ----------
    df : pandas.DataFrame
        The records ``table`` was built from.
    table : CrossTable
        A magnitude table.
    clip : float
        U, the most one contributor adds to a cell (:func:`check_clip`; None is refused).
    epsilon : float
        0.001 ≤ ε ≤ 100.
    seed : int or None
        Seed of the noise (numpy's generator) and of which records of a person are kept; None:
        OpenDP's own sampler (not reproducible).
    household : str, optional
        The person id: a person's records in a cell are summed before clipping.
    max_contributions : int
        c, the most records kept per person (1 without ``household``).
    alpha : float

    Returns
    -------
    DpSums

    Examples
    --------
    >>> from sdc_core.tables.crosstab import crosstab
    >>> r = pd.DataFrame({"a": list("xxy"), "y": [5, 30, 12]})
    >>> d = dp_sums(r, crosstab(r, ["a"], "y"), clip=10, epsilon=2.0, seed=1)
    >>> d.scale, d.whole, d.frame["status"].unique().tolist()
    (5.0, True, ['perturbed'])
    """
    if table.sum_column is None:
        raise SdcInputError("a DP sum needs a column to sum")
    u_bound = check_clip(clip)
    eps = check_bounded("epsilon", epsilon, 100.0, 0.001)
    alpha = check_bounded("alpha", alpha, 0.5)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer)
                             or not 0 <= int(seed) <= rng.MAX_SEED):
        raise SdcInputError(f"seed must be a whole number from 0 to 2^64 − 1, not {seed!r}")
    c = check_contributions(max_contributions)
    if household is None and c != 1:
        raise SdcInputError("a bound on the records per person needs a household id")
    keep, units = None, None
    if household is not None:
        units, _ = household_codes(df, household)
        keep = bound_contributions(units, c, 0 if seed is None else int(seed))
    sums = bounded_sums(df, table, u_bound, keep, units)
    amounts = numeric_values(df[table.sum_column], "a magnitude table")
    whole = bool(np.all(np.isnan(amounts) | (amounts == np.floor(amounts)))) \
        and u_bound.is_integer()
    sensitivity = c * u_bound
    scale = sensitivity / eps
    dp = _opendp()
    if whole:
        meas = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=dp.i64)),
                                 dp.l1_distance(T=dp.i64), scale=scale)
        stated = float(meas.map(int(sensitivity)))
        acc = float(dp.discrete_laplacian_scale_to_accuracy(scale, alpha))
    else:
        meas = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=dp.f64, nan=False)),
                                 dp.l1_distance(T=dp.f64), scale=scale)
        stated = float(meas.map(sensitivity))
        acc = float(dp.laplacian_scale_to_accuracy(scale, alpha))
    if seed is None:
        true = [int(v) for v in sums] if whole else [float(v) for v in sums]
        noisy = np.asarray(meas(true), dtype=np.float64)
    elif whole:
        noisy = sums + _seeded_noise("laplace", scale, len(sums), int(seed))
    else:
        noisy = sums + np.random.default_rng(int(seed)).laplace(0.0, scale, len(sums))
    full = table.frame[list(table.columns)].copy()
    full["sum"] = np.clip(table.aggregate(noisy), 0.0, None)
    full["cells"] = table.aggregate(np.ones(len(noisy), dtype=np.int64))
    accs = {m: acc if m == 1 else margin_accuracy(scale, m, whole, alpha)
            for m in sorted(set(full["cells"].tolist()))}
    full["accuracy"] = full["cells"].map(accs).astype(np.float64)
    full["margin"] = table.margin
    full["status"] = "perturbed"
    dropped = 0 if keep is None else int((~keep).sum())
    return DpSums(full, stated, scale, u_bound, whole, c, dropped)
