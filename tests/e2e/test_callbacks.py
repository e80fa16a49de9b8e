"""A widget's callback that fails says so in one line, in a real browser: the band width slider
of the Protect page sits in a fragment, whose own rerun would never draw the message (AppTest
reruns the whole script for every widget, so it cannot tell)."""

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from bench.server import ROOT, free_port, start_server, stop_server
from tests.e2e.conftest import band_age, ran, see, wait_idle

pytestmark = pytest.mark.e2e
FAULT = Path(__file__).with_name("callback_fault")  # its sitecustomize fails band width 13


def test_a_failing_callback_inside_a_fragment_is_said_in_one_line(page: Page):
    port = free_port()
    proc = start_server(port, env={"PYTHONPATH": f"{FAULT}:{ROOT}"})
    try:
        page.goto(f"http://127.0.0.1:{port}/protect")
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
    finally:
        stop_server(proc)
