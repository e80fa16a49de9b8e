"""Table fidelity (TVD, Hellinger, false zeros) and pMSE (sdc_core.utility.fidelity), checked on
hand-worked tables, SDMetrics' own cases and statsmodels' fitted propensities."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st

from sdc_core.data.io import read_table
from sdc_core.errors import SdcInputError
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.utility.fidelity import PmseResult, TableResult, pmse, table_fidelity
from tests.conftest import SHARED_DATA


def one(original: pd.DataFrame, protected: pd.DataFrame, columns: list[str],
        **kw) -> TableResult:
    """The table of exactly ``columns``."""
    return next(r for r in table_fidelity(original, protected, columns, **kw)
                if r.columns == tuple(columns))


# --- tables ------------------------------------------------------------------------------------

def test_one_way_table_worked_by_hand():
    x = pd.DataFrame({"v": ["a", "a", "b", "c"]})
    y = pd.DataFrame({"v": ["a", "b", "b", "d"]})
    # p = (a .5, b .25, c .25, d 0), p′ = (a .25, b .5, c 0, d .25)
    # TVD = ½(.25 + .25 + .25 + .25) = .5
    # Σ√(p·p′) = √(.5·.25) + √(.25·.5) = 2√.125 = 1/√2, H = √(1 − 1/√2) = 0.5411961…
    # c is a false zero, d a false non-zero
    (r,) = table_fidelity(x, y, ["v"])
    assert r.columns == ("v",)
    assert r.tvd == pytest.approx(0.5, abs=1e-15)
    assert r.hellinger == pytest.approx(math.sqrt(1 - 1 / math.sqrt(2)), abs=1e-15)
    assert (r.false_zeros, r.false_nonzeros) == (1, 1)
    assert r.to_json() == {"columns": ["v"], "tvd": r.tvd, "hellinger": r.hellinger,
                           "false_zeros": 1, "false_nonzeros": 1}


def test_two_way_tables_worked_by_hand_and_worst_first():
    x = pd.DataFrame({"s": [0, 0, 1, 1], "t": [0, 1, 1, 1]})
    y = pd.DataFrame({"s": [0, 0, 1, 1], "t": [0, 0, 1, 0]})
    res = table_fidelity(x, y, ["s", "t"])
    assert [r.columns for r in res] == [("s", "t"), ("t",), ("s",)]
    st_, t, s = res
    # (s, t): p = {00: .25, 01: .25, 11: .5}, p′ = {00: .5, 11: .25, 10: .25}
    # TVD = ½(.25 + .25 + .25 + .25) = .5; Σ√(p·p′) = √.125 + √.125 = 1/√2
    # false zero: cell 01; false non-zero: cell 10
    assert st_.tvd == pytest.approx(0.5)
    assert st_.hellinger == pytest.approx(math.sqrt(1 - 1 / math.sqrt(2)))
    assert (st_.false_zeros, st_.false_nonzeros) == (1, 1)
    # t: p = (.25, .75), p′ = (.75, .25): TVD = .5, Σ√(p·p′) = 2√.1875 = √3/2
    assert t.tvd == pytest.approx(0.5)
    assert t.hellinger == pytest.approx(math.sqrt(1 - math.sqrt(3) / 2))
    assert (t.false_zeros, t.false_nonzeros) == (0, 0)
    # s is unchanged
    assert (s.tvd, s.hellinger) == (0.0, 0.0)


def test_identical_tables_give_zero_and_disjoint_supports_give_one(actg):
    cols = ["age", "race", "cd496", "wtkg"]
    for r in table_fidelity(actg, actg.copy(), cols):
        assert (r.tvd, r.hellinger, r.false_zeros, r.false_nonzeros) == (0.0, 0.0, 0, 0)
    x = pd.DataFrame({"v": ["a", "b", "b"], "w": [1, 2, 3]})
    y = pd.DataFrame({"v": ["c", "d", None], "w": [1, 2, 3]})
    r = one(x, y, ["v"])
    assert (r.tvd, r.hellinger) == (1.0, 1.0)
    assert (r.false_zeros, r.false_nonzeros) == (2, 3)  # a, b; c, d, missing
    assert one(x, y, ["v", "w"]).tvd == 1.0


def test_missing_values_are_a_cell_of_their_own():
    x = pd.DataFrame({"v": ["a", None, None, "a"]})
    y = pd.DataFrame({"v": ["a", "a", "a", None]})
    # p = (a .5, missing .5), p′ = (a .75, missing .25): TVD = .25
    assert one(x, y, ["v"]).tvd == pytest.approx(0.25)


def test_values_compare_by_what_they_are():
    x = pd.DataFrame({"v": [1, 2, 2, 3]})
    y = pd.DataFrame({"v": ["1", "2", "2", "3"]})
    assert one(x, y, ["v"]).tvd == 0.0


def test_binning_is_fixed_by_the_original():
    x = pd.DataFrame({"v": np.arange(1.0, 101.0)})
    # 100 distinct values > 10: binned at the deciles of x, 10, 20, …, 90 (right-closed);
    # moving every value by +0.5 moves the 9 values 10, 20, …, 90 up one interval
    y = pd.DataFrame({"v": x["v"] + 0.5})
    r = one(x, y, ["v"])
    assert r.tvd == pytest.approx(0.01)
    assert (r.false_zeros, r.false_nonzeros) == (0, 0)
    # values outside the original's range fall in the open outer intervals
    far = pd.DataFrame({"v": np.r_[np.full(50, -1e9), np.full(50, 1e9)]})
    r = one(x, far, ["v"])
    # p = .1 in each decile, p′ = .5 in the first and the last: TVD = ½(.4 + .4 + 8·.1) = .8
    assert r.tvd == pytest.approx(0.8)
    assert (r.false_zeros, r.false_nonzeros) == (8, 0)


def test_bins_must_be_a_whole_number_of_at_least_two():
    x = pd.DataFrame({"v": [1.0, 2.0]})
    for bad in (1, 2.5, True, "3"):
        with pytest.raises(SdcInputError, match="bins"):
            table_fidelity(x, x, ["v"], bins=bad)
    with pytest.raises(SdcInputError, match="not among the chosen columns: w"):
        table_fidelity(x, x, ["v"], numeric=["w"])
    with pytest.raises(SdcInputError, match="not in both tables: w"):
        table_fidelity(x, x.rename(columns={"v": "w"}), ["w"])
    with pytest.raises(SdcInputError, match="protected table has no rows"):
        table_fidelity(x, x.iloc[:0], ["v"])


# --- SDMetrics' own cases: score = 1 − TVD ------------------------------------------------------
# The documentation pages give the formula and a figure each (TVComplement 0.68,
# ContingencySimilarity 0.92) but not the data behind the figures:
#   https://docs.sdv.dev/sdmetrics/metrics/quality-metrics/tvcomplement
#   https://docs.sdv.dev/sdmetrics/metrics/quality-metrics/contingencysimilarity
# so the published inputs and scores used here are those of SDMetrics' unit tests,
#   https://github.com/sdv-dev/SDMetrics/blob/main/tests/unit/single_column/statistical/test_tv_complement.py
#   https://github.com/sdv-dev/SDMetrics/blob/main/tests/unit/column_pairs/statistical/test_contingency_similarity.py

def test_sdmetrics_tvcomplement_cases():
    # TestTVComplement.test_compute: 0.8333333333333333
    real = pd.DataFrame({"c": ["a", "b", "c", "a", "a", "b"]})
    synthetic = pd.DataFrame({"c": ["a", "b", "c", "a", "b", "c"]})
    assert 1 - one(real, synthetic, ["c"]).tvd == pytest.approx(0.8333333333333333, abs=1e-15)
    # test_compute_one_data_point: 1 (SDMetrics drops missing values; here they are a cell,
    # of the same share 5/6 on both sides, so the score is the same)
    real = pd.DataFrame({"c": [np.nan] * 5 + ["b"]})
    synthetic = pd.DataFrame({"c": ["b"] + [np.nan] * 5})
    assert 1 - one(real, synthetic, ["c"]).tvd == 1.0


def test_sdmetrics_contingency_similarity_cases():
    # TestContingencySimilarity.test_compute: 0.25 (both columns as categories)
    real = pd.DataFrame({"col1": [1.0, 2.4, 2.6, 0.8], "col2": [1, 2, 3, 5]})
    synthetic = pd.DataFrame({"col1": [1.0, 1.8, 2.6, 1.0], "col2": [2, 3, 4, 1]})
    assert 1 - one(real, synthetic, ["col1", "col2"]).tvd == pytest.approx(0.25)
    # test_compute_with_discretization: 0.25 (col2 continuous, 4 bins fixed by the real data)
    real = pd.DataFrame({"col1": [1.0, 2.4, 2.6, 0.8], "col2": [1, 2, 3, 4]})
    synthetic = pd.DataFrame({"col1": [1.0, 1.8, 2.6, 1.0], "col2": [2, 3, 7, -10]})
    r = one(real, synthetic, ["col1", "col2"], bins=4, numeric=["col2"])
    assert 1 - r.tvd == pytest.approx(0.25)


# --- real data and every dtype -----------------------------------------------------------------

def test_adult_tables_after_pram():
    adult = read_table(SHARED_DATA / "adult.csv")
    cols = ["sex", "age", "race", "education"]
    recipe = parse_recipe({"seed": 7, "steps": [{"method": "pram", "column": "race",
                                                 "p": 0.2}]})
    released = apply_recipe(recipe, adult).data
    res = table_fidelity(adult, released, cols)
    assert len(res) == 4 + 6
    assert res[0].columns in {("race",), ("sex", "race"), ("age", "race"), ("race",
                                                                           "education")}
    assert all(r.tvd == 0.0 for r in res if "race" not in r.columns)
    assert all(0 < r.tvd < 0.2 for r in res if "race" in r.columns)
    assert [r.tvd for r in res] == sorted((r.tvd for r in res), reverse=True)


def frames() -> st.SearchStrategy[tuple[pd.DataFrame, pd.DataFrame]]:
    """Two tables of the same columns, of any dtype a reader produces, with missing values."""
    kinds = ["int", "uint8", "Int64", "float", "Float64", "bool", "boolean", "string", "object",
             "category", "datetime", "datetime_tz", "all_nan", "mixed"]

    def column(kind: str, values: list[int], gone: list[bool]) -> pd.Series:
        v = np.array(values)
        if kind == "int":
            return pd.Series(v)
        if kind == "uint8":
            return pd.Series(v.astype(np.uint8))
        if kind == "Float64":
            return pd.Series(pd.array(np.where(gone, None, v / 3).tolist(), dtype="Float64"))
        if kind == "Int64":
            return pd.Series(pd.array(np.where(gone, None, v).tolist(), dtype="Int64"))
        if kind == "float":
            return pd.Series(np.where(gone, np.nan, v * 0.5))
        if kind == "bool":
            return pd.Series(v % 2 == 0)
        if kind == "boolean":
            return pd.Series(pd.array(np.where(gone, None, v % 2 == 0).tolist(),
                                      dtype="boolean"))
        if kind in ("string", "object", "category"):
            s = pd.Series(np.where(gone, None, [f"l{i}" for i in v]).tolist(),
                          dtype="string" if kind == "string" else object)
            return s.astype("category") if kind == "category" else s
        if kind in ("datetime", "datetime_tz"):
            start = pd.Timestamp("2020-01-01", tz="Europe/Paris" if kind == "datetime_tz"
                                 else None)
            return pd.Series(start + pd.to_timedelta(v, unit="D")).mask(pd.Series(gone))
        if kind == "all_nan":
            return pd.Series([np.nan] * len(v))
        return pd.Series([("x" if i % 3 else i) for i in v], dtype=object)

    @st.composite
    def build(draw: st.DrawFn) -> tuple[pd.DataFrame, pd.DataFrame]:
        names = draw(st.lists(st.sampled_from(kinds), min_size=1, max_size=4, unique=True))
        out = []
        for _ in range(2):
            n = draw(st.integers(1, 30))
            out.append(pd.DataFrame({
                k: column(k, draw(st.lists(st.integers(0, 40), min_size=n, max_size=n)),
                          draw(st.lists(st.booleans(), min_size=n, max_size=n)))
                for k in names}))
        return out[0], out[1]

    return build()


@settings(max_examples=150, deadline=None)
@given(tables=frames(), bins=st.integers(2, 12))
def test_any_dtype_gives_distances_in_the_unit_interval(tables, bins):
    x, y = tables
    cols = list(x.columns)
    res = table_fidelity(x, y, cols, bins=bins)
    assert len(res) == len(cols) * (len(cols) + 1) // 2
    for r in res:
        assert 0.0 <= r.tvd <= 1.0 + 1e-12
        assert 0.0 <= r.hellinger <= 1.0
        assert r.false_zeros >= 0 and r.false_nonzeros >= 0
    assert all(r.tvd == 0 for r in table_fidelity(x, x.copy(), cols, bins=bins))
    try:
        result = pmse(x, y, cols)
    except SdcInputError as err:
        assert "varies" in str(err) or "parameters" in str(err)
    else:
        assert 0.0 <= result.pmse <= result.c * (1 - result.c) + 1e-12
        assert result.s_pmse >= 0


# --- pMSE --------------------------------------------------------------------------------------

def direct_pmse(x: pd.DataFrame, y: pd.DataFrame, numeric: list[str], categorical: list[str]
                ) -> tuple[float, int]:
    """pMSE from statsmodels' fitted propensities, the design built here: numbers as they are
    (missing → 0 with an indicator), categories one-hot without their first level."""
    both = pd.concat([x, y], ignore_index=True)
    parts = []
    for c in numeric:
        v = both[c].astype(float)
        parts.append(v.fillna(0.0).rename(c))
        if v.isna().any():
            parts.append(v.isna().astype(float).rename(f"{c}_NA"))
    if categorical:
        parts.append(pd.get_dummies(both[categorical].astype(object), drop_first=True,
                                    dummy_na=True, dtype=float))
    design = sm.add_constant(pd.concat(parts, axis=1))
    design = design.loc[:, design.std() > 0].assign(const=1.0)
    t = np.r_[np.zeros(len(x)), np.ones(len(y))]
    fit = sm.Logit(t, design).fit(disp=0, tol=1e-12, maxiter=100)
    c = len(y) / (len(x) + len(y))
    return float(((fit.predict() - c) ** 2).mean()), design.shape[1]


def test_pmse_equals_statsmodels_on_actg_after_noise(actg):
    recipe = parse_recipe({"seed": 3, "steps": [
        {"method": "noise", "columns": ["wtkg", "cd420"], "kind": "additive", "p": 50},
        {"method": "band", "column": "age", "width": 10, "label": "midpoint"}]})
    released = apply_recipe(recipe, actg).data
    cols = ["age", "wtkg", "cd420", "cd496", "race", "gender", "karnof"]
    result = pmse(actg, released, cols)
    expected, k = direct_pmse(actg, released, cols, [])
    assert result.pmse == pytest.approx(expected, abs=1e-8, rel=1e-8)
    assert result.k == k == 9  # intercept, 7 columns, cd496's missing indicator
    assert (result.c, result.n) == (0.5, 2 * len(actg))
    # ages written as bands ("40–49") are modelled as their midpoints: the same fit
    labelled = released.assign(age=apply_recipe(parse_recipe({"seed": 3, "steps": [
        {"method": "band", "column": "age", "width": 10}]}), actg).data["age"])
    assert labelled["age"].iloc[0] == "40–49"
    assert pmse(actg, labelled, cols) == result


def test_pmse_equals_statsmodels_with_categories_on_adult():
    adult = read_table(SHARED_DATA / "adult.csv").iloc[:6000]
    recipe = parse_recipe({"seed": 11, "steps": [
        {"method": "pram", "column": "marital-status", "p": 0.3},
        {"method": "noise", "columns": ["age"], "kind": "additive", "p": 100}]})
    released = apply_recipe(recipe, adult).data.iloc[:4000]  # unequal sizes: c = 0.4
    cats = ["sex", "race", "marital-status"]
    result = pmse(adult, released, ["age"] + cats)
    expected, k = direct_pmse(adult, released, ["age"], cats)
    assert result.pmse == pytest.approx(expected, abs=1e-8, rel=1e-8)
    assert result.k == k
    assert result.c == pytest.approx(0.4)


def test_pmse_of_an_exact_copy_is_zero(actg):
    cols = ["age", "wtkg", "cd496", "race", "strat"]
    result = pmse(actg, actg.copy(), cols)
    assert result.pmse == 0.0 and result.s_pmse == 0.0
    assert result.k == 1 + 5 + 1


def test_s_pmse_formula_on_numbers():
    # x: v = 0, 0, 1, 1; x′: v = 1, 1, 1, 1. N = 8, c = ½. The model t ~ v is saturated: the
    # propensity of v = 0 is 0/2 = 0, of v = 1 is 4/6 = ⅔.
    # pMSE = [2·(0 − ½)² + 6·(⅔ − ½)²] / 8 = (½ + ⅙) / 8 = 1/12
    # S_pMSE = pMSE / [(k − 1)(1 − c)² c / N] = (1/12) / (1·¼·½/8) = (1/12)·64 = 16/3
    x = pd.DataFrame({"v": ["a", "a", "b", "b"]})
    y = pd.DataFrame({"v": ["b", "b", "b", "b"]})
    result = pmse(x, y, ["v"])
    assert isinstance(result, PmseResult)
    assert result.pmse == pytest.approx(1 / 12, abs=1e-9)
    assert result.s_pmse == pytest.approx(16 / 3, abs=1e-7)
    assert (result.k, result.c, result.n) == (2, 0.5, 8)
    assert result.to_json() == {"pmse": result.pmse, "s_pmse": result.s_pmse, "k": 2,
                                "c": 0.5, "n": 8}


def test_pmse_separable_and_singular_designs():
    # disjoint supports: every row told apart, pMSE → c(1 − c) = ¼
    x = pd.DataFrame({"v": ["a", "b"] * 10})
    y = pd.DataFrame({"v": ["c", "d"] * 10})
    assert pmse(x, y, ["v"]).pmse == pytest.approx(0.25, abs=1e-9)
    # a copied column adds no parameter; a constant one neither
    x = pd.DataFrame({"a": [1.0, 2, 3, 4, 5, 6], "k": 1})
    y = pd.DataFrame({"a": [1.0, 2, 2, 3, 5, 5], "k": 1})
    x["b"], y["b"] = x["a"] * 2, y["a"] * 2
    assert pmse(x, y, ["a", "b", "k"]).k == 2
    with pytest.raises(SdcInputError, match="varies"):
        pmse(x, y, ["k"])
    wide = pd.DataFrame({"id": [f"r{i}" for i in range(300)]})
    with pytest.raises(SdcInputError,
                       match="300 parameters, more than 100; column 'id' alone needs 299"):
        pmse(wide, wide, ["id"])
