"""Work that survives a reload: a resume token in the page's address.

Every browser session gets a random token (128 bits from :mod:`secrets`), which its address
carries as ``?resume=…``. The server keeps, in this process's memory only, which session holds
each token and a reference to that session's state. A new session whose address carries the
token of a session that is no longer connected takes that session's work over: its data set,
roles, Protect settings (with their undo history), risk settings, sweep results, Trade-offs form
and lessons. That is a reload (F5), or a reconnection after Streamlit gave the old connection
up. The data set is not copied: the session's entry in the memory ledger moves with it.

A token is bound to its session:

- while that session is connected, a second tab opened with the same address starts afresh,
  with a token of its own;
- with sign-in set up, only the same signed-in user takes a session over;
- it expires with the session's data: unused for the idle window (``SDC_IDLE_MINUTES``,
  :mod:`ui.memory`), connected or not. A disconnected session's data is kept that long, so that
  its work can be taken over.

The token is never written, logged, nor put in a link, a report or a download (:mod:`ui.links`
builds its addresses from the page's own, without the query).
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ui import memory, state

PARAM = "resume"
_TOKEN = "resume_token"
_NOTICE = "resume_notice"
#: The session state that moves to a session taking another's work over: the plain values of
#: :mod:`ui.state` and the pages (widgets re-seed from them), and the Trade-offs form.
KEPT = ("dataset", "roles", "protect", "protect_history", "sweep", "known", "risk_options",
        "whole_file_risk", "lesson", "lesson_values", "lessons_done", "projector",
        "chart_format", "suda_dis_fraction", "risk_view", "link_opened", "analyses",
        "sampling")
KEPT_PREFIX = "w_kept_"


@dataclass(frozen=True)
class Holder:
    """The session that holds a token, who signed in to it (None without sign-in) and its
    state (Streamlit's session state object, read when another session takes it over)."""

    session: str
    user: str | None
    state: Any


class Registry:
    """Tokens and the sessions that hold them; safe to share between the server's threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders: dict[str, Holder] = {}

    def register(self, token: str, holder: Holder) -> None:
        with self._lock:
            self._holders[token] = holder

    def take(self, token: str, holder: Holder, is_active: Callable[[str], bool]
             ) -> Holder | None:
        """Bind ``token`` to ``holder`` and give the session that held it, when that one is
        another session, no longer connected, of the same user; else None (and nothing
        changes)."""
        with self._lock:
            old = self._holders.get(token)
            if (old is None or old.session == holder.session or old.user != holder.user
                    or is_active(old.session)):
                return None
            self._holders[token] = holder
            return old

    def forget(self, sessions: Iterable[str]) -> None:
        """Drop the tokens of these sessions (their data was freed)."""
        gone = set(sessions)
        with self._lock:
            for token in [t for t, h in self._holders.items() if h.session in gone]:
                del self._holders[token]

    def __len__(self) -> int:
        with self._lock:
            return len(self._holders)


#: The server's one registry.
REGISTRY = Registry()


def _user() -> str | None:
    """Who signed in to this session (None without sign-in)."""
    if not st.user.get("is_logged_in", False):
        return None
    return str(st.user.get("sub") or st.user.get("email") or "")


def kept(saved: dict[str, Any]) -> dict[str, Any]:
    """The part of a session's state that a session taking it over receives (:data:`KEPT`)."""
    return {k: v for k, v in saved.items() if k in KEPT or str(k).startswith(KEPT_PREFIX)}


def _take_over(old: Holder) -> bool:
    """Copy the work of the session ``old`` into this one, with its data set's entry in the
    memory ledger; False when its data set was freed meanwhile (then nothing is copied)."""
    saved = kept(old.state.filtered_state)
    ds = saved.get("dataset")
    if ds is None or ds.table.df is None:
        return False
    for key, value in saved.items():
        st.session_state[key] = value
    memory.LEDGER.move(old.session, state.session_id())
    return True


def begin() -> None:
    """On a session's first run, take over the work of the session its address's token names,
    if it can; give the session a token of its own otherwise. Every run leaves the address
    holding the token (a change of page clears the query)."""
    token = st.session_state.get(_TOKEN)
    if token is None:
        ctx = get_script_run_ctx()
        me = Holder(state.session_id(), _user(), ctx.session_state if ctx else None)
        asked = st.query_params.get(PARAM)
        old = REGISTRY.take(asked, me, memory.is_active) if asked else None
        if old is not None and _take_over(old):
            token = asked
        else:
            st.session_state[_NOTICE] = bool(asked)
            token = secrets.token_urlsafe(16)
            REGISTRY.register(token, me)
        st.session_state[_TOKEN] = token
    if st.query_params.get(PARAM) != token:
        st.query_params[PARAM] = token


def expired_notice() -> bool:
    """Once: whether this session's address named a token whose work it could not take over
    (expired, freed, or held by a tab still open)."""
    return bool(st.session_state.pop(_NOTICE, False))
