"""docs/python.md is a doctest: every worked example of the Python API runs, and prints what
the doc shows."""

import doctest
import re

import pandas as pd

#: Fewer examples than this means the doc lost its examples, or the parser stopped seeing them.
MIN_EXAMPLES = 60


class MarkdownParser(doctest.DocTestParser):
    """Doctest examples inside Markdown code fences: a fence line (```pycon, ```) ends the
    expected output before it, as a blank line would (the fence is not part of the output)."""

    _FENCE = re.compile(r"^[ \t]*```.*$", re.MULTILINE)

    def parse(self, string: str, name: str = "<string>") -> list:
        return super().parse(self._FENCE.sub("", string), name)


def test_the_worked_examples_of_docs_python_md_run_as_shown():
    # pandas' default display options (another test may have changed them): the doc's frames
    # are printed at the width of a terminal
    with pd.option_context("display.width", 80, "display.max_columns", 20,
                           "display.max_rows", 60, "display.precision", 6):
        result = doctest.testfile("../docs/python.md", module_relative=True,
                                  parser=MarkdownParser(), encoding="utf-8", verbose=False,
                                  optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} example(s) of docs/python.md failed (above)"
    assert result.attempted >= MIN_EXAMPLES
