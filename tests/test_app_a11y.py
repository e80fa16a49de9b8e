"""Accessibility in AppTest: every chart of the Risk and Protect pages has its numbers as a
table (a text alternative) under it. The tables built from a figure's traces, and the risk
the class-size histogram marks by more than colour, are tests/test_figures.py's."""

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

from sdc_core.risk import risk_profile
from tests.apptest import app_test
from ui.charts import TABLE_LABEL


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
