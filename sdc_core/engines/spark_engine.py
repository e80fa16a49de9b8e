"""The Spark engine (PySpark): the same jobs on a Spark session, local or on a cluster.

Batch steps are ``mapInArrow`` over the reference's own method functions; aggregates are
``groupBy``/``agg``; rank swapping gets its exact global ranks without moving all rows into one
task: the present values are range-partitioned and sorted by (value, record id) and persisted,
one pass counts the rows of each partition, the driver turns the counts into rank offsets and a
second pass numbers the rows; the pairing is a window partitioned by block.

Positions (``__pos``): Parquet rows by ``_metadata.row_index`` plus the rows of the files before;
CSV rows by their order inside each file split (``_metadata.file_block_start``): one pass counts
the rows of every split, the driver turns them into offsets in (file name, split start) order.
Spark has no unsigned 64-bit integer, so ``__rid`` holds the record id's 64 bits as a signed
``long``; it is read back as unsigned wherever a draw or an order uses it.
"""

from __future__ import annotations

import gc
import os
import pickle
import sys
import warnings
from collections.abc import Iterator, Sequence
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

_MIN_LONG = -(1 << 63)


def _spark_type(kind: str) -> Any:
    from pyspark.sql import types as T

    return {"int": T.LongType(), "float": T.DoubleType(), "text": T.StringType(),
            "date": T.TimestampNTZType(), "bool": T.BooleanType()}[kind]


def kind_of(data_type: Any) -> str:
    from pyspark.sql import types as T

    if isinstance(data_type, (T.LongType, T.IntegerType, T.ShortType, T.ByteType)):
        return "int"
    if isinstance(data_type, (T.DoubleType, T.FloatType, T.DecimalType)):
        return "float"
    if isinstance(data_type, (T.TimestampType, T.TimestampNTZType, T.DateType)):
        return "date"
    if isinstance(data_type, T.BooleanType):
        return "bool"
    return "text"


def _in_worker() -> None:
    """Called first by every function that runs in a Python worker: the objects alive the first
    time (the modules the worker imported: PySpark, pandas, pyarrow, sdc_core) are frozen out of
    the garbage collector's sight (:func:`gc.freeze`). PySpark's daemon runs a full collection
    after each task of a reused worker, and walking those objects took about 25 ms a task, most
    of the Python time of a small task."""
    if not gc.get_freeze_count():
        gc.freeze()


def _unsigned(rid: pd.Series) -> np.ndarray:
    return rid.to_numpy(dtype=np.int64).view(np.uint64)


def _signed(rid: np.ndarray) -> np.ndarray:
    return np.asarray(rid, dtype=np.uint64).view(np.int64)


class SparkEngine:
    name = "spark"

    def __init__(self, options: EngineOptions | None = None) -> None:
        warnings.filterwarnings("ignore", message=".*PySpark does not yet fully support.*")
        from pyspark.sql import SparkSession

        self.options = opts = options or EngineOptions()
        root = str(Path(__file__).resolve().parents[2])  # the workers import sdc_core from here
        paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        if root not in paths:
            os.environ["PYTHONPATH"] = os.pathsep.join([root, *paths])
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = SparkSession.builder
        if opts.spark_master:
            builder = builder.master(opts.spark_master)
        builder = (builder.appName("sdc_core")
                   .config("spark.ui.enabled", "false")
                   .config("spark.ui.showConsoleProgress", "false")
                   .config("spark.sql.session.timeZone", "UTC")
                   .config("spark.sql.execution.arrow.pyspark.enabled", "true")
                   .config("spark.sql.execution.arrow.maxRecordsPerBatch", "100000")
                   .config("spark.sql.adaptive.enabled", "false"))
        if opts.partitions:
            builder = builder.config("spark.sql.shuffle.partitions", str(opts.partitions))
        for key, value in opts.spark_conf.items():
            builder = builder.config(key, value)
        try:
            self.spark = builder.getOrCreate()
        except Exception as err:  # the JVM did not start: Java missing or a bad setting
            raise SdcInputError(f"Spark did not start ({str(err).splitlines()[0]}); it needs "
                                "Java 17 (make test installs it as root)") from None
        self.spark.sparkContext.setLogLevel("ERROR")
        if opts.partitions:
            self.spark.conf.set("spark.sql.shuffle.partitions", str(opts.partitions))
        self._cached: list[Any] = []
        #: the first rows of a table (by id, with the table kept) for the checks of steps
        self._heads: dict[int, tuple[Any, pa.Table]] = {}

    @property
    def _parts(self) -> int:
        return self.options.partitions or self.spark.sparkContext.defaultParallelism

    # -- tables ---------------------------------------------------------------------------
    def scan(self, source: Source, record_id: str | None = None) -> Any:
        from pyspark.sql import functions as F

        files = [str(f) for f in source.files]
        try:
            raw = self._scan_parquet(source, files) if source.format == "parquet" \
                else self._scan_csv(source, files)
        except SdcInputError:
            raise
        except Exception as err:
            raise SdcInputError(f"{source.label}: cannot be read "
                                f"({str(err).splitlines()[0]})") from None
        select = []
        for field in raw.schema.fields:
            name = field.name
            if name == POS:
                continue
            kind = kind_of(field.dataType)
            col = F.col(f"`{name}`")
            if kind == "float":
                col = col.cast("double")
                col = F.when(F.isnan(col), F.lit(None)).otherwise(col)
            elif kind == "date":
                col = col.cast("timestamp_ntz")
            select.append(col.alias(name))
        t = raw.select(*select, F.col(POS))
        if self.options.partitions:
            t = t.repartition(self.options.partitions)
        if record_id is None:
            return self._keep(t.withColumn(RID, F.col(POS)))
        if record_id not in t.columns:
            raise SdcInputError(f"recipe: record_id column '{record_id}' is not in the data")
        row = t.agg(F.count(F.lit(1)), F.count(F.col(f"`{record_id}`")),
                    F.countDistinct(F.col(f"`{record_id}`"))).collect()[0]
        if row[1] != row[0] or row[2] != row[0]:
            raise SdcInputError(f"recipe: record_id column '{record_id}' must be unique and "
                                "complete")

        def ids(batch: pd.DataFrame) -> pd.DataFrame:
            return pd.DataFrame({RID: _signed(rng.ids_from_column(
                batch[record_id].to_numpy()))})
        return self._keep(self._map(t, ids, {RID: "int"}))

    def _scan_parquet(self, source: Source, files: list[str]) -> Any:
        from pyspark.sql import functions as F

        offsets = parquet_offsets(source.files)
        names = [Path(f).name for f in files]
        df = self.spark.read.parquet(*files)
        if len(files) == 1:
            pos = F.col("_metadata.row_index")
        else:
            lookup = F.create_map(*[x for n, o in zip(names, offsets)
                                    for x in (F.lit(n), F.lit(o))])
            pos = lookup[F.col("_metadata.file_name")] + F.col("_metadata.row_index")
        return df.select("*", pos.cast("long").alias(POS))

    def _scan_csv(self, source: Source, files: list[str]) -> Any:
        from pyspark.sql import functions as F

        text = (self.spark.read.option("header", True).option("sep", source.delimiter)
                .option("inferSchema", False).option("quote", '"').option("escape", '"')
                .csv(files))
        names = text.columns
        marked = text.select(*[F.when(F.col(f"`{c}`").isin(list(NA_TOKENS)), F.lit(None))
                               .otherwise(F.col(f"`{c}`")).alias(c) for c in names],
                             F.col("_metadata.file_name").alias("__file"),
                             F.col("_metadata.file_block_start").alias("__block"),
                             F.monotonically_increasing_id().alias("__mono")).persist()
        self._cached.append(marked)
        bools = list(TRUE_TOKENS + FALSE_TOKENS)
        probes = []  # what each column's present cells read as, counted split by split
        for c in names:
            col = F.col(f"`{c}`")
            probes += [F.count(col),
                       F.count(F.when(col.rlike(INTEGER_PATTERN)
                                      & F.expr(f"try_cast(`{c}` AS BIGINT)").isNotNull(),
                                      F.lit(1))),
                       F.count(F.expr(f"try_cast(`{c}` AS DOUBLE)")),
                       F.count(F.when(col.isin(bools), F.lit(1)))]
        splits = marked.groupBy("__file", "__block").agg(
            F.count(F.lit(1)), F.min("__mono"), *probes).collect()
        order = {Path(f).name: i for i, f in enumerate(files)}
        splits = sorted(splits, key=lambda r: (order[r[0]], r[1]))
        starts, total = [], 0
        for r in splits:  # (file, split start, rows, first __mono, probes…)
            starts.append((r[0], r[1], total - r[3]))
            total += r[2]
        counts = [sum(r[4 + k] for r in splits) for k in range(len(probes))]
        shift = F.create_map(*[x for f, b, s in starts
                               for x in (F.concat_ws("#", F.lit(f), F.lit(str(b))), F.lit(s))])
        key = F.concat_ws("#", F.col("__file"), F.col("__block").cast("string"))
        typed = marked.withColumn(POS, (shift[key] + F.col("__mono")).cast("long"))
        select = []
        for j, c in enumerate(names):
            present, ints, floats, flags = counts[4 * j: 4 * j + 4]
            if present == 0 or (floats == present and ints < present):
                select.append(F.expr(f"try_cast(`{c}` AS DOUBLE)").alias(c))
            elif ints == present:
                select.append(F.expr(f"try_cast(`{c}` AS BIGINT)").alias(c))
            elif flags == present:
                select.append(F.col(f"`{c}`").isin(list(TRUE_TOKENS)).alias(c))
            else:
                select.append(F.col(f"`{c}`"))
        return typed.select(*select, F.col(POS))

    def columns(self, t: Any) -> dict[str, str]:
        return {f.name: kind_of(f.dataType) for f in t.schema.fields if f.name not in (POS, RID)}

    def count(self, t: Any) -> int:
        return int(t.count())

    def group_counts(self, t: Any, cols: Sequence[str], weight: str | None = None
                     ) -> pd.DataFrame:
        from pyspark.sql import functions as F

        aggs = [F.count(F.lit(1)).alias("__n")]
        if weight:
            aggs.append(F.sum(F.col(f"`{weight}`").cast("double")).alias("__w"))
        return t.groupBy(*[F.col(f"`{c}`") for c in cols]).agg(*aggs).toPandas()

    def present_distinct(self, t: Any, cols: Sequence[str]) -> list[tuple[int, int]]:
        if not cols:
            return []
        from pyspark.sql import functions as F

        row = t.agg(*[f for c in cols for f in (F.count(F.col(f"`{c}`")),
                                                F.countDistinct(F.col(f"`{c}`")))]).collect()[0]
        return [(int(row[2 * j]), int(row[2 * j + 1])) for j in range(len(cols))]

    def present_count(self, t: Any, col: str) -> int:
        from pyspark.sql import functions as F

        return int(t.agg(F.count(F.col(f"`{col}`"))).collect()[0][0])

    def order_statistics(self, t: Any, col: str, ranks: Sequence[int]) -> list[float]:
        from pyspark.sql import functions as F

        lo, hi = min(ranks), max(ranks)
        x = F.col(f"`{col}`")
        rows = (t.where(x.isNotNull()).select(x.cast("double").alias("x")).orderBy("x")
                .offset(lo).limit(hi - lo + 1).collect())
        return [float(rows[r - lo]["x"]) for r in ranks]

    # -- batches --------------------------------------------------------------------------
    def _map(self, t: Any, fn: BatchFunction, outputs: dict[str, str],
             inputs: Sequence[str] | None = None) -> Any:
        from pyspark.sql import types as T

        fields = {f.name: f for f in t.schema.fields}
        for col, kind in outputs.items():
            fields[col] = T.StructField(col, _spark_type(kind), True)
        schema = T.StructType(list(fields.values()))
        arrow_types = {f.name: ARROW_TYPES[kind_of(f.dataType)] for f in schema.fields}
        names = [f.name for f in schema.fields]
        cols = list(inputs) if inputs is not None else None

        def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            _in_worker()
            for batch in batches:
                frame = batch.to_pandas()
                args = frame if cols is None else frame[cols + [RID]].copy()
                if RID in args:
                    args[RID] = _unsigned(args[RID])
                result = fn(args)
                arrays = []
                for name in names:
                    values = result[name] if name in result else frame[name]
                    arrays.append(arrow_values(values, arrow_types[name]))
                yield pa.RecordBatch.from_arrays(arrays, names=names)
        return t.mapInArrow(run, schema)

    def _keep(self, t: Any) -> Any:
        """``t`` persisted: the next steps' aggregates read it instead of recomputing the
        steps before it."""
        t = t.persist()
        self._cached.append(t)
        return t

    def map_batches(self, t: Any, fn: BatchFunction, inputs: Sequence[str],
                    outputs: dict[str, str]) -> Any:
        return self._keep(self._map(t, fn, outputs, inputs))

    def reduce_batches(self, t: Any, inputs: Sequence[str], fn: BatchFunction,
                       first_only: bool = False) -> list[Any]:
        from pyspark.sql import functions as F

        if first_only:
            return self._on_head(t, inputs, fn)
        sub = t.select(*[F.col(f"`{c}`") for c in inputs], F.col(RID))

        def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            _in_worker()
            for batch in batches:
                frame = batch.to_pandas()
                frame[RID] = _unsigned(frame[RID])
                blob = pickle.dumps(fn(frame))
                yield pa.RecordBatch.from_arrays([pa.array([blob], type=pa.binary())],
                                                 names=["r"])
        try:
            rows = sub.mapInArrow(run, "r binary").collect()
        except Exception as err:
            raise engine_error(err, "Spark") from None
        return [pickle.loads(r["r"]) for r in rows]

    def _on_head(self, t: Any, inputs: Sequence[str], fn: BatchFunction) -> list[Any]:
        """``fn`` of the table's first 64 rows, here in the driver (no Python worker): the rows
        are read once per table, so the steps of one pass are checked on one small job."""
        held = self._heads.get(id(t))
        if held is None or held[0] is not t:
            try:
                held = self._heads[id(t)] = (t, t.limit(64).toArrow())
            except Exception as err:
                raise engine_error(err, "Spark") from None
        if held[1].num_rows == 0:
            return []
        frame = held[1].select([*inputs, RID]).to_pandas()
        frame[RID] = _unsigned(frame[RID])
        try:
            return [fn(frame)]
        except SdcInputError:
            raise
        except Exception as err:  # as a worker's error reads through reduce_batches
            raise engine_error(err, "Spark") from None

    def rank_swap(self, t: Any, col: str, window: int, phase: int, order_key: int) -> Any:
        from pyspark import TaskContext
        from pyspark.sql import Window
        from pyspark.sql import functions as F
        from pyspark.sql import types as T

        x = F.col(f"`{col}`")
        key = F.col(RID).bitwiseXOR(F.lit(_MIN_LONG))  # signed order = unsigned order of rid
        present = (t.where(x.isNotNull()).select(F.col(POS), F.col(RID), x.alias("__x"),
                                                 key.alias("__key"))
                   .repartitionByRange(self._parts, "__x", "__key")
                   .sortWithinPartitions("__x", "__key").persist())
        self._cached.append(present)

        def sizes(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            _in_worker()
            n = sum(b.num_rows for b in batches)
            task = TaskContext.get()
            assert task is not None  # mapInArrow runs this inside a task
            yield pa.RecordBatch.from_arrays([pa.array([task.partitionId()],
                                                       pa.int32()), pa.array([n], pa.int64())],
                                             names=["pid", "n"])
        counts = sorted((r["pid"], r["n"]) for r in
                        present.mapInArrow(sizes, "pid int, n long").collect())
        offsets, total = {}, 0
        for pid, n in counts:
            offsets[pid] = total
            total += n
        size = window + 1
        schema = T.StructType(present.schema.fields + [
            T.StructField("__rk", T.LongType()), T.StructField("__blk", T.LongType()),
            T.StructField("__h", T.LongType())])

        def ranks(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            _in_worker()
            task = TaskContext.get()
            assert task is not None  # mapInArrow runs this inside a task
            start = offsets[task.partitionId()]
            for b in batches:
                rk = start + np.arange(b.num_rows, dtype=np.int64)
                start += b.num_rows
                rid = b.column(RID).to_numpy(zero_copy_only=False).view(np.uint64)
                h = (rng.u64(rid, order_key) >> np.uint64(24)).astype(np.int64)
                yield pa.RecordBatch.from_arrays(
                    list(b.columns) + [pa.array(rk), pa.array((rk + phase) // size),
                                       pa.array(h)], schema=pa.schema(
                        list(b.schema) + [pa.field("__rk", pa.int64()),
                                          pa.field("__blk", pa.int64()),
                                          pa.field("__h", pa.int64())]))
        ranked = present.mapInArrow(ranks, schema)
        w = Window.partitionBy("__blk").orderBy("__h", "__rk")
        q = F.row_number().over(w) - 1
        pairs = ranked.select(F.col(POS).alias("__ppos"), F.when(
            q % 2 == 0, F.coalesce(F.lead("__x").over(w), F.col("__x")))
            .otherwise(F.lag("__x").over(w)).alias("__swapped"))
        joined = t.join(pairs, t[POS] == pairs["__ppos"], "left")
        return self._keep(joined.select(*[F.coalesce(F.col("__swapped"), x).alias(c) if c == col
                               else F.col(f"`{c}`") for c in t.columns]))

    def drop(self, t: Any, cols: Sequence[str]) -> Any:
        return t.drop(*cols)

    def corr(self, t: Any, cols: Sequence[str]) -> np.ndarray:
        from pyspark.sql import functions as F

        p = len(cols)
        out = np.eye(p)
        pairs = [(i, j) for i in range(p) for j in range(i + 1, p)]
        if not pairs:
            return out
        row = t.agg(*[F.corr(F.col(f"`{cols[i]}`").cast("double"),
                             F.col(f"`{cols[j]}`").cast("double")) for i, j in pairs]).collect()[0]
        for (i, j), v in zip(pairs, row):
            out[i, j] = out[j, i] = np.nan if v is None else v
        return out

    def align(self, original: Any, protected: Any) -> Any:
        from pyspark.sql import functions as F

        b = protected.select(F.col(POS).alias("__bpos"), *[
            F.col(f"`{c}`").alias(PROTECTED_PREFIX + c) for c in self.columns(protected)])
        return original.join(b, original[POS] == b["__bpos"], "inner").drop("__bpos")

    def attach(self, t: Any, table: pd.DataFrame, on: Sequence[str]) -> Any:
        from pyspark.sql import functions as F

        renamed = table.rename(columns={c: f"__k{j}" for j, c in enumerate(on)})
        small = self.spark.createDataFrame(renamed)
        cond = [t[f"`{c}`"].eqNullSafe(small[f"__k{j}"]) for j, c in enumerate(on)]
        extra = [c for c in table.columns if c not in on]
        joined = t.join(F.broadcast(small), cond, "left") if on else \
            t.crossJoin(F.broadcast(small))
        return joined.select(
            *[t[f"`{c}`"] for c in t.columns], *[small[f"`{c}`"] for c in extra])

    def write(self, t: Any, path: Path, columns: Sequence[str], neutralize: bool = True,
              names: Sequence[str] | None = None) -> None:
        from pyspark.sql import functions as F

        path = Path(path)
        ext = path.suffix.lower()
        if ext not in (".parquet", ".csv"):
            raise SdcInputError(f"{path}: the engines write .parquet or .csv")
        if path.exists():
            raise SdcInputError(f"{path}: already exists; Spark writes a directory of parts "
                                "and does not replace one: remove it or choose another name")
        kinds = self.columns(t)
        escape = ext == ".csv" and neutralize  # as sdc_core/data/io.py's table_bytes writes a CSV
        select = []
        for c in columns:
            col = F.col(f"`{c}`")
            if escape and kinds[c] == "text":
                for ch in BIDI_CONTROLS:  # a Java replacement: "\\" stands for one backslash
                    col = F.regexp_replace(col, ch, "\\" + neutralize_bidi(ch))
                col = F.when(F.substring(col, 1, 1).isin(list(FORMULA_START)),
                             F.concat(F.lit("'"), col)).otherwise(col)
            select.append(col.alias(neutralize_bidi(c) if escape else c))
        out = t.orderBy(POS).select(*select)
        if names is not None:  # Spark too matches names ignoring case unless told not to
            self.spark.conf.set("spark.sql.caseSensitive", "true")
            out = out.toDF(*(neutralize_bidi(n) if escape else n for n in names))
        try:
            if ext == ".parquet":
                out.write.parquet(str(path))
            else:
                out.write.option("header", True).csv(str(path))
        except Exception as err:
            raise engine_error(err, f"{path}: cannot write") from None

    def close(self) -> None:
        for df in self._cached:
            df.unpersist()
        self._cached.clear()
        self._heads.clear()
        if not self.options.keep_session:
            self.spark.stop()
