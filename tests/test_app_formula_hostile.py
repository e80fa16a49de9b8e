"""Hostile model formulas through the pages' paths (issue 38): the Protect page's editor and
spec upload, a workspace opened on the Data page, a state link, and a spec that reaches the
pages past its checks; the core's paths (the Python API, the command line) are in
tests/test_formula_hostile.py.

Each payload of :mod:`tests.formula_corpus` that would run something tries to create a marker
file in the test's own sandbox directory; every test asserts the sandbox stays empty. A refusal
is one readable line (no line break, no control character, short, no traceback) that says what
is wrong. A formula whose design matrix would be huge is refused by the bounds, before patsy
builds anything. Formulas of the corpus's neighbourhood that are legitimate still fit.

"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from sdc_core.assess import RiskOptions
from sdc_core.examples import example
from tests.apptest import app_test, editing, errors, protect_page, spec, tile_notes
from tests.formula_corpus import (
    BY_ID,
    NAME,
    PREFIX,
    REPRESENTATIVE,
    Payload,
    cases,
    item,
    readable,
    untouched,
)
from tests.hostile_text import leaks
from ui import links
from ui.logic import workspace

# -- the pages ------------------------------------------------------------------------------

#: The payloads a page is driven with (a page run takes a second or two).
PAGE = REPRESENTATIVE
UPLOADED = ["import-in-I", "treatment-open", "markdown-image-in-name", "chars-100000",
            "chain-plus-600"]


def page_refusal(at: AppTest, start: str) -> str:
    """The one error the page shows (as the reader sees it), which begins with ``start``; no
    exception, no Markdown or HTML of the payload rendered."""
    assert not at.exception, at.exception[0].message if at.exception else ""
    shown = [e for e in errors(at) if e.startswith(start)]
    assert len(shown) == 1, errors(at)
    assert not leaks(at)
    return shown[0]


def add_analysis(at: AppTest, formula: str, kind: str = "ols") -> AppTest:
    """Open the editor, fill "Add an analysis" with ``formula`` and click Add."""
    editing(at).selectbox(key="w_an_kind").set_value(kind).run()
    at.text_input(key="w_an_name").set_value(NAME)
    at.text_input(key="w_an_formula").set_value(formula)
    return at.button(key="w_an_add").click().run()


@pytest.mark.parametrize("p", cases(PAGE))
def test_the_page_editor_refuses_it(p: Payload, sandbox):
    at = protect_page()
    before = spec(at)
    at = add_analysis(at, p.text(sandbox / "marker"))
    message = page_refusal(at, f"Not changed: {PREFIX}")
    readable(message, p.words)
    assert spec(at) == before
    assert any(e.label == "Benchmark analyses (2)" for e in at.expander)
    untouched(sandbox)


@pytest.mark.parametrize("kind", ["ols", "logit"])
def test_the_page_editor_refuses_a_huge_design_by_its_columns(kind):
    """ACTG 175's patient id has 2,139 distinct values: crossed with race, 4,278 columns."""
    at = protect_page()
    before = spec(at)
    at = add_analysis(at, f"{'cd420' if kind == 'ols' else 'treat'} ~ C(pidnum):C(race)", kind)
    message = page_refusal(at, f"Not changed: {PREFIX}")
    readable(message, r"model would have up to [\d,]+ columns, more than 500")
    assert spec(at) == before


@pytest.mark.parametrize("p", cases(UPLOADED))
def test_an_uploaded_spec_on_the_protect_page_is_refused(p: Payload, sandbox):
    at = editing(protect_page())
    before = spec(at)
    raw = json.dumps({"analyses": [item(p.text(sandbox / "marker"))]}).encode()
    at.file_uploader(key="analyses_upload").set_value(("spec.json", raw,
                                                       "application/json")).run()
    message = page_refusal(at, f"Not changed: {PREFIX}")
    readable(message, p.words)
    assert spec(at) == before
    untouched(sandbox)


def workspace_text(analyses: dict) -> str:
    actg = example("actg175")
    columns = list(pd.read_csv(actg.path, nrows=0).columns)
    return workspace.to_json("actg175.csv", 2139, columns, "other", actg.roles, [], 42,
                             RiskOptions(), [], {}, analyses)


def opened_workspace(text: str) -> AppTest:
    at = app_test().run()
    at.switch_page("views/data.py").run()
    assert not at.exception
    at.file_uploader(key="workspace_upload").set_value(("w.json", text.encode(), "x")).run()
    return at


@pytest.mark.parametrize("p", cases(UPLOADED))
def test_a_workspace_with_the_analysis_is_refused_whole_on_the_data_page(p: Payload, sandbox):
    at = opened_workspace(workspace_text({"analyses": [item(p.text(sandbox / "marker"))]}))
    start = "The workspace was not opened, nothing of it is applied: "
    message = page_refusal(at, start)
    readable(message, p.words)
    assert at.session_state["analyses"] == example("actg175").analyses  # unchanged
    untouched(sandbox)


@pytest.mark.parametrize("formula", ["cd420 ~ I(age + 01)", "cd420 ~ power(age, 04)",
                                     "cd420 ~ C(race, Treatment(reference=01))"])
def test_a_workspace_with_a_number_python_does_not_read_leaves_the_pages_working(formula):
    """Issue 51: ``I(age + 01)`` passed the parser, the workspace opened, and the Protect and
    Export pages raised patsy's SyntaxError on every visit. The workspace is refused whole on
    the Data page, by the parser every path reads a formula with; the Protect and Export pages
    then open, and so they do with such a formula already in the session (one kept from
    before)."""
    at = opened_workspace(workspace_text({"analyses": [item(formula, name="zero")]}))
    message = page_refusal(at, "The workspace was not opened, nothing of it is applied: ")
    readable(message, r"analysis 'zero': the formula is refused at '0\d' .*does not begin "
                      r"with 0")
    assert at.session_state["analyses"] == example("actg175").analyses
    for page in ("views/protect.py", "views/export.py"):
        at.switch_page(page).run()
        shown(at, page)
    at.session_state["analyses"] = {"confidence": 0.95, "analyses": [item(formula, name="zero")]}
    at.switch_page("views/protect.py").run()
    readable(page_refusal(at, "The benchmark analyses cannot be compared: "),
             "does not begin with 0")
    at.switch_page("views/export.py").run()
    shown(at, "views/export.py")
    assert any("leaves out the benchmark analyses" in w.value for w in at.warning)


def shown(at: AppTest, page: str) -> None:
    """The page ran to its end: no exception, and not the entry point's "could not be shown"
    (an unexpected error caught and named)."""
    assert not at.exception, (page, at.exception[0].message)
    assert not [e for e in errors(at) if "could not be shown" in e], (page, errors(at))


def test_a_workspace_with_a_huge_design_opens_and_the_panel_refuses_the_model():
    """It parses and names columns the data has: the workspace opens; the Protect page then
    reports the model refused by its size, not fitted."""
    analyses = {"confidence": 0.95, "analyses": [item("cd420 ~ C(pidnum):C(race)",
                                                      name="wide")]}
    at = opened_workspace(workspace_text(analyses))
    assert not at.exception and any("Workspace opened" in s.value for s in at.success)
    assert at.session_state["analyses"] == analyses
    at.switch_page("views/protect.py").run()
    message = page_refusal(at, "original: analysis 'wide': ")
    readable(message, r"model would have up to 4,279 columns")
    assert any(line.startswith("wide: cannot be compared")
               for line in tile_notes(at, "mean CI overlap"))


def test_a_spec_past_its_checks_is_refused_on_every_page_that_reads_it(sandbox):
    """A spec in the session that no check has read (as an older session or a bug could leave
    one): the Protect page says why, the Export page leaves it out, the Trade-offs page's
    sweep is refused; nothing runs."""
    text = BY_ID["import-in-I"].text(sandbox / "marker")
    at = app_test(timeout=120).run()
    at.session_state["analyses"] = {"confidence": 0.95, "analyses": [item(text)]}
    at.switch_page("views/protect.py").run()
    readable(page_refusal(at, "The benchmark analyses cannot be compared: "), "formula")
    at.switch_page("views/export.py").run()
    assert not at.exception
    assert any("leaves out the benchmark analyses" in w.value for w in at.warning)
    at.switch_page("views/tradeoffs.py").run()
    assert not at.exception
    at.number_input(key="w_t_seeds").set_value(1)
    at.multiselect(key="w_t_pram_cols").set_value([])
    at.button[0].click().run()  # Run the sweep
    readable(page_refusal(at, f"grid: {PREFIX}"), "'__import__' is not a function")
    assert "sweep" not in at.session_state
    untouched(sandbox)


def test_a_state_link_carries_no_analyses(sandbox):
    """A link holds a data set, roles, a recipe, risk settings, a lesson and the view: an
    ``analyses`` parameter is not read, and a recipe step cannot carry a formula."""
    text = BY_ID["import-in-I"].text(sandbox / "marker")
    hostile = json.dumps({"analyses": [item(text)]})
    assert not [k for k in links.KEYS if "analys" in k or "formula" in k or "spec" in k]
    assert not [f for f in links.LinkState.__dataclass_fields__ if "analys" in f]
    link, problems = links.read_link({"data": "actg175", "analyses": hostile},
                                     links.example_columns)
    assert link == links.LinkState(example="actg175") and problems == []
    recipe = links.encode_recipe([{"method": "band", "column": "age", "width": 10,
                                   "formula": text}], 1)
    link, problems = links.read_link({"data": "actg175", "recipe": recipe},
                                     links.example_columns)
    assert link.steps is None and any("unknown key(s) formula" in p for p in problems)

    at = app_test()
    for key, value in {"data": "actg175", "analyses": hostile, "formula": text,
                       "analysis": hostile}.items():
        at.query_params[key] = value
    at.switch_page("views/protect.py").run()
    assert not at.exception and not at.error
    assert at.session_state["analyses"] == example("actg175").analyses
    untouched(sandbox)
