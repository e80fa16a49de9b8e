"""The Protect page's settings and recipe steps, both ways (pure Python, no Streamlit)."""

import re

import pytest

from sdc_core.errors import SdcInputError
from ui.protect import ProtectSettings, describe, from_steps

MERGE = {"method": "recode", "column": "race", "groups": {"any": [0, 1]}}


@pytest.mark.parametrize("steps", [
    [MERGE],
    [MERGE, {"method": "recode", "column": "race", "min_count": 20}],
    [{"method": "band", "column": "age", "width": 10}, MERGE,
     {"method": "recode", "column": "race", "min_count": 20},
     {"method": "recode", "column": "gender", "groups": {"x": ["1"]}},
     {"method": "recode", "column": "gender", "min_count": 20},
     {"method": "pram", "column": "race", "p": 0.1}],
])
def test_steps_round_trip(steps):
    settings = from_steps(steps, 5)
    assert settings.steps(["age", "race", "gender"]) == steps


def test_a_merge_alone_switches_the_method_on_and_off():
    s = ProtectSettings({"recode": ["race"]}, {"recode": {"min_count": 0}})
    assert s.steps([]) == []
    s = ProtectSettings({"recode": ["race"]},
                        {"recode": {"min_count": 0, "groups": {"race": {"any": [0, 1]}}}})
    assert s.steps([]) == [MERGE]


def test_a_min_count_the_page_cannot_show_is_refused():
    with pytest.raises(SdcInputError, match="applies min_count to every column"):
        from_steps([MERGE, {"method": "recode", "column": "gender", "min_count": 20}], 1)
    with pytest.raises(SdcInputError, match="no control on the Protect page"):
        from_steps([{"method": "recode", "column": "race", "groups": {"a": [1]},
                     "min_count": 3}], 1)


def test_describe_writes_a_merge_as_json():
    assert describe([MERGE], 2) == 'recode race groups={"any": [0, 1]}; seed 2'


@pytest.mark.parametrize("step, words", [
    ({"method": "pram", "column": "race", "p": -0.5}, "p = -0.5 is below the low end of its "
                                                       "control on the Protect page (0)"),
    ({"method": "band", "column": "age", "width": 7.5}, "width = 7.5 is not a whole number"),
])
def test_values_a_control_cannot_show_are_refused_not_changed(step, words):
    """A slider cannot show p = -0.5 (Streamlit raised on the page): the recipe is refused with
    the reason instead of being changed."""
    with pytest.raises(SdcInputError, match=re.escape(words)):
        from_steps([step], 1)


@pytest.mark.parametrize("step", [{"method": "pram", "column": "race", "p": 0.9},
                                  {"method": "local_suppression", "columns": ["age"], "k": 50}])
def test_values_past_a_controls_end_are_kept(step):
    """PRAM p 0.9 opened as 0.5 and k 50 as 20: the settings keep the recipe's value (the
    slider widens to it)."""
    main = "p" if step["method"] == "pram" else "k"
    assert from_steps([step], 1).values[step["method"]] == {main: step[main]}


def test_a_seed_the_page_cannot_hold_is_refused_not_changed():
    """A recipe with seed 2**60 opened on the Protect page showed (and applied) another seed."""
    assert from_steps([], 2**53 - 1).seed == 2**53 - 1
    with pytest.raises(SdcInputError, match="seed 1152921504606846976 is larger than"):
        from_steps([], 2**60)
