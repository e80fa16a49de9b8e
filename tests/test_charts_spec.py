"""The figures built from plain Plotly specs without Plotly's validation
(``ui.logic.figures.spec_figure``: the ones redrawn on every slider move and on the Risk page's
first view) are valid Plotly figures: validation takes them as they are, property for
property."""

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from sdc_core.data.io import EXAMPLE_PATH, read_table
from sdc_core.risk import risk_profile
from sdc_core.risk.population import class_histogram, uniqueness_curve
from sdc_core.sweep.run import run_sweep
from sdc_core.utility.analysis import TermResult
from ui.logic import figures as builders
from ui.logic.suda_chart import contribution_bars
from ui.logic.workbench import evaluate, recipe_json

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
        "trade-off with its target and best": builders.tradeoff_scatter(
            sweep.table, risk, "IL1_release", "risk", "loss", target=3.0, best=sweep.best),
        "trade-off": builders.tradeoff_scatter(sweep.table, risk, "IL1_release", "risk", "loss"),
        "parameter lines with the baseline": builders.parameter_lines(sweep.table, risk, "risk",
                                                                      "by parameter"),
        "before/after of a banded column": wb.figure("age"),
        "before/after of categories": wb.figure("race"),
        "before/after of noise": wb.figure("wtkg"),
        "class sizes, k 5": builders.class_size_histogram(fk, 5),
        "class sizes, k 0": builders.class_size_histogram(fk, 0),
        "uniqueness curves": builders.uniqueness_curves(curve, 0.02),
        "SUDA2 contributions": contribution_bars({"age": 60.0, "<i>race</i>": 12.5}),
        "intervals": builders.interval_chart(terms, "a <b>model</b>"),
    }


def test_spec_figures_pass_plotlys_validation_unchanged(actg):
    for name, fig in figures(actg).items():
        validated = go.Figure(fig.to_dict())  # raises on any invalid property
        assert json.loads(validated.to_json()) == json.loads(fig.to_json()), name
        assert fig.data and fig.layout.title.text, name


def test_the_sweep_figures_legend_and_title_keep_clear_of_the_axis_title_and_the_plot(actg):
    """The trade-off chart of the Trade-offs page and of the report: its legend sat at a
    fraction of the plot's height under it and grew into the x axis' title, and the report's
    one-line title was wider than its page. Now the x axis' title keeps its distance from the
    tick labels, the legend starts a fixed room under the plot (for the tick labels and the
    title) and grows downwards into a bottom margin of one row per legend row, and the
    report's title comes in short lines from the figure's top, in a top margin of their own;
    the plot keeps its height."""
    from ui.logic.report import TITLE_PAD, TITLE_ROOM, sweep_figure

    grid = {"combine": True, "settings": [
        {"method": "band", "column": "age", "param": "width", "values": [0, 10]},
        {"method": "local_suppression", "columns": QI, "param": "k", "values": [0, 3]},
        {"method": "pram", "column": "race", "param": "p", "values": [0, 0.1]}],
        "target": {"measure": "percent_unique", "at_most": 5.0}}
    result = run_sweep(actg, QI, grid)
    page = builders.tradeoff_scatter(result.table, "linkage_reidentifications", "IL1_release",
                                     "risk", "IL1 (release)")
    report = sweep_figure(result)
    for fig in (page, report):
        go.Figure(fig.to_dict())  # valid as Plotly reads it
        layout = fig.layout
        rows = -(-len(fig.data) // builders.LEGEND_PER_ROW)
        assert rows >= 2
        assert layout.xaxis.title.standoff == builders.TITLE_STANDOFF
        assert layout.xaxis.title.text
        # the legend's top: AXIS_ROOM px under the plot, room for the tick labels (one line
        # of 12 px type and its distance) and the title (14 px) after its standoff
        assert layout.legend.yanchor == "top" and layout.legend.orientation == "h"
        plot = layout.height - layout.margin.t - layout.margin.b
        assert plot == builders.PLOT_HEIGHT
        assert -layout.legend.y * plot == pytest.approx(builders.AXIS_ROOM)
        assert builders.AXIS_ROOM >= 20 + builders.TITLE_STANDOFF + 20 + 10
        assert layout.margin.b >= builders.AXIS_ROOM + builders.LEGEND_ROW * rows
    assert page.layout.margin.t == 50 and "<br>" not in page.layout.title.text
    title = report.layout.title
    lines = title.text.split("<br>")
    assert "not necessarily this report's recipe" in title.text
    assert len(lines) == 3 and max(map(len, lines)) <= 50  # 600 px wide at 17 px type
    assert report.layout.margin.t == TITLE_ROOM >= TITLE_PAD + 3 * 22 + 10
    assert title.yref == "container" and title.yanchor == "top"
    assert title.y == pytest.approx(1 - TITLE_PAD / report.layout.height)
    # printed at another size, the legend keeps its distance under the plot in pixels
    from ui.logic.figure_export import for_print

    for width in (600, 1200, 2400):
        printed = for_print(page, "a note", width).layout
        plot = printed.height - printed.margin.t - printed.margin.b
        assert -printed.legend.y * plot == pytest.approx(builders.AXIS_ROOM), width


def test_a_workbench_keeps_its_figures_and_drawing_them_changes_none(actg):
    """A cached workbench is drawn again on every move to it: its before/after figure is built
    once and kept, equal to one built afresh, and what the page does with it (the projector's
    larger type, the print export) works on copies."""
    from dataclasses import replace

    from ui.logic.figure_export import for_print

    steps = [{"method": "band", "column": "age", "width": 7},
             {"method": "noise", "columns": ["wtkg"], "p": 20}]
    wb = evaluate(actg, recipe_json(steps, 5), QI, None, 5, "wildcard", 1.0, ["age", "wtkg"])
    for column in ("age", "wtkg"):
        kept = wb.figure(column)
        before = kept.to_json()
        assert wb.figure(column) is kept
        assert replace(wb).figure(column).to_json() == before  # built afresh
        go.Figure(kept).update_layout(font={"size": 19}, height=460)
        for_print(kept, "a note", 1200)
        assert kept.to_json() == before
    assert wb.banded("age") is wb.banded("age")
