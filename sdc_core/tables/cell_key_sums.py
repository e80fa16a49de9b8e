"""The cell key method for magnitude tables (docs/tables.md, "The cell key method for magnitude
tables").

Every contributor has a record key, a whole number 0–255 (:func:`sdc_core.tables.cell_key.
record_keys`, the keys of the count method): a record, or with a household id a person (one key
per person, drawn from the id). A cell's key is the sum of the keys of its distinct contributors
mod 256, the margins' too, so the same contributors give the same key in every table. The noise
of a cell is read from a bounded symmetric noise table at its key and scaled by the cell's
largest contribution x₁:

    published sum = X + m · x₁ · z(ckey),

X the true sum, m the noise magnitude, z(k) the k-th of 256 equally likely values of a noise
distribution on [−D, D] with mean 0 and variance V (:func:`noise_table`). The noise grows with the
largest contribution, not with the cell total, and a cell with the same contributors gets the same
published value in every table. A cell sensitive by the p % rule (X − x₁ − x₂ < p/100 · x₁) is
moved by at least p/100 · x₁ + (X − x₁ − x₂), in the direction of its z: whatever that direction,
the second-largest contributor's estimate X′ − x₂ of x₁ then misses x₁ by at least p % of x₁.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import ndtr, ndtri

from sdc_core import rng
from sdc_core.checks import check_bounded
from sdc_core.errors import SdcInputError
from sdc_core.households import household_codes
from sdc_core.tables.cell_key import KEY_RANGE, record_keys
from sdc_core.tables.cell_rules import P_RANGE, check_parameter
from sdc_core.tables.crosstab import CrossTable, record_cells

#: The noise table's default bound D, variance V and magnitude m (the noise is at most
#: m · D · x₁ = 30 % of the largest contribution, its standard deviation m · √V · x₁ = 10 %)
DEFAULT_BOUND, DEFAULT_VARIANCE, DEFAULT_MAGNITUDE = 3.0, 1.0, 0.1
#: The p of the p % rule whose sensitive cells get the least perturbation, by default
DEFAULT_P = 10.0
#: The largest bound D a noise table may have
MAX_BOUND = 100.0


def _quantiles(sigma: float, bound: float) -> np.ndarray:
    """The 256 quantiles at (k + ½)/256 of N(0, σ²) truncated to [−D, D]."""
    u = (np.arange(KEY_RANGE) + 0.5) / KEY_RANGE
    lo = float(ndtr(-bound / sigma))
    return np.asarray(sigma * ndtri(lo + u * (1.0 - 2.0 * lo)), dtype=np.float64)


def noise_table(bound: float = DEFAULT_BOUND, variance: float = DEFAULT_VARIANCE) -> np.ndarray:
    """The noise z(k) of each cell key k = 0 … 255: z(k) = G_σ⁻¹((k + ½)/256), G_σ the normal
    distribution N(0, σ²) truncated to [−D, D], with σ chosen (by bisection on log σ) so that
    the 256 values have variance (1/256) Σ_k z(k)² = V. Over uniform cell keys the noise then
    has mean 0 exactly (z(255 − k) = −z(k)), variance V and never leaves [−D, D]; z(k) is
    never 0, so every cell with a contribution is moved.

    Parameters
    ----------
    bound : float
        D, the largest |z| (0 < D ≤ 100).
    variance : float
        V: 0 < V < the variance of the 256 quantiles of the uniform distribution on [−D, D]
        (≈ D²/3), the most a distribution on [−D, D] of this shape reaches.

    Returns
    -------
    numpy.ndarray
        256 floats, increasing in k.

    Examples
    --------
    >>> z = noise_table(3.0, 1.0)
    >>> round(float(z.mean()), 12), round(float((z ** 2).mean()), 9), bool(abs(z).max() < 3)
    (0.0, 1.0, True)
    """
    d = check_bounded("the noise bound D", bound, MAX_BOUND)
    most = float(np.mean(_quantiles(1e9 * d, d) ** 2))
    v = check_bounded("the noise variance V", variance, most)
    if v >= most:
        raise SdcInputError(f"the noise variance V must be below {most:.4g} (≈ D²/3) for D = "
                            f"{d:g}, not {variance!r}")
    lo, hi = math.log(math.sqrt(v) / 2.0), math.log(1e9 * d)
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if float(np.mean(_quantiles(math.exp(mid), d) ** 2)) < v:
            lo = mid
        else:
            hi = mid
    z = _quantiles(math.exp((lo + hi) / 2.0), d)
    return (z - z[::-1]) / 2.0  # exactly antisymmetric: mean 0 to the last bit


def contributor_cell_keys(df: pd.DataFrame, table: CrossTable, seed: int,
                          household: str | None = None) -> np.ndarray:
    """The key of every cell and margin of ``table`` (its order): the sum mod 256 of the keys
    of its distinct contributors. A contributor is a record (key at its position in ``df``,
    :func:`sdc_core.tables.cell_key.record_keys`) or, with ``household``, a person, whose key is
    drawn from the id (:func:`sdc_core.rng.ids_from_column`) and counted once per cell however
    many of its records fall there. A record with a blank in a table column is in no cell.

    Parameters
    ----------
    df : pandas.DataFrame
        The records ``table`` was built from.
    table : CrossTable
    seed : int
    household : str, optional

    Returns
    -------
    numpy.ndarray
        int64 keys 0 … 255, one per row of ``table.frame`` (0 for an empty cell).

    Examples
    --------
    >>> from sdc_core.tables.crosstab import crosstab
    >>> r = pd.DataFrame({"a": ["x", "x", "y"], "y": [1.0, 2.0, 3.0]})
    >>> k = record_keys(rng.record_ids(3), 5)
    >>> c = contributor_cell_keys(r, crosstab(r, ["a"], "y"), 5)
    >>> c.tolist() == [(k[0] + k[1]) % 256, k[2], k.sum() % 256]
    True
    """
    flat, keep = record_cells(df, table)
    if household is None:
        ids = rng.record_ids(len(df))
        units = np.arange(len(df), dtype=np.int64)
    else:
        ids = rng.ids_from_column(df[household].to_numpy())
        units, _ = household_codes(df, household)
    units = np.asarray(units, dtype=np.int64)
    per_unit = np.zeros(int(units.max(initial=-1)) + 1)
    per_unit[units] = record_keys(ids, int(seed))  # a person's records share its key
    sums = table.unit_sums(flat, units[keep], per_unit)
    return sums.astype(np.int64) % KEY_RANGE


@dataclass(frozen=True)
class CkmSums:
    """A magnitude table by the cell key method (module docstring): ``frame`` one row per cell
    and margin of the cross table (its order) with ``sum`` (published), ``ckey``, ``noise`` z,
    ``perturbation`` (published − true), ``sensitive`` (by the p % rule) and ``status``; the
    parameters it was made with."""

    frame: pd.DataFrame
    bound: float
    variance: float
    magnitude: float
    p: float
    seed: int

    def parameters(self) -> dict[str, Any]:
        return {"D": self.bound, "V": self.variance, "m": self.magnitude, "p": self.p,
                "seed": self.seed}


def ckm_sums(df: pd.DataFrame, table: CrossTable, seed: int = 0, household: str | None = None,
             bound: float = DEFAULT_BOUND, variance: float = DEFAULT_VARIANCE,
             magnitude: float = DEFAULT_MAGNITUDE, p: float = DEFAULT_P) -> CkmSums:
    """The cell key method on the magnitude table ``table`` (module docstring).

    For each cell and margin c, with true sum X, largest contributions x₁ ≥ x₂ (per person with
    a household id) and key k (:func:`contributor_cell_keys`): δ = m · x₁ · z(k)
    (:func:`noise_table`); when c is sensitive by the p % rule, X − x₁ − x₂ < p/100 · x₁,
    δ = sign(z(k)) · max(|δ|, p/100 · x₁ + X − x₁ − x₂). Published X + δ. With m · D ≤ 1 and
    p ≤ 100 no published sum is negative (x₁ ≤ X, and X − p/100 · x₁ − (X − x₁ − x₂) ≥ 0).

    Parameters
    ----------
    df : pandas.DataFrame
        The records ``table`` was built from.
    table : CrossTable
        A magnitude table (``crosstab(df, columns, sum_column, unit=household)``).
    seed : int
        Seed of the record keys (the count method's, so the keys are shared).
    household : str, optional
        The table's unit: one key per person.
    bound, variance : float
        D and V of :func:`noise_table`.
    magnitude : float
        m: 0 < m ≤ 1/D.
    p : float
        The p % rule's p (0.1 … 100) whose sensitive cells get the least perturbation.

    Returns
    -------
    CkmSums

    Examples
    --------
    >>> from sdc_core.tables.crosstab import crosstab
    >>> r = pd.DataFrame({"a": list("xxxxyy"), "y": [10.0, 10, 10, 10, 90, 5]})
    >>> f = ckm_sums(r, crosstab(r, ["a"], "y"), seed=1).frame
    >>> f["sensitive"].tolist(), bool(abs(f["perturbation"].iloc[1]) >= 0.1 * 90)
    ([False, True, False], True)
    """
    if table.sum_column is None:
        raise SdcInputError("the cell key method for sums needs a column to sum")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) \
            or not 0 <= int(seed) <= rng.MAX_SEED:
        raise SdcInputError(f"seed must be a whole number from 0 to 2^64 − 1, not {seed!r}")
    z_of = noise_table(bound, variance)
    d = float(bound)
    m = check_bounded("the noise magnitude m", magnitude, 1.0 / d)
    p = check_parameter("p", p, P_RANGE)
    ckey = contributor_cell_keys(df, table, int(seed), household)
    frame = table.frame
    total = frame["sum"].to_numpy(dtype=np.float64)
    x1 = frame["x1"].to_numpy(dtype=np.float64)
    x2 = frame["x2"].to_numpy(dtype=np.float64)
    z = z_of[ckey]
    delta = m * x1 * z
    rest = total - x1 - x2
    sensitive = (x1 > 0) & (rest < p / 100.0 * x1)
    floor = p / 100.0 * x1 + rest
    delta = np.where(sensitive, np.sign(z) * np.maximum(np.abs(delta), floor), delta)
    out = frame[list(table.columns)].copy()
    out["sum"] = total + delta
    out["ckey"] = ckey
    out["noise"] = z
    out["perturbation"] = delta
    out["sensitive"] = sensitive
    out["margin"] = table.margin
    out["status"] = np.where(delta != 0, "perturbed", "published")
    return CkmSums(out, d, float(variance), m, p, int(seed))
