"""The public API's docstrings: every function and class of ``sdc_core.__all__`` carries numpydoc
sections (Parameters naming its parameters, Returns, Raises naming what it raises, Examples),
and every Examples section runs as a doctest and prints what it shows."""

import builtins
import dataclasses
import doctest
import inspect
import re
from typing import Any

import pandas as pd
import pytest

import sdc_core

#: The public functions and classes (every name of ``__all__`` is one of them today).
PUBLIC = [name for name in sdc_core.__all__
          if inspect.isfunction(value := getattr(sdc_core, name)) or inspect.isclass(value)]
_HEADER = re.compile(r"^(\w[\w ]*)\n(-+)$", re.MULTILINE)
_ENTRY = re.compile(r"^(\w[\w, ]*?)(?: : .*)?$")


def sections(doc: str) -> dict[str, str]:
    """The numpydoc sections of a docstring, by title: a title line underlined by dashes of its
    length, up to the next such title."""
    found = [m for m in _HEADER.finditer(doc) if len(m.group(1)) == len(m.group(2))]
    return {m.group(1): doc[m.end():(found[i + 1].start() if i + 1 < len(found) else None)]
            for i, m in enumerate(found)}


def entries(section: str) -> list[str]:
    """The names a Parameters/Raises section lists: its unindented lines, ``a, b : type`` giving
    ``a`` and ``b``."""
    names = []
    for line in section.splitlines():
        if line and not line[0].isspace() and (m := _ENTRY.match(line)):
            names += [n.strip() for n in m.group(1).split(",")]
    return names


def docstring(obj: Any) -> str:
    """The object's own docstring (not one inherited from a base class), dedented."""
    return inspect.cleandoc(obj.__doc__ or "")


def parameters(obj: Any) -> list[str] | None:
    """The parameters a caller passes: a function's, a dataclass's init fields, the arguments of
    a class's own ``__init__``; None when the signature is not the class's own (an enum, an
    exception)."""
    if inspect.isfunction(obj):
        return list(inspect.signature(obj).parameters)
    if dataclasses.is_dataclass(obj):
        return [f.name for f in dataclasses.fields(obj) if f.init]
    if "__init__" in vars(obj):
        return list(inspect.signature(obj).parameters)
    return None


def run_examples(obj: Any, name: str) -> doctest.TestResults:
    """Run the object's own docstring examples (not those of its methods) as a doctest, in a
    fresh namespace, with pandas' default display options."""
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=0)
    with pd.option_context("display.width", 80, "display.max_columns", 20,
                           "display.max_rows", 60, "display.precision", 6):
        for test in finder.find(obj, name, globs={}):
            runner.run(test)
    return runner.summarize(verbose=False)


def test_every_public_name_is_a_function_or_a_class():
    assert list(sdc_core.__all__) == PUBLIC


@pytest.mark.parametrize("name", PUBLIC)
def test_the_docstring_has_the_numpydoc_sections(name):
    obj = getattr(sdc_core, name)
    doc = docstring(obj)
    found = sections(doc)
    summary = doc.split("\n\n")[0]
    assert summary and "\n" not in summary, f"{name}: the summary is not one line"
    assert "Examples" in found and ">>> " in found["Examples"], f"{name}: no Examples"
    params = parameters(obj)
    if params is None or params:
        assert "Parameters" in found, f"{name}: no Parameters section"
    if params:
        documented = entries(found["Parameters"])
        assert set(params) <= set(documented), \
            f"{name}: parameters not documented: {sorted(set(params) - set(documented))}"
        assert set(documented) <= set(params), \
            f"{name}: documented but not parameters: {sorted(set(documented) - set(params))}"
    if inspect.isfunction(obj):
        assert "Returns" in found, f"{name}: no Returns section"


@pytest.mark.parametrize("name", PUBLIC)
def test_the_raises_section_names_what_the_code_raises(name):
    obj = getattr(sdc_core, name)
    found = sections(docstring(obj))
    raised = set(re.findall(r"raise (\w+)\(", inspect.getsource(obj)))
    documented = entries(found.get("Raises", ""))
    assert raised <= set(documented), f"{name} raises {sorted(raised - set(documented))}"
    for exc in documented:
        value = getattr(sdc_core, exc) if exc in sdc_core.__all__ else getattr(builtins, exc, None)
        assert inspect.isclass(value) and issubclass(value, Exception), \
            f"{name}: Raises names {exc}, not an exception"


@pytest.mark.parametrize("name", PUBLIC)
def test_the_examples_run_as_shown(name):
    result = run_examples(getattr(sdc_core, name), name)
    assert result.attempted > 0, f"{name}: no example ran"
    assert result.failed == 0, f"{result.failed} example(s) of {name} failed (above)"


def test_a_wrong_output_fails_the_examples():
    def square(x: int) -> int:
        """Square.

        >>> square(3)
        10
        """
        return x * x

    square.__module__ = __name__
    result = run_examples(square, "square")
    assert (result.attempted, result.failed) == (1, 1)
