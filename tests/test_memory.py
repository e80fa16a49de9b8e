"""Memory admission (ui.infra.memory): the ledger, the estimate of an upload, and what a
session sees
when its upload is refused or its data is freed."""

from __future__ import annotations

import gc
import time
import tracemalloc

import numpy as np
import pandas as pd
import pytest

from sdc_core.data.io import read_table
from tests.apptest import app_test
from tests.conftest import plain
from tests.hostile_files import BOMBS
from ui import resume, state
from ui.infra import memory
from ui.logic.session import Table


def survey_csv(n: int, seed: int = 0) -> bytes:
    g = np.random.default_rng(seed)
    df = pd.DataFrame({"region": g.choice([f"Region {i}" for i in range(40)], n),
                       "age": g.integers(16, 95, n), "sex": g.choice(["F", "M"], n),
                       "income": np.round(g.lognormal(10, 0.6, n), 2),
                       "job": g.choice(["farmer", "clerk", "teacher", "nurse"], n)})
    return df.to_csv(index=False).encode()


@pytest.fixture(autouse=True)
def clean_ledger():
    """The ledger is the server's: each test starts and ends without other sessions."""
    memory.LEDGER.__init__()
    yield
    memory.LEDGER.__init__()


@pytest.mark.parametrize(("text", "size"), [("8GB", 8 * 10**9), ("512 MB", 512 * 10**6),
                                            ("1.5GiB", int(1.5 * 2**30)), ("1000", 1000)])
def test_sizes_are_read(text, size):
    assert memory.parse_size(text) == size


@pytest.mark.parametrize("text", ["lots", "8 GBs", "-1GB", "0"])
def test_bad_sizes_are_refused(text):
    with pytest.raises(ValueError, match="not a size"):
        memory.parse_size(text)


def test_a_bad_setting_falls_back_to_the_default_and_is_reported(monkeypatch):
    monkeypatch.setenv(memory.BUDGET_ENV, "lots")
    monkeypatch.setenv(memory.IDLE_ENV, "-5")
    assert memory.budget() == memory.machine_memory() // 2
    assert memory.idle_seconds() == 60 * memory.IDLE_MINUTES
    assert len(memory.settings_problems()) == 2
    at = app_test(timeout=60).run()
    assert not at.exception
    assert sum("Server setting ignored" in e.value for e in at.error) == 2


def test_the_ledger_admits_within_the_budget_and_refuses_beyond():
    ledger = memory.Ledger()
    assert ledger.admit("a", 600, limit=1000) is None
    ledger.hold("a", 600, "a.csv", Table(None))
    refused = ledger.admit("b", 401, limit=1000)
    assert refused.startswith("the server is busy: 1 other session holds 600 bytes of its "
                              "1.0 kB budget")
    assert refused.endswith("try a smaller file or later")
    assert ledger.admit("b", 400, limit=1000) is None
    ledger.hold("b", 300, "b.csv", Table(None))
    assert ledger.total() == (2, 900)
    assert ledger.admit("a", 700, limit=1000) is None  # its own data is replaced
    ledger.cancel("a")
    assert "more than its memory budget" in memory.Ledger().admit("a", 1001, limit=1000)


def test_uploads_admitted_at_the_same_time_reserve_their_room():
    """Eight sessions ask at once, before any has finished reading: the reservations of those
    admitted count against the others, so no more are admitted than fit."""
    ledger = memory.Ledger()
    answers = [ledger.admit(f"s{i}", 300, limit=1000) for i in range(8)]
    assert [a is None for a in answers] == [True] * 3 + [False] * 5
    assert answers[3].startswith("the server is busy: 3 other sessions hold 900 bytes")
    assert ledger.total() == (3, 900)
    ledger.hold("s0", 250, "s0.csv", Table(None))  # read: the reservation becomes the entry
    ledger.cancel("s1")  # the file failed to read: its room is free again
    assert ledger.total() == (2, 550)
    assert ledger.admit("s3", 450, limit=1000) is None
    assert ledger.admit("s4", 1, limit=1000) is not None


def test_a_reservation_whose_session_went_away_is_dropped():
    ledger = memory.Ledger()
    assert ledger.admit("gone", 600, limit=1000, now=0.0) is None
    assert ledger.admit("other", 600, limit=1000) is not None
    ledger.prune(lambda s: s != "gone", idle=3600.0, grace=120.0, now=60.0)
    assert ledger.total() == (1, 600)  # within the reconnect grace it is kept
    ledger.prune(lambda s: s != "gone", idle=3600.0, grace=120.0, now=121.0)
    assert ledger.total() == (0, 0)
    assert ledger.admit("other", 600, limit=1000) is None


def test_ended_and_idle_sessions_are_freed_and_told_once():
    ledger = memory.Ledger()
    tables = {s: Table(pd.DataFrame({"x": [1, 2]})) for s in "abc"}
    for s in "abc":
        ledger.hold(s, 100, f"{s}.csv", tables[s], now=0.0)
    ledger.touch("c", now=3000.0)
    away = {"a", "c"}  # "c" reconnects within the grace period, "a" never does
    assert ledger.prune(lambda s: s not in away, idle=3600.0, grace=120.0, now=100.0) == []
    away = {"a"}
    assert ledger.prune(lambda s: s not in away, idle=3600.0, grace=120.0, now=200.0) == []
    away = {"a", "c"}
    freed = ledger.prune(lambda s: s not in away, idle=3600.0, grace=120.0, now=4000.0)
    assert sorted(freed) == ["a", "b"]  # "a" ended, "b" idle; "c" is only just away
    assert tables["a"].df is None and tables["b"].df is None and tables["c"].df is not None
    assert ledger.total() == (1, 100)
    assert ledger.freed("a") is None  # the session ended: nobody to tell
    assert ledger.freed("b") == ("b.csv was closed after 60 minutes without use, to free the "
                                 "server's memory for others")
    assert ledger.freed("b") is None


def test_an_upload_estimate_is_close_to_what_it_takes():
    """The estimate from the first rows is within 20 % of the whole table's footprint."""
    raw = survey_csv(60_000)
    held = memory.held_bytes(read_table(raw, "s.csv"))
    estimate = memory.estimate_upload(raw, "s.csv", read_table)
    assert 0.8 * held <= estimate <= 1.2 * held
    # admitted while it is read: also its bytes and the parser's, a multiple of its size
    assert memory.upload_need(raw, "s.csv", read_table) == \
        estimate + int(memory.LOADING * len(raw))
    small = survey_csv(500)
    assert memory.estimate_upload(small, "s.csv", read_table) == \
        memory.held_bytes(read_table(small, "s.csv"))


def test_an_upload_beyond_the_budget_is_refused_and_the_data_set_stays(monkeypatch):
    # room for the upload (10 MB) beside the example, which the server holds once (26 MB with
    # the results its caches may keep), but not beside someone else's 30 MB too
    monkeypatch.setenv(memory.BUDGET_ENV, "38MB")
    memory.LEDGER.hold("someone-else", 30 * 10**6, "big.csv", Table(None))
    at = app_test(timeout=60).run()
    raw = survey_csv(20_000)
    at.file_uploader[0].set_value(("survey.csv", raw, "text/csv")).run()
    assert not at.exception
    assert len(at.error) == 1
    message = plain(at.error[0].value)
    assert "The file was not loaded: the server is busy: 1 other session holds 30.0 MB" in message
    assert "try a smaller file or later" in message
    assert at.session_state["dataset"].is_example
    assert "pending_upload" not in at.session_state
    memory.LEDGER.release("someone-else")  # room again: the same file now loads
    at.file_uploader[0].set_value(("survey.csv", raw, "text/csv")).run()
    assert not at.error and at.session_state["dataset"].name == "survey.csv"


def test_an_idle_session_is_freed_and_told_when_it_returns(monkeypatch):
    at = app_test(timeout=60).run()
    at.file_uploader[0].set_value(("survey.csv", survey_csv(300), "text/csv")).run()
    assert at.session_state["dataset"].name == "survey.csv"
    sidebar = " ".join(c.value for c in at.sidebar.caption)
    assert "This data set takes about" in sidebar and "1 session holds" in sidebar
    table = at.session_state["dataset"].table
    memory.LEDGER.prune(lambda s: True, idle=60.0, grace=120.0, now=time.time() + 3600)
    assert table.df is None  # freed at once, while the tab is still open
    # AppTest reruns only the page, not the entry point: its first step runs here
    entry = app_test(BEGIN, timeout=60)
    entry.session_state["dataset"] = at.session_state["dataset"]  # the same session's state
    entry.run()
    assert not entry.exception
    warning = entry.warning[0].value
    assert warning.startswith("survey.csv was closed after 1 minutes without use")
    assert "The example data set is open instead" in warning
    assert entry.session_state["dataset"].is_example
    entry.run()
    assert not entry.warning  # said once


BEGIN = """
from ui.page import begin_run
begin_run()
"""


def test_a_page_left_open_across_a_server_restart_says_the_session_expired():
    from ui.state import SERVER_RUN

    at = app_test(timeout=60)
    at.query_params["run"] = "0ld5e55"  # the address of a page opened before the restart
    at.run()
    assert not at.exception
    assert at.warning[0].value.startswith("The server was restarted since this page was opened")
    assert at.query_params["run"] == SERVER_RUN  # the address now names this server
    fresh = app_test(timeout=60).run()  # a first visit: nothing to say
    assert not fresh.warning
    again = app_test(timeout=60)
    again.query_params["run"] = SERVER_RUN  # a new session on the same server
    again.run()
    assert not again.warning


def restart_notice_page() -> None:
    """A page that says a restart like the app does, but whose first run stops before the
    notice is drawn, as a click during the new server's slow first run stops it."""
    import streamlit as st

    from ui import state

    restarted = state.restarted_since()
    if st.session_state.setdefault("first_run", True):
        st.session_state["first_run"] = False
        st.stop()
    if restarted:
        st.warning("restarted")
    state.restart_said()


def test_a_restart_notice_stopped_before_it_was_drawn_comes_with_the_next_run():
    at = app_test(restart_notice_page, timeout=30)
    at.query_params["run"] = "0ld5e55"
    at.run()
    assert not at.warning  # stopped before the notice
    at.run()
    assert [w.value for w in at.warning] == ["restarted"]  # the next run says it
    at.run()
    assert not at.warning  # said once


@pytest.mark.parametrize("bomb", ["parquet repeated", "xlsx numbers", "csv long cell",
                                  "parquet dictionary"])
def test_a_file_that_decodes_past_the_budget_is_refused_and_others_still_load(monkeypatch,
                                                                               bomb):
    """Admitted by its size, refused by what it decodes to: the ledger never holds more than
    the budget, the session keeps its data set, and a small upload of another session loads
    right after."""
    monkeypatch.setenv(memory.BUDGET_ENV, "60MB")
    name, raw = BOMBS[bomb]({"parquet repeated": 0.05, "xlsx numbers": 0.05,
                             "csv long cell": 0.01, "parquet dictionary": 0.01}[bomb])
    if bomb != "csv long cell":  # whose cell is refused by the estimate already
        assert memory.upload_need(raw, name, read_table) < 60 * 10**6  # admitted by its size
    at = app_test(timeout=120).run()
    at.file_uploader[0].set_value((name, raw, "application/octet-stream")).run()
    assert not at.exception
    message = plain(at.error[0].value)
    assert message.startswith(f"The file was not loaded: {name}: ")
    assert "this session may use" in message or "for one cell" in message
    assert at.session_state["dataset"].is_example
    assert "pending_upload" not in at.session_state
    assert memory.LEDGER.total()[1] <= memory.budget()
    other = app_test(timeout=60).run()
    other.file_uploader[0].set_value(("survey.csv", survey_csv(300), "text/csv")).run()
    assert not other.error and other.session_state["dataset"].name == "survey.csv"


def test_an_upload_that_fails_unexpectedly_is_dropped_with_its_message(monkeypatch):
    at = app_test(timeout=60).run()

    def broken(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr("ui.upload.infer_kinds", broken)
    at.file_uploader[0].set_value(("survey.csv", survey_csv(300), "text/csv")).run()
    assert not at.exception
    assert "could not be loaded (an unexpected MemoryError)" in plain(at.error[0].value)
    assert "pending_upload" not in at.session_state
    # the example it kept is the server's, booked by no session; no reservation is left
    assert memory.LEDGER.total() == (0, memory.LEDGER.shared())
    monkeypatch.undo()
    at.switch_page("views/risk.py").run()  # the next page is not stuck on the upload
    assert not at.exception and not at.status


# -- what a closed tab leaves behind (issue 51, item 9) -----------------------------------------

def settled() -> int:
    """The bytes traced by tracemalloc once the collector frees nothing more (a script
    runner's thread lets go of what it held a little after its run)."""
    last = -1
    for _ in range(40):
        time.sleep(0.25)
        gc.collect()
        now = tracemalloc.get_traced_memory()[0]
        if now == last:
            return now
        last = now
    raise AssertionError("the traced memory did not settle")


def test_a_closed_tabs_work_is_counted_and_its_session_is_not_kept(monkeypatch):
    """A tab that moved a Protect slider and was closed: what the resume registry keeps alive
    for it through the idle window (the bytes freed when its token goes) is entered in the
    ledger, and goes from it with the token. It kept Streamlit's live session state (the
    widgets, their callbacks, the script runner and what that holds), about 375 kB here and
    booked nowhere; now it keeps the work a reload takes over, 8 kB, and books 15 kB."""
    resume.REGISTRY.__init__(memory.LEDGER)
    monkeypatch.setattr(state, "session_id", lambda: "closed")
    tracemalloc.start()
    try:
        at = app_test(timeout=600).run()
        at.switch_page("views/protect.py").run()
        at.slider(key="w_p_band_age").set_value(10).run()
        assert not at.exception
        del at
        before = memory.LEDGER.total()
        monkeypatch.setattr(memory, "is_active", lambda session: False)  # its tab is closed
        idle = memory.idle_seconds()
        resume.REGISTRY.prune(memory.is_active, memory.LEDGER.holds, idle, grace=idle)
        assert len(resume.REGISTRY) == 1  # it did something: its work waits for a reload
        booked = memory.LEDGER.total()[1] - before[1]
        kept = settled()
        resume.REGISTRY.forget(["closed"])
        kept -= settled()
    finally:
        tracemalloc.stop()
        resume.REGISTRY.__init__(memory.LEDGER)
    assert memory.LEDGER.total() == before
    assert 0 < kept <= booked <= 64 * 1024, (kept, booked)


def test_what_closed_tabs_left_behind_counts_in_every_admission():
    ledger = memory.Ledger()
    ledger.share("example", 200)
    ledger.keep("work of a", 300)
    ledger.keep("downloads of a", 100)
    assert ledger.kept() == 400 and ledger.total() == (0, 600)
    assert ledger.room("b", 1000) == 400
    assert ledger.admit("b", 401, 1000) == (
        "this file would take about 401 bytes in the server, more than the 400 bytes its "
        "memory budget of 1.0 kB leaves beside its built-in data sets (200 bytes) and what "
        "closed tabs left behind (400 bytes); try a smaller file (or a sample of it)")
    assert ledger.admit("b", 400, 1000) is None
    ledger.keep("work of a", 0)  # taken over, or dropped
    ledger.keep("downloads of a", 0)
    assert ledger.kept() == 0 and ledger.room("c", 1000) == 400  # b's reservation
