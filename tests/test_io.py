"""Reading files: formats, encodings, delimiters, and clear errors."""

import io
import re
import zipfile

import numpy as np
import pandas as pd
import pytest

from sdc_core.data.io import (
    Kind,
    export_notes,
    infer_kinds,
    load_example,
    read_table,
    sniff_delimiter,
    table_bytes,
)
from sdc_core.errors import SdcInputError
from tests.hostile_files import HOSTILE

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


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "latin-1", "utf-16", "utf-32"])
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
    import sdc_core.data.io as sio
    monkeypatch.setattr(sio, "EXCEL_MAX_ROWS", 2)
    with pytest.raises(SdcInputError, match="an Excel sheet holds at most 2 data rows"):
        sio.table_bytes(SMALL, ".xlsx")
    assert sio.table_bytes(SMALL, ".csv").startswith(b"age,city,income\n")


@pytest.mark.parametrize("ext", [".csv", ".xlsx", ".parquet"])
def test_hostile_exports_are_written_without_a_live_formula(ext):
    """A formula in a header or a category, and a control character, no longer break an export
    or reach a spreadsheet as a formula; numbers stay numbers; Parquet keeps every value."""
    back = read_table(table_bytes(HOSTILE, ext), name=f"t{ext}")
    names = list(back.columns)
    cells = [v for c in back.columns for v in back[c].tolist() if isinstance(v, str)]
    if ext == ".parquet":
        assert names == list(HOSTILE.columns) and "a\x01b" in cells
        return
    assert names[0] == "'=1+1" and not any(v.startswith(("=", "@")) for v in cells)
    assert "'=HYPERLINK(\"x\")" in cells and "'@SUM(A1)" in cells and "'-x" in cells
    assert back["mixed"].tolist()[0] in (-1, "-1")  # a number is not neutralised
    assert ("a\\x01b" if ext == ".xlsx" else "a\x01b") in cells


def test_export_notes_say_what_was_changed():
    csv, xlsx, parquet = (export_notes(HOSTILE, ext) for ext in (".csv", ".xlsx", ".parquet"))
    assert csv == ["3 cell(s) and 1 column name(s) that begin with = + - @ (or a tab) are "
                   "written with a leading apostrophe, so a spreadsheet shows them as text"]
    assert xlsx[0] == csv[0] and xlsx[1].startswith("1 cell(s) and 0 column name(s) hold "
                                                    "control characters")
    assert parquet == [] and export_notes(HOSTILE, ".csv", neutralize=False) == []


#: Unicode's direction controls (issue 51): each makes a reader see the text after it in
#: another order than it is stored (U+202E: ``invoice\u202efdp.exe`` shows "invoiceexe.pdf")
BIDI = ["\u061c", "\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e",
        "\u2066", "\u2067", "\u2068", "\u2069"]
RLO = "\u202e"
SPOOF = pd.DataFrame({f"name{RLO}gnp.exe": [f"invoice{RLO}fdp.exe", "plain", None],
                      "every": ["".join(f"{c}x" for c in BIDI), "\u05d0\u200f", "=1+1"],
                      "category": pd.Categorical([f"{RLO}a", "b", f"{RLO}a"]),
                      "n": [1, 2, 3]})


def escaped(text: str) -> str:
    """``text`` with every direction control written as the six characters ``\\u202e``."""
    return "".join(f"\\u{ord(c):04x}" if c in BIDI else c for c in text)


def file_text(raw: bytes, ext: str) -> str:
    """What a file holds as text: a CSV's, or every XML part of an .xlsx."""
    if ext == ".csv":
        return raw.decode("utf-8")
    with zipfile.ZipFile(io.BytesIO(raw)) as z:
        return "".join(z.read(n).decode("utf-8") for n in z.namelist() if n.endswith(".xml"))


@pytest.mark.parametrize("ext", [".csv", ".xlsx"])
def test_direction_controls_are_written_as_visible_escapes(ext):
    """A header or cell holding a direction control shows its text reordered in a spreadsheet:
    each control is written as its escape (``\\u202e``), visible, with the neutralisation of
    formulas; numbers stay numbers, and without neutralisation the text is written as it is."""
    raw = table_bytes(SPOOF, ext)
    text = file_text(raw, ext)
    assert not [c for c in BIDI if c in text]
    assert not re.search(r"&#(x0*(61c|200[ef]|202[a-e]|206[6-9])|0*(1564|82(06|07|3[4-8])|"
                         r"829[4-7]));", text, re.I), "written as character references"
    back = read_table(raw, name=f"t{ext}")
    assert list(back.columns) == [escaped(c) for c in SPOOF.columns]
    assert back.iloc[0, 0] == escaped(f"invoice{RLO}fdp.exe") == "invoice\\u202efdp.exe"
    assert back["every"].tolist() == [escaped(SPOOF["every"][0]), "\u05d0\\u200f", "'=1+1"]
    assert back["category"].astype(str).tolist() == ["\\u202ea", "b", "\\u202ea"]
    assert back["n"].tolist() == [1, 2, 3]
    kept = read_table(table_bytes(SPOOF, ext, neutralize=False), name=f"t{ext}")
    assert list(kept.columns) == list(SPOOF.columns) and kept.iloc[0, 0] == SPOOF.iloc[0, 0]


def test_parquet_keeps_direction_controls_and_the_notes_say_what_was_escaped():
    back = read_table(table_bytes(SPOOF, ".parquet"), name="t.parquet")
    assert list(back.columns) == list(SPOOF.columns)
    assert back["every"].tolist()[:2] == SPOOF["every"].tolist()[:2]
    words = ("5 cell(s) and 1 column name(s) hold direction controls (U+202E and the like, "
             "which show text in another order than it is stored): they are written as "
             "\\u202e")
    for ext in (".csv", ".xlsx"):
        assert words in export_notes(SPOOF, ext)
        assert not any("direction" in n for n in export_notes(SPOOF, ext, neutralize=False))
    assert export_notes(SPOOF, ".parquet") == []


def test_apply_writes_hostile_values_and_says_so(tmp_path, capsys):
    from sdc_core.cli import main

    data = tmp_path / "hostile.parquet"
    data.write_bytes(table_bytes(HOSTILE, ".parquet"))
    recipe = tmp_path / "r.json"
    recipe.write_text('{"version": 1, "seed": 1, "steps": []}')
    for ext in (".csv", ".xlsx"):
        assert main(["apply", str(data), "--recipe", str(recipe), "-o",
                     str(tmp_path / f"out{ext}")]) == 0
        notes = export_notes(read_table(data), ext)
        assert len(notes) == (1 if ext == ".csv" else 2)
        assert capsys.readouterr().err == "".join(f"sdc_core: note: {n}\n" for n in notes)


def test_mixed_encodings_are_refused_with_the_line():
    """12 identical people, six written in UTF-8 and six in Latin-1: read as Latin-1 they
    were two classes of 6; now the file is refused, naming the line where UTF-8 stops."""
    rows = ["city,age"] + ["Zürich,40"] * 6
    raw = ("\n".join(rows) + "\n").encode("utf-8") + ("Zürich,40\n" * 6).encode("latin-1")
    with pytest.raises(SdcInputError, match="mixes encodings: it is UTF-8 up to line 8"):
        read_table(raw, "people.csv")
    latin = ("city,age\n" + "Zürich,40\n" * 12).encode("latin-1")
    assert read_table(latin, "people.csv")["city"].nunique() == 1


def test_nested_parquet_columns_are_refused_by_name():
    """Parquet list and struct columns ended in an internal error and left the session stuck."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(pa.table({"a": [1, 2], "tags": pa.array([[1, 2], [3]]),
                             "home": pa.array([{"x": 1}, {"x": 2}])}), buf)
    with pytest.raises(SdcInputError, match=r"n.parquet: column\(s\) tags, home hold nested "
                                            r"values \(lists or records\)"):
        read_table(buf.getvalue(), name="n.parquet")


def test_dates_with_a_time_zone_are_written_to_excel_as_text_with_their_offset():
    zoned = pd.DataFrame({"seen": pd.to_datetime(["2024-03-01 09:00", None, "2024-07-01 18:30"])
                          .tz_localize("Europe/Paris")})
    back = pd.read_excel(io.BytesIO(table_bytes(zoned, ".xlsx")))
    assert back["seen"].tolist()[0] == "2024-03-01 09:00:00+01:00"
    assert pd.isna(back["seen"][1]) and back["seen"][2] == "2024-07-01 18:30:00+02:00"
    assert any("time zone" in n for n in export_notes(zoned, ".xlsx"))
    assert not any("time zone" in n for n in export_notes(zoned, ".csv"))
