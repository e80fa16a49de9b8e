"""Issue 51, finding 6: a cross table's audit is bounded (sdc_core/tables/suppression_audit.py;
docs/tables.md, "The audit's bound"). The 20 × 20 × 20 table of two records a cell that held
two workers for more than 15 minutes (two programmes per hidden cell) is audited with a few
programmes; the fast audit decides every cell as the definition does (two programmes per cell,
written here as a plain loop) on many random tables; a time limit reports the cells it could not
check and never passes them; a closed tab cancels its table's job in the worker pool."""

from __future__ import annotations

import os
import time

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog

from sdc_core.tables import suppression_audit
from sdc_core.tables.cell_rules import Rule, p_rule, threshold_rule
from sdc_core.tables.crosstab import crosstab
from sdc_core.tables.suppression_audit import audit, secondary_suppression
from sdc_core.tables.table_release import release_table


def cube_records(levels: int = 20, per_cell: int = 2, seed: int = 0) -> pd.DataFrame:
    """levels³ cells of about ``per_cell`` records each (the finding's 246 kB CSV)."""
    g = np.random.default_rng(seed)
    n = per_cell * levels ** 3
    return pd.DataFrame({c: g.integers(0, levels, n).astype(str) for c in "abc"})


def reference_intervals(table, hidden: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """From the definition: lo = min x_c, hi = max x_c over x ≥ 0 with the published cells
    fixed and every margin the sum of its cells, two programmes per hidden cell over the whole
    table (HiGHS's simplex; no grouping, no shortcut)."""
    x = table.values.astype(float)
    a = table.constraints
    cols = np.flatnonzero(hidden)
    rhs = -(a[:, ~hidden] @ x[~hidden])
    lo, hi = np.empty(len(cols)), np.empty(len(cols))
    for k in range(len(cols)):
        c = np.zeros(len(cols))
        for sign, out in ((1.0, lo), (-1.0, hi)):
            c[k] = sign
            res = linprog(c, A_eq=a[:, cols], b_eq=rhs, bounds=(0, None), method="highs-ds")
            out[k] = res.x[k] if res.status == 0 else -sign * np.inf
    return lo, hi


class Counting:
    """Counts the linear programmes the audit solves (the solver itself is called)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        real = suppression_audit.linprog

        def counted(*args, **kwargs):
            self.calls += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(suppression_audit, "linprog", counted)


def test_the_20_cubed_table_is_audited_with_a_few_programmes(monkeypatch):
    table = crosstab(cube_records(), ["a", "b", "c"])
    rules = threshold_rule(table, 5)
    hidden = int(rules.primary.sum())
    assert len(table.frame) == 21 ** 3 and hidden > 6000
    count = Counting(monkeypatch)
    start = time.perf_counter()
    report = audit(table, rules.primary, rules, time_limit=None)
    seconds = time.perf_counter() - start
    # the old audit solved a programme for each hidden cell and side it could not skip: more
    # than 6,000 here; the solutions found decide all but a handful
    assert count.calls <= 60, count.calls
    assert report.frame["checked"].all() and report.unchecked_cells == 0
    assert seconds < 300  # 10–25 s on two shared cores; the old audit ran for hours
    # every cell decided safe reaches its protection on [lo, hi], which lies in its interval
    safe = report.frame[~report.frame["exposed"]]
    assert (safe["lo"] <= safe["value"] - safe["lower"]).all()
    assert (safe["hi"] >= safe["value"] + safe["upper"]).all()


def random_case(seed: int):
    """A random 2- or 3-way count or sum table and a hidden pattern: its primary cells under a
    rule and a few more cells and margins at random."""
    g = np.random.default_rng(seed)
    shape = [int(v) for v in g.integers(2, 6, size=int(g.integers(2, 4)))]
    n = int(g.integers(20, 12 * int(np.prod(shape))))
    names = ["a", "b", "c"][:len(shape)]
    df = pd.DataFrame({c: g.integers(0, s, n).astype(str) for c, s in zip(names, shape)})
    if seed % 3 == 2:
        df["y"] = np.round(g.lognormal(3, 1.5, n), 2)
        table = crosstab(df, names, "y")
        rules = p_rule(table, 15)
    else:
        table = crosstab(df, names)
        rules = threshold_rule(table, int(g.integers(3, 7)))
    hidden = rules.primary | (g.random(len(table.frame)) < g.uniform(0.05, 0.4))
    return table, rules, hidden


@pytest.mark.parametrize("seed", range(40))
def test_the_fast_audit_decides_as_the_definition(seed, monkeypatch):
    table, rules, hidden = random_case(seed)
    if not hidden.any():
        return
    ref_lo, ref_hi = reference_intervals(table, hidden)
    scale = max(1.0, float(np.abs(table.values).max()))
    if table.sum_column is None:  # whole counts: the definition's bounds rounded inwards
        ref_lo, ref_hi = np.ceil(ref_lo - 1e-6), np.floor(ref_hi + 1e-6)
    tol = 1e-9 * scale
    v = table.values[hidden]
    need_lo, need_hi = rules.lower[hidden], rules.upper[hidden]
    prim = rules.primary[hidden]
    exposed = prim & ((ref_lo > v - need_lo + tol) | (ref_hi < v + need_hi - tol))
    # no cell is exact by size: every group goes the fast way
    monkeypatch.setattr(suppression_audit, "EXACT_CELLS", 0)
    fast = audit(table, hidden, rules).frame
    assert fast["checked"].all()
    assert np.array_equal(fast["exposed"].to_numpy(), exposed)
    lo, hi = fast["lo"].to_numpy(), fast["hi"].to_numpy()
    assert (lo >= ref_lo - tol).all() and (hi <= ref_hi + tol).all()  # inside the interval
    ex = fast["exact"].to_numpy()
    assert np.allclose(lo[ex], ref_lo[ex], rtol=0, atol=tol)
    assert np.allclose(hi[ex], ref_hi[ex], rtol=0, atol=tol)
    assert ex[exposed].all()  # an exposed cell's interval is the reader's
    # and with exact=True every interval is the definition's
    whole = audit(table, hidden, rules, exact=True).frame
    assert whole["exact"].all()
    assert np.allclose(whole["lo"], ref_lo, rtol=0, atol=tol)
    assert np.allclose(whole["hi"], ref_hi, rtol=0, atol=tol)
    assert np.array_equal(whole["exposed"].to_numpy(), exposed)


def test_a_time_limit_reports_the_cells_it_could_not_check():
    table = crosstab(cube_records(12), ["a", "b", "c"])
    rules = threshold_rule(table, 5)
    report = audit(table, rules.primary, rules, time_limit=0.0)
    assert report.unchecked_cells == int(rules.primary.sum())
    assert not report.passes and report.exposed_cells == 0
    assert report.frame.loc[~report.frame["checked"], ["lo", "hi"]].isna().all().all()
    assert "not checked in the time allowed" in report.findings()[-1]
    made = release_table(cube_records(12), ["a", "b", "c"], time_limit=0.0)
    out = made.to_json()
    assert out["audit_passes"] is False and out["unchecked_cells"] > 0
    assert any(h["lo"] is None and h["checked"] is False for h in out["hidden"])


def test_secondary_suppression_of_the_20_cubed_table_stops_at_its_budget():
    table = crosstab(cube_records(), ["a", "b", "c"])
    rules = threshold_rule(table, 5)
    start = time.perf_counter()
    result = secondary_suppression(table, rules, budget=3.0)
    assert time.perf_counter() - start < 3.0 + 30  # the budget, and one programme past it
    assert not result.report.passes and result.report.unchecked_cells > 0


def pid() -> int:
    return os.getpid()


@pytest.fixture
def closing_tab(monkeypatch):
    """One worker process (the next job waits for the one running) and a browser session,
    "closed-tab", that closes at its third progress report; the sessions asked about."""
    from ui import compute
    from ui.infra import memory, workers

    asked: list[str] = []

    def active(session: str) -> bool:
        asked.append(session)
        return len(asked) < 3

    monkeypatch.setattr(memory, "is_active", active)
    monkeypatch.setattr(compute, "session_id", lambda: "closed-tab")
    monkeypatch.setenv(workers.WORKERS_ENV, "1")
    workers.shutdown()
    try:
        yield asked
    finally:
        workers.shutdown()


def test_a_closed_tab_cancels_its_tables_job(closing_tab):
    """The Tables page's job stops at its next progress report once its browser session is
    gone (ui/compute.py, ``while_connected``): the one worker is free for the next job (in the
    app tier: ui.compute imports Streamlit)."""
    from ui import compute
    from ui.infra import workers

    workers.run(pid)
    start = time.perf_counter()
    with pytest.raises(compute.SessionEnded):
        workers.run_on("cube", cube_records(), release_table, ["a", "b", "c"],
                       progress=compute.while_connected("closed-tab"))
    assert workers.run(pid) != os.getpid()
    assert time.perf_counter() - start < 30  # not the minutes the whole table takes
    assert set(closing_tab) == {"closed-tab"}


def test_a_closed_tab_cancels_its_differencing_job(closing_tab):
    """The Tables page's differencing job (two tables and the pair's intervals) stops as the
    table's own does once its browser session is gone (ui/compute.py, ``differencing``)."""
    from ui import compute

    start = time.perf_counter()
    with pytest.raises(compute.SessionEnded):
        compute.differencing("cube-differencing", ("a", "b", "c"), "a", ("0", "1"),
                             "suppress", Rule.parse("threshold:5"), 1.0, 0, 10, None, None,
                             cube_records())
    assert time.perf_counter() - start < 60  # not the minutes both tables take
    assert set(closing_tab) == {"closed-tab"}
