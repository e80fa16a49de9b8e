"""Accessibility (WCAG 2.1 AA) in headless Chromium: axe-core on every page, and the main
controls operated from the keyboard alone.

axe-core is the npm package pinned in package.json / package-lock.json; `make test` installs it
with `npm ci` into node_modules/. Nothing is downloaded here: without it the test skips on a
developer's machine and fails under CI=true.
"""

import os
from pathlib import Path

import pytest
from playwright.sync_api import Page

from tests.e2e.conftest import TABLE_LABEL, focused, painted, see, tab_to, tile, wait_idle

pytestmark = pytest.mark.e2e

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = ("serious", "critical")

# No rule is disabled and no element is excluded: every serious or critical finding of axe's
# default rule set (WCAG 2.0/2.1 A and AA plus best practices) fails the test. Should a finding
# sit inside Streamlit's own widgets, where the app cannot fix it, exclude exactly that rule on
# exactly those elements here, with the reason: {"rule-id": ["css selector", ...]}.
EXCLUDED: dict[str, list[str]] = {}


@pytest.fixture(scope="session")
def axe_script() -> Path:
    if not AXE.exists():
        message = (f"axe-core is missing ({AXE}): run `npm ci --no-audit --no-fund` "
                   "(make test does)")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return AXE


def axe_violations(page: Page, axe_script: Path) -> list[dict]:
    """axe-core's violations on the page as it is now (the script is injected once per
    document; navigating by clicking keeps the document)."""
    painted(page)  # the charts and the data grids drawn
    if page.evaluate("typeof window.axe") == "undefined":
        # run through the DevTools protocol, as the test's own code: the app's
        # Content-Security-Policy (ui/infra/server.py) refuses the inline <script> add_script_tag
        # writes, as it would refuse one an attacker slipped into the page
        page.evaluate("() => {\n" + axe_script.read_text(encoding="utf-8") + "\n}")
    return page.evaluate(
        """async (excluded) => {
            const result = await axe.run(document, {resultTypes: ["violations"]});
            return result.violations.map(v => ({
                id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl,
                nodes: v.nodes
                    .filter(n => !(excluded[v.id] || []).some(s => {
                        const el = document.querySelector(n.target[0]);
                        return el !== null && el.closest(s) !== null;
                    }))
                    .map(n => ({target: n.target, html: n.html, summary: n.failureSummary}))
            })).filter(v => v.nodes.length > 0);
        }""", EXCLUDED)


def describe(page_name: str, violations: list[dict]) -> str:
    lines = []
    for v in violations:
        lines.append(f"[{page_name}] {v['id']} ({v['impact']}): {v['help']} — {v['helpUrl']} "
                     f"— {len(v['nodes'])} element(s)")
        for node in v["nodes"][:3]:
            lines.append(f"    {' '.join(node['target'])}\n      {node['html'][:160]}\n      "
                         + (node["summary"] or "").replace("\n", "\n      ")[:400])
    return "\n".join(lines)


def open_chart_table(page: Page) -> None:
    """Expand the first 'Numbers behind this chart', so that its table is checked too."""
    page.get_by_test_id("stExpander").filter(has_text=TABLE_LABEL).first \
        .get_by_text(TABLE_LABEL).click()
    see(page.get_by_test_id("stExpander").filter(has_text=TABLE_LABEL).first
           .get_by_test_id("stDataFrame")).to_be_visible()


def test_every_page_has_no_serious_accessibility_violation(page: Page, app_url: str,
                                                            axe_script: Path):
    page.set_viewport_size({"width": 1440, "height": 1000})
    page.goto(app_url)
    see(page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
    found: dict[str, list[dict]] = {}

    def check(name: str) -> None:
        found[name] = axe_violations(page, axe_script)

    check("Data")
    page.get_by_role("link", name="Risk").click()
    see(page.get_by_role("heading", name="Disclosure risk")).to_be_visible()
    open_chart_table(page)
    check("Risk")

    page.get_by_role("link", name="Protect").click()
    see(page.get_by_role("heading", name="Protect")).to_be_visible()
    slider = page.get_by_role("slider", name="Band width of age")
    slider.focus()
    slider.press("End")
    see(page.locator(".gtitle", has_text="age: original and protected values")) \
        .to_be_visible()
    open_chart_table(page)
    check("Protect")

    page.get_by_role("link", name="Trade-offs").click()
    page.get_by_role("button", name="Run the sweep").click()
    see(page.locator(".gtitle", has_text="Risk against information loss")) \
        .to_be_visible()
    see(page.locator("[data-testid='stDataFrame']:visible").first).to_be_visible()  # its table
    check("Trade-offs")

    page.get_by_role("link", name="Randomized response lab").click()
    see(page.locator(".gtitle", has_text="Spread of the estimate")).to_be_visible()
    check("Randomized response lab")

    page.get_by_role("link", name="Tables", exact=True).click()
    page.get_by_text("Example: the pet survey").click()
    see(page.get_by_text("Elephant 0–4; Penguin 0–4")).to_be_visible()
    check("Tables")

    page.get_by_role("link", name="Export").click()
    see(page.get_by_role("button", name="Download the report (HTML)")).to_be_visible()
    check("Export")

    page.get_by_role("link", name="Lessons").click()
    see(page.get_by_role("heading", name="1. Who is unique?")).to_be_visible()
    check("Lessons")
    page.get_by_text("4. Randomized response").click()
    see(page.locator(".gtitle", has_text="Spread of the estimate")).to_be_visible()
    check("Lessons: randomized response")
    page.get_by_role("button", name="Copy link to this state").click()
    see(page.get_by_test_id("stCode")).to_be_visible()
    check("Copy link to this state")

    blocking = {name: [v for v in vs if v["impact"] in BLOCKING] for name, vs in found.items()}
    report = "\n".join(describe(name, vs) for name, vs in blocking.items() if vs)
    assert not report, "axe-core found serious or critical violations:\n" + report


def test_main_controls_work_from_the_keyboard(page: Page, app_url: str):
    page.set_viewport_size({"width": 1440, "height": 1000})
    page.goto(app_url)
    see(page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
    wait_idle(page)

    # sidebar navigation: Tab to the page link, Enter
    link = page.get_by_test_id("stSidebarNav").get_by_role("link", name="Protect")
    tab_to(page, link)
    page.keyboard.press("Enter")
    see(page.get_by_role("heading", name="Protect")).to_be_visible()
    wait_idle(page)

    # the band width slider: reached by Tab, moved by the arrow keys, the risk follows
    linkage = tile(page, "Linkage attack re-identifications").get_by_test_id("stMetricValue")
    see(linkage).to_have_text("182 (8.51 %)")
    slider = page.get_by_role("slider", name="Band width of age")
    tab_to(page, slider)
    for _ in range(10):
        page.keyboard.press("ArrowRight")
    see(linkage).to_have_text("25 (1.17 %)")
    wait_idle(page)
    assert focused(slider)  # the rerun does not steal the focus
    page.keyboard.press("ArrowRight")
    see(linkage).to_have_text("21 (0.98 %)")  # band width 11
    wait_idle(page)

    # the numbers behind the chart open from the keyboard too
    box = page.get_by_test_id("stExpander").filter(has_text=TABLE_LABEL).first
    summary = box.locator("summary")
    tab_to(page, summary)
    page.keyboard.press("Enter")
    see(box.get_by_test_id("stDataFrame")).to_be_visible()
