"""One name per measure (sdc_core.names): every figure the command line, a sweep and the records
files report has an entry; docs/measures.md's "Names" table lists the same entries; the page,
the report and the command line call a figure by the same name (the pages:
tests/test_app_names.py)."""

import json
import re

import pandas as pd
import pytest

from sdc_core.data.io import EXAMPLE_PATH
from sdc_core.names import COUNT_AND_PERCENT, MEASURES, UNITS, label, name
from sdc_core.risk import risk_profile
from sdc_core.risk.linkage import linkage_attack
from sdc_core.sweep.run import run_sweep
from sdc_core.utility import validity
from tests.cli_run import run as cli_run
from tests.conftest import ROOT

QI = ["age", "gender", "race"]
RECIPE = {"version": 1, "seed": 1, "steps": [{"method": "band", "column": "age", "width": 10},
                                             {"method": "rank_swap", "column": "wtkg",
                                              "window_percent": 10}]}
SPEC = {"columns": ["age", "gender", "race", "treat", "cd40", "cd420"], "analyses": [
    {"name": "CD4 at 20 weeks", "kind": "ols", "formula": "cd420 ~ age + C(treat) + cd40"},
    {"name": "gender by race", "kind": "table", "columns": ["gender", "race"]}]}
#: Numbers a JSON output holds that are no measure: settings it echoes, and the figures of a
#: subtree keyed by column names or model parameters (walked no further).
SETTINGS = {"alpha", "k_threshold", "dis_fraction", "bound"}
NOT_MEASURES = {"attribute_contributions", "per_column", "pitman_parameters", "snb_parameters",
                "pmse_model",
                # an analysis's own estimates, in its unit: what the measures compare
                "original", "original_low", "original_high", "protected", "protected_low",
                "protected_high"}


def run(*args: object) -> str:
    out = cli_run(*args)
    assert out.returncode == 0, out.stderr
    return out.stdout


def numeric_keys(value: object, found: set[str] | None = None) -> set[str]:
    """The keys of every number in a JSON value, outside :data:`NOT_MEASURES`."""
    found = set() if found is None else found
    if isinstance(value, list):
        for item in value:
            numeric_keys(item, found)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key in NOT_MEASURES:
                continue
            if isinstance(item, (int, float)) and not isinstance(item, bool):
                found.add(key)
            else:
                numeric_keys(item, found)
    return found


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The outputs of ``risk`` and ``compare`` on ACTG 175 with every option that adds figures,
    as JSON and as text, and their records files."""
    d = tmp_path_factory.mktemp("names")
    (d / "recipe.json").write_text(json.dumps(RECIPE))
    (d / "spec.json").write_text(json.dumps(SPEC))
    run("apply", EXAMPLE_PATH, "--recipe", d / "recipe.json", "-o", d / "p.csv")
    risk = ("risk", EXAMPLE_PATH, "--qi", ",".join(QI), "--sensitive", "cd40,treat",
            "--sampling-fraction", "0.1", "--records", d / "risk_records.csv")
    compare = ("compare", EXAMPLE_PATH, d / "p.csv", "--qi", ",".join([*QI, "wtkg"]),
               "--recipe", d / "recipe.json", "--analysis", d / "spec.json",
               "--records", d / "link_records.csv")
    return {"risk": json.loads(run(*risk, "--json")), "risk_text": run(*risk),
            "compare": json.loads(run(*compare, "--json")), "compare_text": run(*compare),
            "records": [*pd.read_csv(d / "risk_records.csv").columns,
                        *pd.read_csv(d / "link_records.csv").columns]}


def test_every_reported_figure_has_a_name(files, actg):
    reported = numeric_keys(files["risk"]) | numeric_keys(files["compare"])
    assert {"avg_linkage_risk_percent", "linkage_risk_percent", "drisk_percent", "r1", "tvd",
            "ci_overlap", "n_msus", "population_uniqueness_percent"} <= reported  # all there
    assert sorted(reported - SETTINGS - set(MEASURES)) == []
    assert sorted(set(files["records"]) - set(MEASURES)) == []
    grid = {"seeds": 2, "numeric": ["age", "wtkg", "cd40"], "sampling_fraction": 0.1,
            "analysis": SPEC, "settings": [
                {"method": "band", "column": "age", "param": "width", "values": [10]},
                {"method": "pram", "column": "race", "param": "p", "values": [0.1]}],
            "target": {"measure": "linkage_risk_percent", "at_most": 5}}
    table = run_sweep(actg, QI, grid).table
    per_analysis = {c for c in table.columns if ": " in c}  # "ci_overlap: NAME", …
    assert per_analysis and {c.split(": ")[0] for c in per_analysis} <= set(MEASURES)
    numbers = [c.removesuffix("_sd") for c in table.columns if c not in per_analysis
               and pd.api.types.is_numeric_dtype(table[c]) and table[c].dtype != bool]
    assert sorted(set(numbers) - {"param_value"} - set(MEASURES)) == []


def names_table() -> list[tuple[str, str, str, str]]:
    """The rows (name, key, formula, unit) of docs/measures.md's "Names" section, in order."""
    text = (ROOT / "docs" / "measures.md").read_text(encoding="utf-8")
    section = text.split("\n## Names\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if not line.startswith("| ") or line.startswith(("| name |", "| ---")):
            continue
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        rows.append((cells[0], cells[1].strip("`"), cells[2], cells[3]))
    return rows


def test_the_docs_list_every_name_as_the_code_does():
    rows = names_table()
    assert [key for _, key, _, _ in rows] == list(MEASURES)  # every entry, once, in order
    for shown, key, formula, unit in rows:
        m = MEASURES[key]
        assert (shown, formula, unit) == (name(key), m.formula, m.unit), key
        assert unit in UNITS


def test_the_two_reidentification_families_have_distinct_names():
    keys = ["expected_reidentifications", "avg_linkage_risk_percent",
            "linkage_reidentifications", "linkage_risk_percent"]
    names = [name(k) for k in keys]
    assert len(set(names)) == 4
    assert all(a not in b for a in names for b in names if a != b)  # none inside another
    assert all(n.startswith("keys'") for n in names[:2])
    assert all(n.startswith("linkage attack") for n in names[2:])
    assert COUNT_AND_PERCENT["linkage_risk_percent"] == "linkage_reidentifications"
    assert COUNT_AND_PERCENT["expected_reidentifications"] == "avg_linkage_risk_percent"


def test_the_validity_labels_are_the_names():
    assert {k: name(k) for k in validity.LABELS} == validity.LABELS


def test_no_internal_tag_in_a_name():
    assert not [k for k, m in MEASURES.items() if re.search(r"seed \d", m.name)]


def test_the_command_line_says_the_names(files):
    risk, compare = files["risk"], files["compare"]
    line = next(x for x in files["risk_text"].splitlines()
                if x.strip().startswith(name("avg_linkage_risk_percent")))
    assert line.split()[-2:] == [f"{risk['avg_linkage_risk_percent']:.6f}", "%"]
    assert name("percent_k_le_threshold", 5) in files["risk_text"]
    assert "linkage" not in files["risk_text"]  # the keys' figures only
    line = next(x for x in files["compare_text"].splitlines()
                if x.strip().startswith(name("linkage_risk_percent")))
    assert line.split()[-2:] == [f"{compare['linkage_risk_percent']:.6f}", "%"]
    assert "seed 003" not in files["compare_text"]


def test_the_report_says_the_names(actg):
    from ui.logic import report
    from ui.logic.workbench import evaluate, recipe_json

    steps = [{"method": "band", "column": "age", "width": 10}]
    page = evaluate(actg, recipe_json(steps, 1), QI, None, 5, "wildcard", 1.0, ["age"], [])
    table = report.risk_table(risk_profile(actg, QI), linkage_attack(actg, actg, QI),
                              page.after).set_index("measure")
    assert table.loc[label("linkage_risk_percent"), "after"] == \
        page.after["linkage_risk_percent"]
    assert table.loc[label("avg_linkage_risk_percent"), "after"] == \
        page.after["avg_linkage_risk_percent"]
    loss = report.utility_table(page.utility_for([]))
    assert label("IL1_overall") in set(loss["measure"])
    assert not loss["measure"].str.contains("seed").any()
