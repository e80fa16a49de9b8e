"""The docs about the project's structure say what is there: docs/architecture.md names every
module file of ``sdc_core/``, ``ui/``, ``views/`` and ``app.py``, and every project path and
dotted name (``ui.logic.workbench.evaluate``) it writes exists; docs/README.md lists every
document of docs/; docs/developing.md's tiers, lists and make targets are those of
tests/conftest.py, pyproject.toml and the Makefile.

How docs/architecture.md names a module (:func:`named_modules`): by its path from the
repository's root in backticks (```ui/logic/metrics.py```), anywhere; or, under a heading that
names a package in backticks (``### Inside `sdc_core```, ``#### `sdc_core/risk/```), by its
path inside that package (```io.py```, ```methods/spec.py```), up to the next heading. A file
name alone elsewhere names nothing: ``households.py`` is a module of sdc_core, of
sdc_core/methods and of ui/logic. ``__init__.py`` and ``__main__.py`` need not be named."""

from __future__ import annotations

import ast
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import FAST, MODULE_TIERS, ROOT, TESTS, TIERS

DOCS = ROOT / "docs"
ARCHITECTURE = DOCS / "architecture.md"
DEVELOPING = DOCS / "developing.md"
#: Where the project's modules are: every ``*.py`` below these, and app.py
PACKAGES = ("sdc_core", "ui", "views")
#: Files a package has that the doc need not name
UNNAMED = frozenset({"__init__.py", "__main__.py"})
#: A span in backticks that is a project path: a module or a folder, or under a top folder
PATH_PREFIXES = ("sdc_core/", "ui/", "views/", "tests/", "bench/", "docs/")
PATH_CHARS = re.compile(r"[\w./*-]+")
#: A path the doc names as the one the project does not use (Streamlit would serve a ``pages/``
#: folder as pages of its own): it must stay absent
ABSENT = frozenset({"pages/"})
#: A file of tests/ or bench/ written in the text, in backticks or not
TEST_OR_BENCH = re.compile(r"(?<![\w/.-])((?:tests|bench)/[\w/*.-]*[\w*])")
FENCE = re.compile(r"^\s*```.*?^\s*```[^\n]*$", re.S | re.M)
HEADING = re.compile(r"^#{1,6}\s+(.+)$", re.M)
CODE = re.compile(r"`([^`]+)`")


def text_of(path: Path) -> str:
    return path.read_text(encoding="utf-8")


# -- docs/architecture.md ----------------------------------------------------------------------


@dataclass(frozen=True)
class Mention:
    """A span in backticks, and the package of the heading it is under ("" at the root)."""

    code: str
    base: str


def heading_package(heading: str) -> str:
    """The package a heading names in backticks (``sdc_core/risk``), or "" when it names none."""
    for span in CODE.findall(heading):
        name = span.strip().rstrip("/")
        if name.split("/")[0] in PACKAGES and (ROOT / name).is_dir():
            return name
    return ""


def mentions(markdown: str) -> list[Mention]:
    """Every span in backticks outside code blocks, with the package of its heading."""
    text = FENCE.sub("", markdown)
    out: list[Mention] = []
    starts = [(m.start(), heading_package(m.group(1))) for m in HEADING.finditer(text)]
    bounds = [(0, ""), *starts, (len(text), "")]
    for (start, base), (end, _) in zip(bounds, bounds[1:], strict=False):
        section = HEADING.sub("", text[start:end], count=1) if start else text[start:end]
        out += [Mention(" ".join(span.split()), base) for span in CODE.findall(section)]
    return out


def looks_like_path(code: str) -> bool:
    """Whether a span is written as a project path: a module, a folder, or a path under one of
    the project's top folders."""
    return bool(PATH_CHARS.fullmatch(code)) and (
        code.endswith((".py", "/")) or code.startswith(PATH_PREFIXES))


def candidates(mention: Mention) -> list[str]:
    """The paths a mention may stand for: inside its heading's package, then from the root."""
    return ([f"{mention.base}/{mention.code}"] if mention.base else []) + [mention.code]


def exists(path: str) -> bool:
    """Whether a project path exists: a glob (``views/*.py``) matches a file; a template
    (``views/NAME.py``, a name in capitals) has its folder."""
    if "*" in path:
        return any(ROOT.glob(path))
    if re.search(r"(?:^|/)[A-Z][A-Z_]*\.py$", path):
        return (ROOT / path).parent.is_dir()
    return (ROOT / path).exists()


def project_modules() -> list[str]:
    """Every module file of the project, as a path from the root."""
    files = [ROOT / "app.py"]
    for package in PACKAGES:
        files += (ROOT / package).rglob("*.py")
    return sorted(f.relative_to(ROOT).as_posix() for f in files
                  if f.name not in UNNAMED and "__pycache__" not in f.parts)


def named_modules(markdown: str) -> set[str]:
    """The module files a doc names (the module docstring's rule)."""
    return {path for m in mentions(markdown) if m.code.endswith(".py")
            for path in candidates(m)
            if (path == "app.py" or path.split("/")[0] in PACKAGES) and (ROOT / path).is_file()}


def unnamed(modules: list[str], markdown: str) -> list[str]:
    named = named_modules(markdown)
    return [module for module in modules if module not in named]


def broken_paths(markdown: str) -> list[str]:
    """The spans written as project paths that exist neither in their heading's package nor
    from the root, and those of :data:`ABSENT` that exist."""
    broken = []
    for m in mentions(markdown):
        if m.code in ABSENT:
            if (ROOT / m.code).exists():
                broken.append(m.code)
        elif looks_like_path(m.code) and not any(exists(p) for p in candidates(m)):
            broken.append(m.code if not m.base else f"{m.code} (under `{m.base}`)")
    return broken


def missing_tests_and_benches(text: str) -> list[str]:
    """The files and folders of tests/ and bench/ a text names that are not there."""
    return sorted({path.rstrip(".") for path in TEST_OR_BENCH.findall(text)
                   if not exists(path.rstrip("."))})


#: A dotted name of the project in backticks: ``ui.logic.workbench.evaluate``, ``sdc_core.rng``
DOTTED = re.compile(r"((?:sdc_core|ui|views)(?:\.\w+)+)")


def defined(path: Path) -> set[str]:
    """The names a module defines or imports, at any depth (classes, functions, assignments)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(text_of(path))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def resolves(dotted: str) -> bool:
    """Whether a dotted name is a module of the project, or a name its longest module prefix
    defines (``ui.compute.workbench``: ``workbench`` in ui/compute.py)."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:i])
        module = next((f for f in (base.with_suffix(".py"), base / "__init__.py") if f.is_file()),
                      None)
        if module:
            return i == len(parts) or parts[i] in defined(module)
    return False


def unresolved(markdown: str) -> list[str]:
    """The project's dotted names in backticks that name no module and nothing in one."""
    return [m.code for m in mentions(markdown)
            if (d := DOTTED.match(m.code)) and not resolves(d.group(1))]


def test_the_architecture_names_every_module():
    modules = project_modules()
    assert len(modules) > 100 and "app.py" in modules and "ui/logic/metrics.py" in modules
    assert "sdc_core/__init__.py" not in modules
    assert unnamed(modules, text_of(ARCHITECTURE)) == []


def test_every_path_the_architecture_names_exists():
    doc = text_of(ARCHITECTURE)
    assert sum(looks_like_path(m.code) for m in mentions(doc)) > 100  # the check reads something
    assert broken_paths(doc) == []


def test_every_dotted_name_the_architecture_names_exists():
    doc = text_of(ARCHITECTURE)
    assert sum(bool(DOTTED.match(m.code)) for m in mentions(doc)) >= 20
    assert unresolved(doc) == []


def test_a_dotted_name_that_is_gone_is_reported():
    text = ("`ui.logic.workbench.evaluate`, `ui.compute.workbench(dataset_id, _df)`, "
            "`sdc_core.risk`, `ui.logic.nowhere`, `sdc_core.recipe.no_such_function`, "
            "`ui.logic.text` (`md`)")
    assert unresolved(text) == ["ui.logic.nowhere", "sdc_core.recipe.no_such_function"]


def test_every_test_and_bench_file_the_architecture_and_developing_name_exists():
    for doc in (ARCHITECTURE, DEVELOPING):
        assert len(TEST_OR_BENCH.findall(text_of(doc))) >= 5, doc.name
        assert missing_tests_and_benches(text_of(doc)) == [], doc.name


def test_a_module_the_doc_does_not_name_is_reported():
    doc = text_of(ARCHITECTURE)
    planted = "sdc_core/risk/planted_measure.py"
    assert unnamed([*project_modules(), planted], doc) == [planted]


SAMPLE = """# Title

`ui/logic/metrics.py` and `linkage.py`

### Inside `sdc_core`

| `recipe.py`, `methods/spec.py` | `risk/` | `tests/test_layers.py` |

```
households.py  in a code block
```

#### `sdc_core/risk/`

`household.py`, `households.py`, `sdc_core/risk/nowhere.py`

## Elsewhere

`crosstab.py`, `views/*.py`, `views/NAME.py`, `views/none_*.py`, `pages/`, `x y.py`,
`ui.logic.metrics`, `tests/e2e/`
"""


def test_the_rule_reads_headings_and_paths():
    assert named_modules(SAMPLE) == {"ui/logic/metrics.py", "sdc_core/recipe.py",
                                     "sdc_core/methods/spec.py", "sdc_core/risk/household.py"}
    # a bare name outside its package's heading, or under another package's, is a broken path
    assert broken_paths(SAMPLE) == [
        "linkage.py", "households.py (under `sdc_core/risk`)",
        "sdc_core/risk/nowhere.py (under `sdc_core/risk`)", "crosstab.py", "views/none_*.py"]


def test_missing_test_and_bench_files_are_reported():
    text = ("`tests/test_layers.py`, tests/test_nowhere.py, bench/bench_risk.py. "
            "`tests/test_app_*.py` and bench/bench_never.py, tests/e2e/.")
    assert missing_tests_and_benches(text) == ["bench/bench_never.py", "tests/test_nowhere.py"]


# -- docs/README.md ----------------------------------------------------------------------------


def unlisted(entries: list[str], readme: str) -> list[str]:
    """The documents (``X.md``) not linked from the README, and the folders (``X/``) it does
    not name in backticks."""
    linked = set(re.findall(r"\]\(([\w-]+\.md)\)", readme))
    return [e for e in entries
            if (e not in linked if e.endswith(".md") else f"`{e}`" not in readme)]


def docs_entries() -> list[str]:
    return sorted(p.name + ("/" if p.is_dir() else "") for p in DOCS.iterdir()
                  if p.name != "README.md" and not p.name.startswith("."))


def test_the_docs_readme_lists_every_document():
    entries = docs_entries()
    assert "architecture.md" in entries and "images/" in entries
    assert unlisted(entries, text_of(DOCS / "README.md")) == []


def test_a_document_the_readme_does_not_list_is_reported():
    readme = text_of(DOCS / "README.md")
    assert unlisted([*docs_entries(), "planted.md", "planted/"], readme) == [
        "planted.md", "planted/"]


# -- docs/developing.md ------------------------------------------------------------------------


def tier_table(doc: str) -> list[str]:
    """The first column of the table of markers: ``| `unit` | …``."""
    return re.findall(r"^\|\s*`(\w+)`\s*\|", doc, flags=re.M)


def conftest_lists() -> set[str]:
    """The lists of tests/conftest.py that decide a tier or the serial mark: its module-level
    constants that hold a dict or a frozenset."""
    tree = ast.parse(text_of(TESTS / "conftest.py"))
    out = set()
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id.isupper()
                and (isinstance(node.value, ast.Dict) or (
                    isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
                    and node.value.func.id == "frozenset"))):
            out.add(node.targets[0].id)
    return out


def test_developing_describes_the_tiers_of_conftest():
    doc = text_of(DEVELOPING)
    assert tier_table(doc) == list(TIERS)
    lists = conftest_lists()
    assert {"MODULE_TIERS", "APP_MODULES", "SERIAL"} <= lists
    assert sorted(name for name in lists if f"`{name}`" not in doc) == []
    by_module = re.search(r"`MODULE_TIERS` takes its tier \(([^)]*)\)", doc)
    assert by_module, "the sentence on MODULE_TIERS"
    assert set(CODE.findall(by_module.group(1))) == set(MODULE_TIERS.values())


def test_developing_names_every_marker_of_pyproject():
    pyproject = tomllib.loads(text_of(ROOT / "pyproject.toml"))
    markers = [m.split(":")[0] for m in pyproject["tool"]["pytest"]["ini_options"]["markers"]]
    assert set(TIERS) | {"serial"} <= set(markers)
    doc = text_of(DEVELOPING)
    assert [m for m in markers if f"`{m}`" not in doc] == []


def test_developing_names_every_helper_module_and_bench():
    doc = text_of(DEVELOPING)
    helpers = sorted(p.relative_to(ROOT).as_posix() for p in TESTS.glob("*.py")
                     if not p.name.startswith("test_")
                     and p.name not in {"__init__.py", "conftest.py"})
    benches = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "bench").glob("bench_*.py"))
    assert "tests/apptest.py" in helpers and "bench/bench_risk.py" in benches
    assert [h for h in helpers if f"`{h}`" not in doc] == []
    assert [b for b in benches if f"| `{b}` |" not in doc] == []


def make_targets(makefile: str) -> dict[str, str]:
    """Each target of the Makefile and its recipe (its tab-indented lines)."""
    targets: dict[str, str] = {}
    current: list[str] = []
    for line in makefile.splitlines():
        rule = re.match(r"^([\w.-]+(?:\s+[\w.-]+)*)\s*:(?!=)", line)
        if line.startswith("\t"):
            for name in current:
                targets[name] += line + "\n"
        elif rule:
            current = rule.group(1).split()
            for name in current:
                targets.setdefault(name, "")
        elif line.strip() and not line.startswith("#"):
            current = []
    return targets


def test_developing_describes_the_make_targets():
    doc = text_of(DEVELOPING)
    targets = make_targets(text_of(ROOT / "Makefile"))
    named = set(re.findall(r"(?:^|`)make ([\w-]+)", doc, flags=re.M))  # `make x`, a command
    assert {"test", "test-fast", "bench"} <= named
    assert sorted(named - set(targets)) == []
    # what the doc says each does
    assert f'-m "{FAST}"' in targets["test-fast"]
    assert "junit-fast.xml" in targets["test-fast"]
    test = targets["test"]
    assert all(part in test for part in ("ruff check", "mypy", '-m "not serial"', "-m serial",
                                         "junit-parallel.xml", "junit-serial.xml"))
    assert test.index('-m "not serial"') < test.index("-m serial")  # the serial group after
    listed = re.findall(r"python -m (bench\.bench_\w+)", targets["bench"])
    assert len(listed) >= 10
    assert [b for b in listed
            if not (ROOT / (b.replace(".", "/") + ".py")).is_file()] == []
