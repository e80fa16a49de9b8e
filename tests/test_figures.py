"""The figures' builders (``ui.logic.figures``, the report's sweep chart): the class-size
histogram keeps every bucket, text from the data is escaped in a chart, and the report's sweep
chart says its star is the target's best setting, not necessarily the report's recipe."""

import numpy as np
import pandas as pd

from sdc_core.sweep.run import run_sweep
from ui.logic.figures import before_after_bars, class_size_histogram
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
