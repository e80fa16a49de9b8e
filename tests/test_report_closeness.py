"""The report's t-closeness, β-likeness and δ-disclosure table (docs/measures.md,
"t-closeness, β-likeness and δ-disclosure"): the figures of ``closeness_report`` on the
original and on the release, under the names of sdc_core.names."""
from __future__ import annotations

import html

import numpy as np
import pandas as pd

from sdc_core.names import label
from sdc_core.risk.closeness import closeness_report
from ui.logic.report import CLOSENESS, build_report

QI = ["sex", "region"]
SENSITIVE = ["N1", "income"]


def _tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(7)
    n = 400
    sex = rng.choice(["F", "M"], n)
    original = pd.DataFrame({
        "sex": sex, "region": rng.choice(["A", "B", "C"], n),
        "N1": np.where(sex == "F", rng.integers(1, 4, n), rng.integers(3, 7, n)),
        "income": rng.normal(30_000, 8_000, n).round()})
    release = original.assign(N1=rng.permutation(original["N1"].to_numpy()))
    return original, release


def _report(figures) -> str:
    return build_report("t", "f" * 64, 400, 4, {}, "{}", pd.DataFrame({"measure": []}),
                        pd.DataFrame({"measure": []}), [], closeness=figures)


def test_the_report_holds_the_figures_of_closeness_report():
    original, release = _tables()
    before = closeness_report(original, QI, SENSITIVE)
    after = closeness_report(release, QI, SENSITIVE)
    page = _report((before, after))
    assert "How far each class&#x27;s distribution" in page or "How far each class's" in page
    for k in CLOSENESS:
        assert f"<th>{html.escape(label(k))}</th>" in page
        assert f"<th>{html.escape(label(k))}, released</th>" in page
    for figures in (before, after):
        for c in SENSITIVE:
            for k in CLOSENESS:
                assert f"<td>{getattr(figures[c], k):.6g}</td>" in page, (c, k)
    # shuffling N1 across the classes brings them nearer the table: the release's t falls
    assert after["N1"].t_closeness < before["N1"].t_closeness
    assert f"<td>{after['N1'].t_closeness:.6g}</td>" in page
    assert f"<td>{before['N1'].t_closeness:.6g}</td>" in page


def test_without_figures_or_sensitive_columns_there_is_no_section():
    assert "distribution of a sensitive column" not in _report(None)
    assert "distribution of a sensitive column" not in _report(({}, {}))
