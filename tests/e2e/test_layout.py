"""Layout in Chromium: no metric label or value, nor button label, is cut (ellipsis) at 1280×800
or wider, on every page that shows metrics; screenshots of each in the test output folder."""

from pathlib import Path

import pytest
from playwright.sync_api import Page

from tests.e2e.conftest import CUT, band_age, painted, ran, see, shot

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("width, height", [(1280, 800), (1920, 1080)])
def test_no_metric_is_cut(page: Page, app_url: str, shots: Path, width: int, height: int):
    page.set_viewport_size({"width": width, "height": height})
    page.goto(app_url)
    see(page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
    checked = 0
    for name in ("Risk", "Protect", "Randomized response lab", "Tables"):
        with ran(page):
            page.get_by_role("link", name=name, exact=True).click()
        see(page.get_by_role("heading", name=name if name != "Risk" else "Disclosure risk",
                             exact=True)).to_be_visible()
        if name == "Protect":  # with deltas and a distance column: the widest state
            band_age(page)
            see(page.get_by_test_id("stMetricDelta").first).to_be_visible()
        painted(page)
        if name != "Tables":  # metrics appear there only for some answers
            see(page.get_by_test_id("stMetricValue").first).to_be_visible()
        checked += page.get_by_test_id("stMetricValue").count()
        assert page.evaluate(CUT) == [], f"{name} at {width}×{height}"
        shot(page, shots, f"layout_{name.replace(' ', '_').lower()}_{width}")
    assert checked >= 10  # the pages above show metrics: the check looked at them
