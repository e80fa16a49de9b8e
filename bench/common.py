"""Helpers shared by the benchmarks: timing and the generated test tables."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import pandas as pd


def median_seconds(func: Callable[[], object], repeat: int = 7, warmup: int = 1) -> float:
    """Median wall-clock time of ``func()`` over ``repeat`` runs after ``warmup`` runs."""
    for _ in range(warmup):
        func()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def survey_table(n: int, seed: int = 0) -> pd.DataFrame:
    """n records: age 0–99 (uniform), sex F/M, a 30-level Zipf-distributed region (text),
    a log-normal income and a weight."""
    rng = np.random.default_rng(seed)
    ranks = np.arange(1, 31)
    p = 1.0 / ranks**1.1
    region = np.array([f"R{r:02d}" for r in ranks])[rng.choice(30, size=n, p=p / p.sum())]
    return pd.DataFrame({
        "age": rng.integers(0, 100, n),
        "sex": rng.choice(np.array(["F", "M"]), n),
        "region": pd.array(region, dtype="str"),
        "income": np.round(rng.lognormal(10, 0.8, n), 2),
        "weight": rng.uniform(50, 150, n),
    })


def report(name: str, seconds: float, baseline_name: str, baseline: float,
           target: float | None = None, ratio_target: float | None = None) -> str:
    """One line: the median, the baseline's, their ratio and whether the target (seconds) or the
    ratio target was met."""
    ratio = seconds / baseline
    line = (f"{name:<38} median {seconds * 1000:8.1f} ms | {baseline_name:<34} "
            f"{baseline * 1000:8.1f} ms | ratio {ratio:5.2f}")
    if target is not None:
        line += f" | target <= {target * 1000:.0f} ms: {'met' if seconds <= target else 'MISSED'}"
    if ratio_target is not None:
        line += (f" | target ratio <= {ratio_target:g}: "
                 f"{'met' if ratio <= ratio_target else 'MISSED'}")
    return line
