"""Households in a sweep (docs/utility.md, "Households in a sweep"): a grid's ``household``
gives every row the household risk of the release and the household linkage attack, the
same figures as the core's functions on the row's own recipe; record swapping runs in a grid;
targets on the household figures; bad grids are refused in one line."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from sdc_core.errors import SdcInputError
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.risk.household import household_linkage, household_risk
from sdc_core.risk.linkage import linkage_attack
from sdc_core.sweep.run import run_sweep
from sdc_core.teaching_households import HOUSEHOLDS_PATH

QI = ["region", "district", "hsize", "relation", "sex", "agegroup"]
SWAP = {"hierarchy": ["region", "district"], "similar": [["hsize", "htype"], ["hsize"]],
        "k": 3, "risk_variables": ["agegroup", "sex"]}


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    return pd.read_csv(HOUSEHOLDS_PATH)


def grid(**more) -> dict:
    return {"household": "hid", "numeric": ["age", "income"], "settings": [
        {"method": "recode", "column": "agegroup", "param": "min_count", "values": [400]},
        {"method": "record_swap", "param": "swap_rate", "values": [0.05, 0.2], "fixed": SWAP},
        {"method": "pram", "column": "sex", "param": "p", "values": [0.1]}], **more}


def test_every_row_equals_the_core_on_its_own_recipe(df):
    result = run_sweep(df, QI, grid(), weight="weight")
    table = result.table
    assert len(table) == 5
    for _, row in table.iterrows():
        recipe = parse_recipe(json.loads(row["recipe"]))
        assert recipe.household == "hid"
        applied = apply_recipe(recipe, df)
        release = applied.data
        risk = household_risk(release, QI, "hid", "weight")
        attack = household_linkage(df, release, QI, "hid", recipe, reports=applied.reports)
        assert row["household_risk_pct"] == pytest.approx(risk.risk_percent, rel=1e-12)
        assert row["household_expected_reidentifications"] == pytest.approx(
            risk.expected_reidentifications, rel=1e-12)
        assert row["household_linkage_reidentified"] == attack.reidentified
        person = linkage_attack(df, release, QI, recipe, reports=applied.reports)
        assert row["linkage_reidentifications"] == pytest.approx(
            person.linkage_reidentifications, rel=1e-12)
    swapped = table[table["method"] == "record_swap"]
    # swapping more households breaks more households' compositions in their area
    assert swapped["household_linkage_reidentified"].is_monotonic_decreasing
    assert (swapped["household_linkage_reidentified"]
            < table.loc[0, "household_linkage_reidentified"]).all()


def test_a_target_on_the_household_attack_names_the_cheapest_row(df):
    result = run_sweep(df, QI, grid(target={"measure": "household_linkage_reidentified",
                                            "at_most": 450}))
    table = result.table
    met = table[table["household_linkage_reidentified"] <= 450]
    assert table["meets_target"].tolist() == (table["household_linkage_reidentified"]
                                              <= 450).tolist()
    assert len(met) >= 1
    best = table[table["best"]]
    assert len(best) == 1 and best["IL1_release"].iloc[0] == met["IL1_release"].min()


def test_without_a_household_the_rows_are_as_before(df):
    plain = {"numeric": ["age"], "settings": [
        {"method": "pram", "column": "sex", "param": "p", "values": [0.1]}]}
    table = run_sweep(df, QI, plain).table
    assert not any(c.startswith("household") for c in table.columns)
    assert "household" not in table["recipe"].iloc[1]


@pytest.mark.parametrize("change, words", [
    ({"household": ["hid"]}, "household must be a column name"),
    ({"household": "nope"}, "nope"),
    ({"household": "income", "known": ["income"]}, "cannot also be a known"),
    ({"household": "hid", "numeric": ["age", "hid"]}, "hid: the household column is an id, "
     "not a measure: leave it out of numeric"),
    ({"household": None}, "record_swap needs the household column"),
])
def test_bad_grids_are_refused_in_one_line(df, change, words):
    with pytest.raises(SdcInputError, match=words) as err:
        run_sweep(df, QI, grid(**change))
    assert "\n" not in str(err.value) and str(err.value).startswith("grid")


def test_household_targets_and_blank_ids_are_refused(df):
    no_household = {"settings": [{"method": "pram", "column": "sex", "param": "p",
                                  "values": [0.1]}],
                    "target": {"measure": "household_risk_pct", "at_most": 5}}
    with pytest.raises(SdcInputError, match="needs the household column"):
        run_sweep(df, QI, no_household)
    blank = df.assign(hid=df["hid"].astype("Int64"))
    blank.loc[7, "hid"] = None
    with pytest.raises(SdcInputError, match="1 blank id"):
        run_sweep(blank, QI, grid())
    with pytest.raises(SdcInputError, match="cannot also be a key"):
        run_sweep(df, [*QI, "hid"], grid())


def test_the_household_id_is_no_default_numeric_column(df):
    """Issue 50: the household id, an integer column, was a numeric column of the sweep's
    IL1 and eigenvalues unless the grid named others."""
    from sdc_core.sweep.grid import parse_grid

    settings = [{"method": "pram", "column": "sex", "param": "p", "values": [0.1]}]
    with_id = parse_grid({"settings": settings}, df).numeric
    assert "hid" in with_id  # without a household id it is a number like any other
    assert parse_grid({"household": "hid", "settings": settings}, df).numeric == [
        c for c in with_id if c != "hid"]
