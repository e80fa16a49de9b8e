"""A large upload in Chromium: its stages are shown, and changing page while it loads does not
drop it (it goes on loading on the new page)."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import give_files_until, ran, see

pytestmark = pytest.mark.e2e


def test_leaving_the_page_while_an_upload_loads_keeps_it(page: Page, app_url: str,
                                                         tmp_path: Path):
    n = 2_000_000  # about 50 MB: seconds to read, so the page change lands while it reads
    rng = np.random.default_rng(0)
    csv = tmp_path / "big_survey.csv"
    pd.DataFrame({"age": rng.integers(18, 90, n), "sex": rng.choice(["F", "M"], n),
                  "region": rng.integers(1, 40, n), "income": rng.lognormal(10, 1, n).round(2)}
                 ).to_csv(csv, index=False)
    page.set_viewport_size({"width": 1440, "height": 1000})
    page.goto(app_url)
    see(page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
    # a file given while the page still handles its last messages may be dropped: given again
    give_files_until(page, csv, page.get_by_text("Reading the file…"))
    with ran(page):  # until the Risk page's run, which finishes the upload, has finished
        page.get_by_role("link", name="Risk").click()  # while it reads
    see(page.get_by_role("heading", name="Disclosure risk")).to_be_visible()
    # finished on the Risk page (the Data page's elements are gone once the run is over): the
    # sidebar names the upload, whole. The "Loaded …" status of the run that finished it is
    # not asserted: a later run of the page (the risk computed, a fragment) redraws without it
    sidebar = page.get_by_test_id("stSidebar")
    see(sidebar).to_contain_text("big_survey.csv")
    see(sidebar).to_contain_text("2,000,000 records × 4 columns")
    see(page.get_by_role("heading", name="Disclosure risk")).to_be_visible()
    expect(page.get_by_role("heading", name="Data", exact=True)).to_have_count(0)
