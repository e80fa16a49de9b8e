"""AppTest of synthesis on the Protect page and in the report (issue 53, items 2 and 4): a
synthetic release shows no number where a figure compares record by record and says why, its
keys' risk as it is, and replicated uniques, DiSCO beside DiO and the distance against a
holdout equal to the assessment's for the same recipe; turning it off brings the masked
figures back; the new controls refuse hostile values through a recipe, a link and a
workspace in one line."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from sdc_core.assess import Setting, assess
from sdc_core.names import label, tile
from sdc_core.recipe import parse_recipe
from sdc_core.risk import risk_profile
from sdc_core.risk.synthetic import SyntheticRisk
from tests.apptest import app_on, app_test, downloads, metrics, no_traceback, tiles
from tests.conftest import plain
from ui.links import encode_recipe
from ui.logic.metrics import NO_FIGURE, PROTECT_RISK, RELEASE_LOSS_LABEL, UTILITY

#: The tiles that compare record by record: the linkage attack's and every loss figure's.
RECORD_TILES = ["Linkage attack re-identifications", "Linkage attack certain links",
                RELEASE_LOSS_LABEL, *(tile(k) for k in UTILITY[1:])]
#: The tiles of the released keys, measured on the synthetic table as it is.
KEY_TILES = [tile(k, 5) for k in PROTECT_RISK if not k.startswith("linkage")]
#: Why the record-by-record figures give no number (the assessment's ``rows``).
WHY = "does not keep the original's rows"


def synthesised(holdout: float = 0.0) -> AppTest:
    """The Protect page with synthesis on (min_leaf 5), and a holdout when given."""
    at = app_on("views/protect.py")
    at.slider(key="w_p_synthesize_min_leaf").set_value(5).run()
    if holdout:
        at.slider(key="w_p_synthesize_holdout").set_value(holdout).run()
    no_traceback(at)
    return at


def truth(at: AppTest, actg: pd.DataFrame):
    """The assessment of the recipe the page applied, in the page's setting."""
    roles = at.session_state["roles"]
    recipe = parse_recipe(json.loads(at.session_state["protect_last_applied"].recipe))
    setting = Setting(tuple(roles.qi), tuple(roles.numeric), tuple(roles.sensitive))
    return assess(actg, None, setting, recipe)


def test_a_synthetic_release_marks_the_record_by_record_figures_and_shows_its_own(actg):
    at = app_on("views/protect.py")
    masked = metrics(at)
    at.slider(key="w_p_synthesize_min_leaf").set_value(5).run()
    no_traceback(at)
    assert not at.error
    shown = metrics(at)
    a = truth(at, actg)
    assert a.rows is not None and WHY in a.rows
    for name in RECORD_TILES:  # no number: marked, not zero
        assert shown[name] == NO_FIGURE, name
        help_text = next(m.help for m in tiles(at) if m.label == name)
        assert WHY in plain(help_text)
    said = " ".join(plain(i.value) for i in at.info)
    assert "No figure for the linkage attack" in said and WHY in said
    # the keys' risk of the released keys, as it is (a fresh profile of the synthetic table)
    assert all(shown[name] != NO_FIGURE for name in KEY_TILES)
    p = risk_profile(a.released, list(a.setting.qi))
    assert shown["Keys' re-identifications"] == \
        f"{p.expected_reidentifications:g} ({p.avg_linkage_risk_percent:.2f} %)"
    assert shown["Unique records"] == f"{p.percent_unique:.2f} %"
    # replicated uniques and DiSCO beside DiO: the assessment's figures
    s = a.synthetic
    assert isinstance(s, SyntheticRisk)
    assert shown[tile("replicated_uniques")] == \
        f"{s.replicated_uniques} ({s.replicated_uniques_percent:.2f} %)"
    table = next(t.value for t in at.table if label("disco_percent") in t.value.columns)
    assert list(table.index) == list(s.disco) == list(a.setting.sensitive) != []
    for column, d in s.disco.items():
        assert float(table.loc[column, label("disco_percent")]) == \
            pytest.approx(d.disco_percent, abs=0.005)
        assert float(table.loc[column, label("disco_original_percent")]) == \
            pytest.approx(d.disco_original_percent, abs=0.005)
    buys = " ".join(plain(c.value) for c in at.caption)
    assert "No deniability figure and no attribute-inference attack" in buys
    assert tile("dcr_train_share") not in shown  # no holdout, no distance against one
    # off again: the masked figures, every one of them
    at.slider(key="w_p_synthesize_min_leaf").set_value(0).run()
    no_traceback(at)
    assert metrics(at) == masked
    assert NO_FIGURE not in metrics(at).values()


def test_a_holdout_shows_the_distance_against_it(actg):
    at = synthesised(holdout=0.5)
    shown = metrics(at)
    s = truth(at, actg).synthetic
    assert isinstance(s, SyntheticRisk) and s.holdout is not None
    assert shown[tile("dcr_train_share")] == f"{s.holdout['dcr_train_share']:.3f}"
    assert shown[tile("exact_copies")] == f"{s.holdout['exact_copies']:,}"
    assert 0.4 <= s.holdout["dcr_expected_share"] <= 0.6  # half the records held out
    assert at.session_state["protect"].steps([])[-1] == \
        {"method": "synthesize", "min_leaf": 5, "holdout": 0.5}


def test_the_before_and_after_figure_compares_every_synthetic_column():
    at = synthesised()
    box = at.selectbox(key="w_protect_view")
    assert "age" in box.options and len(box.options) > 10  # every column drawn anew
    box.set_value("race").run()
    no_traceback(at)


def test_the_report_of_a_synthetic_release(actg, monkeypatch):
    made = downloads(monkeypatch)
    at = synthesised(holdout=0.5)
    s = truth(at, actg).synthetic
    assert isinstance(s, SyntheticRisk) and s.holdout is not None
    at.switch_page("views/export.py").run()
    no_traceback(at)
    html = re.sub(r">\s+<", "><", made["dl_report"]().decode())  # a table's cells, a line each
    assert "<h2>A synthetic release</h2>" in html and WHY.replace("'", "&#x27;") in html
    for key in ("replicated_uniques", "replicated_uniques_percent", "dcr_train_share",
                "exact_copies"):
        assert f"<td>{label(key)}</td>" in html
    for column, d in s.disco.items():
        assert f"<td>{label('disco_percent')}: {column}</td><td>{d.disco_percent:.6g}</td>" \
            in html
    assert f"<td>{label('replicated_uniques')}</td><td>{s.replicated_uniques}</td>" in html
    # the linkage attack and IL1 have no number after protection, the keys' risk has one
    loss = html.split("<h2>Information loss</h2>")[1].split("</table>")[0]
    assert loss.count("<td>—</td>") == len(UTILITY)
    row = html.split(f"<td>{label('linkage_reidentifications')}</td>")[1].split("</tr>")[0]
    assert row.count("<td>") == 2 and row.rstrip().endswith("<td>—</td>")
    assert "No deniability figure and no attribute-inference attack" in html
    assert "Every attacker of the linkage attack" not in html


# -- hostile values of the new controls --------------------------------------------------------

#: (the step's parameters as JSON text, words of the one-line refusal)
HOSTILE = [
    ('"min_leaf": 1e300', "min_leaf"),
    ('"min_leaf": -3', "min_leaf"),
    ('"min_leaf": 2.5', "min_leaf"),
    ('"min_leaf": "5"', "min_leaf"),
    ('"min_leaf": 0', "min_leaf"),
    ('"min_leaf": 5, "records": 0', "records"),
    ('"min_leaf": 5, "records": 1e12', "records"),
    ('"min_leaf": 5, "records": "<b>x</b>"', "records"),
    ('"min_leaf": 5, "holdout": 1.5', "holdout"),
    ('"min_leaf": 5, "holdout": -0.1', "holdout"),
    ('"min_leaf": 5, "smoothing": "yes"', "smoothing"),
    ('"min_leaf": 5, "proper": 1', "proper"),
]


def recipe_text(params: str) -> str:
    return '{"version": 1, "seed": 3, "steps": [{"method": "synthesize", %s}]}' % params


@pytest.mark.parametrize("params, words", HOSTILE, ids=[p for p, _ in HOSTILE])
def test_a_hostile_synthesis_recipe_file_is_refused_in_one_line(params, words):
    at = app_on("views/protect.py")
    at.file_uploader(key="recipe_upload").set_value(
        ("r.json", recipe_text(params).encode(), "application/json")).run()
    no_traceback(at)
    said = [plain(e.value) for e in at.error if "Recipe not loaded" in e.value]
    assert len(said) == 1 and words in said[0] and "\n" not in said[0], said
    assert at.slider(key="w_p_synthesize_min_leaf").value == 0  # nothing of it applied
    assert tile("replicated_uniques") not in metrics(at)


@pytest.mark.parametrize("params", ['"min_leaf": -3', '"min_leaf": 5, "holdout": 1.5'])
def test_a_hostile_synthesis_link_and_workspace_open_nothing_of_it(params):
    at = app_test()
    at.query_params["data"] = "actg175"
    at.query_params["recipe"] = encode_recipe(json.loads(recipe_text(params))["steps"], 3)
    at.switch_page("views/protect.py")
    at.run()
    no_traceback(at)
    assert at.warning or at.error
    assert at.slider(key="w_p_synthesize_min_leaf").value == 0
    at = app_test().run()
    text = '{"workspace": 1, "recipe": %s}' % recipe_text(params)
    at.file_uploader(key="workspace_upload").set_value(("w.json", text.encode(), "x")).run()
    no_traceback(at)
    assert any("nothing of it is applied" in e.value for e in at.error)
    at.switch_page("views/protect.py").run()
    no_traceback(at)
    assert at.slider(key="w_p_synthesize_min_leaf").value == 0


def test_a_synthesis_recipe_opens_on_the_page_as_it_is():
    at = app_on("views/protect.py")
    text = recipe_text('"min_leaf": 8, "smoothing": true, "records": 500, "holdout": 0.25')
    at.file_uploader(key="recipe_upload").set_value(("r.json", text.encode(), "x")).run()
    no_traceback(at)
    assert not at.error
    assert at.slider(key="w_p_synthesize_min_leaf").value == 8
    assert at.toggle(key="w_p_synthesize_smoothing").value is True
    assert at.number_input(key="w_p_synthesize_records").value == 500
    assert at.slider(key="w_p_synthesize_holdout").value == 0.25
    assert tile("dcr_train_share") in metrics(at)


@pytest.mark.parametrize("typed", [10**8, 2**53 - 1, -5, 0])
def test_a_typed_number_of_records_past_its_range_is_not_taken(typed):
    """The records field holds 1 to 10,000,000 (the most a step makes): a value typed past
    either end is not taken (the field falls back to empty, as many records as the original),
    without a traceback; a value within them applies."""
    at = synthesised()
    field = at.number_input(key="w_p_synthesize_records")
    assert (field.min, field.max) == (1, 10_000_000)
    field.set_value(typed).run()
    no_traceback(at)
    assert at.number_input(key="w_p_synthesize_records").value is None
    assert at.session_state["protect"].steps([])[-1] == {"method": "synthesize", "min_leaf": 5}
    assert tile("replicated_uniques") in metrics(at)
    at.number_input(key="w_p_synthesize_records").set_value(300).run()
    no_traceback(at)
    assert at.session_state["protect"].steps([])[-1] == \
        {"method": "synthesize", "min_leaf": 5, "records": 300}
