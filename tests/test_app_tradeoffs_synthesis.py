"""The Trade-offs page sweeps synthesis beside the masked methods (issue 53; docs/utility.md,
"Synthesis in a sweep"): its min_leaf and smoothing values fields go to the grid, masked and
synthetic releases share one plot when both axes apply to both (each kind marked), and a chart
whose axis compares record by record says in one line why the synthetic rows have no point.

Leaves of 1,000 and 1,060 of the example's 2,139 records keep each synthesis under a second."""

import base64
import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from sdc_core.recipe import NOT_KEPT_ROWS
from tests.apptest import app_test
from tests.conftest import plain
from tests.hostile_text import IMAGE, leaks


def app_on(page: str) -> AppTest:
    at = app_test(timeout=120).run()
    at.switch_page(page).run()
    assert not at.exception
    return at


def band_and_synthesis(at: AppTest, min_leaf: str = "1000, 1060", smoothing: str = "") -> None:
    """Bands of age 5 and 20 and synthesis, one seed; no other method."""
    at.number_input(key="w_t_seeds").set_value(1)
    for w in at.multiselect:
        if w.key != "w_t_band_cols":
            w.set_value([])
    at.text_input(key="w_t_band_values").set_value("5, 20")
    at.text_input(key="w_t_synthesize_min_leaf_values").set_value(min_leaf)
    at.text_input(key="w_t_synthesize_smoothing_values").set_value(smoothing)


def values(a: list | dict) -> np.ndarray:
    """A Plotly figure's array, written as a list or as typed bytes (``bdata``)."""
    if isinstance(a, dict):
        return np.frombuffer(base64.b64decode(a["bdata"]), dtype=a["dtype"])
    return np.asarray(a)


def scatter(at: AppTest) -> dict:
    return json.loads(at.get("plotly_chart")[0].proto.spec)


def test_masked_and_synthetic_rows_share_one_plot_on_axes_that_apply_to_both(actg):
    at = app_on("views/tradeoffs.py")
    assert at.text_input(key="w_t_synthesize_min_leaf_values").value == ""  # not swept
    band_and_synthesis(at, smoothing="false, true")
    at.radio(key="w_t_pareto").set_value("naive")
    at.radio(key="w_t_loss").set_value("worst_tvd")
    at.button[0].click().run()
    assert not at.exception and not at.error
    sweep = at.session_state["sweep"]
    settings = [s for s in sweep["grid"]["settings"] if s["method"] == "synthesize"]
    assert settings == [
        {"method": "synthesize", "param": "min_leaf", "values": [1000, 1060],
         "fixed": {"smoothing": flag}} for flag in (False, True)]
    table = sweep["result"].table
    assert (table["record_by_record"] == NOT_KEPT_ROWS).sum() == 4
    at.radio(key="w_t_risk").set_value("expected_reidentifications").run()
    traces = [t for t in scatter(at)["data"] if t.get("mode") == "markers"]
    synthetic = [t for t in traces if t["name"].endswith("(synthetic)")]
    masked = [t for t in traces if t["name"].startswith("band")]
    assert len(synthetic) == 1 and len(values(synthetic[0]["x"])) == 4
    rows = values(synthetic[0]["customdata"])  # the table's rows: the synthetic ones
    assert (table.loc[rows, "record_by_record"] == NOT_KEPT_ROWS).all()
    assert np.isfinite(values(synthetic[0]["x"])).all()
    assert synthetic[0]["marker"]["symbol"] == "star-diamond"
    assert masked and all(t["marker"]["symbol"] != "star-diamond" for t in masked)
    assert not any("no point" in c.value for c in at.caption)


def test_an_axis_that_compares_record_by_record_says_why_synthetic_rows_have_no_point(actg):
    at = app_on("views/tradeoffs.py")
    band_and_synthesis(at, "1000")
    at.button[0].click().run()
    assert not at.exception and not at.error
    names = [t["name"] for t in scatter(at)["data"]]
    assert not any("synthetic" in n for n in names)  # linkage against IL1: no point
    said = [plain(c.value) for c in at.caption if "no point" in c.value]
    assert len(said) == 1 and said[0].startswith("1 synthetic row has no point")
    assert any("left out of the Pareto front" in plain(c.value) for c in at.caption)
    table = next(d.value for d in at.dataframe if "method" in d.value.columns)
    synthetic = table[table["method"] == "synthesize"]
    assert synthetic["linkage_reidentifications"].isna().all()  # blank, not 0


@pytest.mark.parametrize("field, text, words", [
    ("min_leaf", "__import__('os').system('touch /tmp/x')", "values must be numbers"),
    ("min_leaf", f"5, {IMAGE} **bold**", "values must be numbers"),
    ("min_leaf", "<script>alert(1)</script>", "values must be numbers"),
    ("min_leaf", "[" * 3000 + "5" + "]" * 3000, "values must be numbers"),
    ("min_leaf", "1e400", "values must be finite numbers"),
    ("min_leaf", "2.5", "min_leaf must be a whole number"),
    ("min_leaf", "99999999999", "min_leaf must be at most half the table's 2,139 records"),
    ("smoothing", "<b>yes</b>", "values must be true or false"),
    ("smoothing", "1", "values must be true or false"),
])
def test_hostile_synthesis_values_get_one_clear_message(actg, field, text, words):
    at = app_on("views/tradeoffs.py")
    band_and_synthesis(at, "1000")
    at.text_input(key=f"w_t_synthesize_{field}_values").set_value(text)
    at.button[0].click().run()
    assert not at.exception
    said = [plain(e.value) for e in at.error]
    assert len(said) == 1 and words in said[0], said
    assert len(said[0]) < 400 and not leaks(at) and "<script" not in said[0]
    assert "sweep" not in at.session_state  # no sweep ran
