"""One report per release (sdc_core.utility.validity): the summary figures are what their
definitions say on the parts, and the shortcuts for unchanged columns change no figure."""

import math

import numpy as np
import pandas as pd
import pytest

from sdc_core.errors import SdcInputError
from sdc_core.recipe import apply_recipe, make_recipe
from sdc_core.utility.analysis import AnalysisResult, TermResult, parse_spec
from sdc_core.utility.fidelity import pmse, table_fidelity
from sdc_core.utility.validity import Validity, verdict

SPEC = parse_spec({"analyses": [
    {"name": "cd4", "kind": "ols", "formula": "cd420 ~ age + C(treat) + cd40"},
    {"name": "censored", "kind": "logit", "formula": "cens ~ age + cd40"},
    {"name": "mean cd4 by race", "kind": "mean", "column": "cd420", "by": "race"},
    {"name": "race × gender", "kind": "table", "columns": ["race", "gender"]}]})
RECIPES = [
    [{"method": "band", "column": "age", "width": 10}],
    [{"method": "pram", "column": "race", "p": 0.3}],
    [{"method": "noise", "columns": ["cd40"], "p": 50}],
    [{"method": "band", "column": "age", "width": 5},
     {"method": "microaggregation", "columns": ["cd40", "cd420"], "k": 3}],
]


@pytest.fixture(scope="module")
def validity(actg):
    return Validity(SPEC, actg)


@pytest.mark.parametrize("steps", RECIPES)
def test_knowing_the_changed_columns_changes_no_figure(actg, validity, steps):
    applied = apply_recipe(make_recipe(steps, seed=3), actg)
    changed = [c for c in actg.columns
               if not actg[c].equals(applied.data[c])]
    fast = validity.compare(applied.data, changed=changed).to_json()
    full = validity.compare(applied.data).to_json()
    assert fast["tables"] == full["tables"]
    assert fast["analyses"] == full["analyses"]
    for key in ("mean_ci_overlap", "worst_tvd", "pmse", "s_pmse"):
        assert fast[key] == pytest.approx(full[key], rel=1e-12, abs=1e-15)
    assert full["tables"] == [t.to_json() for t in table_fidelity(
        actg, applied.data, SPEC.table_columns())]
    p = pmse(actg, applied.data, SPEC.table_columns())
    assert full["pmse"] == pytest.approx(p.pmse, rel=1e-12)


def test_summary_figures_are_their_definitions(actg, validity):
    protected = apply_recipe(make_recipe(RECIPES[1] + RECIPES[2], seed=3), actg).data
    report = validity.compare(protected)
    overlaps = [r.mean_ci_overlap for r in report.analyses if r.kind != "table"]
    assert len(overlaps) == 3
    assert report.mean_ci_overlap == pytest.approx(np.mean(overlaps), rel=1e-12)
    table = next(r for r in report.analyses if r.kind == "table")
    assert report.worst_tvd == max([t.tvd for t in report.tables] + [table.tvd])
    s = report.summary()
    assert s["ci_overlap_loss"] == pytest.approx(1 - s["mean_ci_overlap"], rel=1e-12)
    holds = {f"holds: {r.name}": float(verdict(r) == "holds") for r in report.analyses}
    assert report.per_analysis() == {"ci_overlap: cd4": overlaps[0],
                                     "ci_overlap: censored": overlaps[1],
                                     "ci_overlap: mean cd4 by race": overlaps[2],
                                     "tvd: race × gender": table.tvd} | holds
    assert s["analyses_holding"] == pytest.approx(np.mean(list(holds.values())))


def test_an_analysis_the_release_breaks_counts_zero_and_a_dropped_column_tvd_one(actg,
                                                                               validity):
    released = actg.drop(columns=["cd40"])
    report = validity.compare(released)
    cd4, censored, mean, _ = report.analyses
    assert cd4.error.startswith("protected") and censored.error.startswith("protected")
    assert report.mean_ci_overlap == pytest.approx((0 + 0 + mean.mean_ci_overlap) / 3)
    assert report.missing == ["cd40"] and report.worst_tvd == 1.0
    assert report.per_analysis()["ci_overlap: cd4"] == 0.0
    assert verdict(cd4) == "does not hold"


def test_an_analysis_that_fails_on_the_original_is_left_out(actg):
    spec = parse_spec({"analyses": [
        {"name": "separated", "kind": "logit", "formula": "cens ~ I(cens * 2)"},
        {"name": "mean age", "kind": "mean", "column": "age"}]})
    report = Validity(spec, actg).compare(actg.assign(age=actg["age"] + 1))
    failed, mean = report.analyses
    assert failed.error.startswith("original") and verdict(failed) == "cannot be compared"
    assert report.mean_ci_overlap == mean.mean_ci_overlap


def test_a_spec_naming_a_missing_column_is_refused(actg):
    with pytest.raises(SdcInputError, match="analysis 'm': the data has no column"):
        Validity(parse_spec({"analyses": [{"name": "m", "kind": "mean", "column": "x"}]}),
                 actg)
    with pytest.raises(SdcInputError, match="analysis spec: the data has no column"):
        Validity(parse_spec({"analyses": [{"name": "m", "kind": "mean", "column": "age"}],
                             "columns": ["age", "nope"]}), actg)


def test_pmse_off_or_impossible_is_said_not_guessed(actg):
    off = parse_spec({"analyses": [{"name": "m", "kind": "mean", "column": "age"}],
                      "pmse": False})
    report = Validity(off, actg).compare(actg)
    assert report.pmse is None and math.isnan(report.summary()["s_pmse"])
    wide = parse_spec({"analyses": [{"name": "m", "kind": "mean", "column": "age"}],
                       "columns": ["pidnum"]})
    ids = actg.assign(pidnum=actg["pidnum"].astype(str))
    report = Validity(wide, ids).compare(ids)
    assert report.pmse is None and "parameters" in report.pmse_error
    assert "pmse_error" in report.to_json()


def term(original, low, high, protected, plow, phigh, overlap, inside):
    return TermResult("t", original, low, high, protected, plow, phigh, overlap, 0.0, inside)


@pytest.mark.parametrize("terms, expected", [
    ([term(1, 0, 2, 1, 0, 2, 1.0, True)], "holds"),
    ([term(1, 0, 2, 1.1, 0.1, 2.1, 0.95, True), term(1, 0, 2, 1.9, 0.95, 2.95, 0.5, True)],
     "shifted"),
    ([term(1, 0, 2, 1.2, 0.2, 2.2, 0.9, True), term(1, 0.9, 1.1, 1.2, 1.15, 1.25, 0.9, False)],
     "shifted"),
    ([term(1, 0, 2, 5, 4, 6, -1.0, False)], "does not hold"),
])
def test_verdict(terms, expected):
    overlap = float(np.mean([t.ci_overlap for t in terms]))
    assert verdict(AnalysisResult("a", "ols", terms, overlap)) == expected


def test_verdict_of_tables_and_errors():
    assert verdict(AnalysisResult("t", "table", tvd=0.01)) == "holds"
    assert verdict(AnalysisResult("t", "table", tvd=0.2)) == "does not hold"
    assert verdict(AnalysisResult("a", "ols", error="protected: x")) == "does not hold"
    assert verdict(AnalysisResult("a", "mean", [], math.nan)) == "cannot be compared"


def test_table_fidelity_involving_some_columns_is_the_part_of_all_tables(actg):
    protected = apply_recipe(make_recipe(RECIPES[1], seed=1), actg).data
    columns = ["age", "race", "gender", "treat"]
    every = table_fidelity(actg, protected, columns)
    part = table_fidelity(actg, protected, columns, involving=["race"])
    assert [t.to_json() for t in part] == [t.to_json() for t in every if "race" in t.columns]
    assert pd.Series([t.tvd for t in every if "race" not in t.columns]).eq(0).all()


def test_a_column_of_the_same_values_in_another_dtype_is_compared_again(actg, validity):
    """IL1 reads codes 0/1 recoded to the text "0"/"1" as unchanged; an analysis may not."""
    released = actg.assign(treat=actg["treat"].astype(str))
    assert validity.compare(released, changed=[]).to_json() == \
        validity.compare(released).to_json()
    share = Validity(parse_spec({"analyses": [{"name": "treated", "kind": "mean",
                                               "column": "treat"}]}), actg)
    failed = share.compare(released, changed=[]).analyses[0]
    assert failed.error == "protected: analysis 'treated': column 'treat' is not numeric"
