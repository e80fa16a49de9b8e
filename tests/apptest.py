"""The dashboard in Streamlit's AppTest, for the ``app`` and ``corpus`` tiers (tests/conftest.py).

:func:`app_test` gives a fresh, not yet run AppTest of ``app.py`` (or of a script or function).
Every test of those tiers runs with :func:`patch_apptest` applied by tests/conftest.py, through
its ``monkeypatch``, so ``monkeypatch.undo()`` gives a test the dashboard as users see it.
Importing this module loads Streamlit: the unit tier never does.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from streamlit import config as st_config
from streamlit.runtime.scriptrunner import ScriptRunnerEvent
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.local_script_runner import LocalScriptRunner

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")

#: AppTests keep an uncaught exception's message and traceback (``at.exception``) for the
#: report of a failing test: the shipped config hides them from the browser
#: (``client.showErrorDetails = "none"``, tests/test_hostile_round3.py) and the AppTests run in
#: the checkout read it.
st_config.set_option("client.showErrorDetails", "full")


def app_test(script: str | Path | Callable[[], Any] = APP, timeout: float = 90) -> AppTest:
    """A fresh AppTest, not run yet: of ``app.py`` by default; of another file when
    ``script`` is a path (a ``Path`` or a string ending in ``.py`` without a line break); of a
    script's text (``AppTest.from_string``) or of a function (``AppTest.from_function``)
    otherwise. ``timeout`` is each run's ``default_timeout`` in seconds."""
    if callable(script):
        return AppTest.from_function(script, default_timeout=timeout)
    if isinstance(script, Path) or (script.endswith(".py") and "\n" not in script):
        return AppTest.from_file(str(script), default_timeout=timeout)
    return AppTest.from_string(script, default_timeout=timeout)


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


def pages_fail_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    """In AppTests a page's unexpected error stays an exception (``at.exception``) instead of
    the entry point's friendly message, and so does a widget callback's (``ui.guard``), so no
    test passes over one. Undo it to test the message (``monkeypatch.undo()``)."""
    def reraise(err: Exception) -> None:
        raise err

    monkeypatch.setattr("ui.page.page_failed", reraise)
    monkeypatch.setattr("ui.page.change_failed", reraise)


def patch_apptest(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both patches: :func:`keep_the_whole_page` and :func:`pages_fail_loudly`."""
    keep_the_whole_page(monkeypatch)
    pages_fail_loudly(monkeypatch)
