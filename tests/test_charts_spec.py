"""The figures built from plain Plotly specs without Plotly's validation (``ui.charts.
spec_figure``: the ones redrawn on every slider move and on the Risk page's first view) are
valid Plotly figures: validation takes them as they are, property for property."""

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from sdc_core.io import EXAMPLE_PATH, read_table
from sdc_core.risk import risk_profile
from sdc_core.risk.population import class_histogram, uniqueness_curve
from sdc_core.sweep import run_sweep
from sdc_core.utility.analysis import TermResult
from ui import charts
from ui.suda_chart import contribution_bars
from ui.workbench import evaluate, recipe_json

QI = ["age", "gender", "race"]


@pytest.fixture(scope="module")
def actg():
    return read_table(EXAMPLE_PATH)


def figures(df) -> dict[str, go.Figure]:
    steps = [{"method": "band", "column": "age", "width": 7},
             {"method": "pram", "column": "race", "p": 0.2},
             {"method": "noise", "columns": ["wtkg"], "p": 20}]
    wb = evaluate(df, recipe_json(steps, 5), QI, None, 5, "wildcard", 1.0, ["age", "wtkg"])
    fk = risk_profile(df, QI).fk
    curve = uniqueness_curve(class_histogram(df, QI), fractions=np.logspace(-3, 0, 9))
    terms = [TermResult(t, o, o - 1, o + 1, p, p - 2, p + 2, 0.5, 0.1, True)
             for t, o, p in (("age", 0.5, 0.7), ("C(treat)[T.<b>1</b>]", -3.0, 1.0))]
    sweep = run_sweep(df, QI, {
        "seeds": 2, "numeric": ["age", "wtkg"],
        "settings": [{"method": "band", "column": "age", "param": "width", "values": [5, 10]},
                     {"method": "pram", "column": "race", "param": "p", "values": [0.1, 0.2]}],
        "target": {"measure": "linkage_risk_percent", "at_most": 5.0}})
    risk = "linkage_reidentifications"
    return {
        "trade-off with its target and best": charts.tradeoff_scatter(
            sweep.table, risk, "IL1_release", "risk", "loss", target=3.0, best=sweep.best),
        "trade-off": charts.tradeoff_scatter(sweep.table, risk, "IL1_release", "risk", "loss"),
        "parameter lines with the baseline": charts.parameter_lines(sweep.table, risk, "risk",
                                                                    "by parameter"),
        "before/after of a banded column": wb.figure("age"),
        "before/after of categories": wb.figure("race"),
        "before/after of noise": wb.figure("wtkg"),
        "class sizes, k 5": charts.class_size_histogram(fk, 5),
        "class sizes, k 0": charts.class_size_histogram(fk, 0),
        "uniqueness curves": charts.uniqueness_curves(curve, 0.02),
        "SUDA2 contributions": contribution_bars({"age": 60.0, "<i>race</i>": 12.5}),
        "intervals": charts.interval_chart(terms, "a <b>model</b>"),
    }


def test_spec_figures_pass_plotlys_validation_unchanged(actg):
    for name, fig in figures(actg).items():
        validated = go.Figure(fig.to_dict())  # raises on any invalid property
        assert json.loads(validated.to_json()) == json.loads(fig.to_json()), name
        assert fig.data and fig.layout.title.text, name
