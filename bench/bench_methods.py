"""Protection methods on a generated 1M-row table against plain numpy baselines in the same run.

Targets (docs/developing.md, "Performance targets"), 1M values: rank swap ≤ 0.5 s, PRAM and
relabeling ≤ 0.1 s, banding ≤ 0.02 s. Baselines: ``np.argsort`` of the column (rank swap needs
at least a sort), ``Generator.choice`` of a category per record (a vectorised random choice),
and the bare ``np.floor(x / w) * w + w / 2`` expression.

Run: ``python -m bench.bench_methods [n]``
"""

from __future__ import annotations

import sys

import numpy as np

from bench.common import median_seconds, report, survey_table
from sdc_core.methods import band, pram, rank_swap, relabel


def main(n: int) -> None:
    df = survey_table(n)
    income, region, age = df["income"], df["region"], df["age"]
    x = income.to_numpy()
    gen = np.random.default_rng(0)
    sort = median_seconds(lambda: np.argsort(x))
    choice = median_seconds(lambda: gen.choice(30, size=n))
    floor = median_seconds(lambda: np.floor(age.to_numpy() / 10) * 10 + 5)
    print(f"n = {n:,} values")
    rows = [
        ("rank_swap income, P = 2.5 %", lambda: rank_swap(income, 2.5, seed=1), "np.argsort",
         sort, 0.5),
        ("pram flip region (30 levels), p = 0.05", lambda: pram(region, p=0.05, seed=1),
         "Generator.choice", choice, 0.1),
        ("pram flip sex (2 levels), p = 0.05", lambda: pram(df["sex"], p=0.05, seed=1),
         "Generator.choice", choice, 0.1),
        ("pram invariant region, retention 0.8",
         lambda: pram(region, invariant=True, retention=0.8, seed=1), "Generator.choice",
         choice, None),
        ("relabel region, alpha = 0.1", lambda: relabel(region, 0.1, seed=1),
         "Generator.choice", choice, 0.1),
        ("band age, width 10", lambda: band(age, 10), "numpy floor expression", floor, 0.02),
    ]
    for name, func, base_name, base, target in rows:
        print("  " + report(name, median_seconds(func, repeat=5), base_name, base,
                            target if n == 1_000_000 else None))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
