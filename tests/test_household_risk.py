"""Household risk and the household linkage attack (sdc_core.risk.household; docs/measures.md,
"Household risk"), against references written here with plain Python loops over households."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdc_core.errors import SdcInputError
from sdc_core.risk import risk_profile
from sdc_core.risk.household import (
    combine_household_risk,
    composition_uniques,
    household_linkage,
    household_risk,
)
from tests.conftest import DATA
from tests.household_reference import brute_household_linkage

QI = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
HID, WEIGHT = "ori_hid", "sampling_weight"


@pytest.fixture(scope="module")
def testdata():
    return pd.read_csv(DATA / "testdata.csv")


# -- the references ------------------------------------------------------------------------------

def brute_household_risk(hids, individual):
    """R_h = 1 − Π(1 − r_i) per household by a loop, given to every member."""
    members = {}
    for i, h in enumerate(hids):
        members.setdefault(h, []).append(i)
    out = [0.0] * len(hids)
    for rows in members.values():
        product = 1.0
        for i in rows:
            product *= 1.0 - float(individual[i])
        for i in rows:
            out[i] = 1.0 - product
    return out


def value_key(v):
    """A sortable stand-in for a key value: a missing value is one value of its own."""
    return (0, 0.0) if pd.isna(v) else (1, float(v))


def compositions(df, qi, hid):
    """Each household's composition, the sorted tuple of its members' key tuples, by id."""
    members = {}
    for row in df[[hid, *qi]].itertuples(index=False):
        members.setdefault(row[0], []).append(tuple(value_key(v) for v in row[1:]))
    return {h: tuple(sorted(keys)) for h, keys in members.items()}


def brute_composition_uniques(df, qi, hid):
    comp = compositions(df, qi, hid)
    counts = {}
    for c in comp.values():
        counts[c] = counts.get(c, 0) + 1
    return sum(1 for c in comp.values() if counts[c] == 1)


def check_linkage(original, released, qi, hid):
    attack = household_linkage(original, released, qi, hid)
    ref = brute_household_linkage(original, released, hid, list(qi))
    assert attack.matches.tolist() == [m for m, _, _ in ref]
    assert attack.p_link.tolist() == pytest.approx([p for _, p, _ in ref], abs=0)
    certain = [(p, s) for _, p, s in ref if p == 1.0]
    assert attack.reidentified == len(certain)
    assert attack.people_reidentified == sum(s for _, s in certain)
    assert attack.expected_reidentified == pytest.approx(sum(p for _, p, _ in ref), abs=1e-9)
    assert attack.expected_people == pytest.approx(sum(p * s for _, p, s in ref), abs=1e-9)
    assert attack.n_households == len(ref)
    assert attack.reidentified_percent == pytest.approx(100 * len(certain) / len(ref))
    assert attack.composition_uniques == brute_composition_uniques(original, qi, hid)
    return attack


# -- household risk on testdata ------------------------------------------------------------------

@pytest.mark.parametrize("weight", [WEIGHT, None])
def test_household_risk_on_testdata_equals_the_loop_over_households(testdata, weight):
    hr = household_risk(testdata, QI, HID, weight=weight)
    profile = risk_profile(testdata, QI, weight=weight)
    np.testing.assert_array_equal(hr.individual, profile.risk)  # the tested individual risk
    ref = brute_household_risk(testdata[HID].tolist(), profile.risk)
    np.testing.assert_allclose(hr.risk, ref, rtol=0, atol=1e-12)
    assert hr.expected_reidentifications == pytest.approx(math.fsum(ref), rel=1e-12)
    assert hr.risk_percent == pytest.approx(100 * math.fsum(ref) / len(testdata), rel=1e-12)
    assert hr.n_households == testdata[HID].nunique() == 1000
    assert hr.n_records == len(testdata)
    per_household = {h: r for h, r in zip(testdata[HID], ref, strict=True)}
    assert hr.expected_households == pytest.approx(math.fsum(per_household.values()), rel=1e-12)
    sizes = testdata.groupby(HID).size()
    assert (hr.size_max, hr.n_single) == (sizes.max(), int((sizes == 1).sum()))
    assert hr.size_median == sizes.median()


def test_household_risk_is_at_least_each_members_risk(testdata):
    hr = household_risk(testdata, QI, HID, weight=WEIGHT)
    assert (hr.risk >= hr.individual - 1e-15).all()
    assert hr.expected_reidentifications > hr.individual.sum()


def test_a_member_at_risk_one_makes_the_household_certain_without_warnings():
    # no weights: a unique record has r = 1; its household gets exactly 1, no log(0)
    df = pd.DataFrame({"hh": [1, 1, 1, 2, 2, 3], "sex": ["f", "m", "x", "f", "m", "f"]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hr = household_risk(df, ["sex"], "hh")
    assert hr.individual.tolist() == [1 / 3, 0.5, 1.0, 1 / 3, 0.5, 1 / 3]
    assert hr.risk[:3].tolist() == [1.0, 1.0, 1.0]
    assert hr.risk[3] == pytest.approx(1 - (2 / 3) * 0.5, abs=1e-15)
    assert hr.risk[5] == 1 / 3


def test_a_member_at_risk_zero_leaves_a_household_of_one_as_it_was():
    # −expm1(log1p(−0.25)) rounds to 0.24999999999999997: the household keeps its largest r_i
    before = combine_household_risk(np.array([0.25]), np.array([0]), 1)
    after = combine_household_risk(np.array([0.25, 0.0]), np.array([0, 0]), 1)
    assert before.tolist() == after.tolist() == [0.25]


def test_combining_clips_nothing_inside_zero_one_and_handles_zero():
    r = np.array([0.0, 0.0, 1.0, 0.25, 0.5])
    code = np.array([0, 0, 1, 1, 2])
    out = combine_household_risk(r, code, 3)
    assert out.tolist() == [0.0, 1.0, 0.5]


@pytest.mark.parametrize("bad, message", [
    (dict(household="nope"), "unknown household column"),
    (dict(household="sex"), "also a quasi-identifier"),
])
def test_a_bad_household_column_is_refused(testdata, bad, message):
    with pytest.raises(SdcInputError, match=message):
        household_risk(testdata, QI, **bad)
    with pytest.raises(SdcInputError, match=message):
        composition_uniques(testdata, QI, **bad)
    with pytest.raises(SdcInputError, match=message):
        household_linkage(testdata, testdata, QI, **bad)


@pytest.mark.parametrize("blank", [np.nan, None, "", "  "])
def test_a_blank_household_id_is_refused(blank):
    df = pd.DataFrame({"hh": ["a", "a", blank, "b"], "sex": ["f", "m", "f", "m"]})
    with pytest.raises(SdcInputError, match=r"household column 'hh' has 1 blank id"):
        household_risk(df, ["sex"], "hh")
    with pytest.raises(SdcInputError, match="blank id"):
        composition_uniques(df, ["sex"], "hh")


def test_an_empty_table_is_refused():
    df = pd.DataFrame({"hh": [], "sex": []})
    with pytest.raises(SdcInputError, match="no records"):
        household_risk(df, ["sex"], "hh")
    with pytest.raises(SdcInputError, match="no records"):
        household_linkage(df, df, ["sex"], "hh")


# -- household risk: properties ------------------------------------------------------------------

def keyed_tables(max_rows=30, missing=True):
    """Random tables: household ids, two small-coded keys (blanks possible) and weights."""
    value = st.one_of(st.integers(0, 2), st.just(np.nan)) if missing else st.integers(0, 2)

    @st.composite
    def build(draw):
        n = draw(st.integers(1, max_rows))
        return pd.DataFrame({
            "hh": draw(st.lists(st.integers(0, max(1, n // 2)), min_size=n, max_size=n)),
            "a": draw(st.lists(value, min_size=n, max_size=n)),
            "b": draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)),
            "w": draw(st.lists(st.floats(1.0, 50.0), min_size=n, max_size=n)),
        })
    return build()


@st.composite
def household_tables(draw):
    """Random tables of up to 8 households of 1 to 6 members, two small-coded keys (blanks
    in ``a``): the sizes of households in a survey or a panel."""
    sizes = draw(st.lists(st.integers(1, 6), min_size=1, max_size=8))
    n = sum(sizes)
    value = st.one_of(st.integers(0, 2), st.just(np.nan))
    return pd.DataFrame({
        "hh": draw(st.permutations([h for h, s in enumerate(sizes) for _ in range(s)])),
        "a": draw(st.lists(value, min_size=n, max_size=n)),
        "b": draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)),
    })


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(df=keyed_tables(), weighted=st.booleans())
def test_random_tables_equal_the_loop(df, weighted):
    weight = "w" if weighted else None
    hr = household_risk(df, ["a", "b"], "hh", weight=weight)
    profile = risk_profile(df, ["a", "b"], weight=weight)
    np.testing.assert_array_equal(hr.individual, profile.risk)
    ref = brute_household_risk(df["hh"].tolist(), profile.risk)
    np.testing.assert_allclose(hr.risk, ref, rtol=0, atol=1e-12)
    assert hr.expected_reidentifications == pytest.approx(math.fsum(ref), rel=1e-12, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(df=keyed_tables(), weighted=st.booleans())
def test_households_of_one_have_the_individual_risk(df, weighted):
    df = df.assign(hh=np.arange(len(df)))
    weight = "w" if weighted else None
    hr = household_risk(df, ["a", "b"], "hh", weight=weight)
    np.testing.assert_array_equal(hr.risk, risk_profile(df, ["a", "b"], weight=weight).risk)
    assert hr.n_single == hr.n_households == len(df)


@settings(max_examples=300, deadline=None)
@given(risks=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30),
       data=st.data())
def test_adding_a_member_never_lowers_the_households_risk(risks, data):
    n = len(risks)
    n_households = data.draw(st.integers(1, n))
    code = np.array(data.draw(st.lists(st.integers(0, n_households - 1), min_size=n,
                                       max_size=n)))
    code[:n_households] = np.arange(n_households)  # every household has a member
    before = combine_household_risk(np.array(risks), code, n_households)
    target = data.draw(st.integers(0, n_households - 1))
    added = data.draw(st.floats(0.0, 1.0))
    after = combine_household_risk(np.append(risks, added), np.append(code, target),
                                   n_households)
    assert after[target] >= before[target]
    others = np.arange(n_households) != target
    np.testing.assert_array_equal(after[others], before[others])


@settings(max_examples=40, deadline=None)
@given(df=keyed_tables(), seed=st.integers(0, 2**32 - 1))
def test_household_risk_does_not_depend_on_the_order_of_rows(df, seed):
    order = np.random.default_rng(seed).permutation(len(df))
    hr = household_risk(df, ["a", "b"], "hh", weight="w")
    shuffled = household_risk(df.iloc[order].reset_index(drop=True), ["a", "b"], "hh",
                              weight="w")
    np.testing.assert_allclose(shuffled.risk, hr.risk[order], rtol=1e-12, atol=1e-15)
    assert shuffled.expected_reidentifications == pytest.approx(hr.expected_reidentifications,
                                                                rel=1e-12, abs=1e-15)
    assert shuffled.n_households == hr.n_households


# -- the household linkage attack ----------------------------------------------------------------

def test_the_attack_on_the_unchanged_release_finds_the_composition_uniques(testdata):
    attack = check_linkage(testdata, testdata, QI, HID)
    assert attack.reidentified == attack.composition_uniques
    assert attack.people_reidentified == attack.composition_unique_people
    assert composition_uniques(testdata, QI, HID) == attack.composition_uniques
    assert 0 < attack.composition_uniques < attack.n_households


def test_the_attack_on_a_perturbed_release_equals_the_loop_reference(testdata):
    rng = np.random.default_rng(43)
    released = testdata.copy()
    released["relat"] = released["relat"].clip(upper=3)  # a top code
    blank = rng.random(len(released)) < 0.05
    released["water"] = released["water"].where(~blank)  # some keys suppressed
    swap = rng.random(len(released)) < 0.05
    released.loc[swap, "sex"] = 3 - released.loc[swap, "sex"]  # some values changed
    attack = check_linkage(testdata, released, QI, HID)
    unchanged = household_linkage(testdata, testdata, QI, HID)
    assert attack.reidentified < unchanged.reidentified
    assert attack.composition_uniques == unchanged.composition_uniques


def test_a_release_with_other_households_is_refused(testdata):
    with pytest.raises(SdcInputError, match="household ids"):
        household_linkage(testdata, testdata.assign(ori_hid=testdata[HID][::-1].to_numpy()),
                          QI, HID)
    with pytest.raises(SdcInputError, match="same records"):
        household_linkage(testdata, testdata.iloc[:-1], QI, HID)
    with pytest.raises(SdcInputError, match="unknown released column"):
        household_linkage(testdata, testdata.drop(columns="roof"), QI, HID)


def perturbed(df, data):
    """``df`` with some key cells changed to another small code or blanked."""
    out = df.copy()
    for column in ("a", "b"):
        change = data.draw(st.lists(st.sampled_from([None, 0, 1, 2, np.nan]),
                                    min_size=len(df), max_size=len(df)))
        values = [v if c is None else c for v, c in zip(out[column], change, strict=True)]
        out[column] = pd.array(values, dtype="float64")
    return out


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(df=household_tables(), data=st.data())
def test_random_releases_equal_the_dict_reference(df, data):
    check_linkage(df, perturbed(df, data), ["a", "b"], "hh")
    check_linkage(df, df, ["a", "b"], "hh")
    check_linkage(df, df, ["a"], "hh")


@settings(max_examples=40, deadline=None)
@given(df=keyed_tables(), seed=st.integers(0, 2**32 - 1))
def test_composition_uniques_do_not_depend_on_the_order_of_rows(df, seed):
    order = np.random.default_rng(seed).permutation(len(df))
    assert composition_uniques(df.iloc[order], ["a", "b"], "hh") == \
        composition_uniques(df, ["a", "b"], "hh") == brute_composition_uniques(df, ["a", "b"],
                                                                               "hh")
