"""Hostile model formulas through every path of the core that carries one (issue 38): the
Python API (``parse_spec``, ``Analysis``, ``estimate``, ``Validity``, ``formula_variables``,
``run_sweep``) and the command line (``compare --analysis`` and a ``sweep`` grid's
``"analysis"``); the pages' paths are in tests/test_app_formula_hostile.py.

Each payload of :mod:`tests.formula_corpus` that would run something tries to create a marker
file in the test's own sandbox directory; every test asserts the sandbox stays empty. A refusal
is one readable line (no line break, no control character, short, no traceback) that says what
is wrong. A formula whose design matrix would be huge is refused by the bounds, before patsy
builds anything. Formulas of the corpus's neighbourhood that are legitimate still fit.

"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import patsy
import pytest

import sdc_core
from sdc_core import cli
from sdc_core.data.io import EXAMPLE_PATH
from sdc_core.errors import SdcInputError
from sdc_core.utility.analysis import (
    Analysis,
    AnalysisSpec,
    check_columns,
    estimate,
    formula_variables,
)
from sdc_core.utility.formula import parse_formula
from tests.conftest import ROOT
from tests.formula_corpus import (
    BOUNDS,
    BY_ID,
    LEGITIMATE,
    MAX_MESSAGE,
    MEMORY_BOUNDS,
    NAME,
    PREFIX,
    SMALL_BUDGET,
    Payload,
    cases,
    item,
    readable,
    untouched,
    wide_table,
)

QI = ["age", "gender", "race"]
BAND = {"method": "band", "column": "age", "param": "width", "values": [10]}


def refused_at(analysis: dict, df: pd.DataFrame) -> tuple[str, str]:
    """The refusal of ``analysis`` on its way to an estimate (the spec read, its columns
    checked against ``df``, the model estimated), and the stage that refused it."""
    stage = "parse"
    try:
        spec_ = sdc_core.parse_spec({"analyses": [analysis]})
        stage = "columns"
        check_columns(spec_, df.columns)
        stage = "estimate"
        estimate(spec_.analyses[0], df)
    except SdcInputError as err:
        return str(err), stage
    pytest.fail(f"not refused: {analysis['formula'][:80]!r}")


def forged(kind: str, text: str) -> Analysis:
    """An analysis whose formula was set after its check (a caller that goes round
    ``Analysis``'s validation): estimating it must still refuse the formula."""
    a = Analysis(NAME, kind, formula="cd420 ~ age")
    object.__setattr__(a, "formula", text)
    return a


# -- proof that the marker check can fail -----------------------------------------------------


def test_a_payload_runs_when_python_evaluates_the_formula_as_before(actg, sandbox):
    """What issue 38 closed: patsy, handed the visitor's text, runs it (here in the test's own
    frame); the same text through the spec is refused and runs nothing."""
    marker = sandbox / "marker"
    text = BY_ID["import-in-I-arith"].text(marker)
    patsy.dmatrices(text, actg.head(5), eval_env=0, return_type="dataframe")
    assert marker.exists()
    marker.unlink()
    message, stage = refused_at(item(text), actg)
    assert stage == "parse" and "'__import__' is not a function" in message
    untouched(sandbox)


# -- 1. the Python API ------------------------------------------------------------------------


@pytest.mark.parametrize("p", cases())
def test_the_python_api_refuses_it(p: Payload, actg, sandbox):
    text = p.text(sandbox / "marker")
    for kind in ("ols", "logit"):
        message, stage = refused_at(item(text, kind), actg)
        readable(message, p.words)
        assert message.startswith(PREFIX), message
        assert p.stage in ("any", stage), f"refused at {stage}, not {p.stage}: {message}"
        if stage == "parse":  # Analysis and formula_variables read it as parse_spec does
            with pytest.raises(SdcInputError) as built:
                Analysis(NAME, kind, formula=text)
            readable(str(built.value), p.words)
            with pytest.raises(SdcInputError) as variables:
                formula_variables(text)
            readable(str(variables.value), p.words)
        else:  # it parses: every name it reads is a column name, looked up as such
            read = formula_variables(text)
            assert Analysis(NAME, kind, formula=text).formula == text
            missing = [c for c in read if c not in actg.columns]
            assert bool(missing) == (stage == "columns"), (read, stage)
        # estimate and Validity refuse it even when it went round Analysis's check
        analysis = forged(kind, text)
        with pytest.raises(SdcInputError) as estimated:
            estimate(analysis, actg)
        readable(str(estimated.value), p.words)
        spec_ = AnalysisSpec(0.95, (analysis,), columns=("age",), pmse=False)
        if stage == "estimate":
            report = sdc_core.Validity(spec_, actg).compare(actg)
            assert report.analyses[0].error.startswith(f"original: {PREFIX}")
            readable(report.analyses[0].error, p.words)
        else:
            with pytest.raises(SdcInputError) as validity:
                sdc_core.Validity(spec_, actg)
            readable(str(validity.value), p.words)
    untouched(sandbox)


@pytest.mark.parametrize("formula", [b"cd420 ~ age", ["cd420 ~ age"], {"__import__": "os"}, 1,
                                     True])
def test_a_formula_that_is_not_text_is_refused(formula):
    with pytest.raises(SdcInputError) as err:
        sdc_core.parse_spec({"analyses": [item(formula)]})
    readable(str(err.value), "formula must be")
    with pytest.raises(SdcInputError) as built:
        Analysis(NAME, "ols", formula=formula)
    readable(str(built.value), "formula must be text")


#: A combined grid whose pruned search ranks by the analyses and keeps their overlap.
SEARCH = {"combine": True, "loss": "ci_overlap_loss",
          "target": {"measure": "linkage_risk_percent", "at_most": 1,
                     "keep": {"measure": "mean_ci_overlap", "at_least": 0.9}},
          "settings": [BAND, {"method": "pram", "column": "race", "param": "p",
                              "values": [0.1]}]}


@pytest.mark.parametrize("p", cases(stages=("parse", "columns", "any")))
def test_a_sweep_grid_refuses_it(p: Payload, actg, sandbox):
    analysis = {"analyses": [item(p.text(sandbox / "marker"))]}
    for grid in ({"analysis": analysis, "settings": [BAND]}, {"analysis": analysis, **SEARCH}):
        with pytest.raises(SdcInputError) as err:
            sdc_core.run_sweep(actg, QI, grid)
        message = str(err.value)
        readable(message, p.words)
        assert message.startswith(f"grid: {PREFIX}"), message
    untouched(sandbox)


# -- 2. the command line ----------------------------------------------------------------------


def spec_file(directory: Path, text: str) -> Path:
    path = directory / "spec.json"
    path.write_text(json.dumps({"analyses": [item(text)]}), encoding="utf-8")
    return path


def grid_file(directory: Path, text: str) -> Path:
    path = directory / "grid.json"
    path.write_text(json.dumps({"analysis": {"analyses": [item(text)]}, "settings": [BAND]}),
                    encoding="utf-8")
    return path


@pytest.mark.parametrize("p", cases(stages=("parse", "columns", "any")))
def test_the_command_line_refuses_it(p: Payload, tmp_path, sandbox, capsys):
    """``main`` as ``python -m sdc_core`` runs it, on the whole corpus (in this process)."""
    text = p.text(sandbox / "marker")
    spec_path, grid_path, out = spec_file(tmp_path, text), grid_file(tmp_path, text), \
        tmp_path / "sweep.csv"
    runs = {"compare": ["compare", EXAMPLE_PATH, EXAMPLE_PATH, "--analysis", spec_path],
            "sweep": ["sweep", EXAMPLE_PATH, "--qi", ",".join(QI), "--grid", grid_path,
                      "-o", out]}
    for command, args in runs.items():
        code = cli.main([str(a) for a in args])
        got = capsys.readouterr()
        assert code == 2, f"{command}: exit {code}: {got.err[:300]!r}"
        assert got.out == "" and got.err.endswith("\n")
        line = got.err.removesuffix("\n")
        readable(line, p.words, limit=MAX_MESSAGE + 200)  # with the file's path
        assert line.startswith("sdc_core: error: "), line
    assert not out.exists()
    untouched(sandbox)


#: Payloads run through a real ``python -m sdc_core`` (a second each).
SUBPROCESS = ["import-in-I", "treatment-open", "np-testing-os", "fullwidth-np-log",
              "chars-100000", "null-byte", "escape-in-name", "chain-plus-600",
              "leading-zero-in-I"]


@pytest.mark.parametrize("p", cases(SUBPROCESS))
def test_the_command_line_refuses_it_in_a_subprocess(p: Payload, tmp_path, sandbox):
    """``compare --analysis`` and ``sweep`` with the grid's analysis, side by side: exit 2 and
    exactly one line on stderr."""
    text = p.text(sandbox / "marker")
    out = tmp_path / "sweep.csv"
    commands = {
        "compare": ["compare", EXAMPLE_PATH, EXAMPLE_PATH, "--analysis",
                    spec_file(tmp_path, text)],
        "sweep": ["sweep", EXAMPLE_PATH, "--qi", ",".join(QI), "--grid",
                  grid_file(tmp_path, text), "-o", out]}
    running = {c: subprocess.Popen([sys.executable, "-m", "sdc_core", *map(str, args)],
                                   cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
               for c, args in commands.items()}
    try:
        answers = {c: proc.communicate(timeout=120) for c, proc in running.items()}
    finally:  # none left running when one did not answer in time
        for proc in running.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    for command, proc in running.items():
        stdout, stderr = answers[command]
        err = stderr.decode("utf-8", errors="replace")
        assert proc.returncode == 2, f"{command}: exit {proc.returncode}: {err[:300]!r}"
        assert stdout == b"" and err.endswith("\n"), err
        line = err.removesuffix("\n")
        readable(line, p.words, limit=MAX_MESSAGE + 200)
        assert line.startswith("sdc_core: error: ") and PREFIX in line, line
    assert not out.exists()
    untouched(sandbox)


# -- huge design matrices ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def wide() -> pd.DataFrame:
    return wide_table()


@pytest.fixture
def nothing_built(monkeypatch):
    """patsy may build a response alone (one term, the OLS path reads it first), never a
    design: a refused model must be refused before it is built."""
    original = patsy.dmatrix

    def dmatrix(desc, *args, **kwargs):
        if not (isinstance(desc, patsy.ModelDesc) and len(desc.rhs_termlist) == 1
                and desc.rhs_termlist[0] != patsy.INTERCEPT):
            raise AssertionError("a design matrix was built")
        return original(desc, *args, **kwargs)

    def dmatrices(*args, **kwargs):
        raise AssertionError("design matrices were built")

    monkeypatch.setattr(patsy, "dmatrix", dmatrix)
    monkeypatch.setattr(patsy, "dmatrices", dmatrices)


def wide_spec(b) -> dict:
    return {"analyses": [item(b.formula, b.kind, "wide")], "columns": ["y", "other"],
            "pmse": False}


@pytest.mark.parametrize("b", BOUNDS, ids=[b.id for b in BOUNDS])
def test_a_huge_design_is_refused_by_its_columns_before_it_is_built(b, wide, nothing_built):
    assert wide["id"].nunique() == len(wide) == 20_000
    spec_ = sdc_core.parse_spec(wide_spec(b))  # it parses: its size is the data's
    with pytest.raises(SdcInputError) as err:
        estimate(spec_.analyses[0], wide)
    readable(str(err.value), r"\d columns")
    assert str(err.value).startswith("analysis 'wide': ")
    report = sdc_core.Validity(spec_, wide).compare(wide)
    assert report.analyses[0].error == f"original: {err.value}"


@pytest.mark.parametrize("b", MEMORY_BOUNDS, ids=[b.id for b in MEMORY_BOUNDS])
def test_a_design_over_the_memory_allowance_is_refused_before_it_is_built(b, wide, monkeypatch,
                                                                           nothing_built):
    monkeypatch.setenv("SDC_MEMORY_BUDGET", SMALL_BUDGET)
    with pytest.raises(SdcInputError) as err:
        estimate(sdc_core.parse_spec(wide_spec(b)).analyses[0], wide)
    readable(str(err.value), r"design matrix would take about [\d.]+ MB, more than")


def test_a_sweep_with_a_huge_design_reports_it_without_building_it(wide, nothing_built):
    grid = {"analysis": wide_spec(BOUNDS[0]), "settings": [
        {"method": "pram", "column": "other", "param": "p", "values": [0.1]}]}
    table = sdc_core.run_sweep(wide, ["other"], grid).table
    assert table["ci_overlap: wide"].isna().all()  # cannot be compared: left out


def test_the_command_line_reports_a_huge_design_without_building_it(wide, tmp_path):
    data, spec_path = tmp_path / "wide.csv", tmp_path / "spec.json"
    wide.to_csv(data, index=False)
    spec_path.write_text(json.dumps(wide_spec(BOUNDS[0])))
    out = subprocess.run([sys.executable, "-m", "sdc_core", "compare", str(data), str(data),
                          "--analysis", str(spec_path), "--json"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    [analysis] = json.loads(out.stdout)["analyses"]
    assert analysis["terms"] == []
    assert re.match(r"original: analysis 'wide': the model would have up to 100,001 columns, "
                    r"more than 500", analysis["error"]), analysis["error"]


# -- what still works ----------------------------------------------------------------------


@pytest.mark.parametrize("kind, formula", LEGITIMATE)
def test_legitimate_formulas_of_the_neighbourhood_still_fit(kind, formula, actg):
    spec_ = sdc_core.parse_spec({"analyses": [item(formula, kind, "fine")]})
    got = estimate(spec_.analyses[0], actg)
    assert len(got.terms) >= 2 and got.terms["estimate"].notna().all()
    report = sdc_core.Validity(spec_, actg).compare(actg, changed=[])
    assert report.analyses[0].error is None and report.mean_ci_overlap == 1.0
    assert set(formula_variables(formula)) <= set(actg.columns)


def test_a_column_named_like_a_payload_is_data_not_code(actg, sandbox):
    """A table's column may be named as hostile text: quoted, it is read as the column."""
    name = BY_ID["import-in-I"].text(sandbox / "marker")[len("cd420 ~ I("):-1]
    df = actg[["cd420", "age", "cd40"]].rename(columns={"age": name, "cd40": "open"})
    for formula in (f"cd420 ~ `{name}` + open", f"cd420 ~ Q({json.dumps(name)}) + log(open + 1)"):
        got = estimate(Analysis("named", "ols", formula=formula), df)
        assert got.terms["estimate"].notna().all() and len(got.terms) == 3
        assert formula_variables(formula) == ["cd420", name, "open"]
    untouched(sandbox)


def test_a_name_that_normalises_to_a_column_reads_only_the_name_as_written(actg):
    """Python reads ``ageᵢ`` as ``agei`` (NFKC); the formula language reads the column named
    ``ageᵢ``, or nothing."""
    text = "cd420 ~ ageᵢ"
    df = pd.DataFrame({"cd420": actg["cd420"], "agei": actg["age"]})
    try:
        variables = formula_variables(text)
    except SdcInputError as err:
        readable(str(err), "formula")
        return
    assert variables == ["cd420", "ageᵢ"] and 'Q("ageᵢ")' in parse_formula(text).code
    with pytest.raises(SdcInputError, match="no column"):
        estimate(Analysis("n", "ols", formula=text), df)
    both = df.assign(**{"ageᵢ": actg["cd40"], "plain": actg["cd40"]})
    got = estimate(Analysis("n", "ols", formula=text), both).terms["estimate"]
    want = estimate(Analysis("n", "ols", formula="cd420 ~ plain"), both).terms["estimate"]
    assert got.tolist() == pytest.approx(want.tolist())
