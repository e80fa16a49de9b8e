"""A real ``streamlit run app.py`` on a free 127.0.0.1 port, and what the process uses: for the
load benchmark and the tests that need a real server."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def alive(port: int) -> bool:
    """Whether the server on ``port`` answers its health check."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=5) as r:
            return r.read() == b"ok"
    except OSError:
        return False


def start_server(port: int, env: dict[str, str] | None = None,
                 log: Path | None = None) -> subprocess.Popen:
    """``streamlit run app.py`` on 127.0.0.1:``port`` (with ``env`` added to the environment),
    once it answers its health check. Its output goes to ``log``, or to an anonymous temporary
    file: a pipe that nobody reads would fill and stall the server."""
    out = log.open("wb") if log else tempfile.TemporaryFile()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
         "--server.headless", "true", "--server.address", "127.0.0.1",
         "--server.port", str(port), "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"],
        cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if alive(port):
            return proc
        time.sleep(0.2)
    proc.kill()
    proc.wait()
    out.seek(0)
    raise RuntimeError("streamlit did not become healthy:\n"
                       + out.read()[-4000:].decode(errors="replace"))


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(timeout=60)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (``/proc/<pid>/stat`` fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def memory_kb(pid: int, field: str) -> int:
    """``VmRSS`` (resident now) or ``VmHWM`` (peak resident) of a process, in kB."""
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))
