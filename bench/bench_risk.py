"""Risk profile on generated tables against a bare ``pandas.groupby(...).transform("size")`` of
the same keys in the same run. Target (docs/developing.md, "Performance targets"): ≤ 0.1 s at 1M
rows with 3 keys.

Conditions, each timed (median of ``--repeat`` runs after one warm-up):

- 3 keys: age (integer 0–99), sex and region (text, 30 levels, Zipf) of
  :func:`bench.common.survey_table`; then the same with the weight column;
- 3 keys with 2 % blank ages (every 50th record: the wildcard path, where a blank key matches
  any value);
- 4 keys of which 3 are text: the 3 keys and an occupation (text, 40 levels, Zipf);
- the same 4 keys with 2 % blanks in each (every 50th record, a different record for each key).

Run: ``python -m bench.bench_risk [--repeat 7] [n ...]``
"""

from __future__ import annotations

import argparse
import os

import numpy as np
import pandas as pd

from bench.common import median_seconds, report, survey_table
from sdc_core.risk import risk_profile

QI = ["age", "sex", "region"]
QI4 = QI + ["occupation"]


def with_occupation(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with a 40-level Zipf-distributed text column ``occupation`` (seeded)."""
    rng = np.random.default_rng(2)
    ranks = np.arange(1, 41)
    p = 1.0 / ranks**1.1
    names = np.array([f"O{r:02d}" for r in ranks])
    out = df.copy()
    out["occupation"] = pd.array(names[rng.choice(40, size=len(df), p=p / p.sum())],
                                 dtype="str")
    return out


def blanked(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """``df`` with every 50th record's key blank (2 %), shifted by one record per key."""
    out = df.copy()
    for i, key in enumerate(keys):
        out.loc[out.index[i::50], key] = None
    return out


def main(sizes: list[int], repeat: int) -> None:
    for n in sizes:
        df = with_occupation(survey_table(n))
        cases = [  # (label, table, keys, weight)
            ("3 keys (1 integer, 2 text)", df, QI, None),
            ("3 keys, weighted", df, QI, "weight"),
            ("3 keys, 2 % blank ages", blanked(df, ["age"]), QI, None),
            ("4 keys (1 integer, 3 text)", df, QI4, None),
            ("4 keys, 2 % blanks in each", blanked(df, QI4), QI4, None),
        ]
        print(f"n = {n:,} rows, median of {repeat} runs; load average "
              f"{os.getloadavg()[0]:.1f}")
        for label, table, keys, weight in cases:
            baseline = median_seconds(
                lambda t=table, k=keys: t.groupby(k, dropna=False)["weight"].transform("size"),
                repeat=repeat)
            seconds = median_seconds(lambda t=table, k=keys, w=weight: risk_profile(t, k, w),
                                     repeat=repeat)
            target = 0.1 if n == 1_000_000 and label.startswith("3 keys (") else None
            classes = risk_profile(table, keys, weight).n_classes
            print("  " + report(f"{label}, {classes:,} classes", seconds,
                                "groupby.transform('size')", baseline, target))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    main(args.sizes, args.repeat)
