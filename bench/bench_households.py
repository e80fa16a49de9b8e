"""Household risk and targeted record swapping at census scale: about 1M records in 400,000
households of the generated household survey (``sdc_core.teaching_households.household_members``:
4 regions of 2 to 4 districts, 12 in all; households of 1 to 7 people), target ≤ 5 s each.

- ``household_risk`` (docs/measures.md, "Household risk") on the keys region, district,
  agegroup, sex and hsize with the survey weight, against a bare
  ``groupby(keys).transform("size")`` of the same keys in the same run;
- a ``record_swap`` step through ``apply_recipe`` (docs/methods.md, "Targeted record
  swapping"): hierarchy region > district, similar [[hsize, htype], [hsize]], swap rate 0.05,
  k = 3, risk variables agegroup and sex, against ``groupby(region, district, agegroup,
  sex).transform("size")``, the count its risk rule starts from. With agegroup and sex no
  class of a district is below 3 and only the random swaps run, so a second swap takes the risk
  variables age (single years), sex, relation and tenure, where many households are risky and
  the targeted swaps run (same baseline, on those keys); a third swap puts the households in
  60 areas (6 regions of 10 districts, at random) with 100 donor profiles (the first 100 sets of
  4, then 3, of eleven household columns: hsize, htype, tenure and eight drawn ones of 2 to 30
  values), risk variables age, sex, relation and tenure (same baseline, on the 60 areas);
- the household linkage attack (docs/measures.md, "Household risk") on the keys region,
  district, age, sex and hsize after age banded by 5 (compositions compared by label), after
  local suppression to k = 3 with age banded by 10 (blank patterns) and after noise on age (the
  k-d tree), each against ``household_risk`` of the same keys in the same run.

Run: ``python -m bench.bench_households [households] [swaps]`` (``swaps``: the record swaps only)
"""

from __future__ import annotations

import itertools
import sys
import time

import numpy as np
import pandas as pd

from bench.common import median_seconds, report
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.risk.household import household_linkage, household_risk
from sdc_core.teaching_households import household_members

KEYS = ["region", "district", "agegroup", "sex", "hsize"]
HIERARCHY = ["region", "district"]
RISK = ["agegroup", "sex"]
TARGET = 5.0
STEP = {"method": "record_swap", "hierarchy": HIERARCHY, "similar": [["hsize", "htype"], ["hsize"]],
        "swap_rate": 0.05, "k": 3, "risk_variables": RISK, "carry_along": []}


def sixty_areas(df: pd.DataFrame, seed: int = 1) -> tuple[pd.DataFrame, list[list[str]]]:
    """``df`` with its households in 60 areas (``region60`` of 6, ``district60`` of 10 each,
    at random) and eight household columns ``h0``…``h7`` of 2 to 30 values, and the 100 donor
    profiles of the third swap."""
    r = np.random.default_rng(seed)
    codes, ids = pd.factorize(df["hid"])
    region = r.integers(0, 6, len(ids))
    district = region * 10 + r.integers(0, 10, len(ids))
    out = df.assign(region60=region[codes], district60=district[codes])
    for c in range(8):
        out[f"h{c}"] = r.integers(0, 2 + 4 * c, len(ids))[codes]
    columns = ["hsize", "htype", "tenure"] + [f"h{c}" for c in range(8)]
    profiles = [list(p) for n in (4, 3) for p in itertools.combinations(columns, n)][:100]
    return out, profiles


def main(households: int, swaps_only: bool = False) -> None:
    start = time.perf_counter()
    df = household_members(households, seed=1)
    made = time.perf_counter() - start
    print(f"{len(df):,} records in {households:,} households "
          f"(generated in {made:.1f} s, not timed below)")
    target = TARGET if households >= 400_000 else None

    def size_of(keys: list[str]):
        return lambda: df.groupby(keys, sort=False)["hid"].transform("size")

    base = median_seconds(size_of(KEYS), repeat=5)
    risk = median_seconds(lambda: household_risk(df, KEYS, "hid", weight="weight"), repeat=5)
    print("  " + report("household_risk (5 keys, weighted)", risk,
                        "groupby(keys).transform(size)", base, target))

    def time_swap(label: str, data: pd.DataFrame, step: dict, keys: list[str],
                  repeat: int = 5, warmup: int = 1) -> None:
        """One record-swap step timed against counting its geography and risk keys; the
        households it swapped, from the report of one more run."""
        recipe = parse_recipe({"seed": 1, "household": "hid", "steps": [step]})
        base = median_seconds(lambda: data.groupby(keys, sort=False)["hid"].transform("size"),
                              repeat=repeat)
        swap = median_seconds(lambda: apply_recipe(recipe, data), repeat=repeat, warmup=warmup)
        info = apply_recipe(recipe, data).reports[0]
        print("  " + report(label, swap, "groupby(geo + risk).transform(size)", base, target))
        print(f"  swapped {info['households_swapped']:,} of {info['households']:,} households "
              f"(targeted {info['targeted_households']:,} of target "
              f"{info['target_households']:,}; risky by level {info['risky_households']}; "
              f"without a donor {info['risky_without_donor']:,})")

    rare = ["age", "sex", "relation", "tenure"]
    time_swap("record_swap (rate 0.05, k 3)", df, STEP, HIERARCHY + RISK)
    time_swap("record_swap (k 3, 4 risk variables)", df, STEP | {"risk_variables": rare},
              HIERARCHY + rare)
    wide, profiles = sixty_areas(df)
    geo = ["region60", "district60"]
    time_swap("record_swap (60 areas, 100 profiles, k 3)", wide,
              STEP | {"hierarchy": geo, "similar": profiles, "risk_variables": rare},
              geo + rare, repeat=3, warmup=0)

    if swaps_only:
        return
    attacked = ["region", "district", "age", "sex", "hsize"]
    base = median_seconds(lambda: household_risk(df, attacked, "hid"), repeat=3)
    for name, steps in (
            ("band age 5", [{"method": "band", "column": "age", "width": 5}]),
            ("band age 10, local suppression k 3",
             [{"method": "band", "column": "age", "width": 10},
              {"method": "local_suppression", "columns": attacked, "k": 3}]),
            ("noise on age", [{"method": "noise", "columns": ["age"], "p": 10}])):
        recipe = parse_recipe({"seed": 1, "steps": steps})
        applied = apply_recipe(recipe, df)
        seconds = median_seconds(lambda r=recipe, a=applied: household_linkage(
            df, a.data, attacked, "hid", r, reports=a.reports), repeat=3)
        found = household_linkage(df, applied.data, attacked, "hid", recipe,
                                  reports=applied.reports).reidentified
        print("  " + report(f"household linkage attack after {name}", seconds,
                            "household_risk of the same keys", base, target))
        print(f"  {found:,} of {households:,} households re-identified")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 400_000, sys.argv[2:] == ["swaps"])
