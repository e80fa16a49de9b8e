"""A Likert survey (items scored 1–6, as in a user test on a personality survey of 2,800
people) in the figures and settings of the Protect and Trade-offs pages: bars in score order,
columns with the same levels, the parameters a step takes, a banded column compared per band,
band origins and top and bottom codes in the sweep's grid; the pages themselves are in
tests/test_app_likert_survey.py. Each test fails without its fix."""


import numpy as np
import pandas as pd
import pytest

from sdc_core.errors import SdcInputError
from sdc_core.methods import registry
from ui.logic.groups import level_sets, same_levels
from ui.logic.protect import ProtectSettings, from_steps, full_step
from ui.logic.tradeoff_grid import (
    MethodChoice,
    combinations_asked,
    grid_settings,
    swept_params,
)
from ui.logic.workbench import category_order, column_figure, evaluate, recipe_json


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
