"""The release whose linkage attack tests/test_attackers.py and tests/test_app_attackers.py
follow through the core, the command line, the report and the Protect page (docs/measures.md,
"The attackers"): ACTG 175 with local suppression on its keys, where the blanks of age let
every compatible candidate through, so preferring the candidates with the fewest blanks
re-identifies more."""

from __future__ import annotations

import pandas as pd

from sdc_core.data.io import EXAMPLE_PATH, read_table
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.risk.linkage import LinkageResult, linkage_attack

QI = ["age", "gender", "race"]
STEPS = [{"method": "local_suppression", "columns": QI, "k": 5}]
SEED = 1


def attacked_release() -> tuple[pd.DataFrame, LinkageResult]:
    """ACTG 175 and the linkage attack on its release by :data:`STEPS`, whose headline
    attacker (fewest blanks first) re-identifies more than taking any match."""
    actg = read_table(EXAMPLE_PATH)
    recipe = parse_recipe({"seed": SEED, "steps": STEPS})
    applied = apply_recipe(recipe, actg)
    result = linkage_attack(actg, applied.data, QI, recipe, (), applied.reports)
    figures = result.summary()["linkage_attackers"]
    assert result.attacker == "exact_first"
    assert figures["exact_first"]["linkage_reidentifications"] > \
        figures["any_match"]["linkage_reidentifications"]
    return actg, result
