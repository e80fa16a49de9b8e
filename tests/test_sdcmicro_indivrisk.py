"""Weighted individual risk against sdcMicro 5.8.1's own outputs (``tests/data/sdcmicro/
indivrisk``: 100 weighted cases, 33 with missing keys), through the function the dashboard and
the CLI use: :func:`sdc_core.risk.risk_profile` with ``weight=``."""

import numpy as np
import pytest

from sdc_core.risk import risk_profile
from tests import sdcmicro_fixtures as fx

CASES = fx.cases("indivrisk")


def test_the_fixtures_are_the_hundred_described():
    assert len(CASES) == 100
    assert sum(c["na_keys"] for c in CASES) == 33
    assert all(c["dataframe_method_identical"] for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_fk_Fk_and_risk_equal_sdcmicro_record_by_record(case):
    df = fx.read("indivrisk", case["input"])
    keys = [c for c in df.columns if c != "w"]
    assert len(keys) == case["m"] and df[keys].isna().any().any() == case["na_keys"]
    ref = fx.read("indivrisk", case["output"])
    profile = risk_profile(df, keys, weight="w")  # missing keys: wildcards, alpha 1
    np.testing.assert_array_equal(profile.fk, ref["fk"])
    np.testing.assert_allclose(profile.Fk, ref["Fk"], rtol=1e-12, atol=0)
    np.testing.assert_allclose(profile.risk, ref["risk"], rtol=1e-12, atol=1e-15)
    g = case["global"]
    assert profile.global_risk_percent / 100 == pytest.approx(g["risk"], rel=1e-12)
    assert profile.global_risk_percent == pytest.approx(g["risk_pct"], rel=1e-12)
    assert profile.global_expected_reidentifications == pytest.approx(g["risk_ER"], rel=1e-12)
