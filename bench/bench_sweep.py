"""A sweep of 20 settings on a generated 100k-row table, every row with the linkage attack
(target: ≤ 3 s), against a naive loop in the same run that applies each setting and recomputes
the full risk profile, the linkage attack, IL1 over all columns and both correlation matrices
from scratch.

A second case times the same sweep with a sensitive answer N1 (1–6) attacked in every row
(attribute disclosure, docs/utility.md, "Attribute disclosure in a sweep") against the sweep
without it.

Run: ``python -m bench.bench_sweep [n]``
"""

from __future__ import annotations

import sys

import numpy as np

from bench.common import median_seconds, report, survey_table
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.risk import risk_profile
from sdc_core.risk.linkage import linkage_attack
from sdc_core.sweep.run import parse_grid, run_sweep
from sdc_core.utility import eigenvalue_similarity, il1

QI = ["age", "sex", "region"]
NUMERIC = ["age", "income", "weight"]
GRID = {"seeds": 1, "numeric": NUMERIC, "settings": [
    {"method": "band", "column": "age", "param": "width", "values": [2, 5, 10, 15, 20]},
    {"method": "pram", "column": "region", "param": "p", "values": [0.01, 0.05, 0.1, 0.2, 0.3]},
    {"method": "relabel", "column": "sex", "param": "alpha", "values": [0.05, 0.1, 0.2, 0.4, 0.8]},
    {"method": "rank_swap", "column": "income", "param": "window_percent",
     "values": [0.5, 1, 2.5, 5, 10]}]}


def naive(df) -> None:
    settings = parse_grid(GRID, df).settings
    for s in settings:
        recipe = parse_recipe({"seed": 0, "steps": [s.step]})
        out = apply_recipe(recipe, df).data
        risk_profile(out, QI)
        linkage_attack(df, out, QI, recipe)
        il1(df, out, NUMERIC)
        eigenvalue_similarity(df, out, NUMERIC)


def main(n: int) -> None:
    df = survey_table(n)
    fast = median_seconds(lambda: run_sweep(df, QI, GRID).table, repeat=5)
    slow = median_seconds(lambda: naive(df), repeat=3)
    print(f"n = {n:,} rows, 20 settings, 3 QIs, 3 numeric columns")
    print("  " + report("run_sweep", fast, "naive apply + full recompute", slow,
                        3.0 if n == 100_000 else None))
    answers = df.assign(N1=np.random.default_rng(1).integers(1, 7, n))
    plain = median_seconds(lambda: run_sweep(answers, QI, GRID).table, repeat=5)
    attacked = median_seconds(
        lambda: run_sweep(answers, QI, GRID | {"sensitive": ["N1"]}).table, repeat=5)
    print("  " + report("run_sweep, sensitive N1", attacked, "run_sweep", plain))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
