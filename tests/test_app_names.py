"""The pages call a figure by the name ``sdc_core.names`` gives it, as the report and the command
line do (tests/test_names.py)."""

import json

from sdc_core.names import count_and_percent, tile
from sdc_core.recipe import apply_recipe, load_recipe
from sdc_core.risk import risk_profile
from sdc_core.risk.linkage import linkage_attack
from tests.apptest import app_test, tiles

QI = ["age", "gender", "race"]


def test_the_pages_say_the_names(actg):
    at = app_test().run()
    at.switch_page("views/risk.py").run()
    assert not at.exception
    p = risk_profile(actg, QI)
    shown = {m.label: m.value for m in tiles(at)}
    assert shown[tile("expected_reidentifications")] == \
        f"{p.expected_reidentifications:,.0f} ({p.avg_linkage_risk_percent:.2f} %)"
    assert shown[tile("percent_k_le_threshold", 5)] == f"{p.percent_k_le_threshold:.2f} %"
    helps = {m.label: m.help for m in tiles(at)}
    assert "at most k = 5" in helps[tile("percent_k_le_threshold", 5)]  # ≤, as the tile says
    assert "fewer than k = 5" in helps[tile("percent_below_k", 5)]  # <, as the tile says
    at.switch_page("views/protect.py").run()
    at.slider(key="w_p_band_age").set_value(10).run()
    assert not at.exception
    recipe = load_recipe(json.dumps(
        {"version": 1, "seed": 0, "steps": [{"method": "band", "column": "age", "width": 10}]}))
    attack = linkage_attack(actg, apply_recipe(recipe, actg).data, QI, recipe)
    shown = {m.label: m.value for m in tiles(at)}
    assert shown[tile("linkage_reidentifications")] == count_and_percent(
        "linkage_risk_percent", attack.summary()) == \
        f"{attack.linkage_reidentifications:,.0f} ({attack.linkage_risk_percent:.2f} %)"
    assert tile("IL1_overall") in shown and not [k for k in shown if "seed" in k]
