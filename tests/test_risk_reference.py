"""Reference figures: seed 003 (ACTG 175 with sdcMicro 5.8.1) and sdcMicro's francdat example."""

import numpy as np
import pandas as pd
import pytest

from sdc_core.risk import (
    key_subset_snapshots,
    l_diversity,
    risk_profile,
    riskiest_classes,
    sensitive_report,
    small_count_levels,
)

QI = ["age", "gender", "race"]
N = 2139


def test_actg_baseline_matches_sdcmicro(actg):
    p = risk_profile(actg, QI)
    assert p.n_records == N
    # sdcMicro: global risk 8.508649 %, 182 expected re-identifications, 1.355774 % unique,
    # 10.518934 % with k <= 5, median k 33. Exact rationals behind them: 29 unique records,
    # 225 records with k <= 5, 182 classes.
    assert p.expected_reidentifications == pytest.approx(182, abs=1e-9)
    assert p.n_classes == 182
    assert p.global_risk_percent == pytest.approx(100 * 182 / N, abs=1e-9)
    assert p.avg_linkage_risk_percent == pytest.approx(100 * 182 / N, abs=1e-9)
    assert p.percent_unique == pytest.approx(100 * 29 / N, abs=1e-9)
    assert p.percent_k_le_threshold == pytest.approx(100 * 225 / N, abs=1e-9)
    assert round(p.global_risk_percent, 6) == 8.508649
    assert round(p.percent_unique, 6) == 1.355774
    assert round(p.percent_k_le_threshold, 6) == 10.518934
    assert p.median_k == 33
    assert p.min_k == 1


@pytest.mark.parametrize("width, expected", [(5, 44), (10, 25), (15, 18)])
def test_actg_age_bands_expected_reidentifications(actg, width, expected):
    banded = actg.assign(age=np.floor(actg["age"] / width) * width)
    p = risk_profile(banded, QI)
    assert p.expected_reidentifications == pytest.approx(expected, abs=1e-9)
    # the report's average linkage risk; its 10-year 1.18877 is a typo for 25/2139 = 1.16877
    assert p.avg_linkage_risk_percent == pytest.approx(100 * expected / N, abs=1e-9)


def test_actg_key_subset_snapshots_table_s3d(actg):
    table = key_subset_snapshots(actg, QI).set_index("keys")
    expected = {  # keys: (pct_unique, median_k, pct_k_le_T) as printed in Table S3-D
        "age": (0.09, 90, 2.15), "gender": (0, 1771, 0), "race": (0, 1522, 0),
        "age+gender": (0.56, 56, 5), "age+race": (0.37, 42, 5.47),
        "gender+race": (0, 1367, 0), "age+gender+race": (1.36, 33, 10.52)}
    assert list(table.index) == list(expected)
    for keys, (unique, median_k, k_le) in expected.items():
        row = table.loc[keys]
        assert round(row["percent_unique"], 2) == unique
        assert row["median_k"] == median_k
        assert round(row["percent_k_le_threshold"], 2) == k_le


def test_actg_small_count_levels_table_s3c(actg):
    table = small_count_levels(actg, QI, threshold=5)
    expected = [(66, 1), (69, 1), (61, 2), (64, 2), (67, 2), (68, 2), (70, 2), (12, 3), (13, 3),
                (15, 3), (60, 3), (65, 3), (17, 4), (56, 5), (58, 5), (62, 5)]
    assert list(table["variable"]) == ["age"] * len(expected)
    assert list(zip(table["level"], table["count"])) == expected


def test_actg_riskiest_classes_are_the_uniques(actg):
    p = risk_profile(actg, QI)
    top = riskiest_classes(actg, p, top=40)
    assert (top["k"].head(29) == 1).all() and (top["individual_risk"].head(29) == 1).all()
    assert (top["k"].iloc[29:] >= 2).all()
    # Table S3-B lists (age, gender, race) = (61, 0, 0) and (66, 1, 0) among the uniques
    uniques = set(map(tuple, top.head(29)[QI].to_numpy().tolist()))
    assert {(61, 0, 0), (60, 0, 1), (46, 0, 1), (66, 1, 0), (63, 0, 0)} <= uniques


def test_actg_arms_determines_treat(actg):
    p = risk_profile(actg, QI)
    ldiv, scan = sensitive_report(actg, p, ["treat"])
    flagged = [(f.column, f.sensitive, f.level) for f in scan.findings]
    assert flagged == [("arms", "treat", "determines")]
    assert scan.direct_identifiers == ["pidnum"]
    assert ldiv["treat"].min_l == 1
    # homogeneous classes hold exactly the records whose class has one treat value
    per_class = actg.groupby(QI)["treat"].transform("nunique")
    assert ldiv["treat"].percent_l_eq_1 == pytest.approx(100 * (per_class == 1).mean(), abs=1e-12)


def test_francdat_weighted_risk_matches_sdcmicro(francdat):
    p = risk_profile(francdat, ["Key1", "Key2", "Key3", "Key4"], weight="w")
    np.testing.assert_array_equal(p.fk, [2, 2, 2, 1, 1, 1, 1, 2])
    np.testing.assert_allclose(p.Fk, [110, 84.5, 84.5, 17, 541, 8, 5, 110], rtol=0, atol=1e-12)
    sdcmicro = [0.0171443, 0.0220423, 0.0220423, 0.1770758, 0.0116545, 0.2970631, 0.4023595,
                0.0171443]  # printed to 7 digits
    np.testing.assert_allclose(p.risk, sdcmicro, rtol=0, atol=5e-8)
    assert p.global_expected_reidentifications == pytest.approx(p.risk.sum(), abs=1e-12)


def test_individual_risk_formula_cases():
    from sdc_core.risk import individual_risk
    f = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    F = np.array([10.0, 10.0, 10.0, 4.0, 50.0])
    p = f / F
    expected = [p[0] / (1 - p[0]) * np.log(1 / p[0]),
                p[1] / (1 - p[1]) - (p[1] / (1 - p[1])) ** 2 * np.log(1 / p[1]),
                p[2] / (f[2] - 1 + p[2]), 1 / 4, p[4] / (f[4] - 1 + p[4])]
    np.testing.assert_allclose(individual_risk(f, F), expected, rtol=1e-15)


def test_missing_as_category_option(francdat):
    df = pd.DataFrame({"a": [1, 1, np.nan, np.nan, 2], "b": ["x", "x", "x", "y", "y"]})
    wild = risk_profile(df, ["a", "b"])
    cat = risk_profile(df, ["a", "b"], na="category")
    np.testing.assert_array_equal(cat.fk, [2, 2, 1, 1, 1])
    # wildcard: (nan, x) matches both (1, x) records; (nan, y) matches (2, y)
    np.testing.assert_array_equal(wild.fk, [3, 3, 3, 2, 2])
    assert wild.n_records_with_missing_keys == 2
    assert cat.n_records_with_missing_keys == 2  # missing keys are counted whatever the reading
    other = df.assign(c=[np.nan, 1, 2, 3, 4], b=["x", None, "x", "y", "y"])  # c is no key
    for na in ("wildcard", "category"):
        assert risk_profile(other, ["a", "b"], na=na).n_records_with_missing_keys == 3


def test_l_diversity_reports_classes_without_a_sensitive_value():
    df = pd.DataFrame({"a": [1, 1, 1, 2, 2, 3, 3, 4],
                       "s": ["u", "v", "u", None, None, "w", "w", None]})
    p = risk_profile(df, ["a"])
    ld = l_diversity(df, p.classes, "s")
    np.testing.assert_array_equal(ld.per_record, [2, 2, 2, 0, 0, 1, 1, 0])
    assert ld.min_l == 1  # classes 2 and 4 release no value: not a min l of 0
    assert ld.percent_l_eq_1 == 25.0 and ld.percent_no_sensitive_value == 37.5
    assert ld.to_dict() == {"min_l": 1, "percent_l_eq_1": 25.0,
                            "percent_no_sensitive_value": 37.5}
    none = l_diversity(df.assign(s=None), p.classes, "s")
    assert (none.min_l, none.percent_l_eq_1, none.percent_no_sensitive_value) == (0, 0.0, 100.0)


def test_l_diversity_without_a_sensitive_value_under_wildcards():
    df = pd.DataFrame({"a": [1, 1, 2, 2, np.nan], "b": ["x", "x", "y", "y", "x"],
                       "s": ["u", "v", None, None, None]})
    p = risk_profile(df, ["a", "b"])
    np.testing.assert_array_equal(p.fk, [3, 3, 2, 2, 3])
    ld = l_diversity(df, p.classes, "s")
    # (missing, x) sees u and v of the (1, x) records; (2, y) sees no value at all
    np.testing.assert_array_equal(ld.per_record, [2, 2, 0, 0, 2])
    assert ld.min_l == 2 and ld.percent_l_eq_1 == 0.0 and ld.percent_no_sensitive_value == 40.0
