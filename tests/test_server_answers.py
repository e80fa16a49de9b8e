"""What the server answers that no page asks for (issue 51, item 9): Streamlit's metrics told
anyone the sessions connected and the bytes uploaded; the 403 for a websocket from another
site's page, the server's own 400s and nginx's own 400, 405 and 414 pages carried no security
headers (``ui/infra/server.py``, ``deploy/nginx.conf``)."""

from __future__ import annotations

import asyncio
import socket
import urllib.error
import urllib.request
from urllib.parse import urlsplit

import pytest

from bench.server import free_port
from bench.st_client import StSession
from tests.conftest import run_async
from tests.nginx_run import answer as once_up
from tests.nginx_run import nginx, shipped_conf
from ui.infra.server import HEADERS


def answer(url: str, method: str = "GET",
           headers: dict[str, str] | None = None) -> tuple[int, object, bytes]:
    """Status, headers and body of a request (an HTTP error's too)."""
    request = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers, err.read()


async def with_a_session(url: str) -> None:
    """A session open, a table uploaded: what the metrics would count."""
    s = StSession(timeout=60)
    await s.connect(url)
    await s.upload("Upload a table", "counted.csv", b"a,b\n1,2\n3,4\n")
    try:
        for path in ("/_stcore/metrics", "/_stcore/metrics/",
                     "/_stcore/metrics?families=session_events"):
            for method, accept in (("GET", "text/plain"), ("GET", "application/x-protobuf"),
                                   ("HEAD", "text/plain"), ("OPTIONS", "text/plain")):
                status, headers, body = await asyncio.to_thread(
                    answer, url + path, method, {"Accept": accept})
                assert status == 404, (path, method, accept)
                assert b"session" not in body and b"upload" not in body and b"cache" not in body
                for name, value in HEADERS.items():
                    assert headers.get_all(name) == [value], (path, name)
    finally:
        await s.close()


def test_streamlits_metrics_are_not_served(app_url):
    run_async(with_a_session(app_url))


# -- the security headers on the answers the server makes itself -------------------------------


def raw(port: int, request: bytes) -> tuple[int, dict[str, list[str]]]:
    """The status and headers (by lower-case name) of the answer to the bytes ``request``
    sent as they are."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(request)
        got = b""
        while b"\r\n\r\n" not in got:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    head = got.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
    headers: dict[str, list[str]] = {}
    for line in head[1:]:
        name, _, value = line.partition(":")
        headers.setdefault(name.strip().lower(), []).append(value.strip())
    return int(head[0].split()[1]), headers


def upgrade(port: int, origin: str, key: bool = True) -> bytes:
    """A websocket handshake for Streamlit's stream from the page ``origin``."""
    lines = ["GET /_stcore/stream HTTP/1.1", f"Host: 127.0.0.1:{port}", "Upgrade: websocket",
             "Connection: Upgrade", "Sec-WebSocket-Version: 13", f"Origin: {origin}",
             "Sec-WebSocket-Protocol: streamlit, x"]
    if key:
        lines.append("Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


#: Requests the server answers before any application code sees them: (what, bytes, status)
MALFORMED = [
    ("a request line that is no request", b"GARBAGE\r\n\r\n", 400),
    ("a header line without a colon", b"GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n", 400),
    ("HTTP/1.1 without a Host", b"GET / HTTP/1.1\r\n\r\n", 400),
    ("a control character in the path", b"GET /\x01 HTTP/1.1\r\nHost: x\r\n\r\n", 400),
]


def has_the_headers(headers: dict[str, list[str]], what: str) -> None:
    for name, value in HEADERS.items():
        assert headers.get(name.lower()) == [value], (what, name)


def test_the_servers_own_answers_carry_the_security_headers(app_url):
    port = urlsplit(app_url).port
    assert port is not None
    for what, request, expected in MALFORMED:
        code, headers = raw(port, request)
        assert code == expected, what
        has_the_headers(headers, what)
    # a websocket from another site's page: refused before it is accepted
    code, headers = raw(port, upgrade(port, "http://evil.example"))
    assert code == 403
    has_the_headers(headers, "a websocket from another origin")
    # a handshake the websocket library cannot take
    code, headers = raw(port, upgrade(port, f"http://127.0.0.1:{port}", key=False))
    assert code == 400
    has_the_headers(headers, "a websocket handshake without its key")
    # the handshake accepted
    code, headers = raw(port, upgrade(port, f"http://127.0.0.1:{port}"))
    assert code == 101
    has_the_headers(headers, "a websocket accepted")


def test_a_500_carries_the_security_headers():
    """An error that no handler took: Starlette's outermost handler answers 500, outside the
    application's middleware."""
    from starlette.applications import Starlette
    from starlette.routing import Route

    from ui.infra.server import middleware

    async def fails(request: object) -> None:
        raise RuntimeError("a failing route")

    app = Starlette(routes=[Route("/fails", fails)], middleware=middleware())
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/fails", "raw_path": b"/fails",
             "query_string": b"", "headers": [], "root_path": "", "scheme": "http",
             "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1), "http_version": "1.1",
             "asgi": {"version": "3.0"}}
    with pytest.raises(RuntimeError, match="a failing route"):
        run_async(app(scope, receive, send))
    starts = [m for m in sent if m["type"] == "http.response.start"]
    assert [m["status"] for m in starts] == [500]
    headers = {bytes(k).decode().lower(): bytes(v).decode() for k, v in starts[0]["headers"]}
    for name, value in HEADERS.items():
        assert headers[name.lower()] == value


# -- nginx in front: its own error pages ------------------------------------------------------


#: What nginx answers itself, before any upstream: (what, bytes, status)
NGINX_OWN = [
    *MALFORMED,
    ("TRACE", b"TRACE / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 405),
    ("an address longer than nginx's buffers", b"GET /" + b"a" * 20_000
     + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 414),
    ("a header longer than nginx's buffers", b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: "
     + b"a" * 20_000 + b"\r\n\r\n", 400),
]
#: The policy nginx gives a page it makes itself
STRICT = "default-src 'none'; frame-ancestors 'none'"


def test_nginx_s_own_error_pages_carry_the_security_headers(app_url, tmp_path):
    """make test installs nginx (Debian's nginx-light)."""
    port, upstream = free_port(), urlsplit(app_url).port
    assert upstream is not None
    with nginx(shipped_conf(port, upstream), tmp_path):
        once_up(f"http://127.0.0.1:{port}/_stcore/health")
        for what, request, expected in NGINX_OWN:
            code, headers = raw(port, request)
            assert code == expected, what
            assert headers.get("content-security-policy") == [STRICT], what
            for name, value in HEADERS.items():
                if name != "Content-Security-Policy":
                    assert headers.get(name.lower()) == [value], (what, name)
        # the dashboard's refusals pass through with its own policy
        code, headers = raw(port, upgrade(port, "http://evil.example"))
        assert code == 403
        has_the_headers(headers, "a websocket from another origin, through nginx")
