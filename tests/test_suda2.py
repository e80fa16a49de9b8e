"""SUDA2 special uniques against sdcMicro's figures and against the definition, record by
record (``sdc_core.risk.suda2`` module docstring)."""

from itertools import combinations
from math import factorial

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdc_core.errors import SdcInputError
from sdc_core.io import read_table
from sdc_core.risk import suda2 as suda2_module
from sdc_core.risk.suda2 import shared_counts, suda2, suda2_memory
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


def test_correlated_items_credit_their_base_key_as_sdcmicro_does(actg):
    """arms = 0 holds exactly the records of treat = 0: SUDA2 treats the later item as a copy
    of the earlier one and credits treat for it. Figures from sdcMicro's Suda2 C++
    (src/Suda2.h) compiled outside the project with a minimal Rcpp stand-in; the plain rule
    would give treat 23.95 % and arms 56.89 %."""
    result = suda2(actg, ["age", "gender", "treat", "arms"])
    check_summary(result, 74, 6, 0.030451,
                  {"age": 100.0, "gender": 43.71, "treat": 31.14, "arms": 49.70})


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
    np.testing.assert_allclose(result.dis_score, dis, rtol=1e-6, atol=0)
    np.testing.assert_allclose(result.contribution, credit, rtol=0, atol=1e-12)
    # every MSU listed once, its row unique on it and on no subset of one key less
    assert len(result.msu_records) == len(set(zip(result.msu_records, result.msu_subsets)))
    for row in np.flatnonzero(result.score > 0)[:3]:
        for msu in result.msus_of(int(row)):
            counts = shared_counts(df, int(row), msu)
            assert counts[msu] == 1 and all(v >= 2 for s, v in counts.items() if s != msu)
