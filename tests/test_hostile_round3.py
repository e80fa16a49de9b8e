"""Issue 39, items 4 and 6: no traceback anywhere, and nothing leaves the machine.

- The security headers (``ui.infra.server``) on every response of a real
  ``streamlit run app.py``, and the same in the shipped nginx configuration.
- ``client.showErrorDetails`` off in the shipped config, as a backstop.
- A number a recipe, a link or a workspace gives is read against what the Protect page's
  controls can draw (finite, within ±(2**53 − 1), within the parameter's declared range): 1e300
  by any of the three showed Streamlit's traceback with the server's paths.
- A widget callback or a part of a page that reruns on its own (a fragment) that fails says so
  in one line, as a page does.
- Kaleido's Chromium sends nothing to any address but 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from streamlit.testing.v1 import AppTest

from bench.server import stop_server
from sdc_core.errors import SdcInputError
from tests.apptest import app_test
from tests.conftest import plain
from ui import links
from ui.infra.server import CSP, HEADERS
from ui.links import encode_recipe
from ui.logic import workspace
from ui.logic.protect import MAX_PAGE_NUMBER, from_steps, read_recipe_file

ROOT = Path(__file__).resolve().parents[1]


# -- headers ----------------------------------------------------------------------------------


def fetch(url: str):
    with urllib.request.urlopen(url, timeout=20) as r:
        return r.status, r.headers, r.read()


def test_the_app_is_an_st_app_that_streamlit_run_finds():
    """``streamlit run app.py`` serves the ``st.App`` of app.py (its import string, found in
    its source without running it); a session's run does not make one."""
    from streamlit.web.server.app_discovery import discover_asgi_app

    assert discover_asgi_app(ROOT / "app.py").import_string == "app:app"


def test_every_response_of_a_real_server_carries_the_security_headers(app_url):
    status, headers, page = fetch(app_url + "/")
    assert status == 200
    script = re.search(rb'src="\./(static/js/[^"]+\.js)"', page).group(1).decode()
    for path in ("/", "/" + script, "/_stcore/health", "/_stcore/host-config",
                 "/no/such/page"):
        status, headers, _ = fetch(app_url + path)
        assert status == 200, path
        for name, value in HEADERS.items():
            assert headers.get_all(name) == [value], (path, name)
    assert "frame-ancestors 'none'" in CSP and "default-src 'self'" in CSP
    assert HEADERS["X-Frame-Options"] == "DENY" and HEADERS["Referrer-Policy"] == "no-referrer"
    # no source but the server itself (and data:/blob: URLs it makes)
    sources = {s for d in CSP.split(";") for s in d.split()[1:]}
    assert not [s for s in sources if s.startswith(("http", "ws", "*"))], sources


def test_the_inline_script_of_streamlits_page_is_allowed_by_its_hash():
    from ui.infra.server import INDEX, inline_script_hashes

    hashes = inline_script_hashes(INDEX.read_text(encoding="utf-8"))
    assert hashes and all(h in CSP for h in hashes)
    assert "'unsafe-inline'" not in CSP.split("script-src")[1].split(";")[0]
    assert "'unsafe-eval'" not in CSP


def nginx_headers() -> tuple[dict[str, str], str, set[str]]:
    """What deploy/nginx.conf adds (name: value), its fallback policy and what it hides."""
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    added = dict(re.findall(r'^\s*add_header\s+(\S+)\s+"?([^";]*)"?\s+always;', conf, re.M))
    fallback = re.search(r'map \$upstream_http_content_security_policy \$sdc_csp \{\s*""\s+'
                         r'"([^"]+)";\s*default \$upstream_http_content_security_policy;', conf)
    hidden = set(re.findall(r"^\s*proxy_hide_header\s+(\S+);", conf, re.M))
    return added, fallback.group(1), hidden


def test_the_nginx_configuration_sends_the_headers_once():
    """nginx drops the dashboard's copies and adds its own (``always``: to its own error pages
    too): the dashboard's policy, or the strictest one on a page nginx makes itself."""
    added, fallback, hidden = nginx_headers()
    assert added.pop("Content-Security-Policy") == "$sdc_csp"
    assert fallback == "default-src 'none'; frame-ancestors 'none'"
    assert added == {k: v for k, v in HEADERS.items() if k != "Content-Security-Policy"} | {
        "Set-Cookie": "$sdc_route_cookie"}
    assert set(HEADERS) <= hidden


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


def test_nginx_with_the_shipped_configuration_sends_each_header_once(app_url, tmp_path):
    """make test installs nginx (Debian's nginx-light)."""
    from bench.server import free_port

    port, dead = free_port(), free_port()
    with nginx(shipped_conf(port, urlsplit(app_url).port), tmp_path):
        for path in ("/_stcore/health", "/"):
            status, headers = answer(f"http://127.0.0.1:{port}{path}")
            assert status == 200
            for name, value in HEADERS.items():
                assert headers.get_all(name) == [value], (path, name)
    # with no dashboard behind it: nginx's own 502 page, with the strict policy
    with nginx(shipped_conf(port, dead), tmp_path):
        status, headers = answer(f"http://127.0.0.1:{port}/")
        assert status == 502
        assert headers.get_all("Content-Security-Policy") == [
            "default-src 'none'; frame-ancestors 'none'"]
        assert headers.get_all("X-Frame-Options") == ["DENY"]
        assert headers.get_all("Referrer-Policy") == ["no-referrer"]


# -- the shipped config -----------------------------------------------------------------------


def test_the_shipped_config_shows_no_error_details(monkeypatch):
    from streamlit import config
    from streamlit.elements.exception import marshall
    from streamlit.proto.Exception_pb2 import Exception as ExceptionProto

    value = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["client"][
        "showErrorDetails"]
    assert value == config.ShowErrorDetailsConfigOptions.NONE
    get = config.get_option
    monkeypatch.setattr(config, "get_option",
                        lambda key: value if key == "client.showErrorDetails" else get(key))
    proto = ExceptionProto()
    try:
        raise RuntimeError("/srv/sdc/secret_register.csv")
    except RuntimeError as err:
        marshall(proto, err, apply_show_error_details=True)
    assert not proto.stack_trace and "secret" not in proto.message and not proto.type


# -- numbers a control cannot draw ------------------------------------------------------------

#: (JSON text of the value, what the one-line refusal says)
HOSTILE = [
    ("1e300", "beyond what a control on the Protect page holds"),
    (str(2**60), "beyond what a control on the Protect page holds"),
    ("-1e300", "below the low end of its control"),
    ("NaN", "must be a number, not nan"),
    ("Infinity", "must be a number, not inf"),
    ("-Infinity", "must be a number, not -inf"),
    ("1e999", "must be a number, not inf"),  # read as infinity
    ("1" + "0" * 400, "must be a number, not 1000"),  # a whole number no float holds
]


def recipe_text(value: str, method: str = "band", key: str = "width") -> str:
    target = '"columns": ["wtkg"]' if method == "noise" else '"column": "age"'
    return '{"seed": 3, "steps": [{"method": "%s", %s, "%s": %s}]}' % (method, target, key,
                                                                        value)


def refusals(text: str) -> list[str]:
    """The one-line refusal of the recipe ``text`` as a recipe file, a link and a workspace
    (a link carries NaN and Infinity as Python's JSON writes them)."""
    data = json.loads(text)
    packed = links.encode_recipe(data["steps"], data["seed"])
    readers = [lambda: read_recipe_file(text.encode()),
               lambda: links.decode_recipe(packed),
               lambda: workspace.read('{"workspace": 1, "recipe": %s}' % text,
                                      ["age", "wtkg", "race"])]
    said = []
    for read in readers:
        with pytest.raises(SdcInputError) as err:
            got = read()  # what the Protect page is then given, as each path does
            steps, seed = (got.steps, got.seed) if hasattr(got, "steps") else got
            from_steps(steps, seed)
        said.append(str(err.value))
    return said


@pytest.mark.parametrize("value, words", HOSTILE, ids=[v[:12] for v, _ in HOSTILE])
@pytest.mark.parametrize("method, key", [("band", "width"), ("band", "origin"),
                                         ("noise", "p"), ("pram", "p")])
def test_a_number_no_control_can_draw_is_refused_in_one_line_by_every_reader(value, words,
                                                                            method, key):
    if method == "band" and key == "origin":
        text = recipe_text(value, "band", "origin")[:-3] + ', "width": 5}]}'
        if value == "-1e300":
            words = "beyond what a control on the Protect page holds"  # no low end
    else:
        text = recipe_text(value, method, key)
    if method == "pram":
        text = text.replace('"column": "age"', '"column": "race"')
        if value in ("1e300", str(2**60)):
            words = "is more than 1, the most it can be"
    for said in refusals(text):
        assert "\n" not in said and len(said) < 300, said
        assert words in said, said


def test_values_inside_the_bounds_still_open_and_past_the_most_are_refused():
    top = {"method": "band", "column": "age", "width": MAX_PAGE_NUMBER}
    assert from_steps([top], 1).values["band"]["age"]["width"] == MAX_PAGE_NUMBER
    with pytest.raises(SdcInputError, match="beyond what a control"):
        from_steps([{**top, "width": MAX_PAGE_NUMBER + 1}], 1)
    assert from_steps([{"method": "pram", "column": "race", "p": 1.0}], 1)  # widened, kept
    for step, words in [({"method": "pram", "column": "race", "p": 1.5}, "p = 1.5 is more "
                                                                          "than 1"),
                        ({"method": "rank_swap", "column": "wtkg", "window_percent": 150},
                         "more than 100"),
                        ({"method": "noise", "columns": ["wtkg"], "p": 10, "delta": 2},
                         "delta = 2 is more than 1")]:
        with pytest.raises(SdcInputError, match=words):
            from_steps([step], 1)


def test_breaks_that_are_not_numbers_are_an_input_error(actg):
    from sdc_core.recipe import apply_recipe, parse_recipe

    for breaks in ([0, [1], 100], [0, "x", 100], [0, None, 100], [0, 10**400, 100]):
        recipe = parse_recipe({"seed": 1, "steps": [{"method": "band", "column": "age",
                                                     "breaks": breaks}]})
        with pytest.raises(SdcInputError, match="breaks must be at least 2 finite numbers"):
            apply_recipe(recipe, actg)


def no_traceback(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]


@pytest.mark.parametrize("value", ["1e300", str(2**60)])
def test_a_link_with_a_number_no_control_can_draw_opens_with_a_warning(value):
    at = app_test()
    at.query_params["data"] = "actg175"
    at.query_params["recipe"] = encode_recipe(json.loads(recipe_text(value))["steps"], 3)
    at.switch_page("views/protect.py")
    at.run()
    no_traceback(at)
    assert any("beyond what a control on the Protect page holds" in plain(w.value)
               for w in at.warning)
    assert at.slider(key="w_p_band_age").value == 0  # nothing of it applied


@pytest.mark.parametrize("value", ["1e300", str(2**60)])
def test_a_recipe_file_with_a_number_no_control_can_draw_is_refused(value):
    at = app_test().run()
    at.switch_page("views/protect.py").run()
    at.file_uploader(key="recipe_upload").set_value(
        ("r.json", recipe_text(value).encode(), "application/json")).run()
    no_traceback(at)
    assert any("Recipe not loaded" in e.value and "beyond what a control" in plain(e.value)
               for e in at.error)
    assert at.slider(key="w_p_band_age").value == 0


@pytest.mark.parametrize("value", ["1e300", str(2**60)])
def test_a_workspace_with_a_number_no_control_can_draw_is_refused(value):
    at = app_test().run()
    text = '{"workspace": 1, "recipe": %s}' % recipe_text(value)
    at.file_uploader(key="workspace_upload").set_value(("w.json", text.encode(), "x")).run()
    no_traceback(at)
    assert any("nothing of it is applied" in e.value and "beyond what a control"
               in plain(e.value) for e in at.error)
    at.switch_page("views/protect.py").run()
    no_traceback(at)
    assert at.slider(key="w_p_band_age").value == 0


def test_the_widest_band_a_control_holds_is_drawn():
    at = app_test()
    at.query_params["data"] = "actg175"
    at.query_params["recipe"] = encode_recipe(
        [{"method": "band", "column": "age", "width": MAX_PAGE_NUMBER}], 3)
    at.switch_page("views/protect.py")
    at.run()
    no_traceback(at)
    assert at.slider(key="w_p_band_age").value == MAX_PAGE_NUMBER


def test_a_breaks_field_nested_too_deeply_is_said_under_the_field():
    at = app_test().run()
    at.switch_page("views/protect.py").run()
    at.text_input(key="w_p_band:breaks:age").set_value("[" * 5000 + "]" * 5000).run()
    no_traceback(at)
    assert any("not applied" in e.value for e in at.error)


# -- callbacks and fragments ------------------------------------------------------------------


def failing(*_: object, **__: object) -> None:
    raise RuntimeError("injected callback fault")


MESSAGE = "This change could not be made: an unexpected RuntimeError (injected callback fault)"


@pytest.fixture
def friendly(monkeypatch):
    """The dashboard as it runs for users: its messages, not the tests' loud exceptions."""
    monkeypatch.undo()


def protect_page() -> AppTest:
    at = app_test().run()
    at.switch_page("views/protect.py").run()
    no_traceback(at)
    return at


def test_a_failing_history_button_says_so_in_one_line(friendly, monkeypatch):
    at = protect_page()
    at.slider(key="w_p_band_age").set_value(10).run()
    monkeypatch.setattr("ui.state.reset_protect", failing)
    at.run()  # the button holds the function its click calls from the run that drew it
    at.button(key="p_reset").click().run()
    no_traceback(at)
    said = [plain(e.value) for e in at.error if "could not be made" in e.value]
    assert len(said) == 1 and said[0].startswith(MESSAGE + ". Your data set and settings are "
                                                 "kept"), said
    assert at.slider(key="w_p_band_age").value == 10  # the settings are kept
    at.run()  # said once
    assert not [e.value for e in at.error if "could not be made" in e.value]


def test_a_failing_slider_callback_inside_a_fragment_says_so(friendly, monkeypatch):
    at = protect_page()
    monkeypatch.setattr("ui.logic.protect.ProtectSettings.with_value", failing)
    at.slider(key="w_p_band_age").set_value(10).run()
    no_traceback(at)
    assert any(plain(e.value).startswith(MESSAGE) for e in at.error)


def test_a_failing_analyses_callback_says_so(friendly, monkeypatch):
    at = protect_page()
    at.session_state["w_an_editor"] = True
    at.run()
    monkeypatch.setattr("ui.analyses._keep", failing)
    at.text_input(key="w_an_name").set_value("m")
    at.button(key="w_an_add").click().run()
    no_traceback(at)
    assert any(plain(e.value).startswith(MESSAGE) for e in at.error)


def test_a_failing_part_of_a_page_that_reruns_alone_says_so(friendly, monkeypatch):
    monkeypatch.setattr("ui.compute.workbench", failing)
    at = app_test().run()
    at.switch_page("views/protect.py").run()
    no_traceback(at)
    assert any(e.value.startswith("This page could not be shown: an unexpected RuntimeError")
               for e in at.error)
    assert at.slider(key="w_p_band_age").value == 0  # the controls are still drawn


def test_every_callback_of_the_pages_is_guarded():
    """Every ``on_change``/``on_click`` that names a function goes through ``ui.guard``."""
    unguarded = []
    for path in [*ROOT.glob("ui/*.py"), *ROOT.glob("views/*.py")]:
        text = path.read_text()
        # a keyword (on_change=f) or a dict entry ("on_change": f), not an annotation
        callback = r'(?:"on_(?:change|click)"\s*:|\bon_(?:change|click)\s*=)\s*([^,)\s]+)'
        for m in re.finditer(callback, text):
            target = m.group(1)
            if target.startswith(('"', "'", "guarded(", "guard.guarded(")):
                continue
            name = target.split(".")[-1]
            if not re.search(rf"@guarded\s*\ndef {re.escape(name)}\(", text):
                unguarded.append(f"{path.relative_to(ROOT)}: {m.group(0)}")
    assert unguarded == []


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
    clients2.google.com in one export)."""
    out = tmp_path / "trace"
    done = subprocess.run(
        ["strace", "-f", "-yy", "-qq", "-e", "trace=connect,sendto,sendmsg,sendmmsg,write,writev",
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
