"""What "What this buys" costs a Protect move (target: ≤ 1.3× the move without it).

A survey of n records (3 keys: age, sex, region) with 25 answers scored 1–6, all 25 randomly
relabeled (α moved on every call, so nothing is reused): ``ui.logic.workbench.evaluate``
uncached, the worker's evaluation of a move, once without the new figures (``buys=False``) and
once with them: the deniability of the 25 perturbed columns (read from the step matrices of the
applied recipe, docs/measures.md, "Deniability: what perturbation buys"). A second case also
tags one answer as sensitive, adding the attribute-inference attack (docs/measures.md, "The
attribute-inference attack"). Reported beside the core's ``recipe_deniability``, which runs the
recipe's steps again.

Run: ``python -m bench.bench_buys [n]``
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable

import numpy as np

from bench.common import median_seconds, report, survey_table
from sdc_core.recipe import parse_recipe
from sdc_core.risk.deniability import recipe_deniability
from ui.logic.workbench import evaluate, recipe_json

QI = ["age", "sex", "region"]
NUMERIC = ["age", "income", "weight"]
ITEMS = [f"q{i:02d}" for i in range(1, 26)]
RATIO = 1.3


def paired(without: Callable[[], None], with_: Callable[[], None],
           repeat: int = 9) -> tuple[float, float]:
    """Median seconds of each, timed in turn (a load on the machine weighs on both alike)."""
    without(), with_()  # warm up
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for run, into in ((without, times[0]), (with_, times[1])):
            start = time.perf_counter()
            run()
            into.append(time.perf_counter() - start)
    return float(np.median(times[0])), float(np.median(times[1]))


def main(n: int) -> None:
    df = survey_table(n)
    rng = np.random.default_rng(1)
    for c in ITEMS:
        df[c] = rng.integers(1, 7, n)
    alphas = iter(np.linspace(0.05, 0.5, 10_000))

    def move(buys: bool, sensitive: list[str]) -> None:
        text = recipe_json([{"method": "relabel", "column": c, "alpha": float(next(alphas))}
                            for c in ITEMS], 42)
        wb = evaluate(df, text, QI, None, 5, "wildcard", 1.0, NUMERIC, sensitive=sensitive,
                      buys=buys)
        assert len(wb.deniability) == (len(ITEMS) if buys else 0)

    print(f"n = {n:,} records, {len(ITEMS)} relabeled answer columns")
    for name, sensitive in (("no sensitive column", []), ("sensitive q01", ["q01"])):
        before, after = paired(lambda s=sensitive: move(False, s),
                               lambda s=sensitive: move(True, s))
        print(report(f"move with buys ({name})", after, "move without", before,
                     ratio_target=RATIO))
    recipe = parse_recipe(json.loads(recipe_json(
        [{"method": "relabel", "column": c, "alpha": 0.1} for c in ITEMS], 42)))
    core = median_seconds(lambda: recipe_deniability(recipe, df), repeat=5)
    print(f"{'recipe_deniability (steps re-run)':<38} median {core * 1000:8.1f} ms")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
