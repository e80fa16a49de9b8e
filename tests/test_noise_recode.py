"""Noise addition (sdcMicro's addNoise formulas on counter-based normals) and category recoding.

Statistical checks use n = 100,000 values and fixed seeds; each bound is 4 standard errors of the
statistic, derived beside it.
"""

import json
import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdc_core import rng
from sdc_core.errors import SdcInputError
from sdc_core.methods import registry
from sdc_core.methods.noise import noise, order_free_sum
from sdc_core.methods.recode import recode
from sdc_core.recipe import apply_recipe, parse_recipe

N = 100_000


def table(n=N, seed=0):
    g = np.random.default_rng(seed)
    a = g.lognormal(3, 0.5, n)
    b = 0.6 * a + g.normal(0, 5, n)
    c = g.integers(0, 100, n)
    return pd.DataFrame({"a": a, "b": b, "c": c})


# --- the normal generator ---------------------------------------------------------------------

def test_normal_is_standard_and_depends_only_on_the_id():
    ids = np.arange(N, dtype=np.uint64)
    z = rng.normal(ids, rng.key(7, 0, 3))
    assert np.isfinite(z).all()
    # mean: SE 1/√n; variance: SE √(2/n) for a normal; P(|z| > 1.96) = 0.05, SE √(0.05·0.95/n)
    assert abs(z.mean()) < 4 / math.sqrt(N)
    assert abs(z.var(ddof=1) - 1) < 4 * math.sqrt(2 / N)
    assert abs(np.mean(np.abs(z) > 1.959964) - 0.05) < 4 * math.sqrt(0.05 * 0.95 / N)
    perm = np.random.default_rng(1).permutation(N)
    np.testing.assert_array_equal(rng.normal(ids[perm], rng.key(7, 0, 3)), z[perm])
    assert not np.array_equal(rng.normal(ids, rng.key(7, 0, 4)), z)


def test_box_muller_ends_of_the_unit_interval_are_finite():
    u_last = 1 - 2.0**-53
    z = rng.box_muller(np.array([0.0, u_last, u_last]), np.array([0.0, 0.0, 0.5]))
    np.testing.assert_allclose(z, [0.0, math.sqrt(106 * math.log(2)),
                                   -math.sqrt(106 * math.log(2))])


def test_order_free_sum_ignores_order_and_is_accurate():
    x = np.random.default_rng(3).lognormal(5, 2, 10_001) * np.where(np.arange(10_001) % 3, 1, -1)
    total = order_free_sum(x)
    for seed in range(3):
        assert order_free_sum(np.random.default_rng(seed).permutation(x)) == total
    assert abs(total - math.fsum(x)) <= 1e-9 * np.abs(x).max()
    assert order_free_sum(np.array([])) == 0.0 and order_free_sum(np.zeros(3)) == 0.0


# --- noise ------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [1, 2])
def test_additive_noise_has_mean_zero_and_sd_p_percent_of_the_column_sd(seed):
    df = table()
    res = noise(df, ["a"], p=150, seed=seed)
    e = (res.values["a"] - df["a"]).to_numpy()
    tau = 1.5 * df["a"].std()
    # e ~ N(0, τ²): mean SE τ/√n; sample sd SE τ/√(2(n − 1))
    assert abs(e.mean()) < 4 * tau / math.sqrt(N)
    assert abs(e.std(ddof=1) - tau) < 4 * tau / math.sqrt(2 * (N - 1))
    col = res.info["columns"]["a"]
    assert col["expected_noise_sd"] == pytest.approx(tau, rel=1e-9)
    assert col["noise_sd"] == pytest.approx(e.std(ddof=1), rel=1e-9)
    assert res.info["kind"] == "additive" and res.info["p"] == 150
    assert res.info["changed_share"] == col["changed_share"] == 1.0


def test_correlated_noise_has_covariance_p_percent_of_sigma():
    df = table()
    res = noise(df, ["a", "b", "c"], kind="correlated", p=120, seed=5)
    e = (res.values - df.astype(float)).to_numpy()
    c = 1.2 * np.cov(df.to_numpy(dtype=float), rowvar=False)
    got = np.cov(e, rowvar=False)
    # Gaussian noise: Var(Ĉ_jk) ≈ (C_jj·C_kk + C_jk²)/n; each mean has SE √(C_jj/n)
    se = np.sqrt((np.outer(np.diag(c), np.diag(c)) + c**2) / N)
    assert (np.abs(got - c) < 4 * se).all()
    assert (np.abs(e.mean(axis=0)) < 4 * np.sqrt(np.diag(c) / N)).all()
    assert res.info["complete_cases"] == N
    for j, col in enumerate("abc"):
        assert res.info["columns"][col]["expected_noise_sd"] == pytest.approx(
            math.sqrt(c[j, j]), rel=1e-9)


def test_correlated_noise_with_a_singular_covariance_stays_in_its_subspace():
    df = table(20_000)
    df["d"] = 2 * df["a"] - df["b"]          # Σ has rank 2: v = (2, −1, −1) spans its null space
    res = noise(df, ["a", "b", "d"], kind="correlated", seed=3)
    e = (res.values - df[["a", "b", "d"]]).to_numpy()
    assert np.isfinite(e).all()
    assert np.abs(2 * e[:, 0] - e[:, 1] - e[:, 2]).max() < 1e-6 * np.abs(e).max()


@pytest.mark.parametrize("delta", [0.1, 0.5])
def test_correlated2_keeps_mean_and_variance(delta):
    df = table()
    x = df["a"].to_numpy()
    res = noise(df, ["a"], kind="correlated2", delta=delta, seed=9)
    y = res.values["a"].to_numpy()
    s, d = x.std(ddof=1), math.sqrt(1 - delta**2)
    # y = d·x + (1 − d)·x̄ + δ·s·z: mean(y) − x̄ = δ·s·mean(z), SE δ·s/√n;
    # var(y) − s² = δ²s²(var(z) − 1) + 2dδs·cov(x, z), SE s²·√((2δ⁴ + 4d²δ²)/n)
    assert abs(y.mean() - x.mean()) < 4 * delta * s / math.sqrt(N)
    assert abs(y.var(ddof=1) - s**2) < 4 * s**2 * math.sqrt((2 * delta**4 + 4 * d**2 * delta**2)
                                                            / N)
    col = res.info["columns"]["a"]
    assert col["expected_noise_sd"] == pytest.approx(math.sqrt(2 * (1 - d)) * s, rel=1e-9)
    assert col["noise_sd"] == pytest.approx(np.std(y - x, ddof=1), rel=1e-9)
    assert res.info["delta"] == delta and "p" not in res.info


@pytest.mark.parametrize("kind", ["additive", "correlated", "correlated2"])
def test_noise_is_deterministic_and_independent_of_row_order(kind):
    df = table(5_000)
    ids = np.arange(5_000, dtype=np.uint64) * 7919 + 11
    first = noise(df, ["a", "b"], kind=kind, seed=4, step=2, rid=ids)
    again = noise(df, ["a", "b"], kind=kind, seed=4, step=2, rid=ids)
    pd.testing.assert_frame_equal(first.values, again.values)
    assert first.info == again.info
    assert not noise(df, ["a", "b"], kind=kind, seed=5, step=2, rid=ids).values.equals(
        first.values)
    assert not noise(df, ["a", "b"], kind=kind, seed=4, step=3, rid=ids).values.equals(
        first.values)
    perm = np.random.default_rng(0).permutation(5_000)
    shuffled = noise(df.iloc[perm], ["a", "b"], kind=kind, seed=4, step=2, rid=ids[perm])
    np.testing.assert_array_equal(shuffled.values.to_numpy(), first.values.to_numpy()[perm])
    assert list(shuffled.values.index) == list(df.index[perm])
    assert shuffled.info == first.info


@pytest.mark.parametrize("kind", ["additive", "correlated2"])
def test_a_columns_noise_does_not_depend_on_the_other_columns(kind):
    df = table(2_000)
    alone = noise(df, ["a"], kind=kind, seed=1).values["a"]
    for cols in (["a", "b"], ["c", "b", "a"]):
        pd.testing.assert_series_equal(noise(df, cols, kind=kind, seed=1).values["a"], alone)


def test_correlated_noise_does_not_depend_on_the_column_order():
    df = table(2_000)
    abc = noise(df, ["a", "b", "c"], kind="correlated", seed=1).values
    cab = noise(df, ["c", "a", "b"], kind="correlated", seed=1).values
    # the same up to rounding (the eigen-decomposition sees Σ permuted)
    np.testing.assert_allclose(cab[["a", "b", "c"]].to_numpy(), abc.to_numpy(), rtol=0,
                               atol=1e-9 * df.to_numpy().std())


@pytest.mark.parametrize("kind", ["additive", "correlated", "correlated2"])
def test_missing_values_stay_missing_and_are_left_out_of_the_statistics(kind):
    df = table(3_000)
    df["a"] = df["a"].mask(df.index % 5 == 0)
    df["c"] = df["c"].astype("Int64").mask(df.index % 7 == 0)
    res = noise(df, ["a", "c"], kind=kind, seed=2)
    for col in ("a", "c"):
        missing = df[col].isna().to_numpy()
        assert res.values[col].isna().to_numpy().tolist() == missing.tolist()
        assert res.values[col].dtype == np.float64
        assert (res.values[col][~missing] != df[col][~missing]).all()
    if kind == "additive":
        assert res.info["columns"]["a"]["expected_noise_sd"] == pytest.approx(
            1.5 * df["a"].dropna().std(), rel=1e-9)
    if kind == "correlated":
        both = df[["a", "c"]].notna().all(axis=1)
        assert res.info["complete_cases"] == int(both.sum())
        cov = np.cov(df.loc[both, ["a", "c"]].to_numpy(dtype=float), rowvar=False)
        assert res.info["columns"]["c"]["expected_noise_sd"] == pytest.approx(
            math.sqrt(1.5 * cov[1, 1]), rel=1e-9)


@pytest.mark.parametrize("args, message", [
    ({"p": 0}, "p must be a positive number"),
    ({"p": -5}, "p must be a positive number"),
    ({"delta": 0}, "delta must lie in"),
    ({"delta": 1.5}, "delta must lie in"),
    ({"kind": "ROMM"}, "kind must be one of"),
    ({"columns": ["s"]}, "column 's' holds text"),
    ({"columns": ["flag"]}, "column 'flag' holds True/False values"),
    ({"columns": ["one"]}, "at least 2 non-missing values in column 'one'"),
    ({"columns": ["inf"]}, "column 'inf' holds infinite values"),
    ({"columns": ["nope"]}, "unknown column(s) nope"),
    ({"columns": []}, "at least one column"),
    ({"columns": ["a", "a"]}, "twice"),
    ({"columns": ["a", "half"], "kind": "correlated"}, "at least 2 records with every column"),
])
def test_noise_errors_name_the_parameter(args, message):
    df = pd.DataFrame({"a": [1.0, 2, 3, 4], "s": list("wxyz"), "flag": [True, False] * 2,
                       "one": [1.0, None, None, None], "inf": [1.0, 2, np.inf, 3],
                       "half": [None, None, 1.0, 2.0]})
    df.loc[3, "a"] = np.nan
    kwargs = {"columns": ["a"]} | args
    with pytest.raises(SdcInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        noise(df, **kwargs)


def test_noise_of_a_constant_column_changes_nothing():
    df = pd.DataFrame({"k": [5.0] * 10})
    res = noise(df, ["k"], seed=1)
    assert res.values["k"].tolist() == [5.0] * 10
    assert res.info["changed_share"] == 0.0


# --- recoding ---------------------------------------------------------------------------------

def test_recode_groups_merges_listed_levels_and_reports_absent_ones():
    s = pd.Series(["a", "b", "c", "a", None, "d"], dtype="str", name="x")
    res = recode(s, {"ab": ["a", "b"], "q": ["zz"]})
    assert res.values.tolist()[:4] == ["ab", "ab", "c", "ab"] and pd.isna(res.values[4])
    assert res.values.dtype == s.dtype and res.values.name == "x"
    assert res.info == {"mode": "groups", "merged": {"ab": ["a", "b"]}, "changed": 3,
                        "levels_before": 4, "levels_after": 3, "not_present": ["zz"]}


def test_recode_into_an_existing_level_and_a_label_listing_itself():
    s = pd.Series(list("aabcd"), dtype="str")
    res = recode(s, {"a": ["a", "b"], "d": ["c"]})
    assert res.values.tolist() == ["a", "a", "a", "d", "d"]
    assert res.info["changed"] == 2 and res.info["merged"] == {"a": ["b"], "d": ["c"]}


def test_recode_min_count_merges_rare_levels():
    s = pd.Series(list("aaabbcd") + [None], dtype="str")
    res = recode(s, min_count=2)
    assert res.values.tolist()[:7] == ["a", "a", "a", "b", "b", "other", "other"]
    assert pd.isna(res.values.iloc[7])
    assert res.info["merged"] == {"other": ["c", "d"]} and res.info["changed"] == 2
    assert res.info["other_count"] == 2 and not res.info["other_still_rare"]
    rare = recode(pd.Series(list("aaab"), dtype="str"), min_count=2, other="rest")
    assert rare.values.tolist() == ["a", "a", "a", "rest"]
    assert rare.info["other_still_rare"] and rare.info["other_count"] == 1
    assert recode(rare.values, min_count=2, other="rest").values.equals(rare.values)


def test_recode_numeric_codes_from_json():
    codes = pd.Series([1, 2, 3, 1, 2, 3, 3, 4], name="arms")
    text = recode(codes, json.loads('{"low": [1, 2.0]}'))
    assert text.values.tolist() == ["low", "low", "3", "low", "low", "3", "3", "4"]
    assert pd.api.types.is_string_dtype(text.values)
    assert text.info["merged"] == {"low": [1, 2]} and text.info["changed"] == 4
    same = recode(codes, json.loads('{"1": [1, "2"], "4": [4]}'))
    assert same.values.tolist() == [1, 1, 3, 1, 1, 3, 3, 4] and same.values.dtype == np.int64
    assert same.info["changed"] == 2 and same.info["merged"] == {"1": [2]}
    half = recode(codes, {"1.5": [1, 2]})
    assert half.values.dtype == np.float64 and half.values.tolist()[:3] == [1.5, 1.5, 3.0]
    nullable = pd.Series([1, 2, None, 3], dtype="Int64")
    out = recode(nullable, {"9": [1, 2]}).values
    assert out.dtype == "Int64" and out.tolist()[:2] == [9, 9] and out.isna().tolist()[2]
    assert recode(nullable, {"9.5": [1]}).values.dtype == "Float64"
    floats = pd.Series([1.0, 2.0, np.nan, 3.0, 3.0])
    rest = recode(floats, min_count=2)
    assert rest.values.tolist()[:2] == ["other", "other"] and rest.values.tolist()[3] == "3"
    assert pd.isna(rest.values.iloc[2])
    assert recode(floats, min_count=2, other="99").values.tolist()[:2] == [99.0, 99.0]


def test_recode_text_codes_match_numbers_by_their_text():
    s = pd.Series(["1", "2", "02", "3"], dtype="str")
    res = recode(s, {"low": [1, 2.0]})
    assert res.values.tolist() == ["low", "low", "02", "3"]
    assert recode(pd.Series(pd.Categorical(["x", "y", None])), {"xy": ["x", "y"]}
                  ).values.tolist()[:2] == ["xy", "xy"]


@pytest.mark.parametrize("args, message", [
    ({}, "exactly one"),
    ({"groups": {"a": ["a"]}, "min_count": 2}, "exactly one"),
    ({"groups": {}}, "at least one label"),
    ({"groups": {"a": "b"}}, r"groups\['a'\] must be a non-empty list"),
    ({"groups": {"a": []}}, r"groups\['a'\] must be a non-empty list"),
    ({"groups": {"a": [None]}}, "levels are text or numbers"),
    ({"groups": {"a": [True]}}, "levels are text or numbers"),
    ({"groups": {"": ["b"]}}, "label in groups must be a non-empty text"),
    ({"groups": {"x": ["b", "b"]}}, "'b' twice under 'x'"),
    ({"groups": {"x": ["b"], "y": ["b"]}}, r"'b' twice \(under 'x' and 'y'\)"),
    ({"groups": {"b": ["a"], "c": ["b"]}}, "label 'b' is also listed as a level of 'c'"),
    ({"min_count": 0}, "min_count must be a whole number"),
    ({"min_count": 2, "other": ""}, "other must be a non-empty text"),
])
def test_recode_errors(args, message):
    with pytest.raises(SdcInputError, match=message):
        recode(pd.Series(list("abc"), dtype="str"), **args)


def test_recode_numeric_duplicates_across_spellings_and_dates():
    with pytest.raises(SdcInputError, match="twice"):
        recode(pd.Series([1, 2, 3]), {"x": [2], "y": ["2.0"]})
    with pytest.raises(SdcInputError, match="holds dates"):
        recode(pd.Series(pd.to_datetime(["2020-01-01"])), min_count=2)


@st.composite
def recodings(draw):
    numeric = draw(st.booleans())
    pool = [1, 2, 3, 4, 5] if numeric else ["a", "b", "c", "d", "e"]
    n = draw(st.integers(0, 30))
    values = draw(st.lists(st.one_of(st.none(), st.sampled_from(pool)), min_size=n, max_size=n))
    s = pd.Series(values, dtype="Int64" if numeric else "str")
    absent = 9 if numeric else "z"
    members = draw(st.lists(st.sampled_from(pool + [absent]), min_size=1, unique=True))
    names = draw(st.sampled_from([["10", "20", "30"], ["X", "Y", "Z"], ["10", "Y", "30"]]))
    assign = draw(st.lists(st.integers(0, 2), min_size=len(members), max_size=len(members)))
    groups: dict[str, list] = {}
    for m, g in zip(members, assign):
        label = str(m) if draw(st.booleans()) and g == 0 else names[g]  # sometimes lists itself
        groups.setdefault(label, []).append(m)
    return s, groups, numeric


def _plain(series):
    return [None if pd.isna(v) else (float(v) if not isinstance(v, str) else v) for v in series]


@settings(max_examples=200, deadline=None)
@given(case=recodings())
def test_recode_groups_equals_a_lookup_value_by_value_and_is_idempotent(case):
    s, groups, numeric = case
    present = set(s.dropna().tolist())
    # numbers out when every label a present level moves to is a number
    labels_numeric = numeric and all(k.isdigit() for k, ms in groups.items()
                                     if any(m in present for m in ms))
    lookup = {m: k for k, ms in groups.items() for m in ms}

    def written(v):  # a value as the output writes it
        return float(v) if labels_numeric else (str(v) if numeric else v)

    def label(k):
        return float(k) if labels_numeric else k

    expected = [None if v is None or pd.isna(v) else
                (label(lookup[v]) if v in lookup else written(v)) for v in s.tolist()]
    res = recode(s, groups)
    original = [None if v is None or pd.isna(v) else written(v) for v in s.tolist()]
    changed = sum(a != b for a, b in zip(original, expected))
    if not changed:  # nothing moved: the column comes back as it was
        expected = _plain(s)
    assert _plain(res.values) == expected
    assert res.info["changed"] == changed
    assert res.info["levels_after"] == len({v for v in expected if v is not None})
    assert res.info["not_present"] == [m for _, ms in groups.items() for m in ms
                                       if m not in set(s.dropna().tolist())]
    again = recode(res.values, groups)
    pd.testing.assert_series_equal(again.values, res.values)
    assert again.info["changed"] == 0


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.one_of(st.none(), st.sampled_from("abcdef")), max_size=40),
       c=st.integers(1, 6))
def test_recode_min_count_equals_the_count_rule_and_is_idempotent(values, c):
    s = pd.Series(values, dtype="str")
    counts = Counter(v for v in values if v is not None)
    expected = [None if v is None else ("other" if counts[v] < c else v) for v in values]
    res = recode(s, min_count=c)
    assert _plain(res.values) == expected
    kept = Counter(v for v in expected if v is not None)
    assert all(n >= c for v, n in kept.items() if v != "other")
    assert res.info["other_count"] == kept.get("other", 0)
    assert res.info["other_still_rare"] == (0 < kept.get("other", 0) < c)
    again = recode(res.values, min_count=c)
    pd.testing.assert_series_equal(again.values, res.values)
    assert again.info["changed"] == 0


# --- in recipes -------------------------------------------------------------------------------

def test_noise_and_recode_are_recipe_steps():
    assert {"noise", "recode"} <= set(registry())
    df = pd.DataFrame({"arms": [1, 2, 3, 1] * 25, "w": np.linspace(50, 90, 100),
                       "h": np.linspace(150, 190, 100) ** 1.1, "id": np.arange(100) + 1000})
    recipe = parse_recipe({"seed": 3, "record_id": "id", "steps": [
        {"method": "recode", "column": "arms", "groups": {"1": [1, 2]}},
        {"method": "noise", "columns": ["w", "h"], "kind": "correlated", "p": 50}]})
    out = apply_recipe(recipe, df)
    assert out.data["arms"].tolist()[:4] == [1, 1, 3, 1]
    assert out.reports[0]["changed"] == 25 and out.reports[1]["kind"] == "correlated"
    direct = noise(df, ["w", "h"], kind="correlated", p=50, seed=3, step=1,
                   rid=rng.ids_from_column(df["id"].to_numpy()))
    pd.testing.assert_frame_equal(out.data[["w", "h"]], direct.values)
    shuffled = apply_recipe(recipe, df.iloc[::-1])
    pd.testing.assert_frame_equal(shuffled.data.iloc[::-1], out.data)


@pytest.mark.parametrize("kind", ["additive", "correlated", "correlated2"])
def test_noise_far_outside_any_range_is_one_line(kind):
    """p = 1e308 % overflowed floating point and ended in an internal error: now either a
    release whose squares are still finite (correlated noise scales by √p; correlated2 reads δ,
    not p) or one line."""
    df = pd.DataFrame({"a": [1.0, 2, 3, 4, 5], "b": [2.0, 1, 4, 3, 5]})
    recipe = parse_recipe({"seed": 1, "steps": [
        {"method": "noise", "columns": ["a", "b"], "kind": kind, "p": 1e308}]})
    if kind != "additive":
        out = apply_recipe(recipe, df).data.to_numpy()
        assert np.isfinite(out * out).all()
        return
    with pytest.raises(SdcInputError, match=r"step 1 \(noise\): .*too large for floating"):
        apply_recipe(recipe, df)
