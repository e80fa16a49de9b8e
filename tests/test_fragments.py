"""What a slider move on the Protect page redraws, in a real ``streamlit run app.py`` (AppTest
reruns the whole script for any widget, so it cannot tell): the results alone, their numbers
the core's for the new setting; the controls, the sidebar and the other charts are not sent
again. What changes the controls themselves (undo, the columns of a method) redraws them."""

import asyncio
from collections import Counter

from bench.st_client import StSession
from sdc_core.data.io import EXAMPLE_PATH, read_table
from sdc_core.names import count_and_percent, tile
from tests.conftest import run_async
from ui.logic.workbench import evaluate, recipe_json
from ui.state import BURST_SECONDS

QI = ["age", "gender", "race"]
SLIDER = "Band width of age"
LINKAGE = tile("linkage_reidentifications")


def metric(s: StSession, label: str) -> str:
    return s.metrics()[label]


def linkage_after(width: int) -> str:
    """The linkage attack's figure, as the page prints it, for age banded at ``width`` on the
    example with its quasi-identifiers (the attack reads no other role)."""
    df = read_table(EXAMPLE_PATH)
    wb = evaluate(df, recipe_json([{"method": "band", "column": "age", "width": width}], 42),
                  QI, None, 5, "wildcard", 1.0, [])
    return count_and_percent("linkage_reidentifications", wb.after)


async def drive(url: str) -> dict[str, object]:
    s = StSession(timeout=60)
    await s.connect(url)
    seen: dict[str, object] = {}
    try:
        await s.switch_page("Protect")
        await s.set_value(SLIDER, 12)
        await asyncio.sleep(BURST_SECONDS)  # a pause: the next move is an undo step of its own
        await s.set_value(SLIDER, 10)
        seen["move"] = list(s.last_run)
        seen["tiles"] = s.metrics()
        seen["linkage"] = metric(s, LINKAGE)
        seen["slider"] = s.widget(SLIDER, "slider").value
        seen["sidebar_kept"] = "Load a recipe" in s.text()
        seen["undo_enabled"] = not s.widget("Undo", "button").proto.disabled
        await s.click("Undo")  # back to width 12: the slider itself must show it
        seen["undo"] = Counter(kind for kind, _ in s.last_run)
        seen["slider_after_undo"] = s.widget(SLIDER, "slider").value
        seen["linkage_after_undo"] = metric(s, LINKAGE)
        seen["errors"] = s.errors()
    finally:
        await s.close()
    return seen


def test_a_slider_move_redraws_the_results_alone(app_url):
    seen = run_async(drive(app_url))
    assert seen["errors"] == []
    move = seen["move"]
    kinds = Counter(kind for kind, _ in move)
    labels = {label for _, label in move}
    # the results: their tiles (each group one element), the before/after chart once, the undo
    # buttons above the controls (their state follows the move)
    assert {"Undo", "Before and after"} <= labels and kinds["html"] >= 3
    assert {LINKAGE, "Keys' re-identifications"} <= set(seen["tiles"])
    assert kinds["plotly_chart"] == 1
    # not the controls (the slider that moved, the seed, the method columns), not the sidebar
    assert kinds["slider"] == 0 and kinds["number_input"] == 0 and kinds["multiselect"] == 0
    assert "Seed" not in labels and "Load a recipe" not in labels
    # nor what is folded away: every analysis term's figures, the numbers behind the chart,
    # the print export; at most 20 elements and blocks in all (issue 54: a move cheap to draw)
    assert kinds["dataframe"] == 0 and kinds["radio"] == 0
    assert len(move) <= 20, move
    assert seen["sidebar_kept"] and seen["slider"] == [10.0] and seen["undo_enabled"]
    assert seen["linkage"] == linkage_after(10)  # the core's figure for the new width
    # undo redraws the controls too: the slider shows the width it brought back
    assert seen["undo"]["slider"] >= 1
    assert seen["slider_after_undo"] == [12.0]
    assert seen["linkage_after_undo"] == linkage_after(12)
