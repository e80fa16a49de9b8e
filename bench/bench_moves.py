"""Server CPU of one session's steps: a Protect slider move and the Risk page's first view.

One session against a real ``streamlit run app.py`` (driven by :mod:`bench.st_client`, no
browser), the workshop journey of ``bench/bench_load.py`` repeated ``--rounds`` times, each
round with a table of its own (``--rows`` records of a survey table, a seed of its own: the
caches start cold, as for a newly uploaded file): upload → tag the quasi-identifiers → **the
Risk page's first view** → Protect → **``--moves`` moves of the "Band width of age" slider**.

The figure is the server process's CPU time (user + system, ``/proc/<pid>/stat``, every thread
of the process: the script runs, the event loop, the websocket) from sending the message to the
end of the run, per step, and beside it the CPU of the process with its worker processes
(``bench.server.tree_cpu_seconds``: what the computation handed to them costs); the clock
ticks every 10 ms, so each figure is a median over rounds of the step's mean (the slider: a
round's moves together). The wall time is printed too.

**Drawing alone**: each round then moves the slider ``--moves`` times between the last two
widths it set (their results are cached: nothing is computed, the results are only drawn
again) and opens the Risk page a second time (its figures cached): what Streamlit's drawing of
the page as shown costs the server, the floor under any saving in the computation.

Targets (issue "a whole class at once"): ≤ 15 ms of server CPU per slider move on the
2,000-record table, and the Risk page's first view 4 times cheaper than before it.
``--root DIR`` runs the same journey against another checkout of the app (an earlier commit,
say, in a ``git worktree``): the figures before and after, in the same run.

Run: ``python -m bench.bench_moves [--rounds 12] [--moves 10] [--rows 2000] [--root DIR]``
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

import numpy as np

from bench.bench_load import QI, csv_bytes
from bench.server import (
    ROOT,
    cpu_seconds,
    free_port,
    start_server,
    stop_server,
    tree_cpu_seconds,
)
from bench.st_client import StSession

SLIDER = "Band width of age"
#: The steps measured: a move, the Risk page's first view, and the two drawn alone
STEPS = ("slider", "risk", "drawn", "risk_again")
LABELS = {"slider": "slider move", "risk": "Risk, first view",
          "drawn": "move, drawing alone", "risk_again": "Risk again, drawing alone"}


async def journey(url: str, pid: int, rounds: int, moves: int, rows: int
                  ) -> dict[str, list[float]]:
    """Per round and step of :data:`STEPS`: CPU and wall seconds (a move's: the mean of the
    round's)."""
    out: dict[str, list[float]] = {f"{step}_{what}": [] for step in STEPS
                                   for what in ("cpu", "tree", "wall")}
    s = StSession(timeout=600)
    await s.connect(url)
    try:
        for r in range(rounds + 1):  # round 0 warms the server up (imports, first caches)
            name = f"survey_{r}.csv"
            await s.switch_page("Data")
            await s.upload("Upload a table", name, csv_bytes(rows, seed=1000 + r))
            if name not in s.text():
                raise RuntimeError(f"the upload did not load: {s.errors()}")
            await s.set_value("Quasi-identifiers", QI)
            cpu, tree = cpu_seconds(pid), tree_cpu_seconds(pid)
            wall = await s.switch_page("Risk")
            risk = cpu_seconds(pid) - cpu, tree_cpu_seconds(pid) - tree
            await s.switch_page("Protect")
            cpu, tree, wall_moves = cpu_seconds(pid), tree_cpu_seconds(pid), 0.0
            widths = [2 + (r * moves + i) % 40 for i in range(moves)]
            for width in widths:
                wall_moves += await s.set_value(SLIDER, width)
            slider = cpu_seconds(pid) - cpu, tree_cpu_seconds(pid) - tree
            # drawing alone: the last two widths (their results cached), and the Risk page again
            last = widths[-2:]
            cpu, tree, wall_drawn = cpu_seconds(pid), tree_cpu_seconds(pid), 0.0
            for i in range(moves):
                wall_drawn += await s.set_value(SLIDER, last[i % 2])
            drawn = cpu_seconds(pid) - cpu, tree_cpu_seconds(pid) - tree
            cpu, tree = cpu_seconds(pid), tree_cpu_seconds(pid)
            wall_again = await s.switch_page("Risk")
            again = cpu_seconds(pid) - cpu, tree_cpu_seconds(pid) - tree
            if s.errors():
                raise RuntimeError(f"errors on the page: {s.errors()}")
            if r:
                for step, (c, t), w, n in (("risk", risk, wall, 1),
                                           ("slider", slider, wall_moves, moves),
                                           ("drawn", drawn, wall_drawn, moves),
                                           ("risk_again", again, wall_again, 1)):
                    out[f"{step}_cpu"].append(c / n)
                    out[f"{step}_tree"].append(t / n)
                    out[f"{step}_wall"].append(w / n)
    finally:
        await s.close()
    return out


def measure(root: Path, args: argparse.Namespace) -> dict[str, float]:
    """The medians of one checkout's server."""
    port = free_port()
    proc = start_server(port, root=root)
    try:
        got = asyncio.run(journey(f"http://127.0.0.1:{port}", proc.pid, args.rounds,
                                  args.moves, args.rows))
    finally:
        stop_server(proc)
    return {k: float(np.median(v)) * 1000 for k, v in got.items()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=12)
    p.add_argument("--moves", type=int, default=10)
    p.add_argument("--rows", type=int, default=2000)
    p.add_argument("--root", type=Path, help="another checkout of the app, measured first")
    args = p.parse_args()
    if args.moves < 2:
        p.error("--moves: at least 2 (the moves drawn alone go between the last two widths)")
    runs = {}
    if args.root:
        runs["other"] = measure(args.root.resolve(), args)
    start = time.perf_counter()
    runs["this"] = measure(ROOT, args)
    print(f"{args.rounds} rounds, {args.rows:,} records, {args.moves} slider moves a round "
          f"({time.perf_counter() - start:.0f} s); medians over rounds, ms")
    print(f"{'checkout':<10}{'step':<28}{'server':>8}{'+ workers':>11}{'wall':>8}")
    for name, m in runs.items():
        for step in STEPS:
            print(f"{name:<10}{LABELS[step]:<28}{m[f'{step}_cpu']:>8.1f}"
                  f"{m[f'{step}_tree']:>11.1f}{m[f'{step}_wall']:>8.1f}")
    this = runs["this"]
    print(f"slider move: {this['slider_cpu']:.1f} ms of server CPU: target <= 15 ms "
          f"{'met' if this['slider_cpu'] <= 15 else 'MISSED'}")
    if "other" in runs:
        other = runs["other"]
        for step in ("slider", "risk"):
            print(f"{step}: {other[f'{step}_cpu'] / this[f'{step}_cpu']:.1f}x less server CPU "
                  f"than {args.root}")


if __name__ == "__main__":
    main()
