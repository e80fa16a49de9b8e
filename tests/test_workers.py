"""The worker pool (ui.infra.workers): same results as in the session's thread, progress in the
calling thread, cancelling, errors, SDC_WORKERS=0 (an unreadable SDC_WORKERS is
tests/test_server_settings.py's)."""

import os
import signal
import subprocess
import sys
import threading
import time
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.runtime.scriptrunner_utils.exceptions import StopException

from bench.common import survey_table
from bench.server import ROOT, live, tree
from sdc_core.errors import SdcInputError
from sdc_core.risk.suda2 import suda2
from sdc_core.sweep.run import run_sweep
from tests.sweep_grid import GRID, QI
from ui.infra import workers

SURVEY_QI = ["age", "sex", "region"]
#: 40 settings of a few tens of milliseconds each on the survey table
LONG_GRID = {"seeds": 1, "numeric": ["age", "income", "weight"], "settings": [
    {"method": "band", "column": "age", "param": "width", "values": list(range(2, 42))}]}


# Run in the workers: module-level, so a spawned process imports them from here.
def pid() -> int:
    return os.getpid()


def logged_sweep(log: str, *args, progress):
    """``run_sweep`` that also writes every evaluation it finishes to ``log``."""
    def report(done: int, total: int, label: str) -> None:
        with open(log, "a") as f:
            f.write(f"{done}\n")
        progress(done, total, label)

    return run_sweep(*args, progress=report)


def blas_threads() -> tuple[str | None, int]:
    """The worker's BLAS setting, and its threads after a matrix product: those named as the
    process (OpenBLAS's are; a library's own, such as jemalloc's, have their names), but the
    threads Python started besides the main one (the watchdog of ``watch_parent``)."""
    a = np.ones((300, 300))
    a @ a
    tasks = Path("/proc/self/task")
    name = Path("/proc/self/comm").read_text()
    ours = {t.native_id for t in threading.enumerate() if t is not threading.main_thread()}
    return (os.environ.get("OPENBLAS_NUM_THREADS"),
            sum((t / "comm").read_text() == name and int(t.name) not in ours
                for t in tasks.iterdir()))


def die() -> None:
    os._exit(3)


def spin(seconds: float, progress) -> int:
    """Busy in pure Python for ``seconds``, reporting the worker's pid as its label."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        progress(0, 1, str(os.getpid()))
    return os.getpid()


#: A process that runs :func:`spin` in a pool of two workers (with progress: the manager
#: starts too) and prints the busy worker's pid
BUSY_PARENT = """
import os, sys
sys.path.insert(0, {root!r})
os.environ["SDC_WORKERS"] = "2"
from ui.infra import workers
from tests.test_workers import spin
said = []
def show(done, total, label):
    if not said:
        said.append(label)
        print(label, flush=True)
workers.run(spin, 600, progress=show)
"""


@pytest.fixture(scope="module", autouse=True)
def pool():
    """Two workers for this module's tests; the pool is stopped after them."""
    saved = os.environ.get(workers.WORKERS_ENV)
    workers.shutdown()
    os.environ[workers.WORKERS_ENV] = "2"
    yield
    workers.shutdown()
    if saved is None:
        os.environ.pop(workers.WORKERS_ENV)
    else:
        os.environ[workers.WORKERS_ENV] = saved


@pytest.fixture(scope="module")
def survey() -> pd.DataFrame:
    return survey_table(50_000, 0)


def test_the_work_runs_in_another_process():
    assert workers.run(pid) != os.getpid()


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="Linux's /proc")
def test_a_worker_runs_one_blas_thread():
    assert workers.run(blas_threads) == ("1", 1)


def test_a_new_process_runs_no_page(tmp_path, monkeypatch):
    """In the server, ``__main__`` is the page being run (Streamlit installs it): a spawned
    process would run it first."""
    ran = tmp_path / "ran"
    page = tmp_path / "page.py"
    page.write_text(f"open({str(ran)!r}, 'w').close()\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(page)
    workers.shutdown()
    monkeypatch.setitem(sys.modules, "__main__", main)
    assert workers.run(pid) != os.getpid()
    workers.run(run_sweep, survey_table(100, 0), SURVEY_QI, LONG_GRID, progress=print)  # manager
    assert sys.modules["__main__"] is main
    assert not ran.exists()


def test_a_sweep_and_suda2_give_what_they_give_in_the_thread(actg):
    here = run_sweep(actg, QI, GRID)
    there = workers.run(run_sweep, actg, QI, GRID)
    pd.testing.assert_frame_equal(there.table, here.table)
    assert (there.asked, there.evaluated, there.best, there.loss) == (
        here.asked, here.evaluated, here.best, here.loss)
    target = {**GRID, "combine": True, "target": {"measure": "linkage_risk_percent",
                                                  "at_most": 2.0}}
    here, there = run_sweep(actg, QI, target), workers.run(run_sweep, actg, QI, target)
    pd.testing.assert_frame_equal(there.table, here.table)
    assert there.best == here.best is not None
    here = suda2(actg, QI, 0.1)
    there = workers.run(suda2, actg, QI, 0.1)
    for field in ("score", "dis_score", "contribution", "msu_records", "msu_subsets"):
        np.testing.assert_array_equal(getattr(there, field), getattr(here, field))
    assert there.summary() == here.summary()


def test_progress_arrives_in_the_calling_thread_in_order_up_to_the_total(actg):
    calls = []
    workers.run(run_sweep, actg, QI, GRID,
                progress=lambda done, total, label: calls.append(
                    (threading.get_ident(), done, total, label)))
    assert calls and {c[0] for c in calls} == {threading.get_ident()}
    done = [c[1] for c in calls]
    assert done == sorted(set(done))  # increasing: the latest of what arrived, in order
    total = 1 * 3 + 5 * 6  # band: 3 settings, one run each; PRAM: 6 settings over 5 seeds
    assert {c[2] for c in calls} == {total} and done[-1] == total
    assert all(isinstance(c[3], str) and c[3] for c in calls)


def test_an_exception_in_progress_cancels_the_job(survey, tmp_path):
    log = tmp_path / "log"
    workers.shutdown()
    try:
        os.environ[workers.WORKERS_ENV] = "1"  # one worker: a next job waits for this one
        workers.run(pid)  # the worker is up

        def stop(done: int, total: int, label: str) -> None:
            raise StopException  # what Streamlit raises when the run is stopped

        with pytest.raises(StopException):
            workers.run(logged_sweep, str(log), survey, SURVEY_QI, LONG_GRID, progress=stop)
        assert workers.run(pid) != os.getpid()  # usable: and the cancelled job has ended
        done = Path(log).read_text().split()
        assert 1 <= len(done) <= 6, done  # of 40 evaluations
        assert len(workers.run(run_sweep, survey, SURVEY_QI, LONG_GRID).table) == 41
    finally:
        workers.shutdown()
        os.environ[workers.WORKERS_ENV] = "2"


def test_an_input_error_in_the_worker_reaches_the_caller_as_it_is(actg):
    grid = {"settings": [{"method": "band", "column": "zzz", "param": "width", "values": [5]}]}
    with pytest.raises(SdcInputError) as here:
        run_sweep(actg, QI, grid)
    with pytest.raises(SdcInputError) as there:
        workers.run(run_sweep, actg, QI, grid, progress=lambda *a: None)
    assert str(there.value) == str(here.value)
    with pytest.raises(SdcInputError, match="takes at most"):
        workers.run(suda2, actg, [f"c{i}" for i in range(100)])


def test_a_dead_worker_is_a_clear_error_and_the_pool_comes_back():
    with pytest.raises(workers.WorkerLost, match="ended unexpectedly"):
        workers.run(die)
    assert workers.run(pid) != os.getpid()


def test_a_killed_parent_takes_its_busy_worker_and_its_manager_with_it():
    """Issue 51: a server killed with SIGKILL (the operator, the out-of-memory killer) left
    its workers and manager running for ever, a worker busy with a job too."""
    proc = subprocess.Popen([sys.executable, "-c", BUSY_PARENT.format(root=str(ROOT))],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        busy = int(proc.stdout.readline())
        children = tree(proc.pid)[1:]  # the workers, the manager, the resource tracker
        assert busy in children and len(children) >= 3, children
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    deadline = time.monotonic() + 5
    while live(children) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = live(children)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == [], f"still running 5 s after their parent was killed: {left}"


def test_watch_parent_ends_a_process_whose_parent_has_gone_already():
    code = ("import sys; sys.path.insert(0, {root!r})\n"
            "from ui.infra import workers\nworkers.watch_parent(1)\nprint('on')")
    done = subprocess.run([sys.executable, "-c", code.format(root=str(ROOT))],
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (workers.ORPHANED, "")


def test_no_workers_runs_in_the_thread(monkeypatch, actg):
    monkeypatch.setenv(workers.WORKERS_ENV, "0")
    assert workers.run(pid) == os.getpid()
    calls = []
    workers.run(run_sweep, actg, QI, GRID, progress=lambda *c: calls.append(
        threading.get_ident()))
    assert len(calls) == 33 and set(calls) == {threading.get_ident()}  # every report
