"""A headless client of Streamlit's own websocket protocol, for load benchmarks.

It speaks to a real ``streamlit run`` server the way the browser's frontend does, so many
sessions can be driven at once without a browser's CPU in the latency figures:

- ``GET /_stcore/health`` first: the answer sets the ``_streamlit_xsrf`` cookie (the frontend
  reads it from ``document.cookie``), and the dashboard's browser cookie on a first visit;
- the websocket ``/_stcore/stream`` with subprotocols ``["streamlit", <xsrf token>]`` and the
  cookies, as a browser sends them; BackMsg/ForwardMsg protobufs in binary frames;
- a ``rerun_script`` BackMsg carries the query string, the page's script hash and the full set of
  widget states; the run ends with a ``script_finished`` ForwardMsg;
- the page is rebuilt from ``delta`` messages by their ``delta_path``, and nodes a run did not
  write are dropped when it finishes, as the frontend does (fragment runs only touch their
  fragment); cacheable messages are cached and replayed for ``ref_hash`` references;
- widget values are kept as the frontend keeps them: seeded from each widget's element (its
  default, or its value when the script set it through session state), replaced by user input,
  dropped when the widget leaves the page; form widgets wait for the form's submit button;
- uploads: ``file_urls_request`` → ``file_urls_response`` → multipart ``PUT`` with the
  ``X-Xsrftoken`` header and the cookie → the uploader's ``file_uploader_state_value``;
- downloads: the button's trigger reruns the script (unless ``on_click="ignore"``) while the file
  is fetched: its media URL, or for deferred data (a callable) the URL a
  ``backend_operation_request`` returns, with the browser's cookies (the server gives a download
  only to the browser of the session that made it).
"""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import requests
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Block_pb2 import Block
from streamlit.proto.ClientState_pb2 import ClientState, ContextInfo
from streamlit.proto.Common_pb2 import UploadedFileInfo
from streamlit.proto.Element_pb2 import Element as ElementProto
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.proto.Slider_pb2 import Slider
from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from ui.logic.tiles import read_tiles

ROOT_CONTAINERS = {0: "main", 1: "sidebar", 2: "event", 3: "bottom"}
XSRF_COOKIE = "_streamlit_xsrf"
# how a run can end; an early end (FINISHED_EARLY_FOR_RERUN) is followed by another run
_RUN_ENDED = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR,
              ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}
_CLEARS_STALE = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}
_BLOCK_LABELS = {"expandable": "label", "tab": "label", "popover": "label", "dialog": "title"}


def _as_read(markdown: str) -> str:
    """Markdown source as the reader sees it: the app shows user text with every special
    character escaped by a backslash, and an invisible word joiner inside what would be linked
    by itself (``ui.logic.text.md``)."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown).replace("\u2060", "")


def _block_label(block: Block) -> str:
    """The label an expander, tab or popover shows (the title of a dialog); "" for others."""
    kind = block.WhichOneof("type")
    return getattr(getattr(block, kind), _BLOCK_LABELS[kind]) if kind in _BLOCK_LABELS else ""


@dataclass
class _Node:
    """A node of the page as the frontend holds it: an element, or a block of children by
    position. ``run_id`` is the script run that last wrote it (or a descendant)."""

    run_id: str
    fragment_id: str = ""
    script_hash: str = ""
    element: ElementProto | None = None
    block: Block | None = None
    children: dict[int, _Node] = field(default_factory=dict)


@dataclass
class _Cached:
    """A cacheable ForwardMsg as received, the run count when it was last used, and the
    fragment that sent it."""

    data: bytes
    used: int
    fragment_id: str


@dataclass(frozen=True)
class Element:
    """One element on the page: ``kind`` is its Element proto field ("slider", "markdown", …),
    ``proto`` that field's message, ``value`` a widget's current value as this client holds it
    (None for other elements)."""

    kind: str
    proto: Any
    container: str
    fragment_id: str
    value: Any = None

    @property
    def id(self) -> str:
        return getattr(self.proto, "id", "")

    @property
    def label(self) -> str:
        return getattr(self.proto, "label", "")

    @property
    def form_id(self) -> str:
        return getattr(self.proto, "form_id", "")

    @property
    def text(self) -> str:
        """What the element shows as text."""
        p = self.proto
        if self.kind in ("markdown", "heading", "alert"):
            return _as_read(p.body)
        if self.kind == "text":
            return p.body
        if self.kind == "metric":
            return " ".join(s for s in (p.label, p.body, p.delta) if s)
        if self.kind == "code":
            return p.code_text
        if self.kind == "exception":
            return f"{p.type}: {p.message}"
        return self.label


class StSession:
    """One browser session, driven over the websocket. Every action waits for the run it
    starts to finish and returns the seconds from sending to ``script_finished``."""

    def __init__(self, timeout: float = 120.0, browser: StSession | None = None) -> None:
        """``browser``: a session of the same browser (its cookies), as a reload or a second
        tab is; else a browser of its own."""
        self.timeout = timeout
        self.base_url = ""
        self.session_id = ""
        self._query = ""
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._http = requests.Session()
        if browser is not None:
            self._http.cookies.update(browser._http.cookies)
        self._xsrf = ""
        self._run_id = ""
        self._main_hash = ""
        self._page_hash = ""
        self._pages: list[Any] = []
        self._root = _Node(run_id="", children={i: _Node(run_id="") for i in ROOT_CONTAINERS})
        self._states: dict[str, WidgetState] = {}
        self._forms: dict[str, dict[str, WidgetState]] = {}
        self._compile_error = ""
        self._finished: asyncio.Future[None] | None = None
        self._closing = False
        self._replies: dict[str, asyncio.Future[Any]] = {}
        self._cache: dict[str, _Cached] = {}  # by the message's hash
        self._cache_runs = 0
        self._cache_age = 2
        #: What the last run sent, in order: each element's kind ("slider", "plotly_chart", …)
        #: or "block", with its label; and the bytes of its messages (before references)
        self.last_run: list[tuple[str, str]] = []
        self.last_run_bytes = 0

    # -- connection --------------------------------------------------------------------------

    async def connect(self, base_url: str, query: str = "") -> None:
        """Open the session on the server at ``base_url`` and run the default page."""
        self.base_url = base_url.rstrip("/")
        self._query = query.lstrip("?")
        health = await asyncio.to_thread(self._http.get, self.base_url + "/_stcore/health",
                                         timeout=self.timeout)
        health.raise_for_status()
        self._xsrf = self._http.cookies.get(XSRF_COOKIE, "")
        cookies = "; ".join(f"{k}={v}" for k, v in self._http.cookies.items())
        parts = urlsplit(self.base_url)
        scheme = "wss" if parts.scheme == "https" else "ws"
        self._ws = await connect(
            f"{scheme}://{parts.netloc}{parts.path}/_stcore/stream",
            subprotocols=["streamlit", self._xsrf or "PLACEHOLDER_AUTH_TOKEN"],
            additional_headers={"Cookie": cookies} if cookies else None,
            origin=f"{parts.scheme}://{parts.netloc}", max_size=None, ping_interval=None,
            open_timeout=self.timeout)  # as a browser waits, however busy the server
        self._reader = asyncio.create_task(self._read())
        await self._rerun(page_hash="")

    async def close(self) -> None:
        """Close the websocket (the server ends the session) and the HTTP connections."""
        self._closing = True
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)
        self._http.close()

    # -- what the page shows -----------------------------------------------------------------

    @property
    def elements(self) -> list[Element]:
        """The elements on the page, in page order (main area first, then the sidebar)."""
        return [self._element(node, container) for node, container in self._walk()
                if node.element is not None]

    @property
    def page(self) -> str:
        """The title of the page shown."""
        return next((p.page_name for p in self._pages if p.page_script_hash == self._page_hash),
                    "")

    def text(self) -> str:
        """All text the page shows, one element (or expander, tab, popover label) a line."""
        lines = []
        for node, container in self._walk():
            if node.element is not None:
                lines.append(self._element(node, container).text)
            elif node.block is not None:
                lines.append(_block_label(node.block))
        return "\n".join(line for line in lines if line)

    def metrics(self) -> dict[str, str]:
        """Every metric tile on the page, its label → its value as shown: ``st.metric``'s, and
        those of a group drawn as one HTML element (:func:`ui.logic.tiles.read_tiles`)."""
        shown = {e.label: e.proto.body for e in self.elements if e.kind == "metric"}
        for e in self.elements:
            if e.kind == "html":
                shown.update({t.label: t.value for t in read_tiles(e.proto.body)})
        return shown

    def errors(self) -> list[str]:
        """Exceptions and error boxes on the page, and a script that failed to compile."""
        found = [e.text for e in self.elements if e.kind == "exception"
                 or (e.kind == "alert" and e.proto.format == e.proto.ERROR)]
        return found + ([self._compile_error] if self._compile_error else [])

    def widget(self, label: str, kind: str | None = None) -> Element:
        """The first widget with this label (and element kind, e.g. "slider")."""
        widgets = [e for e in self.elements if e.id]
        for e in widgets:
            if e.label == label and kind in (None, e.kind):
                return e
        raise LookupError(f"no {kind or 'widget'} labelled {label!r}; the page has: "
                          + "; ".join(f"{e.kind} {e.label!r}" for e in widgets))

    # -- actions -----------------------------------------------------------------------------

    async def rerun(self) -> float:
        """Rerun the page with the current widget values (the browser's "Rerun")."""
        return await self._rerun()

    async def set_value(self, label: str, value: Any) -> float:
        """Set a slider, number input, select box, radio, multiselect, text input, text area,
        checkbox or toggle to ``value``, as the user would, and wait for the rerun it starts
        (its fragment's, inside a fragment). Options are given as shown (formatted); a range
        slider takes a pair. Inside a form, or with ``on_change="ignore"``, nothing runs yet
        and the result is 0.0."""
        e = self.widget(label)
        return await self._input(e, _encode(e, value))

    async def click(self, label: str) -> float:
        """Click a button or a form's submit button (which sends the form's values)."""
        e = self.widget(label, "button")
        if e.proto.is_form_submitter:
            self._states.update(self._forms.pop(e.form_id, {}))
        return await self._rerun(fragment_id=e.fragment_id,
                                 extra=[WidgetState(id=e.id, trigger_value=True)])

    async def upload(self, label: str, filename: str, data: bytes,
                     mime: str = "text/csv") -> float:
        """Upload one file to a file uploader (added to its files when it takes several) and
        wait for the rerun; the time includes getting the upload URL and the PUT."""
        e = self.widget(label, "file_uploader")
        start = time.perf_counter()
        request_id = str(uuid.uuid4())
        reply = await self._ask(request_id, BackMsg(file_urls_request={
            "request_id": request_id, "file_names": [filename], "session_id": self.session_id}))
        if reply.error_msg or not reply.file_urls:
            raise RuntimeError(f"no upload URL for {filename}: {reply.error_msg}")
        urls = reply.file_urls[0]
        for attempt in (1, 2):  # as a browser does: once more when a kept connection was reset
            try:
                put = await asyncio.to_thread(
                    self._http.put, self._url(urls.upload_url),
                    files={filename: (filename, data, mime)},
                    headers={"X-Xsrftoken": self._xsrf} if self._xsrf else None,
                    timeout=self.timeout)
                break
            except requests.ConnectionError:
                if attempt == 2:
                    raise
        put.raise_for_status()
        state = WidgetState(id=e.id)
        if e.proto.multiple_files and e.id in self._states:
            state.CopyFrom(self._states[e.id])
        state.file_uploader_state_value.uploaded_file_info.append(UploadedFileInfo(
            name=filename, size=len(data), file_id=urls.file_id, file_urls=urls))
        await self._input(e, state)
        return time.perf_counter() - start

    async def switch_page(self, page: str) -> float:
        """Open a page by its title or URL path, as a click in the sidebar navigation does."""
        wanted = page.strip("/")
        found = [p for p in self._pages if wanted in (p.page_name, p.url_pathname)]
        if not found:
            raise LookupError(f"no page {page!r}; pages: "
                              + ", ".join(p.page_name for p in self._pages))
        # only the widgets the entry point drew stay: the page's are cleared first
        kept = {_widget_id(n.element) for n, _ in self._walk()
                if n.element is not None and n.script_hash == self._main_hash}
        states = [s for wid, s in self._states.items() if wid in kept]
        return await self._rerun(page_hash=found[0].page_script_hash, states=states)

    async def download(self, label: str) -> bytes:
        """Click a download button and return the file's bytes."""
        url, run = await self._click_download(label)
        got = await asyncio.to_thread(self._http.get, url, timeout=self.timeout)
        got.raise_for_status()
        if run is not None:
            await asyncio.wait_for(run, self.timeout)
        return got.content

    async def get(self, url: str) -> requests.Response:
        """GET an address of the server (or its path) as this browser: with its cookies."""
        return await asyncio.to_thread(self._http.get, self._url(url), timeout=self.timeout)

    async def download_url(self, label: str) -> str:
        """Click a download button and return the address of its file (made by the click
        when the button's data is a callable), once the run the click starts has ended."""
        url, run = await self._click_download(label)
        if run is not None:
            await asyncio.wait_for(run, self.timeout)
        return url

    async def _click_download(self, label: str) -> tuple[str, asyncio.Future[None] | None]:
        """Click a download button: the file's full address, and the run the click started
        (None when the button reruns nothing)."""
        e = self.widget(label, "download_button")
        run = None
        if not e.proto.ignore_rerun:
            run = await self._send_rerun(fragment_id=e.fragment_id,
                                         extra=[WidgetState(id=e.id, trigger_value=True)])
        url = e.proto.url
        if e.proto.HasField("deferred_file_id"):
            request_id = str(uuid.uuid4())
            reply = await self._ask(request_id, BackMsg(backend_operation_request={
                "request_id": request_id, "session_id": self.session_id,
                "deferred_file": {"file_id": e.proto.deferred_file_id}}))
            if reply.error_msg:
                raise RuntimeError(f"download {label!r} failed: {reply.error_msg}")
            url = reply.deferred_file.url
        return self._url(url), run

    # -- sending -----------------------------------------------------------------------------

    async def _input(self, e: Element, state: WidgetState) -> float:
        """Keep a widget's new value and rerun, unless it waits for a form or never reruns."""
        if e.form_id:
            self._forms.setdefault(e.form_id, {})[e.id] = state
            return 0.0
        self._states[e.id] = state
        if getattr(e.proto, "ignore_rerun", False):
            return 0.0
        return await self._rerun(fragment_id=e.fragment_id)

    async def _rerun(self, **how: Any) -> float:
        start = time.perf_counter()
        await asyncio.wait_for(await self._send_rerun(**how), self.timeout)
        return time.perf_counter() - start

    async def _send_rerun(self, *, fragment_id: str = "", page_hash: str | None = None,
                          states: Sequence[WidgetState] | None = None,
                          extra: Sequence[WidgetState] = ()) -> asyncio.Future[None]:
        """Send a rerun_script with all widget states (or ``states``) plus ``extra`` ones (a
        trigger); the future resolves when the run it starts ends."""
        widgets = WidgetStates(widgets=list(self._states.values()) if states is None else states)
        widgets.widgets.extend(extra)
        context = ContextInfo(timezone="UTC", timezone_offset=0, locale="en-US",
                              url=self.base_url + "/", is_embedded=False, color_scheme="light")
        client = ClientState(query_string=self._query, widget_states=widgets,
                             page_script_hash=self._page_hash if page_hash is None else page_hash,
                             fragment_id=fragment_id, cached_message_hashes=list(self._cache),
                             context_info=context)
        self._finished = asyncio.get_running_loop().create_future()
        await self._send(BackMsg(rerun_script=client))
        return self._finished

    async def _ask(self, request_id: str, msg: BackMsg) -> Any:
        """Send a request and wait for the reply carrying its id."""
        reply = self._replies[request_id] = asyncio.get_running_loop().create_future()
        try:
            await self._send(msg)
            return await asyncio.wait_for(reply, self.timeout)
        finally:
            self._replies.pop(request_id, None)

    async def _send(self, msg: BackMsg) -> None:
        if self._ws is None or self._reader is None or self._reader.done():
            raise ConnectionError("not connected")
        await self._ws.send(msg.SerializeToString())

    def _url(self, path: str) -> str:
        return path if "://" in path else self.base_url + path

    # -- receiving ---------------------------------------------------------------------------

    async def _read(self) -> None:
        """Handle ForwardMsgs until the websocket closes; then fail whatever waits."""
        assert self._ws is not None
        try:
            async for data in self._ws:
                self._handle(self._resolve(data))
            error: BaseException = ConnectionError("the server closed the websocket")
        except ConnectionClosed as err:
            error = ConnectionError(f"the websocket closed: {err}")
        except Exception as err:  # a message this client cannot handle: the session is lost
            error = err
        for waiting in [self._finished, *self._replies.values()]:
            if waiting is not None and not waiting.done():
                if self._closing:  # closed by us: nothing waits for these any more
                    waiting.cancel()
                else:
                    waiting.set_exception(error)

    def _resolve(self, data: bytes) -> ForwardMsg:
        """The message, cached when cacheable, or the cached one a ``ref_hash`` points to."""
        msg = ForwardMsg.FromString(data)
        self.last_run_bytes += len(data)
        if msg.HasField("ref_hash"):
            entry = self._cache[msg.ref_hash]
            entry.used = self._cache_runs
            full = ForwardMsg.FromString(entry.data)
            full.metadata.CopyFrom(msg.metadata)
            return full
        if msg.metadata.cacheable and msg.hash and msg.hash not in self._cache:
            self._cache[msg.hash] = _Cached(data, self._cache_runs, msg.delta.fragment_id)
        return msg

    def _handle(self, msg: ForwardMsg) -> None:
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            self._new_session(msg)
        elif kind == "delta":
            self._delta(msg)
        elif kind == "navigation":
            self._pages = list(msg.navigation.app_pages)
            self._page_hash = msg.navigation.page_script_hash
        elif kind == "page_info_changed":
            self._query = msg.page_info_changed.query_string
        elif kind == "script_finished":
            self._script_finished(msg)
        elif kind == "session_event" and msg.session_event.HasField(
                "script_compilation_exception"):
            err = msg.session_event.script_compilation_exception
            self._compile_error = f"{err.type}: {err.message}"
        elif kind == "file_urls_response":
            self._reply(msg.file_urls_response.response_id, msg.file_urls_response)
        elif kind == "backend_operation_response":
            self._reply(msg.backend_operation_response.request_id,
                        msg.backend_operation_response)

    def _reply(self, request_id: str, reply: Any) -> None:
        waiting = self._replies.get(request_id)
        if waiting is not None and not waiting.done():
            waiting.set_result(reply)

    def _new_session(self, msg: ForwardMsg) -> None:
        """A run starts. A full run of another page first clears the page's elements, keeping
        the entry point's."""
        ns = msg.new_session
        self._run_id = msg.metadata.run.script_run_id
        self.last_run, self.last_run_bytes = [], 0
        self._compile_error = ""
        if ns.initialize.session_id:
            self.session_id = ns.initialize.session_id
        if msg.metadata.run.fragment_ids:
            return
        self._cache_age = ns.config.max_cached_message_age
        self._main_hash = ns.main_script_hash
        if ns.page_script_hash != self._page_hash:
            for root in self._root.children.values():
                root.children = {i: c for i, c in root.children.items()
                                 if _keep_main(c, self._main_hash)}
            self._forget_inactive()
        self._page_hash = ns.page_script_hash
        if not self._pages:
            self._pages = list(ns.app_pages)

    def _delta(self, msg: ForwardMsg) -> None:
        """Put a new element or block at its delta path; the ancestors become this run's."""
        path = list(msg.metadata.delta_path)
        kind = msg.delta.WhichOneof("type")
        if kind not in ("new_element", "add_block") or not path:
            return  # transient elements (spinners) only show while a run goes on
        node = _Node(run_id=self._run_id, fragment_id=msg.delta.fragment_id,
                     script_hash=msg.metadata.active_script_hash)
        chain = [self._root]
        for index in path[:-1]:
            child = chain[-1].children.get(index)
            if child is None or child.element is not None:
                return  # the frontend refuses a delta whose container is missing
            chain.append(child)
        existing = chain[-1].children.get(path[-1])
        if kind == "new_element":
            node.element = msg.delta.new_element
            self._seed(node.element)
            sent = node.element.WhichOneof("type")
            self.last_run.append((sent, getattr(getattr(node.element, sent), "label", "")))
        else:
            node.block = msg.delta.add_block
            self.last_run.append(("block", _block_label(node.block)))
            if existing is not None and existing.block is not None and _same_block(
                    existing.block, node.block):
                node.children = existing.children
        chain[-1].children[path[-1]] = node
        for ancestor in chain:
            ancestor.run_id = self._run_id

    def _seed(self, element: ElementProto) -> None:
        """A widget's value as its component sets it on mount: from the element when the
        widget is new or the script set its value, else the value held stays."""
        proto = getattr(element, element.WhichOneof("type"))
        wid = _widget_id(element)
        if wid and (getattr(proto, "set_value", False) or wid not in self._states):
            state = _initial_state(element.WhichOneof("type"), proto)
            if state is not None:
                self._states[wid] = state

    def _script_finished(self, msg: ForwardMsg) -> None:
        """A run ended: drop what it did not write, the values of widgets gone from the page,
        and old cache entries, as the frontend does."""
        status = msg.script_finished
        run = msg.metadata.run
        fragments = set(run.fragment_ids)
        if status in _CLEARS_STALE and run.script_run_id and (
                fragments or run.script_run_id == self._run_id):
            for root in self._root.children.values():
                if not _keep(root, run.script_run_id, fragments, False):
                    root.children = {}
            self._forget_inactive()
        if status != ForwardMsg.FINISHED_EARLY_FOR_RERUN and run.script_run_id:
            self._age_cache(fragments)
        if status in _RUN_ENDED and self._finished is not None and not self._finished.done():
            self._finished.set_result(None)

    def _forget_inactive(self) -> None:
        """Drop the values of widgets no longer on the page."""
        active = {_widget_id(n.element) for n, _ in self._walk() if n.element is not None}
        self._states = {k: v for k, v in self._states.items() if k in active}
        self._forms = {f: {k: v for k, v in s.items() if k in active}
                       for f, s in self._forms.items()}

    def _age_cache(self, fragments: set[str]) -> None:
        self._cache_runs += 1
        for key, entry in list(self._cache.items()):
            if (not fragments or entry.fragment_id in fragments) and \
                    self._cache_runs - entry.used > self._cache_age:
                del self._cache[key]

    def _walk(self) -> Iterator[tuple[_Node, str]]:
        """Every node in page order, with the name of its root container."""
        def below(node: _Node) -> Iterator[_Node]:
            for index in sorted(node.children):
                yield node.children[index]
                yield from below(node.children[index])
        for index, root in sorted(self._root.children.items()):
            for node in below(root):
                yield node, ROOT_CONTAINERS[index]

    def _element(self, node: _Node, container: str) -> Element:
        """The public view of an element node, with the widget value this client holds
        (a pending form value first)."""
        assert node.element is not None
        kind = node.element.WhichOneof("type")
        proto = getattr(node.element, kind)
        wid = getattr(proto, "id", "")
        pending = self._forms.get(getattr(proto, "form_id", ""), {})
        state = pending.get(wid, self._states.get(wid))
        return Element(kind, proto, container, node.fragment_id,
                       _decode(state) if state is not None else None)


def _keep(node: _Node, run_id: str, fragments: set[str], in_fragment: bool) -> bool:
    """Whether a node survives the end of run ``run_id``, as the frontend's stale-node
    clearing decides; a kept block loses its own stale children. A full run keeps only what it
    wrote; a fragment run drops only stale nodes inside the fragments it ran."""
    if node.element is not None:
        return (node.element.WhichOneof("type") == "toast" or node.run_id == run_id
                or bool(fragments) and (not node.fragment_id or not in_fragment))
    if fragments:
        if in_fragment and node.run_id != run_id:
            return False
        in_fragment = in_fragment or (node.fragment_id in fragments and node.run_id == run_id)
    elif node.run_id != run_id:
        return False
    node.children = {i: c for i, c in node.children.items()
                     if _keep(c, run_id, fragments, in_fragment)}
    return True


def _keep_main(node: _Node, main_hash: str) -> bool:
    """Whether a node was drawn by the entry point (kept across a change of page); a kept
    block loses the page's children."""
    if node.script_hash != main_hash:
        return False
    node.children = {i: c for i, c in node.children.items() if _keep_main(c, main_hash)}
    return True


def _same_block(old: Block, new: Block) -> bool:
    """Whether a block re-sent at a position is the same block (and keeps its children)."""
    kind = new.WhichOneof("type")
    if old.WhichOneof("type") != kind:
        return False
    return kind != "dialog" or old.dialog.id == new.dialog.id


def _widget_id(element: ElementProto) -> str:
    return getattr(getattr(element, element.WhichOneof("type")), "id", "")


def _initial_state(kind: str, p: Any) -> WidgetState | None:
    """The value a widget's component puts in the frontend's widget manager when it mounts
    (None for widgets that only send on use: buttons, uploaders, …)."""
    s = WidgetState(id=p.id)
    if kind == "slider":
        if p.type == Slider.SELECT_SLIDER:
            chosen = list(p.raw_value) if p.set_value and p.raw_value else \
                [p.options[int(i)] for i in p.default]
            s.string_array_value.data.extend(chosen)
        else:
            s.double_array_value.data.extend(p.value if p.set_value else p.default)
    elif kind in ("selectbox", "radio"):
        if p.set_value:
            if p.HasField("raw_value"):
                s.string_value = p.raw_value
        elif p.HasField("default") and p.options:
            s.string_value = p.options[p.default]
    elif kind == "multiselect":
        s.string_array_value.data.extend(
            p.raw_values if p.set_value else [p.options[i] for i in p.default])
    elif kind == "number_input":
        value = p.value if p.set_value and p.HasField("value") else \
            p.default if p.HasField("default") else None
        if value is not None:
            _set_number(s, p, value)
    elif kind in ("text_input", "text_area"):
        value = p.value if p.set_value and p.HasField("value") else \
            p.default if p.HasField("default") else None
        if value is not None:
            s.string_value = value
    elif kind == "checkbox":
        s.bool_value = p.value if p.set_value else p.default
    else:
        return None
    return s


def _encode(e: Element, value: Any) -> WidgetState:
    """A user's input as the widget's component sends it."""
    p, kind = e.proto, e.kind
    s = WidgetState(id=e.id)
    many = list(value) if isinstance(value, (list, tuple)) else [value]
    if kind in ("selectbox", "radio", "multiselect") or (
            kind == "slider" and p.type == Slider.SELECT_SLIDER):
        accepts_new = getattr(p, "accept_new_options", False)
        unknown = [v for v in many if v is not None and v not in p.options]
        if unknown and not accepts_new:
            raise ValueError(f"{e.label!r} has no option {unknown[0]!r}; options: "
                             + ", ".join(p.options))
    if kind == "slider":
        if p.type == Slider.SELECT_SLIDER:
            s.string_array_value.data.extend(many)
        else:
            s.double_array_value.data.extend(float(v) for v in many)
    elif kind in ("selectbox", "radio"):
        if value is not None:
            s.string_value = value
    elif kind == "multiselect":
        s.string_array_value.data.extend(many)
    elif kind == "number_input":
        if value is not None:
            _set_number(s, p, value)
    elif kind in ("text_input", "text_area"):
        if value is not None:
            s.string_value = value
    elif kind == "checkbox":
        s.bool_value = bool(value)
    else:
        raise TypeError(f"{e.label!r} is a {kind}: set_value does not handle it")
    return s


def _set_number(s: WidgetState, p: Any, value: float) -> None:
    if p.data_type == NumberInput.INT:
        s.int_value = int(value)
    else:
        s.double_value = float(value)


def _decode(s: WidgetState) -> Any:
    """A widget state's value in Python: a scalar, a list, or the uploaded files' names."""
    kind = s.WhichOneof("value")
    if kind is None:
        return None
    if kind == "file_uploader_state_value":
        return [f.name for f in s.file_uploader_state_value.uploaded_file_info]
    value = getattr(s, kind)
    return list(value.data) if kind.endswith("_array_value") else value
