"""Microaggregation (mdav, onedims, pca, optimal_univariate) against its definitions: group
sizes, kept means, idempotence, optimality by enumeration, MDAV against sdcMicro's own outputs
(tests/data/sdcmicro/mdav), hand-worked examples, errors, missing values."""

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdc_core.errors import SdcInputError
from sdc_core.methods.microaggregation import (
    ALGORITHMS,
    _mdav_weights,
    consecutive_sizes,
    group_labels,
    mdav_labels,
    microaggregation,
    optimal_univariate_sizes,
)
from tests.sdcmicro_fixtures import cases, read


def canonical(labels):
    """Each record's group named by its first record (so two partitions compare directly)."""
    labels = np.asarray(labels)
    first = {}
    return np.array([first.setdefault(v, i) for i, v in enumerate(labels.tolist())])


def sse(x, sizes):
    """Within-group sum of squares of the sorted values x cut into runs of ``sizes``."""
    out, start = 0.0, 0
    for s in sizes:
        part = x[start:start + s]
        out += float(((part - part.mean()) ** 2).sum())
        start += s
    return out


def brute_force_optimal(x, k):
    """Least SSE over every cut of the sorted x into runs of k … 2k − 1."""
    n = len(x)
    best = np.inf
    for parts in range(1, n // k + 1):
        for sizes in itertools.product(range(k, 2 * k), repeat=parts):
            if sum(sizes) == n:
                best = min(best, sse(x, sizes))
    return best


# --------------------------------------------------------------------------- strategies

@st.composite
def tables(draw, max_rows=40, max_cols=3, ints=True, k_max=5):
    k = draw(st.integers(2, k_max))
    n = draw(st.integers(k, max_rows))
    p = draw(st.integers(1, max_cols))
    if ints:
        value = st.integers(0, draw(st.sampled_from([2, 5, 50])))
    else:
        value = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, width=32)
    data = {f"c{j}": draw(st.lists(value, min_size=n, max_size=n)) for j in range(p)}
    return pd.DataFrame(data).astype(float), k


def random_table(seed, n, p, kind):
    rng = np.random.default_rng(seed)
    if kind == "normal":
        x = rng.normal(size=(n, p)) * rng.choice([1e-3, 1.0, 1e3], p)
    elif kind == "ties":
        x = rng.integers(0, 4, (n, p)).astype(float)
    else:
        x = np.round(rng.lognormal(10, 1, (n, p)), -2)
    return pd.DataFrame(x, columns=[f"c{j}" for j in range(p)])


def groups_of(df, cols, k, algorithm):
    """Per column: group label → row positions (from group_labels)."""
    labels = group_labels(df, cols, k, algorithm)
    out = []
    for c in cols:
        lab = labels[c].to_numpy()
        out.append({g: np.flatnonzero(lab == g) for g in np.unique(lab[lab >= 0])})
    return out


# --------------------------------------------------------------------------- properties

@settings(max_examples=80, deadline=None)
@given(table=st.one_of(tables(), tables(ints=False)), algorithm=st.sampled_from(ALGORITHMS))
def test_groups_have_k_to_2k_minus_1_records_and_keep_the_mean(table, algorithm):
    df, k = table
    cols = list(df.columns)
    res = microaggregation(df, cols, k, algorithm)
    x, y = df.to_numpy(), res.values.to_numpy()
    assert list(res.values.columns) == cols and res.values.index.equals(df.index)
    sizes = []
    for j, groups in enumerate(groups_of(df, cols, k, algorithm)):
        assert sum(len(m) for m in groups.values()) == len(df)
        for members in groups.values():
            if j == 0 or algorithm in ("onedims", "optimal_univariate"):
                sizes.append(len(members))   # mdav and pca: one grouping for all the columns
            assert k <= len(members) <= 2 * k - 1
            np.testing.assert_allclose(y[members, j], x[members, j].mean(), rtol=1e-12,
                                       atol=1e-9)
    np.testing.assert_allclose(y.sum(axis=0), x.sum(axis=0), rtol=1e-12, atol=1e-8)
    assert res.info["min_group_size"] == min(sizes)
    assert res.info["max_group_size"] == max(sizes)
    assert res.info["groups"] == len(sizes)
    if algorithm in ("mdav", "pca"):       # one grouping for all the columns
        labels = group_labels(df, cols, k, algorithm).to_numpy()
        assert (labels == labels[:, :1]).all()
        assert res.info["groups"] == len(np.unique(labels))


@settings(max_examples=60, deadline=None)
@given(table=tables(), algorithm=st.sampled_from(["onedims", "optimal_univariate"]))
def test_univariate_methods_are_idempotent(table, algorithm):
    df, k = table
    once = microaggregation(df, list(df.columns), k, algorithm).values
    twice = microaggregation(once, list(df.columns), k, algorithm).values
    np.testing.assert_allclose(twice.to_numpy(), once.to_numpy(), rtol=1e-12, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), groups=st.integers(1, 12), k=st.integers(2, 5),
       p=st.integers(1, 3), algorithm=st.sampled_from(["mdav", "pca"]))
def test_mdav_and_pca_are_idempotent_when_k_divides_n(seed, groups, k, p, algorithm):
    # with n mod k ≠ 0 the larger last group can be split differently the second time; ties of
    # the first component between different groups (integer data) can interleave them in pca
    df = random_table(seed, groups * k, p, "normal")
    once = microaggregation(df, list(df.columns), k, algorithm).values
    twice = microaggregation(once, list(df.columns), k, algorithm).values
    np.testing.assert_allclose(twice.to_numpy(), once.to_numpy(), rtol=1e-12, atol=1e-9)


@settings(max_examples=80, deadline=None)
@given(table=tables(max_rows=60, max_cols=1, k_max=6), ints=st.booleans())
def test_optimal_univariate_beats_onedims(table, ints):
    df, k = table
    x = np.sort(df["c0"].to_numpy())
    if not ints:
        x = np.sort(x + np.random.default_rng(len(x)).normal(size=len(x)))
    best = optimal_univariate_sizes(x, k)
    assert best.sum() == len(x) and ((best >= k) & (best <= 2 * k - 1)).all()
    assert sse(x, best) <= sse(x, consecutive_sizes(len(x), k)) * (1 + 1e-12) + 1e-9


@settings(max_examples=120, deadline=None)
@given(values=st.lists(st.integers(0, 30), min_size=2, max_size=13), k=st.integers(2, 4))
def test_optimal_univariate_equals_enumeration(values, k):
    x = np.sort(np.array(values, dtype=float))
    if len(x) < k:
        return
    got = sse(x, optimal_univariate_sizes(x, k))
    assert got == pytest.approx(brute_force_optimal(x, k), rel=1e-12, abs=1e-9)


@pytest.mark.parametrize("n, k", [(1000, 3), (2001, 3), (997, 5), (500, 9), (300, 12), (3000, 7),
                                  (150, 3), (2000, 2)])
def test_optimal_univariate_chunked_equals_plain_dp(n, k):
    """The chunked min-plus DP against a plain position-by-position DP."""
    x = np.sort(np.round(np.random.default_rng(n + k).lognormal(3, 1, n), 1))
    best = np.full(n + 1, np.inf)
    best[0] = 0.0
    for i in range(k, n + 1):
        for length in range(k, min(2 * k - 1, i) + 1):
            part = x[i - length:i]
            best[i] = min(best[i], best[i - length] + float(((part - part.mean()) ** 2).sum()))
    assert sse(x, optimal_univariate_sizes(x, k)) == pytest.approx(best[n], rel=1e-9, abs=1e-9)


# --------------------------------------------------------------------------- MDAV = sdcMicro

MDAV_CASES = cases("mdav")


def assert_released_as(df, k, algorithm, expected):
    """Our release of ``df`` by ``algorithm`` is ``expected`` (sdcMicro's), record for record:
    sdcMicro released the same row to all the records of each of our groups (equal means of two
    groups cannot tell them apart: int0_20 data), and that row is our group mean to 1e-12."""
    cols = list(df.columns)
    labels = group_labels(df, cols, k, algorithm)[cols[0]].to_numpy()
    for g in np.unique(labels):
        rows = expected[labels == g]
        assert (rows == rows[0]).all(), f"sdcMicro splits our group {g}"
    got = microaggregation(df, cols, k, algorithm).values.to_numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)


@pytest.mark.parametrize("case", [c for c in MDAV_CASES if c["p"] >= 2],
                         ids=lambda c: c["id"])
def test_mdav_equals_sdcmicro_outputs(case):
    """``microaggregation(df, method = "mdav", aggr = k)$mx`` of sdcMicro 5.8.1: 225 random
    cases with 2 to 4 columns (continuous, rounded and many-tied integer data) and its testdata
    at k = 3 and 5."""
    df = read("mdav", case["input"])
    assert_released_as(df, case["k"], "mdav", read("mdav", case["output"]).to_numpy())


@pytest.mark.parametrize("case", [c for c in MDAV_CASES if c["p"] == 1], ids=lambda c: c["id"])
def test_one_column_mdav_equals_sdcmicro_mdav_and_its_wrapper_runs_onedims(case):
    """With one column sdcMicro's ``microaggregation(method = "mdav")`` runs ``mafast`` (its
    ``$mx`` is our onedims), while we run MDAV as asked — the same as sdcMicro's MDAV itself
    (``sdcMicro:::mdav``) on that column."""
    df = read("mdav", case["input"])
    k = case["k"]
    assert_released_as(df, k, "mdav", read("mdav", case["output_mdav_internal"]).to_numpy())
    assert_released_as(df, k, "onedims", read("mdav", case["output"]).to_numpy())


def test_mdav_nearest_ties_go_to_the_later_record():
    # the zeros are farthest from the centre (2.9, 2.9): r = #5 and its group the three zeros;
    # s = #0, the first of five equal records farthest from r, but its group is the three
    # latest copies (#2, #3, #4), as in sdcMicro's outputs; #0, #1 and #8 are left
    df = pd.DataFrame({"a": [5.0, 5.0, 5.0, 5.0, 5.0, 0.0, 0.0, 0.0, 1.0],
                       "b": [5.0, 5.0, 5.0, 5.0, 5.0, 0.0, 0.0, 0.0, 1.0]})
    labels = group_labels(df, ["a", "b"], 3)["a"].to_numpy()
    assert (canonical(labels) == canonical([2, 2, 1, 1, 1, 0, 0, 0, 2])).all()


def test_mdav_weights_fall_back_to_two_pass_variance_on_large_offsets():
    x = np.arange(12.0).reshape(6, 2)
    np.testing.assert_allclose(_mdav_weights(x + 1e12), 1 / x.var(axis=0), rtol=1e-9)
    assert _mdav_weights(np.ones((4, 1)))[0] == 1.0


def test_mdav_is_unchanged_by_row_order_up_to_ties():
    x = random_table(7, 300, 2, "normal").to_numpy()
    perm = np.random.default_rng(1).permutation(300)
    a = canonical(mdav_labels(x, 3))
    b = mdav_labels(x[perm], 3)
    back = np.empty(300, dtype=np.int64)
    back[perm] = b
    assert (canonical(back) == a).all()


# --------------------------------------------------------------------------- worked examples

def test_onedims_worked_example():
    df = pd.DataFrame({"x": [5.0, 1, 4, 2, 3, 9, 7], "y": [2.0, 1, 2, 2, 1, 3, 3]})
    res = microaggregation(df, ["x", "y"], 3, "onedims")
    # x sorted 1 2 3 | 4 5 7 9 (7 = 2·3 + 1: the last group takes the left-over value)
    assert res.values["x"].tolist() == [6.25, 2, 6.25, 2, 2, 6.25, 6.25]
    # y sorted, ties in row order: 1(#1) 1(#4) 2(#0) | 2(#2) 2(#3) 3(#5) 3(#6)
    np.testing.assert_allclose(res.values["y"], [4 / 3, 4 / 3, 2.5, 2.5, 4 / 3, 2.5, 2.5])
    assert res.info["groups_per_column"] == [2, 2] and res.info["groups"] == 4
    # SSE/SST on standardised columns, by hand
    x, y = df["x"].to_numpy(), df["y"].to_numpy()
    sse_ = ((x - res.values["x"]) ** 2).sum() / x.var(ddof=1) \
        + ((y - res.values["y"]) ** 2).sum() / y.var(ddof=1)
    assert res.info["sse_share"] == pytest.approx(sse_ / 12)   # SST = Σ_j (n − 1)


@pytest.mark.parametrize("b, expected_b", [
    ([2.0, 1, 3, 5, 4], [1.5, 1.5, 4, 4, 4]),      # positive correlation: score ∝ a + b
    ([4.0, 5, 3, 1, 2], [4.5, 4.5, 2, 2, 2]),      # negative: score ∝ a − b (first loading > 0)
])
def test_pca_worked_example(b, expected_b):
    # a and b have the same sd, so the first component is (1, ±1)/√2 and the scores are
    # ∝ a ± b − const = (−3, −3, 0, 3, 3): ascending, groups of 2 with the left-over in the last
    df = pd.DataFrame({"a": [1.0, 2, 3, 4, 5], "b": b})
    res = microaggregation(df, ["a", "b"], 2, "pca")
    np.testing.assert_allclose(res.values["a"], [1.5, 1.5, 4, 4, 4])
    np.testing.assert_allclose(res.values["b"], expected_b)
    assert res.info["groups"] == 2 and res.info["max_group_size"] == 3


def test_mdav_worked_example():
    # k = 3, 6 records = 2k: one group around r, the rest the last group. The centre is
    # (3.8, 3.7); the farthest record is #5 (10, 10); its two nearest are #4 and #3
    df = pd.DataFrame({"a": [0.0, 1, 1, 5, 6, 10], "b": [0.0, 0, 1, 5, 6, 10]})
    res = microaggregation(df, ["a", "b"], 3)
    np.testing.assert_allclose(res.values["a"], [2 / 3] * 3 + [7] * 3)
    np.testing.assert_allclose(res.values["b"], [1 / 3] * 3 + [7] * 3)


def test_fewer_than_2k_records_form_one_group():
    df = pd.DataFrame({"a": [1.0, 2, 3, 10], "b": [4.0, 3, 2, 1]})
    for algorithm in ALGORITHMS:
        res = microaggregation(df, ["a", "b"], 3, algorithm)
        np.testing.assert_allclose(res.values["a"], [4.0] * 4)
        assert res.info["groups"] == (2 if algorithm in ("onedims", "optimal_univariate")
                                      else 1)


# --------------------------------------------------------------------------- errors

@pytest.mark.parametrize("k", [1, 0, -3, 2.5, "3", True, None, float("nan")])
def test_k_must_be_a_whole_number_of_at_least_2(k):
    df = pd.DataFrame({"a": [1.0, 2, 3, 4]})
    with pytest.raises(SdcInputError, match="k must be a whole number ≥ 2"):
        microaggregation(df, ["a"], k)


def test_k_given_as_float_whole_number_is_accepted():
    df = pd.DataFrame({"a": [1.0, 2, 3, 4]})
    assert microaggregation(df, ["a"], 2.0).info["k"] == 2


def test_input_errors_name_the_problem():
    df = pd.DataFrame({"a": [1.0, 2, 3], "s": ["x", "y", "z"], "f": [True, False, True],
                       "i": [1.0, np.inf, 2]})
    with pytest.raises(SdcInputError, match="at least 4 records; the table has 3"):
        microaggregation(df, ["a"], 4)
    with pytest.raises(SdcInputError, match="algorithm must be one of"):
        microaggregation(df, ["a"], 2, "kmeans")
    with pytest.raises(SdcInputError, match="no column 'zz'"):
        microaggregation(df, ["a", "zz"], 2)
    with pytest.raises(SdcInputError, match="column 's' holds text"):
        microaggregation(df, ["s"], 2)
    with pytest.raises(SdcInputError, match="column 'f' holds True/False"):
        microaggregation(df, ["f"], 2)
    with pytest.raises(SdcInputError, match="infinite"):
        microaggregation(df, ["i"], 2)
    with pytest.raises(SdcInputError, match="at least one"):
        microaggregation(df, [], 2)
    with pytest.raises(SdcInputError, match="named twice"):
        microaggregation(df, ["a", "a"], 2)


# --------------------------------------------------------------------------- missing values

def test_univariate_missing_values_stay_missing_and_the_rest_is_aggregated():
    df = pd.DataFrame({"a": [1.0, np.nan, 2, 3, np.nan, 10, 11, 12],
                       "b": [np.nan, np.nan, np.nan, 5, np.nan, 6, np.nan, np.nan]})
    for algorithm in ("onedims", "optimal_univariate"):
        res = microaggregation(df, ["a", "b"], 3, algorithm)
        assert res.values["a"].isna().tolist() == df["a"].isna().tolist()
        np.testing.assert_allclose(res.values["a"].dropna(), [2, 2, 2, 11, 11, 11])
        # only two values in b: fewer than k, released unchanged and counted
        assert res.values["b"].dropna().tolist() == [5.0, 6.0]
        assert res.info["left_unchanged"] == 2
        assert res.info["missing_values"] == 8 and res.info["incomplete_records"] == 6


@pytest.mark.parametrize("algorithm", ["mdav", "pca"])
def test_mdav_pca_aggregate_each_missingness_pattern_among_itself(algorithm):
    rng = np.random.default_rng(3)
    full = pd.DataFrame(rng.normal(size=(40, 2)), columns=["a", "b"])
    df = full.copy()
    df.loc[30:36, "b"] = np.nan        # 7 records with a only
    df.loc[37:38, "a"] = np.nan        # 2 records with b only: fewer than k = 3
    df.loc[39, ["a", "b"]] = np.nan    # nothing to aggregate
    res = microaggregation(df, ["a", "b"], 3, algorithm)
    out = res.values
    assert out.isna().equals(df.isna())
    # the complete records are aggregated exactly as on their own
    alone = microaggregation(df.loc[:29], ["a", "b"], 3, algorithm).values
    np.testing.assert_allclose(out.loc[:29].to_numpy(), alone.to_numpy())
    # the a-only records among themselves, on a
    a_only = microaggregation(df.loc[30:36, ["a"]], ["a"], 3, algorithm).values
    np.testing.assert_allclose(out.loc[30:36, "a"], a_only["a"])
    # the b-only pair cannot form a group: left unchanged and counted
    assert out.loc[37:38, "b"].tolist() == df.loc[37:38, "b"].tolist()
    assert res.info["left_unchanged"] == 2 and res.info["incomplete_records"] == 10
    labels = group_labels(df, ["a", "b"], 3, algorithm)
    assert (labels.loc[37:39] == -1).all().all() and (labels.loc[30:36, "b"] == -1).all()


def test_integer_columns_with_pandas_missing_values():
    df = pd.DataFrame({"a": pd.array([1, 2, None, 4, 5, 6], dtype="Int64")})
    res = microaggregation(df, ["a"], 2, "onedims")
    assert res.values["a"].dtype == np.float64
    assert np.isnan(res.values["a"].iloc[2])
    np.testing.assert_allclose(res.values["a"].dropna(), [1.5, 1.5, 5, 5, 5])


def test_sse_share_is_zero_when_nothing_changes_and_info_is_json_ready():
    import json

    df = pd.DataFrame({"a": [1.0, 1, 1, 7, 7, 7]})
    res = microaggregation(df, ["a"], 3, "optimal_univariate")
    assert res.info["sse_share"] == 0.0
    json.dumps(res.info)
