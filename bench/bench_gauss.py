"""Secondary suppression by Gaussian elimination beside today's method (docs/tables.md,
"Secondary suppression by Gaussian elimination"), on the same primary cells of outside tables
of about 10², 10⁴ and 10⁶ cells with margins: the threshold rule t = 5 on

- 10²: UCI Adult, sex × race × marital-status (144 cells);
- 10⁴: UCI Adult, age × education × occupation (18,615 cells);
- 10⁶: ACTG 175, cd80 × days (778,974 cells: 1,090 × 713 levels and the margins).

For each method (``auto``, today's: the exact MILP on a small table, hypercubes past it; and
``gauss``, the elimination, repaired by hypercubes where the audit finds a primary cell
exposed) it prints the secondary cells, the value they hold, whether the audit passes (and
the cells it left unchecked within the time limit) and the seconds, each run once within the
same time limit (``TIME_LIMIT`` of sdc_core/tables/table_release.py), and the ratio of the
times. The elimination's own seconds (the pattern before its audit) are printed beside, or,
when it does not end within the time limit, the share of the candidates it had decided.

Run: ``python -m bench.bench_gauss [--sizes 2,4,6]``
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from sdc_core.tables.cell_rules import threshold_rule
from sdc_core.tables.crosstab import crosstab
from sdc_core.tables.gauss import gauss_pattern
from sdc_core.tables.suppression_audit import _weights, secondary_suppression
from sdc_core.tables.table_release import TIME_LIMIT

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
TABLES = {2: ("adult.csv", ["sex", "race", "marital-status"]),
          4: ("adult.csv", ["age", "education", "occupation"]),
          6: ("actg175.csv", ["cd80", "days"])}


def read(name: str) -> pd.DataFrame:
    return pd.read_csv(DATA / name, sep=None, engine="python")


def elimination_alone(table, rules) -> str:
    """The elimination's seconds, or the share of candidates decided within the time limit."""
    tried = [0]
    start = time.perf_counter()

    def tick() -> None:
        tried[0] += 1
        if time.perf_counter() - start > TIME_LIMIT:
            raise TimeoutError

    try:
        gauss_pattern(table, rules.primary, _weights(table, "total"),
                      np.zeros(len(table.frame), dtype=bool), tick)
    except TimeoutError:
        return (f"not ended in {TIME_LIMIT:g} s ({tried[0] - 1:,} of "
                f"{int((~rules.primary).sum()):,} candidates decided)")
    return f"{time.perf_counter() - start:.2f} s"


def main(sizes: list[int]) -> None:
    print(f"threshold rule t = 5; each method run once within {TIME_LIMIT:g} s of suppression "
          "and audits")
    for size in sizes:
        name, cols = TABLES[size]
        table = crosstab(read(name), cols)
        rules = threshold_rule(table, 5)
        print(f"\n~10^{size}: {name} {' × '.join(cols)}: {len(table.frame):,} cells, "
              f"{int(rules.primary.sum()):,} primary")
        times = {}
        for method in ("auto", "gauss"):
            start = time.perf_counter()
            done = secondary_suppression(table, rules, method=method, budget=TIME_LIMIT)
            times[method] = time.perf_counter() - start
            secondary = done.status == "secondary"
            print(f"  {method:<6} {done.method:<16} {int(secondary.sum()):>7,} secondary, "
                  f"value {float(table.values[secondary].sum()):>12,.0f}; audit "
                  f"{'passes' if done.report.passes else 'does not pass'} "
                  f"({done.report.unchecked_cells:,} unchecked); {times[method]:8.2f} s")
        alone = elimination_alone(table, rules)
        print(f"  the elimination alone: {alone}; "
              f"gauss / auto: {times['gauss'] / times['auto']:.2f}")


if __name__ == "__main__":
    args = sys.argv[1:]
    chosen = [2, 4, 6]
    if args[:1] == ["--sizes"]:
        chosen = [int(s) for s in args[1].split(",")]
    main(chosen)
