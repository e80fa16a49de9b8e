"""The layers inside sdc_core (docs/architecture.md): the equivalence-class layer
(``sdc_core.keys``, ``sdc_core.classes``) sits below the risk measures, the methods and the
utility measures, so ``methods`` and ``utility`` never import ``risk``; the version and the
lazy-loading helper are leaves; the grid of a sweep is parsed without running anything."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parent.parent / "sdc_core"


def imported(path: Path) -> set[str]:
    """Every module a file imports (at the top or inside a function)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out |= {f"{node.module}.{a.name}" for a in node.names}
    return out


def sdc_imports(path: Path) -> set[str]:
    return {m for m in imported(path) if m == "sdc_core" or m.startswith("sdc_core.")}


@pytest.mark.parametrize("package", ["methods", "utility"])
def test_methods_and_utility_never_import_risk(package):
    files = sorted((CORE / package).glob("*.py"))
    assert files
    upward = {f.name: sorted(m for m in sdc_imports(f) if m.startswith("sdc_core.risk"))
              for f in files}
    assert not {name: mods for name, mods in upward.items() if mods}


@pytest.mark.parametrize("name", ["keys.py", "classes.py"])
def test_the_class_layer_imports_no_measure_or_method(name):
    mods = sdc_imports(CORE / name)
    assert mods  # it does import the package's basics (errors, columns, …)
    assert not [m for m in mods if m.startswith(("sdc_core.risk", "sdc_core.methods",
                                                 "sdc_core.utility", "sdc_core.engines"))]


@pytest.mark.parametrize("name", ["version.py", "lazy.py"])
def test_version_and_lazy_loading_are_leaves(name):
    assert sdc_imports(CORE / name) == set()


def test_the_version_is_the_packages():
    import sdc_core
    from sdc_core.version import __version__

    assert sdc_core.__version__ == __version__
    pyproject = (CORE.parent / "pyproject.toml").read_text(encoding="utf-8")
    assert 'version = { attr = "sdc_core.version.__version__" }' in pyproject


def test_the_grid_is_importable_from_sweep_and_parses_without_running():
    import pandas as pd

    from sdc_core.sweep import grid
    from sdc_core.sweep import run as sweep

    assert sweep.parse_grid is grid.parse_grid and sweep.Setting is grid.Setting
    df = pd.DataFrame({"age": [23, 35, 47, 51], "sex": ["f", "m", "f", "m"]})
    g = grid.parse_grid({"settings": [{"method": "band", "column": "age", "param": "width",
                                       "values": [5, 10]}]}, df)
    assert [s.value for s in g.settings] == [5, 10] and g.dims is None
    assert grid.describe_setting(g.settings[1]) == "band age width=10"
    combined = grid.parse_grid({"combine": True, "settings": [
        {"method": "band", "column": "age", "param": "width", "values": [5, 10]}]}, df)
    assert combined.settings == [] and len(combined.dimensions) == 1
    with pytest.raises(AssertionError):
        g.dimensions  # noqa: B018 - a grid of settings has no dimensions
