"""The Protect page's settings and recipe steps, both ways (pure Python, no Streamlit)."""

import json
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from sdc_core.errors import SdcInputError
from sdc_core.recipe import parse_recipe
from sdc_core.sweep.run import run_sweep
from tests.conformance import PAIRS, releases
from ui.logic.protect import (
    ProtectSettings,
    describe,
    from_steps,
    page_methods,
    read_profiles,
    recipe_household_note,
)
from ui.logic.workbench import recipe_json

MERGE = {"method": "recode", "column": "race", "groups": {"any": [0, 1]}}


@pytest.mark.parametrize("steps", [
    [MERGE],
    [MERGE, {"method": "recode", "column": "race", "min_count": 20}],
    [{"method": "band", "column": "age", "width": 10}, MERGE,
     {"method": "recode", "column": "race", "min_count": 20},
     {"method": "recode", "column": "gender", "groups": {"x": ["1"]}},
     {"method": "recode", "column": "gender", "min_count": 20},
     {"method": "pram", "column": "race", "p": 0.1}],
])
def test_steps_round_trip(steps):
    settings = from_steps(steps, 5)
    assert settings.steps(["age", "race", "gender"]) == steps


def test_a_merge_alone_switches_the_method_on_and_off():
    s = ProtectSettings({"recode": ["race"]}, {"recode": {"min_count": 0}})
    assert s.steps([]) == []
    s = ProtectSettings({"recode": ["race"]},
                        {"recode": {"min_count": 0, "groups": {"race": {"any": [0, 1]}}}})
    assert s.steps([]) == [MERGE]


def test_a_min_count_the_page_cannot_show_is_refused():
    with pytest.raises(SdcInputError, match="applies min_count to every column"):
        from_steps([MERGE, {"method": "recode", "column": "gender", "min_count": 20}], 1)
    with pytest.raises(SdcInputError, match="no control on the Protect page"):
        from_steps([{"method": "recode", "column": "race", "groups": {"a": [1]},
                     "min_count": 3}], 1)


def test_describe_writes_a_merge_as_json():
    assert describe([MERGE], 2) == 'recode race groups={"any": [0, 1]}; seed 2'


@pytest.mark.parametrize("step, words", [
    ({"method": "pram", "column": "race", "p": -0.5}, "p = -0.5 is below the low end of its "
                                                       "control on the Protect page (0)"),
    ({"method": "band", "column": "age", "width": 7.5}, "width = 7.5 is not a whole number"),
])
def test_values_a_control_cannot_show_are_refused_not_changed(step, words):
    """A slider cannot show p = -0.5 (Streamlit raised on the page): the recipe is refused with
    the reason instead of being changed."""
    with pytest.raises(SdcInputError, match=re.escape(words)):
        from_steps([step], 1)


@pytest.mark.parametrize("step", [{"method": "pram", "column": "race", "p": 0.9},
                                  {"method": "local_suppression", "columns": ["age"], "k": 50}])
def test_values_past_a_controls_end_are_kept(step):
    """PRAM p 0.9 opened as 0.5 and k 50 as 20: the settings keep the recipe's value (the
    slider widens to it)."""
    main = "p" if step["method"] == "pram" else "k"
    assert from_steps([step], 1).values[step["method"]] == {main: step[main]}


def test_a_seed_the_page_cannot_hold_is_refused_not_changed():
    """A recipe with seed 2**60 opened on the Protect page showed (and applied) another seed."""
    assert from_steps([], 2**53 - 1).seed == 2**53 - 1
    with pytest.raises(SdcInputError, match="seed 1152921504606846976 is larger than"):
        from_steps([], 2**60)


def opens(recipe: dict, qi: list[str]) -> str:
    """Open ``recipe`` as the Protect page does for quasi-identifiers ``qi``: either its
    settings give back the recipe's steps and seed exactly, or it is refused whole, in one line
    that says where to go instead."""
    try:
        settings = from_steps(recipe["steps"], recipe["seed"], {"local_suppression": qi})
    except SdcInputError as err:
        message = str(err)
        assert message and "\n" not in message, message
        assert "command line" in message or "Data page" in message, message
        return "refused"
    assert settings.seed == recipe["seed"]
    assert settings.steps(qi) == recipe["steps"]
    return "opened"


@pytest.mark.parametrize("first", PAIRS, ids=[f"{m}-{k}" for m, k in PAIRS])
@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=hs.data())
def test_every_harness_recipe_opens_as_it_is_or_not_at_all(first, data):
    """Opening never changes a setting: every recipe of the conformance harness (each method
    on each kind it takes, then up to three random steps) opens with identical steps and seed,
    or is refused whole with its reason."""
    _, qi, _, _, recipe = data.draw(releases(first))
    opens(recipe, qi)


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(releases())
def test_random_harness_recipes_open_as_they_are_or_not_at_all(case):
    """Steps in any order: an order the page does not apply in is refused, not reordered."""
    _, qi, _, _, recipe = case
    opens(recipe, qi)


def test_every_row_of_a_combined_sweep_with_own_values_per_column_opens_as_it_is():
    """Each banded column has its own widths (education 0–17 does not get age's 10–30), and
    every row of the combined sweep — PRAM and local suppression with them — opens with its
    recipe's steps and seed exactly."""
    rows = np.random.default_rng(1)
    df = pd.DataFrame({"age": rows.integers(0, 81, 200), "education": rows.integers(0, 18, 200),
                       "sex": rows.choice(["f", "m"], 200)})
    qi = ["age", "education", "sex"]
    grid = {"seeds": 1, "seed": 3, "numeric": ["age", "education"], "combine": True,
            "search": "exhaustive", "settings": [
                {"method": "band", "column": "age", "param": "width", "values": [0, 10, 30]},
                {"method": "band", "column": "education", "param": "width",
                 "values": [0, 2, 4]},
                {"method": "pram", "columns": ["sex"], "param": "p", "values": [0.0, 0.1]},
                {"method": "local_suppression", "columns": qi, "param": "k",
                 "values": [0, 3]}]}
    table = run_sweep(df, qi, grid).table
    assert len(table) == 1 + 3 * 3 * 2 * 2
    widths = set()
    for text in table["recipe"].iloc[1:]:
        recipe = json.loads(text)
        widths |= {(s["column"], s["width"]) for s in recipe["steps"] if s["method"] == "band"}
        offered = {"band": ["age", "education"], "pram": ["sex"], "local_suppression": qi}
        settings = from_steps(recipe["steps"], recipe["seed"], offered)
        assert (settings.steps(qi), settings.seed) == (recipe["steps"], recipe["seed"])
    assert widths == {("age", 10), ("age", 30), ("education", 2), ("education", 4)}


@pytest.mark.parametrize("steps", [
    [{"method": "band", "column": "age", "width": 10, "origin": 5, "label": "interval"},
     {"method": "band", "column": "education", "width": 3},
     {"method": "band", "column": "income", "breaks": [0, 1000, 5000], "label": "range"}],
    [{"method": "top_bottom_code", "column": "age", "top": 90, "bottom_percentile": 5}],
    [{"method": "pram", "column": "race", "invariant": True, "retention": 0.8}],
    [{"method": "pram", "column": "race", "matrix": {"a": {"a": 0.5, "b": 0.5}}}],
    [{"method": "recode", "column": "race", "min_count": 5, "other": "rest"}],
    [{"method": "randomized_response", "column": "drugs", "keep_probability": 0.5,
      "categories": [0, 1, 2]}],
    [{"method": "local_suppression", "columns": ["age", "race"], "k": 3,
      "importance": ["race", "age"], "alpha": 0.5}],
])
def test_every_recipe_parameter_opens_on_the_page(steps):
    """Origin, labels and per-column band settings, top/bottom coding, invariant PRAM and its
    matrix, the label of rare levels, the answers of randomized response, local suppression's
    importance order and α: each has a control now, so the recipe opens as it is."""
    settings = from_steps(steps, 7, {"local_suppression": ["age", "race"]})
    assert settings.steps(["age", "race"]) == steps


def test_parameters_at_their_defaults_open_and_are_shown_without_them():
    """A recipe may spell out a default (origin 0, kind "additive"); it opens, and the page's
    recipe leaves it out: the same steps when applied."""
    steps = [{"method": "band", "column": "age", "width": 10, "origin": 0, "label": "auto"},
             {"method": "noise", "columns": ["wt"], "p": 50, "kind": "additive", "delta": 0.1}]
    assert from_steps(steps, 1).steps([]) == [
        {"method": "band", "column": "age", "width": 10},
        {"method": "noise", "columns": ["wt"], "p": 50}]


@pytest.mark.parametrize("steps, words", [
    ([{"method": "pram", "column": "race", "p": 0.1},
      {"method": "band", "column": "age", "width": 10}], "in a fixed order"),
    ([{"method": "band", "column": "age", "width": 10},
      {"method": "band", "column": "age", "width": 5}], "a second band step on age"),
    ([{"method": "band", "column": "age", "width": 0}],
     "with width = 0, band is off on the Protect page"),
    ([{"method": "pram", "column": "race", "p": 0.1},
      {"method": "pram", "column": "sex", "p": 0.2}], "one setting of p for all pram"),
    ([{"method": "local_suppression", "columns": ["race"], "k": 3}],
     "offers local_suppression on age, race for the current roles, not on race"),
    ([{"method": "drop", "columns": ["age"]}], "has no control on the Protect page"),
])
def test_a_recipe_the_page_cannot_show_is_refused_whole(steps, words):
    with pytest.raises(SdcInputError, match=re.escape(words)):
        from_steps(steps, 1, {"local_suppression": ["age", "race"]})


# ---- record swapping: a step without columns (its hierarchy is the columns chosen) --------

SWAP = {"method": "record_swap", "hierarchy": ["region", "district"],
        "similar": [["hsize", "htype"], ["hsize"]], "swap_rate": 0.1, "k": 2,
        "risk_variables": ["agegroup", "sex"], "carry_along": ["tenure"]}
SWAP_OFFERED = {"record_swap": ["region", "district", "htype", "tenure"]}


def test_a_record_swap_step_round_trips_without_columns():
    """The page's step names its hierarchy, not the columns the method implies; the recipe's
    step (as a file holds it, or as parsed, with its implied columns) opens as it is."""
    settings = ProtectSettings({"record_swap": ["region", "district"]},
                               {"record_swap": {k: v for k, v in SWAP.items()
                                                if k not in ("method", "hierarchy")}}, 3)
    assert settings.steps([]) == [SWAP]
    parsed = parse_recipe({"seed": 3, "household": "hid", "steps": [SWAP]})
    assert parsed.steps[0]["columns"] == ["region", "district", "tenure"]
    for steps in ([SWAP], parsed.steps):
        opened = from_steps(steps, 3, SWAP_OFFERED)
        assert (opened.steps(["region"]), opened.seed) == ([SWAP], 3)
        assert opened.columns["record_swap"] == ["region", "district"]
    # the page's recipe applies as the recipe file does
    assert parse_recipe({"seed": 3, "household": "hid", "steps": settings.steps([])}) == parsed


def test_a_record_swap_step_at_the_default_rate_or_with_empty_lists_opens():
    """A step may leave out swap_rate (0.05, on) and give empty risk variables: it opens,
    and the page's step applies alike (the rate spelt out, the empty lists left out)."""
    step = {"method": "record_swap", "hierarchy": ["region"], "similar": [["hsize"]],
            "risk_variables": [], "carry_along": []}
    shown = from_steps([step], 1, SWAP_OFFERED).steps([])
    assert shown == [{"method": "record_swap", "hierarchy": ["region"], "swap_rate": 0.05,
                      "similar": [["hsize"]]}]


@pytest.mark.parametrize("step, words", [
    ({**SWAP, "swap_rate": 0}, "with swap_rate = 0, record_swap is off on the Protect page"),
    ({**SWAP, "hierarchy": ["region", "hid"]},
     "offers record_swap on region, district, htype, tenure for the current roles, not on "
     "region, hid"),
])
def test_a_record_swap_step_the_page_cannot_show_is_refused(step, words):
    with pytest.raises(SdcInputError, match=re.escape(words)):
        from_steps([step], 1, SWAP_OFFERED)


def test_the_recipe_text_names_the_household_only_when_set():
    steps = [{"method": "band", "column": "age", "width": 10}]
    assert "household" not in json.loads(recipe_json(steps, 4))
    assert recipe_json(steps, 4) == recipe_json(steps, 4, None)
    assert json.loads(recipe_json([SWAP], 4, "hid")) == {"version": 1, "seed": 4,
                                                         "steps": [SWAP], "household": "hid"}


@pytest.mark.parametrize("household, swap, outcome", [
    ("hid", True, None), ("hid", False, None),
    (None, False, "this session's household id is not set, and the page applies"),
    ("pid", False, "this session's household id is 'pid', and the page applies"),
    (None, True, "step 1 (record_swap) swaps households by the recipe's household column "
                 "'hid', and this session's household id is not set: set the household id "
                 "on the Data page to 'hid'"),
    ("pid", True, "this session's household id is 'pid': set the household id"),
])
def test_a_recipes_household_is_checked_against_the_sessions(household, swap, outcome):
    steps = [SWAP] if swap else [{"method": "band", "column": "age", "width": 10}]
    recipe = parse_recipe({"seed": 1, "household": "hid", "steps": steps})
    if outcome is None:
        assert recipe_household_note(recipe, household) is None
    elif swap:
        with pytest.raises(SdcInputError, match=re.escape(outcome)):
            recipe_household_note(recipe, household)
    else:
        note = recipe_household_note(recipe, household)
        assert note is not None and outcome in note and "'hid'" in note
    # a recipe without a household: nothing to say
    bare = parse_recipe({"seed": 1, "steps": [{"method": "band", "column": "age", "width": 5}]})
    assert recipe_household_note(bare, household) is None


COLUMNS = ["hid", "region", "hsize", "htype"]


@pytest.mark.parametrize("text, value", [
    ("", None), ("   ", None), ('[["hsize", "htype"], ["hsize"]]', [["hsize", "htype"], ["hsize"]]),
    ('[["htype"]]', [["htype"]]),
])
def test_donor_profiles_read(text, value):
    assert read_profiles(text, COLUMNS) == value


@pytest.mark.parametrize("text, words", [
    ('[["hsize"', "this is not JSON"),
    ("hsize, htype", "this is not JSON"),
    ('["hsize"]', "this is not a list of lists of column names"),
    ("[[]]", "this is not a list of lists of column names"),
    ("[]", "this is not a list of lists of column names"),
    ('{"a": ["hsize"]}', "this is not a list of lists of column names"),
    ('[["hsize", 1]]', "this is not a list of lists of column names"),
    ("[" * 5000 + "]" * 5000, "this is not JSON"),  # deeper than the parser goes
    ("[" * 3 + "]" * 3, "this is not a list of lists of column names"),
    ("[" + ",".join(['["hsize"]'] * 101) + "]", "101 profiles are more than the 100"),
    ("[" + "9" * 5000 + "]", "this is not JSON"),  # a number of more than 4,300 digits
    ('[["' + "x" * 20_000 + '"]]', "20,006 characters is longer than the field takes (10,000)"),
    ('[["![t](http://127.0.0.1:9/x.png)", "**b**"]]',
     "the data has no column '![t](http://127.0.0.1:9/x.png)' and 1 more"),
    ('[["' + "y" * 100 + '"]]', "the data has no column '" + "y" * 40 + "…'"),
])
def test_donor_profiles_that_do_not_read_say_why_without_the_text(text, words):
    with pytest.raises(ValueError, match=re.escape(words)) as err:
        read_profiles(text, COLUMNS)
    assert len(str(err.value)) < 200  # a short reason, never the whole text


def test_a_swap_without_donor_profiles_waits_for_them():
    """Choosing the geography alone (the swap rate's default is on) makes no step until the
    donor profiles are given, instead of a step the core refuses."""
    from sdc_core.methods import registry
    from ui.logic.protect import ProtectSettings, missing_required

    m = registry()["record_swap"]
    waiting = ProtectSettings(columns={"record_swap": ["region", "district"]},
                              values={"record_swap": {"swap_rate": 0.1}})
    assert waiting.steps([]) == []
    assert missing_required(m, {"swap_rate": 0.1}) == ["similar"]
    given = ProtectSettings(columns={"record_swap": ["region", "district"]},
                            values={"record_swap": {"swap_rate": 0.1,
                                                    "similar": [["hsize"]]}})
    (step,) = given.steps([])
    assert step["hierarchy"] == ["region", "district"] and step["similar"] == [["hsize"]]


# -- record swapping's geography (issue 50) -----------------------------------------------------

def _suggested(df: pd.DataFrame, household: str) -> list[str]:
    from sdc_core.data.io import Kind, infer_kinds
    from sdc_core.households import household_level_columns
    from ui.logic.groups import geography_suggestions

    categorical = [c for c, k in infer_kinds(df).items() if k is Kind.CATEGORICAL]
    return geography_suggestions(df, categorical, household,
                                 household_level_columns(df, household))


def test_the_panel_has_no_geography_and_its_wave_and_yes_no_columns_are_not_one():
    """COUNT/rwm5yr, id the household id: year and female were offered as the geography."""
    from tests.rwm5yr import ID, panel

    df = panel()
    assert _suggested(df, ID) == []


def test_the_whole_households_suggest_their_region_and_district_only():
    from sdc_core.data.io import read_table
    from sdc_core.examples import example

    df = read_table(example("households").path)
    assert _suggested(df, "hid") == ["region", "district"]
    # a yes/no area, or one not constant within households, is not suggested
    df["zone"] = df["hid"] % 2
    df["city"] = np.arange(len(df)) % 7
    assert _suggested(df, "hid") == ["region", "district"]


def test_the_geography_picker_offers_other_columns_only_while_marking():
    from ui.logic.groups import geography_options

    assert geography_options([], [], ["year", "female"], False) == []
    assert geography_options([], ["year"], ["year", "female"], False) == ["year"]
    assert geography_options(["region"], [], ["region", "sex"], True) == ["region", "sex"]


@pytest.mark.parametrize("message, steps, said", [
    ("step 2 (record_swap): record swapping: household 1 has records with year 1984 and 1985",
     [{"method": "band", "column": "age"}, {"method": "record_swap"}],
     "Targeted record swapping: household 1 has records with year 1984 and 1985"),
    ("step 1 (band): width must be > 0", [{"method": "band", "column": "**age**"}],
     "Banding of **age**: width must be > 0"),
    ("recipe: household column 'hid' is not in the data", [],
     "recipe: household column 'hid' is not in the data"),
    ("step 9 (nope): odd", [], "step 9 (nope): odd"),
])
def test_a_settings_error_names_the_method_not_a_step_number(message, steps, said):
    from ui.logic.protect import in_words

    assert in_words(message, steps) == said


def test_record_swapping_says_values_as_plain_text_on_the_panel():
    """A wave chosen as the geography: the household and its values in words, not np.int64."""
    from tests.rwm5yr import ID, persons

    df = persons(50)
    recipe = parse_recipe({"version": 1, "seed": 1, "household": ID, "steps": [
        {"method": "record_swap", "hierarchy": ["year"], "similar": [["female"]]}]})
    from sdc_core.recipe import apply_recipe

    with pytest.raises(SdcInputError) as err:
        apply_recipe(recipe, df)
    text = str(err.value)
    first = df[ID].iloc[0]
    years = df.loc[df[ID] == first, "year"].tolist()
    assert (f"'year' is not one area per household: household {first} has records with "
            f"year {years[0]} and {years[1]}") in text
    assert "np." not in text


def test_the_notice_of_a_replaced_recipe_names_both_and_keeps_names_as_text():
    """Issue 50: what "Open the best on the Protect page" replaced, said with Undo at hand;
    a merge label or column in Markdown stays text."""
    from tests.hostile_text import IMAGE
    from ui.logic.protect import replaced_notice

    mine = [{"method": "recode", "column": "race", "groups": {IMAGE: [0, 1]}}]
    best = [{"method": "band", "column": "age", "width": 10}]
    kind, text = replaced_notice(mine, 7, best, 3, "the sweep's best setting")
    assert kind == "warning"
    assert text.startswith("Opened the sweep's best setting: it replaced the whole recipe")
    assert "band age width=10; seed 3" in text.replace("\\", "")
    assert "![" not in text and "](" not in text and text.endswith("brings the previous "
                                                                   "recipe back.")
    assert replaced_notice([], 42, best, 3, "x")[0] == "success"
    assert "nothing was replaced" in replaced_notice(best, 3, best, 3, "x")[1]


def test_a_synthesis_step_opens_on_the_page_as_its_documented_form():
    """The step of docs/methods.md, "Synthesis (sequential CART)", after a band: the page holds
    it as its own steps, parameters at their defaults aside; min_leaf 0 is off (no step)."""
    steps = parse_recipe({"version": 1, "seed": 3, "steps": [
        {"method": "band", "column": "age", "width": 10},
        {"method": "synthesize", "min_leaf": 5, "smoothing": False, "proper": False,
         "records": None, "holdout": 0}]}).steps
    settings = from_steps(steps, 3)
    assert settings.steps(["age"]) == [{"method": "band", "column": "age", "width": 10},
                                       {"method": "synthesize", "min_leaf": 5}]
    synthesis = next(m for m in page_methods() if m.name == "synthesize")
    off = settings.with_value(synthesis, "min_leaf", None, synthesis.off)
    assert off.steps(["age"]) == [{"method": "band", "column": "age", "width": 10}]


@pytest.mark.parametrize("step", [{"method": "synthesize"},
                                  {"method": "synthesize", "min_leaf": 5, "visit": ["age"]}])
def test_a_synthesis_step_without_a_control_is_refused_in_one_line(step):
    with pytest.raises(SdcInputError, match="no control on the Protect page") as err:
        from_steps([step], 1)
    assert "\n" not in str(err.value)
