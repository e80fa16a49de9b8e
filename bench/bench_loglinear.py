"""Log-linear risk (``sdc_core.risk.loglinear``) on n records × 5 keys (default 1M).

Keys: age (100 levels), sex (2), region (30, Zipf), education (6) and household size (5) of
:func:`bench.common.survey_table` plus two generated columns: a key table of 180,000 cells, the
main-effects model 139 parameters; the weight column is the table's uniform 50–150 weight.
Every method by IPF (the default fit; median of 7 runs), then default, CE and PML by
statsmodels' GLM (the cross-check; one run each, it takes about a minute on this table).

Baseline in the same run: a bare ``groupby(keys).transform("size")`` on the same table (the
sample counts alone).

Run: ``python -m bench.bench_loglinear [n]``
"""

from __future__ import annotations

import sys

import numpy as np

from bench.common import median_seconds, report, survey_table
from sdc_core.risk.loglinear import loglinear_risk

KEYS = ["age", "sex", "region", "edu", "hh"]
METHODS = ["default", "IPF", "CE", "PML"]


def main(n: int) -> None:
    df = survey_table(n)
    rng = np.random.default_rng(1)
    df["edu"] = rng.choice(6, n, p=[0.05, 0.15, 0.3, 0.25, 0.15, 0.1])
    df["hh"] = rng.choice(5, n, p=[0.3, 0.3, 0.2, 0.15, 0.05])
    baseline = median_seconds(lambda: df.groupby(KEYS)["age"].transform("size"), repeat=5)
    print(f"n = {n:,} records, keys {' + '.join(KEYS)}, weights uniform 50–150")
    runs = [(m, "ipf", 7, 1) for m in METHODS] + [(m, "glm", 1, 0) for m in ("default", "CE",
                                                                            "PML")]
    for method, fit, repeat, warmup in runs:
        result = {}

        def run(method: str = method, fit: str = fit, result: dict = result) -> None:
            result["r"] = loglinear_risk(df, KEYS, weight="weight", method=method, fit=fit)

        seconds = median_seconds(run, repeat=repeat, warmup=warmup)
        r = result["r"]
        label = f"{method} (fit {fit}{', one run' if repeat == 1 else ''})"
        print("  " + report(label, seconds, "groupby.transform('size')", baseline))
        print(f"    r1 {r.r1:.7g}  r2 {r.r2:.7g}  tau1 {r.tau1:.7g}  tau2 {r.tau2:.7g}  "
              f"cells {r.cells:,} of {r.table_cells:,}  sample uniques {r.sample_uniques:,}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
