"""The SUDA2 figure of the Risk page: how much of the total SUDA score each key takes part in."""

from __future__ import annotations

import plotly.graph_objects as go

from ui.logic.figures import AFTER, plain, spec_figure


def contribution_bars(contributions: dict[str, float]) -> go.Figure:
    """One bar per key: its SUDA2 attribute contribution, in percent of the total score (an MSU
    of several keys counts for each, so the bars add up to more than 100 %)."""
    names = list(contributions)
    values = [float(contributions[c]) for c in names]
    return spec_figure([{
        "type": "bar", "x": [plain(c) for c in names], "y": values, "name": "contribution",
        "marker": {"color": AFTER}, "text": [f"{v:.2f} %" for v in values],
        "textposition": "outside", "cliponaxis": False,
        "hovertemplate": "%{x}: in MSUs worth %{y:.2f} % of the total SUDA score"
                         "<extra></extra>"}],
        "SUDA2 attribute contributions", "key", "share of the SUDA score (%)",
        xaxis={"type": "category"},
        yaxis={"title": {"text": "share of the SUDA score (%)"}, "rangemode": "tozero"})
