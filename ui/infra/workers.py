"""Pure computation outside the server's interpreter lock: one pool of worker processes.

Streamlit runs every session's script in a thread of one Python process, so work that is pure
computation (a sweep, SUDA2) holds the interpreter lock and the server uses about one core
whatever the machine has. :func:`run` hands such a function to a pool of worker processes and
waits for it in the calling thread, where its progress is reported: a Streamlit progress bar
and a Cancel button keep working there. Whatever stops the waiting (the progress callback
raising Streamlit's stop or rerun exception after a Cancel click or when the browser session
ends, any other error) cancels the job: a queued job never starts, a running one stops at its
next progress report.

The pool is created on first use, with the "spawn" start method (the server is multi-threaded:
a forked child could inherit a lock another thread held); each worker runs one BLAS thread.
A spawned process would first run the parent's ``__main__`` as a script, and in the server
that is the page being run (Streamlit installs it as ``__main__``): the processes here are
started with no main module instead, so ``fn`` must come from an importable module.
Progress and cancellation go through a ``multiprocessing`` manager (a queue and an event per
job), also started on first use. An error raised in a worker reaches the caller as the same
exception (an ``SdcInputError`` with its message). A worker that dies (killed, out of memory)
breaks the pool: the job it ran raises :class:`WorkerLost` and the next job gets a new pool.

The worker processes and the manager end with the process that started them, however it ends
(killed by the operator or by the out-of-memory killer, a container stopped; a SIGTERM too:
the server then ends by the signal, without its exit handlers): each runs a watchdog thread
(:func:`watch_parent`) that ends it within :data:`PARENT_POLL` seconds of its parent's end,
even in the middle of a job. Linux's parent-death signal (``PR_SET_PDEATHSIG``) would not do:
it is sent when the *thread* that started the child ends, and the pool starts its workers from
the session thread that submits a job, which ends with its run.

Setting (environment): ``SDC_WORKERS``, the number of worker processes (default: the CPUs this
process may use); ``0`` runs the work in the calling thread, without a pool (tests, debugging).

This module imports no numerical library: a worker imports it (for :func:`_start_worker`)
before numpy, so the thread limits it sets are read when BLAS loads.
"""

from __future__ import annotations

import multiprocessing.context
import os
import queue
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager, suppress
from multiprocessing.managers import SyncManager
from typing import Any, TypeVar, cast

WORKERS_ENV = "SDC_WORKERS"
#: Set to 1 in every worker: the pool already uses every core, one process each
THREAD_ENVS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
               "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
#: How long the waiting loop waits for a progress report before it looks at the job again
POLL_SECONDS = 0.05
#: A worker sends a progress report (and looks whether its job was cancelled) at most this often
REPORT_SECONDS = 0.05
#: How often a worker or the manager looks whether the process that started it is still there (s)
PARENT_POLL = 0.2
#: The exit status of a worker or the manager that ended because its parent had ended
ORPHANED = 70
#: Errors of a manager proxy whose manager process has gone
_MANAGER_GONE = (EOFError, ConnectionError, OSError)

Progress = Callable[[int, int, str], None]
T = TypeVar("T")


class Cancelled(BaseException):
    """Raised in a worker at its first progress report after its job was cancelled (a
    ``BaseException``, like ``KeyboardInterrupt``: no ``except Exception`` of the computation
    holds it back)."""


class WorkerLost(RuntimeError):
    """The worker process running a job ended without an answer."""


LOST = ("The computation stopped: the process running it ended unexpectedly (the server may "
        "have run out of memory). Run it again; if it stops again, try a smaller table or "
        "fewer settings.")


def _parse_workers(text: str) -> int:
    try:
        n = int(text.strip())
    except ValueError:
        n = -1
    if n < 0:
        raise ValueError(f"{WORKERS_ENV}: not a whole number of worker processes "
                         f"(0: none, the work runs in the session's thread): {text!r}")
    return n


def default_workers() -> int:
    """The CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def workers() -> int:
    """The worker processes (``SDC_WORKERS``; default :func:`default_workers`; 0: none)."""
    text = os.environ.get(WORKERS_ENV)
    if text:
        try:
            return _parse_workers(text)
        except ValueError:
            pass
    return default_workers()


def settings_problems() -> list[str]:
    """The operator's settings of this module that cannot be read (their defaults are used
    instead)."""
    text = os.environ.get(WORKERS_ENV)
    if text:
        try:
            _parse_workers(text)
        except ValueError as err:
            return [str(err)]
    return []


_lock = threading.Lock()  # guards the two below: each is created once, by one thread
_pool: ProcessPoolExecutor | None = None
_manager: Any = None  # a started multiprocessing SyncManager


def watch_parent(parent: int) -> threading.Thread:
    """In a child process: end it (exit status :data:`ORPHANED`, at once, whatever its
    threads are doing) as soon as ``parent``, the process that started it, has ended, which
    is when the child is handed to another parent (``os.getppid()`` changes); a daemon thread
    looks every :data:`PARENT_POLL` seconds. Ends the process now if ``parent`` has already
    gone; else the thread."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL)
        os._exit(ORPHANED)

    if os.getppid() != parent:
        os._exit(ORPHANED)
    thread = threading.Thread(target=watch, name="sdc-parent-watch", daemon=True)
    thread.start()
    return thread


def _start_worker(parent: int) -> None:
    """A worker's initializer: one BLAS thread (numpy is not loaded yet), and it ends with
    ``parent`` (:func:`watch_parent`)."""
    os.environ.update(dict.fromkeys(THREAD_ENVS, "1"))
    watch_parent(parent)


def _start_manager(parent: int) -> None:
    """The manager process's initializer: it ends with ``parent`` (:func:`watch_parent`)."""
    watch_parent(parent)


_NO_MAIN = types.ModuleType("__main__")  # no file, no spec: a spawned child runs no script


@contextmanager
def _no_main() -> Iterator[None]:
    """While a process starts: no ``__main__`` for it to run (a page, in the server)."""
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = _NO_MAIN
    try:
        yield
    finally:
        if sys.modules.get("__main__") is _NO_MAIN:  # unless a script run installed its own
            if saved is not None:
                sys.modules["__main__"] = saved
            else:  # there was none (an embedding interpreter): leave none, not a None entry
                del sys.modules["__main__"]


class _Process(multiprocessing.context.SpawnProcess):
    def start(self) -> None:
        with _no_main():
            super().start()


class _Context(multiprocessing.context.SpawnContext):
    """The "spawn" start method, its processes started by :func:`_no_main`."""

    Process = _Process


_CONTEXT = _Context()


def _get_pool(size: int) -> ProcessPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ProcessPoolExecutor(size, _CONTEXT, initializer=_start_worker,
                                        initargs=(os.getpid(),))
        return _pool


def _drop_pool(pool: ProcessPoolExecutor) -> None:
    """Forget a broken pool (the next job creates another)."""
    global _pool
    with _lock:
        if _pool is pool:
            _pool = None
    pool.shutdown(wait=False, cancel_futures=True)


def _get_manager() -> Any:
    global _manager
    with _lock:
        if _manager is None:
            manager = SyncManager(ctx=_CONTEXT)
            manager.start(_start_manager, (os.getpid(),))
            _manager = manager
        return _manager


def _channel() -> tuple[Any, Any]:
    """A new job's progress queue and cancel event (a dead manager is started again once)."""
    manager = _get_manager()
    try:
        return manager.Queue(), manager.Event()
    except _MANAGER_GONE:
        global _manager
        with _lock:
            if _manager is manager:
                _manager = None
        manager = _get_manager()
        return manager.Queue(), manager.Event()


def _job(fn: Callable[..., T], args: tuple, kwargs: dict[str, Any], reports: Any,
         cancel: Any) -> T:
    """What a worker runs: ``fn``, with a progress callback that sends the caller a report at
    most every :data:`REPORT_SECONDS` (and the last one at the end) and stops the job once it
    is cancelled; the queue's last item, None, tells the caller that the job is over."""
    if reports is None:
        return fn(*args, **kwargs)
    if cancel.is_set():  # cancelled while queued but already handed to this worker
        raise Cancelled
    unsent: tuple[int, int, str] | None = None
    sent = 0.0

    def progress(done: int, total: int, label: str) -> None:
        nonlocal unsent, sent
        unsent = (done, total, label)
        if time.monotonic() - sent < REPORT_SECONDS:
            return
        if cancel.is_set():
            raise Cancelled
        reports.put(unsent)
        unsent, sent = None, time.monotonic()

    try:
        result = fn(*args, progress=progress, **kwargs)
        if unsent is not None:
            reports.put(unsent)
        return result
    finally:
        with suppress(*_MANAGER_GONE):
            reports.put(None)


def run(fn: Callable[..., T], /, *args: Any, progress: Progress | None = None,
        **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` in a worker process, waited for in this thread: ``fn`` is a
    function of an importable module (it and its arguments are pickled). With ``progress``,
    ``fn`` gets a ``progress=`` callback of its own; what it reports, ``(done, total,
    label)``, is passed to ``progress`` here, in order: the latest report of those that
    arrived since the last call, and the job's last report at the end. Any exception in this
    thread, ``progress``'s own included, cancels the job. With ``SDC_WORKERS=0``, ``fn`` runs
    here and ``progress`` gets every report."""
    size = workers()
    if size == 0:
        return fn(*args, **kwargs) if progress is None else fn(*args, progress=progress,
                                                                **kwargs)
    reports, cancel = _channel() if progress is not None else (None, None)
    pool = _get_pool(size)
    try:
        future = pool.submit(_job, fn, args, kwargs, reports, cancel)
    except BrokenProcessPool:  # broken by an earlier job: once more, on a new pool
        _drop_pool(pool)
        pool = _get_pool(size)
        future = pool.submit(_job, fn, args, kwargs, reports, cancel)
    finished = False
    try:
        result = _wait(future, reports, progress)
        finished = True
        return result
    except BrokenProcessPool:
        _drop_pool(pool)
        raise WorkerLost(LOST) from None
    finally:
        if not finished:
            future.cancel()  # a job not yet started never starts
            if cancel is not None:
                with suppress(*_MANAGER_GONE):
                    cancel.set()


def _wait(future: Future, reports: Any, progress: Progress | None) -> Any:
    """The job's result, passing its progress reports on while it runs."""
    if reports is None or progress is None:
        return future.result()
    ended = False
    while not ended:
        try:
            item = reports.get(timeout=POLL_SECONDS)
        except queue.Empty:
            if future.done():  # over without its end mark: its worker died
                break
            continue
        latest = None
        while item is not None:  # what else has arrived: only the latest is shown
            latest = item
            try:
                item = reports.get_nowait()
            except queue.Empty:
                break
        ended = item is None
        if ended and future.exception() is not None:
            break
        if latest is not None:
            progress(*latest)
    return future.result()


def warm(fn: Callable[[], Any], timeout: float = 300) -> list[Any]:
    """Start the pool with one worker process, which runs ``fn`` (importing what jobs will
    need), and the manager, before any job needs them (:mod:`ui.infra.warmup`); what ``fn``
    returned, in a list (empty with ``SDC_WORKERS=0``). One process only: the first pages'
    computations need one, the others start when jobs run side by side, as before. Warming
    them all at once held the first visitor's Risk page up (its jobs waited behind theirs,
    and three processes shared two cores)."""
    if workers() == 0:
        return []
    out = _get_pool(workers()).submit(_job, fn, (), {}, None, None).result(timeout)
    _get_manager()
    return [out]


def shutdown() -> None:
    """Stop the pool and the manager, waiting for running jobs (the next job starts them
    again)."""
    global _pool, _manager
    with _lock:
        pool, manager, _pool, _manager = _pool, _manager, None, None
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)
    if manager is not None:
        manager.shutdown()


# -- a data set's table, sent to a worker once ---------------------------------------------

#: In a worker process: the tables it was sent, by table id (a data set's content hash, or a
#: protected table's :func:`ui.compute.protected_id`), the last used last
_HELD: dict[str, tuple[Any, int]] = {}  # table id → (table, its bytes)
#: A worker keeps at most this many tables, of at most this many bytes in all (the least
#: recently used goes first; the last one is always kept)
HELD_TABLES, HELD_BYTES = 8, 256 * 2**20


class _Missing:
    """A worker's answer when it does not hold the table asked for."""


def _on_table(table_id: str, table: Any, fn: Callable[..., T], args: tuple,
              kwargs: dict[str, Any], progress: Progress | None = None) -> T | _Missing:
    """What a worker runs for :func:`run_on`: ``fn`` on the table it holds under
    ``table_id`` (``table`` None) or on ``table``, which it then holds (its bytes counted
    once, when it arrives); ``progress`` passed on to ``fn``."""
    if progress is not None:
        kwargs = {**kwargs, "progress": progress}
    held = _HELD.pop(table_id, None)
    if table is not None:
        held = (table, int(table.memory_usage(deep=True).sum()))
    elif held is None:
        return _Missing()
    _HELD[table_id] = held
    while len(_HELD) > 1 and (len(_HELD) > HELD_TABLES
                              or sum(n for _, n in _HELD.values()) > HELD_BYTES):
        del _HELD[next(iter(_HELD))]
    return fn(held[0], *args, **kwargs)


def run_on(table_id: str, table: Any, fn: Callable[..., T], /, *args: Any,
           progress: Progress | None = None, **kwargs: Any) -> T:
    """``fn(table, *args, **kwargs)`` in a worker process (:func:`run`), the table sent only
    to a worker that does not hold it yet under ``table_id``: a slider move sends the recipe,
    not the data set (pickling a 100,000-record table took 14 ms of the server's time). With
    ``progress``, as :func:`run`'s (an exception it raises cancels the job)."""
    if workers() == 0:
        if progress is not None:
            kwargs = {**kwargs, "progress": progress}
        return fn(table, *args, **kwargs)
    got = run(_on_table, table_id, None, fn, args, kwargs, progress=progress)
    if isinstance(got, _Missing):
        got = run(_on_table, table_id, table, fn, args, kwargs, progress=progress)
    return cast("T", got)  # sent with the table, a worker answers with fn's result
