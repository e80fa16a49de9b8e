"""The server's warm-up (ui.infra.warmup): what it loads before the first visitor, and that a real
server starts its worker processes before any session when it is on, and not when it is off."""

import ast
import functools
import importlib
import os
import sys
import threading
import time
from pathlib import Path

import pytest

from bench.server import children, free_port, start_server, stop_server
from ui.infra import warmup, workers

ROOT = Path(__file__).resolve().parents[1]


def test_the_warm_up_imports_every_module_a_page_imports():
    names = set(warmup.page_modules())
    for path in sorted((ROOT / "views").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "ui":
                for alias in node.names:  # ``from ui import charts``: ui.charts itself
                    assert f"ui.{alias.name}" in names, (path.name, alias.name)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                assert node.module in names, (path.name, node.module)
    assert {"ui.page", "ui.compute", "ui.logic.lessons", "plotly.graph_objects"} <= names
    assert all(importlib.util.find_spec(n) is not None for n in names)


def test_warm_reads_the_example_and_imports_the_pages_modules(monkeypatch):
    from ui import state

    monkeypatch.setenv(workers.WORKERS_ENV, "0")  # no pool: nothing to start
    monkeypatch.setattr(warmup, "RUNTIME_WAIT", 0)  # no server's runtime here
    monkeypatch.setattr(warmup, "VISITOR", threading.Event())  # nobody came yet
    state._example_table.clear()
    warmup.warm()
    assert "ui.page" in sys.modules and "ui.logic.lessons" in sys.modules
    start = time.perf_counter()
    df, _, _, _ = state._example_table("actg175")  # cached by the warm-up: no read
    assert time.perf_counter() - start < 0.05
    assert len(df) == 2139


def test_the_warm_up_gives_way_to_the_first_visitor(monkeypatch):
    """Once a session's run has begun the warm-up stops: no more imports, no data set read,
    no worker started (a warm-up beside the first pages slowed them down)."""
    from ui import state

    done: list[str] = []
    arrived = threading.Event()

    def modules() -> list[str]:
        return ["json", "ui.logic.text", "ui.sidebar"]

    real = importlib.import_module

    def imported(name: str):
        done.append(name)
        if name == "ui.logic.text":
            warmup.visitor()  # a visitor arrives while the warm-up imports this one
        return real(name)

    monkeypatch.setattr(warmup, "RUNTIME_WAIT", 0)
    monkeypatch.setattr(warmup, "VISITOR", arrived)
    monkeypatch.setattr(warmup, "page_modules", modules)
    monkeypatch.setattr(warmup.importlib, "import_module", imported)
    monkeypatch.setattr(state, "_example_table", lambda key: done.append("example"))
    monkeypatch.setattr(workers, "warm", lambda fn: done.append("workers"))
    warmup.warm()
    assert arrived.is_set() and done == ["json", "ui.logic.text"]


def test_the_slider_positions_are_made_until_a_visitor_comes(monkeypatch):
    """Every position, in order; one that fails is logged and the next made; a visitor stops
    them (what is left is computed on demand, as without a warm-up)."""
    made: list[int] = []
    arrived = threading.Event()

    def position(i: int) -> None:
        if i == 1:
            raise ValueError("a lesson's figure could not be made")
        made.append(i)
        if i == 3:
            arrived.set()

    monkeypatch.setattr(warmup, "VISITOR", threading.Event())
    monkeypatch.setattr(warmup, "POSITIONS", {})
    warmup.positions(lambda: (functools.partial(position, i) for i in range(6)))
    assert warmup.warm_positions() == 6 and made == [0, 2, 3, 4, 5]
    made.clear()
    monkeypatch.setattr(warmup, "VISITOR", arrived)
    arrived.clear()
    assert warmup.warm_positions() == 4 and made == [0, 2, 3]


def test_the_warm_up_fills_the_lessons_caches(monkeypatch):
    """The lessons' positions are registered by the pages' state (ui.state): after the
    warm-up every position of each lesson's slider is in its cache."""
    import ui.state  # noqa: F401 — registers them, as the warm-up's imports of the pages do
    from ui.logic import lessons

    assert "ui.state._lesson_positions" in warmup.POSITIONS
    monkeypatch.setattr(warmup, "VISITOR", threading.Event())
    functions = {p.func for p in lessons.slider_positions()}
    for fn in functions:
        fn.cache_clear()
    assert warmup.warm_positions() == len(list(lessons.slider_positions()))
    for fn in functions:
        wanted = sum(p.func is fn for p in lessons.slider_positions())
        assert fn.cache_info().currsize == wanted <= fn.cache_info().maxsize, fn


def test_workers_warm_starts_one_worker_process(monkeypatch):
    workers.shutdown()
    monkeypatch.setenv(workers.WORKERS_ENV, "2")
    try:
        pids = workers.warm(warmup.import_worker_modules)
        assert len(pids) == 1 and os.getpid() not in pids  # a process of its own
        assert workers._pool is not None and workers._manager is not None
    finally:
        workers.shutdown()
    monkeypatch.setenv(workers.WORKERS_ENV, "0")
    assert workers.warm(warmup.import_worker_modules) == []


def worker_processes(pid: int, seconds: float) -> list[int]:
    """The server's child processes (a worker, the manager and multiprocessing's resource
    tracker) once there are at least three, or after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = children(pid)
        if len(found) >= 3:
            return found
        time.sleep(0.2)
    return children(pid)


@pytest.mark.parametrize("warm", [True, False])
def test_a_server_starts_its_workers_before_any_visitor_only_when_warming_up(warm):
    """With the warm-up a worker process and the manager run before anyone opens a page;
    without it, none until a page needs them (the first visitor then waited for them)."""
    port = free_port()
    proc = start_server(port, env={workers.WORKERS_ENV: "2",
                                   warmup.WARMUP_ENV: "1" if warm else "0"})
    try:
        found = worker_processes(proc.pid, 90 if warm else 8)
        assert len(found) >= 3 if warm else found == [], found
    finally:
        stop_server(proc)
