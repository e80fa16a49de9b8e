"""Browser tests: headless Chromium against a real server (``app_url``, tests/conftest.py).

**Waits follow what the page says, not the clock.** On a loaded machine a page takes as long
as it takes: a wait (:func:`see`, :func:`wait_idle`, :func:`ran`) lasts as long as the page
shows that it works — a script run going on (its websocket has carried the run's start and not
yet its end), the front end's run state not at rest, its client connecting, a request in
flight (an upload) — or has changed since the last look (a run ended, another began), and
fails only once the page has sat idle for :data:`IDLE_SECONDS` without showing what is awaited,
or after :data:`CEILING_SECONDS` in all. The runs are counted from the messages the page's
websocket receives (:class:`Runs`), so every page is opened through the ``page`` fixture or
:func:`new_page`. :func:`cpu_burner` loads the machine beside a test
(tests/e2e/test_headers.py)."""

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Locator, Page, WebSocket, expect
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from bench.server import stop_server

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--no-first-run", "--disable-quic"]

#: A wait fails once the page has shown no sign of work for this long without what it awaits
IDLE_SECONDS = 30.0
#: A wait fails after this long in all, however busy the page
CEILING_SECONDS = 300.0
#: One attempt of a wait (ms): the page's state is read again after each
SLICE_MS = 1000

#: The front end's run state and connection state (on the app's root element)
FRONT = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  return app ? [app.dataset.testScriptState, app.dataset.testConnectionState] : [null, null];
}"""
#: Run states of a front end at rest (no run going on nor asked for)
AT_REST = ("notRunning", "compilationError")


@dataclass
class Runs:
    """A page's script runs, as its websocket carries them: every run (of the page or of a
    fragment) begins with a ``new_session`` message and ends with a ``script_finished``
    (early when a rerun replaced it), or with the next run's ``new_session`` (a run cut short
    by a rerun may send no end of its own); the page asks for one with a ``rerun_script``."""

    #: runs begun
    begun: int = 0
    #: runs that ended, but those cut short by a rerun
    finished: int = 0
    #: runs the page asked for
    asked: int = 0
    #: whether a run has begun and not ended
    running: bool = False
    #: runs begun when the last run that was not cut short ended
    ended_begun: int = 0
    #: the widget values (by key) the page last asked a run with, and the runs begun then
    asked_with: dict[str, Any] = field(default_factory=dict)
    asked_begun: int = 0

    def received(self, payload: str | bytes) -> None:
        # Streamlit's messages are imported here: this conftest is loaded whenever tests/ is
        # collected, the unit tier too, which imports no Streamlit (tests/test_tiers.py)
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        if not isinstance(payload, bytes):
            return
        msg = ForwardMsg.FromString(payload)
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            self.begun += 1
            self.running = True
        elif kind == "script_finished":
            self.running = False
            if msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                self.finished += 1
                self.ended_begun = self.begun

    def sent(self, payload: str | bytes) -> None:
        from streamlit.proto.BackMsg_pb2 import BackMsg

        if not isinstance(payload, bytes):
            return
        msg = BackMsg.FromString(payload)
        if msg.WhichOneof("type") == "rerun_script":
            self.asked += 1
            self.asked_with = {widget_key(w.id): widget_value(w)
                               for w in msg.rerun_script.widget_states.widgets}
            self.asked_begun = self.begun

    def shows(self, key: str, value: Any) -> bool:
        """Whether the page last asked a run with widget ``key`` at ``value`` and a run begun
        after it asked has ended (what the page shows is drawn from that value)."""
        return self.asked_with.get(key) == value and self.ended_begun > self.asked_begun

    def connected(self, socket: WebSocket) -> None:
        """A new websocket: what ran over the old one is over."""
        self.running = False
        socket.on("framereceived", self.received)
        socket.on("framesent", self.sent)


def widget_key(widget_id: str) -> str:
    """The key a widget was given (``$$ID-<hash>-<key>``), or its id when it has none."""
    parts = widget_id.split("-", 2)
    return parts[2] if widget_id.startswith("$$ID-") and len(parts) == 3 else widget_id


def widget_value(state: Any) -> Any:
    """A widget's value in a ``rerun_script`` message; a list for an array (a slider's)."""
    kind = state.WhichOneof("value")
    value = getattr(state, kind) if kind else None
    return list(value.data) if hasattr(value, "data") else value


def follow_runs(page: Page) -> Page:
    """Count ``page``'s runs (:class:`Runs`) and HTTP requests in flight from now on (before it
    opens the dashboard); give the page."""
    runs, flying = Runs(), set()
    page.on("websocket", runs.connected)
    page.on("request", lambda request: flying.add(request))
    page.on("requestfinished", lambda request: flying.discard(request))
    page.on("requestfailed", lambda request: flying.discard(request))
    page._sdc_runs, page._sdc_requests = runs, flying  # type: ignore[attr-defined]
    return page


def new_page(where: Browser | BrowserContext) -> Page:
    """A new page (in a new context of a browser, or in a context) whose runs are followed."""
    return follow_runs(where.new_page())


@pytest.fixture
def page(page: Page) -> Page:
    """pytest-playwright's page, its runs followed (:func:`follow_runs`)."""
    return follow_runs(page)


def runs(page: Page) -> Runs:
    found = getattr(page, "_sdc_runs", None)
    if found is None:
        raise AssertionError("the page's runs are not followed: open it through the page "
                             "fixture or tests.e2e.conftest.new_page")
    return found


def page_state(page: Page) -> tuple[Any, ...]:
    """(front end's run state, connection state, runs begun, runs finished, a run going on,
    requests in flight); the front end's Nones while a document loads."""
    counted = runs(page)
    try:
        script, connection = page.evaluate(FRONT)
    except PlaywrightError:  # the document is being replaced
        script, connection = None, None
    return (script, connection, counted.begun, counted.finished, counted.running,
            len(page._sdc_requests))  # type: ignore[attr-defined]


def working(state: tuple[Any, ...]) -> bool:
    """Whether the page shows that it works: a run going on or asked for, the client
    connecting, a document loading, a request in flight."""
    script, connection, _, _, running, flying = state
    return (running or script not in AT_REST
            or connection not in ("CONNECTED", "DISCONNECTED_FOREVER") or flying > 0)


def follow(page: Page, attempt: Callable[[int], Any], idle: float = IDLE_SECONDS) -> Any:
    """``attempt(ms)`` (an assertion or a wait of Playwright's, for at most ``ms``) again and
    again until it passes, while the page works or has changed since the last try; its error
    once the page has been idle ``idle`` seconds (:data:`IDLE_SECONDS`) or after
    :data:`CEILING_SECONDS`."""
    start = quiet_since = time.monotonic()
    seen = page_state(page)
    while True:
        try:
            return attempt(SLICE_MS)
        except (AssertionError, PlaywrightTimeout):
            now = time.monotonic()
            state = page_state(page)
            if working(state) or state != seen:
                quiet_since = now
            seen = state
            if now - quiet_since > idle or now - start > CEILING_SECONDS:
                raise


class _Awaited:
    """Playwright's assertions on a locator (``expect(locator)``), each waited for as
    :func:`follow` does."""

    def __init__(self, locator: Locator) -> None:
        self._locator = locator

    def __getattr__(self, name: str) -> Callable[..., None]:
        check = getattr(expect(self._locator), name)

        def awaited(*args: Any, **kwargs: Any) -> None:
            follow(self._locator.page, lambda ms: check(*args, **kwargs, timeout=ms))

        return awaited


def see(locator: Locator) -> Any:
    """``expect(locator)`` whose assertions wait as long as the page works (:func:`follow`):
    ``see(sidebar).to_contain_text("small.csv")``."""
    return _Awaited(locator)


def wait_idle(page: Page, since: int | None = None) -> None:
    """Until no run is going on and the front end is at rest; with ``since`` (a count of
    finished runs, :attr:`Runs.finished`), until a run finished after it, too."""
    counted = runs(page)

    def attempt(ms: int) -> None:
        deadline = time.monotonic() + ms / 1000
        while True:
            state = page_state(page)
            if not working(state) and (since is None or counted.finished > since):
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"the page still works or has not run: {state}")
            page.wait_for_timeout(50)  # lets Playwright deliver the page's events

    follow(page, attempt)


@contextmanager
def ran(page: Page) -> Iterator[None]:
    """Around an action that runs the page's script (a click on a page's link or a button, a
    widget's new value, an upload): until the run it started has finished."""
    before = runs(page).finished
    yield
    wait_idle(page, since=before)


def give_files(page: Page, files: Any, attempts: int = 3) -> None:
    """Give ``files`` to the page's first file uploader, once the page is painted, until the
    run the upload starts has finished. Streamlit's browser code may drop a file given while
    it still handles the page's last messages (the upload address asked for and received,
    the file never sent, no run): when no run has begun 10 s after the page went idle, the
    file is given again, as a user would pick it again (docs/developing.md, "Test tiers")."""
    give_each([(page, files)], attempts)


def give_files_until(page: Page, files: Any, shown: Locator, attempts: int = 3) -> None:
    """:func:`give_files` for a test that acts while the upload's run goes on: until ``shown``
    (what that run draws first) is visible, not until the run has finished. A file dropped (no
    run begun 10 s after the page went idle) is given again."""
    for _ in range(attempts):
        painted(page)
        begun = runs(page).begun
        page.locator('[data-testid="stFileUploader"] input[type="file"]').first \
            .set_input_files(files)
        deadline = time.monotonic() + 10
        while runs(page).begun == begun and (working(page_state(page))
                                             or time.monotonic() < deadline):
            page.wait_for_timeout(50)
        if runs(page).begun > begun:
            see(shown).to_be_visible()
            return
    raise AssertionError(f"the page dropped the file {attempts} times: no run began")


def give_each(given: list[tuple[Page, Any]], attempts: int = 3) -> None:
    """:func:`give_files` for several pages at once: each page is given its files before any
    is waited for (their runs overlap); a page whose file was dropped is given it again."""
    pending = given
    for attempt in range(attempts):
        marks = []
        for page, files in pending:
            painted(page)
            counted = runs(page)
            marks.append((counted.finished, counted.begun, time.monotonic() + 10))
            page.locator('[data-testid="stFileUploader"] input[type="file"]').first \
                .set_input_files(files)
        dropped = []
        for (page, files), (before, begun, deadline) in zip(pending, marks, strict=True):
            counted = runs(page)
            while counted.begun == begun and (working(page_state(page))
                                               or time.monotonic() < deadline):
                page.wait_for_timeout(50)
            if counted.begun > begun or attempt == attempts - 1:
                wait_idle(page, since=before)
            else:
                dropped.append((page, files))
        if not dropped:
            return
        pending = dropped


#: How long a click on an open select box's option may wait for it to be stable: on a loaded
#: machine a run of the page redrew the list under the click for 30 s (the option detached
#: again and again); the list is opened anew instead.
CHOICE_CLICK_MS = 10_000
#: How long a select box's list may show no option while the page is idle before it is opened
#: again (s): a click that landed while the page settled left the list closed, and the wait
#: for its option sat out the whole :data:`IDLE_SECONDS` before the next attempt
CHOICE_IDLE_SECONDS = 5.0


def choose(page: Page, label: str, option: str, attempts: int = 3) -> None:
    """Choose ``option`` in the select box ``label``: open its list (again, if a run of the
    page closed it before the option showed or redrew it under the click) and click the
    option; until the run it starts has ended (in a form, which runs nothing until it is sent,
    until the page is at rest)."""
    box = page.get_by_test_id("stSelectbox").filter(has_text=label)
    wanted = page.get_by_role("option", name=option, exact=True)
    for attempt in range(attempts):
        wait_idle(page)
        in_form = box.locator("xpath=ancestor::*[@data-testid='stForm']").count() > 0
        box.click()
        last = attempt == attempts - 1
        try:
            follow(page, lambda ms: wanted.wait_for(state="visible", timeout=ms),
                   idle=IDLE_SECONDS if last else CHOICE_IDLE_SECONDS)
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
            if last:
                raise
            continue
        try:
            if in_form:
                wanted.click(timeout=CHOICE_CLICK_MS)
                wait_idle(page)
            else:
                with ran(page):
                    wanted.click(timeout=CHOICE_CLICK_MS)
        except PlaywrightTimeout:  # a run redrew the list under the click: open it again
            page.keyboard.press("Escape")
            if attempt == attempts - 1:
                raise
            continue
        return


def pick_options(page: Page, label: str, names: list[str], clear: bool = False) -> None:
    """Pick ``names`` one by one in the multiselect ``label`` (after clearing it), each
    until the run it starts has ended."""
    box = page.get_by_test_id("stMultiSelect").filter(has_text=label)
    if clear:
        with ran(page):
            box.get_by_role("button", name="Clear all").click()
    for name in names:
        field = box.locator("input")
        field.click()
        field.fill(name)
        with ran(page):
            page.get_by_role("option", name=name, exact=True).click()
            page.keyboard.press("Escape")


def band_age(page: Page, presses: int = 10) -> Locator:
    """Move the Protect page's age band width slider ``presses`` steps right with the keyboard
    (from 0: width ``presses``), until the page shows the figures of the width reached; give
    the slider. The slider sends its value a moment after the last key, so a run that ended
    after the presses may be one of an earlier width: the wait is for a run asked with the
    width reached (:meth:`Runs.shows`)."""
    slider = page.get_by_role("slider", name="Band width of age")
    width = float(slider.input_value()) + presses
    slider.focus()
    with ran(page):
        for _ in range(presses):
            slider.press("ArrowRight")
    counted = runs(page)

    def attempt(ms: int) -> None:
        deadline = time.monotonic() + ms / 1000
        while not (counted.shows("w_p_band_age", [width]) and not working(page_state(page))):
            if time.monotonic() > deadline:
                raise AssertionError(f"no run asked with age band width {width} has ended: "
                                     f"{counted.asked_with.get('w_p_band_age')}")
            page.wait_for_timeout(50)

    follow(page, attempt)
    return slider


#: Resolves once the page's fonts have loaded and two frames have been painted since
PAINTED = """() => document.fonts.ready.then(() => new Promise(
    done => requestAnimationFrame(() => requestAnimationFrame(done))))"""


def painted(page: Page) -> None:
    """Until no run is going on and what the last one drew is on screen (its fonts loaded,
    two frames painted since: charts and data grids draw in the frames after their
    elements), and what drawing it asked the server for has arrived."""
    wait_idle(page)
    page.evaluate(PAINTED)
    wait_idle(page)


def shot(page: Page, folder: Path, name: str) -> None:
    """A screenshot of the whole page, once the run is over and the page painted, as
    ``folder/name.png``."""
    painted(page)
    page.screenshot(path=folder / f"{name}.png", full_page=True)


#: Metric labels and values, and button labels, whose text is wider than their box (the
#: browser cuts them).
CUT = """() => [...document.querySelectorAll(
    '[data-testid=stMetricLabel], [data-testid=stMetricLabel] *, '
    + '[data-testid=stMetricValue], [data-testid=stMetricValue] *, '
    + 'button[data-testid^=stBaseButton], button[data-testid^=stBaseButton] *')]
  .filter(e => e.scrollWidth > e.clientWidth + 1)
  .map(e => `${e.textContent.trim()} (${e.scrollWidth} px in ${e.clientWidth})`)"""


def tile(page: Page, label: str | re.Pattern):
    """The metric tiles whose label holds ``label``: not those whose help text mentions it
    (a tile drawn as HTML, ui/logic/tiles.py, keeps its help in the page for a screen
    reader)."""
    return page.get_by_test_id("stMetric").filter(
        has=page.get_by_test_id("stMetricLabel").filter(has_text=label))


#: The label of the table of numbers under each chart
TABLE_LABEL = "Numbers behind this chart"


def focused(locator) -> bool:
    """Whether ``locator`` has the keyboard focus."""
    return locator.evaluate("el => el === document.activeElement")


def tab_to(page: Page, target, limit: int = 120) -> int:
    """Press Tab until ``target`` has the keyboard focus; the number of presses. The budget
    was 80, then 100; the Protect page's band width slider is now 101 presses from the table
    under its chart (89 before the synthesis block's 12 controls, 76 before that), because of
    controls added since: the "Every attacker of the linkage attack" expander, the "Add N more
    like …" button of PRAM (on the example data), the analysis panel's table of every term (a
    data frame: its toolbar and columns take 12) and the synthesis block."""
    for presses in range(1, limit + 1):
        page.keyboard.press("Tab")
        if focused(target):
            return presses
    active = page.evaluate("() => document.activeElement.outerHTML.slice(0, 200)")
    raise AssertionError(f"not reached with {limit} Tab presses; focus is on {active}")


#: A CPU burner spins at most this long, whatever becomes of its test (s)
BURN_SECONDS = 900
BURN = "import time\nend = time.monotonic() + {s}\nwhile time.monotonic() < end:\n    pass\n"


@pytest.fixture
def cpu_burner() -> Iterator[list[int]]:
    """A process spinning on the CPU for every core this process may use, for the test's
    duration (at most :data:`BURN_SECONDS`), killed after it: the server and the browser then
    share the cores with as many busy processes again (a load average of 4 on 2 cores); the
    burners' pids. The test fails if a burner stopped before its end."""
    burners = [subprocess.Popen([sys.executable, "-c", BURN.format(s=BURN_SECONDS)],
                                start_new_session=True)
               for _ in range(len(os.sched_getaffinity(0)))]
    try:
        yield [b.pid for b in burners]
        assert all(b.poll() is None for b in burners), "a CPU burner stopped before the test"
    finally:
        for b in burners:
            stop_server(b, grace=0)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"Chromium is required in CI and was not found at {CHROMIUM}")
        pytest.skip("Debian chromium is not installed (make test installs it as root)")
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": ARGS}


@pytest.fixture(scope="session")
def shots(pytestconfig) -> Path:
    """Where screenshots go: the pytest output folder (``--output``, default test-results)."""
    folder = Path(pytestconfig.getoption("output", "test-results")) / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder
