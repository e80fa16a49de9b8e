"""Reading a file in a child process whose memory is capped: no format's trick takes more.

:func:`read_capped` is :func:`sdc_core.data.io.read_table` run in a short-lived child process whose
writable memory is capped (``RLIMIT_DATA``) at what the caller may still take; the table comes
back in Arrow's columnar form (an IPC stream in an anonymous in-memory file whose descriptor
the child sends) and is rebuilt here. The bounds
of :mod:`sdc_core.data.decoded` stay the fast path that refuses most files before they are read;
the cap is the guarantee for what they miss: a file that needs more is refused with
:class:`OverCap` ("… needs more memory than this session may still use (… MB)") and this
process never holds more than the table the child measured (``max_table``).

**The children.** Every child is forked by one helper process (:func:`serve`), started on
first use with ``subprocess`` (no fork of the caller, whose threads could hold a lock in the
child) and single-threaded: it imports the readers once (numerical libraries limited to one
thread), then forks a child for each request, so a child starts in milliseconds with the
readers loaded. multiprocessing's own fork server is not used: its children would run the
caller's ``__main__`` first (in the dashboard, the page Streamlit installs there, which another
thread may put back while a process starts), and its preloaded modules are one setting for the
whole interpreter. The helper exits when its socket to the process that started it closes,
which the kernel does when that process ends, however it ends (a parent-death signal would
fire when the *thread* that started it ends: in the server, a page's run); each child dies
with the helper (a parent-death signal: the helper has one thread).

**Why RLIMIT_DATA.** A child's cap is its writable private memory at the fork plus ``cap``
(and :data:`BASE` for its threads' stacks and a small file's buffers): the heap, anonymous
mappings (NumPy's and pandas' arrays, Python's objects, Arrow's buffers) and thread stacks,
which is what a reader can make resident. ``RLIMIT_AS`` also counts address space that is only
reserved, never used: the 64 MB glibc reserves for each thread's allocation arena, and the
arenas mimalloc (Arrow's allocator) reserves. Measured on a 25 MB CSV and its Parquet file
(1 million rows, 26 MB as a table), each read by a child capped at 300 MB with Arrow's pools
of 2, 16 and 64 threads: under ``RLIMIT_DATA`` all six read; under ``RLIMIT_AS`` none read with
mimalloc's defaults ("Cannot allocate memory"), and with mimalloc reserving no arena ahead
(:data:`ALLOCATOR`) or the C library's allocator only the 2-thread one did ("realloc of size
262144 failed", "Failed to launch worker thread"). So the cap is ``RLIMIT_DATA``, mimalloc
reserves nothing ahead, and a child runs Arrow with :data:`THREADS` threads whatever the
machine's cores (each thread's stack counts). A child converts the table with one thread, and
one that runs past :data:`DEADLINE` is ended by the kernel.

**The table's form.** Columns travel as Arrow arrays with pandas' metadata (``Int64``,
categories, time zones, ``str`` come back as they were read); an object column (numbers and
text mixed, Python dates, decimals, bytes) as a dense union of one child array per Python type
of its values, so every value comes back as the same kind of value (:func:`to_arrow`,
:func:`from_arrow`). Nothing is unpickled: the child is reading an untrusted file.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sdc_core.data.decoded import MAX_CELL, size_text
from sdc_core.errors import SdcInputError

if TYPE_CHECKING:  # pyarrow is imported where it is used
    import pyarrow as pa

#: Threads of Arrow's pools in a child: each thread's stack (8 MB) counts against the cap.
THREADS = 2
#: Rows of a record batch in the stream a child sends.
BATCH_ROWS = 65_536
#: Environment of the helper: one thread per numerical library, so it forks no thread pool.
THREAD_ENVS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
               "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
#: Arrow's allocator in the helper and its children: its default, mimalloc, told not to
#: reserve its arenas ahead (by default it maps a 1 GiB arena, writable, at its first
#: allocation, all of which counts against ``RLIMIT_DATA``: a 2 kB Parquet file needed a cap of
#: 146 MB); the C library's allocator counts as it is used too but read the 10 GB dictionary
#: file's text 3 to 4 times slower. Arrow's jemalloc, unused, would still start a background
#: thread as pyarrow loads: the helper would fork with two threads.
ALLOCATOR = {"MIMALLOC_ARENA_RESERVE": "0", "JE_ARROW_MALLOC_CONF": "background_thread:false"}
#: What a child may take beyond its cap, whatever the file: the stacks of Arrow's threads
#: (8 MB each, mostly untouched) and a reader's own buffers, which a file's share of the
#: budget does not cover when the file is small (measured: a 600 kB CSV of 20,000 rows needed
#: a cap of 14 MB, 300 rows 1.5 MB; a 2 kB Parquet file 18 MB, the stacks of its two threads).
#: Like the interpreter the child starts with, it is outside the budget.
BASE = 64 * 2**20
#: Seconds a child may take: then the kernel ends it (``SIGALRM``), so that a reader stuck on a
#: lock (a thread it could not start) never holds its caller.
DEADLINE = 600
#: What the helper imports once, before it forks any child.
PRELOAD = ("sdc_core.data.io", "pyarrow.ipc", "pyarrow.parquet", "pyarrow.compute", "openpyxl",
           "pyreadstat")
#: The schema metadata key of the object columns' names and the columns' order.
_BOXED = b"sdc_core.boxed"
#: Python types of a missing value in an object column, and the value each stands for.
_MISSING: dict[str, Any] = {"NoneType": None, "NAType": pd.NA, "NaTType": pd.NaT}
_ROOT = Path(__file__).resolve().parents[1]


class OverCap(SdcInputError):
    """A file whose reading needed more memory than its cap (the child process reached it,
    or ended without an answer).

    Parameters
    ----------
    label : str
        The file's name.
    cap : int
        The child's cap in bytes.
    """

    def __init__(self, label: str, cap: int) -> None:
        self.cap = cap
        super().__init__(f"{label}: reading it needs more memory than this session may still "
                         f"use ({size_text(max(cap, 0))}); try a smaller file (or a sample "
                         "of it)")


# -- the table's form: Arrow, object columns as dense unions ---------------------------------

def _kind(value: object) -> str:
    """The name of a value's type; a NumPy scalar's with ``numpy.`` before it."""
    kind = type(value)
    return f"numpy.{kind.__name__}" if kind.__module__ == "numpy" else kind.__name__


def _box(s: pd.Series) -> pa.Array:
    """An object column as a dense union: a child array per Python type of its values, named
    by the type (missing values: a null child per kind of missing); whole numbers past 64 bits
    as their text, in a child named ``int:text``."""
    import pyarrow as pa

    values = s.to_numpy(dtype=object)
    kinds = np.array([_kind(v) for v in values], dtype=object)
    names, codes = np.unique(kinds, return_inverse=True)
    children, fields = [], []
    for i, kind in enumerate(names):
        group = values[codes == i].tolist()
        if kind in _MISSING:
            children.append(pa.nulls(len(group)))
        else:
            try:
                children.append(pa.array(group))
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
                if kind != "int":
                    raise SdcInputError(f"column '{s.name}' holds values of a kind that cannot "
                                        f"be handed back ({kind})") from None
                children.append(pa.array([str(v) for v in group]))
                kind = "int:text"
        fields.append(str(kind))
    codes = codes.astype(np.int8)
    offsets = np.zeros(len(values), dtype=np.int32)
    for i in range(len(names)):
        at = codes == i
        offsets[at] = np.arange(int(at.sum()), dtype=np.int32)
    return pa.UnionArray.from_dense(pa.array(codes, pa.int8()), pa.array(offsets, pa.int32()),
                                    children, fields)


def _unbox(column: pa.ChunkedArray) -> np.ndarray:
    """The values of a column :func:`_box` made, as Python objects of their types."""
    import pyarrow as pa

    union = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    out = np.empty(len(union), dtype=object)
    if not len(union):
        return out
    codes = union.type_codes.to_numpy(zero_copy_only=False)
    offsets = union.offsets.to_numpy(zero_copy_only=False)  # a row's place in its child
    for i in range(union.type.num_fields):
        kind, child = union.type.field(i).name, union.field(i)
        if kind in _MISSING:
            values: list[Any] = [_MISSING[kind]] * len(child)
        elif kind == "int:text":
            values = [int(v) for v in child.to_pylist()]
        elif kind.startswith("numpy."):
            values = list(np.array(child.to_pylist(), dtype=kind[len("numpy."):]))
        elif kind == "Timestamp" or pa.types.is_timestamp(child.type) and kind != "datetime":
            values = list(child.to_pandas())
        else:
            values = child.to_pylist()
        box = np.empty(len(values), dtype=object)
        box[:] = values
        at = codes == i
        out[at] = box[offsets[at]]
    return out


def to_arrow(df: pd.DataFrame) -> pa.Table:
    """``df`` as an Arrow table that :func:`from_arrow` gives back equal: its columns, dtypes,
    index and, in object columns, the type of every value.

    Raises
    ------
    SdcInputError
        When a column holds values Arrow has no form for (complex numbers, say).
    """
    import pyarrow as pa

    boxed = [c for c in df.columns if df[c].dtype == object]
    try:
        table = pa.Table.from_pandas(df.drop(columns=boxed), preserve_index=None, nthreads=1)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as err:
        raise SdcInputError(f"the table cannot be handed back ({err})") from None
    for c in boxed:
        union = _box(df[c])
        table = table.append_column(pa.field(str(c), union.type), union)
    order = json.dumps({"columns": [str(c) for c in df.columns], "boxed": boxed})
    return table.replace_schema_metadata({**(table.schema.metadata or {}),
                                          _BOXED: order.encode()})


def from_arrow(table: pa.Table) -> pd.DataFrame:
    """The DataFrame :func:`to_arrow` made ``table`` from (the table is used up)."""
    meta = json.loads(table.schema.metadata[_BOXED])
    boxed = {c: _unbox(table.column(c)) for c in meta["boxed"]}
    plain = table.drop_columns(meta["boxed"])
    del table
    df = plain.to_pandas(self_destruct=True, split_blocks=True)
    for c, values in boxed.items():
        df[c] = pd.Series(values, index=df.index, dtype=object)
    return df[meta["columns"]] if boxed else df


# -- the helper that forks the children --------------------------------------------------------

def _die_with(parent: int) -> None:
    """Have this process killed when its parent's thread that forked it ends (Linux), and end
    now if it already has."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(0)


def serve(fd: int) -> None:
    """The helper's loop: a request (its JSON and a socket) on the socket ``fd``, a child
    forked for each; over when ``fd`` closes (the caller has gone)."""
    import importlib

    for module in PRELOAD:
        importlib.import_module(module)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped as they end
    control = socket.socket(fileno=fd)
    me = os.getpid()
    while True:
        message, fds, _, _ = socket.recv_fds(control, 1 << 16, 1)
        if not message:
            return
        if not fds:
            continue
        if os.fork() == 0:
            code = 0
            try:
                control.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                _die_with(me)
                _child(socket.socket(fileno=fds[0]), json.loads(message))
            except BaseException:  # noqa: BLE001 — the caller sees the end of its socket
                code = 1
            finally:
                os._exit(code)
        os.close(fds[0])


def _vm(field: str) -> int:
    """A figure of this process's memory from ``/proc/self/status`` (``VmData``: its writable
    private memory; ``VmRSS``, ``VmHWM``: its resident memory, now and at most), in bytes."""
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status
                    if line.startswith(field + ":"))


#: How near its cap a child's resident memory came for a reader's error to be taken for the
#: cap: a reader that cannot allocate may say only that it could not read (ReadStat: "Unable
#: to read from file", its read callback's bytes refused). Resident memory, not address
#: space: the 64 MB glibc reserves for each thread's arena would make any error look so.
NEAR = 32 * 2**20


#: What the readers' own errors say of a failed allocation (pandas' C parser: "C error: out
#: of memory"; ReadStat: "Unable to allocate memory"; Arrow and Python when a thread's stack
#: cannot be mapped: "Failed to launch worker thread", "can't start new thread").
_NO_MEMORY = re.compile(r"out of memory|unable to allocate|cannot allocate|bad_alloc"
                        r"|failed to launch worker thread|can't start new thread", re.I)


def _over_memory(err: BaseException) -> bool:
    """Whether an error is, or was raised while handling, a failed allocation: a
    ``MemoryError``, or a reader's error that says so (the reader's own text, not the
    message naming the file)."""
    seen: BaseException | None = err
    while seen is not None:
        if isinstance(seen, MemoryError) or (not isinstance(seen, SdcInputError)
                                             and _NO_MEMORY.search(str(seen))):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _child(sock: socket.socket, request: dict[str, Any]) -> None:
    """A child's work: the cap, the file (its bytes from the socket, or its path), the table
    read and written as an Arrow stream to an anonymous in-memory file whose descriptor is
    sent with ``T``; a refusal as ``E`` and its message; ``M`` when the cap was reached."""
    import pyarrow as pa

    from sdc_core.data.io import read_table

    signal.alarm(DEADLINE)
    pa.set_cpu_count(THREADS)
    pa.set_io_thread_count(THREADS)
    cap = max(int(request["cap"]), 0) + BASE
    limit, reached = _vm("VmData") + cap, _vm("VmRSS") + cap - NEAR
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    try:
        source: bytes | str = request["path"]
        if request["path"] is None:
            source = sock.makefile("rb").read(request["size"])
            if len(source) != request["size"]:
                return
        df = read_table(source, request["name"], max_bytes=request["max_bytes"],
                        max_table=request["max_table"], max_cell=request["max_cell"])
        del source
        table = to_arrow(df)
        del df
        # the table is at most max_table (read_table measured it): it goes to the caller in
        # a file of its own, read there natively, not through the socket
        fd = os.memfd_create("sdc-table", os.MFD_CLOEXEC)
        with pa.OSFile(f"/proc/self/fd/{fd}", "wb") as out, \
                pa.ipc.new_stream(out, table.schema) as writer:
            writer.write_table(table, max_chunksize=BATCH_ROWS)
        socket.send_fds(sock, [b"T"], [fd])
    except SdcInputError as err:
        if _over_memory(err) or _vm("VmHWM") >= reached:
            sock.sendall(b"M")
        else:
            text = str(err).encode("utf-8")
            sock.sendall(b"E" + len(text).to_bytes(4, "big") + text)
    except MemoryError:
        sock.sendall(b"M")


class _Helper:
    """A running helper (:func:`serve`) and the socket its requests go to."""

    def __init__(self) -> None:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        code = (f"import sys; sys.path.insert(0, {str(_ROOT)!r}); "
                "from sdc_core.capped import serve; serve(int(sys.argv[1]))")
        with theirs:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", code, str(theirs.fileno())],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                env={**os.environ, **dict.fromkeys(THREAD_ENVS, "1"), **ALLOCATOR})
        self.sock = mine
        self.lock = threading.Lock()

    def ask(self, request: dict[str, Any]) -> socket.socket:
        """A socket to a new child that works on ``request``."""
        mine, theirs = socket.socketpair()
        with theirs, self.lock:
            socket.send_fds(self.sock, [json.dumps(request).encode()], [theirs.fileno()])
        return mine

    def stop(self) -> None:
        self.sock.close()  # the helper sees the end of its socket and exits
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


_lock = threading.Lock()
_helper: _Helper | None = None


def start() -> None:
    """Start the helper now (it imports the readers, about a second), before a file needs it."""
    _running()


def _running(fresh: bool = False) -> _Helper:
    global _helper
    with _lock:
        if fresh or _helper is None or _helper.proc.poll() is not None:
            if _helper is not None:
                _helper.stop()
            _helper = _Helper()
        return _helper


def stop() -> None:
    """Stop the helper (the next file starts another); at exit, too."""
    global _helper
    with _lock:
        helper, _helper = _helper, None
    if helper is not None:
        helper.stop()


atexit.register(stop)


def _answer(sock: socket.socket) -> pd.DataFrame | None:
    """The child's answer: the table, None when it reached its cap or ended without one."""
    import pyarrow as pa

    status, fds, _, _ = socket.recv_fds(sock, 1, 1)
    try:
        if status == b"E":
            with sock.makefile("rb") as rest:
                size = int.from_bytes(rest.read(4), "big")
                raise SdcInputError(rest.read(size).decode("utf-8", errors="replace"))
        if status != b"T" or not fds:
            return None
        try:
            with pa.OSFile(f"/proc/self/fd/{fds[0]}") as stream:
                return from_arrow(pa.ipc.open_stream(stream).read_all())
        except (pa.ArrowInvalid, OSError):  # a stream that ended early
            return None
    finally:
        for fd in fds:
            os.close(fd)


def read_capped(source: str | Path | bytes, name: str | None = None, *, cap: int,
                max_bytes: int | None = None, max_table: int | None = None,
                max_cell: int = MAX_CELL) -> pd.DataFrame:
    """:func:`sdc_core.data.io.read_table` in a child process whose memory may grow by at most
    ``cap`` bytes: the same table, the same refusals, and past the cap :class:`OverCap`.

    Parameters
    ----------
    source : path or bytes
        The file, or its content.
    name : str, optional
        The file name (needed with bytes: its extension selects the reader).
    cap : int
        Bytes the child may allocate beyond what it holds when it starts (its interpreter and
        the readers, shared with the helper) and :data:`BASE`: the file's bytes, the reader's
        buffers and the table.
    max_bytes, max_table, max_cell
        As :func:`~sdc_core.data.io.read_table` (``max_bytes`` None: its default).

    Returns
    -------
    pandas.DataFrame
        The table :func:`~sdc_core.data.io.read_table` gives.

    Raises
    ------
    OverCap
        When reading needed more than ``cap`` (the message names the file and the cap).
    SdcInputError
        What :func:`~sdc_core.data.io.read_table` refuses, with its message.

    Examples
    --------
    >>> from sdc_core.capped import read_capped
    >>> read_capped(b"age;sex\\n34;f\\n51;m\\n", "tiny.csv", cap=200_000_000)
       age sex
    0   34   f
    1   51   m
    """
    from sdc_core.data.io import MAX_BYTES

    raw = bytes(source) if isinstance(source, (bytes, bytearray)) else None
    label = name or ("uploaded file" if raw is not None else str(source))
    request = {"name": name if raw is not None else (name or str(source)),
               "path": None if raw is not None else str(source),
               "size": None if raw is None else len(raw), "cap": int(cap),
               "max_bytes": MAX_BYTES if max_bytes is None else int(max_bytes),
               "max_table": max_table, "max_cell": int(max_cell)}
    try:
        sock = _running().ask(request)
    except OSError:  # the helper had ended: once more, with a new one
        sock = _running(fresh=True).ask(request)
    start = time.monotonic()
    with sock:
        if raw is not None:
            with suppress(OSError):  # the child stopped reading: its answer says why
                sock.sendall(raw)
        df = _answer(sock)
    if df is not None:
        return df
    if time.monotonic() - start >= DEADLINE:
        raise SdcInputError(f"{label}: reading it took longer than {DEADLINE // 60} minutes, "
                            "the most a file may take; try a smaller file (or a sample of it)")
    raise OverCap(label, cap)
