"""Load on one dashboard server: N concurrent sessions through a workshop's journey, and an
admission run of several large uploads at once.

**Journey** (each session, against one real ``streamlit run app.py``): open the dashboard →
upload its own small CSV (``--rows`` records of a survey table, a seed of its own) → tag the
quasi-identifiers → Risk page → Protect page → five moves of the "Band width of age" slider →
Trade-offs page and a sweep of its default grid → Export page and the protected CSV downloaded.

**Client**: :mod:`bench.st_client` speaks Streamlit's websocket protocol, with no browser, so
the client's own CPU stays out of the figures: every latency is the time from sending the
message to the server's ``script_finished``, and the client's CPU time is printed beside the
server's (it is a small fraction). Sessions start spread over ``--ramp`` seconds and wait
``--think`` seconds (0.5–1.5 × at random, seeded) before each step, as a class following a
teacher does; ``--think 0 --ramp 0`` is the worst case, every session at once without pause.

**Baseline in the same run**: one session alone through the same journey first (after a
warm-up journey that loads the modules); each step's median under load is given as a ratio
to it.

**Server figures**: CPU seconds (user + system, ``/proc/<pid>/stat``) over the load phase and
the peak resident memory (``VmHWM``), with the memory when idle, of the server process alone
and of the server with its child processes (the worker processes that run pure computation,
:mod:`ui.infra.workers`): their CPU includes the workers that ended during the load
(:func:`bench.server.tree_cpu_seconds`), and their memory is given as the peak of the summed
resident memory sampled every 0.5 s (a lower bound) and the sum of each process's peak (an
upper bound). The targets of a class (slider, Risk page and sweep p95, every session completes,
at most 2 GB a process) are printed as met or MISSED; the slider's is 1 s for
``--think 0`` (every session at once) and 0.5 s otherwise (a step every 2 s).

**Several servers** (``--servers N``): N independent ``streamlit run`` processes on ports of
their own; session i goes to server i % N and stays there, as a sticky proxy keeps it
(``deploy/nginx.conf``); each server is warmed by one journey and the baseline runs alone on
server 0. The figures are printed for each server and in total.

**The class's moment** (``--together [--rounds 5]``): every session opens, uploads and tags its
table and opens the Protect page; then all of them move the band-width slider at the same
moment, as when the teacher says "now set the band width to 10", ``--rounds`` times; the run
prints the moves' median, p95 and maximum, the servers' CPU and peak memory and the client's
own CPU. With ``--workshop`` it runs through ``make workshop``'s setup (``python -m
ui.infra.workshop``: ``--servers`` processes behind nginx, each session kept on one of them by
nginx's cookie, each process with its share of the memory budget and the workers). With
``--same-data`` the sessions stay on the built-in data set they open with, as a class
following a lesson does, instead of uploading a table each: the server computes each width
once and draws it for everyone.

**Admission** (``--uploads 8 --upload-mb 150``): on a fresh server, that many sessions upload
distinct CSVs of about that size at the same moment; the run prints which were admitted and
which refused (with the refusal), whether the server stayed up, its peak memory, the memory
the ledger holds, and whether each admitted session then works (a slider move on Protect).

Run: ``python -m bench.bench_load [--sessions 30] [--think 2] [--ramp 30] [--servers 1]``
     ``python -m bench.bench_load --together [--sessions 30] [--rounds 5]``
     ``python -m bench.bench_load --together --workshop --servers 2 --sessions 60``
     ``python -m bench.bench_load --uploads 8 --upload-mb 150``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import os
import random
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from bench.common import survey_table
from bench.server import (
    ROOT,
    TreeSampler,
    alive,
    cpu_seconds,
    free_port,
    memory_kb,
    start_server,
    stop_server,
    tree_cpu_seconds,
)
from bench.st_client import StSession

QI = ["age", "sex", "region"]
STEPS = ["open", "upload", "tag", "risk", "protect", "slider", "sweep", "export"]


# -- the journey -----------------------------------------------------------------------------

def csv_bytes(rows: int, seed: int) -> bytes:
    buf = io.StringIO()
    survey_table(rows, seed).to_csv(buf, index=False)
    return buf.getvalue().encode()


async def journey(url: str, i: int, rows: int, think: float, start_at: float,
                  times: dict[str, list[float]], failures: list[str]) -> None:
    """Session ``i`` through the journey; each step's seconds appended to ``times``."""
    rng = random.Random(i)
    data = csv_bytes(rows, seed=i)

    async def pause() -> None:
        if think:
            await asyncio.sleep(think * rng.uniform(0.5, 1.5))

    await asyncio.sleep(start_at)
    s = StSession(timeout=600)
    try:
        t = time.perf_counter()
        await s.connect(url)
        times["open"].append(time.perf_counter() - t)
        await pause()
        times["upload"].append(await s.upload("Upload a table", f"survey_{i}.csv", data))
        if f"survey_{i}.csv" not in s.text():
            raise RuntimeError(f"the upload did not load: {s.errors()}")
        await pause()
        times["tag"].append(await s.set_value("Quasi-identifiers", QI))
        await pause()
        times["risk"].append(await s.switch_page("Risk"))
        await pause()
        times["protect"].append(await s.switch_page("Protect"))
        for width in rng.sample(range(2, 30), 5):
            await pause()
            times["slider"].append(await s.set_value("Band width of age", width))
        await pause()
        await s.switch_page("Trade-offs")
        times["sweep"].append(await s.click("Run the sweep"))
        await pause()
        await s.switch_page("Export")
        t = time.perf_counter()
        protected = await s.download("Download CSV")
        times["export"].append(time.perf_counter() - t)
        lines = protected.count(b"\n")
        if lines != rows + 1:
            raise RuntimeError(f"the export has {lines} lines, not {rows + 1}")
        if s.errors():
            raise RuntimeError(f"errors on the page: {s.errors()}")
    except Exception as err:  # noqa: BLE001 — a failed session is counted, not fatal
        failures.append(f"session {i}: {type(err).__name__}: {err}")
    finally:
        await s.close()


async def run_sessions(url: str | Sequence[str], n: int, rows: int, think: float, ramp: float
                       ) -> tuple[dict[str, list[float]], list[str]]:
    """``n`` sessions through the journey; given several server addresses, session ``i`` goes
    to server ``i % len(url)`` and stays there, as a sticky proxy keeps it."""
    urls = [url] if isinstance(url, str) else list(url)
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max(8, 2 * n)))
    times: dict[str, list[float]] = defaultdict(list)
    failures: list[str] = []
    starts = np.linspace(0, ramp, n) if n > 1 else [0.0]
    await asyncio.gather(*(journey(urls[i % len(urls)], i, rows, think, float(at), times,
                                   failures)
                           for i, at in enumerate(starts)))
    return times, failures


async def moment(url: str, i: int, rows: int, rounds: int, barrier: asyncio.Barrier,
                 times: dict[str, list[float]], failures: list[str],
                 same_data: bool = False) -> None:
    """Session ``i`` opens, uploads its table, tags it and opens Protect (``same_data``: stays
    on the built-in data set it opens with, as a class following a lesson does); then,
    ``rounds`` times, it waits for every other session and moves the band-width slider with
    them."""
    s = StSession(timeout=600)
    try:
        await s.connect(url)
        if not same_data:
            await s.upload("Upload a table", f"survey_{i}.csv", csv_bytes(rows, seed=i))
            await s.set_value("Quasi-identifiers", QI)
        await s.switch_page("Protect")
        for r in range(rounds):
            await barrier.wait()
            times["together"].append(await s.set_value("Band width of age", 5 + 2 * r))
        if s.errors():
            raise RuntimeError(f"errors on the page: {s.errors()}")
    except Exception as err:  # noqa: BLE001 — counted; the others are not kept waiting
        failures.append(f"session {i}: {type(err).__name__}: {err}")
        await barrier.abort()
    finally:
        await s.close()


async def run_moment(url: str, n: int, rows: int, rounds: int, same_data: bool = False
                     ) -> tuple[dict[str, list[float]], list[str]]:
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max(8, 2 * n)))
    times: dict[str, list[float]] = defaultdict(list)
    failures: list[str] = []
    barrier = asyncio.Barrier(n)
    await asyncio.gather(*(moment(url, i, rows, rounds, barrier, times, failures, same_data)
                           for i in range(n)))
    return times, failures


@contextlib.contextmanager
def workshop(processes: int, tmp: Path):
    """``python -m ui.infra.workshop``: ``processes`` servers behind nginx (the shipped
    deploy/nginx.conf, sticky by its cookie), on a port of its own; yields the proxy's address
    and the launcher's process (its tree holds the servers, their workers and nginx), stopped
    with SIGINT (Ctrl-C) after."""
    import signal
    import subprocess
    import sys
    import urllib.request

    port = free_port()
    out = open(tmp / "workshop.log", "w")  # noqa: SIM115 — closed below
    proc = subprocess.Popen([sys.executable, "-m", "ui.infra.workshop", "--processes",
                             str(processes), "--port", str(port)], cwd=ROOT, stdout=out,
                            stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while "is open at" not in (tmp / "workshop.log").read_text():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the workshop did not start: "
                                   + (tmp / "workshop.log").read_text()[-500:])
            time.sleep(0.2)
        urllib.request.urlopen(url + "/_stcore/health", timeout=30).read()
        yield url, proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        out.close()


def together(args: argparse.Namespace) -> None:
    """The workshop's moment: every session on the Protect page, and all of them move the
    slider at the same moment ("now set the band width to 10"), ``--rounds`` times: on one
    server, or with ``--workshop`` through ``make workshop``'s setup (``--servers`` processes
    behind nginx, each session kept on one by nginx's cookie)."""
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        if args.workshop:
            url, proc = stack.enter_context(workshop(args.servers, Path(tmp)))
            where = f"{args.servers} server processes behind nginx (make workshop)"
        else:
            port = free_port()
            proc = start_server(port, log=Path(tmp) / "server.log")
            stack.callback(stop_server, proc)
            url, where = f"http://127.0.0.1:{port}", "one server process"
        # warm every process: one journey each (nginx spreads new browsers over them)
        asyncio.run(run_sessions(url, 2 * args.servers if args.workshop else 1, args.rows,
                                 0.0, 0.0))
        cpu0, tree0 = cpu_seconds(proc.pid), tree_cpu_seconds(proc.pid)
        client0, start = time.process_time(), time.perf_counter()
        with TreeSampler(proc.pid) as sampler:
            times, failures = asyncio.run(run_moment(url, args.sessions, args.rows,
                                                     args.rounds, args.same_data))
        wall = time.perf_counter() - start
        cpu, tree = cpu_seconds(proc.pid) - cpu0, tree_cpu_seconds(proc.pid) - tree0
        client_cpu = time.process_time() - client0
    x = np.array(times["together"] or [np.inf])
    data = ("the built-in data set, the same for all" if args.same_data
            else f"{args.rows:,} records each")
    print(f"{args.sessions} sessions on the Protect page ({data}, {where}) "
          f"move the slider at the same moment, {args.rounds} times: {len(times['together'])} "
          f"moves, median {np.median(x) * 1000:.0f} ms, p95 {np.percentile(x, 95) * 1000:.0f} "
          f"ms, max {x.max() * 1000:.0f} ms; {len(failures)} sessions failed")
    for f in failures[:5]:
        print("  failed:", f)
    print(target("slider p95", float(np.percentile(x, 95)), 1.0))
    what = "the launcher" if args.workshop else "the server process"
    print(f"server CPU (the whole run, uploads included, {wall:.1f} s): {cpu:.1f} s in {what}, "
          f"{tree:.1f} s ({tree / wall:.2f} cores) with its children (servers, workers, nginx); "
          f"memory peak {mb(sampler.peak_sum_kb)} (sampled sums), at most "
          f"{mb(sampler.sum_of_peaks_kb)}")
    print(f"client CPU {client_cpu:.1f} s ({client_cpu / max(tree, 1e-9):.0%} of the "
          f"servers' with their children); load average at the end {os.getloadavg()[0]:.1f}")


def p95(times: dict[str, list[float]], step: str) -> float:
    x = times.get(step) or [np.inf]
    return float(np.percentile(x, 95))


def target(label: str, value: float, limit: float, unit: str = "ms") -> str:
    scale, digits = (1000, 0) if unit == "ms" else (1, 1)
    return (f"{label} {value * scale:.{digits}f} {unit}: target <= {limit * scale:.0f} {unit} "
            f"{'met' if value <= limit else 'MISSED'}")


def mb(kb: float) -> str:
    return f"{kb / 1024:.0f} MB"


def load(args: argparse.Namespace) -> None:
    n = args.servers
    ports = [free_port() for _ in range(n)]
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        procs = []
        for k, port in enumerate(ports):
            procs.append(start_server(port, log=Path(tmp) / f"server{k}.log"))
            stack.callback(stop_server, procs[-1])
        urls = [f"http://127.0.0.1:{port}" for port in ports]
        idle_kb = [memory_kb(p.pid, "VmRSS") for p in procs]
        for url in urls:  # warm each server: imports, caches
            asyncio.run(run_sessions(url, 1, args.rows, 0.0, 0.0))
        alone, failed = asyncio.run(run_sessions(urls[0], 1, args.rows, 0.0, 0.0))
        if failed:
            raise SystemExit(f"the lone session failed: {failed[0]}")
        cpu0 = [cpu_seconds(p.pid) for p in procs]
        tree0 = [tree_cpu_seconds(p.pid) for p in procs]
        client0, wall0 = time.process_time(), time.time()
        with contextlib.ExitStack() as sampling:
            samplers = [sampling.enter_context(TreeSampler(p.pid)) for p in procs]
            times, failures = asyncio.run(
                run_sessions(urls, args.sessions, args.rows, args.think, args.ramp))
        wall = time.time() - wall0
        server_cpu = [cpu_seconds(p.pid) - c for p, c in zip(procs, cpu0)]
        tree_cpu = [tree_cpu_seconds(p.pid) - c for p, c in zip(procs, tree0)]
        client_cpu = time.process_time() - client0
        peak_kb = [memory_kb(p.pid, "VmHWM") for p in procs]
        up = [alive(port) for port in ports]
    on = "one server process" if n == 1 else (
        f"{n} server processes, session i on server i % {n} (as a sticky proxy keeps it)")
    print(f"{args.sessions} sessions, {args.rows:,} records each, think {args.think:g} s "
          f"(0.5–1.5×), start spread over {args.ramp:g} s; {on}; baseline: one session alone"
          + (" on server 0" if n > 1 else ""))
    print(f"{'step':<9}{'n':>5}{'median ms':>11}{'p95 ms':>9}{'max ms':>9}"
          f"{'alone ms':>10}{'ratio':>7}")
    for step in STEPS:
        x = np.array(times.get(step, []))
        base = float(np.median(alone[step]))
        if not len(x):
            print(f"{step:<9}{0:>5}")
            continue
        print(f"{step:<9}{len(x):>5}{np.median(x) * 1000:>11.0f}"
              f"{np.percentile(x, 95) * 1000:>9.0f}{x.max() * 1000:>9.0f}{base * 1000:>10.0f}"
              f"{np.median(x) / base:>7.1f}")
    if args.think:  # the target for a class stepping every 2 s
        print(target("slider p95", p95(times, "slider"), 0.5)
              + f" (a step every 2 s; this run: think {args.think:g} s)")
    else:
        print(target("slider p95", p95(times, "slider"), 1.0) + " (every session at once)")
    print(target("risk p95", p95(times, "risk"), 1.5))
    print(target("sweep p95", p95(times, "sweep"), 6.0, "s"))
    done = args.sessions - len(failures)
    print(f"completed {done}/{args.sessions} sessions in {wall:.1f} s: target all of them "
          f"{'met' if done == args.sessions else 'MISSED'}; server alive after: "
          + ", ".join(map(str, up)))
    for f in failures[:5]:
        print("  failed:", f)
    limit_kb = 2048 * 1024
    for k in range(n):
        s = samplers[k]
        name = "server" if n == 1 else (
            f"server {k} ({len(range(k, args.sessions, n))} sessions)")
        print(f"{name} CPU {server_cpu[k]:.1f} s over {wall:.1f} s "
              f"({server_cpu[k] / wall:.2f} cores) in the server process only; "
              f"{tree_cpu[k]:.1f} s ({tree_cpu[k] / wall:.2f} cores) with its "
              f"{s.workers} child process{'es' if s.workers != 1 else ''} (workers, their helpers)")
        print(f"{name} memory: idle {mb(idle_kb[k])}, peak {mb(peak_kb[k])} (server process): "
              f"target <= 2048 MB {'met' if peak_kb[k] <= limit_kb else 'MISSED'}; "
              f"largest child's peak {mb(s.worker_peak_kb)}: target <= 2048 MB "
              f"{'met' if s.worker_peak_kb <= limit_kb else 'MISSED'}")
        print(f"  with its children: peak {mb(s.peak_sum_kb)} (summed resident memory, "
              f"sampled every {s.every:g} s), at most {mb(s.sum_of_peaks_kb)} (sum of each "
              "process's peak)")
    total_cpu = sum(tree_cpu)
    if n > 1:
        print(f"total over {n} servers: CPU {sum(server_cpu):.1f} s in the server processes "
              f"only, {total_cpu:.1f} s ({total_cpu / wall:.2f} cores) with their children; "
              f"memory peak {mb(sum(s.peak_sum_kb for s in samplers))} (sampled sums), at "
              f"most {mb(sum(s.sum_of_peaks_kb for s in samplers))}")
    print(f"client CPU {client_cpu:.1f} s ({client_cpu / max(total_cpu, 1e-9):.0%} of the "
          "servers' with their children)")


# -- admission ---------------------------------------------------------------------------------

def big_csv(megabytes: float) -> bytes:
    """A survey CSV of about ``megabytes`` MB (its rows repeat a generated block)."""
    block = csv_bytes(200_000, seed=0)
    header, body = block.split(b"\n", 1)
    copies = max(1, round(megabytes * 1e6 / len(body)))
    return header + b"\n" + body * copies


async def admission_session(url: str, i: int, data: bytes, out: dict[int, dict]) -> None:
    s = StSession(timeout=1800)
    name = f"big_{i}.csv"
    row: dict = {"name": name}
    try:
        await s.connect(url)
        row["upload_s"] = await s.upload("Upload a table", name, data)
        errors = s.errors()
        row["admitted"] = name in s.text() and not errors
        row["message"] = errors[0] if errors else ""
        if row["admitted"]:
            await s.switch_page("Protect")
            row["slider_s"] = await s.set_value("Band width of age", 7)
            row["works"] = not s.errors()
    except Exception as err:  # noqa: BLE001
        row["message"] = f"{type(err).__name__}: {err}"
        row["admitted"] = False
    finally:
        out[i] = row
        await s.close()


async def admission_run(url: str, n: int, files: list[bytes]) -> dict[int, dict]:
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(2 * n + 4))
    out: dict[int, dict] = {}
    await asyncio.gather(*(admission_session(url, i, files[i], out) for i in range(n)))
    return out


def admission(args: argparse.Namespace) -> None:
    body = big_csv(args.upload_mb)
    header, rest = body.split(b"\n", 1)
    # distinct files: the same records under a header of each session's own (its own hash)
    files = [header.replace(b"weight", f"weight_{i}".encode()) + b"\n" + rest
             for i in range(args.uploads)]
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "server.log"
        proc = start_server(port, log=log)
        try:
            idle_kb = memory_kb(proc.pid, "VmRSS")
            t = time.time()
            rows = asyncio.run(admission_run(f"http://127.0.0.1:{port}", args.uploads, files))
            wall = time.time() - t
            up = alive(port) and proc.poll() is None
            peak_kb = memory_kb(proc.pid, "VmHWM") if up else 0
            now_kb = memory_kb(proc.pid, "VmRSS") if up else 0
        finally:
            stop_server(proc)
    records = body.count(b"\n") - 1
    print(f"{args.uploads} sessions upload {len(files[0]) / 1e6:.0f} MB CSVs at once "
          f"({records:,} records × 5 columns each)")
    for i in sorted(rows):
        r = rows[i]
        state = ("admitted" + (f", slider move {r['slider_s'] * 1000:.0f} ms, works: "
                               f"{r.get('works')}" if "slider_s" in r else "")
                 if r["admitted"] else f"refused: {r['message']}")
        print(f"  {r['name']}: upload {r.get('upload_s', float('nan')):.1f} s; {state}")
    admitted = sum(r["admitted"] for r in rows.values())
    print(f"admitted {admitted}, refused {len(rows) - admitted}, in {wall:.0f} s; "
          f"server alive: {up}")
    print(f"server memory: idle {idle_kb / 1024:.0f} MB, peak {peak_kb / 1024:.0f} MB, "
          f"after {now_kb / 1024:.0f} MB ({now_kb / 1024 / max(admitted, 1):.0f} MB a session "
          "admitted)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sessions", type=int, default=30)
    p.add_argument("--rows", type=int, default=2000, help="records in each session's upload")
    p.add_argument("--think", type=float, default=2.0, help="mean seconds before each step")
    p.add_argument("--ramp", type=float, default=30.0, help="seconds over which sessions start")
    p.add_argument("--servers", type=int, default=1,
                   help="server processes; session i on server i %% N, the baseline on 0")
    p.add_argument("--uploads", type=int, default=0, help="run the admission test instead")
    p.add_argument("--upload-mb", type=float, default=150.0)
    p.add_argument("--together", action="store_true",
                   help="every session on Protect moves the slider at the same moment instead")
    p.add_argument("--rounds", type=int, default=5, help="moves of --together")
    p.add_argument("--same-data", action="store_true",
                   help="--together on the built-in data set every session opens with")
    p.add_argument("--workshop", action="store_true",
                   help="--together through make workshop's setup: --servers processes "
                        "behind nginx")
    args = p.parse_args()
    if args.uploads:
        admission(args)
    elif args.together:
        together(args)
    else:
        load(args)


if __name__ == "__main__":
    main()
