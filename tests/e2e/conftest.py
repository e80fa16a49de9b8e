"""Browser tests: headless Chromium against a real server (``app_url``, tests/conftest.py)."""

import os
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--no-first-run", "--disable-quic"]


def wait_idle(page: Page) -> None:
    """Until the app's script run is over (after a moment for widgets that debounce)."""
    page.wait_for_timeout(300)
    page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(
        state="attached", timeout=60_000)


def choose(page: Page, label: str, option: str, attempts: int = 3) -> None:
    """Choose ``option`` in the select box ``label``: open its list (again, if a run of the
    page closed it before the option showed) and click the option."""
    box = page.get_by_test_id("stSelectbox").filter(has_text=label)
    wanted = page.get_by_role("option", name=option, exact=True)
    for attempt in range(attempts):
        wait_idle(page)
        box.click()
        try:
            wanted.wait_for(state="visible", timeout=10_000)
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
            if attempt == attempts - 1:
                raise
            continue
        wanted.click()
        return


def pick_options(page: Page, label: str, names: list[str], clear: bool = False) -> None:
    """Pick ``names`` one by one in the multiselect ``label`` (after clearing it)."""
    box = page.get_by_test_id("stMultiSelect").filter(has_text=label)
    if clear:
        box.get_by_role("button", name="Clear all").click()
        wait_idle(page)
    for name in names:
        field = box.locator("input")
        field.click()
        field.fill(name)
        page.get_by_role("option", name=name, exact=True).click()
        page.keyboard.press("Escape")
        wait_idle(page)


def band_age(page: Page, presses: int = 10) -> Locator:
    """Move the Protect page's age band width slider ``presses`` steps right with the keyboard
    (from 0: width ``presses``); give the slider."""
    slider = page.get_by_role("slider", name="Band width of age")
    slider.focus()
    for _ in range(presses):
        slider.press("ArrowRight")
    return slider


def shot(page: Page, folder: Path, name: str) -> None:
    """A screenshot of the whole page, once the run is over and the page has settled, as
    ``folder/name.png``."""
    wait_idle(page)
    page.wait_for_timeout(700)
    page.screenshot(path=folder / f"{name}.png", full_page=True)


#: Metric labels and values, and button labels, whose text is wider than their box (the
#: browser cuts them).
CUT = """() => [...document.querySelectorAll(
    '[data-testid=stMetricLabel], [data-testid=stMetricLabel] *, '
    + '[data-testid=stMetricValue], [data-testid=stMetricValue] *, '
    + 'button[data-testid^=stBaseButton], button[data-testid^=stBaseButton] *')]
  .filter(e => e.scrollWidth > e.clientWidth + 1)
  .map(e => `${e.textContent.trim()} (${e.scrollWidth} px in ${e.clientWidth})`)"""


#: The label of the table of numbers under each chart
TABLE_LABEL = "Numbers behind this chart"


def focused(locator) -> bool:
    """Whether ``locator`` has the keyboard focus."""
    return locator.evaluate("el => el === document.activeElement")


def tab_to(page: Page, target, limit: int = 100) -> int:
    """Press Tab until ``target`` has the keyboard focus; the number of presses. The budget
    was 80; the Protect page's band width slider is now 89 presses from the table under its
    chart (76 before), because of controls added since: the "Every attacker of the linkage
    attack" expander, the "Add N more like …" button of PRAM (on the example data) and the
    analysis panel's table of every term (a data frame: its toolbar and columns take 12)."""
    for presses in range(1, limit + 1):
        page.keyboard.press("Tab")
        if focused(target):
            return presses
    active = page.evaluate("() => document.activeElement.outerHTML.slice(0, 200)")
    raise AssertionError(f"not reached with {limit} Tab presses; focus is on {active}")


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"Chromium is required in CI and was not found at {CHROMIUM}")
        pytest.skip("Debian chromium is not installed (make test installs it as root)")
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": ARGS}


@pytest.fixture(scope="session")
def shots(pytestconfig) -> Path:
    """Where screenshots go: the pytest output folder (``--output``, default test-results)."""
    folder = Path(pytestconfig.getoption("output", "test-results")) / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder
