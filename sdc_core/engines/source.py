"""What an engine reads: the files of a source, their format and how their rows are numbered.

A source is a Parquet or CSV file, or a directory of Parquet (or CSV) parts read in name order.
Every engine numbers the records the same way:

- ``__pos``, the **position**: the 0-based row number in the concatenation of the files in
  name order (Parquet: the file's own row numbers plus the rows of the files before it; CSV:
  data rows after the header). Outputs are written in position order.
- ``__rid``, the **record id** of the counter-based randomness (:mod:`sdc_core.rng`): the
  position, or, when a recipe names an id column, that column's values as
  :func:`sdc_core.rng.ids_from_column` makes them (integers as they are, text hashed).

CSV cells are read as text and typed by one rule, the same on every engine: a cell equal to
one of :data:`NA_TOKENS` (pandas' missing-value markers) is missing; a column whose present
cells all read as whole numbers is an integer column, else one whose cells all read as numbers
is a float column, else text (an all-missing column is float, as pandas reads it).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from sdc_core.data.io import sniff_delimiter
from sdc_core.errors import SdcInputError

#: pandas' default missing-value markers (``pandas.read_csv``'s ``na_values``).
NA_TOKENS = ("", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
             "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null")

PARQUET = (".parquet", ".pq")
CSV = (".csv", ".tsv", ".txt")

#: A CSV cell that reads as a whole number (pandas reads "1.0" or "1e3" as a float).
INTEGER_PATTERN = r"^\s*[+-]?[0-9]+\s*$"
#: The cells pandas reads as booleans.
TRUE_TOKENS, FALSE_TOKENS = ("True", "TRUE", "true"), ("False", "FALSE", "false")

#: Internal columns every engine adds: position and record id.
POS, RID = "__pos", "__rid"
#: Column names a source may not hold: the engines' own columns, and the two DuckDB adds while
#: reading Parquet (file name, row number). A file's column of one of these names took the
#: engines' place (its values read as the records' positions) or was silently left out.
RESERVED = (POS, RID, "__file", "file_row_number")
#: Characters the engines read as a pattern of file names in a path (DuckDB's and Hadoop's
#: globs): a file ``x*.csv`` was read together with every file its pattern matches, links
#: that lead elsewhere included.
GLOB_CHARACTERS = "*?[]{}"


@dataclass(frozen=True)
class Source:
    """The files of a source (name order), their format, and for CSV the delimiter."""

    path: Path
    files: tuple[Path, ...]
    format: str  # "parquet" or "csv"
    delimiter: str = ","

    @property
    def label(self) -> str:
        return str(self.path)


def open_source(path: str | Path) -> Source:
    """The :class:`Source` at ``path``, or an error naming what is wrong with it."""
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.is_file() and f.suffix.lower() in PARQUET)
        fmt = "parquet"
        if not files:
            files = sorted(f for f in p.iterdir() if f.is_file() and f.suffix.lower() in CSV)
            fmt = "csv"
        if not files:
            raise SdcInputError(f"{p}: the directory holds no .parquet or .csv files")
    elif p.is_file():
        ext = p.suffix.lower()
        if ext in PARQUET:
            fmt = "parquet"
        elif ext in CSV:
            fmt = "csv"
        else:
            raise SdcInputError(f"{p}: the engines read Parquet or CSV, not '{ext or '(none)'}'")
        files = [p]
    else:
        raise SdcInputError(f"{p}: no such file or directory")
    for f in files:
        if found := sorted(set(str(f)) & set(GLOB_CHARACTERS)):
            raise SdcInputError(f"{f}: the engines would read its path as a pattern of file "
                                f"names (it holds {' '.join(found)}); rename it")
    delimiter = ","
    if fmt == "csv":
        delimiter = _delimiter(files[0])
        headers = {tuple(_header(f, delimiter)) for f in files}
        if len(headers) > 1:
            raise SdcInputError(f"{p}: the CSV files do not share one header")
        names = [h.strip() for h in next(iter(headers))]
        dup = sorted({h for h in names if names.count(h) > 1})
        if dup:
            raise SdcInputError(f"{p}: duplicate column names: {', '.join(dup)}")
    else:
        names = [n for f in files for n in _parquet_names(f)]
    taken = sorted(set(names) & set(RESERVED))
    if taken:
        raise SdcInputError(f"{p}: the column names {', '.join(RESERVED)} are the engines' "
                            "own (positions, record ids, DuckDB's file names and row numbers): "
                            f"rename the file's column(s) {', '.join(taken)}")
    return Source(p, tuple(files), fmt, delimiter)


def _parquet_names(path: Path) -> list[str]:
    """The top-level column names of a Parquet file (from its footer)."""
    import pyarrow.parquet as pq

    try:
        return list(pq.read_schema(path).names)
    except Exception as err:  # pyarrow raises its own types for a broken footer
        raise SdcInputError(f"{path}: cannot be read as Parquet ({err})") from None


def _delimiter(path: Path) -> str:
    with path.open("rb") as f:
        head = f.read(65536)
    try:
        text = head.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = head.decode("latin-1")
    if not text.strip():
        raise SdcInputError(f"{path}: file is empty")
    return sniff_delimiter(text)


def _header(path: Path, delimiter: str) -> list[str]:
    with path.open(encoding="utf-8-sig", errors="replace", newline="") as f:
        return next(csv.reader(f, delimiter=delimiter), [])


def parquet_offsets(files: tuple[Path, ...]) -> list[int]:
    """The position of each Parquet file's first row: the rows of the files before it (read
    from the files' footers)."""
    import pyarrow.parquet as pq

    out, total = [], 0
    for f in files:
        out.append(total)
        try:
            total += pq.ParquetFile(f).metadata.num_rows
        except Exception as err:  # pyarrow raises its own types for a broken footer
            raise SdcInputError(f"{f}: cannot be read as Parquet ({err})") from None
    return out
