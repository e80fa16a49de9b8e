"""Files built to take memory: small on disk, huge once decoded (the "bomb family").

Each maker returns ``(file name, bytes)``; ``scale`` 1 gives the sizes of the probe that took
a server with a 2 GB budget to 23 GB (``bench/bench_bombs.py`` uploads them to a real
server), and the tests use small scales with a small allowance. At the end, :data:`HOSTILE`:
a table whose text a spreadsheet would run as formulas.
"""

from __future__ import annotations

import io
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

MB = 1_000_000


def _parquet(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd", compression_level=19, use_dictionary=True)
    return buf.getvalue()


def parquet_dictionary(scale: float = 1.0) -> tuple[str, bytes]:
    """Two strings of 50 MB (times ``scale``) over 200 rows, stored once as a dictionary:
    a few kB on disk, 200 × 50 MB = 10 GB decoded."""
    n = max(1, int(50 * MB * scale))
    column = pa.DictionaryArray.from_arrays(pa.array([0, 1] * 100, pa.int32()),
                                            pa.array(["a" * n, "b" * n]))
    return "dictionary.parquet", _parquet(pa.table({"x": column, "id": range(200)}))


def parquet_repeated(scale: float = 1.0) -> tuple[str, bytes]:
    """A 1 MB string (times ``scale``) repeated over 3,000 rows: about 150 kB on disk, 3 GB
    decoded."""
    value = "abcdefgh" * max(1, int(MB * scale) // 8)
    return "repeated.parquet", _parquet(pa.table({"x": pa.array([value] * 3000)}))


def _parquet_repeated_groups(table: pa.Table, groups: int) -> bytes:
    """``table`` written ``groups`` times, a row group each: the file says what it decodes to
    without the bomb ever being whole in memory here."""
    buf = io.BytesIO()
    with pq.ParquetWriter(buf, table.schema, compression="zstd", compression_level=19,
                          use_dictionary=True) as writer:
        for _ in range(groups):
            writer.write_table(table)
    return buf.getvalue()


def parquet_fixed_binary(scale: float = 1.0) -> tuple[str, bytes]:
    """A ``fixed_size_binary`` value of 1 MB (times ``scale``) over 3,000 rows in 10 row groups:
    a few kB on disk (its pages hold the value once), 3 GB of Python bytes objects read."""
    width = max(1, int(MB * scale))
    column = pa.array([b"x" * width] * 300, pa.binary(width))
    return "fixed_binary.parquet", _parquet_repeated_groups(pa.table({"x": column}), 10)


def parquet_view(kind: str, scale: float = 1.0) -> tuple[str, bytes]:
    """A ``string_view`` (or ``binary_view``) value of 60,000 characters, under the one-cell
    limit, over 50,000 rows (times ``scale``) in 20 row groups: a few kB on disk, 3 GB read."""
    rows = max(1, int(2_500 * scale))
    value = "v" * 60_000
    column = pa.array([value if kind == "string" else value.encode()] * rows,
                      pa.string_view() if kind == "string" else pa.binary_view())
    return f"{kind}_view.parquet", _parquet_repeated_groups(pa.table({"x": column}), 20)


def stata_strl(scale: float = 1.0) -> tuple[str, bytes]:
    """A long string (strL) of 60,000 characters, stored once, named by 100,000 rows (times
    ``scale``): about 1 MB on disk, 6 GB read."""
    rows = max(1, int(100_000 * scale))
    value = "s" * 60_000
    df = pd.DataFrame({"note": [value] * rows, "k": np.arange(rows, dtype=np.int32)})
    buf = io.BytesIO()
    df.to_stata(buf, version=117, convert_strl=["note"], write_index=False)
    return "strl.dta", buf.getvalue()


def parquet_many_rows(scale: float = 1.0) -> tuple[str, bytes]:
    """300 million missing numbers (times ``scale``) in 4 columns: run-length encoded to a few
    kB, 9.6 GB as float64."""
    rows = max(1, int(300_000_000 * scale))
    nulls = pa.nulls(rows, pa.float64())
    return "many_rows.parquet", _parquet(pa.table({c: nulls for c in "abcd"}))


def _xlsx(sheet_rows: bytes, shared: list[str] | None = None,
          strings_part: str = "xl/sharedStrings.xml") -> bytes:
    """A minimal workbook whose one sheet's ``<sheetData>`` holds ``sheet_rows``; its shared
    strings are kept at ``strings_part``."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr("[Content_Types].xml", (
            '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats'
            '.org/package/2006/content-types"><Default Extension="rels" ContentType="applicat'
            'ion/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" Conte'
            'ntType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="appl'
            'ication/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Overrid'
            'e PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformat'
            's-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/'
            f'{strings_part}" ContentType="application/vnd.openxmlformats-officedocument.spre'
            'adsheetml.sharedStrings+xml"/></Types>'))
        z.writestr("_rels/.rels", (
            '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openx'
            'mlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://sc'
            'hemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target'
            '="xl/workbook.xml"/></Relationships>'))
        z.writestr("xl/workbook.xml", (
            '<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlform'
            'ats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/offic'
            'eDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1'
            '"/></sheets></workbook>'))
        z.writestr("xl/_rels/workbook.xml.rels", (
            '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openx'
            'mlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://sc'
            'hemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="wor'
            'ksheets/sheet1.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.'
            'org/officeDocument/2006/relationships/sharedStrings" Target="/'
            f'{strings_part}"/></Relationships>'))
        strings = "".join(f"<si><t>{s}</t></si>" for s in shared or [])
        z.writestr(strings_part, (
            '<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.o'
            f'rg/spreadsheetml/2006/main">{strings}</sst>'))
        z.writestr("xl/worksheets/sheet1.xml", (
            b'<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlfo'
            b'rmats.org/spreadsheetml/2006/main"><sheetData>' + sheet_rows
            + b'</sheetData></worksheet>'))
    return buf.getvalue()


def xlsx_numbers(scale: float = 1.0) -> tuple[str, bytes]:
    """A million rows (times ``scale``) of 20 numbers: a sheet of 340 MB deflated to about
    1 MB; 160 MB as float64, several times that while openpyxl reads it."""
    rows = max(2, int(1_000_000 * scale))
    header = b"<row>" + b"".join(b'<c t="inlineStr"><is><t>c%d</t></is></c>' % i
                                 for i in range(20)) + b"</row>"
    return "numbers.xlsx", _xlsx(header + (b"<row>" + b"<c><v>7</v></c>" * 20 + b"</row>")
                                 * (rows - 1))


def xlsx_shared(scale: float = 1.0, strings_part: str = "xl/sharedStrings.xml"
                ) -> tuple[str, bytes]:
    """One shared string of 60,000 characters named by 100,000 cells (times ``scale``):
    a few hundred kB on disk, 6 GB once each cell holds its text (its shared strings kept at
    ``strings_part``)."""
    rows = max(2, int(100_000 * scale))
    header = b'<row><c t="inlineStr"><is><t>x</t></is></c></row>'
    return "shared.xlsx", _xlsx(header + b'<row><c t="s"><v>0</v></c></row>' * (rows - 1),
                                ["y" * 60_000], strings_part)


def csv_mixed(scale: float = 1.0) -> tuple[str, bytes]:
    """10 MB of two-letter text, then 30 MB (times ``scale``) of three-digit numbers in the
    same 10 columns: 40 MB on disk, which an estimate from the first rows (text: 3.3 times its
    size) takes for about 130 MB; joined, the columns hold a Python object a value, about
    0.5 GB."""
    cols = 10
    text = "ab," * (cols - 1) + "ab\n"
    numbers = "123," * (cols - 1) + "123\n"
    head = ",".join(f"c{i}" for i in range(cols)) + "\n"
    body = text * max(1, int(10 * MB * scale) // len(text)) \
        + numbers * max(1, int(30 * MB * scale) // len(numbers))
    return "mixed.csv", (head + body).encode()


def csv_long_cell(scale: float = 1.0) -> tuple[str, bytes]:
    """A cell of 10 MB (times ``scale``): past the one-cell limit."""
    return "long_cell.csv", ("a,b\n1," + "z" * max(70_000, int(10 * MB * scale))
                             + "\n2,w\n").encode()


def zsav_wide(scale: float = 1.0) -> tuple[str, bytes]:
    """A compressed SPSS file of 300,000 rows (times ``scale``) of ten 255-character strings:
    a few MB on disk, 790 MB decoded."""
    import pyreadstat

    rows = max(1, int(300_000 * scale))
    df = pd.DataFrame({f"s{i}": ["q" * 255] * rows for i in range(10)})
    with tempfile.TemporaryDirectory() as folder:  # pyreadstat writes to a path only
        target = Path(folder) / "wide.zsav"
        pyreadstat.write_sav(df, str(target), compress=True)
        return "wide.zsav", target.read_bytes()


#: Every maker of the family.
BOMBS: dict[str, Callable[[float], tuple[str, bytes]]] = {
    "parquet dictionary": parquet_dictionary, "parquet repeated": parquet_repeated,
    "parquet many rows": parquet_many_rows, "parquet fixed binary": parquet_fixed_binary,
    "parquet string view": lambda scale=1.0: parquet_view("string", scale),
    "parquet binary view": lambda scale=1.0: parquet_view("binary", scale),
    "stata strl": stata_strl, "xlsx numbers": xlsx_numbers,
    "xlsx shared strings": xlsx_shared,
    "xlsx shared strings elsewhere": lambda scale=1.0: xlsx_shared(scale, "xl/elsewhere/s.xml"),
    "csv mixed types": csv_mixed,
    "csv long cell": csv_long_cell, "zsav wide": zsav_wide}

#: Scales at which each file decodes to 2 to 10 times a 40 MB allowance (or holds a cell past
#: the limit): the tests' size.
SCALES = {"parquet dictionary": 0.02, "parquet repeated": 0.1, "parquet many rows": 0.1,
          "parquet fixed binary": 0.3, "parquet string view": 0.1,
          "parquet binary view": 0.3, "stata strl": 0.05,
          "xlsx numbers": 0.1, "xlsx shared strings": 0.1,
          "xlsx shared strings elsewhere": 0.1, "csv mixed types": 0.6,
          "csv long cell": 0.1, "zsav wide": 0.3}


# -- text a spreadsheet would run ----------------------------------------------------------------

#: A formula in a header and in a category, a control character, and text that begins like a
#: formula in a column of mixed types: exports write it without a live formula
#: (tests/test_io.py, and the Export page's notes in tests/test_app_pages.py)
HOSTILE = pd.DataFrame({"=1+1": [1, 2, 3],
                        "label": pd.Categorical(["=HYPERLINK(\"x\")", "a", None]),
                        "note": ["a\x01b", "@SUM(A1)", None],
                        "mixed": pd.Series([-1, "-x", None], dtype=object)})
