"""Microaggregation on the generated survey table against plain numpy baselines in the same run.

Targets (k = 3): ``onedims`` and ``optimal_univariate`` of 1M values (income) ≤ 1 s each, against
``np.sort`` of the same values (any of them sorts once); ``mdav`` on 100k records × 2 columns
(age, income) ≤ 5 s (sdcMicro's ``mdav`` takes 76 s). MDAV's baseline is the brute-force floor
of its definition, estimated in the same run: one vectorised float64 distance pass over n/2
records × 2 columns (the average number left), times the n/k passes that forming n/k groups
needs at the very least (a farthest-point pass per group), i.e. before any neighbour search.
``pca`` on 1M × 2 is reported with no target.

Run: ``python -m bench.bench_microaggregation [n_univariate] [n_mdav]``
"""

from __future__ import annotations

import sys

import numpy as np

from bench.common import median_seconds, report, survey_table
from sdc_core.methods.microaggregation import microaggregation

K = 3


def brute_force_pass(z: np.ndarray) -> None:
    d = z[0] - 0.25
    d *= d
    e = z[1] + 0.5
    e *= e
    d += e
    d.argmax()


def main(n: int, n_mdav: int) -> None:
    df = survey_table(n)
    income = df["income"].to_numpy()
    sort = median_seconds(lambda: np.sort(income))
    print(f"n = {n:,} values, k = {K}")
    rows = [
        ("onedims income", lambda: microaggregation(df, ["income"], K, "onedims"), 1.0),
        ("optimal_univariate income",
         lambda: microaggregation(df, ["income"], K, "optimal_univariate"), 1.0),
        ("pca age+income", lambda: microaggregation(df, ["age", "income"], K, "pca"), None),
    ]
    for name, func, target in rows:
        print("  " + report(name, median_seconds(func, repeat=3), "np.sort", sort,
                            target if n == 1_000_000 else None))

    small = survey_table(n_mdav, seed=1)
    x = small[["age", "income"]].to_numpy(dtype=float)
    z = np.ascontiguousarray(((x - x.mean(axis=0)) / x.std(axis=0))[: n_mdav // 2].T)
    floor = median_seconds(lambda: brute_force_pass(z), repeat=50) * (n_mdav / K)
    print(f"n = {n_mdav:,} records x 2 columns, k = {K}")
    mdav = median_seconds(lambda: microaggregation(small, ["age", "income"], K, "mdav"),
                          repeat=3)
    print("  " + report("mdav age+income", mdav, "brute-force floor (n/k passes)", floor,
                        5.0 if n_mdav == 100_000 else None))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000,
         int(sys.argv[2]) if len(sys.argv) > 2 else 100_000)
