"""The Pitman fit and the population figure of a sweep.

Timed (medians):

1. ``fit_pitman`` on the class-size histograms of generated survey tables (2,000 and 100,000
   rows; keys age, sex and region, age also banded to widths 2, 5, 10 and 20), with the
   fitted α or why the fit is invalid;
2. ``run_sweep`` of a Trade-offs grid (banding of age to widths 5, 10, 15, PRAM of sex and of
   region at p = 0.01, 0.05, 0.1, three seeds) on 2,000 rows with the weight column, so that
   every row carries Dankar's population uniqueness (π = 0.01: the Pitman model), against the
   same sweep without the weight in the same run: the ratio is what the population figure
   costs.

Run: ``python -m bench.bench_pitman``
"""

from __future__ import annotations

from bench.common import median_seconds, report, survey_table
from sdc_core.risk.population import class_histogram, fit_pitman
from sdc_core.sweep.run import run_sweep

QI = ["age", "sex", "region"]
GRID = {"seeds": 3, "numeric": ["age", "income"], "settings": [
    {"method": "band", "column": "age", "param": "width", "values": [5, 10, 15]},
    {"method": "pram", "column": "sex", "param": "p", "values": [0.01, 0.05, 0.1]},
    {"method": "pram", "column": "region", "param": "p", "values": [0.01, 0.05, 0.1]}]}


def main() -> None:
    for n in (2_000, 100_000):
        df = survey_table(n, 0)
        for width in (1, 2, 5, 10, 20):
            hist = class_histogram(df.assign(age=df["age"] // width), QI)
            fit = fit_pitman(hist)
            t = median_seconds(lambda hist=hist: fit_pitman(hist), repeat=21)
            what = f"α = {fit.alpha:.6f}" if fit.reason is None else fit.reason
            print(f"fit_pitman n = {n:>7,} age width {width:>2} (u = {hist.u:>5,}): "
                  f"{t * 1e6:7.0f} µs  {what}")
    df = survey_table(2_000, 0)
    with_population = median_seconds(lambda: run_sweep(df, QI, GRID, weight="weight"), repeat=7)
    without = median_seconds(lambda: run_sweep(df, QI, GRID), repeat=7)
    print(report("run_sweep 2,000 rows with weight", with_population, "without weight", without))


if __name__ == "__main__":
    main()
