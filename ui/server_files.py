"""Files on the server, for tables too big to upload.

The operator names a directory in the environment variable ``SDC_DATA_DIR``; the Data page then
lists the Parquet and CSV files, and the directories of parts, found directly in it, and opens
one by its name or by a path inside it. Every path is resolved (symlinks followed) and refused
when it ends outside the directory. Nothing is written: the file is only read, by DuckDB
(:mod:`sdc_core.engines`), with the same column typing as the ``--engine duckdb`` commands.

**The sample.** A file of at most :data:`SAMPLE_LIMIT` records is read whole. From a larger one
the pages get the ``SAMPLE_LIMIT`` records whose hash of their position is smallest: for the
0-based position r in the file (in the engines' numbering, :mod:`sdc_core.engines.source`) the
hash is ``rng.u64(r, rng.key(seed, SAMPLE_STEP, 0))``, the counter-based generator of
:mod:`sdc_core.rng`. ``u64`` is a bijection of r, so no two positions tie, and the sample is a
pure function of (file, seed, sample size): the same records whatever the number of threads or
the layout of the file's row groups, kept in file order. ``SAMPLE_STEP`` is a step number no
recipe reaches, so which records are sampled is independent of the draws of any protection.

**The whole file's risk** is :func:`sdc_core.engines.jobs.risk` on DuckDB, cached here by the
path, the stamp of its files (name, size, modification time), the roles and the risk options.
"""

from __future__ import annotations

import itertools
import os
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from sdc_core import rng
from sdc_core.data.decoded import CELL
from sdc_core.data.io import infer_kinds
from sdc_core.engines import EngineOptions, open_engine
from sdc_core.engines.duckdb_engine import DuckDBEngine, quote
from sdc_core.engines.source import CSV, PARQUET, POS, open_source
from sdc_core.errors import SdcInputError
from sdc_core.names import count_text, tile
from sdc_core.roles import suggest_roles
from ui import state
from ui.infra import memory
from ui.logic.session import ServerFile, content_id
from ui.logic.text import md

#: The environment variable that names the directory a user may open files from.
ENV_VAR = "SDC_DATA_DIR"
#: The most records read into the session; a larger file is sampled.
SAMPLE_LIMIT = 1_000_000
#: The most entries a directory of parts opened on the server may hold: the engines open its
#: parts together (20,000 parts ran the server out of file descriptors, whose usual limit is
#: 1,024 a process).
MAX_PARTS = 500
#: The step number of the sample's random stream (recipe steps count from 0).
SAMPLE_STEP = 0xFFFF_FFFF
#: Positions hashed at a time while choosing the sample.
_CHUNK = 1 << 23

_EXTENSIONS = PARQUET + CSV

#: The figures shown for the sample and the whole file: label (:mod:`sdc_core.names`, "{k}"
#: the threshold), key, format.
FIGURES: tuple[tuple[str, str, Callable[[float], str]], ...] = tuple(
    (tile(key, "{k}"), key, fmt) for key, fmt in (
        ("n_records", lambda v: f"{v:,.0f}"),
        ("n_classes", lambda v: f"{v:,.0f}"),
        ("percent_unique", lambda v: f"{v:.2f} %"),
        ("percent_k_le_threshold", lambda v: f"{v:.2f} %"),
        ("expected_reidentifications", count_text),
        ("avg_linkage_risk_percent", lambda v: f"{v:.2f} %"),
        ("global_risk_percent", lambda v: f"{v:.2f} %"),
        ("min_k", lambda v: f"{v:g}"),
        ("median_k", lambda v: f"{v:g}")))


def data_dir() -> Path | None:
    """The operator's directory (resolved), or None when ``SDC_DATA_DIR`` is not set."""
    value = os.environ.get(ENV_VAR, "").strip()
    return Path(value).expanduser().resolve() if value else None


def _inside(path: Path, root: Path) -> bool:
    return path != root and path.is_relative_to(root)


def _readable(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() in _EXTENSIONS


def listing(root: Path) -> list[str]:
    """The Parquet/CSV files and the directories of parts (shown with a trailing ``/``) found
    directly in ``root``, by name; hidden entries and those resolving outside it left out."""
    try:
        entries = sorted(root.iterdir(), key=lambda p: p.name)
    except OSError:
        return []
    out = []
    for p in entries:
        if p.name.startswith("."):
            continue
        try:
            real = p.resolve()
            if not _inside(real, root):
                continue
            if _readable(real):
                out.append(p.name)
            elif real.is_dir() and any(_readable(f) for f in real.iterdir()):
                out.append(p.name + "/")
        except (OSError, RuntimeError):
            continue
    return out


def resolve(root: Path, name: str) -> Path:
    """The real path of ``name`` (relative to ``root``, or absolute), checked to lie inside
    ``root`` and to be a file or directory the engines read; else an error saying why."""
    text = str(name).strip()
    if not text:
        raise SdcInputError("choose a file, or type a path inside the server's data directory")
    try:
        real = (root / text).resolve()
    except (OSError, RuntimeError, ValueError):
        raise SdcInputError(f"{text}: not a usable path") from None
    if real == root:
        raise SdcInputError(f"{text}: name a file or a directory of parts inside {root}, not "
                            "the directory itself")
    if not _inside(real, root):
        raise SdcInputError(f"{text}: refused, it leads outside the server's data directory "
                            f"{root} (symbolic links are followed); only files inside it can "
                            "be opened")
    if real.is_dir():
        with os.scandir(real) as entries:  # counted before any is opened
            parts = sum(1 for _ in itertools.islice(entries, MAX_PARTS + 1))
        if parts > MAX_PARTS:
            raise SdcInputError(f"{text}: a directory of more than {MAX_PARTS:,} entries is not "
                                "opened on the server (its parts would all be opened at once); "
                                "join its parts, or use the command line")
    source = open_source(real)  # exists, and is Parquet or CSV (or a directory of them)
    for f in source.files:  # a part of a directory may itself be a link
        try:
            inside = _inside(f.resolve(), root)
        except (OSError, RuntimeError):
            inside = False
        if not inside:
            raise SdcInputError(f"{text}: refused, its part {f.name} leads outside the server's "
                                f"data directory {root} (symbolic links are followed)")
    return real


def stamp(path: Path) -> tuple[tuple[str, int, int], ...]:
    """Name, size and modification time (ns) of each file of the source at ``path``: a change
    to any of them is a change of the data."""
    out = []
    for f in open_source(path).files:
        s = f.stat()
        out.append((f.name, int(s.st_size), int(s.st_mtime_ns)))
    return tuple(out)


def sample_positions(total: int, limit: int, seed: int) -> np.ndarray:
    """The ``limit`` positions of 0..total−1 with the smallest hash (see the module docstring),
    sorted; every position when ``total <= limit``."""
    if total <= limit:
        return np.arange(total, dtype=np.int64)
    key = rng.key(seed, SAMPLE_STEP, 0)
    best_h = np.empty(0, dtype=np.uint64)
    best_p = np.empty(0, dtype=np.uint64)
    for start in range(0, total, _CHUNK):  # chunks of positions, not records one by one
        pos = np.concatenate([best_p, np.arange(start, min(total, start + _CHUNK),
                                                dtype=np.uint64)])
        h = np.concatenate([best_h, rng.u64(pos[len(best_p):], key)])
        if len(h) > limit:
            keep = np.argpartition(h, limit - 1)[:limit]
            h, pos = h[keep], pos[keep]
        best_h, best_p = h, pos
    return np.sort(best_p).astype(np.int64)


#: DuckDB's memory limit for the server's files, unless ``SDC_DUCKDB_MEMORY_LIMIT`` says
#: otherwise: one whole-file risk must not take the memory every session shares.
DUCKDB_MEMORY_LIMIT = "2GB"


def _engine_options() -> EngineOptions:
    """DuckDB's settings for the server's files: ``SDC_DUCKDB_MEMORY_LIMIT`` (default 2GB) and
    ``SDC_DUCKDB_TEMP_DIR`` (where it spills beyond the limit; default, the system's)."""
    return EngineOptions(
        memory_limit=os.environ.get("SDC_DUCKDB_MEMORY_LIMIT") or DUCKDB_MEMORY_LIMIT,
        temp_dir=os.environ.get("SDC_DUCKDB_TEMP_DIR") or None)


def decoded_size(con: Any, query: str, max_cell: int) -> int:
    """What the result of ``query`` will take as pandas, computed by DuckDB before anything is
    read into Python: :data:`~sdc_core.data.decoded.CELL` bytes a value, and the characters of
    text (bytes of a blob) besides; an :class:`SdcInputError` when a text value is longer
    than ``max_cell`` characters."""
    rel = con.sql(query)
    sums, longest = [], []
    for name, kind in zip(rel.columns, rel.types):
        q = quote(name)
        if str(kind) == "VARCHAR":
            sums.append(f"coalesce(sum(strlen({q})), 0)")
            longest.append(f"coalesce(max(length({q})), 0)")
        elif str(kind) == "BLOB":
            sums.append(f"coalesce(sum(octet_length({q})), 0)")
    row = con.sql(f"SELECT count(*), {', '.join(sums + longest) or '0'} FROM ({query})"
                  ).fetchall()[0]
    rows, text = int(row[0]), sum(int(v) for v in row[1:1 + len(sums)])
    top = max((int(v) for v in row[1 + len(sums):]), default=0)
    if top > max_cell:
        raise SdcInputError(f"a text value of {top:,} characters, more than the limit of "
                            f"{max_cell:,} for one cell")
    return rows * CELL * len(rel.columns) + text


def read_sample(path: Path, seed: int, limit: int,
                say: Callable[[str], Any] = lambda _: None,
                admit: Callable[[int], None] = lambda _: None) -> tuple[pd.DataFrame, int]:
    """The records of the source at ``path`` (all of them, or the sample of ``limit`` chosen by
    ``seed``) as pandas, in file order, and the number of records in the whole file.
    ``admit`` is given what the table will take (:func:`decoded_size`) before it is read, and
    refuses it by raising."""
    import pyarrow as pa

    engine = DuckDBEngine(_engine_options())  # as open_engine("duckdb"); its connection is used
    try:
        t = engine.scan(open_source(path))
        say("Counting the records…")
        total = engine.count(t)
        if total == 0:
            raise SdcInputError(f"{path.name}: the table has no data rows")
        cols = ", ".join(map(quote, engine.columns(t)))
        if total <= limit:
            say(f"Reading all {total:,} records…")
            chosen = f"SELECT {cols} FROM {t}"
        else:
            say(f"Choosing {limit:,} of the {total:,} records (seed {seed})…")
            engine.con.register("__ui_sample", pa.table(
                {"__pick": sample_positions(total, limit, seed)}))
            say(f"Reading the {limit:,} sampled records…")
            chosen = f"SELECT {cols} FROM {t} WHERE {POS} IN (SELECT __pick FROM __ui_sample)"
        query = f"{chosen} ORDER BY {POS}"
        try:  # measured unsorted: sorting would hold the whole table in DuckDB
            need = decoded_size(engine.con, chosen, memory.max_cell())
        except SdcInputError as err:
            raise SdcInputError(f"{path.name}: {err}") from None
        except Exception as err:  # DuckDB's own error types
            raise SdcInputError(f"{path.name}: cannot be read "
                                f"({str(err).strip().splitlines()[0]})") from None
        admit(need)
        try:
            df = engine.con.sql(query).to_arrow_table().to_pandas()
        except Exception as err:  # DuckDB's own error types
            raise SdcInputError(f"{path.name}: cannot be read "
                                f"({str(err).strip().splitlines()[0]})") from None
        return df, total
    finally:
        engine.close()


def sample_name(path: Path, sampled: int, total: int, seed: int) -> str:
    """How the data set is named everywhere: the file's name, and the sample it is."""
    name = path.name + ("/" if path.is_dir() else "")
    if sampled >= total:
        return name
    return f"{name} — sample of {sampled:,} of {total:,} records (seed {seed})"


def _admit(table_bytes: int) -> None:
    """Reserve what a table of ``table_bytes`` will take in the server
    (:data:`~ui.infra.memory.FOOTPRINT` times), or refuse it, before it is read."""
    refused = memory.LEDGER.admit(state.session_id(), int(memory.FOOTPRINT * table_bytes),
                                  memory.budget())
    if refused:
        raise SdcInputError(refused)


def open_file(root: Path, name: str, seed: int) -> bool:
    """Open ``name`` from the server's directory as the current data set, showing each stage;
    on an error, say why and keep the current data set."""
    with st.status(f"Opening {md(name)} on the server…", expanded=True) as status:
        try:
            status.write("Checking the path…")
            path = resolve(root, name)
            files = stamp(path)
            limit = SAMPLE_LIMIT
            df, total = read_sample(path, seed, limit, status.write, _admit)
            if resolve(root, name) != path or stamp(path) != files:  # swapped meanwhile
                raise SdcInputError(f"{name} changed while it was read (a part replaced, or "
                                    "a link put in its place); open it again")
            refused = memory.LEDGER.admit(state.session_id(), memory.held_bytes(df),
                                          memory.budget())
            if refused:
                raise SdcInputError(refused)
            status.write(f"Detecting column kinds of {len(df):,} records × {df.shape[1]} "
                         "columns…")
            kinds = infer_kinds(df)
            status.write("Suggesting column roles…")
            source = ServerFile(path, files, total, len(df), seed)
            dataset_id = content_id(repr((str(path), files, seed, limit)).encode())
            state.install(df, sample_name(path, len(df), total, seed), dataset_id, kinds,
                          suggest_roles(df, kinds), source=source)
        except SdcInputError as err:
            memory.LEDGER.cancel(state.session_id())
            status.update(label=f"{md(name)} was not opened", state="error", expanded=False)
            st.error(f"The file was not opened: {md(err)}", icon=":material/error:")
            return False
        status.update(label=f"Opened {md(name)}: " + (
            f"a sample of {len(df):,} of {total:,} records" if len(df) < total
            else f"{total:,} records") + f" × {df.shape[1]} columns", state="complete",
            expanded=False)
    return True


@st.cache_data(max_entries=16, show_spinner=False)
def whole_file_risk(path: str, files: tuple[tuple[str, int, int], ...], qi: tuple[str, ...],
                    weight: str | None, k: int, na: str, alpha: float) -> dict[str, Any]:
    """:func:`sdc_core.engines.jobs.risk` of the whole source on DuckDB (``files``, the
    source's stamp, is part of the cache key only)."""
    from sdc_core.engines import jobs

    engine = open_engine("duckdb", _engine_options())
    try:
        return jobs.risk(engine, path, list(qi), weight=weight, k=k, na=na, alpha=alpha)
    finally:
        engine.close()


def figures_table(sample: dict[str, Any], whole: dict[str, Any] | None, k: int
                  ) -> pd.DataFrame:
    """The main risk figures of the sample and (once computed) of the whole file."""
    return pd.DataFrame({
        "measure": [label.format(k=k) for label, _, _ in FIGURES],
        "sample": [fmt(sample[key]) for _, key, fmt in FIGURES],
        "whole file": [fmt(whole[key]) if whole else "not computed yet"
                       for _, key, fmt in FIGURES],
    })


def apply_command(path: Path, stem: str) -> str:
    """The command that protects the whole file with the recipe downloaded from Export."""
    return (f"python -m sdc_core apply {shlex.quote(str(path))} --recipe "
            f"{shlex.quote(stem + '_recipe.json')} -o {shlex.quote(stem + '_protected.parquet')} "
            "--engine duckdb")
