"""A figure export sends nothing off the machine (issue 39, item 6): Kaleido's Chromium is
launched with the offline switches (``ui.logic.figure_export.OFFLINE_FLAGS``), and its own net
log and strace see no connection and no byte but to 127.0.0.1.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


# -- Kaleido's browser ------------------------------------------------------------------------


def captured_kopts(monkeypatch) -> dict:
    import kaleido
    import plotly.graph_objects as go

    import ui.logic.figure_export as export

    asked: list[dict] = []
    monkeypatch.setattr(export, "chromium", lambda: "/usr/bin/chromium")
    monkeypatch.setattr(kaleido, "calc_fig_sync",
                        lambda fig, opts=None, *, topojson=None, kopts=None:
                        asked.append(dict(kopts or {})) or b"\x89PNG")
    export.figure_bytes(go.Figure(go.Bar(x=["a"], y=[1])), "png", 600, "note")
    (kopts,) = asked
    return kopts


def test_kaleidos_browser_is_launched_with_the_offline_switches(monkeypatch, tmp_path):
    """The switches are on the command line choreographer starts Chromium with."""
    from choreographer.browsers.chromium import Chromium

    from ui.logic.figure_export import OFFLINE_FLAGS

    kopts = captured_kopts(monkeypatch)
    assert kopts["mathjax"] is False
    cls = kopts["browser_cls"]
    assert issubclass(cls, Chromium)
    browser = object.__new__(cls)  # what Chromium.__init__ sets, without a pipe
    browser.path, browser.extensions_enabled, browser.gpu_enabled = "/usr/bin/chromium", 1, 0
    browser.headless, browser.proxy_server, browser.sandbox_enabled = True, None, False
    browser._channel = None
    browser.tmp_dir = type("Tmp", (), {"path": str(tmp_path), "clean": lambda self: None})()
    cli = cls.get_cli(browser)
    assert tuple(cli[-len(OFFLINE_FLAGS):]) == OFFLINE_FLAGS
    for flag in ("--disable-background-networking", "--no-pings", "--disable-domain-reliability",
                 "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>"):
        assert flag in cli


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium is not installed")
LOOPBACK = ("127.", "[::1]")
#: Chromium's IPv6 route check: a UDP socket connected to Google's resolver to learn the route
#: (no datagram is sent; only an enterprise policy turns it off)
ROUTE_PROBE = "[2001:4860:4860::8888]:443"

EXPORT = """
import plotly.graph_objects as go
import ui.logic.figure_export as export
fig = go.Figure(go.Bar(x=["a", "b"], y=[3, 1]))
for fmt in ("png", "svg", "pdf"):
    assert export.figure_bytes(fig, fmt, 600, "note")
print("exported")
"""


@needs_chromium
def test_an_export_opens_no_connection_but_to_127_0_0_1_by_chromiums_own_log(monkeypatch,
                                                                               tmp_path):
    """Chromium's net log of an export (its network service's own record of every request,
    host lookup and socket): no host name looked up through DNS, no connection but to the dead
    proxy on 127.0.0.1."""
    import plotly.graph_objects as go
    from choreographer.browsers.chromium import Chromium

    import ui.logic.figure_export as export

    log = tmp_path / "net.json"
    cli = Chromium.get_cli
    monkeypatch.setattr(Chromium, "get_cli", lambda self: [
        *cli(self), f"--log-net-log={log}", "--net-log-capture-mode=Everything"])
    assert export.figure_bytes(go.Figure(go.Bar(x=["a"], y=[1])), "png", 600, "n")[:4] == \
        b"\x89PNG"
    text = log.read_text()
    if not text.rstrip().endswith("}"):  # written while the browser is closed: end it
        text = text.rstrip().rstrip(",") + "]}"
    data = json.loads(text)
    kinds = {v: k for k, v in data["constants"]["logEventTypes"].items()}
    sockets = [(kinds[e["type"]], e["params"]["address"]) for e in data["events"]
               if kinds[e["type"]] in ("TCP_CONNECT_ATTEMPT", "UDP_CONNECT")
               and "address" in e.get("params", {})]
    assert sockets  # the log was read: the proxy was tried
    assert [s for s in sockets if s[0] == "TCP_CONNECT_ATTEMPT"
            and not s[1].startswith(LOOPBACK)] == []
    assert [s for s in sockets if s[0] == "UDP_CONNECT"
            and not s[1].startswith(LOOPBACK) and s[1] != ROUTE_PROBE] == []
    assert not [s for s in sockets if s[1].endswith(":53")]  # no DNS server asked


@needs_chromium
@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
def test_an_export_sends_no_byte_but_to_127_0_0_1_under_strace(tmp_path):
    """Every system call of the export's processes that connects or sends on a network socket,
    with its socket's addresses (``strace -f -yy``): no TCP connection but to 127.0.0.1, and no
    byte sent to any address but 127.0.0.1 (before: 54 DNS queries for www, accounts and
    clients2.google.com in one export). ``--seccomp-bpf`` stops the processes at those calls
    alone, not at every system call: the same lines, the traced export in 6.3 s instead of
    9.0 s (medians of three runs of each, back to back)."""
    out = tmp_path / "trace"
    done = subprocess.run(
        ["strace", "-f", "--seccomp-bpf", "-yy", "-qq",
         "-e", "trace=connect,sendto,sendmsg,sendmmsg,write,writev",
         "-o", str(out), sys.executable, "-c", EXPORT],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    if "exported" not in done.stdout and "ptrace" in done.stderr.lower():
        pytest.skip("ptrace is not permitted here")
    assert "exported" in done.stdout, done.stderr[-2000:]
    inet = re.compile(r"^\d+\s+(\w+)\(\d+<(TCP|UDP)v?6?:\[([^\]]*)\]>")
    connects, sends = [], []
    for line in out.read_text().splitlines():
        m = inet.match(line)
        if not m:
            continue
        call, proto, ends = m.groups()
        peer = ends.split("->")[1] if "->" in ends else None
        if call == "connect":
            to = re.search(r'inet_(?:addr|pton)\((?:AF_INET6, )?"([^"]+)"', line).group(1)
            port = re.search(r"htons\((\d+)\)", line).group(1)
            connects.append((proto, to, port))
        elif peer is not None and not peer.startswith(("127.", "[::1]", "::1")):
            sends.append(line[:200])
        elif peer is None and call == "sendto" and 'inet_' in line:
            sends.append(line[:200])  # an unconnected datagram with its own destination
    assert sends == []
    assert [c for c in connects if c[0] == "TCP" and not c[1].startswith("127.")] == []
    assert [c for c in connects if c[0] == "UDP" and not c[1].startswith("127.")
            and (c[1], c[2]) != ("2001:4860:4860::8888", "443")] == []
    assert any(c[1].startswith("127.") for c in connects)  # the dead proxy was tried
