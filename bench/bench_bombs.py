"""The bomb family against a real server: each file of ``tests/hostile_files.py`` at full size
(:data:`~tests.hostile_files.BOMBS`, and round four's, :data:`~tests.hostile_files.ROUND4`)
uploaded to a fresh ``streamlit run app.py`` with ``SDC_MEMORY_BUDGET=2GB`` (once a first
session has loaded a 94-byte CSV: the server's first page and its reading helper are warm, as
in a server that has been up a while), and another session's 94-byte CSV loaded right after
(one person must not take the server from everyone).
The files the issue sent from several sessions at once (:data:`AT_ONCE`) are sent so.

Prints, for each file: its size on disk, what it decodes to (:data:`~tests.hostile_files.DECODED`),
the server's peak resident memory (``VmHWM``) and its excess over the budget (the target: at
most 0.5 GB), the peak of the child process that read it (``sdc_core.capped``; its memory is
capped, and shares the readers' pages with the helper that forked it), the seconds from the
upload to the page's answer, whether the other session loaded, and what the page said.

    python -m bench.bench_bombs [--budget 2GB] [--only NAME]
"""

from __future__ import annotations

import argparse
import asyncio
import threading
import time
from collections import Counter
from pathlib import Path

from bench.server import children, free_port, start_server, stop_server
from bench.st_client import StSession
from tests.hostile_files import BOMBS, DECODED, ROUND4
from ui.infra.memory import parse_size, size_text

SMALL = b"zipcode,sex,income\n1000,F,10\n1001,M,20\n1002,F,30\n" + b"1003,M,40\n" * 4
#: Files the issue sent from several sessions at the same moment: how many
AT_ONCE = {"csv padded": 8, "parquet int columns": 6}


def peak_rss(pid: int) -> int:
    """The process's peak resident memory (bytes), from ``/proc``."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc")


class ChildPeak:
    """The largest peak resident memory of the reading children (the children of the server's
    capped-reading helper), read every 5 ms while :meth:`watch` runs."""

    def __init__(self, server: int) -> None:
        self.server, self.peak = server, 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _helpers(self) -> list[int]:
        found = []
        for pid in children(self.server):
            try:
                if b"sdc_core.capped" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.append(pid)
            except OSError:
                continue
        return found

    def _poll(self) -> None:
        while not self._done.is_set():
            for helper in self._helpers():
                for child in children(helper):
                    try:
                        self.peak = max(self.peak, peak_rss(child))
                    except (OSError, RuntimeError):
                        continue
            time.sleep(0.005)

    def __enter__(self) -> ChildPeak:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._done.set()
        self._thread.join()


async def upload(url: str, name: str, data: bytes) -> tuple[str, float]:
    """Upload ``data`` in a new session; what the page says of it, and the seconds it took."""
    s = StSession(timeout=600)
    await s.connect(url)
    try:
        start = time.perf_counter()
        await s.upload("Upload a table", name, data)
        seconds = time.perf_counter() - start
        said = " ".join(s.errors()) or next(
            (line for line in s.text().splitlines() if line.startswith("Loaded ")), "loaded")
        return said, seconds
    finally:
        await s.close()


async def at_once(url: str, name: str, data: bytes, copies: int) -> list[tuple[str, float]]:
    return list(await asyncio.gather(*(upload(url, name, data) for _ in range(copies))))


def summary(said: list[str]) -> str:
    """What several sessions were told, counted: "2× Loaded …; 4× The file was not …"."""
    counts = Counter(s.split(":")[0] if not s.startswith("Loaded") else "Loaded"
                     for s in said)
    first = {s.split(":")[0] if not s.startswith("Loaded") else "Loaded": s for s in said}
    return "; ".join(f"{n}× {first[k][:110]}" for k, n in counts.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", default="2GB")
    parser.add_argument("--only", choices=sorted(BOMBS | ROUND4))
    args = parser.parse_args()
    budget = parse_size(args.budget)
    print(f"budget {args.budget}; target: the server's peak resident memory ≤ budget + 0.5 GB, "
          "and another session's small CSV loads after each file")
    print(f"{'file':<30}{'on disk':>10}{'decoded':>10}{'server':>9}{'over':>9}{'child':>9}"
          f"{'seconds':>9}  {'other':<8} what the page said")
    for key, make in (BOMBS | ROUND4).items():
        if args.only and key != args.only:
            continue
        name, data = make(1.0)
        copies = AT_ONCE.get(key, 1)
        port = free_port()
        proc = start_server(port, env={"SDC_MEMORY_BUDGET": args.budget})
        try:
            url = f"http://127.0.0.1:{port}"
            asyncio.run(upload(url, "small.csv", SMALL))  # a server up for a while: warm
            with ChildPeak(proc.pid) as child:
                results = asyncio.run(at_once(url, name, data, copies))
            peak = peak_rss(proc.pid)
            other, _ = asyncio.run(upload(url, "small.csv", SMALL))
            other_ok = other.startswith("Loaded")
        finally:
            stop_server(proc)
        label = f"{key} ×{copies}" if copies > 1 else key
        said = summary([s for s, _ in results]) if copies > 1 else results[0][0][:150]
        print(f"{label:<30}{size_text(len(data)):>10}{DECODED[key] / 1e9:>8.2f}GB"
              f"{peak / 1e9:>7.2f}GB{(peak - budget) / 1e9:>7.2f}GB{child.peak / 1e9:>7.2f}GB"
              f"{max(s for _, s in results):>9.1f}  {'loaded' if other_ok else 'REFUSED':<8} "
              f"{said}")


if __name__ == "__main__":
    main()
