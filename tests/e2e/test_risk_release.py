"""The Risk page's protected view in Chromium: the release's figures beside the original's,
with no metric label or value cut at 1280×800."""

from pathlib import Path

import pytest
from playwright.sync_api import Page

from tests.e2e.conftest import CUT, band_age, painted, ran, see, shot

pytestmark = pytest.mark.e2e


def test_both_tables_side_by_side(page: Page, app_url: str, shots: Path):
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(app_url)
    see(page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
    with ran(page):
        page.get_by_role("link", name="Protect").click()
    band_age(page)
    see(page.get_by_test_id("stMetricDelta").first).to_be_visible()
    with ran(page):
        page.get_by_role("link", name="Risk").click()
    see(page.get_by_role("heading", name="Disclosure risk")).to_be_visible()
    with ran(page):
        page.get_by_text("Both, side by side").click()
    see(page.get_by_text("Protected data", exact=True).first).to_be_visible()
    painted(page)
    values = page.get_by_test_id("stMetricValue")
    see(values.first).to_have_text("182 (8.51 %)")
    see(page.get_by_text("-157 (was 182)")).to_be_visible()
    assert page.evaluate(CUT) == []
    shot(page, shots, "risk_side_by_side_1280")
