"""Recipes: validation with clear messages, determinism, fingerprints, record ids."""

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from sdc_core.data.io import table_bytes
from sdc_core.errors import SdcInputError
from sdc_core.recipe import (
    METHODS,
    apply_recipe,
    fingerprint,
    keeps_rows,
    load_recipe,
    make_recipe,
    parse_recipe,
    step_columns,
)

STEPS = [
    {"method": "band", "column": "age", "width": 10},
    {"method": "pram", "column": "gender", "p": 0.05},
    {"method": "relabel", "column": "race", "alpha": 0.1},
    {"method": "rank_swap", "column": "wtkg", "window_percent": 2.5},
    {"method": "randomized_response", "column": "drugs", "keep_probability": 0.5},
]


def test_design_example_recipe_applies_and_is_byte_identical(actg):
    recipe = parse_recipe({"version": 1, "seed": 42, "steps": STEPS})
    a = apply_recipe(recipe, actg)
    b = apply_recipe(load_recipe(recipe.to_json()), actg)
    for ext in (".csv", ".parquet", ".xlsx"):
        assert table_bytes(a.data, ext) == table_bytes(b.data, ext)
    assert [r["method"] for r in a.reports] == [s["method"] for s in STEPS]
    # ages are written as their bands, never as a number no patient has
    assert set(a.data["age"]) <= {f"{lo}–{lo + 9}" for lo in range(10, 80, 10)}
    assert sorted(a.data["wtkg"]) == sorted(actg["wtkg"])
    assert actg["age"].iloc[0] == 48  # the input is not modified


def test_seed_changes_the_randomness_and_steps_have_their_own_streams(actg):
    base = apply_recipe(parse_recipe({"seed": 1, "steps": STEPS}), actg).data
    other = apply_recipe(parse_recipe({"seed": 2, "steps": STEPS}), actg).data
    assert not base["wtkg"].equals(other["wtkg"])
    # appending a step never changes the earlier ones
    longer = apply_recipe(parse_recipe({"seed": 1, "steps": STEPS + [
        {"method": "pram", "column": "hemo", "p": 0.2}]}), actg).data
    pd.testing.assert_frame_equal(longer.drop(columns="hemo"), base.drop(columns="hemo"))


def test_record_id_makes_output_independent_of_row_order(actg):
    recipe = parse_recipe({"seed": 7, "record_id": "pidnum", "steps": STEPS})
    a = apply_recipe(recipe, actg).data.set_index("pidnum")
    shuffled = actg.sample(frac=1.0, random_state=0)
    b = apply_recipe(recipe, shuffled).data.set_index("pidnum").loc[a.index]
    pd.testing.assert_frame_equal(a, b)


def test_fingerprint_and_version_are_recorded_and_checked(actg):
    recipe = make_recipe(STEPS, seed=3, df=actg)
    data = json.loads(recipe.to_json())
    assert data["input_fingerprint"] == fingerprint(actg) and len(data["input_fingerprint"]) == 64
    assert data["sdc_core_version"]
    assert apply_recipe(recipe, actg).warnings == []
    changed = actg.assign(age=actg["age"] + 1)
    assert any("different data" in w for w in apply_recipe(recipe, changed).warnings)


@pytest.mark.parametrize("recipe, message", [
    ([], "a recipe must be a JSON object"),
    ({"steps": []}, "seed must be a whole number"),
    ({"seed": 1.5, "steps": []}, "seed must be a whole number"),
    ({"seed": 1, "steps": {}}, "steps must be a list"),
    ({"seed": 1, "steps": [], "colour": "red"}, "unknown key(s) colour"),
    ({"seed": 1, "version": 9, "steps": []}, "version 9 is not supported"),
    ({"seed": 1, "steps": [{"method": "shuffle"}]}, "step 1: unknown method 'shuffle'"),
    ({"seed": 1, "steps": [{"method": "band", "column": "age", "width": "10"}]},
     "step 1 (band): width must be a number"),
    ({"seed": 1, "steps": [{"method": "band", "column": "age", "width": 10, "colour": 1}]},
     "step 1 (band): unknown key(s) colour"),
    ({"seed": 1, "steps": [{"method": "pram", "column": 3, "p": 0.1}]},
     "step 1 (pram): column must be text"),
    ({"seed": 1, "steps": [{"method": "drop", "columns": []}]},
     "step 1 (drop): columns must be a non-empty list"),
])
def test_structural_errors(recipe, message):
    with pytest.raises(SdcInputError) as err:
        parse_recipe(recipe)
    assert message in str(err.value)


@pytest.mark.parametrize("step, message", [
    ({"method": "band", "column": "nosuch", "width": 5}, "step 1 (band): unknown column 'nosuch'"),
    ({"method": "band", "column": "age", "width": -5}, "width must be a positive number"),
    ({"method": "band", "column": "age"}, "step 1 (band): banding takes either a width or "
                                          "breaks"),
    ({"method": "band", "column": "age", "breaks": [20, 30]}, "do not hold every value"),
    ({"method": "pram", "column": "gender", "p": 2}, "step 1 (pram): p must lie in [0, 1]"),
    ({"method": "relabel", "column": "race", "alpha": -0.1}, "alpha must lie in [0, 1]"),
    ({"method": "rank_swap", "column": "wtkg", "window_percent": 0},
     "window_percent must be a positive number"),
    ({"method": "randomized_response", "column": "drugs", "keep_probability": 1.2},
     "keep_probability must lie in [0, 1]"),
    ({"method": "local_suppression", "columns": ["age", "zzz"], "k": 3},
     "unknown column(s) zzz"),
    ({"method": "local_suppression", "columns": ["age"], "k": 0}, "k must be a whole number"),
])
def test_data_errors_name_the_step(actg, step, message):
    with pytest.raises(SdcInputError) as err:
        apply_recipe(parse_recipe({"seed": 1, "steps": [step]}), actg)
    assert message in str(err.value)


def test_wrong_column_type_after_an_earlier_step(actg):
    recipe = parse_recipe({"seed": 1, "steps": [
        {"method": "recode", "column": "age", "min_count": 10_000, "other": "other"},
        {"method": "rank_swap", "column": "age"}]})
    with pytest.raises(SdcInputError, match=r"step 2 \(rank_swap\): .*column 'age' holds text"):
        apply_recipe(recipe, actg)


@pytest.mark.parametrize("label", ["interval", "range", "auto"])
def test_a_numeric_step_after_band_labels_reads_their_midpoints(actg, label):
    """A method that takes numbers, after a band step that wrote labels, works on the band
    midpoints: the release is the one the midpoint labels give."""
    def release(band_label: str) -> pd.DataFrame:
        return apply_recipe(parse_recipe({"seed": 1, "steps": [
            {"method": "band", "column": "age", "width": 10, "label": band_label},
            {"method": "top_bottom_code", "column": "age", "top": 50},
            {"method": "rank_swap", "column": "age"}]}), actg).data
    pd.testing.assert_series_equal(release(label)["age"], release("midpoint")["age"])


def test_bad_json_is_one_clear_message():
    with pytest.raises(SdcInputError, match="recipe is not valid JSON"):
        load_recipe('{"seed": 1, "steps": [')


def test_suppression_and_drop_steps(actg):
    recipe = parse_recipe({"seed": 1, "steps": [
        {"method": "local_suppression", "columns": ["age", "gender", "race"], "k": 5},
        {"method": "drop", "columns": ["pidnum", "arms"]}]})
    res = apply_recipe(recipe, actg)
    assert "arms" not in res.data and "pidnum" not in res.data
    assert res.reports[0]["min_k_after"] >= 5
    assert np.isfinite(res.reports[0]["total_suppressed"])


def test_a_recipe_keeps_rows_when_every_step_does(actg, monkeypatch):
    """Issue 52: ``keeps_rows`` of a recipe is true when every step's method keeps rows, and
    then row i of the release is the release of row i: a column no step names is equal row by
    row (blanking values and dropping columns keep rows)."""
    recipe = parse_recipe({"seed": 1, "steps": STEPS + [
        {"method": "local_suppression", "columns": ["age", "gender", "race"], "k": 5},
        {"method": "drop", "columns": ["pidnum", "arms"]}]})
    assert keeps_rows(recipe) and keeps_rows(parse_recipe({"seed": 1, "steps": []}))
    res = apply_recipe(recipe, actg)
    named = {c for step in recipe.steps for c in step_columns(step)}
    untouched = [c for c in actg.columns if c not in named]
    assert untouched and res.data.index.equals(actg.index)
    pd.testing.assert_frame_equal(res.data[untouched], actg[untouched])
    assert res.data["age"].isna().sum() > actg["age"].isna().sum()  # blanked, not removed
    monkeypatch.setitem(METHODS, "drop", replace(METHODS["drop"], keeps_rows=False))
    assert not keeps_rows(recipe)
    assert keeps_rows(parse_recipe({"seed": 1, "steps": STEPS}))


def test_step_columns_reads_column_or_columns():
    """A step's columns: its one column, else its list, else none."""
    assert step_columns({"method": "band", "column": "age", "width": 10}) == ["age"]
    assert step_columns({"method": "drop", "columns": ["a", "b"]}) == ["a", "b"]
    assert step_columns({"method": "drop"}) == []
    swap = parse_recipe({"seed": 1, "household": "h", "steps": [
        {"method": "record_swap", "hierarchy": ["region"], "similar": [["size"]],
         "carry_along": ["dwelling"]}]}).steps[0]
    assert step_columns(swap) == ["region", "dwelling"]  # the columns its method implies
