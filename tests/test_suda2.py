"""SUDA2 special uniques against sdcMicro 5.8.1's own outputs (``tests/data/sdcmicro/suda2``:
200 cases, 230 result sets) and against the definition, record by record (``sdc_core.risk.suda2``
module docstring)."""

from itertools import combinations
from math import factorial

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdc_core.data.io import read_table
from sdc_core.errors import SdcInputError
from sdc_core.risk import suda2 as suda2_module
from sdc_core.risk.suda2 import (
    dis_scores_sdcmicro,
    sdcmicro_hash_uniques,
    shared_counts,
    suda2,
    suda2_memory,
)
from tests import sdcmicro_fixtures as fx
from tests.conftest import ROOT

TESTDATA_KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]


def check_summary(result, positive, max_score, max_dis, contributions):
    s = result.summary()
    assert s["n_records_score_positive"] == positive
    assert s["max_score"] == max_score
    assert s["max_dis_score"] == pytest.approx(max_dis, abs=1e-6)
    assert list(s["attribute_contributions"]) == list(contributions)
    for column, percent in contributions.items():
        assert s["attribute_contributions"][column] == pytest.approx(percent, abs=0.005), column


def test_actg175_reference_figures(actg):
    result = suda2(actg, ["age", "gender", "race"])
    check_summary(result, 29, 2, 0.011560, {"age": 100.0, "gender": 68.75, "race": 56.25})
    assert result.weights == {1: 2.0, 2: 1.0, 3: 1.0}  # (M − s)! with M = 3


def test_sdcmicro_testdata_reference_figures():
    df = read_table(ROOT / "tests/data/testdata.csv")
    result = suda2(df, TESTDATA_KEYS)
    check_summary(result, 157, 720, 0.678143,
                  {"urbrur": 12.04, "roof": 33.87, "walls": 18.10, "water": 53.42,
                   "electcon": 22.52, "relat": 92.60, "sex": 24.95})
    assert result.weights[1] == 720.0 and result.weights[7] == 1.0


RESULT_SETS = [(case, result) for case in fx.cases("suda2") for result in case["results"]]
SET_IDS = [f"{case['id']}_dis{result['DisFraction']}" for case, result in RESULT_SETS]


def fixture_run(case, result, dis_method="formula"):
    df = fx.read("suda2", case["input"])
    keys = list(df.columns)
    return df, keys, suda2(df, keys, result["DisFraction"], dis_method=dis_method)


def test_the_fixtures_are_the_230_result_sets_described():
    assert len(fx.cases("suda2")) == 200 and len(RESULT_SETS) == 230
    assert sorted({len(c["results"]) for c in fx.cases("suda2")}) == [1, 2]
    assert {r["DisFraction"] for _, r in RESULT_SETS} == {0.01, 0.1}


@pytest.mark.parametrize(("case", "result"), RESULT_SETS, ids=SET_IDS)
def test_scores_and_contributions_equal_sdcmicro(case, result):
    df, keys, res = fixture_run(case, result)
    out = fx.read("suda2", result["output"])
    np.testing.assert_allclose(res.score, out["score"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.contribution_percent(),
                               out[[f"{k}_contribution" for k in keys]], rtol=0, atol=1e-12)
    attr = fx.read("suda2", result["attribute_contributions"])
    assert attr["variable"].tolist() == keys
    mine = res.attribute_contributions()
    np.testing.assert_allclose([mine[k] for k in keys], attr["contribution"], rtol=0, atol=1e-12)
    s = res.summary()
    assert s["n_records_score_positive"] == result["n_score_gt_0"]
    assert s["max_score"] == result["max_score"] and res.score.sum() == result["sum_score"]


@pytest.mark.parametrize(("case", "result"), RESULT_SETS, ids=SET_IDS)
def test_attribute_level_contributions_equal_sdcmicro(case, result):
    """Equal where sdcMicro gives a number; where a key has no contribution sdcMicro gives NaN
    (0/0) for its values, this module 0 (the documented departure; one result set)."""
    _, _, res = fixture_run(case, result)
    ref = fx.read("suda2", result["attribute_level_contributions"])
    mine = res.attribute_level_contributions()
    assert mine["variable"].tolist() == ref["variable"].tolist()
    np.testing.assert_array_equal(mine["attribute"].astype(float), ref["attribute"])
    undefined = ref["contribution"].isna().to_numpy()
    np.testing.assert_allclose(mine["contribution"][~undefined], ref["contribution"][~undefined],
                               rtol=0, atol=1e-12)
    assert (mine["contribution"][undefined] == 0).all()
    no_credit = [k for k, v in res.attribute_contributions().items() if v == 0]
    assert sorted(set(ref["variable"][undefined])) == no_credit


def test_one_fixture_set_has_a_key_with_no_contribution():
    undefined = [SET_IDS[i] for i, (_, r) in enumerate(RESULT_SETS) if fx.read(
        "suda2", r["attribute_level_contributions"])["contribution"].isna().any()]
    assert len(undefined) == 1


@pytest.mark.parametrize(("case", "result"), RESULT_SETS, ids=SET_IDS)
def test_dis_scores_as_sdcmicro_evaluates_them(case, result):
    """``dis_method="sdcmicro"``: U counts only the uniques alone in their hash bucket, the
    steps are single precision; every DIS score to 1e-15, NaN where sdcMicro's U is 0."""
    df, keys, res = fixture_run(case, result, "sdcmicro")
    ref = fx.read("suda2", result["output"])["dis_score"].to_numpy()
    np.testing.assert_allclose(res.dis_score, ref, rtol=0, atol=1e-15)  # NaN where ref is NaN
    assert res.n_dis_uniques == sdcmicro_hash_uniques(df, keys) <= res.n_sample_uniques
    assert np.isnan(ref).any() == (res.n_dis_uniques == 0)
    # the largest score to 1e-15 as every score (single-precision steps give the last bit as
    # the processor's vector unit rounds it: 1 ulp apart on some machines)
    assert result["max_dis_score"] == (None if res.n_dis_uniques == 0 else
                                       pytest.approx(res.dis_score.max(), rel=0, abs=1e-15))


def test_dis_scores_by_the_formula_and_their_distance_from_sdcmicro():
    """The default: the formula in double precision with the true number of uniques. Against
    sdcMicro: equal (1e-15) on 51 result sets, within its single-precision rounding (2.1e-7
    relative) on the 165 other sets where its U is above 0, and finite scores where its U is 0
    (14 sets, NaN there)."""
    equal = rounding = zero_u = 0
    worst = 0.0
    for case, result in RESULT_SETS:
        df, keys, res = fixture_run(case, result)
        ref = fx.read("suda2", result["output"])["dis_score"].to_numpy()
        f, m = result["DisFraction"], res.n_variables
        pos = res.score > 0
        q = 1 + (8 - m) / 20
        excess = res.n_in_pairs * (1 - f) / f
        expected = np.zeros(len(ref))
        expected[pos] = 1 / (1 + excess / (res.score[pos] ** q * np.sum(res.score[pos] ** -q)))
        np.testing.assert_allclose(res.dis_score, expected, rtol=1e-13, atol=0)
        if np.isnan(ref).any():
            assert sdcmicro_hash_uniques(df, keys) == 0 and np.isfinite(res.dis_score).all()
            assert np.isnan(ref[pos]).all() and (ref[~pos] == 0).all()
            zero_u += 1
        elif np.allclose(res.dis_score, ref, rtol=0, atol=1e-15):
            equal += 1
        else:
            rounding += 1
            worst = max(worst, float(np.max(np.abs(res.dis_score[pos] / ref[pos] - 1))))
    assert (equal, rounding, zero_u) == (51, 165, 14)
    assert 1e-7 < worst < 2.1e-7


def test_the_true_count_in_sdcmicros_single_precision_matches_112_sets():
    """U cancels in the formula, but not in single precision: with sdcMicro's steps and the
    true count of uniques 112 of the 230 sets are equal to 1e-15 (all 230 with its count)."""
    equal = 0
    for case, result in RESULT_SETS:
        _, _, res = fixture_run(case, result)
        ref = fx.read("suda2", result["output"])["dis_score"].to_numpy()
        mine = dis_scores_sdcmicro(res.score, res.n_sample_uniques, res.n_in_pairs,
                                   result["DisFraction"], res.n_variables)
        equal += bool(np.allclose(mine, ref, rtol=0, atol=1e-15, equal_nan=True))
    assert equal == 112


def test_the_hash_bucket_count(actg):
    """A unique counts for sdcMicro's DIS score only alone in its bucket: h = rotl16(h, 1) + v
    over the keys, −999 for a missing value."""
    df = pd.DataFrame({"a": [1, 0, 2, 5, np.nan], "b": [0, 2, 0, 1, 3]})
    # buckets 2, 2, 4, 11 and rotl16(−999 mod 2^16, 1) + 3: the first two collide
    assert sdcmicro_hash_uniques(df, ["a", "b"]) == 3
    text = pd.DataFrame({"a": ["x", "y", "z"], "b": pd.Categorical(["u", "v", "u"])})
    assert sdcmicro_hash_uniques(text, ["a", "b"]) == 3  # 1·2+1, 2·2+2, 3·2+1
    assert suda2(actg, ["age", "gender", "race"], dis_method="sdcmicro").n_dis_uniques == 29
    with pytest.raises(SdcInputError, match="dis_method must be one of formula, sdcmicro"):
        suda2(actg, ["age"], dis_method="sdcMicro")


def test_correlated_items_credit_their_base_key_as_sdcmicro_does(monkeypatch):
    """Fixture case 185: the records of k3 = 4 are exactly those of k2 = 2 (rows 0, 1 and 4
    from 0), a correlated item. Row 1's MSU {k1, k3, k4} credits k2 in place of k3 in
    sdcMicro's output; the plain rule (credit every key of the MSU) differs from it there and
    only there."""
    case = next(c for c in fx.cases("suda2") if c["id"] == "case_185")
    result = case["results"][0]
    df, keys, res = fixture_run(case, result)
    assert df.index[df["k3"] == 4].tolist() == df.index[df["k2"] == 2].tolist() == [0, 1, 4]
    assert ("k1", "k3", "k4") in res.msus_of(1)
    ref = fx.read("suda2", result["output"])[[f"{k}_contribution" for k in keys]].to_numpy()
    np.testing.assert_allclose(res.contribution_percent(), ref, rtol=0, atol=1e-12)
    monkeypatch.setattr(suda2_module, "_base_keys", lambda *args: None)
    plain = suda2(df, keys).contribution_percent()
    differs = np.flatnonzero(np.abs(plain - ref).max(axis=1) > 1e-12)
    assert differs.tolist() == [1]
    weight = res.weights[3] / res.score[1]  # the MSU of 3 keys, as a share of row 1's score
    np.testing.assert_allclose(plain[1] - ref[1], [0, -weight, weight, 0, 0, 0], atol=1e-12)


def test_records_msus_and_top_table(actg):
    result = suda2(actg, ["age", "gender", "race"])
    rec = result.records()
    assert list(rec.columns) == ["suda_score", "dis_score"] and len(rec) == len(actg)
    assert result.msus_of(217) == [("age", "gender"), ("age", "race")]
    assert result.msus_of(0) == []
    assert shared_counts(actg, 217, ["age", "gender"]) == {("age", "gender"): 1,
                                                           ("gender",): 368, ("age",): 3}
    top = result.top_records(actg, 3)
    assert top["row"].tolist() == [217, 331, 1149]
    assert top["msus"].tolist() == ["age + gender; age + race", "age", "age"]
    np.testing.assert_allclose(result.contribution_percent().sum(axis=1)[217], 2.0)


def test_errors(actg):
    with pytest.raises(SdcInputError, match="dis_fraction must lie in"):
        suda2(actg, ["age"], dis_fraction=0)
    with pytest.raises(SdcInputError, match="at most 20 keys"):
        suda2(actg, [f"c{i}" for i in range(21)])
    with pytest.raises(SdcInputError, match="unknown quasi-identifier"):
        suda2(actg, ["age", "nope"])
    with pytest.raises(SdcInputError, match="no records"):
        suda2(actg.iloc[:0], ["age"])


def test_memory_guard_names_the_number_of_keys_that_fits(actg, monkeypatch):
    keys = ["age", "gender", "race", "treat", "arms", "hemo", "homo", "drugs"]
    need = suda2_memory(len(keys), 2000, 2000)
    monkeypatch.setattr(suda2_module, "MAX_SUDA2_BYTES", need // 4)
    with pytest.raises(SdcInputError, match=r"working memory .* use at most \d+ keys"):
        suda2(actg, keys)


def brute_force(df, keys, fraction):
    """Scores, DIS scores and (sdcMicro's) contributions from the definition, record by
    record: every key subset, every other record."""
    n = len(df)
    rows = [[None if pd.isna(v) else v for v in r] for r in df[keys].itertuples(index=False)]
    rows = [r + [1] * (3 - len(keys)) for r in rows]  # sdcMicro's constant padding columns
    big_m = len(rows[0]) if rows else 3

    def unique(i, subset):
        if any(rows[i][j] is None for j in subset):
            return False
        return not any(r != i and all(rows[r][j] == rows[i][j] for j in subset)
                       for r in range(n))

    # SUDA2's correlated items: (k, u) whose records are exactly those of (j, v), j < k
    def records_of(j, v):
        return frozenset(r for r in range(n) if rows[r][j] == v)

    def base(k, u):
        mine = records_of(k, u)
        for j in range(k):
            if len(mine) >= 2 and any(records_of(j, rows[r][j]) == mine for r in mine
                                      if rows[r][j] is not None):
                return j
        return k

    score = np.zeros(n)
    credit = np.zeros((n, len(keys)))
    for i in range(n):
        for size in range(1, big_m + 1):
            for subset in combinations(range(big_m), size):
                if not unique(i, subset) or (size > 1 and any(
                        unique(i, tuple(x for x in subset if x != j)) for j in subset)):
                    continue
                w = float(factorial(big_m - size))
                score[i] += w
                if size == 2:
                    j, k = subset
                    if base(j, rows[i][j]) == j or base(k, rows[i][k]) == k:
                        for c in subset:
                            if c < len(keys):
                                credit[i, c] += w
                else:
                    for c in subset:
                        target = base(c, rows[i][c]) if size > 2 else c
                        if target < len(keys):
                            credit[i, target] += w
    pattern = [tuple("NA" if v is None else v for v in r) for r in rows]
    same = np.array([sum(p == q for q in pattern) for p in pattern])
    pairs = int((same == 2).sum())
    dis = np.zeros(n)
    pos = score > 0
    if pos.any():
        q = 1 + (8 - big_m) / 20
        excess = pairs * (1 - fraction) / fraction
        dis[pos] = 1 / (1 + excess / (score[pos] ** q * np.sum(score[pos] ** -q)))
    return score, dis, credit


@st.composite
def tables(draw):
    n = draw(st.integers(1, 22))
    m = draw(st.integers(1, 5))
    value = st.one_of(st.none(), st.integers(0, 2)) if draw(st.booleans()) else st.integers(0, 2)
    data = {f"k{j}": draw(st.lists(value, min_size=n, max_size=n)) for j in range(m)}
    df = pd.DataFrame(data).astype("Float64").astype(float)
    if m >= 2 and draw(st.booleans()):  # a recoded copy: correlated items
        df[f"k{m - 1}"] = df["k0"].map({0.0: 5.0, 1.0: 6.0, 2.0: 5.0})
    return df


@settings(max_examples=150, deadline=None)
@given(df=tables(), fraction=st.sampled_from([0.01, 0.1, 0.5, 1.0]))
def test_vectorised_suda2_equals_brute_force(df, fraction):
    keys = list(df.columns)
    result = suda2(df, keys, dis_fraction=fraction)
    score, dis, credit = brute_force(df, keys, fraction)
    np.testing.assert_array_equal(result.score, score)
    np.testing.assert_allclose(result.dis_score, dis, rtol=1e-12, atol=0)
    np.testing.assert_allclose(result.contribution, credit, rtol=0, atol=1e-12)
    # every MSU listed once, its row unique on it and on no subset of one key less
    assert len(result.msu_records) == len(set(zip(result.msu_records, result.msu_subsets)))
    for row in np.flatnonzero(result.score > 0)[:3]:
        for msu in result.msus_of(int(row)):
            counts = shared_counts(df, int(row), msu)
            assert counts[msu] == 1 and all(v >= 2 for s, v in counts.items() if s != msu)
