"""In headless Chromium: a lesson link lands on its lesson with its data, a task is completed by
moving sliders, and the page's own "Copy link to this state" opens the same state afresh."""

from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from tests.e2e.conftest import band_age, new_page, ran, see, wait_idle
from ui.logic import lessons

pytestmark = pytest.mark.e2e


def slide(page: Page, label: str, steps: int) -> None:
    """Move the slider ``label`` by ``steps`` of its step, with the keyboard, as a user can."""
    thumb = page.get_by_test_id("stSlider").filter(has_text=label).get_by_role("slider")
    thumb.focus()
    with ran(page):
        for _ in range(steps):
            thumb.press("ArrowRight")


def test_lesson_link_and_task(page: Page, browser: Browser, app_url: str, shots: Path):
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{app_url}/lessons?data=household&lesson=coarsen")
    see(page.get_by_role("heading", name="2. Coarsen")).to_be_visible()
    sidebar = page.get_by_test_id("stSidebar")
    see(sidebar).to_contain_text("Household survey")
    see(sidebar).to_contain_text("Quasi-identifiers: region, age, sex, household_size")
    see(page.get_by_text("Not yet:")).to_be_visible()
    see(page.get_by_text(f"0 of {len(lessons.LESSONS)} lessons done")).to_be_visible()

    best = lessons.best_coarsening()
    slide(page, "Band width of age", best.width)
    see(page.get_by_text("Task met")).not_to_be_visible()  # bands alone are not enough
    slide(page, "Top-code age at", lessons.TOPS.index(best.top))
    see(page.get_by_text("Task met")).to_be_visible()
    see(page.get_by_text(f"1 of {len(lessons.LESSONS)} lessons done")).to_be_visible()
    see(page.get_by_test_id("stMarkdown").filter(has_text="2. Coarsen")).to_be_visible()
    page.screenshot(path=shots / "lessons.png", full_page=True)

    # the page's own link opens the same place in a fresh session (a new browser context)
    with ran(page):
        page.get_by_role("button", name="Copy link to this state").click()
    see(page.get_by_test_id("stCode")).to_be_visible()
    link = page.get_by_test_id("stCode").inner_text().strip()
    assert link.startswith(f"{app_url}/lessons?") and "lesson=coarsen" in link
    assert "data=household" in link
    fresh = new_page(browser)
    fresh.set_viewport_size({"width": 1280, "height": 720})
    fresh.goto(link)
    see(fresh.get_by_role("heading", name="2. Coarsen")).to_be_visible()
    see(fresh.get_by_test_id("stSidebar")).to_contain_text("Household survey")
    # progress is per session
    see(fresh.get_by_text(f"0 of {len(lessons.LESSONS)} lessons done")).to_be_visible()
    fresh.context.close()


def test_projector_view_reads_at_1280_by_720(page: Page, app_url: str, shots: Path):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{app_url}/protect?data=household&view=projector")
    see(page.get_by_role("heading", name="Protect")).to_be_visible()
    wait_idle(page)
    values = page.get_by_test_id("stMetricValue")
    see(values.first).to_be_visible()
    size = values.first.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
    assert size >= 48  # about three times body text: readable from the back of a room
    assert page.get_by_role("switch", name="Projector view").is_checked()
    page.screenshot(path=shots / "projector.png")
    with ran(page):
        page.get_by_test_id("stSidebar").get_by_text("Projector view").click()
    assert values.first.evaluate("e => parseFloat(getComputedStyle(e).fontSize)") < size


def test_projector_metric_labels_wrap_instead_of_being_cut(page: Page, app_url: str):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{app_url}/lessons?data=household&lesson=coarsen&view=projector")
    labels = page.get_by_test_id("stMetricLabel")
    see(labels.nth(2)).to_be_visible()  # the third tile drawn, not only the first
    wait_idle(page)
    assert labels.count() == 3
    for i in range(3):  # the whole label is shown: nothing cut off or running into the next
        cut = labels.nth(i).get_by_test_id("stMarkdownContainer").evaluate(
            "e => e.scrollWidth > e.clientWidth + 1")
        assert not cut, labels.nth(i).inner_text()


#: The parts of a metric element and everything in them that are cut: wider than their box
#: (a "…" at the end) or running out of the metric's column.
CUT_PARTS = """m => { const box = m.getBoundingClientRect();
  return [m, ...m.querySelectorAll('*')].filter(e => !(e instanceof SVGElement) && (
    e.scrollWidth > e.clientWidth + 1 || e.getBoundingClientRect().right > box.right + 1))
    .map(e => (e.dataset.testid || e.tagName) + ' ' + e.scrollWidth + ' > ' + e.clientWidth
              + ': ' + e.innerText); }"""


def test_projector_metric_deltas_and_figures_are_not_cut_at_1280_by_720(page: Page,
                                                                         app_url: str):
    """Three metrics side by side beside the Protect page's controls are about 140 px wide in
    the projector view at 1280×720: their changes ("-1,520 (was 2,186)") and figures
    ("666 (22.20 %)") wrap instead of ending in "…"."""
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{app_url}/protect?data=household&view=projector")
    see(page.get_by_test_id("stMetricValue").first).to_be_visible()
    wait_idle(page)
    band_age(page, 10)
    deltas = page.get_by_test_id("stMetricDelta")
    see(deltas.first).to_be_visible()
    wait_idle(page)
    metrics = [m for m in page.get_by_test_id("stMetric").all() if m.is_visible()]
    assert sum(m.get_by_test_id("stMetricDelta").count() for m in metrics) >= 2
    for metric in metrics:
        assert metric.evaluate(CUT_PARTS) == [], metric.inner_text()
    first = page.get_by_test_id("stMetricValue").first
    assert first.evaluate("e => parseFloat(getComputedStyle(e).fontSize)") >= 48
