"""Whether the server keeps up with a class: the runs of the last minute, their median and
95th percentile, and what that tells a teacher (docs/teaching.md, "The class at a glance").

What a run's time is, and what it leaves out, is said where runs are timed
(:mod:`ui.infra.pace`); here are plain functions of ``(end, seconds)`` pairs, no Streamlit.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

#: The window the figures cover (s)
WINDOW = 60.0
#: The 95th percentile (s) at or below which the server keeps up: a move that takes longer
#: is felt as waiting
KEEPING_UP = 1.0


@dataclass(frozen=True)
class RunTimes:
    """The runs that ended in the window: how many, and their median and 95th percentile in
    seconds (None when there is none)."""

    runs: int
    median: float | None
    p95: float | None


def window_times(runs: Iterable[tuple[float, float]], now: float,
                 window: float = WINDOW) -> RunTimes:
    """The runs ``(end, seconds)`` that ended in the ``window`` seconds before ``now``
    (``now - window < end <= now``), summarised.

    The median and the 95th percentile are NumPy's (``np.percentile``, its default linear
    method, as ``bench/bench_load.py`` reports them): for the n durations sorted,
    x₍₀₎ ≤ … ≤ x₍ₙ₋₁₎, the q-th percentile is x₍ⱼ₎ + (h − j)(x₍ⱼ₊₁₎ − x₍ⱼ₎) with
    h = (n − 1)·q/100 and j = ⌊h⌋ (Hyndman and Fan's definition 7); the median is q = 50.
    """
    seconds = np.array([s for end, s in runs if now - window < end <= now], dtype=float)
    if not len(seconds):
        return RunTimes(0, None, None)
    median, p95 = np.percentile(seconds, [50, 95])
    return RunTimes(len(seconds), float(median), float(p95))


def busy(times: RunTimes, limit: float = KEEPING_UP) -> bool:
    """Whether the server is behind: the 95th percentile of the window is over ``limit``
    seconds (never with no run in the window)."""
    return times.p95 is not None and times.p95 > limit


def verdict(times: RunTimes, limit: float = KEEPING_UP) -> str:
    """What the figures tell a teacher: no moves in the window; busy, so wait before the next
    instruction (:func:`busy`); or keeping up (p95 ≤ ``limit`` seconds)."""
    if times.p95 is None:
        return "no moves in the last minute"
    if busy(times, limit):
        return "busy — wait a moment before the next instruction"
    return "keeping up"


def seconds_text(seconds: float | None) -> str:
    """A run's time as a teacher reads it: "0.04 s", "1.3 s" (a no-break space before the
    unit: the line wraps between figures, not inside one); "—" for none."""
    if seconds is None:
        return "—"
    return f"{seconds:.2f}\u00a0s" if seconds < 1 else f"{seconds:.1f}\u00a0s"


def class_line(times: RunTimes, sessions: int | None) -> str:
    """The teacher's line (Markdown): the sessions connected ("—" when unknown), the moves of
    the last minute with their median and 95th percentile, and the :func:`verdict`. Counts
    and seconds only."""
    connected = "—" if sessions is None else f"{sessions:,}"
    said = "session" if sessions == 1 else "sessions"
    moves = f"**{times.runs:,}** move{'' if times.runs == 1 else 's'} in the last minute"
    if times.runs:
        moves += (f" (median {seconds_text(times.median)}, 95\u00a0% within "
                  f"{seconds_text(times.p95)})")
    return f"**{connected}** {said} connected · {moves}: **{verdict(times)}**"
