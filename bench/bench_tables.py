"""A 3-way table of 1M records with threshold suppression, secondary suppression and the audit
(docs/tables.md), target ≤ 10 s, against a bare ``df.groupby(cols).size()`` in the same run.

The records: ``bench.common.survey_table`` (a 30-level Zipf region, sex) with a 50-level
occupation drawn Zipf-like (exponent 1.5) so that the rare occupations leave small cells;
the table is region × occupation × sex (31 × 51 × 3 cells with margins), the threshold rule
t = 5 (seed 004's), secondary suppression by the hypercube method (``auto`` picks it at this
size), then the audit of the published pattern.

With ``--cubes`` (issue 51, finding 6): the cube tables of about two records a cell that made
the audit a denial of service, at 10³, 10⁴ and 10⁵ cells with margins (9³, 21³ and 45³ cells
and their margins), each timed once: the audit of the primary pattern (and how many linear
programmes it solved) and the whole published table (secondary suppression and its audits,
:func:`sdc_core.tables.table_release.release_table`), both within the time limit; ``--old``
runs the audit as it was before (two programmes per hidden cell), stopped after ``--stop`` seconds.

Run: ``python -m bench.bench_tables [records]`` or
``python -m bench.bench_tables --cubes [--old] [--stop 600] [--levels 9,21,45]``
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

from bench.common import median_seconds, report, survey_table
from sdc_core.tables.cell_rules import threshold_rule
from sdc_core.tables.crosstab import crosstab
from sdc_core.tables.suppression_audit import audit, secondary_suppression

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


def cube(levels: int, seed: int = 0) -> pd.DataFrame:
    """levels³ cells of about two records each."""
    g = np.random.default_rng(seed)
    return pd.DataFrame({c: g.integers(0, levels, 2 * levels ** 3).astype(str) for c in "abc"})


def old_audit_programmes(table, hidden: np.ndarray, stop: float) -> tuple[int, float, bool]:
    """The audit as it was: for each hidden cell of a group, min and max by its own programme
    unless a solution found reaches the bound 0; the programmes solved, the seconds, and
    whether it finished before ``stop``."""
    from scipy.optimize import linprog
    from scipy.sparse.csgraph import connected_components
    x = table.values / max(1.0, float(table.values.max()))
    a = table.constraints
    cols = np.flatnonzero(hidden)
    a_s = a[:, cols].tocsr()
    rhs = -(a[:, ~hidden] @ x[~hidden])
    rows = np.flatnonzero(np.diff(a_s.indptr) > 0)
    a_s, rhs = a_s[rows], rhs[rows]
    _, group = connected_components((a_s.T @ a_s).tocsr(), directed=False)
    start, solved = time.perf_counter(), 0
    for g in np.unique(group):
        members = np.flatnonzero(group == g)
        sub = a_s[:, members].tocsr()
        eq = np.flatnonzero(np.diff(sub.indptr) > 0)
        sub, b = sub[eq], rhs[eq]
        seen_lo = np.full(len(members), np.inf)
        for sign in (-1.0, 1.0):
            for j in range(len(members)):
                if sign > 0 and seen_lo[j] <= 1e-6:
                    continue
                if time.perf_counter() - start > stop:
                    return solved, time.perf_counter() - start, False
                c = np.zeros(len(members))
                c[j] = sign
                res = linprog(c, A_eq=sub, b_eq=b, bounds=(0, None), method="highs")
                solved += 1
                seen_lo = np.minimum(seen_lo, res.x)
    return solved, time.perf_counter() - start, True


def cubes(old: bool, stop: float, sizes: tuple[int, ...] = (9, 21, 45)) -> None:
    from sdc_core.tables import suppression_audit
    from sdc_core.tables.table_release import TIME_LIMIT, release_table
    real = suppression_audit.linprog
    calls = [0]

    def counted(*args, **kwargs):
        calls[0] += 1
        return real(*args, **kwargs)

    suppression_audit.linprog = counted
    for levels in sizes:
        df = cube(levels)
        table = crosstab(df, ["a", "b", "c"])
        rules = threshold_rule(table, t=5)
        hidden = int(rules.primary.sum())
        print(f"{levels}³ cells, {len(table.frame):,} with margins, {len(df):,} records, "
              f"{hidden:,} primary")
        calls[0] = 0
        start = time.perf_counter()
        rep = audit(table, rules.primary, rules, time_limit=TIME_LIMIT)
        print(f"    audit of the primary cells   {time.perf_counter() - start:8.1f} s, "
              f"{calls[0]} programmes; {rep.exposed_cells} exposed, "
              f"{rep.unchecked_cells:,} not checked")
        if old:
            n, sec, done = old_audit_programmes(table, rules.primary, stop)
            print(f"    the old audit                {sec:8.1f} s, {n} programmes"
                  + ("" if done else f" (stopped after {stop:g} s)"))
        calls[0] = 0
        start = time.perf_counter()
        made = release_table(df, ["a", "b", "c"])
        a = made.audit
        print(f"    published table (limit {TIME_LIMIT:g} s) {time.perf_counter() - start:8.1f} s,"
              f" {calls[0]} programmes; {int((made.frame['status'] == 'secondary').sum()):,} "
              f"secondary, audit passes: {a.passes}, {a.unchecked_cells:,} not checked")


if __name__ == "__main__":
    if "--cubes" in sys.argv:
        cubes("--old" in sys.argv, float(sys.argv[sys.argv.index("--stop") + 1])
              if "--stop" in sys.argv else 600.0,
              tuple(int(v) for v in sys.argv[sys.argv.index("--levels") + 1].split(","))
              if "--levels" in sys.argv else (9, 21, 45))
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
