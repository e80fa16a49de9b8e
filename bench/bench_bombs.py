"""The bomb family against a real server: each file of ``tests/hostile_files.py`` at full size
uploaded to a fresh ``streamlit run app.py`` with ``SDC_MEMORY_BUDGET=2GB``, the server's peak
resident memory (``VmHWM``) read after the upload, and a second session's 94-byte CSV loaded
right after (one person must not take the server from everyone).

Prints, for each file: its size on disk, what the page said, the server's peak resident memory,
its excess over the budget (the target: at most 0.5 GB), and whether the other session loaded.

    python -m bench.bench_bombs [--budget 2GB] [--only NAME]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

from bench.server import free_port, start_server, stop_server
from bench.st_client import StSession
from tests.hostile_files import BOMBS
from ui.infra.memory import parse_size

SMALL = b"zipcode,sex,income\n1000,F,10\n1001,M,20\n1002,F,30\n" + b"1003,M,40\n" * 4


def peak_rss(pid: int) -> int:
    """The process's peak resident memory (bytes), from ``/proc``."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc")


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", default="2GB")
    parser.add_argument("--only", choices=sorted(BOMBS))
    args = parser.parse_args()
    budget = parse_size(args.budget)
    print(f"budget {args.budget}; target: peak resident memory ≤ budget + 0.5 GB, and another "
          "session's small CSV loads after each file")
    print(f"{'file':<22}{'on disk':>10}{'peak RSS':>10}{'over budget':>13}{'seconds':>9}"
          f"  {'other session':<14} what the page said")
    for key, make in BOMBS.items():
        if args.only and key != args.only:
            continue
        name, data = make(1.0)
        port = free_port()
        proc = start_server(port, env={"SDC_MEMORY_BUDGET": args.budget})
        try:
            url = f"http://127.0.0.1:{port}"
            said, seconds = asyncio.run(upload(url, name, data))
            peak = peak_rss(proc.pid)
            other, _ = asyncio.run(upload(url, "small.csv", SMALL))
            other_ok = other.startswith("Loaded")
        finally:
            stop_server(proc)
        print(f"{key:<22}{len(data) / 1e6:>8.2f}MB{peak / 1e9:>8.2f}GB"
              f"{(peak - budget) / 1e9:>11.2f}GB{seconds:>9.1f}  "
              f"{'loaded' if other_ok else 'REFUSED':<14} {said[:150]}")


if __name__ == "__main__":
    main()
