"""A browser that goes away in the middle of a sweep does not leave the sweep running: the CPU
of the server and its worker processes (the sweep runs in one), busy while the sweep runs,
falls back to idle once the tab is closed."""

import time

import pytest
from playwright.sync_api import Browser

from bench.server import free_port, start_server, stop_server, tree_cpu_seconds
from tests.e2e.conftest import new_page, ran, see

pytestmark = pytest.mark.e2e


def cpu_over(pid: int, seconds: float) -> float:
    """CPU seconds the process and its workers spend during the next ``seconds`` of
    wall-clock time."""
    start = tree_cpu_seconds(pid)
    time.sleep(seconds)
    return tree_cpu_seconds(pid) - start


def test_closing_the_tab_stops_the_sweep(browser: Browser):
    port = free_port()
    proc = start_server(port)
    try:
        context = browser.new_context()
        page = new_page(context)
        page.goto(f"http://127.0.0.1:{port}/")
        see(page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
        with ran(page):
            page.get_by_role("link", name="Trade-offs").click()
        see(page.get_by_role("heading", name="Trade-offs")).to_be_visible()
        seeds = page.get_by_label("Seeds per randomised setting")
        seeds.fill("20")
        page.get_by_label("Banding values", exact=True).fill(", ".join(map(str, range(2, 22))))
        page.get_by_label("PRAM values", exact=True).fill(
            ", ".join(f"0.{i:02d}" for i in range(1, 21)))
        page.get_by_text("Combine the methods").click()  # 441 combinations: a long sweep
        page.get_by_role("button", name="Run the sweep").click()
        see(page.get_by_role("button", name="Cancel the sweep")).to_be_visible()

        busy = cpu_over(proc.pid, 3.0)
        assert busy > 1.0, f"the sweep should keep a core busy, the server used {busy:.2f} s"
        context.close()  # the tab goes away: its websocket closes mid-sweep
        # the stop takes effect at the sweep's next progress step, later on a busy machine:
        # until the server is idle, or a minute (the sweep alone runs for minutes)
        deadline = time.monotonic() + 60
        idle = cpu_over(proc.pid, 3.0)
        while idle >= 0.3 and time.monotonic() < deadline:
            idle = cpu_over(proc.pid, 3.0)
        assert idle < 0.3, f"the sweep kept running after the tab closed: {idle:.2f} s of CPU"
        assert proc.poll() is None
    finally:
        stop_server(proc)
