"""No error detail and no header missing on any response (issue 39, items 4 and 6): the
security headers (``ui.infra.server``) on every response of a real ``streamlit run app.py`` and
in the shipped nginx configuration, and ``client.showErrorDetails`` off in the shipped config,
as a backstop.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from urllib.parse import urlsplit

from tests.nginx_run import answer, fetch, nginx, shipped_conf
from ui.infra.server import CSP, HEADERS

ROOT = Path(__file__).resolve().parents[1]


# -- headers ----------------------------------------------------------------------------------


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
