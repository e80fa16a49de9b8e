"""Risk profile on a generated table with 3 quasi-identifiers (age, sex, region) against a bare
``pandas.groupby(...).transform("size")`` in the same run. Target (DESIGN §8): ≤ 0.1 s at 1M rows.

Run: ``python -m bench.bench_risk [n ...]``
"""

from __future__ import annotations

import sys

from bench.common import median_seconds, report, survey_table
from sdc_core.risk import risk_profile

QI = ["age", "sex", "region"]


def main(sizes: list[int]) -> None:
    for n in sizes:
        df = survey_table(n)
        baseline = median_seconds(lambda: df.groupby(QI)["age"].transform("size"))
        profile = median_seconds(lambda: risk_profile(df, QI))
        weighted = median_seconds(lambda: risk_profile(df, QI, weight="weight"))
        missing = df.copy()
        missing.loc[::50, "age"] = None  # 2 % missing ages: the wildcard path
        wildcard = median_seconds(lambda: risk_profile(missing, QI), repeat=3)
        target = 0.1 if n == 1_000_000 else None
        print(f"n = {n:,} rows, 3 QIs ({risk_profile(df, QI).n_classes} classes)")
        print("  " + report("risk_profile", profile, "groupby.transform('size')", baseline,
                            target))
        print("  " + report("risk_profile, weighted", weighted, "groupby.transform('size')",
                            baseline))
        print("  " + report("risk_profile, 2 % missing ages", wildcard,
                            "groupby.transform('size')", baseline))


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [100_000, 1_000_000])
