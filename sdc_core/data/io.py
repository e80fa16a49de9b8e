"""Reading tables and inferring what kind of data each column holds.

Supported: CSV/TSV/TXT (delimiter sniffed among ``,`` ``;`` tab ``|``; UTF-8 with or without a
byte-order mark, Latin-1 as the fallback), Excel ``.xlsx``, Parquet, Stata ``.dta`` and SPSS
``.sav``/``.zsav``. A source is a path or the raw bytes of an upload (then ``name`` gives the
file name, whose extension selects the reader); bytes are read from memory, never written to
disk. Every failure raises :class:`~sdc_core.errors.SdcInputError` with a message that names the
file and the problem.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
import zipfile
from collections.abc import Callable
from enum import Enum
from pathlib import Path

import numpy as np
import pandas as pd

from sdc_core.data.columns import check_flat, for_parquet, read_dates, storage
from sdc_core.data.decoded import (
    MAX_CELL,
    check_file,
    check_table,
    read_csv_bounded,
    read_stata_bounded,
)
from sdc_core.errors import SdcInputError

#: Default bound on the size of a file to read (bytes).
MAX_BYTES = 200 * 1024 * 1024

EXAMPLE_PATH = Path(__file__).resolve().parent / "actg175.csv"
EXAMPLE_NAME = "ACTG 175 (AIDS clinical trial, 2139 patients)"

_DELIMITED = {".csv", ".tsv", ".txt", ".tab"}
_EXCEL = {".xlsx", ".xlsm"}
_PARQUET = {".parquet", ".pq"}
_STATA = {".dta"}
_SPSS = {".sav", ".zsav"}
SUPPORTED_EXTENSIONS = sorted(_DELIMITED | _EXCEL | _PARQUET | _STATA | _SPSS)
_DELIMITERS = ",;\t|"


class Kind(str, Enum):  # noqa: UP042 (StrEnum changes a kind's str())
    """What a column holds, as far as disclosure control is concerned.

    A ``str`` enumeration: ``Kind.NUMERIC`` (``"numeric"``), ``Kind.CATEGORICAL``
    (``"categorical"``), ``Kind.DATE`` (``"date"``) and ``Kind.IDENTIFIER`` (``"identifier"``);
    :func:`infer_kinds` gives one per column.

    Parameters
    ----------
    value : str
        One of ``"numeric"``, ``"categorical"``, ``"date"``, ``"identifier"``.

    Examples
    --------
    >>> from sdc_core import Kind
    >>> Kind("numeric") is Kind.NUMERIC, Kind.IDENTIFIER.value
    (True, 'identifier')
    >>> [kind.value for kind in Kind]
    ['numeric', 'categorical', 'date', 'identifier']
    """

    NUMERIC = "numeric"
    CATEGORICAL = "categorical"
    DATE = "date"
    IDENTIFIER = "identifier"


def load_example() -> pd.DataFrame:
    """The built-in example: the ACTG 175 trial data (see ``sdc_core/data/README.md``).

    It ships inside the package, so it loads wherever ``sdc_core`` is installed; its roles are
    those of ``example("actg175")``.

    Returns
    -------
    pandas.DataFrame
        2139 patients, 27 columns.

    Examples
    --------
    >>> from sdc_core import load_example
    >>> df = load_example()
    >>> df.shape
    (2139, 27)
    >>> list(df.columns[:4])
    ['pidnum', 'age', 'wtkg', 'hemo']
    """
    return read_table(EXAMPLE_PATH)


def read_table(source: str | Path | bytes, name: str | None = None,
               max_bytes: int = MAX_BYTES, max_table: int | None = None,
               max_cell: int = MAX_CELL) -> pd.DataFrame:
    r"""Read a table from a path or from the bytes of an uploaded file.

    CSV/TSV (delimiter and encoding detected), Excel (``.xlsx``), Parquet, Stata and SPSS; the
    extension of the path (or of ``name``) selects the reader.

    Parameters
    ----------
    source : path or bytes
        The file, or its content.
    name : str, optional
        The file name (needed with bytes: its extension selects the reader).
    max_bytes : int
        Larger files are refused.
    max_table : int, optional
        Bytes the table may take in memory: a file that decodes to more is refused, before
        its table is materialised where the format allows (:mod:`sdc_core.data.decoded`).
    max_cell : int
        Characters a single cell or column name may hold.

    Returns
    -------
    pandas.DataFrame
        The table, column names stripped of surrounding blanks.

    Raises
    ------
    SdcInputError
        When the file does not exist, is empty or too large, has an unsupported extension,
        cannot be read in its format, has no data rows, duplicate or nested columns, or cells
        over the limits. The message starts with the file name.

    Examples
    --------
    >>> from sdc_core import read_table
    >>> read_table(b"age;sex\n34;f\n51;m\n", name="tiny.csv")
       age sex
    0   34   f
    1   51   m
    >>> read_table(b"age,sex\n34,f\n", name="tiny.xls")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sdc_core.errors.SdcInputError: tiny.xls: the legacy Excel .xls format is not supported; ...
    """
    if isinstance(source, (bytes, bytearray)):
        label = name or "uploaded file"
        raw = bytes(source)
    else:
        path = Path(source)
        label = name or str(path)
        if not path.is_file():
            raise SdcInputError(f"{label}: no such file")
        if path.stat().st_size > max_bytes:
            raise SdcInputError(f"{label}: file is larger than the limit of "
                                f"{max_bytes / 2**20:.0f} MB")
        raw = path.read_bytes()
    if len(raw) > max_bytes:
        raise SdcInputError(f"{label}: file is larger than the limit of "
                            f"{max_bytes / 2**20:.0f} MB")
    if not raw.strip():
        raise SdcInputError(f"{label}: file is empty")
    ext = Path(label).suffix.lower()
    if ext == ".xls":
        raise SdcInputError(f"{label}: the legacy Excel .xls format is not supported; "
                            "save it as .xlsx or CSV")
    if ext not in SUPPORTED_EXTENSIONS:
        raise SdcInputError(f"{label}: unsupported file type '{ext or '(none)'}'; expected one "
                            f"of {', '.join(SUPPORTED_EXTENSIONS)}")
    try:
        check_file(raw, ext, max_table, max_cell)
        if ext in _DELIMITED:
            df = _read_delimited(raw, max_table)
        elif ext in _EXCEL:
            df = pd.read_excel(io.BytesIO(raw), engine="openpyxl")
        elif ext in _PARQUET:
            df = pd.read_parquet(io.BytesIO(raw))
        elif ext in _STATA:
            df = read_stata_bounded(raw, max_table, max_cell)
        else:
            import pyreadstat
            df, _meta = pyreadstat.read_sav(io.BytesIO(raw))
    except SdcInputError as err:
        raise SdcInputError(f"{label}: {err}") from None
    except (ValueError, TypeError, OSError, KeyError, IndexError, UnicodeError,
            zipfile.BadZipFile, pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise SdcInputError(f"{label}: cannot be read as {ext[1:].upper()} "
                            f"({_first_line(err)})") from None
    except Exception as err:  # readers of binary formats raise their own exception types
        raise SdcInputError(f"{label}: cannot be read as {ext[1:].upper()} "
                            f"({type(err).__name__}: {_first_line(err)})") from None
    if df.shape[1] == 0 or df.shape[0] == 0:
        raise SdcInputError(f"{label}: the table has no data rows")
    try:
        df = _whole_numbers(df, raw, ext)
    except (ValueError, TypeError, OSError, pd.errors.ParserError) as err:
        raise SdcInputError(f"{label}: cannot be read as {ext[1:].upper()} "
                            f"({_first_line(err)})") from None
    df.columns = [str(c).strip() for c in df.columns]
    if len(set(df.columns)) != df.shape[1]:
        dup = sorted({c for c in df.columns if list(df.columns).count(c) > 1})
        raise SdcInputError(f"{label}: duplicate column names: {', '.join(dup)}")
    try:
        check_flat(df)
        df = read_dates(df)
        check_table(df, max_table, max_cell)
    except SdcInputError as err:
        raise SdcInputError(f"{label}: {err}") from None
    return df


#: The largest whole number a float holds exactly: 2^53.
_EXACT = 2.0**53


def _blank_wholes(df: pd.DataFrame) -> list:
    """The float columns with a blank whose present values are all whole numbers (that a
    float holds exactly): whole numbers a reader turned into floats because of the blank."""
    out = []
    for c in df.columns:
        s = df[c]
        if isinstance(s.dtype, np.dtype) and s.dtype.kind == "f" and s.isna().any():
            x = s.to_numpy()
            x = x[~np.isnan(x)]
            if len(x) and np.all(np.mod(x, 1) == 0) and np.all(np.abs(x) <= _EXACT):
                out.append(c)
    return out


def _whole_numbers(df: pd.DataFrame, raw: bytes, ext: str) -> pd.DataFrame:
    """``df`` with its whole-number columns that have blanks as nullable integers (``Int64``)
    rather than floats, so that an unchanged "2" is written back as "2", not "2.0"
    (docs/columns.md). CSV: a column whose text is whole numbers ("2", not "2.0"), as pandas'
    nullable reader types it; Excel and Stata: float columns with a blank whose values are
    all whole (their cells and integer types do not keep "2.0" apart from "2"); SPSS: such
    columns whose display format has no decimals (F8.0); Parquet: columns stored as integers.
    """
    if ext in _PARQUET:
        import pyarrow.parquet as pq

        schema = pq.read_schema(io.BytesIO(raw))
        ints = [c for c in df.columns if c in schema.names
                and str(schema.field(c).type).startswith(("int", "uint"))
                and pd.api.types.is_float_dtype(df[c])]
        if not ints:
            return df
        table = pq.read_table(io.BytesIO(raw), columns=ints)
        back = table.to_pandas(types_mapper=lambda t: pd.api.types.pandas_dtype(
            str(t).replace("uint", "UInt").replace("int", "Int")))
        return df.assign(**{c: back[c].set_axis(df.index) for c in ints})
    wholes = _blank_wholes(df)
    if not wholes:
        return df
    if ext in _DELIMITED:
        text, wanted = _decode(raw), set(wholes)
        typed = pd.read_csv(io.BytesIO(text.encode("utf-8")), sep=sniff_delimiter(text),
                            usecols=lambda c: c in wanted, dtype_backend="numpy_nullable")
        wholes = [c for c in wholes if c in typed.columns
                  and pd.api.types.is_integer_dtype(typed[c])]
        return df.assign(**{c: typed[c] for c in wholes}) if wholes else df
    if ext in _SPSS:
        import pyreadstat

        _df, meta = pyreadstat.read_sav(io.BytesIO(raw), metadataonly=True)
        formats = meta.original_variable_types
        wholes = [c for c in wholes if re.fullmatch(r"[FN]\d+(\.0)?", formats.get(c) or "")]
    return df.astype({c: "Int64" for c in wholes})


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__


#: Byte-order marks of the encodings read from them, the longer first (UTF-32-LE's begins
#: with UTF-16-LE's).
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
#: A character of two to four bytes in UTF-8: rare in Latin-1 text, where it would be an
#: accented capital followed by a control or symbol byte.
_UTF8_MULTIBYTE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}"
                             rb"|[\xf0-\xf4][\x80-\xbf]{3}")


def _decode(raw: bytes) -> str:
    """UTF-16 or UTF-32 when the text begins with their byte-order mark; else UTF-8 (a
    byte-order mark is dropped), else Latin-1, which maps every byte. A file that holds both
    UTF-8 characters and bytes that are not UTF-8 mixes two encodings: it is refused with the
    line where UTF-8 stops, since reading it either way would split equal values in two."""
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            try:
                return raw.decode(encoding)
            except UnicodeDecodeError as err:
                raise SdcInputError(f"the file begins like {encoding.upper()} but is not "
                                    f"({err.reason})") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        if _UTF8_MULTIBYTE.search(raw, 0, err.start):
            line = raw.count(b"\n", 0, err.start) + 1
            raise SdcInputError(f"the file mixes encodings: it is UTF-8 up to line {line:,}, "
                                "which is not; save it in one encoding (UTF-8)") from None
        return raw.decode("latin-1")


def sniff_delimiter(text: str) -> str:
    """The field delimiter of delimited text, among ``,`` ``;`` tab and ``|``.

    ``csv.Sniffer`` on the first lines; when it cannot decide, the candidate that occurs most
    often in the header line (``,`` when none occurs: a single column).
    """
    sample = "\n".join(text[:65536].splitlines()[:50])
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS).delimiter
    except csv.Error:
        header = sample.splitlines()[0] if sample else ""
        counts = {d: header.count(d) for d in _DELIMITERS}
        best = max(counts, key=counts.__getitem__)
        return best if counts[best] > 0 else ","


def _read_delimited(raw: bytes, max_table: int | None) -> pd.DataFrame:
    text = _decode(raw)
    sep = sniff_delimiter(text)
    end = text.find("\n")  # the header line alone: a reader over the whole text copies it
    header = next(csv.reader([text if end < 0 else text[:end]], delimiter=sep), [])
    names = [h.strip() for h in header]
    dup = sorted({h for h in names if names.count(h) > 1})
    if dup:
        raise SdcInputError(f"duplicate column names: {', '.join(dup)}")
    return read_csv_bounded(text.encode("utf-8"), sep, max_table)


_DATE_PATTERN = re.compile(
    r"^\s*(\d{4}-\d{1,2}-\d{1,2}([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?"  # ISO date, time
    r"|\d{1,2}[./]\d{1,2}[./]\d{2,4})\s*$")  # 01.03.2024, 1/3/24


def infer_kind(s: pd.Series, identifier_share: float = 0.95, max_categories: int = 10) -> Kind:
    """Infer a column's kind.

    - ``date``: a datetime dtype, or text whose non-missing values all look like dates
      (``2024-03-01``, ``01.03.2024``, ``1/3/24``).
    - ``identifier``: integers or text with a distinct value on at least ``identifier_share`` of
      the (at least 20) non-missing records, like a patient number.
    - ``categorical``: text, booleans, or numbers with at most ``max_categories`` distinct values.
    - ``numeric``: other numbers.
    """
    values = s.dropna()
    kind = storage(s)
    if kind == "datetime":
        return Kind.DATE
    n = len(values)
    nunique = values.nunique()
    is_num = kind in ("integer", "float")
    if kind in ("text", "category", "mixed") and n > 0:
        head = values.astype(str).head(1000)
        if head.str.match(_DATE_PATTERN).all():
            return Kind.DATE
    if is_num:
        return number_kind(n, nunique, lambda: pd.api.types.is_integer_dtype(s) or bool(
            np.all(np.mod(values.to_numpy(dtype=float), 1) == 0)), identifier_share,
            max_categories)
    if n >= 20 and nunique >= identifier_share * n:
        return Kind.IDENTIFIER
    return Kind.CATEGORICAL


def number_kind(n: int, nunique: int, whole: Callable[[], bool],
                identifier_share: float = 0.95, max_categories: int = 10) -> Kind:
    """:func:`infer_kind`'s rule for a column of numbers, from its numbers of present and
    distinct values and whether they are all whole (asked only when it matters)."""
    if n >= 20 and nunique >= identifier_share * n and whole():
        return Kind.IDENTIFIER
    return Kind.NUMERIC if nunique > max_categories else Kind.CATEGORICAL


def infer_kinds(df: pd.DataFrame) -> dict[str, Kind]:
    """:func:`infer_kind` for every column, in column order.

    A column is a ``date`` (a datetime dtype, or text that all looks like dates), an
    ``identifier`` (integers or text with a distinct value on at least 95 % of at least 20
    records), ``categorical`` (text, booleans, or numbers with at most 10 distinct values) or
    ``numeric`` (other numbers).

    Parameters
    ----------
    df : pandas.DataFrame
        The table.

    Returns
    -------
    dict of str to Kind
        The kind of each column, keyed by column name, in column order.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core import infer_kinds
    >>> df = pd.DataFrame({"id": range(30), "age": [20 + i % 17 for i in range(30)],
    ...                    "sex": ["f", "m"] * 15})
    >>> {column: kind.value for column, kind in infer_kinds(df).items()}
    {'id': 'identifier', 'age': 'numeric', 'sex': 'categorical'}
    """
    return {c: infer_kind(df[c]) for c in df.columns}


#: Characters that make a spreadsheet treat a cell as a formula (OWASP CSV injection).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
WRITABLE_EXTENSIONS = (".csv", ".parquet", ".xlsx")
EXCEL_MAX_ROWS = 1_048_575  # 2^20 rows per sheet, one for the header
_FIXED_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
_MODIFIED = re.compile(rb"(<dcterms:modified[^>]*>)[^<]*(</dcterms:modified>)")


def _holds_text(s: pd.Series) -> bool:
    return pd.api.types.is_string_dtype(s) or s.dtype == object \
        or isinstance(s.dtype, pd.CategoricalDtype)


def _text_test(s: pd.Series, test: Callable[[str], bool]) -> np.ndarray:
    """``test`` on the text values of ``s``; False for numbers, missing values and columns
    without text. Run once per distinct value."""
    if not _holds_text(s):
        return np.zeros(len(s), dtype=bool)
    codes, uniques = pd.factorize(s.astype(object))
    hit = [isinstance(u, str) and test(u) for u in uniques]
    return np.array(hit + [False], dtype=bool)[codes]


def _risky(s: pd.Series) -> np.ndarray:
    """Which values of ``s`` are text that begins like a formula (numbers never are)."""
    return _text_test(s, lambda v: v.startswith(FORMULA_START))


#: Unicode's explicit direction controls: the Arabic letter mark, the left-to-right and
#: right-to-left marks, embeddings, overrides and isolates. Text holding one is shown in
#: another order than it is stored (``invoice\u202efdp.exe`` reads "invoiceexe.pdf").
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_BIDI = re.compile(f"[{BIDI_CONTROLS}]")


def neutralize_bidi(text: str) -> str:
    """``text`` with each direction control (:data:`BIDI_CONTROLS`) written as its escape, the
    six visible characters ``\\u202e``: a name or value is shown, and written to a CSV or Excel
    file, in the order it is stored (docs/deploying.md, "What user input can reach")."""
    return _BIDI.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _has_bidi(s: pd.Series) -> np.ndarray:
    return _text_test(s, lambda v: bool(_BIDI.search(v)))


def _neutralize_text(df: pd.DataFrame) -> pd.DataFrame:
    """The neutralisation of a CSV or Excel file: direction controls in text cells and column
    names escaped (:func:`neutralize_bidi`), then :func:`neutralize_formulas`."""
    out = df.copy()
    for c in out.columns:
        if _has_bidi(out[c]).any():
            out[c] = out[c].astype(object).map(
                lambda v: neutralize_bidi(v) if isinstance(v, str) else v)
    out.columns = [neutralize_bidi(c) if isinstance(c, str) else c for c in out.columns]
    return neutralize_formulas(out)


def neutralize_formulas(df: pd.DataFrame) -> pd.DataFrame:
    """Text cells and column names that begin with = + - @ (or tab, carriage return) get a
    leading apostrophe, so a spreadsheet shows them as text instead of running them; a category
    holding one is written as text. Numbers are left alone."""
    out = df.copy()
    for c in out.columns:
        risky = _risky(out[c])
        if risky.any():
            s = out[c].astype(object)
            out[c] = s.where(~risky, "'" + s.astype(str))
    out.columns = ["'" + c if isinstance(c, str) and c.startswith(FORMULA_START) else c
                   for c in out.columns]
    return out


#: Characters an .xlsx file cannot hold (XML 1.0 forbids them): written as ``\xNN``.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def _escape_control(df: pd.DataFrame) -> pd.DataFrame:
    """Control characters in text cells and column names written as ``\\xNN`` (Excel)."""
    def escape(v: object) -> object:
        return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", v) if isinstance(v, str) else v

    out = df.copy()
    for c in out.columns:
        if _text_test(out[c], lambda v: bool(_CONTROL.search(v))).any():
            out[c] = out[c].astype(object).map(escape)
    out.columns = [escape(c) for c in out.columns]
    return out


def _zoned(df: pd.DataFrame) -> list[str]:
    """The columns of datetimes with a time zone."""
    return [c for c in df.columns if isinstance(df[c].dtype, pd.DatetimeTZDtype)]


def _zoned_as_text(df: pd.DataFrame) -> pd.DataFrame:
    """Datetimes with a time zone as text with their offset, ``2024-03-01 09:00:00+01:00``
    (Excel has no time zones); missing values stay missing."""
    zoned = _zoned(df)
    if not zoned:
        return df
    out = df.copy()
    for c in zoned:
        out[c] = out[c].astype(str).astype(object)
    return out


def export_notes(df: pd.DataFrame, extension: str, neutralize: bool = True) -> list[str]:
    """What writing ``df`` in this format changes, one sentence each: formula-like text
    neutralised and direction controls escaped (CSV, Excel), control characters escaped
    (Excel)."""
    ext = extension.lower() if extension.startswith(".") else "." + extension.lower()
    notes = []
    if neutralize and ext in (".csv", ".xlsx"):
        cells = int(sum(_risky(df[c]).sum() for c in df.columns))
        names = sum(isinstance(c, str) and c.startswith(FORMULA_START) for c in df.columns)
        if cells or names:
            notes.append(f"{cells:,} cell(s) and {names} column name(s) that begin with = + - @ "
                         "(or a tab) are written with a leading apostrophe, so a spreadsheet "
                         "shows them as text")
        cells = int(sum(_has_bidi(df[c]).sum() for c in df.columns))
        names = sum(isinstance(c, str) and bool(_BIDI.search(c)) for c in df.columns)
        if cells or names:
            notes.append(f"{cells:,} cell(s) and {names} column name(s) hold direction controls "
                         "(U+202E and the like, which show text in another order than it is "
                         "stored): they are written as \\u202e")
    if ext == ".xlsx":
        cells = int(sum(_text_test(df[c], lambda v: bool(_CONTROL.search(v))).sum()
                        for c in df.columns))
        names = sum(isinstance(c, str) and bool(_CONTROL.search(c)) for c in df.columns)
        if cells or names:
            notes.append(f"{cells:,} cell(s) and {names} column name(s) hold control characters, "
                         "which Excel cannot store: they are written as \\xNN")
        if zoned := _zoned(df):
            notes.append(f"{len(zoned)} column(s) of dates with a time zone are written as text "
                         "with their offset (2024-03-01 09:00:00+01:00), since Excel has no "
                         "time zones")
    return notes


def table_bytes(df: pd.DataFrame, extension: str, neutralize: bool = True) -> bytes:
    """The table as a file's bytes: CSV (formula cells and direction controls neutralised
    unless ``neutralize`` is False), Parquet or Excel (the same, control characters escaped).
    Deterministic: the same table gives the same bytes."""
    ext = extension.lower() if extension.startswith(".") else "." + extension.lower()
    if ext not in WRITABLE_EXTENSIONS:
        raise SdcInputError(f"cannot write '{ext}'; expected one of "
                            f"{', '.join(WRITABLE_EXTENSIONS)}")
    if ext == ".csv":
        data = _neutralize_text(df) if neutralize else df
        return data.to_csv(index=False, lineterminator="\n").encode("utf-8")
    buf = io.BytesIO()
    if ext == ".parquet":
        for_parquet(df).to_parquet(buf, index=False)
        return buf.getvalue()
    if len(df) > EXCEL_MAX_ROWS:
        raise SdcInputError(f"an Excel sheet holds at most {EXCEL_MAX_ROWS:,} data rows, this "
                            f"table has {len(df):,}: write CSV or Parquet")
    data = _zoned_as_text(_escape_control(_neutralize_text(df) if neutralize else df))
    with pd.ExcelWriter(buf, engine="openpyxl") as writer:
        data.to_excel(writer, index=False)
        writer.book.properties.created = pd.Timestamp("2000-01-01").to_pydatetime()
    return _fixed_zip_times(buf.getvalue())


def _fixed_zip_times(raw: bytes) -> bytes:
    """Rewrite a zip (an .xlsx) with fixed entry times and a fixed document "modified" time
    (which the writer sets to the time of saving), so equal content gives equal bytes."""
    src = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            info = zipfile.ZipInfo(item.filename, date_time=_FIXED_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            content = src.read(item.filename)
            if item.filename == "docProps/core.xml":
                content = _MODIFIED.sub(rb"\g<1>2000-01-01T00:00:00Z\g<2>", content)
            dst.writestr(info, content)
    return out.getvalue()


def write_table(df: pd.DataFrame, path: str | Path, neutralize: bool = True) -> None:
    """Write ``df`` to ``path`` in the format its extension names (see :func:`table_bytes`).

    CSV (cells that a spreadsheet would run as formulas neutralised, direction controls
    escaped, unless ``neutralize`` is False), Parquet or Excel; the same table gives the same
    bytes.

    Parameters
    ----------
    df : pandas.DataFrame
        The table.
    path : str or pathlib.Path
        The file to write; its extension (``.csv``, ``.parquet``, ``.xlsx``) selects the format.
    neutralize : bool, default True
        Neutralise formula cells and escape direction controls (:func:`neutralize_bidi`) in a
        CSV or Excel file.

    Returns
    -------
    None
        The table is in the file.

    Raises
    ------
    SdcInputError
        When the extension is not one that can be written, the table has more rows than an
        Excel sheet holds, or the file cannot be written.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from sdc_core import read_table, write_table
    >>> df = pd.DataFrame({"age": [34, 51], "note": ["=1+1", "ok"]})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     write_table(df, Path(tmp) / "release.csv")
    ...     print((Path(tmp) / "release.csv").read_text())
    age,note
    34,'=1+1
    51,ok
    <BLANKLINE>
    """
    path = Path(path)
    raw = table_bytes(df, path.suffix, neutralize)
    try:
        path.write_bytes(raw)
    except OSError as err:
        raise SdcInputError(f"{path}: cannot write ({err.strerror})") from None
