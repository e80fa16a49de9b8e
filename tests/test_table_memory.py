"""A cross table at the cell cap stays within the memory a table job is given, and a table past
the cap is refused before it is built (docs/tables.md, "Building the table"; docs/deploying.md,
"Memory: the admission budget").

Each table is built and published in a child process of its own, which reports how much its
peak resident memory grew over what it held before the table (``VmHWM``: tests/child_probe.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.child_probe import PEAK

ROOT = Path(__file__).resolve().parents[1]
ACTG = ROOT.parent / "shared" / "data" / "actg175.csv"

#: The working memory a table job may take beside its worker (docs/deploying.md)
TABLE_JOB_BYTES = 1.5e9

_JOB = """
import json, sys
sys.path.insert(0, {root!r})
import numpy as np, pandas as pd
from sdc_core.errors import SdcInputError
from sdc_core.tables.cell_rules import Rule
from sdc_core.tables.crosstab import crosstab
from sdc_core.tables.table_release import release_table
if {actg!r}:
    df, cols = pd.read_csv({actg!r}), ["cd80", "days"]
else:
    g = np.random.default_rng(0)
    df = pd.DataFrame({{c: g.integers(0, {levels}, 100_000) for c in "abc"}})
    cols = ["a", "b", "c"]
crosstab(df.head(50), cols)  # imports and first calls before the measure
before = peak()
try:
    made = release_table(df, cols, None, {method!r}, Rule.parse("threshold:5"))
    cells, passes = len(made.truth.frame), made.audit.passes if made.audit is not None else None
    refused = None
except SdcInputError as e:
    cells, passes, refused = 0, None, str(e)
print(json.dumps({{"cells": cells, "passes": passes, "refused": refused,
                   "grew": peak() - before}}))
"""


def job(method: str, actg: bool = False, levels: int = 99) -> dict:
    code = PEAK + _JOB.format(root=str(ROOT), actg=str(ACTG) if actg else "", levels=levels,
                              method=method)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_table_of_a_million_cells_is_suppressed_and_audited_within_a_table_job():
    """ACTG 175's cd80 × days, 778,974 cells with margins: the threshold rule, secondary
    suppression and the audit of every hidden cell."""
    result = job("suppress", actg=True)
    assert result["cells"] == 778_974 and result["passes"] is True
    assert 0 < result["grew"] < TABLE_JOB_BYTES, f"grew {result['grew'] / 1e6:.0f} MB"


@pytest.mark.parametrize("method", ["dp", "ckm"])
def test_a_table_at_the_cell_cap_is_published_within_a_table_job(method):
    """99 levels on each of three columns: 100³ = 1,000,000 cells with margins, the cap."""
    result = job(method)
    assert result["cells"] == 1_000_000
    assert 0 < result["grew"] < TABLE_JOB_BYTES, f"grew {result['grew'] / 1e6:.0f} MB"


def test_a_table_past_the_cap_is_refused_before_it_takes_memory():
    """100 levels on each of three columns: 101³ cells, one level past the cap. The refusal
    comes before any array of the table's size is made (a million cells of float64 alone
    would be 8 MB; the whole table hundreds)."""
    result = job("ckm", levels=100)
    assert result["cells"] == 0 and "1,030,301 cells" in result["refused"]
    assert result["grew"] < 8e6, f"grew {result['grew'] / 1e6:.1f} MB"
