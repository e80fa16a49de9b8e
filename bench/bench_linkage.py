"""The linkage attack (docs/measures.md) on a generated table with 3 quasi-identifiers (age, sex,
region), against the naive risk profile and a bare ``groupby(...).transform("size")`` in the
same run. Targets: exact keys only (PRAM on region) ≤ 0.3 s at 1M rows; one distance column
(rank-swapped age) ≤ 3 s at 1M and ≤ 0.3 s at 100k. Also: a known continuous column (income),
where nearly every record is its own point in the k-d tree; and local suppression (blanks on
an exact column, then on a distance column), where the attackers of
:mod:`sdc_core.risk.linkage` differ (docs/measures.md, "The attackers").

Run: ``python -m bench.bench_linkage [n ...]``
"""

from __future__ import annotations

import sys

from bench.common import median_seconds, report, survey_table
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.risk import risk_profile
from sdc_core.risk.linkage import linkage_attack

QI = ["age", "sex", "region"]
CASES = [  # (label, steps, known columns, target at 100k, target at 1M)
    ("exact keys (PRAM region)", [{"method": "pram", "column": "region", "p": 0.1}], [],
     None, 0.3),
    ("distance column (swapped age)",
     [{"method": "rank_swap", "column": "age", "window_percent": 2.5}], [], 0.3, 3.0),
    ("+ known income (continuous)",
     [{"method": "rank_swap", "column": "age", "window_percent": 2.5}], ["income"], None,
     None),
    ("suppressed keys (k = 5)", [{"method": "local_suppression", "columns": QI, "k": 5}], [],
     None, None),
    ("swapped age + suppressed keys (k = 10)",
     [{"method": "rank_swap", "column": "age", "window_percent": 2.5},
      {"method": "local_suppression", "columns": QI, "k": 10}], [], None, None),
]


def main(sizes: list[int]) -> None:
    for n in sizes:
        df = survey_table(n)
        baseline = median_seconds(lambda df=df: df.groupby(QI)["age"].transform("size"))
        naive = median_seconds(lambda df=df: risk_profile(df, QI))
        print(f"n = {n:,} rows, 3 QIs")
        print("  " + report("risk_profile (released keys)", naive, "groupby.transform('size')",
                            baseline))
        for label, steps, known, t100k, t1m in CASES:
            recipe = parse_recipe({"seed": 1, "steps": steps})
            protected = apply_recipe(recipe, df).data
            seconds = median_seconds(
                lambda df=df, p=protected, r=recipe, k=known: linkage_attack(df, p, QI, r, k),
                repeat=5)
            target = {100_000: t100k, 1_000_000: t1m}.get(n)
            print("  " + report(f"linkage, {label}", seconds, "groupby.transform('size')",
                                baseline, target))


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [100_000, 1_000_000])
