"""A number a recipe, a link or a workspace gives is read against what the Protect page's
controls can draw (finite, within ±(2**53 − 1), within the parameter's declared range): 1e300
by any of the three showed Streamlit's traceback with the server's paths (issue 39, item 4).
Each reader refuses it in one line, and the page opens; the core's checks are in
tests/test_control_ranges.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sdc_core.errors import SdcInputError
from tests.apptest import app_test, no_traceback
from tests.conftest import plain
from ui import links
from ui.links import encode_recipe
from ui.logic import workspace
from ui.logic.protect import MAX_PAGE_NUMBER, from_steps, read_recipe_file

ROOT = Path(__file__).resolve().parents[1]


# -- numbers a control cannot draw ------------------------------------------------------------

#: (JSON text of the value, what the one-line refusal says)
HOSTILE = [
    ("1e300", "beyond what a control on the Protect page holds"),
    (str(2**60), "beyond what a control on the Protect page holds"),
    ("-1e300", "below the low end of its control"),
    ("NaN", "must be a number, not nan"),
    ("Infinity", "must be a number, not inf"),
    ("-Infinity", "must be a number, not -inf"),
    ("1e999", "must be a number, not inf"),  # read as infinity
    ("1" + "0" * 400, "must be a number, not 1000"),  # a whole number no float holds
]


def recipe_text(value: str, method: str = "band", key: str = "width") -> str:
    target = '"columns": ["wtkg"]' if method == "noise" else '"column": "age"'
    return '{"seed": 3, "steps": [{"method": "%s", %s, "%s": %s}]}' % (method, target, key,
                                                                        value)


def refusals(text: str) -> list[str]:
    """The one-line refusal of the recipe ``text`` as a recipe file, a link and a workspace
    (a link carries NaN and Infinity as Python's JSON writes them)."""
    data = json.loads(text)
    packed = links.encode_recipe(data["steps"], data["seed"])
    readers = [lambda: read_recipe_file(text.encode()),
               lambda: links.decode_recipe(packed),
               lambda: workspace.read('{"workspace": 1, "recipe": %s}' % text,
                                      ["age", "wtkg", "race"])]
    said = []
    for read in readers:
        with pytest.raises(SdcInputError) as err:
            got = read()  # what the Protect page is then given, as each path does
            steps, seed = (got.steps, got.seed) if hasattr(got, "steps") else got
            from_steps(steps, seed)
        said.append(str(err.value))
    return said


@pytest.mark.parametrize("value, words", HOSTILE, ids=[v[:12] for v, _ in HOSTILE])
@pytest.mark.parametrize("method, key", [("band", "width"), ("band", "origin"),
                                         ("noise", "p"), ("pram", "p")])
def test_a_number_no_control_can_draw_is_refused_in_one_line_by_every_reader(value, words,
                                                                            method, key):
    if method == "band" and key == "origin":
        text = recipe_text(value, "band", "origin")[:-3] + ', "width": 5}]}'
        if value == "-1e300":
            words = "beyond what a control on the Protect page holds"  # no low end
    else:
        text = recipe_text(value, method, key)
    if method == "pram":
        text = text.replace('"column": "age"', '"column": "race"')
        if value in ("1e300", str(2**60)):
            words = "is more than 1, the most it can be"
    for said in refusals(text):
        assert "\n" not in said and len(said) < 300, said
        assert words in said, said


@pytest.mark.parametrize("value", ["1e300", str(2**60)])
def test_a_link_with_a_number_no_control_can_draw_opens_with_a_warning(value):
    at = app_test()
    at.query_params["data"] = "actg175"
    at.query_params["recipe"] = encode_recipe(json.loads(recipe_text(value))["steps"], 3)
    at.switch_page("views/protect.py")
    at.run()
    no_traceback(at)
    assert any("beyond what a control on the Protect page holds" in plain(w.value)
               for w in at.warning)
    assert at.slider(key="w_p_band_age").value == 0  # nothing of it applied


@pytest.mark.parametrize("value", ["1e300", str(2**60)])
def test_a_recipe_file_with_a_number_no_control_can_draw_is_refused(value):
    at = app_test().run()
    at.switch_page("views/protect.py").run()
    at.file_uploader(key="recipe_upload").set_value(
        ("r.json", recipe_text(value).encode(), "application/json")).run()
    no_traceback(at)
    assert any("Recipe not loaded" in e.value and "beyond what a control" in plain(e.value)
               for e in at.error)
    assert at.slider(key="w_p_band_age").value == 0


@pytest.mark.parametrize("value", ["1e300", str(2**60)])
def test_a_workspace_with_a_number_no_control_can_draw_is_refused(value):
    at = app_test().run()
    text = '{"workspace": 1, "recipe": %s}' % recipe_text(value)
    at.file_uploader(key="workspace_upload").set_value(("w.json", text.encode(), "x")).run()
    no_traceback(at)
    assert any("nothing of it is applied" in e.value and "beyond what a control"
               in plain(e.value) for e in at.error)
    at.switch_page("views/protect.py").run()
    no_traceback(at)
    assert at.slider(key="w_p_band_age").value == 0


def test_the_widest_band_a_control_holds_is_drawn():
    at = app_test()
    at.query_params["data"] = "actg175"
    at.query_params["recipe"] = encode_recipe(
        [{"method": "band", "column": "age", "width": MAX_PAGE_NUMBER}], 3)
    at.switch_page("views/protect.py")
    at.run()
    no_traceback(at)
    assert at.slider(key="w_p_band_age").value == MAX_PAGE_NUMBER


def test_a_breaks_field_nested_too_deeply_is_said_under_the_field():
    at = app_test().run()
    at.switch_page("views/protect.py").run()
    at.text_input(key="w_p_band:breaks:age").set_value("[" * 5000 + "]" * 5000).run()
    no_traceback(at)
    assert any("not applied" in e.value for e in at.error)
