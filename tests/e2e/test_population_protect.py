"""The Protect page's row "In the population (after protection)" in Chromium (issue 27): on the
household example (a weight column, so N is the weights' sum and the row shows), its metrics
are not cut at 1280×800 or wider, and nothing in them takes the keyboard focus (an e2e test
counts the Tab stops of this page: tests/e2e/test_accessibility.py)."""

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page

from tests.e2e.conftest import (
    CUT,
    TABLE_LABEL,
    band_age,
    focused,
    painted,
    see,
    shot,
    tab_to,
    tile,
    wait_idle,
)

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("width, height", [(1280, 800), (1920, 1080)])
def test_the_population_row_is_whole(page: Page, app_url: str, shots: Path, width: int,
                                     height: int):
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{app_url}/protect?data=household")
    see(page.get_by_role("heading", name="Protect")).to_be_visible()
    band_age(page)
    row = tile(page, "Population uniqueness")
    see(row.get_by_test_id("stMetricDelta")).to_be_visible()
    see(tile(page, "Log-linear r2").get_by_test_id("stMetricDelta")).to_be_visible()
    painted(page)
    assert page.evaluate(CUT) == [], f"Protect (household) at {width}×{height}"
    row.first.scroll_into_view_if_needed()
    shot(page, shots, f"population_protect_{width}")


def test_the_population_row_adds_no_tab_stop(page: Page, app_url: str):
    """Nothing in the row takes the focus (no help button, no link), and the keyboard goes on
    from the band width slider to the chart's table."""
    page.set_viewport_size({"width": 1440, "height": 1000})
    page.goto(f"{app_url}/protect?data=household")
    see(page.get_by_role("heading", name="Protect")).to_be_visible()
    slider = band_age(page)
    # .first: while the results redraw, the chart before and the chart after may both be there
    see(page.locator(".gtitle", has_text="age: original and protected values").first) \
        .to_be_visible()
    wait_idle(page)
    row = tile(page, re.compile("Population uniqueness|Log-linear r2"))
    see(row).to_have_count(2)
    assert row.locator("button, a, input, select, textarea, [tabindex]").count() == 0
    slider.focus()
    assert focused(slider)
    box = page.get_by_test_id("stExpander").filter(has_text=TABLE_LABEL).first
    tab_to(page, box.locator("summary"))
    page.keyboard.press("Enter")
    see(box.get_by_test_id("stDataFrame")).to_be_visible()
