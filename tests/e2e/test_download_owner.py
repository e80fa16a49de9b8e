"""A download reaches the browser whose session made it, and no other (issue 51, item 8): in
Chromium the Export page's CSV downloads with the browser's own cookie; a second browser (a
context of its own: its own cookies) that has the file's address gets a 404, and so does a
request with no cookie; the page icon, a media file too, is shown."""

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import wait_idle

pytestmark = pytest.mark.e2e


def test_the_export_reaches_its_browser_only(page: Page, browser: Browser, app_url: str):
    icons: list[int] = []
    page.on("response", lambda r: icons.append(r.status) if "/media/" in r.url
            and r.request.resource_type != "document" and r.url.endswith(".png") else None)
    page.goto(app_url)
    expect(page.get_by_role("heading", name="Data", exact=True)).to_be_visible(timeout=30_000)
    page.get_by_role("link", name="Export", exact=True).click()
    wait_idle(page)
    with page.expect_download(timeout=60_000) as info:
        page.get_by_role("button", name="Download CSV").click()
    download = info.value
    assert download.url.split("?")[0].rsplit("/", 2)[-2] == "media"
    with open(download.path(), "rb") as f:
        assert f.read().count(b"\n") == 2140  # a header and 2,139 records

    own = page.request.get(download.url)  # this browser's cookies
    assert own.status == 200
    stranger = browser.new_context()
    try:
        stranger.new_page().goto(app_url)  # a browser of its own: its own cookie
        assert any(c["name"] == "sdc_browser" for c in stranger.cookies())
        assert stranger.request.get(download.url).status == 404
    finally:
        stranger.close()
    assert page.request.get(download.url, headers={"Cookie": ""}).status == 404
    assert icons and set(icons) == {200}  # the page icon, which Chromium asks with its cookie
