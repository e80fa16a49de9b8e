"""A Likert survey on the pages (items scored 1–6, as in a user test on a personality survey
of 2,800 people): the Risk page says its figures are coming, invariant PRAM's settings, all the
columns with one's levels chosen at once, the Likert chart's bars in score order, band origins
and codes swept on the Trade-offs page; the logic behind them is in tests/test_likert_survey.py.
Each test fails without its fix."""

import json

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import app_test, protect_page, tiles
from ui import compute
from ui.logic.tradeoff_grid import (
    EXHAUSTIVE_MAX,
)


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
    assert len(tiles(at)) >= 7  # the measures


def test_invariant_pram_keeps_the_results_until_theta_is_typed_and_disables_p():
    at = protect_page()
    assert at.number_input(key="w_p_pram_retention").disabled  # flip PRAM: no θ
    at.slider(key="w_p_pram_p").set_value(0.1).run()
    flip = [m.value for m in tiles(at)]
    assert flip and not at.slider(key="w_p_pram_p").disabled

    at.toggle(key="w_p_pram_invariant").set_value(True).run()
    assert not at.exception
    assert at.slider(key="w_p_pram_p").disabled  # invariant PRAM does not use p
    assert not at.number_input(key="w_p_pram_retention").disabled
    note = [w.value for w in at.warning if "cannot be applied" in w.value]
    assert note and "retention" in note[0] and "pram" in note[0]
    assert not at.error
    # the last results that applied stay in place, not a blank column
    assert [m.value for m in tiles(at)] == flip

    at.number_input(key="w_p_pram_retention").set_value(0.8).run()
    assert not at.exception and not at.warning
    steps = [s for s in at.session_state["protect"].steps(["age", "gender", "race"])
             if s["method"] == "pram"]
    assert steps and all(s.get("invariant") and s["retention"] == 0.8 and "p" not in s
                         for s in steps)


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
