"""Reference outputs of pycanon 1.3.6 for sdc_core/risk/closeness.py (run by hand, not by pytest).

pycanon pins an older pandas than the project, so it runs in a virtual environment of its own:

    python3 -m venv /tmp/pycanon-venv
    /tmp/pycanon-venv/bin/pip install pycanon==1.3.6
    /tmp/pycanon-venv/bin/python tests/data/pycanon/make_fixtures.py   # from the repository root

It reads ``cases.json`` and writes ``outputs.json``. Only pycanon's outputs are kept; the
preparation below (text columns, banding, dropping records with a blank sensitive value) is
what ``tests/test_closeness.py`` does with the same cases (see README.md).
"""

import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pycanon
from pycanon import anonymity

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
MEASURES = {"t_closeness": anonymity.t_closeness,
            "beta_likeness": anonymity.basic_beta_likeness,
            "enhanced_beta_likeness": anonymity.enhanced_beta_likeness,
            "delta_disclosure": anonymity.delta_disclosure}


def prepare(table: pd.DataFrame, case: dict) -> pd.DataFrame:
    """The case's columns: banded keys, text columns, no record with a blank sensitive value."""
    cols = list(dict.fromkeys([*case["qi"], case["sensitive"]]))
    df = table[cols].copy()
    for col, width in case.get("band", {}).items():
        df[col] = np.floor(df[col] / width) * width
    for col in case.get("text", []):
        df[col] = df[col].astype(str)
    return df[df[case["sensitive"]].notna()].reset_index(drop=True)


def main() -> None:
    spec = json.loads((HERE / "cases.json").read_text())
    tables = {k: pd.read_csv(ROOT / v) for k, v in spec["tables"].items()}
    out = []
    for case in spec["cases"]:
        df = prepare(tables[case["table"]], case)
        start = time.time()
        figures = {k: float(f(df, case["qi"], [case["sensitive"]]))
                   for k, f in MEASURES.items()}
        assert all(math.isfinite(v) for v in figures.values()), (case, figures)
        out.append({**case, **figures})
        print(case["table"], case["qi"], case["sensitive"], figures,
              f"{time.time() - start:.1f} s", file=sys.stderr)
    (HERE / "outputs.json").write_text(json.dumps(
        {"pycanon": pycanon.__version__, "pandas": pd.__version__, "numpy": np.__version__,
         "python": sys.version.split()[0], "cases": out}, indent=1) + "\n")


if __name__ == "__main__":
    main()
