"""No one books what everyone shares (issue 39, item 2): the built-in data sets are counted once
for the server in the memory ledger (ui.infra.memory), a session that holds nothing of its own
has no entry, and its resume token (ui.resume) goes when its websocket closes; so sessions that
connect and leave take nothing from the budget, and a real upload is admitted right after 200 of
them. The ledger's own accounting of shared data is tests/test_ledger.py's."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from bench.server import alive, free_port, start_server, stop_server
from bench.st_client import StSession
from sdc_core.data.io import read_table
from sdc_core.examples import EXAMPLES
from tests.apptest import app_test
from tests.big_upload import small_numbers_csv
from tests.conftest import run_async
from ui import resume, state
from ui.infra import memory
from ui.resume import Holder, Registry

#: What the ledger counts of each built-in data set, once for the server: its table and one
#: session's results (FOOTPRINT), and, for the largest in use, what the shared caches keep of
#: the results of all the sessions (SHARED_RESULTS)
ACTG_BYTES = memory.memory_bytes(read_table(EXAMPLES["actg175"].path))
HOUSEHOLD_BYTES = memory.memory_bytes(read_table(EXAMPLES["household"].path))
ACTG = int(memory.FOOTPRINT * ACTG_BYTES) + int(memory.SHARED_RESULTS * ACTG_BYTES)
BOTH = ACTG + int(memory.FOOTPRINT * HOUSEHOLD_BYTES)
#: What a session on the example booked before: its table and one session's results
BOOKED = memory.held_bytes(read_table(EXAMPLES["actg175"].path))
MB = 10**6


@pytest.fixture(autouse=True)
def clean_ledger():
    """The ledger and the token registry are the server's: each test starts and ends with
    neither sessions nor shared data."""
    memory.LEDGER.__init__()
    resume.REGISTRY.__init__(memory.LEDGER)
    yield
    memory.LEDGER.__init__()
    resume.REGISTRY.__init__(memory.LEDGER)


def as_session(monkeypatch: pytest.MonkeyPatch, session: str) -> None:
    """Run what follows as the browser session ``session`` (outside a server, every call of
    ui.state is one session otherwise)."""
    monkeypatch.setattr(state, "session_id", lambda: session)


# -- the ledger's accounting ------------------------------------------------------------------

def test_two_hundred_sessions_on_the_example_book_it_once(monkeypatch):
    """Each session opens with the example (ui.state.load_example, as every first run does):
    the ledger counts its table once, for the server, and no session holds an entry, so an
    upload that fits beside it is admitted under a 64 MB budget that 200 bookings of it
    (2.5 MB each, 508 MB) would have filled 8 times over."""
    for i in range(200):
        as_session(monkeypatch, f"visitor-{i}")
        state.load_example()
    assert [memory.LEDGER.held(f"visitor-{i}") for i in range(200)] == [0] * 200
    assert memory.LEDGER.total() == (0, ACTG)
    need = 64 * MB - ACTG
    assert memory.LEDGER.admit("uploader", need, 64 * MB) is None
    assert memory.LEDGER.total() == (1, 64 * MB)


def test_each_built_in_data_set_is_counted_once_and_an_upload_books_its_own(monkeypatch):
    """Each built-in data set in use is counted once; what the shared caches keep of their
    results is bounded by the largest (the caches' entries are shared by all data)."""
    as_session(monkeypatch, "a")
    state.load_example("household")
    assert memory.LEDGER.total() == (0, int(memory.FOOTPRINT * HOUSEHOLD_BYTES)
                                     + int(memory.SHARED_RESULTS * HOUSEHOLD_BYTES))
    state.load_example("actg175")
    as_session(monkeypatch, "b")
    state.load_example("household")
    assert memory.LEDGER.total() == (0, BOTH)
    df = pd.DataFrame({"age": range(1000), "sex": ["F", "M"] * 500})
    state.install(df, "mine.csv", "beef", {}, state.roles())  # b's own upload: its entry
    assert memory.LEDGER.held("b") == memory.held_bytes(df)
    assert memory.LEDGER.total() == (1, BOTH + memory.held_bytes(df))
    state.load_example()  # back to the example: b gives its own data up
    assert memory.LEDGER.held("b") == 0
    assert memory.LEDGER.total() == (0, BOTH)


# -- the resume tokens of sessions with nothing of their own ----------------------------------

def test_a_session_with_nothing_to_keep_loses_its_token_when_its_websocket_closes():
    """"quick" opened a page and left (one run); "worker" did something on the example (a run
    after its first); "owner" holds an upload (its token goes with its data, ui.infra.memory)."""
    reg = Registry()
    for name in ("quick", "worker", "owner"):
        reg.register(f"t-{name}", Holder(name, None, {}), now=0.0)
    reg.used("t-worker", now=5.0)
    connected = {"quick", "worker", "owner"}

    def prune(now: float) -> list[str]:
        return reg.prune(lambda s: s in connected, lambda s: s == "owner", idle=3600.0,
                         grace=3600.0, now=now)

    assert prune(10.0) == [] and len(reg) == 3  # connected: all kept
    connected.clear()  # every tab closed
    assert prune(20.0) == ["quick"]  # at once: nothing to keep for a reload
    assert reg.spent("t-quick") and not reg.spent("t-worker")
    assert reg.take("t-quick", Holder("new", None, {}), lambda s: False) is None
    assert prune(3000.0) == []  # the work waits for a reload through the idle window
    old = reg.take("t-worker", Holder("reloaded", None, {}), lambda s: False, now=3000.0)
    assert old is not None and old.session == "worker"
    assert prune(3001.0) == []  # "reloaded" took work over: it has work to keep
    assert prune(7000.0) == ["reloaded"]  # unused for the idle window
    assert len(reg) == 1  # "owner": its token goes when the ledger frees its data
    reg.forget(["owner"])
    assert len(reg) == 0


def test_the_spent_tokens_remembered_are_bounded(monkeypatch):
    monkeypatch.setattr(resume, "SPENT_KEPT", 3)
    reg = Registry()
    for i in range(5):
        reg.register(f"t{i}", Holder(f"s{i}", None, {}), now=0.0)
    reg.prune(lambda s: False, lambda s: False, idle=60.0, grace=60.0, now=1.0)
    assert len(reg) == 0
    assert [reg.spent(f"t{i}") for i in range(5)] == [False, False, True, True, True]


def app() -> AppTest:
    return app_test()


def test_opening_the_dashboard_books_nothing_and_a_reload_of_it_starts_afresh(monkeypatch):
    """A session that opened the first page holds no entry; once its tab is closed, the next
    run of any session drops its token, and a reload of its address opens afresh, without
    saying that a session ended (it had nothing)."""
    first = app().run()
    assert not first.exception
    assert first.session_state["dataset"].is_example
    assert memory.LEDGER.total() == (0, ACTG)
    caption = " ".join(c.value for c in first.sidebar.caption)
    assert "takes nothing of its memory for this session" in caption
    assert "0 sessions hold data of their own" in caption
    token = first.query_params[resume.PARAM]
    token = token if isinstance(token, str) else token[0]
    assert len(resume.REGISTRY) == 1

    monkeypatch.setattr(state, "session_id", lambda: "reloaded")
    monkeypatch.setattr(memory, "is_active", lambda session: session == "reloaded")
    again = app()
    again.query_params[resume.PARAM] = token
    again.run()
    assert not again.exception
    assert not any("has ended" in w.value for w in again.warning)
    assert memory.LEDGER.total() == (0, ACTG)
    assert len(resume.REGISTRY) == 1  # the reloaded session's own token only


# -- a real server: 200 sessions connect and leave, then an upload -----------------------------

UPLOAD = small_numbers_csv(72_000)
BUDGET = 64 * MB


async def connect_and_leave(url: str, i: int, gate: asyncio.Semaphore) -> str:
    """A script that opens the dashboard and leaves: the first page, then the websocket
    closed; every fourth leaves before its first run has finished. Gives what failed, or
    ""."""
    async with gate:
        s = StSession(timeout=120)
        try:
            if i % 4 == 3:
                opening = asyncio.ensure_future(s.connect(url))
                await asyncio.sleep(0.05)
                opening.cancel()
                await asyncio.gather(opening, return_exceptions=True)
            else:
                await s.connect(url)
                if s.page != "Data":
                    return f"session {i} opened {s.page!r}"
            return ""
        except Exception as err:  # noqa: BLE001 — reported by the test
            return f"session {i}: {type(err).__name__}: {err}"
        finally:
            await s.close()


async def flood_then_upload(url: str) -> tuple[list[str], str, list[str], str]:
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(48))
    gate = asyncio.Semaphore(20)  # 20 at a time: 200 within about a minute on a small machine
    failures = [f for f in await asyncio.gather(
        *(connect_and_leave(url, i, gate) for i in range(200))) if f]
    s = StSession(timeout=120)
    await s.connect(url)
    try:
        before = s.text()
        await s.upload("Upload a table", "numbers.csv", UPLOAD)
        return failures, before, s.errors(), s.text()
    finally:
        await s.close()


def test_two_hundred_sessions_that_connect_and_leave_leave_room_for_an_upload(tmp_path: Path):
    """Under a 64 MB budget, which 200 bookings of the example (2.5 MB each) would have filled
    for the idle window, an upload that needs half the budget is admitted at once."""
    need = memory.upload_need(UPLOAD, "numbers.csv", read_table)
    assert 26 * BOOKED > BUDGET > need + ACTG and need > BUDGET / 2  # 26 bookings fill it
    port = free_port()
    proc = start_server(port, {"SDC_MEMORY_BUDGET": str(BUDGET)}, log=tmp_path / "server.log")
    try:
        failures, before, errors, after = run_async(flood_then_upload(f"http://127.0.0.1:{port}"))
        assert failures == []
        assert errors == []  # admitted at once
        assert "numbers.csv" in after and "72,000" in after
        assert "0 sessions hold data of their own" in before
        assert "1 session holds data of its own" in after
        assert alive(port)
    finally:
        stop_server(proc)
