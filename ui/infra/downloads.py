"""Downloads only to the browser that made them, and only while their session lives.

What ``st.download_button`` offers (its bytes, or the bytes a callable makes when the button is
clicked), and any other media a session shows, Streamlit keeps in its media store and serves at
``/media/<id>.<ext>``. As Streamlit serves them, any client that has the address gets the file,
with no cookie, and still after the session that made it has closed; a file over 1 MiB is
named by a fast fingerprint of its length and three 64 KiB samples of its bytes, so two files
that agree there share one name, and the second session to make one is handed the first one's
bytes; and the files of a session that disconnects and is never resumed stay for as long as the
process runs (Streamlit's session storage forgets such a session without ending it). Here
(docs/deploying.md, "What the server keeps, and what it never does"):

- a stored file is named by 128 random bits (:func:`store`); a file with the very bytes, type,
  kind and name of one still stored keeps that one's name (compared whole, not sampled), so a
  page drawn again does not store its downloads again;
- a request for a media file is answered only when it carries the browser cookie that the
  websocket of a connected session using the file, or that made it on a click, carried
  (:meth:`Downloads.allowed`); every other request gets the 404 of a name never given
  (:mod:`ui.infra.server` asks before the request reaches Streamlit's route);
- the files of a session disconnected for longer than Streamlit waits for it to come back
  (``server.disconnectedSessionTTL``, 120 s by default) are deleted, with the callables of its
  buttons (:meth:`Downloads.sweep`, run after every websocket that closes and again when the
  next session's wait is over); while it waits, what they take (the bytes of the files no
  connected session uses, and what the callables hold) is entered in the memory ledger
  (:meth:`ui.infra.memory.Ledger.keep`).

This reaches into Streamlit's media manager (its lock, its record of which session uses which
file, its deferred callables): ``tests/test_downloads.py`` runs it against the pinned Streamlit.
"""

from __future__ import annotations

import asyncio
import os.path
import secrets
import threading
import time
from collections.abc import Callable
from types import MethodType
from typing import Any

from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.runtime.media_file_storage import MediaFileKind
from streamlit.runtime.memory_media_file_storage import MemoryFile, MemoryMediaFileStorage

from ui.infra.memory import Ledger, object_bytes


def store(storage: MemoryMediaFileStorage, path_or_data: str | bytes, mimetype: str,
          kind: MediaFileKind, filename: str | None = None) -> str:
    """``MemoryMediaFileStorage.load_and_get_id`` with unguessable names: the id of a stored
    file with the same bytes, type, kind and name, else a new one of 128 random bits. Called
    by Streamlit's media manager under its lock, as the method it replaces."""
    data = storage._read_file(path_or_data) if isinstance(path_or_data, str) else path_or_data
    files: dict[str, MemoryFile] = storage._files_by_id
    for file_id, held in files.items():
        if (len(held.content) == len(data) and held.mimetype == mimetype and held.kind == kind
                and held.filename == filename and held.content == data):
            return file_id
    file_id = secrets.token_hex(16)
    files[file_id] = MemoryFile(content=data, mimetype=mimetype, kind=kind, filename=filename)
    return file_id


def file_id_of(name: str) -> str:
    """The id in a media address's last part (``<id>.<ext>``), read as Streamlit's storage
    reads it."""
    return os.path.splitext(name)[0]


class Downloads:
    """Who may fetch each file of a media manager, and the end of the files of ended sessions.

    ``browser_of(session)`` is the browser cookie of the session's connection, None when the
    session is not connected (or its connection carried none). What the files and callables
    of disconnected sessions take is entered in ``ledger`` (a ledger of its own by default)
    until they are deleted."""

    def __init__(self, manager: MediaFileManager,
                 browser_of: Callable[[str], str | None], ledger: Ledger | None = None) -> None:
        self._mgr = manager
        self._browser_of = browser_of
        self._ledger = Ledger() if ledger is None else ledger
        self._booked: set[str] = set()  # sessions whose downloads the ledger counts
        self._lock = threading.Lock()
        self._made: dict[str, set[str]] = {}  # file id → sessions that made it on a click
        self._away: dict[str, float] = {}  # session → when it was first found disconnected

    def made(self, file_id: str, session: str) -> None:
        """The session made the file with a click (a deferred download: Streamlit records
        no session for it)."""
        with self._lock:
            self._made.setdefault(file_id, set()).add(session)

    def owners(self, file_id: str) -> set[str]:
        """The sessions that show the file, or made it on a click."""
        with self._mgr._lock:
            users = {s for s, by_place in self._mgr._files_by_session_and_coord.items()
                     if file_id in by_place.values()}
        with self._lock:
            return users | self._made.get(file_id, set())

    def allowed(self, file_id: str, browser: str | None) -> bool:
        """Whether a request carrying the browser cookie ``browser`` may fetch the file: a
        connected session that owns it (:meth:`owners`) has that cookie."""
        return bool(browser) and any(self._browser_of(s) == browser
                                     for s in self.owners(file_id))

    def sweep(self, ttl: float, now: float | None = None) -> float | None:
        """Delete the files, and drop the download callables, of the sessions disconnected
        for more than ``ttl`` seconds (a file another session still owns stays); enter in the
        ledger what those of the sessions still waiting take (:meth:`_book`); give the
        seconds until the next disconnected session's wait is over (None when none
        waits)."""
        now = time.time() if now is None else now
        mgr = self._mgr
        with mgr._lock, self._lock:
            refs = mgr._files_by_session_and_coord
            sessions = (set(refs) | set(mgr._deferred_ids_by_session)
                        | {s for users in self._made.values() for s in users})
            for s in sessions:
                if self._browser_of(s) is not None:  # connected
                    self._away.pop(s, None)
                else:
                    self._away.setdefault(s, now)
            for s in set(self._away) - sessions:  # nothing of its own left
                del self._away[s]
            ended = {s for s, since in self._away.items() if now - since > ttl}
            left: set[str] = set()
            for s in ended:
                left |= set(refs.pop(s, {}).values())
                for deferred in list(mgr._deferred_ids_by_session.get(s, ())):
                    mgr._drop_deferred_id(deferred)
                del self._away[s]
            for file_id, users in list(self._made.items()):
                if users & ended:
                    left.add(file_id)
                    users -= ended
                if not users or file_id not in mgr._file_metadata:
                    del self._made[file_id]
            kept = {f for by_place in refs.values() for f in by_place.values()} | set(self._made)
            for file_id in left - kept:
                if file_id in mgr._file_metadata:
                    mgr._delete_file(file_id)
            self._book()
            waits = [since + ttl - now for since in self._away.values()]
        return max(0.0, min(waits)) if waits else None

    def _book(self) -> None:
        """Enter in the ledger, for each session found disconnected since the last sweep, what
        the stored files it uses or made that no connected session uses nor another entry
        counts, its download callables and the media manager's records of them hold
        (:func:`~ui.infra.memory.object_bytes`, less the tables the ledger counts already);
        drop the entries of the sessions no longer disconnected or deleted. Called under the
        media manager's lock and this one's."""
        mgr = self._mgr
        files: dict[str, MemoryFile] = getattr(mgr._storage, "_files_by_id", {})
        by_session: dict[str, set[str]] = {}
        for s, by_place in mgr._files_by_session_and_coord.items():
            by_session.setdefault(s, set()).update(by_place.values())
        for file_id, users in self._made.items():
            for s in users:
                by_session.setdefault(s, set()).add(file_id)
        counted = {f for s, ids in by_session.items()  # by an open tab, or booked already
                   if s not in self._away or s in self._booked for f in ids}
        counted_tables = self._ledger.tables()
        for s in set(self._away) - self._booked:  # measured once: a closed tab makes no more
            ids = (by_session.get(s, set()) & files.keys()) - counted
            counted |= ids
            deferred = mgr._deferred_ids_by_session.get(s, set())
            held: list[Any] = [mgr._files_by_session_and_coord.get(s), deferred]
            held += [(files[f], mgr._file_metadata.get(f)) for f in ids]
            held += [mgr._deferred_callables[d] for d in deferred if d in mgr._deferred_callables]
            self._ledger.keep(_booked_key(s), object_bytes(held, skip=counted_tables))
        for s in self._booked - set(self._away):
            self._ledger.keep(_booked_key(s), 0)
        self._booked = set(self._away)


def _booked_key(session: str) -> str:
    """The memory ledger's key of the downloads of the disconnected ``session``."""
    return f"downloads of the closed session {session}"


def browser_of(runtime: Any, cookie: str) -> Callable[[str], str | None]:
    """``browser_of(session)`` for :class:`Downloads`: the ``cookie`` of the connection of the
    session, as its websocket's handshake carried it; "" when it carried none; None when the
    session is not connected."""

    def of(session: str) -> str | None:
        client = runtime.get_client(session)
        if client is None:
            return None
        cookies = getattr(getattr(client, "client_context", None), "cookies", None) or {}
        value = cookies.get(cookie)
        return value if isinstance(value, str) else ""

    return of


def install(runtime: Any, cookie: str, ledger: Ledger | None = None) -> Downloads:
    """Put :func:`store` and the record of the files made on a click into the media manager
    of Streamlit's ``runtime``; the :class:`Downloads` that answers for its files by the
    browser cookie ``cookie`` and enters those of disconnected sessions in ``ledger``."""
    mgr: MediaFileManager = runtime.media_file_mgr
    storage = mgr._storage
    if not isinstance(storage, MemoryMediaFileStorage):
        raise TypeError(f"media files kept by {type(storage).__name__}, not in memory")
    storage.load_and_get_id = MethodType(store, storage)  # type: ignore[method-assign]
    downloads = Downloads(mgr, browser_of(runtime, cookie), ledger)
    execute = mgr.execute_deferred

    def execute_deferred(file_id: str) -> str:
        with mgr._lock:
            entry = mgr._deferred_callables.get(file_id)
        url = execute(file_id)
        if entry is not None:
            downloads.made(file_id_of(url.rsplit("/", 1)[-1]), entry["session_id"])
        return url

    mgr.execute_deferred = execute_deferred  # type: ignore[method-assign]
    return downloads


class Sweeper:
    """Runs :meth:`Downloads.sweep` after a websocket closes, and again, on the event loop,
    when the first disconnected session's wait is over; one timer at a time (the sessions
    wait alike, so a timer set earlier is due no later than the wait of a session that went
    later)."""

    def __init__(self, downloads: Downloads, ttl: Callable[[], float]) -> None:
        self._downloads = downloads
        self._ttl = ttl
        self._timer: asyncio.TimerHandle | None = None

    def closed(self) -> None:
        """A websocket closed (call on the event loop): sweep now, which notes when its
        session went, and set a timer for when the first waiting session's wait is over."""
        due = self._downloads.sweep(self._ttl())
        if due is not None and self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(due + 0.5, self._fire)

    def _fire(self) -> None:
        self._timer = None
        self.closed()
