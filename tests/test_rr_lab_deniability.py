"""The randomized response lab and the lessons read ε from the Protect page's function (issue
42, item 4; docs/measures.md, "Deniability: what perturbation buys"): the coin's ε is ln 3, the
lab's figures equal :func:`recipe_deniability` of the same step, and the seventh lesson's check
is met at the smallest α whose ε is at most ln 10."""

import math

import pandas as pd
import pytest

from sdc_core.methods.randomized_response import coin_survey, epsilon
from sdc_core.recipe import parse_recipe
from sdc_core.risk.deniability import recipe_deniability
from ui.logic import lessons

RR = {"method": "randomized_response", "column": "answer", "categories": ["yes", "no"]}


def protect_page_figure(answers: pd.Series, q: float):
    recipe = parse_recipe({"version": 1, "seed": 2, "steps": [{**RR, "keep_probability": q}]})
    return recipe_deniability(recipe, answers.rename("answer").to_frame())[0]


def test_the_coin_is_ln_3_and_says_three_times():
    answers, _, _ = coin_survey(1000, 0.2, 0.5, 2)
    d = lessons.coin_deniability(answers, 0.5)
    assert d.epsilon == pytest.approx(math.log(3), abs=1e-12)
    assert "at most e^ε = 3 times likelier" in d.meaning
    # ¾ · 0.2 (a 'yes' from a violator) against ¼ · 0.8: the posterior of a 'yes' is 3/7
    assert d.posterior.loc["yes", "yes"] == pytest.approx(0.15 / 0.35)
    assert d.guess_accuracy == pytest.approx(0.8) == d.baseline  # 'no' stays the best guess


@pytest.mark.parametrize("q", [0.05, 0.3, 0.5, 0.75, 0.95, 1.0])
@pytest.mark.parametrize("truth", [0.0, 0.2, 0.6])
def test_the_lab_equals_the_protect_page_on_the_same_mechanism(q, truth):
    answers, _, _ = coin_survey(500, truth, q, 2)
    lab = lessons.coin_deniability(answers, q)
    protect = protect_page_figure(answers, q)
    assert lab.epsilon == pytest.approx(protect.epsilon, abs=1e-12) or \
        lab.epsilon == protect.epsilon == math.inf
    assert lab.epsilon == pytest.approx(epsilon(q, 2)) or lab.epsilon == epsilon(q, 2)
    assert lab.guess_accuracy == pytest.approx(protect.guess_accuracy, abs=1e-12)
    assert lab.baseline == pytest.approx(protect.baseline, abs=1e-12)
    pd.testing.assert_frame_equal(lab.posterior, protect.posterior)


def test_more_truth_telling_buys_a_better_guess_and_less_deniability():
    answers, _, _ = coin_survey(1000, 0.4, 0.5, 2)
    low, high = (lessons.coin_deniability(answers, q) for q in (0.3, 0.9))
    assert low.epsilon < high.epsilon
    assert low.guess_accuracy < high.guess_accuracy
    assert lessons.coin_deniability(answers, 1.0).guess_accuracy == 1.0


def test_the_deniability_lesson_is_met_at_the_smallest_alpha_within_ln_10():
    # relabeling (1 − α)I + α·1πᵀ with π = 0.5/0.3/0.2: ε = ln((1 − 0.8α)/(0.2α))
    for a in lessons.DENY_ALPHAS:
        assert lessons.deny(a).epsilon == pytest.approx(math.log((1 - 0.8 * a) / (0.2 * a)))
    assert lessons.deny(0.1).epsilon == pytest.approx(math.log(46))  # seed 000's example
    met = [a for a in lessons.DENY_ALPHAS if lessons.check_deny(a).met]
    assert met == [0.4]
    assert lessons.deny(0.35).epsilon > math.log(10) >= lessons.deny(0.4).epsilon
    assert "smaller α would do" in lessons.check_deny(0.45).message
    assert "Not yet" in lessons.check_deny(0.35).message
    d = lessons.deny(0.4)
    assert d.guess_accuracy == pytest.approx(sum(max(p * q for p, q in zip(col, d.prior))
                                                 for col in d.matrix.T.to_numpy()))
    assert d.baseline == 0.5
