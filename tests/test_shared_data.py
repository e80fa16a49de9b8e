"""The project's copies of the reference data must equal the shared originals (when the shared
folder is beside the checkout, as in CI; elsewhere the copies are what the suite uses)."""

import pytest

from sdc_core.data.io import EXAMPLE_PATH
from tests.conftest import DATA, SHARED_DATA

COPIES = {"actg175.csv": EXAMPLE_PATH, "francdat.csv": DATA / "francdat.csv",
          "testdata.csv": DATA / "testdata.csv"}


@pytest.mark.parametrize("name", sorted(COPIES))
def test_copy_matches_shared_original(name):
    copy = COPIES[name].read_bytes()
    assert copy.count(b"\n") > 5
    original = SHARED_DATA / name
    if original.exists():
        assert copy == original.read_bytes()
