"""One truth for the linkage attack's attackers (docs/measures.md, "The attackers"): on a
release with blanks (tests/attackers.py), the headline attacker and its figures are the same in
the core, the command line (text and JSON) and the report, which shows the others on demand;
the Protect page's are tests/test_app_attackers.py's."""

import json

import pytest

from sdc_core.data.io import EXAMPLE_PATH
from sdc_core.risk import risk_profile
from sdc_core.risk.linkage import ATTACKER_NAMES, linkage_attack
from tests.attackers import QI, SEED, STEPS
from tests.cli_run import run
from ui.logic.report import attackers_table, build_report, risk_table, utility_table
from ui.logic.workbench import evaluate, recipe_json


def test_command_line_shows_the_headline(attacked, tmp_path):
    _, result = attacked
    recipe = tmp_path / "r.json"
    recipe.write_text(json.dumps({"version": 1, "seed": SEED, "steps": STEPS}))
    protected = tmp_path / "p.csv"
    assert run("apply", EXAMPLE_PATH, "--recipe", recipe, "-o", protected).returncode == 0
    args = ("compare", EXAMPLE_PATH, protected, "--qi", ",".join(QI), "--recipe", recipe)
    out = run(*args, "--json")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    expected = result.summary()
    assert r["linkage_attacker"] == expected["linkage_attacker"] == "exact_first"
    for key in ("linkage_reidentifications", "linkage_risk_percent", "linkage_percent_certain"):
        assert r[key] == pytest.approx(expected[key], abs=1e-9), key
    for a, figures in expected["linkage_attackers"].items():
        assert r["linkage_attackers"][a] == pytest.approx(figures, abs=1e-9), a
    text = run(*args).stdout
    assert f"{expected['linkage_reidentifications']:.6f}" in text
    assert f"{ATTACKER_NAMES['exact_first']} (of 3, the one that re-identifies most)" in text
    for a, figures in expected["linkage_attackers"].items():
        assert f"{ATTACKER_NAMES[a]}" in text
        assert f"{figures['linkage_reidentifications']:.6f} " in text


def test_report_shows_the_headline(attacked):
    actg, result = attacked
    text = recipe_json(STEPS, SEED)
    wb = evaluate(actg, text, QI, None, 5, "wildcard", 1.0, ["age"], [])
    assert wb.after["linkage_attacker"] == result.attacker
    assert wb.after["linkage_reidentifications"] == result.linkage_reidentifications
    before = linkage_attack(actg, actg, QI)
    table = risk_table(risk_profile(actg, QI), before, wb.after)
    rows = dict(zip(table["measure"], table["after"]))
    assert rows["linkage attack re-identifications"] == result.linkage_reidentifications
    every = attackers_table(before, wb.after)
    assert every["headline"].tolist() == ["", "yes", ""]
    after = every["linkage attack re-identifications after"].tolist()
    assert after == [f["linkage_reidentifications"]
                     for f in result.summary()["linkage_attackers"].values()]
    assert every["linkage attack re-identifications before"].tolist() == [182.0] * 3
    html = build_report("t", "f", len(actg), actg.shape[1], {}, text, table,
                        utility_table(wb.utility_for([])), [], attackers=every)
    assert ("re-identifies most of the 3 it runs: fewest blanks first (the candidates that "
            "hold the person&#x27;s own value on the most columns") in html
    assert "<details><summary>Every attacker of the linkage attack</summary>" in html
    assert f"{result.linkage_reidentifications:.6g}" in html
