"""A session's first run is cheap to compile: no Streamlit magic (docs/deploying.md, "Errors,
closed tabs and load")."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def magic_statements(path: Path) -> list[int]:
    """The lines of ``path`` holding an expression statement Streamlit's magic would have
    drawn with ``st.write``: not a call, not a docstring, not ``yield`` nor ``await``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    kinds = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    found = []
    for parent in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(parent, field, None)
            if not isinstance(block, list):
                continue
            for i, node in enumerate(block):
                if not isinstance(node, ast.Expr) or isinstance(
                        node.value, ast.Call | ast.Yield | ast.YieldFrom | ast.Await):
                    continue
                docstring = (i == 0 and isinstance(parent, kinds)
                             and isinstance(node.value, ast.Constant)
                             and isinstance(node.value.value, str))
                if not docstring:
                    found.append(node.lineno)
    return found


def test_the_pages_are_compiled_without_magic():
    """Streamlit compiles the entry point and the page again for the first visitor after every
    session has left; with magic that rewrote the page's syntax tree in Python first, eight
    times the work (views/data.py, best of 20 on a busy machine: 9 ms of compiling became
    78 ms, under the script cache's lock that every run takes)."""
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["magicEnabled"] is False
    scripts = [ROOT / "app.py", *sorted((ROOT / "views").glob("*.py"))]
    assert len(scripts) > 5
    drawn = {p.name: lines for p in scripts if (lines := magic_statements(p))}
    assert drawn == {}, f"expressions only magic would draw: {drawn}"


def test_the_magic_check_finds_what_magic_draws(tmp_path):
    page = tmp_path / "page.py"
    page.write_text('"""The page."""\nimport streamlit as st\nx = 1\nx\nst.write(x)\n'
                    'def f():\n    """Doc."""\n    "shown"\n    yield 1\n')
    assert magic_statements(page) == [4, 8]
