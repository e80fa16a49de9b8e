"""Differentially private counts of a table (docs/tables.md, "Differential privacy counts").

The cells (the full grid of the keys' levels, empty cells included: which cells exist must not
depend on the data) get independent discrete Laplace noise of scale s = Δ₁/ε or discrete
Gaussian noise (zero-concentrated DP, ρ = Δ₂²/(2σ²)). A person who contributes at most c records
(``max_contributions``; c = 1 when every record is a person of its own) changes the vector of
cell counts by at most c in L1 and in L2 (all c records in one cell), so Δ₁ = Δ₂ = c; with a
household id the records beyond c of a person are dropped first (:func:`bound_contributions`;
docs/tables.md, "The unit of protection"). The margins are sums of the noisy cells
(post-processing: no further privacy cost); each published figure is then clipped at 0. OpenDP
builds the measurement and states its privacy (``map(c)``) and each cell's ±95 % accuracy; a
margin of m cells has the accuracy of a sum of m independent noises, computed here by convolving
the noise distribution.
With a seed the noise is drawn with the same distribution from numpy's seeded generator, so a
page and the command line agree; OpenDP's own sampler (used when no seed is given) is not
seedable.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
import pandas as pd

from sdc_core import rng
from sdc_core.checks import check_bounded, shown
from sdc_core.errors import SdcInputError
from sdc_core.tables.count_tables import full_grid, with_margins

#: Largest grid of the convolution of :func:`sum_accuracy` (beyond it: the normal limit).
MAX_GRID = 1 << 22
MECHANISMS = ("laplace", "gaussian")
#: The most records per person a steward may let into a DP table
MAX_CONTRIBUTIONS = 10_000
#: The default bound c keeps whole the persons at or below this quantile of records per person
CONTRIBUTION_QUANTILE = 0.95
#: The stream (:func:`sdc_core.rng.key`) that orders a person's records when some are dropped
BOUND_STEP = 45


def _opendp() -> Any:
    """OpenDP's prelude with its "contrib" features on (the noise measurements need them)."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp


def noise_pmf(mechanism: str, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """The noise's support k and probabilities, cut where the tail is below 10⁻³⁰.

    Discrete Laplace: p(k) ∝ exp(−|k|/s); discrete Gaussian: p(k) ∝ exp(−k²/(2σ²)).

    Parameters
    ----------
    mechanism : {"laplace", "gaussian"}
    scale : float
        s or σ.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        The integers k = −K … K and p(k), summing to 1.

    Examples
    --------
    >>> k, p = noise_pmf("laplace", 1.0)
    >>> round(float(p[k == 0][0]), 6)  # (1 − e⁻¹)/(1 + e⁻¹)
    0.462117
    """
    if mechanism == "laplace":
        half = int(math.ceil(scale * 70)) + 1           # e^(−70) < 1e-30
        k = np.arange(-half, half + 1)
        logp = -np.abs(k) / scale
    else:
        half = int(math.ceil(scale * 12)) + 1           # e^(−12²/2) < 1e-30
        k = np.arange(-half, half + 1)
        logp = -(k.astype(np.float64) ** 2) / (2 * scale * scale)
    p = np.exp(logp - logp.max())
    return k, p / p.sum()


def sum_accuracy(mechanism: str, scale: float, m: int, alpha: float = 0.05) -> float:
    """The smallest whole a with P(|Σ_{i=1..m} Xᵢ| ≥ a) ≤ α for m independent noises Xᵢ (the
    convention of OpenDP's accuracy, P[|error| ≥ a] ≤ α): the accuracy of a margin of m noisy
    cells, from the noise pmf convolved m times (by FFT). When that takes a grid of more than
    2²² points (a very small ε over very many cells) the sum is taken as normal (the central
    limit): a = ⌊z·σ_m⌋ + 1, z the 1 − α/2 quantile of the standard normal and σ_m² = m·Var X.

    Parameters
    ----------
    mechanism : {"laplace", "gaussian"}
    scale : float
    m : int
        Number of cells summed (≥ 1).
    alpha : float

    Returns
    -------
    float
        An integer a (as a float).

    Examples
    --------
    >>> sum_accuracy("laplace", 1.0, 1), sum_accuracy("gaussian", 1.0, 1)
    (4.0, 3.0)
    """
    k, p = noise_pmf(mechanism, scale)
    if m == 1:
        dist, support = p, k
    else:
        half = len(k) // 2
        sd = math.sqrt(float((p * k * k).sum()) * m)
        width = min(m * half, int(sd * 40) + half + 1)
        n = 1 << int(math.ceil(math.log2(2 * width + 1)))
        if n > MAX_GRID:
            return float(math.floor(NormalDist().inv_cdf(1 - alpha / 2) * sd)) + 1.0
        padded = np.zeros(n)
        padded[: half + 1] = p[half:]
        padded[n - half:] = p[:half]
        dist = np.fft.irfft(np.fft.rfft(padded) ** m, n)
        dist = np.clip(dist, 0.0, None)
        support = np.where(np.arange(n) < n // 2, np.arange(n), np.arange(n) - n)
    mag = np.abs(support)
    order = np.argsort(mag, kind="stable")
    inside = np.cumsum(dist[order])
    # P(|S| ≥ a) = 1 − P(|S| ≤ a − 1): the smallest b = a − 1 with P(|S| ≤ b) ≥ 1 − α
    vals, first = np.unique(mag[order], return_index=True)
    last = np.r_[first[1:] - 1, len(order) - 1]
    covered = inside[last]
    idx = int(np.searchsorted(covered, 1.0 - alpha - 1e-12))
    return float(vals[min(idx, len(vals) - 1)]) + 1.0


def _seeded_noise(mechanism: str, scale: float, size: int, seed: int) -> np.ndarray:
    """Noise of the mechanism's distribution from numpy's generator seeded with ``seed``:
    discrete Laplace as the difference of two geometric counts of failures with success
    probability 1 − e^(−1/s); discrete Gaussian by inverting its (cut) distribution."""
    gen = np.random.default_rng(seed)
    if mechanism == "laplace":
        q = -math.expm1(-1.0 / scale)
        return (gen.geometric(q, size) - gen.geometric(q, size)).astype(np.int64)
    k, p = noise_pmf(mechanism, scale)
    cdf = np.cumsum(p)
    idx = np.searchsorted(cdf, gen.random(size) * cdf[-1], side="right")
    return k[np.minimum(idx, len(k) - 1)].astype(np.int64)


@dataclass(frozen=True)
class DpTable:
    """A DP count table (module docstring): ``table`` holds the key columns, ``count`` (the
    published count), ``accuracy`` (±, at 1 − ``alpha``), ``cells`` (how many noisy cells the
    figure sums), ``margin`` and ``status``; ``epsilon`` the privacy loss of the whole table
    (for the Gaussian mechanism at ``delta``), ``rho`` its zCDP (Gaussian only), both for a
    person of at most ``max_contributions`` records."""

    table: pd.DataFrame
    keys: tuple[Hashable, ...]
    mechanism: str
    epsilon: float
    scale: float
    alpha: float
    rho: float | None = None
    delta: float | None = None
    seed: int | None = None
    clipped: bool = True
    max_contributions: int = 1

    def to_json(self) -> dict[str, Any]:
        return {"mechanism": self.mechanism, "epsilon": self.epsilon, "rho": self.rho,
                "delta": self.delta, "scale": self.scale, "alpha": self.alpha,
                "seed": self.seed, "clipped": self.clipped,
                "max_contributions": self.max_contributions,
                "cells": self.table.astype(object).where(self.table.notna(), None)
                .to_dict(orient="records")}


def dp_counts(table: Any, epsilon: float = 1.0, mechanism: str = "laplace",
              alpha: float = 0.05, seed: int | None = None, clip: bool = True,
              rho: float | None = None, delta: float = 1e-6,
              max_contributions: int = 1) -> DpTable:
    """Differentially private counts of a table's cells, and its margins as their sums.

    Laplace: noise ~ discrete Laplace(s), s = Δ₁/ε with Δ₁ = c, the most records one person
    adds (``max_contributions``; each record falls in one cell, so removing the person moves
    the vector of counts by at most c in L1); OpenDP's ``make_laplace`` on the vector of cell
    counts (L1 distance) states ε = ``map(c)``. Gaussian: noise ~ discrete Gaussian(σ),
    σ = Δ₂/√(2ρ) with Δ₂ = c (the c records in one cell: the largest L2 change), ρ-zCDP
    (OpenDP's ``make_gaussian``, L2 distance, ρ = ``map(c)``), reported also as (ε, δ)-DP by
    OpenDP's conversion. Each cell's accuracy a is OpenDP's
    ``discrete_laplacian_scale_to_accuracy(s, α)`` (or the Gaussian one):
    P(|noise| ≥ a) ≤ α; a margin M = Σ of m noisy cells has :func:`sum_accuracy`.
    Published: max(0, figure) when ``clip`` (which only moves a figure toward the true,
    non-negative, value, so the accuracy still holds; cells may then not add up exactly to
    their margins).

    Parameters
    ----------
    table : pandas.DataFrame or pandas.Series
        Key columns and ``count``; completed to the full grid of the keys' levels.
    epsilon : float
        Privacy loss of the Laplace mechanism (0.001 ≤ ε ≤ 100).
    mechanism : {"laplace", "gaussian"}
    alpha : float
        1 − the confidence of the accuracy (default 0.05: ±95 %).
    seed : int, optional
        Draw the noise from numpy's generator seeded with it (reproducible); without one,
        OpenDP's own sampler draws it (not reproducible).
    clip : bool
        Publish negative figures as 0.
    rho : float, optional
        zCDP budget of the Gaussian mechanism (10⁻⁶ ≤ ρ ≤ 100; default ε²/2).
    delta : float
        The δ at which a Gaussian table's ε is reported.
    max_contributions : int, default 1
        c, the most records of one person in ``table`` (:func:`bound_contributions` keeps it
        so); 1 when every record is a person of its own.

    Returns
    -------
    DpTable

    Examples
    --------
    >>> t = pd.DataFrame({"a": ["x", "y"], "count": [30, 4]})
    >>> d = dp_counts(t, epsilon=1.0, seed=1)
    >>> d.scale, round(float(d.table["accuracy"].iloc[0]), 3), d.table["status"].iloc[0]
    (1.0, 3.376, 'perturbed')
    """
    if mechanism not in MECHANISMS:
        raise SdcInputError(f"mechanism must be one of {', '.join(MECHANISMS)}, not "
                            f"{mechanism!r}")
    alpha = check_bounded("alpha", alpha, 0.5)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer)
                             or not 0 <= int(seed) <= rng.MAX_SEED):
        raise SdcInputError(f"seed must be a whole number from 0 to 2^64 − 1, not {seed!r}")
    bound = check_contributions(max_contributions)
    cells = full_grid(table)
    keys = [c for c in cells.columns if c != "count"]
    dp = _opendp()
    true = cells["count"].to_numpy(dtype=np.int64)
    if mechanism == "laplace":
        epsilon = check_bounded("epsilon", epsilon, 100.0, 0.001)
        scale = bound / epsilon
        meas = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=dp.i64)),
                                 dp.l1_distance(T=dp.i64), scale=scale)
        stated_eps, out_rho, out_delta = float(meas.map(bound)), None, None
        acc = float(dp.discrete_laplacian_scale_to_accuracy(scale, alpha))
    else:
        out_rho = check_bounded("rho", rho if rho is not None else check_bounded(
            "epsilon", epsilon, 100.0, 0.001) ** 2 / 2, 100.0, 1e-6)
        out_delta = check_bounded("delta", delta, 0.1)
        scale = bound / math.sqrt(2.0 * out_rho)
        meas = dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=dp.i64)),
                                  dp.l2_distance(T=dp.i64), scale=scale)
        out_rho = float(meas.map(bound))
        stated_eps = float(dp.c.make_zCDP_to_approxDP(meas).map(bound).epsilon(out_delta))
        acc = float(dp.discrete_gaussian_scale_to_accuracy(scale, alpha))
    if seed is None:
        noisy = np.asarray(meas([int(v) for v in true]), dtype=np.int64)
    else:
        noisy = true + _seeded_noise(mechanism, scale, len(true), int(seed))
    frame = cells[keys].copy()
    frame["count"] = noisy
    frame["cells"] = 1
    full = with_margins(frame.assign(cells=1), keys, "count")
    full["cells"] = with_margins(frame, keys, "cells")["cells"].to_numpy()
    accs = {m: (acc if m == 1 else sum_accuracy(mechanism, scale, m, alpha))
            for m in sorted(set(full["cells"].tolist()))}
    full["accuracy"] = full["cells"].map(accs).astype(np.float64)
    if clip:
        full["count"] = full["count"].clip(lower=0)
    full["status"] = "perturbed"
    return DpTable(full[keys + ["count", "accuracy", "cells", "margin", "status"]],
                   tuple(keys), mechanism, stated_eps, scale, alpha, out_rho, out_delta,
                   None if seed is None else int(seed), bool(clip), bound)


def check_contributions(c: Any) -> int:
    """``c`` as a whole number of records from 1 to :data:`MAX_CONTRIBUTIONS`, else a readable
    refusal."""
    if isinstance(c, bool) or not isinstance(c, int | np.integer) \
            or not 1 <= int(c) <= MAX_CONTRIBUTIONS:
        raise SdcInputError(f"the most records per person must be a whole number from 1 to "
                            f"{MAX_CONTRIBUTIONS:,}, not {shown(c)}")
    return int(c)


def default_contributions(units: np.ndarray) -> int:
    """The default bound c: the :data:`CONTRIBUTION_QUANTILE` quantile of the records per
    person (a number of records some person has, ``method="higher"``), so that at least 95 %
    of the persons keep every record. It is read from the data, so it is not itself private:
    a steward who knows the design (the waves of a panel) sets c from it instead.

    Parameters
    ----------
    units : numpy.ndarray
        Each record's person as a code 0 … P − 1 (:func:`sdc_core.households.household_codes`).

    Returns
    -------
    int

    Examples
    --------
    >>> default_contributions(np.array([0] * 5 + [1, 2, 3] * 2 + list(range(4, 40))))
    2
    """
    sizes = np.bincount(np.asarray(units, dtype=np.int64))
    sizes = sizes[sizes > 0]
    if len(sizes) == 0:
        return 1
    c = int(np.quantile(sizes, CONTRIBUTION_QUANTILE, method="higher"))
    return min(max(c, 1), MAX_CONTRIBUTIONS)


def bound_contributions(units: np.ndarray, c: int, seed: int) -> np.ndarray:
    """Which records to keep so that no person has more than ``c``: each person's records in
    a random order from ``seed`` (the counter-based draw u64(r, K) at the record's position r,
    K = ``rng.key(seed, BOUND_STEP, 0)``), the first c of them kept. A person's kept records
    depend on their own records only (the transformation is stable: adding or removing one
    person changes no one else's), and no year or wave of a panel is favoured.

    Parameters
    ----------
    units : numpy.ndarray
        Each record's person as a code 0 … P − 1.
    c : int
        The most records per person.
    seed : int

    Returns
    -------
    numpy.ndarray
        True for a record kept.

    Examples
    --------
    >>> keep = bound_contributions(np.array([0, 0, 0, 1, 2, 2]), 2, seed=1)
    >>> int(keep.sum()), int(keep[:3].sum())
    (5, 2)
    """
    c = check_contributions(c)
    units = np.asarray(units, dtype=np.int64)
    draw = rng.u64(rng.record_ids(len(units)), rng.key(int(seed), BOUND_STEP, 0))
    order = np.lexsort((draw, units))  # by person, then the random order
    sorted_units = units[order]
    rank = np.arange(len(units)) - np.searchsorted(sorted_units, sorted_units, side="left")
    keep = np.zeros(len(units), dtype=bool)
    keep[order[rank < c]] = True
    return keep


def nonresponse(total: float, counts: Sequence[float]) -> float:
    """Non-response as post-processing of published figures: max(0, N − Σ counts).

    Parameters
    ----------
    total : float
        The published number of participants N.
    counts : sequence of float
        The published (noisy) counts of the options.

    Returns
    -------
    float

    Examples
    --------
    >>> nonresponse(20, [14, 3]), nonresponse(20, [14, 9])
    (3.0, 0.0)
    """
    vals = np.asarray(list(counts), dtype=np.float64)
    if not math.isfinite(float(total)) or not np.all(np.isfinite(vals)):
        raise SdcInputError("the total and the counts must be numbers")
    return float(max(0.0, float(total) - float(vals.sum())))
