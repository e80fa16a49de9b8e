"""The worked example of docs/utility.md, "Does the analysis hold?", recomputed with the core:
its spec file is read from the doc, each setting's recipe applied to ACTG 175 with seed 42, and
every figure of its table must be what the core gives, to the decimals printed."""

import json
import re
from functools import cache
from pathlib import Path

import pandas as pd
import pytest

from sdc_core.data.io import read_table
from sdc_core.examples import example
from sdc_core.recipe import apply_recipe, make_recipe
from sdc_core.risk.linkage import linkage_attack
from sdc_core.utility.analysis import parse_spec
from sdc_core.utility.validity import HOLDS, Validity, ValidityReport, verdict

DOC = Path(__file__).resolve().parents[1] / "docs" / "utility.md"
SEED = 42
#: The doc's settings, in the order of its table: label → recipe steps.
SETTINGS = {
    "none": [],
    "age in 5-year bands": [{"method": "band", "column": "age", "width": 5}],
    "age in 10-year bands": [{"method": "band", "column": "age", "width": 10}],
    "age in 20-year bands": [{"method": "band", "column": "age", "width": 20}],
    "PRAM race and gender, p = 0.1": [{"method": "pram", "column": "race", "p": 0.1},
                                      {"method": "pram", "column": "gender", "p": 0.1}],
    "PRAM race and gender, p = 0.3": [{"method": "pram", "column": "race", "p": 0.3},
                                      {"method": "pram", "column": "gender", "p": 0.3}],
    "rank swap age, 5 %": [{"method": "rank_swap", "column": "age", "window_percent": 5}],
    "rank swap cd40, 5 %": [{"method": "rank_swap", "column": "cd40", "window_percent": 5}],
    "rank swap age and cd40, 10 %": [
        {"method": "rank_swap", "column": "age", "window_percent": 10},
        {"method": "rank_swap", "column": "cd40", "window_percent": 10}],
    "noise on cd40, p = 25": [{"method": "noise", "columns": ["cd40"], "p": 25}],
    "noise on cd40, p = 50": [{"method": "noise", "columns": ["cd40"], "p": 50}],
    "noise on cd40, p = 100": [{"method": "noise", "columns": ["cd40"], "p": 100}],
    "microaggregation cd40, k = 5": [{"method": "microaggregation", "columns": ["cd40"],
                                      "k": 5}],
    "microaggregation cd40, k = 10": [{"method": "microaggregation", "columns": ["cd40"],
                                       "k": 10}],
    "microaggregation cd40 and age, k = 5": [
        {"method": "microaggregation", "columns": ["cd40", "age"], "k": 5}],
}
HEADER = ("| setting | linkage risk % | mean CI overlap | terms with J < 0.9 (J) | verdict "
          "| cd40 coefficient | worst table: TVD | S_pMSE |")


def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


def doc_spec() -> dict:
    """The spec file the doc shows: the JSON block after its ``<!-- spec -->`` mark."""
    block = re.search(r"<!-- spec -->\s*```json\n(.*?)```", doc_text(), re.S)
    assert block, "docs/utility.md: no ```json block after <!-- spec -->"
    return json.loads(block.group(1))


@cache
def actg() -> pd.DataFrame:
    return read_table(example("actg175").path)


def row(label: str, validity: Validity) -> str:
    """The doc's table row of one setting (module docstring): the linkage attack on the keys of
    ACTG 175 (age, gender, race), then the report of the spec."""
    recipe = make_recipe(SETTINGS[label], SEED)
    applied = apply_recipe(recipe, actg())
    risk = linkage_attack(actg(), applied.data, example("actg175").roles.qi, recipe,
                          (), applied.reports).linkage_risk_percent
    changed = [c for c in actg().columns if not actg()[c].equals(applied.data[c])]
    report: ValidityReport = validity.compare(applied.data, changed=changed)
    summary, result = report.summary(), report.analyses[0]
    moved = sorted((t for t in result.terms if t.ci_overlap < HOLDS), key=lambda t: t.ci_overlap)
    worst = report.tables[0]
    cd40 = next(t for t in result.terms if t.term == "cd40")
    cells = [label, f"{risk:.2f}", f"{summary['mean_ci_overlap']:.3f}",
             ", ".join(f"{t.term} {t.ci_overlap:.2f}" for t in moved) or "none",
             verdict(result), f"{cd40.protected:.3f}",
             f"{' × '.join(worst.columns)}: {worst.tvd:.3f}" if worst.tvd else "0",
             f"{summary['s_pmse']:.2f}"]
    return "| " + " | ".join(cells) + " |"


def table_lines() -> list[str]:
    """The doc's table as the core computes it, header and rule included."""
    validity = Validity(parse_spec(doc_spec()), actg())
    return [HEADER, "|" + " --- |" * (HEADER.count("|") - 1)] + [
        row(label, validity) for label in SETTINGS]


def test_the_spec_is_the_lesson_regression_on_the_keys_and_its_columns():
    spec = parse_spec(doc_spec())
    assert [a.formula for a in spec.analyses] == ["cd420 ~ age + C(treat) + cd40"]
    assert set(example("actg175").roles.qi) <= set(spec.table_columns())


def test_the_doc_table_is_what_the_core_computes():
    lines = doc_text().splitlines()
    assert HEADER in lines, "docs/utility.md: the table's header is not there"
    start = lines.index(HEADER)
    printed = lines[start:start + len(SETTINGS) + 2]
    for want, got in zip(table_lines(), printed, strict=True):
        assert got == want


@pytest.mark.parametrize("p", [25, 50, 100])
def test_noise_attenuates_cd40_as_the_doc_says(p):
    """Regression dilution: noise of sd (p/100)·sd(cd40) scales the cd40 coefficient by the
    reliability λ = 1/(1 + (p/100)²), within sampling error."""
    text = doc_text()
    assert "λ = 1/(1 + (p/100)²)" in text
    validity = Validity(parse_spec(doc_spec()), actg())
    result = validity.compare(apply_recipe(make_recipe(SETTINGS[f"noise on cd40, p = {p}"],
                                                       SEED), actg()).data).analyses[0]
    cd40 = next(t for t in result.terms if t.term == "cd40")
    assert cd40.protected == pytest.approx(cd40.original / (1 + (p / 100) ** 2), rel=0.03)
