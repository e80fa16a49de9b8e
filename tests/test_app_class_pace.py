"""The teacher's view of the class on the Lessons page's projector view (issue 54): the line of
sessions connected and moves of the last minute with its verdict, drawn from the server's record
of runs (``ui.infra.pace``); the page's own runs reach that record; another session's data never
shows on it; and the session count is Streamlit's, read from a real runtime."""

from __future__ import annotations

import asyncio
import re
import time

import pandas as pd
import pytest
from streamlit.runtime import Runtime, RuntimeConfig
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.testing.v1 import AppTest

from bench.st_client import StSession
from tests.apptest import app_test
from tests.conftest import ROOT, run_async
from ui.infra import pace
from ui.infra.pace import Record

#: The whole line, as it may be: counts and seconds, and one of the three verdicts
LINE = re.compile(
    r":material/groups: \*\*(?P<sessions>—|\d+)\*\* sessions? connected · "
    r"\*\*(?P<runs>\d+)\*\* moves? in the last minute"
    r"(?: \(median (?P<median>[\d.]+)\u00a0s, 95\u00a0% within (?P<p95>[\d.]+)\u00a0s\))?: "
    r"\*\*(?P<verdict>keeping up|no moves in the last minute)\*\*")
BUSY = re.compile(
    r"\*\*(?P<sessions>—|\d+)\*\* sessions? connected · \*\*(?P<runs>\d+)\*\* moves? in the "
    r"last minute \(median (?P<median>[\d.]+)\u00a0s, 95\u00a0% within (?P<p95>[\d.]+)\u00a0s\): "
    r"\*\*busy — wait a moment before the next instruction\*\*")


def teacher(projector: bool = True) -> AppTest:
    """A session on the Lessons page, the projector view on or off."""
    at = app_test(timeout=60)
    at.session_state["projector"] = projector
    at.run()
    at.switch_page("views/lessons.py").run()
    assert not at.exception
    return at


def record_with(monkeypatch: pytest.MonkeyPatch, seconds: list[float]) -> Record:
    """A fresh server record holding runs of these durations, ended just now."""
    record = Record()
    now = record.clock()
    for s in seconds:
        record.add(s, end=now)
    monkeypatch.setattr(pace, "RECORD", record)
    return record


def class_line(at: AppTest) -> re.Match[str]:
    """The teacher's line, matched whole by :data:`LINE` or :data:`BUSY`; it is on the page
    exactly once."""
    found = [m for m in (LINE.fullmatch(e.value) for e in at.markdown) if m]
    found += [m for m in (BUSY.fullmatch(w.value) for w in at.warning) if m]
    assert len(found) == 1, [e.value for e in (*at.markdown, *at.warning)]
    return found[0]


def test_the_line_shows_only_in_the_projector_view():
    at = teacher(projector=False)
    assert not any("connected ·" in e.value for e in (*at.markdown, *at.warning))
    assert not any(b.key == "w_class_pace" for b in at.button)
    at = teacher()
    assert class_line(at)["sessions"] == "—"  # AppTest has no server: no count, no failure
    assert any(b.key == "w_class_pace" for b in at.button)


def test_no_moves_in_the_last_minute(monkeypatch):
    at = teacher()
    record_with(monkeypatch, [])
    line = class_line(at.run())
    assert line["runs"] == "0" and line["verdict"] == "no moves in the last minute"
    assert line["median"] is None and not at.warning


def test_a_server_that_keeps_up(monkeypatch):
    at = teacher()
    record_with(monkeypatch, [0.05] * 40 + [0.2] * 10 + [0.9] * 3)
    line = class_line(at.run())
    assert (line["runs"], line["median"], line["verdict"]) == ("53", "0.05", "keeping up")
    assert 0.2 <= float(line["p95"]) <= 0.9
    assert not at.warning


def test_a_busy_server_says_wait(monkeypatch):
    at = teacher()
    record_with(monkeypatch, [0.3] * 20 + [2.5] * 10)
    line = class_line(at.run())
    assert (line["runs"], line["median"], line["p95"]) == ("30", "0.30", "2.5")
    assert at.warning[0].icon == ":material/hourglass_top:"


def test_runs_older_than_a_minute_do_not_count(monkeypatch):
    at = teacher()
    record = record_with(monkeypatch, [3.0] * 5)
    for s in [9.0] * 50:  # slow runs, but they ended 61 s ago
        record.add(s, end=record.clock() - 61)
    line = class_line(at.run())
    assert line["runs"] == "5" and line["p95"] == "3.0"


def test_the_page_s_own_runs_are_timed_into_the_server_s_record(monkeypatch):
    """The entry point times every run: a fresh record, one full run of the page, then the
    Refresh button (a rerun) shows that run among the moves; a part of the page drawn in its
    run is not counted again."""
    at = teacher()
    record = record_with(monkeypatch, [])
    at.run()
    assert len(record.runs()) == 1
    end, seconds = record.runs()[0]
    assert 0 < seconds < 60 and end <= time.monotonic()
    at.button(key="w_class_pace").click().run()
    line = class_line(at)
    assert line["runs"] == "1" and line["verdict"] != "no moves in the last minute"
    assert len(record.runs()) == 2


def everything(at: AppTest) -> str:
    """Every element of the page and its sidebar, as its protocol message's text, and the
    tables it shows, as CSV."""
    def walk(node) -> list[str]:
        out = [str(node.proto)] if getattr(node, "proto", None) is not None else []
        for child in getattr(node, "children", {}).values():
            out += walk(child)
        return out

    return "\n".join(walk(at._tree) + [d.value.to_csv() for d in at.dataframe])


def test_another_session_s_upload_never_shows_on_the_teacher_s_page(monkeypatch):
    """A student uploads a file with a column name and a value found nowhere else; the
    teacher's projector page, drawn after the student's runs were timed, shows neither (nor
    the file's name) anywhere: only the counts and seconds of the line."""
    record = record_with(monkeypatch, [])
    column, value, name = "zqxincome", "QZV7741", "zqxstudent"
    df = pd.DataFrame({"age": [20 + i % 9 for i in range(40)], "sex": ["F", "M"] * 20,
                       column: [f"{value}" if i == 3 else f"v{i % 5}" for i in range(40)]})
    student = app_test().run()
    student.file_uploader(key="uploader").set_value(
        (f"{name}.csv", df.to_csv(index=False).encode(), "text/csv")).run()
    shown = everything(student)
    assert name in shown and column in shown  # the student's own page names them
    student.switch_page("views/lessons.py").run()
    assert not student.exception
    moves = len(record.runs())
    assert moves >= 3
    at = teacher()
    line = class_line(at)
    assert int(line["runs"]) >= moves
    text = everything(at)
    for secret in (column, value, name, "zqx", "QZV"):
        assert secret not in text, secret


def test_the_sessions_connected_are_streamlit_s_active_sessions():
    """In a real runtime the count is its sessions whose connection is open: two connected,
    one after a tab closes; no runtime, no count."""

    class Client:
        def write_forward_msg(self, msg) -> None:
            pass

        @property
        def client_context(self) -> None:
            return None

    async def counts() -> list[int | None]:
        rt = Runtime(RuntimeConfig(script_path=str(ROOT / "app.py"),
                                   media_file_storage=MemoryMediaFileStorage("/media"),
                                   uploaded_file_manager=MemoryUploadedFileManager("/upload")))
        seen = []
        try:
            await rt.start()
            seen.append(pace.sessions_connected())
            first = rt.connect_session(Client(), {})
            rt.connect_session(Client(), {})
            seen.append(pace.sessions_connected())
            rt.disconnect_session(first)
            seen.append(pace.sessions_connected())
            rt.stop()
            await asyncio.wait_for(rt.stopped, 10)
        finally:
            Runtime._instance = None
        return seen

    assert pace.sessions_connected() is None
    assert run_async(counts()) == [0, 2, 1]
    assert pace.sessions_connected() is None


def test_a_request_for_a_run_is_noted_as_it_reaches_the_session(monkeypatch):
    """Streamlit's session handles each message from the browser; the server's copy notes when
    a request for a run (``rerun_script``) arrived, under the session's id, and hands every
    message on unchanged."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ClientState_pb2 import ClientState
    from streamlit.runtime.app_session import AppSession

    arrivals = pace.Arrivals()
    monkeypatch.setattr(pace, "ARRIVALS", arrivals)
    handled = []

    def handle(session, msg) -> None:
        handled.append((session, msg))

    class Session:  # what the wrapper reads of an AppSession: its id
        id = "s-1"

    noted = pace.noting(handle)
    session = Session()
    heartbeat, rerun = BackMsg(app_heartbeat=True), BackMsg(rerun_script=ClientState())
    before = time.monotonic()
    noted(session, heartbeat)
    assert arrivals.take("s-1") is None
    noted(session, rerun)
    arrived = arrivals.take("s-1")
    assert arrived is not None and before <= arrived <= time.monotonic()
    assert handled == [(session, heartbeat), (session, rerun)]

    monkeypatch.setattr(AppSession, "handle_backmsg", AppSession.handle_backmsg)  # undone after
    original = AppSession.handle_backmsg
    pace.install()
    pace.install()  # once only
    assert AppSession.handle_backmsg is not original
    assert AppSession.handle_backmsg.__wrapped__ is original


def teacher_line(session: StSession) -> re.Match[str]:
    """The teacher's line as a real server sent it, matched whole by :data:`LINE` or, in its
    yellow box, :data:`BUSY`."""
    found = [m for m in ((LINE if e.kind == "markdown" else BUSY).fullmatch(e.proto.body)
                         for e in session.elements if e.kind in ("markdown", "alert")) if m]
    assert len(found) == 1, session.text()
    return found[0]


async def a_class(url: str) -> list[re.Match[str]]:
    """A teacher on the Lessons page in the projector view, a student who moves a slider on
    the Protect page and then closes the tab: the teacher's line after each."""
    teacher, student = StSession(timeout=90), StSession(timeout=90)
    lines = []
    try:
        await teacher.connect(url, "view=projector")
        await teacher.switch_page("Lessons")
        lines.append(teacher_line(teacher))
        await student.connect(url)
        await student.switch_page("Protect")
        await student.set_value("Band width of age", 10)
        await teacher.click("Refresh")
        lines.append(teacher_line(teacher))
        await student.close()
        for _ in range(50):  # the server ends the student's session once its socket closes
            await asyncio.sleep(0.1)
            await teacher.click("Refresh")
            if teacher_line(teacher)["sessions"] == "1":
                break
        lines.append(teacher_line(teacher))
    finally:
        await student.close()
        await teacher.close()
    return lines


def test_a_real_server_counts_its_sessions_and_times_their_moves(app_url):
    """Through a real server: the sessions connected are counted (the teacher alone, then
    with a student, then alone again once the student's tab closed), and the student's page
    runs and slider move are among the moves of the last minute, each timed from its request's
    arrival."""
    first, with_student, alone = run_async(a_class(app_url))
    assert first["sessions"] == "1"
    assert with_student["sessions"] == "2"
    # the teacher's two runs, and the student's first run, page switch and slider move at least
    assert int(with_student["runs"]) >= int(first["runs"]) + 4
    assert with_student["median"] is not None
    assert alone["sessions"] == "1"
