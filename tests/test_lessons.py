"""Unit tests of the Lessons page's pure tasks and checks (``ui.logic.lessons``), each against an
oracle written here in plain pandas / numpy on the household survey and seed 004's pet question.

The helpers that find a solving setting (``most_unique_third``, ``best_coarsening_oracle``,
``perturb_solutions``, ``rr_fewest``, ``hidden_total_oracle``, ``analysis_settings``) are also
used by ``tests/test_app_lessons.py`` to drive the page's widgets."""

from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

from sdc_core.examples import example
from sdc_core.io import read_table
from sdc_core.methods.banding import measured
from sdc_core.methods.randomized_response import coin_survey
from sdc_core.recipe import apply_recipe, make_recipe
from sdc_core.tables import pet_survey
from sdc_core.teaching import HOUSEHOLD_PATH
from sdc_core.utility import il1
from sdc_core.utility.validity import term_holds
from ui.logic import lessons
from ui.logic.workbench import evaluate, recipe_json

Z95 = 1.959963984540054
K = 5  # the k of the coarsening task

#: The page's sliders of the perturbation lesson: method → (maximum, step), from 0
#: (views/lessons.py; tests/test_app_lessons.py checks the page offers these).
PERTURB_SLIDERS = {"pram": (0.5, 0.05), "rank_swap": (20.0, 0.5)}
#: The sixth lesson's sliders: method → (maximum, step), from 0 (views/lessons.py).
ANALYSIS_SLIDERS = {"band": (30, 1), "noise": (300, 10)}
#: The page's band-width slider runs from 0 (exact ages) to this.
PAGE_MAX_WIDTH = 30


@cache
def household() -> pd.DataFrame:
    return read_table(HOUSEHOLD_PATH)


def class_sizes(df: pd.DataFrame, keys: list[str]) -> pd.Series:
    """f_k of every record: the number of records sharing its values of ``keys``."""
    return df.groupby(keys, dropna=False)[keys[0]].transform("size")


# 1 · Who is unique? -------------------------------------------------------------------------

def percent_unique_oracle(third: str | None) -> float:
    keys = ["region", "sex"] + ([third] if third else [])
    return 100.0 * float((class_sizes(household(), keys) == 1).mean())


def most_unique_third() -> str:
    shares = {c: percent_unique_oracle(c) for c in lessons.UNIQUE_THIRD}
    return max(shares, key=shares.get)


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

def coarsened_age(age: pd.Series, width: int, top: int | None) -> pd.Series:
    """Top-code (ages above ``top`` become ``top``), then band: floor(x / w)·w + w / 2."""
    a = age.astype(float)
    if top is not None:
        a = a.where(a <= top, float(top))
    if width:
        a = np.floor(a / width) * width + width / 2.0
    return a


@cache
def coarsen_oracle(width: int, top: int | None) -> tuple[int, int, float]:
    """(smallest class, records in classes under k, IL1 of age) by the documented formula:
    mean |x′ − x| / (max x − min x) (only age changes, so it is also IL1 overall)."""
    df = household()
    age = df["age"].astype(float)
    released = coarsened_age(df["age"], width, top)
    fk = class_sizes(df.assign(age=released), ["region", "sex", "age"])
    loss = float((released - age).abs().mean() / (age.max() - age.min()))
    return int(fk.min()), int((fk < K).sum()), loss


def best_coarsening_oracle(widths=lessons.WIDTHS) -> tuple[int, int | None, float]:
    """Exhaustively: the (width, top) reaching k ≥ 5 at the least IL1; on a tie the narrowest
    band, then the highest top code (no top coding counts highest)."""
    feasible = [(w, t, coarsen_oracle(w, t)[2]) for w in widths for t in lessons.TOPS
                if coarsen_oracle(w, t)[0] >= K]
    least = min(loss for _, _, loss in feasible)
    ties = [(w, t, loss) for w, t, loss in feasible if loss <= least + 1e-12]
    return min(ties, key=lambda c: (c[0], -(c[1] if c[1] is not None else 1000)))


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

def slider_values(method: str) -> list[float]:
    """Every value the page's slider for ``method`` offers, from 0 in its steps."""
    high, step = PERTURB_SLIDERS[method]
    return [round(i * step, 10) for i in range(int(round(high / step)) + 1)]


@cache
def perturb_solutions() -> dict[str, float]:
    """Per method, the least amount the page offers at which the linkage attack re-identifies
    at most half of the released keys' Σ 1/f_k (the key of a method that never does is
    missing)."""
    found = {}
    for method in PERTURB_SLIDERS:
        for amount in slider_values(method):
            after = lessons.perturb(method, amount).after
            if after["linkage_reidentifications"] <= after["expected_reidentifications"] / 2:
                found[method] = amount
                break
    return found


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

def rr_oracle(n: int) -> tuple[float, float]:
    """(π̂ = 2λ̂ − ½, half-width 1.96·√(λ̂(1 − λ̂)/n) / ½) from the survey's own reports."""
    _, reports, _ = coin_survey(n, lessons.RR_TRUTH, lessons.RR_Q, lessons.RR_SEED)
    assert len(reports) == n
    lam = float((reports == "yes").mean())
    return 2 * lam - 0.5, Z95 * np.sqrt(lam * (1 - lam) / n) / 0.5


def rr_fewest() -> int:
    return next(n for n in lessons.RR_SIZES if rr_oracle(n)[1] <= 0.05)


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

def hidden_total_oracle() -> tuple[int, int]:
    """(participants − Σ shown − exact non-response, the true total of the hidden options)."""
    df = pet_survey()
    answers = df[lessons.COUNTS_QUESTION]
    counts = answers.dropna().value_counts()
    shown = int(counts[counts >= 5].sum())
    nonresponse = int(answers.isna().sum())
    return len(df) - shown - nonresponse, int(counts[counts < 5].sum())


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

@cache
def actg() -> pd.DataFrame:
    return read_table(example("actg175").path)


def regression(df: pd.DataFrame) -> pd.DataFrame:
    """The lesson's regression by statsmodels: estimate, standard error and 95 % interval per
    term."""
    fit = smf.ols(lessons.ANALYSIS_FORMULA, data=df).fit()
    ci = fit.conf_int(0.05)
    return pd.DataFrame({"estimate": fit.params, "se": fit.bse, "low": ci[0], "high": ci[1]})


@cache
def analysis_oracle(method: str, amount: float) -> tuple[float, float, bool, bool]:
    """(linkage risk %, mean CI overlap, every original estimate inside its protected
    interval, every term within J ≥ 0.75 and |θ_p − θ_o|/se_o < 1): the table protected by the
    lesson's recipe (``apply_recipe``), the regression refitted by statsmodels on both tables
    and J = ½[(U − L)/(U_o − L_o) + (U − L)/(U_p − L_p)] averaged over the terms; the risk is
    the Protect page's linkage attack."""
    steps = lessons.analysis_steps(method, amount)
    protected = apply_recipe(make_recipe(steps, lessons.ANALYSIS_SEED), actg()).data
    # ages written as bands ("40–49") are fitted as their midpoints, as the analyses read them
    o, p = regression(actg()), regression(measured(actg(), protected))
    low, high = np.maximum(o["low"], p["low"]), np.minimum(o["high"], p["high"])
    j = 0.5 * ((high - low) / (o["high"] - o["low"]) + (high - low) / (p["high"] - p["low"]))
    inside = bool(((p["low"] <= o["estimate"]) & (o["estimate"] <= p["high"])).all())
    terms = bool(((j >= 0.75) & ((p["estimate"] - o["estimate"]).abs() / o["se"] < 1)).all())
    roles = example("actg175").roles
    wb = evaluate(actg(), recipe_json(steps, lessons.ANALYSIS_SEED), roles.qi, None, 5,
                  "wildcard", 1.0, roles.numeric)
    return float(wb.after["linkage_risk_percent"]), float(j.mean()), inside, terms


def analysis_met(method: str, amount: float) -> bool:
    risk, j, inside, terms = analysis_oracle(method, amount)
    return risk <= lessons.ANALYSIS_RISK and j >= 0.9 and inside and terms


def analysis_values(method: str) -> list[int]:
    high, step = ANALYSIS_SLIDERS[method]
    return list(range(0, high + 1, step))


@cache
def analysis_settings() -> dict[str, dict[str, list[int]]]:
    """Per method, the amounts the page offers that meet the task (``met``), that bring the
    risk down but break the regression (``broken``) and that leave the risk too high
    (``risky``)."""
    out = {}
    for method in ANALYSIS_SLIDERS:
        kinds: dict[str, list[int]] = {"met": [], "broken": [], "risky": []}
        for amount in analysis_values(method):
            risk = analysis_oracle(method, amount)[0]
            kind = "met" if analysis_met(method, amount) else \
                "risky" if risk > lessons.ANALYSIS_RISK else "broken"
            kinds[kind].append(amount)
        out[method] = kinds
    return out


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
