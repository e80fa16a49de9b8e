"""The Protect page's "What this buys" (docs/measures.md, "Deniability: what perturbation buys",
"The attribute-inference attack"): the row of a perturbed column carries the core's ε, it moves
with the slider, and a release with no perturbed column says so."""

from __future__ import annotations

import json

import pandas as pd

from sdc_core.names import label
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.risk.closeness import closeness_report
from sdc_core.risk.deniability import recipe_deniability
from sdc_core.risk.inference import attribute_inference
from tests.apptest import app_on, downloads
from tests.conftest import plain
from ui.logic.deniability_view import NOTHING_PERTURBED

EPS = label("epsilon")


def buys_table(at) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if EPS in d.value.columns)


def applied_recipe(at):
    return parse_recipe(json.loads(at.session_state["protect_last_applied"].recipe))


def test_pram_row_carries_the_core_epsilon_and_moves_with_p(actg):
    at = app_on("views/protect.py")
    at.slider(key="w_p_pram_p").set_value(0.1).run()
    assert not at.exception and not at.error
    shown = buys_table(at)
    recipe = applied_recipe(at)
    core = recipe_deniability(recipe, actg)
    assert shown["column"].tolist() == [d.column for d in core] and len(core) >= 1
    assert shown[EPS].tolist() == [d.epsilon for d in core]
    assert shown[label("guess_accuracy")].tolist() == [d.guess_accuracy for d in core]
    assert shown[label("baseline")].tolist() == [d.baseline for d in core]
    before = shown[EPS].tolist()
    at.slider(key="w_p_pram_p").set_value(0.3).run()
    after = buys_table(at)
    assert after[EPS].tolist() != before
    assert after[EPS].tolist() == [d.epsilon for d in recipe_deniability(applied_recipe(at),
                                                                          actg)]
    # the example's sensitive column: the attack's row equals the core's
    inference = next(t.value for t in at.table
                     if label("inference_accuracy") in t.value.columns).reset_index()
    recipe = applied_recipe(at)
    released = apply_recipe(recipe, actg)
    core_inf = attribute_inference(actg, released.data, ["age", "gender", "race"], ["treat"],
                                   recipe, reports=released.reports)
    assert inference["column"].tolist() == ["treat"]
    assert inference[label("inference_accuracy")].iloc[0] == core_inf.columns[0].accuracy
    assert inference[label("inference_baseline")].iloc[0] == core_inf.columns[0].baseline


def test_the_detail_shows_one_column_at_a_time(actg):
    at = app_on("views/protect.py")
    at.slider(key="w_p_pram_p").set_value(0.2).run()
    at.session_state["p_buys_detail"] = True
    at.run()
    assert not at.exception
    box = at.selectbox(key="w_p_buys_col")
    core = {d.column: d for d in recipe_deniability(applied_recipe(at), actg)}
    assert box.options == list(core)
    posterior = next(d.value for d in at.dataframe if "π (original share)" in d.value.columns)
    d = core[box.value]
    assert posterior["π (original share)"].round(4).tolist() == d.prior.round(4).tolist()


def test_no_perturbed_column_says_so():
    at = app_on("views/protect.py")
    at.slider(key="w_p_band_age").set_value(10).run()
    assert not at.exception and not at.error
    assert not [d for d in at.dataframe if EPS in d.value.columns]
    assert NOTHING_PERTURBED in [plain(c.value) for c in at.caption]


def test_the_report_carries_what_the_protect_page_shows(actg, monkeypatch):
    """With the example's sensitive column (treat) and PRAM on, the Export page's report holds
    the core's ε, guess accuracy and attack figures, and the closeness of the original and of
    the release, each under its name."""
    made = downloads(monkeypatch)
    at = app_on("views/protect.py")
    at.slider(key="w_p_pram_p").set_value(0.2).run()
    assert not at.exception and not at.error
    shown = buys_table(at)
    recipe = applied_recipe(at)
    released = apply_recipe(recipe, actg)
    at.switch_page("views/export.py").run()
    assert not at.exception and not at.error
    html = made["dl_report"]().decode()
    assert "<h2>What this buys</h2>" in html
    core = recipe_deniability(recipe, actg)
    assert shown[EPS].tolist() == [d.epsilon for d in core]
    for d in core:
        assert f"Posterior of {d.column}" in html
        for value in (d.epsilon, d.guess_accuracy, d.baseline):
            assert f"<td>{value:.6g}</td>" in html, (d.column, value)
    qi = ["age", "gender", "race"]
    attack = attribute_inference(actg, released.data, qi, ["treat"], recipe,
                                 reports=released.reports).columns[0]
    assert "<h3>Attribute-inference attack</h3>" in html
    for value in (attack.accuracy, attack.baseline, attack.gain):
        assert f"<td>{value:.6g}</td>" in html, value
    before = closeness_report(actg, qi, ["treat"])["treat"]
    after = closeness_report(released.data, qi, ["treat"])["treat"]
    for figures in (before, after):
        for k in ("t_closeness", "beta_likeness", "delta_disclosure"):
            assert f"<td>{getattr(figures, k):.6g}</td>" in html, k
    assert f"<th>{label('t_closeness')}, released</th>" in html
