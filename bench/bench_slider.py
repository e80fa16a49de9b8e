"""Server time of a slider move on the Protect page with 100k rows (targets: ≤ 100 ms for
exact-key recipes, ≤ 300 ms with a distance column in the linkage attack).

1. ``ui.logic.workbench.evaluate`` uncached: the recipe re-applied, risk (released keys and linkage
   attack) and utility recomputed and the before/after figure rebuilt, for a new banding width
   each time; once with exact keys only (banding + PRAM), once with age rank-swapped after
   banding (age becomes a distance column of the attack);
2. the AppTest run of a move of the banding slider on the Protect page: the slider's callback
   and the rerun of the page's results (a fragment, as in the browser), with everything the
   page computes and draws for them.

Baseline in the same run: a bare ``groupby(...).transform("size")`` on the same table.

Run: ``python -m bench.bench_slider [n]``
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from bench.common import median_seconds, report, survey_table
from sdc_core.data.io import infer_kinds
from sdc_core.roles import Roles

ROOT = Path(__file__).resolve().parents[1]
QI = ["age", "sex", "region"]
NUMERIC = ["age", "income", "weight"]


def main(n: int) -> None:
    from ui.logic.session import Dataset, Table
    from ui.logic.workbench import evaluate, recipe_json

    df = survey_table(n)
    baseline = median_seconds(lambda: df.groupby(QI)["age"].transform("size"))
    widths = iter(range(2, 10_000))

    def move(swap: bool) -> None:
        steps = [{"method": "band", "column": "age", "width": next(widths)},
                 {"method": "pram", "column": "region", "p": 0.05}]
        if swap:
            steps.append({"method": "rank_swap", "column": "age", "window_percent": 2.5})
        wb = evaluate(df, recipe_json(steps, 42), QI, None, 5, "wildcard", 1.0, NUMERIC)
        wb.figure("age").to_json()  # the figure shown, serialised as for the browser

    core = median_seconds(lambda: move(False), repeat=9)
    with_distance = median_seconds(lambda: move(True), repeat=9)

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["dataset"] = Dataset(Table(df), "generated", f"bench-{n}",
                                          infer_kinds(df))
    at.session_state["roles"] = Roles(qi=QI, numeric=NUMERIC)
    at.run()
    at.switch_page("views/protect.py").run()
    times = []
    for width in range(3, 14):
        at.slider(key="w_p_band_age").set_value(width)
        start = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - start)
        assert not at.exception, at.exception
        # the move reran the results' fragment alone, and AppTest then holds only its
        # elements: the whole page once more (untimed, from the caches) to find the slider
        at.run()
    rerun = float(np.median(times[1:]))
    print(f"n = {n:,} rows; a banding move with PRAM on, 3 QIs, 3 numeric columns")
    print("  " + report("evaluate, exact keys", core,
                        "groupby.transform('size')", baseline, 0.1 if n == 100_000 else None))
    print("  " + report("evaluate, + rank swap (distance column)", with_distance,
                        "groupby.transform('size')", baseline, 0.3 if n == 100_000 else None))
    print("  " + report("AppTest run of a Protect slider move", rerun,
                        "groupby.transform('size')", baseline))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
