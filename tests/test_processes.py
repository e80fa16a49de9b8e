"""Several server processes (docs/deploying.md, "Several server processes"): two real
``streamlit run app.py`` share no session, no resume token and no memory budget; a server that
dies takes its worker processes with it (docs/deploying.md, "Errors, closed tabs and load");
and the load benchmark's figures of a process with its children (bench/server.py)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qs

import pytest

from bench.bench_load import QI, csv_bytes
from bench.server import (
    ROOT,
    TreeSampler,
    alive,
    cpu_seconds,
    free_port,
    group,
    kill_group,
    live,
    marked,
    memory_kb,
    of_checkout,
    start_server,
    started,
    stop_server,
    tree,
    tree_cpu_seconds,
    tree_memory_kb,
)
from bench.st_client import StSession
from tests.big_upload import NEED, UPLOAD
from tests.conftest import RUN_ENV, end_leftovers, run_async

EXAMPLE = "ACTG 175"
# A cannot admit the upload even alone; B admits it beside the example data sets of the
# sessions this module opens on it
BUDGET_A = int(0.9 * NEED)
BUDGET_B = 3 * NEED


@pytest.fixture(scope="module")
def two(tmp_path_factory) -> dict[str, tuple[subprocess.Popen, int]]:
    """Servers A and B, started side by side, each with a memory budget of its own."""
    logs = tmp_path_factory.mktemp("servers")

    def start(name: str, budget: int) -> tuple[subprocess.Popen, int]:
        port = free_port()
        return start_server(port, {"SDC_MEMORY_BUDGET": str(budget)},
                            log=logs / f"{name}.log"), port

    with ThreadPoolExecutor(2) as pool:
        started = {name: pool.submit(start, name, budget)
                   for name, budget in (("A", BUDGET_A), ("B", BUDGET_B))}
        servers = {name: f.result() for name, f in started.items()}
    yield servers
    for proc, _ in servers.values():
        stop_server(proc)


def url(servers, name: str) -> str:
    return f"http://127.0.0.1:{servers[name][1]}"


def query(s: StSession) -> dict[str, str]:
    """The page's address's query (its resume token and the server's run id)."""
    return {k: v[0] for k, v in parse_qs(s._query).items()}


def budget_caption(s: StSession) -> str:
    return next(line for line in s.text().splitlines() if "budget" in line and "hold" in line)


async def nothing_is_shared(servers) -> None:
    a = StSession(timeout=60)
    await a.connect(url(servers, "A"))
    await a.upload("Upload a table", "mine.csv", csv_bytes(300, seed=7))
    await a.set_value("Quasi-identifiers", QI)
    assert "mine.csv" in a.text() and a.errors() == []
    address = a._query  # what the browser's address holds: ?resume=…&run=…
    token, run_a = query(a)["resume"], query(a)["run"]
    await a.close()  # the tab is closed: its work waits for a reload to take it over

    # on B: a fresh session has the example; A's address starts afresh, takes nothing over
    fresh = StSession(timeout=60)
    await fresh.connect(url(servers, "B"))
    assert EXAMPLE in fresh.text() and "mine.csv" not in fresh.text()
    assert query(fresh)["run"] != run_a  # another process
    await fresh.close()
    stray = StSession(timeout=60, browser=a)  # the same browser, sent to the other process
    await stray.connect(url(servers, "B"), address)
    assert "mine.csv" not in stray.text() and EXAMPLE in stray.text()
    assert query(stray)["resume"] != token  # a token of its own: A's is unknown to B
    assert "The server was restarted since this page was opened" in stray.text()
    assert stray.widget("Quasi-identifiers", "multiselect").value != QI
    await stray.close()

    # the same address on A, the process that holds the work: the reload takes it over
    back = StSession(timeout=60, browser=a)  # a reload in the same browser
    await back.connect(url(servers, "A"), address)
    assert "mine.csv" in back.text()
    assert back.widget("Quasi-identifiers", "multiselect").value == QI
    assert query(back)["resume"] == token
    await back.close()


def test_two_processes_share_no_session_nor_resume_token(two):
    """Why the proxy must be sticky: a reload takes its session's work over only on the
    process that holds it."""
    run_async(nothing_is_shared(two))


async def upload_to(base: str, name: str) -> tuple[StSession, str]:
    s = StSession(timeout=120)
    await s.connect(base)
    await s.upload("Upload a table", name, UPLOAD)
    return s, " ".join(s.errors())


async def each_own_budget(servers) -> None:
    a, refused = await upload_to(url(servers, "A"), "big.csv")
    assert "The file was not loaded" in refused
    assert f"{size(BUDGET_A)} budget" in refused or f"budget of {size(BUDGET_A)}" in refused
    assert "big.csv" not in a.text() and EXAMPLE in a.text()
    b, errors = await upload_to(url(servers, "B"), "big.csv")
    assert errors == "" and "big.csv" in b.text()  # the same file, admitted by B
    assert f"of its {size(BUDGET_B)} budget" in budget_caption(b)
    held_b = held(budget_caption(b))
    assert held_b >= 35e6  # B's ledger holds the table …
    again = StSession(timeout=60)
    await again.connect(url(servers, "A"))
    caption = budget_caption(again)  # … which A's ledger knows nothing of
    assert f"of its {size(BUDGET_A)} budget" in caption and held(caption) < 35e6
    for s in (a, b, again):
        await s.close()


def size(n: int) -> str:
    from ui.infra.memory import size_text

    return size_text(n)


def held(caption: str) -> float:
    """Bytes the server's ledger holds (the sessions' data and the built-in data sets, counted
    once), from the sidebar's caption."""
    number, unit = re.search(r"built-in data sets ([0-9.,]+) (\w+) of its", caption).groups()
    return float(number.replace(",", "")) * {"bytes": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}[unit]


def test_each_process_enforces_its_own_memory_budget(two):
    assert NEED > BUDGET_A and 35e6 < NEED < BUDGET_B
    run_async(each_own_budget(two))


def test_two_processes_answer_their_health_checks(two):
    (proc_a, port_a), (proc_b, port_b) = two["A"], two["B"]
    assert proc_a.pid != proc_b.pid and port_a != port_b
    assert alive(port_a) and alive(port_b)
    assert proc_a.poll() is None and proc_b.poll() is None
    assert proc_b.pid not in tree(proc_a.pid) and proc_a.pid not in tree(proc_b.pid)


# -- a server that dies ------------------------------------------------------------------------

#: How long after a server's end none of its processes may run (s)
GONE_WITHIN = 5


def remaining(pgid: int, mark: str, since: int) -> dict[str, list[int]]:
    """What still runs of a server: by its process group, by the environment it passed on,
    and by the command line or working directory naming this checkout."""
    return {"group": group(pgid), "environment": marked("SDC_TEST_SERVER", mark),
            "checkout": of_checkout(ROOT, since)}


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_server_that_dies_leaves_no_process_behind(tmp_path, how):
    """Issue 51: after ``make test`` 37 worker and manager processes of the servers the tests
    had started were still running; killed (the operator, the out-of-memory killer) or
    stopped (a container's stop sends SIGTERM, and the server then ends by the signal, without
    its exit handlers), a server must take its worker pool and its manager with it."""
    mark = uuid.uuid4().hex
    proc = start_server(free_port(), {"SDC_WORKERS": "2", "SDC_TEST_SERVER": mark},
                        log=tmp_path / "server.log")
    since = started(proc.pid)
    try:
        deadline = time.monotonic() + 120  # the warm-up starts a worker and the manager
        while len(tree(proc.pid)) < 4 and time.monotonic() < deadline:
            time.sleep(0.2)
        family = tree(proc.pid)
        assert len(family) >= 4, family  # the server, its resource tracker, a worker, the manager
        assert set(family) <= set(group(proc.pid)) and set(family) <= set(marked(
            "SDC_TEST_SERVER", mark)) and set(family) <= set(of_checkout(ROOT, since))
        os.kill(proc.pid, how)
        proc.wait(timeout=60)
        deadline = time.monotonic() + GONE_WITHIN
        while any(remaining(proc.pid, mark, since).values()) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = remaining(proc.pid, mark, since)
        assert not any(left.values()), f"{GONE_WITHIN} s after the server ended: {left}"
    finally:
        kill_group(proc.pid)


def test_stop_server_ends_every_process_of_the_server():
    """The tests' and benchmarks' way to stop a server leaves nothing of it either."""
    proc = start_server(free_port(), {"SDC_WORKERS": "2"})
    deadline = time.monotonic() + 120
    while len(tree(proc.pid)) < 4 and time.monotonic() < deadline:
        time.sleep(0.2)
    family = tree(proc.pid)
    stop_server(proc)
    assert len(family) >= 4, family
    assert group(proc.pid) == [] and live(family) == []


ORPHAN = ("import subprocess, sys\n"
          "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'],\n"
          "                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
          "print(child.pid, flush=True)")


def test_the_end_of_a_run_names_and_ends_the_processes_it_left():
    """tests/conftest.py's check at the end of a run: what the run started and did not stop
    is found by the environment it inherited, an orphan whose parent has ended too."""
    mark = uuid.uuid4().hex
    env = {**os.environ, RUN_ENV: mark}
    stray = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], env=env,
                             start_new_session=True)
    orphan = stray.pid
    try:
        parent = subprocess.run([sys.executable, "-c", ORPHAN], env=env, capture_output=True,
                                text=True, timeout=60)
        orphan = int(parent.stdout)
        left = end_leftovers(mark, 0.5)
        assert sorted(int(line.split()[0]) for line in left) == sorted([stray.pid, orphan])
        assert all("time.sleep(600)" in line for line in left)
        assert stray.wait(timeout=10) == -signal.SIGKILL
        assert live([orphan]) == []
        start = time.monotonic()
        assert end_leftovers(mark, 10) == [] and time.monotonic() - start < 2
    finally:
        for pid in live([stray.pid, orphan]):
            os.kill(pid, signal.SIGKILL)



def test_a_shell_opened_in_the_checkout_is_not_a_server_s():
    """A process in the checkout of a session older than the server (an onlooker's shell, a
    command run there while the tests run) is not counted as the server's; one that left for a
    session of its own, as a server's escaping child would, is."""
    since = started(os.getpid()) + 1  # after this process and the session it runs in
    sleep = [sys.executable, "-c", "import time; time.sleep(60)"]
    onlooker = subprocess.Popen(sleep, cwd=ROOT)
    escaped = subprocess.Popen(sleep, cwd=ROOT, start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while escaped.pid not in of_checkout(ROOT, since) and time.monotonic() < deadline:
            time.sleep(0.05)
        found = of_checkout(ROOT, since)
        assert escaped.pid in found and onlooker.pid not in found
    finally:
        for proc in (onlooker, escaped):
            proc.kill()
            proc.wait()

# -- a process with its children (bench/server.py) ---------------------------------------------

BURN = ("import time\nt = time.process_time()\nwhile time.process_time() - t < {s}: pass\n"
        "print('burnt', flush=True)\n{then}")


def parent(burn: str) -> subprocess.Popen:
    """A python that runs ``burn`` in a child of its own and passes on what it prints."""
    code = ("import subprocess, sys\n"
            f"child = subprocess.Popen([sys.executable, '-c', {burn!r}])\n"
            "child.wait()\nprint('done', flush=True)\nimport time\ntime.sleep(60)")
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)


def test_the_tree_counts_a_live_child():
    proc = parent(BURN.format(s=0.5, then="import time\ntime.sleep(60)"))
    try:
        assert proc.stdout.readline() == "burnt\n"
        kids = tree(proc.pid)[1:]
        assert len(kids) == 1
        child = kids[0]
        assert cpu_seconds(child) >= 0.45
        assert tree_cpu_seconds(proc.pid) >= cpu_seconds(proc.pid) + cpu_seconds(child) - 0.02
        assert tree_memory_kb(proc.pid, "VmRSS") > memory_kb(proc.pid, "VmRSS")
        assert tree_memory_kb(proc.pid, "VmHWM") >= tree_memory_kb(proc.pid, "VmRSS")
        with TreeSampler(proc.pid, every=0.05) as sampler:
            time.sleep(0.2)
        assert sampler.workers == 1 and set(sampler.peaks_kb) == {proc.pid, child}
        assert 0 < sampler.peak_sum_kb <= sampler.sum_of_peaks_kb
    finally:
        for pid in tree(proc.pid)[::-1]:
            os.kill(pid, signal.SIGKILL)
        proc.wait()


def test_the_tree_counts_a_child_that_ended():
    """A finished worker's CPU stays in its parent's figure (``cutime``/``cstime``)."""
    proc = parent(BURN.format(s=0.5, then=""))
    try:
        assert proc.stdout.readline() == "burnt\n"
        assert proc.stdout.readline() == "done\n"
        assert tree(proc.pid) == [proc.pid]
        assert cpu_seconds(proc.pid) < 0.45  # its own
        assert tree_cpu_seconds(proc.pid) >= 0.45  # with the child's
    finally:
        proc.kill()
        proc.wait()
