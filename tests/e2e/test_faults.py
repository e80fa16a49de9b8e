"""Faults injected into a server of their own (tests/e2e/faults/sitecustomize.py), one server
for the tests of this module (each fault touches nothing the other test does):

* a computation that raises stops one page of one session: that session sees a message (no
  traceback) and keeps its data; another session on the same server goes on unaffected;
* a widget's callback that fails says so in one line, in a real browser: the band width slider
  of the Protect page sits in a fragment, whose own rerun would never draw the message (AppTest
  reruns the whole script for every widget, so it cannot tell)."""

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from bench.server import ROOT, free_port, start_server, stop_server
from tests.e2e.conftest import band_age, give_files, new_page, ran, see, wait_idle

pytestmark = pytest.mark.e2e
FAULTS = Path(__file__).with_name("faults")


@pytest.fixture(scope="module")
def fault_server() -> Iterator[tuple[str, subprocess.Popen]]:
    """The address of a server with the faults, and its process."""
    port = free_port()
    proc = start_server(port, env={"PYTHONPATH": f"{FAULTS}:{ROOT}"})
    try:
        yield f"http://127.0.0.1:{port}", proc
    finally:
        stop_server(proc)


def test_a_failing_computation_stays_in_its_session(
        browser: Browser, tmp_path: Path, fault_server: tuple[str, subprocess.Popen]):
    url, proc = fault_server
    csv = tmp_path / "faulty.csv"
    csv.write_text("fault_trigger,age,sex\n" + "".join(
        f"{i % 3},{20 + i % 50},{'FM'[i % 2]}\n" for i in range(200)))
    a, b = (new_page(browser) for _ in range(2))
    try:
        for page in (a, b):
            page.goto(f"{url}/")
            see(page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
        give_files(a, csv)
        see(a.get_by_test_id("stSidebar")).to_contain_text("faulty.csv")
        a.get_by_role("link", name="Risk").click()
        see(a.get_by_text("This page could not be shown: an unexpected RuntimeError "
                          "(injected fault)")).to_be_visible()
        expect(a.get_by_test_id("stException")).to_have_count(0)  # no traceback

        b.get_by_role("link", name="Risk").click()  # the other session, same page, same time
        see(b.get_by_role("heading", name="Disclosure risk")).to_be_visible()
        see(b.get_by_test_id("stMetricValue").first).to_have_text("182 (8.51 %)")
        expect(b.get_by_text("could not be shown")).to_have_count(0)

        a.get_by_role("link", name="Data").click()  # the failed session kept its data
        see(a.get_by_role("heading", name="Data", exact=True)).to_be_visible()
        see(a.get_by_test_id("stSidebar")).to_contain_text("faulty.csv")
        expect(a.get_by_text("could not be shown")).to_have_count(0)
        assert proc.poll() is None
    finally:
        for page in (a, b):
            page.context.close()


def test_a_failing_callback_inside_a_fragment_is_said_in_one_line(
        page: Page, fault_server: tuple[str, subprocess.Popen]):
    url, proc = fault_server
    page.goto(f"{url}/protect")
    see(page.get_by_role("heading", name="Protect")).to_be_visible()
    wait_idle(page)
    band_age(page, 13)
    see(page.get_by_text("This change could not be made: an unexpected RuntimeError "
                         "(injected callback fault)")).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)  # no traceback
    with ran(page):
        page.get_by_role("slider", name="Band width of age").press("ArrowRight")  # 14 works
    see(page.get_by_text("Banding of age:", exact=False).first).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)
    assert proc.poll() is None
