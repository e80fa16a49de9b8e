"""The Trade-offs form as a sweep grid (ui.logic.tradeoff_grid.build_grid), without Streamlit:
what the page sends to run_sweep, and what it refuses."""

import json

import pandas as pd
import pytest

from sdc_core.errors import SdcInputError
from sdc_core.methods import registry
from sdc_core.names import label
from sdc_core.sweep.run import POPULATION, run_sweep
from sdc_core.teaching_households import HOUSEHOLDS_PATH
from ui.logic.protect import ProtectSettings
from ui.logic.tradeoff_grid import (
    EVERY_CLASS,
    EXHAUSTIVE_MAX,
    MethodChoice,
    SweepForm,
    analysis_labels,
    attribute_labels,
    build_grid,
    household_fixed,
    other_form,
    risk_labels,
    sweep_heading,
    target_figure,
    target_text,
)

QI = ["age", "gender", "race"]
M = registry()
WHERE = {"numeric": ["age", "wtkg"], "k": 5, "known": ["wtkg"], "not_released": ["pidnum"]}


def band(values: str = "5, 10", **kw) -> MethodChoice:
    return MethodChoice(M["band"], ["age"], values, **kw)


def test_the_grid_of_a_simple_form():
    grid = build_grid(SweepForm([band()], seeds=2, seed=7), **WHERE)
    assert grid == {"seeds": 2, "seed": 7, "numeric": ["age", "wtkg"], "k": 5,
                    "known": ["wtkg"], "not_released": ["pidnum"], "pareto_risk": "linkage",
                    "combine": False, "loss": "IL1_release",
                    "settings": [{"method": "band", "column": "age", "param": "width",
                                  "values": [5, 10]}]}


def test_targets_analyses_and_sampling():
    spec = {"analyses": [{"name": "m", "kind": "mean", "column": "wtkg"}]}
    grid = build_grid(SweepForm([band()], target="linkage_risk_percent", at_most=2,
                                loss="s_pmse", keep="mean_ci_overlap", keep_bound=0.8),
                      analysis=spec, sampled={"population_size": 1e6}, **WHERE)
    assert grid["target"] == {"measure": "linkage_risk_percent", "at_most": 2.0,
                              "keep": {"measure": "mean_ci_overlap", "at_least": 0.8}}
    assert grid["analysis"] is spec and grid["population"] == 1e6 and grid["loss"] == "s_pmse"
    every = build_grid(SweepForm([band()], target=EVERY_CLASS, at_most=3),
                       sampled={"sampling_fraction": 0.1}, **WHERE)
    assert every["target"] == {"measure": "percent_below_k", "at_most": 0.0}
    assert every["sampling_fraction"] == 0.1 and "analysis" not in every


def test_exhaustive_only_when_combined_with_a_target():
    two = [band(), MethodChoice(M["recode"], ["race"], "5")]
    assert "search" not in build_grid(SweepForm(two, combine=True, exhaustive=True), **WHERE)
    assert "search" not in build_grid(SweepForm(two, exhaustive=True, target="percent_unique"),
                                      **WHERE)
    grid = build_grid(SweepForm(two, combine=True, exhaustive=True, target="percent_unique"),
                      **WHERE)
    assert grid["search"] == "exhaustive" and grid["combine"] is True


@pytest.mark.parametrize("form, says", [
    (SweepForm([MethodChoice(M["band"], [], "5")]), "at least one method"),
    (SweepForm([band("x")]), "numbers separated by commas"),
    (SweepForm([band()], keep="worst_tvd"), "needs a risk target"),
    (SweepForm([band(", ".join(str(v) for v in range(1, EXHAUSTIVE_MAX + 2)))], combine=True,
               exhaustive=True, target="percent_unique"), "combinations: more than"),
])
def test_a_form_that_makes_no_grid(form, says):
    with pytest.raises(SdcInputError, match=says):
        build_grid(form, **WHERE)


def test_the_grid_runs(actg):
    grid = build_grid(SweepForm([band("10")], seeds=1, target="percent_unique", at_most=50),
                      **{**WHERE, "known": []})
    result = run_sweep(actg, QI, grid)
    assert len(result.table) == 2 and result.best is not None  # the baseline and one setting


def test_words_and_headings():
    labels = risk_labels(5, population=False)
    assert labels["percent_below_k"] == label("percent_below_k", 5) and POPULATION not in labels
    assert POPULATION in risk_labels(5, population=True)
    assert other_form("linkage_risk_percent", 1.0, 2000).startswith(" (20 ")
    assert other_form("linkage_reidentifications", 20, 2000) == " (1.00 % of the records)"
    assert other_form("percent_unique", 1.0, 2000) == ""
    assert target_text({"measure": "percent_below_k", "at_most": 0.0}, 5, 100, labels) == \
        "every class ≥ 5"
    text = target_text({"measure": "percent_unique", "at_most": 2.0,
                        "keep": {"measure": "worst_tvd", "at_most": 0.1}}, 5, 100, labels)
    assert text.startswith(f"{labels['percent_unique']} ≤ 2 and ") and text.endswith("≤ 0.1")
    heads = analysis_labels(["fit_sd"])
    assert heads["ci_overlap: fit_sd"] == "CI overlap: fit_sd"
    assert heads["ci_overlap: fit_sd_sd"] == "CI overlap: fit_sd, sd"


def pram(values: str = "0.1, 0.3") -> MethodChoice:
    return MethodChoice(M["pram"], ["race"], values)


def test_attribute_targets_and_the_sensitive_columns_in_the_grid():
    grid = build_grid(SweepForm([pram()], target="epsilon_max", at_most=2), **WHERE,
                      sensitive=["treat"])
    assert grid["sensitive"] == ["treat"]
    assert grid["target"] == {"measure": "epsilon_max", "at_most": 2.0}
    grid = build_grid(SweepForm([pram()], target="inference_gain", at_most=5,
                                target_column="treat"), **WHERE, sensitive=["treat"])
    assert grid["target"] == {"measure": "inference_gain", "column": "treat", "at_most": 5.0}
    assert "sensitive" not in build_grid(SweepForm([pram()]), **WHERE)
    with pytest.raises(SdcInputError, match="needs a sensitive column"):
        build_grid(SweepForm([pram()], target="inference_gain", target_column="treat"),
                   **WHERE)


def test_attribute_targets_in_words_and_the_sweep_headings():
    labels = risk_labels(5, False)
    assert target_text({"measure": "epsilon_max", "at_most": 2.0}, 5, 100, labels) == \
        "largest local-DP ε ≤ 2"
    assert target_text({"measure": "inference_gain", "column": "treat", "at_most": 5.0}, 5,
                       100, labels) == "attribute-inference gain on treat ≤ 5 points"
    assert target_text({"measure": "inference_gain", "at_most": 1.5}, 5, 100, labels) == \
        "attribute-inference gain ≤ 1.5 points"
    assert sweep_heading("epsilon: race") == "Local-DP ε of race"
    assert sweep_heading("guess_accuracy: race_sd") == "Best-guess accuracy of race, sd"
    assert sweep_heading("inference_gain: treat") == "Attribute-inference gain of treat"
    assert sweep_heading("inference_accuracy: treat") == \
        "Attribute-inference accuracy of treat"
    assert sweep_heading("epsilon_max") == "Largest local-DP ε"
    assert sweep_heading("inference_gain_sd") == "Attribute-inference gain, sd"
    assert sweep_heading("linkage_risk_percent") is None
    assert sweep_heading("tvd: x") is None
    assert target_figure({"measure": "inference_gain", "column": "N1", "at_most": 5}) == \
        "inference_gain: N1"
    assert target_figure({"measure": "epsilon_max", "at_most": 2}) == "epsilon_max"
    columns = ["linkage_risk_percent", "epsilon: race", "epsilon: race_sd", "epsilon_max",
               "guess_accuracy: race", "inference_gain", "inference_gain: treat"]
    assert attribute_labels(columns) == {
        "epsilon_max": "Largest local-DP ε", "inference_gain": "Attribute-inference gain",
        "epsilon: race": "Local-DP ε of race",
        "inference_gain: treat": "Attribute-inference gain of treat"}


def test_the_attribute_grid_is_one_the_core_takes(actg):
    grid = build_grid(SweepForm([pram("0.2")], seeds=1, target="inference_gain", at_most=50,
                                target_column="treat"), numeric=["age", "wtkg", "cd40"], k=5,
                      known=[], not_released=[], sensitive=["treat"])
    result = run_sweep(actg, QI, grid)
    assert {"epsilon: race", "epsilon_max", "inference_gain: treat"} <= set(result.table.columns)
    assert result.best is not None


def test_a_household_id_reaches_the_grid_and_its_figures_are_offered():
    grid = build_grid(SweepForm([band()], target="household_risk_pct", at_most=5),
                      household="hid", **WHERE)
    assert grid["household"] == "hid"
    assert grid["target"] == {"measure": "household_risk_pct", "at_most": 5.0}
    assert "household" not in build_grid(SweepForm([band()]), **WHERE)
    offered = risk_labels(5, False, households=True)
    for m in ("household_risk_pct", "household_expected_reidentifications",
              "household_linkage_reidentified"):
        assert offered[m] == label(m)
        assert m not in risk_labels(5, False)


SWAP = M["record_swap"]
PROFILES = [["hsize", "htype"], ["hsize"]]


def test_record_swapping_waits_for_the_protect_pages_geography_and_profiles():
    assert household_fixed(SWAP, ProtectSettings()) is None
    no_profiles = ProtectSettings(columns={"record_swap": ["region", "district"]})
    assert household_fixed(SWAP, no_profiles) is None
    no_geography = ProtectSettings(values={"record_swap": {"similar": PROFILES}})
    assert household_fixed(SWAP, no_geography) is None


def test_record_swapping_keeps_the_protect_pages_settings_but_its_rate():
    settings = ProtectSettings(
        columns={"record_swap": ["region", "district"]},
        values={"record_swap": {"similar": PROFILES, "swap_rate": 0.0, "k": 5,
                                "carry_along": ["tenure"]}})
    fixed = household_fixed(SWAP, settings)
    # the rate is what the sweep moves (even off on the Protect page); k and the carried
    # columns differ from their defaults, so they are kept
    assert fixed == {"hierarchy": ["region", "district"], "similar": PROFILES, "k": 5,
                     "carry_along": ["tenure"]}
    choice = MethodChoice(SWAP, [], "0.05, 0.2", fixed=fixed)
    grid = build_grid(SweepForm([choice]), household="hid", **WHERE)
    assert grid["settings"] == [{"method": "record_swap", "param": "swap_rate",
                                 "values": [0.05, 0.2], "fixed": fixed}]
    combined = build_grid(SweepForm([choice, band()], combine=True), household="hid", **WHERE)
    assert combined["settings"][0]["values"] == [0.0, 0.05, 0.2]  # also tried off
    empty = MethodChoice(SWAP, [], "", fixed=fixed)
    assert build_grid(SweepForm([empty, band()]), household="hid", **WHERE)["settings"] == \
        build_grid(SweepForm([band()]), household="hid", **WHERE)["settings"]


def test_the_record_swapping_grid_is_one_the_core_takes():
    df = pd.read_csv(HOUSEHOLDS_PATH)
    fixed = household_fixed(SWAP, ProtectSettings(
        columns={"record_swap": ["region", "district"]},
        values={"record_swap": {"similar": PROFILES}}))
    assert fixed is not None
    recode = MethodChoice(M["recode"], ["agegroup"], "400")
    form = SweepForm([recode, MethodChoice(SWAP, [], "0.1", fixed=fixed)], seeds=1,
                     combine=True)
    grid = build_grid(form, numeric=["age", "income"], k=3, known=[], not_released=[],
                      household="hid")
    table = run_sweep(df, ["region", "district", "hsize", "sex", "agegroup"], grid).table
    steps = [[s["method"] for s in json.loads(r)["steps"]] for r in table["recipe"]]
    assert ["recode", "record_swap"] in steps and ["record_swap"] in steps
    assert table["household_linkage_reidentified"].notna().all()
