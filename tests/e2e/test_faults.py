"""A computation that raises stops one page of one session: that session sees a message (no
traceback) and keeps its data; another session on the same server goes on unaffected."""

from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from bench.server import ROOT, free_port, start_server, stop_server
from tests.e2e.conftest import give_files, new_page, see

pytestmark = pytest.mark.e2e
FAULTS = Path(__file__).with_name("faults")  # its sitecustomize makes one data set's risk fail


def test_a_failing_computation_stays_in_its_session(browser: Browser, tmp_path: Path):
    port = free_port()
    proc = start_server(port, env={"PYTHONPATH": f"{FAULTS}:{ROOT}"})
    url = f"http://127.0.0.1:{port}/"
    csv = tmp_path / "faulty.csv"
    csv.write_text("fault_trigger,age,sex\n" + "".join(
        f"{i % 3},{20 + i % 50},{'FM'[i % 2]}\n" for i in range(200)))
    try:
        a, b = (new_page(browser) for _ in range(2))
        for page in (a, b):
            page.goto(url)
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
        stop_server(proc)
