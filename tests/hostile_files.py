"""Files built to take memory: small on disk, huge once decoded (the "bomb family").

Each maker returns ``(file name, bytes)``; ``scale`` 1 gives the sizes of the probe that took
a server with a 2 GB budget to 23 GB (:data:`BOMBS`), or of issue 51's files that got past the
formats' bounds (:data:`ROUND4`); ``bench/bench_bombs.py`` uploads them to a real server, and
the tests use small scales with a small allowance. At the end, :data:`HOSTILE`:
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


# -- round four: the files that got past the formats' own bounds (issue 51) -------------------

def stata_strl_named(scale: float = 1.0) -> tuple[str, bytes]:
    """One long string (strL) of 4 MB (times ``scale``, at least 70,000 characters: past the
    one-cell limit), stored once and named by 600 rows: 4 MB on disk, 2.4 GB once each row
    holds it; the reader measured chunks of 2,000 rows only after decoding them.

    pandas writes the file with a 10-character strL (its writer copies the value for every
    row); the one stored value is then lengthened, and the file's map of its sections (the
    value labels and the end come after the strLs) moved by as much."""
    size = max(70_000, int(4 * MB * scale))
    df = pd.DataFrame({"note": ["s" * 10] * 600, "k": np.arange(600, dtype=np.int32)})
    buf = io.BytesIO()
    df.to_stata(buf, version=117, convert_strl=["note"], write_index=False)
    raw = buf.getvalue()
    at = raw.index(b"GSO")  # "GSO", v and o (4 bytes each in format 117), type, length
    length = at + 3 + 4 + 4 + 1
    end = length + 4 + int.from_bytes(raw[length:length + 4], "little")
    raw = (raw[:length] + (size + 1).to_bytes(4, "little") + b"s" * size + b"\0" + raw[end:])
    grown = size + 1 - (end - length - 4)
    start = raw.index(b"<map>") + 5  # 14 offsets of 8 bytes: 11 to 13 follow the strLs
    offsets = [int.from_bytes(raw[start + 8 * i:start + 8 * i + 8], "little") for i in range(14)]
    offsets[11:] = [o + grown for o in offsets[11:]]
    return "strl_named.dta", (raw[:start] + b"".join(o.to_bytes(8, "little") for o in offsets)
                              + raw[start + 112:])


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """A varint of Thrift's compact protocol at ``at``: its value and the position after it."""
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def _to_varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _skip(data: bytes, at: int, kind: int) -> int:
    """The position after a value of the compact type ``kind`` at ``at``."""
    if kind in (1, 2):  # true, false: in the field header
        return at
    if kind in (3, 7):  # byte, double
        return at + (1 if kind == 3 else 8)
    if kind in (4, 5, 6):  # i16, i32, i64
        return _varint(data, at)[1]
    if kind == 8:  # binary
        size, at = _varint(data, at)
        return at + size
    if kind in (9, 10):  # list, set
        size, element = data[at] >> 4, data[at] & 0x0F
        at += 1
        if size == 15:
            size, at = _varint(data, at)
        for _ in range(size):
            at = at + 1 if element in (1, 2) else _skip(data, at, element)
        return at
    if kind == 11:  # map
        size, at = _varint(data, at)
        if size:
            types, at = data[at], at + 1
            for _ in range(size):
                at = _skip(data, _skip(data, at, types >> 4), types & 0x0F)
        return at
    return _rewrite(data, at, bytearray(), (), {})  # struct


def _rewrite(data: bytes, at: int, out: bytearray, path: tuple, values: dict) -> int:
    """Copy the Thrift struct at ``at`` to ``out``, its i64 fields whose path of field ids
    (``"*"`` for a list's items) is a key of ``values`` set to that value; the position after
    the struct."""
    last = 0
    while True:
        start, header = at, data[at]
        at += 1
        if header == 0:
            out.append(0)
            return at
        kind, delta = header & 0x0F, header >> 4
        if delta:
            field = last + delta
        else:
            zigzag, at = _varint(data, at)
            field = (zigzag >> 1) ^ -(zigzag & 1)
        last, here = field, (*path, field)
        if kind == 12:  # a struct
            out += data[start:at]
            at = _rewrite(data, at, out, here, values)
        elif kind == 9 and data[at] & 0x0F == 12:  # a list of structs
            size = data[at] >> 4
            at += 1
            if size == 15:
                size, at = _varint(data, at)
            out += data[start:at]
            for _ in range(size):
                at = _rewrite(data, at, out, (*here, "*"), values)
        else:
            end = _skip(data, at, kind)
            if kind == 6 and here in values:
                out += data[start:at] + _to_varint((values[here] << 1) ^ (values[here] >> 63))
            else:
                out += data[start:end]
            at = end


def parquet_footer_lie(scale: float = 1.0) -> tuple[str, bytes]:
    """Distinct text values of 60,000 characters (under the one-cell limit) in 50,000 rows
    (times ``scale``; row groups of 500), stored plainly and compressed, whose footer says
    every column chunk and row group takes 1 byte uncompressed (the bound the reader reads
    first, before it reads the text as a dictionary, here as large as the column): a few
    hundred kB on disk, 3 GB decoded."""
    pad = "abcdefgh" * 7_499
    buf = io.BytesIO()
    schema = pa.schema([("x", pa.string())])
    with pq.ParquetWriter(buf, schema, compression="zstd", use_dictionary=False) as writer:
        for group in range(max(1, int(100 * scale))):
            writer.write_table(pa.table({"x": [f"{500 * group + i:08d}{pad}"
                                               for i in range(500)]}, schema=schema))
    raw = buf.getvalue()
    size = int.from_bytes(raw[-8:-4], "little")
    footer = bytearray()
    # FileMetaData.row_groups[*] (4): RowGroup.total_byte_size (2), and its columns[*] (1):
    # ColumnChunk.meta_data (3): ColumnMetaData.total_uncompressed_size (6)
    _rewrite(raw[-8 - size:-8], 0, footer, (), {(4, "*", 2): 1, (4, "*", 1, "*", 3, 6): 1})
    return "footer_lie.parquet", (raw[:-8 - size] + bytes(footer)
                                  + len(footer).to_bytes(4, "little") + b"PAR1")


def xlsx_far_cell(scale: float = 1.0) -> tuple[str, bytes]:
    """A cell at XFD1 (the sheet's last column, 16,384) and 100,000 rows (times ``scale``) of
    one number in column A: about 0.5 MB on disk; a reader that fills every row out to the
    widest makes 1.6 billion cells."""
    rows = max(2, int(100_000 * scale))
    header = (b'<row r="1"><c r="A1" t="inlineStr"><is><t>a</t></is></c>'
              b'<c r="XFD1" t="inlineStr"><is><t>far</t></is></c></row>')
    body = b"".join(b'<row r="%d"><c r="A%d"><v>1</v></c></row>' % (i, i)
                    for i in range(2, rows + 1))
    return "far_cell.xlsx", _xlsx(header + body)


def zsav_unknown_cases(scale: float = 1.0) -> tuple[str, bytes]:
    """:func:`zsav_wide`'s file whose header says −1 cases (SPSS's "not known"), so that rows
    × widths bound nothing: a few MB on disk, 790 MB (times ``scale``) decoded."""
    _, raw = zsav_wide(scale)
    # the file header record: "$FL3", product name (60), layout code, nominal case size,
    # compression, weight index (4 bytes each), then the number of cases at byte 80
    return "unknown_cases.zsav", raw[:80] + (-1).to_bytes(4, "little", signed=True) + raw[84:]


def csv_wide(scale: float = 1.0, columns: int = 40_000) -> tuple[str, bytes]:
    """2,000 rows (times ``scale``) of ``columns`` one-digit numbers: 160 MB on disk at full
    size, every line of it inside the 2,000 lines the estimate parsed whole."""
    rows = max(2, int(2_000 * scale))
    header = ",".join(f"c{i}" for i in range(columns)) + "\n"
    line = ",".join("7" for _ in range(columns)) + "\n"
    return "wide.csv", (header + line * rows).encode()


def csv_padded(scale: float = 1.0) -> tuple[str, bytes]:
    """50 rows of three columns, then blank lines up to 190 MB (times ``scale``): 50 records,
    but its bytes are all kept while it is held."""
    head = b"zipcode,sex,income\n" + b"".join(b"%d,F,%d\n" % (1000 + i, 10 * i)
                                             for i in range(50))
    return "padded.csv", head + b"\n" * max(0, int(190 * MB * scale) - len(head))


def parquet_int_columns(scale: float = 1.0) -> tuple[str, bytes]:
    """5 million rows (times ``scale``) of 8 columns of small whole numbers, in long runs:
    about 180 kB on disk, 320 MB as int64; its size admits it as a 2 MB table."""
    rows = max(1, int(5_000_000 * scale))
    values = pa.array(np.repeat(np.arange(100, dtype=np.int64), -(-rows // 100))[:rows])
    return "int_columns.parquet", _parquet(pa.table({f"c{i}": values for i in range(8)}))


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

#: The files of round four, which the format bounds above did not stop (their reading is
#: bounded by the capped child process of ``sdc_core.capped``; tests/test_bombs_capped.py).
ROUND4: dict[str, Callable[[float], tuple[str, bytes]]] = {
    "stata strl named": stata_strl_named, "parquet footer lie": parquet_footer_lie,
    "xlsx far cell": xlsx_far_cell, "zsav unknown cases": zsav_unknown_cases,
    "csv wide": csv_wide, "csv padded": csv_padded, "parquet int columns": parquet_int_columns}

#: What each file decodes to at scale 1, as pandas holds it (the characters of text and 8 bytes
#: a cell, a Python object 57 bytes more; the far cell's rows as its reader fills them out to
#: the widest): from each maker's own figures, for ``bench/bench_bombs.py``.
DECODED: dict[str, int] = {
    "parquet dictionary": 200 * (50 * MB + 8) + 200 * 8,
    "parquet repeated": 3000 * (MB + 8),
    "parquet many rows": 300_000_000 * 4 * 8,
    "parquet fixed binary": 3000 * (MB + 57),
    "parquet string view": 20 * 2_500 * (60_000 + 8),
    "parquet binary view": 20 * 2_500 * (60_000 + 57),
    "stata strl": 100_000 * (60_000 + 8 + 4),
    "xlsx numbers": 1_000_000 * 20 * 8,
    "xlsx shared strings": 100_000 * (60_000 + 8),
    "xlsx shared strings elsewhere": 100_000 * (60_000 + 8),
    "csv mixed types": (10 * MB // 30 + 30 * MB // 40) * 10 * (8 + 57) + 10 * MB // 30 * 10 * 2,
    "csv long cell": 10 * MB,
    "zsav wide": 300_000 * 10 * (255 + 8),
    "stata strl named": 600 * (4 * MB + 8 + 4),
    "parquet footer lie": 50_000 * (60_000 + 8),
    "xlsx far cell": 100_000 * 16_384 * 8,
    "zsav unknown cases": 300_000 * 10 * (255 + 8),
    "csv wide": 2_000 * 40_000 * 8,
    "csv padded": 50 * 3 * 8,
    "parquet int columns": 5_000_000 * 8 * 8}

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
