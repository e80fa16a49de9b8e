"""One command to serve a class: N dashboard processes behind nginx on one port
(``make workshop``; docs/deploying.md, "A workshop on one machine: `make workshop`").

Each process is ``streamlit run app.py`` as ``make run`` starts it, on a free port of
127.0.0.1, in a process group of its own (its worker processes join it), with its share of the
memory budget and of the worker processes (:func:`budget_share`, :func:`worker_shares`) in its
environment. nginx runs the shipped configuration, deploy/nginx.conf (sticky by its own
``sdc_route`` cookie, the security headers, the websocket, uploads passed through memory),
with only its ``listen`` line and its upstream's ``server`` lines replaced
(:func:`nginx_conf`), from a temporary prefix directory that is removed at the end. Ctrl-C,
SIGTERM or SIGHUP stops nginx and every server with its whole process group; so does the end
of any one of them.

    python -m ui.infra.workshop [--processes N] [--port P] [--address A]

Bad input (a number of processes that is not a whole number from 1 to :data:`PER_CORE` times
the cores, a port that is taken, nginx missing, an unreadable budget or worker setting) is one
line on stderr and exit status 2. A process that ends by itself (or no answer within
:data:`START_WAIT` seconds) ends the workshop with status 1; a stop asked for by a signal, with
status 0.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Sequence
from contextlib import suppress
from pathlib import Path
from types import FrameType

from sdc_core.checks import shown
from ui.infra.workers import WORKERS_ENV, default_workers
from ui.infra.workers import settings_problems as worker_problems
from ui.infra.workers import workers as configured_workers

ROOT = Path(__file__).resolve().parents[2]
#: The shipped nginx configuration: the workshop's template, used as it is but for its
#: ``listen`` line and its upstream's servers
TEMPLATE = ROOT / "deploy" / "nginx.conf"
#: Where nginx is looked for besides the ``PATH`` (Debian's is /usr/sbin/nginx, which is not on
#: an ordinary user's ``PATH``)
NGINX_DIRS = ("/usr/sbin", "/usr/local/sbin")
#: The most processes a workshop may start, per core
PER_CORE = 4
#: The port of ``make workshop`` (the address ``make run`` serves)
DEFAULT_PORT = 8501
#: The exit status of bad input
EXIT_BAD_INPUT = 2
#: How long the servers and nginx may take to answer after they start (s)
START_WAIT = 180.0
#: How long the processes have to end after SIGINT before their groups are killed (s)
STOP_GRACE = 10.0
#: How often the workshop looks whether a process has ended or a stop was asked for (s)
POLL = 0.2
#: The signals that stop the workshop
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

_LISTEN = re.compile(r"^(\s*)listen\s+\S+;", re.M)
_UPSTREAM = re.compile(r"^(\s*upstream\s+sdc\s*\{\n)(.*?)(^\s*\})", re.M | re.S)
_SERVER = re.compile(r"^(\s*)server\s+127\.0\.0\.1:\d+;\n", re.M)


class WorkshopError(ValueError):
    """Bad input or a machine that cannot serve the workshop: one readable line."""


def cores() -> int:
    """The cores this process may use (:func:`ui.infra.workers.default_workers`)."""
    return default_workers()


def parse_processes(text: str, cores: int) -> int:
    """A whole number of processes from 1 to ``PER_CORE * cores``; else :class:`WorkshopError`."""
    most = PER_CORE * cores
    if not re.fullmatch(r"\s*[0-9]{1,6}\s*", text) or not 1 <= int(text) <= most:
        raise WorkshopError(f"PROCESSES: not a whole number from 1 to {most} ({PER_CORE} per "
                            f"core of this machine's {cores}): {shown(text)}")
    return int(text)


def parse_port(text: str) -> int:
    """A TCP port from 1 to 65535; else :class:`WorkshopError`."""
    if not re.fullmatch(r"\s*[0-9]{1,5}\s*", text) or not 1 <= int(text) <= 65535:
        raise WorkshopError(f"PORT: not a port from 1 to 65535: {shown(text)}")
    return int(text)


def parse_address(text: str) -> str:
    """An IP address to listen on (``127.0.0.1``, ``0.0.0.0`` for every interface); else
    :class:`WorkshopError`."""
    try:
        return str(ipaddress.ip_address(text.strip()))
    except ValueError:
        raise WorkshopError(f"ADDRESS: not an IP address (127.0.0.1, or 0.0.0.0 for every "
                            f"interface): {shown(text)}") from None


def budget_share(budget: int, n: int) -> int:
    """Each of ``n`` processes' memory budget, in bytes: ``⌊budget / n⌋``, so that the
    processes together admit no more than the one budget."""
    return budget // n


def worker_shares(total: int, n: int) -> list[int]:
    """The worker processes of each of ``n`` server processes: process i (from 0) gets
    ``⌊total / n⌋ + [i < total mod n]``, at least 1, so that together they have ``total``
    (``max(total, n)`` when there are fewer workers than processes); ``total`` 0 (no pool,
    ``SDC_WORKERS=0``) gives each 0."""
    if total == 0:
        return [0] * n
    return [max(1, total // n + (i < total % n)) for i in range(n)]


def settings(n: int) -> list[dict[str, str]]:
    """The environment each of ``n`` processes adds: ``SDC_MEMORY_BUDGET`` (its share of the
    budget, :func:`sdc_core.data.decoded.budget`) and ``SDC_WORKERS`` (its share of the
    workers, :func:`ui.infra.workers.workers`). An unreadable setting of either is a
    :class:`WorkshopError`: it would be shared out as its default without a word."""
    from sdc_core.data.decoded import BUDGET_ENV, budget, parse_size

    problems = worker_problems()
    if os.environ.get(BUDGET_ENV):
        try:
            parse_size(os.environ[BUDGET_ENV])
        except ValueError as err:
            problems.append(str(err))
    if problems:
        raise WorkshopError(problems[0])
    memory = budget_share(budget(), n)
    return [{BUDGET_ENV: str(memory), WORKERS_ENV: str(w)}
            for w in worker_shares(configured_workers(), n)]


def _host(address: str) -> str:
    """An address as it is written before ``:port`` (an IPv6 one in brackets)."""
    return f"[{address}]" if ":" in address else address


def nginx_conf(template: str, address: str, port: int, upstreams: Sequence[int]) -> str:
    """The shipped configuration ``template`` listening on ``address:port``, its upstream's
    servers those of 127.0.0.1 on ``upstreams``; nothing else changed. A template without
    one ``listen`` line and an ``upstream sdc`` of ``server 127.0.0.1:…`` lines is a
    RuntimeError (the shipped file changed shape)."""
    upstream = _UPSTREAM.search(template)
    if len(_LISTEN.findall(template)) != 1 or upstream is None or not _SERVER.search(
            upstream.group(2)):
        raise RuntimeError(f"{TEMPLATE}: not one listen line and an upstream sdc of "
                           "server 127.0.0.1:… lines")
    indent = _SERVER.search(upstream.group(2)).group(1)  # type: ignore[union-attr]
    servers = "".join(f"{indent}server 127.0.0.1:{p};\n" for p in upstreams)
    body = _SERVER.sub("", upstream.group(2))
    conf = template[:upstream.start(2)] + servers + body + template[upstream.end(2):]
    return _LISTEN.sub(lambda m: f"{m.group(1)}listen {_host(address)}:{port};", conf)


def check_port(address: str, port: int) -> None:
    """:class:`WorkshopError` when nginx could not listen on ``address:port`` (taken, or not an
    address of this machine, or a port below 1024 without the right)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as nginx binds
        try:
            s.bind((address, port))
        except OSError as err:
            raise WorkshopError(f"cannot listen on {_host(address)}:{port}: "
                                f"{err.strerror or err}") from None


def check_nginx() -> str:
    """The nginx program, on the ``PATH`` or in :data:`NGINX_DIRS`; :class:`WorkshopError`
    when it is not installed."""
    found = shutil.which("nginx", path=os.pathsep.join(
        [os.environ.get("PATH", os.defpath), *NGINX_DIRS]))
    if found is None:
        raise WorkshopError("nginx is not installed: make tools installs it (Debian's "
                            "nginx-light), or apt-get install nginx-light")
    return found


def free_port() -> int:
    """A port of 127.0.0.1 that no process listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(port: int, env: dict[str, str]) -> subprocess.Popen:
    """``streamlit run app.py`` with ``make run``'s options on 127.0.0.1:``port``, ``env`` added
    to the environment, in a process group of its own; its log (stderr) goes to this
    process's, its greeting (stdout, which names its own port) nowhere."""
    return subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.address", "127.0.0.1",
         "--server.port", str(port), "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env={**os.environ, **env}, stdout=subprocess.DEVNULL,
        start_new_session=True)


def start_nginx(nginx: str, prefix: Path, conf: str) -> subprocess.Popen:
    """nginx in the foreground running ``conf`` from the prefix directory ``prefix`` (its pid
    file and empty temporary directories), its errors on stderr, in a process group of its
    own."""
    (prefix / "nginx.conf").write_text(conf)
    return subprocess.Popen([nginx, "-p", str(prefix), "-c", str(prefix / "nginx.conf"),
                             "-e", "stderr", "-g", "daemon off;"], start_new_session=True)


def answers(url: str) -> bool:
    """Whether ``url`` answers 200 (a server's health check, or through nginx)."""
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return bool(r.status == 200)
    except OSError:
        return False


def group(pgid: int) -> list[int]:
    """The processes of the process group ``pgid`` that still run (not zombies: an orphaned
    worker that has ended waits for whoever adopted it to reap it)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    state, _, pgrp = f.read().rsplit(")", 1)[1].split()[:3]
            except (OSError, ValueError):  # ended meanwhile
                continue
            if int(pgrp) == pgid and state not in ("Z", "X"):
                found.append(int(entry))
    return found


def stop(procs: Sequence[subprocess.Popen], grace: float = STOP_GRACE) -> None:
    """End every process of ``procs``, each the leader of a process group, and its group: SIGINT
    to each leader (a server then stops its worker processes and ends as it does on Ctrl-C;
    nginx ends at once), up to ``grace`` seconds for them to end, then SIGKILL to what is left
    of their groups, until none of it runs."""
    for proc in procs:
        if proc.poll() is None:
            with suppress(ProcessLookupError):
                proc.send_signal(signal.SIGINT)
    deadline = time.monotonic() + grace
    for proc in procs:
        with suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    deadline = time.monotonic() + grace
    for proc in procs:
        while group(proc.pid) and time.monotonic() < deadline:
            with suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.poll()  # reap the leader
            time.sleep(0.05)
        proc.wait()


class Workshop:
    """The processes of one workshop, stopped by :meth:`stop` or a signal
    (:data:`STOP_SIGNALS`)."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen] = []  # the servers, then nginx
        self.nginx: subprocess.Popen | None = None
        self.asked = False  # a signal asked for the stop

    def ask_stop(self, signum: int, frame: FrameType | None) -> None:
        """A signal handler: ask for the stop (the wait loops see it)."""
        self.asked = True

    def ended(self) -> subprocess.Popen | None:
        """A process of the workshop that has ended, if any."""
        return next((p for p in self.procs if p.poll() is not None), None)

    def wait_until(self, ready: list[str]) -> bool:
        """Wait until every URL of ``ready`` answers (:func:`answers`): False when a stop is
        asked for or a process ends first; RuntimeError after :data:`START_WAIT` seconds."""
        deadline = time.monotonic() + START_WAIT
        waiting = list(ready)
        while waiting:
            if self.asked or self.ended():
                return False
            if time.monotonic() > deadline:
                raise RuntimeError(f"the workshop did not answer within {START_WAIT:g} s")
            waiting = [u for u in waiting if not answers(u)]
            time.sleep(POLL)
        return True

    def stop(self) -> None:
        """Stop nginx and every server, each with its process group (:func:`stop`)."""
        stop(self.procs)


def _open(shop: Workshop, envs: list[dict[str, str]], conf: Callable[[list[int]], str],
          url: str, prefix: Path, nginx: str) -> bool:
    """Start the servers, then nginx with ``conf`` of their ports, in ``shop``: whether they
    all answered (``url`` through nginx) before a stop was asked for or a process ended."""
    ports = [free_port() for _ in envs]
    shop.procs += [start_server(p, env) for p, env in zip(ports, envs, strict=True)]
    if not shop.wait_until([f"http://127.0.0.1:{p}/_stcore/health" for p in ports]):
        return False
    shop.nginx = start_nginx(nginx, prefix, conf(ports))
    shop.procs.append(shop.nginx)
    return shop.wait_until([url + "/_stcore/health"])


def serve(processes: int, address: str, port: int, nginx: str) -> int:
    """Start ``processes`` servers and nginx on ``address:port``, print the address to open,
    and wait for a stop signal (status 0) or for a process to end (status 1); stop them all."""
    envs = settings(processes)
    template = TEMPLATE.read_text()
    nginx_conf(template, address, port, [DEFAULT_PORT])  # out of shape: said before any start
    shop = Workshop()
    for sig in STOP_SIGNALS:
        signal.signal(sig, shop.ask_stop)
    local = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(address, address)
    url = f"http://{_host(local)}:{port}"
    with tempfile.TemporaryDirectory(prefix="sdc-workshop-") as prefix:
        try:
            if _open(shop, envs, lambda ports: nginx_conf(template, address, port, ports), url,
                     Path(prefix), nginx):
                elsewhere = " (from other machines: this machine's address)" \
                    if local != address else ""
                many = f"{processes} processes" if processes > 1 else "1 process"
                print(f"The workshop is open at {url}{elsewhere}: {many} behind nginx; "
                      "Ctrl-C stops them all.", flush=True)
                while not shop.asked and not shop.ended():
                    time.sleep(POLL)
        finally:
            gone = None if shop.asked else shop.ended()
            shop.stop()  # nginx too, before its prefix directory goes
    if gone is not None:
        what = "nginx" if gone is shop.nginx else "a server process"
        print(f"workshop: {what} ended (status {gone.returncode}): every process stopped",
              file=sys.stderr)
        return 1
    print("The workshop has stopped: every process ended.", flush=True)
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse with one line on a bad argument, not usage and a message."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise WorkshopError(message)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit status."""
    parser = _Parser(prog="python -m ui.infra.workshop", description=__doc__.splitlines()[0])
    parser.add_argument("--processes", default=str(cores()),
                        help=f"server processes (default: the cores, {cores()}; at most "
                             f"{PER_CORE} a core)")
    parser.add_argument("--port", default=str(DEFAULT_PORT),
                        help=f"the port to open (default {DEFAULT_PORT})")
    parser.add_argument("--address", default="127.0.0.1",
                        help="the address nginx listens on (default 127.0.0.1; 0.0.0.0: "
                             "every interface, for a class on other machines)")
    try:
        args = parser.parse_args(argv)
        processes = parse_processes(args.processes, cores())
        address, port = parse_address(args.address), parse_port(args.port)
        nginx = check_nginx()
        check_port(address, port)
        return serve(processes, address, port, nginx)
    except WorkshopError as err:
        print(f"workshop: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except RuntimeError as err:  # no answer in time (every process stopped), a changed template
        print(f"workshop: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C before serve's handler: nothing was started yet
        return 130


if __name__ == "__main__":
    sys.exit(main())
