"""``make workshop`` (issue 54, item 3; ``ui/infra/workshop.py``): N real server processes
behind real nginx with the shipped deploy/nginx.conf, sticky by nginx's ``sdc_route`` cookie,
each with its share of the memory budget and the workers; a signal, or the end of one of them,
stops every process it started; bad input is one line and exit status 2.

A process is told apart by the browser cookie it issues to a request without one
(``sdc_browser=<SERVER_RUN>.<random>``, ``ui/infra/server.py``): ``SERVER_RUN`` is drawn once
per server process."""

from __future__ import annotations

import difflib
import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from typing import IO

import pytest

from bench.server import children, free_port, live, marked, tree
from ui.infra import workshop

ROOT = Path(__file__).resolve().parents[1]
#: Marks every process a workshop of these tests starts (they inherit the environment)
MARK = "SDC_TEST_WORKSHOP"
#: How long a workshop of two processes may take to open on a busy 2-core machine (s)
OPEN_WAIT = 240.0


# -- a workshop, started as the command line ----------------------------------------------------


def launch(args: list[str], env: dict[str, str] | None = None,
           log: IO[bytes] | None = None) -> subprocess.Popen:
    """``python -m ui.infra.workshop`` with ``args``, ``env`` added to the environment; its
    stdout a pipe, its stderr (the servers' logs too) the file ``log`` (else an anonymous
    one: a pipe nobody reads would fill)."""
    return subprocess.Popen([sys.executable, "-m", "ui.infra.workshop", *args], cwd=ROOT,
                            env={**os.environ, **(env or {})}, stdout=subprocess.PIPE,
                            stderr=log or tempfile.TemporaryFile(), text=True)


def opened(proc: subprocess.Popen) -> str:
    """The line the workshop prints once it is open (the test fails if it ends first)."""
    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if sel.select(OPEN_WAIT):
            line = proc.stdout.readline()
            if line:
                return line
    end(proc)
    pytest.fail(f"the workshop did not open (status {proc.returncode})")


def end(proc: subprocess.Popen) -> None:
    """Stop a workshop that a failed test left running: SIGINT, then SIGKILL to what is left
    of every process it started."""
    family = tree(proc.pid)
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    for pid in live(family):
        os.kill(pid, signal.SIGKILL)


def command(pid: int) -> list[bytes]:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read().split(b"\0")


def prefix_of(nginx: int) -> Path:
    """The prefix directory of the nginx master ``nginx``, from its title ("nginx: master
    process /usr/sbin/nginx -p <prefix> -c …")."""
    found = re.search(rb" -p ([^ ]+)", b" ".join(command(nginx)))
    assert found, command(nginx)
    return Path(found.group(1).decode())


def servers(proc: subprocess.Popen) -> list[int]:
    """The workshop's server processes (``streamlit run``: its children but nginx)."""
    return [pid for pid in children(proc.pid) if b"streamlit" in command(pid)]


def environment(pid: int) -> dict[str, str]:
    with open(f"/proc/{pid}/environ", "rb") as f:
        pairs = [p.split(b"=", 1) for p in f.read().split(b"\0") if b"=" in p]
    return {k.decode(): v.decode() for k, v in pairs}


def head(url: str, cookie: str | None = None) -> tuple[int, list[str]]:
    """The status and the Set-Cookie headers of a GET of ``url`` (with ``sdc_route=cookie``)."""
    request = urllib.request.Request(url, headers={"Cookie": f"sdc_route={cookie}"}
                                     if cookie else {})
    with urllib.request.urlopen(request, timeout=30) as r:
        r.read()
        return r.status, r.headers.get_all("Set-Cookie") or []


def cookie_value(cookies: list[str], name: str) -> str:
    found = [c.split(";")[0].split("=", 1)[1] for c in cookies if c.startswith(name + "=")]
    assert len(found) == 1, cookies
    return found[0]


def process_of(url: str, route: str | None = None) -> str:
    """Which server process answers a browser with ``sdc_route=route`` (none: a first
    visit): the ``SERVER_RUN`` of the ``sdc_browser`` cookie it issues."""
    _, cookies = head(url + "/_stcore/health", route)
    return cookie_value(cookies, "sdc_browser").split(".")[0]


# -- two processes behind nginx --------------------------------------------------------------


@pytest.fixture(scope="module")
def two_processes():
    """A workshop of two processes on a free port, with a budget of 3 GB and 3 workers to
    share: (its base URL, its process)."""
    port = free_port()
    proc = launch(["--processes", "2", "--port", str(port)],
                  {"SDC_MEMORY_BUDGET": "3GB", "SDC_WORKERS": "3", MARK: uuid.uuid4().hex})
    try:
        line = opened(proc)
        assert f"http://127.0.0.1:{port}" in line and "2 processes" in line
        yield f"http://127.0.0.1:{port}", proc
    finally:
        end(proc)


def test_the_page_answers_through_nginx_and_a_first_visit_gets_its_route_cookie(two_processes):
    url, _ = two_processes
    status, cookies = head(url + "/")
    assert status == 200
    route = cookie_value(cookies, "sdc_route")
    assert re.fullmatch(r"[0-9a-f]{32}", route)  # nginx's $request_id
    with urllib.request.urlopen(url + "/", timeout=30) as r:
        assert b"<html" in r.read().lower()
    # a browser that has the cookie is not given another
    _, cookies = head(url + "/", route)
    assert not [c for c in cookies if c.startswith("sdc_route=")]


def test_a_cookie_keeps_a_browser_on_one_process_and_cookies_reach_both(two_processes):
    url, proc = two_processes
    assert len(servers(proc)) == 2
    for route in ("a", "b", "0123456789abcdef0123456789abcdef"):
        assert len({process_of(url, route) for _ in range(6)}) == 1, route
    reached = {process_of(url, f"browser-{i}") for i in range(32)}
    assert len(reached) == 2  # all 32 on one process: about 1 chance in 2 billion
    # a first visit's cookie takes the browser back to the process that answered it
    for _ in range(6):
        _, cookies = head(url + "/_stcore/health")
        first = cookie_value(cookies, "sdc_browser").split(".")[0]
        assert process_of(url, cookie_value(cookies, "sdc_route")) == first


def test_each_process_has_its_share_of_the_budget_and_the_workers(two_processes):
    """3 GB and 3 workers on two processes: 1.5 GB each, 2 workers and 1."""
    _, proc = two_processes
    envs = [environment(pid) for pid in servers(proc)]
    assert [e["SDC_MEMORY_BUDGET"] for e in envs] == ["1500000000", "1500000000"]
    assert sorted(e["SDC_WORKERS"] for e in envs) == ["1", "2"]


# -- stopping ---------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM", "a server killed"])
def test_a_stop_ends_every_process_the_workshop_started(how):
    """Ctrl-C (SIGINT), SIGTERM, or the end of one server: nginx, the servers and their
    worker processes all end, and nginx's prefix directory is removed."""
    mark = uuid.uuid4().hex
    with tempfile.TemporaryFile() as log:
        proc = launch(["--processes", "2", "--port", str(free_port())], {MARK: mark}, log)
        try:
            opened(proc)
            family = tree(proc.pid)
            nginx = [p for p in family if b"nginx" in b" ".join(command(p))]
            prefix = prefix_of(nginx[0])
            assert prefix.is_dir() and len(servers(proc)) == 2
            assert len(family) >= 5  # the workshop, two servers (with their workers), nginx
            # nginx gives its worker processes no environment of their own
            assert set(family) <= set(marked(MARK, mark)) | set(nginx)
            if how == "a server killed":
                os.kill(servers(proc)[0], signal.SIGKILL)
            else:
                proc.send_signal(getattr(signal, how))
            status = proc.wait(timeout=60)
            out = proc.stdout.read()
            deadline = time.monotonic() + 5
            while (live(family) or marked(MARK, mark)) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert live(family) == [] and marked(MARK, mark) == []
            assert not prefix.exists()
            if how == "a server killed":
                log.seek(0)
                said = log.read().decode()
                assert status == 1 and "workshop: a server process ended" in said, said
            else:
                assert status == 0 and "stopped" in out
        finally:
            end(proc)


# -- bad input --------------------------------------------------------------------------------


def refused(args: list[str], env: dict[str, str] | None = None) -> str:
    """What the workshop says on stderr, asserting exit status 2, one line, no traceback and
    nothing started."""
    run = subprocess.run([sys.executable, "-m", "ui.infra.workshop", *args], cwd=ROOT,
                         env={**os.environ, **(env or {})}, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 2, (args, run.stderr)
    assert run.stdout == "" and "Traceback" not in run.stderr
    assert len(run.stderr.splitlines()) == 1 and run.stderr.startswith("workshop: ")
    return run.stderr


@pytest.mark.parametrize("processes", [
    "0", "-1", "abc", str(10**9), "", " ", "1.5", "2e1", "0x2", "½", "２", "1;rm -rf /",
    "<script>alert(1)</script>", "**bold**", "9" * 100_000, str(4 * workshop.cores() + 1)])
def test_processes_that_are_not_a_whole_number_in_range_are_refused(processes):
    said = refused(["--processes", processes, "--port", str(free_port())])
    assert "PROCESSES: not a whole number from 1 to" in said and len(said) < 200


@pytest.mark.parametrize("args", [["--port", "0"], ["--port", "65536"], ["--port", "http"],
                                  ["--port", "-5"], ["--address", "localhost; true"],
                                  ["--address", "999.1.1.1"], ["--processes"], ["--bogus"],
                                  ["--processes", "1", "2"]])
def test_other_bad_arguments_are_refused(args):
    refused(args)


def test_a_port_that_is_taken_is_refused():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        said = refused(["--processes", "1", "--port", str(port)])
    assert f"cannot listen on 127.0.0.1:{port}" in said


@pytest.mark.parametrize("env", [{"SDC_MEMORY_BUDGET": "lots"}, {"SDC_MEMORY_BUDGET": "-1GB"},
                                 {"SDC_WORKERS": "many"}, {"SDC_WORKERS": "-2"}])
def test_an_unreadable_budget_or_worker_setting_is_refused(env):
    """It would be shared out as its default without a word."""
    said = refused(["--processes", "1", "--port", str(free_port())], env)
    assert next(iter(env)) in said


def test_without_nginx_it_says_how_to_install_it(monkeypatch, capsys, tmp_path):
    """(In this process: the machine has nginx, so the test hides it.)"""
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(workshop, "NGINX_DIRS", ())
    assert workshop.main(["--processes", "1", "--port", str(free_port())]) == 2
    err = capsys.readouterr().err
    assert err == ("workshop: nginx is not installed: make tools installs it (Debian's "
                   "nginx-light), or apt-get install nginx-light\n")


# -- the shares and the configuration ---------------------------------------------------------


def test_the_workers_are_shared_out_as_evenly_as_whole_numbers_allow():
    for total in range(0, 13):
        for n in range(1, 9):
            got = workshop.worker_shares(total, n)
            assert len(got) == n
            if total == 0:
                assert got == [0] * n  # no pool anywhere, as SDC_WORKERS=0 asks
            else:
                assert min(got) >= 1 and max(got) - min(got) <= 1, (total, n, got)
                assert sum(got) == max(total, n), (total, n, got)


def test_the_budget_is_shared_out_without_exceeding_it():
    for budget in (3 * 10**9, 2**33 + 1, 7):
        for n in range(1, 9):
            share = workshop.budget_share(budget, n)
            assert share * n <= budget < (share + 1) * n


def test_the_configuration_is_the_shipped_one_with_its_port_and_servers(tmp_path):
    """Only the listen line and the upstream's server lines differ, and nginx reads it."""
    shipped = (ROOT / "deploy" / "nginx.conf").read_text()
    conf = workshop.nginx_conf(shipped, "127.0.0.1", 8123, [40001, 40002, 40003])
    changed = [line for line in difflib.ndiff(shipped.splitlines(), conf.splitlines())
               if line.startswith(("- ", "+ "))]
    assert sorted(changed) == sorted([
        "-         listen 127.0.0.1:8500;", "+         listen 127.0.0.1:8123;",
        "-         server 127.0.0.1:8501;", "-         server 127.0.0.1:8502;",
        "+         server 127.0.0.1:40001;", "+         server 127.0.0.1:40002;",
        "+         server 127.0.0.1:40003;"])
    # what keeps uploads off the disk is there as shipped
    assert "proxy_request_buffering off;" in conf and "proxy_max_temp_file_size 0;" in conf
    assert "hash $sdc_route consistent;" in conf
    assert "listen [::1]:8123;" in workshop.nginx_conf(shipped, "::1", 8123, [40001])
    (tmp_path / "nginx.conf").write_text(conf)
    check = subprocess.run(["nginx", "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"),
                            "-e", "stderr"], capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr


def test_a_template_out_of_shape_is_refused():
    shipped = (ROOT / "deploy" / "nginx.conf").read_text()
    with pytest.raises(RuntimeError, match="not one listen line"):
        workshop.nginx_conf(shipped.replace("server 127.0.0.1:", "server localhost:"),
                            "127.0.0.1", 8123, [40001])
