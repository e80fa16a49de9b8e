"""Work that survives a reload: a resume token in the page's address.

Every browser session gets a random token (128 bits from :mod:`secrets`), which its address
carries as ``?resume=…``. The server keeps, in this process's memory only, which session holds
each token and a reference to that session's state. A new session whose address carries the
token of a session that is no longer connected takes that session's work over: its data set,
roles, Protect settings (with their undo history), risk settings, sweep results, the kept
widget values of the Trade-offs form and the Tables page, and lessons. That is a reload (F5),
or a reconnection after Streamlit gave the old connection up. The data set is not copied: the
session's entry in the memory ledger moves with it.

A token is bound to its session and to the browser that made it:

- the server names every browser with an HttpOnly, SameSite cookie on its first visit
  (:data:`~ui.infra.server.BROWSER_COOKIE`, set by :mod:`ui.infra.server`), and only a
  session of the same browser takes the work over: an address copied, pasted or projected
  opens a fresh session in any other browser, after a closed tab and after a network drop
  alike, with a notice;
- while that session is connected, a second tab opened with the same address starts afresh,
  with a token of its own;
- with sign-in set up, only the same signed-in user takes a session over;
- it expires with the session's data: unused for the idle window (``SDC_IDLE_MINUTES``,
  :mod:`ui.infra.memory`), connected or not. A disconnected session's data is kept that long, so
  that its work can be taken over; of the session itself, only that work is kept (not its
  widgets nor the rest of Streamlit's session), entered in the memory ledger by its size
  (:meth:`~ui.infra.memory.Ledger.keep`, beside its data set's table, which is counted as data)
  until it is taken over or dropped;
- a session with no data of its own (only a built-in data set, which the server holds for every
  session anyway) keeps its token as long when it has work to keep: a run after its first (the
  user did something) or work it took over. One that has none (a visitor, or a script, that
  opened the first page and left) loses its token as soon as it is found disconnected: a
  reload of it opens the same first page afresh, without a notice (the last
  :data:`SPENT_KEPT` such tokens are remembered for that).

The token is never written, logged, nor put in a link, a report or a download (:mod:`ui.links`
builds its addresses from the page's own, without the query).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ui import state
from ui.infra import memory
from ui.state import browser

PARAM = "resume"
_TOKEN = "resume_token"
_NOTICE = "resume_notice"


@dataclass(frozen=True)
class Holder:
    """The session that holds a token, who signed in to it (None without sign-in) and its
    state: while it is connected, Streamlit's session state object; once it is found
    disconnected, only what a session taking it over receives (a dict, :func:`kept`). The
    live object holds the session's widgets, their callbacks and, through its script
    runner, the rest of Streamlit's session, none of which a reload takes over."""

    session: str
    user: str | None
    state: Any
    #: the browser that holds it (:func:`ui.state.browser`; None outside a server)
    browser: str | None = None


#: How many tokens of sessions dropped with no work to keep are remembered, so that a reload
#: of one opens afresh without saying that its session ended.
SPENT_KEPT = 10_000


@dataclass
class _Use:
    """How a token's session has been used: when last (a run), since when it is found
    disconnected (None while connected), and whether it has work worth keeping for a reload
    (a run after its first, or work taken over)."""

    seen: float
    away_since: float | None = None
    worked: bool = False


class Registry:
    """Tokens and the sessions that hold them; safe to share between the server's threads.
    What a disconnected session keeps is entered in ``ledger`` (a ledger of its own by
    default) while it is kept."""

    def __init__(self, ledger: memory.Ledger | None = None) -> None:
        self._ledger = memory.Ledger() if ledger is None else ledger
        self._lock = threading.Lock()
        self._holders: dict[str, Holder] = {}
        self._use: dict[str, _Use] = {}  # by token
        self._spent: OrderedDict[str, None] = OrderedDict()  # dropped with no work, oldest first

    def register(self, token: str, holder: Holder, now: float | None = None) -> None:
        with self._lock:
            self._holders[token] = holder
            self._use[token] = _Use(time.time() if now is None else now)

    def take(self, token: str, holder: Holder, is_active: Callable[[str], bool],
             now: float | None = None) -> Holder | None:
        """Bind ``token`` to ``holder`` and give the session that held it, when that one is
        another session, no longer connected, of the same user and the same browser; else
        None (and nothing changes). The session taking the work over has work to keep."""
        with self._lock:
            old = self._holders.get(token)
            if (old is None or old.session == holder.session or old.user != holder.user
                    or old.browser != holder.browser or is_active(old.session)):
                return None
            self._holders[token] = holder
            self._use[token] = _Use(time.time() if now is None else now, worked=True)
            self._ledger.keep(_kept_key(old.session), 0)  # live again, in the new session
            return old

    def used(self, token: str, state: Any = None, now: float | None = None) -> None:
        """A run of the token's session after its first: it is in use, and has work to
        keep; ``state``: its live state (again, after a reconnection)."""
        with self._lock:
            if token in self._use:
                self._use[token].seen = time.time() if now is None else now
                self._use[token].worked = True
            holder = self._holders.get(token)
            if state is not None and holder is not None and holder.state is not state:
                self._holders[token] = replace(holder, state=state)
                self._ledger.keep(_kept_key(holder.session), 0)

    def prune(self, is_active: Callable[[str], bool], holds: Callable[[str], bool],
              idle: float, grace: float, now: float | None = None) -> list[str]:
        """Keep of every disconnected session only what a session taking it over receives
        (:class:`Holder`); drop the tokens of the sessions that hold no data of their own
        (``holds``: the others' go with their data, :meth:`forget`) and are disconnected with
        no work to keep, disconnected for longer than ``grace`` seconds, or unused for longer
        than ``idle``; give the sessions dropped."""
        now = time.time() if now is None else now
        with self._lock:
            dropped = []
            for token, holder in list(self._holders.items()):
                active = is_active(holder.session)
                if not active and holder.state is not None and not isinstance(holder.state, dict):
                    saved = kept_state(holder.state)
                    self._holders[token] = replace(holder, state=saved)
                    self._ledger.keep(_kept_key(holder.session),
                                      kept_bytes(saved, self._ledger.tables()))
                if holds(holder.session):
                    continue
                use = self._use.setdefault(token, _Use(now))
                if active:
                    use.away_since = None
                elif use.away_since is None:
                    use.away_since = now
                away_since = use.away_since
                if (away_since is not None and (not use.worked or now - away_since > grace)
                        or now - use.seen > idle):
                    del self._holders[token]
                    self._use.pop(token, None)
                    self._ledger.keep(_kept_key(holder.session), 0)
                    dropped.append(holder.session)
                    if not use.worked:
                        self._spent[token] = None
                        while len(self._spent) > SPENT_KEPT:
                            self._spent.popitem(last=False)
            return dropped

    def holder(self, token: str) -> Holder | None:
        """The session that holds ``token`` (None: no session does)."""
        with self._lock:
            return self._holders.get(token)

    def spent(self, token: str) -> bool:
        """Whether ``token`` was dropped with no work to keep (its session opened a page and
        left): a session opened with it has lost nothing."""
        with self._lock:
            return token in self._spent

    def forget(self, sessions: Iterable[str]) -> None:
        """Drop the tokens of these sessions (their data was freed)."""
        gone = set(sessions)
        with self._lock:
            for token in [t for t, h in self._holders.items() if h.session in gone]:
                del self._holders[token]
                self._use.pop(token, None)
            for session in gone:
                self._ledger.keep(_kept_key(session), 0)

    def __len__(self) -> int:
        with self._lock:
            return len(self._holders)


#: The server's one registry, entering what disconnected sessions keep in the server's ledger.
REGISTRY = Registry(memory.LEDGER)


def _kept_key(session: str) -> str:
    """The memory ledger's key of what the disconnected ``session`` keeps for a reload."""
    return f"work of the closed session {session}"


def _user() -> str | None:
    """Who signed in to this session (None without sign-in)."""
    if not st.user.get("is_logged_in", False):
        return None
    return str(st.user.get("sub") or st.user.get("email") or "")


def kept(saved: dict[str, Any]) -> dict[str, Any]:
    """The part of a session's state that a session taking it over receives: the values
    :mod:`ui.state` declares kept over a reload (:data:`ui.state.VALUES`; widgets re-seed from
    them)."""
    return {k: v for k, v in saved.items() if state.kept_over_reload(str(k))}


def kept_bytes(saved: dict[str, Any], counted: Iterable[Any] = ()) -> int:
    """What the work ``saved`` (:func:`kept`) takes in the server
    (:func:`~ui.infra.memory.object_bytes`), less its data set's table and the tables
    ``counted``: those are counted as data (the session's entry in the ledger, or the built-in
    data set's, once)."""
    ds = saved.get("dataset")
    table = getattr(getattr(ds, "table", None), "df", None)
    return memory.object_bytes(saved, skip=[*counted, *(() if table is None else (table,))])


def kept_state(state: Any) -> dict[str, Any]:
    """What a session taking over the session of ``state`` receives: :func:`kept` of a live
    session state, or the dict already kept of one found disconnected (:class:`Holder`)."""
    return state if isinstance(state, dict) else kept(state.filtered_state)


def _take_over(old: Holder) -> bool:
    """Copy the work of the session ``old`` into this one, with its data set's entry in the
    memory ledger; False when its data set was freed meanwhile (then nothing is copied)."""
    saved = kept_state(old.state)
    ds = saved.get("dataset")
    if ds is None or ds.table.df is None:
        return False
    for key, value in saved.items():
        st.session_state[key] = value
    memory.LEDGER.move(old.session, state.session_id())
    return True


def other_browser(token: str) -> bool:
    """Whether ``token``'s session is held by another browser than this session's."""
    holder = REGISTRY.holder(token)
    return holder is not None and holder.browser != browser()


def begin() -> None:
    """On a session's first run, take over the work of the session its address's token names,
    if it can; give the session a token of its own otherwise. Every run leaves the address
    holding the token (a change of page clears the query)."""
    idle = memory.idle_seconds()
    REGISTRY.prune(memory.is_active, memory.LEDGER.holds, idle, grace=idle)
    token = st.session_state.get(_TOKEN)
    ctx = get_script_run_ctx()
    if token is not None:
        REGISTRY.used(token, ctx.session_state if ctx else None)
    else:
        me = Holder(state.session_id(), _user(), ctx.session_state if ctx else None, browser())
        asked = st.query_params.get(PARAM)
        old = REGISTRY.take(asked, me, memory.is_active) if asked else None
        if old is not None and asked and _take_over(old):  # old: only for an asked token
            token = asked
        else:
            st.session_state[_NOTICE] = (
                "browser" if asked and other_browser(asked) else
                "ended" if asked and not REGISTRY.spent(asked) else None)
            token = secrets.token_urlsafe(16)
            REGISTRY.register(token, me)
        st.session_state[_TOKEN] = token
    if st.query_params.get(PARAM) != token:
        st.query_params[PARAM] = token


def expired_notice() -> str | None:
    """Once: why this session's address named a token whose work it could not take over:
    ``"browser"``, held by another browser (a copied or projected address); ``"ended"``,
    expired, freed, or held by a tab still open; None when it named none or it was taken."""
    return st.session_state.pop(_NOTICE, None)
