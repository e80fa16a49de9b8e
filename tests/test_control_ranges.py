"""The bounds of the Protect page's controls on a recipe's numbers (issue 39, item 4): values
inside them open, values past them and breaks that are not numbers are an input error, not a
traceback; the readers (a recipe file, a link, a workspace) and the pages are in
tests/test_app_control_ranges.py.
"""

from __future__ import annotations

import pytest

from sdc_core.errors import SdcInputError
from ui.logic.protect import MAX_PAGE_NUMBER, from_steps


def test_values_inside_the_bounds_still_open_and_past_the_most_are_refused():
    top = {"method": "band", "column": "age", "width": MAX_PAGE_NUMBER}
    assert from_steps([top], 1).values["band"]["age"]["width"] == MAX_PAGE_NUMBER
    with pytest.raises(SdcInputError, match="beyond what a control"):
        from_steps([{**top, "width": MAX_PAGE_NUMBER + 1}], 1)
    assert from_steps([{"method": "pram", "column": "race", "p": 1.0}], 1)  # widened, kept
    for step, words in [({"method": "pram", "column": "race", "p": 1.5}, "p = 1.5 is more "
                                                                          "than 1"),
                        ({"method": "rank_swap", "column": "wtkg", "window_percent": 150},
                         "more than 100"),
                        ({"method": "noise", "columns": ["wtkg"], "p": 10, "delta": 2},
                         "delta = 2 is more than 1")]:
        with pytest.raises(SdcInputError, match=words):
            from_steps([step], 1)


def test_breaks_that_are_not_numbers_are_an_input_error(actg):
    from sdc_core.recipe import apply_recipe, parse_recipe

    for breaks in ([0, [1], 100], [0, "x", 100], [0, None, 100], [0, 10**400, 100]):
        recipe = parse_recipe({"seed": 1, "steps": [{"method": "band", "column": "age",
                                                     "breaks": breaks}]})
        with pytest.raises(SdcInputError, match="breaks must be at least 2 finite numbers"):
            apply_recipe(recipe, actg)
