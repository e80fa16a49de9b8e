"""A widget callback or a part of a page that reruns on its own (a fragment) that fails says so
in one line, as a page does (issue 39, item 4); that every callback goes through the guard is
tests/test_callback_guard.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import app_test, no_traceback
from tests.conftest import plain

ROOT = Path(__file__).resolve().parents[1]


# -- callbacks and fragments ------------------------------------------------------------------


def failing(*_: object, **__: object) -> None:
    raise RuntimeError("injected callback fault")


MESSAGE = "This change could not be made: an unexpected RuntimeError (injected callback fault)"


@pytest.fixture
def friendly(monkeypatch):
    """The dashboard as it runs for users: its messages, not the tests' loud exceptions."""
    monkeypatch.undo()


def protect_page() -> AppTest:
    at = app_test().run()
    at.switch_page("views/protect.py").run()
    no_traceback(at)
    return at


def test_a_failing_history_button_says_so_in_one_line(friendly, monkeypatch):
    at = protect_page()
    at.slider(key="w_p_band_age").set_value(10).run()
    monkeypatch.setattr("ui.state.reset_protect", failing)
    at.run()  # the button holds the function its click calls from the run that drew it
    at.button(key="p_reset").click().run()
    no_traceback(at)
    said = [plain(e.value) for e in at.error if "could not be made" in e.value]
    assert len(said) == 1 and said[0].startswith(MESSAGE + ". Your data set and settings are "
                                                 "kept"), said
    assert at.slider(key="w_p_band_age").value == 10  # the settings are kept
    at.run()  # said once
    assert not [e.value for e in at.error if "could not be made" in e.value]


def test_a_failing_slider_callback_inside_a_fragment_says_so(friendly, monkeypatch):
    at = protect_page()
    monkeypatch.setattr("ui.logic.protect.ProtectSettings.with_value", failing)
    at.slider(key="w_p_band_age").set_value(10).run()
    no_traceback(at)
    assert any(plain(e.value).startswith(MESSAGE) for e in at.error)


def test_a_failing_analyses_callback_says_so(friendly, monkeypatch):
    at = protect_page()
    at.session_state["w_an_editor"] = True
    at.run()
    monkeypatch.setattr("ui.analyses._keep", failing)
    at.text_input(key="w_an_name").set_value("m")
    at.button(key="w_an_add").click().run()
    no_traceback(at)
    assert any(plain(e.value).startswith(MESSAGE) for e in at.error)


def test_a_failing_part_of_a_page_that_reruns_alone_says_so(friendly, monkeypatch):
    monkeypatch.setattr("ui.compute.workbench", failing)
    at = app_test().run()
    at.switch_page("views/protect.py").run()
    no_traceback(at)
    assert any(e.value.startswith("This page could not be shown: an unexpected RuntimeError")
               for e in at.error)
    assert at.slider(key="w_p_band_age").value == 0  # the controls are still drawn
