"""SUDA2 special uniques on 100,000 generated records with 4 to 10 keys, against one risk
profile on the same keys in the same run. Target: ≤ 0.25 s with 4 keys (sdcMicro's C++ ``suda2``
takes ≈ 0.22 s on 100,000 records × 4 keys on this machine); the times with more keys show how
it grows (each extra key can double the number of key subsets).

Keys, in this order: age 0–99, sex, a 30-level Zipf region (``bench.common.survey_table``), then
education (6 levels), marital status (5), employment (4), household size (1–8), children (0–4),
tenure (3) and car (0–2), skewed, drawn with a fixed seed. Medians of 5 runs (3 from 7 keys on).

Run: ``python -m bench.bench_suda2 [n] [--keys 10]``
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from bench.common import median_seconds, report, survey_table
from sdc_core.risk import risk_profile
from sdc_core.risk.suda2 import suda2

KEYS = ["age", "sex", "region", "education", "marital", "employment"]
EXTRA = {"education": [0.1, 0.2, 0.3, 0.2, 0.15, 0.05], "marital": [0.4, 0.3, 0.15, 0.1, 0.05],
         "employment": [0.5, 0.3, 0.15, 0.05]}
#: The keys after the seventh (``household``), each skewed
MORE = {"children": [0.4, 0.25, 0.2, 0.1, 0.05], "tenure": [0.6, 0.3, 0.1],
        "car": [0.2, 0.5, 0.3]}


def table(n: int) -> pd.DataFrame:
    df = survey_table(n)
    rng = np.random.default_rng(1)
    for name, p in EXTRA.items():
        df[name] = rng.choice(len(p), n, p=p)
    df["household"] = rng.integers(1, 9, n)
    for name, p in MORE.items():
        df[name] = rng.choice(len(p), n, p=p)
    return df


def main(n: int, most: int) -> None:
    df = table(n)
    keys = KEYS + ["household"] + list(MORE)
    previous = None
    for m in range(4, most + 1):
        qi = keys[:m]
        baseline = median_seconds(lambda qi=qi: risk_profile(df, qi), repeat=5)
        seconds = median_seconds(lambda qi=qi: suda2(df, qi), repeat=5 if m < 7 else 3)
        s = suda2(df, qi).summary()
        print(f"n = {n:,} rows, {m} keys ({', '.join(qi)}): {s['n_records_score_positive']:,} "
              f"records score > 0, {s['n_msus']:,} MSUs"
              + (f"; {seconds / previous:.1f}x the {m - 1}-key time" if previous else ""))
        print("  " + report(f"suda2, {m} keys", seconds, f"risk_profile, {m} keys", baseline,
                            0.25 if m == 4 and n == 100_000 else None))
        previous = seconds


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=100_000)
    parser.add_argument("--keys", type=int, default=10, choices=range(4, 11))
    args = parser.parse_args()
    main(args.n, args.keys)
