"""Population uniqueness models (sdc_core.risk.population): ARX's reference values on its adult
file, independent re-computations of each model's defining equations, and properties."""

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import nbinom

from sdc_core.errors import SdcInputError
from sdc_core.risk.population import (
    class_histogram,
    fit_pitman,
    fit_snb,
    histogram,
    population_uniqueness,
    uniqueness_curve,
)

ADULT = Path("/work/shared/data/adult.csv")

# ARX's TestRiskMetrics on its adult file (all nine columns as keys).
SAMPLE_UNIQUENESS = 0.5142895033485844
AVERAGE_PROSECUTOR = 0.6465751607983555
DANKAR_001 = 0.1446083531167384      # the Pitman model
PITMAN_01 = 0.27684993883653597
ZAYATZ_01 = 0.3207402393466189
DANKAR_02 = 0.3577099234829125
# Pitman's maximum likelihood here and ARX's differ in the last digits: 1.2e-12 and 2.1e-12
# relative on the shares (the Zayatz values agree to 2e-16).
PITMAN_REL = 5e-12


@pytest.fixture(scope="module")
def adult():
    if not ADULT.exists():
        pytest.skip("ARX's adult file is not at /work/shared/data")
    df = pd.read_csv(ADULT, sep=";", dtype=str, keep_default_na=False)
    return class_histogram(df, list(df.columns))


# --- ARX's reference values ------------------------------------------------------------------

def test_adult_sample_figures(adult):
    assert adult.n == 30_162
    assert adult.uniques / adult.n == SAMPLE_UNIQUENESS
    assert adult.u / adult.n == pytest.approx(AVERAGE_PROSECUTOR, rel=1e-15)
    r = population_uniqueness(adult, 0.5)
    assert r.sample_uniqueness == SAMPLE_UNIQUENESS


def test_adult_dankar_at_one_percent_is_pitman(adult):
    r = population_uniqueness(adult, 0.01)
    assert r.dankar_model == "pitman"
    assert r.dankar.share == pytest.approx(DANKAR_001, rel=PITMAN_REL)
    assert r.dankar.share == r.pitman.share


def test_adult_ten_percent(adult):
    r = population_uniqueness(adult, 0.1)
    assert r.pitman.share == pytest.approx(PITMAN_01, rel=PITMAN_REL)
    assert r.zayatz.share == pytest.approx(ZAYATZ_01, rel=1e-14)
    assert r.dankar_model == "pitman"
    assert r.dankar.share == r.pitman.share


def test_adult_twenty_percent_is_zayatz(adult):
    r = population_uniqueness(adult, 0.2)
    assert r.dankar.share == pytest.approx(DANKAR_02, rel=1e-14)
    assert r.dankar_model == "zayatz"
    assert r.snb.share is not None and r.snb.share >= r.zayatz.share


def test_adult_census_is_the_sample_uniqueness(adult):
    r = population_uniqueness(adult, 1.0)
    assert r.dankar.share == pytest.approx(SAMPLE_UNIQUENESS, rel=1e-15)
    assert r.zayatz.share == pytest.approx(SAMPLE_UNIQUENESS, rel=1e-15)
    assert r.snb.share == pytest.approx(SAMPLE_UNIQUENESS, rel=1e-12)
    # Hoshino's large-N form does not reduce to s_1/n at N = n (a regression value, not ARX's).
    assert r.pitman.share == pytest.approx(0.5300239369447415, rel=1e-9)


def test_adult_population_size_equals_fraction(adult):
    a = population_uniqueness(adult, 0.1)
    b = population_uniqueness(adult, population_size=301_620)
    assert b.sampling_fraction == pytest.approx(0.1, rel=1e-15)
    assert b.zayatz.share == pytest.approx(a.zayatz.share, rel=1e-14)
    assert b.pitman.share == pytest.approx(a.pitman.share, rel=1e-12)
    assert b.zayatz.count == pytest.approx(a.zayatz.share * 301_620, rel=1e-14)


def test_adult_curve_agrees_with_single_fractions(adult):
    c = uniqueness_curve(adult, [0.01, 0.1, 0.2, 1.0])
    assert c.dankar_model == ("pitman", "pitman", "zayatz", "zayatz")
    for i, f in enumerate(c.fractions):
        r = population_uniqueness(adult, f)
        assert c.zayatz[i] == pytest.approx(r.zayatz.share, rel=1e-14)
        assert c.pitman[i] == pytest.approx(r.pitman.share, rel=1e-14)
        assert c.snb[i] == pytest.approx(r.snb.share, rel=1e-9)
        assert c.dankar[i] == pytest.approx(r.dankar.share, rel=1e-9)
    assert c.dankar[-1] == pytest.approx(SAMPLE_UNIQUENESS, rel=1e-15)


def test_adult_pitman_scores_vanish(adult):
    fit = fit_pitman(adult)
    g1, g2 = brute_scores(adult, fit.theta, fit.alpha)
    assert abs(g1) < 1e-12 * brute_scale(adult, fit.theta, fit.alpha)[0]
    assert abs(g2) < 1e-12 * brute_scale(adult, fit.theta, fit.alpha)[1]


# --- independent re-computations ---------------------------------------------------------------

def brute_scores(h, theta, alpha):
    """Pitman's score equations with every term written out (no digamma)."""
    i = np.arange(1, h.u, dtype=np.float64)
    g1 = np.sum(1.0 / (theta + i * alpha)) - np.sum(1.0 / (theta + np.arange(1, h.n)))
    inner = sum(c * np.sum(1.0 / (np.arange(1, j) - alpha))
                for j, c in zip(h.sizes, h.counts) if j >= 2)
    g2 = np.sum(i / (theta + i * alpha)) - inner
    return g1, g2


def brute_scale(h, theta, alpha):
    i = np.arange(1, h.u, dtype=np.float64)
    return np.sum(1.0 / (theta + i * alpha)), np.sum(i / (theta + i * alpha))


def zayatz_exact(sizes_counts, n, big_n):
    """Zayatz's share with exact binomial coefficients (whole N)."""
    def p1(j):
        return Fraction(j * math.comb(big_n - j, n - 1), math.comb(big_n, n))
    s1 = sizes_counts.get(1, 0)
    den = sum(c * p1(j) for j, c in sizes_counts.items())
    return float(Fraction(s1) * s1 * p1(1) / den / n)


@pytest.mark.parametrize("big_n", [47, 60, 200, 5000])
def test_zayatz_matches_exact_hypergeometric(big_n):
    hist = {1: 9, 2: 5, 3: 2, 5: 1, 7: 2}
    n = sum(j * c for j, c in hist.items())
    r = population_uniqueness(hist, population_size=big_n)
    assert r.zayatz.share == pytest.approx(zayatz_exact(hist, n, big_n), rel=1e-13)


def test_snb_moment_equations_hold():
    hist = {1: 40, 2: 12, 3: 6, 4: 3, 6: 2, 10: 1}
    h = histogram(hist)
    for f in (0.05, 0.3, 0.8):
        fit = fit_snb(h, f)
        assert fit.reason is None
        # population sizes F = 1 + NB(k, p), each record kept with probability f
        big = np.arange(1, 20_000)
        pf = nbinom.pmf(big - 1, fit.k, fit.p)
        assert pf.sum() == pytest.approx(1.0, abs=1e-9)
        p0 = np.sum(pf * (1 - f) ** big)
        p1 = np.sum(pf * big * f * (1 - f) ** (big - 1))
        ef = np.sum(pf * big * f)
        assert fit.classes * (1 - p0) == pytest.approx(h.u, rel=1e-8)
        assert fit.classes * p1 == pytest.approx(h.uniques, rel=1e-8)
        assert fit.classes * ef == pytest.approx(h.n, rel=1e-8)
        r = population_uniqueness(h, f)
        assert r.snb.count == pytest.approx(fit.classes * nbinom.pmf(0, fit.k, fit.p), rel=1e-9)


# --- properties --------------------------------------------------------------------------------

arbitrary = st.dictionaries(st.integers(1, 25), st.integers(0, 60), min_size=1, max_size=8) \
    .filter(lambda d: sum(j * c for j, c in d.items()) > 0)


@st.composite
def power_laws(draw):
    """s_j ≈ s_1 · j^(−a) plus a little noise: key tables look like this, and Pitman and SNB
    are mostly valid on them (arbitrary histograms mostly leave Pitman's α outside (0, 1))."""
    a = draw(st.floats(1.0, 3.5))
    s1 = draw(st.integers(5, 2000))
    top = draw(st.integers(3, 40))
    noise = draw(st.lists(st.integers(0, 2), min_size=top, max_size=top))
    j = np.arange(1, top + 1)
    return {int(x): int(c) for x, c in zip(j, np.floor(s1 * j ** -a).astype(int) + noise)}


histograms = st.one_of(arbitrary, power_laws())


@settings(max_examples=60, deadline=None, derandomize=True)
@given(histograms)
def test_census_gives_the_sample_uniqueness(hist):
    h = histogram(hist)
    su = h.uniques / h.n
    for f in (1.0, 1.0 - 1e-9):
        r = population_uniqueness(h, f)
        assert r.zayatz.share == pytest.approx(su, abs=1e-6)
        if r.snb.share is not None:
            assert r.snb.share == pytest.approx(su, abs=1e-6)
        assert r.dankar.share == pytest.approx(su, abs=1e-6)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(histograms, st.sampled_from([0.001, 0.01, 0.05, 0.1, 0.2, 0.5, 0.9, 1.0]))
def test_shares_are_shares_when_valid(hist, f):
    r = population_uniqueness(hist, f)
    for name in ("zayatz", "pitman", "snb", "dankar"):
        est = getattr(r, name)
        if est.share is None:
            assert est.count is None and est.reason
        else:
            assert 0.0 <= est.share <= 1.0
            assert est.count == pytest.approx(est.share * r.population_size, rel=1e-12)
    assert r.zayatz.share <= r.sample_uniqueness * (1 + 1e-12)
    if r.dankar_model is not None:
        assert r.dankar.share == getattr(r, r.dankar_model).share


@settings(max_examples=60, deadline=None, derandomize=True)
@given(power_laws())
def test_pitman_likelihood_equations_hold_on_power_laws(hist):
    check_pitman_scores(hist)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(arbitrary)
def test_pitman_likelihood_equations_hold(hist):
    check_pitman_scores(hist)


def check_pitman_scores(hist):
    h = histogram(hist)
    fit = fit_pitman(h)
    if fit.reason is not None:
        assert fit.theta is None and fit.alpha is None
        return
    assert 0 < fit.alpha < 1 and fit.theta > -fit.alpha
    g1, g2 = brute_scores(h, fit.theta, fit.alpha)
    s1, s2 = brute_scale(h, fit.theta, fit.alpha)
    assert abs(g1) <= 1e-9 * s1
    assert abs(g2) <= 1e-9 * max(s2, 1.0)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.dictionaries(st.integers(2, 25), st.integers(1, 60), min_size=1, max_size=6),
       st.sampled_from([0.001, 0.05, 0.1, 0.3, 1.0]))
def test_no_sample_uniques_gives_zero(hist, f):
    r = population_uniqueness(hist, f)
    assert r.sample_uniques == 0
    assert r.zayatz.share == 0.0
    assert r.dankar.share == 0.0 and r.dankar.count == 0.0
    assert r.dankar_model is None
    assert r.snb.share is None and r.snb.reason


def test_all_unique_sample_has_no_pitman_nor_snb():
    r = population_uniqueness({1: 50}, 0.01)
    assert r.pitman.share is None and "unique" in r.pitman.reason
    assert r.snb.share is None
    assert r.dankar_model == "zayatz"
    out = r.to_json()
    assert out["pitman"] is None and out["pitman_count"] is None
    assert "pitman" in out["reasons"] and "snb" in out["reasons"]
    json.dumps(out)


# --- inputs, the table and the curve -----------------------------------------------------------

def test_histogram_forms_agree():
    a = histogram({1: 3, 2: 2, 4: 0})
    b = histogram(([2, 1, 1], [2, 1, 2]))
    assert a.sizes.tolist() == b.sizes.tolist() == [1, 2]
    assert a.counts.tolist() == b.counts.tolist() == [3, 2]
    assert (a.n, a.u, a.uniques) == (7, 5, 3)


def test_class_histogram_missing_value_is_a_category():
    df = pd.DataFrame({"a": ["x", "x", None, None, "y", "y", "y"],
                       "b": [1, 1, 2, 2, 3, 3, np.nan]})
    h = class_histogram(df, ["a", "b"])
    assert h.to_json() == {"1": 1, "2": 3}
    r = population_uniqueness(h, 0.5)
    assert r.sample_uniques == 1 and r.sample_size == 7


def test_to_json_keys():
    out = population_uniqueness({1: 10, 2: 5, 3: 3, 8: 1}, 0.05).to_json()
    for key in ("sampling_fraction", "population_size", "sample_uniqueness", "zayatz", "pitman",
                "snb", "dankar", "dankar_model", "zayatz_count", "pitman_count", "snb_count",
                "dankar_count", "reasons"):
        assert key in out
    json.dumps(out)


def test_default_curve_grid():
    c = uniqueness_curve({1: 30, 2: 10, 3: 4, 5: 2})
    assert c.fractions[0] == pytest.approx(0.001) and c.fractions[-1] == 1.0
    assert np.all(np.diff(np.log(c.fractions)) == pytest.approx(np.log(1000) / 39))
    assert c.dankar[-1] == pytest.approx(c.sample_uniqueness, rel=1e-12)
    out = c.to_json()
    assert len(out["dankar"]) == 40
    json.dumps(out)


@pytest.mark.parametrize("kwargs, message", [
    ({"sampling_fraction": 0.0}, "(0, 1]"),
    ({"sampling_fraction": 1.5}, "(0, 1]"),
    ({"sampling_fraction": "a"}, "number"),
    ({"population_size": 5}, "at least the sample size"),
    ({"population_size": float("nan")}, "at least the sample size"),
    ({}, "either"),
    ({"sampling_fraction": 0.5, "population_size": 100}, "either"),
])
def test_bad_fraction_or_size(kwargs, message):
    with pytest.raises(SdcInputError, match=message.replace("(", r"\(").replace("]", r"\]")) \
            as info:
        population_uniqueness({1: 4, 2: 3}, **kwargs)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("hist, message", [
    ({0: 3}, "≥ 1"),
    ({1: -2}, "≥ 0"),
    ({1.5: 2}, "whole"),
    ({1: 0}, "no records"),
    (([1, 2], [3]), "sizes but"),
    ("abc", "mapping"),
])
def test_bad_histograms(hist, message):
    with pytest.raises(SdcInputError, match=message):
        population_uniqueness(hist, 0.1)


def test_bad_curve_fractions_and_table():
    with pytest.raises(SdcInputError, match="sampling fractions"):
        uniqueness_curve({1: 3, 2: 1}, [0.1, 0.0])
    with pytest.raises(SdcInputError, match="no rows"):
        class_histogram(pd.DataFrame({"a": []}), ["a"])
    with pytest.raises(SdcInputError, match="unknown"):
        class_histogram(pd.DataFrame({"a": [1]}), ["b"])


def test_histogram_of_a_risk_profiles_classes():
    from sdc_core.risk import risk_profile
    from sdc_core.risk.population import histogram_of_classes

    rng = np.random.default_rng(3)
    df = pd.DataFrame({"a": rng.integers(0, 4, 300).astype(float),
                       "b": rng.choice(["x", "y", "z"], 300)})
    df.loc[::7, "a"] = np.nan
    for na in ("wildcard", "category"):
        h = histogram_of_classes(risk_profile(df, ["a", "b"], na=na).classes)
        assert h.to_json() == class_histogram(df, ["a", "b"]).to_json()


@pytest.mark.parametrize("theta, alpha", [(1e6, 0.5), (500.5, 0.5), (1001.0, 0.5), (3.0, 1e-9),
                                          (0.2, 0.3), (-0.2, 0.3)])
def test_pitman_class_sums_without_cancellation(theta, alpha):
    from sdc_core.risk.population import _class_sums, _PitmanData

    h = histogram({1: 30, 2: 12, 3: 5, 7: 3})       # u = 50
    d = _PitmanData.of(h)
    i = np.arange(1, h.u, dtype=np.float64)
    s, t = _class_sums(d, theta, alpha)
    assert s == pytest.approx(np.sum(1.0 / (theta + i * alpha)), rel=1e-12)
    assert t == pytest.approx(np.sum(i / (theta + i * alpha)), rel=1e-12)
