"""Accessibility in AppTest: every chart has its numbers as a table (a text alternative), and
risk is never shown by colour alone."""

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

from sdc_core.risk import risk_profile
from tests.apptest import app_test
from ui.charts import TABLE_LABEL
from ui.logic.figures import (
    before_after_bars,
    class_size_histogram,
    figure_tables,
    heatmap,
    overlaid_histograms,
)


def app_on(page: str) -> AppTest:
    at = app_test().run()
    at.switch_page(page).run()
    assert not at.exception
    return at


def chart_tables(at: AppTest) -> list[pd.DataFrame]:
    """The table under each chart; asserts there is exactly one such table per chart. The
    tables are drawn once their expander (keyed ``n_`` and the chart's key) is opened."""
    keys = [c.key for c in at.get("plotly_chart")]
    assert all(keys)
    for key in keys:
        at.session_state[f"n_{key}"] = True
    at.run()
    boxes = [e for e in at.expander if e.label == TABLE_LABEL]
    assert len(boxes) == len(at.get("plotly_chart")) > 0
    assert all(len(box.dataframe) == 1 for box in boxes)
    return [box.dataframe[0].value for box in boxes]


def test_risk_page_charts_have_their_numbers(actg):
    at = app_on("views/risk.py")
    table = chart_tables(at)[0]  # the class sizes (SUDA2 adds its own chart after it)
    fk = risk_profile(actg, ["age", "gender", "race"]).fk
    assert table.columns.tolist() == ["class size f_k", "records", "label"]
    assert table["class size f_k"].tolist()[:6] == ["1", "2", "3", "4", "5", "6–10"]
    assert table["records"].tolist() == [int(((fk >= lo) & (fk <= hi)).sum()) for lo, hi in
                                         [(1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 10),
                                          (11, 20), (21, 50), (51, 100), (101, np.inf)]]
    assert table["records"].sum() == len(actg) == 2139
    assert table["records"].iloc[0] == 29  # the unique records of the worked example
    # the buckets at risk are named in the table, not only coloured red in the chart
    assert table["label"].tolist() == ["classes ≤ 5: at risk"] * 5 + [""] * 5


def test_protect_page_charts_have_their_numbers(actg):
    at = app_on("views/protect.py")
    at.slider(key="w_p_band_age").set_value(10).run()
    assert not at.exception
    tables = chart_tables(at)
    age = tables[0]
    assert age.columns.tolist() == ["value", "original", "protected"]
    assert age["original"].sum() == age["protected"].sum() == actg["age"].notna().sum()
    banded = (actg["age"] // 10) * 10 + 5  # bands of 10 replaced by their middles
    assert (age["protected"] > 0).sum() == banded.nunique()
    # the chart's bins are the bands: [10, 20), [20, 30), … over the ages' range
    edges = 10.0 * np.arange(actg["age"].min() // 10, actg["age"].max() // 10 + 2)
    assert np.allclose(age["value"], (edges[:-1] + edges[1:]) / 2)
    assert age["original"].tolist() == np.histogram(actg["age"], edges)[0].tolist()
    assert age["protected"].tolist() == np.histogram(banded, edges)[0].tolist()
    assert age["original"].tolist() == age["protected"].tolist()


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
