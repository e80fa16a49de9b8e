"""Uploads bounded before Streamlit keeps a byte: each uploader's own size limit, and the raw
bytes admitted by the memory ledger as they arrive.

Streamlit takes an upload as a ``PUT`` of a multipart form to
``/_stcore/upload_file/<session>/<file id>`` and keeps its bytes in memory, up to one limit for
every uploader (``server.maxUploadSize``): twelve 190 MB files sent to "Open a workspace" were
kept (2.3 GB) before the page refused each as larger than 2 MB. :class:`UploadGate`, ASGI
middleware around Streamlit's routes, reads the request's declared length and the file name of
its first file part (with the multipart parser Starlette uses) before it lets the body through:

- **the uploader's limit.** The name says which uploader may take the file: Streamlit gives an
  uploader only files whose names end with one of its types, and the dashboard's uploaders of
  JSON (a workspace, a recipe, an analysis spec) take nothing else, its table uploader takes no
  JSON (:func:`limit_for`). A JSON file may have :data:`~sdc_core.checks.MAX_JSON_BYTES`
  (2 MB), a table the memory budget; a file no uploader takes, none. Past it, the request is
  answered 413 (415 for a file no uploader takes) and nothing is read. The pages set the same
  limits on their widgets (``max_upload_size``), so a browser refuses such a file before it
  sends it.
- **the ledger.** The declared length is admitted at once, under the ledger's lock, beside
  everything the ledger counts (:meth:`ui.infra.memory.Ledger.arrive`); once the request is
  over, Streamlit's upload store holds the bytes and the ledger counts them there for as long
  as it keeps them. A file that does not fit is read and dropped, a block at a time, and the
  request is answered as done: the browser then runs the page, which finds no file and says
  why in one line (:func:`take_refusal`), as a refusal of a file that fits would be said.

A request without a declared length is refused (411): a browser always sends one.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from sdc_core.checks import MAX_JSON_BYTES
from sdc_core.data.io import SUPPORTED_EXTENSIONS
from ui.infra import memory

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Streamlit's upload route: the session and the file id
_UPLOAD = re.compile(r"/_stcore/upload_file/([^/]+)/([^/]+)$")
#: What a multipart body holds besides its file: boundaries, part headers, a long file name
FRAMING = 64 * 1024
#: The most of a body read to find its file part's name
HEAD_BYTES = 64 * 1024
#: The most refusals kept for sessions that have not run their page since
KEPT = 1000

_refusals: OrderedDict[str, str] = OrderedDict()
_refusals_lock = threading.Lock()


def limit_for(name: str) -> int | None:
    """The most bytes the uploader that takes a file of this name may take, None when no
    uploader takes it: a JSON file (a workspace, a recipe, an analysis spec)
    :data:`~sdc_core.checks.MAX_JSON_BYTES`, a table the memory budget."""
    lower = name.lower()
    if lower.endswith(".json"):
        return MAX_JSON_BYTES
    if lower.endswith(tuple(SUPPORTED_EXTENSIONS)):
        return memory.budget()
    return None


def widget_limit(kind: str) -> int:
    """The ``max_upload_size`` (MB, as Streamlit counts them: MiB) of an uploader of ``kind``
    (``"json"`` or ``"table"``), so that a browser refuses a larger file before sending it:
    :func:`limit_for`'s, at most ``server.maxUploadSize``."""
    from streamlit import config

    most = int(config.get_option("server.maxUploadSize"))
    limit = MAX_JSON_BYTES if kind == "json" else memory.budget()
    return max(1, min(most, -(-limit // 2**20)))


def _refuse(session: str, message: str) -> None:
    with _refusals_lock:
        _refusals.pop(session, None)
        _refusals[session] = message
        while len(_refusals) > KEPT:
            _refusals.popitem(last=False)


def take_refusal(session: str) -> str | None:
    """Why the session's last upload was not kept, once (None when none was refused)."""
    with _refusals_lock:
        return _refusals.pop(session, None)


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", []):
        if bytes(key).lower() == name:
            return bytes(value)
    return None


def _declared_length(scope: Scope) -> int | None:
    text = _header(scope, b"content-length")
    return int(text) if text is not None and text.strip().isdigit() else None


def file_name(content_type: bytes | None, head: bytes) -> str | None:
    """The file name of the first part of a multipart body that has one, from the start of the
    body ``head``, as Starlette's parser reads it; None when there is none."""
    from python_multipart.multipart import MultipartParser, parse_options_header

    if content_type is None:
        return None
    kind, options = parse_options_header(content_type)
    if kind != b"multipart/form-data" or b"boundary" not in options:
        return None
    found: list[str] = []
    header: dict[str, bytes] = {"name": b"", "value": b""}
    disposition = [b""]

    def on_header_field(data: bytes, start: int, end: int) -> None:
        header["name"] += data[start:end]

    def on_header_value(data: bytes, start: int, end: int) -> None:
        header["value"] += data[start:end]

    def on_header_end() -> None:
        if header["name"].lower() == b"content-disposition":
            disposition[0] = header["value"]
        header["name"] = header["value"] = b""

    def on_headers_finished() -> None:
        _, params = parse_options_header(disposition[0])
        if b"filename" in params and not found:
            raw = params[b"filename"]
            try:
                found.append(raw.decode("utf-8"))
            except UnicodeDecodeError:
                found.append(raw.decode("latin-1"))
        disposition[0] = b""

    parser = MultipartParser(options[b"boundary"], {
        "on_header_field": on_header_field, "on_header_value": on_header_value,
        "on_header_end": on_header_end, "on_headers_finished": on_headers_finished})
    try:
        parser.write(head)
    except Exception:  # noqa: BLE001 — a body the parser refuses: no name, so no uploader
        return None
    return found[0] if found else None


async def _respond(send: Send, status: int, text: str) -> None:
    body = (text + "\n").encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def _drain(receive: Receive, more: bool) -> None:
    """Read what is left of a body and keep none of it."""
    while more:
        message = await receive()
        if message["type"] != "http.request":
            return
        more = message.get("more_body", False)


class UploadGate:
    """ASGI middleware: an upload's size checked against its uploader's limit and admitted by
    the memory ledger before Streamlit's route reads it (see the module's text)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = _UPLOAD.search(scope.get("path", "")) if scope["type"] == "http" else None
        if found is None or scope.get("method") != "PUT":
            await self.app(scope, receive, send)
            return
        session, upload = found.groups()
        size = _declared_length(scope)
        if size is None:
            await _respond(send, 411, "an upload must declare its length (Content-Length)")
            return
        head, messages, more = b"", [], True
        while more and len(head) < HEAD_BYTES:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            head += message.get("body", b"")
            more = message.get("more_body", False)
            if file_name(_header(scope, b"content-type"), head) is not None:
                break
        name = file_name(_header(scope, b"content-type"), head) or ""
        limit = limit_for(name)
        if limit is None:
            await _respond(send, 415, f"{name or 'the file'}: no uploader here takes this kind "
                                      "of file")
            return
        if size > limit + FRAMING:
            await _respond(send, 413, f"{name}: the file is larger than "
                                      f"{memory.size_text(limit)}, the most this uploader takes")
            return
        refused = memory.LEDGER.arrive(session, upload, size, memory.budget())
        if refused:
            _refuse(session, f"{name} ({memory.size_text(size)}): {refused}")
            await _drain(receive, more and messages[-1]["type"] == "http.request")
            await send({"type": "http.response.start", "status": 204, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        try:
            await self.app(scope, replay, send)
        finally:
            memory.LEDGER.arrived(session, upload)
