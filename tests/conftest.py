"""Shared fixtures (the reference data sets: copies in tests/data and the built-in example) and
the test tiers.

Every test gets exactly one tier marker, set by :func:`pytest_collection_modifyitems`:
``unit``, ``app``, ``server``, ``e2e``, ``spark``, ``package`` or ``corpus``; tests that
measure wall time, CPU time or memory also get ``serial`` and run alone, after the others
(``make test``). ``make test-fast`` runs the ``unit`` tier, which never imports Streamlit.
This module imports no Streamlit either: the AppTest machinery is in tests/apptest.py.

No process a run started outlives it (:func:`pytest_sessionfinish`): a server, its worker
processes, nginx, a browser.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
import time
import uuid
from collections.abc import Coroutine, Generator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import Phase, settings

from bench.server import free_port, live, marked, start_server, stop_server
from sdc_core.data.io import EXAMPLE_PATH, read_table


def plain(text: str) -> str:
    """Markdown source as the reader sees it: user text is shown escaped (``ui.logic.text.md``), so
    AppTest's element values hold a backslash before every special character, and an invisible
    word joiner inside what would be linked by itself (``http:⁠//``)."""
    return re.sub(r"\\(.)", r"\1", text).replace("\u2060", "")


#: ``pytest --hypothesis-profile=no-shrink``: report a failing example at once, unshrunk
settings.register_profile("no-shrink", phases=[Phase.explicit, Phase.reuse, Phase.generate])

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
DATA = TESTS / "data"
SHARED_DATA = ROOT.parent / "shared" / "data"

# -- the tiers ---------------------------------------------------------------------------------

TIERS = ("unit", "app", "server", "e2e", "spark", "package", "corpus")

#: Test modules all of whose tests are in one tier that the rules below would not give them
MODULE_TIERS = {
    "test_package.py": "package",  # builds and installs the wheel in a fresh venv
    "test_corpus.py": "corpus",  # the outside corpus through the command line and every page
    "test_load.py": "server",  # sessions through a real server
    "test_processes.py": "server",  # several real servers and their process trees
    "test_uploads_server.py": "server",  # uploads to a real server under a memory budget
}

#: Test modules that import Streamlit (the pages, the Streamlit glue of ``ui/``, AppTest):
#: their tests are in the ``app`` tier unless a rule before it gives them another
APP_MODULES = frozenset({
    "test_app_a11y.py", "test_app_analyses.py", "test_app_attackers.py", "test_app_buys.py",
    "test_app_callback_guard.py", "test_app_control_ranges.py", "test_app_data.py",
    "test_app_formula_hostile.py", "test_app_hostile_text.py", "test_app_households.py",
    "test_app_lessons.py", "test_app_likert_survey.py", "test_app_names.py",
    "test_app_pages.py",
    "test_app_population.py", "test_app_population_protect.py", "test_app_record_swap.py",
    "test_app_risk_attribute.py", "test_app_risk_release.py", "test_app_server_files.py",
    "test_app_sign_in.py", "test_app_table_headings.py", "test_app_tables.py",
    "test_app_tradeoffs_analyses.py", "test_app_tradeoffs_attribute.py",
    "test_app_undo_bursts.py", "test_downloads.py", "test_fragments.py", "test_input_audit.py",
    "test_ledger_sharing.py", "test_links.py", "test_memory.py",
    "test_resume.py", "test_security_headers.py", "test_server_answers.py",
    "test_st_client.py", "test_warmup.py", "test_workers.py",
})

#: Tests (``module::function``) of other modules that need Streamlit
APP_TESTS = frozenset({
    "test_audit_bound.py::test_a_closed_tab_cancels_its_tables_job",
    "test_audit_bound.py::test_a_closed_tab_cancels_its_differencing_job",
    "test_band_release.py::test_export_says_when_the_steward_picks_midpoints",
    "test_columns.py::test_the_walk_reaches_k5_on_the_protect_page",
})

#: Fixtures that start a real server: a test that uses one is in the ``server`` tier
SERVER_FIXTURES = frozenset({"app_url", "short_wait_url"})

#: Tests that start a server, nginx, strace or a process tree without such a fixture
SERVER_TESTS = frozenset({
    "test_export_offline.py::test_an_export_sends_no_byte_but_to_127_0_0_1_under_strace",
    "test_ledger_sharing.py::"
    "test_two_hundred_sessions_that_connect_and_leave_leave_room_for_an_upload",
    "test_warmup.py::test_a_server_starts_its_workers_before_any_visitor_only_when_warming_up",
})

#: Modules and tests (``module::function``, the module's path in tests/) that measure wall time,
#: CPU time or memory, stop a server and start one on its port again, or need a page change to
#: land while a 50 MB upload is read: they run alone (``-m serial``), not beside another worker
SERIAL = frozenset({
    "test_memory.py", "test_load.py", "test_processes.py", "e2e/test_restart.py",
    "test_uploads_server.py", "test_bombs_capped.py",
    "e2e/test_upload.py::test_leaving_the_page_while_an_upload_loads_keeps_it",
    "e2e/test_disconnect.py::test_closing_the_tab_stops_the_sweep",
    "e2e/test_headers.py::test_every_page_works_on_a_loaded_machine",
    "test_links.py::test_a_recipe_that_unpacks_too_far_is_refused_quickly",
    "test_warmup.py::test_warm_reads_the_example_and_imports_the_pages_modules",
    "test_decoded.py::test_each_bomb_is_refused_within_the_allowance",
    "test_app_server_files.py::test_a_server_file_is_admitted_before_it_is_read",
})


def module_tier(path: Path) -> str | None:
    """The tier of every test of the file ``path`` when its name decides it, else None."""
    if TESTS / "e2e" in path.parents:
        return "e2e"
    return MODULE_TIERS.get(path.name)


def tier(item: pytest.Item) -> str:
    """The tier of a test; the first rule that applies decides:

    1. a file under tests/e2e: ``e2e`` (headless Chromium against a real server);
    2. a module of :data:`MODULE_TIERS`: its tier (``package``, ``corpus``, ``server``);
    3. a test of the Spark engine (``spark`` among its parameters, or the ``spark_session``
       fixture): ``spark`` (a JVM);
    4. a test that uses a fixture of :data:`SERVER_FIXTURES` or is in :data:`SERVER_TESTS`:
       ``server`` (a real ``streamlit run``, nginx, strace or a process tree);
    5. a module of :data:`APP_MODULES` or a test of :data:`APP_TESTS`: ``app`` (Streamlit,
       mostly AppTest);
    6. anything else: ``unit`` (no Streamlit, no server, no subprocess but the command line's).

    tests/test_tiers.py checks that the lists name existing modules and tests, that no module is
    in two of them and that the unit tier imports no Streamlit."""
    path = Path(item.path)
    by_name = module_tier(path)
    if by_name:
        return by_name
    name = f"{path.name}::{getattr(item, 'originalname', item.name)}"
    params = getattr(getattr(item, "callspec", None), "params", {})
    if "spark_session" in item.fixturenames or any(
            isinstance(v, str) and v == "spark" for v in params.values()):
        return "spark"
    if SERVER_FIXTURES & set(item.fixturenames) or name in SERVER_TESTS:
        return "server"
    if path.name in APP_MODULES or name in APP_TESTS:
        return "app"
    return "unit"


def serial(item: pytest.Item) -> bool:
    module = Path(item.path).relative_to(TESTS).as_posix()
    return module in SERIAL or f"{module}::{getattr(item, 'originalname', item.name)}" in SERIAL


def unit_only(config: pytest.Config) -> bool:
    """Whether this run selects the unit tier alone (``-m unit``, ``make test-fast``)."""
    return config.getoption("markexpr", "").strip() == "unit"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """``-m unit`` does not import the modules whose every test is in another tier (so the
    unit tier's run loads no Streamlit)."""
    if not unit_only(config) or collection_path.suffix != ".py":
        return None
    if module_tier(collection_path) or collection_path.name in APP_MODULES:
        return True
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test's tier (:func:`tier`) and ``serial`` mark (:data:`SERIAL`), before ``-m``
    selects."""
    for item in items:
        if item.get_closest_marker(tier(item)) is None:  # tests/e2e marks its own
            item.add_marker(tier(item))
        if serial(item):
            item.add_marker("serial")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """A unit test that loads Streamlit fails: its place is the app tier (:func:`tier`). Seen
    only when nothing loaded Streamlit before, as in ``make test-fast``."""
    before = "streamlit" in sys.modules
    outcome = yield
    if (not before and "streamlit" in sys.modules
            and item.get_closest_marker("unit") is not None):
        raise AssertionError(f"{item.nodeid} is in the unit tier and imported Streamlit: add "
                             "it to APP_MODULES or APP_TESTS in tests/conftest.py")
    return outcome


# -- no process left behind -------------------------------------------------------------------

#: Every process a test run starts has this in its environment, a value of the run's own (set
#: by the run's first process, before it starts any other): whatever its command line (a
#: spawned worker's names no file) and whichever process group it joined
RUN_ENV = "SDC_TEST_RUN"
#: How long the end of a run waits for the processes it started to end (s)
LEFTOVER_WAIT = 15.0


def pytest_configure(config: pytest.Config) -> None:
    """The run's mark (:data:`RUN_ENV`), new for each run (a run inside a test's run has its
    own); pytest-xdist's workers inherit it."""
    if not hasattr(config, "workerinput"):
        os.environ[RUN_ENV] = uuid.uuid4().hex


def command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()[:200]
    except OSError:
        return "(ended)"


def own_tracker() -> int | None:
    """This process's multiprocessing resource tracker (it ends with this process), if any."""
    tracker = sys.modules.get("multiprocessing.resource_tracker")
    return getattr(getattr(tracker, "_resource_tracker", None), "_pid", None)


def end_leftovers(mark: str, wait: float, spare: int | None = None) -> list[str]:
    """The processes marked ``mark`` (:data:`RUN_ENV`) that still run ``wait`` seconds from
    now, but ``spare``, each as its pid and command line; they are then killed."""
    deadline = time.monotonic() + wait
    while ((left := [p for p in marked(RUN_ENV, mark) if p != spare])
           and time.monotonic() < deadline):
        time.sleep(0.2)
    said = [f"{pid} {command_line(pid)}" for pid in left]
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    while live(left) and time.monotonic() < deadline + 5:
        time.sleep(0.05)
    return said


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """At the end of a run (after pytest-xdist's workers have ended): a process the run
    started that still runs fails the run, named with its command line, and is killed."""
    if hasattr(session.config, "workerinput") or RUN_ENV not in os.environ:
        return
    if "ui.infra.workers" in sys.modules:  # this process's own pool (tests run in it)
        sys.modules["ui.infra.workers"].shutdown()
    if "sdc_core.capped" in sys.modules:  # and its capped reader (it ends at exit, after this)
        sys.modules["sdc_core.capped"].stop()
    left = end_leftovers(os.environ[RUN_ENV], LEFTOVER_WAIT, own_tracker())
    if left:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        lines = [f"{len(left)} process(es) the tests started still ran {LEFTOVER_WAIT:g} s "
                 "after the run (now killed):", *left]
        if reporter is not None:
            reporter.line("")
            reporter.write_sep("=", "processes left behind", red=True)
        for line in lines:
            if reporter is not None:
                reporter.write_line(line, red=True)
            else:
                print(line, file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# -- fixtures ------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def apptest_patches(request: pytest.FixtureRequest) -> None:
    """The AppTest patches of tests/apptest.py (:func:`tests.apptest.patch_apptest`) for every
    test of the app and corpus tiers, and for any test once the process has loaded them, through
    the test's ``monkeypatch``: ``monkeypatch.undo()`` lifts them."""
    if ("tests.apptest" not in sys.modules
            and not any(request.node.get_closest_marker(t) for t in ("app", "corpus"))):
        return
    from tests.apptest import patch_apptest

    patch_apptest(request.getfixturevalue("monkeypatch"))


@pytest.fixture(scope="session")
def delete_output_dir() -> None:
    """pytest-playwright empties the output folder (test-results) at the start of each
    session, which is of each xdist worker: after a worker's screenshots, or the parallel run's
    junit XML. ``make test`` empties it once instead."""


@pytest.fixture(scope="session")
def app_url():
    """The address of a real ``streamlit run app.py``, shared by the tests that need one (one
    server a pytest-xdist worker, each on a free port)."""
    port = free_port()
    proc = start_server(port)
    if proc.poll() is not None:  # another process answered on the port
        raise RuntimeError(f"streamlit on port {port} ended at once")
    yield f"http://127.0.0.1:{port}"
    stop_server(proc)


def run_async(coro: Coroutine[Any, Any, Any]) -> Any:
    """``asyncio.run(coro)`` in a thread of its own: when the browser tests run first,
    Playwright's sync API keeps an event loop running in the test thread."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


@pytest.fixture
def sandbox(tmp_path: Path):
    """An empty directory for a hostile payload's marker (tests/formula_corpus.py); it must
    stay empty."""
    box = tmp_path / "sandbox"
    box.mkdir()
    yield box
    assert not list(box.iterdir()), f"a payload wrote {list(box.iterdir())}"


@pytest.fixture(scope="session")
def actg() -> pd.DataFrame:
    return read_table(EXAMPLE_PATH)


@pytest.fixture(scope="session")
def francdat() -> pd.DataFrame:
    return read_table(DATA / "francdat.csv")
