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

from bench.server import free_port, start_server, stop_server
from sdc_core.io import EXAMPLE_PATH, read_table


def plain(text: str) -> str:
    """Markdown source as the reader sees it: user text is shown escaped (``ui.text.md``), so
    AppTest's element values hold a backslash before every special character, and an invisible
    word joiner inside what would be linked by itself (``http:⁠//``)."""
    return re.sub(r"\\(.)", r"\1", text).replace("\u2060", "")


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


@pytest.fixture(autouse=True)
def pages_fail_loudly(monkeypatch):
    """In AppTests a page's unexpected error stays an exception (``at.exception``) instead of
    the entry point's friendly message, so no test passes over one. Undo it to test the
    message (``monkeypatch.undo()``)."""
    def reraise(err: Exception) -> None:
        raise err

    monkeypatch.setattr("ui.page.page_failed", reraise)


@pytest.fixture(scope="session")
def actg() -> pd.DataFrame:
    return read_table(EXAMPLE_PATH)


@pytest.fixture(scope="session")
def francdat() -> pd.DataFrame:
    return read_table(DATA / "francdat.csv")
