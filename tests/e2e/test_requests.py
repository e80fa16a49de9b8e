"""Nothing leaves the machine: Chromium records every request the page makes on every page of
the dashboard; all go to the app's own server (the page icon was fetched from Google's font
service)."""

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import wait_idle

pytestmark = pytest.mark.e2e

PAGES = ("Risk", "Protect", "Trade-offs", "Randomized response lab", "Response tables",
         "Export", "Lessons", "Data")


def test_every_request_goes_to_the_app(page: Page, app_url: str):
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(app_url)
    expect(page.get_by_role("heading", name="Data", exact=True)).to_be_visible(timeout=30_000)
    wait_idle(page)
    for name in PAGES:
        page.get_by_role("link", name=name, exact=True).click()
        wait_idle(page)
        page.wait_for_timeout(500)
    own = urlsplit(app_url).netloc
    elsewhere = sorted({url for url in requests if urlsplit(url).scheme in ("http", "https", "ws",
                                                                            "wss")
                        and urlsplit(url).netloc != own})
    assert len(requests) > 20  # the pages were loaded: the check looked at their requests
    assert elsewhere == []
