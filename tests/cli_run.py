"""The command line as docs/cli.md documents it, for tests/test_cli.py and the other tests that
compare a page or a result with what the command prints.

:func:`run` calls :func:`sdc_core.cli.main` in this process with its own standard output and
error, and returns what ``python -m sdc_core`` would: ``python -m sdc_core`` is
``raise SystemExit(main())`` (``sdc_core/__main__.py``), and argparse's own errors end in
``SystemExit(2)``, caught here. It saves a new interpreter and its imports for each call,
which made the unit tier a third slower (219 s against 165 s on the 2-core machine).
:func:`run_process` is the real subprocess, for what only a new process shows (the entry
point, what is imported at start, an environment variable read once); tests/test_cli.py checks
that both give the same exit code, output and error."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys

from tests.conftest import ROOT


class _Text(io.TextIOWrapper):
    """A text stream over bytes, like the real ``sys.stdout`` (a command may write bytes to its
    ``.buffer``)."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", errors="backslashreplace",
                         newline="\n", write_through=True)

    def text(self) -> str:
        self.flush()
        return self.buffer.getvalue().decode("utf-8")  # type: ignore[attr-defined]


def run(*args: object) -> subprocess.CompletedProcess:
    """``python -m sdc_core ARGS`` run in this process: its exit code, output and error."""
    from sdc_core.cli import main

    out, err = _Text(), _Text()
    argv = [str(a) for a in args]
    cwd = os.getcwd()
    try:
        os.chdir(ROOT)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as stop:  # as the interpreter ends on it
                if stop.code is None or isinstance(stop.code, int):
                    code = stop.code or 0
                else:
                    print(stop.code, file=sys.stderr)
                    code = 1
    finally:
        os.chdir(cwd)
    return subprocess.CompletedProcess(["sdc_core", *argv], code, out.text(), err.text())


def run_process(*args: object) -> subprocess.CompletedProcess:
    """``python -m sdc_core ARGS`` as a real subprocess."""
    return subprocess.run([sys.executable, "-m", "sdc_core", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
