"""What the server answers that no page asks for (issue 51, item 9): Streamlit's metrics told
anyone the sessions connected and the bytes uploaded (``ui/infra/server.py``)."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request

from bench.st_client import StSession
from tests.conftest import run_async
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
