"""Protection methods: properties (hypothesis) and statistical checks with fixed seeds.

Statistical tolerances are 4 standard errors of the quantity under test (a two-sided miss
probability of about 6e-5 per check if the implementation is right)."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdc_core.errors import SdcInputError
from sdc_core.methods import (
    band,
    estimate_shares,
    local_suppression,
    pram,
    randomized_response,
    rank_swap,
    relabel,
    top_bottom_code,
)
from sdc_core.methods.pram import invariant_matrix
from sdc_core.methods.rank_swap import swap_partners, window_ranks
from sdc_core.risk import class_sizes, risk_profile

finite = st.floats(-1e6, 1e6, allow_nan=False)


# ---------------------------------------------------------------- banding
@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(finite, st.none()), min_size=1, max_size=50),
       st.sampled_from([0.5, 1, 2.5, 5, 10, 15, 100]), st.sampled_from([0.0, 3.0, -7.5]))
def test_banding_is_idempotent_and_monotone(values, width, origin):
    s = pd.Series(values, dtype=float)
    once = band(s, width, origin, label="midpoint").values
    twice = band(once, width, origin, label="midpoint").values
    np.testing.assert_array_equal(once.to_numpy(), twice.to_numpy())
    present = s.notna().to_numpy()
    order = np.argsort(s[present].to_numpy(), kind="stable")
    banded = once[present].to_numpy()[order]
    assert (np.diff(banded) >= 0).all()
    assert once.isna().equals(s.isna())
    x = s[present].to_numpy()
    assert (np.abs(banded - np.sort(x)) <= width / 2 + 1e-6 * (1 + np.abs(np.sort(x)))).all()


def test_banding_reproduces_seed_classes_and_labels():
    s = pd.Series([12, 19, 20, 34, 70], name="age")
    assert band(s, 10).values.tolist() == ["10–19", "10–19", "20–29", "30–39", "70–79"]
    assert band(s, 10, label="midpoint").values.tolist() == [15.0, 15.0, 25.0, 35.0, 75.0]
    assert band(s, 10).info["bands"] == 4
    assert band(pd.Series([1e300, -1e300, 0.0, np.nan]), 1).info["bands"] == 3
    assert band(s, 15, label="interval").values.tolist() == [
        "[0, 15)", "[15, 30)", "[15, 30)", "[30, 45)", "[60, 75)"]
    assert band(s, 10, origin=5, label="midpoint").values.tolist() == [
        10.0, 20.0, 20.0, 30.0, 70.0]


def test_band_labels_lower_bound_and_whole_number_ranges():
    """Ages 17–19 in the band [10, 20) were released as 15.0, outside the data: the lower
    bound and the range "10–19" say what the band holds."""
    s = pd.Series([17, 19, 20, 34, None], name="age", dtype="Int64")
    assert band(s, 10, label="lower").values.tolist()[:4] == [10.0, 10.0, 20.0, 30.0]
    assert band(s, 5, origin=2, label="range").values.tolist()[:4] == [
        "17–21", "17–21", "17–21", "32–36"]
    with pytest.raises(SdcInputError, match="range labels"):
        band(pd.Series([17.5, 19.0]), 10, label="range")


def test_band_custom_breaks():
    s = pd.Series([17, 19, 20, 34, 70, np.nan], name="age")
    res = band(s, breaks=[15, 20, 65, 100], label="midpoint")
    assert res.values.tolist()[:5] == [17.5, 17.5, 42.5, 42.5, 82.5] and res.info["bands"] == 3
    assert band(s, breaks=[15, 20, 65, 100]).values.tolist()[:2] == ["[15, 20)", "[15, 20)"]
    assert band(s, breaks=[15, 20, 65, 100], label="range").values.tolist()[:5] == [
        "15–19", "15–19", "20–64", "20–64", "65–99"]
    assert band(s, breaks=[15, 20, 65, 100], label="interval").values.tolist()[4] == "[65, 100)"
    assert band(s, breaks=[15, 20, 65, 100], label="lower").values.tolist()[:2] == [15.0, 15.0]
    for kwargs, words in (({"breaks": [18, 65, 100]}, "do not hold every value"),
                          ({"breaks": [15, 15, 100]}, "increasing order"),
                          ({"width": 5, "breaks": [0, 100]}, "either a width or breaks"),
                          ({"breaks": [0, 100], "origin": 3}, "origin is for bands")):
        with pytest.raises(SdcInputError, match=words):
            band(s, **kwargs)
    with pytest.raises(SdcInputError, match="breaks are for numeric columns"):
        band(pd.Series(pd.to_datetime(["2024-01-04"])), breaks=[0, 1])


@pytest.mark.parametrize("step", [
    {"method": "band", "column": "age", "breaks": [0, 18, 30, 65, 120], "label": "range"},
    {"method": "band", "column": "age", "width": 10, "label": "lower"},
    {"method": "band", "column": "age", "width": 5, "origin": 2, "label": "range"},
    {"method": "band", "column": "age", "width": 10},
    {"method": "band", "column": "age", "width": 2.5, "label": "midpoint"},
])
def test_band_labels_and_breaks_agree_everywhere(step):
    """The conformance invariants (page, files, sweep row, engines' report, linkage reference)
    hold for the new labels and for breaks."""
    from tests.conformance import check_release

    rng = np.random.default_rng(5)
    df = pd.DataFrame({"age": rng.integers(0, 90, 40), "sex": rng.choice(["f", "m"], 40)})
    assert check_release(df, ["age", "sex"], ["age"], {"seed": 1, "steps": [step]}) == "ok"


@pytest.mark.parametrize("width, expected", [(5, 44), (10, 25), (15, 18)])
def test_golden_actg_banding_then_risk(actg, width, expected):
    banded = actg.assign(age=band(actg["age"], width).values)
    p = risk_profile(banded, ["age", "gender", "race"])
    assert p.expected_reidentifications == pytest.approx(expected, abs=1e-9)


def test_dates_are_banded_on_day_numbers():
    # day 19726 (2024-01-04) starts a 7-day band: 19726 = 2818 * 7
    d = pd.Series(pd.to_datetime(["2024-01-04", "2024-01-10", "2024-01-11", None]))
    out = band(d, 7, label="midpoint").values
    assert out[0] == out[1] == pd.Timestamp("2024-01-07") and pd.isna(out[3])
    assert out[2] == pd.Timestamp("2024-01-14")
    assert band(out, 7, label="midpoint").values.equals(out)
    assert band(d, 7).values.tolist()[:3] == ["[2024-01-04, 2024-01-11)"] * 2 + [
        "[2024-01-11, 2024-01-18)"]


def test_top_bottom_coding():
    s = pd.Series([1, 5, 9, 100, np.nan])
    r = top_bottom_code(s, top=50, bottom=2)
    assert r.values.tolist()[:4] == [2, 5, 9, 50] and r.info["top_coded"] == 1
    assert top_bottom_code(s, top_percentile=100).values.max() == 100
    with pytest.raises(SdcInputError, match="bottom .* is above top"):
        top_bottom_code(s, top=1, bottom=5)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.integers(-50, 50).map(float),
                          st.floats(-1e6, 1e6, allow_nan=False)), min_size=1, max_size=40),
       st.one_of(st.sampled_from([0.0, 50.0, 95.0, 99.9, 100.0]), st.floats(0, 100)))
def test_percentile_from_two_order_statistics_is_numpys(values: list[float], q: float):
    """The engines' percentile (two order statistics) equals numpy's, bit for bit."""
    from sdc_core.methods.banding import percentile

    x = np.array(values)
    assert percentile(len(x), q, lambda ranks: np.sort(x)[ranks]) == np.percentile(x, q)
    s = pd.Series(x)
    assert top_bottom_code(s, top_percentile=q).info["top"] == np.percentile(x, q)


def test_numeric_methods_refuse_text():
    s = pd.Series(["a", "b"], name="city")
    with pytest.raises(SdcInputError, match="column 'city' holds text"):
        band(s, 5)
    with pytest.raises(SdcInputError, match="column 'city' holds text"):
        rank_swap(s)


# ---------------------------------------------------------------- rank swapping
@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(-50, 50), st.none()), min_size=1, max_size=80),
       st.sampled_from([0.5, 2.5, 10, 50]), st.integers(0, 2**32))
def test_rank_swap_properties(values, percent, seed):
    s = pd.Series(values, dtype="Float64")
    r = rank_swap(s, percent, seed=seed)
    out = r.values
    assert out.isna().equals(s.isna())
    assert sorted(out.dropna().tolist()) == sorted(s.dropna().tolist())
    present = s.notna().to_numpy()
    x = s[present].to_numpy(dtype=float)
    if len(x) >= 2:
        ids = np.flatnonzero(present).astype(np.uint64)
        partner, rank, w = swap_partners(x, ids, percent, seed, 0)
        assert w == window_ranks(len(x), percent)
        np.testing.assert_array_equal(partner[partner], np.arange(len(x)))  # moves once
        assert (np.abs(rank[partner] - rank) <= w).all()
        np.testing.assert_array_equal(out[present].to_numpy(dtype=float), x[partner])
        assert r.info["max_rank_displacement"] <= w


def test_rank_swap_on_actg_weight(actg):
    r = rank_swap(actg["wtkg"], 2.5, seed=11)
    w = window_ranks(len(actg), 2.5)
    assert r.info["window_ranks"] == w == 54
    assert r.info["max_rank_displacement"] <= w
    # pairs inside blocks of w + 1: at most one record per block stays
    assert r.info["swapped_share"] >= 1 - (len(actg) / (w + 1) + 1) / len(actg)
    assert sorted(r.values) == sorted(actg["wtkg"])


def test_rank_swap_does_not_depend_on_row_order(actg):
    ids = actg["pidnum"].to_numpy().astype(np.uint64)
    a = rank_swap(actg["cd40"], 5, seed=3, rid=ids).values.to_numpy()
    perm = np.random.default_rng(5).permutation(len(actg))
    b = rank_swap(actg["cd40"].iloc[perm], 5, seed=3, rid=ids[perm]).values.to_numpy()
    np.testing.assert_array_equal(a[perm], b)


# ---------------------------------------------------------------- PRAM
@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(["a", "b", "c", "d"]), st.none()), min_size=1,
                max_size=60), st.floats(0, 1), st.integers(0, 1000))
def test_pram_releases_only_known_categories(values, p, seed):
    s = pd.Series(values, dtype="str")
    known = set(s.dropna())
    for r in (pram(s, p=p, seed=seed), pram(s, invariant=True, retention=max(p, 0.01),
                                             seed=seed)):
        assert set(r.values.dropna()) <= known
        assert r.values.isna().equals(s.isna())
        np.testing.assert_allclose(r.matrix.sum(axis=1), 1.0, atol=1e-12)


def test_pram_flip_changes_share_p():
    n, p = 100_000, 0.1
    s = pd.Series(np.random.default_rng(0).choice(["x", "y", "z"], n), dtype="str")
    r = pram(s, p=p, seed=9)
    se = np.sqrt(p * (1 - p) / n)
    assert abs(r.info["changed_share"] - p) < 4 * se
    assert r.info["expected_changed_share"] == pytest.approx(p)


def test_invariant_pram_keeps_the_expected_marginal():
    rng = np.random.default_rng(1)
    n = 100_000
    s = pd.Series(rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1]), dtype="str")
    pi = s.value_counts(normalize=True).sort_index().to_numpy()
    R = invariant_matrix(pi, 0.7)
    np.testing.assert_allclose(pi @ R, pi, atol=1e-12)
    r = pram(s, invariant=True, retention=0.7, seed=4)
    codes = pd.Categorical(s, categories=["a", "b", "c"]).codes
    after = r.values.value_counts().sort_index().to_numpy()
    before = s.value_counts().sort_index().to_numpy()
    for j in range(3):
        var = np.sum(R[codes, j] * (1 - R[codes, j]))
        assert abs(after[j] - before[j]) < 4 * np.sqrt(var)


def test_pram_user_matrix_and_errors():
    s = pd.Series([0, 1, 1, 0] * 50)
    r = pram(s, matrix={"0": {"0": 1.0}, "1": {"0": 1.0}})
    assert (r.values == 0).all() and r.values.dtype == s.dtype
    with pytest.raises(SdcInputError, match="rows must sum to 1"):
        pram(s, matrix={"0": {"0": 0.5}, "1": {"1": 1.0}})
    with pytest.raises(SdcInputError, match="not in the column: 7"):
        pram(s, matrix={"0": {"7": 1.0}, "1": {"1": 1.0}})
    with pytest.raises(SdcInputError, match="exactly one of"):
        pram(s)
    with pytest.raises(SdcInputError, match=r"p must lie in \[0, 1\]"):
        pram(s, p=1.5)


def test_seed_003_binary_flip_on_gender(actg):
    r = pram(actg["gender"], p=0.05, seed=2)
    changed = (r.values != actg["gender"]).mean()
    assert abs(changed - 0.05) < 4 * np.sqrt(0.05 * 0.95 / len(actg))
    assert set(r.values) == {0, 1}


# ---------------------------------------------------------------- relabeling
def test_relabel_changed_share_matches_expectation():
    n, alpha = 200_000, 0.1
    p = np.array([0.5, 0.3, 0.2])  # the seed 000 example
    s = pd.Series(np.random.default_rng(2).choice(["A", "B", "C"], n, p=p), dtype="str")
    r = relabel(s, alpha, seed=42)
    expected = r.info["expected_changed_share"]
    emp = s.value_counts(normalize=True).to_numpy()
    assert expected == pytest.approx(alpha * (1 - np.sum(emp**2)), rel=1e-12)
    assert abs(r.info["changed_share"] - expected) < 4 * np.sqrt(expected * (1 - expected) / n)
    assert abs(r.info["redrawn_share"] - alpha) < 4 * np.sqrt(alpha * (1 - alpha) / n)
    # the marginal is kept in expectation: each share within 4 standard errors
    after = r.values.value_counts(normalize=True).sort_index().to_numpy()
    before = s.value_counts(normalize=True).sort_index().to_numpy()
    assert (np.abs(after - before) < 4 * np.sqrt(2 * alpha * before * (1 - before) / n)).all()


def test_relabel_extremes():
    s = pd.Series(["a", "b", None, "c"] * 10, dtype="str")
    assert relabel(s, 0.0, seed=1).values.equals(s)
    r = relabel(s, 1.0, seed=1)
    assert r.values.isna().equals(s.isna()) and r.info["redrawn_share"] == 1.0


# ---------------------------------------------------------------- randomized response
def test_randomized_response_estimator_is_unbiased_within_its_se():
    rng = np.random.default_rng(3)
    n, truth = 50_000, 0.2  # the seed 002 survey
    s = pd.Series(rng.random(n) < truth)
    s = s.map({True: "violated", False: "clean"}).astype("str")
    r = randomized_response(s, 0.5, seed=2)
    assert r.info["epsilon"] == pytest.approx(np.log(3))
    est = estimate_shares(r.values, 0.5).set_index("category")
    true_share = (s == "violated").mean()
    lam = (r.values == "violated").mean()
    assert est.loc["violated", "estimate"] == pytest.approx(2 * lam - 0.5, abs=1e-12)
    assert abs(est.loc["violated", "estimate"] - true_share) < 4 * est.loc["violated", "se"]
    assert est["estimate"].sum() == pytest.approx(1.0)


def test_randomized_response_k_categories():
    s = pd.Series(np.random.default_rng(4).choice([1, 2, 3, 4], 40_000, p=[.4, .3, .2, .1]))
    r = randomized_response(s, 0.6, seed=5)
    assert r.values.dtype == s.dtype and set(r.values) <= {1, 2, 3, 4}
    est = estimate_shares(r.values, 0.6).set_index("category")
    truth = s.value_counts(normalize=True)
    for c in (1, 2, 3, 4):
        assert abs(est.loc[str(c), "estimate"] - truth[c]) < 4 * est.loc[str(c), "se"]
    assert r.info["epsilon"] == pytest.approx(np.log((0.6 + 0.1) / 0.1))


# ---------------------------------------------------------------- local suppression
def test_local_suppression_reaches_k_and_counts_suppressions(actg):
    qi = ["age", "gender", "race"]
    r = local_suppression(actg, qi, 5)
    fk = class_sizes(r.data, qi).fk
    assert fk.min() >= 5 and r.info["min_k_after"] >= 5
    new_missing = r.data[qi].isna().sum() - actg[qi].isna().sum()
    assert r.suppressed == {c: int(new_missing[c]) for c in qi}
    violators = int((class_sizes(actg, qi).fk < 5).sum())
    assert 0 < r.info["total_suppressed"] <= violators  # at most one value per violator here
    unchanged = r.data[qi].notna().all(axis=1)
    pd.testing.assert_frame_equal(r.data.loc[unchanged, qi].astype(float),
                                  actg.loc[unchanged, qi].astype(float))


def test_local_suppression_reports_both_readings_of_blanks():
    df = pd.DataFrame({"a": [1, 1, 2, 2, 3], "b": ["x", "x", "y", "y", "x"]})
    r = local_suppression(df, ["a", "b"], 2)
    # (3, x) is unique; blanking a makes it match both (1, x) records: k = 2 as wildcards
    assert r.suppressed == {"a": 1, "b": 0} and r.data["a"].isna().tolist()[4]
    np.testing.assert_array_equal(class_sizes(r.data, ["a", "b"]).fk, [3, 3, 2, 2, 3])
    assert r.info["min_k_after"] == 2
    # as a value of its own, (missing, x) is a class of one
    np.testing.assert_array_equal(class_sizes(r.data, ["a", "b"], na="category").fk,
                                  [2, 2, 2, 2, 1])
    assert r.info["min_k_after_as_category"] == 1


def test_local_suppression_follows_importance():
    df = pd.DataFrame({"a": [1, 1, 1, 2, 3], "b": ["x", "x", "y", "y", "y"]})
    # without an order, suppressing a in the three violators makes all of them safe at once
    greedy = local_suppression(df, ["a", "b"], 2)
    assert greedy.suppressed == {"a": 3, "b": 0}
    # with a the more important key, b goes first wherever that helps
    keep_a = local_suppression(df, ["a", "b"], 2, importance=["a", "b"])
    assert keep_a.suppressed["b"] >= 1
    assert class_sizes(keep_a.data, ["a", "b"]).fk.min() >= 2
    with pytest.raises(SdcInputError, match="cannot be reached"):
        local_suppression(df, ["a"], 9)


def test_estimate_spread_matches_its_standard_error():
    from sdc_core.methods.randomized_response import estimate_spread
    reps = 400
    d = estimate_spread([100, 1000, 10000], 0.2, 0.5, reps, seed=1)
    for n, g in d.groupby("participants"):
        se = g["se"].iloc[0]
        # the sample mean of 400 estimates is within 4 standard errors of the truth
        assert abs(g["estimate"].mean() - round(n * 0.2) / n) < 4 * se / np.sqrt(reps)
        # the sample sd of 400 normal-ish estimates is within ±4·sd/sqrt(2(reps−1)) of se
        assert abs(g["estimate"].std() - se) < 4 * se / np.sqrt(2 * (reps - 1))
