"""The Trade-offs page's attribute-disclosure figures (docs/utility.md, "Attribute disclosure in
a sweep"): the tagged sensitive columns go to the grid, the sweep table's ε of a perturbed column
is the core's ``recipe_deniability`` of the row's recipe, and the ε target picks a best row
that meets it."""

import json

import pytest

from sdc_core.recipe import parse_recipe
from sdc_core.risk.deniability import recipe_deniability
from tests.apptest import app_on
from tests.conftest import plain

P_VALUES = "0.05, 0.2, 0.4"


def pram_on_race(at) -> None:
    """PRAM on race over a few p values, one seed; no other method."""
    at.number_input(key="w_t_seeds").set_value(1)
    for w in at.multiselect:
        w.set_value(["race"] if w.key == "w_t_pram_cols" else [])
    at.text_input(key="w_t_band_values").set_value("")
    at.text_input(key="w_t_pram_values").set_value(P_VALUES)


def test_the_sweep_table_carries_epsilon_and_the_epsilon_target_picks_a_row_meeting_it(actg):
    at = app_on("views/tradeoffs.py")
    pram_on_race(at)
    at.selectbox(key="w_t_target").set_value("epsilon_max")
    at.number_input(key="w_t_at_most").set_value(2.0)
    at.button[0].click().run()
    assert not at.exception and not at.error
    sweep = at.session_state["sweep"]
    grid, result = sweep["grid"], sweep["result"]
    assert grid["sensitive"] == ["treat"]
    assert grid["target"] == {"measure": "epsilon_max", "at_most": 2.0}
    table = next(d.value for d in at.dataframe if "method" in d.value.columns)
    assert {"epsilon: race", "epsilon_max", "inference_gain: treat"} <= set(table.columns)
    rows = result.table[result.table["method"] == "pram"]
    assert len(rows) == 3
    for i, row in rows.iterrows():
        recipe = parse_recipe(json.loads(row["recipe"]))
        (d,) = [d for d in recipe_deniability(recipe, actg) if d.column == "race"]
        shown = table["epsilon: race"].iloc[list(result.table.index).index(i)]
        assert float(shown) == pytest.approx(d.epsilon, rel=1e-9)  # the page's row
        assert row["epsilon: race"] == pytest.approx(d.epsilon, rel=1e-9)
    best = result.best
    assert best is not None and result.table.at[best, "epsilon_max"] <= 2.0
    meeting = rows[rows["epsilon_max"] <= 2.0]
    assert 0 < len(meeting) < len(rows)  # the target separates the p values
    assert best == meeting["IL1_release"].idxmin()
    assert any("Cheapest setting under largest local-DP ε ≤ 2" in plain(s.value)
               for s in at.success)
    labels = at.radio(key="w_t_risk").options
    assert "Largest local-DP ε" in labels and "Local-DP ε of race" in labels



def test_the_inference_target_and_a_row_without_deniability(actg):
    at = app_on("views/tradeoffs.py")
    pram_on_race(at)
    at.text_input(key="w_t_pram_values").set_value("0.2, 1")  # p = 1: no deniability
    at.selectbox(key="w_t_target").set_value("inference_gain")
    at.selectbox(key="w_t_target_column").set_value("treat")
    at.number_input(key="w_t_at_most").set_value(5.0)
    at.button[0].click().run()
    assert not at.exception and not at.error
    sweep = at.session_state["sweep"]
    assert sweep["grid"]["target"] == {"measure": "inference_gain", "column": "treat",
                                       "at_most": 5.0}
    result = sweep["result"]
    best = result.best
    assert best is not None and result.table.at[best, "inference_gain: treat"] <= 5.0
    assert any("attribute-inference gain on treat ≤ 5 points" in plain(s.value)
               for s in at.success)
    table = next(d.value for d in at.dataframe if "method" in d.value.columns)
    assert list(table["epsilon: race"])[1:] == ["1.3863", "∞"]  # p = 0.2: ln 4
    at.radio(key="w_t_risk").set_value("epsilon_max").run()
    assert not at.exception
    assert any("1 row has no deniability (ε = ∞)" in c.value for c in at.caption)
