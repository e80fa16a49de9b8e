"""Benchmark analyses in sweeps and on the command line (issue 26 item 4): a sweep row's
figures are those of the release it names, over seeds their mean and spread; a grid can rank by
them and keep them in its target; ``compare --analysis`` prints the same report, and the CLI on
the written file agrees with the sweep row."""

import json

import numpy as np
import pandas as pd
import pytest

from sdc_core.errors import SdcInputError
from sdc_core.examples import EXAMPLES
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.sweep.run import run_sweep
from sdc_core.utility.analysis import parse_spec
from sdc_core.utility.validity import Validity
from tests.cli_run import run

QI = ["age", "gender", "race"]
SPEC = {"analyses": [
    {"name": "cd4", "kind": "ols", "formula": "cd420 ~ age + C(treat) + cd40"},
    {"name": "race by arm", "kind": "proportion", "column": "race", "by": "arms"},
    {"name": "race × gender", "kind": "table", "columns": ["race", "gender"]}],
    "columns": ["age", "race", "cd40", "cd420"]}
SETTINGS = [{"method": "band", "column": "age", "param": "width", "values": [5, 10, 20]},
            {"method": "noise", "columns": ["cd40"], "param": "p", "values": [10, 100]},
            {"method": "pram", "column": "race", "param": "p", "values": [0.2]}]


@pytest.fixture(scope="module")
def swept(actg):
    return run_sweep(actg, QI, {"seeds": 3, "analysis": SPEC, "settings": SETTINGS})


def release_report(actg: pd.DataFrame, recipe_text: str):
    recipe = parse_recipe(json.loads(recipe_text))
    return Validity(parse_spec(SPEC), actg).compare(apply_recipe(recipe, actg).data)


def test_a_row_is_its_release_and_random_rows_the_mean_over_seeds(actg, swept):
    table = swept.table
    for i in range(1, len(table)):
        row = table.iloc[i]
        recipe = json.loads(row["recipe"])
        reports = [release_report(actg, json.dumps({**recipe, "seed": recipe["seed"] + j}))
                   for j in range(int(row["n_seeds"]))]
        for figure in ("mean_ci_overlap", "worst_tvd", "s_pmse"):
            values = [r.summary()[figure] for r in reports]
            assert row[figure] == pytest.approx(np.mean(values), rel=1e-9, abs=1e-12)
            if len(values) > 1:
                assert row[f"{figure}_sd"] == pytest.approx(np.std(values, ddof=1), rel=1e-9,
                                                            abs=1e-12)
        per = [r.per_analysis() for r in reports]
        assert row["ci_overlap: cd4"] == pytest.approx(np.mean([p["ci_overlap: cd4"]
                                                                for p in per]), rel=1e-9)
        assert row["tvd: race × gender"] == pytest.approx(
            np.mean([p["tvd: race × gender"] for p in per]), rel=1e-9, abs=1e-12)
    base = table.iloc[0]
    assert base["mean_ci_overlap"] == 1.0 and base["worst_tvd"] == 0.0
    assert base["s_pmse"] == pytest.approx(0.0, abs=1e-9)


def test_noise_on_a_regressor_costs_the_analysis_more_than_banding(swept):
    t = swept.table.set_index(["method", "param_value"])
    assert t.loc[("noise", 100.0), "ci_overlap: cd4"] < t.loc[("band", 5.0), "ci_overlap: cd4"]
    assert t.loc[("pram", 0.2), "tvd: race × gender"] > 0
    assert t.loc[("band", 5.0), "tvd: race × gender"] == 0.0  # race and gender untouched


@pytest.mark.parametrize("loss", ["ci_overlap_loss", "worst_tvd", "s_pmse"])
def test_a_grid_ranks_by_the_loss_it_names_and_keeps_what_its_target_asks(actg, loss):
    keep = {"measure": "mean_ci_overlap", "at_least": 0.9}
    result = run_sweep(actg, QI, {"analysis": SPEC, "loss": loss, "settings": SETTINGS[:2],
                                  "target": {"measure": "linkage_risk_percent", "at_most": 5,
                                             "keep": keep}})
    t = result.table
    assert result.loss == loss
    meets = (t["linkage_risk_percent"] <= 5) & (t["mean_ci_overlap"] >= 0.9)
    assert (t["meets_target"] == meets).all()
    candidates = t[meets & (t["method"] != "BASELINE")]
    assert not candidates.empty and (~meets[1:]).any()  # the target separates the rows
    assert result.best == candidates[loss].idxmin()
    for i in t.index:  # Pareto front on (linkage re-identifications, the loss, suppressed)
        dominated = ((t["linkage_reidentifications"] <= t.at[i, "linkage_reidentifications"])
                     & (t[loss] <= t.at[i, loss])
                     & (t["suppressed_values"] <= t.at[i, "suppressed_values"])
                     & ((t["linkage_reidentifications"] < t.at[i, "linkage_reidentifications"])
                        | (t[loss] < t.at[i, loss])
                        | (t["suppressed_values"] < t.at[i, "suppressed_values"]))).any()
        assert t.at[i, "pareto"] == (not dominated)


def test_the_pruned_search_with_a_utility_kept_finds_the_exhaustive_best(actg):
    grid = {"analysis": {**SPEC, "pmse": False}, "combine": True, "loss": "ci_overlap_loss",
            "settings": [{"method": "band", "column": "age", "param": "width",
                          "values": [0, 2, 5, 10, 20]},
                         {"method": "noise", "columns": ["cd40"], "param": "p",
                          "values": [0, 10, 50]}],
            "target": {"measure": "linkage_risk_percent", "at_most": 3,
                       "keep": {"measure": "mean_ci_overlap", "at_least": 0.9}}}
    pruned = run_sweep(actg, QI, grid)
    full = run_sweep(actg, QI, {**grid, "search": "exhaustive"})
    assert pruned.pruned and pruned.evaluated < full.evaluated
    assert pruned.best_recipe == full.best_recipe is not None
    assert np.isnan(full.table["pmse"]).all()  # "pmse": false fits no propensity model


@pytest.mark.parametrize("grid, message", [
    ({"loss": "worst_tvd"}, 'grid: the loss worst_tvd needs benchmark analyses ("analysis")'),
    ({"loss": "IL2"}, "grid: loss must be one of IL1_release, ci_overlap_loss, worst_tvd, "
                      "s_pmse, not 'IL2'"),
    ({"analysis": {"analyses": [{"name": "m", "kind": "ols", "formula": "y ~ x"}]}},
     "grid: analysis 'm': the data has no column(s) y, x"),
    ({"target": {"measure": "linkage_risk_percent", "at_most": 1,
                 "keep": {"measure": "mean_ci_overlap", "at_least": 0.9}}},
     'grid: keeping mean_ci_overlap needs benchmark analyses ("analysis")'),
    ({"analysis": SPEC, "target": {"measure": "linkage_risk_percent", "at_most": 1,
                                   "keep": {"measure": "mean_ci_overlap", "at_most": 0.9}}},
     "grid: mean_ci_overlap is kept with at_least (higher is better)"),
    ({"analysis": SPEC, "target": {"measure": "linkage_risk_percent", "at_most": 1,
                                   "keep": {"measure": "speed", "at_most": 0.9}}},
     "grid: target keep measure must be one of"),
])
def test_grid_errors_name_the_problem(actg, grid, message):
    with pytest.raises(SdcInputError, match="^" + message.replace("(", r"\(").replace(
            ")", r"\)")):
        run_sweep(actg, QI, {"settings": SETTINGS[:1], **grid})


# -- the command line -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def files(tmp_path_factory, actg):
    d = tmp_path_factory.mktemp("analysis")
    spec = d / "spec.json"
    spec.write_text(json.dumps(SPEC))
    recipe = d / "recipe.json"
    recipe.write_text(json.dumps({"seed": 7, "steps": [
        {"method": "band", "column": "age", "width": 10},
        {"method": "pram", "column": "race", "p": 0.2}]}))
    released = d / "released.csv"
    out = run("apply", EXAMPLES["actg175"].path, "--recipe", recipe, "-o", released)
    assert out.returncode == 0, out.stderr
    return {"spec": spec, "recipe": recipe, "released": released, "dir": d}


def test_compare_with_analysis_prints_the_report_of_the_files(actg, files):
    out = run("compare", EXAMPLES["actg175"].path, files["released"], "--analysis",
              files["spec"], "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    released = pd.read_csv(files["released"])
    want = Validity(parse_spec(SPEC), actg).compare(released).to_json()
    for key in ("mean_ci_overlap", "worst_tvd", "pmse", "s_pmse"):
        assert got[key] == pytest.approx(want[key], rel=1e-9)
    assert [a["name"] for a in got["analyses"]] == ["cd4", "race by arm", "race × gender"]
    term = got["analyses"][0]["terms"][0]
    assert set(term) == {"term", "original", "original_low", "original_high", "protected",
                         "protected_low", "protected_high", "ci_overlap", "std_diff",
                         "original_in_protected_ci"}
    assert set(got["analyses"][2]) >= {"tvd", "hellinger"}
    assert {"columns", "tvd", "hellinger", "false_zeros", "false_nonzeros"} == set(
        got["tables"][0])
    text = run("compare", EXAMPLES["actg175"].path, files["released"], "--analysis",
               files["spec"])
    assert text.returncode == 0 and "mean CI overlap" in text.stdout
    assert "S_pMSE" in text.stdout and "near 1" in text.stdout


def test_the_cli_on_the_written_file_agrees_with_the_sweep_row(actg, files):
    grid = files["dir"] / "grid.json"
    grid.write_text(json.dumps({"seed": 7, "analysis": SPEC, "combine": True, "settings": [
        {"method": "band", "column": "age", "param": "width", "values": [10]},
        {"method": "pram", "column": "race", "param": "p", "values": [0.2]}]}))
    table = files["dir"] / "sweep.csv"
    out = run("sweep", EXAMPLES["actg175"].path, "--qi", "age,gender,race", "--grid", grid,
              "-o", table)
    assert out.returncode == 0, out.stderr
    row = pd.read_csv(table).iloc[-1]
    assert json.loads(row["recipe"])["steps"] == json.loads(files["recipe"].read_text())["steps"]
    cli = json.loads(run("compare", EXAMPLES["actg175"].path, files["released"], "--analysis",
                         files["spec"], "--json").stdout)
    for key in ("mean_ci_overlap", "worst_tvd", "s_pmse"):
        assert row[key] == pytest.approx(cli[key], rel=1e-9)


@pytest.mark.parametrize("spec, message", [
    ('{"analyses": []}', "analysis spec: 'analyses' must be a non-empty list"),
    ('{"analyses": [{"name": "m", "kind": "ols", "formula": "nope ~ age"}]}',
     "analysis 'm': the data has no column(s) nope"),
    ("{not json", "analysis spec"),
])
def test_a_bad_spec_is_one_line_and_exit_2(files, spec, message):
    bad = files["dir"] / "bad.json"
    bad.write_text(spec)
    out = run("compare", EXAMPLES["actg175"].path, files["released"], "--analysis", bad)
    assert out.returncode == 2 and message in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


def test_analysis_needs_the_pandas_engine(files):
    out = run("compare", EXAMPLES["actg175"].path, files["released"], "--analysis",
              files["spec"], "--engine", "duckdb")
    assert out.returncode == 2 and "--analysis reads both tables in memory" in out.stderr


def test_over_seeds_each_figure_has_one_spread_column(swept):
    """The per-analysis ``_sd`` columns came twice (a page's table refused them)."""
    columns = swept.table.columns
    assert not columns.duplicated().any()
    assert "ci_overlap: cd4_sd" in columns and "tvd: race × gender_sd" in columns


def test_the_reports_sweep_figure_plots_the_sweeps_loss(actg):
    from ui.logic.report import sweep_figure

    result = run_sweep(actg, QI, {"analysis": SPEC, "loss": "worst_tvd",
                                  "settings": SETTINGS[:1]})
    fig = sweep_figure(result)
    titles = {fig.layout.xaxis.title.text, fig.layout.yaxis.title.text}
    assert "worst-table TVD (benchmark analyses)" in titles
    plotted = [v for trace in fig.data for axis in ("x", "y")
               if getattr(trace, axis) is not None for v in getattr(trace, axis)]
    assert set(result.table["worst_tvd"]) <= set(plotted)
