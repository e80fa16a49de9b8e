"""A page left open while the server restarts: Streamlit's client reconnects to the new server
by itself, and at the next interaction the page says that the session expired (its data is
gone) instead of going blank or silently showing other data."""

from playwright.sync_api import Page, TimeoutError

from bench.server import free_port, start_server, stop_server
from tests.e2e.conftest import follow, see

RUN = "() => new URLSearchParams(location.search).get('run')"


def test_a_server_restart_says_the_session_expired(page: Page):
    port = free_port()
    proc = start_server(port)
    try:
        page.goto(f"http://127.0.0.1:{port}/")
        see(page.get_by_role("heading", name="Data")).to_be_visible()
        follow(page, lambda ms: page.wait_for_function(f"() => ({RUN})() !== null",
                                                        timeout=ms))
        first_run = page.evaluate(RUN)
        # every script the first page draws with must have arrived before the server goes: a
        # module import that fails while it is away is remembered by the browser for the page's
        # life, and the page would then draw that element as an error after the restart
        see(page.get_by_role("button", name="Load built-in data")).to_be_visible()
        page.wait_for_load_state("networkidle")
        stop_server(proc)
        proc = start_server(port)  # the same address: the open page reconnects by itself
        notice = page.get_by_text("The server was restarted since this page was opened")
        connected = page.locator("[data-testid='stApp'][data-test-connection-state='CONNECTED']")
        for _ in range(30):
            # until the client has reconnected (its back-off takes seconds; while it is away
            # the page's buttons are disabled and a click waits)
            follow(page, lambda ms: connected.wait_for(state="attached", timeout=ms))
            try:
                page.get_by_role("button", name="Load built-in data").click(timeout=5000)
            except TimeoutError:  # it went away again before the click
                continue
            try:  # the new server's first run imports the modules: seconds on a busy machine
                follow(page, lambda ms: notice.wait_for(timeout=ms))
                break
            except TimeoutError:  # clicked as the client went away: the click was lost
                continue
        see(notice).to_be_visible()
        heading = page.get_by_role("heading", name="Data")
        see(heading).to_have_count(1)  # the old page's heading goes when the new run ends
        see(heading).to_be_visible()
        assert page.evaluate(RUN) not in (None, first_run)  # now names the new server
    finally:
        stop_server(proc)
