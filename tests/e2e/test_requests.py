"""Nothing leaves the machine: Chromium records every request the page makes on every page of
the dashboard; all go to the app's own server (the page icon was fetched from Google's font
service)."""

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page

from tests.e2e.conftest import give_files, painted, ran, see, wait_idle

pytestmark = pytest.mark.e2e

PAGES = ("Risk", "Protect", "Trade-offs", "Randomized response lab", "Tables",
         "Export", "Lessons", "Data")


def test_every_request_goes_to_the_app(page: Page, app_url: str):
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(app_url)
    see(page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
    wait_idle(page)
    for name in PAGES:
        with ran(page):
            page.get_by_role("link", name=name, exact=True).click()
        painted(page)  # and what it asked for, requested
    own = urlsplit(app_url).netloc
    elsewhere = sorted({url for url in requests if urlsplit(url).scheme in ("http", "https", "ws",
                                                                            "wss")
                        and urlsplit(url).netloc != own})
    assert len(requests) > 20  # the pages were loaded: the check looked at their requests
    assert elsewhere == []


EVIL = "http://127.0.0.1:9"  # a port nothing answers on: any request to it is a leak
IMAGE = f"![t]({EVIL}/x.png)"
LINK = f"[Session expired - sign in again]({EVIL}/phish)"


def hostile_payload(duplicate: bool = False) -> dict:
    header = f"age,{IMAGE},sex,{LINK}" + (f",{IMAGE}" if duplicate else "")
    rows = [f"{20 + i % 5},{IMAGE if i % 2 else LINK},{'mf'[i % 2]},**bold**"
            + (",x" if duplicate else "") for i in range(40)]
    return {"name": f"{IMAGE}.csv", "mimeType": "text/csv",
            "buffer": ("\n".join([header, *rows]) + "\n").encode()}


def leaks(page: Page) -> list[str]:
    """Images, links and bold type that came from the data."""
    found = [f"img {e.get_attribute('src')}" for e in page.locator(f"img[src^='{EVIL}']").all()]
    found += [f"link {e.get_attribute('href')}"
              for e in page.locator(f"a[href^='{EVIL}']").all()]
    found += [f"bold {e.inner_text()}" for e in page.locator("strong", has_text="bold").all()]
    return found


def test_hostile_names_values_and_links_make_no_request(page: Page, app_url: str):
    """A file name, column names and values that are Markdown images and links, uploaded and
    shown on every page, and a link whose parameters are the same: Chromium fetches nothing
    from the address they name, and the page holds no image, link or bold type from them."""
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(f"{app_url}/?qi={IMAGE}&view={LINK}&k={IMAGE}")
    see(page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
    wait_idle(page)
    see(page.get_by_text("The link names something that is not here").first).to_be_visible()
    give_files(page, hostile_payload(duplicate=True))  # the duplicate-column error
    see(page.get_by_text("duplicate column names")).to_be_visible()
    assert leaks(page) == []
    give_files(page, hostile_payload())
    see(page.get_by_test_id("stMetricValue").first).to_have_text("40")
    painted(page)
    assert leaks(page) == []
    for name in PAGES:
        with ran(page):
            page.get_by_role("link", name=name, exact=True).click()
        painted(page)
        assert leaks(page) == [], name
    assert len(requests) > 20
    assert [url for url in requests if url.startswith(EVIL)] == []


def test_response_table_options_from_the_data_stay_text(page: Page, app_url: str):
    """The Tables page names a hidden option (a cell value) in its audit: an option
    that is a Markdown image or link is shown as text, and nothing is fetched."""
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(app_url)
    see(page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
    wait_idle(page)
    rows = ["q"] + ["a"] * 30 + [IMAGE] * 2 + [LINK] * 2 + ["b"] * 6
    give_files(page, {"name": "answers.csv", "mimeType": "text/csv",
                      "buffer": ("\n".join(rows) + "\n").encode()})
    see(page.get_by_test_id("stMetricValue").first).to_have_text("40")
    with ran(page):  # q, the one categorical column, is chosen by default
        page.get_by_role("link", name="Tables", exact=True).click()
    see(page.get_by_text("Audit").first).to_be_visible()
    painted(page)
    assert page.get_by_text("127.0.0.1:9/x.png", exact=False).count() > 0  # named, as text
    assert leaks(page) == []
    assert [url for url in requests if url.startswith(EVIL)] == []
