"""The test tiers of tests/conftest.py: every test has exactly one, the lists that decide them
name modules and tests that exist and no module twice, and the unit tier (``make test-fast``)
loads no Streamlit, neither when it is collected nor when it runs (the runtime check is
``pytest_runtest_call`` in tests/conftest.py); and no test module imports another: shared
helpers live in tests/conftest.py and the helper modules (docs/developing.md)."""

import ast
import json
import subprocess
import sys

import pytest

from tests.conftest import (
    APP_MODULES,
    APP_TESTS,
    FAST,
    MODULE_TIERS,
    ROOT,
    SERIAL,
    SERVER_TESTS,
    SLOW,
    TESTS,
    TIERS,
)

#: collections in a process of their own: the fast tier's first, in a process that has loaded
#: nothing else (whether Streamlit loaded is read right after it), then every test's; each
#: gives its tests' tier marks and what it selected
PROBE = """
import json, sys
import pytest

TIERS = {tiers!r}


class Probe:
    def __init__(self):
        self.items, self.selected = [], []

    def pytest_deselected(self, items):
        self.items += items

    def pytest_collection_finish(self, session):
        self.items += session.items
        self.selected += [i.nodeid for i in session.items]


def collect(args):
    probe = Probe()
    code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                        *args, "tests"], plugins=[probe])
    tiers = {{i.nodeid: sorted({{m.name for m in i.iter_markers() if m.name in TIERS}})
             for i in probe.items}}
    return {{"code": int(code), "streamlit": "streamlit" in sys.modules, "tiers": tiers,
            "selected": probe.selected}}


print(json.dumps([collect(args) for args in json.loads(sys.argv[1])]))
"""


@pytest.fixture(scope="module")
def collected() -> dict[str, dict]:
    """The fast tier's collection (``-m FAST``) and every test's, one process for both (the
    imports of the unit tier's modules are the most of a collection's time)."""
    runs = {"fast": ["-m", FAST], "all": []}
    out = subprocess.run([sys.executable, "-c", PROBE.format(tiers=TIERS),
                          json.dumps(list(runs.values()))], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    results = json.loads(out.stdout.strip().splitlines()[-1])
    for result in results:
        assert result["code"] == 0, out.stdout[-3000:]
    return dict(zip(runs, results))


def test_every_test_has_exactly_one_tier(collected):
    tiers = collected["all"]["tiers"]
    assert len(tiers) > 1000
    assert {nodeid: marks for nodeid, marks in tiers.items() if len(marks) != 1} == {}
    assert {marks[0] for marks in tiers.values()} == set(TIERS)


def left_out_of_fast(nodeid: str) -> bool:
    """Whether the test ``nodeid`` (``tests/test_x.py::test_y[params]``) is named in SLOW or
    SERIAL."""
    module, _, test = nodeid.removeprefix("tests/").partition("::")
    test = test.partition("[")[0]
    return test in SLOW.get(module, ()) or module in SERIAL or f"{module}::{test}" in SERIAL


def test_the_unit_tier_loads_no_streamlit(collected):
    """``-m unit`` and the fast tier (``make test-fast``: ``-m "unit and not slow"``) leave out
    the modules of the other tiers (``pytest_ignore_collect``), and what they collect imports no
    Streamlit: a module that does belongs in APP_MODULES. The fast tier selects the unit tier
    but the tests SLOW and SERIAL name."""
    result = collected["fast"]
    assert not result["streamlit"]
    unit = {nodeid for nodeid, marks in result["tiers"].items() if marks == ["unit"]}
    assert len(unit) > 1000
    left_out = {nodeid for nodeid in unit if left_out_of_fast(nodeid)}
    assert left_out and set(result["selected"]) == unit - left_out


def functions(module: str) -> set[str]:
    tree = ast.parse((TESTS / module).read_text())
    return {node.name for node in tree.body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}


def test_the_lists_name_existing_modules_and_tests_each_in_one_tier():
    assert set(MODULE_TIERS.values()) < set(TIERS)
    assert not set(MODULE_TIERS) & APP_MODULES  # a module in two lists would be ambiguous
    assert not SERVER_TESTS & APP_TESTS
    named = [*MODULE_TIERS, *APP_MODULES, *SERIAL, *SERVER_TESTS, *APP_TESTS]
    for entry in named:
        module, _, test = entry.partition("::")
        assert (TESTS / module).is_file(), entry
        assert not test or test in functions(module), entry
    for entry in APP_TESTS | SERVER_TESTS:  # a test named alone is in a module of no list
        module = entry.partition("::")[0]
        assert module not in MODULE_TIERS, entry
    for entry in APP_TESTS:
        assert entry.partition("::")[0] not in APP_MODULES, entry
    for module, tests in SLOW.items():  # the fast tier leaves out unit tests only
        assert (TESTS / module).is_file(), module
        assert module not in MODULE_TIERS and module not in APP_MODULES, module
        assert tests and set(tests) <= functions(module), module
        assert not {f"{module}::{t}" for t in tests} & (APP_TESTS | SERVER_TESTS | SERIAL)


def is_test_module(name: str) -> bool:
    """Whether the dotted ``name`` is a test module of tests/ (or a name inside one)."""
    parts = name.lstrip(".").split(".")
    return (name.startswith(".") or parts[0] == "tests") and any(
        part.startswith("test_") for part in parts)


def imported_test_modules(source: str) -> list[str]:
    """The test modules (``test_*``, in tests/ or below) that ``source`` imports: ``from
    tests.test_x import …``, ``import tests.test_x``, ``from tests import test_x`` and the
    relative forms, at any depth (inside a function too)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            names = [base] if is_test_module(base) else [
                base + ("" if base.endswith(".") else ".") + alias.name for alias in node.names]
        else:
            continue
        found += [name for name in names if is_test_module(name)]
    return found


@pytest.mark.parametrize("source, found", [
    ("from tests.test_cli import run", ["tests.test_cli"]),
    ("import tests.test_cli", ["tests.test_cli"]),
    ("import tests.test_cli as cli", ["tests.test_cli"]),
    ("from tests import test_cli", ["tests.test_cli"]),
    ("from tests.e2e.test_pages import PAGES", ["tests.e2e.test_pages"]),
    ("from .test_cli import run", [".test_cli"]),
    ("from . import conftest, test_cli", [".test_cli"]),
    ("def f():\n    from tests.test_cli import run", ["tests.test_cli"]),
    ("from tests.cli_run import run\nfrom tests.conftest import ROOT\nimport test_utils", []),
])
def test_the_import_check_sees_each_form(source, found):
    assert imported_test_modules(source) == found


def test_no_test_module_imports_another():
    """Helpers shared by test modules are in helper modules (tests/apptest.py, tests/cli_run.py,
    tests/conformance.py, …), which the defining test module imports back too."""
    found = {path.relative_to(ROOT).as_posix(): names for path in sorted(TESTS.rglob("*.py"))
             if (names := imported_test_modules(path.read_text()))}
    assert found == {}
