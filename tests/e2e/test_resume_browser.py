"""Issue 39 item 3: a session belongs to its browser. A teacher's address, copied into another
browser (a student's, or the same machine's other profile) after her tab closed, opens a fresh
session there with a notice, never her data; her own reload still takes her work back. The
server names each browser with an HttpOnly, SameSite=Strict cookie that no script reads."""

from pathlib import Path

import pandas as pd
import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.conftest import give_files, new_page, see, wait_idle

pytestmark = pytest.mark.e2e


def open_data_page(context, url: str):
    page = new_page(context)
    page.goto(url)
    see(page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
    wait_idle(page)
    return page


def test_a_copied_address_opens_a_fresh_session_in_another_browser(
        browser: Browser, app_url: str, tmp_path: Path):
    csv = tmp_path / "teachers_private.csv"
    pd.DataFrame({"age": [20 + i % 50 for i in range(120)], "sex": ["F", "M"] * 60,
                  "income": range(120)}).to_csv(csv, index=False)
    teacher = browser.new_context()
    page = open_data_page(teacher, app_url)
    give_files(page, csv)
    sidebar = page.get_by_test_id("stSidebar")
    see(sidebar).to_contain_text("teachers_private.csv")
    address = page.url
    assert "resume=" in address
    cookie = next(c for c in teacher.cookies() if c["name"] == "sdc_browser")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert page.evaluate("document.cookie").find("sdc_browser") == -1  # no script reads it
    page.close()  # the teacher's tab closes (her work waits for a reload)

    student = browser.new_context()
    stranger = open_data_page(student, address)
    see(stranger.get_by_text("belongs to a session of another browser")).to_be_visible()
    see(stranger.get_by_test_id("stSidebar")).not_to_contain_text("teachers_private.csv")
    assert stranger.url.split("resume=")[1].split("&")[0] != \
        address.split("resume=")[1].split("&")[0]
    stranger.close()
    student.close()

    back = open_data_page(teacher, address)  # her own browser: the work is hers again
    see(back.get_by_test_id("stSidebar")).to_contain_text("teachers_private.csv")
    expect(back.get_by_text("another browser")).to_have_count(0)
    teacher.close()


def test_an_address_of_an_earlier_server_run_tells_a_new_visitor_no_restart(
        browser: Browser, app_url: str):
    """An address copied before a restart names the earlier server run (``?run=``): a browser
    this server never saw before was not open then, so it is told nothing about a restart."""
    visitor = browser.new_context()
    page = open_data_page(visitor, f"{app_url}/?run=0badc0de&resume=copiedtoken")
    expect(page.get_by_text("The server was restarted")).to_have_count(0)
    visitor.close()
