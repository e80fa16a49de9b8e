"""What a file decodes to: its table's memory and its longest cell, bounded before the table is
materialised.

A file's size says little about the table it holds: a Parquet dictionary of two 50 MB strings
over 200 rows is 4.5 KB on disk and 10 GB in memory; an ``.xlsx`` is a zip whose sheets may
inflate a thousandfold. :func:`check_file` bounds the table from what the format declares or
can be scanned cheaply, and refuses a file whose table would take more than ``max_table``
bytes, or that holds a cell longer than ``max_cell`` characters, before it is read:

- **Parquet**: the uncompressed sizes of the column chunks (metadata) bound what is
  decompressed; each text column (string, binary, their large and view kinds) is then read as a
  dictionary (its distinct values once, with indices), which gives the exact length of every
  cell without decoding them: ``Σ_rows (len + 8)`` bytes for text (pandas' Arrow-backed
  strings: the characters and an offset); other columns by their type, before anything is read
  (:func:`_row_width`: 8 bytes a row for numbers and dates, the width and a Python object for
  ``fixed_size_binary``, whose repeated values a file stores in a few bytes); a column of a
  type whose size cannot be known so is refused.
- **Excel**: the uncompressed sizes of its parts (zip directory), the shared strings found by
  their declared content type wherever they are kept; when they do not settle it, the cells
  are streamed once (openpyxl's read-only mode, a row at a time) and counted,
  ``Σ_cells (len + 8)``, stopping at ``max_table``.
- **SPSS / Stata**: rows × the declared storage width of each variable (their header); a
  Stata file with long strings (strL, stored once and named by any number of rows) is read a
  chunk of rows at a time and measured as it comes (:func:`read_stata_bounded`).
- **Delimited text** is read in chunks of about :data:`CSV_CHUNK` bytes, measured as they
  come (:func:`read_csv_bounded`), so that reading stops at the allowance instead of trusting an
  estimate from the first rows.

:func:`check_table` then bounds the table actually read (its deep memory, and the longest
text in any cell or column name) in every format.
"""

from __future__ import annotations

import io
import itertools
import os
import re
import warnings
import zipfile
from typing import TYPE_CHECKING

import pandas as pd

from sdc_core.data.columns import nested_error
from sdc_core.errors import SdcInputError

if TYPE_CHECKING:  # pyarrow is imported where it is used
    import pyarrow as pa

BUDGET_ENV = "SDC_MEMORY_BUDGET"
CELL_ENV = "SDC_MAX_CELL"
#: Default bound on a single cell's (or column name's) length, in characters.
MAX_CELL = 65_536
#: Bytes a text cell takes in memory besides its characters (an Arrow string's offset), and
#: the width taken for a value of unknown size.
CELL = 8
#: Bytes a Python object (and the pointer to it) takes besides its text: a value of a column
#: that mixes numbers and text.
PY_OBJECT = 57
#: How much more memory openpyxl and pandas take while reading a sheet than its XML's size
#: (peak resident memory over the sheet's and shared strings' XML, measured on sheets of
#: 100,000 rows of numbers, whole numbers and text: 2.0 to 2.4).
XLSX_FACTOR = 4.0
#: Bytes of delimited text read (and measured) at a time.
CSV_CHUNK = 8 * 2**20
_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


def parse_size(text: str) -> int:
    """Bytes from ``8GB``, ``512 MB``, ``1.5GiB`` or a plain number of bytes."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", str(text))
    if not m or m.group(2).upper() not in _UNITS or not float(m.group(1)) > 0:
        raise ValueError(f"{BUDGET_ENV}: not a size: {text!r} (say 8GB or 512MB)")
    return int(float(m.group(1)) * _UNITS[m.group(2).upper()])


def parse_cell(text: str) -> int:
    """A positive number of characters."""
    if not re.fullmatch(r"\s*[0-9]+\s*", text) or int(text) < 1:
        raise ValueError(f"{CELL_ENV}: not a positive number of characters: {text!r}")
    return int(text)


def machine_memory() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def budget() -> int:
    """The memory budget in bytes, of the server and of a command-line run
    (``SDC_MEMORY_BUDGET``, else half the machine's memory)."""
    try:
        return parse_size(os.environ[BUDGET_ENV])
    except (KeyError, ValueError):
        return machine_memory() // 2


def max_cell() -> int:
    """The most characters one cell may hold (``SDC_MAX_CELL``, default :data:`MAX_CELL`)."""
    try:
        return parse_cell(os.environ[CELL_ENV])
    except (KeyError, ValueError):
        return MAX_CELL


def size_text(n: float) -> str:
    """Bytes for people: 1.2 GB, 340 MB, 12 kB."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{int(n):,} bytes"


def memory_bytes(df: pd.DataFrame) -> int:
    """What a table takes in memory (text counted by its characters)."""
    return int(df.memory_usage(index=True, deep=True).sum())


def _too_large(need: float, max_table: int) -> SdcInputError:
    return SdcInputError(f"the table would take about {size_text(need)} in memory, more than "
                         f"the {size_text(max_table)} this session may use; try a smaller file "
                         "(or a sample of it)")


def _too_long(length: int, max_cell: int, where: str) -> SdcInputError:
    return SdcInputError(f"{where} holds a value of {length:,} characters, more than the limit "
                         f"of {max_cell:,} for one cell")


def check_file(raw: bytes, ext: str, max_table: int | None, max_cell: int = MAX_CELL) -> None:
    """Refuse (:class:`SdcInputError`) a file of extension ``ext`` whose table would take more
    than ``max_table`` bytes (None: no bound) or that holds a cell longer than ``max_cell``,
    as far as the format tells before the table is read (see the module's text)."""
    if ext in (".parquet", ".pq"):
        _check_parquet(raw, max_table, max_cell)
    elif max_table is None:
        return
    elif ext in (".xlsx", ".xlsm"):
        _check_xlsx(raw, max_table)
    elif ext in (".sav", ".zsav", ".dta"):
        _check_fixed_width(raw, ext, max_table)


def check_table(df: pd.DataFrame, max_table: int | None, max_cell: int = MAX_CELL) -> None:
    """Refuse a table read that takes more than ``max_table`` bytes or holds a text value or a
    column name longer than ``max_cell`` characters."""
    longest = max((len(str(c)) for c in df.columns), default=0)
    if longest > max_cell:
        raise _too_long(longest, max_cell, "a column name")
    for c in df.columns:
        values = df[c].cat.categories.to_series() \
            if isinstance(df[c].dtype, pd.CategoricalDtype) else df[c]
        if values.dtype == object:  # text only if it holds some (not True/False or numbers)
            if pd.api.types.infer_dtype(values, skipna=True) not in (
                    "string", "mixed", "mixed-integer", "empty"):
                continue
        elif not pd.api.types.is_string_dtype(values):
            continue
        top = values.str.len().max()  # NaN for values that are not text
        if pd.notna(top) and top > max_cell:
            raise _too_long(int(top), max_cell, f"column '{c}'")
    if max_table is not None and (need := memory_bytes(df)) > max_table:
        raise _too_large(need, max_table)


def _check_parquet(raw: bytes, max_table: int | None, max_cell: int) -> None:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(pa.BufferReader(raw))
    except Exception:  # the reader says what is wrong when the table is read
        return
    meta, schema = pf.metadata, pf.schema_arrow
    nested = [f.name for f in schema if pa.types.is_nested(f.type)]
    if nested:
        raise nested_error(nested)
    if max_table is not None:
        inflated = sum(meta.row_group(g).column(j).total_uncompressed_size
                       for g in range(meta.num_row_groups) for j in range(meta.num_columns))
        if inflated > max_table:
            raise _too_large(inflated, max_table)
    text = [f.name for f in schema if _is_text(f.type)]
    widths = {f.name: _row_width(f.type) for f in schema if f.name not in text}
    unknown = [f"{name} ({schema.field(name).type})" for name, w in widths.items() if w is None]
    if unknown:
        raise SdcInputError(f"column(s) {', '.join(unknown[:5])} hold a kind of value whose "
                            "size cannot be known before it is read; save them as numbers, "
                            "text or dates")
    need = meta.num_rows * sum(w or 0 for w in widths.values())
    if max_table is not None and need > max_table:
        raise _too_large(need, max_table)
    if not text:
        return
    pf = pq.ParquetFile(pa.BufferReader(raw), read_dictionary=text)
    for name in text:  # a column at a time: its distinct values once, and their indices
        try:
            column = pf.read(columns=[name]).column(0)
        except Exception:  # the reader says what is wrong
            return
        for chunk in column.chunks:
            if not pa.types.is_dictionary(chunk.type):
                chunk = chunk.dictionary_encode()
            values = chunk.dictionary
            if pa.types.is_dictionary(values.type):  # a dictionary read as one
                values = values.dictionary_decode()
            length = pc.utf8_length if _is_text(values.type, strings_only=True) \
                else pc.binary_length
            per_row = length(values).take(chunk.indices)
            top = pc.max(per_row).as_py()
            if top is not None and top > max_cell:
                raise _too_long(top, max_cell, f"column '{name}'")
            need += (pc.sum(per_row).as_py() or 0) + CELL * len(chunk)
        if max_table is not None and need > max_table:
            raise _too_large(need, max_table)


def _is_text(kind: pa.DataType, strings_only: bool = False) -> bool:
    """Whether an Arrow type holds text (or bytes, unless ``strings_only``) of varying length,
    plainly, as a view or as a dictionary (a pandas category)."""
    import pyarrow as pa

    if pa.types.is_dictionary(kind):
        return _is_text(kind.value_type, strings_only)
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) \
            or pa.types.is_string_view(kind):
        return True
    return not strings_only and (pa.types.is_binary(kind) or pa.types.is_large_binary(kind)
                                 or pa.types.is_binary_view(kind))


def _row_width(kind: pa.DataType) -> int | None:
    """The bytes a value of an Arrow type other than text takes once read, None when it cannot
    be known from the type: :data:`CELL` for numbers, True/False, dates and times (and the
    codes of a category of them); for ``fixed_size_binary[w]`` its width w and a Python object
    (pandas reads bytes as Python objects); a decimal a Python object."""
    import pyarrow as pa

    t = pa.types
    if t.is_dictionary(kind):
        return CELL if _row_width(kind.value_type) is not None else None
    if (t.is_integer(kind) or t.is_floating(kind) or t.is_boolean(kind) or t.is_null(kind)
            or t.is_temporal(kind)):
        return CELL
    if t.is_fixed_size_binary(kind):
        return kind.byte_width + PY_OBJECT
    if t.is_decimal(kind):
        return 2 * PY_OBJECT
    return None


#: A part's declaration in an .xlsx's ``[Content_Types].xml``
_PART = re.compile(rb'PartName="/?([^"]+)"\s+ContentType="([^"]+)"')


def _check_xlsx(raw: bytes, max_table: int) -> None:
    try:
        book = zipfile.ZipFile(io.BytesIO(raw))
        sizes = {m.filename: m.file_size for m in book.infolist()}
        types = book.read("[Content_Types].xml") if "[Content_Types].xml" in sizes else b""
        strings = {name.decode() for name, kind in _PART.findall(types)
                   if b"sharedStrings" in kind} | {"xl/sharedStrings.xml"}
        shared = sum(sizes.get(name, 0) for name in strings)
        total = sum(sizes.values())  # every part may be a sheet, wherever it is kept
        if XLSX_FACTOR * total > max_table:
            longest = 0  # refused below, unread
        else:  # the longest shared string is at most its XML's length
            longest = max((len(item) for name in strings if name in sizes
                           for item in book.read(name).split(b"</si>")), default=0)
    except (zipfile.BadZipFile, OSError, ValueError, KeyError):
        return  # the reader says what is wrong
    if XLSX_FACTOR * total > max_table:
        raise _too_large(XLSX_FACTOR * total, max_table)
    # a shared string is stored once and may be named by every cell: at worst every
    # reference (at least 21 bytes of XML, <c t="s"><v>0</v></c>) names the longest
    sheets = total - shared
    if XLSX_FACTOR * sheets + sheets // 21 * (longest + CELL) > max_table:
        _stream_xlsx(raw, max_table)


def _stream_xlsx(raw: bytes, max_table: int) -> None:
    """Count the cells of every sheet a row at a time, ``Σ (len + 8)`` bytes, and refuse as
    soon as they pass ``max_table``."""
    import openpyxl

    try:
        book = openpyxl.load_workbook(io.BytesIO(raw), read_only=True, data_only=True)
    except Exception:  # the reader says what is wrong
        return
    try:
        need = 0
        for sheet in book.worksheets[:1]:  # pandas reads the first sheet
            for row in sheet.iter_rows(values_only=True):
                need += sum(len(v) + CELL if isinstance(v, str) else CELL for v in row)
                if need > max_table:
                    raise _too_large(need, max_table)
    finally:
        book.close()


def _check_fixed_width(raw: bytes, ext: str, max_table: int) -> None:
    import pyreadstat

    read = pyreadstat.read_dta if ext == ".dta" else pyreadstat.read_sav
    try:
        _, meta = read(io.BytesIO(raw), metadataonly=True)
    except Exception:  # the reader says what is wrong
        return
    rows = meta.number_rows or 0
    widths = meta.variable_storage_width or {}
    need = rows * sum(CELL + (widths.get(name) or 0) for name in meta.column_names)
    if need > max_table:
        raise _too_large(need, max_table)


#: Rows of a Stata file with long strings (strL) read at a time, at most; fewer when the room
#: is small (:func:`stata_chunk`)
STATA_CHUNK = 2_000


def read_stata_bounded(raw: bytes, max_table: int | None, max_cell: int = MAX_CELL
                       ) -> pd.DataFrame:
    """``pd.read_stata`` of ``raw``. A file with long strings (strL: stored once, named by any
    number of rows, so the header cannot bound them; 4.2 MB held 5.3 GB) is read
    :func:`stata_chunk` rows at a time, each chunk measured as it comes (its memory, and its
    longest text against ``max_cell``): past ``max_table`` bytes the reading stops with a
    refusal. Other files are bounded by their header (:func:`check_file`) and read whole."""
    if max_table is None or not _has_strl(raw):
        return pd.read_stata(io.BytesIO(raw))
    chunks, need = [], 0
    with pd.read_stata(io.BytesIO(raw), chunksize=stata_chunk(max_table, max_cell)) as reader:
        for chunk in reader:
            check_table(chunk, None, max_cell)
            need += memory_bytes(chunk)
            if need > max_table:
                raise _too_large(need, max_table)
            chunks.append(chunk)
    return pd.concat(chunks, ignore_index=True) if chunks else pd.read_stata(io.BytesIO(raw))


def stata_chunk(max_table: int, max_cell: int) -> int:
    """Rows of a Stata file with long strings read at a time: a chunk holds at most
    rows × ``max_cell`` characters of 4 bytes each in a column, kept at a quarter of
    ``max_table`` (a 40 MB room and 65,536-character cells: 38 rows, not 2,000 rows of 120 MB),
    between 1 and :data:`STATA_CHUNK`."""
    return max(1, min(STATA_CHUNK, max_table // (16 * max(max_cell, 1))))


def _has_strl(raw: bytes) -> bool:
    """Whether a Stata file has string variables of unbounded width (strL: storage width 0 in
    its header)."""
    import pyreadstat

    try:
        _, meta = pyreadstat.read_dta(io.BytesIO(raw), metadataonly=True)
    except Exception:  # the reader says what is wrong
        return False
    widths = meta.variable_storage_width or {}
    return any(meta.readstat_variable_types.get(name) == "string" and not widths.get(name)
               for name in meta.column_names)


def read_csv_bounded(data: bytes, sep: str, max_table: int | None) -> pd.DataFrame:
    """``pd.read_csv`` of ``data`` (UTF-8), read in chunks of about :data:`CSV_CHUNK` bytes whose
    memory is added up as they come: past ``max_table`` bytes the reading stops with a refusal.
    The chunks are joined as pandas joins its own: a column that is numbers in one chunk and
    text in another holds Python objects, :data:`PY_OBJECT` bytes a value besides its text,
    and is counted so from the chunk where it becomes mixed."""
    lines = [data.count(b"\n", at, at + CSV_CHUNK) for at in range(0, len(data), CSV_CHUNK)]
    chunks: list[pd.DataFrame] = []
    typed: dict[str, int] = {}  # a column's bytes as its chunks hold it
    boxed: dict[str, int] = {}  # its bytes if every value becomes a Python object
    kinds: dict[str, set[str]] = {}
    with pd.read_csv(io.BytesIO(data), sep=sep, encoding="utf-8", iterator=True) as reader, \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", pd.errors.DtypeWarning)  # mixed columns: said above
        for rows in itertools.chain(lines, itertools.repeat(1 << 20)):  # then what is left
            try:
                chunk = reader.get_chunk(max(rows, 1))
            except StopIteration:
                break
            chunks.append(chunk)
            memory = chunk.memory_usage(index=False, deep=True)
            for c in chunk.columns:
                s = chunk[c]
                kind = "object" if s.dtype == object else \
                    "text" if pd.api.types.is_string_dtype(s) else "number"
                kinds.setdefault(c, set()).add(kind)
                typed[c] = typed.get(c, 0) + int(memory[c])
                chars = int(memory[c]) - CELL * len(s) if kind == "text" else 0
                boxed[c] = boxed.get(c, 0) + (int(memory[c]) if kind == "object"
                                              else PY_OBJECT * len(s) + chars)
            need = sum(boxed[c] if "object" in kinds[c] or len(kinds[c]) > 1 else typed[c]
                       for c in typed)
            if max_table is not None and need > max_table:
                raise _too_large(need, max_table)
    if len(chunks) <= 1:
        return chunks[0] if chunks else pd.read_csv(io.BytesIO(data), sep=sep, encoding="utf-8")
    return pd.concat(chunks, ignore_index=True)
