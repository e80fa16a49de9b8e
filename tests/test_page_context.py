"""Pages receive their context as a parameter, not as module globals (issue 52): a page's
module-level code is its run (it builds the ``ui.page.PageContext`` and calls the page's
functions), and no function or method of a page reads a lowercase name the module assigns at
run time (``ctx``, ``ds``, ``spec``): it is handed what it works on. UPPER_CASE constants,
imports, functions and classes may be read.

Read from the pages' source with :mod:`ast` (no Streamlit). A module-level name is one the
module's own statements bind (an assignment, a ``for`` or ``with`` target, a walrus outside
any function) or one a function declares ``global``; it is lowercase when
:meth:`str.islower` says so. A function may read a name it binds itself (a parameter, a local,
a comprehension's variable, a nested function's parameter) or an enclosing function binds."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Every page the rule covers
PAGES = sorted((ROOT / "views").glob("*.py"))

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


class Read(NamedTuple):
    """A function's read of a module-level variable."""

    function: str  # its qualified name (``Release.of``, ``f.<locals>.g``)
    name: str
    line: int


def children(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes below ``node`` in its scope: of a nested function or class only what the
    scope around it evaluates (its decorators, defaults, bases), not its body."""
    for child in ast.iter_child_nodes(node):
        yield child
        if isinstance(child, ast.ClassDef):
            outside: list[ast.expr] = [*child.decorator_list, *child.bases,
                                       *(k.value for k in child.keywords)]
        elif isinstance(child, FUNCTIONS):
            a = child.args
            outside = [*getattr(child, "decorator_list", ()), *a.defaults,
                       *(d for d in a.kw_defaults if d is not None)]
        else:
            yield from children(child)
            continue
        for e in outside:
            yield e
            yield from children(e)


def body(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a module's, class's or function's own body (a lambda's expression)."""
    code = scope.body
    yield from children(ast.Module(code, []) if isinstance(code, list) else ast.Expression(code))


def stored(scope: ast.AST) -> set[str]:
    """The names ``scope``'s body binds: what it assigns (``for``, ``with`` and walrus
    targets too), imports, defines or catches (``except … as``); not a comprehension's
    variables (bound in the comprehension)."""
    nodes = list(body(scope))
    in_comprehension = {id(n) for c in nodes if isinstance(c, ast.comprehension)
                        for n in ast.walk(c.target)}
    names: set[str] = set()
    for node in nodes:
        if (isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del))
                and id(node) not in in_comprehension):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


def module_variables(tree: ast.Module) -> set[str]:
    """The lowercase names the module assigns at run time: its own statements' targets
    (assignments, ``for``, ``with``, ``except … as``, a walrus outside any function; not a
    comprehension's variable), less its imports, functions and classes, and the names a
    function declares ``global``."""
    defined = {(alias.asname or alias.name).split(".")[0] for node in body(tree)
               if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
    defined |= {node.name for node in body(tree)
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    declared = {name for node in ast.walk(tree) if isinstance(node, ast.Global)
                for name in node.names}
    return {n for n in (stored(tree) - defined) | declared if n.islower()}


def own_names(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> set[str]:
    """The names ``fn`` binds in its own scope: its parameters, what it assigns, imports or
    defines, its comprehensions' variables; less those it declares ``global``."""
    a = fn.args
    names = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if p}
    nodes = list(body(fn))
    names |= stored(fn) | {n.id for c in nodes if isinstance(c, ast.comprehension)
                           for n in ast.walk(c.target) if isinstance(n, ast.Name)}
    return names - {name for node in nodes if isinstance(node, ast.Global)
                    for name in node.names}


def reads(source: str) -> list[Read]:
    """Every read, in a function or method of ``source``, of a lowercase module-level variable
    that neither it nor a function around it binds."""
    tree = ast.parse(source)
    variables = module_variables(tree)
    found: list[Read] = []

    def visit(scope: ast.AST, qualname: str, bound: frozenset[str]) -> None:
        for node in body(scope):
            if isinstance(node, FUNCTIONS):
                name = getattr(node, "name", "<lambda>")
                if isinstance(scope, ast.ClassDef):
                    inner = f"{qualname}.{name}"
                elif not qualname:
                    inner = name
                elif isinstance(node, ast.Lambda):
                    inner = qualname  # a lambda in a function is read as part of it
                else:
                    inner = f"{qualname}.<locals>.{name}"
                check(node, inner, bound)
            elif isinstance(node, ast.ClassDef):
                visit(node, f"{qualname}.{node.name}" if qualname else node.name, bound)

    def check(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, qualname: str,
              outer: frozenset[str]) -> None:
        bound = outer | own_names(fn)
        found.extend(Read(qualname, node.id, node.lineno) for node in body(fn)
                     if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
                     and node.id in variables and node.id not in bound)
        visit(fn, qualname, bound)

    visit(tree, "", frozenset())
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_page_function_reads_a_module_variable(page: Path):
    """Every function and method of ``page`` is handed its context: none reads a lowercase
    name the module assigns."""
    found: dict[tuple[str, str], int] = {}
    for r in reads(page.read_text(encoding="utf-8")):
        found.setdefault((r.function, r.name), r.line)
    assert not found, "\n".join(f"views/{page.name}: {function} reads the module variable "
                                f"{name!r} (line {line})"
                                for (function, name), line in found.items())


FLAGGED = {
    "a plain read": ("ctx = context()\ndef f():\n    return ctx.df\n", [("f", "ctx")]),
    "a method": ("ds = 1\nclass C:\n    def m(self):\n        return ds\n", [("C.m", "ds")]),
    "a fragment": ("spec = None\n@st.fragment\ndef part():\n    st.write(spec)\n",
                   [("part", "spec")]),
    "a nested function": ("roles = r()\ndef f():\n    def g():\n        return roles\n"
                          "    return g\n", [("f.<locals>.g", "roles")]),
    "a lambda in a function": ("k = 3\ndef f(xs):\n    return sorted(xs, key=lambda x: x - k)\n",
                               [("f", "k")]),
    "a for target": ("for col in cols:\n    pass\ndef f():\n    return col\n", [("f", "col")]),
    "a with target": ("with st.sidebar as side:\n    pass\ndef f():\n    side.write(1)\n",
                      [("f", "side")]),
    "a walrus": ("if (last := state.sweep()) is not None:\n    show(last)\n"
                 "def f():\n    return last\n", [("f", "last")]),
    "a global declared": ("def f():\n    global seen\n    seen = 1\ndef g():\n"
                          "    return seen\n", [("g", "seen")]),
    "a module-level lambda, a callback": (
        "keys = k()\nst.button('Go', on_click=lambda: reset(keys))\n", [("<lambda>", "keys")]),
    "a tuple target, read in a comprehension": (
        "ds, df = a, b\ndef f():\n    return [c for c in df]\n", [("f", "df")]),
}

ALLOWED = {
    "a parameter": "ctx = context()\ndef f(ctx):\n    return ctx.df\nf(ctx)\n",
    "a local": "ds = 1\ndef f():\n    ds = 2\n    return ds\n",
    "a constant, an import, a function, a class": (
        "import json\nVIEWS = {}\nclass C: pass\ndef g(): pass\n"
        "def f():\n    return json, VIEWS, C, g\n"),
    "a comprehension variable": "m = 1\ndef f(xs):\n    return [m for m in xs]\n",
    "a nested function's parameter": (
        "opts = o()\ndef f():\n    def g(opts):\n        return opts\n    return g\n"),
    "an enclosing function's local": (
        "spec = s()\ndef f(spec):\n    def g():\n        return spec\n    return g\n"),
    "a lambda's parameter": "k = 1\ndef f(xs):\n    return sorted(xs, key=lambda k: -k)\n",
    "a module-level comprehension's variable": (
        "names = [c for c in cols]\ndef f():\n    return c\n"),
    "a default read when the function is defined": "k = 1\ndef f(x=k):\n    return x\n",
    "a CamelCase alias": "Width = Literal['a']\ndef f() -> None:\n    return Width\n",
}


@pytest.mark.parametrize("source, expected", FLAGGED.values(), ids=FLAGGED.keys())
def test_a_function_that_reads_a_module_variable_is_flagged(source: str,
                                                            expected: list[tuple[str, str]]):
    assert [(r.function, r.name) for r in reads(source)] == expected


@pytest.mark.parametrize("source", ALLOWED.values(), ids=ALLOWED.keys())
def test_a_function_handed_its_values_is_not_flagged(source: str):
    assert reads(source) == []
