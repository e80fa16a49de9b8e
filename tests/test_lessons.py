"""Unit tests of the Lessons page's pure tasks and checks (``ui.logic.lessons``), each against an
oracle in plain pandas / numpy on the household survey and seed 004's pet question
(tests/lessons_oracles.py, which also drives the page's widgets in tests/test_app_lessons.py)."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sdc_core.tables.responses import pet_survey
from sdc_core.utility import il1
from sdc_core.utility.validity import term_holds
from tests.lessons_oracles import (
    ANALYSIS_SLIDERS,
    K,
    actg,
    analysis_met,
    analysis_oracle,
    analysis_settings,
    analysis_values,
    best_coarsening_oracle,
    class_sizes,
    coarsen_oracle,
    coarsened_age,
    hidden_total_oracle,
    household,
    household_oracle,
    most_unique_third,
    percent_unique_oracle,
    perturb_solutions,
    regression,
    rr_fewest,
    rr_oracle,
    slider_values,
)
from ui.logic import lessons

#: The page's band-width slider runs from 0 (exact ages) to this.
PAGE_MAX_WIDTH = 30


# 1 · Who is unique? -------------------------------------------------------------------------

def test_household_is_the_teaching_file():
    pd.testing.assert_frame_equal(lessons.household(), household())


@pytest.mark.parametrize("third", [None, *lessons.UNIQUE_THIRD])
def test_unique_keys_share_of_uniques(third):
    assert lessons.unique_keys(third).percent_unique == pytest.approx(
        percent_unique_oracle(third), abs=1e-9)


def test_check_unique_met_only_for_the_most_revealing_fact():
    best = most_unique_third()
    shares = sorted(percent_unique_oracle(c) for c in lessons.UNIQUE_THIRD)
    assert shares[-1] > shares[-2]  # a single answer: the task is well posed
    assert lessons.check_unique(best).met
    assert f"{percent_unique_oracle(best):.1f} %" in lessons.check_unique(best).message
    for other in [None, *(c for c in lessons.UNIQUE_THIRD if c != best)]:
        check = lessons.check_unique(other)
        assert not check.met and check.message.startswith("Not yet"), other


# 2 · Coarsen --------------------------------------------------------------------------------

@pytest.mark.parametrize("width,top", [(0, None), (1, None), (5, 85), (7, 80), (10, None),
                                       (13, 70), (25, 90), (30, None), (0, 75)])
def test_coarsen_against_pandas(width, top):
    got = lessons.coarsen(width, top)
    min_k, small, loss = coarsen_oracle(width, top)
    assert (got.width, got.top, got.min_k, got.small) == (width, top, min_k, small)
    assert got.loss == pytest.approx(loss, abs=1e-12)
    df = household()
    released = df.assign(age=coarsened_age(df["age"], width, top))
    assert got.loss == pytest.approx(il1(df, released, ["age"]).IL1_overall, abs=1e-12)


def test_raw_ages_leave_small_classes_and_wide_bands_do_not():
    assert coarsen_oracle(0, None)[0] < K and coarsen_oracle(0, None)[1] > 0
    assert coarsen_oracle(25, None)[0] >= K  # the teaching data's promise (sdc_core.teaching)


def test_best_coarsening_is_the_exhaustive_optimum():
    width, top, loss = best_coarsening_oracle()
    best = lessons.best_coarsening()
    assert (best.width, best.top) == (width, top)
    assert best.loss == pytest.approx(loss, abs=1e-12) and best.min_k >= K
    # the page also offers width 0 (exact ages): no such setting does better
    assert best_coarsening_oracle(range(PAGE_MAX_WIDTH + 1))[:2] == (width, top)


def test_check_coarsen_verdicts():
    best = lessons.best_coarsening()
    width, top, least = best_coarsening_oracle()
    small_classes = [(w, t) for w in range(PAGE_MAX_WIDTH + 1) for t in lessons.TOPS
                     if coarsen_oracle(w, t)[0] < K]
    costlier = [(w, t) for w in lessons.WIDTHS for t in lessons.TOPS
                if coarsen_oracle(w, t)[0] >= K and coarsen_oracle(w, t)[2] > least + 1e-9]
    assert small_classes and costlier
    for w, t in {small_classes[0], small_classes[len(small_classes) // 2], small_classes[-1]}:
        check = lessons.check_coarsen(lessons.coarsen(w, t), best)
        assert not check.met and check.message.startswith("Not yet"), (w, t)
        assert f"{coarsen_oracle(w, t)[1]:,} records" in check.message
    cheapest_costlier = min(costlier, key=lambda c: coarsen_oracle(*c)[2])
    for w, t in [cheapest_costlier, costlier[-1]]:
        check = lessons.check_coarsen(lessons.coarsen(w, t), best)
        assert not check.met and "lose less" in check.message, (w, t)
    assert lessons.check_coarsen(lessons.coarsen(width, top), best).met


# 3 · Perturb --------------------------------------------------------------------------------

def test_perturb_slider_values_cover_the_range():
    assert slider_values("pram")[-1] == 0.5 and slider_values("pram")[1] == 0.05
    assert len(slider_values("rank_swap")) == 41 and slider_values("rank_swap")[-1] == 20.0


@pytest.mark.parametrize("method", list(lessons.PERTURB_METHODS))
def test_nothing_moved_links_as_the_released_keys_say(method):
    df = household()
    sum_inverse = float((1.0 / class_sizes(df, ["region", "age", "sex"])).sum())
    wb = lessons.perturb(method, 0.0)
    assert wb.after["expected_reidentifications"] == pytest.approx(sum_inverse, abs=1e-9)
    assert wb.after["linkage_reidentifications"] == pytest.approx(sum_inverse, abs=1e-9)
    pd.testing.assert_frame_equal(wb.applied.data.reset_index(drop=True), df)
    check = lessons.check_perturb(wb)
    assert not check.met and check.message.startswith("Not yet")


@pytest.mark.parametrize("method", list(lessons.PERTURB_METHODS))
def test_check_perturb_agrees_with_half_the_released_keys(method):
    column = "region" if method == "pram" else "age"
    verdicts = []
    for amount in slider_values(method)[1:]:
        wb = lessons.perturb(method, amount)
        released = wb.applied.data
        # the released keys' Σ 1/f_k, recomputed on the released table
        naive = float((1.0 / class_sizes(released, ["region", "age", "sex"])).sum())
        assert wb.after["expected_reidentifications"] == pytest.approx(naive, abs=1e-6)
        others = [c for c in household().columns if c != column]
        pd.testing.assert_frame_equal(released[others].reset_index(drop=True),
                                      household()[others])  # only the perturbed column moved
        linked = wb.after["linkage_reidentifications"]
        met = lessons.check_perturb(wb).met
        assert met == (linked <= naive / 2), amount
        verdicts.append(met)
    if method in perturb_solutions():
        assert verdicts.index(True) + 1 == slider_values(method).index(
            perturb_solutions()[method])


def test_perturb_task_can_be_met_on_the_page():
    assert perturb_solutions()  # some setting the page offers meets the task
    for method, amount in perturb_solutions().items():
        assert amount > 0 and lessons.check_perturb(lessons.perturb(method, amount)).met


# 4 · Randomized response --------------------------------------------------------------------

@pytest.mark.parametrize("n", lessons.RR_SIZES)
def test_rr_margin_against_the_reports(n):
    estimate, margin = lessons.rr_margin(n)
    want_estimate, want_margin = rr_oracle(n)
    assert margin == pytest.approx(want_margin, abs=1e-12)
    assert estimate == pytest.approx(want_estimate, abs=1e-12)


def test_check_rr_met_only_at_the_fewest_participants():
    fewest = rr_fewest()
    index = lessons.RR_SIZES.index(fewest)
    assert 0 < index < len(lessons.RR_SIZES) - 1  # sizes on both sides to get wrong
    for n in lessons.RR_SIZES:
        check = lessons.check_rr(n)
        assert check.met == (n == fewest), n
        if n < fewest:
            assert check.message.startswith("Not yet"), n
        elif n > fewest:
            assert "fewer participants" in check.message, n


# 5 · Publishing counts ----------------------------------------------------------------------

def test_hidden_total_of_the_naive_table():
    naive, safe = lessons.counts_tables()
    total, truth = hidden_total_oracle()
    assert lessons.hidden_total(naive) == total == truth  # the naive table gives it away
    assert naive.participants == len(pet_survey())
    assert naive.nonresponse.low == naive.nonresponse.high  # exact in the naive table
    assert safe.nonresponse.low < safe.nonresponse.high  # an interval in the safe one


def test_check_counts():
    naive, _ = lessons.counts_tables()
    total, _ = hidden_total_oracle()
    assert lessons.check_counts(total, naive).met
    for wrong in (total - 1, total + 1, None):
        check = lessons.check_counts(wrong, naive)
        assert not check.met and check.message.startswith("Not yet"), wrong


# 6 · Does the analysis survive? -------------------------------------------------------------

def test_analysis_methods_match_the_sliders():
    assert {m: v[2:] for m, v in lessons.ANALYSIS_METHODS.items()} == ANALYSIS_SLIDERS


@pytest.mark.parametrize("method,amount", [("band", 0), ("band", 5), ("band", 25),
                                           ("noise", 50), ("noise", 200)])
def test_survive_against_statsmodels(method, amount):
    now = lessons.survive(method, amount)
    risk, j, inside, terms = analysis_oracle(method, amount)
    assert now.risk == pytest.approx(risk, abs=1e-9)
    assert now.result.mean_ci_overlap == pytest.approx(j, abs=1e-9)
    assert all(t.original_in_protected_ci for t in now.result.terms) == inside
    assert all(map(term_holds, now.result.terms)) == terms
    table = lessons.analysis_intervals(now)
    o = regression(actg())
    assert list(table["term"]) == list(o.index)
    np.testing.assert_allclose(table["original"], o["estimate"], rtol=1e-9)


@pytest.mark.parametrize("method", list(ANALYSIS_SLIDERS))
def test_check_analysis_agrees_with_the_oracle(method):
    for amount in analysis_values(method):
        check = lessons.check_analysis(lessons.survive(method, amount))
        assert check.met == analysis_met(method, amount), amount
        risk, j, _, _ = analysis_oracle(method, amount)
        assert f"{risk:.2f} %" in check.message and f"{j:.3f}" in check.message, amount
        assert check.met or check.message.startswith("Not yet"), amount


def test_analysis_task_is_solvable_and_not_by_any_setting():
    settings = analysis_settings()
    for method, kinds in settings.items():
        assert kinds["met"], method  # each method can meet it on the page
        assert kinds["risky"][0] == 0, method  # unprotected, the risk is above the target
    # protecting too much breaks the regression: some settings bring the risk down but fail
    assert any(kinds["broken"] for kinds in settings.values())
    for method, kinds in settings.items():
        for amount in kinds["broken"]:
            assert "no longer holds" in lessons.check_analysis(
                lessons.survive(method, amount)).message


def test_teaching_doc_gives_the_solving_ranges():
    """docs/teaching.md names the settings that meet the sixth task: one run of each slider."""
    doc = (Path(__file__).resolve().parents[1] / "docs" / "teaching.md").read_text()
    for method, words in (("band", "bands of {} to {} years"), ("noise", "noise p = {} to {} %")):
        met = analysis_settings()[method]["met"]
        step = ANALYSIS_SLIDERS[method][1]
        assert met == list(range(met[0], met[-1] + 1, step)), method  # no gap
        assert words.format(met[0], met[-1]) in doc, method


def test_a_class_opening_coarsen_at_once_searches_once(monkeypatch):
    """Many sessions asking for the best setting at the same moment wait for one search."""
    from concurrent.futures import ThreadPoolExecutor

    calls = []
    real = lessons.coarsen

    def counted(width, top=None):
        calls.append((width, top))
        return real(width, top)

    monkeypatch.setattr(lessons, "coarsen", counted)
    lessons._search_coarsening.cache_clear()
    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(lambda _: lessons.best_coarsening(), range(4)))
    assert len(set(found)) == 1
    assert len(calls) == len(lessons.WIDTHS) * len(lessons.TOPS)  # one search, not four


def test_household_lesson_equals_the_oracle_and_names_the_mistakes():
    risk, r = household_oracle()
    members = lessons.one_household()
    assert sorted(members["risk r = 1/f_k"]) == pytest.approx(sorted(r), abs=1e-12)
    assert members["household risk R"].iloc[0] == pytest.approx(risk, abs=1e-12)
    assert (members["records like them (f_k)"] == (1 / members["risk r = 1/f_k"]).round()).all()
    assert risk > r.max() and risk < r.sum()  # more than any member, less than the sum
    assert lessons.check_household(round(risk, 3)).met
    assert not lessons.check_household(round(risk, 3) + 0.002).met
    assert "riskiest member alone" in lessons.check_household(round(r.max(), 3)).message
    assert "average" in lessons.check_household(round(r.mean(), 4)).message
    assert "sum counts twice" in lessons.check_household(float(r.sum())).message
    assert "Not yet" in lessons.check_household(None).message
    # the figures the met message gives are the core's (docs/teaching.md quotes them)
    message = lessons.check_household(risk).message
    h = lessons.households_risk()
    assert f"re-identify {float(h.individual.sum()):.0f} people one by one" in message
    assert f"but {h.expected_reidentifications:.0f} people through their households" in message
    assert "120 people expected re-identified one by one, 362 through their households, and " \
           "443 of the 1,200 households" in (Path(__file__).resolve().parents[1] / "docs"
                                       / "teaching.md").read_text(encoding="utf-8")
    assert "re-identify 120 people" in message and "but 362 people" in message
    assert "443 of the 1,200 households" in message


def test_synthetic_lesson_equals_the_oracle_and_asks_for_the_smallest_leaf():
    """Lesson 9: for every leaf size offered the figures are the oracle's, counted record by
    record on the release; the task is met at the smallest leaf size whose DiSCO is at most
    half the file's DiO, and only there."""
    from tests.lessons_oracles import synthetic_oracle

    df = lessons.synthesis_input()
    assert "weight" not in df.columns and len(df) == len(lessons.household())
    halved = []
    for leaf in lessons.SYNTH_LEAVES:
        now = lessons.synthesise(leaf)
        copies, repu, disco, dio = synthetic_oracle(df, now.release, lessons.SYNTH_KEYS,
                                                    lessons.SYNTH_SENSITIVE)
        assert (now.copies, now.risk.replicated_uniques) == (copies, repu), leaf
        assert now.disco == pytest.approx(disco, abs=1e-9) and now.dio == pytest.approx(
            dio, abs=1e-9), leaf
        if disco <= dio / 2:
            halved.append(leaf)
    assert halved and halved[0] > lessons.SYNTH_LEAVES[0]  # the first offered is not it
    assert lessons.synthesise(1).copies == len(df)  # leaves of one record copy the file
    for leaf in lessons.SYNTH_LEAVES:
        check = lessons.check_synthetic(leaf)
        assert check.met == (leaf == halved[0]), leaf
        assert check.message.startswith("Right" if check.met else "Not yet"), leaf
    later = [leaf for leaf in halved[1:]]
    assert all("take the smallest" in lessons.check_synthetic(x).message for x in later)
    message = lessons.check_synthetic(halved[0]).message
    now = lessons.synthesise(halved[0])
    assert f"{now.copies:,} of the 3,000 synthetic records" in message
    assert f"{now.risk.replicated_uniques:,} people unique" in message
    docs = (Path(__file__).resolve().parents[1] / "docs" / "teaching.md").read_text(
        encoding="utf-8")
    assert (f"at the smallest leaf size that does it, {halved[0]}: DiSCO {now.disco:.1f} % "
            f"against DiO {now.dio:.1f} %") in docs
    assert f"{now.copies:,} at {halved[0]}) and the replicated uniques " \
           f"({now.risk.replicated_uniques:,} at {halved[0]})" in docs
