"""A 3-way table of 1M records with threshold suppression, secondary suppression and the audit
(docs/tables.md), target ≤ 10 s, against a bare ``df.groupby(cols).size()`` in the same run.

The records: ``bench.common.survey_table`` (a 30-level Zipf region, sex) with a 50-level
occupation drawn Zipf-like (exponent 1.5) so that the rare occupations leave small cells;
the table is region × occupation × sex (31 × 51 × 3 cells with margins), the threshold rule
t = 5 (seed 004's), secondary suppression by the hypercube method (``auto`` picks it at this
size), then the audit of the published pattern.

Run: ``python -m bench.bench_tables [records]``
"""

from __future__ import annotations

import sys
import time

import numpy as np

from bench.common import median_seconds, report, survey_table
from sdc_core.cell_rules import threshold_rule
from sdc_core.crosstab import crosstab
from sdc_core.suppression_audit import audit, secondary_suppression

COLUMNS = ["region", "occupation", "sex"]
TARGET = 10.0


def records(n: int, seed: int = 0):
    df = survey_table(n, seed)
    rng = np.random.default_rng(seed + 1)
    p = 1.0 / np.arange(1, 51) ** 1.5
    df["occupation"] = np.array([f"O{i:02d}" for i in range(1, 51)])[
        rng.choice(50, size=n, p=p / p.sum())]
    return df


def pipeline(df):
    table = crosstab(df, COLUMNS)
    rules = threshold_rule(table, t=5)
    result = secondary_suppression(table, rules)
    final = audit(table, result.suppressed, rules)
    return table, rules, result, final


def main(n: int) -> None:
    start = time.perf_counter()
    df = records(n)
    print(f"{n:,} records (generated in {time.perf_counter() - start:.1f} s, not timed below)")
    table, rules, result, final = pipeline(df)
    print(f"  {len(table.frame):,} cells with margins; {int(rules.primary.sum())} primary, "
          f"{int((result.status == 'secondary').sum())} secondary ({result.method}); "
          f"audit passes: {final.passes}, {final.exposed_cells} exposed")
    base = median_seconds(lambda: df.groupby(COLUMNS).size(), repeat=5)
    timed = median_seconds(lambda: pipeline(df), repeat=5)
    print("  " + report("table + rules + suppression + audit", timed, "groupby(cols).size()",
                        base, TARGET if n >= 1_000_000 else None))
    for name, func in (("crosstab", lambda: crosstab(df, COLUMNS)),
                       ("secondary_suppression", lambda: secondary_suppression(table, rules)),
                       ("audit", lambda: audit(table, result.suppressed, rules))):
        print(f"    {name:<22} median {median_seconds(func, repeat=5):6.2f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
