"""Risk in the population from one table (issue 27): how the file was sampled, the figures of
``risk --json``'s ``population``, the same figure in a sweep row and on the written file, and
in the table of the models against the sampling fraction (the Risk page's curves)."""

import json

import numpy as np
import pandas as pd
import pytest

from sdc_core.data.io import read_table
from sdc_core.errors import SdcInputError
from sdc_core.examples import EXAMPLES
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.risk.loglinear import loglinear_risk
from sdc_core.risk.population import class_histogram, population_uniqueness
from sdc_core.risk.population_risk import population_risk, sampling, sensitivity
from sdc_core.sweep.run import POPULATION, run_sweep
from tests.cli_run import run

QI = ["age", "gender", "race"]


@pytest.fixture(scope="module")
def household() -> pd.DataFrame:
    return read_table(EXAMPLES["household"].path)


def test_sampling_from_a_fraction_a_size_or_the_weights(actg, household):
    n = len(actg)
    assert sampling(actg, sampling_fraction=0.02) == type(sampling(actg, sampling_fraction=1))(
        0.02, n / 0.02, "fraction")
    s = sampling(actg, population_size=4 * n)
    assert (s.fraction, s.population, s.source) == (0.25, 4 * n, "population")
    w = sampling(household, "weight")
    assert w.source == "weights" and w.population == pytest.approx(household["weight"].sum())
    assert w.fraction == pytest.approx(len(household) / household["weight"].sum())
    assert sampling(actg) is None and population_risk(actg, QI) is None
    given = sampling(household, "weight", sampling_fraction=0.5)  # what is given comes first
    assert given.source == "fraction" and given.population == 2 * len(household)


@pytest.mark.parametrize("kwargs, message", [
    ({"sampling_fraction": 0}, "the sampling fraction must lie in (0, 1]"),
    ({"sampling_fraction": 1.5}, "the sampling fraction must lie in (0, 1]"),
    ({"population_size": 10}, "the population size must be at least the 2,139 records"),
    ({"sampling_fraction": 0.1, "population_size": 1e6}, "not both"),
])
def test_bad_sampling_is_one_line(actg, kwargs, message):
    with pytest.raises(SdcInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        sampling(actg, **kwargs)


def test_weights_summing_to_fewer_people_than_records_are_refused(actg):
    with pytest.raises(SdcInputError, match="give the population size"):
        sampling(actg.assign(w=0.5), "w")


def test_the_figures_are_the_models_on_the_tables_histogram(actg):
    r = population_risk(actg, QI, sampling_fraction=0.01)
    out = r.to_json()
    for key in ("sampling_fraction", "population_size", "sample_uniqueness", "zayatz", "pitman",
                "snb", "dankar", "dankar_model", "loglinear", "zayatz_count", "dankar_count"):
        assert key in out
    want = population_uniqueness(class_histogram(actg, QI), sampling_fraction=0.01).to_json()
    assert {k: out[k] for k in want} == want
    assert out["population_uniqueness_percent"] == pytest.approx(100 * want["dankar"])
    default = loglinear_risk(actg, QI, fraction=0.01)
    got = out["loglinear"]["default"]
    assert (got["r1"], got["r2"]) == (default.r1, default.r2)
    assert got["r1_per_unique"] == pytest.approx(default.tau1 / default.sample_uniques)
    assert set(out["loglinear"]) == {"default", "CE", "PML"}


def test_the_sensitivity_curve_holds_the_chosen_fraction(actg):
    r = population_risk(actg, QI, sampling_fraction=0.037)
    curve = sensitivity(r)
    at = np.flatnonzero(np.isclose(curve.fractions, 0.037))
    assert len(at) == 1 and curve.fractions[0] == pytest.approx(0.001)
    assert curve.dankar[at[0]] == pytest.approx(r.uniqueness.dankar.share, rel=1e-12)
    assert curve.zayatz[-1] == pytest.approx(r.uniqueness.sample_uniqueness, rel=1e-12)


def test_risk_json_prints_the_population(actg):
    out = run("risk", EXAMPLES["actg175"].path, "--qi", ",".join(QI), "--sampling-fraction",
              "0.01", "--no-suda2", "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)["population"]
    want = population_risk(actg, QI, sampling_fraction=0.01).to_json()
    assert got == json.loads(json.dumps(want))
    text = run("risk", EXAMPLES["actg175"].path, "--qi", ",".join(QI), "--population",
               str(len(actg) * 100), "--no-suda2")
    assert "In the population (sampling fraction 0.01" in text.stdout
    assert "a blank key is a category of its own" in text.stdout
    plain = json.loads(run("risk", EXAMPLES["actg175"].path, "--qi", ",".join(QI),
                           "--no-suda2", "--json").stdout)
    assert plain["population"] is None


def test_risk_with_weights_uses_their_sum(household):
    keys = "region,age,sex,household_size"
    out = run("risk", EXAMPLES["household"].path, "--qi", keys, "--weight", "weight",
              "--no-suda2", "--json")
    got = json.loads(out.stdout)["population"]
    assert got["population_source"] == "weights"
    assert got["population_size"] == pytest.approx(household["weight"].sum())


@pytest.mark.parametrize("args, message", [
    (["--population", "10"], "the population size must be at least the 2,139 records"),
    (["--sampling-fraction", "0.1", "--population", "1e6"], "not allowed with argument"),
    (["--sampling-fraction", "0.1", "--engine", "duckdb"], "use the pandas engine"),
])
def test_bad_sampling_on_the_command_line_is_exit_2(args, message):
    out = run("risk", EXAMPLES["actg175"].path, "--qi", ",".join(QI), "--no-suda2", *args)
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr


def test_a_sweep_row_is_the_population_figure_of_its_release(actg, tmp_path):
    grid = {"sampling_fraction": 0.05, "seeds": 2, "settings": [
        {"method": "band", "column": "age", "param": "width", "values": [5, 10]},
        {"method": "pram", "column": "race", "param": "p", "values": [0.2]},
        {"method": "noise", "columns": ["cd40"], "param": "p", "values": [50]}],
        "target": {"measure": POPULATION, "at_most": 0.01}}
    result = run_sweep(actg, QI, grid)
    table = result.table
    base = population_risk(actg, QI, sampling_fraction=0.05).percent
    assert table.at[0, POPULATION] == pytest.approx(base, rel=1e-12)
    for i in range(1, len(table)):
        recipe = json.loads(table.at[i, "recipe"])
        values = [population_risk(apply_recipe(parse_recipe(
            {**recipe, "seed": recipe["seed"] + j}), actg).data, QI,
            population_size=len(actg) / 0.05).percent for j in range(table.at[i, "n_seeds"])]
        assert table.at[i, POPULATION] == pytest.approx(np.mean(values), rel=1e-9)
    assert table.loc[table["method"] == "noise", POPULATION].item() == pytest.approx(base)
    met = table[POPULATION] <= 0.01
    assert (table["meets_target"] == met).all()
    released = tmp_path / "released.csv"
    recipe = tmp_path / "recipe.json"
    recipe.write_text(table.at[1, "recipe"])
    assert run("apply", EXAMPLES["actg175"].path, "--recipe", recipe, "-o",
               released).returncode == 0
    cli = json.loads(run("risk", released, "--qi", ",".join(QI), "--population",
                         str(len(actg) / 0.05), "--no-suda2", "--json").stdout)
    assert cli["population"]["population_uniqueness_percent"] == pytest.approx(
        table.at[1, POPULATION], rel=1e-9)


def test_a_population_target_needs_the_population(actg):
    with pytest.raises(SdcInputError, match="needs the population"):
        run_sweep(actg, QI, {"settings": [{"method": "band", "column": "age", "param": "width",
                                           "values": [5]}],
                             "target": {"measure": POPULATION, "at_most": 1}})


@pytest.mark.parametrize("na", ["wildcard", "category"])
def test_a_profiles_classes_give_the_same_figures(actg, na):
    from sdc_core.risk import risk_profile

    blanked = actg.assign(race=actg["race"].where(actg.index % 17 != 0))
    classes = risk_profile(blanked, QI, na=na).classes
    assert population_risk(blanked, QI, sampling_fraction=0.02, classes=classes).to_json() \
        == population_risk(blanked, QI, sampling_fraction=0.02).to_json()


def test_the_curves_numbers_hold_the_chosen_fraction(actg):
    from sdc_core.risk.population_risk import sensitivity
    from ui.logic.figures import figure_tables, uniqueness_curves

    risk = population_risk(actg, QI, sampling_fraction=0.0123)
    curve = sensitivity(risk)
    (_, table), = figure_tables(uniqueness_curves(curve, 0.0123))[0]
    x = "sampling fraction π (log scale)"
    assert table.columns.tolist() == [x, "Dankar's rule", "Zayatz", "Pitman (not valid)", "SNB",
                                      "sample uniqueness (of the file's records)"]
    chosen = table[table[x] == 0.0123]
    assert len(chosen) == 1 and min(table[x]) == pytest.approx(0.001) and max(table[x]) == 1
    assert chosen["Zayatz"].iloc[0] == pytest.approx(100 * risk.uniqueness.zayatz.share)
    assert chosen["Dankar's rule"].iloc[0] == pytest.approx(risk.percent)
