"""Issue 51, finding 1: an upload is bounded before Streamlit keeps a byte of it
(``ui.infra.uploads``): its uploader's own size limit, and its raw bytes admitted by the memory
ledger as one reservation, under one lock, across uploads that arrive together. The gate runs
here around a stand-in for Streamlit's route; tests/test_uploads_server.py sends the files to a
real server."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pytest
from starlette.datastructures import Headers
from starlette.formparsers import MultiPartParser

from sdc_core.checks import MAX_JSON_BYTES
from tests.conftest import run_async
from ui.infra import memory, uploads
from ui.infra.uploads import UploadGate, file_name, limit_for


@pytest.fixture(autouse=True)
def clean_ledger(monkeypatch):
    """A ledger of its own, no Streamlit upload store behind it, a 100 MB budget."""
    monkeypatch.setattr(memory, "LEDGER", memory.Ledger())
    monkeypatch.setenv(memory.BUDGET_ENV, "100MB")
    yield


BOUNDARY = "----sdc" + uuid.uuid4().hex


def body(name: str, data: bytes, before: bytes = b"", disposition: str | None = None) -> bytes:
    """A multipart body with one file part (``before``: parts sent ahead of it), as the
    browser's uploader sends it: the part named by the file's name."""
    disposition = disposition or f'form-data; name="{name}"; filename="{name}"'
    return (before + f"--{BOUNDARY}\r\nContent-Disposition: {disposition}\r\n"
            "Content-Type: application/octet-stream\r\n\r\n".encode() + data
            + f"\r\n--{BOUNDARY}--\r\n".encode())


class Route:
    """Stands for Streamlit's upload route: reads the whole body, answers 204."""

    def __init__(self) -> None:
        self.received: bytes | None = None
        self.counted: int | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        data = b""
        while True:
            message = await receive()
            data += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.received = data
        self.counted = memory.LEDGER.total()[1]  # while the request runs
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def put(content: bytes, session: str = "s1", length: bool = True, chunk: int = 4096,
        route: Route | None = None) -> tuple[int, str, Route, int]:
    """The gate around ``route`` given a PUT of ``content`` in chunks: the status, the text of
    the answer, the route, and how many chunks the gate asked for."""
    route = route or Route()
    headers = [(b"content-type", f"multipart/form-data; boundary={BOUNDARY}".encode())]
    if length:
        headers.append((b"content-length", str(len(content)).encode()))
    scope = {"type": "http", "method": "PUT", "headers": headers,
             "path": f"/_stcore/upload_file/{session}/{uuid.uuid4()}"}
    pieces = [content[i:i + chunk] for i in range(0, len(content), chunk)] or [b""]
    asked, sent = [0], []

    async def receive() -> dict:
        asked[0] += 1
        i = asked[0] - 1
        return {"type": "http.request", "body": pieces[i] if i < len(pieces) else b"",
                "more_body": i < len(pieces) - 1}

    async def send(message: dict) -> None:
        sent.append(message)

    run_async(UploadGate(route)(scope, receive, send))
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    text = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, text.decode(), route, asked[0]


def test_each_uploader_has_its_own_limit():
    assert limit_for("workspace.JSON") == MAX_JSON_BYTES
    assert limit_for("survey.csv") == limit_for("survey.zsav") == memory.budget()
    assert limit_for("x.exe") is None and limit_for("x.json.exe") is None
    assert limit_for("") is None


def test_a_json_file_past_2_mb_is_refused_before_its_body_is_read():
    """Twelve 190 MB files sent to "Open a workspace" were kept, 2.3 GB, before the page said
    they were larger than 2 MB: now the gate answers after the first block of the body."""
    status, text, route, asked = put(body("workspace.json", b" " * 3_000_000))
    assert status == 413
    assert text == ("workspace.json: the file is larger than 2.0 MB, the most this uploader "
                    "takes\n")
    assert route.received is None and asked == 1
    assert memory.LEDGER.total() == (0, 0)


def test_a_file_no_uploader_takes_is_refused():
    status, text, route, _ = put(body("run.sh", b"echo hi"))
    assert (status, text, route.received) == (415, "run.sh: no uploader here takes this kind "
                                                    "of file\n", None)


def test_an_upload_without_its_length_is_refused():
    status, text, route, asked = put(body("t.csv", b"a\n1\n"), length=False)
    assert (status, route.received, asked) == (411, None, 0)
    assert "Content-Length" in text


def test_a_file_that_fits_reaches_the_route_whole_and_counts_while_it_arrives():
    data = body("t.csv", b"a,b\n" + b"1,2\n" * 50_000)
    status, _, route, _ = put(data, chunk=1000)
    assert status == 204 and route.received == data  # every byte, in order
    assert route.counted == len(data)  # its declared length, while the route ran
    assert memory.LEDGER.total() == (0, 0)  # then Streamlit's store holds it, counted there


def test_the_name_after_a_field_part_decides_the_limit():
    field = f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="note"\r\n\r\nhi\r\n'.encode()
    status, _, _, _ = put(body("big.json", b" " * 3_000_000, before=field))
    assert status == 413


@pytest.mark.parametrize("disposition", [
    'form-data; name="x"; filename="report.json"',
    "form-data; name=x; filename=report.json",
    'form-data; filename="report.json"; name="x"',
    'form-data; name="x"; filename="r\\"e.json"',
    "form-data; name=\"x\"; filename=\"évaluation.json\"",
    'form-data; name="x"; filename="a.csv"; filename="b.json"',
])
def test_the_gate_reads_the_file_name_as_starlette_does(disposition):
    """The name the gate limits by is the name Streamlit keeps (and checks against the
    uploader's types): Starlette's own parser reads the same body."""
    data = body("x", b"{}", disposition=disposition)
    content_type = f"multipart/form-data; boundary={BOUNDARY}"

    async def stream():
        yield data

    form = run_async(MultiPartParser(Headers({"content-type": content_type}),
                                       stream()).parse())
    kept = next(v.filename for v in form.values() if hasattr(v, "filename"))
    assert file_name(content_type.encode(), data) == kept


def test_a_file_past_the_room_is_dropped_as_it_arrives_and_the_page_says_why():
    """60 MB beside 50 MB another session holds, in a 100 MB budget: read and dropped a block
    at a time (never kept), answered as done, and the session's next run says why."""
    memory.LEDGER.hold("other", 50_000_000, "other.csv", None)
    data = body("padded.csv", b"a\n1\n" + b"\n" * 60_000_000)
    status, text, route, asked = put(data, session="s1", chunk=1 << 20)
    assert (status, text, route.received) == (204, "", None)
    assert asked == -(-len(data) // (1 << 20))  # the whole body read, none of it kept
    refused = uploads.take_refusal("s1")
    assert refused == ("padded.csv (60.0 MB): the server is busy: its sessions and uploads hold "
                       "50.0 MB of its 100.0 MB memory budget, and this file's 60.0 MB do not "
                       "fit beside them; try a smaller file or later")
    assert uploads.take_refusal("s1") is None  # said once
    assert memory.LEDGER.total() == (1, 50_000_000)


def test_uploads_that_arrive_together_are_admitted_only_as_far_as_the_budget_goes():
    """Eight 30 MB files at once into 100 MB: one reservation each, under the ledger's lock,
    so three are admitted whatever the order, and the ledger never counts more than 100 MB."""
    ledger, start = memory.Ledger(), threading.Barrier(8)
    answers: dict[int, str | None] = {}

    def arrive(i: int) -> None:
        start.wait()
        answers[i] = ledger.arrive(f"s{i}", "f", 30_000_000, 100_000_000)

    threads = [threading.Thread(target=arrive, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(a is None for a in answers.values()) == 3
    assert ledger.total()[1] == 90_000_000
    # an upload kept by Streamlit counts in every admission, a session's own included
    kept = memory.Ledger(stored=lambda: 90_000_000)
    assert kept.admit("s9", 20_000_000, 100_000_000) == (
        "the server is busy: uploads hold 90.0 MB of its 100.0 MB budget, and this file would "
        "take about 20.0 MB; try a smaller file or later")
    assert kept.room("s9", 100_000_000) == 10_000_000


def test_an_upload_counts_once_while_its_request_ends_after_streamlit_stored_it():
    """Streamlit stores an upload's bytes just before its request ends: in between, the bytes
    are in the store and still reserved as arriving, and used to count twice (a ledger of
    310.8 MB on a 300 MB budget, four 57 MB files kept); they count in the store only."""
    store: dict[tuple[str, str], int] = {}
    ledger = memory.Ledger(stored=lambda: sum(store.values()),
                           in_store=lambda session, upload: (session, upload) in store)
    assert ledger.arrive("s1", "f1", 57_000_000, 300_000_000) is None
    assert ledger.total()[1] == 57_000_000
    store["s1", "f1"] = 57_000_000  # stored; the request has not ended yet
    assert ledger.total()[1] == 57_000_000
    assert ledger.room("s2", 300_000_000) == 243_000_000
    ledger.arrived("s1", "f1")
    assert ledger.total()[1] == 57_000_000
    store.clear()
    assert ledger.total()[1] == 0
