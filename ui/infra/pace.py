"""How long the pages' runs take in this server process, for every session together, and how
many sessions are connected: what the Lessons page's projector view shows a teacher
(docs/teaching.md, "The class at a glance"). Counts and times only: nothing of any session.

What is measured, a *move*: one run of a page's script in this process, from the moment the
browser's request for it reached the server to the run's end however it ends (drawn, stopped,
or interrupted by the session's next request); or, for a part of a page that reruns on its own
(``st.fragment``: ``ui.page.guarded_part``, the sidebar's link), that part's run, the same way.
Wall clock (``time.monotonic``). The request's arrival is when Streamlit's event loop hands the
session its ``rerun_script`` message (:func:`install` notes it, :data:`ARRIVALS`); of several
that came before the run started, the latest (the wait after the last move, which the run
answers); a run no request started (``st.rerun``, a run in AppTest) counts from its own start
(``app.pages`` in ``app.py``). So a move's time includes the wait for the session's script
thread to start (behind the run it interrupts, if any), and, inside the run, the waits for the
interpreter lock while other sessions' runs are drawn and for a worker process while others'
jobs run. It does not include the network either way, the time a message waits in the server's
socket before the event loop reads it, nor the browser drawing what the run sent.

Every run is kept with the time it ended, the last :data:`KEPT` runs at most, under one lock:
every session's thread adds to the same record.
"""

from __future__ import annotations

import functools
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

#: The most runs kept: a class of sixty moving once a second fills a minute with 3,600
KEPT = 10_000


class Record:
    """The last ``kept`` runs of the process, ``(end, seconds)``, thread safe; ``clock`` is
    the time both are read in (``time.monotonic``)."""

    def __init__(self, kept: int = KEPT, clock: Callable[[], float] = time.monotonic) -> None:
        self._runs: deque[tuple[float, float]] = deque(maxlen=kept)
        self._lock = threading.Lock()
        self.clock = clock

    def add(self, seconds: float, end: float | None = None) -> None:
        """Keep a run of ``seconds`` that ended at ``end`` (now by default)."""
        end = self.clock() if end is None else end
        with self._lock:
            self._runs.append((end, seconds))

    def runs(self) -> list[tuple[float, float]]:
        """The runs kept, ``(end, seconds)``, oldest first."""
        with self._lock:
            return list(self._runs)

    def snapshot(self) -> tuple[list[tuple[float, float]], float]:
        """The runs kept and the time now, on the record's clock: what
        :func:`ui.logic.run_times.window_times` summarises."""
        return self.runs(), self.clock()


class Arrivals:
    """When each session's latest request for a run reached the server, until a run takes it
    (the run that starts after it serves it, and any before it it replaced), for at most
    ``kept`` sessions at once (a session that ended with a request pending leaves it until it
    is the oldest of too many)."""

    def __init__(self, kept: int = KEPT) -> None:
        self._at: dict[str, float] = {}
        self._lock = threading.Lock()
        self.kept = kept

    def note(self, session: str, when: float) -> None:
        """A request of ``session`` reached the server at ``when``."""
        with self._lock:
            self._at.pop(session, None)
            if len(self._at) >= self.kept:
                del self._at[next(iter(self._at))]
            self._at[session] = when

    def take(self, session: str) -> float | None:
        """When the latest request ``session`` has pending arrived (None without one); it is
        served from now on."""
        with self._lock:
            return self._at.pop(session, None)


#: The server process's record: every session's runs
RECORD = Record()
#: The requests for a run that reached the server and that no run has taken yet
ARRIVALS = Arrivals()
#: Whether this thread is in a timed run: a part of a page run inside its page's run is not a
#: run of its own
_IN_RUN = threading.local()


@contextmanager
def timed(session: str | None = None) -> Iterator[None]:
    """Time what runs inside as one run of :data:`RECORD`, when this thread is not already
    in one (a fragment drawn by its page's run belongs to that run): from the arrival of the
    request of ``session`` that it serves (:data:`ARRIVALS`), or from now without one."""
    if getattr(_IN_RUN, "on", False):
        yield
        return
    record = RECORD
    _IN_RUN.on = True
    start = record.clock()
    arrived = ARRIVALS.take(session) if session is not None else None
    if arrived is not None and arrived <= start:
        start = arrived
    try:
        yield
    finally:
        _IN_RUN.on = False
        end = record.clock()
        record.add(end - start, end)


def noting(handle: Callable[[Any, Any], None]) -> Callable[[Any, Any], None]:
    """``AppSession.handle_backmsg`` that first notes when a request for a run (a
    ``rerun_script`` message) reached the session (:data:`ARRIVALS`); Streamlit calls it on
    its event loop as the message arrives."""

    @functools.wraps(handle)
    def handle_backmsg(session: Any, msg: Any) -> None:
        if msg.WhichOneof("type") == "rerun_script":
            ARRIVALS.note(session.id, RECORD.clock())
        handle(session, msg)

    handle_backmsg.notes_arrivals = True  # type: ignore[attr-defined]
    return handle_backmsg


def install() -> None:
    """Note the arrival of every session's requests for a run (:func:`noting`), once: the
    server's import of ``app.py`` calls it."""
    from streamlit.runtime.app_session import AppSession

    if not getattr(AppSession.handle_backmsg, "notes_arrivals", False):
        AppSession.handle_backmsg = noting(  # type: ignore[method-assign,assignment]
            AppSession.handle_backmsg)


def sessions_connected() -> int | None:
    """How many browser sessions have their connection open to this server process now
    (Streamlit's session manager's active sessions); None outside a server (AppTest, a
    script) or when this Streamlit keeps its sessions elsewhere."""
    from streamlit import runtime

    if not runtime.exists():
        return None
    manager = getattr(runtime.get_instance(), "_session_mgr", None)
    count = getattr(manager, "num_active_sessions", None)
    return int(count()) if callable(count) else None
