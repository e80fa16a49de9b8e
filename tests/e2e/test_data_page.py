"""End to end in headless Chromium: the dashboard starts with the example and takes uploads."""

from pathlib import Path

import pytest
from playwright.sync_api import Page

from tests.e2e.conftest import give_files, see, shot

pytestmark = pytest.mark.e2e


def test_example_loads_and_upload_replaces_it(page: Page, app_url: str, shots: Path,
                                              tmp_path: Path):
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(app_url)
    see(page.get_by_role("heading", name="Data")).to_be_visible()
    metrics = page.get_by_test_id("stMetricValue")
    see(metrics.first).to_have_text("2,139")
    see(page.get_by_test_id("stSidebar")).to_contain_text("Quasi-identifiers: age, gender, race")
    shot(page, shots, "data")

    csv = tmp_path / "survey.csv"
    csv.write_text("age;sex;income\n" + "".join(f"{20 + i % 9};{'FM'[i % 2]};{1000 + i}\n"
                                                 for i in range(40)))
    give_files(page, csv)
    see(metrics.first).to_have_text("40")
    see(page.get_by_test_id("stSidebar")).to_contain_text("Quasi-identifiers: age, sex")

    bad = tmp_path / "broken.parquet"
    bad.write_bytes(b"this is not parquet")
    give_files(page, bad)
    see(page.get_by_test_id("stAlert")).to_contain_text("broken.parquet: cannot be read")
    see(metrics.first).to_have_text("40")
