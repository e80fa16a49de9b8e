"""Benchmark analyses (issue 26 items 1 and 5): estimates and intervals against statsmodels'
own results computed here without the module's code path, CI overlap on hand-worked
intervals, weighted means and shares against their formula written out."""

import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.weightstats import DescrStatsW

from sdc_core.data.io import read_table
from sdc_core.errors import SdcInputError
from sdc_core.recipe import apply_recipe, make_recipe
from sdc_core.utility.analysis import (
    Analysis,
    check_columns,
    ci_overlap,
    compare_analyses,
    estimate,
    estimate_all,
    formula_variables,
    parse_spec,
    table_distances,
)
from tests.conftest import SHARED_DATA

TOL = 1e-8


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return read_table(SHARED_DATA / "adult.csv")


@pytest.fixture(scope="module")
def protected_actg(actg) -> pd.DataFrame:
    """ACTG 175 with age banded (width 10, written as midpoints) and 50 % additive noise on
    the baseline CD4."""
    recipe = make_recipe([{"method": "band", "column": "age", "width": 10, "label": "midpoint"},
                          {"method": "noise", "columns": ["cd40"], "p": 50}], seed=26)
    return apply_recipe(recipe, actg).data


def reference_fit(df: pd.DataFrame, response: str, numeric: list[str],
                  categorical: dict[str, str], logit: bool = False, alpha: float = 0.05
                  ) -> pd.DataFrame:
    """statsmodels' OLS/Logit on a numpy design matrix built with pandas: listwise deletion,
    an intercept, treatment dummies of each categorical column (first sorted level the
    reference), named as patsy names them (``categorical`` maps column → term prefix)."""
    d = df[[response, *numeric, *categorical]].dropna()
    parts = [pd.DataFrame({"Intercept": np.ones(len(d))}, index=d.index)]
    for column, prefix in categorical.items():
        levels = sorted(d[column].unique())
        parts.append(pd.DataFrame({f"{prefix}[T.{v}]": (d[column] == v).astype(float)
                                   for v in levels[1:]}, index=d.index))
    parts.append(d[numeric].astype(float))
    x = pd.concat(parts, axis=1)
    y = d[response].to_numpy(dtype=float)
    model = sm.Logit(y, x.to_numpy()) if logit else sm.OLS(y, x.to_numpy())
    result = model.fit(disp=0) if logit else model.fit()
    ci = result.conf_int(alpha)
    return pd.DataFrame({"estimate": result.params, "se": result.bse, "low": ci[:, 0],
                         "high": ci[:, 1]}, index=x.columns)


def assert_same_terms(got: pd.DataFrame, want: pd.DataFrame) -> None:
    assert sorted(got.index) == sorted(want.index)
    for column in ("estimate", "se", "low", "high"):
        np.testing.assert_allclose(got.loc[want.index, column].to_numpy(),
                                   want[column].to_numpy(), rtol=TOL, atol=TOL)


# -- OLS and logit against statsmodels --------------------------------------------------------


@pytest.mark.parametrize("side", ["original", "protected"])
def test_ols_equals_statsmodels(actg, protected_actg, side):
    df = actg if side == "original" else protected_actg
    got = estimate(Analysis("m", "ols", formula="cd420 ~ age + cd40 + C(treat)"), df)
    assert got.dropped == 0
    assert_same_terms(got.terms, reference_fit(df, "cd420", ["age", "cd40"],
                                               {"treat": "C(treat)"}))


@pytest.mark.parametrize("side", ["original", "protected"])
def test_logit_equals_statsmodels(actg, protected_actg, side):
    df = actg if side == "original" else protected_actg
    got = estimate(Analysis("l", "logit", formula="cens ~ age + cd40"), df, confidence=0.9)
    assert_same_terms(got.terms, reference_fit(df, "cens", ["age", "cd40"], {}, logit=True,
                                               alpha=0.1))


def test_protection_moves_the_estimates_and_they_are_compared(actg, protected_actg):
    spec = parse_spec({"analyses": [
        {"name": "cd4 at 20 weeks", "kind": "ols", "formula": "cd420 ~ age + cd40 + C(treat)"},
        {"name": "censored", "kind": "logit", "formula": "cens ~ age + cd40"}]})
    for result in compare_analyses(spec, actg, protected_actg):
        assert result.error is None and len(result.terms) >= 3
        moved = [t for t in result.terms if t.protected != t.original]
        assert moved
        for t in result.terms:
            assert t.ci_overlap == pytest.approx(ci_overlap(
                t.original_low, t.original_high, t.protected_low, t.protected_high))
            assert t.original_in_protected_ci == (t.protected_low <= t.original
                                                  <= t.protected_high)
        assert result.mean_ci_overlap == pytest.approx(np.mean([t.ci_overlap
                                                                for t in result.terms]))
    ols = estimate(spec.analyses[0], actg).terms
    cd40 = next(t for t in compare_analyses(spec, actg, protected_actg)[0].terms
                if t.term == "cd40")
    assert cd40.std_diff == pytest.approx((cd40.protected - cd40.original)
                                          / ols.loc["cd40", "se"], rel=1e-12)


def test_band_labels_are_analysed_as_their_midpoints(actg, protected_actg):
    """A release that writes age as bands ("40–49", the default) gives the analyses the band
    midpoints: the comparison of the midpoint release, term for term."""
    labelled = protected_actg.assign(age=apply_recipe(make_recipe(
        [{"method": "band", "column": "age", "width": 10}], seed=26), actg).data["age"])
    assert labelled["age"].iloc[0] == "40–49"
    spec = parse_spec({"analyses": [
        {"name": "cd4 at 20 weeks", "kind": "ols", "formula": "cd420 ~ age + cd40 + C(treat)"},
        {"name": "censored", "kind": "logit", "formula": "cens ~ age + cd40"}]})
    assert compare_analyses(spec, actg, labelled) == compare_analyses(spec, actg, protected_actg)


def test_ols_on_adult_with_categories_equals_statsmodels(adult):
    got = estimate(Analysis("a", "ols",
                            formula='age ~ C(sex) + C(race) + C(Q("salary-class"))'), adult)
    want = reference_fit(adult, "age", [], {"sex": "C(sex)", "race": "C(race)",
                                            "salary-class": 'C(Q("salary-class"))'})
    assert_same_terms(got.terms, want)


def test_listwise_deletion_is_counted(actg):
    got = estimate(Analysis("m", "ols", formula="cd496 ~ age + cd40 + C(treat)"), actg)
    missing = int(actg["cd496"].isna().sum())
    assert missing > 0 and got.dropped == missing
    assert_same_terms(got.terms, reference_fit(actg, "cd496", ["age", "cd40"],
                                               {"treat": "C(treat)"}))
    spec = parse_spec({"analyses": [{"name": "m", "kind": "ols",
                                     "formula": "cd496 ~ age + cd40"}]})
    blanked = actg.assign(age=actg["age"].where(actg.index % 10 != 0))
    result = compare_analyses(spec, actg, blanked)[0]
    both = int((actg["cd496"].isna() | blanked["age"].isna()).sum())
    assert (result.dropped_original, result.dropped_protected) == (missing, both)


# -- CI overlap ---------------------------------------------------------------------------


@pytest.mark.parametrize("o, p, j", [
    # identical: L = 0, U = 2, U − L = 2; J = ½(2/2 + 2/2) = 1
    ((0, 2), (0, 2), 1.0),
    # nested [1, 3] in [0, 4]: U − L = 2; J = ½(2/4 + 2/2) = 0.75
    ((0, 4), (1, 3), 0.75),
    # partly overlapping [0, 2], [1, 4]: L = 1, U = 2; J = ½(1/2 + 1/3) = 5/12
    ((0, 2), (1, 4), 5 / 12),
    # touching [0, 1], [1, 2]: U − L = 0; J = 0
    ((0, 1), (1, 2), 0.0),
    # disjoint [0, 1], [3, 5]: L = 3, U = 1, U − L = −2; J = ½(−2/1 − 2/2) = −1.5
    ((0, 1), (3, 5), -1.5),
    # disjoint the other way [10, 12], [4, 8]: L = 10, U = 8; J = ½(−2/2 − 2/4) = −0.75
    ((10, 12), (4, 8), -0.75),
])
def test_ci_overlap_hand_worked(o, p, j):
    assert ci_overlap(*o, *p) == pytest.approx(j, rel=1e-15)


@pytest.mark.parametrize("o, p", [((1, 1), (0, 2)), ((0, 2), (math.nan, math.nan))])
def test_ci_overlap_of_a_zero_width_or_missing_interval_is_nan(o, p):
    assert math.isnan(ci_overlap(*o, *p))


interval = st.tuples(st.floats(-1e6, 1e6), st.floats(1e-3, 1e6)).map(
    lambda t: (t[0], t[0] + t[1]))


@given(interval, interval)
def test_ci_overlap_is_one_on_itself_and_symmetric(a, b):
    assert ci_overlap(*a, *a) == 1.0
    assert ci_overlap(*a, *b) == ci_overlap(*b, *a)


# -- means and proportions ------------------------------------------------------------------


def direct_weighted(y: np.ndarray, w: np.ndarray, confidence: float) -> tuple[float, ...]:
    """ȳ = Σwy/Σw, se² = n/(n − 1) Σ[w(y − ȳ)]²/(Σw)², ȳ ± t_{n−1} se, written out."""
    from scipy.stats import t as student

    n = len(y)
    mean = float(np.sum(w * y) / np.sum(w))
    se = math.sqrt(n / (n - 1) * float(np.sum((w * (y - mean)) ** 2)) / float(np.sum(w)) ** 2)
    half = student.ppf((1 + confidence) / 2, n - 1) * se
    return mean, se, mean - half, mean + half


def test_weighted_mean_by_group_against_the_formula(actg):
    got = estimate(Analysis("w", "mean", column="cd420", by="race", weight="wtkg"), actg,
                   confidence=0.9).terms
    assert sorted(got.index) == ["cd420 | race=0", "cd420 | race=1"]
    for race in (0, 1):
        rows = actg[actg["race"] == race]
        want = direct_weighted(rows["cd420"].to_numpy(float), rows["wtkg"].to_numpy(float), 0.9)
        np.testing.assert_allclose(got.loc[f"cd420 | race={race}"].to_numpy(), want,
                                   rtol=1e-12)


def test_weighted_proportion_against_the_formula(actg):
    got = estimate(Analysis("p", "proportion", column="strat", weight="wtkg"), actg).terms
    w = actg["wtkg"].to_numpy(float)
    for level in (1, 2, 3):
        want = direct_weighted((actg["strat"] == level).to_numpy(float), w, 0.95)
        np.testing.assert_allclose(got.loc[f"strat={level}"].to_numpy(), want, rtol=1e-12)
    assert got["estimate"].sum() == pytest.approx(1.0)


def test_unweighted_mean_equals_descrstatsw(actg):
    got = estimate(Analysis("m", "mean", column="cd496"), actg).terms.loc["cd496"]
    d = DescrStatsW(actg["cd496"].dropna().to_numpy(float))
    assert got["estimate"] == pytest.approx(d.mean, rel=1e-12)
    assert got["se"] == pytest.approx(d.std_mean, rel=1e-12)
    assert (got["low"], got["high"]) == pytest.approx(d.tconfint_mean(0.05), rel=1e-12)


def test_unweighted_proportion_by_group_equals_descrstatsw(adult):
    got = estimate(Analysis("p", "proportion", column="marital-status", by="sex"),
                   adult).terms
    for sex, rows in adult.groupby("sex"):
        for level in rows["marital-status"].unique():
            d = DescrStatsW((rows["marital-status"] == level).to_numpy(float))
            term = got.loc[f"marital-status={level} | sex={sex}"]
            assert term["estimate"] == pytest.approx(d.mean, rel=1e-12)
            assert term["se"] == pytest.approx(d.std_mean, rel=1e-12)
            assert (term["low"], term["high"]) == pytest.approx(d.tconfint_mean(0.05),
                                                                rel=1e-12)
    assert len(got) == adult.groupby(["sex", "marital-status"]).ngroups


def test_mean_leaves_out_missing_values_and_weights(actg):
    w = actg["wtkg"].where(actg.index % 7 != 0)
    got = estimate(Analysis("m", "mean", column="cd496", weight="wtkg"), actg.assign(wtkg=w))
    assert got.dropped == int((actg["cd496"].isna() | w.isna()).sum())


# -- terms on one side only -----------------------------------------------------------------


def test_a_vanished_level_is_reported_not_fatal(adult):
    suppressed = adult.assign(race=adult["race"].where(adult["race"] != "Other"))
    spec = parse_spec({"analyses": [
        {"name": "race shares", "kind": "proportion", "column": "race"},
        {"name": "age model", "kind": "ols", "formula": "age ~ C(race) + C(sex)"},
        {"name": "race × sex", "kind": "table", "columns": ["race", "sex"]}]})
    shares, model, table = compare_analyses(spec, adult, suppressed)
    other = 231  # rows of race "Other" in adult.csv
    for result, term in ((shares, "race=Other"), (model, "C(race)[T.Other]")):
        assert result.error is None and result.dropped_protected == other
        gone = next(t for t in result.terms if t.term == term)
        assert math.isnan(gone.protected) and math.isnan(gone.protected_low)
        assert not math.isnan(gone.original)
        assert gone.ci_overlap == 0.0 and gone.original_in_protected_ci is False
        assert math.isnan(gone.std_diff)
        assert result.mean_ci_overlap == pytest.approx(np.mean([t.ci_overlap
                                                                for t in result.terms]))
        assert result.to_json()["terms"][[t.term for t in result.terms].index(term)][
            "protected"] is None
    gone = [t for t in table.terms if t.term.startswith("race=Other")]
    assert len(gone) == 2 and all(math.isnan(t.protected) for t in gone)
    assert table.tvd == pytest.approx(0.5 * sum(abs(np.nan_to_num(t.protected) - t.original)
                                                for t in table.terms))


def test_a_new_level_is_reported_on_the_protected_side(adult):
    recoded = adult.assign(race=adult["race"].replace({"Other": "other",
                                                       "Amer-Indian-Eskimo": "other"}))
    result = compare_analyses(parse_spec({"analyses": [
        {"name": "r", "kind": "proportion", "column": "race"}]}), adult, recoded)[0]
    new = next(t for t in result.terms if t.term == "race=other")
    assert math.isnan(new.original) and new.protected == pytest.approx(517 / len(adult))
    assert new.ci_overlap == 0.0
    assert [t.term for t in result.terms][-1] == "race=other"


# -- tables ------------------------------------------------------------------------------------


def test_table_distances_by_hand():
    p = pd.Series({"a": 0.5, "b": 0.5})
    q = pd.Series({"b": 0.25, "c": 0.75})
    tvd, hellinger = table_distances(p, q)
    # |0.5 − 0| + |0.5 − 0.25| + |0 − 0.75| = 1.5, halved 0.75
    assert tvd == pytest.approx(0.75)
    # Σ√(p·p′) = √(0.5·0.25) = √0.125
    assert hellinger == pytest.approx(math.sqrt(1 - math.sqrt(0.125)))
    assert table_distances(p, p) == (0.0, 0.0)


def test_table_shares_and_json_keys(actg):
    spec = parse_spec({"analyses": [{"name": "t", "kind": "table",
                                     "columns": ["race", "gender"]}]})
    result = compare_analyses(spec, actg, actg)[0]
    counts = actg.groupby(["race", "gender"]).size() / len(actg)
    assert {t.term: t.original for t in result.terms} == pytest.approx(
        {f"race={r}, gender={g}": v for (r, g), v in counts.items()})
    assert (result.tvd, result.hellinger) == (0.0, 0.0)
    out = result.to_json()
    assert set(out) == {"name", "kind", "terms", "mean_ci_overlap", "dropped_original",
                        "dropped_protected", "tvd", "hellinger"}
    assert out["terms"][0]["original_in_protected_ci"] is None


def test_json_keys_are_the_issues(actg):
    spec = parse_spec({"analyses": [{"name": "m", "kind": "mean", "column": "cd420"}]})
    out = compare_analyses(spec, actg, actg)[0].to_json()
    assert set(out) == {"name", "kind", "terms", "mean_ci_overlap", "dropped_original",
                        "dropped_protected"}
    assert set(out["terms"][0]) == {
        "term", "original", "original_low", "original_high", "protected", "protected_low",
        "protected_high", "ci_overlap", "std_diff", "original_in_protected_ci"}
    assert out["mean_ci_overlap"] == 1.0 and out["terms"][0]["std_diff"] == 0.0


# -- fits that fail ---------------------------------------------------------------------------


SEPARATED = pd.DataFrame({"y": [0, 0, 0, 1, 1, 1], "x": [1.0, 2, 3, 4, 5, 6],
                          "z": [1.0, 3, 2, 5, 4, 6]})


@pytest.mark.parametrize("kind, formula, df, message", [
    ("logit", "y ~ x", SEPARATED, "analysis 'f': perfect separation"),
    ("ols", "y ~ x + I(2 * x)", SEPARATED, "analysis 'f': the terms are collinear"),
    ("logit", "y ~ x + I(2 * x)", SEPARATED, "analysis 'f': the terms are collinear"),
    ("ols", "y ~ x", SEPARATED.assign(y=np.nan), "analysis 'f': no row has all of y, x"),
    ("ols", "y ~ w", SEPARATED, "analysis 'f': the data has no column(s) w"),
])
def test_a_model_that_cannot_be_fitted_is_a_clear_error(kind, formula, df, message):
    with pytest.raises(SdcInputError, match="^" + re.escape(message)):
        estimate(Analysis("f", kind, formula=formula), df)


def test_a_failed_side_is_an_error_field_and_the_others_stay(actg):
    spec = parse_spec({"analyses": [
        {"name": "model", "kind": "ols", "formula": "cd420 ~ age + cd40"},
        {"name": "mean age", "kind": "mean", "column": "age"}]})
    released = actg.drop(columns=["cd40"]).assign(age=actg["age"].astype(str))
    originals = estimate_all(spec, actg)
    model, mean = compare_analyses(spec, actg, released, originals)
    assert model.error == "protected: analysis 'model': the data has no column(s) cd40"
    assert mean.error == "protected: analysis 'mean age': column 'age' is not numeric"
    assert model.terms == [] and math.isnan(model.mean_ci_overlap)
    assert model.to_json()["error"] == model.error
    failed = compare_analyses(spec, released, actg)[0]
    assert failed.error.startswith("original: analysis 'model'")


def test_the_original_side_is_estimated_once(actg, protected_actg, monkeypatch):
    spec = parse_spec({"analyses": [{"name": "m", "kind": "ols",
                                     "formula": "cd420 ~ age + cd40"}]})
    originals = estimate_all(spec, actg)
    import sdc_core.utility.analysis as module

    seen = []
    real = module.estimate
    monkeypatch.setattr(module, "estimate", lambda a, df, c: seen.append(df) or real(a, df, c))
    cached = compare_analyses(spec, actg, protected_actg, originals)
    assert len(seen) == 1 and seen[0] is protected_actg
    assert cached == compare_analyses(spec, actg, protected_actg)


# -- the spec ------------------------------------------------------------------------------------


def test_spec_of_the_issue_parses():
    spec = parse_spec({"confidence": 0.9, "analyses": [
        {"name": "earnings model", "kind": "ols",
         "formula": "re78 ~ age + educ + C(ethn) + married"},
        {"name": "treated", "kind": "logit", "formula": "treat ~ age + educ"},
        {"name": "mean income by region", "kind": "mean", "column": "income", "by": "region",
         "weight": "w"},
        {"name": "share married", "kind": "proportion", "column": "married", "by": "ethn"},
        {"name": "ethn × married", "kind": "table", "columns": ["ethn", "married"]}]})
    assert spec.confidence == 0.9 and len(spec.analyses) == 5
    assert spec.analyses[4].columns == ("ethn", "married")
    assert parse_spec({"analyses": [{"name": "m", "kind": "mean",
                                     "column": "x"}]}).confidence == 0.95


@pytest.mark.parametrize("data, message", [
    ([], "an analysis spec must be an object with a list 'analyses'"),
    ({"analyses": [], }, "analysis spec: 'analyses' must be a non-empty list"),
    ({"analyses": [{"name": "a", "kind": "mean", "column": "x"}], "level": 1},
     "analysis spec: unknown key(s) level"),
    ({"confidence": 1, "analyses": [{"name": "a", "kind": "mean", "column": "x"}]},
     "analysis spec: confidence must be a number between 0 and 1 (exclusive), not 1"),
    ({"confidence": 0, "analyses": [{"name": "a", "kind": "mean", "column": "x"}]},
     "analysis spec: confidence must be a number between 0 and 1 (exclusive), not 0"),
    ({"confidence": True, "analyses": [{"name": "a", "kind": "mean", "column": "x"}]},
     "analysis spec: confidence must be a number between 0 and 1 (exclusive), not True"),
    ({"analyses": [{"kind": "mean", "column": "x"}]}, "analysis 1: missing key name"),
    ({"analyses": [{"name": "a", "kind": "mean", "column": "x"}, "b"]},
     "analysis 2: must be an object with a name and a kind"),
    ({"analyses": [{"name": "a", "column": "x"}]}, "analysis 'a': missing key kind"),
    ({"analyses": [{"name": "a", "kind": "median", "column": "x"}]},
     "analysis 'a': unknown kind 'median'; expected one of ols, logit, mean, proportion, "
     "table"),
    ({"analyses": [{"name": "a", "kind": "ols"}]}, "analysis 'a': missing key(s) formula"),
    ({"analyses": [{"name": "a", "kind": "ols", "formula": "y ~ x", "by": "g"}]},
     "analysis 'a': unknown key(s) by for kind ols"),
    ({"analyses": [{"name": "a", "kind": "mean", "column": "x", "weigth": "w"}]},
     "analysis 'a': unknown key(s) weigth for kind mean"),
    ({"analyses": [{"name": "a", "kind": "mean", "column": 3}]},
     "analysis 'a': column must be non-empty text"),
    ({"analyses": [{"name": "a", "kind": "table", "columns": "x"}]},
     "analysis 'a': columns must be a non-empty list of column names"),
    ({"analyses": [{"name": "a", "kind": "table", "columns": ["x", "x"]}]},
     "analysis 'a': a column is named twice in columns"),
    ({"analyses": [{"name": "a", "kind": "ols", "formula": "y ~ (x"}]},
     "analysis 'a': the formula is refused at the end (character 7): expected ')'"),
    ({"analyses": [{"name": "a", "kind": "ols", "formula": "x + z"}]},
     "analysis 'a': the formula has no response (y ~ …)"),
    ({"analyses": [{"name": "a", "kind": "mean", "column": "x"},
                   {"name": "a", "kind": "table", "columns": ["x"]}]},
     "analysis 'a': duplicate name"),
])
def test_spec_errors_name_the_analysis_and_the_problem(data, message):
    with pytest.raises(SdcInputError) as err:
        parse_spec(data)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_formula_variables_are_the_columns_it_reads():
    assert formula_variables('np.log(y) ~ C(a, Treatment(1)) + I(b ** 2) + Q("c d"):e') == [
        "y", "a", "b", "c d", "e"]


def test_check_columns_names_what_the_data_lacks(actg):
    spec = parse_spec({"analyses": [
        {"name": "ok", "kind": "ols", "formula": "cd420 ~ age"},
        {"name": "model", "kind": "logit", "formula": "cens ~ age + np.log(weight) + C(site)"},
        {"name": "m", "kind": "mean", "column": "age", "weight": "w"}]})
    with pytest.raises(SdcInputError, match=r"^analysis 'model': the data has no column\(s\) "
                                            r"weight, site$"):
        check_columns(spec, actg.columns)
    check_columns(spec, [*actg.columns, "weight", "site", "w"])


# -- the OLS on distinct rows against statsmodels' fit on every row ----------------------------


@st.composite
def regression_tables(draw):
    """A response with noise, a numeric regressor with few or many distinct values, a text
    factor and a code factor, with missing values anywhere."""
    n = draw(st.integers(12, 120))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    levels = draw(st.integers(2, 5))
    x = rng.integers(0, draw(st.sampled_from([3, 10, 1000])), n).astype(float)
    g = pd.array(rng.choice([f"g{i}" for i in range(levels)], n), dtype="str")
    code = rng.integers(1, 4, n)
    y = 2.0 + 0.5 * x + rng.normal(0, draw(st.sampled_from([0.1, 1.0, 10.0])), n)
    df = pd.DataFrame({"y": y, "x": x, "g": g, "code": code})
    for column in ("y", "x", "g"):
        if draw(st.booleans()):
            df.loc[rng.random(n) < 0.1, column] = None
    return df


@settings(deadline=None)  # two fits an example: 296 ms on a loaded machine, past the 200 ms
@given(regression_tables(), st.sampled_from([
    "y ~ x + C(g)", "y ~ x * C(g)", "np.log(y ** 2 + 1) ~ C(code) + x", "y ~ C(g):C(code) - 1",
    "y ~ I(x ** 2) + np.sqrt(x) + g"]))
def test_ols_on_distinct_rows_equals_statsmodels_on_every_row(df, formula):
    import statsmodels.formula.api as smf

    analysis = Analysis("m", "ols", formula=formula)
    try:
        got = estimate(analysis, df)
    except SdcInputError:  # too few rows or collinear terms: statsmodels has no full-rank fit
        used = formula_variables(formula)
        complete = df[used].dropna()
        if len(complete) > 1:
            with warnings.catch_warnings():  # statsmodels warns of the rank we refuse
                warnings.simplefilter("ignore")
                fit = smf.ols(formula, complete, eval_env=1).fit()
            assert np.linalg.matrix_rank(fit.model.exog) < fit.model.exog.shape[1] \
                or fit.nobs <= fit.model.exog.shape[1]
        return
    complete = df[formula_variables(formula)].dropna()
    fit = smf.ols(formula, complete.assign(g=complete["g"].astype(object)) if "g" in complete
                  else complete, eval_env=1).fit()
    ci = fit.conf_int()
    want = pd.DataFrame({"estimate": fit.params, "se": fit.bse, "low": ci[0], "high": ci[1]})
    assert got.dropped == len(df) - int(fit.nobs)
    scale = np.maximum(1.0, np.abs(want.to_numpy()))
    assert list(got.terms.index) == list(want.index)
    np.testing.assert_array_less(np.abs(got.terms.to_numpy() - want.to_numpy()) / scale, TOL)


def test_ols_with_a_whole_column_function_takes_statsmodels_path(actg):
    """center() reads the whole column: fitted on every row, its intercept is the one on
    the centred age, not on distinct rows' centring."""
    import statsmodels.formula.api as smf

    got = estimate(Analysis("m", "ols", formula="cd420 ~ center(age) + C(treat)"), actg)
    fit = smf.ols("cd420 ~ center(age) + C(treat)", actg).fit()
    np.testing.assert_allclose(got.terms["estimate"], fit.params, rtol=TOL)
    np.testing.assert_allclose(got.terms["se"], fit.bse, rtol=TOL)
