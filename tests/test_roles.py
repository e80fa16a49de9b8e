"""Suggested roles: which column names are taken for quasi-identifiers."""

import pandas as pd
import pytest

from sdc_core.data.io import read_table
from sdc_core.roles import Roles, looks_like_geography, looks_like_key, name_words, suggest_roles
from tests.conftest import SHARED_DATA


@pytest.mark.parametrize("name, words", [
    ("marital-status", "marital_status"), ("Marital Status", "marital_status"),
    ("MaritalStatus", "marital_status"), ("EducationLevel", "education_level"),
    ("HHSize", "hh_size"), ("native-country", "native_country"), ("age", "age"),
])
def test_names_split_into_words_at_separators_and_case(name, words):
    assert name_words(name) == words


@pytest.mark.parametrize("name", [
    "age", "AGE_GROUP", "agegroup", "age5", "sex", "Gender", "race", "ethnic", "Ethnicity",
    "marst", "marital_status", "MaritalStatus", "hhcivil", "civil status", "educ",
    "EducationLevel", "schooling", "occupation", "job_title", "workclass", "employment_status",
    "region", "State", "province", "zipcode", "post_code", "Postcode", "urbrur",
    "citizenship", "nationality", "religion", "relat", "household size", "HHSize",
    "income_band", "IncomeBracket", "date_of_birth", "birth_year", "native-country",
])
def test_demographic_names_look_like_keys(name):
    assert looks_like_key(name)


@pytest.mark.parametrize("name", [
    "stage", "agent", "mileage", "message", "income", "savings", "expend", "wtkg", "cd40",
    "birth_weight", "state_tax_amount", "education_score", "relative_humidity", "treat",
    "sampling_weight", "roof", "water", "days", "Key1",
])
def test_measurements_and_other_names_do_not(name):
    assert not looks_like_key(name)


def test_outside_survey_file_gets_marital_status_ethnicity_and_education():
    """Only age was suggested on a survey file with these columns."""
    df = pd.DataFrame({"id": range(40), "age": [20 + i % 30 for i in range(40)],
                       "marst": ["married", "single"] * 20, "ethnic": list("abcd") * 10,
                       "educ": list("xyz") * 13 + ["x"], "bmi": [20.5 + i for i in range(40)]})
    assert suggest_roles(df).qi == ["age", "marst", "ethnic", "educ"]


def test_adult_columns_are_all_suggested_as_keys():
    """ARX's copy of Adult: all nine columns are quasi-identifiers (TestRiskMetrics)."""
    df = read_table(SHARED_DATA / "adult.csv")
    assert suggest_roles(df).qi == list(df.columns)


def test_sdcmicro_testdata_suggests_the_demographics_not_the_measurements():
    df = read_table(SHARED_DATA / "testdata.csv")
    r = suggest_roles(df)
    assert r.qi == ["urbrur", "relat", "sex", "age", "hhcivil"]
    assert not {"expend", "income", "savings"} & set(r.qi)


def test_actg175_suggests_age_gender_and_race():
    df = read_table(SHARED_DATA / "actg175.csv")
    assert suggest_roles(df).qi == ["age", "race", "gender"]


@pytest.mark.parametrize("name", ["region", "district", "DistrictCode", "municipality", "zip",
                                  "post_code", "Bundesland", "county_name", "geo_unit", "area"])
def test_area_names_look_like_a_geography(name):
    assert looks_like_geography(name)


@pytest.mark.parametrize("name", ["year", "wave", "female", "married", "kids", "id", "educ",
                                  "region_population", "area_km2_share", "stage", "statement"])
def test_waves_yes_no_columns_and_measures_about_areas_do_not(name):
    """Issue 50: the panel's year and female were offered as record swapping's geography."""
    assert not looks_like_geography(name)


def test_roles_carry_to_the_same_columns_and_drop_a_weight_read_as_text():
    """Issue 50: the same table in another file kept no role."""
    from sdc_core.roles import carry_roles

    roles = Roles(qi=["age"], weight="w", numeric=["age", "inc"], household="hid")
    df = pd.DataFrame({"hid": [1, 1], "age": [30, 41], "w": ["1.5", "2"], "inc": [1.0, 2.0]})
    kept, why = carry_roles(roles, ["age", "w", "inc", "hid"], df)  # another column order
    assert kept == Roles(qi=["age"], weight=None, numeric=["age", "inc"], household="hid")
    assert why == ["w: the weight holds numbers; this file reads it as text"]
    same, none = carry_roles(roles, list(df.columns), df.assign(w=[1.5, 2.0]))
    assert (same, none) == (roles, [])
    many = [f"c{i}" for i in range(8)]
    assert carry_roles(roles, many, df)[1] == [
        "its columns are not those of the table before (not in it: c0, c1, c2, c3, c4 and 3 "
        "more; new: hid, age, w, inc)"]


def test_the_household_id_is_never_a_numeric_column():
    """Issue 50: tagged numeric first (an integer column), then as the household id."""
    roles = Roles(qi=["age"], numeric=["id", "age", "income"], household="id")
    assert roles.numeric == ["age", "income"]
    assert Roles(numeric=["id", "age"]).numeric == ["id", "age"]  # no household id: a number
