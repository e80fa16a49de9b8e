"""nginx in front of a real server, for the tests of the security headers
(tests/test_security_headers.py, tests/test_server_answers.py): the shipped configuration on
ports of a test's own, nginx started and stopped, and the answers fetched."""

from __future__ import annotations

import contextlib
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from bench.server import stop_server

ROOT = Path(__file__).resolve().parents[1]


def fetch(url: str):
    """The status, headers and body of a GET of ``url``."""
    with urllib.request.urlopen(url, timeout=20) as r:
        return r.status, r.headers, r.read()


@contextlib.contextmanager
def nginx(conf: str, tmp_path: Path):
    """nginx running the configuration ``conf`` (its prefix ``tmp_path``), stopped after with
    its worker processes (its process group)."""
    (tmp_path / "nginx.conf").write_text(conf)
    proc = subprocess.Popen(["nginx", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"),
                             "-g", "daemon off;"], stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        yield
    finally:
        stop_server(proc, grace=30)


def shipped_conf(port: int, upstream: int) -> str:
    """deploy/nginx.conf listening on ``port``, both of its upstreams ``upstream``."""
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    return conf.replace("listen 127.0.0.1:8500;", f"listen 127.0.0.1:{port};").replace(
        "server 127.0.0.1:8501;", f"server 127.0.0.1:{upstream};").replace(
        "server 127.0.0.1:8502;", f"server 127.0.0.1:{upstream};")


def answer(url: str) -> tuple[int, object]:
    """The status and headers of ``url``, once nginx answers (HTTP errors included)."""
    for _ in range(100):
        try:
            status, headers, _ = fetch(url)
            return status, headers
        except urllib.error.HTTPError as err:
            return err.code, err.headers
        except OSError:
            time.sleep(0.1)
    pytest.fail("nginx did not answer")
