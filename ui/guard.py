"""Widget callbacks guarded as pages are (``app.py``, :func:`ui.page.page_failed`).

Streamlit runs a widget's ``on_change``/``on_click`` before the page, outside the entry point's
``try``: an error a callback did not expect showed Streamlit's traceback, with the server's
paths, instead of the page. :func:`guarded` wraps a callback so that such an error is logged for
the operator (its frames and type, not its message, which may quote the user's data), kept for
the next run of the page, which says it in one line at its top (:func:`ui.page.begin_run`), and
the whole page is drawn again: a callback of a widget inside a fragment would otherwise rerun
only the fragment, and the message would never be shown. Streamlit's own ``st.rerun`` and
``st.stop`` in a callback pass through.
"""

from __future__ import annotations

import functools
import logging
import traceback
from collections.abc import Callable
from typing import Any

import streamlit as st

from ui.logic.text import md

_FAILED = "callback_failed"


def guarded(callback: Callable[..., Any]) -> Callable[..., None]:
    """``callback`` as a widget's callback that never shows a traceback (module docstring)."""

    @functools.wraps(callback)
    def run(*args: Any, **kwargs: Any) -> None:
        try:
            callback(*args, **kwargs)
        except Exception as err:  # Streamlit's rerun and stop are no Exception: they pass
            log_failure("a widget's callback", err)
            # kept without its frames (they hold the page's tables) until the next run says it
            st.session_state[_FAILED] = err.with_traceback(None)
            st.rerun()  # the whole page, even from a fragment: it says what failed

    return run


def log_failure(what: str, err: Exception) -> None:
    """Log where ``what`` failed, for the operator: the traceback's frames and the error's
    type, not its message, which may quote the user's data."""
    frames = "".join(traceback.format_tb(err.__traceback__))
    logging.getLogger("sdc_dashboard").error("%s failed with %s:\n%s", what,
                                             type(err).__name__, frames)


def unexpected(err: Exception) -> str:
    """How a page says an error it did not expect: "an unexpected KeyError ('age')"."""
    return f"an unexpected {type(err).__name__}" + (f" ({md(err)})" if str(err) else "")


def failure() -> Exception | None:
    """The error a guarded callback met since the last run, once (None without one)."""
    return st.session_state.pop(_FAILED, None)
