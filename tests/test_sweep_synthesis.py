"""Synthesis in a sweep (issue 53; docs/utility.md, "Synthesis in a sweep"): a grid sweeps
synthesis's ``min_leaf`` and ``smoothing`` alone or beside the masked methods; a synthetic row
carries the released keys' risk and the set measures as the assessment gives them, blanks (not
zeros) where a figure compares record by record, and says why; a target or a front on such a
figure leaves the synthetic rows out, and says how many."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from sdc_core.assess import Setting, assess
from sdc_core.errors import SdcInputError
from sdc_core.names import MEASURES
from sdc_core.recipe import NOT_KEPT_ROWS, parse_recipe
from sdc_core.sweep.grid import parse_grid
from sdc_core.sweep.run import (
    RISK,
    SweepContext,
    needs_rows,
    pareto_front,
    run_sweep,
)
from tests.cli_run import run
from tests.conftest import ROOT

ADULT = ROOT.parent / "shared" / "data" / "adult.csv"
KEYS = ["sex", "race", "marital-status", "age"]
SENSITIVE = ["salary-class"]
SYNTH = {"method": "synthesize", "param": "min_leaf", "values": [5, 20]}
#: What a grid's values may hold that synthesis does not take: code, Markdown and HTML, deep
#: brackets, huge and non-finite numbers, wrong types, a blank, values past range
HOSTILE_VALUES = ["__import__('os').system('touch /tmp/x')", "**x** <b>y</b>",
                  "<script>alert(1)</script>", "[" * 3000 + "5" + "]" * 3000, float("nan"),
                  float("inf"), 1e308, 10 ** 400, -5, 0, 2.5, "", None, [5], {"v": 5}, "5",
                  True]


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    """300 records of an outside table (the UCI adult file), a few columns."""
    df = pd.read_csv(ADULT, sep=";")[[*KEYS, "education", "workclass", *SENSITIVE]]
    return df.sample(300, random_state=3).reset_index(drop=True)


@pytest.fixture(scope="module")
def combined(adult) -> pd.DataFrame:
    """A combined sweep of age bands and synthesis, with a sensitive column."""
    grid = {"combine": True, "sensitive": SENSITIVE, "numeric": ["age"], "settings": [
        {"method": "band", "column": "age", "param": "width", "values": [0, 10]},
        {**SYNTH, "values": [5], "fixed": {"smoothing": True}}]}
    return run_sweep(adult, KEYS, grid).table


def test_a_synthesis_setting_names_no_column_and_its_step_is_the_recipes(adult):
    g = parse_grid({"settings": [SYNTH, {"method": "synthesize", "param": "smoothing",
                                         "values": [False, True]}]}, adult)
    assert [(s.method, s.column, s.param, s.value) for s in g.settings] == [
        ("synthesize", "", "min_leaf", 5), ("synthesize", "", "min_leaf", 20),
        ("synthesize", "", "smoothing", False), ("synthesize", "", "smoothing", True)]
    assert g.settings[1].steps == [{"method": "synthesize", "min_leaf": 20}]


def test_a_combined_grid_makes_masked_and_synthetic_recipes_synthesis_last(combined):
    recipes = [json.loads(r)["steps"] for r in combined["recipe"]]
    methods = [[s["method"] for s in steps] for steps in recipes]
    # off first for synthesis: the masked recipes, then each with the synthesis step last
    assert methods == [[], [], ["synthesize"], ["band"], ["band", "synthesize"]]
    for steps in recipes:
        parse_recipe({"seed": 0, "steps": steps})  # a valid recipe: synthesis last


@pytest.mark.parametrize("value", HOSTILE_VALUES, ids=range(len(HOSTILE_VALUES)))
@pytest.mark.parametrize("param", ["min_leaf", "smoothing"])
def test_hostile_synthesis_values_are_refused_in_one_line(adult, param, value):
    if param == "smoothing" and isinstance(value, bool):
        return  # true and false are what smoothing takes
    with pytest.raises(SdcInputError) as err:
        parse_grid({"settings": [{"method": "synthesize", "param": param,
                                  "values": [value]}]}, adult)
    message = str(err.value)
    assert message.startswith("grid setting 1: ") and "\n" not in message
    assert len(message) < 200 and "Traceback" not in message


@pytest.mark.parametrize("setting, says", [
    ({**SYNTH, "column": "age"}, "names no column"),
    ({**SYNTH, "values": [151]}, "at most half the table's 300 records"),
    ({**SYNTH, "values": [10 ** 300]}, "at most half"),
    ({**SYNTH, "param": "min_leaves"}, "unknown key"),
])
def test_a_bad_synthesis_setting_says_why(adult, setting, says):
    with pytest.raises(SdcInputError, match=says):
        parse_grid({"settings": [setting]}, adult)


def test_a_combined_grid_sweeps_one_parameter_of_synthesis(adult):
    with pytest.raises(SdcInputError, match='one parameter of synthesis.*"fixed"'):
        parse_grid({"combine": True, "settings": [
            SYNTH, {"method": "synthesize", "param": "smoothing", "values": [True]}]}, adult)


def test_a_grid_with_a_household_refuses_synthesis(adult):
    with pytest.raises(SdcInputError, match="does not keep households whole"):
        parse_grid({"household": "workclass", "settings": [SYNTH]}, adult)


def test_every_row_equals_the_assessment_of_its_recipe(adult, combined):
    """One truth: each row of the combined sweep, masked or synthetic, equals the assessment
    of its recipe (compare --json's figures), keys' risk and set measures alike."""
    setting = Setting(tuple(KEYS), ("age",), tuple(SENSITIVE))
    for _, row in combined.iterrows():
        recipe = parse_recipe(json.loads(row["recipe"]))
        a = assess(adult, None, setting, recipe)
        for key in RISK:
            assert math.isclose(row[key], getattr(a.keys, key), rel_tol=1e-12), key
        out = a.to_json(distribution=False)
        assert row["replicated_uniques"] == out["replicated_uniques"]
        assert math.isclose(row["replicated_uniques_percent"],
                            out["replicated_uniques_percent"], rel_tol=1e-12)
        disco = {d["column"]: d["disco_percent"] for d in out["disco"]}
        assert math.isclose(row["disco_percent: salary-class"], disco["salary-class"],
                            rel_tol=1e-12)
        for m in ("t_closeness", "delta_disclosure"):
            assert math.isclose(row[f"{m}: salary-class"],
                                out["closeness"][0][m], rel_tol=1e-9), m
        synthetic = a.rows is not None
        assert (row["record_by_record"] == out.get("record_by_record")) if synthetic \
            else pd.isna(row["record_by_record"])
        if not synthetic:
            assert math.isclose(row["IL1_release"], out["IL1_release"], abs_tol=1e-12)
            assert row["linkage_reidentifications"] == out["linkage_reidentifications"]


def test_a_synthetic_row_leaves_the_record_by_record_figures_blank(combined):
    synthetic = combined[combined["record_by_record"].notna()]
    masked = combined[combined["record_by_record"].isna()]
    assert len(synthetic) == 2 and set(synthetic["record_by_record"]) == {NOT_KEPT_ROWS}
    blank = ["linkage_reidentifications", "linkage_risk_percent", "IL1_release",
             "IL1_overall", "eigenvalue_similarity_percent", "suppressed_values",
             "inference_gain", "inference_gain: salary-class"]
    assert synthetic[blank].isna().all().all()  # never 0
    assert masked[blank].notna().all().all()
    # what applies to any release has a number in every row
    applies = [*RISK, "replicated_uniques", "replicated_uniques_percent",
               "disco_percent: salary-class", "t_closeness: salary-class"]
    assert combined[applies].notna().all().all()


def test_the_blank_columns_are_the_declared_record_by_record_measures():
    assert needs_rows("linkage_reidentifications") and needs_rows("IL1_release_sd")
    assert needs_rows("inference_gain: salary-class") and needs_rows("suppressed_values")
    assert not needs_rows("expected_reidentifications") and not needs_rows(
        "disco_percent: salary-class")
    assert {m for m in MEASURES if needs_rows(m)} == {
        m for m, d in MEASURES.items() if "rows" in d.needs} | {"suppressed_values"}


def test_a_target_on_a_record_by_record_measure_never_picks_a_synthetic_row(adult):
    grid = {"combine": True, "search": "exhaustive", "numeric": ["age"],
            "target": {"measure": "linkage_risk_percent", "at_most": 100.0}, "settings": [
                {"method": "band", "column": "age", "param": "width", "values": [0, 10]},
                {**SYNTH, "values": [5]}]}
    result = run_sweep(adult, KEYS, grid)
    t = result.table
    synthetic = t["record_by_record"].notna()
    assert not t.loc[synthetic, "meets_target"].any()  # a blank is not ≤ 100
    assert t.loc[~synthetic & (t["method"] != "BASELINE"), "meets_target"].all()
    assert result.best is not None and not synthetic[result.best]
    assert result.off_front == int(synthetic.sum()) == 2
    assert not t.loc[synthetic, "pareto"].any()


def test_the_naive_risk_and_a_set_loss_put_both_kinds_on_one_front(adult):
    """With the released keys' re-identifications and the worst table's TVD, masked and
    synthetic rows are on one front, computed as a plain loop over the rows says."""
    analysis = {"analyses": [{"name": "sex by salary", "kind": "table",
                              "columns": ["sex", "salary-class"]}]}
    grid = {"pareto_risk": "naive", "loss": "worst_tvd", "analysis": analysis,
            "numeric": ["age"], "settings": [
                {"method": "band", "column": "age", "param": "width", "values": [5, 10, 20]},
                {**SYNTH, "values": [5, 50]}]}
    result = run_sweep(adult, KEYS, grid)
    t = result.table
    assert result.off_front == 0
    synthetic = t["record_by_record"].notna()
    assert synthetic.sum() == 2 and t["worst_tvd"].notna().all()
    risk, loss, sup = (t["expected_reidentifications"].to_numpy(), t["worst_tvd"].to_numpy(),
                       t["suppressed_values"].to_numpy())
    def dominates(j: int, i: int) -> bool:  # no worse on each both have, better on one
        pair = [(risk[j], risk[i]), (loss[j], loss[i])] + (
            [] if math.isnan(sup[i]) or math.isnan(sup[j]) else [(sup[j], sup[i])])
        return all(a <= b for a, b in pair) and any(a < b for a, b in pair)

    for i in range(len(t)):
        dominated = any(dominates(j, i) for j in range(len(t)) if j != i)
        assert t.at[i, "pareto"] == (not dominated), i


def test_a_criterion_one_point_lacks_does_not_decide():
    risk, loss = np.array([1.0, 1.0, 2.0]), np.array([1.0, 1.0, 0.5])
    suppressed = np.array([3.0, np.nan, 0.0])
    # row 1 lacks the suppressed values: equal to row 0 on the rest, neither dominates
    assert pareto_front(risk, loss, suppressed).tolist() == [True, True, True]
    assert pareto_front(risk, loss, np.array([3.0, 1.0, 0.0])).tolist() == [False, True, True]


def test_the_sweep_context_evaluates_a_masked_then_synthetic_recipe(adult):
    """The fast path on a two-step recipe: the masked step's table is what synthesis reads."""
    steps = [{"method": "top_bottom_code", "column": "age", "top_percentile": 95},
             {"method": "synthesize", "min_leaf": 5, "holdout": 0.5}]
    ctx = SweepContext(adult, KEYS, ["age"], 5, None, "wildcard", 1.0,
                       sensitive=SENSITIVE)
    row = ctx.evaluate(steps, 4)
    a = assess(adult, None, Setting(tuple(KEYS), ("age",), tuple(SENSITIVE)),
               parse_recipe({"seed": 4, "steps": steps}))
    out = a.to_json(distribution=False)
    for key in ("replicated_uniques", "dcr_train_share", "dcr_expected_share",
                "exact_copies"):
        assert math.isclose(row[key], out[key], rel_tol=1e-12), key
    assert "linkage_reidentifications" not in row and "IL1_release" not in row


def test_the_cli_sweeps_synthesis(adult, tmp_path):
    data, grid, out = tmp_path / "adult.csv", tmp_path / "grid.json", tmp_path / "sweep.csv"
    adult.to_csv(data, index=False)
    grid.write_text(json.dumps({"settings": [
        {"method": "synthesize", "param": "smoothing", "values": [False, True]}]}))
    done = run("sweep", data, "--qi", ",".join(KEYS), "--grid", grid, "-o", out)
    assert done.returncode == 0, done.stderr
    table = pd.read_csv(out)
    assert list(table["method"]) == ["BASELINE", "synthesize", "synthesize"]
    assert table.loc[1:, "linkage_reidentifications"].isna().all()
    assert table.loc[1:, "replicated_uniques"].notna().all()
    assert "2 synthetic rows are left out of the Pareto front and the best: " \
           "linkage_reidentifications or IL1_release compares record by record" in done.stdout


@pytest.mark.parametrize("setting, says", [
    ({"method": "synthesize", "param": "min_leaf", "values": ["<script>"]},
     "min_leaf must be a whole number"),
    ({"method": "synthesize", "param": "smoothing", "values": ["yes"]},
     "smoothing must be true or false"),
    ({"method": "synthesize", "column": "age", "param": "min_leaf", "values": [5]},
     "names no column"),
])
def test_the_cli_refuses_a_bad_synthesis_grid_in_one_line(adult, tmp_path, setting, says):
    data, grid, out = tmp_path / "adult.csv", tmp_path / "grid.json", tmp_path / "sweep.csv"
    adult.to_csv(data, index=False)
    grid.write_text(json.dumps({"settings": [setting]}))
    done = run("sweep", data, "--qi", ",".join(KEYS), "--grid", grid, "-o", out)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0] and "Traceback" not in done.stderr


def test_the_pages_count_of_combinations_is_the_grids(adult):
    """The Trade-offs page bounds its exhaustive search by the grid's count: synthesis off
    counts as a value."""
    from sdc_core.sweep.search import count
    from ui.logic.tradeoff_grid import combinations_asked

    settings = [{"method": "band", "column": "age", "param": "width", "values": [0, 5, 10]},
                {**SYNTH, "values": [5, 20, 20]}]
    g = parse_grid({"combine": True, "settings": settings}, adult)
    assert combinations_asked(settings) == count(g.dimensions) == 9


def _choice(min_leaf: str, smoothing: str):
    from sdc_core.methods import registry
    from ui.logic.tradeoff_grid import MethodChoice

    return MethodChoice(registry()["synthesize"], [],
                        swept={"min_leaf": min_leaf, "smoothing": smoothing})


def test_the_forms_synthesis_fields_make_the_grids_settings():
    from ui.logic.tradeoff_grid import grid_settings

    assert grid_settings([_choice("5, 20", "true, false")], combine=False) == [
        {"method": "synthesize", "param": "min_leaf", "values": [5, 20],
         "fixed": {"smoothing": flag}} for flag in (True, False)]
    assert grid_settings([_choice("", "False ; TRUE")], combine=True) == [
        {"method": "synthesize", "param": "smoothing", "values": [False, True]}]
    assert grid_settings([_choice("5", "")], combine=True) == [
        {"method": "synthesize", "param": "min_leaf", "values": [5]}]
    assert grid_settings([_choice("", "")], combine=False) == []


@pytest.mark.parametrize("min_leaf, smoothing, says", [
    ("5", "yes", "smoothing: values must be true or false"),
    ("5", "<b>true</b>", "values must be true or false"),
    ("5", "__import__('os')", "values must be true or false"),
    ("five", "", "values must be numbers"),
    ("1e400", "", "values must be finite numbers"),
    ("5", "true, false", "combining the methods takes one value of smoothing"),
])
def test_the_forms_synthesis_fields_refuse_in_one_message(min_leaf, smoothing, says):
    from ui.logic.tradeoff_grid import grid_settings

    with pytest.raises(SdcInputError, match=says):
        grid_settings([_choice(min_leaf, smoothing)], combine=True)
