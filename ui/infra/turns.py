"""New sessions take turns: at most :data:`FIRST_RUNS` sessions' first runs at once, the others
waiting in the order they came, so that a flood of connections does not take the server from the
sessions already in use.

Every session's script runs in a thread of the server's one Python process, and those threads
share its interpreter: a run holds it a few milliseconds at a time, then hands it to whichever
thread waits. When 200 sessions connect at once, 200 first runs wait for it, and the run of a
session already in use (a visitor's upload, a change of page) gets one turn in 200, as does the
event loop that reads every upload and writes every page (a 4 kB upload was reported at 31 s, a
page at 5.2 s). A first run now waits for its turn (:func:`first_run`) before it runs its page,
in a queue that holds no interpreter: the sessions in use, and the event loop, then share it
with at most :data:`FIRST_RUNS` new pages. A session that left while it waited ends at its turn,
at once (Streamlit stops a run whose browser has gone at its next command). Only a session's
first run waits: every later run (a click, an upload, a slider move) is a run of a session in
use. A first run's turn ends when it hands a job to a worker process (:func:`give_back`, called
by :func:`ui.infra.workers.run`): waiting for the job it holds no interpreter, and a first page
that computes (a link to the Risk page) does not keep the next new sessions waiting.
docs/deploying.md, "Errors, closed tabs and load", gives the figures measured with and without
it.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

#: How many sessions' first runs go on at once: two, so that one that waits on a worker
#: process (a link to the Risk page) does not hold the others up
FIRST_RUNS = 2


class Turns:
    """At most ``slots`` holders at once; the others are served in the order they asked, each
    woken alone when its turn comes (no wake-up of every waiter)."""

    def __init__(self, slots: int) -> None:
        self._lock = threading.Lock()
        self._free = slots
        self._queue: deque[threading.Event] = deque()

    def acquire(self) -> None:
        """Take a slot, waiting for one behind those who asked before."""
        with self._lock:
            if self._free > 0 and not self._queue:
                self._free -= 1
                return
            turn = threading.Event()
            self._queue.append(turn)
        turn.wait()  # the slot is handed over by release

    def release(self) -> None:
        """Give the slot to the first waiting, or free it."""
        with self._lock:
            if self._queue:
                self._queue.popleft().set()
            else:
                self._free += 1

    def waiting(self) -> int:
        """How many wait for a slot."""
        with self._lock:
            return len(self._queue)


#: The server's one queue of first runs
FIRST = Turns(FIRST_RUNS)
#: The turn this thread holds (``held``: the :class:`Turns` it is in), if any
_HOLDER = threading.local()


@contextmanager
def first_run(first: bool) -> Iterator[None]:
    """Around a session's run: when it is the session's ``first``, its turn in :data:`FIRST`
    (until the block ends or :func:`give_back`); any other run goes at once."""
    if not first:
        yield
        return
    turns = FIRST
    turns.acquire()
    _HOLDER.held = turns
    try:
        yield
    finally:
        give_back()


def give_back() -> None:
    """End this thread's turn, if it holds one: its run now waits on something else than the
    interpreter (a worker process's job), and the next first run may go."""
    turns = getattr(_HOLDER, "held", None)
    if turns is not None:
        _HOLDER.held = None
        turns.release()
