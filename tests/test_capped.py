"""Reading in a capped child process (``sdc_core.capped``): the table comes back as the reader
gives it in this process, a refusal with the reader's own message, and a file that needs more
than the cap is refused in one line."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sdc_core import capped
from sdc_core.capped import OverCap, from_arrow, read_capped, to_arrow
from sdc_core.data.io import read_table
from sdc_core.errors import SdcInputError
from tests.conftest import ROOT
from tests.hostile_files import xlsx_far_cell

CAP = 500_000_000


def survey(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "i": rng.integers(0, 9, n),
        "f": np.where(rng.random(n) < 0.1, np.nan, rng.random(n)),
        "w": np.where(rng.random(n) < 0.1, np.nan, rng.integers(0, 5, n)).astype(float),
        "t": rng.choice(["p", "q", None], n),
        "d": pd.date_range("2020-01-01", periods=n, freq="D"),
        "u": rng.choice(["ä", "ß", "Ω"], n)})


def file_of(df: pd.DataFrame, ext: str) -> bytes:
    """``df`` written as a file of the extension ``ext``."""
    buf = io.BytesIO()
    if ext == "csv":
        return df.to_csv(index=False).encode()
    if ext == "parquet":
        df.to_parquet(buf)
    elif ext == "xlsx":
        df.to_excel(buf, index=False)
    elif ext == "dta":
        df.assign(t=df["t"].fillna("")).to_stata(buf, write_index=False, version=118)
    else:
        import pyreadstat

        with tempfile.TemporaryDirectory() as folder:  # pyreadstat writes to a path only
            path = Path(folder) / f"t.{ext}"
            pyreadstat.write_sav(df.drop(columns="d"), str(path), compress=ext == "zsav")
            return path.read_bytes()
    return buf.getvalue()


@pytest.mark.parametrize("ext", ["csv", "parquet", "xlsx", "dta", "sav", "zsav"])
def test_every_format_reads_as_in_this_process(ext):
    raw = file_of(survey(), ext)
    pd.testing.assert_frame_equal(read_capped(raw, f"t.{ext}", cap=CAP, max_table=10**8),
                                  read_table(raw, f"t.{ext}", max_table=10**8),
                                  check_exact=True)


def test_a_column_of_several_kinds_keeps_the_kind_of_every_value():
    """An Excel column of whole numbers, text, a decimal, a blank, a date and a truth value
    is read as Python objects: each comes back as the same kind of value."""
    df = pd.DataFrame({"m": pd.Series([1, "a", 2.5, None, dt.datetime(2020, 1, 2), True],
                                      dtype=object), "k": range(6)})
    raw = file_of(df, "xlsx")
    here, there = read_table(raw, "m.xlsx"), read_capped(raw, "m.xlsx", cap=CAP)
    pd.testing.assert_frame_equal(there, here, check_exact=True)
    assert [type(v) for v in there["m"]] == [type(v) for v in here["m"]]
    assert [type(v).__name__ for v in there["m"]] == ["int", "str", "float", "float",
                                                     "datetime", "bool"]


def test_parquet_decimals_bytes_dates_zones_and_categories_come_back():
    table = pa.table({
        "dec": pa.array([decimal.Decimal("1.25"), None], pa.decimal128(5, 2)),
        "fb": pa.array([b"ab", b"cd"], pa.binary(2)),
        "d32": pa.array([dt.date(2020, 1, 1), None], pa.date32()),
        "tz": pa.array([1, 2], pa.timestamp("ms", tz="UTC")),
        "cat": pa.array(["x", "y"]).dictionary_encode(),
        "b": pa.array([True, None])})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    raw = buf.getvalue()
    pd.testing.assert_frame_equal(read_capped(raw, "t.parquet", cap=CAP),
                                  read_table(raw, "t.parquet"), check_exact=True)


#: Object columns as the readers make them, and values no reader makes but Arrow could lose:
#: whole numbers past 64 bits, NumPy scalars, time stamps with a zone, every kind of missing
KINDS = {
    "mixed": [1, "a", None], "floats and text": [1.5, "a", np.nan],
    "big": [2**70, "x", None], "numpy": [np.int64(3), np.float32(0.5), pd.NA],
    "stamps": [pd.Timestamp("2020-01-01", tz="UTC"), "x", pd.NaT],
    "python dates": [dt.datetime(2020, 1, 1), dt.date(2021, 2, 3), dt.time(4, 5)],
    "decimals and bytes": [decimal.Decimal("1.10"), b"ab", None],
    "truth": [True, False, None], "text": ["a", "b", None], "empty": [None, None, None]}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_an_object_column_round_trips_value_by_value(kind):
    df = pd.DataFrame({"x": pd.Series(KINDS[kind], dtype=object), "n": [1, 2, 3],
                       "c": pd.Categorical(["lo", "hi", "lo"], ["lo", "hi"], ordered=True)})
    table = to_arrow(df)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=2)  # the unions arrive sliced, in two batches
    back = from_arrow(pa.ipc.open_stream(sink.getvalue()).read_all())
    pd.testing.assert_frame_equal(back, df, check_exact=True)
    for got, sent in zip(back["x"], df["x"], strict=True):
        assert type(got) is type(sent)
        assert got is sent or got == sent or (pd.isna(got) and pd.isna(sent))


def test_an_index_and_columns_of_objects_only_come_back():
    df = pd.DataFrame({"a": pd.Series([1, "x"], dtype=object)},
                      index=pd.Index(["r1", "r2"], name="id"))
    back = from_arrow(to_arrow(df))
    pd.testing.assert_frame_equal(back, df, check_exact=True)


def test_a_value_arrow_has_no_form_for_is_refused_in_one_line():
    with pytest.raises(SdcInputError, match=r"column 'z' holds values of a kind that cannot be "
                                             r"handed back \(complex\)"):
        to_arrow(pd.DataFrame({"z": pd.Series([1j, "a"], dtype=object)}))


def test_a_path_is_read_by_the_child(tmp_path):
    path = tmp_path / "survey.parquet"
    path.write_bytes(file_of(survey(200), "parquet"))
    pd.testing.assert_frame_equal(read_capped(path, cap=CAP), read_table(path))


@pytest.mark.parametrize(("raw", "name", "words"), [
    (b"a,b\n1,2\n", "t.xls", "t.xls: the legacy Excel .xls format is not supported"),
    (b"a,b\n1," + b"z" * 70_000 + b"\n", "t.csv", "t.csv: column 'b' holds a value of 70,000"),
    (b"PAR1 not really", "t.parquet", "t.parquet: cannot be read as PARQUET"),
    (b"   \n", "t.csv", "t.csv: file is empty"),
    (file_of(survey(), "zsav")[:5000], "t.zsav", "t.zsav: cannot be read as ZSAV")])
def test_a_refusal_is_the_readers_own(raw, name, words):
    with pytest.raises(SdcInputError) as here:
        read_table(raw, name)
    with pytest.raises(SdcInputError) as there:
        read_capped(raw, name, cap=CAP)
    assert not isinstance(there.value, OverCap)
    assert str(there.value) == str(here.value)
    assert str(there.value).startswith(words)


def test_a_file_past_the_cap_is_refused_in_one_line():
    """Five million rows of two small numbers take about 80 MB as a table and more while
    pandas parses them: past a cap of 60 MB."""
    raw = b"a,b\n" + b"1,2\n" * 5_000_000
    with pytest.raises(OverCap) as refused:
        read_capped(raw, "many.csv", cap=60_000_000)
    assert str(refused.value) == ("many.csv: reading it needs more memory than this session may "
                                  "still use (60.0 MB); try a smaller file (or a sample of it)")
    assert refused.value.cap == 60_000_000
    assert len(read_capped(raw, "many.csv", cap=CAP)) == 5_000_000  # under a larger cap


def test_a_helper_that_died_is_started_again():
    read_capped(b"a\n1\n", "t.csv", cap=CAP)
    helper = capped._running()
    helper.proc.kill()
    helper.proc.wait()
    assert read_capped(b"a\n2\n", "t.csv", cap=CAP)["a"].tolist() == [2]
    assert capped._running() is not helper


def test_the_helper_outlives_the_thread_that_started_it():
    """A server starts the helper from a page's run, whose thread then ends: a parent-death
    signal would have ended the helper with that thread."""
    capped.stop()
    thread = threading.Thread(target=capped.start)
    thread.start()
    thread.join()
    helper = capped._running()
    time.sleep(0.5)
    assert helper.proc.poll() is None
    assert read_capped(b"a\n3\n", "t.csv", cap=CAP)["a"].tolist() == [3]
    assert capped._running() is helper


_STARTER = """
import sys, threading
sys.path.insert(0, {root!r})
from pathlib import Path
from sdc_core import capped
capped.start()
print(capped._running().proc.pid, flush=True)
capped.read_capped(Path({path!r}), cap=10**10)  # a file read for many seconds
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_the_helper_and_its_child_end_with_the_process_that_started_them(tmp_path):
    """The process that started the helper is killed (SIGKILL: no exit handler runs) while a
    child reads a slow file: the helper sees its socket close and exits, the child gets the
    helper's parent-death signal. Nothing of them is left."""
    name, raw = xlsx_far_cell(1.0)  # seconds of reading, whatever the cap
    (tmp_path / name).write_bytes(raw)
    starter = subprocess.Popen(
        [sys.executable, "-c", _STARTER.format(root=str(ROOT), path=str(tmp_path / name))],
        stdout=subprocess.PIPE, text=True)
    try:
        helper = int(starter.stdout.readline())
        deadline = time.monotonic() + 60
        reading: list[str] = []
        while not reading and time.monotonic() < deadline:
            with open(f"/proc/{helper}/task/{helper}/children") as f:
                reading = f.read().split()
            time.sleep(0.05)
        assert reading, "no child started"
    finally:
        starter.kill()
        starter.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (_alive(helper) or any(_alive(int(c))
                                                                 for c in reading)):
        time.sleep(0.05)
    assert not _alive(helper)
    assert not any(_alive(int(c)) for c in reading)


def test_the_helper_forks_with_one_thread():
    """A fork copies only the thread that forks: a lock another thread held stays held in
    the child. The helper runs no other thread (no BLAS pool, no allocator's background
    thread), so its children start consistent."""
    read_capped(b"a\n1\n", "t.csv", cap=CAP)  # the helper has loaded the readers
    helper = capped._running().proc.pid
    assert len(list(Path(f"/proc/{helper}/task").iterdir())) == 1
