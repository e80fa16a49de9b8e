"""A page left open while the server restarts: Streamlit's client reconnects to the new server
by itself, and at the next interaction the page says that the session expired (its data is
gone) instead of going blank or silently showing other data."""

from playwright.sync_api import Page, TimeoutError, expect

from bench.server import free_port, start_server, stop_server

RUN = "() => new URLSearchParams(location.search).get('run')"


def test_a_server_restart_says_the_session_expired(page: Page):
    port = free_port()
    proc = start_server(port)
    try:
        page.goto(f"http://127.0.0.1:{port}/")
        expect(page.get_by_role("heading", name="Data")).to_be_visible(timeout=30_000)
        page.wait_for_function(f"() => ({RUN})() !== null", timeout=15_000)
        first_run = page.evaluate(RUN)
        # every script the first page draws with must have arrived before the server goes: a
        # module import that fails while it is away is remembered by the browser for the page's
        # life, and the page would then draw that element as an error after the restart
        expect(page.get_by_role("button", name="Load built-in data")).to_be_visible()
        page.wait_for_load_state("networkidle")
        stop_server(proc)
        proc = start_server(port)  # the same address: the open page reconnects by itself
        notice = page.get_by_text("The server was restarted since this page was opened")
        for _ in range(30):  # until the client has reconnected (its back-off takes seconds;
            # while it is away the page's buttons are disabled and a click waits)
            try:
                page.get_by_role("button", name="Load built-in data").click(timeout=5000)
            except TimeoutError:
                continue
            try:  # the new server's first run imports the modules: seconds on a busy machine
                notice.wait_for(timeout=30_000)
                break
            except TimeoutError:  # clicked as the client went away: the click was lost
                continue
        expect(notice).to_be_visible()
        heading = page.get_by_role("heading", name="Data")
        expect(heading).to_have_count(1)  # the old page's heading goes when the new run ends
        expect(heading).to_be_visible()
        assert page.evaluate(RUN) not in (None, first_run)  # now names the new server
    finally:
        stop_server(proc)
