"""End to end in headless Chromium: every page by clicking, a slider moved with the keyboard,
screenshots of each page in the test output folder."""

import time
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import (
    CEILING_SECONDS,
    band_age,
    choose,
    pick_options,
    ran,
    runs,
    see,
    shot,
    wait_idle,
)

pytestmark = pytest.mark.e2e

PAGES = ["Risk", "Protect", "Trade-offs", "Randomized response lab", "Tables",
         "Export", "Data"]


def test_whole_workflow_in_the_browser(page: Page, app_url: str, shots: Path):
    page.set_viewport_size({"width": 1440, "height": 1000})
    page.goto(app_url)
    see(page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
    with ran(page):
        page.get_by_role("button", name="Load built-in data").click()

    # tag the quasi-identifiers: clear them, then pick age, gender, race one by one
    pick_options(page, "Quasi-identifiers", ["age", "gender", "race"], clear=True)
    sidebar = page.get_by_test_id("stSidebar")
    see(sidebar).to_contain_text("Quasi-identifiers: age, gender, race")

    page.get_by_role("link", name="Risk").click()
    see(page.get_by_role("heading", name="Disclosure risk")).to_be_visible()
    metrics = page.get_by_test_id("stMetricValue")
    see(metrics.first).to_have_text("182 (8.51 %)")
    see(metrics.nth(1)).to_have_text("8.51 %")
    see(page.get_by_text("arms determines treat")).to_be_visible()
    shot(page, shots, "risk")

    page.get_by_role("link", name="Protect").click()
    see(page.get_by_role("heading", name="Protect")).to_be_visible()
    see(metrics.first).to_have_text("182 (8.51 %)")
    slider = band_age(page)
    see(metrics.first).to_have_text("25 (1.17 %)")
    chart = page.get_by_test_id("stPlotlyChart").first
    see(chart.locator(".gtitle", has_text="age: original and protected values")) \
        .to_be_visible()
    shot(page, shots, "protect")
    # browser round trip of a slider step: key press → the new figure on screen
    latencies = []
    for _width, reids in ((11, "21 (0.98 %)"), (12, "20 (0.94 %)"), (13, "19 (0.89 %)")):
        start = time.perf_counter()
        slider.press("ArrowRight")
        see(metrics.first).to_have_text(reids)
        latencies.append(time.perf_counter() - start)
        wait_idle(page)  # before the next press
    (shots.parent / "slider_latency.txt").write_text(
        "key press to updated metric (browser round trip), seconds: "
        + ", ".join(f"{t:.3f}" for t in latencies) + "\n")
    for _ in range(3):
        slider.press("ArrowLeft")
    see(metrics.first).to_have_text("25 (1.17 %)")
    # PRAM: the released keys barely move, the linkage attack (first metric) drops
    pram = page.get_by_role("slider", name="Flip probability p")
    pram.focus()
    pram.press("End")
    see(metrics.first).not_to_have_text("25 (1.17 %)")
    wait_idle(page)
    linked, keys = (float(metrics.nth(i).inner_text().split(" (")[0].replace(",", ""))
                    for i in (0, 1))
    assert linked < 0.8 * keys
    see(page.get_by_test_id("stMetricLabel").first).to_contain_text("Linkage attack")
    shot(page, shots, "protect_pram")
    pram.press("Home")
    see(metrics.first).to_have_text("25 (1.17 %)")

    page.get_by_role("link", name="Trade-offs").click()
    page.get_by_role("button", name="Run the sweep").click()
    see(page.locator(".gtitle", has_text="Risk against information loss")) \
        .to_be_visible()
    see(page.locator(".g-ytitle").first).to_have_text("linkage attack re-identifications")
    wait_idle(page)
    shot(page, shots, "tradeoffs")
    # the trade-off figure for print: SVG rendered on the server, captioned with the sweep
    with ran(page):  # the popover's controls are drawn once it is open
        page.get_by_role("button", name="Export for print").first.click()
    with ran(page):
        page.get_by_text("SVG", exact=True).click()
    with page.expect_download(timeout=CEILING_SECONDS * 1000) as download:
        page.get_by_role("button", name="Download SVG").click()
    assert download.value.suggested_filename.endswith("_tradeoff.svg")
    svg = Path(download.value.path()).read_text()
    assert svg.startswith("<svg") and 'width="1200"' in svg
    assert "sweep of 9 one-step settings, seeds 0–2" in svg
    with ran(page):  # the popover closed: the page runs again
        page.keyboard.press("Escape")
    # a click on a point opens its setting on the Protect page (traces: baseline, band age, …)
    point = page.locator(".scatterlayer .trace").nth(1).locator("path.point").nth(1)
    point.scroll_into_view_if_needed()
    box = point.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)  # Plotly picks the point under the pointer, as for a person
    see(page.locator(".hoverlayer .hovertext").first).to_be_visible()  # it has: its label
    page.mouse.click(x, y)
    see(page.get_by_role("heading", name="Protect")).to_be_visible()
    see(metrics.nth(1)).to_have_text("25 (1.17 %)")  # 10-year bands
    page.get_by_role("link", name="Trade-offs").click()
    see(page.locator(".gtitle", has_text="Risk against information loss")) \
        .to_be_visible()  # the sweep is still there

    page.get_by_role("link", name="Randomized response lab").click()
    see(page.locator(".gtitle", has_text="Spread of the estimate")).to_be_visible()
    shot(page, shots, "rr_lab")

    page.get_by_role("link", name="Tables", exact=True).click()
    page.get_by_text("Example: the pet survey").click()
    see(page.get_by_text("Elephant 0–4; Penguin 0–4")).to_be_visible()
    shot(page, shots, "response_tables")

    page.get_by_role("link", name="Export").click()
    see(page.get_by_role("button", name="Download the report (HTML)")).to_be_visible()
    with page.expect_download() as download:
        page.get_by_role("button", name="Download the recipe (JSON)").click()
    assert download.value.suggested_filename == "actg175_recipe.json"
    recipe = Path(download.value.path()).read_text()
    assert '"width": 10' in recipe
    with page.expect_download() as download:  # generated on click (deferred)
        page.get_by_role("button", name="Download CSV").click()
    assert download.value.suggested_filename == "actg175_protected.csv"
    lines = Path(download.value.path()).read_text().splitlines()
    assert lines[0].startswith("age,wtkg,") and "pidnum" not in lines[0]  # not released
    assert len(lines) == 2140 and lines[1].startswith("40–49,")  # age 48, released as its band
    shot(page, shots, "export")


def open_tradeoffs(page: Page, app_url: str) -> None:
    page.goto(app_url)
    see(page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
    with ran(page):
        page.get_by_role("link", name="Trade-offs").click()
    see(page.get_by_role("heading", name="Trade-offs")).to_be_visible()


def test_cheapest_combination_opens_with_a_click(page: Page, app_url: str, shots: Path):
    page.set_viewport_size({"width": 1440, "height": 1000})
    open_tradeoffs(page, app_url)
    page.get_by_text("Combine the methods").click()
    choose(page, "Risk target", "linkage attack risk (%)")
    page.get_by_role("button", name="Run the sweep").click()
    see(page.get_by_text("Cheapest setting under")).to_be_visible()
    wait_idle(page)
    page.get_by_text("Cheapest setting under").evaluate(
        "e => e.scrollIntoView({block: 'start'})")  # the verdict and the chart below it
    shot(page, shots, "tradeoffs_best")
    star = page.locator(".scatterlayer .trace").last.locator("path.point").first
    star.scroll_into_view_if_needed()
    box = star.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    see(page.locator(".hoverlayer .hovertext").first).to_be_visible()  # picked: its label
    page.mouse.click(x, y)
    see(page.get_by_role("heading", name="Protect")).to_be_visible()
    recipe = page.get_by_text("Recipe of these settings")
    recipe.click()
    see(page.locator("code").filter(has_text='"method": "band"')).to_be_visible()


def test_enter_in_a_values_field_does_not_start_a_sweep(page: Page, app_url: str):
    open_tradeoffs(page, app_url)
    values = page.get_by_label("Banding values", exact=True)
    values.fill("5, 10")
    asked = runs(page).asked
    values.press("Enter")  # a submission would ask for its run at once, before the click's
    with ran(page):
        page.get_by_role("link", name="Trade-offs").click()  # a run of the page, asked after
    assert runs(page).asked == asked + 1  # the click's alone: Enter asked for none
    expect(page.get_by_test_id("stProgress")).to_have_count(0)
    expect(page.locator(".gtitle", has_text="Risk against information loss")).to_have_count(0)
    page.get_by_role("button", name="Run the sweep").click()  # the button still runs it
    see(page.locator(".gtitle", has_text="Risk against information loss").first).to_be_visible()


def test_a_running_sweep_can_be_cancelled(page: Page, app_url: str):
    open_tradeoffs(page, app_url)
    page.get_by_text("Combine the methods").click()
    values = page.get_by_label("Banding values", exact=True)
    values.fill(", ".join(str(w) for w in range(1, 30)))  # 30 × 4 × 4 combinations
    page.get_by_role("button", name="Run the sweep").click()
    cancel = page.get_by_role("button", name="Cancel the sweep")
    see(cancel).to_be_visible()
    see(page.get_by_test_id("stProgress")).to_be_visible()
    cancel.click()
    see(page.get_by_text("The sweep was cancelled.")).to_be_visible()
    expect(cancel).to_have_count(0)
    wait_idle(page)
    expect(page.locator(".gtitle", has_text="Risk against information loss")).to_have_count(0)
