"""A real ``streamlit run app.py`` on a free 127.0.0.1 port, and what the process uses: for the
load benchmark and the tests that need a real server.

A server is started in a process group of its own, which its worker processes join:
:func:`stop_server` ends the whole group, so that no process of a server outlives its test or
benchmark, whatever the server did on its way out."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from ui.infra.workshop import group  # the running processes of a process group

ROOT = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def alive(port: int) -> bool:
    """Whether the server on ``port`` answers its health check."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=5) as r:
            return r.read() == b"ok"
    except OSError:
        return False


def start_server(port: int, env: dict[str, str] | None = None,
                 log: Path | None = None, root: Path = ROOT) -> subprocess.Popen:
    """``streamlit run app.py`` of the checkout ``root`` on 127.0.0.1:``port`` (with ``env``
    added to the environment), once it answers its health check, in a process group of its
    own (its pid; stop it with :func:`stop_server`). Its output goes to ``log``, or to an
    anonymous temporary file: a pipe that nobody reads would fill and stall the server."""
    # the server writes to it for as long as it runs, after this returns: no ``with``
    out = log.open("wb") if log else tempfile.TemporaryFile()  # noqa: SIM115
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(root / "app.py"),
         "--server.headless", "true", "--server.address", "127.0.0.1",
         "--server.port", str(port), "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"],
        cwd=root, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})},
        start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if alive(port):
            return proc
        time.sleep(0.2)
    stop_server(proc, grace=0)
    out.seek(0)
    raise RuntimeError("streamlit did not become healthy:\n"
                       + out.read()[-4000:].decode(errors="replace"))


def stop_server(proc: subprocess.Popen, grace: float = 60) -> None:
    """Stop a process started in a process group of its own (``start_new_session``: a
    server of :func:`start_server`, nginx): SIGTERM, up to ``grace`` seconds to end, then
    SIGKILL to whatever is left of its group (its worker processes and any process they
    started), until none of it runs."""
    proc.terminate()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace)
    kill_group(proc.pid)
    proc.wait()


def live(pids: list[int]) -> list[int]:
    """Those of ``pids`` that still run (a zombie, ended and not yet waited for, does not)."""
    running = []
    for pid in pids:
        try:
            state = _stat_fields(pid)[0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if state not in ("Z", "X"):
            running.append(pid)
    return running


def kill_group(pgid: int, within: float = 10) -> None:
    """SIGKILL to every process of the group ``pgid``, again until none runs (a process may
    start another as it goes); RuntimeError if some still run after ``within`` seconds."""
    deadline = time.monotonic() + within
    while True:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        left = group(pgid)
        if not left:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"processes of group {pgid} still run: {left}")
        time.sleep(0.05)


def started(pid: int) -> int:
    """When the process ``pid`` started, in clock ticks since the machine booted."""
    return int(_stat_fields(pid)[19])


def _older_session(pid: int, since: int) -> bool:
    """Whether the session of ``pid`` is older than ``since``: it is this process's own session,
    or its leader runs outside this process namespace (session id 0), or its leader runs and
    started before ``since``."""
    leader = int(_stat_fields(pid)[3])
    if leader in (0, os.getsid(0)) and leader != pid:
        return True
    try:
        return leader != pid and started(leader) < since
    except (OSError, IndexError):  # the leader has ended
        return False


def of_checkout(root: Path, since: int) -> list[int]:
    """The running processes, but this one, started at ``since`` (:func:`started`) or later,
    whose command line or working directory names the checkout ``root`` (a server names its
    ``app.py``; its worker processes run in its directory), but those of a session begun
    before ``since``: a server started in a session of its own (:func:`start_server`) cannot
    put a process into an older session (a process only leaves its session for a new one), so
    such a process is an onlooker's (a shell opened in the checkout), not the server's."""
    here = str(root)
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            if started(int(entry)) < since or _older_session(int(entry), since):
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                words = f.read().decode(errors="replace").split("\0")
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except (OSError, IndexError):  # ended, or another user's
            continue
        if cwd == here or cwd.startswith(here + os.sep) or any(
                w == here or w.startswith(here + os.sep) for w in words):
            found.append(int(entry))
    return live(found)


def marked(name: str, value: str) -> list[int]:
    """The running processes (of this user) whose environment has ``name=value``: every
    process started by one that had it, unless it was started with another environment."""
    want = f"{name}={value}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if want in f.read().split(b"\0"):
                        found.append(int(entry))
            except OSError:  # ended, or another user's
                continue
    return live(found)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (``/proc/<pid>/stat`` fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def memory_kb(pid: int, field: str) -> int:
    """``VmRSS`` (resident now) or ``VmHWM`` (peak resident) of a process, in kB."""
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))


# -- a process and its descendants: the server with its worker processes -----------------------

def _stat_fields(pid: int) -> list[str]:
    """``/proc/<pid>/stat`` from field 3 on (after the command name, which may hold spaces)."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def _has_children_files() -> bool:
    return os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def children(pid: int) -> list[int]:
    """The live child processes of ``pid``: from ``/proc/<pid>/task/<tid>/children``, or, on a
    kernel without those files (``CONFIG_PROC_CHILDREN`` off), from every process's parent
    in ``/proc/<n>/stat``."""
    if not _has_children_files():
        return _by_parent().get(pid, [])
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return []
    found: list[int] = []
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                found += [int(c) for c in f.read().split()]
        except (FileNotFoundError, ProcessLookupError):  # the thread ended meanwhile
            continue
    return found


def _by_parent() -> dict[int, list[int]]:
    """Every live process, by its parent's pid (``/proc/<n>/stat`` field 4)."""
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                kids.setdefault(int(_stat_fields(int(entry))[1]), []).append(int(entry))
            except (FileNotFoundError, ProcessLookupError, IndexError):
                continue
    return kids


def tree(pid: int) -> list[int]:
    """``pid`` and all its live descendants."""
    by_parent = None if _has_children_files() else _by_parent()
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children(p) if by_parent is None else by_parent.get(p, [])
    return out


def tree_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and all its descendants: each live one's own
    (``/proc/<n>/stat`` fields 14–15) and what its children that already ended and were
    waited for used (fields 16–17, ``cutime`` + ``cstime``), so that worker processes that have
    finished still count. A process that ends between two reads may be missed or counted
    twice (its time moves to its parent's ``cutime``); over a benchmark's seconds that is a
    small error."""
    total = 0
    for p in tree(pid):
        try:
            f = _stat_fields(p)
        except (FileNotFoundError, ProcessLookupError):
            continue  # ended since it was listed
        total += int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])
    return total / TICK


def tree_memory_kb(pid: int, field: str) -> int:
    """``VmRSS`` or ``VmHWM`` summed over a process and its live descendants, in kB. A sum of
    peaks (``VmHWM``) is an upper bound of the tree's peak: the processes need not have peaked
    at the same moment; pages shared between processes count once in each. Processes that have
    ended are not counted (see :class:`TreeSampler`)."""
    total = 0
    for p in tree(pid):
        try:
            total += memory_kb(p, field)
        except (FileNotFoundError, ProcessLookupError, StopIteration):
            continue  # ended, or a zombie (which has no memory lines)
    return total


class TreeSampler:
    """Samples the memory of a process tree every ``every`` seconds, in a thread, while
    benchmark load runs: ``peak_sum_kb`` is the largest sum of ``VmRSS`` seen at one moment (a
    lower bound of the tree's peak, as fine as the sampling), ``peaks_kb`` each process's
    largest ``VmHWM`` seen (workers that ended since still count, if they lived past one
    sample), whose sum is an upper bound."""

    def __init__(self, pid: int, every: float = 0.5) -> None:
        self.pid, self.every = pid, every
        self.peak_sum_kb = 0
        self.peaks_kb: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TreeSampler:
        self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.sample()

    def sample(self) -> None:
        now = 0
        for p in tree(self.pid):
            try:
                rss, hwm = memory_kb(p, "VmRSS"), memory_kb(p, "VmHWM")
            except (FileNotFoundError, ProcessLookupError, StopIteration):
                continue
            now += rss
            self.peaks_kb[p] = max(self.peaks_kb.get(p, 0), hwm)
        self.peak_sum_kb = max(self.peak_sum_kb, now)

    @property
    def workers(self) -> int:
        """The descendants seen (worker processes, a multiprocessing manager, …)."""
        return len(self.peaks_kb) - 1

    @property
    def sum_of_peaks_kb(self) -> int:
        return sum(self.peaks_kb.values())

    @property
    def worker_peak_kb(self) -> int:
        """The largest peak of one descendant (0 without any)."""
        return max((kb for p, kb in self.peaks_kb.items() if p != self.pid), default=0)
