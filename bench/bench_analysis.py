"""What the benchmark analyses add to a Protect move with 100k rows (issue 26; target: at most
1.5 × the move without them), and the time of a propensity model (target: pMSE ≤ 0.5 s).

The analyses: one OLS benchmark ``np.log(income) ~ age + C(sex) + C(region)`` and the 1- and
2-way tables of age, sex, region and income (``"columns"`` of the spec; age and income cut into
10 quantile bins of the original).

1. ``ui.logic.workbench.evaluate`` uncached, for a new banding width of age each time (PRAM on
   region as in ``bench_slider``), without analyses; and the same move followed by
   ``Validity.compare(wb.applied.data, changed=wb.changed, with_pmse=False)``, the original
   side estimated once beforehand (as the page keeps it). Ratio: the second over the first;
2. the AppTest run of a move of the Protect page's banding slider (its callback and the rerun
   of the page's results, a fragment, as in the browser), with the session's ``analyses`` None
   and with the spec (the two sessions' runs interleaved, so a drift of the machine hits both).
   Ratio: with over without;
3. ``pmse`` of the original against a protected table (bands of 5 years, PRAM on region) on the
   four columns: a logistic propensity model fitted on 2n stacked rows.

Baseline of 3 in the same run: a bare ``groupby(...).transform("size")`` on the same table.

The propensity model's Newton steps are matrix products that numpy hands to a threaded BLAS;
on a machine whose cores are busy with other work its threads wait for each other and 3 can
take several times longer (``OPENBLAS_NUM_THREADS=1`` avoids that). The header line prints the
load average and the thread setting with the figures.

Run: ``python -m bench.bench_analysis [n]``
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bench.common import median_seconds, report, survey_table
from sdc_core.data.io import infer_kinds
from sdc_core.roles import Roles
from sdc_core.utility.analysis import AnalysisSpec, parse_spec
from sdc_core.utility.fidelity import pmse
from sdc_core.utility.validity import Validity

ROOT = Path(__file__).resolve().parents[1]
QI = ["age", "sex", "region"]
NUMERIC = ["age", "income", "weight"]
COLUMNS = ["age", "sex", "region", "income"]
SPEC = {"confidence": 0.95, "columns": COLUMNS, "analyses": [
    {"name": "income model", "kind": "ols",
     "formula": "np.log(income) ~ age + C(sex) + C(region)"}]}
RATIO_TARGET = 1.5
PMSE_TARGET = 0.5


def steps(width: int) -> list[dict[str, Any]]:
    """The Protect move of ``bench_slider``: bands of ``width`` years, PRAM on region."""
    return [{"method": "band", "column": "age", "width": width},
            {"method": "pram", "column": "region", "p": 0.05}]


def time_moves(df: pd.DataFrame, spec: AnalysisSpec) -> tuple[float, float]:
    """Medians of a move without analyses and with them (module docstring, 1)."""
    from ui.logic.workbench import evaluate, recipe_json

    validity = Validity(spec, df)
    widths = iter(range(2, 10_000))

    def move(with_analyses: bool) -> None:
        wb = evaluate(df, recipe_json(steps(next(widths)), 42), QI, None, 5, "wildcard", 1.0,
                      NUMERIC)
        if with_analyses:
            validity.compare(wb.applied.data, changed=wb.changed, with_pmse=False).summary()

    return (median_seconds(lambda: move(False), repeat=9),
            median_seconds(lambda: move(True), repeat=9))


def protect_page(df: pd.DataFrame, analyses: dict[str, Any] | None) -> Any:
    """An AppTest of the Protect page on ``df``, with the session's ``analyses``."""
    from streamlit.testing.v1 import AppTest

    from ui.logic.session import Dataset, Table

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    # an id of its own: the two pages must not share the cached protected tables
    at.session_state["dataset"] = Dataset(Table(df), "generated",
                                          f"bench-{len(df)}-{analyses is not None}",
                                          infer_kinds(df))
    at.session_state["roles"] = Roles(qi=QI, numeric=NUMERIC)
    at.session_state["analyses"] = analyses
    at.run()
    at.switch_page("views/protect.py").run()
    assert not at.exception, at.exception
    return at


def time_reruns(df: pd.DataFrame, spec: AnalysisSpec) -> tuple[float, float]:
    """Medians of a Protect page rerun after a banding move, without and with the analyses
    (module docstring, 2); the first move of each, which warms caches, is left out."""
    pages = {False: protect_page(df, None), True: protect_page(df, spec.to_json())}
    times: dict[bool, list[float]] = {False: [], True: []}
    for width in range(3, 14):
        for with_analyses, at in pages.items():
            at.slider(key="w_p_band_age").set_value(width)
            start = time.perf_counter()
            at.run()
            times[with_analyses].append(time.perf_counter() - start)
            assert not at.exception, at.exception
            # the move reran the results' fragment alone, and AppTest then holds only its
            # elements: the whole page once more (untimed, from the caches) to find the slider
            at.run()
    return float(np.median(times[False][1:])), float(np.median(times[True][1:]))


def time_pmse(df: pd.DataFrame) -> float:
    """Median of ``pmse`` on the four columns, original against a protected table."""
    from sdc_core.recipe import apply_recipe, make_recipe

    protected = apply_recipe(make_recipe(steps(5), 42), df).data
    return median_seconds(lambda: pmse(df, protected, COLUMNS), repeat=5)


def main(n: int) -> None:
    df = survey_table(n)
    spec = parse_spec(SPEC)
    baseline = median_seconds(lambda: df.groupby(QI)["age"].transform("size"))
    bare, with_analyses = time_moves(df, spec)
    propensity = time_pmse(df)
    # last: the pages may leave work running in the background that would slow the others
    rerun_bare, rerun_with = time_reruns(df, spec)
    print(f"n = {n:,} rows; a banding move with PRAM on; analyses: 1 OLS and the 1- and 2-way "
          f"tables of {', '.join(COLUMNS)}; load average {os.getloadavg()[0]:.2f} on "
          f"{os.cpu_count()} CPUs, OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}")
    print("  " + report("evaluate + Validity.compare", with_analyses, "evaluate alone", bare,
                        ratio_target=RATIO_TARGET))
    print("  " + report("AppTest rerun, analyses on", rerun_with, "AppTest rerun, analyses None",
                        rerun_bare, ratio_target=RATIO_TARGET))
    print("  " + report(f"pmse, {len(COLUMNS)} columns, 2n rows", propensity,
                        "groupby.transform('size')", baseline,
                        PMSE_TARGET if n == 100_000 else None))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
