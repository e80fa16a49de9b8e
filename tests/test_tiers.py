"""The test tiers of tests/conftest.py: every test has exactly one, the lists that decide them
name modules and tests that exist and no module twice, and the unit tier (``make test-fast``)
loads no Streamlit, neither when it is collected nor when it runs (the runtime check is
``pytest_runtest_call`` in tests/conftest.py)."""

import ast
import json
import subprocess
import sys

from tests.conftest import (
    APP_MODULES,
    APP_TESTS,
    MODULE_TIERS,
    ROOT,
    SERIAL,
    SERVER_TESTS,
    TESTS,
    TIERS,
)

#: a collection in a process of its own: each test's tier marks, and whether Streamlit loaded
PROBE = """
import json, sys
import pytest

TIERS = {tiers!r}


class Probe:
    items = []

    def pytest_deselected(self, items):
        self.items += items

    def pytest_collection_finish(self, session):
        self.items += session.items


code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                    *sys.argv[1:], "tests"], plugins=[Probe()])
tiers = {{i.nodeid: sorted({{m.name for m in i.iter_markers() if m.name in TIERS}})
         for i in Probe.items}}
print(json.dumps({{"code": int(code), "streamlit": "streamlit" in sys.modules, "tiers": tiers}}))
"""


def collected(*args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE.format(tiers=TIERS), *args], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["code"] == 0, out.stdout[-3000:]
    return result


def test_every_test_has_exactly_one_tier():
    tiers = collected()["tiers"]
    assert len(tiers) > 1000
    assert {nodeid: marks for nodeid, marks in tiers.items() if len(marks) != 1} == {}
    assert {marks[0] for marks in tiers.values()} == set(TIERS)


def test_the_unit_tier_loads_no_streamlit():
    """``-m unit`` leaves out the modules of the other tiers (``pytest_ignore_collect``), and
    what it collects imports no Streamlit: a module that does belongs in APP_MODULES."""
    result = collected("-m", "unit")
    assert not result["streamlit"]
    unit = [nodeid for nodeid, marks in result["tiers"].items() if marks == ["unit"]]
    assert len(unit) > 1000


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
