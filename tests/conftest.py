"""Shared fixtures: the reference data sets (copies in tests/data and the built-in example)."""

import asyncio
import re
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import Phase, settings
from streamlit import config as st_config
from streamlit.runtime.scriptrunner import ScriptRunnerEvent
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.local_script_runner import LocalScriptRunner

from bench.server import free_port, start_server, stop_server
from sdc_core.io import EXAMPLE_PATH, read_table


def plain(text: str) -> str:
    """Markdown source as the reader sees it: user text is shown escaped (``ui.logic.text.md``), so
    AppTest's element values hold a backslash before every special character, and an invisible
    word joiner inside what would be linked by itself (``http:⁠//``)."""
    return re.sub(r"\\(.)", r"\1", text).replace("\u2060", "")


#: AppTests keep an uncaught exception's message and traceback (``at.exception``) for the
#: report of a failing test: the shipped config hides them from the browser
#: (``client.showErrorDetails = "none"``, tests/test_hostile_round3.py) and the AppTests run in
#: the checkout read it.
st_config.set_option("client.showErrorDetails", "full")

#: ``pytest --hypothesis-profile=no-shrink``: report a failing example at once, unshrunk
settings.register_profile("no-shrink", phases=[Phase.explicit, Phase.reuse, Phase.generate])

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def app_url():
    """The address of a real ``streamlit run app.py``, shared by the tests that need one."""
    port = free_port()
    proc = start_server(port)
    yield f"http://127.0.0.1:{port}"
    stop_server(proc)


def run_async(coro: Coroutine[Any, Any, Any]) -> Any:
    """``asyncio.run(coro)`` in a thread of its own: when the browser tests run first,
    Playwright's sync API keeps an event loop running in the test thread."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def keep_the_whole_page(monkeypatch: pytest.MonkeyPatch) -> None:
    """A value control of the Protect page reruns its results fragment alone (``st.rerun``
    with the fragment's key): the browser keeps the rest of the page, but AppTest then holds
    only the fragment's elements. After such a run the whole script runs once more, the
    controls as they were and the results from the caches, so that a test reads and moves the
    page as the browser shows it."""
    runner_run, app_run = LocalScriptRunner.run, AppTest._run
    fragment_run = [False]

    def run(self: LocalScriptRunner, *args: Any, **kwargs: Any) -> Any:
        tree = runner_run(self, *args, **kwargs)
        fragment_run[0] = any(data.get("fragment_ids_this_run")
                              for event, data in zip(self.events, self.event_data)
                              if event == ScriptRunnerEvent.SCRIPT_STARTED)
        return tree

    def whole(self: AppTest, widget_state: Any = None, timeout: float | None = None) -> AppTest:
        at = app_run(self, widget_state, timeout)
        if fragment_run[0]:
            at = app_run(self, at._tree.get_widget_states(), timeout)
        return at

    monkeypatch.setattr(LocalScriptRunner, "run", run)
    monkeypatch.setattr(AppTest, "_run", whole)


@pytest.fixture(autouse=True)
def apptest_keeps_the_whole_page(monkeypatch):
    """:func:`keep_the_whole_page` for every test."""
    keep_the_whole_page(monkeypatch)


@pytest.fixture(autouse=True)
def pages_fail_loudly(monkeypatch):
    """In AppTests a page's unexpected error stays an exception (``at.exception``) instead of
    the entry point's friendly message, and so does a widget callback's (``ui.guard``), so no
    test passes over one. Undo it to test the message (``monkeypatch.undo()``)."""
    def reraise(err: Exception) -> None:
        raise err

    monkeypatch.setattr("ui.page.page_failed", reraise)
    monkeypatch.setattr("ui.page.change_failed", reraise)


@pytest.fixture(scope="session")
def actg() -> pd.DataFrame:
    return read_table(EXAMPLE_PATH)


@pytest.fixture(scope="session")
def francdat() -> pd.DataFrame:
    return read_table(DATA / "francdat.csv")
