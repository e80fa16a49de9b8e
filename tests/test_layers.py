"""The import rules between the project's layers (docs/architecture.md, "Layers"): the core
imports no UI; the pure UI logic (``ui.logic``) imports no Streamlit and no page glue; the
server infrastructure (``ui.infra``) imports no page glue; a worker process never imports
Streamlit; no module imports itself back through others.

The imports are checked where they happen: each rule's modules are imported in a fresh
interpreter (what the test process has loaded already does not hide anything), and a real
worker process runs a real job."""

import ast
import json
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The project's own top-level packages and scripts, as the cycle check reads them
PROJECT = ("sdc_core", "ui", "views")
#: The page glue: every module of ``ui`` but those of these sub-packages (and ``ui`` itself)
NOT_GLUE = ("ui.logic", "ui.infra")


# -- in a fresh interpreter ----------------------------------------------------------------

#: Run by ``python -c``: import every module under a package (``pkgutil.walk_packages``) and
#: print what was imported, what could not be for a missing optional dependency, and
#: ``sys.modules``. ``__main__`` modules are run as ``python -m PKG --help`` would (they
#: call the command line at import).
_IMPORT_ALL = """
import contextlib, importlib, io, json, pkgutil, sys
package = importlib.import_module(sys.argv[1])
imported, skipped = [sys.argv[1]], {}
def missing(err):
    name = (err.name or "").split(".")[0]
    if name in ("sdc_core", "ui", "views", ""):
        raise err  # a module of the project's own: a real error
    return name
def failed(name):  # a package that could not be walked into: said above, or a real error
    if name not in skipped:
        raise ImportError(f"could not import {name}")
for info in pkgutil.walk_packages(package.__path__, sys.argv[1] + ".", onerror=failed):
    argv, sys.argv = sys.argv, [info.name, "--help"]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            importlib.import_module(info.name)
    except SystemExit:
        pass  # a __main__ that ran its --help
    except ModuleNotFoundError as err:
        skipped[info.name] = missing(err)
        continue
    finally:
        sys.argv = argv
    imported.append(info.name)
print(json.dumps({"imported": imported, "skipped": skipped, "modules": sorted(sys.modules)}))
"""


def import_all(package: str) -> dict:
    """What importing every module under ``package`` in a fresh interpreter loads."""
    done = subprocess.run([sys.executable, "-c", _IMPORT_ALL, package], cwd=ROOT,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def glue(modules: Iterable[str]) -> list[str]:
    """The page glue among ``modules``: ``ui``'s modules outside :data:`NOT_GLUE`, and the
    pages (``views``)."""
    return sorted(m for m in modules
                  if (m.startswith("ui.") and not m.startswith(tuple(f"{p}." for p in NOT_GLUE))
                      and m not in NOT_GLUE)
                  or m == "views" or m.startswith("views.") or m == "app")


def loaded(modules: Iterable[str], names: Iterable[str]) -> list[str]:
    """Which of the packages ``names`` (or a module of theirs) are among ``modules``."""
    return sorted({n for m in modules for n in names if m == n or m.startswith(f"{n}.")})


def said(skipped: Mapping[str, str]) -> None:
    """A module left out for a missing optional dependency is reported, not hidden."""
    for module, dependency in skipped.items():
        print(f"not imported: {module} (needs {dependency}, not installed)")


def test_the_core_imports_no_ui_streamlit_or_plotly():
    got = import_all("sdc_core")
    said(got["skipped"])
    assert len(got["imported"]) > 40 and "sdc_core.cli" in got["imported"]
    assert "sdc_core.__main__" in got["imported"]
    assert loaded(got["modules"], ["streamlit", "plotly", "ui", "views"]) == []


def test_the_pure_ui_logic_imports_no_streamlit_and_no_page_glue():
    got = import_all("ui.logic")
    said(got["skipped"])
    names = {p.stem for p in (ROOT / "ui" / "logic").glob("*.py") if p.stem != "__init__"}
    assert {f"ui.logic.{n}" for n in names} <= set(got["imported"])
    assert {"ui.logic.session", "ui.logic.figures", "ui.logic.workbench"} <= set(got["imported"])
    assert loaded(got["modules"], ["streamlit"]) == []
    assert glue(got["modules"]) == []


def test_the_server_infrastructure_imports_no_page_glue():
    got = import_all("ui.infra")
    said(got["skipped"])
    assert {"ui.infra.workers", "ui.infra.warmup", "ui.infra.memory"} <= set(got["imported"])
    assert glue(got["modules"]) == []


# -- the import statements ------------------------------------------------------------------

def project_imports(tree: ast.Module) -> Iterable[tuple[str, list[str], int]]:
    """Every import statement of a module, at module level or in a function, except those
    under ``if TYPE_CHECKING:`` (never run): (module, names imported from it, level)."""
    def walk(node: ast.AST) -> Iterable[tuple[str, list[str], int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child.test):
                for other in child.orelse:
                    yield from walk_one(other)
                continue
            yield from walk_one(child)

    def walk_one(node: ast.AST) -> Iterable[tuple[str, list[str], int]]:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, [], 0
        elif isinstance(node, ast.ImportFrom):
            yield node.module or "", [a.name for a in node.names], node.level
        if isinstance(node, ast.If) and _type_checking(node.test):
            for other in node.orelse:
                yield from walk_one(other)
            return
        yield from walk(node)

    yield from walk(tree)


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def import_graph(sources: Mapping[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """Which of the modules of ``sources`` (name → (source, whether it is a package's
    ``__init__``)) each imports: ``import a.b`` and ``from a import b`` reach ``a.b`` when
    that is one of them (``from a import b`` reaches ``a`` when ``b`` is a name of ``a``)."""
    graph: dict[str, set[str]] = {}
    for name, (source, is_package) in sources.items():
        edges: set[str] = set()
        for module, names, level in project_imports(ast.parse(source)):
            if level:  # relative: from the module's package
                base = name.split(".") if is_package else name.split(".")[:-1]
                module = ".".join(base[:len(base) - level + 1] + ([module] if module else []))
            for n in names:
                if f"{module}.{n}" in sources:
                    edges.add(f"{module}.{n}")
                elif module in sources:
                    edges.add(module)
            if not names and module in sources:
                edges.add(module)
        edges.discard(name)
        graph[name] = edges
    return graph


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm), each
    sorted: every import cycle lies in one."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def project_sources() -> dict[str, tuple[str, bool]]:
    """Every module of :data:`PROJECT` and ``app.py``, by its dotted name."""
    sources = {"app": ((ROOT / "app.py").read_text(encoding="utf-8"), False)}
    for top in PROJECT:
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if is_package else parts)
            sources[name] = (path.read_text(encoding="utf-8"), is_package)
    return sources


def test_the_cycle_check_finds_a_planted_cycle():
    """The check itself: a cycle through a function's import and ``from package import
    module`` is found; one closed only under ``if TYPE_CHECKING:`` is not; relative imports
    resolve."""
    planted = {
        "p": ("", True),
        "p.a": ("from p import b\n", False),
        "p.b": ("def f():\n    import p.c\n", False),
        "p.c": ("from . import a\nfrom p.a import VALUE\n", False),
        "q": ("", True),
        "q.x": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from q import y\n"
                "else:\n    import os\n", False),
        "q.y": ("import q.x\n", False),
    }
    graph = import_graph(planted)
    assert graph["p.a"] == {"p.b"} and graph["p.b"] == {"p.c"} and graph["p.c"] == {"p.a"}
    assert graph["q.x"] == set() and graph["q.y"] == {"q.x"}
    assert cycles(graph) == [["p.a", "p.b", "p.c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles_in_the_project():
    sources = project_sources()
    graph = import_graph(sources)
    assert len(graph) > 100 and "ui.logic.session" in graph["ui.state"]
    assert cycles(graph) == []


def _project_edges(package: str) -> dict[str, set[str]]:
    graph = import_graph(project_sources())
    return {m: e for m, e in graph.items() if m == package or m.startswith(f"{package}.")}


def test_each_layer_imports_only_the_layers_under_it():
    """Of the project's modules, the core imports the core; the pure logic the core and
    itself; the infrastructure the core and itself; written as imports (a function's too)."""
    allowed = {"sdc_core": ("sdc_core",), "ui.logic": ("sdc_core", "ui", "ui.logic"),
               "ui.infra": ("sdc_core", "ui", "ui.infra")}
    for layer, may in allowed.items():
        for module, edges in _project_edges(layer).items():
            wrong = [e for e in edges if e not in may and not e.startswith(
                tuple(f"{m}." for m in may if m != "ui"))]
            assert wrong == [], (module, wrong)


# -- a worker process ------------------------------------------------------------------------

def worker_modules() -> tuple[int, list[str]]:
    """Run in a worker: its process id and what it has imported."""
    return os.getpid(), sorted(sys.modules)


@pytest.fixture
def one_worker(monkeypatch):
    """A fresh pool of one worker process: every job runs in the same process."""
    from ui.infra import workers

    workers.shutdown()
    monkeypatch.setenv(workers.WORKERS_ENV, "1")
    yield workers
    workers.shutdown()


def test_a_worker_runs_the_protect_pages_job_without_streamlit(one_worker):
    """The job the Protect page hands a worker on every move (:func:`ui.compute.workbench`:
    :func:`ui.logic.workbench.detached` and :func:`~ui.logic.workbench.release_population`)
    and the warm-up's imports load neither Streamlit, Plotly nor a page module there."""
    from sdc_core.data.io import EXAMPLE_PATH, read_table
    from sdc_core.risk.population_risk import PopulationRisk
    from ui.infra import warmup
    from ui.logic.workbench import Workbench, detached, recipe_json, release_population

    workers = one_worker
    df = read_table(EXAMPLE_PATH)
    qi = ["age", "gender", "race"]
    text = recipe_json([{"method": "band", "column": "age", "width": 10}], 5)
    first, _ = workers.run(worker_modules)
    wb = workers.run_on("layers", df, detached, text, qi, None, 5, "wildcard", 1.0,
                        ["age", "wtkg"], [])
    population = workers.run_on("layers", df, release_population, text, qi, None,
                                {"sampling_fraction": 0.1})
    assert isinstance(wb, Workbench) and wb.original is None and wb.changed == ["age"]
    assert wb.assessment is not None and wb.assessment.original is None  # not sent back
    # the parts the workbench reads were computed in the worker and came back with it
    assert {"keys", "linkage", "loss", "similarity", "numeric", "households", "deniability",
            "inference"} <= set(wb.assessment.__dict__)
    assert isinstance(population, PopulationRisk)
    assert workers.run(warmup.import_worker_modules) == first
    pid, modules = workers.run(worker_modules)
    assert pid == first != os.getpid()  # the one worker ran every job
    assert "ui.logic.workbench" in modules and "ui.logic.risk_tables" in modules
    assert loaded(modules, ["streamlit", "plotly"]) == []
    assert glue(modules) == []
