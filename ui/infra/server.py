"""The HTTP side of the dashboard: the security headers every response carries.

``streamlit run app.py`` finds the ``st.App`` that ``app.py`` makes when the server imports it
(not when a session runs it as a page) and serves it with :func:`middleware` around
Streamlit's own routes: the page, its static files, the health check, uploads, media and a
refused websocket handshake. :class:`SecurityHeaders` is plain ASGI: it adds headers to the
start of each HTTP response (a websocket's handshake, accepted or refused, included; an error
no handler took gets its 500 here) and passes everything else (bodies, the websocket's frames)
through untouched, unbuffered. What the server answers without the application (uvicorn's
400 for a request it cannot parse, the websocket library's refusals of a handshake) gets
the headers through :func:`install`. ``bench/bench_headers.py`` measures its own work per request
(a few microseconds; docs/deploying.md quotes the figures). Inside it, :class:`Guard` refuses
what no client may have before Streamlit's routes see the request: Streamlit's metrics, and a
download to any browser but the one whose session made it (:mod:`ui.infra.downloads`).

The policy (:data:`CSP`) is what Streamlit's front end needs and no more: its scripts and
styles from this server (its one inline script allowed by its hash, read from the installed
``index.html``; WebAssembly compiled, no text evaluated as script), the inline styles its
components set, images and fonts from this server or ``data:``/``blob:`` URLs, requests and
the websocket to this server only, and no framing by any other site (``frame-ancestors
'none'``, and ``X-Frame-Options: DENY`` for browsers that predate it). tests/e2e/test_headers.py
opens every page in Chromium under it and finds no violation. ``deploy/nginx.conf`` passes the
policy on and sends the other headers itself when nginx is in front."""

from __future__ import annotations

import base64
import functools
import hashlib
import inspect
import re
import secrets
import types
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

import streamlit
from starlette.requests import HTTPConnection

from ui.infra import downloads, memory

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: The page Streamlit serves: its inline scripts are allowed by their hashes.
INDEX = Path(streamlit.__file__).parent / "static" / "index.html"


def inline_script_hashes(html: str) -> list[str]:
    """CSP sources (``'sha256-…'``) for the inline ``<script>`` elements of ``html``: the
    hash of each element's text exactly as it stands between its tags."""
    found = re.findall(r"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", html, re.S | re.I)
    return [f"'sha256-{base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()}'"
            for s in found]


def _policy() -> str:
    # 'wasm-unsafe-eval' lets a script compile WebAssembly (not evaluate text as JavaScript):
    # the protobuf library of Streamlit's front end builds its 64-bit arithmetic so
    scripts = " ".join(["'self'", "'wasm-unsafe-eval'",
                        *inline_script_hashes(INDEX.read_text(encoding="utf-8"))])
    return "; ".join([
        "default-src 'self'",
        f"script-src {scripts}",
        "style-src 'self' 'unsafe-inline'",  # Streamlit's components set inline styles
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        "media-src 'self' data: blob:",
        "connect-src 'self'",  # the websocket too: 'self' covers ws: and wss: to this host
        "worker-src 'self' blob:",
        "frame-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ])


#: The Content-Security-Policy of every response.
CSP = _policy()
#: The headers every HTTP response of the dashboard carries (a header of the same name that a
#: route set is replaced).
HEADERS: dict[str, str] = {
    "Content-Security-Policy": CSP,
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}
_RAW = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in HEADERS.items()]
_NAMES = {k for k, _ in _RAW}
#: The ASGI messages that start a response: an HTTP response, a websocket's handshake
#: accepted (its 101) and one refused with an HTTP response.
_STARTS = ("http.response.start", "websocket.accept", "websocket.http.response.start")
#: What a websocket's handshake refused before it was accepted answers (Streamlit closes the
#: websocket of a page from another origin before accepting it)
_REFUSED = b"Forbidden"


#: This server process: the page's address carries it (``?run=``), and so does the browser
#: cookie it issues, so that a session can tell a restart it lived through from an address
#: someone copied.
SERVER_RUN = secrets.token_hex(4)
#: The cookie that names a browser (:func:`new_browser_id`): HttpOnly, so no script of a page
#: reads it; SameSite=Strict, so no other site's page sends it. A session's resume token is
#: bound to it (:mod:`ui.resume`).
BROWSER_COOKIE = "sdc_browser"


def new_browser_id() -> str:
    """``<SERVER_RUN>.<128 random bits>``: who this browser is, and which process named it."""
    return f"{SERVER_RUN}.{secrets.token_urlsafe(16)}"


def issued_here(browser: str) -> bool:
    """Whether this server process named the browser (not an earlier run of the server)."""
    return browser.split(".", 1)[0] == SERVER_RUN


def _has_browser_cookie(scope: Scope) -> bool:
    for name, value in scope.get("headers", []):
        if bytes(name).lower() == b"cookie" and \
                re.search(rb"(?:^|;)\s*" + BROWSER_COOKIE.encode() + rb"=", bytes(value)):
            return True
    return False


def _browser_cookie(scope: Scope) -> tuple[bytes, bytes]:
    """The cookie naming a new browser; ``Secure`` over HTTPS (the server's own, or a proxy's
    that says so in ``X-Forwarded-Proto``)."""
    proxied = dict((bytes(k).lower(), bytes(v)) for k, v in scope.get("headers", []))
    https = scope.get("scheme") == "https" or proxied.get(b"x-forwarded-proto") == b"https"
    secure = "; Secure" if https else ""
    return (b"set-cookie", f"{BROWSER_COOKIE}={new_browser_id()}; Path=/; HttpOnly; "
                           f"SameSite=Strict{secure}".encode("latin-1"))


class SecurityHeaders:
    """ASGI middleware: :data:`HEADERS` on the start of every response, and the browser's
    cookie (:data:`BROWSER_COOKIE`) on an HTTP response to a request that has none; nothing
    buffered."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):  # lifespan
            await self.app(scope, receive, send)
            return
        extra = list(_RAW)
        if scope["type"] == "http" and not _has_browser_cookie(scope):
            extra.append(_browser_cookie(scope))

        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "websocket.close" and not started and _can_refuse(scope):
                message = {"type": "websocket.http.response.start", "status": 403}
                await send_with_headers(message)
                await send({"type": "websocket.http.response.body", "body": _REFUSED})
                return
            if message["type"] in _STARTS:
                started = True
                kept = [(k, v) for k, v in message.get("headers", [])
                        if bytes(k).lower() not in _NAMES]
                message = {**message, "headers": kept + extra}
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception:
            if scope["type"] == "http" and not started:  # the 500 Starlette's outermost
                await _plain(send_with_headers, 500, b"Internal Server Error")  # handler makes
            raise


def _can_refuse(scope: Scope) -> bool:
    """Whether the server lets the application answer a websocket's handshake with an HTTP
    response of its own (the ASGI extension ``websocket.http.response``)."""
    return scope["type"] == "websocket" and "websocket.http.response" in scope.get(
        "extensions", {})


async def _plain(send: Send, status: int, body: bytes) -> None:
    """A plain-text HTTP response."""
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def _route_path(scope: Scope) -> str:
    """The request's path as Starlette's router matches it (without the ASGI root path)."""
    path, root = scope["path"], scope.get("root_path", "")
    return path[len(root):] if root and path.startswith(root) else path


class Guard:
    """ASGI middleware: what a client is refused before Streamlit's routes see the request,
    with the 404 of an address that does not exist:

    - Streamlit's metrics (``/_stcore/metrics``: the sessions connected and their events, the
      bytes uploaded, what every cache holds), which Streamlit serves to anyone and has no
      setting to turn off;
    - a media file (``/media/…``: downloads) to a request that does not carry the browser
      cookie of a connected session that owns it (:mod:`ui.infra.downloads`).

    It installs :mod:`ui.infra.downloads` in the server's media manager when the server starts,
    and sweeps the files of ended sessions after each websocket closes."""

    def __init__(self, app: ASGIApp) -> None:
        from streamlit import config
        from streamlit.url_util import make_url_path

        self.app = app
        base = config.get_option("server.baseUrlPath")
        self._metrics = make_url_path(base, "_stcore/metrics")
        self._media = make_url_path(base, "media/")
        self._downloads: downloads.Downloads | None = None
        self._sweeper: downloads.Sweeper | None = None

    def _attach(self) -> downloads.Downloads | None:
        """The downloads of the server's media manager, once Streamlit's runtime exists."""
        from streamlit import config, runtime

        if self._downloads is None and runtime.exists():
            self._downloads = downloads.install(runtime.get_instance(), BROWSER_COOKIE,
                                                memory.LEDGER)
            self._sweeper = downloads.Sweeper(
                self._downloads, lambda: float(config.get_option("server.disconnectedSessionTTL")))
        return self._downloads

    def refused(self, scope: Scope) -> bool:
        """Whether the HTTP request ``scope`` gets a 404 here."""
        path = _route_path(scope)
        if path.rstrip("/") == self._metrics:  # also as Starlette redirects it, with a slash
            return True
        if not path.startswith(self._media):
            return False
        owned = self._attach()
        browser = HTTPConnection(scope).cookies.get(BROWSER_COOKIE)
        return owned is None or not owned.allowed(
            downloads.file_id_of(path[len(self._media):]), browser)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            if self.refused(scope):
                await _plain(send, 404, b"Not Found")
            else:
                await self.app(scope, receive, send)
        elif kind == "websocket":
            try:
                await self.app(scope, receive, send)
            finally:
                if self._sweeper is not None:
                    self._sweeper.closed()
        else:  # the server's start (its lifespan): before any session
            self._attach()
            await self.app(scope, receive, send)


def middleware() -> list[Any]:
    """The middleware ``app.py`` gives ``st.App``: outside Streamlit's own, the security
    headers outermost (on every refusal below too), then the guard of what no client is given
    (:class:`Guard`), then the uploads' gate (:mod:`ui.infra.uploads`)."""
    from starlette.middleware import Middleware

    from ui.infra.uploads import UploadGate

    return [Middleware(SecurityHeaders), Middleware(Guard), Middleware(UploadGate)]


def _h11_400(self: Any, msg: str) -> None:
    """uvicorn's answer to a request it cannot parse (``H11Protocol.send_400_response``),
    with :data:`HEADERS`."""
    import h11

    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close"),
               *_RAW]
    for event in (h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
                  h11.Data(data=msg.encode("ascii")), h11.EndOfMessage()):
        self.transport.write(self.conn.send(event))
    self.transport.close()


def lock_free_config_reads() -> None:
    """Read Streamlit's configuration without its lock, once it is parsed (docs/deploying.md,
    "A class at once, measured").

    Streamlit reads an option (``streamlit.config.get_option``) for every element a page
    draws, to decide whether the message is cached, and all the theme's options
    (``get_options_for_section``, a pass over every option) at the start of every run, each
    read under the configuration's one lock. With thirty sessions drawing at once, a thread
    that holds the lock is often made to give up the interpreter while holding it, and the
    others queue on the lock: in a profile of thirty sessions at once (``bench/bench_load.py
    --think 0 --ramp 0``, sampled with py-spy), the sessions' threads spent 32 % of their time
    waiting there, not computing. Streamlit's own ``get_config_options`` reads the parsed
    options without the lock, since the dictionary is only ever replaced whole; the reads here
    do the same, and call Streamlit's own (with the lock) only before the options are parsed
    or for a name they lack (its error)."""
    from streamlit import config

    if getattr(config.get_option, "lock_free", False):
        return
    locked, locked_section = config.get_option, config.get_options_for_section

    def get_option(key: str) -> Any:
        options = config._config_options
        option = options.get(key) if options else None
        return locked(key) if option is None else option.value

    def get_options_for_section(section: str) -> dict[str, Any]:
        options = config._config_options
        if not options:
            return locked_section(section)
        return {o.name: o.value for o in list(options.values()) if o.section == section}

    get_option.lock_free = True  # type: ignore[attr-defined]
    get_option.__doc__ = locked.__doc__
    get_options_for_section.__doc__ = locked_section.__doc__
    config.get_option = get_option
    config.get_options_for_section = get_options_for_section


def memoized_signatures() -> None:
    """Streamlit's caches read the signature of the cached function (``inspect.signature``)
    once for each positional argument of every call, to find those named ``_x`` that are not
    hashed: 3 % of a Protect move's server CPU (a py-spy profile of ``bench/bench_moves.py``'s
    moves), for functions whose signatures never change. Each function's parameters are now
    read once (``streamlit.type_util.get_func_parameters``, memoized for the process)."""
    from streamlit import type_util

    if getattr(type_util.get_func_parameters, "memoized", False):
        return
    read = type_util.get_func_parameters
    known = functools.lru_cache(maxsize=4096)(read)

    def get_func_parameters(func: Callable[..., Any]) -> list[inspect.Parameter]:
        # a plain function only: a bound method is a new object at each call, and would hold
        # its instance in the memo
        return known(func) if isinstance(func, types.FunctionType) else read(func)

    get_func_parameters.memoized = True  # type: ignore[attr-defined]
    get_func_parameters.__doc__ = read.__doc__
    type_util.get_func_parameters = get_func_parameters


def install() -> None:
    """:data:`HEADERS` on the answers the server makes without the application, which no
    middleware sees: uvicorn's 400 for a request it cannot parse, and the websocket library's
    refusals of a handshake (a 400 for a broken upgrade, the 403 of a websocket closed before
    it was accepted when the server has no other way, a 500); and
    :func:`lock_free_config_reads` and :func:`memoized_signatures`."""
    lock_free_config_reads()
    memoized_signatures()
    from uvicorn.protocols.http.h11_impl import H11Protocol
    from websockets.server import ServerProtocol

    H11Protocol.send_400_response = _h11_400  # type: ignore[method-assign]
    if not getattr(ServerProtocol.reject, "with_headers", False):
        reject = ServerProtocol.reject

        def reject_with_headers(self: ServerProtocol, status: Any, text: str) -> Any:
            response = reject(self, status, text)
            for name, value in HEADERS.items():
                response.headers[name] = value
            return response

        reject_with_headers.with_headers = True  # type: ignore[attr-defined]
        ServerProtocol.reject = reject_with_headers  # type: ignore[method-assign]
