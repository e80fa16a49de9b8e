"""AppTest of the Lessons page: each lesson's task is first not met, then met with a setting
found by the oracles of ``tests/lessons_oracles.py``; progress, reset, a trip to another page, and
the projector view."""

import json

import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import app_test, tiles
from tests.lessons_oracles import (
    ANALYSIS_SLIDERS,
    PERTURB_SLIDERS,
    analysis_settings,
    best_coarsening_oracle,
    hidden_total_oracle,
    household_oracle,
    most_unique_third,
    perturb_solutions,
    rr_fewest,
)
from ui.logic import lessons
from ui.logic.lessons import LESSONS

N = len(LESSONS)
TITLES = {key: f"{i + 1}. {lesson.title}" for i, (key, lesson) in enumerate(LESSONS.items())}


def lessons_page(lesson: str | None = None, projector: bool = False) -> AppTest:
    at = app_test(timeout=60)
    if projector:
        at.session_state["projector"] = True
    at.run()
    at.switch_page("views/lessons.py").run()
    assert not at.exception
    if lesson is not None:
        at.radio(key="w_lesson").set_value(lesson).run()
        assert not at.exception
    return at


def met(at: AppTest) -> bool:
    """Whether the page says the task is met (and then not also "Not yet")."""
    success = any("Task met" in s.value for s in at.success)
    assert not (success and any("Not yet" in i.value for i in at.info))
    return success


def progress(at: AppTest) -> str:
    return at.get("progress")[0].proto.text


def ticked(at: AppTest) -> list[str]:
    """The lessons the list under the progress bar marks as done, by title."""
    return [m.value.removeprefix(":material/check_circle: ") for m in at.markdown
            if m.value.startswith(":material/check_circle:")]


def assert_not_met(at: AppTest, lesson: str) -> None:
    assert not at.exception
    assert not met(at) and any("Not yet" in i.value for i in at.info)
    assert lesson not in at.session_state["lessons_done"]
    assert TITLES[lesson] not in ticked(at)


def assert_met(at: AppTest, lesson: str) -> None:
    assert not at.exception
    assert met(at)
    assert lesson in at.session_state["lessons_done"]
    assert TITLES[lesson] in ticked(at)
    assert at.radio(key="w_lesson").value == lesson  # still on the same lesson


def test_lesson_unique():
    at = lessons_page("unique")
    assert_not_met(at, "unique")
    assert progress(at) == f"0 of {N} lessons done" and ticked(at) == []
    at.radio(key="w_l_unique_third").set_value(most_unique_third()).run()
    assert_met(at, "unique")
    assert progress(at) == f"1 of {N} lessons done"
    assert ticked(at) == [TITLES["unique"]]


def test_lesson_coarsen():
    at = lessons_page("coarsen")
    assert_not_met(at, "coarsen")
    width, top, _ = best_coarsening_oracle()
    at.slider(key="w_l_coarsen_width").set_value(width).run()
    assert not met(at)  # the best band width alone is not the best setting (a top code is)
    at.select_slider(key="w_l_coarsen_top").set_value(top).run()
    assert_met(at, "coarsen")
    assert progress(at) == f"1 of {N} lessons done"


def test_lesson_perturb_with_each_method():
    at = lessons_page("perturb")
    assert_not_met(at, "perturb")
    solutions = perturb_solutions()
    assert solutions
    keys = {"pram": "w_l_perturb_p", "rank_swap": "w_l_perturb_window"}
    for method, amount in solutions.items():
        at.radio(key="w_l_perturb_method").set_value(method).run()
        slider = at.slider(key=keys[method])
        # the amounts the oracle scanned are the ones the page offers
        assert (slider.min, slider.max, slider.step) == (0.0, *PERTURB_SLIDERS[method])
        assert slider.value == 0.0 and not met(at)
        slider.set_value(amount).run()
        assert_met(at, "perturb")
    assert progress(at) == f"1 of {N} lessons done"


def test_lesson_randomized_response():
    at = lessons_page("randomized-response")
    assert_not_met(at, "randomized-response")
    at.select_slider(key="w_l_randomized-response_n").set_value(rr_fewest()).run()
    assert_met(at, "randomized-response")
    assert progress(at) == f"1 of {N} lessons done"


def test_lesson_counts():
    at = lessons_page("counts")
    assert_not_met(at, "counts")
    total, _ = hidden_total_oracle()
    at.number_input(key="w_l_counts_answer").set_value(total + 1).run()
    assert_not_met(at, "counts")
    at.number_input(key="w_l_counts_answer").set_value(total).run()
    assert_met(at, "counts")
    assert progress(at) == f"1 of {N} lessons done"
    # the rule's table and its audit appear once the task is met
    assert any("Audit of this table" in c.value for c in at.caption)


def test_lesson_analysis_with_each_method():
    at = lessons_page("analysis")
    assert_not_met(at, "analysis")
    assert at.dataframe  # the intervals, term by term
    keys = {"band": "w_l_analysis_width", "noise": "w_l_analysis_p"}
    for method, kinds in analysis_settings().items():
        at.radio(key="w_l_analysis_method").set_value(method).run()
        slider = at.slider(key=keys[method])
        # the amounts the oracle scanned are the ones the page offers
        assert (slider.min, slider.max, slider.step) == (0, *ANALYSIS_SLIDERS[method])
        for amount in kinds["broken"][-1:]:  # the risk is down, the regression has moved
            slider.set_value(amount).run()
            assert not met(at) and any("no longer holds" in i.value for i in at.info)
        at.slider(key=keys[method]).set_value(kinds["met"][0]).run()
        assert_met(at, "analysis")
    assert progress(at) == f"1 of {N} lessons done"


def test_reset_clears_the_setting_and_the_progress():
    at = lessons_page("coarsen")
    width, top, _ = best_coarsening_oracle()
    at.slider(key="w_l_coarsen_width").set_value(width)
    at.select_slider(key="w_l_coarsen_top").set_value(top).run()
    assert_met(at, "coarsen")
    at.button(key="reset_coarsen").click().run()
    assert_not_met(at, "coarsen")
    assert at.slider(key="w_l_coarsen_width").value == 0
    assert at.select_slider(key="w_l_coarsen_top").value is None
    kept = at.session_state["lesson_values"]
    assert kept["w_l_coarsen_width"] == 0 and kept["w_l_coarsen_top"] is None
    assert progress(at) == f"0 of {N} lessons done" and ticked(at) == []


def test_reset_leaves_the_other_lessons_alone():
    at = lessons_page("unique")
    at.radio(key="w_l_unique_third").set_value(most_unique_third()).run()
    at.radio(key="w_lesson").set_value("counts").run()
    total, _ = hidden_total_oracle()
    at.number_input(key="w_l_counts_answer").set_value(total).run()
    assert progress(at) == f"2 of {N} lessons done"
    at.button(key="reset_counts").click().run()
    assert_not_met(at, "counts")
    assert at.number_input(key="w_l_counts_answer").value is None
    assert at.session_state["lessons_done"] == {"unique"}
    assert progress(at) == f"1 of {N} lessons done" and ticked(at) == [TITLES["unique"]]


def test_a_setting_survives_a_trip_to_another_page():
    at = lessons_page("coarsen")
    width, top, _ = best_coarsening_oracle()
    at.slider(key="w_l_coarsen_width").set_value(width).run()
    assert not met(at)
    at.switch_page("views/risk.py").run()
    assert not at.exception and at.title[0].value != "Lessons"
    assert "w_l_coarsen_width" not in [s.key for s in at.slider]
    at.switch_page("views/lessons.py").run()
    assert not at.exception
    assert at.radio(key="w_lesson").value == "coarsen"
    assert at.slider(key="w_l_coarsen_width").value == width
    assert at.select_slider(key="w_l_coarsen_top").value is None
    at.select_slider(key="w_l_coarsen_top").set_value(top).run()  # the kept width counts
    assert_met(at, "coarsen")


def test_a_done_lesson_stays_done_when_left_and_reopened():
    at = lessons_page("unique")
    third = most_unique_third()
    at.radio(key="w_l_unique_third").set_value(third).run()
    assert_met(at, "unique")
    at.radio(key="w_lesson").set_value("coarsen").run()
    assert not at.exception and not met(at)  # the open lesson's own task
    assert "unique" in at.session_state["lessons_done"] and ticked(at) == [TITLES["unique"]]
    assert progress(at) == f"1 of {N} lessons done"
    at.radio(key="w_lesson").set_value("unique").run()
    assert at.radio(key="w_l_unique_third").value == third
    assert_met(at, "unique")
    assert progress(at) == f"1 of {N} lessons done"


def projector_font(at: AppTest) -> object:
    """The font size of the randomized-response lesson's chart (set only in the projector
    view)."""
    at.radio(key="w_lesson").set_value("randomized-response").run()
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    return spec["layout"].get("font", {}).get("size")


@pytest.mark.parametrize("how", ["state", "toggle"])
def test_every_lesson_runs_in_the_projector_view(how):
    at = lessons_page(projector=how == "state")
    if how == "toggle":
        at.toggle(key="w_projector").set_value(True).run()
    assert at.session_state["projector"] is True
    for lesson in LESSONS:
        at.radio(key="w_lesson").set_value(lesson).run()
        assert not at.exception, lesson
        assert at.header[0].value == TITLES[lesson]
    assert projector_font(at) == 19  # the projector's larger type
    if how == "toggle":
        assert at.toggle(key="w_projector").value is True
        at.toggle(key="w_projector").set_value(False).run()
        assert not at.exception and at.session_state["projector"] is False
        assert projector_font(at) != 19


def test_the_projector_switch_shows_the_view_on_every_page():
    """A widget's identity includes its page: the switch must show the view's state on each
    page it is drawn on, and turn it off from any of them."""
    at = app_test(timeout=60)
    at.query_params["view"] = "projector"
    at.switch_page("views/lessons.py").run()
    assert at.toggle(key="w_projector").value is True
    for page in ("views/risk.py", "views/data.py", "views/lessons.py"):
        at.switch_page(page).run()
        assert at.toggle(key="w_projector").value is True, page
    at.toggle(key="w_projector").set_value(False).run()
    assert at.session_state["projector"] is False
    at.switch_page("views/protect.py").run()
    assert at.toggle(key="w_projector").value is False


def sidebar_text(at: AppTest) -> str:
    return "\n".join([m.value for m in at.sidebar.markdown] + [c.value for c in at.sidebar.caption])


@pytest.mark.parametrize("data", ["actg175", "household"])
def test_the_sidebar_names_the_data_each_lesson_uses(data):
    """The sidebar of the Lessons page names the data of the lesson in front of the learner,
    not the session's data set (ACTG 175 by default, while lessons 1–3 use the household
    survey); with the lesson's own data set loaded it shows its roles as on the other pages."""
    from sdc_core.examples import example
    from ui.logic.text import md

    at = app_test(timeout=60)
    at.query_params["data"] = data
    at.switch_page("views/lessons.py").run()
    session = example(data).name
    for key, lesson in LESSONS.items():
        at.radio(key="w_lesson").set_value(key).run()
        assert not at.exception, key
        text = sidebar_text(at)
        assert f"**This lesson's data:** {md(lesson.data)}" in text, key
        if lesson.data == session:
            assert "Quasi-identifiers:" in text, key
        else:
            assert f"The other pages work on {md(session)}" in text, key
            assert "Quasi-identifiers:" not in text, key
    assert [LESSONS[k].data for k in ("unique", "coarsen", "perturb")] == \
        [example("household").name] * 3
    assert LESSONS["analysis"].data == example("actg175").name
    at.switch_page("views/risk.py").run()  # the other pages name the session's data set
    assert not at.exception
    assert f"**{md(session)}**" in sidebar_text(at)


def test_lesson_household():
    risk, r = household_oracle()
    at = lessons_page("household")
    assert_not_met(at, "household")
    shown = next(d.value for d in at.dataframe if "risk r = 1/f_k" in d.value.columns)
    assert sorted(shown["risk r = 1/f_k"].round(12)) == sorted(r.round(12))
    at.number_input(key="w_l_household_answer").set_value(round(float(r.max()), 3)).run()
    assert_not_met(at, "household")
    assert any("riskiest member alone" in i.value for i in at.info)
    at.number_input(key="w_l_household_answer").set_value(round(float(r.sum()), 3) + 0.05).run()
    assert_not_met(at, "household")
    at.number_input(key="w_l_household_answer").set_value(round(risk, 3)).run()
    assert_met(at, "household")
    assert progress(at) == f"1 of {N} lessons done"


def test_lesson_synthetic():
    """Lesson 9 on the page: the leaf size offered first is not met; the smallest leaf size
    whose DiSCO is at most half the file's DiO (the oracle's test finds it) is; the tiles are
    the lesson's figures."""
    from tests.lessons_oracles import synthetic_oracle

    df = lessons.synthesis_input()
    answer = next(leaf for leaf in lessons.SYNTH_LEAVES
                  if (f := synthetic_oracle(df, lessons.synthesise(leaf).release,
                                            lessons.SYNTH_KEYS, lessons.SYNTH_SENSITIVE))[2]
                  <= f[3] / 2)
    at = lessons_page("synthetic")
    assert_not_met(at, "synthetic")
    at.select_slider(key="w_l_synthetic_leaf").set_value(answer).run()
    assert_met(at, "synthetic")
    now = lessons.synthesise(answer)
    shown = {m.label: m.value for m in tiles(at)}
    assert shown["Records copied whole"] == f"{now.copies:,}"
    assert shown["DiSCO"] == f"{now.disco:.1f} %"
    assert progress(at) == f"1 of {N} lessons done"


@pytest.mark.parametrize("lesson, kind, key, value, fn, args", [
    ("coarsen", "slider", "w_l_coarsen_width", 10, lessons.coarsen, (10, None)),
    ("perturb", "slider", "w_l_perturb_p", 0.15, lessons.perturb, ("pram", 0.15)),
    ("randomized-response", "select_slider", "w_l_randomized-response_n", 1000,
     lessons.rr_margin, (1000,)),
    ("analysis", "slider", "w_l_analysis_width", 10, lessons.survive, ("band", 10.0)),
    ("deniability", "select_slider", "w_l_deniability_alpha", lessons.DENY_ALPHAS[6],
     lessons.deny, (lessons.DENY_ALPHAS[6],)),
    ("synthetic", "select_slider", "w_l_synthetic_leaf", 5, lessons.synthesise, (5,)),
])
def test_a_slider_position_warmed_at_start_up_is_read_from_the_cache(lesson, kind, key, value,
                                                                      fn, args):
    """The warm-up's calls (ui.logic.lessons.slider_positions) are the page's own: once the
    slider's positions are made, moving it there computes nothing (the cache is not missed;
    the check of the synthetic lesson also reads the smaller leaves')."""
    positions = [p for p in lessons.slider_positions() if p.func is fn]
    assert [p.args for p in positions].count(args) == 1
    at = lessons_page(lesson)
    for position in positions:
        position()
    misses = fn.cache_info().misses
    getattr(at, kind)(key=key).set_value(value).run()
    assert not at.exception
    assert fn.cache_info().misses == misses
