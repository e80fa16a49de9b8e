"""Links that open a prepared state (``ui.links``): pure round trips of state → query → state,
bad links reported with the default used, and, in AppTest, a session's own link opening the
same state in a fresh session (and never carrying an uploaded file)."""

import base64
import json
import time
import tracemalloc
import zlib
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qsl

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs
from streamlit.testing.v1 import AppTest

from sdc_core.assess import RiskOptions
from sdc_core.examples import DEFAULT_EXAMPLE, EXAMPLES, HOUSEHOLD_ROLES
from sdc_core.roles import EXAMPLE_ROLES, Roles
from tests.apptest import app_test, keep_the_whole_page
from tests.conftest import plain
from ui.links import (
    OWN_DATA,
    LinkState,
    decode_recipe,
    encode_recipe,
    example_columns,
    read_link,
    to_query,
)
from ui.logic.lessons import LESSONS
from ui.logic.protect import ProtectSettings, from_steps
from ui.logic.session import RISK_VIEWS

COLUMNS = {key: example_columns(key) for key in EXAMPLES}
#: Per built-in data set: numeric columns, and categorical ones with some of their levels.
NUMERIC = {"actg175": ["age", "wtkg", "karnof", "cd40"],
           "household": ["age", "household_size", "income", "weight"],
           "households": ["age", "hsize", "income", "weight"]}
LEVELS: dict[str, dict[str, list[Any]]] = {
    "actg175": {"race": [0, 1], "gender": [0, 1], "strat": [1, 2, 3], "symptom": [0, 1]},
    "household": {"region": ["Capital", "North Coast", "Islands", "Highlands"],
                  "sex": ["female", "male"], "occupation": ["clerk", "craft", "retired"]},
    "households": {"district": ["Old Town", "Bayview", "Grange"],
                   "relation": ["head", "child"], "tenure": ["owner", "social"]}}
RISK_KEYS = {"k", "na", "alpha", "risk_view", "lesson", "view"}
WARNING = "The link names something that is not here: "


def canonical(s: LinkState) -> LinkState:
    """What a link can carry of ``s``: roles only when they differ from the data set's own, a
    recipe (and its seed) only when it has steps, neither without a built-in data set."""
    if s.example is None:
        return replace(s, roles=None, steps=None, seed=42)
    roles = None if s.roles == EXAMPLES[s.example].roles else s.roles
    return replace(s, roles=roles, steps=s.steps or None, seed=s.seed if s.steps else 42)


def round_trip(s: LinkState) -> tuple[LinkState, list[str]]:
    return read_link(to_query(s), example_columns)


# ---- 1. pure round trips ----------------------------------------------------------------

MERGE_REGION = {"method": "recode", "column": "region",
                "groups": {"Küste & Nord=1": ["North Coast", "Islands"]}}
HOUSEHOLD_STEPS = [
    {"method": "band", "column": "age", "width": 10},
    {"method": "band", "column": "income", "width": 5000},
    MERGE_REGION, {"method": "recode", "column": "region", "min_count": 20},
    {"method": "pram", "column": "sex", "p": 0.1},
    {"method": "pram", "column": "occupation", "p": 0.1},
    {"method": "rank_swap", "column": "income", "window_percent": 2.5},
    {"method": "local_suppression", "columns": ["region", "age", "sex"], "k": 3},
]
ACTG_STEPS = [
    {"method": "band", "column": "age", "width": 15},
    {"method": "recode", "column": "race", "groups": {"any": [0, 1]}},
    {"method": "pram", "column": "gender", "p": 0.05},
    {"method": "relabel", "column": "drugs", "alpha": 0.3},
    {"method": "rank_swap", "column": "wtkg", "window_percent": 5},
    {"method": "noise", "columns": ["cd40", "cd420"], "p": 20.0, "kind": "correlated2",
     "delta": 0.1},
    {"method": "randomized_response", "column": "homo", "keep_probability": 0.5},
]
#: Record swapping on the whole-households example, whose household id (hid) the link's roles
#: carry: the step as a recipe file holds it (its hierarchy, no columns)
SWAP_STEP = {"method": "record_swap", "hierarchy": ["region", "district"],
             "similar": [["hsize", "htype"], ["hsize"]], "swap_rate": 0.1, "k": 2,
             "risk_variables": ["agegroup"], "carry_along": ["tenure"]}

CASES = {
    "actg175 as it opens": LinkState("actg175"),
    "household as it opens": LinkState("household"),
    "household, qi reduced, no weight, emptied sensitive": LinkState(
        "household", Roles(qi=["region", "age"], sensitive=[], weight=None,
                           numeric=["age", "income"])),
    "actg175, a weight added, every list changed": LinkState(
        "actg175", Roles(qi=["age", "race"], sensitive=["treat", "arms"], weight="wtkg",
                         numeric=["wtkg"], ignore=[])),
    "household, every list emptied": LinkState("household", Roles(weight="weight")),
    "household, a recipe with several steps": LinkState(
        "household", replace(HOUSEHOLD_ROLES, qi=["region", "age", "sex"]), HOUSEHOLD_STEPS,
        seed=2024),
    "actg175, a recipe of every kind of step": LinkState("actg175", None, ACTG_STEPS, seed=0),
    "a recipe alone, only a merge of levels": LinkState("household", None, [MERGE_REGION],
                                                        seed=7),
    "risk options": LinkState("actg175", risk=RiskOptions(3, "category", 0.35)),
    "alpha only": LinkState("household", risk=RiskOptions(alpha=0.05)),
    "a lesson and the projector": LinkState("household", lesson="coarsen", projector=True),
    "everything": LinkState("household", Roles(qi=["age", "sex"], sensitive=["benefit"]),
                            HOUSEHOLD_STEPS[:3], 31, RiskOptions(1000, "wildcard", 0.0),
                            "randomized-response", True),
    "no data set: risk, lesson, view": LinkState(None, risk=RiskOptions(2, "category", 0.5),
                                                 lesson="counts", projector=True),
    "households, record swapping with the data set's household id": LinkState(
        "households", None, [{"method": "band", "column": "age", "width": 10}, SWAP_STEP],
        seed=9),
}


@pytest.mark.parametrize("state", CASES.values(), ids=CASES.keys())
def test_named_states_round_trip(state):
    assert from_steps(state.steps or [], state.seed)  # shapes the Protect page can show
    assert round_trip(state) == (canonical(state), [])
    assert canonical(state) == state  # each case is already what a link carries


@hs.composite
def roles_of(draw, key: str) -> Roles | None:
    columns = COLUMNS[key]
    some = hs.lists(hs.sampled_from(columns), unique=True, max_size=4)
    return draw(hs.none() | hs.builds(
        Roles, qi=some, sensitive=some, numeric=some, ignore=some,
        weight=hs.none() | hs.sampled_from(NUMERIC[key]),
        household=hs.none() | hs.sampled_from(columns))
        | hs.just(EXAMPLES[key].roles))


@hs.composite
def settings_of(draw, key: str) -> ProtectSettings:
    """Protect page settings on the data set's columns (as the page holds them). No record
    swapping: its step needs a household id, which the drawn roles may not have, and donor
    profiles of household columns; the named case above carries one."""
    numeric, levels = NUMERIC[key], LEVELS[key]
    categorical = list(levels)
    columns: dict[str, list[str]] = {}
    values: dict[str, dict[str, Any]] = {
        "band": draw(hs.dictionaries(hs.sampled_from(numeric), hs.fixed_dictionaries(
            {"width": hs.integers(1, 60)},
            optional={"origin": hs.sampled_from([0, 5, 2.5]),
                      "label": hs.sampled_from(["midpoint", "interval"])}), max_size=2))}
    for name, main, pool, value in (
            ("pram", "p", categorical, hs.sampled_from([0.05, 0.1, 0.25])),
            ("relabel", "alpha", categorical, hs.sampled_from([0.1, 0.3])),
            ("rank_swap", "window_percent", numeric, hs.sampled_from([1.0, 2.5, 5.0, 10.0])),
            ("randomized_response", "keep_probability", categorical,
             hs.sampled_from([0.5, 0.75]))):
        chosen = draw(hs.lists(hs.sampled_from(pool), unique=True, max_size=2))
        if chosen:
            columns[name], values[name] = chosen, {main: draw(value)}
    labels = hs.text(hs.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1,
                     max_size=12)
    merged = draw(hs.lists(hs.sampled_from(categorical), unique=True, max_size=2))
    groups = {c: {draw(labels): draw(hs.lists(hs.sampled_from(levels[c]), min_size=1,
                                               unique=True))} for c in merged}
    min_count = draw(hs.sampled_from([0, 0, 10, 25]))
    if merged or min_count:
        columns["recode"] = merged or draw(hs.lists(hs.sampled_from(categorical), min_size=1,
                                                    max_size=2, unique=True))
        values["recode"] = {"min_count": min_count, "groups": groups}
    if draw(hs.booleans()):
        columns["noise"] = draw(hs.lists(hs.sampled_from(numeric), min_size=1, max_size=2,
                                         unique=True))
        values["noise"] = {"p": draw(hs.sampled_from([10.0, 2.0])),  # the slider takes whole p
                           "kind": draw(hs.sampled_from(["additive", "correlated2"])),
                           "delta": 0.1}
    values["local_suppression"] = {"k": draw(hs.sampled_from([0, 3, 5]))}
    return ProtectSettings(columns, values, draw(hs.integers(0, 2**31 - 1)))


@hs.composite
def link_states(draw, built_in: bool = True) -> LinkState:
    key = draw(hs.sampled_from(list(EXAMPLES))) if built_in else None
    roles, steps, seed = None, None, 42
    if key is not None:
        roles = draw(roles_of(key))
        protect = draw(settings_of(key))
        steps = protect.steps((roles or EXAMPLES[key].roles).qi) or None
        seed = protect.seed if steps else 42
    # alpha as the Risk page's slider gives it (steps of 0.05), or with a few decimals
    alpha = draw(hs.integers(0, 20).map(lambda i: round(i * 0.05, 2))
                 | hs.floats(0, 1).map(lambda x: round(x, 4)))
    risk = RiskOptions(draw(hs.integers(1, 1000)), draw(hs.sampled_from(["wildcard",
                                                                          "category"])), alpha)
    own = None if built_in else draw(hs.none() | hs.sampled_from(list(OWN_DATA)))
    return LinkState(key, roles, steps, seed, risk,
                     lesson=draw(hs.none() | hs.sampled_from(list(LESSONS))),
                     projector=draw(hs.booleans()), risk_view=draw(hs.sampled_from(RISK_VIEWS)),
                     own=own)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(link_states())
def test_any_state_round_trips(state):
    assert round_trip(state) == (canonical(state), [])


@settings(max_examples=60, deadline=None)
@given(link_states(built_in=False), hs.sampled_from(list(EXAMPLES)), hs.data())
def test_without_a_built_in_data_set_only_risk_lesson_and_view(state, key, data):
    """Roles and steps given with no built-in data set never reach the link."""
    state = replace(state, roles=data.draw(roles_of(key)),
                    steps=data.draw(settings_of(key)).steps(["age"]) or None)
    query = to_query(state)
    assert set(query) <= RISK_KEYS | {"data"}
    assert query.get("data") == state.own  # data of the sender's own, never named
    said = [f"this link was made on {OWN_DATA[state.own]}"] if state.own else []
    assert round_trip(state) == (canonical(state), said)


def test_defaults_are_left_out():
    for key in EXAMPLES:
        assert to_query(LinkState(key)) == {"data": key}
        same = LinkState(key, EXAMPLES[key].roles, [], 9, RiskOptions(), None, False)
        assert to_query(same) == {"data": key}  # its own roles, no steps, default risk
    assert to_query(LinkState()) == {}
    assert to_query(LinkState("household", replace(HOUSEHOLD_ROLES, qi=["age"]))) == {
        "data": "household", "qi": "age"}  # only the role that differs
    assert to_query(LinkState("household", replace(HOUSEHOLD_ROLES, weight=None))) == {
        "data": "household", "weight": ""}
    assert to_query(LinkState("actg175", replace(EXAMPLE_ROLES, qi=[]))) == {
        "data": "actg175", "qi": ""}
    assert to_query(LinkState(risk=RiskOptions(alpha=0.35))) == {"alpha": "0.35"}


def test_a_recipe_is_compact_and_url_safe():
    text = encode_recipe(HOUSEHOLD_STEPS, 2024)
    assert set(text) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert len(text) < len(json.dumps(HOUSEHOLD_STEPS))
    assert decode_recipe(text) == (HOUSEHOLD_STEPS, 2024)


# ---- 2. bad links ------------------------------------------------------------------------

def packed(data: Any) -> str:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


GOOD = encode_recipe(HOUSEHOLD_STEPS, 5)
UNREADABLE = "the recipe in the link cannot be read (is the link complete?)"
BAD = {
    "unknown data set": (
        {"data": "census", "qi": "nope", "recipe": "garbage", "k": "3", "lesson": "coarsen"},
        "there is no built-in data set 'census' (there are actg175, household, households); a "
        "link carries only these, never uploaded data: the default data set is open, with its "
        "own roles and no method on; for a file of your own, load it on the Data page",
        LinkState(risk=RiskOptions(k=3), lesson="coarsen")),
    "a link made on an uploaded file": (
        {"data": "upload", "qi": "age", "k": "3", "risk_view": "both"},
        "this link was made on the sender's own uploaded file, which a link never carries "
        "(uploaded data stays in the session it was loaded into); the built-in example is open "
        "instead: to see what the sender saw, get the same file from them and load it on the "
        "Data page",
        LinkState(risk=RiskOptions(k=3), risk_view="both", own="upload")),
    "a link made on a file on the server": (
        {"data": "server_file"},
        "open the same file under \"Open a file on the server\" on the Data page",
        LinkState(own="server_file")),
    "unknown Risk page view": (
        {"data": "household", "risk_view": "**both**"},
        "the Risk page has no view '**both**' (there are original, protected, both); it "
        "measures the original", LinkState("household")),
    "a key the data set lacks": (
        {"data": "household", "qi": "region,pidnum", "k": "2"},
        "the data set has no column 'pidnum'; its own roles are used",
        LinkState("household", risk=RiskOptions(k=2))),
    "a weight the data set lacks": (
        {"data": "actg175", "weight": "weight", "sensitive": "treat,arms"},
        "the data set has no column 'weight'; its own roles are used", LinkState("actg175")),
    "a truncated recipe": (
        {"data": "household", "recipe": GOOD[:len(GOOD) // 2]},
        f"{UNREADABLE}; the Protect page opens with no method on", LinkState("household")),
    "a garbled recipe": (
        {"data": "household", "recipe": "not*a%recipe!"},
        f"{UNREADABLE}; the Protect page opens with no method on", LinkState("household")),
    "a recipe that is not an object": (
        {"data": "household", "recipe": packed([1, 2])},
        f"{UNREADABLE}; the Protect page opens with no method on", LinkState("household")),
    "a recipe with a bad step": (
        {"data": "household", "recipe": packed({"seed": 1, "steps": [{"method": "blur"}]})},
        "step 1: unknown method 'blur'", LinkState("household")),
    "a recipe whose column is missing": (
        {"data": "actg175", "recipe": encode_recipe(HOUSEHOLD_STEPS[:3], 5)},
        "the recipe names the column 'income', 'region', which the data set does not have; "
        "the Protect page opens with no method on", LinkState("actg175")),
    "a step the Protect page cannot show": (
        {"data": "actg175", "recipe": encode_recipe(
            [{"method": "drop", "columns": ["pidnum"]}], 5)},
        "step 1 (drop): this step has no control on the Protect page (apply it with the "
        "command line); the Protect page opens with no method on", LinkState("actg175")),
    "two PRAM probabilities": (
        {"data": "actg175", "recipe": encode_recipe(
            [{"method": "pram", "column": "race", "p": 0.1},
             {"method": "pram", "column": "gender", "p": 0.2}], 5)},
        "the Protect page uses one setting of p for all pram columns", LinkState("actg175")),
    "record swapping without a household id": (
        {"data": "household", "recipe": encode_recipe(
            [{**SWAP_STEP, "hierarchy": ["region"], "similar": [["household_size"]],
              "risk_variables": [], "carry_along": []}], 5)},
        "step 1 (record_swap): needs the household column", LinkState("household")),
    "k = 0": ({"k": "0"}, "the threshold k '0' is not a whole number from 1 to 1000; k = 5 is "
              "used", LinkState()),
    "k = abc": ({"data": "household", "k": "abc"}, "the threshold k 'abc' is not a whole "
                "number from 1 to 1000; k = 5 is used", LinkState("household")),
    "k = 2.5": ({"k": "2.5", "na": "category"}, "the threshold k '2.5' is not a whole number",
                LinkState(risk=RiskOptions(na="category"))),
    "na = x": ({"na": "x", "k": "7"}, "'x' is not a way to treat missing key values (wildcard "
               "or category); wildcard is used", LinkState(risk=RiskOptions(k=7))),
    "alpha = 2": ({"alpha": "2"}, "α '2' is not a number from 0 to 1; α = 1 is used",
                  LinkState()),
    "alpha = nan": ({"alpha": "nan"}, "α 'nan' is not a number from 0 to 1", LinkState()),
    "alpha = half": ({"alpha": "half", "na": "category"}, "α 'half' is not a number from 0 to 1",
                     LinkState(risk=RiskOptions(na="category"))),
    "unknown lesson": ({"lesson": "advanced", "view": "projector"},
                       "there is no lesson 'advanced'; the Lessons page opens at the first",
                       LinkState(projector=True)),
    "unknown view": ({"view": "kiosk", "lesson": "unique"},
                     "there is no view 'kiosk' (there is projector); the usual view is used",
                     LinkState(lesson="unique")),
}


@pytest.mark.parametrize("params, problem, expected", BAD.values(), ids=BAD.keys())
def test_a_bad_link_says_what_and_uses_the_default(params, problem, expected):
    state, problems = read_link(params, example_columns)
    assert len(problems) == 1, problems
    assert problem in problems[0]
    assert not problems[0].endswith(".")  # the page ends the sentence
    assert state == expected


def test_every_problem_of_a_link_is_reported():
    state, problems = read_link({"data": "household", "qi": "zzz", "recipe": "x", "k": "0",
                                 "na": "none", "alpha": "-1", "lesson": "?", "view": "big"},
                                example_columns)
    assert state == LinkState("household")
    assert len(problems) == 7
    for word in ("'zzz'", "recipe", "k '0'", "'none'", "α '-1'", "lesson '?'", "view 'big'"):
        assert sum(word in p for p in problems) == 1, word


@pytest.mark.parametrize("size", [100_001, 200_000, 50_000_000])
def test_a_recipe_that_unpacks_too_far_is_refused_quickly(size):
    head = '{"seed":1,"steps":[]}'
    bomb = packed((head + " " * (size - len(head))).encode())  # valid JSON, mostly blanks
    assert len(bomb) < 70_000  # fits in an address
    tracemalloc.start()
    start = time.perf_counter()
    state, problems = read_link({"data": "household", "recipe": bomb}, example_columns)
    took = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert state == LinkState("household") and len(problems) == 1
    assert "recipe" in problems[0] and "no method on" in problems[0]
    assert took < 0.5 and peak < 5_000_000  # never unpacked in full


def test_a_recipe_just_under_the_limit_is_read():
    head = '{"seed":3,"steps":[]}'
    assert decode_recipe(packed((head + " " * (100_000 - len(head))).encode())) == ([], 3)


# ---- 3.-5. AppTest -----------------------------------------------------------------------

def sidebar_link(at: AppTest) -> str:
    [code] = [c.value for c in at.sidebar.code]
    assert code.startswith("?")  # st.context.url is None in AppTest
    return code


def opened_with(query: str, page: str) -> AppTest:
    """A fresh session whose address is ``query`` on ``page``."""
    at = app_test()
    for key, value in parse_qsl(query.removeprefix("?"), keep_blank_values=True):
        at.query_params[key] = value
    at.switch_page(page)
    return at.run()


def observed(at: AppTest) -> dict[str, Any]:
    ss = at.session_state
    protect, roles = ss["protect"], ss["roles"]
    return {"example": ss["dataset"].example, "roles": roles, "steps": protect.steps(roles.qi),
            "seed": protect.seed, "risk": ss["risk_options"], "lesson": ss["lesson"],
            "projector": ss["projector"],
            # AppTest's session state has no get()
            "risk_view": ss["risk_view"] if "risk_view" in ss else "original"}  # noqa: SIM401


@pytest.fixture(scope="module")
def session_a():
    """A session that opened the household data set and changed every part a link carries;
    its state and its sidebar link."""
    # a module's fixture is made before the conftest's autouse (per test) patch that runs the
    # whole Protect page after a move of a value control reruns its results fragment alone
    with pytest.MonkeyPatch.context() as patch:
        keep_the_whole_page(patch)
        return made_session_a()


def made_session_a() -> tuple[dict[str, Any], str]:
    at = app_test().run()
    at.selectbox(key="example_pick").set_value("household")
    next(b for b in at.button if b.label == "Load built-in data").click().run()
    at.multiselect(key="w_qi").set_value(["region", "age", "sex"]).run()
    at.switch_page("views/protect.py").run()
    at.slider(key="w_p_band_age").set_value(10).run()
    at.slider(key="w_p_pram_p").set_value(0.1).run()
    at.multiselect(key="w_p_recode_cols").set_value(["region"]).run()
    at.multiselect(key="w_p_recode_groups_region_0_levels").set_value(
        ["Islands", "North Coast"])
    at.text_input(key="w_p_recode_groups_region_0_label").set_value("Küste & Nord=1").run()
    at.number_input(key="w_p_seed").set_value(2024).run()
    at.switch_page("views/risk.py").run()
    at.number_input(key="w_risk_k").set_value(3)
    at.radio(key="w_risk_na").set_value("category").run()
    at.radio(key="w_risk_view").set_value("both").run()
    at.switch_page("views/lessons.py").run()
    at.radio(key="w_lesson").set_value("coarsen").run()
    at.toggle(key="w_projector").set_value(True).run()
    assert not at.exception and not at.error
    return observed(at), sidebar_link(at)


def test_session_a_changed_what_it_meant_to(session_a):
    state, link = session_a
    assert state["example"] == "household" and state["roles"].qi == ["region", "age", "sex"]
    assert state["roles"].weight == "weight"
    assert state["steps"] == [
        {"method": "band", "column": "age", "width": 10},
        {"method": "recode", "column": "region",
         "groups": {"Küste & Nord=1": ["Islands", "North Coast"]}},
        {"method": "pram", "column": "region", "p": 0.1},
        {"method": "pram", "column": "sex", "p": 0.1}]
    assert state["seed"] == 2024
    assert state["risk"] == RiskOptions(3, "category", 1.0)
    assert state["lesson"] == "coarsen" and state["projector"] is True
    assert state["risk_view"] == "both"
    query = dict(parse_qsl(link[1:]))
    assert set(query) == {"data", "qi", "recipe", "k", "na", "risk_view", "lesson", "view"}
    assert query["qi"] == "region,age,sex" and "," in link  # commas left readable


@pytest.mark.parametrize("page", ["views/lessons.py", "views/protect.py", "views/risk.py"])
def test_the_link_opens_the_same_state_in_a_fresh_session(session_a, page):
    state, link = session_a
    at = opened_with(link, page)
    assert not at.exception and not at.error
    assert not [w for w in at.warning if w.value.startswith(WARNING)]
    assert observed(at) == state
    assert sidebar_link(at) == link
    if page == "views/lessons.py":
        assert at.radio(key="w_lesson").value == "coarsen"
        assert at.toggle(key="w_projector").value is True
    elif page == "views/protect.py":  # the page's widgets show the recipe
        assert at.slider(key="w_p_band_age").value == 10
        assert at.slider(key="w_p_pram_p").value == 0.1
        assert at.multiselect(key="w_p_recode_groups_region_0_levels").value == [
            "Islands", "North Coast"]
        assert at.text_input(key="w_p_recode_groups_region_0_label").value == "Küste & Nord=1"
        assert at.number_input(key="w_p_seed").value == 2024
    else:  # the Risk page measures both tables, as the sender's did (issue 50)
        assert at.number_input(key="w_risk_k").value == 3
        assert at.radio(key="w_risk_na").value == "category"
        assert at.radio(key="w_risk_view").value == "both"
    at.run()  # the next run keeps the state (the link is read once)
    assert observed(at) == state


def test_a_link_with_problems_warns_once_and_opens_the_default():
    at = opened_with("?data=census&qi=age&k=0&lesson=advanced&view=kiosk", "views/lessons.py")
    assert not at.exception
    said = [w.value for w in at.warning]
    assert len(said) == 4 and all(w.startswith(WARNING) and w.endswith(".") for w in said)
    for word in ("data set 'census'", "k '0'", "lesson 'advanced'", "view 'kiosk'"):
        assert sum(word in w for w in said) == 1, word
    assert at.session_state["dataset"].example == DEFAULT_EXAMPLE
    assert at.session_state["roles"] == EXAMPLES[DEFAULT_EXAMPLE].roles
    assert at.session_state["risk_options"] == RiskOptions()
    first = next(iter(LESSONS))
    assert at.radio(key="w_lesson").value == first
    assert sidebar_link(at) == f"?data={DEFAULT_EXAMPLE}&lesson={first}"  # none of the link
    at.run()
    assert not [w for w in at.warning if w.value.startswith(WARNING)]
    at.switch_page("views/risk.py").run()
    assert not [w for w in at.warning if w.value.startswith(WARNING)]


def test_a_link_recipe_on_a_column_its_roles_do_not_offer_is_refused_whole():
    """Banding weight (not a quasi-identifier under the link's roles) beside banding age: the
    Protect page cannot show the first, so neither is applied, and the link says why."""
    steps = [{"method": "band", "column": "age", "width": 10},
             {"method": "band", "column": "wtkg", "width": 10}]
    at = opened_with(f"?data={DEFAULT_EXAMPLE}&recipe={encode_recipe(steps, 3)}",
                     "views/protect.py")
    assert not at.exception
    assert any("wtkg" in plain(w.value) and "opens with no method on" in w.value
               for w in at.warning)
    assert at.slider(key="w_p_band_age").value == 0
    assert any("No method is active" in i.value for i in at.info)


def test_a_link_never_carries_an_uploaded_file():
    names = ["zq_parish_code", "zq_birth_year_x", "zq_cattle_count"]
    df = pd.DataFrame({names[0]: [f"zqParish{i % 7}" for i in range(240)],
                       names[1]: [1900 + (i * 37) % 97 for i in range(240)],
                       names[2]: [1000 + 13 * (i % 60) for i in range(240)]})
    at = app_test().run()
    at.file_uploader[0].set_value(("zq_secret_register.csv", df.to_csv(index=False).encode(),
                                   "text/csv")).run()
    assert not at.exception and at.session_state["dataset"].example is None
    at.multiselect(key="w_qi").set_value([names[0], names[2]]).run()
    at.switch_page("views/protect.py").run()
    at.slider(key=f"w_p_band_{names[2]}").set_value(100).run()
    assert at.session_state["protect"].steps([names[2]])  # a recipe that names the columns
    at.switch_page("views/risk.py").run()
    at.number_input(key="w_risk_k").set_value(4).run()
    assert not at.exception
    link = sidebar_link(at)
    assert link == "?data=upload&k=4"
    for secret in [*names, "zqParish", "zq_secret_register", "zq", "1013"]:
        assert secret not in link
    # said when the link is made, and to the recipient, with what they must load (issue 50)
    captions = " ".join(plain(c.value) for c in at.sidebar.caption)
    assert "uploaded data cannot travel in a link" in captions
    assert "they must load the same file on the Data page" in captions
    assert "holds settings, not data" not in captions
    got = opened_with(link, "views/risk.py")
    assert not got.exception
    said = [plain(w.value) for w in got.warning if w.value.startswith(WARNING)]
    assert len(said) == 1 and "made on the sender's own uploaded file" in said[0]
    assert "load it on the Data page" in said[0]
    assert got.session_state["dataset"].example == DEFAULT_EXAMPLE
    assert got.session_state["risk_options"].k == 4
    assert sidebar_link(got) == f"?data={DEFAULT_EXAMPLE}&k=4"  # its own link: the example


def test_a_link_left_open_across_a_server_restart_opens_its_state_without_the_notice():
    """The address keeps the link (and the earlier server's ``run``): a reconnecting session
    opens the link's state again, so nothing is lost and there is nothing to warn about."""
    at = app_test(timeout=60)
    at.query_params["run"] = "0ld5e55"
    at.query_params["data"] = "household"
    at.run()
    assert not at.exception and not at.warning
    assert at.session_state["dataset"].example == "household"
