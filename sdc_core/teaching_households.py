"""A generated teaching data set of whole households: people in households, households in
districts, districts in regions (no real person in it).

``household_members(households, seed)`` draws ``households`` households and every member of each
from the model below with ``numpy.random.default_rng(seed)``, always in the same order, so the
same ``(households, seed)`` gives the same table. ``python -m sdc_core.teaching_households``
rewrites ``sdc_core/data/households.csv`` from the defaults (1,200 households, seed 20261127).
logistic(x) = 1 / (1 + exp(-x)). One row per person; the columns, and how each is drawn:

Household-level (the same for every member of a household):

- ``hid``: the household's number, 1 to H, in drawing order.
- ``region`` and ``district``: the region with the shares ``REGION_SHARE``, then one of its
  districts with the shares of ``DISTRICTS`` (a two-level geography: every district lies in one
  region).
- ``hsize`` (1-7): P(1, ..., 7) = ``SIZE_SHARE``.
- ``htype`` and the members: a household of one is ``single`` (its head only). A household of
  two is a ``couple`` (head and partner) with probability 0.75, else a ``single parent`` with
  one child (0.15) or ``other`` (head and another adult, 0.10). A larger household is a
  ``couple with children`` (probability 0.80) or a ``single parent`` with hsize - 1 children;
  in one of 5 or more, with probability 0.3 the last child is a parent of the head instead, and
  the household is ``other``.
- ``tenure``: ``owner`` with probability 0.85 logistic((head's age - 42) / 8), else ``social``
  with probability 0.35 + 0.1 [single parent], else ``renter``.
- ``benefit`` ("yes"/"no", the sensitive column): P(yes) = logistic(-1.2 - 1.4 ln(household
  income / 45,000) + 0.25 (hsize - 2) + 0.6 [single parent]), household income the sum of its
  members' incomes (at least 1,000).
- ``weight``: ``DISTRICT_HOUSEHOLDS[district]`` / (households drawn in the district) times
  exp(u - 0.1^2 / 2), u ~ N(0, 0.1^2), rounded to 2 decimals: a household weight, so the
  weights of the members of a household are equal and the expected sum of the weights over
  the households is 500,000.

Person-level:

- ``relation``: head, partner, child, parent or other.
- ``age``: the head's from the adult pyramid of :mod:`sdc_core.teaching` (18-95; 25-60 when
  there are children, and at least 20 alone); a partner's the head's + round(N(-1, 4^2)), at
  least 18; a child's the head's - U{20, ..., 42}, from 0 to 35; a parent's the head's +
  U{21, ..., 35}, at most 99; another adult's drawn from 18-70.
- ``agegroup``: 0-14, 15-29, 30-44, 45-64, 65+ (the banded age a census table shows).
- ``sex``: a head is female with probability 0.45 (0.85 in a single-parent household), a
  partner of the other sex with probability 0.95, anyone else with probability 0.5.
- ``income`` (annual, integer): 0 under 16; else exp(ln 28,000 + 0.45 (1 - ((age - 48) / 32)^2)
  + e), e ~ N(0, 0.6^2), rounded to the nearest 100 (at least 100); pensions are the career curve
  past its peak.

Suggested roles: household id ``hid``; quasi-identifiers region, district, hsize, relation, sex,
agegroup; sensitive benefit; weight weight; numeric columns for utility age, income.
``tests/test_teaching_households.py`` checks the model's structure on the default file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from sdc_core.teaching import age_density

HOUSEHOLDS_PATH = Path(__file__).resolve().parent / "data" / "households.csv"

#: Region -> share of the households drawn.
REGION_SHARE: dict[str, float] = {
    "Capital": 0.40, "North Coast": 0.25, "Eastern Plains": 0.20, "Highlands": 0.15}

#: Region -> its districts -> their share of the region's households.
DISTRICTS: dict[str, dict[str, float]] = {
    "Capital": {"Old Town": 0.30, "Riverside": 0.30, "Harbour": 0.25, "Hillcrest": 0.15},
    "North Coast": {"Bayview": 0.45, "Cliffside": 0.35, "Dunmore": 0.20},
    "Eastern Plains": {"Fairfield": 0.50, "Grange": 0.30, "Marsh End": 0.20},
    "Highlands": {"Upper Glen": 0.60, "Stonefold": 0.40}}

#: District -> households in the population (sums to 500,000).
DISTRICT_HOUSEHOLDS: dict[str, int] = {
    "Old Town": 60_000, "Riverside": 60_000, "Harbour": 50_000, "Hillcrest": 30_000,
    "Bayview": 56_000, "Cliffside": 44_000, "Dunmore": 25_000,
    "Fairfield": 50_000, "Grange": 30_000, "Marsh End": 20_000,
    "Upper Glen": 45_000, "Stonefold": 30_000}

#: P(household size 1, ..., 7).
SIZE_SHARE = (0.30, 0.30, 0.15, 0.14, 0.07, 0.03, 0.01)

#: Lower bounds of the age groups of ``agegroup`` and their labels.
AGE_GROUPS = ((0, "0-14"), (15, "15-29"), (30, "30-44"), (45, "45-64"), (65, "65+"))

#: Standard deviation of the log non-response adjustment of the weights.
WEIGHT_SD = 0.1

COLUMNS = ["hid", "region", "district", "hsize", "htype", "tenure", "relation", "age",
           "agegroup", "sex", "income", "benefit", "weight"]

#: The columns constant within every household.
HOUSEHOLD_LEVEL = ["hid", "region", "district", "hsize", "htype", "tenure", "benefit", "weight"]


def _logistic(x: np.ndarray | float) -> np.ndarray:
    return 1 / (1 + np.exp(-np.asarray(x, dtype=float)))


def _ages(rng: np.random.Generator, low: int, high: int, size: int) -> np.ndarray:
    """Ages from ``low`` to ``high`` drawn with the adult pyramid f(a) of the person survey."""
    ages = np.arange(low, high + 1)
    p = age_density(ages)
    return rng.choice(ages, size=size, p=p / p.sum())


def _members(rng: np.random.Generator, hsize: np.ndarray) -> tuple[list[str], np.ndarray]:
    """Each household's type and its members' relations (a list of lists, per household)."""
    htype = np.empty(len(hsize), dtype=object)
    relations = np.empty(len(hsize), dtype=object)
    u, extra = rng.random(len(hsize)), rng.random(len(hsize))
    for h, size in enumerate(hsize):
        if size == 1:
            htype[h], rel = "single", ["head"]
        elif size == 2:
            htype[h], rel = (("couple", ["head", "partner"]) if u[h] < 0.75 else
                             ("single parent", ["head", "child"]) if u[h] < 0.90 else
                             ("other", ["head", "other"]))
        elif u[h] < 0.80:
            htype[h], rel = "couple with children", ["head", "partner"] + ["child"] * (size - 2)
        else:
            htype[h], rel = "single parent", ["head"] + ["child"] * (size - 1)
        if size >= 5 and extra[h] < 0.3:
            htype[h], rel = "other", rel[:-1] + ["parent"]
        relations[h] = rel
    return list(htype), relations


def household_members(households: int = 1200, seed: int = 20261127) -> pd.DataFrame:
    """A synthetic survey of ``households`` whole households (the model is in the module
    docstring), one row per person, the members of a household on consecutive rows.

    Deterministic: the same ``(households, seed)`` gives the same table.
    """
    if households < 1:
        raise ValueError(f"households must be at least 1, not {households}")
    rng = np.random.default_rng(seed)
    H = households

    regions = list(REGION_SHARE)
    region = np.asarray(regions)[rng.choice(len(regions), size=H,
                                            p=np.array(list(REGION_SHARE.values())))]
    district = np.empty(H, dtype=object)
    for r in regions:
        at = np.flatnonzero(region == r)
        names = list(DISTRICTS[r])
        share = np.array(list(DISTRICTS[r].values()))
        pick = rng.choice(len(names), size=len(at), p=share / share.sum())
        district[at] = np.asarray(names)[pick]
    hsize = 1 + rng.choice(len(SIZE_SHARE), size=H, p=np.array(SIZE_SHARE) / sum(SIZE_SHARE))
    htype, relations = _members(rng, hsize)

    children = np.array([r.count("child") > 0 for r in relations])
    head_age = np.where(children, _ages(rng, 25, 60, H),
                        np.where(hsize == 1, _ages(rng, 20, 95, H), _ages(rng, 18, 95, H)))
    head_female = rng.random(H) < np.where(np.asarray(htype) == "single parent", 0.85, 0.45)

    hid = np.repeat(np.arange(1, H + 1), hsize)
    relation = np.concatenate([np.asarray(r, dtype=object) for r in relations])
    n = len(hid)
    of = hid - 1
    head = head_age[of]
    age = np.select(
        [relation == "head", relation == "partner", relation == "child", relation == "parent"],
        [head,
         np.maximum(head + np.rint(rng.normal(-1, 4, n)), 18),
         np.clip(head - rng.integers(20, 43, n), 0, 35),
         np.minimum(head + rng.integers(21, 36, n), 99)],
        default=rng.integers(18, 71, n)).astype(np.int64)
    female = np.where(relation == "head", head_female[of],
                      np.where(relation == "partner", (rng.random(n) < 0.95) ^ head_female[of],
                               rng.random(n) < 0.5))
    bounds = np.array([b for b, _ in AGE_GROUPS])
    agegroup = np.asarray([g for _, g in AGE_GROUPS])[np.searchsorted(bounds, age, "right") - 1]

    log_income = (np.log(28_000) + 0.45 * (1 - ((age - 48) / 32) ** 2)
                  + rng.normal(0, 0.6, n))
    income = np.where(age < 16, 0,
                      np.maximum(np.rint(np.exp(log_income) / 100) * 100, 100)).astype(np.int64)
    household_income = np.maximum(np.bincount(of, weights=income, minlength=H), 1_000)
    p_benefit = _logistic(-1.2 - 1.4 * np.log(household_income / 45_000) + 0.25 * (hsize - 2)
                          + 0.6 * (np.asarray(htype) == "single parent"))
    benefit = rng.random(H) < p_benefit

    owner = rng.random(H) < 0.85 * _logistic((head_age - 42) / 8)
    social = rng.random(H) < 0.35 + 0.1 * (np.asarray(htype) == "single parent")
    tenure = np.where(owner, "owner", np.where(social, "social", "renter"))

    drawn = pd.Series(district).value_counts()
    base = np.array([DISTRICT_HOUSEHOLDS[d] / drawn[d] for d in district])
    weight = np.round(base * np.exp(rng.normal(0, WEIGHT_SD, H) - WEIGHT_SD ** 2 / 2), 2)

    return pd.DataFrame({
        "hid": hid, "region": region[of], "district": district[of].astype(str),
        "hsize": hsize[of].astype(np.int64), "htype": np.asarray(htype, dtype=object)[of],
        "tenure": tenure[of], "relation": relation.astype(str), "age": age,
        "agegroup": agegroup, "sex": np.where(female, "female", "male"), "income": income,
        "benefit": np.where(benefit, "yes", "no")[of], "weight": weight[of]}, columns=COLUMNS)


def write_households(path: Path = HOUSEHOLDS_PATH) -> pd.DataFrame:
    """Write ``household_members()`` (the defaults) to ``path`` as CSV and return it."""
    df = household_members()
    path.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(path, index=False, lineterminator="\n")
    return df


def main() -> None:
    """Regenerate ``sdc_core/data/households.csv``."""
    df = write_households()
    print(f"wrote {HOUSEHOLDS_PATH} ({len(df)} records, {df['hid'].nunique()} households)")


if __name__ == "__main__":
    main()
