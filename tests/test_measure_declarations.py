"""The measure declarations (sdc_core/names.py, :data:`~sdc_core.names.HEADLINES` and
:data:`~sdc_core.names.PARTS`; docs/architecture.md, "A measure"): every declared headline
figure is given by its assessment part, by the command line's JSON where its part says, and
by the sweep's targets when it says a sweep may target it. A measure declared and missing
from any of them fails here."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pytest

from sdc_core.assess import Assessment, Setting, Unavailable, assess
from sdc_core.names import HEADLINES, MEASURES, NEEDS, PARTS, headlines
from sdc_core.recipe import parse_recipe
from sdc_core.sweep import grid
from tests.cli_run import run
from tests.conftest import ROOT

DATA = ROOT / "sdc_core" / "data" / "households.csv"
QI = ["region", "age", "sex"]
RECIPE = {"version": 1, "seed": 1, "steps": [
    {"method": "band", "column": "age", "width": 10},
    {"method": "pram", "column": "tenure", "p": 0.2}]}
SPEC = {"analyses": [{"name": "income", "kind": "ols", "formula": "income ~ age"},
                     {"name": "tenure", "kind": "table", "columns": ["tenure", "sex"]}]}


def section(out: dict[str, Any], path: str | None) -> list[dict[str, Any]]:
    """The objects of a ``--json`` output that hold a part's figures (``path``: its key, dots
    for a nested one; None: the top level)."""
    found: Any = out
    for key in (path.split(".") if path else []):
        found = found[key]
    return found if isinstance(found, list) else [found]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, dict[str, Any]]:
    """``compare --json`` and ``risk --json`` with every need met."""
    folder = tmp_path_factory.mktemp("declared")
    df = pd.read_csv(DATA)
    applied = parse_recipe(RECIPE)
    from sdc_core.recipe import apply_recipe

    apply_recipe(applied, df).data.to_csv(folder / "released.csv", index=False)
    (folder / "recipe.json").write_text(json.dumps(RECIPE))
    (folder / "spec.json").write_text(json.dumps(SPEC))
    compare = run("compare", DATA, folder / "released.csv", "--qi", ",".join(QI),
                  "--recipe", folder / "recipe.json", "--sensitive", "benefit",
                  "--household", "hid", "--table", "region,sex",
                  "--analysis", folder / "spec.json", "--numeric", "age,income", "--closest",
                  "--json")
    assert compare.returncode == 0, compare.stderr
    risk = run("risk", folder / "released.csv", "--qi", ",".join(QI), "--household", "hid",
               "--weight", "weight", "--json", "--no-suda2")
    assert risk.returncode == 0, risk.stderr
    return {"compare": json.loads(compare.stdout), "risk": json.loads(risk.stdout)}


def test_every_declaration_names_a_part_a_measure_and_its_needs():
    for key, (part, better, _, _) in HEADLINES.items():
        assert key in MEASURES and better in ("lower", "higher")
        assert part is None or hasattr(Assessment, part), f"{key}: no assessment part {part}"
    for name, part in PARTS.items():
        assert set(part.needs) <= set(NEEDS) and part.command in ("risk", "compare")
        assert headlines(name), f"part {name} declares no headline figure"


@pytest.mark.parametrize("part", [p for p in PARTS if p != "population"])
def test_every_headline_is_in_its_commands_json(outputs, part):
    declared = PARTS[part]
    for obj in section(outputs[declared.command], declared.json):
        missing = [k for k in headlines(part) if k not in obj]
        assert not missing, f"{declared.command} --json lacks {missing} of part {part}"


def test_the_population_headline_is_in_risk_json(tmp_path):
    out = run("risk", DATA, "--qi", ",".join(QI), "--sampling-fraction", "0.1", "--json",
              "--no-suda2")
    assert out.returncode == 0, out.stderr
    population = json.loads(out.stdout)["population"]
    assert set(headlines("population")) <= set(population)


def test_the_sweeps_targets_are_the_declared_targets():
    """The grid reads its targets from the declarations: each one is a figure a sweep row
    carries (a record or household figure) or an attribute target."""
    declared = {k for k, m in MEASURES.items() if m.target}
    assert declared == set(grid.TARGET_MEASURES) | set(grid.ATTRIBUTE_TARGETS)
    assert set(grid.TARGET_MEASURES) <= set(
        grid.RISK + grid.LINKAGE + [grid.POPULATION] + grid.HOUSEHOLD)


def test_the_assessment_gives_every_compare_figure_it_declares():
    """The parts read directly: the figures the JSON holds are the part's own."""
    df = pd.read_csv(DATA)
    a = assess(df, None, Setting(tuple(QI), ("age", "income"), ("benefit",),
                                 household="hid", tables=(("region", "sex"),)),
               parse_recipe(RECIPE))
    out = a.to_json(distribution=False)
    for key in headlines("linkage"):
        assert out[key] == a.linkage.summary()[key]
    for key in headlines("loss"):
        assert out[key] == a.loss.summary()[key]
    assert not isinstance(a.household_linkage, Unavailable)
    assert out["household_linkage"] == a.household_linkage.summary()


def test_the_report_names_every_declared_figure_of_the_parts_it_shows():
    """The report's tables (ui/logic/report.py, the Protect page's figures) name every
    headline of the parts they show, by its name in sdc_core.names."""
    from sdc_core.assess import RiskOptions, Sampling
    from sdc_core.names import label
    from ui.logic import report
    from ui.logic.deniability_view import deniability_table, inference_table
    from ui.logic.synthetic_view import synthetic_table
    from ui.logic.workbench import evaluate, recipe_json

    df = pd.read_csv(DATA)
    numeric, sensitive = ["income"], ["benefit"]
    steps = RECIPE["steps"] + [{"method": "pram", "column": "benefit", "p": 0.1}]
    text = recipe_json(steps, 1, "hid")
    wb = evaluate(df, text, QI, "weight", 5, "wildcard", 1.0, numeric, [], sensitive=sensitive,
                  household="hid")
    setting = Setting(tuple(QI), tuple(numeric), ("tenure",), weight="weight", household="hid",
                      risk=RiskOptions(), sampling=Sampling(sampling_fraction=0.1))
    synthesised = assess(df, None, Setting(tuple(QI), sensitive=("tenure",)), parse_recipe(
        {"version": 1, "seed": 1, "steps": [{"method": "synthesize", "min_leaf": 5}]}))
    assert synthesised.rows is not None
    before = assess(df, df, setting)
    after = assess(df, None, setting, parse_recipe(json.loads(text)))
    tables = [report.risk_table(before.keys, before.linkage, wb.after),
              report.utility_table(wb.utility_for([])),
              report.household_table(before.households, after.households),
              report.closeness_table(before.closeness, after.closeness),
              report.population_table(before.population, after.population),
              deniability_table(wb.deniability), inference_table(wb.inference),
              synthetic_table(synthesised.synthetic)]
    shown = " | ".join(str(v) for t in tables for v in [*t.columns, *t.get("measure", [])])
    parts = [p for p in PARTS if p not in ("analyses", "cell_loss", "closest")]
    missing = [k for p in parts for k in headlines(p) if label(k) not in shown]
    assert not missing, f"the report does not name {missing}"


def test_every_risk_tile_colours_its_change_by_the_declared_direction():
    """A risk tile's change is green when it goes the way its declaration calls better."""
    from ui.logic import metrics

    keys = {*metrics.PROTECT_RISK, *metrics.RISK_PAGE, *metrics.REPORT_RISK, "drisk_percent"}
    undeclared = sorted(k for k in keys if MEASURES[k].better is None)
    assert not undeclared, f"no direction declared for {undeclared}"
    assert {MEASURES[k].better for k in ("min_k", "median_k")} == {"higher"}
