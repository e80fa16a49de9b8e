"""Reading files: formats, encodings, delimiters, and clear errors."""

import io

import numpy as np
import pandas as pd
import pytest

from sdc_core.errors import SdcInputError
from sdc_core.io import Kind, infer_kinds, load_example, read_table, sniff_delimiter

SMALL = pd.DataFrame({"age": [34, 51, 27], "city": ["Zürich", "Genève", "Köln"],
                      "income": [1.5, 2.25, np.nan]})


def _roundtrip_ok(df):
    assert list(df.columns) == ["age", "city", "income"]
    assert df["age"].tolist() == [34, 51, 27]
    assert df["city"].tolist() == ["Zürich", "Genève", "Köln"]
    assert df["income"].iloc[1] == 2.25 and pd.isna(df["income"].iloc[2])


@pytest.mark.parametrize("sep", [",", ";", "\t", "|"])
def test_delimiters_are_sniffed(sep):
    raw = SMALL.to_csv(sep=sep, index=False).encode()
    _roundtrip_ok(read_table(raw, "survey.csv"))


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "latin-1"])
def test_encodings(encoding):
    raw = SMALL.to_csv(sep=";", index=False).encode(encoding)
    df = read_table(raw, "survey.csv")
    _roundtrip_ok(df)
    assert df.columns[0] == "age"  # no byte-order mark left in the first name


def test_decimal_semicolon_file_keeps_numbers_numeric():
    df = read_table(b"a;b\n1;x\n2;y\n", "t.txt")
    assert pd.api.types.is_integer_dtype(df["a"])


def test_sniff_falls_back_to_header_counts():
    assert sniff_delimiter("a;b;c\n") == ";"
    assert sniff_delimiter("single\n1\n2\n") == ","


def test_binary_formats_roundtrip(tmp_path):
    buf = io.BytesIO()
    SMALL.to_excel(buf, index=False)
    _roundtrip_ok(read_table(buf.getvalue(), "s.xlsx"))
    buf = io.BytesIO()
    SMALL.to_parquet(buf)
    _roundtrip_ok(read_table(buf.getvalue(), "s.parquet"))
    buf = io.BytesIO()
    SMALL.assign(city=SMALL["city"].astype(object)).to_stata(buf, write_index=False)
    _roundtrip_ok(read_table(buf.getvalue(), "s.dta"))
    import pyreadstat
    pyreadstat.write_sav(SMALL.assign(city=SMALL["city"].astype(object)), tmp_path / "s.sav")
    df = read_table(tmp_path / "s.sav")
    assert df["age"].tolist() == [34, 51, 27] and df["city"].tolist() == SMALL["city"].tolist()


@pytest.mark.parametrize("raw, name, message", [
    (b"", "empty.csv", "empty.csv: file is empty"),
    (b"   \n\n", "blank.csv", "blank.csv: file is empty"),
    (b"not a parquet file", "x.parquet", "x.parquet: cannot be read as PARQUET"),
    (b"PK\x03\x04garbage", "x.xlsx", "x.xlsx: cannot be read as XLSX"),
    (b"garbage", "x.dta", "x.dta: cannot be read as DTA"),
    (b"garbage", "x.sav", "x.sav: cannot be read as SAV"),
    (b"a,b\n1,2\n", "x.json", "x.json: unsupported file type '.json'"),
    (b"a,b\n1,2\n", "x.xls", "x.xls: the legacy Excel .xls format is not supported"),
    (b'a,b\n1,"2\n3,4\n', "bad.csv", "bad.csv: cannot be read as CSV"),
    (b"a,b\n", "header.csv", "header.csv: the table has no data rows"),
    (b"a,a\n1,2\n", "dup.csv", "dup.csv: duplicate column names"),
])
def test_bad_files_give_one_clear_message(raw, name, message):
    with pytest.raises(SdcInputError) as err:
        read_table(raw, name)
    assert str(err.value).startswith(message)
    assert "\n" not in str(err.value)


def test_oversized_and_missing_files(tmp_path):
    with pytest.raises(SdcInputError, match="big.csv: file is larger than the limit"):
        read_table(b"a\n" + b"1\n" * 1000, "big.csv", max_bytes=100)
    path = tmp_path / "big.csv"
    path.write_bytes(b"a\n" + b"1\n" * 1000)
    with pytest.raises(SdcInputError, match="big.csv: file is larger than the limit"):
        read_table(path, max_bytes=100)
    with pytest.raises(SdcInputError, match="nothere.csv: no such file"):
        read_table(tmp_path / "nothere.csv")


def test_example_kinds():
    df = load_example()
    assert df.shape == (2139, 27)
    kinds = infer_kinds(df)
    assert kinds["pidnum"] is Kind.IDENTIFIER
    assert kinds["age"] is Kind.NUMERIC and kinds["wtkg"] is Kind.NUMERIC
    assert kinds["cd496"] is Kind.NUMERIC  # 797 missing values do not change the kind
    for c in ("gender", "race", "treat", "arms", "hemo"):
        assert kinds[c] is Kind.CATEGORICAL


def test_kinds_of_dates_text_and_float_measurements():
    n = 40
    df = pd.DataFrame({
        "visit": [f"2024-01-{d:02d}" for d in range(1, 29)] + ["2024-02-01"] * 12,
        "birth": pd.to_datetime(["1990-05-01"] * n),
        "name": [f"person {i}" for i in range(n)],
        "region": ["north", "south"] * (n // 2),
        "income": np.linspace(1000.5, 5000.5, n),
    })
    kinds = infer_kinds(df)
    assert kinds == {"visit": Kind.DATE, "birth": Kind.DATE, "name": Kind.IDENTIFIER,
                     "region": Kind.CATEGORICAL, "income": Kind.NUMERIC}


def test_excel_row_limit_is_a_clear_error(monkeypatch):
    import sdc_core.io as sio
    monkeypatch.setattr(sio, "EXCEL_MAX_ROWS", 2)
    with pytest.raises(SdcInputError, match="an Excel sheet holds at most 2 data rows"):
        sio.table_bytes(SMALL, ".xlsx")
    assert sio.table_bytes(SMALL, ".csv").startswith(b"age,city,income\n")
