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

from sdc_core import grid
from sdc_core.assess import Assessment, Setting, Unavailable, assess
from sdc_core.names import HEADLINES, MEASURES, NEEDS, PARTS, headlines
from sdc_core.recipe import parse_recipe
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
    declared = {k for k, m in MEASURES.items() if m.target}
    assert declared == set(grid.TARGET_MEASURES) | set(grid.ATTRIBUTE_TARGETS)


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
