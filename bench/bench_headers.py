"""What the security headers (``ui.infra.server.SecurityHeaders``) add to a request: the middleware
around a bare ASGI app that answers at once, against the bare app in the same run.

A request is a ``GET /_stcore/health`` scope with a browser's usual headers, once without the
browser cookie (the middleware then also names the browser: a cookie of its own) and once with
it; the app sends the start of a response with two headers and a 2-byte body. Each figure is the
median over ``--repeat`` batches of ``--requests`` requests of the time per request; the ratio is
to the bare app's. This is the middleware's own work: a real request's path through Uvicorn,
Starlette and Streamlit comes on top of both.

Run: ``python -m bench.bench_headers [--requests 20000] [--repeat 7]``
"""

from __future__ import annotations

import argparse
import asyncio
import time

import numpy as np

from ui.infra.server import BROWSER_COOKIE, SecurityHeaders

HEADERS = [(b"host", b"127.0.0.1:8501"), (b"user-agent", b"Mozilla/5.0 (X11; Linux x86_64)"),
           (b"accept", b"*/*"), (b"accept-language", b"en"), (b"accept-encoding", b"gzip")]


async def bare(scope, receive, send) -> None:
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/plain"), (b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


async def receive() -> dict:
    return {"type": "http.request", "body": b"", "more_body": False}


async def sink(message: dict) -> None:
    pass


def scope(cookie: bool) -> dict:
    headers = HEADERS + ([(b"cookie", f"{BROWSER_COOKIE}=x.y".encode())] if cookie else [])
    return {"type": "http", "method": "GET", "path": "/_stcore/health", "scheme": "http",
            "headers": headers, "query_string": b""}


async def per_request(app, s: dict, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        await app(s, receive, sink)
    return (time.perf_counter() - start) / n


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--requests", type=int, default=20_000)
    p.add_argument("--repeat", type=int, default=7)
    args = p.parse_args()
    wrapped = SecurityHeaders(bare)

    async def run() -> None:
        for cookie in (False, True):
            s = scope(cookie)
            await per_request(wrapped, s, 1000)  # warm-up
            times = {"bare": [], "headers": []}
            for _ in range(args.repeat):  # interleaved: a drift of the machine hits both
                times["bare"].append(await per_request(bare, s, args.requests))
                times["headers"].append(await per_request(wrapped, s, args.requests))
            b, h = (float(np.median(times[k])) * 1e6 for k in ("bare", "headers"))
            print(f"{'with' if cookie else 'without'} the browser cookie: bare app {b:6.2f} µs,"
                  f" with the security headers {h:6.2f} µs a request (+{h - b:.2f} µs, "
                  f"ratio {h / b:.1f})")

    asyncio.run(run())


if __name__ == "__main__":
    main()
