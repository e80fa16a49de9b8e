"""Memory admission: one budget, for the whole server, for the data its sessions hold.

Every session that holds a table is entered in one process-wide ledger with what its data takes
(the table's own bytes times :data:`FOOTPRINT`, for the protected copies and results that the
pages compute from it). The raw bytes of uploads count from the moment they arrive: an upload's
request is admitted (its declared length reserved) before Streamlit keeps a byte of it
(:mod:`ui.infra.uploads`), and what Streamlit's upload store then holds counts for as long as
it holds it. Before an upload is parsed, what it will take is estimated from its size and a
parsed sample of its first rows (at most :data:`SAMPLE_BYTES`), plus :data:`LOADING` times its
size for the time it is read; when the sessions already entered, the uploads admitted but still
being read and the raw bytes plus the estimate would exceed the budget, the upload is refused
with a message that says why. What is admitted is reserved, under one lock, until the table is
entered; the file is read in a child process capped at the reservation, then, if it needs more,
at all the room the session may still take (:meth:`Ledger.grow`, :mod:`sdc_core.capped`), and
the table read is admitted again at its own size before it is entered. Nothing is ever evicted
to make room.

Data every session may open and the server holds once, whoever uses it (the built-in data
sets, read once into a cache that is never emptied), is entered once, for the server
(:meth:`Ledger.share`): it counts in every admission, but no session books it. A session that
holds only such data has no entry at all, so a visitor who opens the dashboard (or a script that
connects and leaves) takes nothing from the budget.

A session's entry (and the table with it) is freed when it has been unused longer than the idle
timeout, whether its tab is open or closed (a closed tab's work waits that long to be taken over
by a reload, :mod:`ui.resume`); a session that comes back then finds its data gone and is told
so.

What a closed tab leaves behind beside its data (its work kept for a reload, :mod:`ui.resume`;
its downloads until they are deleted, :mod:`ui.infra.downloads`) is entered too, by its
measured size (:func:`object_bytes`, :meth:`Ledger.keep`), for as long as it is kept: it
counts in every admission like a session's data.

Settings (environment): ``SDC_MEMORY_BUDGET`` (``8GB``, ``512MB``, or bytes; default half of the
machine's memory) and ``SDC_IDLE_MINUTES`` (default 60).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass
from functools import partial
from types import BuiltinFunctionType, FunctionType, MethodType, ModuleType
from typing import Any, Protocol

import numpy as np
import pandas as pd

from sdc_core.data.decoded import BUDGET_ENV, CELL_ENV, memory_bytes, parse_cell, parse_size
from sdc_core.data.decoded import budget as budget  # the server's settings, read here by the pages
from sdc_core.data.decoded import machine_memory as machine_memory
from sdc_core.data.decoded import max_cell as max_cell
from sdc_core.data.decoded import size_text as size_text

IDLE_ENV = "SDC_IDLE_MINUTES"
IDLE_MINUTES = 60
#: What a session's data takes in the server, as a multiple of its table's own bytes: the
#: table, the protected table and the results cached from them. Measured with
#: bench/bench_load.py (8 sessions each holding a 185 MB table after a slider move on the
#: Protect page): 940 MiB of resident memory a session, 5.3 times the table.
FOOTPRINT = 5.5
#: While an upload is read, what it takes on top of :data:`FOOTPRINT`, as a multiple of the
#: file's size: its bytes and the parser's buffers (in the reading child, :func:`ui.upload.read`;
#: the bytes Streamlit's upload store keeps also count as long as it keeps them). Measured in
#: the same run, with the file read in the server: the peak was 10.1 times the tables, 5.8
#: times the files above what the sessions then held.
LOADING = 6.0
#: The rows parsed to estimate an upload, and the most bytes of it parsed for them: a file of
#: 2,000 lines of 40,000 numbers was parsed whole (3.4 GB), a line of 1 MB gives 1 row.
SAMPLE_ROWS = 2000
SAMPLE_BYTES = 2**20
#: What the server's shared caches (:mod:`ui.compute`, bounded by their entries: 24 protected
#: tables with their risk and utility, 16 more protected tables, …) keep of the results
#: computed from the built-in data sets, for all the sessions that use them, as a multiple of
#: the largest one's table: these results are never admitted, so their bound is counted
#: once for the server. Measured with ``bench/bench_flood.py --recipes 40``: 40 sessions on
#: ACTG 175 (462 kB), each with a recipe of its own, grew the server by 21–23 MB more than 40
#: sessions with one recipe did (48–50 times the table), hardly more after the 20th.
SHARED_RESULTS = 50
#: The ledger's key of what the shared caches keep of the built-in data sets' results.
_SHARED_RESULTS_KEY = "results of the built-in data sets"



def is_active(session: str) -> bool:
    """Whether this browser session is connected (always, outside a server)."""
    from streamlit import runtime

    return not runtime.exists() or runtime.get_instance().is_active_session(session)


def _parse_minutes(text: str) -> float:
    try:
        minutes = float(text)
    except ValueError:
        minutes = float("nan")
    if not minutes > 0:
        raise ValueError(f"{IDLE_ENV}: not a positive number of minutes: {text!r}")
    return minutes


def settings_problems() -> list[str]:
    """The operator's settings that cannot be read (their defaults are used instead)."""
    problems = []
    for env, parse in ((BUDGET_ENV, parse_size), (IDLE_ENV, _parse_minutes),
                       (CELL_ENV, parse_cell)):
        text = os.environ.get(env)
        if text:
            try:
                parse(text)
            except ValueError as err:
                problems.append(str(err))
    return problems


def table_allowance(session: str, raw: bytes) -> int:
    """The most bytes the table of the upload ``raw`` may take: the room this session has
    beside the others' data and reservations, less what reading takes (:data:`LOADING`),
    divided by :data:`FOOTPRINT`."""
    room = LEDGER.room(session, budget()) - LOADING * len(raw)
    return max(0, int(room / FOOTPRINT))


def idle_seconds() -> float:
    """How long a session may hold data unused (``SDC_IDLE_MINUTES``, default 60)."""
    try:
        return 60.0 * _parse_minutes(os.environ[IDLE_ENV])
    except (KeyError, ValueError):
        return 60.0 * IDLE_MINUTES


def held_bytes(df: pd.DataFrame) -> int:
    """What a session holding ``df`` takes in the server (:data:`FOOTPRINT`)."""
    return int(FOOTPRINT * memory_bytes(df))


def share_built_in(key: str, table_bytes: int, table: Any = None) -> None:
    """Count the built-in data set ``key``, whose ``table`` takes ``table_bytes``, once for the
    server (:meth:`Ledger.share`): its table and the results of one session's work
    (:data:`FOOTPRINT`), and the bound of what the shared caches keep of the results of all
    the sessions that use a built-in data set (:data:`SHARED_RESULTS` times the largest)."""
    LEDGER.share(f"built-in data set {key}", int(FOOTPRINT * table_bytes), table)
    LEDGER.share(_SHARED_RESULTS_KEY, int(SHARED_RESULTS * table_bytes))


def estimate_upload(raw: bytes, name: str, read: Callable[[bytes, str], pd.DataFrame]) -> int:
    """What holding the upload ``raw`` will take: the table parsed from its first
    :data:`SAMPLE_ROWS` lines (text files) scaled to the file's size, times
    :data:`FOOTPRINT`. Binary formats (Excel, Parquet, Stata, SPSS) are compressed in ways a
    prefix cannot tell: their table is taken as ten times their size."""
    text = name.lower().endswith((".csv", ".tsv", ".txt"))
    if not text:
        return int(FOOTPRINT * 10 * len(raw))
    cut = _line_prefix(raw, SAMPLE_ROWS + 1, SAMPLE_BYTES)
    if cut >= len(raw):
        return held_bytes(read(raw, name))
    sample = read(raw[:cut], name) if cut else raw[:0]
    if len(sample) == 0:
        return int(FOOTPRINT * 10 * len(raw))
    return int(FOOTPRINT * memory_bytes(sample) * len(raw) / cut)


def upload_need(raw: bytes, name: str, read: Callable[[bytes, str], pd.DataFrame]) -> int:
    """What to admit for an upload: what it will hold (:func:`estimate_upload`) and, for the
    time it is read, :data:`LOADING` times its size."""
    return estimate_upload(raw, name, read) + int(LOADING * len(raw))


def _line_prefix(raw: bytes, lines: int, most: int) -> int:
    """Bytes of the first ``lines`` lines, or of the whole lines within the first ``most``
    bytes if fewer (0 when the first line is longer); the whole file when it is no longer."""
    if len(raw) <= most:
        return len(raw)
    at = 0
    for _ in range(lines):
        nl = raw.find(b"\n", at, most)
        if nl < 0:
            return at
        at = nl + 1
    return at


def object_bytes(obj: Any, skip: Iterable[Any] = ()) -> int:
    """The bytes that ``obj`` and what it reaches take, once each: the sum, over the objects
    reached from ``obj`` (through containers, attributes and slots, a function's closure and
    defaults, a bound method's object) except ``skip`` and what they reach only through it,
    of ``sys.getsizeof(o)``, with a table's deep memory (:func:`memory_bytes`) and an array's
    buffer (``nbytes``) for those. Modules, classes and code, shared by every session, are
    not counted."""
    seen = {id(o) for o in skip}
    todo = [obj]
    total = 0
    while todo:
        o = todo.pop()
        if id(o) in seen or isinstance(o, (ModuleType, type, BuiltinFunctionType)):
            continue
        seen.add(id(o))
        if isinstance(o, (pd.DataFrame, pd.Series, pd.Index)):
            total += int(o.memory_usage(deep=True).sum()) if isinstance(o, pd.DataFrame) else \
                int(o.memory_usage(deep=True))
            continue
        if isinstance(o, np.ndarray):
            total += sys.getsizeof(o) + (o.nbytes if o.base is None else 0)
            if o.dtype == object:
                todo.extend(o.ravel().tolist())
            continue
        total += sys.getsizeof(o)
        if isinstance(o, (str, bytes, bytearray, int, float, complex, bool)) or o is None:
            continue
        if isinstance(o, dict):
            todo.extend(o.keys())
            todo.extend(o.values())
        elif isinstance(o, (list, tuple, set, frozenset)):
            todo.extend(o)
        elif isinstance(o, FunctionType):
            todo.extend(_cells(o))
            todo.extend(o.__defaults__ or ())
            todo.extend((o.__kwdefaults__ or {}).values())
        elif isinstance(o, MethodType):
            todo.extend((o.__self__, o.__func__))
        elif isinstance(o, partial):
            todo.extend((o.func, o.args, o.keywords))
        else:
            if isinstance(held := getattr(o, "__dict__", None), dict):
                todo.append(held)
            todo.extend(getattr(o, slot) for cls in type(o).__mro__
                        for slot in _slots(cls) if hasattr(o, slot))
    return total


def _cells(fn: FunctionType) -> list[Any]:
    """What a function's closure holds (an empty cell holds nothing)."""
    held = []
    for cell in fn.__closure__ or ():
        with suppress(ValueError):
            held.append(cell.cell_contents)
    return held


def _slots(cls: type) -> tuple[str, ...]:
    """The slot names a class itself declares (not its instance dict nor weak references)."""
    slots = cls.__dict__.get("__slots__", ())
    names = (slots,) if isinstance(slots, str) else tuple(slots)
    return tuple(n for n in names if n not in ("__dict__", "__weakref__"))


class Freeable(Protocol):
    """A session's table holder (:class:`ui.logic.session.Table`): freeing sets ``df`` to None."""

    df: Any


@dataclass
class Entry:
    """One session's data: what it takes, what it is called, its table, when it was last
    used."""

    held: int
    name: str
    table: Freeable
    seen: float
    #: when the session was first found disconnected (None while connected)
    away_since: float | None = None


class Ledger:
    """The sessions that hold data of their own, what they hold, and the data the server holds
    once for all of them (:meth:`share`); safe to share between the server's threads. Sessions
    are named by Streamlit's session id."""

    def __init__(self, stored: Callable[[], int] = lambda: 0,
                 in_store: Callable[[str, str], bool] = lambda session, upload: False) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, Entry] = {}
        self._freed: dict[str, str] = {}  # session → why its data was freed
        self._reserved: dict[str, tuple[int, float]] = {}  # session → (bytes, when) admitted
        self._shared: dict[str, int] = {}  # key → bytes, held once for every session
        self._arriving: dict[tuple[str, str], int] = {}  # (session, file) → bytes reserved
        self._stored = stored  # the bytes of the uploads Streamlit keeps, every session's
        self._in_store = in_store  # whether Streamlit keeps a (session, file) already
        self._kept: dict[str, int] = {}  # key → bytes a closed tab leaves behind (:meth:`keep`)
        self._shared_tables: dict[str, Any] = {}  # key → the table of shared data

    def _raw(self) -> int:
        """The raw bytes of uploads: arriving, and kept by Streamlit (under the lock). An
        upload's request ends just after Streamlit has stored its bytes: from then on they
        count in the store only, not twice."""
        return (sum(n for (session, upload), n in self._arriving.items()
                    if not self._in_store(session, upload)) + self._stored())

    def _left(self) -> int:
        """What closed tabs left behind (:meth:`keep`; under the lock)."""
        return sum(self._kept.values())

    def _beside(self, session: str) -> int:
        """What counts beside a session's own data and reservation: the other sessions' data
        and reservations, the shared data and every upload's raw bytes (under the lock)."""
        return (sum(e.held for s, e in self._entries.items() if s != session)
                + sum(n for s, (n, _) in self._reserved.items() if s != session)
                + sum(self._shared.values()) + self._raw() + self._left())

    def share(self, key: str, held: int, table: Any = None) -> None:
        """Enter data that the server holds once for every session (a built-in data set in its
        cache, ``table``, and what is computed from it in the shared caches): counted once in
        every admission, booked by no session, never freed. Entered again, the larger figure
        counts."""
        with self._lock:
            self._shared[key] = max(held, self._shared.get(key, 0))
            if table is not None:
                self._shared_tables[key] = table

    def tables(self) -> list[Any]:
        """The tables whose bytes the ledger counts: the sessions' own and the shared ones
        (what is measured of a closed tab skips them, :meth:`keep`)."""
        with self._lock:
            held = [e.table.df for e in self._entries.values() if e.table.df is not None]
            return held + list(self._shared_tables.values())

    def shared(self) -> int:
        """The bytes of the data held once for every session."""
        with self._lock:
            return sum(self._shared.values())

    def keep(self, key: str, held: int) -> None:
        """Enter what a closed tab leaves behind under ``key`` (its work kept for a reload,
        its downloads until they are deleted): ``held`` bytes (measured without the tables
        counted already, :meth:`tables`), replacing what ``key`` had; 0 drops the key.
        Counted in every admission, until dropped."""
        with self._lock:
            if held > 0:
                self._kept[key] = held
            else:
                self._kept.pop(key, None)

    def kept(self) -> int:
        """The bytes entered by :meth:`keep`."""
        with self._lock:
            return sum(self._kept.values())

    def admit(self, session: str, need: int, limit: int, now: float | None = None) -> str | None:
        """None when ``need`` more bytes fit in ``limit`` beside the shared data and the other
        sessions' data and reservations (this session's own entry is replaced by the new data,
        so it does not count), and ``need`` is then reserved for the session until :meth:`hold`
        enters its data or :meth:`cancel` drops it, so that uploads read at the same time cannot
        all be admitted into the same room; else the message that refuses it."""
        with self._lock:
            others = {s: e.held for s, e in self._entries.items() if s != session}
            for s, (n, _) in self._reserved.items():
                if s != session:
                    others[s] = others.get(s, 0) + n
            held, shared = sum(others.values()), sum(self._shared.values())
            raw, left = self._raw(), self._left()
            if shared + held + raw + left + need <= limit:
                self._reserved[session] = (need, time.time() if now is None else now)
                return None
            named = [(what, n) for what, n in (("its built-in data sets", shared),
                                               ("what closed tabs left behind", left)) if n]
            beside = (" (and " + " and ".join(f"{w} {size_text(n)}" for w, n in named) + ")"
                      if named else "")
            if not others and not raw:
                room = (f"the {size_text(max(0, limit - shared - left))} its memory budget of "
                        f"{size_text(limit)} leaves beside "
                        + " and ".join(f"{w} ({size_text(n)})" for w, n in named) if named
                        else f"its memory budget of {size_text(limit)}")
                return (f"this file would take about {size_text(need)} in the server, more "
                        f"than {room}; try a smaller file (or a sample of it)")
            n = len(others)
            holders = [f"{n} other session{'s' if n != 1 else ''} hold{'s' if n == 1 else ''} "
                       f"{size_text(held)}"] if others else []
            holders += [f"uploads hold {size_text(raw)}"] if raw else []
            return (f"the server is busy: {' and '.join(holders)} of its {size_text(limit)} "
                    f"budget{beside}, and this file would take about {size_text(need)}; try a "
                    "smaller file or later")

    def room(self, session: str, limit: int) -> int:
        """What ``limit`` leaves beside the shared data, the other sessions' data and
        reservations, the raw bytes of uploads and what closed tabs left behind."""
        with self._lock:
            return limit - self._beside(session)

    def reserved(self, session: str) -> int:
        """What the session has reserved (0 when nothing)."""
        with self._lock:
            return self._reserved.get(session, (0, 0.0))[0]

    def grow(self, session: str, limit: int, now: float | None = None) -> int:
        """Reserve for the session all the room ``limit`` leaves (:meth:`room`), if that is
        more than it holds reserved, at once; the bytes it then has reserved."""
        with self._lock:
            room = limit - self._beside(session)
            held, at = self._reserved.get(session, (0, time.time() if now is None else now))
            if room > held:
                self._reserved[session] = (room, at)
            return max(room, held)

    def arrive(self, session: str, upload: str, size: int, limit: int) -> str | None:
        """Admit ``size`` raw bytes of an upload (``upload``: its file id) beside everything
        the ledger counts, this session's own data included (it stays until the new file
        replaces it): None and the bytes reserved until :meth:`arrived`, or the message that
        refuses them."""
        with self._lock:
            used = (sum(e.held for e in self._entries.values())
                    + sum(n for n, _ in self._reserved.values())
                    + sum(self._shared.values()) + self._raw() + self._left())
            if used + size <= limit:
                self._arriving[session, upload] = size
                return None
        return (f"the server is busy: its sessions and uploads hold {size_text(used)} of its "
                f"{size_text(limit)} memory budget, and this file's {size_text(size)} do not "
                "fit beside them; try a smaller file or later")

    def arrived(self, session: str, upload: str) -> None:
        """The upload's request is over: its bytes are in Streamlit's upload store, which the
        ledger counts, or gone."""
        with self._lock:
            self._arriving.pop((session, upload), None)

    def cancel(self, session: str) -> None:
        """Drop the session's reservation (its admitted data was not loaded after all)."""
        with self._lock:
            self._reserved.pop(session, None)

    def hold(self, session: str, held: int, name: str, table: Freeable,
             now: float | None = None) -> None:
        """Enter the session's data (replacing what it held before, and its reservation)."""
        with self._lock:
            self._reserved.pop(session, None)
            self._entries[session] = Entry(held, name, table,
                                           time.time() if now is None else now)
            self._freed.pop(session, None)

    def move(self, old: str, new: str, now: float | None = None) -> None:
        """Give the data of the session ``old`` to the session ``new``, which takes its work
        over (:mod:`ui.resume`); ``new`` is in use now."""
        with self._lock:
            entry = self._entries.pop(old, None)
            self._freed.pop(old, None)
            if entry is not None:
                entry.seen, entry.away_since = time.time() if now is None else now, None
                self._entries[new] = entry

    def release(self, session: str) -> None:
        with self._lock:
            self._entries.pop(session, None)

    def touch(self, session: str, now: float | None = None) -> None:
        with self._lock:
            if session in self._entries:
                self._entries[session].seen = time.time() if now is None else now

    def held(self, session: str) -> int:
        """What the session holds of its own (0 for shared data only)."""
        with self._lock:
            entry = self._entries.get(session)
            return entry.held if entry else 0

    def holds(self, session: str) -> bool:
        """Whether the session holds or is loading data of its own."""
        with self._lock:
            return session in self._entries or session in self._reserved

    def total(self) -> tuple[int, int]:
        """(sessions holding or loading data of their own, bytes the ledger counts: what they
        hold or have reserved, the shared data once, the raw bytes of uploads and what closed
        tabs left behind)."""
        with self._lock:
            sessions = self._entries.keys() | self._reserved.keys()
            return len(sessions), (sum(e.held for e in self._entries.values())
                                   + sum(n for n, _ in self._reserved.values())
                                   + sum(self._shared.values()) + self._raw()
                                   + self._left())

    def prune(self, is_active: Callable[[str], bool], idle: float, grace: float,
              now: float | None = None) -> list[str]:
        """Free the data of ended sessions (disconnected for longer than ``grace`` seconds,
        after which Streamlit no longer resumes them) and of sessions idle longer than
        ``idle`` seconds (their table is emptied, so its memory goes even while the browser
        tab stays open); the sessions freed for idleness are told why when they come back."""
        now = time.time() if now is None else now
        with self._lock:
            for s, e in self._entries.items():
                if is_active(s):
                    e.away_since = None
                elif e.away_since is None:
                    e.away_since = now
            gone = [s for s, e in self._entries.items()
                    if e.away_since is not None and now - e.away_since > grace]
            stale = [s for s, e in self._entries.items()
                     if s not in gone and now - e.seen > idle]
            for s in gone + stale:
                entry = self._entries.pop(s)
                entry.table.df = None
                if s in stale:
                    self._freed[s] = (f"{entry.name} was closed after "
                                      f"{idle / 60:g} minutes without use, to free the "
                                      "server's memory for others")
            for s in gone:
                self._freed.pop(s, None)
            for s, (_, at) in list(self._reserved.items()):  # a load that never finished
                if now - at > idle or (not is_active(s) and now - at > grace):
                    del self._reserved[s]
            return gone + stale

    def freed(self, session: str) -> str | None:
        """Why this session's data was freed, once (the message is then forgotten)."""
        with self._lock:
            return self._freed.pop(session, None)



def upload_store_bytes() -> int:
    """The bytes of the uploads Streamlit's upload store keeps, of every session (0 outside a
    server)."""
    from streamlit import runtime

    if not runtime.exists():
        return 0
    stats = runtime.get_instance().uploaded_file_mgr.get_stats()
    return sum(int(getattr(stat, "byte_length", 0)) for family in stats.values() for stat in family)


def in_upload_store(session: str, upload: str) -> bool:
    """Whether Streamlit's upload store keeps the file ``upload`` of ``session``."""
    from streamlit import runtime

    return runtime.exists() and bool(
        runtime.get_instance().uploaded_file_mgr.get_files(session, [upload]))


#: The server's one ledger.
LEDGER = Ledger(upload_store_bytes, in_upload_store)
