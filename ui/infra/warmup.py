"""What a server does as soon as it starts, before its first visitor: the first page after a
start used to wait for everything a session's first run loads.

A fresh server has imported Streamlit and ``app.py`` only. The first session's run then
imported the pages' modules (statsmodels, SciPy, Plotly), the first computation started a
worker process, which imported the computation in its turn, and the built-in data set was
read and its column kinds inferred; the visitor saw the page's skeletons all that time.
:func:`start` does the same work in a background thread of the server once it is up, in this
order: the modules the pages import (read from ``views/*.py`` and ``ui/page.py``, so a page
that imports more is warmed too), the default built-in data set, one worker process with the
computation's modules, then every position of the lessons' sliders. It stops as soon as a
visitor's first run begins (:func:`visitor`):
what is left is then done on demand, as without it, since a warm-up running beside the
visitor's pages only competes with them for the interpreter and the cores. Nothing is done
twice: a page that needs a module being imported waits for it (Python's import lock).

Setting (environment): ``SDC_WARMUP=0`` leaves it out (``bench/bench_first_page.py`` measures
the first visitor's pages with and without it).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
WARMUP_ENV = "SDC_WARMUP"
#: How long the warm-up waits for the server's runtime to exist (s)
RUNTIME_WAIT = 60
ROOT = Path(__file__).resolve().parents[2]
#: What a worker process's jobs import: the modules of the functions :mod:`ui.compute`, the
#: pages and their caches hand to :func:`ui.infra.workers.run`, the core's and pure ones of
#: :mod:`ui.logic` (no Streamlit, no Plotly: tests/test_layers.py)
WORKER_MODULES = ("sdc_core.risk", "sdc_core.risk.population_risk", "sdc_core.risk.suda2",
                  "sdc_core.sweep.run", "sdc_core.data.io", "sdc_core.recipe", "ui.logic.workbench",
                  "ui.logic.risk_tables")

log = logging.getLogger(__name__)
#: Set once a session's run has begun (:func:`visitor`)
VISITOR = threading.Event()
#: What :func:`warm` calls once the pages' modules are imported, by name: the functions the
#: pages' modules registered (:func:`preload`)
PRELOADS: dict[str, Callable[[], object]] = {}
#: What :func:`warm` makes last, by name: the positions of sliders (:func:`positions`)
POSITIONS: dict[str, Callable[[], Iterable[Callable[[], object]]]] = {}


def preload(fn: Callable[[], T]) -> Callable[[], T]:
    """Have the warm-up call ``fn`` once the pages' modules are imported: a page module fills
    a cache every session reads (:mod:`ui.state` reads the default built-in data set). A
    decorator; the warm-up imports no page module of its own."""
    PRELOADS[f"{fn.__module__}.{fn.__qualname__}"] = fn
    return fn


def page_modules() -> list[str]:
    """The modules the pages and the page set-up import (``from X import …``, ``import X``),
    in the order they first appear."""
    names: dict[str, None] = {}
    for path in [ROOT / "ui" / "page.py", *sorted((ROOT / "views").glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.setdefault(node.module)
                for alias in node.names:  # ``from ui import charts``: a module of its own
                    if _is_module(f"{node.module}.{alias.name}"):
                        names.setdefault(f"{node.module}.{alias.name}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    names.setdefault(alias.name)
    return list(names)


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def import_worker_modules() -> int:
    """A worker's warm-up job: import what its jobs will need; its process id."""
    for name in WORKER_MODULES:
        importlib.import_module(name)
    return os.getpid()


def visitor() -> None:
    """A session's run has begun (``app.py`` says so first thing): the warm-up stops where it
    is, and what it has not done is done on demand, as without it."""
    VISITOR.set()


def warm() -> None:
    """Once the server's runtime is up (the caches of the pages' modules are the runtime's),
    import the pages' modules and call what they registered (:func:`preload`: the default
    built-in data set is read), then start a worker process, which imports the computation's
    modules; until a visitor's first run begins. Then it stops: a warm-up going on beside a
    visitor's pages competes with them for the interpreter and the cores (on 2 cores the
    first Risk page took twice as long as with no warm-up at all). Each part on its own: one
    that fails is logged and the others go on."""
    from streamlit import runtime

    deadline = time.monotonic() + RUNTIME_WAIT
    while not runtime.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    start = time.perf_counter()
    for name in page_modules():
        if VISITOR.is_set():
            log.info("warm-up: stopped for a visitor after %.1f s", time.perf_counter() - start)
            return
        try:
            importlib.import_module(name)
        except Exception:  # a page may import what only its run can: it is imported then
            log.warning("warm-up: could not import %s", name, exc_info=True)
    for name, fn in list(PRELOADS.items()):
        try:
            fn()
        except Exception:
            log.warning("warm-up: %s failed", name, exc_info=True)
    pages = time.perf_counter() - start
    if VISITOR.is_set():
        return
    try:
        from ui.infra import workers

        workers.warm(import_worker_modules)
    except Exception:
        log.warning("warm-up: the worker processes were not started", exc_info=True)
    ready = time.perf_counter() - start
    log.info("warm-up: the pages' modules and the example in %.1f s, a worker process in "
             "%.1f s more", pages, ready - pages)
    made = warm_positions()
    log.info("warm-up: %d positions of sliders in %.1f s", made,
             time.perf_counter() - start - ready)


def positions(fn: Callable[[], Iterable[Callable[[], object]]]
              ) -> Callable[[], Iterable[Callable[[], object]]]:
    """Have the warm-up make, once the worker is started, every call ``fn`` gives: the
    positions of a slider whose results a cache keeps (the Lessons page's: ``ui.state``
    registers them). A decorator; the warm-up imports no page module of its own."""
    POSITIONS[f"{fn.__module__}.{fn.__qualname__}"] = fn
    return fn


def warm_positions() -> int:
    """Each position of the registered sliders (:func:`positions`: the lessons', 180 of them,
    about 3 s of one core: ``bench/bench_lessons.py``), until a visitor's first run begins: a
    class moving a slider together then finds each position computed. How many were made;
    one that fails is logged and the others go on."""
    made = 0
    for fn in list(POSITIONS.values()):
        for position in fn():
            if VISITOR.is_set():
                return made
            try:
                position()
            except Exception:
                log.warning("warm-up: a slider's position failed", exc_info=True)
            made += 1
    return made


def start() -> threading.Thread | None:
    """:func:`warm` in a daemon thread, unless ``SDC_WARMUP=0``."""
    if os.environ.get(WARMUP_ENV, "1").strip() == "0":
        return None
    thread = threading.Thread(target=warm, name="sdc-warmup", daemon=True)
    thread.start()
    return thread
