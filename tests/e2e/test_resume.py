"""A reload (F5) in Chromium returns the same work: the uploaded data set, its roles and the
Protect settings; the resume token never reaches the server's log, even at debug level."""

from pathlib import Path

import pandas as pd
import pytest
from playwright.sync_api import Page, expect

from bench.server import free_port, start_server, stop_server
from tests.e2e.conftest import band_age, give_files, pick_options, ran, see, wait_idle

pytestmark = pytest.mark.e2e


def test_a_reload_keeps_the_uploaded_data_roles_and_settings(page: Page, tmp_path: Path):
    csv = tmp_path / "survey_for_reload.csv"
    pd.DataFrame({"age": [18 + (7 * i) % 60 for i in range(200)],
                  "sex": ["F", "M"] * 100,
                  "income": range(200)}).to_csv(csv, index=False)
    port = free_port()
    log = tmp_path / "server.log"
    proc = start_server(port, env={"STREAMLIT_LOGGER_LEVEL": "debug"}, log=log)
    try:
        page.set_viewport_size({"width": 1440, "height": 1000})
        page.goto(f"http://127.0.0.1:{port}/")
        see(page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
        give_files(page, csv)
        sidebar = page.get_by_test_id("stSidebar")
        see(sidebar).to_contain_text("survey_for_reload.csv")
        pick_options(page, "Quasi-identifiers", ["age", "sex"], clear=True)
        see(sidebar).to_contain_text("Quasi-identifiers: age, sex")

        with ran(page):
            page.get_by_role("link", name="Protect").click()
        see(page.get_by_role("heading", name="Protect")).to_be_visible()
        slider = band_age(page)
        see(slider).to_have_value("10")
        wait_idle(page)
        assert "resume=" in page.url

        page.reload()
        see(page.get_by_role("heading", name="Protect")).to_be_visible()
        wait_idle(page)
        see(sidebar).to_contain_text("survey_for_reload.csv")
        see(sidebar).to_contain_text("Quasi-identifiers: age, sex")
        see(page.get_by_role("slider", name="Band width of age")).to_have_value("10")
        expect(page.get_by_text("has ended")).to_have_count(0)
        token = page.url.split("resume=")[1].split("&")[0]
    finally:
        stop_server(proc)
    assert token not in log.read_text(errors="replace"), "the token reached the server's log"
