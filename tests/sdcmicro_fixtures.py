"""sdcMicro's own outputs as test oracles: the fixtures under ``tests/data/sdcmicro/<name>/``
(each folder's README.md says where they come from and how they are laid out). Only inputs and
sdcMicro's results are stored, no sdcMicro code."""

import functools
import json
from pathlib import Path

import numpy as np
import pandas as pd

FIXTURES = Path(__file__).resolve().parent / "data" / "sdcmicro"


@functools.cache
def index(name: str) -> dict:
    """The folder's ``index.json``: the top-level fields and ``cases``."""
    return json.loads((FIXTURES / name / "index.json").read_text(encoding="utf-8"))


def cases(name: str) -> list[dict]:
    """Every case of the folder, in the index's order."""
    return index(name)["cases"]


def read(name: str, file: str) -> pd.DataFrame:
    """One CSV of the folder: an empty field is NaN, and every number reads back as the double
    written (pandas' default parser, checked against ``float`` on every file)."""
    return pd.read_csv(FIXTURES / name / file)


def values(name: str, file: str) -> np.ndarray:
    """The CSV's value columns as a float matrix, without the 1-based ``row`` column if any."""
    frame = read(name, file)
    return frame.drop(columns=["row"], errors="ignore").to_numpy(dtype=np.float64)
