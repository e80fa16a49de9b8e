"""Population uniqueness models (Zayatz, Pitman, SNB, Dankar's rule) on 1M records × 5 keys.
Target: ≤ 0.5 s beyond the risk profile, i.e. for the models once the class sizes are known.

Timed separately (medians):

1. the class-size histogram of the table (``class_histogram``: key codes, one bincount over the
   combined keys, one over the class sizes), and the same read off the risk profile's classes
   (``histogram_of_classes``: two bincounts), then with the models at f = 0.01 (the cost
   beyond the risk profile);
2. histogram → every model at one sampling fraction (``population_uniqueness``, f = 0.01 and
   f = 0.2: the Pitman fit and an SNB solve each time);
3. histogram → the curve of every model over 40 log-spaced fractions from 0.001 to 1
   (``uniqueness_curve``: one Pitman fit, 40 Zayatz sums and 40 SNB solves);
4. the whole ``population_risk`` beyond the profile (its classes given): the models and the
   log-linear risks of the default, CE and PML models (each counts the key table).

Baseline in the same run: the risk profile (``risk_profile``) on the same keys.

Keys: age (100 levels), sex (2), region (30, Zipf), income banded to 5,000s and a 40-level
Zipf-distributed occupation.

Run: ``python -m bench.bench_population [n]``
"""

from __future__ import annotations

import sys

import numpy as np

from bench.common import median_seconds, report, survey_table
from sdc_core.risk import risk_profile
from sdc_core.risk.population import (
    class_histogram,
    histogram_of_classes,
    population_uniqueness,
    uniqueness_curve,
)
from sdc_core.risk.population_risk import population_risk

KEYS = ["age", "sex", "region", "income_band", "occupation"]


def table(n: int):
    df = survey_table(n)
    rng = np.random.default_rng(1)
    p = 1.0 / np.arange(1, 41) ** 1.2
    df["income_band"] = (df["income"] // 5000).astype(np.int64)
    df["occupation"] = rng.choice(40, size=n, p=p / p.sum())
    return df


def main(n: int) -> None:
    df = table(n)
    baseline = median_seconds(lambda: risk_profile(df, KEYS), repeat=5)
    hist_time = median_seconds(lambda: class_histogram(df, KEYS), repeat=5)
    hist = class_histogram(df, KEYS)
    classes = risk_profile(df, KEYS).classes
    same = histogram_of_classes(classes)
    assert np.array_equal(same.sizes, hist.sizes) and np.array_equal(same.counts, hist.counts)
    from_profile = median_seconds(lambda: histogram_of_classes(classes))
    beyond = median_seconds(lambda: population_uniqueness(histogram_of_classes(classes), 0.01))
    low = median_seconds(lambda: population_uniqueness(hist, 0.01))
    high = median_seconds(lambda: population_uniqueness(hist, 0.2))
    curve = median_seconds(lambda: uniqueness_curve(hist), repeat=5)
    whole = median_seconds(lambda: population_risk(df, KEYS, sampling_fraction=0.01,
                                                   classes=classes), repeat=3)
    target = 0.5 if n == 1_000_000 else None
    print(f"n = {n:,} rows, {len(KEYS)} keys: {hist.u:,} classes, {hist.uniques:,} sample "
          f"uniques, {len(hist.sizes)} distinct class sizes (largest {hist.sizes[-1]:,})")
    print("  " + report("class-size histogram of the table", hist_time, "risk_profile",
                        baseline))
    print("  " + report("histogram of the profile's classes", from_profile, "risk_profile",
                        baseline))
    print("  " + report("profile's classes -> models, f = 0.01", beyond, "risk_profile",
                        baseline, target))
    print("  " + report("histogram -> models, f = 0.01", low, "risk_profile", baseline, target))
    print("  " + report("histogram -> models, f = 0.2", high, "risk_profile", baseline, target))
    print("  " + report("histogram -> curve, 40 fractions", curve, "risk_profile", baseline,
                        target))
    print("  " + report("population_risk: models + 3 log-linear", whole, "risk_profile",
                        baseline))
    for f in (0.01, 0.1, 0.2, 1.0):
        r = population_uniqueness(hist, f)
        shares = ", ".join(
            f"{m} " + ("-" if getattr(r, m).share is None else f"{getattr(r, m).share:.4f}")
            for m in ("zayatz", "pitman", "snb"))
        print(f"  f = {f:<5g} sample uniqueness {r.sample_uniqueness:.4f}; {shares}; "
              f"Dankar {r.dankar.share:.4f} ({r.dankar_model})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
