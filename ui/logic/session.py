"""What a session holds, as plain values: the data set and where it came from, the risk
options, the Protect page's undo history, the notices a page keeps across a rerun, the last
settings the Protect page applied. :mod:`ui.state` keeps them in Streamlit's session
state; this module only defines them (no Streamlit), so that pure code (:mod:`ui.logic`,
workers, tests) can build and read them."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from sdc_core.data.io import Kind
from ui.logic.protect import ProtectSettings
from ui.logic.text import file_stem


@dataclass(frozen=True)
class ServerFile:
    """Where a data set opened on the server comes from (:mod:`ui.server_files`): the resolved
    path, its ``stamp`` when opened (name, size and modification time of each file), the
    records of the whole file, and how many of them were read, chosen by ``seed``."""

    path: Path
    stamp: tuple[tuple[str, int, int], ...]
    total: int
    sampled: int
    seed: int

    @property
    def is_sample(self) -> bool:
        return self.sampled < self.total


@dataclass(eq=False)
class Table:
    """A session's table, held in one place the server can empty (memory admission,
    :mod:`ui.infra.memory`): ``df`` is None once it has been freed."""

    df: pd.DataFrame | None


@dataclass(frozen=True)
class Dataset:
    """A loaded table; ``dataset_id`` (a content hash) keys every cache entry made from it.
    ``example`` is the key of a built-in data set (:mod:`sdc_core.examples`). ``source`` is set
    when the table was read from a file on the server (maybe a sample of it); then
    ``dataset_id`` hashes the path, the file's stamp, the seed and the sample size."""

    table: Table
    name: str
    dataset_id: str
    kinds: dict[str, Kind]
    example: str | None = None
    source: ServerFile | None = None

    @property
    def short_id(self) -> str:
        """The start of the id as the pages and the report show it: the first 16 hexadecimal
        digits of the file's SHA-256 (an upload, a built-in data set), or of the hash of a
        server file's path, stamp, seed and sample size."""
        return self.dataset_id[:16]

    @property
    def is_example(self) -> bool:
        return self.example is not None

    @property
    def stem(self) -> str:
        """What downloaded files are named after: the built-in data set's key, the server
        file's or the upload's name without its extension."""
        return file_stem(self.example or (self.source.path.name if self.source else self.name))

    @property
    def df(self) -> pd.DataFrame:
        if self.table.df is None:
            # ui.state.current_dataset() never gives one
            raise RuntimeError("the data set was freed")
        return self.table.df


def content_id(raw: bytes, name: str = "") -> str:
    """A data set's id: the first 128 bits of the SHA-256 of its bytes (hexadecimal), then the
    extension of its file's ``name``, lower-cased, which picks the reader (the same bytes read
    as CSV and as Parquet are two tables). It keys every cache entry made from the data set,
    the results shared by every session that loaded the same bytes (docs/deploying.md, "Work
    shared across the class"); the rest of the name, which the user chose, is not part of it.
    Its first 16 digits are the file's SHA-256 as shown (:attr:`Dataset.short_id`)."""
    return hashlib.sha256(raw).hexdigest()[:32] + Path(name).suffix.lower()


#: What the Risk page measures: the original table, the protected one, or both side by side.
RISK_VIEWS = ("original", "protected", "both")


@dataclass(frozen=True)
class History:
    """The Protect settings before the current ones (``past``, oldest first) and those undone
    since (``future``, the next redo last); ``source``: the control whose burst of changes
    made the last step (None: not a control's, or the burst has ended), ``at``: when that
    burst last moved or the results of its last change were drawn (``time.monotonic``),
    ``drawn``: whether they were."""

    past: tuple[ProtectSettings, ...] = ()
    future: tuple[ProtectSettings, ...] = ()
    source: str | None = None
    at: float = 0.0
    drawn: bool = False


@dataclass(frozen=True)
class Notice:
    """A message a page keeps for one of its parts across a rerun (``kind``: "success",
    "warning" or "error"; ``text`` is Markdown, any text from the user already escaped)."""

    kind: str
    text: str


@dataclass(frozen=True)
class Applied:
    """The last Protect settings whose results the page drew: the data set they were applied
    to and their recipe (:func:`ui.logic.workbench.recipe_json`)."""

    dataset_id: str
    recipe: str
