"""Log-linear risk (sdcMicro's ``modRisk``): its test values and properties of the definitions."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdc_core.errors import SdcInputError
from sdc_core.risk import loglinear
from sdc_core.risk.loglinear import loglinear_risk

KEYS = ["Var1", "Var2", "Var3"]


@pytest.fixture()
def modrisk_data():
    """sdcMicro's ``tests/testthat/test_modRisks.R``."""
    return pd.DataFrame({"Var1": list("BCBCCABCBB"), "Var2": [2, 1, 2, 2, 1, 2, 1, 1, 1, 2],
                         "Var3": [5, 4, 4, 5, 4, 4, 3, 3, 2, 2], "w": [100.0] * 10})


@pytest.mark.parametrize("method", ["default", "IPF"])
@pytest.mark.parametrize("fit", ["glm", "ipf"])
def test_sdcmicro_test_values(modrisk_data, method, fit):
    r = loglinear_risk(modrisk_data, KEYS, weight="w", method=method, fit=fit)
    assert (round(r.r1, 7), round(r.r2, 7)) == (0.5529160, 0.7053842)
    assert (r.cells, r.occupied_cells, r.table_cells, r.sample_uniques) == (9, 9, 24, 8)
    assert r.tau1 == pytest.approx(9 * r.r1) and r.tau2 == pytest.approx(9 * r.r2)
    b = loglinear_risk(modrisk_data, KEYS, weight="w", method=method, fit=fit, bound=1.5)
    assert (round(b.r1, 3), round(b.r2, 3)) == (0.622, 0.794)
    assert b.cells == 8
    assert (b.tau1, b.tau2) == pytest.approx((r.tau1, r.tau2))


def test_test_values_with_a_constant_fraction(modrisk_data):
    r = loglinear_risk(modrisk_data, KEYS, fraction=0.01)
    assert (round(r.r1, 7), round(r.r2, 7)) == (0.5529160, 0.7053842)


def test_test_values_by_hand(modrisk_data):
    """Main effects without offset: the fitted count is n·Π_j (margin_j / n) (independence);
    μ = (1 − 0.01)·f̂ on the 8 sample uniques, divided by the 9 occupied cells."""
    df = modrisk_data
    n = len(df)
    margins = [df[k].map(df[k].value_counts() / n).to_numpy() for k in KEYS]
    fitted = n * np.prod(margins, axis=0)
    unique = ~df.duplicated(KEYS, keep=False).to_numpy()
    mu = 0.99 * fitted[unique]
    r = loglinear_risk(df, KEYS, weight="w")
    assert r.tau1 == pytest.approx(np.exp(-mu).sum(), rel=1e-9)
    assert r.tau2 == pytest.approx(((1 - np.exp(-mu)) / mu).sum(), rel=1e-9)
    assert r.r1 == pytest.approx(np.exp(-mu).sum() / 9, rel=1e-9)


def test_ce_and_pml_are_on_the_population_scale(modrisk_data):
    """With a constant fraction π, CE and PML both give λ̂ = f̂/π, so μ = f̂(1 − π)/π."""
    ce = loglinear_risk(modrisk_data, KEYS, weight="w", method="CE")
    pml = loglinear_risk(modrisk_data, KEYS, weight="w", method="PML")
    df = modrisk_data
    margins = [df[k].map(df[k].value_counts() / 10).to_numpy() for k in KEYS]
    fitted = 10 * np.prod(margins, axis=0)[~df.duplicated(KEYS, keep=False).to_numpy()]
    mu = fitted * 0.99 / 0.01
    for r in (ce, pml):
        assert r.tau1 == pytest.approx(np.exp(-mu).sum(), rel=1e-6)
        assert r.tau2 == pytest.approx(((1 - np.exp(-mu)) / mu).sum(), rel=1e-9)
        assert r.r2 == pytest.approx(r.tau2 / 9)


def test_to_json(modrisk_data):
    out = loglinear_risk(modrisk_data, KEYS, weight="w", formula="~ Var1*Var2 + Var3").to_json()
    assert out["method"] == "default" and out["formula"] == "Var3 + Var1*Var2"
    assert out["bound"] is None
    assert set(out) == {"method", "formula", "bound", "r1", "r2", "tau1", "tau2", "cells",
                        "occupied_cells", "table_cells", "sample_uniques", "n_records"}
    assert loglinear_risk(modrisk_data, KEYS, weight="w", bound=2).to_json()["bound"] == 2.0


# --- properties ---------------------------------------------------------------------------

@st.composite
def tables(draw, max_rows=40):
    n = draw(st.integers(2, max_rows))
    cards = draw(st.lists(st.integers(1, 4), min_size=3, max_size=3))
    data = {f"k{j}": draw(st.lists(st.integers(0, c - 1), min_size=n, max_size=n))
            for j, c in enumerate(cards)}
    data["w"] = draw(st.lists(st.floats(1, 60), min_size=n, max_size=n))
    return pd.DataFrame(data)


TKEYS = ["k0", "k1", "k2"]
METHODS = ["default", "IPF", "CE", "PML"]


@settings(max_examples=30, deadline=None)
@given(tables(), st.sampled_from(METHODS), st.floats(0.01, 1.0))
def test_saturated_model_closed_forms(df, method, pi):
    """The saturated model fits every cell exactly: f̂_k = f_k, so a sample unique has
    μ = 1 − π ("default", "IPF": the sample scale) or μ = (1 − π)/π (CE, PML)."""
    r = loglinear_risk(df, TKEYS, fraction=pi, method=method, formula="k0*k1*k2")
    su = r.sample_uniques
    mu = (1 - pi) if method in ("default", "IPF") else (1 - pi) / pi
    assert r.tau1 == pytest.approx(su * math.exp(-mu), rel=1e-6, abs=1e-9)
    expected = su * (-math.expm1(-mu) / mu if mu > 0 else 1.0)
    assert r.tau2 == pytest.approx(expected, rel=1e-6, abs=1e-9)


@settings(max_examples=30, deadline=None)
@given(tables(), st.sampled_from(METHODS), st.sampled_from([None, "k0*k1 + k2", "k0:k2 + k1"]),
       st.sampled_from([math.inf, 1, 1.5, 3]))
def test_risks_in_range_and_ordered(df, method, formula, bound):
    r = loglinear_risk(df, TKEYS, weight="w", method=method, formula=formula, bound=bound)
    # P(F = 1 | f = 1) ≤ E[1/F | f = 1] ≤ 1 cell by cell
    assert 0 <= r.tau1 <= r.tau2 + 1e-12 <= r.sample_uniques + 1e-9
    assert 0 <= r.r1 <= r.r2 + 1e-12 <= 1 + 1e-12
    assert r.sample_uniques <= r.cells <= r.occupied_cells <= r.table_cells


@settings(max_examples=20, deadline=None)
@given(tables(), st.sampled_from(METHODS), st.sampled_from([None, "k0*k1 + k2", "k0*k1*k2"]))
def test_glm_and_ipf_agree(df, method, formula):
    """For a hierarchical model the Poisson ML fit is the IPF fit (offset as starting table)."""
    glm = loglinear_risk(df, TKEYS, weight="w", method=method, formula=formula, fit="glm")
    ipf = loglinear_risk(df, TKEYS, weight="w", method=method, formula=formula, fit="ipf")
    assert ipf.tau1 == pytest.approx(glm.tau1, rel=1e-5, abs=1e-7)
    assert ipf.tau2 == pytest.approx(glm.tau2, rel=1e-5, abs=1e-7)


@settings(max_examples=20, deadline=None)
@given(tables(), st.sampled_from(METHODS))
def test_higher_sampling_fraction_raises_the_risk(df, method):
    """The same sample drawn from a smaller population (higher π, lower weights): fewer unseen
    records per cell, so a sample unique is more often population unique."""
    figures = [loglinear_risk(df, TKEYS, fraction=pi, method=method)
               for pi in (0.01, 0.1, 0.5, 1.0)]
    for lo, hi in zip(figures, figures[1:]):
        assert lo.tau1 <= hi.tau1 + 1e-9 and lo.tau2 <= hi.tau2 + 1e-9
    # a census: every sample unique is a population unique
    assert figures[-1].tau1 == pytest.approx(figures[-1].sample_uniques)


def test_ce_equals_pml_with_a_constant_fraction():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({k: rng.integers(0, 4, 60) for k in TKEYS})
    ce = loglinear_risk(df, TKEYS, fraction=0.2, method="CE")
    pml = loglinear_risk(df, TKEYS, fraction=0.2, method="PML")
    assert (ce.tau1, ce.tau2) == pytest.approx((pml.tau1, pml.tau2), rel=1e-8)


def test_missing_key_is_a_level():
    df = pd.DataFrame({"a": [1, 1, None, 2], "b": ["x", "y", "x", "x"]})
    r = loglinear_risk(df, ["a", "b"], fraction=0.5)
    assert (r.table_cells, r.occupied_cells, r.sample_uniques) == (6, 4, 4)


# --- real tables --------------------------------------------------------------------------

def test_francdat_with_its_weights(francdat):
    keys = ["Key1", "Key2", "Key3", "Key4"]
    for method in METHODS:
        r = loglinear_risk(francdat, keys, weight="w", method=method)
        assert r.n_records == 8 and r.occupied_cells == 6 and r.sample_uniques == 4
        assert 0 <= r.r1 <= r.r2 <= 1 and 0 <= r.tau1 <= r.tau2 <= 4


def test_actg_with_a_constant_fraction(actg):
    keys = ["age", "gender", "race"]
    out = {}
    for method in METHODS:
        out[method] = r = loglinear_risk(actg, keys, fraction=0.01, method=method)
        assert r.n_records == 2139 and r.table_cells == 59 * 2 * 2 and r.occupied_cells == 182
        assert r.sample_uniques == 29
        assert 0 <= r.r1 <= r.r2 <= 1
    assert out["IPF"].tau1 == pytest.approx(out["default"].tau1, rel=1e-8)
    assert out["CE"].tau2 == pytest.approx(out["PML"].tau2, rel=1e-8)
    # the population scale: 100 times as many unseen records, far lower risk
    assert out["CE"].tau2 < out["default"].tau2


# --- validation ---------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, message", [
    ({"keys": ["nope"], "weight": "w"}, "unknown key column(s): nope"),
    ({"keys": [], "weight": "w"}, "at least one key column"),
    ({"method": "weightedLLM", "weight": "w"}, "method must be one of"),
    ({"fit": "newton", "weight": "w"}, "fit must be one of"),
    ({}, "give either a weight column or a constant sampling fraction"),
    ({"weight": "w", "fraction": 0.1}, "give either"),
    ({"fraction": 0}, "fraction must lie in (0, 1]"),
    ({"fraction": 1.5}, "fraction must lie in (0, 1]"),
    ({"weight": "Var1"}, "is also a key"),
    ({"weight": "small"}, "weight column 'small' has values below 1"),
    ({"weight": "w", "bound": 0.5}, "bound must be a number ≥ 1"),
    ({"weight": "w", "bound": "x"}, "bound must be a number ≥ 1"),
    ({"weight": "w", "formula": "Var1 + Var2 + Age"}, "names 'Age', not a key"),
    ({"weight": "w", "formula": "Var1 + Var2"}, "leaves out the key(s) Var3"),
    ({"weight": "w", "formula": "Var1*Var2:Var3"}, "mixes '*' and ':'"),
    ({"weight": "w", "formula": "Var1 + + Var2"}, "has an empty term"),
    ({"weight": "w", "formula": 3}, "formula must be text"),
])
def test_one_line_errors(modrisk_data, kwargs, message):
    df = modrisk_data.assign(small=0.5)
    kwargs = {"keys": KEYS} | kwargs
    with pytest.raises(SdcInputError) as err:
        loglinear_risk(df, **kwargs)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_limits(modrisk_data, monkeypatch):
    monkeypatch.setattr(loglinear, "MAX_CELLS", 20)
    with pytest.raises(SdcInputError, match="the key table has 24 cells"):
        loglinear_risk(modrisk_data, KEYS, weight="w")
    monkeypatch.setattr(loglinear, "MAX_CELLS", 100)
    monkeypatch.setattr(loglinear, "MAX_DESIGN", 100)
    with pytest.raises(SdcInputError, match="use fit='ipf'"):
        loglinear_risk(modrisk_data, KEYS, weight="w", fit="glm")
    assert loglinear_risk(modrisk_data, KEYS, weight="w").cells == 9


def test_not_a_table():
    with pytest.raises(SdcInputError, match="must be a table"):
        loglinear_risk([1, 2], ["a"], fraction=0.5)
    with pytest.raises(SdcInputError, match="no records"):
        loglinear_risk(pd.DataFrame({"a": []}), ["a"], fraction=0.5)
