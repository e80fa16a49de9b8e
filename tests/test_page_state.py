"""The pages keep the session-state rule of docs/architecture.md ("Layers", ``views/``; "Where
state lives"): a page never names ``st.session_state``. A value it shares with other pages, or
keeps from one run to the next, goes through a named accessor of ``ui/state.py``; its own
widgets go by key through the widget helpers of ``ui/state.py`` (:data:`WIDGET_HELPERS`), and
those keys are widget keys: under the widget prefix ``w_`` or passed as ``key=`` to a widget in
the same file.

Read from the pages' source with :mod:`ast` (no Streamlit). A key known from the source (a
text, a name or loop variable bound to texts, an f-string's leading text, what a local key
function returns) is checked; a key known only at run time (a parameter: a callback's widget,
the key a control function was handed) is taken as the widget key its caller drew."""

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.state_source import WIDGET_HELPERS

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "views").glob("*.py"))
#: ui/state.py's widget prefix (ui.state.WIDGET_PREFIX; read from the source, Streamlit unloaded)
PREFIX = next(ast.literal_eval(node.value)
              for node in ast.parse((ROOT / "ui" / "state.py").read_text()).body
              if isinstance(node, ast.Assign)
              and any(isinstance(t, ast.Name) and t.id == "WIDGET_PREFIX" for t in node.targets))
#: A key's text is not known from the source
UNKNOWN = None


def parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def drawn_keys(tree: ast.AST) -> set[str]:
    """The ``key=`` texts of the file's calls (the widgets it draws), as ``ast.dump`` of the
    expression: a text or an f-string alike."""
    return {ast.dump(kw.value) for node in ast.walk(tree) if isinstance(node, ast.Call)
            for kw in node.keywords if kw.arg == "key"}


class Keys:
    """What a key expression of one file can be: the texts it may take (exact), or the leading
    text of an f-string, or :data:`UNKNOWN`."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.up = parents(tree)
        self.functions = {n.name: n for n in ast.walk(tree)
                          if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}

    def scope(self, node: ast.AST) -> ast.AST:
        """The function (else the module) a node is in."""
        while node in self.up:
            node = self.up[node]
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                return node
        return self.tree

    def bindings(self, name: str, where: ast.AST) -> list[ast.expr] | None:
        """The values ``name`` is bound to in the scope of ``where`` or the module (an
        assignment, a loop over a literal tuple or list); None when one is not known (a
        parameter, a loop over something else)."""
        found: list[ast.expr] = []
        for scope in (self.scope(where), self.tree):
            for node in ast.walk(scope):
                if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                        found.append(node.value)
                elif (isinstance(node, ast.For | ast.comprehension)
                      and isinstance(node.target, ast.Name) and node.target.id == name):
                    if not isinstance(node.iter, ast.Tuple | ast.List):
                        return None
                    found.extend(node.iter.elts)
                elif isinstance(node, ast.arg) and node.arg == name:
                    return None
            if found:
                return found
        return None

    def texts(self, expr: ast.expr, depth: int = 0) -> list[tuple[str, bool]] | None:
        """The texts ``expr`` can take, each with whether it is whole (else an f-string's
        leading text); None when one is not known."""
        if depth > 10:
            return None
        if isinstance(expr, ast.Constant):
            return [(expr.value, True)] if isinstance(expr.value, str) else [("", True)]
        if isinstance(expr, ast.Name):
            bound = self.bindings(expr.id, expr)
            if bound is None:
                return None
            return self._all(bound, depth)
        if isinstance(expr, ast.IfExp):
            return self._all([expr.body, expr.orelse], depth)
        if isinstance(expr, ast.JoinedStr):
            if not expr.values:
                return [("", True)]
            first = expr.values[0]
            if isinstance(first, ast.Constant):
                return [(str(first.value), False)]
            inner = self.texts(first.value, depth + 1) if isinstance(
                first, ast.FormattedValue) else None
            return None if inner is None else [(text, False) for text, _ in inner]
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) \
                and expr.func.id in self.functions:
            returns = [n.value for n in ast.walk(self.functions[expr.func.id])
                       if isinstance(n, ast.Return) and n.value is not None]
            return self._all(returns, depth) if returns else None
        return None

    def _all(self, exprs: list[ast.expr], depth: int) -> list[tuple[str, bool]] | None:
        out: list[tuple[str, bool]] = []
        for e in exprs:
            got = self.texts(e, depth + 1)
            if got is None:
                return None
            out += got
        return out


def helper(node: ast.AST) -> str | None:
    """The widget helper ``node`` names (``state.NAME``), if it names one."""
    if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id == "state" and node.attr in WIDGET_HELPERS):
        return node.attr
    return None


def helper_calls(tree: ast.AST) -> Iterator[tuple[str, ast.Call]]:
    """The calls of a widget helper: ``state.NAME(...)``, or a widget's ``on_change`` or
    ``on_click`` that names ``state.NAME`` (maybe wrapped), with its ``args=``."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = helper(node.func)
        if name is not None:
            yield name, node
        for kw in node.keywords:
            named = [helper(n) for n in ast.walk(kw.value)] if kw.arg in (
                "on_change", "on_click") else []
            args = next((k.value for k in node.keywords if k.arg == "args"), None)
            for name in filter(None, named):
                yield name, ast.Call(ast.Name(name), list(getattr(args, "elts", [])), [])


def key_arguments(used: str, call: ast.Call) -> Iterator[tuple[ast.expr, bool]]:
    """The key arguments of a widget helper's call, each with whether it is a prefix."""
    if used == "forget_widgets":
        yield from ((a, False) for a in call.args)
    elif call.args:
        yield call.args[0], False
    yield from ((kw.value, True) for kw in call.keywords if kw.arg == "prefix")


def violations(source: str, name: str = "<page>") -> list[str]:
    """What in a page's source breaks the rule, one line each (none: it keeps it)."""
    tree = ast.parse(source)
    keys = Keys(tree)
    drawn = drawn_keys(tree)
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr == "session_state"
                or isinstance(node, ast.Name) and node.id == "session_state"
                or isinstance(node, ast.Constant) and node.value == "session_state"
                or isinstance(node, ast.alias) and node.name.split(".")[-1] == "session_state"):
            found.append(f"{name}:{getattr(node, 'lineno', 0)}: names st.session_state")
    for used, call in helper_calls(tree):
        where = f"{name}:{getattr(call, 'lineno', 0)}"
        for arg, is_prefix in key_arguments(used, call):
            texts = keys.texts(arg)
            if texts is UNKNOWN:
                continue  # known at run time only: a widget key its caller drew
            for text, whole in texts:
                widget_key = text.startswith(PREFIX) or (
                    whole and not is_prefix and ast.dump(ast.Constant(text)) in drawn
                    or not whole and ast.dump(arg) in drawn)
                if not widget_key:
                    found.append(f"{where}: state.{used} with {text!r}, not a widget "
                                 f"key (under {PREFIX!r} or drawn with key= in the file)")
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_page_reaches_the_session_only_through_ui_state(page):
    assert violations(page.read_text(), page.name) == []


def test_the_pages_use_the_widget_helpers():
    # the check above is not empty: the pages read and set their widgets through the helpers,
    # with keys of every kind the checker reads
    calls = [c for page in PAGES for c in helper_calls(ast.parse(page.read_text()))]
    assert {used for used, _ in calls} == WIDGET_HELPERS
    assert any(isinstance(c.args[0], ast.Constant) for _, c in calls if c.args)
    assert any(isinstance(c.args[0], ast.JoinedStr) for _, c in calls if c.args)


HEAD = "import streamlit as st\nfrom ui import state\n"


@pytest.mark.parametrize("source", [
    'st.session_state["recipe_message"] = ("error", "x")',
    'x = st.session_state.get("upload_file_id")',
    'del st.session_state["w_qi"]',  # a widget's key, but raw
    'for k in [k for k in st.session_state if k.startswith("w_l_")]:\n    pass',
    'from streamlit import session_state\nsession_state["t_clicked"] = 1',
    'ss = getattr(st, "session_state")',
    'state.widget("recipe_message")',
    'state.set_widget("t_clicked", 3)',
    'LAST = "protect_last_applied"\nstate.set_widget(LAST, 1)',
    'for key in ("w_qi", "upload_file_id"):\n    state.forget_widgets(key)',
    'state.forget_widgets("w_qi", "workspace_message")',
    'state.forget_widgets(prefix="lesson")',
    'def f(x):\n    prefix = f"suda_{x}"\n    state.forget_widgets(prefix=prefix)',
    'def key():\n    return "shared_value"\nstate.has_widget(key())',
    'state.bind(f"srv_{1}", 0)\nst.text_input("a", key="srv_path")',
    'state.count("rows_n")',
    'st.button("more", on_click=state.add_one, args=("rows_n",))',
    'st.button("more", on_click=guarded(state.add_one), args=("rows_n",))',
    'state.bind("srv_path", "")\nst.text_input("a", key="srv_paths")',
])
def test_a_planted_breach_is_caught(source):
    assert violations(HEAD + source)


@pytest.mark.parametrize("source", [
    'state.bind("w_qi", [])\nst.multiselect("a", [], key="w_qi")',
    'state.bind("srv_pick", None)\nst.selectbox("a", [], key="srv_pick")',
    'st.selectbox("a", [], key="srv_pick")\nif state.widget("srv_pick", None) is None:\n'
    '    state.forget_widgets("srv_pick")',
    'def moved(key):\n    return state.widget(key)',
    'def f(m):\n    def key(p):\n        return f"w_p_{m}_{p}"\n    return state.widget(key(1))',
    'def reset(lesson):\n    prefix = f"w_l_{lesson}_"\n    state.forget_widgets(prefix=prefix)',
    'def rows(key):\n    return state.count(f"{key}_n")',
    'def more(key):\n    st.button("more", on_click=guarded(state.add_one), args=(f"{key}_n",))',
    'x = state.notice("recipe")\nstate.set_last_applied("id", "{}")',
    'st.plotly_chart(1, key=f"risk_hist{r}")\nstate.widget(f"risk_hist{r}")',
])
def test_what_the_rule_allows_passes(source):
    assert violations(HEAD + source) == []
