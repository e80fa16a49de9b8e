"""A link is the page: on the Protect page, whose controls and results rerun on their own
(without drawing the sidebar again), the sidebar's link is built from the settings as they
are when its popover is opened. Opened in a fresh browser context, it shows the same headline
figures."""

import pytest
from playwright.sync_api import Browser, Page

from tests.e2e.conftest import band_age, new_page, painted, ran, see

pytestmark = pytest.mark.e2e

PROTECT = "Protect"


def headline(page: Page, count: int | None = None) -> list[str]:
    """Every metric of the main area, label, value and delta, as shown; with ``count``, once
    that many are drawn (a page opened from a link draws the analysis panel's before the
    results fragment's tiles)."""
    see(page.get_by_test_id("stMain").get_by_test_id("stMetricValue").first).to_be_visible()
    if count is not None:
        see(page.get_by_test_id("stMain").get_by_test_id("stMetric")).to_have_count(count)
    painted(page)
    return [m.inner_text().strip()
            for m in page.get_by_test_id("stMain").get_by_test_id("stMetric").all()]


def copied_link(page: Page) -> str:
    """Open the sidebar's link popover and read the link it shows, then close it (each reruns
    the link's fragment)."""
    with ran(page):
        page.get_by_test_id("stSidebar").get_by_role("button", name="Copy link to this state") \
            .click()
    code = page.get_by_test_id("stPopoverBody").get_by_test_id("stCode")
    see(code).to_contain_text("?")
    text = code.inner_text().strip()
    with ran(page):
        page.keyboard.press("Escape")
    return text


def opened(browser: Browser, link: str, count: int) -> list[str]:
    context = browser.new_context()
    page = new_page(context)
    page.goto(link)
    see(page.get_by_role("heading", name=PROTECT, exact=True)).to_be_visible()
    figures = headline(page, count)
    context.close()
    return figures


def test_the_link_carries_the_settings_of_the_moment(browser: Browser, app_url: str):
    context = browser.new_context()
    page = new_page(context)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(app_url)
    see(page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
    with ran(page):
        page.get_by_role("link", name=PROTECT).click()
    see(page.get_by_role("heading", name=PROTECT, exact=True)).to_be_visible()
    band_age(page, 5)  # a fragment rerun: the sidebar is not drawn again
    see(page.get_by_test_id("stMetricDelta").first).to_be_visible()
    at_5 = headline(page)
    link_5 = copied_link(page)
    assert "/protect?" in link_5 and "recipe=" in link_5

    band_age(page, 5)  # width 10, again only the fragment reruns
    at_10 = headline(page)
    assert at_10 != at_5  # the move changed the figures the link must follow
    link_10 = copied_link(page)
    assert link_10 != link_5
    context.close()

    assert opened(browser, link_10, len(at_10)) == at_10
    assert opened(browser, link_5, len(at_5)) == at_5
