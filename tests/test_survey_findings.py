"""The smaller findings of a user test on a personality survey (2,800 people, 25 Likert items
scored 1–6, gender, education, age): each has a test here that fails without its fix."""

import json
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from bench.st_client import StSession
from sdc_core.errors import SdcInputError
from sdc_core.methods import registry
from tests.apptest import app_test
from tests.conftest import run_async
from ui import compute, state
from ui.logic.groups import level_sets, same_levels
from ui.logic.protect import ProtectSettings, from_steps, full_step
from ui.logic.tradeoff_grid import (
    EXHAUSTIVE_MAX,
    MethodChoice,
    combinations_asked,
    grid_settings,
    swept_params,
)
from ui.logic.workbench import category_order, column_figure, evaluate, recipe_json


def test_the_risk_page_says_its_figures_are_coming_until_they_are_drawn(
        monkeypatch: pytest.MonkeyPatch):
    at = app_test().run()

    def still_computing(*args: object, **kwargs: object) -> None:
        raise RuntimeError("stopped while the measures are computed")

    monkeypatch.setattr(compute, "profile", still_computing)
    at.switch_page("views/risk.py").run()  # the page stops where the measures are computed
    assert [i.value for i in at.info if "Computing the risk figures" in i.value]
    monkeypatch.undo()
    at.run()
    assert not at.exception
    assert not [i.value for i in at.info if "Computing the risk figures" in i.value]
    assert len(at.metric) >= 7  # the measures


def likert(counts: dict[int, int], name: str = "A1") -> pd.Series:
    """A Likert item with ``counts[score]`` answers of each score."""
    return pd.Series([v for v, n in counts.items() for _ in range(n)], name=name)


def test_likert_bars_are_ordered_by_score_not_by_frequency():
    # most frequent first, in the same ranking before and after
    before = likert({5: 40, 6: 30, 4: 20, 2: 6, 3: 3, 1: 1})
    after = likert({5: 38, 6: 31, 4: 21, 2: 6, 3: 3, 1: 1})
    fig = column_figure(before, after, False)
    assert [list(t.x) for t in fig.data] == [["1", "2", "3", "4", "5", "6"]] * 2
    assert [list(t.y) for t in fig.data] == [[1, 6, 3, 20, 40, 30], [1, 6, 3, 21, 38, 31]]


@pytest.mark.parametrize("before, after, order", [
    (pd.Series(["10", "9", "9", None]), pd.Series(["1", "9", "9", "10"]), ["1", "9", "10"]),
    (pd.Series(pd.Categorical(["high", "low", "low"], ["low", "mid", "high"], ordered=True)),
     pd.Series(pd.Categorical(["mid", "low", "low"], ["low", "mid", "high"], ordered=True)),
     ["low", "mid", "high"]),
    # nominal categories: the original's most frequent first, then what only the release has
    (pd.Series(["b", "a", "a"]), pd.Series(["c", "a", "b"]), ["a", "b", "c"]),
])
def test_category_order(before, after, order):
    assert category_order(before, after) == order


def protect_page() -> AppTest:
    at = app_test().run()
    at.switch_page("views/protect.py").run()
    assert not at.exception
    return at


def test_invariant_pram_keeps_the_results_until_theta_is_typed_and_disables_p():
    at = protect_page()
    assert at.number_input(key="w_p_pram_retention").disabled  # flip PRAM: no θ
    at.slider(key="w_p_pram_p").set_value(0.1).run()
    flip = [m.value for m in at.metric]
    assert flip and not at.slider(key="w_p_pram_p").disabled

    at.toggle(key="w_p_pram_invariant").set_value(True).run()
    assert not at.exception
    assert at.slider(key="w_p_pram_p").disabled  # invariant PRAM does not use p
    assert not at.number_input(key="w_p_pram_retention").disabled
    note = [w.value for w in at.warning if "cannot be applied" in w.value]
    assert note and "retention" in note[0] and "pram" in note[0]
    assert not at.error
    # the last results that applied stay in place, not a blank column
    assert [m.value for m in at.metric] == flip

    at.number_input(key="w_p_pram_retention").set_value(0.8).run()
    assert not at.exception and not at.warning
    steps = [s for s in at.session_state["protect"].steps(["age", "gender", "race"])
             if s["method"] == "pram"]
    assert steps and all(s.get("invariant") and s["retention"] == 0.8 and "p" not in s
                         for s in steps)


def test_parameters_that_do_not_apply_are_left_out_of_the_step():
    pram = registry()["pram"]
    assert not pram.applies("p", {"invariant": True}) and pram.applies("p", {})
    assert not pram.applies("retention", {}) and pram.applies("retention", {"invariant": True})
    assert not pram.applies("invariant", {"matrix": {"1": {"1": 1}}})
    settings = ProtectSettings({"pram": ["race"]},
                               {"pram": {"p": 0.2, "matrix": {"0": {"0": 1}, "1": {"1": 1}}}})
    assert settings.steps([]) == [{"method": "pram", "column": "race",
                                   "matrix": {"0": {"0": 1}, "1": {"1": 1}}}]
    # a recipe that spells out p beside the invariant form opens (p applies alike: not at all)
    step = {"method": "pram", "column": "race", "p": 0.1, "invariant": True, "retention": 0.7}
    assert full_step(step) == full_step({k: v for k, v in step.items() if k != "p"})
    assert from_steps([step], 1).steps([]) == [
        {"method": "pram", "column": "race", "invariant": True, "retention": 0.7}]


@pytest.mark.parametrize("burst, steps", [(3600.0, 1), (0.0, 10)])
def test_ten_presses_on_a_number_field_are_one_undo_step_in_a_burst(
        monkeypatch: pytest.MonkeyPatch, burst: float, steps: int):
    """Ten presses on the seed's + left two undo steps (as many as the server's runs took
    them in): a burst of one control's changes is one step, a pause ends it."""
    monkeypatch.setattr(state, "BURST_SECONDS", burst)
    at = protect_page()
    at.slider(key="w_p_pram_p").set_value(0.1).run()
    for _ in range(10):
        at.number_input(key="w_p_seed").increment().run()
    assert at.number_input(key="w_p_seed").value == 52
    assert len(at.session_state["protect_history"].past) == 1 + steps
    for _ in range(steps):
        at.button(key="p_undo").click().run()
    assert at.number_input(key="w_p_seed").value == 42
    assert at.slider(key="w_p_pram_p").value == 0.1  # the change before the burst stays


def test_a_burst_back_where_it_began_is_no_step(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(state, "BURST_SECONDS", 3600.0)
    at = protect_page()
    at.number_input(key="w_p_seed").increment().run()
    at.number_input(key="w_p_seed").decrement().run()
    assert at.button(key="p_undo").disabled
    at.number_input(key="w_p_seed").increment().run()  # a step again, which undo takes back
    at.button(key="p_undo").click().run()
    assert at.number_input(key="w_p_seed").value == 42 and at.button(key="p_undo").disabled


def survey_csv(n: int = 210) -> bytes:
    """A small personality survey: items scored 1–6 (O1 only 1–5), gender, education, age."""
    # most answers 5, then 6, 4, 2, 3, 1 (60, 50, 40, 30, 20, 10 of 210)
    agree = [5] * 6 + [6] * 5 + [4] * 4 + [2] * 3 + [3] * 2 + [1]
    items = {c: [agree[(i * k + k) % 21] for i in range(n)]
             for k, c in zip([1, 2, 4, 5, 8], ["A1", "A2", "A3", "C1", "C2"])}
    table = pd.DataFrame({**items, "O1": [i % 5 + 1 for i in range(n)],
                          "gender": [i % 2 + 1 for i in range(n)],
                          "education": [i % 5 + 1 for i in range(n)],
                          "age": [18 + (i * 7) % 60 for i in range(n)]})
    return table.to_csv(index=False).encode()


def survey_protect_page() -> AppTest:
    at = app_test().run()
    at.file_uploader(key="uploader").set_value(("bfi.csv", survey_csv(), "text/csv")).run()
    at.multiselect(key="w_qi").set_value(["gender", "education", "age"]).run()
    at.switch_page("views/protect.py").run()
    assert not at.exception
    return at


def test_all_columns_with_the_levels_of_one_are_chosen_at_once():
    at = survey_protect_page()
    at.multiselect(key="w_p_pram_cols").set_value(["A1"]).run()
    button = at.button(key="p_pram_like")
    assert button.label == "Add 4 more like A1"
    assert button.help.startswith("Add the 4 other columns with the levels of A1:")
    button.click().run()
    assert not at.exception
    assert at.multiselect(key="w_p_pram_cols").value == ["A1", "A2", "A3", "C1", "C2"]
    assert at.session_state["protect"].columns["pram"] == ["A1", "A2", "A3", "C1", "C2"]
    assert not [b for b in at.button if b.key == "p_pram_like"]  # none left to add
    at.multiselect(key="w_p_pram_cols").set_value(["A1", "O1"]).run()  # O1: levels 1–5
    button = at.button(key="p_pram_like")
    assert button.label == "Add 1 more like O1"
    assert button.help.startswith("Add the other column with the levels of O1:")


def test_the_protect_pages_likert_chart_has_its_bars_in_score_order():
    at = survey_protect_page()
    at.multiselect(key="w_p_pram_cols").set_value(["A1"]).run()
    at.slider(key="w_p_pram_p").set_value(0.05).run()  # the answers keep their ranking
    assert not at.exception and at.selectbox(key="w_protect_view").value == "A1"
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert [t["x"] for t in spec["data"]] == [["1", "2", "3", "4", "5", "6"]] * 2


def test_same_levels_compares_values_by_what_they_are():
    table = pd.DataFrame({"a": [1, 2, 3], "b": ["3", "2", "1"], "c": [1.0, 2.0, None],
                          "d": [1, 2, 2]})
    levels = level_sets(table, list(table.columns))
    assert same_levels(levels, "a") == ["a", "b"]
    assert same_levels(levels, "c") == ["c", "d"]


@pytest.mark.parametrize("steps", [
    # banded and top coded: drawn as a line of 40 equal bins against bars at band midpoints
    [{"method": "band", "column": "age", "width": 10},
     {"method": "top_bottom_code", "column": "age", "top": 50}],
    # banded with labels ("10–19"): the original's years against the release's bands
    [{"method": "band", "column": "age", "width": 10, "label": "range"}],
])
def test_a_banded_column_is_compared_per_band_before_and_after(actg, steps):
    wb = evaluate(actg, recipe_json(steps, 1), ["age", "gender", "race"], None, 5,
                  "wildcard", 1.0, ["age"])
    fig = wb.figure("age")
    assert fig.layout.title.text == "age: original and protected values per band"
    edges = np.arange(10, 90, 10)  # the bands over ages 12–70
    mids = list(edges[:-1] + 5)
    assert [list(t.x) for t in fig.data] == [mids, mids]
    assert list(fig.data[0].y) == list(np.histogram(actg["age"], edges)[0])
    released = wb.applied.data["age"]
    if steps[-1]["method"] == "top_bottom_code":  # the codes counted in the band of 50
        assert list(fig.data[1].y) == list(np.histogram(released, edges)[0])
        assert fig.data[1].y[-1] == 0 and "top or bottom code" in wb.figure_note("age")
    else:
        assert released.iloc[0].endswith("9") and fig.data[1].y.sum() == len(actg)
        assert list(fig.data[1].y) == list(fig.data[0].y)  # banding moves no record
    assert "compare like with like" in wb.figure_note("age")
    assert wb.figure_note("gender") is None


BAND, TOP_BOTTOM = registry()["band"], registry()["top_bottom_code"]


def test_the_tradeoffs_form_sweeps_band_origins_and_top_and_bottom_codes():
    assert swept_params(BAND) == ["origin"] and swept_params(TOP_BOTTOM) == ["top", "bottom"]
    band = MethodChoice(BAND, ["age"], "5, 10", swept={"origin": "0, 2"})
    codes = MethodChoice(TOP_BOTTOM, ["age", "wtkg"], swept={"top": "60, 65", "bottom": ""})
    assert grid_settings([band, codes], False) == [
        {"method": "band", "column": "age", "param": "width", "values": [5, 10],
         "fixed": {"origin": 0}},
        {"method": "band", "column": "age", "param": "width", "values": [5, 10],
         "fixed": {"origin": 2}},
        {"method": "top_bottom_code", "column": "age", "param": "top", "values": [60, 65]},
        {"method": "top_bottom_code", "column": "wtkg", "param": "top", "values": [60, 65]}]
    # combined: one band step per column, so one origin, kept for every width (and off)
    one = MethodChoice(BAND, ["age"], "5, 10", swept={"origin": "2"})
    assert grid_settings([one], True) == [{"method": "band", "column": "age", "param": "width",
                                           "values": [0, 5, 10], "fixed": {"origin": 2}}]
    with pytest.raises(SdcInputError, match="combining the methods takes one value of origin"):
        grid_settings([band], True)
    with pytest.raises(SdcInputError, match="origin values are tried with its width values"):
        grid_settings([MethodChoice(BAND, ["age"], "", swept={"origin": "2"})], False)
    assert combinations_asked(grid_settings([one, codes], True)) == 3 * 2 * 2


def tradeoffs_page() -> AppTest:
    at = app_test(timeout=120).run()
    at.switch_page("views/tradeoffs.py").run()
    assert not at.exception
    at.number_input(key="w_t_seeds").set_value(1)
    at.multiselect(key="w_t_pram_cols").set_value([])
    return at


def test_the_tradeoffs_page_sweeps_origins_and_codes_and_pins_each_rows_values():
    at = tradeoffs_page()
    at.text_input(key="w_t_band_values").set_value("10")
    at.text_input(key="w_t_band_origin_values").set_value("0, 5")
    at.multiselect(key="w_t_top_bottom_code_cols").set_value(["age"])
    at.text_input(key="w_t_top_bottom_code_top_values").set_value("50")
    at.button[0].click().run()
    assert not at.exception and not at.error
    table = next(d for d in at.dataframe if "setting" in d.value.columns)
    assert table.value.columns[0] == "setting"
    assert table.value["setting"].tolist() == [
        "baseline", "band age origin=0 width=10", "band age origin=5 width=10",
        "top_bottom_code age top=50"]
    config = json.loads(table.proto.columns)
    assert config["setting"]["pinned"] is True


def test_the_tradeoffs_page_offers_the_exhaustive_search_for_small_grids():
    at = tradeoffs_page()
    at.text_input(key="w_t_band_values").set_value("5, 10, 15")
    at.toggle(key="w_t_combine").set_value(True)
    at.selectbox(key="w_t_target").set_value("linkage_risk_percent")
    at.number_input(key="w_t_at_most").set_value(1.0)
    at.toggle(key="w_t_exhaustive").set_value(True)
    at.button[0].click().run()
    assert not at.exception and not at.error
    result = at.session_state["sweep"]["result"]
    assert not result.pruned and result.evaluated == 4 == len(result.table) - 1
    assert any("exhaustive search evaluated every one of the 4" in c.value for c in at.caption)
    # a grid past the bound is refused with the bound, not run for minutes
    many = ", ".join(str(w) for w in range(2, 2 + EXHAUSTIVE_MAX))
    at.text_input(key="w_t_band_values").set_value(many)
    at.button[0].click().run()
    assert any(f"more than the {EXHAUSTIVE_MAX} this page tries" in e.value for e in at.error)


async def presses(url: str) -> dict[str, object]:
    """Ten presses on the seed's + in a real server, one run each, then one Undo."""
    s = StSession(timeout=60)
    await s.connect(url)
    try:
        await s.switch_page("Protect")
        for seed in range(43, 53):
            await s.set_value("Seed", seed)
        seen: dict[str, object] = {"seed": s.widget("Seed", "number_input").value}
        await s.click("Undo")
        seen |= {"after_undo": s.widget("Seed", "number_input").value,
                 "undo_left": not s.widget("Undo", "button").proto.disabled,
                 "errors": s.errors()}
    finally:
        await s.close()
    return seen


def test_ten_presses_in_a_real_server_are_one_undo_step(app_url):
    seen = run_async(presses(app_url))
    assert seen["errors"] == []
    assert seen["seed"] == 52 and seen["after_undo"] == 42
    assert seen["undo_left"] is False


def test_a_burst_goes_on_from_its_first_drawing_not_from_later_ones(
        monkeypatch: pytest.MonkeyPatch):
    """A run of several seconds does not split a burst; a redrawing a minute later (an
    expander opened) does not revive it."""
    now = [0.0]
    monkeypatch.setattr(state, "time", SimpleNamespace(monotonic=lambda: now[0]))

    def press(seed: int, at: float) -> int:
        now[0] = at
        state.set_protect_settings(replace(state.protect_settings(), seed=seed),
                                   source="w_p_seed")
        return len(state.protect_history().past)

    def drawn(at: float) -> None:
        now[0] = at
        state.settle_protect()
    try:
        assert press(43, 0.0) == 1
        drawn(5.0)  # a slow run: its results 5 s after the press
        assert press(44, 6.0) == 1  # 1 s after they were drawn: the same burst
        drawn(7.0)
        drawn(60.0)  # a redrawing of the same settings
        assert press(45, 61.0) == 2  # a minute after the burst: a step of its own
    finally:
        for key in ("protect", "protect_history"):
            st.session_state.pop(key, None)
