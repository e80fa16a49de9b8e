"""Files that decode to far more than their size are refused before their table is
materialised, and files within the allowance read exactly as before (``sdc_core.data.decoded``).

Each of the bomb family (``tests/hostile_files.py``) is read in a fresh interpreter with an
allowance of 40 MB; its peak resident memory must stay within the allowance plus 150 MB
over the interpreter's before reading (the family decodes to 2 to 10 times the allowance
at the scales used here)."""

import io
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from sdc_core.data import decoded
from sdc_core.data.io import read_table
from sdc_core.errors import SdcInputError
from tests.child_probe import PEAK
from tests.conftest import ROOT
from tests.hostile_files import BOMBS, SCALES, csv_long_cell, parquet_dictionary

ALLOWANCE = 40_000_000
SLACK = 150_000_000
_PROBE = """
import gc, json, resource, sys
sys.path.insert(0, {root!r})
from pathlib import Path
from sdc_core.errors import SdcInputError
from sdc_core.data.io import read_table
raw = Path({path!r}).read_bytes()
read_table(b"a,b\\n1,2\\n", "warm.csv")
gc.collect()
before = peak()
try:
    df = read_table(raw, {name!r}, max_table={allowance})
    message = None
except SdcInputError as err:
    message = str(err)
after = peak()
print(json.dumps({{"message": message, "grew": after - before}}))
"""


@pytest.mark.parametrize("bomb", sorted(BOMBS))
def test_each_bomb_is_refused_within_the_allowance(bomb, tmp_path):
    """The bomb is made here and read from a file in the probe, so that the probe's peak
    memory is the reading's, not the making's."""
    name, raw = BOMBS[bomb](SCALES[bomb])
    (tmp_path / name).write_bytes(raw)
    code = PEAK + _PROBE.format(root=str(ROOT), path=str(tmp_path / name), name=name,
                         allowance=ALLOWANCE)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["message"] is not None, f"{bomb} was read"
    assert "\n" not in result["message"]
    assert ("this session may use" in result["message"]
            or "limit of 65,536 for one cell" in result["message"])
    assert result["grew"] < ALLOWANCE + SLACK, f"{bomb}: grew {result['grew'] / 1e6:.0f} MB"


def test_the_dictionary_bomb_names_its_column_and_length():
    name, raw = parquet_dictionary(0.01)
    with pytest.raises(SdcInputError, match=r"^dictionary\.parquet: column 'x' holds a value of "
                                            r"500,000 characters, more than the limit of "
                                            r"65,536 for one cell$"):
        read_table(raw, name)


def test_the_cell_limit_is_configurable_and_applies_to_every_format():
    name, raw = csv_long_cell(0.01)  # a cell of 100,000 characters
    with pytest.raises(SdcInputError, match="100,000 characters"):
        read_table(raw, name)
    assert read_table(raw, name, max_cell=200_000).shape == (2, 2)
    df = pd.DataFrame({"a": ["x" * 100, "y"], "b": pd.Categorical(["u" * 100, "v"])})
    for ext in (".csv", ".parquet", ".xlsx", ".dta"):
        buf = io.BytesIO()
        if ext == ".csv":
            df.to_csv(buf, index=False)
        elif ext == ".parquet":
            df.to_parquet(buf)
        elif ext == ".xlsx":
            df.to_excel(buf, index=False)
        else:
            df.to_stata(buf, write_index=False)
        with pytest.raises(SdcInputError, match="100 characters, more than the limit of 99"):
            read_table(buf.getvalue(), f"t{ext}", max_cell=99)
        assert read_table(buf.getvalue(), f"t{ext}", max_cell=100).shape == (2, 2)


def test_a_long_column_name_is_refused():
    with pytest.raises(SdcInputError, match="a column name holds a value of 70,000 characters"):
        read_table(("n" * 70_000 + ",b\n1,2\n").encode(), "t.csv")


def _mixed_csv(numbers: int, texts: int) -> bytes:
    return ("a,b\n" + "1,2.5\n" * numbers + "ab,3.5\n" * texts).encode()


def test_csv_read_in_chunks_equals_one_read(monkeypatch):
    """Chunks of a few hundred characters give the table pandas gives in one read, for
    numbers, text, missing values and dates."""
    rng = np.random.default_rng(5)
    n = 3000
    df = pd.DataFrame({"x": rng.integers(0, 100, n), "y": rng.normal(size=n).round(3),
                       "z": rng.choice(["a", "b", None], n),
                       "d": pd.date_range("2020-01-01", periods=n, freq="D").astype(str)})
    raw = df.to_csv(index=False).encode()
    whole = read_table(raw, "t.csv")
    monkeypatch.setattr(decoded, "CSV_CHUNK", 500)
    chunked = read_table(raw, "t.csv", max_table=10**9)
    pd.testing.assert_frame_equal(chunked, whole)


def test_csv_columns_that_become_mixed_are_counted_as_objects(monkeypatch):
    """1,000 rows of numbers then 1,000 of text in small chunks: the joined column holds
    Python objects, and the allowance is checked against that, not the chunks' own sizes."""
    monkeypatch.setattr(decoded, "CSV_CHUNK", 2000)
    raw = _mixed_csv(1000, 1000)
    table = read_table(raw, "t.csv", max_table=10**9)
    assert table["a"].dtype == object
    held = decoded.memory_bytes(table)
    with pytest.raises(SdcInputError, match="this session may use"):  # while reading
        decoded.read_csv_bounded(raw, ",", max_table=int(held * 0.8))
    # the chunks hold a as 1,000 int64 and 1,000 Arrow strings (2 characters and an offset),
    # b as 2,000 float64: a sum of their sizes would have let the table through
    chunk_sizes = 1000 * 8 + 1000 * (2 + 8) + 2000 * 8
    assert held > 2 * chunk_sizes


def test_within_the_allowance_every_format_reads_as_without_one():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"n": rng.integers(0, 9, 500), "t": rng.choice(["p", "q"], 500)})
    for ext in (".csv", ".parquet", ".xlsx"):
        buf = io.BytesIO()
        getattr(df, {"csv": "to_csv", "parquet": "to_parquet", "xlsx": "to_excel"}[ext[1:]])(
            buf, index=False)
        raw = buf.getvalue()
        pd.testing.assert_frame_equal(read_table(raw, f"t{ext}", max_table=10**8),
                                      read_table(raw, f"t{ext}"))


def test_the_cell_check_passes_over_object_columns_without_text():
    df = pd.DataFrame({"b": pd.Series([True, False, None], dtype=object),
                       "n": pd.Series([1, 2.5, None], dtype=object),
                       "m": pd.Series([1, "x" * 10, None], dtype=object)})
    decoded.check_table(df, None, max_cell=10)
    with pytest.raises(SdcInputError, match="column 'm' holds a value of 10 characters"):
        decoded.check_table(df, None, max_cell=9)


def test_a_parquet_column_of_a_kind_that_cannot_be_bounded_is_refused():
    """An extension type (here a UUID) has no size the reader can tell before it reads it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(pa.table({"u": pa.array([b"0123456789abcdef"] * 3, pa.uuid())}), buf)
    with pytest.raises(SdcInputError, match=r"column\(s\) u \(extension<arrow.uuid>\) hold a "
                                             "kind of value whose size cannot be known"):
        read_table(buf.getvalue(), "u.parquet", max_table=ALLOWANCE)


def test_a_stata_file_with_long_strings_read_in_chunks_equals_one_read():
    """Long strings (strL), value labels and missing values: the chunked read of
    :func:`decoded.read_stata_bounded` gives the table a whole read gives."""
    rng = np.random.default_rng(39)
    n = 3 * decoded.STATA_CHUNK + 17
    notes = np.array(["n" * 3000, "short", "", "ü" * 10], dtype=object)[rng.integers(0, 4, n)]
    df = pd.DataFrame({"note": notes, "code": rng.integers(1, 4, n).astype(np.int8),
                       "x": np.where(rng.random(n) < 0.1, np.nan, rng.random(n))})
    buf = io.BytesIO()
    df.to_stata(buf, version=118, convert_strl=["note"], write_index=False,
                value_labels={"code": {1: "one", 2: "two", 3: "three"}})
    raw = buf.getvalue()
    assert decoded._has_strl(raw)
    whole = pd.read_stata(io.BytesIO(raw))
    pd.testing.assert_frame_equal(decoded.read_stata_bounded(raw, ALLOWANCE), whole)
    pd.testing.assert_frame_equal(read_table(raw, "t.dta", max_table=ALLOWANCE),
                                  read_table(raw, "t.dta"))


def test_a_stata_chunk_of_long_strings_fits_a_quarter_of_the_room():
    """2,000 rows of 65,536-character strLs are 0.5 GB in one column: a chunk is sized so that
    its longest possible text (4 bytes a character) takes at most a quarter of the room."""
    for room, cell in [(40_000_000, 65_536), (10**6, 1_000), (10**10, 65_536), (1, 65_536)]:
        rows = decoded.stata_chunk(room, cell)
        assert 1 <= rows <= decoded.STATA_CHUNK
        assert rows == 1 or rows * cell * 4 <= room / 4
    assert decoded.stata_chunk(10**10, 65_536) == decoded.STATA_CHUNK
