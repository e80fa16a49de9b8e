"""Real outside data (issue 23, item 4): a slice of the corpus of ``tests/corpus.py`` through
the command line (in process) and every dashboard page (AppTest): ``make test`` runs one dtype
variant of each table (a different one for each, so that every variant runs), ``make bench``
every variant of each (``SDC_CORPUS_ALL=1``). The whole corpus runs in
``python -m bench.bench_corpus`` (``make bench``)."""

from __future__ import annotations

import os
import traceback

import pandas as pd
import pytest

from sdc_core.cli import main
from sdc_core.recipe import parse_recipe
from tests import corpus

#: every dtype variant of each table (``make bench``), or the i-th table's variant i (mod 3)
ALL_VARIANTS = os.environ.get("SDC_CORPUS_ALL") == "1"
SLICE = [(name, which) for i, name in enumerate(corpus.TEST_SLICE)
         for which in (corpus.VARIANTS if ALL_VARIANTS
                       else [corpus.VARIANTS[i % len(corpus.VARIANTS)]])]


def ids(case: tuple[str, str]) -> str:
    return f"{case[0]}-{case[1]}"


@pytest.fixture
def cli(capsys):
    """``sdc_core.cli.main`` in this process, its output read with capsys."""
    def run(argv: list[str]) -> tuple[int, str, str]:
        capsys.readouterr()
        try:
            code = main(argv)
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 1
        except Exception:  # a traceback escaping main: reported with the others
            traceback.print_exc()
            code = -1
        captured = capsys.readouterr()
        return code, captured.out, captured.err
    return run


def failures(findings: list[corpus.Finding]) -> str:
    return "\n".join(f.line() for f in findings if f.failure)


def test_the_corpus_loads_and_covers_the_kinds():
    """Every table loads in this pandas, is person-level sized (≤ 60k rows) and the corpus
    as a whole has True/False, text, missing numbers and text, integer codes, floats and
    tables of 5k-30k rows."""
    assert len(corpus.TABLES) >= 20
    covered = set()
    for src in corpus.TABLES:
        df = corpus.load(src.name)
        assert 300 <= len(df) <= 60_000 and "rownames" not in df.columns, src.name
        for c in df.columns:
            s = df[c]
            if pd.api.types.is_bool_dtype(s):
                covered.add("bool")
            elif s.dtype == object or pd.api.types.is_string_dtype(s):
                covered |= {"text"} | ({"text NaN"} if s.isna().any() else set())
            elif pd.api.types.is_integer_dtype(s) and s.nunique() <= 10:
                covered.add("integer codes")
            elif pd.api.types.is_float_dtype(s):
                covered |= {"float"} | ({"numeric NaN"} if s.isna().any() else set())
        if 5_000 <= len(df) <= 30_000:
            covered.add("5k-30k rows")
    assert covered == {"bool", "text", "text NaN", "integer codes", "float", "numeric NaN",
                       "5k-30k rows"}
    assert "Ecdat/Treatment" in corpus.BY_NAME
    assert sum(pd.api.types.is_bool_dtype(t) for t in corpus.load("Ecdat/Treatment").dtypes) == 4


def test_variants_and_recipes():
    df = corpus.load("Ecdat/Treatment")
    b, c = corpus.variant(df, "b"), corpus.variant(df, "c")
    assert str(b["married"].dtype) == "boolean" and str(b["age"].dtype) == "Int64"
    assert str(b["ethn"].dtype).startswith("string") and str(c["ethn"].dtype) == "category"
    for fmt in ("csv", "parquet"):
        assert corpus.roundtrip(b, fmt).shape == df.shape
    assert str(corpus.roundtrip(c, "parquet")["ethn"].dtype) == "category"
    one, two = corpus.case("Ecdat/Treatment", "a"), corpus.case("Ecdat/Treatment", "a")
    assert one.recipes == two.recipes  # deterministic
    assert one.roles.qi == ["age", "educ", "ethn", "married"]  # all four suggested
    for rec in one.recipes:
        parse_recipe(rec["recipe"])
        assert 1 <= len(rec["recipe"]["steps"]) <= 4
    methods = {s["method"] for rec in one.recipes for s in rec["recipe"]["steps"]}
    assert {"band", "recode", "pram", "rank_swap", "microaggregation", "local_suppression",
            "noise", "relabel"} <= methods


@pytest.mark.parametrize("case", SLICE, ids=ids)
def test_command_line(case, cli, tmp_path):
    """risk, apply to CSV and Parquet, compare with the recipe, risk of each output: exit 0 or
    a one-line refusal; the same figures on the CSV and the Parquet file; the issue's
    invariants once tests/conformance.py exists."""
    c = corpus.case(*case)
    found = corpus.check_cli(c, tmp_path, cli) + corpus.check_conformance(c)
    assert not failures(found), failures(found)


@pytest.mark.parametrize("case", SLICE, ids=ids)
def test_every_page(case):
    """Upload, roles, every page, each recipe loaded on Protect, a sweep, Export: no
    exception, no traceback or "internal error" on any page."""
    c = corpus.case(*case)
    found = corpus.check_app(c)
    assert not failures(found), failures(found)
