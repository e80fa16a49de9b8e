"""A link is the page: on the Protect page, whose controls and results rerun on their own
(without drawing the sidebar again), the sidebar's link is built from the settings as they
are when its popover is opened. Opened in a fresh browser context, it shows the same headline
figures."""

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import band_age, wait_idle

pytestmark = pytest.mark.e2e

PROTECT = "Protect"


def headline(page: Page, count: int | None = None) -> list[str]:
    """Every metric of the main area, label, value and delta, as shown; with ``count``, once
    that many are drawn (a page opened from a link draws the analysis panel's before the
    results fragment's tiles)."""
    expect(page.get_by_test_id("stMain").get_by_test_id("stMetricValue").first).to_be_visible(
        timeout=60_000)
    if count is not None:
        expect(page.get_by_test_id("stMain").get_by_test_id("stMetric")).to_have_count(
            count, timeout=60_000)
    wait_idle(page)
    page.wait_for_timeout(500)
    return [m.inner_text().strip()
            for m in page.get_by_test_id("stMain").get_by_test_id("stMetric").all()]


def copied_link(page: Page) -> str:
    """Open the sidebar's link popover and read the link it shows, then close it."""
    page.get_by_test_id("stSidebar").get_by_role("button", name="Copy link to this state") \
        .click()
    code = page.get_by_test_id("stPopoverBody").get_by_test_id("stCode")
    expect(code).to_contain_text("?", timeout=30_000)
    wait_idle(page)
    text = code.inner_text().strip()
    page.keyboard.press("Escape")
    wait_idle(page)
    return text


def opened(browser: Browser, link: str, count: int) -> list[str]:
    context = browser.new_context()
    page = context.new_page()
    page.goto(link)
    expect(page.get_by_role("heading", name=PROTECT, exact=True)).to_be_visible(timeout=60_000)
    figures = headline(page, count)
    context.close()
    return figures


def test_the_link_carries_the_settings_of_the_moment(browser: Browser, app_url: str):
    context = browser.new_context()
    page = context.new_page()
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(app_url)
    expect(page.get_by_role("heading", name="Data", exact=True)).to_be_visible(timeout=30_000)
    page.get_by_role("link", name=PROTECT).click()
    expect(page.get_by_role("heading", name=PROTECT, exact=True)).to_be_visible(timeout=30_000)
    band_age(page, 5)  # a fragment rerun: the sidebar is not drawn again
    expect(page.get_by_test_id("stMetricDelta").first).to_be_visible(timeout=60_000)
    at_5 = headline(page)
    link_5 = copied_link(page)
    assert "/protect?" in link_5 and "recipe=" in link_5

    band_age(page, 5)  # width 10, again only the fragment reruns
    wait_idle(page)
    at_10 = headline(page)
    assert at_10 != at_5  # the move changed the figures the link must follow
    link_10 = copied_link(page)
    assert link_10 != link_5
    context.close()

    assert opened(browser, link_10, len(at_10)) == at_10
    assert opened(browser, link_5, len(at_5)) == at_5
