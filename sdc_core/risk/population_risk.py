"""Risk in the population, not only in the file: the uniqueness models of
:mod:`sdc_core.risk.population` and the log-linear risk of :mod:`sdc_core.risk.loglinear`, from
one table, its keys and how it was sampled (issue 27).

**Sampling.** Give the sampling fraction π (the file holds that share of the population) or the
population size N (then π = n/N). With a weight column and neither, N is the sum of the weights
(each weight the number of people a record stands for). Without a weight the log-linear models
take the constant fraction π; with one, its weights (π_k = f_k / Σ_{i∈k} w_i per cell).

**Missing keys.** The uniqueness models read the exact classes: a record with a missing key is
in a class of the records with the same values and the same blanks (a blank a category of its
own), whatever the risk page's reading of a blank; the log-linear models take a blank as a level
of its own too.

**Figures** (:meth:`PopulationRisk.to_json`, the ``population`` of ``risk --json``):
``sampling_fraction``, ``population_size``, ``sample_uniqueness`` (s_1/n), the share of the
population that is unique under ``zayatz``, ``pitman``, ``snb`` and Dankar's rule (``dankar``,
with ``dankar_model``), each with its count (``zayatz_count`` …) and, when a model is invalid,
its reason; and ``loglinear``: per method (``default``, ``CE``, ``PML``, main effects of the
keys) sdcMicro's r1 = τ1/c and r2 = τ2/c (c the cells kept, sdcMicro's normalisation), the
totals τ1 (expected sample uniques that are population unique) and τ2 (expected correct
matches of sample uniques), and the same per sample unique (τ/s_1), the other reading.
``population_uniqueness_percent`` is Dankar's share in percent: the figure a sweep's target
reads.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sdc_core.classes import ClassSizes, check_weights
from sdc_core.errors import SdcInputError
from sdc_core.risk.loglinear import LogLinearRisk, loglinear_risk
from sdc_core.risk.population import (
    ClassHistogram,
    PopulationUniqueness,
    UniquenessCurve,
    class_histogram,
    histogram_of_classes,
    population_uniqueness,
    uniqueness_curve,
)

#: The log-linear methods reported (sdcMicro's modRisk names).
LOGLINEAR_METHODS = ("default", "CE", "PML")


@dataclass(frozen=True)
class Sampling:
    """How the file was drawn: π and N (one given, the other derived), and where N came from."""

    fraction: float
    population: float
    source: str  # "fraction", "population" or "weights"


def sampling(df: pd.DataFrame, weight: str | None = None,
             sampling_fraction: float | None = None,
             population_size: float | None = None) -> Sampling | None:
    """π and N from the one given (module docstring), the weights' sum when neither is and there
    is a weight column; None without any of them."""
    n = len(df)
    if n == 0:
        raise SdcInputError("the table has no rows")
    if sampling_fraction is not None and population_size is not None:
        raise SdcInputError("give the sampling fraction or the population size, not both")
    if sampling_fraction is not None:
        f = float(sampling_fraction)
        if not (math.isfinite(f) and 0 < f <= 1):
            raise SdcInputError(f"the sampling fraction must lie in (0, 1], not {f:g}")
        return Sampling(f, n / f, "fraction")
    if population_size is not None:
        big_n = float(population_size)
        if not (math.isfinite(big_n) and big_n >= n):
            raise SdcInputError(f"the population size must be at least the {n:,} records of "
                                f"the file, not {big_n:g}")
        return Sampling(n / big_n, big_n, "population")
    if weight is not None:
        total = float(check_weights(df, weight).sum())
        if total < n:
            raise SdcInputError(f"the weights of '{weight}' sum to {total:g}, fewer people than "
                                f"the {n:,} records: give the population size")
        return Sampling(n / total, total, "weights")
    return None


@dataclass(frozen=True)
class PopulationRisk:
    """The population models' figures for one table (module docstring).

    Made by :func:`population_risk`. :meth:`to_json` gives every figure as plain Python values;
    :attr:`percent` is Dankar's share of population uniques in percent.

    Parameters
    ----------
    sampling : Sampling
        The sampling fraction, the population size and where they came from.
    uniqueness : PopulationUniqueness
        The Zayatz, Pitman, SNB and Dankar estimates.
    loglinear : dict of str to LogLinearRisk or str
        Per log-linear method, its risks, or the reason it was not fitted.
    histogram : ClassHistogram
        The class-size histogram the models read.

    Examples
    --------
    >>> from sdc_core import example, load_example, risk_profile
    >>> df, qi = load_example(), example("actg175").roles.qi
    >>> from sdc_core import population_risk
    >>> pop = population_risk(df, qi, population_size=21390, loglinear=False)
    >>> pop.sampling.fraction, pop.to_json()["dankar_model"]
    (0.1, 'zayatz')
    """

    sampling: Sampling
    uniqueness: PopulationUniqueness
    loglinear: dict[str, LogLinearRisk | str]
    histogram: ClassHistogram

    @property
    def percent(self) -> float:
        """Dankar's share of population uniques, in percent."""
        share = self.uniqueness.dankar.share
        return 100.0 * (share if share is not None else math.nan)

    def to_json(self) -> dict[str, Any]:
        """The figures of the module docstring as plain Python values (JSON-ready)."""
        out = self.uniqueness.to_json()
        out["population_source"] = self.sampling.source
        out["population_uniqueness_percent"] = self.percent
        out["loglinear"] = {}
        for method, r in self.loglinear.items():
            if isinstance(r, str):
                out["loglinear"][method] = {"error": r}
                continue
            uniques = r.sample_uniques or 1  # no sample unique: both totals are 0
            out["loglinear"][method] = {**r.to_json(), "r1_per_unique": r.tau1 / uniques,
                                        "r2_per_unique": r.tau2 / uniques}
        return out


def population_risk(df: pd.DataFrame, keys: Sequence[str], weight: str | None = None,
                    sampling_fraction: float | None = None,
                    population_size: float | None = None, loglinear: bool = True,
                    classes: ClassSizes | None = None) -> PopulationRisk | None:
    """Risk in the population: the uniqueness models and the log-linear risks.

    The share of the *population* unique on ``keys``, under the Zayatz, Pitman and SNB models and
    Dankar's rule, and (``loglinear``) sdcMicro's log-linear risks r1 = τ1/c and r2 = τ2/c, from
    one table and how it was sampled (module docstring). None when nothing says how the file was
    sampled. ``classes``: the class sizes of a risk profile on the same keys, whose histogram is
    read instead of counting the classes again.

    Parameters
    ----------
    df : pandas.DataFrame
        The sample.
    keys : sequence of str
        The key columns.
    weight : str, optional
        A sampling-weight column; without a fraction or a size, N is the weights' sum.
    sampling_fraction : float, optional
        The share π of the population the file holds, in (0, 1].
    population_size : float, optional
        The population size N (then π = n/N); not with ``sampling_fraction``.
    loglinear : bool, default True
        Fit the log-linear models too.
    classes : ClassSizes, optional
        The classes of a risk profile on the same keys.

    Returns
    -------
    PopulationRisk or None
        The models' figures, or None without a fraction, a size or a weight.

    Raises
    ------
    SdcInputError
        When both a fraction and a size are given, the fraction is not in (0, 1], the size or the
        weights' sum is smaller than the number of records, a column is unknown, the weights are
        not positive numbers, or the table has no rows.

    Examples
    --------
    >>> from sdc_core import example, load_example, risk_profile
    >>> df, qi = load_example(), example("actg175").roles.qi
    >>> from sdc_core import population_risk
    >>> pop = population_risk(df, qi, sampling_fraction=0.1, loglinear=False)
    >>> figures = pop.to_json()
    >>> figures["population_size"], figures["sample_uniques"], round(pop.percent, 4)
    (21390.0, 29, 0.0928)
    >>> population_risk(df, qi) is None
    True
    """
    s = sampling(df, weight, sampling_fraction, population_size)
    if s is None:
        return None
    hist = class_histogram(df, keys) if classes is None else histogram_of_classes(classes)
    models = population_uniqueness(hist, population_size=s.population)
    risks: dict[str, LogLinearRisk | str] = {}
    if loglinear:
        for method in LOGLINEAR_METHODS:
            try:
                risks[method] = loglinear_risk(
                    df, keys, method=method,
                    **({"weight": weight} if weight is not None and s.source == "weights"
                       else {"fraction": s.fraction}))
            except SdcInputError as err:  # a key table too large: the models still stand
                risks[method] = str(err)
    return PopulationRisk(s, models, risks, hist)


def sensitivity(risk: PopulationRisk, points: int = 40) -> UniquenessCurve:
    """Every model against the sampling fraction from 0.001 to 1, with the chosen fraction
    among the points (the page marks it), from the same histogram."""
    fractions = np.unique(np.append(np.logspace(-3.0, 0.0, points), risk.sampling.fraction))
    return uniqueness_curve(risk.histogram, fractions=fractions)
