"""The installable package (pyproject.toml): the wheel holds the library, the command line ``sdc``
and the dashboard, and works in a fresh virtual environment outside the checkout.

The end-to-end test builds the wheel from a copy of the working tree (a build in place would
leave build/ and *.egg-info in the checkout), installs it with the [dashboard] extra into a new
virtual environment in a temporary folder, pinned to requirements.txt (``-c``), and runs
``sdc --version``, ``sdc risk`` on the built-in example, the dashboard's first page and its Risk
page, whose measures come from the worker processes (AppTest), and ``sdc dashboard`` up to its
health check, from a folder outside the checkout. The new environment sees only what the wheel
asks for: the distributions of its requirements, and theirs, are linked from this
environment's (installed from requirements.txt: the tested versions) into a folder of their
own on its path, so pip installs the wheel alone, without the network, and a dependency
missing from pyproject.toml fails here as it would on a user's machine.
"""

from __future__ import annotations

import email.parser
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
import zipfile
from importlib.metadata import Distribution, distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import sdc_core
from bench.server import alive, free_port, stop_server
from sdc_core import cli
from tests.conftest import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
#: pins of requirements.txt that come with another package rather than being asked for
BROUGHT_BY = {"py4j": "pyspark"}


def pins() -> dict[str, str]:
    """``name -> version`` of requirements.txt."""
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return dict(line.split("==") for line in lines if line and not line.startswith("#"))


def declared() -> dict[str, Requirement]:
    """The dependencies of pyproject.toml, core and extras (less the ``all`` of the others)."""
    project = PYPROJECT["project"]
    texts = project["dependencies"] + [
        text for extra in project["optional-dependencies"].values() for text in extra]
    reqs = (Requirement(text) for text in texts)
    return {r.name: r for r in reqs if r.name != project["name"]}


def test_the_dependency_ranges_hold_the_pinned_versions():
    pinned, ranges = pins(), declared()
    assert set(ranges) <= set(pinned), "pin every dependency in requirements.txt"
    for name, version in pinned.items():
        if name in BROUGHT_BY:
            assert BROUGHT_BY[name] in ranges
            continue
        assert name in ranges, f"{name} is pinned but pyproject.toml does not ask for it"
        assert ranges[name].specifier.contains(version), (name, version, ranges[name])


def test_the_dashboard_command_runs_streamlit_on_the_app(monkeypatch):
    calls = []

    def execv(path, argv):
        calls.append(argv)
        raise SystemExit(0)

    monkeypatch.setattr(os, "execv", execv)
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    with pytest.raises(SystemExit):
        cli.main(["dashboard", "--port", "8600", "--address", "0.0.0.0"])
    assert calls == [[sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
                      "--server.address", "0.0.0.0", "--server.port", "8600",
                      "--browser.gatherUsageStats", "false"]]
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"


def test_the_dashboard_without_streamlit_is_one_line_and_exit_2(monkeypatch, capsys):
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "streamlit" else find_spec(name, *a))
    assert cli.main(["dashboard"]) == 2
    err = capsys.readouterr().err
    assert err == ('sdc_core: error: the dashboard needs streamlit: '
                   'pip install "sdc-workbench[dashboard]"\n')


@pytest.mark.parametrize("port", ["0", "65536", "http"])
def test_a_bad_port_is_refused(port, capsys):
    assert cli.main(["dashboard", "--port", port]) == 2
    assert "argument --port: expected a port number" in capsys.readouterr().err


def test_the_installed_command_calls_itself_sdc(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["/venv/bin/sdc", "--version"])
    with pytest.raises(SystemExit) as done:
        cli.main()
    assert done.value.code == 0 and capsys.readouterr().out == f"sdc {sdc_core.__version__}\n"
    monkeypatch.setattr(sys, "argv", ["/venv/bin/sdc", "risk"])
    assert cli.main() == 2
    assert capsys.readouterr().err.startswith("sdc: error: the following arguments are required")


# -- the wheel in a fresh environment ------------------------------------------------------------

#: left out of the copy the wheel is built from (the wheel takes only its packages anyway)
NOT_COPIED = (".git", ".venv", "node_modules", "tests", "bench", "test-results", "build", "dist",
              "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis", ".ruff_cache")
#: where each source folder goes in the wheel
MAPPED = {"sdc_core": "sdc_core", "ui": "sdc_dashboard/ui", "views": "sdc_dashboard/views"}


def expected_files() -> set[str]:
    """What the wheel must hold: every module of sdc_core, ui and views, and the files read at
    run time."""
    files = {"sdc_dashboard/app.py", "sdc_dashboard/.streamlit/config.toml"}
    for source, target in MAPPED.items():
        for path in (ROOT / source).rglob("*"):
            if path.suffix in (".py", ".csv", ".png") and "__pycache__" not in path.parts:
                files.add(f"{target}/{path.relative_to(ROOT / source).as_posix()}")
    return files


def check(command: list[str], cwd: Path, env: dict[str, str],
          timeout: float = 300) -> subprocess.CompletedProcess:
    out = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                         timeout=timeout)
    assert out.returncode == 0, f"{command}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


def build_wheel(work: Path) -> Path:
    src = work / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(*NOT_COPIED))
    check([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(work / "dist"),
           str(src)], work, dict(os.environ))
    (wheel,) = (work / "dist").glob("*.whl")
    return wheel


def check_wheel(wheel: Path) -> None:
    version = sdc_core.__version__
    info = f"sdc_workbench-{version}.dist-info"
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        metadata = z.read(f"{info}/METADATA").decode()
    assert {name.split("/")[0] for name in names} == {"sdc_core", "sdc_dashboard", info}
    missing = expected_files() - names
    assert not missing, f"not in the wheel: {sorted(missing)}"
    dashboard_top = {n for n in names if re.fullmatch(r"sdc_dashboard/[^/]+", n)}
    assert dashboard_top == {"sdc_dashboard/app.py"}, "only app.py from the top of the checkout"
    assert {f"{info}/licenses/LICENSE", f"{info}/licenses/NOTICE"} <= names
    assert f"\nVersion: {version}\n" in metadata
    assert "\nLicense-Expression: Apache-2.0\n" in metadata


def requirements_closure(wheel: Path, extras: set[str]) -> list[Distribution]:
    """The distributions of this environment that installing ``wheel`` with ``extras`` brings:
    its requirements (their markers evaluated, extras followed) and theirs, to the end."""
    with zipfile.ZipFile(wheel) as z:
        (meta,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = email.parser.Parser().parsestr(z.read(meta).decode())
    installed = {canonicalize_name(d.metadata["Name"]): d for d in distributions()}
    found: dict[str, Distribution] = {}
    todo = [(text, extras) for text in metadata.get_all("Requires-Dist") or []]
    while todo:
        text, wanted = todo.pop()
        req = Requirement(text)
        if req.marker and not any(req.marker.evaluate({"extra": e}) for e in wanted or {""}):
            continue
        name = canonicalize_name(req.name)
        assert name in installed, f"{req} is not installed here (pip install -r requirements.txt)"
        dist = installed[name]
        assert req.specifier.contains(dist.version, prereleases=True), (req, dist.version)
        if name not in found:
            found[name] = dist
            todo += [(t, set(req.extras)) for t in dist.requires or []]
        elif req.extras:  # its extras' requirements too
            todo += [(t, set(req.extras)) for t in dist.requires or []]
    return list(found.values())


def top_entries(dist: Distribution) -> set[tuple[str, str]]:
    """The first two parts of the path of each file of ``dist`` in its site-packages ("" for
    a file at the top)."""
    entries = set()
    for f in dist.files or []:
        path = f.as_posix()
        if not path.startswith("../"):  # scripts and data outside site-packages
            top, _, rest = path.partition("/")
            entries.add((top, rest.partition("/")[0]))
    return entries


def link_distributions(dists: list[Distribution], folder: Path) -> None:
    """A folder of symbolic links to the files of ``dists`` in their site-packages: each
    top-level name theirs alone as one link, a folder that other distributions share
    (``__pycache__``, a namespace package) as a folder of links to their own entries in it."""
    chosen = {d.metadata["Name"] for d in dists}
    owners: dict[str, set[str]] = {}
    for d in distributions():
        for top, _ in top_entries(d):
            owners.setdefault(top, set()).add(d.metadata["Name"])
    links: dict[Path, Path] = {}
    for d in dists:
        for top, second in top_entries(d):
            rel = Path(top) if owners[top] <= chosen or not second else Path(top, second)
            links[rel] = Path(str(d.locate_file(rel)))
    for rel, target in links.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).symlink_to(target)


def start_dashboard(venv: Path, cwd: Path, env: dict[str, str], log: Path) -> tuple:
    """``sdc dashboard`` on a free port, once it answers its health check."""
    port = free_port()
    proc = subprocess.Popen([str(venv / "bin" / "sdc"), "dashboard", "--port", str(port)],
                            cwd=cwd, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
                            start_new_session=True)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and proc.poll() is None and not alive(port):
        time.sleep(0.3)
    return proc, port


FIRST_PAGE = """
import sys
from streamlit.testing.v1 import AppTest
at = AppTest.from_file(sys.argv[1], default_timeout=120).run()
assert not at.exception, [e.value for e in at.exception]
print(at.title[0].value)
at.switch_page("views/risk.py").run()  # its measures come from the worker processes
assert not at.exception, [e.value for e in at.exception]
import html, re
tiles = "".join(e.proto.body for e in at.get("html"))  # the measures as one HTML element
print(html.unescape(re.search(r'Keys&#x27; re-identifications</span>.*?"stMetricValue">([^<]*)<',
                              tiles).group(1)))
"""

WHERE = """
import json, sdc_core, streamlit.config as config
from sdc_core.cli import dashboard_app
from sdc_core.data.io import EXAMPLE_PATH
config._main_script_path = str(dashboard_app())   # as streamlit run sets it
print(json.dumps({"core": sdc_core.__file__, "example": str(EXAMPLE_PATH),
                  "app": str(dashboard_app()), "postScriptGC": config.get_option(
                  "runner.postScriptGC"), "primaryColor": config.get_option("theme.primaryColor")}))
"""


def test_the_wheel_installs_and_runs_outside_the_checkout(tmp_path):
    assert ROOT not in tmp_path.parents
    took = {}
    start = time.monotonic()

    def lap(step: str) -> None:
        nonlocal start
        took[step] = round(time.monotonic() - start, 1)
        start = time.monotonic()

    wheel = build_wheel(tmp_path)
    check_wheel(wheel)
    lap("build")

    venv, away = tmp_path / "venv", tmp_path / "elsewhere"
    away.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    # a venv without pip of its own: this environment's pip installs into it (``--python``)
    check([sys.executable, "-m", "venv", "--without-pip", str(venv)], away, env)
    deps = tmp_path / "deps" / "site-packages"  # Streamlit takes a path without that name
    # for a development checkout of its own
    link_distributions(requirements_closure(wheel, {"dashboard"}), deps)
    site = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    (site / "site-packages" / "wheel-requirements.pth").write_text(f"{deps}\n")
    check([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
           "--no-compile", "--no-index", "-c", str(ROOT / "requirements.txt"),
           f"{wheel}[dashboard]"], away, env, timeout=900)
    listed = check([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"),
                    "list", "--format", "json"], away, env)
    names = {canonicalize_name(d["name"]) for d in json.loads(listed.stdout)}
    assert "streamlit" in names and "duckdb" not in names and "pytest" not in names, names
    lap("install")

    python = str(venv / "bin" / "python")
    out = check([str(venv / "bin" / "sdc"), "--version"], away, env)
    assert out.stdout == f"sdc {sdc_core.__version__}\n"
    where = json.loads(check([python, "-c", WHERE], away, env).stdout)
    for path in (where["core"], where["example"], where["app"]):
        assert Path(path).is_relative_to(venv), where
    # the dashboard's settings come from the config.toml beside app.py, from any folder
    assert where["postScriptGC"] is False and where["primaryColor"] == "#1f6feb", where
    out = check([str(venv / "bin" / "sdc"), "risk", where["example"], "--qi", "age,gender,race",
                 "--json"], away, env)
    profile = json.loads(out.stdout)
    assert profile["n_records"] == 2139 and profile["expected_reidentifications"] == 182
    lap("cli")

    out = check([python, "-c", FIRST_PAGE, where["app"]], away, env)
    assert out.stdout.strip().splitlines()[-2:] == ["Data", "182 (8.51 %)"]
    lap("first page")

    log = tmp_path / "dashboard.log"
    proc, port = start_dashboard(venv, away, env, log)
    try:
        assert alive(port), f"no health check within 90 s:\n{log.read_text()[-3000:]}"
        assert proc.poll() is None
    finally:
        stop_server(proc, grace=30)  # with its worker processes (its process group)
    lap("dashboard")
    print("package test, seconds per step:", took)
