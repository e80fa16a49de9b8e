"""The cheapest setting under a risk target among 200 combinations of three methods on a
generated 100k-row table, every combination measured with the linkage attack: the pruned search
against trying every combination (the exhaustive search) in the same run, and against running
each combination's recipe from scratch (apply + risk + linkage + IL1, no shared prefixes).

Run: ``python -m bench.bench_search [n]``
"""

from __future__ import annotations

import json
import sys
import time

from bench.common import report, survey_table
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.risk import risk_profile
from sdc_core.risk.linkage import linkage_attack
from sdc_core.sweep.run import run_sweep
from sdc_core.utility import il1

QI = ["age", "sex", "region"]
NUMERIC = ["age", "income"]
GRID = {"combine": True, "seeds": 1, "numeric": NUMERIC,
        "target": {"measure": "linkage_risk_percent", "at_most": 1.0}, "settings": [
            {"method": "band", "column": "age", "param": "width",
             "values": [0, 2, 4, 5, 8, 10, 15, 20, 25, 50]},
            {"method": "recode", "column": "region", "param": "min_count",
             "values": [0, 1000, 2000, 5000, 10000]},
            {"method": "pram", "column": "sex", "param": "p", "values": [0, 0.05, 0.1, 0.2]}]}


def timed(func):
    start = time.perf_counter()
    out = func()
    return out, time.perf_counter() - start


def from_scratch(df, recipes: list[str]) -> None:
    for text in recipes:
        recipe = parse_recipe(json.loads(text))
        out = apply_recipe(recipe, df).data
        risk_profile(out, QI)
        linkage_attack(df, out, QI, recipe)
        il1(df, out, NUMERIC)


def main(n: int) -> None:
    df = survey_table(n)
    runs = {search: [timed(lambda s=search: run_sweep(df, QI, {**GRID, "search": s}))
                     for _ in range(3)] for search in ("pruned", "exhaustive")}
    (pruned, _), (full, _) = runs["pruned"][0], runs["exhaustive"][0]
    t_pruned = sorted(t for _, t in runs["pruned"])[1]
    t_full = sorted(t for _, t in runs["exhaustive"])[1]
    _, t_scratch = timed(lambda: from_scratch(df, full.table["recipe"].iloc[1:].tolist()))
    print(f"n = {n:,} rows, {full.asked} combinations (10 band widths × 5 rare-region "
          "thresholds × 4 PRAM p on sex), target linkage_risk_percent ≤ 1")
    print(f"  evaluated: pruned {pruned.evaluated}, exhaustive {full.evaluated}; same best: "
          f"{pruned.best_recipe == full.best_recipe}; monotonicity violations among all "
          f"{full.evaluated}: {full.violations}")
    print(f"  best: {json.dumps(full.best_recipe['steps'] if full.best_recipe else None)}")
    print("  " + report("pruned search", t_pruned, "exhaustive search", t_full))
    print("  " + report("exhaustive search", t_full, "each recipe from scratch", t_scratch))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
