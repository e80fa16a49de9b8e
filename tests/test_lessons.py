"""Unit tests of the Lessons page's pure tasks and checks (``ui.lessons``), each against an
oracle written here in plain pandas / numpy on the household survey and seed 004's pet question.

The helpers that find a solving setting (``most_unique_third``, ``best_coarsening_oracle``,
``perturb_solutions``, ``rr_fewest``, ``hidden_total_oracle``) are also used by
``tests/test_app_lessons.py`` to drive the page's widgets."""

from functools import cache

import numpy as np
import pandas as pd
import pytest

from sdc_core.io import read_table
from sdc_core.methods.randomized_response import coin_survey
from sdc_core.tables import pet_survey
from sdc_core.teaching import HOUSEHOLD_PATH
from sdc_core.utility import il1
from ui import lessons

Z95 = 1.959963984540054
K = 5  # the k of the coarsening task

#: The page's sliders of the perturbation lesson: method → (maximum, step), from 0
#: (views/lessons.py; tests/test_app_lessons.py checks the page offers these).
PERTURB_SLIDERS = {"pram": (0.5, 0.05), "rank_swap": (20.0, 0.5)}
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
