"""Engines for files too large for one pandas table: DuckDB (in process, out of core) and
Spark, behind the small interface of :mod:`sdc_core.engines.base`, with pandas as the
reference. :mod:`sdc_core.engines.jobs` runs the risk, apply and compare commands on them.
"""

from __future__ import annotations

from sdc_core.engines.base import Engine, EngineOptions
from sdc_core.errors import SdcInputError

#: The engines the command line offers; ``pandas`` is the reference (the whole table in memory).
ENGINES = ("pandas", "duckdb", "spark")


def open_engine(name: str, options: EngineOptions | None = None) -> Engine:
    """A new engine session (close it when done)."""
    if name == "duckdb":
        from sdc_core.engines.duckdb_engine import DuckDBEngine

        return DuckDBEngine(options)
    if name == "spark":
        from sdc_core.engines.spark_engine import SparkEngine

        return SparkEngine(options)
    raise SdcInputError(f"unknown engine {name!r}; expected one of {', '.join(ENGINES[1:])}")


__all__ = ["ENGINES", "Engine", "EngineOptions", "open_engine"]
