"""How long the pages' runs take in this server process, for every session together, and how
many sessions are connected: what the Lessons page's projector view shows a teacher
(docs/teaching.md, "The class at a glance"). Counts and times only: nothing of any session.

What is measured, a *move*: one run of a page's script in this process, from the start of the
entry point (``app.pages`` in ``app.py``) to its end however it ends (drawn, stopped, or
interrupted by the session's next rerun); or, for a part of a page that reruns on its own
(``st.fragment``, ``ui.page.guarded_part``), that part's run. It is the time the session's
thread spends in the run, wall clock (``time.monotonic``), so it includes the time the run
waits for the interpreter lock while other sessions' runs are drawn and for a worker process
while others' jobs run. It does not include the network either way, nor the time between the
browser's request reaching the server and the run starting (Streamlit receives the request on
its event loop and starts the session's script thread; neither tells when the request
arrived), nor the browser drawing what the run sent.

Every run is kept with the time it ended, the last :data:`KEPT` runs at most, under one lock:
every session's thread adds to the same record.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager

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


#: The server process's record: every session's runs
RECORD = Record()
#: Whether this thread is in a timed run: a part of a page run inside its page's run is not a
#: run of its own
_IN_RUN = threading.local()


@contextmanager
def timed() -> Iterator[None]:
    """Time what runs inside as one run of :data:`RECORD`, when this thread is not already
    in one (a fragment drawn by its page's run belongs to that run)."""
    if getattr(_IN_RUN, "on", False):
        yield
        return
    record = RECORD
    _IN_RUN.on = True
    start = record.clock()
    try:
        yield
    finally:
        _IN_RUN.on = False
        end = record.clock()
        record.add(end - start, end)


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
