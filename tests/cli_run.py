"""The command line as a real subprocess (``python -m sdc_core``), as docs/cli.md documents it:
:func:`run` for tests/test_cli.py and the other tests that compare a page or a result with what
the command prints."""

import subprocess
import sys

from tests.conftest import ROOT


def run(*args):
    return subprocess.run([sys.executable, "-m", "sdc_core", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
