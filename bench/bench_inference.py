"""The attribute-inference attack (docs/measures.md, "The attribute-inference attack") on a
generated table with 3 keys (age, sex, region) and 2 sensitive columns (a 6-level answer with
PRAM p 0.1, and log-normal income, numeric), beside the linkage attack on the same data: median
time and the ratio. Also a case with a distance column (rank-swapped age), where the attack
counts the candidates with the linkage attack's matching once per value of the categorical
sensitive column (the numeric one is left out there).

Run: ``python -m bench.bench_inference [n ...]``
"""

from __future__ import annotations

import sys

import numpy as np

from bench.common import median_seconds, report, survey_table
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.risk.inference import attribute_inference
from sdc_core.risk.linkage import linkage_attack

QI = ["age", "sex", "region"]
CASES = [  # (label, steps, sensitive)
    ("exact keys (PRAM answer)", [{"method": "pram", "column": "answer", "p": 0.1}],
     ["answer", "income"]),
    ("distance column (swapped age)",
     [{"method": "rank_swap", "column": "age", "window_percent": 2.5},
      {"method": "pram", "column": "answer", "p": 0.1}], ["answer"]),
]


def main(sizes: list[int]) -> None:
    for n in sizes:
        df = survey_table(n)
        df["answer"] = np.random.default_rng(1).integers(1, 7, n)
        print(f"n = {n:,} rows, 3 keys")
        for label, steps, sensitive in CASES:
            recipe = parse_recipe({"seed": 1, "steps": steps})
            applied = apply_recipe(recipe, df)
            released, reports = applied.data, applied.reports
            link = median_seconds(
                lambda d=df, p=released, r=recipe, rep=reports: linkage_attack(
                    d, p, QI, r, reports=rep), repeat=5)
            seconds = median_seconds(
                lambda d=df, p=released, r=recipe, rep=reports, s=sensitive: attribute_inference(
                    d, p, QI, s, r, reports=rep), repeat=5)
            result = attribute_inference(df, released, QI, sensitive, recipe, reports=reports)
            print("  " + report(f"inference, {label}", seconds, "linkage attack", link))
            for c in result.columns:
                print(f"    {c.column}: {c.kind}, accuracy {c.accuracy:.4f}, baseline "
                      f"{c.baseline:.4f}, gain {c.gain:.2f} points"
                      + (f", CAP {c.cap:.4f}" if c.cap is not None else
                         f", ±{c.width:.2f}"))


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [100_000])
