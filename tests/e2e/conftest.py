"""A real `streamlit run` on a free 127.0.0.1 port, driven by Debian's headless Chromium."""

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--no-first-run", "--disable-quic"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, env: dict[str, str] | None = None) -> subprocess.Popen:
    """``streamlit run app.py`` on 127.0.0.1:``port`` (with ``env`` added to the environment),
    once it answers its health check."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
         "--server.headless", "true", "--server.address", "127.0.0.1",
         "--server.port", str(port), "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        env={**os.environ, **(env or {})})
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=1) as r:
                if r.read() == b"ok":
                    return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    pytest.fail("streamlit did not become healthy:\n" + proc.stdout.read().decode())


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="session")
def app_url():
    port = free_port()
    proc = start_server(port)
    yield f"http://127.0.0.1:{port}"
    stop_server(proc)


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
