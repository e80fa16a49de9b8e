"""Streamlit's own cost of a slider move on this machine: the floor under any page's move.

A bare app (written to a temporary folder, with this project's ``.streamlit/config.toml``)
has a slider whose callback reruns a keyed fragment alone, as the Protect page's value
controls do (``views/protect.py``: the widget's run, then the fragment's); the fragment draws
``N`` metrics and nothing else, with no computation. One session (:mod:`bench.st_client`, no
browser) moves the slider ``--moves`` times for each ``N``; the figure is the server process's
CPU time per move (user + system, ``/proc/<pid>/stat``), then the cost of one more element
(the slope between the smallest and the largest ``N``).

Read beside ``bench/bench_moves.py``: a Protect move on the journey's 2,000 records redraws 18
elements (the risk, population and loss tiles as three HTML elements, ``ui/logic/tiles.py``;
the chart and its two folded parts, the undo buttons, three texts and the blocks around them).

Run: ``python -m bench.bench_floor [--moves 200] [--elements 0 20 60]``
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
from pathlib import Path

from bench.server import ROOT, cpu_seconds, free_port, start_server, stop_server
from bench.st_client import StSession

SLIDER = "Band width of age"
APP = '''
import os
import streamlit as st

N = int(os.environ["FLOOR_ELEMENTS"])


def moved():
    st.rerun("results")


st.slider("{slider}", 0, 50, 5, key="w", on_change=moved)


@st.fragment(key="results")
def results():
    v = st.session_state["w"]
    for i in range(N):
        st.metric(f"measure {{i}}", f"{{v * i}}", f"{{i}}")


results()
'''


async def moves(url: str, pid: int, n: int) -> float:
    """Server CPU seconds per slider move (after ten moves that warm it up)."""
    s = StSession(timeout=120)
    await s.connect(url)
    try:
        for i in range(10):
            await s.set_value(SLIDER, 2 + i)
        cpu = cpu_seconds(pid)
        for i in range(n):
            await s.set_value(SLIDER, 2 + i % 40)
        return (cpu_seconds(pid) - cpu) / n
    finally:
        await s.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--moves", type=int, default=200)
    p.add_argument("--elements", type=int, nargs="+", default=[0, 20, 60])
    args = p.parse_args()
    per_move = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "app.py").write_text(APP.format(slider=SLIDER))
        shutil.copytree(ROOT / ".streamlit", root / ".streamlit")
        for n in args.elements:
            port = free_port()
            proc = start_server(port, env={"FLOOR_ELEMENTS": str(n)}, root=root)
            try:
                per_move[n] = asyncio.run(moves(f"http://127.0.0.1:{port}", proc.pid,
                                                args.moves))
            finally:
                stop_server(proc)
    print(f"a bare app's slider move, {args.moves} moves each: server CPU per move")
    for n, seconds in per_move.items():
        print(f"  {n:>4} metrics: {seconds * 1000:6.1f} ms")
    lo, hi = min(per_move), max(per_move)
    if hi > lo:
        slope = (per_move[hi] - per_move[lo]) / (hi - lo)
        print(f"one more element: {slope * 1000:.2f} ms; the move itself: "
              f"{per_move[lo] * 1000:.1f} ms at {lo} metrics")


if __name__ == "__main__":
    main()
