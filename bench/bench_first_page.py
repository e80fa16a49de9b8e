"""The first pages after a server starts: what the first visitor waits for, against a second
visitor of the same server.

For each of ``--rounds`` rounds a fresh ``streamlit run app.py`` is started (and the time until
it answers its health check taken), then one session (:mod:`bench.st_client`, no browser)
opens the dashboard (the Data page with the built-in ACTG 175) and goes to the Risk and the
Protect page; then a second, new session does the same on the same server. Each figure is the
time from sending the run to its ``script_finished``; the second session's is the baseline: its
ratio is what a cold server adds (imports, the worker processes, the first caches). Medians over
rounds. The server's CPU over the first session's three pages is printed beside.

The server warms up as it starts (:mod:`ui.infra.warmup`): the same rounds are run with
``SDC_WARMUP=0`` too, interleaved, so the figures with and without it come from the same run
and a drift of the machine hits both. ``--wait S`` is how long after the health check the first
visitor arrives (default 5 s: a teacher's server is started before the class opens it; 0 is the
worst case, a visitor at once).

Run: ``python -m bench.bench_first_page [--rounds 5] [--wait 5]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time

import numpy as np

from bench.server import alive, free_port, start_server, stop_server, tree_cpu_seconds
from bench.st_client import StSession
from ui.infra.warmup import WARMUP_ENV

PAGES = ("Risk", "Protect")


async def visit(url: str) -> list[float]:
    """Seconds of a new session's first page, then of each of :data:`PAGES`."""
    s = StSession(timeout=600)
    start = time.perf_counter()
    await s.connect(url)
    times = [time.perf_counter() - start]
    try:
        for page in PAGES:
            times.append(await s.switch_page(page))
        if s.errors():
            raise RuntimeError(f"the pages said: {s.errors()}")
    finally:
        await s.close()
    return times


def one_server(warm: bool, wait: float) -> tuple[float, list[float], list[float], float]:
    """Health-check time, the first session's and the second's page times, and the server's
    CPU (with its workers) over the first session."""
    port = free_port()
    start = time.perf_counter()
    proc = start_server(port, env={WARMUP_ENV: "1" if warm else "0"})
    healthy = time.perf_counter() - start
    try:
        time.sleep(wait)
        assert alive(port)
        cpu = tree_cpu_seconds(proc.pid)
        first = asyncio.run(visit(f"http://127.0.0.1:{port}"))
        cpu = tree_cpu_seconds(proc.pid) - cpu
        second = asyncio.run(visit(f"http://127.0.0.1:{port}"))
    finally:
        stop_server(proc)
    return healthy, first, second, cpu


def report(label: str, runs: list[tuple[float, list[float], list[float], float]]) -> None:
    print(f"{label}: {len(runs)} fresh servers, medians")
    print(f"  server start to health check   {np.median([r[0] for r in runs]):7.2f} s")
    names = ["first page (Data)"] + [f"{p} page" for p in PAGES]
    for i, name in enumerate(names):
        first = float(np.median([r[1][i] for r in runs]))
        second = float(np.median([r[2][i] for r in runs]))
        print(f"  {name:<20} first visitor {first:6.2f} s | second visitor {second:6.2f} s "
              f"| ratio {first / second:5.1f}")
    total = [sum(r[1]) for r in runs]
    print(f"  first visitor, three pages     {np.median(total):7.2f} s "
          f"(server CPU with workers {np.median([r[3] for r in runs]):.2f} s)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--wait", type=float, default=5.0)
    args = p.parse_args()
    runs: dict[bool, list] = {False: [], True: []}
    for _ in range(args.rounds):
        for warm in (False, True):
            runs[warm].append(one_server(warm, args.wait))
    print(f"first visitor {args.wait:g} s after the health check; load average "
          f"{os.getloadavg()[0]:.1f}")
    report(f"{WARMUP_ENV}=0 (no warm-up)", runs[False])
    report("with the warm-up", runs[True])
    for i, name in enumerate(["first page (Data)"] + [f"{p} page" for p in PAGES]):
        cold = float(np.median([r[1][i] for r in runs[False]]))
        warm_ = float(np.median([r[1][i] for r in runs[True]]))
        print(f"  {name:<20} first visitor with the warm-up / without: {warm_ / cold:5.2f}")


if __name__ == "__main__":
    main()
