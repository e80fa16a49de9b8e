"""Property tests of the risk engine against the definitions, written out record by record."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdc_core.risk import class_sizes, l_diversity, risk_profile

KEYS = ["k0", "k1", "k2"]


@st.composite
def tables(draw, max_rows=25, missing=True):
    n = draw(st.integers(1, max_rows))
    value = st.one_of(st.none(), st.integers(0, 2)) if missing else st.integers(0, 2)
    data = {k: draw(st.lists(value, min_size=n, max_size=n)) for k in KEYS}
    data["w"] = draw(st.lists(st.floats(0.5, 50), min_size=n, max_size=n))
    data["s"] = draw(st.lists(st.one_of(st.none(), st.sampled_from("abc")), min_size=n,
                              max_size=n))
    df = pd.DataFrame(data)
    for k in KEYS:
        df[k] = df[k].astype("Float64").astype(float)
    return df


def brute_force(df, keys, alpha):
    """f_k, F_k and l per record by the definition of docs/measures.md, "The released keys",
    pair by pair."""
    vals = df[keys].to_numpy()
    miss = np.isnan(vals)
    w = df["w"].to_numpy()
    s = df["s"].to_numpy()
    n = len(df)
    fk, Fk, ell = np.zeros(n), np.zeros(n), np.zeros(n, dtype=int)
    for i in range(n):
        if miss[i].all():
            fk[i], Fk[i] = n, w.sum()
            ell[i] = len({x for x in s if x is not None and x == x})
            continue
        seen = set()
        for j in range(n):
            both = ~miss[i] & ~miss[j]
            if (vals[i][both] != vals[j][both]).any():
                continue
            same = (miss[i] == miss[j]).all()
            weight = 1.0 if same or not miss[j].any() else alpha
            fk[i] += weight
            Fk[i] += weight * w[j]
            if weight > 0 and s[j] is not None and s[j] == s[j]:
                seen.add(s[j])
        ell[i] = len(seen)
    return fk, Fk, ell


@settings(max_examples=150, deadline=None)
@given(df=tables(), alpha=st.sampled_from([0.0, 0.25, 0.5, 1.0]), m=st.integers(1, 3))
def test_vectorised_wildcard_counts_equal_brute_force(df, alpha, m):
    keys = KEYS[:m]
    cs = class_sizes(df, keys, weight="w", alpha=alpha)
    fk, Fk, ell = brute_force(df, keys, alpha)
    np.testing.assert_allclose(cs.fk, fk, rtol=0, atol=1e-9)
    np.testing.assert_allclose(cs.Fk, Fk, rtol=1e-12, atol=1e-9)
    np.testing.assert_array_equal(l_diversity(df, cs, "s").per_record, ell)


@settings(max_examples=100, deadline=None)
@given(df=tables(missing=False))
def test_class_sizes_sum_to_n(df):
    cs = class_sizes(df, KEYS)
    first = pd.Series(np.arange(len(df))).groupby(cs.class_id).first().to_numpy()
    assert cs.fk[first].sum() == len(df)
    assert len(first) == cs.n_classes
    # without missing keys the expected re-identifications equal the number of classes
    assert abs(risk_profile(df, KEYS).expected_reidentifications - cs.n_classes) < 1e-9


@settings(max_examples=100, deadline=None)
@given(df=tables(missing=True))
def test_missing_as_category_sizes_sum_to_n(df):
    cs = class_sizes(df, KEYS, na="category")
    assert abs((1 / cs.fk).sum() - cs.n_classes) < 1e-9


@settings(max_examples=150, deadline=None)
@given(df=tables(), alpha=st.sampled_from([0.0, 0.5, 1.0]), missing=st.booleans())
def test_adding_a_quasi_identifier_never_increases_fk(df, alpha, missing):
    if not missing:
        df = df.fillna({k: 0.0 for k in KEYS})
    for m in (1, 2):
        fewer = class_sizes(df, KEYS[:m], weight="w", alpha=alpha)
        more = class_sizes(df, KEYS[: m + 1], weight="w", alpha=alpha)
        assert (more.fk <= fewer.fk + 1e-12).all()
        assert (more.Fk <= fewer.Fk + 1e-9).all()


def test_large_cardinality_keys_do_not_overflow():
    rng = np.random.default_rng(1)
    n = 50_000
    df = pd.DataFrame({f"c{j}": rng.integers(0, 10**6, n) for j in range(6)})
    df.loc[:10, "c0"] = df.loc[0, "c0"]
    df.loc[:10, "c1":"c5"] = df.loc[0, "c1":"c5"].to_numpy()
    cs = class_sizes(df, list(df.columns))
    reference = df.groupby(list(df.columns))["c0"].transform("size").to_numpy()
    np.testing.assert_array_equal(cs.fk, reference)


@given(st.lists(st.one_of(st.integers(1, 40), st.sampled_from([1.5, 2.25])), min_size=1,
                max_size=60))
def test_median_of_sizes_equals_numpy_median(sizes):
    from sdc_core.risk.profile import median_of_sizes
    fk = np.array(sizes, dtype=np.float64)
    assert median_of_sizes(fk) == np.median(fk)


def test_records_below_k_and_the_smallest_class_under_both_readings():
    """a = 1, 1, 2, 2, 2, blank with k = 3. A blank as a value of its own: classes of 2, 3 and
    1, so 3 of 6 records sit in classes smaller than 3 and the smallest class is 1. A blank
    matching any value: the 1s have f_k = 3, the 2s 4, the blank 6: none below 3, smallest 3.
    Records in classes of at most k (seed 003's measure) also count the classes of exactly 3."""
    df = pd.DataFrame({"a": [1, 1, 2, 2, 2, None]})
    for na in ("wildcard", "category"):
        p = risk_profile(df, ["a"], k=3, na=na)
        assert (p.min_k_wildcard, p.min_k_category) == (3, 1)
        assert p.min_k == {"wildcard": 3, "category": 1}[na]
        assert p.percent_below_k == {"wildcard": 0.0, "category": 50.0}[na]
        assert p.percent_k_le_threshold == pytest.approx({"wildcard": 100 * 2 / 6,
                                                          "category": 100.0}[na], rel=1e-15)
    whole = risk_profile(df.fillna(9), ["a"], k=3)
    assert whole.min_k_wildcard == whole.min_k_category == whole.min_k == 1
