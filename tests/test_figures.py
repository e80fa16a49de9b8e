"""The figures' builders (``ui.logic.figures``, the report's sweep chart): the class-size
histogram keeps every bucket and marks the buckets at risk by more than colour, text from the
data is escaped in a chart (direction controls included), a figure's table (its text
alternative) is built from its traces, a combined sweep's series differ, and the report's sweep
chart says its star is the target's best setting, not necessarily the report's recipe."""

import numpy as np
import pandas as pd

from sdc_core.sweep.run import run_sweep
from tests.hostile_text import SPOOFED, controls
from ui.logic.figures import (
    before_after_bars,
    class_size_histogram,
    figure_tables,
    heatmap,
    overlaid_histograms,
)
from ui.logic.report import sweep_figure


def test_class_size_histogram_keeps_every_bucket():
    fig = class_size_histogram(np.array([1, 2, 7, 30, 300, 300]), 5)
    assert list(fig.data[0].x)[-1] == "> 100" and fig.layout.xaxis.type == "category"
    assert list(fig.data[0].y) == [1, 1, 0, 0, 0, 1, 0, 1, 0, 2]


def test_chart_text_from_data_is_escaped():
    evil = '<a href="http://example.invalid">x</a>'
    fig = before_after_bars(pd.Series({evil: 3}), pd.Series({evil: 2}), f"{evil}: counts")
    assert "<a href" not in fig.layout.title.text and "&lt;a href" in fig.layout.title.text
    assert all("<a" not in label for label in fig.data[0].x)


def test_the_reports_sweep_chart_says_its_star_is_not_the_recipe(actg):
    grid = {"combine": True, "settings": [
        {"method": "band", "column": "age", "param": "width", "values": [5, 10]}],
        "target": {"measure": "percent_unique", "at_most": 1.0}}
    fig = sweep_figure(run_sweep(actg, ["age", "gender", "race"], grid))
    assert "not necessarily this report's recipe" in fig.layout.title.text
    untargeted = sweep_figure(run_sweep(actg, ["age", "gender", "race"],
                                        {k: v for k, v in grid.items() if k != "target"}))
    assert "★" not in (untargeted.layout.title.text or "")


def test_figure_tables_are_built_from_the_traces():
    bars = before_after_bars(pd.Series({"<b>a & b</b>": 3, "c": 1}), pd.Series({"c": 2}), "t")
    (title, wide), = figure_tables(bars)[0]
    assert wide.to_dict("list") == {"category": ["<b>a & b</b>", "c"], "original": [3, 1],
                                    "protected": [0, 2]}  # plain text again, not &lt;b&gt;
    matrix = pd.DataFrame([[0.9, 0.1], [0.2, 0.8]], index=["x", "y"], columns=["x", "y"])
    (title, z), = figure_tables(heatmap(matrix, "P"))[0]
    assert z.to_numpy().tolist() == matrix.to_numpy().tolist()
    assert z.index.tolist() == ["x", "y"] and z.index.name == "original ↓ / released →"
    hist = overlaid_histograms(np.array([1.0, 2.0, np.nan]), np.array([1.0, 1.0]), "h", bins=2)
    (_, both), = figure_tables(hist)[0]
    assert both["original"].tolist() == [1, 1] and both["protected"].tolist() == [2, 0]


def test_class_size_histogram_marks_risk_by_more_than_colour():
    fig = class_size_histogram(np.array([1, 2, 7, 30, 300, 300]), 5)
    bar = fig.data[0]
    risky = [True] * 5 + [False] * 5
    assert list(bar.marker.pattern.shape) == ["/" if r else "" for r in risky]
    assert len(set(bar.marker.color[:5])) == 1 and bar.marker.color[0] != bar.marker.color[5]
    assert list(bar.text) == ["classes ≤ 5: at risk" if r else "" for r in risky]
    assert "%{text}" in bar.hovertemplate  # the hover says it too
    (band,) = fig.layout.shapes  # a labelled band over the buckets at risk
    assert (band.x0, band.x1) == (-0.5, 4.5)
    assert [a.text for a in fig.layout.annotations] == ["classes ≤ 5: at risk (hatched)"]
    assert "hatched" in fig.layout.title.text
    none = class_size_histogram(np.array([30, 30]), 0)  # k = 0: nothing at risk, no band
    assert not none.layout.shapes and not any(none.data[0].marker.pattern.shape)


def test_a_combined_sweeps_series_differ_and_its_legend_does_not_squash_the_chart(actg):
    """A combined sweep of 16 method combinations (each method on or off): every series has
    its own colour and shape
    (colours were reused), and each legend row adds to the figure's height (the legend had
    squashed the plot to about 100 px)."""
    from sdc_core.sweep.run import run_sweep
    from ui.logic.figures import LEGEND_ROW, tradeoff_scatter

    grid = {"combine": True, "settings": [
        {"method": "band", "column": "age", "param": "width", "values": [0, 10]},
        {"method": "local_suppression", "columns": ["age", "gender", "race"], "param": "k",
         "values": [0, 3]},
        {"method": "recode", "column": "karnof", "param": "min_count", "values": [0, 50]},
        {"method": "pram", "column": "race", "param": "p", "values": [0, 0.1]}]}
    table = run_sweep(actg, ["age", "gender", "race"], grid).table
    fig = tradeoff_scatter(table, "linkage_reidentifications", "IL1_release", "risk", "loss")
    series = [t for t in fig.data if t.mode == "markers"]
    assert len(series) > 8
    looks = {(t.marker.color, t.marker.symbol) for t in series}
    assert len(looks) == len(series)
    assert fig.layout.height >= 360 + LEGEND_ROW * (-(-len(fig.data) // 3) - 1)


def test_figure_text_shows_direction_controls_escaped():
    """Figures draw names through ``plain`` (ui/logic/figures.py), on the pages and in the
    report."""
    import pandas as pd

    from ui.logic.figures import before_after_bars
    fig = before_after_bars(pd.Series({SPOOFED: 3}), pd.Series({SPOOFED: 2}), f"{SPOOFED}: n")
    texts = [fig.layout.title.text, *fig.data[0].x, *fig.data[1].x]
    assert not controls(texts) and all("name\\u202egnp.exe" in t for t in texts), texts
