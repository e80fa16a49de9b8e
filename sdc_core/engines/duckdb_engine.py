"""The DuckDB engine: in process, out of core (its sorts, joins and aggregates spill to a
temporary directory under a memory limit).

Tables are views. A pass of batch steps streams the table in batches of a million rows through
:mod:`sdc_core.engines.kernels` into a Parquet file in the engine's own temporary directory
(inside ``--temp-dir``, removed on close), read back as the next view, so the figures of later
steps read the result instead of recomputing it. Rank swapping is SQL:
exact ranks by ``row_number() OVER (ORDER BY x, __rid)``, blocks by integer arithmetic, and the
pairing inside each block by a window ordered by the record's random bits, which come from the
same numpy generator (:func:`sdc_core.rng.u64`) through a scalar function.
"""

from __future__ import annotations

import contextlib
import itertools
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from sdc_core import rng
from sdc_core.data.io import BIDI_CONTROLS, FORMULA_START, neutralize_bidi
from sdc_core.engines.base import (
    ARROW_TYPES,
    PROTECTED_PREFIX,
    BatchFunction,
    EngineOptions,
    arrow_values,
    engine_error,
)
from sdc_core.engines.source import (
    FALSE_TOKENS,
    INTEGER_PATTERN,
    NA_TOKENS,
    POS,
    RID,
    TRUE_TOKENS,
    Source,
    parquet_offsets,
)
from sdc_core.errors import SdcInputError

_SQL_TYPES = {"int": "BIGINT", "float": "DOUBLE", "text": "VARCHAR", "date": "TIMESTAMP",
              "bool": "BOOLEAN"}
BATCH_ROWS = 1 << 20


def quote(name: str) -> str:
    """A SQL identifier."""
    return '"' + str(name).replace('"', '""') + '"'


def literal(text: str) -> str:
    """A SQL string literal."""
    return "'" + str(text).replace("'", "''") + "'"


def kind_of(sql_type: str) -> str:
    t = sql_type.upper()
    if t in ("BIGINT", "INTEGER", "SMALLINT", "TINYINT", "HUGEINT", "UBIGINT", "UINTEGER",
             "USMALLINT", "UTINYINT"):
        return "int"
    if t in ("DOUBLE", "FLOAT", "REAL") or t.startswith("DECIMAL"):
        return "float"
    if t.startswith("TIMESTAMP") or t == "DATE":
        return "date"
    if t == "BOOLEAN":
        return "bool"
    return "text"


class DuckDBEngine:
    name = "duckdb"

    def __init__(self, options: EngineOptions | None = None) -> None:
        import duckdb

        opts = options or EngineOptions()
        # no extension is ever fetched or loaded by itself: nothing leaves the machine
        self.con = duckdb.connect(config={"preserve_insertion_order": True,
                                          "autoinstall_known_extensions": False,
                                          "autoload_known_extensions": False})
        threads = opts.threads or opts.partitions
        try:
            if opts.memory_limit:
                self.con.execute(f"SET memory_limit = {literal(opts.memory_limit)}")
            if opts.temp_dir:
                self.con.execute(f"SET temp_directory = {literal(opts.temp_dir)}")
            if threads:
                self.con.execute(f"SET threads = {int(threads)}")
        except duckdb.Error as err:
            self.con.close()
            raise SdcInputError(f"DuckDB setting refused: {str(err).splitlines()[0]}") from None
        self._names = itertools.count()
        self._functions: list[str] = []
        self._temp_root = opts.temp_dir
        self._tmp: Path | None = None
        self._reader = self.con.cursor()  # reads one table while the main one writes another
        from duckdb.func import ARROW

        self.con.create_function("sdc_u64", _u64, ["UBIGINT", "UBIGINT"], "UBIGINT",
                                 type=ARROW)  # functions are the database's: cursors see them
        self._functions.append("sdc_u64")

    # -- tables ---------------------------------------------------------------------------
    def _view(self, sql: str) -> str:
        name = f"__t{next(self._names)}"
        self.con.execute(f"CREATE VIEW {name} AS {sql}")
        return name

    def _query(self, sql: str) -> pd.DataFrame:
        import duckdb

        try:
            return self.con.sql(sql).to_arrow_table().to_pandas()
        except duckdb.Error as err:
            raise SdcInputError(f"DuckDB: {str(err).splitlines()[0]}") from None

    def scan(self, source: Source, record_id: str | None = None) -> str:
        import duckdb

        try:
            raw = self._scan_parquet(source) if source.format == "parquet" \
                else self._scan_csv(source)
            described = self.con.execute(f"DESCRIBE SELECT * FROM {raw}").fetchall()
        except duckdb.Error as err:
            raise SdcInputError(f"{source.label}: cannot be read "
                                f"({str(err).splitlines()[0]})") from None
        cols = [(r[0], r[1]) for r in described if r[0] not in (POS, "__file",
                                                                 "file_row_number")]
        select = []
        for name, sql_type in cols:
            kind = kind_of(sql_type)
            q = quote(name)
            if kind == "float":
                select.append(f"CASE WHEN isnan({q}::DOUBLE) THEN NULL ELSE {q}::DOUBLE END "
                              f"AS {q}")
            elif kind == "date":
                select.append(f"{q}::TIMESTAMP AS {q}")
            else:
                select.append(q)
        base = self._view(f"SELECT {', '.join(select)}, {POS} FROM {raw}")
        if record_id is None:
            return self._view(f"SELECT *, {POS}::UBIGINT AS {RID} FROM {base}")
        if record_id not in [c for c, _ in cols]:
            raise SdcInputError(f"recipe: record_id column '{record_id}' is not in the data")
        n, present, distinct = self.con.execute(
            f"SELECT count(*), count({quote(record_id)}), count(DISTINCT {quote(record_id)}) "
            f"FROM {base}").fetchall()[0]
        if present != n or distinct != n:
            raise SdcInputError(f"recipe: record_id column '{record_id}' must be unique and "
                                "complete")
        kind = kind_of(dict(cols)[record_id])
        fn = self._function(lambda b: pd.DataFrame({RID: rng.ids_from_column(
            b[record_id].to_numpy())}), [record_id], [_SQL_TYPES[kind]], RID, "UBIGINT")
        return self._view(f"SELECT *, {fn}({quote(record_id)}, {POS}::UBIGINT) AS {RID} "
                          f"FROM {base}")

    def _scan_parquet(self, source: Source) -> str:
        files = "[" + ", ".join(literal(str(f)) for f in source.files) + "]"
        offsets = parquet_offsets(source.files)
        if len(source.files) == 1:
            pos = "file_row_number"
        else:
            cases = " ".join(f"WHEN {literal(str(f))} THEN {o}"
                             for f, o in zip(source.files, offsets))
            pos = f"(CASE __file {cases} END) + file_row_number"
        return self._view(f"SELECT * EXCLUDE (__file, file_row_number), {pos}::BIGINT AS {POS} "
                          f"FROM read_parquet({files}, filename='__file', "
                          f"file_row_number=true)")

    def _scan_csv(self, source: Source) -> str:
        nulls = "[" + ", ".join(literal(t) for t in NA_TOKENS) + "]"
        parts, offset = [], 0
        for f in source.files:
            read = (f"read_csv({literal(str(f))}, header=true, all_varchar=true, "
                    f"delim={literal(source.delimiter)}, nullstr={nulls}, quote='\"', "
                    f"escape='\"')")
            parts.append(f"SELECT * EXCLUDE (ordinality), ordinality - 1 + {offset} AS {POS} "
                         f"FROM {read} WITH ORDINALITY")
            if len(source.files) > 1:
                offset += self.con.execute(f"SELECT count(*) FROM {read}").fetchall()[0][0]
        text = self._view(" UNION ALL ".join(parts))
        names = [r[0] for r in self.con.execute(f"DESCRIBE SELECT * FROM {text}").fetchall()
                 if r[0] != POS]
        probes = []
        bools = ", ".join(literal(v) for v in TRUE_TOKENS + FALSE_TOKENS)
        trues = ", ".join(literal(v) for v in TRUE_TOKENS)
        for c in names:
            q = quote(c)
            probes += [f"count({q})",
                       f"count(CASE WHEN regexp_full_match({q}, {literal(INTEGER_PATTERN)}) "
                       f"AND TRY_CAST({q} AS BIGINT) IS NOT NULL THEN 1 END)",
                       f"count(TRY_CAST({q} AS DOUBLE))",
                       f"count(CASE WHEN {q} IN ({bools}) THEN 1 END)"]
        counts = self.con.execute(f"SELECT {', '.join(probes)} FROM {text}").fetchall()[0]
        select = []
        for j, c in enumerate(names):
            present, ints, floats, bools = counts[4 * j: 4 * j + 4]
            q = quote(c)
            if present == 0 or (floats == present and ints < present):
                select.append(f"TRY_CAST({q} AS DOUBLE) AS {q}")
            elif ints == present:
                select.append(f"TRY_CAST({q} AS BIGINT) AS {q}")
            elif bools == present:
                select.append(f"({q} IN ({trues})) AS {q}")
            else:
                select.append(q)
        return self._view(f"SELECT {', '.join(select)}, {POS} FROM {text}")

    def columns(self, t: str) -> dict[str, str]:
        rows = self.con.execute(f"DESCRIBE SELECT * FROM {t}").fetchall()
        return {r[0]: kind_of(r[1]) for r in rows if r[0] not in (POS, RID)}

    def _types(self, t: str) -> dict[str, str]:
        return {r[0]: r[1] for r in self.con.execute(f"DESCRIBE SELECT * FROM {t}").fetchall()}

    def count(self, t: str) -> int:
        return int(self.con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0])

    def group_counts(self, t: str, cols: Sequence[str], weight: str | None = None
                     ) -> pd.DataFrame:
        keys = ", ".join(quote(c) for c in cols)
        w = f", sum({quote(weight)}::DOUBLE) AS __w" if weight else ""
        if not cols:
            return self._query(f"SELECT count(*) AS __n{w} FROM {t}")
        return self._query(f"SELECT {keys}, count(*) AS __n{w} FROM {t} GROUP BY {keys}")

    def present_distinct(self, t: str, cols: Sequence[str]) -> list[tuple[int, int]]:
        if not cols:
            return []
        figures = ", ".join(f"count({quote(c)}), count(DISTINCT {quote(c)})" for c in cols)
        row = self.con.execute(f"SELECT {figures} FROM {t}").fetchall()[0]
        return [(int(row[2 * j]), int(row[2 * j + 1])) for j in range(len(cols))]

    def present_count(self, t: str, col: str) -> int:
        return int(self.con.execute(f"SELECT count({quote(col)}) FROM {t}").fetchall()[0][0])

    def order_statistics(self, t: str, col: str, ranks: Sequence[int]) -> list[float]:
        lo, hi = min(ranks), max(ranks)
        x = quote(col)
        rows = self.con.execute(f"SELECT {x}::DOUBLE FROM {t} WHERE {x} IS NOT NULL ORDER BY {x} "
                                f"LIMIT {hi - lo + 1} OFFSET {lo}").fetchall()
        return [float(rows[r - lo][0]) for r in ranks]

    # -- batches --------------------------------------------------------------------------
    def _function(self, fn: BatchFunction, inputs: Sequence[str], in_types: Sequence[str],
                  output: str, out_type: str) -> str:
        """A DuckDB scalar function of (inputs…, __rid) giving ``fn``'s column ``output``."""
        name = f"sdc_f{next(self._names)}"
        arrow_type = pa.from_numpy_dtype(np.uint64) if out_type == "UBIGINT" else \
            ARROW_TYPES[[k for k, v in _SQL_TYPES.items() if v == out_type][0]]
        cols = list(inputs) + [RID]

        def call(*arrays: Any) -> pa.Array:
            batch = pd.DataFrame({c: a.to_pandas() for c, a in zip(cols, arrays)})
            values = fn(batch)[output]
            return arrow_values(values, arrow_type)
        from duckdb.func import ARROW, SPECIAL

        self.con.create_function(name, _with_arity(call, len(cols)),
                                 # the stubs list lower-case names; DuckDB reads "DOUBLE" too
                                 list(in_types) + ["UBIGINT"],  # type: ignore[arg-type]
                                 out_type,
                                 type=ARROW, null_handling=SPECIAL, side_effects=False)
        self._functions.append(name)
        return name

    def map_batches(self, t: str, fn: BatchFunction, inputs: Sequence[str],
                    outputs: dict[str, str]) -> str:
        """One streaming pass: batches of up to a million rows from DuckDB through ``fn`` and
        into a Parquet file in the engine's private temporary directory, read back as a
        view (so later steps' figures read the result instead of recomputing it)."""
        import duckdb

        reader = self._reader.sql(f"SELECT * FROM {t}").to_arrow_reader(BATCH_ROWS)
        fields = {f.name: f for f in reader.schema}
        for col, kind in outputs.items():
            fields[col] = pa.field(col, ARROW_TYPES[kind])
        schema = pa.schema(list(fields.values()))
        cols = list(inputs) + [RID]

        def batches() -> Any:
            for batch in reader:
                result = fn(batch.select(cols).to_pandas())
                yield pa.RecordBatch.from_arrays(
                    [arrow_values(result[f.name], f.type)
                     if f.name in outputs else batch.column(f.name) for f in schema],
                    schema=schema)
        stream = pa.RecordBatchReader.from_batches(schema, batches())
        path = self._scratch() / f"step{next(self._names)}.parquet"
        name = f"__s{next(self._names)}"
        self.con.register(name, stream)
        try:
            self.con.execute(f"COPY (SELECT * FROM {name}) TO {literal(str(path))} "
                             "(FORMAT parquet)")
        except duckdb.Error as err:
            raise engine_error(err, "DuckDB") from None
        finally:
            self.con.unregister(name)
        return self._view(f"SELECT * FROM read_parquet({literal(str(path))})")

    def _scratch(self) -> Path:
        """The engine's own temporary directory (inside --temp-dir when given), removed on
        close."""
        if self._tmp is None:
            try:
                if self._temp_root:
                    Path(self._temp_root).mkdir(parents=True, exist_ok=True)
                self._tmp = Path(tempfile.mkdtemp(prefix="sdc_engine_", dir=self._temp_root))
            except OSError as err:
                raise SdcInputError(f"{self._temp_root}: cannot make a temporary directory "
                                    f"there ({err.strerror})") from None
        return self._tmp

    def reduce_batches(self, t: str, inputs: Sequence[str], fn: BatchFunction,
                       first_only: bool = False) -> list[Any]:
        import duckdb

        cols = ", ".join(quote(c) for c in inputs)
        out = []
        try:
            limit = " LIMIT 64" if first_only else ""
            reader = self.con.sql(f"SELECT {cols}, {RID} FROM {t}{limit}").to_arrow_reader(
                BATCH_ROWS)
            for batch in reader:
                out.append(fn(batch.to_pandas()))
        except duckdb.Error as err:
            raise SdcInputError(f"DuckDB: {str(err).splitlines()[0]}") from None
        return out

    def rank_swap(self, t: str, col: str, window: int, phase: int, order_key: int) -> str:
        x = quote(col)
        size = window + 1
        pairs = self._view(f"""
            WITH r AS (SELECT {POS}, {x} AS x, {RID},
                              row_number() OVER (ORDER BY {x}, {RID}) - 1 AS rk
                       FROM {t} WHERE {x} IS NOT NULL),
                 b AS (SELECT {POS}, x, rk, (rk + {phase}) // {size} AS blk,
                              sdc_u64({RID}, {order_key}::UBIGINT) >> 24 AS h FROM r)
            SELECT {POS},
                   CASE WHEN (row_number() OVER w - 1) % 2 = 0
                        THEN coalesce(lead(x) OVER w, x) ELSE lag(x) OVER w END AS swapped
            FROM b WINDOW w AS (PARTITION BY blk ORDER BY h, rk)""")
        return self._view(f"SELECT t.* REPLACE (coalesce(p.swapped, t.{x}) AS {x}) "
                          f"FROM {t} t LEFT JOIN {pairs} p ON t.{POS} = p.{POS}")

    def drop(self, t: str, cols: Sequence[str]) -> str:
        return self._view(f"SELECT * EXCLUDE ({', '.join(quote(c) for c in cols)}) FROM {t}")

    def corr(self, t: str, cols: Sequence[str]) -> np.ndarray:
        p = len(cols)
        out = np.eye(p)
        pairs = [(i, j) for i in range(p) for j in range(i + 1, p)]
        if not pairs:
            return out
        exprs = ", ".join(f"corr({quote(cols[i])}::DOUBLE, {quote(cols[j])}::DOUBLE)"
                          for i, j in pairs)
        row = self.con.execute(f"SELECT {exprs} FROM {t}").fetchall()[0]
        for (i, j), v in zip(pairs, row):
            out[i, j] = out[j, i] = np.nan if v is None else v
        return out

    def align(self, original: str, protected: str) -> str:
        cols = [c for c in self.columns(protected)]
        extra = ", ".join(f"b.{quote(c)} AS {quote(PROTECTED_PREFIX + c)}" for c in cols)
        return self._view(f"SELECT a.*, {extra} FROM {original} a JOIN {protected} b "
                          f"ON a.{POS} = b.{POS}")

    def attach(self, t: str, table: pd.DataFrame, on: Sequence[str]) -> str:
        name = f"__a{next(self._names)}"
        self.con.register(name, table)
        cond = " AND ".join(f"t.{quote(c)} IS NOT DISTINCT FROM a.{quote(c)}"
                            for c in on) or "TRUE"
        extra = ", ".join(f"a.{quote(c)}" for c in table.columns if c not in on)
        return self._view(f"SELECT t.*, {extra} FROM {t} t LEFT JOIN {name} a ON {cond}")

    def write(self, t: str, path: Path, columns: Sequence[str], neutralize: bool = True,
              names: Sequence[str] | None = None) -> None:
        import duckdb

        path = Path(path)
        ext = path.suffix.lower()
        if ext not in (".parquet", ".csv"):
            raise SdcInputError(f"{path}: the engines write .parquet or .csv")
        kinds = self._types(t)
        escape = ext == ".csv" and neutralize  # as sdc_core/data/io.py's table_bytes writes a CSV
        select = []
        for c in columns:
            q = quote(c)
            named = quote(neutralize_bidi(c)) if escape else q
            if escape and kind_of(kinds[c]) == "text":
                v = q
                for ch in BIDI_CONTROLS:
                    v = f"replace({v}, chr({ord(ch)}), {literal(neutralize_bidi(ch))})"
                starts = ", ".join(literal(s) if s.isprintable() else f"chr({ord(s)})"
                                   for s in FORMULA_START)
                select.append(f"CASE WHEN left({v}, 1) IN ({starts}) THEN '''' || {v} "
                              f"ELSE {v} END AS {named}")
            else:
                select.append(f"{q} AS {named}")
        if escape and names is not None:
            names = [neutralize_bidi(n) for n in names]
        query = f"SELECT {', '.join(select)} FROM {t} ORDER BY {POS}"
        try:
            if names is None:
                fmt = "FORMAT parquet" if ext == ".parquet" else "FORMAT csv, HEADER true"
                self.con.execute(f"COPY ({query}) TO {literal(str(path))} ({fmt})")
            else:  # names DuckDB cannot tell apart (it ignores case): written by pyarrow
                _write_stream(self.con.sql(query).to_arrow_reader(BATCH_ROWS), path,
                              list(names))
        except duckdb.Error as err:
            raise SdcInputError(f"{path}: cannot write ({str(err).splitlines()[0]})") from None
        except OSError as err:
            raise SdcInputError(f"{path}: cannot write ({err.strerror})") from None

    def close(self) -> None:
        for name in self._functions:
            with contextlib.suppress(Exception):  # already gone with its connection
                self.con.remove_function(name)
        self._reader.close()
        self.con.close()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)


def _write_stream(reader: pa.RecordBatchReader, path: Path, names: list[str]) -> None:
    """Write a stream of batches under the given column names, Parquet or CSV."""
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    schema = pa.schema([pa.field(n, f.type) for n, f in zip(names, reader.schema)])
    writer = pq.ParquetWriter(path, schema) if path.suffix.lower() == ".parquet" \
        else pacsv.CSVWriter(path, schema)
    with writer:
        for batch in reader:
            writer.write_batch(pa.RecordBatch.from_arrays(batch.columns, schema=schema))


def _with_arity(call: Any, n: int) -> Any:
    """``call`` as a function of exactly ``n`` named parameters (DuckDB reads a scalar
    function's arity from its signature and refuses ``*args``)."""
    names = ", ".join(f"a{i}" for i in range(n))
    scope = {"call": call}
    exec(f"def fixed({names}):\n    return call({names})\n", scope)  # noqa: S102 (fixed text)
    return scope["fixed"]


def _u64(rid: pa.Array, key: pa.Array) -> pa.Array:
    stream = int(key[0].as_py()) if len(key) else 0
    return pa.array(rng.u64(rid.to_numpy(zero_copy_only=False), stream))

