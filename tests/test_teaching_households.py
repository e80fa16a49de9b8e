"""The generated whole-household teaching survey (sdc_core/teaching_households.py): the
committed file is the generator's output, and the structure the model promises holds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdc_core.data.io import read_table
from sdc_core.teaching_households import (
    DISTRICT_HOUSEHOLDS,
    DISTRICTS,
    HOUSEHOLD_LEVEL,
    HOUSEHOLDS_PATH,
    household_members,
)


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    return household_members()


def test_the_committed_file_is_the_generators_output(df):
    on_disk = pd.read_csv(HOUSEHOLDS_PATH)
    pd.testing.assert_frame_equal(on_disk, df, check_dtype=False)
    assert HOUSEHOLDS_PATH.read_bytes() == df.to_csv(index=False, lineterminator="\n").encode()
    assert read_table(HOUSEHOLDS_PATH).shape == df.shape


def test_household_level_columns_are_constant_within_every_household(df):
    per = df.groupby("hid")[HOUSEHOLD_LEVEL[1:]].nunique()
    assert (per == 1).all().all()
    # and the person-level ones are not
    assert (df.groupby("hid")[["relation", "age"]].nunique() > 1).any().all()


def test_sizes_heads_and_members(df):
    size = df.groupby("hid").size()
    assert (df.groupby("hid")["hsize"].first() == size).all()
    assert (df[df["relation"] == "head"].groupby("hid").size() == 1).all()
    assert df["hid"].nunique() == 1200 and df["hid"].is_monotonic_increasing
    couples = df[df["htype"].isin(["couple", "couple with children"])]
    assert (couples.groupby("hid")["relation"].apply(lambda r: (r == "partner").sum()) == 1).all()
    single = df[df["htype"] == "single"]
    assert (single["hsize"] == 1).all()
    children = df[df["relation"] == "child"]
    heads = df[df["relation"] == "head"].set_index("hid")["age"]
    assert (heads[children["hid"]].to_numpy() - children["age"].to_numpy() >= 20).all()
    assert df.loc[df["age"] < 16, "income"].eq(0).all()


def test_geography_nests_and_weights_total_the_population(df):
    for region, districts in DISTRICTS.items():
        assert set(df.loc[df["region"] == region, "district"]) <= set(districts)
    assert df.groupby("district")["region"].nunique().max() == 1
    households = df.drop_duplicates("hid")
    total = households["weight"].sum()
    # E = 500,000; sd of the sum ~ sqrt((e^{0.01} - 1) Σ_d N_d² / n_d) ~ 0.3 %: 4 sd plus rounding
    n_d = households["district"].value_counts()
    sd = np.sqrt((np.exp(0.01) - 1) * sum(DISTRICT_HOUSEHOLDS[d] ** 2 / m for d, m in n_d.items()))
    assert abs(total - sum(DISTRICT_HOUSEHOLDS.values())) < 4 * sd + 1


def test_deterministic_and_seeded():
    a, b = household_members(50, seed=3), household_members(50, seed=3)
    pd.testing.assert_frame_equal(a, b)
    assert not household_members(50, seed=4).equals(a)
    with pytest.raises(ValueError, match="at least 1"):
        household_members(0)
