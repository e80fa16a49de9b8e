"""Utility measures: seed 003 golden figures and definitions."""

import numpy as np
import pandas as pd
import pytest

from sdc_core.errors import SdcInputError
from sdc_core.methods import band
from sdc_core.utility import (
    correlation_difference,
    distribution_report,
    eigenvalue_similarity,
    il1,
    randomized_response_error,
    tvd,
)
from sdc_core.utility.il1 import categorical_il1

NUMERIC = ["age", "wtkg", "preanti", "cd40", "cd420", "cd496", "cd80", "cd820", "days", "karnof"]


@pytest.mark.parametrize("width, similarity", [(5, 99.937062), (10, 99.746829),
                                               (15, 99.392244)])
def test_seed_003_banding_utility(actg, width, similarity):
    protected = actg.assign(age=band(actg["age"], width).values)
    result = il1(actg, protected, NUMERIC)
    assert result.changed == ["age"]
    assert result.IL1_categorical == 0.0 and result.IL1_overall == result.IL1_numeric
    assert round(eigenvalue_similarity(actg, protected, NUMERIC), 6) == similarity
    if width == 10:  # float and int midpoints agree for even widths
        assert round(result.IL1_overall, 7) == 0.0438571


@pytest.mark.parametrize("width, report_il1", [(5, 0.020570359981299677),
                                               (15, 0.06742596443713626)])
def test_report_il1_for_odd_widths_used_integer_midpoints(actg, width, report_il1):
    truncated = actg.assign(age=(np.floor(actg["age"] / width) * width + width / 2).astype(int))
    assert il1(actg, truncated, NUMERIC).IL1_overall == pytest.approx(report_il1, abs=1e-12)


def test_il1_definition_by_hand():
    x = pd.DataFrame({"a": [0.0, 5.0, 10.0, np.nan], "c": ["u", "v", "w", "u"],
                      "d": [1, 2, 3, 4]})
    y = pd.DataFrame({"a": [1.0, 5.0, 7.0, 3.0], "c": ["u", "u", None, "u"], "d": [1, 2, 3, 4]})
    r = il1(x, y, numeric=["a", "d"])
    assert r.per_column["a"] == pytest.approx((1 + 0 + 3) / 3 / 10)  # pairs present in both
    assert r.per_column["c"] == pytest.approx(2 / 4)  # v→u and w→missing change
    assert r.changed == ["a", "c"] and r.per_column["d"] == 0.0
    assert r.IL1_numeric == pytest.approx(r.per_column["a"])
    assert r.IL1_overall == pytest.approx((r.per_column["a"] + 0.5) / 2)
    assert il1(x, x, ["a", "d"]).IL1_overall == 0.0


def test_numeric_il1_of_suppressed_values_by_hand():
    x = pd.DataFrame({"a": [0.0, 5.0, 10.0, 2.0, np.nan], "c": ["u", "v", "w", "u", "u"]})
    y = pd.DataFrame({"a": [1.0, np.nan, 7.0, np.nan, np.nan], "c": ["u", None, "w", "u", "u"]})
    # range 10; both present: rows 0, 2 (losses 0.1, 0.3); blanked: rows 1, 3; row 4 was missing
    worst = il1(x, y, ["a"])
    assert worst.il1_missing == "max"
    assert worst.per_column["a"] == pytest.approx((0.1 + 0.3 + 1 + 1) / 4)  # 0.6
    sdcmicro = il1(x, y, ["a"], missing="ignore")
    assert sdcmicro.il1_missing == "ignore"
    assert sdcmicro.per_column["a"] == pytest.approx((0.1 + 0.3) / 2)  # 0.2
    for r in (worst, sdcmicro):  # a blanked category counts as changed under either reading
        assert r.per_column["c"] == pytest.approx(1 / 5) and r.changed == ["a", "c"]
    assert worst.IL1_overall == pytest.approx((0.6 + 0.2) / 2)
    assert sdcmicro.IL1_overall == pytest.approx((0.2 + 0.2) / 2)
    gone = y.assign(a=np.nan)  # every value blanked
    assert il1(x, gone, ["a"]).per_column["a"] == 1.0
    assert il1(x, gone, ["a"], missing="ignore").per_column["a"] == 0.0
    with pytest.raises(SdcInputError, match="il1_missing must be one of max, ignore, not 'zero'"):
        il1(x, y, ["a"], missing="zero")


def test_alignment_errors(actg):
    with pytest.raises(SdcInputError, match="differ in length"):
        il1(actg, actg.head(10))
    with pytest.raises(SdcInputError, match="only in the protected: extra"):
        il1(actg, actg.assign(extra=1))
    with pytest.raises(SdcInputError, match="the same columns in another order"):
        il1(actg, actg[actg.columns[::-1]])
    with pytest.raises(SdcInputError, match="unknown not-released column"):
        il1(actg, actg, not_released=["nosuch"])
    # band labels are read as their midpoints: the loss of the numeric release
    midpoints = il1(actg, actg.assign(age=band(actg["age"], 10, label="midpoint").values),
                    ["age"])
    for label in ("interval", "range", "auto"):
        banded = actg.assign(age=band(actg["age"], 10, label=label).values)
        assert il1(actg, banded, ["age"]).per_column == midpoints.per_column
    assert 0 < midpoints.IL1_numeric < 0.1
    other = actg.assign(age=actg["age"].astype(str).where(actg["age"] < 40, "old"))
    as_text = il1(actg, other, ["age"])  # numbers no longer: compared as categories
    assert as_text.IL1_numeric == 0.0 and as_text.per_column["age"] == pytest.approx(
        (actg["age"] >= 40).mean())


def test_distribution_measures():
    x = pd.Series(["a"] * 6 + ["b"] * 4)
    y = pd.Series(["a"] * 3 + ["b"] * 7)
    assert tvd(x, y) == pytest.approx(0.3)
    df = pd.DataFrame({"n": np.arange(10.0), "c": x})
    out = pd.DataFrame({"n": np.arange(10.0) + 2, "c": y})
    rep = distribution_report(df, out, ["n"]).set_index("column")
    assert rep.loc["n", "mean_shift"] == pytest.approx(2.0)
    assert rep.loc["n", "sd_shift"] == pytest.approx(0.0)
    assert rep.loc["n", "ks"] == pytest.approx(0.2)
    assert rep.loc["c", "tvd"] == pytest.approx(0.3)


def test_correlation_difference_and_constant_columns(actg):
    diff = correlation_difference(actg, actg, NUMERIC)
    assert diff.shape == (10, 10) and np.abs(diff.to_numpy()).max() == 0
    flat = actg.assign(age=band(actg["age"], 1000).values)  # one band: a constant column
    sim = eigenvalue_similarity(actg, flat, NUMERIC)
    assert 0 < sim < 100


def test_randomized_response_error(actg):
    from sdc_core.methods import randomized_response
    reports = randomized_response(actg["drugs"], 0.5, seed=1).values
    err = randomized_response_error(actg["drugs"], reports, 0.5).set_index("category")
    assert err.loc["1", "true_share"] == pytest.approx((actg["drugs"] == 1).mean())
    assert (err["error"].abs() < 4 * err["se"]).all()


def test_numeric_codes_recoded_to_text_change_only_where_the_code_did():
    codes = pd.Series([70, 80, 90, 100, 100, None], dtype="Int64")
    labels = pd.Series(["other", "other", "90", "100", "100", None], dtype="str")
    assert categorical_il1(codes, labels) == (pytest.approx(2 / 5), True)
    floats = pd.Series([1.0, 2.5, 3.0])
    assert categorical_il1(floats, pd.Series(["1", "2.5", "x"], dtype="str"))[0] == \
        pytest.approx(1 / 3)
