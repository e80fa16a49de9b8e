"""The Protect page's "Does the analysis hold?" panel in Chromium: the built-in example's
analyses hold before protection, and a move of the age band slider changes the mean CI overlap
to the core's figure for that band."""

from pathlib import Path

import pytest
from playwright.sync_api import Page

from sdc_core.data.io import EXAMPLE_PATH, read_table
from sdc_core.examples import example
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.utility.analysis import parse_spec
from sdc_core.utility.validity import Validity
from tests.e2e.conftest import band_age, choose, ran, see, shot, tile

pytestmark = pytest.mark.e2e


def overlap_with_age_banded(width: int) -> str:
    """The mean CI overlap of the example's analyses with age banded, as the panel shows it."""
    df = read_table(EXAMPLE_PATH)
    steps = [{"method": "band", "column": "age", "width": width}]
    released = apply_recipe(parse_recipe({"version": 1, "seed": 42, "steps": steps}), df).data
    report = Validity(parse_spec(example("actg175").analyses), df).compare(released)
    return f"{report.mean_ci_overlap:.3f}"


def test_a_slider_move_changes_the_panel(page: Page, app_url: str, shots: Path):
    page.set_viewport_size({"width": 1440, "height": 1000})
    page.goto(app_url)
    see(page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
    with ran(page):
        page.get_by_role("link", name="Protect").click()
    see(page.get_by_role("heading", name="Does the analysis hold?")).to_be_visible()
    overlap = tile(page, "mean CI overlap").get_by_test_id("stMetricValue")
    see(overlap).to_have_text("1.000")
    see(page.get_by_text("CD4 at 20 weeks: holds", exact=False)).to_be_visible()

    band_age(page)
    expected = overlap_with_age_banded(10)
    assert expected != "1.000"
    see(overlap).to_have_text(expected)

    with ran(page):  # the terms and tables are drawn once their fold is opened
        page.get_by_test_id("stExpander").filter(
            has_text="Every term and the 1- and 2-way tables").locator("summary").click()
    choose(page, "Terms of an analysis", "CD4 at 20 weeks")
    panel_chart = page.get_by_test_id("stPlotlyChart").filter(
        has_text="CD4 at 20 weeks: original and protected estimates")
    see(panel_chart).to_be_visible()
    shot(page, shots, "protect_analysis_panel")
