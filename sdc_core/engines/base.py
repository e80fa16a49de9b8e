"""The engine interface: the few operations the risk, apply and compare jobs ask of an engine.

An engine holds a table it never hands over whole. It answers with aggregates (class tables,
value counts, correlations) that :mod:`sdc_core.engines.jobs` finishes with the same numpy code
as the pandas reference, and it runs per-record work by passing batches of rows through the
reference's own method functions (:mod:`sdc_core.engines.kernels`). Only rank swapping, which
needs global ranks, is written in each engine's own terms.

Column kinds, as the jobs see them: ``int``, ``float``, ``text``, ``date``, ``bool``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd
import pyarrow as pa

from sdc_core.engines.source import Source
from sdc_core.errors import SdcInputError

KINDS = ("int", "float", "text", "date", "bool")
#: The Arrow type a batch column of each kind is written as.
ARROW_TYPES = {"int": pa.int64(), "float": pa.float64(), "text": pa.string(),
               "date": pa.timestamp("us"), "bool": pa.bool_()}

#: A function of one batch of rows (its columns as pandas, ``__rid`` among them).
BatchFunction = Callable[[pd.DataFrame], Any]


@dataclass(frozen=True)
class EngineOptions:
    """Settings an engine may take: DuckDB's memory limit, temp directory and threads; Spark's
    master, extra ``spark.*`` settings and number of partitions, the input being repartitioned
    into that many (``partitions`` also sets the number of DuckDB threads when ``threads`` is
    not given)."""

    memory_limit: str | None = None
    temp_dir: str | None = None
    threads: int | None = None
    spark_master: str | None = None  # None: spark-submit's --master, else local[*]
    spark_conf: dict[str, str] = field(default_factory=dict)
    partitions: int | None = None
    #: Spark: leave the session running on close (tests share one JVM between engines)
    keep_session: bool = False


class Engine(Protocol):
    """What the jobs use. ``Table`` is the engine's own lazy handle."""

    name: str

    def scan(self, source: Source, record_id: str | None = None) -> Any:
        """The source's rows with ``__pos`` and ``__rid`` (:mod:`sdc_core.engines.source`)."""

    def columns(self, t: Any) -> dict[str, str]:
        """The user's columns (not ``__pos``/``__rid``) and their kinds, in order."""

    def count(self, t: Any) -> int: ...

    def group_counts(self, t: Any, cols: Sequence[str], weight: str | None = None
                     ) -> pd.DataFrame:
        """One row per distinct tuple of ``cols`` (missing values included, as NaN/None), with
        ``__n`` records and, with a weight, ``__w`` = the sum of the weights."""

    def present_distinct(self, t: Any, cols: Sequence[str]) -> list[tuple[int, int]]:
        """(number of present values, number of distinct present values) of each column, in
        one pass over the table."""

    def present_count(self, t: Any, col: str) -> int:
        """The number of present values of a column (without the distinct values' count and
        its shuffle)."""

    def order_statistics(self, t: Any, col: str, ranks: Sequence[int]) -> list[float]:
        """The values at these 0-based ranks of the column's present values sorted ascending
        (as floats)."""

    def map_batches(self, t: Any, fn: BatchFunction, inputs: Sequence[str],
                    outputs: dict[str, str]) -> Any:
        """``t`` with the columns ``outputs`` (name → kind) replaced by (or added as) ``fn``'s
        result on each batch of the ``inputs`` columns and ``__rid``."""

    def reduce_batches(self, t: Any, inputs: Sequence[str], fn: BatchFunction,
                       first_only: bool = False) -> list[Any]:
        """``fn`` of every batch of the ``inputs`` columns (and ``__rid``): a list of results
        (with ``first_only``, of the first 64 rows only: a check before the real run)."""

    def rank_swap(self, t: Any, col: str, window: int, phase: int, order_key: int) -> Any:
        """``t`` with ``col`` rank-swapped: window w ranks, phase o, stream key of the order
        (:mod:`sdc_core.methods.rank_swap`)."""

    def drop(self, t: Any, cols: Sequence[str]) -> Any: ...

    def corr(self, t: Any, cols: Sequence[str]) -> np.ndarray:
        """Pairwise-complete Pearson correlations (NaN where undefined)."""

    def align(self, original: Any, protected: Any) -> Any:
        """One table of the original's columns and the protected's as ``__p_<name>``, rows
        matched by position."""

    def attach(self, t: Any, table: pd.DataFrame, on: Sequence[str]) -> Any:
        """``t`` with the columns of the small ``table`` joined on ``on`` (missing = missing)."""

    def write(self, t: Any, path: Path, columns: Sequence[str], neutralize: bool = True,
              names: Sequence[str] | None = None) -> None:
        """Write the columns in position order, under ``names`` if given: Parquet or CSV by
        the extension (text cells that a spreadsheet would run as formulas neutralised and
        direction controls escaped, in cells and names, in CSV unless told not to)."""

    def close(self) -> None: ...


PROTECTED_PREFIX = "__p_"


def arrow_values(values: pd.Series, arrow_type: pa.DataType) -> pa.Array:
    """A batch function's result column as an Arrow array of the declared type (dates at
    microseconds, the engines' resolution)."""
    if pd.api.types.is_datetime64_any_dtype(values):
        values = values.astype("datetime64[us]")
    return pa.array(values, type=arrow_type, from_pandas=True)


def engine_error(err: Exception, prefix: str) -> SdcInputError:
    """The readable line of an engine's error: our own input error when a batch function
    raised one (engines wrap it in their own exception), else the first line after
    ``prefix``."""
    text = str(err).strip()
    marker = "SdcInputError: "
    if marker in text:
        return SdcInputError(text.split(marker, 1)[1].splitlines()[0])
    return SdcInputError(f"{prefix}: {text.splitlines()[0] if text else type(err).__name__}")
