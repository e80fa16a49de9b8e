"""The dashboard in Streamlit's AppTest, for the ``app`` and ``corpus`` tiers (tests/conftest.py).

:func:`app_test` gives a fresh, not yet run AppTest of ``app.py`` (or of a script or function).
Every test of those tiers runs with :func:`patch_apptest` applied by tests/conftest.py, through
its ``monkeypatch``, so ``monkeypatch.undo()`` gives a test the dashboard as users see it.
The helpers at the end open a page (:func:`app_on`, :func:`protect_page`), open what is folded
(:func:`opened`) and read what a page shows (:func:`metrics`, :func:`errors`).
Importing this module loads Streamlit: the unit tier never does.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from streamlit import config as st_config
from streamlit.components.v2 import manifest_scanner
from streamlit.runtime.scriptrunner import ScriptRunnerEvent
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.local_script_runner import LocalScriptRunner

from tests.conftest import plain
from ui.logic.tiles import Shown, TileReader, read_tiles

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")

#: AppTests keep an uncaught exception's message and traceback (``at.exception``) for the
#: report of a failing test: the shipped config hides them from the browser
#: (``client.showErrorDetails = "none"``, tests/test_security_headers.py) and the AppTests run in
#: the checkout read it.
st_config.set_option("client.showErrorDetails", "full")

_scan_components = manifest_scanner.scan_component_manifests
_components: list[Any] = []


def scan_components_once(max_workers: int | None = None) -> list[Any]:
    """The installed packages' Streamlit components, scanned once a process: each new AppTest
    scans the metadata of every installed package (0.2 s, a fifth of a short AppTest test); a
    server scans once as it starts, and no package is installed while the tests run."""
    if not _components:
        _components.append(_scan_components(max_workers))
    return list(_components[0])


manifest_scanner.scan_component_manifests = scan_components_once

_compile_script = ScriptCache.get_bytecode
_scripts: dict[tuple[str, int, int, bool], Any] = {}


def compile_script_once(cache: ScriptCache, script_path: str) -> Any:
    """A script's byte code, compiled once a process for each version of the file (its path,
    modification time and size): each AppTest run makes a new ``ScriptCache``, so it compiled
    ``app.py`` and the page again (650 compilations, 3 s of the 50 s of
    tests/test_app_pages.py); a server keeps one cache for its life."""
    path = os.path.abspath(script_path)
    stat = os.stat(path)
    key = (path, stat.st_mtime_ns, stat.st_size, bool(st_config.get_option("runner.magicEnabled")))
    if key not in _scripts:
        _scripts[key] = _compile_script(cache, script_path)
    return _scripts[key]


ScriptCache.get_bytecode = compile_script_once  # type: ignore[method-assign]


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


def own_resume_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's sessions in a registry of resume tokens of its own (ui/resume.py). Every
    AppTest is a new session with a new token, and AppTest's stand-in runtime says every
    session is connected, so the process's registry kept them all: each run of each later
    test walked every token of the tests before it."""
    from ui import resume
    from ui.infra import memory

    monkeypatch.setattr(resume, "REGISTRY", resume.Registry(memory.LEDGER))


def patch_apptest(monkeypatch: pytest.MonkeyPatch) -> None:
    """The patches: :func:`keep_the_whole_page`, :func:`pages_fail_loudly` and
    :func:`own_resume_registry`."""
    keep_the_whole_page(monkeypatch)
    pages_fail_loudly(monkeypatch)
    own_resume_registry(monkeypatch)


# -- reading and moving pages ------------------------------------------------------------------

def app_on(page: str) -> AppTest:
    """The dashboard on the built-in example, switched to ``page`` (``views/….py``), run
    without an exception."""
    at = app_test().run()
    at.switch_page(page).run()
    assert not at.exception
    return at


def tiles(at: AppTest) -> list[Shown]:
    """Every tile of the page: ``st.metric``'s, then those drawn as HTML, each in page order."""
    shown = [Shown(m.label, m.value, m.proto.delta, m.proto.help) for m in at.metric]
    for element in at.get("html"):
        shown += read_tiles(element.proto.body)
    return shown


def tile_notes(at: AppTest, label: str | None = None) -> list[str]:
    """The notes under the group of tiles drawn as HTML that holds the tile ``label`` (under
    every group when None), a paragraph each, as the browser shows them."""
    notes = []
    for element in at.get("html"):
        reader = TileReader()
        reader.feed(element.proto.body)
        if label is None:
            notes += reader.notes
        elif any(t["label"] == label for t in reader.tiles):
            return reader.notes
    if label is not None:
        raise AssertionError(f"no group of tiles holds {label!r}")
    return notes


def metrics(at: AppTest) -> dict[str, str]:
    """Every tile of the page: label → value as shown."""
    return {t.label: t.value for t in tiles(at)}


def opening(at: AppTest, *keys: str) -> AppTest:
    """Open the expanders and popovers of these keys on the next run: what is folded in them
    is drawn only once they are open. (Before a click that switches the page: AppTest's own
    next run goes back to the page it was on.)"""
    for key in keys:
        at.session_state[key] = True
    return at


def opened(at: AppTest, *keys: str) -> AppTest:
    """Open the expanders and popovers of these keys, and run."""
    return opening(at, *keys).run()


def protect_page() -> AppTest:
    """The Protect page on the built-in example (:func:`app_on`)."""
    return app_on("views/protect.py")


def editing(at: AppTest) -> AppTest:
    """Open the editor "Benchmark analyses (N)" (drawn once opened) and run."""
    at.session_state["w_an_editor"] = True
    return at.run()


def spec(at: AppTest) -> dict | None:
    """The session's benchmark analyses (the spec the Protect page's editor keeps)."""
    return at.session_state["analyses"]


def errors(at: AppTest) -> list[str]:
    """The page's error messages as the reader sees them (:func:`tests.conftest.plain`)."""
    return [plain(e.value) for e in at.error]


def no_traceback(at: AppTest) -> None:
    """The run raised nothing (a traceback would be shown)."""
    assert not at.exception, [e.message for e in at.exception]


def risk_page_with_age_banded(width: int) -> AppTest:
    """The Risk page after banding age on the Protect page."""
    at = app_test().run()
    at.switch_page("views/protect.py").run()
    at.slider(key="w_p_band_age").set_value(width).run()
    at.switch_page("views/risk.py").run()
    assert not at.exception
    return at


def downloads(monkeypatch: pytest.MonkeyPatch) -> dict[str | None, Any]:
    """The data of every download button a page draws, by widget key, of ``st.download_button``
    and of a container's or column's (``col.download_button``): what a click would download
    (the Export page's report is made on click: its entry is the function that makes it)."""
    import streamlit
    from streamlit.delta_generator import DeltaGenerator

    made: dict[str | None, Any] = {}
    download, method = streamlit.download_button, DeltaGenerator.download_button

    def recording(label: str, data: Any, *args: Any, **kwargs: Any) -> Any:
        made[kwargs.get("key")] = data
        return download(label, data, *args, **kwargs)

    def recording_method(self: DeltaGenerator, label: str, data: Any, *args: Any,
                         **kwargs: Any) -> Any:
        made[kwargs.get("key")] = data
        return method(self, label, data, *args, **kwargs)

    monkeypatch.setattr(streamlit, "download_button", recording)
    monkeypatch.setattr(DeltaGenerator, "download_button", recording_method)
    return made
