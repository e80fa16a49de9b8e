"""Noise addition and category recoding on a generated 1M-row table against plain numpy in the
same run.

Target, 1M values: ``additive`` noise ≤ 0.1 s. Baseline: ``Generator.normal`` of n values (a
stateful generator's normals, with no statistics, checks or counter-based keys). Correlated noise
on 1M × 3 values and recoding of 1M values (30 levels: merge 10 of them; levels under 20,000
records into "other") are reported with no target, the latter against ``pd.factorize`` (sorted),
which any recoding needs.

Run: ``python -m bench.bench_noise [n]``
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

from bench.common import median_seconds, report, survey_table
from sdc_core.methods.noise import noise
from sdc_core.methods.recode import recode


def main(n: int) -> None:
    df = survey_table(n)
    region = df["region"]
    gen = np.random.default_rng(0)
    normal = median_seconds(lambda: gen.normal(size=n))
    factorize = median_seconds(lambda: pd.factorize(region, sort=True))
    merge = {"R01-R10": [f"R{r:02d}" for r in range(1, 11)]}
    print(f"n = {n:,} values")
    rows = [
        ("noise additive income, p = 150", lambda: noise(df, ["income"], seed=1),
         "Generator.normal", normal, 0.1),
        ("noise correlated2 income, delta = 0.1",
         lambda: noise(df, ["income"], kind="correlated2", seed=1), "Generator.normal", normal,
         None),
        ("noise correlated income+weight+age",
         lambda: noise(df, ["income", "weight", "age"], kind="correlated", seed=1),
         "Generator.normal", normal, None),
        ("recode region, merge 10 of 30 levels", lambda: recode(region, merge),
         "pd.factorize(sort=True)", factorize, None),
        ("recode region, min_count = 20,000", lambda: recode(region, min_count=20_000),
         "pd.factorize(sort=True)", factorize, None),
        ("recode age (integer codes), min_count = 10,100",
         lambda: recode(df["age"], min_count=10_100), "pd.factorize(sort=True)", factorize,
         None),
    ]
    for name, func, base_name, base, target in rows:
        print("  " + report(name, median_seconds(func, repeat=5), base_name, base,
                            target if n == 1_000_000 else None))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
