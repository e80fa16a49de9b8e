"""Record swapping on the Protect page (docs/methods.md, "Targeted record swapping"): offered only
with a household id; the page's settings release what the core makes of the same recipe (the
Export page's files), the recipe downloaded there names the household column; a donor profile
that does not read is said under its field and not applied, hostile text included; a recipe
file's household column is checked against the session's."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from sdc_core.methods import registry
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.risk.household import household_linkage
from tests.apptest import app_test, downloads
from tests.conftest import plain
from tests.hostile_text import IMAGE, LINK, leaks
from tests.record_swap_step import HID, PROFILES, STEP
from ui.links import encode_recipe

NOT_OFFERED = "Set a household id on the Data page to swap households."
KEYS = ("w_p_record_swap_cols", "w_p_record_swap_similar", "w_p_record_swap_swap_rate",
        "w_p_record_swap_k", "w_p_record_swap_risk_variables", "w_p_record_swap_carry_along")


def keys(at: AppTest) -> set[str]:
    """The keys of the page's controls."""
    return {w.key for kind in (at.multiselect, at.text_input, at.slider) for w in kind}


def loaded(example_name: str, page: str = "views/protect.py") -> AppTest:
    """The dashboard on a built-in example, switched to ``page``."""
    at = app_test().run()
    at.selectbox(key="example_pick").set_value(example_name)
    next(b for b in at.button if b.label == "Load built-in data").click().run()
    at.switch_page(page).run()
    assert not at.exception
    return at


def swapping(at: AppTest, profiles: str = json.dumps(PROFILES)) -> AppTest:
    """The Protect page with the test's record swapping set."""
    at.multiselect(key="w_p_record_swap_cols").set_value(["region", "district"]).run()
    at.text_input(key="w_p_record_swap_similar").set_value(profiles).run()
    at.slider(key="w_p_record_swap_swap_rate").set_value(0.1).run()
    assert not at.exception
    return at


def one_method(at: AppTest, values_key: str, values: str,
               columns: dict[str, list[str]] | None = None) -> None:
    """The Trade-offs form with one seed and one method swept: ``values`` in ``values_key``,
    the other methods' columns and values emptied (``columns``: the column fields to set)."""
    at.number_input(key="w_t_seeds").set_value(1)
    for w in at.multiselect:
        w.set_value((columns or {}).get(w.key, []))
    for key in ("w_t_band_values", "w_t_pram_values"):
        at.text_input(key=key).set_value("")
    at.text_input(key=values_key).set_value(values)


def test_the_controls_appear_only_with_a_household_id():
    at = loaded("households")
    assert at.session_state["roles"].household == HID
    assert set(KEYS) <= keys(at)
    assert NOT_OFFERED not in [plain(c.value) for c in at.caption]
    # the geography: categorical columns, never the household id
    assert {"region", "district"} <= set(at.multiselect(key=KEYS[0]).options)
    assert HID not in at.multiselect(key=KEYS[0]).options
    # the household id unset on the Data page: the method is not offered
    at.switch_page("views/data.py").run()
    at.selectbox(key="w_household").set_value(None).run()
    at.switch_page("views/protect.py").run()
    assert not at.exception
    assert at.session_state["roles"].household is None
    assert not set(KEYS) & keys(at)
    assert NOT_OFFERED in [plain(c.value) for c in at.caption]
    at.switch_page("views/tradeoffs.py").run()  # nor on the Trade-offs form
    assert not at.exception and "w_t_record_swap_values" not in keys(at)
    assert "w_t_pram_values" in keys(at)  # the form is drawn: the check above can fail


def test_not_offered_on_data_without_households():
    at = loaded("actg175")
    assert at.session_state["roles"].household is None
    assert not set(KEYS) & keys(at)
    assert NOT_OFFERED in [plain(c.value) for c in at.caption]


def test_the_release_is_the_recipes_and_the_downloaded_recipe_names_the_household(
        monkeypatch, households):
    made = downloads(monkeypatch)
    at = swapping(loaded("households"))
    settings = at.session_state["protect"]
    assert settings.steps(at.session_state["roles"].qi) == [STEP]
    expected = apply_recipe(parse_recipe({"version": 1, "seed": settings.seed,
                                          "household": HID, "steps": [STEP]}), households)
    # the step's report line, as the method describes it
    line = registry()["record_swap"].describe(expected.reports[0])
    assert any(line in plain(c.value) for c in at.caption)
    # some households moved, each as a whole: every member keeps one region and district
    moved = (expected.data[["region", "district"]] != households[["region", "district"]]).any(
        axis=1)
    assert moved.any()
    assert (expected.data.groupby(HID)[["region", "district"]].nunique() == 1).all().all()
    at.switch_page("views/export.py").run()
    assert not at.exception
    got = pd.read_csv(io.BytesIO(made["dl_data.csv"]))
    want = pd.read_csv(io.StringIO(expected.data.to_csv(index=False)))
    pd.testing.assert_frame_equal(got, want)
    recipe = json.loads(made["dl_recipe"])
    assert recipe["household"] == HID and recipe["seed"] == settings.seed
    assert recipe["steps"] == [STEP]


def test_a_donor_profile_that_is_not_json_is_said_and_not_applied():
    at = swapping(loaded("households"), '[["hsize", "htype"]')
    said = [e for e in map(plain, (e.value for e in at.error)) if e.startswith("Donor profiles")]
    assert said and "this is not JSON" in said[0] and said[0].endswith("not applied.")
    steps = at.session_state["protect"].steps(at.session_state["roles"].qi)
    # not applied: without donor profiles the swap waits for them (no step, no failure)
    assert not any(st["method"] == "record_swap" for st in steps)
    assert not any("These settings cannot be applied" in plain(w.value) for w in at.warning)


@pytest.mark.parametrize("text, words", [
    (json.dumps([[IMAGE, LINK], ["**bold**"]]), "the data has no column"),
    (f"<img src=x onerror=alert(1)>{IMAGE}", "this is not JSON"),
    ("[" * 3000 + "]" * 3000, "this is not JSON"),
    ('[["' + "x" * 50_000 + '"]]', "is longer than the field takes (10,000)"),
])
def test_a_hostile_donor_profile_gets_a_clear_message(text, words):
    at = swapping(loaded("households"), text)
    said = [plain(e.value) for e in at.error if plain(e.value).startswith("Donor profiles")]
    assert len(said) == 1 and words in said[0], said
    assert len(said[0]) < 300  # the reason, not the text
    assert not leaks(at)
    assert "<img" not in " ".join(str(e.value) for e in at.error)


def recipe_upload(at: AppTest, recipe: dict, name: str = "recipe.json") -> AppTest:
    """Load ``recipe`` with the Protect page's "Load a recipe" (a file named ``name``: a new
    name, a new file)."""
    at.file_uploader(key="recipe_upload").set_value(
        (name, json.dumps(recipe).encode(), "application/json")).run()
    assert not at.exception
    return at


def test_a_recipe_with_the_sessions_household_loads_its_swap():
    at = recipe_upload(loaded("households"),
                       {"version": 1, "seed": 11, "household": HID, "steps": [STEP]})
    assert any(plain(s.value) == "Recipe loaded." for s in at.success)
    assert not at.warning  # no step left out
    settings = at.session_state["protect"]
    assert (settings.steps([]), settings.seed) == ([STEP], 11)
    assert at.multiselect(key=KEYS[0]).value == ["region", "district"]
    assert json.loads(at.text_input(key=KEYS[1]).value) == PROFILES


def test_a_recipe_with_another_household_column_is_said():
    at = loaded("households")
    # a swap by another household column: not loaded, and why
    recipe_upload(at, {"version": 1, "seed": 11, "household": "relation", "steps": [STEP]})
    said = [plain(e.value) for e in at.error if "Recipe not loaded" in plain(e.value)]
    assert said and "household column 'relation'" in said[0] and "'hid'" in said[0]
    assert at.session_state["protect"].steps([]) == []
    # other steps: loaded, with a warning that the session's household id applies
    pram = {"method": "pram", "column": "sex", "p": 0.1}
    recipe_upload(at, {"version": 1, "seed": 12, "household": "relation", "steps": [pram]},
                  "other.json")
    warned = [plain(w.value) for w in at.warning if "Recipe loaded." in plain(w.value)]
    assert warned and "'relation'" in warned[0] and "'hid'" in warned[0]
    assert at.session_state["protect"].steps([]) == [pram]


def test_a_link_with_record_swapping_opens_it():
    """A link carries the recipe's steps and the roles; the household id is the data set's
    own (hid), so the swap opens on the Protect page as it was."""
    at = app_test()
    at.query_params["data"] = "households"
    at.query_params["recipe"] = encode_recipe([STEP], 9)
    at.run()
    at.switch_page("views/protect.py").run()
    assert not at.exception
    settings = at.session_state["protect"]
    assert (settings.steps([]), settings.seed) == ([STEP], 9)
    assert at.multiselect(key=KEYS[0]).value == ["region", "district"]


def test_the_tradeoffs_sweep_carries_the_household_figures():
    """With a household id the Trade-offs grid names it, offers the household figures as
    risk measures and targets, and each row's figures are the core's on its own recipe."""
    from sdc_core.names import label
    from sdc_core.risk.household import household_linkage, household_risk
    from sdc_core.teaching_households import HOUSEHOLDS_PATH

    at = loaded("households")
    at.switch_page("views/tradeoffs.py").run()
    assert not at.exception
    one_method(at, "w_t_pram_values", "0.1, 0.3", {"w_t_pram_cols": ["sex"]})
    at.selectbox(key="w_t_target").set_value("household_linkage_reidentified")
    at.number_input(key="w_t_at_most").set_value(450.0)
    at.button[0].click().run()
    assert not at.exception and not at.error
    sweep = at.session_state["sweep"]
    assert sweep["grid"]["household"] == "hid"
    table = sweep["result"].table
    df = pd.read_csv(HOUSEHOLDS_PATH)
    roles = at.session_state["roles"]
    for _, row in table.iterrows():
        recipe = parse_recipe(json.loads(row["recipe"]))
        assert recipe.household == "hid"
        release = apply_recipe(recipe, df).data
        risk = household_risk(release, roles.qi, "hid", roles.weight)
        assert row["household_risk_pct"] == pytest.approx(risk.risk_percent, rel=1e-12)
        assert row["household_linkage_reidentified"] == household_linkage(
            df, release, roles.qi, "hid").reidentified
    offered = at.radio(key="w_t_risk").options
    assert label("household_linkage_reidentified") in offered
    assert label("household_risk_pct") in offered
    met = table["household_linkage_reidentified"] <= 450
    assert table["meets_target"].tolist() == met.tolist()


def test_the_tradeoffs_form_sweeps_the_swap_rate_with_the_protect_pages_settings(households):
    """Record swapping on the Trade-offs form: waiting for the Protect page's geography and
    donor profiles, then each rate a setting whose recipe is the Protect page's step at that
    rate, and whose figures are the core's on that recipe."""
    at = loaded("households", "views/tradeoffs.py")
    field = at.text_input(key="w_t_record_swap_values")
    assert field.disabled  # nothing set on the Protect page yet
    assert any("geography and donor profiles on the Protect page" in plain(c.value)
               for c in at.caption)
    at.switch_page("views/protect.py").run()
    swapping(at)
    at.switch_page("views/tradeoffs.py").run()
    assert not at.exception and not at.text_input(key="w_t_record_swap_values").disabled
    assert any("Geographic hierarchy, coarsest first: region, district; Donor profiles: hsize "
               "+ htype, then hsize" in plain(c.value) for c in at.caption)  # in words
    one_method(at, "w_t_record_swap_values", "0.05, 0.2")
    at.button[0].click().run()
    assert not at.exception and not at.error
    sweep = at.session_state["sweep"]
    fixed = {"hierarchy": ["region", "district"], "similar": PROFILES}
    assert sweep["grid"]["settings"] == [
        {"method": "record_swap", "param": "swap_rate", "values": [0.05, 0.2], "fixed": fixed}]
    table = sweep["result"].table
    rows = table[table["method"] == "record_swap"]
    assert len(rows) == 2
    roles = at.session_state["roles"]
    for rate, (_, row) in zip([0.05, 0.2], rows.iterrows()):
        recipe = parse_recipe(json.loads(row["recipe"]))
        assert recipe.household == HID
        (step,) = recipe.steps
        assert {k: step[k] for k in STEP} == {**STEP, "swap_rate": rate}
        applied = apply_recipe(recipe, households)
        assert row["household_linkage_reidentified"] == household_linkage(
            households, applied.data, roles.qi, HID).reidentified
    # swapping more households re-identifies fewer of them
    assert rows["household_linkage_reidentified"].is_monotonic_decreasing


@pytest.mark.parametrize("text, words", [
    ("__import__('os').system('touch /tmp/x')", "values must be numbers"),
    (f"0.1, {IMAGE} **bold**", "values must be numbers"),
    ("<script>alert(1)</script>", "values must be numbers"),
    ("[" * 3000 + "0.1" + "]" * 3000, "values must be numbers"),
    ("nan, inf", "values must be finite numbers"),
    ("1e400", "values must be finite numbers"),
    ("5", "swap_rate must be a number in [0, 1]"),
    ("0.1, " * 20_000, "20,000 settings asked for, more than max_settings"),
])
def test_hostile_swap_rates_on_the_tradeoffs_form_get_one_clear_message(text, words):
    """The rates field of the Trade-offs form: code, Markdown and HTML, deep brackets,
    non-finite numbers, a rate past what the method takes and a huge list are each refused
    in one short message, and nothing runs."""
    at = loaded("households", "views/protect.py")
    swapping(at)
    at.switch_page("views/tradeoffs.py").run()
    one_method(at, "w_t_record_swap_values", text)
    at.button[0].click().run()
    assert not at.exception
    said = [plain(e.value) for e in at.error]
    assert len(said) == 1 and words in said[0], said
    assert len(said[0]) < 400  # the reason, not the text
    assert not leaks(at) and "<script" not in said[0]
    assert "sweep" not in at.session_state  # no sweep ran


# -- a table with no area (issue 50) -----------------------------------------------------------

def panel_loaded(page: str = "views/protect.py") -> AppTest:
    """The real panel COUNT/rwm5yr uploaded, its keys and its person id as the household id
    tagged, switched to ``page``."""
    from tests import rwm5yr

    at = app_test().run()
    at.file_uploader(key="uploader").set_value(
        ("rwm5yr.csv", rwm5yr.csv_bytes(rwm5yr.panel()), "text/csv")).run()
    at.multiselect(key="w_qi").set_value(rwm5yr.KEYS).run()
    at.selectbox(key="w_household").set_value(rwm5yr.ID).run()
    at.switch_page(page).run()
    assert not at.exception
    return at


def test_the_geography_is_offered_only_as_areas_on_the_whole_households():
    """The whole households: region and district, not every categorical column (sex,
    relation, …); the others only once the steward marks columns as geography."""
    at = loaded("households")
    assert at.multiselect(key=KEYS[0]).options == ["region", "district"]
    assert not any(plain(i.value).startswith("This table has no geography") for i in at.info)
    at.checkbox(key="w_p_record_swap_mark").check().run()
    assert {"sex", "relation"} <= set(at.multiselect(key=KEYS[0]).options)


def test_a_panel_without_an_area_says_so_and_swaps_only_a_column_marked_as_geography():
    """COUNT/rwm5yr: no column is an area. The page says so plainly and offers no geography
    (its year and female were offered); marked by the steward, the wave is refused in words:
    the household and its values as plain text, the method by its name, no step number."""
    from ui.logic.groups import NO_GEOGRAPHY

    at = panel_loaded()
    assert NO_GEOGRAPHY in [plain(i.value) for i in at.info]
    assert KEYS[0] not in keys(at)  # no picker: nothing is an area
    assert not any(s["method"] == "record_swap"
                   for s in at.session_state["protect"].steps(at.session_state["roles"].qi))
    at.switch_page("views/tradeoffs.py").run()  # the Trade-offs block says the same
    assert any(plain(c.value).startswith(NO_GEOGRAPHY) for c in at.caption)
    assert at.text_input(key="w_t_record_swap_values").disabled
    at.switch_page("views/protect.py").run()
    at.checkbox(key="w_p_record_swap_mark").check().run()
    assert {"year", "female"} <= set(at.multiselect(key=KEYS[0]).options)
    at.multiselect(key=KEYS[0]).set_value(["year"]).run()
    at.text_input(key="w_p_record_swap_similar").set_value('[["female"]]').run()
    at.slider(key="w_p_record_swap_swap_rate").set_value(0.1).run()
    assert not at.exception
    said = [plain(m.value) for m in (*at.error, *at.warning)
            if "cannot be applied" in plain(m.value)]
    assert len(said) == 1, said
    assert ("These settings cannot be applied: Targeted record swapping: 'year' is not one area "
            "per household: household 1 has records with year 1984 and 1985") in said[0]
    assert "np." not in said[0] and "step " not in said[0] and "record_swap" not in said[0]


def test_a_hostile_column_marked_as_geography_is_refused_as_text():
    """A column named in Markdown and HTML, marked as geography though it changes within a
    household: the refusal names it and its values as text."""
    name = f"{IMAGE}<b>x</b>"
    rows = [f"hid,age,sex,{name}"] + [
        f"{i // 3},{20 + i % 5},{'mf'[i % 2]},{LINK if i % 3 else 'a'}" for i in range(60)]
    at = app_test().run()
    at.file_uploader(key="uploader").set_value(
        ("h.csv", ("\n".join(rows) + "\n").encode(), "text/csv")).run()
    at.multiselect(key="w_qi").set_value(["age", "sex"]).run()
    at.selectbox(key="w_household").set_value("hid").run()
    at.switch_page("views/protect.py").run()
    at.checkbox(key="w_p_record_swap_mark").check().run()
    at.multiselect(key=KEYS[0]).set_value([name]).run()
    at.text_input(key="w_p_record_swap_similar").set_value('[["sex"]]').run()
    at.slider(key="w_p_record_swap_swap_rate").set_value(0.1).run()
    assert not at.exception
    said = [plain(m.value) for m in (*at.error, *at.warning)
            if "cannot be applied" in plain(m.value)]
    assert len(said) == 1 and f"'{name}' is not one area per household" in said[0], said
    assert not leaks(at)
    assert "<b>" not in " ".join(str(m.value) for m in (*at.error, *at.warning))
