"""The generated teaching data set (sdc_core/teaching.py, sdc_core/data/household.csv).

Statistical checks compare the data with the model of the module docstring, restated here from
the docstring's formulas. Tolerances come from sampling error: conditional on the columns a
column is drawn from, a count is a sum of independent Bernoulli draws and a mean is a mean of
independent draws, so each check allows Z standard errors. With Z = 4 a correct generator fails
one check with probability about 6e-5; a directional claim (A > B) must hold by Z standard errors
of the difference. Counts of rare values (household sizes of 6-8, expected a few times) use the
exact binomial tails at the same level instead of the normal approximation.
"""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sdc_core.data.io import Kind, infer_kind, read_table
from sdc_core.teaching import HOUSEHOLD_PATH, household_survey, write_household

Z = 4.0
N = 3000
REGIONS = {"Capital": (0.22, 760_000), "North Coast": (0.16, 420_000),
           "Eastern Plains": (0.14, 360_000), "South Coast": (0.12, 300_000),
           "Western Hills": (0.11, 240_000), "Lake District": (0.10, 190_000),
           "Highlands": (0.08, 130_000), "Islands": (0.07, 100_000)}
POPULATION_TOTAL = 2_500_000
WEIGHT_SD = 0.1
JOBS = {"manager": (0.08, 72_000), "professional": (0.20, 55_000),
        "technician": (0.16, 42_000), "clerk": (0.12, 33_000), "service": (0.20, 26_000),
        "craft": (0.13, 34_000), "elementary": (0.11, 22_000)}
OTHER_MEDIAN = {"student": 6_000, "unemployed": 11_000, "retired": 21_000}
INCOME_SD = 0.45
QI = ["region", "age", "sex", "household_size"]


def _logistic(x):
    return 1 / (1 + np.exp(-x))


def _career(age):
    return 0.4 * (1 - ((age - 50) / 34) ** 2)


def _occupation_probs(age):
    """Per record, P(occupation | age) as the docstring states it."""
    a = np.asarray(age, dtype=float)
    student = 0.85 * _logistic(-(a - 22) / 1.5)
    retired = _logistic((a - 63) / 2) * (1 - student)
    rest = 1 - student - retired
    probs = {j: rest * 0.93 * share for j, (share, _m) in JOBS.items()}
    probs.update(student=student, unemployed=rest * 0.07, retired=retired)
    return probs


def _benefit_prob(df):
    x = (-1.6 - 1.5 * np.log(df["income"] / 20_000) + 1.0 * (df["occupation"] == "unemployed")
         - 1.5 * (df["occupation"] == "student") + 0.25 * (df["household_size"] - 2).clip(0))
    return _logistic(x.to_numpy(dtype=float))


def _check_count(observed, p, what):
    """observed = sum of Bernoulli(p): within Z standard deviations of its expectation."""
    p = np.asarray(p, dtype=float)
    expected, sd = p.sum(), np.sqrt((p * (1 - p)).sum())
    assert abs(observed - expected) <= Z * sd, (
        f"{what}: {observed} observed, {expected:.1f} ± {Z * sd:.1f} expected")


def _check_binomial(observed, m, p, what):
    """observed ~ Binomial(m, p): neither tail beyond the level of Z normal standard errors."""
    alpha = stats.norm.sf(Z)  # one tail
    upper, lower = stats.binom.sf(observed - 1, m, p), stats.binom.cdf(observed, m, p)
    assert min(upper, lower) >= alpha, (
        f"{what}: {observed} of {m} observed, {m * p:.1f} expected (tail {min(upper, lower):.2g})")


def _check_greater(a, b, what):
    """Mean of a above mean of b (or above b, a number) by Z standard errors of the
    difference (Welch)."""
    a = np.asarray(a, dtype=float)
    if np.isscalar(b):
        diff, se = a.mean() - b, np.sqrt(a.var(ddof=1) / len(a))
    else:
        b = np.asarray(b, dtype=float)
        diff = a.mean() - b.mean()
        se = np.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
    assert diff > Z * se, f"{what}: difference {diff:.4g}, standard error {se:.3g}"


@pytest.fixture(scope="module")
def df():
    return household_survey()


def _class_size(df, keys):
    return df.groupby(keys)[keys[0]].transform("size")


def _banded(df, w):
    return df.assign(age=df["age"] // w * w + w / 2)


# --- the committed file ---------------------------------------------------------------------

def test_committed_csv_is_the_generated_table(df, tmp_path):
    fresh = df.to_csv(index=False, lineterminator="\n").encode("utf-8")
    assert HOUSEHOLD_PATH.read_bytes() == fresh, "run: python -m sdc_core.teaching"
    committed = read_table(HOUSEHOLD_PATH)
    pd.testing.assert_frame_equal(committed, read_table(fresh, "household.csv"))
    pd.testing.assert_frame_equal(committed, df)  # the CSV round trip loses nothing
    # main()'s writer gives the same bytes
    assert write_household(tmp_path / "household.csv").equals(df)
    assert (tmp_path / "household.csv").read_bytes() == fresh


def test_same_seed_same_table_other_seed_other_table():
    a = household_survey(500, seed=7)
    pd.testing.assert_frame_equal(a, household_survey(500, seed=7))
    assert not a.equals(household_survey(500, seed=8))
    pd.testing.assert_frame_equal(household_survey(), household_survey(N, 20261123))


def test_n_must_be_positive():
    with pytest.raises(ValueError):
        household_survey(0)


# --- columns, types, ranges -----------------------------------------------------------------

def test_columns_types_and_ranges(df):
    assert list(df.columns) == ["region", "age", "sex", "household_size", "occupation",
                                "income", "benefit", "weight"]
    assert len(df) == N
    assert not df.isna().any().any()
    for c in ["age", "household_size", "income"]:
        assert pd.api.types.is_integer_dtype(df[c]), c
    assert pd.api.types.is_float_dtype(df["weight"])
    for c in ["region", "sex", "occupation", "benefit"]:
        assert pd.api.types.is_string_dtype(df[c]), c
    assert set(df["region"]) == set(REGIONS)
    assert df["region"].str.fullmatch(r"[A-Za-z ]+").all()  # plain ASCII, no commas
    assert df["age"].between(16, 95).all()
    assert set(df["sex"]) == {"female", "male"}
    assert df["household_size"].between(1, 8).all()
    assert set(df["household_size"]) == set(range(1, 9))
    assert set(df["occupation"]) == set(JOBS) | set(OTHER_MEDIAN)
    assert (df["income"] > 0).all()
    assert (df["income"] % 100 == 0).all()
    assert infer_kind(df["income"]) is Kind.NUMERIC  # not taken for an identifier
    assert set(df["benefit"]) == {"yes", "no"}
    assert (df["weight"] > 0).all()
    cents = df["weight"] * 100
    assert np.allclose(cents, cents.round(), rtol=0, atol=1e-6)


# --- the model ------------------------------------------------------------------------------

def test_region_sample_sizes_are_unequal_as_documented(df):
    counts = df["region"].value_counts()
    for region, (share, _pop) in REGIONS.items():
        _check_binomial(counts[region], N, share, region)
    # unequal: the largest and smallest regions' counts (~ Poisson) differ beyond sampling error
    assert counts.max() - counts.min() > Z * np.sqrt(counts.max() + counts.min())


def test_weights_total_the_population(df):
    """Weight = population_r / n_r * exp(u - s²/2), u ~ N(0, s²): E[total] = 2,500,000 and
    Var[total] = (exp(s²) - 1) Σ_r population_r² / n_r; rounding to cents adds at most
    0.005 per record."""
    n_r = df["region"].value_counts()
    pops = pd.Series({r: pop for r, (_s, pop) in REGIONS.items()})
    assert pops.sum() == POPULATION_TOTAL
    sd = np.sqrt((np.exp(WEIGHT_SD ** 2) - 1) * (pops ** 2 / n_r[pops.index]).sum())
    total = df["weight"].sum()
    assert abs(total - POPULATION_TOTAL) <= Z * sd + 0.005 * N, (total, sd)
    assert Z * sd + 0.005 * N < 0.01 * POPULATION_TOTAL  # the README's "within 1 %"
    # the adjustment: log(weight / (population_r / n_r)) ~ N(-s²/2, s²)
    base = df["region"].map(pops / n_r)
    log_adj = np.log(df["weight"] / base)
    assert abs(log_adj.mean() + WEIGHT_SD ** 2 / 2) <= Z * WEIGHT_SD / np.sqrt(N)
    assert abs(log_adj.std() - WEIGHT_SD) <= Z * WEIGHT_SD / np.sqrt(2 * (N - 1))


def test_age_pyramid(df):
    ages = np.arange(16, 96)
    f = np.where(ages <= 55, 1.0, np.exp(-(((ages - 55) / 28) ** 2)))
    p = f / f.sum()
    for lo, hi in [(16, 24), (25, 44), (45, 64), (65, 74), (75, 84), (85, 95)]:
        share = p[(ages >= lo) & (ages <= hi)].sum()
        _check_binomial(df["age"].between(lo, hi).sum(), N, share, f"age {lo}-{hi}")
    # fewer very old people: records per year of age at 85-95 below 25-44 (counts ~ Poisson)
    young, old = df["age"].between(25, 44).sum(), df["age"].between(85, 95).sum()
    assert young / 20 - old / 11 > Z * np.sqrt(young / 20 ** 2 + old / 11 ** 2)


def test_sex_about_half_and_more_women_among_the_old(df):
    p_female = 0.5 + 0.15 * (df["age"] - 65).clip(0) / 30
    female = df["sex"] == "female"
    _check_count(female.sum(), p_female, "women")
    old = df["age"] >= 80
    _check_count(female[old].sum(), p_female[old], "women aged 80+")


HOUSEHOLD_TABLE = {
    (16, 19): [0.04, 0.10, 0.22, 0.32, 0.20, 0.07, 0.03, 0.02],
    (20, 29): [0.32, 0.30, 0.15, 0.12, 0.07, 0.02, 0.01, 0.01],
    (30, 44): [0.14, 0.20, 0.22, 0.26, 0.12, 0.04, 0.01, 0.01],
    (45, 59): [0.16, 0.30, 0.20, 0.20, 0.09, 0.03, 0.01, 0.01],
    (60, 74): [0.28, 0.55, 0.08, 0.05, 0.02, 0.01, 0.005, 0.005],
    (75, 95): [0.50, 0.40, 0.05, 0.03, 0.01, 0.005, 0.003, 0.002]}


@pytest.mark.parametrize("ages", list(HOUSEHOLD_TABLE))
def test_household_size_by_age_group(df, ages):
    sizes = df.loc[df["age"].between(*ages), "household_size"]
    for size, p in enumerate(HOUSEHOLD_TABLE[ages], start=1):
        _check_binomial((sizes == size).sum(), len(sizes), p, f"ages {ages}, size {size}")


def test_singles_among_the_young_and_old_families_in_mid_ages(df):
    single = (df["household_size"] == 1).astype(float)
    family = df["household_size"].between(3, 5).astype(float)
    mid = df["age"].between(30, 59)
    _check_greater(single[df["age"] >= 75], single[mid], "singles 75+ vs 30-59")
    _check_greater(single[df["age"] >= 65], single[mid], "singles 65+ vs 30-59")
    _check_greater(single[df["age"].between(20, 29)], single[mid], "singles 20-29 vs 30-59")
    _check_greater(family[df["age"].between(30, 44)], family[df["age"] >= 60],
                   "households of 3-5: 30-44 vs 60+")


def test_occupation_given_age(df):
    probs = _occupation_probs(df["age"])
    for occupation, p in probs.items():
        _check_count((df["occupation"] == occupation).sum(), p, occupation)
    students = df.loc[df["occupation"] == "student", "age"]
    retired = df.loc[df["occupation"] == "retired", "age"]
    _check_greater((students < 25).astype(float), 0.5, "students under 25: mostly")
    _check_greater((retired >= 60).astype(float), 0.5, "retired 60+: mostly")


def test_income_model(df):
    """log income - g(age) [working] has mean ln(median of the occupation) and sd 0.45
    (rounding to the nearest 100 moves a log income by about 0.001 on average, far inside the
    tolerance)."""
    working = df["occupation"].isin(list(JOBS))
    medians = {j: m for j, (_s, m) in JOBS.items()} | OTHER_MEDIAN
    resid = (np.log(df["income"]) - np.where(working, _career(df["age"]), 0.0)
             - np.log(df["occupation"].map(medians)))
    for occupation, r in resid.groupby(df["occupation"]):
        assert abs(r.mean()) <= Z * INCOME_SD / np.sqrt(len(r)), occupation
    assert abs(resid.std() - INCOME_SD) <= Z * INCOME_SD / np.sqrt(2 * (N - 1))


def test_working_people_earn_more_than_retired_and_students(df):
    income = df["income"]
    working = income[df["occupation"].isin(list(JOBS))]
    _check_greater(working, income[df["occupation"] == "retired"], "working vs retired")
    _check_greater(income[df["occupation"] == "retired"], income[df["occupation"] == "student"],
                   "retired vs students")
    # the career curve: working people of 40-59 earn more than working people under 30
    age = df.loc[working.index, "age"]
    _check_greater(np.log(working[age.between(40, 59)]), np.log(working[age < 30]),
                   "working 40-59 vs under 30")


def test_benefit_likelier_at_low_income(df):
    p = _benefit_prob(df)
    yes = (df["benefit"] == "yes").to_numpy()
    low = (df["income"] < df["income"].median()).to_numpy()
    _check_count(yes.sum(), p, "benefit")
    _check_count(yes[low].sum(), p[low], "benefit, income below the median")
    _check_count(yes[~low].sum(), p[~low], "benefit, income above the median")
    unemployed = (df["occupation"] == "unemployed").to_numpy()
    _check_count(yes[unemployed].sum(), p[unemployed], "benefit, unemployed")
    _check_greater(yes[low].astype(float), yes[~low].astype(float), "benefit: low vs high income")


# --- the teaching property -----------------------------------------------------------------

def test_many_records_are_unique_on_the_four_keys(df):
    assert (_class_size(df, QI) == 1).mean() >= 0.30


def test_some_records_are_unique_on_region_age_sex(df):
    assert (_class_size(df, ["region", "age", "sex"]) == 1).mean() >= 0.05


def _min_class(df, w):
    return _class_size(_banded(df, w), ["region", "sex", "age"]).min()


def test_coarsening_age_reaches_classes_of_five(df):
    assert _min_class(df, 1) < 5  # raw age does not
    widths = [w for w in range(5, 26) if _min_class(df, w) >= 5]
    assert widths, "no age band width in 5..25 gives classes of at least 5 records"
    assert min(widths) == 24  # as the README and the module docstring say
