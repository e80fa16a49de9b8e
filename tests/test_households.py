"""Households in a table of persons (sdc_core/households.py, docs/measures.md "Household
risk"): household-level columns against a groupby reference over column kinds with blanks, the
household id suggested from names and structure, and the role's contradictions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdc_core.data.io import read_table
from sdc_core.errors import SdcInputError
from sdc_core.households import household_codes, household_level_columns
from sdc_core.roles import Roles, suggest_household, suggest_roles
from sdc_core.teaching_households import HOUSEHOLD_LEVEL, HOUSEHOLDS_PATH
from tests.conftest import SHARED_DATA

KINDS = ["int", "Int64", "float", "string", "category", "boolean", "date"]


def reference(df: pd.DataFrame, household: str) -> list[str]:
    """From the definition: one value per household (a blank a value), more than one overall."""
    out = []
    for c in df.columns:
        if c == household:
            continue
        key = df[c].astype(object).where(df[c].notna(), "\0blank")
        if key.nunique() > 1 and (key.groupby(df[household]).nunique() == 1).all():
            out.append(c)
    return out


def column(kind: str, values: np.ndarray, blank: np.ndarray) -> pd.Series:
    s = {"int": pd.Series(values), "Int64": pd.Series(values, dtype="Int64"),
         "float": pd.Series(values.astype(float)),
         "string": pd.Series([f"v{v}" for v in values], dtype="string"),
         "category": pd.Series(pd.Categorical([f"c{v}" for v in values])),
         "boolean": pd.Series(values % 2 == 1, dtype="boolean"),
         "date": pd.Series(pd.to_datetime("2020-01-01") + pd.to_timedelta(values, "D"))}[kind]
    if kind != "int":
        s[blank] = None
    return s


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 30), households=st.integers(1, 8),
       kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=4),
       per_household=st.lists(st.booleans(), min_size=4, max_size=4),
       blanks=st.sampled_from([0.0, 0.3]))
def test_household_level_equals_the_groupby_reference(seed, n, households, kinds, per_household,
                                                      blanks):
    rng = np.random.default_rng(seed)
    hid = rng.integers(0, households, n)
    df = pd.DataFrame({"hid": hid})
    for i, kind in enumerate(kinds):
        if per_household[i]:  # drawn per household, then given to every member
            values, blank = rng.integers(0, 3, households)[hid], (rng.random(households)
                                                                   < blanks)[hid]
        else:
            values, blank = rng.integers(0, 3, n), rng.random(n) < blanks
        df[f"c{i}"] = column(kind, values, blank)
    assert household_level_columns(df, "hid") == reference(df, "hid")


def test_the_generated_households_and_sdcmicro_testdata():
    df = read_table(HOUSEHOLDS_PATH)
    assert household_level_columns(df, "hid") == [c for c in HOUSEHOLD_LEVEL if c != "hid"]
    assert suggest_household(df) == "hid"
    testdata = read_table(SHARED_DATA / "testdata.csv")
    assert suggest_household(testdata) == "ori_hid"
    assert household_level_columns(testdata, "ori_hid") == reference(testdata, "ori_hid")
    assert suggest_roles(testdata).household == "ori_hid"
    assert "ori_hid" not in suggest_roles(testdata).numeric
    actg = read_table(SHARED_DATA / "actg175.csv")
    assert suggest_household(actg) is None and suggest_roles(actg).household is None


@pytest.mark.parametrize("values, why", [
    (list(range(12)), "every record its own"),
    ([1] * 12, "one household of everything"),
    ([1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6], "nothing constant within"),
])
def test_a_name_alone_is_not_enough(values, why):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"hid": values, "age": rng.integers(0, 90, 12),
                       "income": rng.normal(size=12)})
    assert suggest_household(df) is None, why


def test_structure_alone_is_not_enough():
    df = pd.DataFrame({"group": [1, 1, 2, 2], "region": ["a", "a", "b", "b"]})
    assert household_level_columns(df, "group") == ["region"]
    assert suggest_household(df) is None  # not named like a household id
    assert suggest_household(df.rename(columns={"group": "HH_ID"})) == "HH_ID"


def test_blank_or_missing_household_ids_are_refused():
    df = pd.DataFrame({"hid": [1, None, 2], "x": [1, 2, 3]})
    with pytest.raises(SdcInputError, match="1 blank id"):
        household_codes(df, "hid")
    with pytest.raises(SdcInputError, match="nope"):
        household_level_columns(df, "nope")
    codes, n = household_codes(pd.DataFrame({"hid": ["b", "a", "b"]}), "hid")
    assert codes.tolist() == [0, 1, 0] and n == 2
    with pytest.raises(SdcInputError, match="1 blank id"):
        household_codes(pd.DataFrame({"hid": ["a", "  ", "a"]}), "hid")


def test_a_blank_household_id_is_said_with_its_records():
    """Issue 50: which records have no household id, numbered from 1 as a reader counts."""
    ids = ["a", "", "a", None, "b", " ", "b", None, None]
    with pytest.raises(SdcInputError) as err:
        household_codes(pd.DataFrame({"hid": ids}), "hid")
    assert str(err.value) == ("household column 'hid' has 5 blank id(s), in records 2, 4, 6, 8 "
                              "and 9 (counting the first record as 1): every record needs the "
                              "id of its household")
    with pytest.raises(SdcInputError) as err:
        household_codes(pd.DataFrame({"hid": [None] * 7}), "hid")
    assert "in records 1, 2, 3, 4, 5 and 2 more (counting" in str(err.value)
    with pytest.raises(SdcInputError) as err:  # an engine's counts: no record numbers
        household_codes(pd.DataFrame({"hid": ["a", None]}), "hid", records=False)
    assert str(err.value) == ("household column 'hid' has 1 blank id(s): every record needs "
                              "the id of its household")


def test_the_role_cannot_be_another_role():
    assert Roles(qi=["age"], household="hid").problems() == []
    for roles in (Roles(qi=["hid"], household="hid"), Roles(sensitive=["hid"], household="hid"),
                  Roles(weight="hid", household="hid")):
        assert any("household id cannot also be" in p for p in roles.problems())
