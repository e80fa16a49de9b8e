"""A generated teaching data set: a synthetic household survey (no real person in it).

``household_survey(n, seed)`` draws ``n`` records from the model below with
``numpy.random.default_rng(seed)``, always in the same order, so the same ``(n, seed)`` gives the
same table. ``python -m sdc_core.teaching`` rewrites ``sdc_core/data/household.csv`` from the
defaults (n = 3000, seed = 20261123). Columns, in order, and how each is drawn (logistic(x) =
1 / (1 + exp(-x)); a "table" row is normalised to sum to 1):

- ``region``: one of 8 fictional regions, drawn with the sample shares ``SAMPLE_SHARE``
  (Capital 0.22 ... Islands 0.07), so sample sizes n_r are unequal; independent of the rest.
- ``age`` (16-95): drawn with P(a) proportional to f(a) = 1 for a <= 55 and
  exp(-((a - 55) / 28)^2) above: a flat adult pyramid that thins out in old age (about 11 % are
  75 or older, under 2 % are 90 or older).
- ``sex``: P(female | a) = 0.5 for a <= 65, 0.5 + 0.15 (a - 65) / 30 above (women outlive men).
- ``household_size`` (1-8): drawn from the row of ``HOUSEHOLD_TABLE`` for the age group (16-19,
  20-29, 30-44, 45-59, 60-74, 75+): teenagers live with their parents, singles are common at
  20-29 and from 60 on (half of those 75+ live alone), households of 3-5 peak at 30-44.
- ``occupation``: P(student | a) = 0.85 logistic(-(a - 22) / 1.5), P(retired | a) =
  logistic((a - 63) / 2) (1 - P(student)); of the rest, 7 % are unemployed and 93 % work, split
  among the 7 occupations by the fixed shares ``JOB_SHARE`` (manager 0.08 ... elementary 0.11).
  So students are mostly under 25 and the retired mostly 60 or older.
- ``income`` (annual, integer, > 0): log income = ln(``MEDIAN_INCOME[occupation]``) + g(a) + e,
  e ~ N(0, 0.45^2), with the career curve g(a) = 0.4 (1 - ((a - 50) / 34)^2) for working people
  and g = 0 otherwise (g peaks at +0.4 at age 50); rounded to the nearest 100 as respondents
  report it (so it is not read as an identifier), at least 100. Working people earn most
  (medians 22,000-72,000 before g), then the retired (21,000), the unemployed (11,000) and
  students (6,000).
- ``benefit`` ("yes"/"no", the sensitive column): P(yes) = logistic(-1.6 - 1.5 ln(income /
  20000) + 1.0 [unemployed] - 1.5 [student] + 0.25 max(household_size - 2, 0)): likelier at low
  income, when unemployed and in larger households; students, mostly kept by their families,
  claim less than their income alone would make them.
- ``weight``: POPULATION[region] / n_r * exp(u - 0.1^2 / 2), u ~ N(0, 0.1^2) (a non-response
  adjustment of mean 1), rounded to 2 decimals. The populations sum to 2,500,000, so the expected
  total of the weights is 2,500,000; its standard deviation is
  sqrt((exp(0.1^2) - 1) sum_r POPULATION[r]^2 / n_r), about 0.2 % of the total at n = 3000.

Suggested roles: quasi-identifiers region, age, sex, household_size; sensitive benefit; weight
weight; numeric columns for utility age, income. The lessons on uniqueness, coarsening and
perturbation rely on this (checked by ``tests/test_teaching_data.py`` for the default file): with
the keys region, age, sex, household_size about half the records are unique, with region, age,
sex about a tenth; with region, sex and age in bands of w years (age // w * w + w / 2) every
class has at least 5 records for w = 24 or 25, but not for raw age.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

HOUSEHOLD_PATH = Path(__file__).resolve().parent / "data" / "household.csv"

#: Region -> share of the sample (drawn independently for each record).
SAMPLE_SHARE: dict[str, float] = {
    "Capital": 0.22, "North Coast": 0.16, "Eastern Plains": 0.14, "South Coast": 0.12,
    "Western Hills": 0.11, "Lake District": 0.10, "Highlands": 0.08, "Islands": 0.07}

#: Region -> population aged 16 or older (sums to 2,500,000).
POPULATION: dict[str, int] = {
    "Capital": 760_000, "North Coast": 420_000, "Eastern Plains": 360_000,
    "South Coast": 300_000, "Western Hills": 240_000, "Lake District": 190_000,
    "Highlands": 130_000, "Islands": 100_000}

#: Standard deviation of the log non-response adjustment of the weights.
WEIGHT_SD = 0.1

#: Lower bounds of the age groups of ``HOUSEHOLD_TABLE``.
HOUSEHOLD_AGE_GROUPS = (16, 20, 30, 45, 60, 75)

#: Age group -> P(household size 1, ..., 8) (each row sums to 1).
HOUSEHOLD_TABLE = np.array([
    [0.04, 0.10, 0.22, 0.32, 0.20, 0.07, 0.03, 0.02],   # 16-19
    [0.32, 0.30, 0.15, 0.12, 0.07, 0.02, 0.01, 0.01],   # 20-29
    [0.14, 0.20, 0.22, 0.26, 0.12, 0.04, 0.01, 0.01],   # 30-44
    [0.16, 0.30, 0.20, 0.20, 0.09, 0.03, 0.01, 0.01],   # 45-59
    [0.28, 0.55, 0.08, 0.05, 0.02, 0.01, 0.005, 0.005],  # 60-74
    [0.50, 0.40, 0.05, 0.03, 0.01, 0.005, 0.003, 0.002],  # 75+
])

#: Working occupation -> share among working people.
JOB_SHARE: dict[str, float] = {
    "manager": 0.08, "professional": 0.20, "technician": 0.16, "clerk": 0.12,
    "service": 0.20, "craft": 0.13, "elementary": 0.11}

#: Share of the unemployed among those neither students nor retired.
UNEMPLOYED_SHARE = 0.07

#: Occupation -> median annual income (for working people: before the career curve).
MEDIAN_INCOME: dict[str, float] = {
    "manager": 72_000, "professional": 55_000, "technician": 42_000, "clerk": 33_000,
    "service": 26_000, "craft": 34_000, "elementary": 22_000, "student": 6_000,
    "unemployed": 11_000, "retired": 21_000}

#: Standard deviation of log income around its mean.
INCOME_SD = 0.45

COLUMNS = ["region", "age", "sex", "household_size", "occupation", "income", "benefit",
           "weight"]


def age_density(age: np.ndarray) -> np.ndarray:
    """The unnormalised age pyramid f(a): 1 up to 55, then exp(-((a - 55) / 28)^2)."""
    a = np.asarray(age, dtype=float)
    return np.where(a <= 55, 1.0, np.exp(-(((a - 55) / 28) ** 2)))


def female_probability(age: np.ndarray) -> np.ndarray:
    """P(female | age): one half up to 65, rising linearly to 0.65 at 95."""
    a = np.asarray(age, dtype=float)
    return 0.5 + 0.15 * np.clip(a - 65, 0, None) / 30


def occupation_probabilities(age: np.ndarray) -> tuple[list[str], np.ndarray]:
    """The occupation categories and, per record, their probabilities (rows sum to 1)."""
    a = np.asarray(age, dtype=float)
    student = 0.85 * _logistic(-(a - 22) / 1.5)
    retired = _logistic((a - 63) / 2) * (1 - student)
    rest = 1 - student - retired
    jobs = list(JOB_SHARE)
    working = np.outer(rest * (1 - UNEMPLOYED_SHARE), [JOB_SHARE[j] for j in jobs])
    probs = np.column_stack([working, student, rest * UNEMPLOYED_SHARE, retired])
    return jobs + ["student", "unemployed", "retired"], probs


def career_curve(age: np.ndarray) -> np.ndarray:
    """g(a) = 0.4 (1 - ((a - 50) / 34)^2): the log-income gain of working people by age."""
    a = np.asarray(age, dtype=float)
    return 0.4 * (1 - ((a - 50) / 34) ** 2)


def benefit_probability(income: np.ndarray, occupation: np.ndarray,
                        household_size: np.ndarray) -> np.ndarray:
    """P(benefit = yes) = logistic(-1.6 - 1.5 ln(income / 20000) + 1.0 [unemployed]
    - 1.5 [student] + 0.25 max(household_size - 2, 0))."""
    occupation = np.asarray(occupation)
    x = (-1.6 - 1.5 * np.log(np.asarray(income, dtype=float) / 20_000)
         + 1.0 * (occupation == "unemployed") - 1.5 * (occupation == "student")
         + 0.25 * np.clip(np.asarray(household_size, dtype=float) - 2, 0, None))
    return _logistic(x)


def household_survey(n: int = 3000, seed: int = 20261123) -> pd.DataFrame:
    """A synthetic household survey of ``n`` records (the model is in the module docstring).

    Deterministic: the same ``(n, seed)`` gives the same table.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, not {n}")
    rng = np.random.default_rng(seed)

    regions = list(SAMPLE_SHARE)
    region_idx = rng.choice(len(regions), size=n, p=_normalised(list(SAMPLE_SHARE.values())))

    ages = np.arange(16, 96)
    age = rng.choice(ages, size=n, p=_normalised(age_density(ages)))

    female = rng.random(n) < female_probability(age)

    group = np.searchsorted(HOUSEHOLD_AGE_GROUPS, age, side="right") - 1
    size_probs = HOUSEHOLD_TABLE / HOUSEHOLD_TABLE.sum(axis=1, keepdims=True)
    household_size = 1 + _categorical(rng, size_probs[group])

    occupations, occ_probs = occupation_probabilities(age)
    occupation = np.asarray(occupations)[_categorical(rng, occ_probs)]

    working = np.isin(occupation, list(JOB_SHARE))
    log_median = np.log(pd.Series(occupation).map(MEDIAN_INCOME).to_numpy(dtype=float))
    log_income = (log_median + np.where(working, career_curve(age), 0.0)
                  + rng.normal(0.0, INCOME_SD, size=n))
    income = np.maximum(np.rint(np.exp(log_income) / 100) * 100, 100).astype(np.int64)

    p_benefit = benefit_probability(income, occupation, household_size)
    benefit = rng.random(n) < p_benefit

    sample_size = np.bincount(region_idx, minlength=len(regions))
    population = np.array([POPULATION[r] for r in regions], dtype=float)
    base = population[region_idx] / sample_size[region_idx]
    adjustment = np.exp(rng.normal(0.0, WEIGHT_SD, size=n) - WEIGHT_SD ** 2 / 2)
    weight = np.round(base * adjustment, 2)

    return pd.DataFrame({
        "region": np.asarray(regions)[region_idx],
        "age": age.astype(np.int64),
        "sex": np.where(female, "female", "male"),
        "household_size": household_size.astype(np.int64),
        "occupation": occupation,
        "income": income,
        "benefit": np.where(benefit, "yes", "no"),
        "weight": weight,
    }, columns=COLUMNS)


def write_household(path: Path = HOUSEHOLD_PATH) -> pd.DataFrame:
    """Write ``household_survey()`` (the defaults) to ``path`` as CSV and return it."""
    df = household_survey()
    path.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(path, index=False, lineterminator="\n")
    return df


def _logistic(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _normalised(p: list[float] | np.ndarray) -> np.ndarray:
    p = np.asarray(p, dtype=float)
    return p / p.sum()


def _categorical(rng: np.random.Generator, probs: np.ndarray) -> np.ndarray:
    """One draw per row of ``probs`` (rows sum to 1): the index of the first cumulative
    probability above a uniform number."""
    cum = np.cumsum(probs, axis=1)
    u = rng.random(len(probs)) * cum[:, -1]
    return np.minimum((u[:, None] >= cum).sum(axis=1), probs.shape[1] - 1)


def main() -> None:
    """Regenerate ``sdc_core/data/household.csv``."""
    df = write_household()
    print(f"wrote {HOUSEHOLD_PATH} ({len(df)} records, {df.shape[1]} columns)")


if __name__ == "__main__":
    main()
