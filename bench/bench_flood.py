"""A flood of sessions that connect and leave, against one real ``streamlit run app.py``: what it
costs the users already there, and what it leaves in the memory ledger.

**Flood**: ``--flood`` sessions (default 200) connect spread evenly over ``--seconds`` (default
60), each as a script does: the health check, the websocket, the first page's run, and the
websocket closed once the page is drawn (``--drop``: closed 0.2 s after the run was asked for,
without waiting for it). Each connection is its own task, so a slow server does not slow the
flood down.

**What the users already there see**, measured during the flood: a session opened before it
switches between the Data and Risk pages every ``--every`` seconds (the time from the request to
the run's end), and a new real user opens the dashboard every ``--every`` seconds (the first
page's time, connect to ``script_finished``). Each is printed as median, p95 and maximum, with
the same figures measured for ``--quiet`` seconds before the flood as the baseline.

**After the flood**: a new session uploads a CSV of ``--upload-mb`` MB of small numbers (a table
much larger in memory than on disk); with ``--budget`` (e.g. ``64MB``, given to the server as
``SDC_MEMORY_BUDGET``) the run says whether it was admitted at once or refused, and why.

The client runs in this process, on the same machine: its CPU competes with the server's, so
the figures are an upper bound of what the flood itself costs.

**A visitor during a flood** (``--visitor``): while ``--flood`` sessions connect and leave over
``--seconds``, a visitor who was there before uploads a 4 kB CSV (the upload URL, the PUT and
the run that reads it), opens the Risk page and goes back to the Data page, again and again,
and a new visitor opens the dashboard every ``--every`` seconds (the first page, connect to the
run's end); the same before the flood (``--quiet`` seconds) is the baseline. The server's
CPU for one connect-and-leave is the flood's CPU over its sessions. With ``--root DIR`` the same
run is made against the checkout ``DIR`` too (an earlier commit, say), alternating with this one
for ``--rounds`` rounds: before and after on the same machine at the same time.

**What the shared caches keep of the built-in data** (``--recipes 40``): on a fresh server, one
session opens the Protect page of the example and moves the band width of age; the server's
resident memory is read; then 40 more sessions do the same, each to a width of its own (a
recipe of its own), and the memory is read after every 10. The same run with every session on
one width (``--same``, on another fresh server) gives what the sessions themselves take; the
difference is what the shared caches keep of the example's results, printed as a multiple of
its table (``ui.infra.memory.SHARED_RESULTS``).

Run: ``python -m bench.bench_flood [--flood 200] [--seconds 60] [--budget 64MB] [--drop]``
     ``python -m bench.bench_flood --visitor [--root DIR] [--rounds 3]``
     ``python -m bench.bench_flood --recipes 40``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import requests

from bench.server import (
    ROOT,
    alive,
    cpu_seconds,
    free_port,
    memory_kb,
    start_server,
    stop_server,
    tree_cpu_seconds,
)
from bench.st_client import StSession


def small_numbers_csv(megabytes: float) -> bytes:
    """Two-digit ages and one-digit codes (8 bytes a value in memory, 2–3 on disk)."""
    n = int(megabytes * 1e6 / 17)
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"age": rng.integers(10, 100, n),
                       **{f"code_{c}": rng.integers(0, 10, n) for c in "abcdefg"}})
    return df.to_csv(index=False).encode()


def fetch_assets(url: str) -> int:
    """What a browser without a cache fetches before it opens the websocket: the page and the
    scripts and styles it names; the bytes fetched."""
    with requests.Session() as http:
        page = http.get(url + "/", timeout=300)
        got = len(page.content)
        for path in re.findall(r'(?:src|href)="\./(static/[^"]+)"', page.text):
            got += len(http.get(f"{url}/{path}", timeout=300).content)
    return got


async def visit(url: str, drop: bool, timeout: float, assets: bool = False
                ) -> tuple[float, str]:
    """One session that connects and leaves: (seconds to its first page, "" or what failed);
    ``assets``: it first fetches the page's scripts as a browser without a cache does."""
    s = StSession(timeout=timeout)
    start = time.perf_counter()
    try:
        if assets:
            await asyncio.to_thread(fetch_assets, url)
        if drop:
            task = asyncio.ensure_future(s.connect(url))
            await asyncio.sleep(0.2)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        else:
            await s.connect(url)
        return time.perf_counter() - start, ""
    except Exception as err:  # noqa: BLE001 — a failed visit is counted, not raised
        return time.perf_counter() - start, f"{type(err).__name__}: {err}"
    finally:
        await s.close()


async def flood(url: str, n: int, seconds: float, drop: bool, assets: bool = False,
                timeout: float = 300.0) -> list[tuple[float, str]]:
    """``n`` visits started evenly over ``seconds``; their first pages' times."""
    async def later(i: int) -> tuple[float, str]:
        await asyncio.sleep(i * seconds / n)
        return await visit(url, drop, timeout, assets)

    return list(await asyncio.gather(*(later(i) for i in range(n))))


async def open_user(url: str, every: float, stop: asyncio.Event) -> list[float]:
    """A session opened before: switch between Data and Risk every ``every`` seconds until
    ``stop``; the switches' times."""
    s = StSession(timeout=600)
    await s.connect(url)
    times = []
    try:
        pages = ["Risk", "Data"]
        while not stop.is_set():
            times.append(await s.switch_page(pages[len(times) % 2]))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every)
    finally:
        await s.close()
    return times


async def new_users(url: str, every: float, stop: asyncio.Event) -> list[float]:
    """A new user every ``every`` seconds until ``stop``: the first pages' times (each session
    stays open until the end)."""
    times, sessions = [], []
    try:
        while not stop.is_set():
            s = StSession(timeout=600)
            sessions.append(s)
            start = time.perf_counter()
            await s.connect(url)
            times.append(time.perf_counter() - start)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every)
    finally:
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)
    return times


async def watch(url: str, every: float, during) -> tuple[list[float], list[float], object]:
    """The open user's switches and the new users' first pages while ``during`` runs."""
    stop = asyncio.Event()
    watchers = asyncio.gather(open_user(url, every, stop), new_users(url, every, stop))
    try:
        result = await during
    finally:
        stop.set()
    switches, firsts = await watchers
    return switches, firsts, result


async def upload(url: str, data: bytes) -> tuple[bool, str, float]:
    """A new session uploads ``data``: (admitted, the refusal or "", seconds)."""
    s = StSession(timeout=300)
    await s.connect(url)
    try:
        await s.switch_page("Data")
        seconds = await s.upload("Upload a table", "numbers.csv", data)
        refused = [e for e in s.errors() if "not loaded" in e]
        return not refused, refused[0] if refused else "", seconds
    finally:
        await s.close()


def figures(times: list[float]) -> str:
    if not times:
        return "none"
    q = sorted(times)
    return (f"n={len(q)}, median {statistics.median(q):.2f} s, "
            f"p95 {q[min(len(q) - 1, int(0.95 * len(q)))]:.2f} s, max {q[-1]:.2f} s")


async def scenario(url: str, args: argparse.Namespace) -> dict:
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(args.flood + 16))
    await visit(url, False, 300)  # the first run loads the modules: not part of any figure
    quiet = await watch(url, args.every, asyncio.sleep(args.quiet))
    t = time.perf_counter()
    loud = await watch(url, args.every,
                       flood(url, args.flood, args.seconds, args.drop, args.assets))
    wall = time.perf_counter() - t
    admitted = await upload(url, small_numbers_csv(args.upload_mb))
    return {"quiet": quiet, "loud": loud, "wall": wall, "upload": admitted}


def visitor_csv() -> bytes:
    """The visitor's file: 4 kB of a small survey."""
    rows = [f"{20 + i % 60},{'FM'[i % 2]},{i % 9},{1000 + 37 * i}" for i in range(205)]
    return ("age,sex,region,income\n" + "\n".join(rows) + "\n").encode()


async def visitor(s: StSession, stop: asyncio.Event) -> tuple[list[float], list[float]]:
    """A visitor already there (``s``, connected before): until ``stop``, uploads
    :func:`visitor_csv` on the Data page, opens the Risk page and goes back to the Data page,
    again and again; the uploads' times and the page changes'."""
    data, uploads, pages = visitor_csv(), [], []
    while not stop.is_set():
        name = f"visitor_{len(uploads)}.csv"  # a new file each time: read, not kept
        uploads.append(await s.upload("Upload a table", name, data))
        if name not in s.text() or s.errors():
            raise RuntimeError(f"the visitor's upload was not loaded: {s.errors()}")
        pages.append(await s.switch_page("Risk"))
        pages.append(await s.switch_page("Data"))
    return uploads, pages


async def visitor_scenario(url: str, args: argparse.Namespace, pid: int) -> dict:
    """Before and during a flood: a visitor's uploads and page changes, and new visitors'
    first pages (one every ``--every`` seconds); the server's CPU (with its workers) per
    session of the flood."""
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(args.flood + 16))
    await visit(url, False, 300)  # the first run loads the modules: not part of any figure
    there = StSession(timeout=600)  # the visitor, there before the flood
    await there.connect(url)

    async def watched(during) -> tuple[tuple[list[float], list[float]], list[float], Any]:
        stop = asyncio.Event()
        watchers = asyncio.gather(visitor(there, stop), new_users(url, args.every, stop))
        try:
            result = await during
        finally:
            stop.set()
        (uploads, pages), firsts = await watchers
        return (uploads, pages), firsts, result

    try:
        quiet = await watched(asyncio.sleep(args.quiet))
        cpu = tree_cpu_seconds(pid)
        loud = await watched(flood(url, args.flood, args.seconds, args.drop, args.assets))
        cpu = tree_cpu_seconds(pid) - cpu
    finally:
        await there.close()
    return {"quiet": quiet, "loud": loud, "cpu": cpu}


def median(times: list[float]) -> float:
    return statistics.median(times) if times else float("nan")


def visitor_runs(args: argparse.Namespace) -> None:
    """:func:`visitor_scenario` on fresh servers of each checkout, alternating."""
    roots = [ROOT] if args.root is None else [Path(args.root).resolve(), ROOT]
    rows: dict[Path, list[dict]] = {root: [] for root in roots}
    names = ("upload", "page change", "new visitor's first page")

    def figures_of(out: dict, when: str) -> list[list[float]]:
        (uploads, pages), firsts, _ = out[when]
        return [uploads, pages, firsts]

    for rnd in range(args.rounds):
        for root in roots:
            port = free_port()
            with tempfile.TemporaryDirectory() as tmp:
                proc = start_server(port, {"SDC_MEMORY_BUDGET": args.budget},
                                    log=Path(tmp) / "server.log", root=root)
                try:
                    out = asyncio.run(visitor_scenario(f"http://127.0.0.1:{port}", args,
                                                       proc.pid))
                finally:
                    stop_server(proc)
            rows[root].append(out)
            visits = out["loud"][2]
            failed = [why for _, why in visits if why]
            print(f"round {rnd + 1}, {root} (load average {os.getloadavg()[0]:.1f}):", flush=True)
            for name, quiet, loud in zip(names, figures_of(out, "quiet"),
                                         figures_of(out, "loud"), strict=True):
                print(f"  {name}: quiet {figures(quiet)}; flood {figures(loud)}", flush=True)
            print(f"  the flood's sessions: {figures([t for t, why in visits if not why])}, "
                  f"failed {len(failed)}; server CPU {1000 * out['cpu'] / args.flood:.0f} ms a "
                  "session", flush=True)
    print(f"{args.flood} sessions connecting and leaving over {args.seconds:g} s; medians over "
          f"{args.rounds} round(s) of each round's median:")
    for root in roots:
        print(f"  {root}:")
        for i, name in enumerate(names):
            quiet = median([median(figures_of(r, "quiet")[i]) for r in rows[root]])
            loud = median([median(figures_of(r, "loud")[i]) for r in rows[root]])
            print(f"    {name}: quiet {quiet:.2f} s, during the flood {loud:.2f} s")
        print(f"    server CPU a flood session "
              f"{1000 * median([r['cpu'] for r in rows[root]]) / args.flood:.0f} ms")


async def protect_move(url: str, width: int, sessions: list[StSession]) -> None:
    """A session that opens the Protect page and moves the band width of age to ``width``,
    then opens the Trade-offs and Risk pages; it stays open (in ``sessions``)."""
    s = StSession(timeout=300)
    sessions.append(s)
    await s.connect(url)
    await s.switch_page("Protect")
    await s.set_value("Band width of age", width)
    await s.switch_page("Trade-offs")
    await s.switch_page("Risk")


async def recipes_run(url: str, pid: int, n: int, same: bool) -> list[tuple[int, float]]:
    """The server's resident memory (MB) after one session, then after every 10 more."""
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(16))
    sessions: list[StSession] = []
    try:
        await protect_move(url, 2, sessions)
        out = [(1, memory_kb(pid, "VmRSS") / 1024)]
        for start in range(0, n, 10):
            widths = [10 if same else 3 + w for w in range(start, min(n, start + 10))]
            await asyncio.gather(*(protect_move(url, w, sessions) for w in widths))
            out.append((1 + start + len(widths), memory_kb(pid, "VmRSS") / 1024))
        return out
    finally:
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)


def recipes(n: int) -> None:
    from sdc_core.data.io import EXAMPLE_PATH, read_table
    from ui.infra.memory import memory_bytes

    table = memory_bytes(read_table(EXAMPLE_PATH)) / 2**20
    grown = {}
    for same in (True, False):
        port = free_port()
        with tempfile.TemporaryDirectory() as tmp:
            proc = start_server(port, log=Path(tmp) / "server.log")
            try:
                rows = asyncio.run(recipes_run(f"http://127.0.0.1:{port}", proc.pid, n, same))
            finally:
                stop_server(proc)
        print(("one recipe:        " if same else "a recipe each:     ")
              + ", ".join(f"{k} sessions {mb:.0f} MB" for k, mb in rows))
        grown[same] = rows[-1][1] - rows[0][1]
    extra = grown[False] - grown[True]
    print(f"the shared caches keep {extra:.0f} MB more of the example's results with a recipe "
          f"each: {extra / table:.0f} times its table ({table * 2**20 / 1e3:.0f} kB)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--flood", type=int, default=200)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--every", type=float, default=3.0)
    p.add_argument("--quiet", type=float, default=20.0)
    p.add_argument("--budget", default="64MB")
    p.add_argument("--upload-mb", type=float, default=1.0)
    p.add_argument("--drop", action="store_true")
    p.add_argument("--assets", action="store_true")
    p.add_argument("--recipes", type=int, default=0,
                   help="measure what the shared caches keep of the example instead")
    p.add_argument("--visitor", action="store_true",
                   help="a visitor's first page and 4 kB upload during the flood")
    p.add_argument("--root", help="--visitor: also against this checkout, alternating")
    p.add_argument("--rounds", type=int, default=1)
    args = p.parse_args()
    if args.recipes:
        recipes(args.recipes)
        return
    if args.visitor:
        visitor_runs(args)
        return
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        proc = start_server(port, {"SDC_MEMORY_BUDGET": args.budget},
                            log=Path(tmp) / "server.log")
        try:
            cpu0 = cpu_seconds(proc.pid)
            out = asyncio.run(scenario(f"http://127.0.0.1:{port}", args))
            cpu = cpu_seconds(proc.pid) - cpu0
            up = alive(port)
            rss = memory_kb(proc.pid, "VmRSS")
        finally:
            stop_server(proc)
    switches_q, firsts_q, _ = out["quiet"]
    switches, firsts, visits = out["loud"]
    failed = [why for _, why in visits if why]
    print(f"{args.flood} sessions connect and leave over {args.seconds:g} s"
          f"{' (dropped before their page)' if args.drop else ''}; the flood took "
          f"{out['wall']:.0f} s")
    print(f"  their first pages: {figures([s for s, why in visits if not why])}; "
          f"failed: {len(failed)}{' (' + failed[0] + ')' if failed else ''}")
    print(f"open session's page switch: quiet {figures(switches_q)}")
    print(f"                            flood {figures(switches)}")
    print(f"new user's first page:      quiet {figures(firsts_q)}")
    print(f"                            flood {figures(firsts)}")
    ok, why, seconds = out["upload"]
    print(f"then an upload of {args.upload_mb:g} MB with SDC_MEMORY_BUDGET={args.budget}: "
          + (f"admitted ({seconds:.1f} s)" if ok else f"refused: {why}"))
    print(f"server: {cpu:.0f} CPU s over the run, {rss / 1024:.0f} MB resident after, "
          f"alive: {up}")


if __name__ == "__main__":
    main()
