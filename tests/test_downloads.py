"""Downloads go only to the browser of the session that made them, and only while it lives
(issue 51, item 8): a protected file of the Export page was served at ``/media/<id>.csv`` to
any client that had the address, with no cookie, and still after its session had closed; a
file over 1 MiB was named by a fast hash of its length and three samples of its bytes
(``ui/infra/downloads.py``)."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
from collections.abc import Callable

import pandas as pd
import pytest
import requests
from streamlit.runtime import media_file_manager
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.runtime.media_file_storage import MediaFileKind
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

from bench.server import free_port, start_server, stop_server
from bench.st_client import StSession
from tests.conftest import run_async
from ui.infra.downloads import Downloads, store
from ui.infra.memory import Ledger

#: How long the server below waits for a disconnected session to come back
#: (``server.disconnectedSessionTTL``, 120 s by default)
TTL = 2


@pytest.fixture(scope="module")
def short_wait_url():
    """A real server whose sessions end ``TTL`` seconds after their websocket closes."""
    port = free_port()
    proc = start_server(port, env={"STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": str(TTL)})
    yield f"http://127.0.0.1:{port}"
    stop_server(proc)


def status(url: str, **kw: object) -> int:
    """The status of a GET of ``url`` by a client of its own (no cookie unless given)."""
    return requests.get(url, timeout=60, **kw).status_code  # type: ignore[arg-type]


async def only_the_owner(url: str) -> None:
    owner, other = StSession(timeout=60), StSession(timeout=60)
    await owner.connect(url)
    await other.connect(url)
    tab = StSession(timeout=60, browser=owner)  # a second tab of the owner's browser
    await tab.connect(url)
    await owner.switch_page("export")
    csv = await owner.download_url("Download CSV")  # made when the page is drawn
    xlsx = await owner.download_url("Download XLSX")  # made by the click
    # (no session runs from here on until the checks of the file made by the click: at the
    # end of any two runs Streamlit deletes such a file)
    assert (await owner.get(csv)).content.count(b"\n") == 2140  # a header and 2,139 records
    assert (await owner.get(xlsx)).content[:2] == b"PK"
    cookie = owner._http.cookies.get("sdc_browser")
    assert cookie
    for address in (csv, xlsx):
        # no cookie, a made-up one, HEAD: the 404 of a name never given
        assert status(address) == 404
        assert status(address, cookies={"sdc_browser": cookie + "x"}) == 404
        assert requests.head(address, timeout=60).status_code == 404
        # another browser's session, connected: nothing
        assert (await other.get(address)).status_code == 404
        # the owner's browser in another tab: the file
        assert (await tab.get(address)).status_code == 200
    assert status(url + "/media/" + "0" * 32 + ".csv") == 404

    # the same bytes made by another session are the same file (stored once), and each may
    # fetch it: it has them already
    await tab.switch_page("export")
    assert await tab.download_url("Download CSV") == csv
    await other.switch_page("export")
    assert await other.download_url("Download CSV") == csv
    assert (await other.get(csv)).status_code == 200
    await other.close()

    # the owner's tabs closed: not even its browser gets the file any more
    await tab.close()
    await owner.close()
    assert status(csv, cookies={"sdc_browser": cookie}) == 404

    # once Streamlit no longer waits for the sessions, their files are gone: the same bytes,
    # made again by a new session of the same browser, get a new name
    await asyncio.sleep(TTL + 2)
    again = StSession(timeout=60, browser=owner)
    await again.connect(url)
    await again.switch_page("export")
    fresh = await again.download_url("Download CSV")
    assert fresh != csv
    assert (await again.get(fresh)).content.count(b"\n") == 2140
    assert (await again.get(csv)).status_code == 404
    await again.close()


def test_a_download_goes_only_to_its_sessions_browser_and_ends_with_it(short_wait_url):
    run_async(only_the_owner(short_wait_url))


def test_files_that_agree_where_streamlit_samples_them_get_names_of_their_own():
    """Streamlit names a file over 1 MiB by its length and 64 KiB at its head, middle and
    tail: a second file that agrees there was handed the first one's bytes."""
    storage = MemoryMediaFileStorage("/media")
    size = 3 * 2**20
    first, second = bytearray(size), bytearray(size)
    first[size // 4], second[size // 4] = ord("A"), ord("B")  # outside the samples
    a = store(storage, bytes(first), "text/csv", MediaFileKind.DOWNLOADABLE, "a.csv")
    b = store(storage, bytes(second), "text/csv", MediaFileKind.DOWNLOADABLE, "a.csv")
    assert a != b
    assert storage.get_file(a).content == bytes(first)
    assert storage.get_file(b).content == bytes(second)
    # the same bytes again: the same name, not a second copy
    assert store(storage, bytes(first), "text/csv", MediaFileKind.DOWNLOADABLE, "a.csv") == a
    assert len({a, b, store(storage, bytes(first), "text/csv", MediaFileKind.DOWNLOADABLE,
                            "b.csv")}) == 3  # another name: another file
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in (a, b))


def csv_of(table: pd.DataFrame) -> Callable[[], bytes]:
    """A download button's callable, as the Tables page's Excel button makes one: it holds
    its table until it is called or dropped."""
    return lambda: table.to_csv().encode()


def test_what_a_closed_tabs_downloads_hold_is_counted_until_they_are_deleted(monkeypatch):
    """Issue 51, item 9: a closed tab's files and download callables stay for
    ``server.disconnectedSessionTTL``; for that time what they hold (the bytes freed when
    they are deleted; a table the ledger counts already, once) is entered in the memory
    ledger, and no more once they are."""
    tracemalloc.start()
    try:
        mgr = MediaFileManager(MemoryMediaFileStorage("/media"))
        ledger = Ledger()
        cookies = {"a": "browser-a", "b": "browser-b"}
        downloads = Downloads(mgr, cookies.get, ledger)
        example = pd.DataFrame({"y": range(50_000)})  # a table the ledger counts already
        ledger.share("built-in data set", 10**6, example)
        for session, fill in (("a", b"a"), ("b", b"b")):
            monkeypatch.setattr(media_file_manager, "_get_session_id", lambda s=session: s)
            mgr.add(fill * 2**20, "text/csv", "file", "data.csv", is_for_static_download=True)
            mgr.add_deferred(csv_of(pd.DataFrame({"x": range(100_000)})), "text/csv",
                             "button", "table.csv")
            mgr.add_deferred(csv_of(example), "text/csv", "report", "report.csv")
        table_bytes = int(pd.DataFrame({"x": range(100_000)}).memory_usage(deep=True).sum())
        assert downloads.sweep(120.0, now=0.0) is None and ledger.kept() == 0  # both connected
        del cookies["a"]  # a's tab is closed
        assert downloads.sweep(120.0, now=10.0) == 120.0
        booked = ledger.kept()
        # a's file and table, not b's, nor the example again
        assert 2**20 + table_bytes <= booked <= 2**20 + table_bytes + 16 * 1024
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
        assert downloads.sweep(120.0, now=131.0) is None  # its wait is over: deleted
        gc.collect()
        freed = held - tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert ledger.kept() == 0
    # within 4 kB of the 1.85 MB freed (the slots of the dictionaries that held them, and of
    # the tables' own objects, are not counted)
    assert freed - 4 * 1024 <= booked <= freed + 16 * 1024, (freed, booked)
    assert len(mgr._storage._files_by_id) == 1  # b's file stays
