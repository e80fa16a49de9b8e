"""Plotly figures built from aggregates (never from raw rows), and one way to show them."""

from __future__ import annotations

import html
import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

COLOURS = ["#1f6feb", "#d1495b", "#edae49", "#00798c", "#66a182", "#8d6a9f", "#2e4057"]
BEFORE, AFTER = "#8b98a9", "#1f6feb"
SIZE_BUCKETS = [(1, 1, "1"), (2, 2, "2"), (3, 3, "3"), (4, 4, "4"), (5, 5, "5"),
                (6, 10, "6–10"), (11, 20, "11–20"), (21, 50, "21–50"), (51, 100, "51–100"),
                (101, np.inf, "> 100")]


def plain(text: object) -> str:
    """User text for a figure: Plotly reads <b>, <a href=…> and friends in titles, names and
    tick labels, so the text is HTML-escaped to be shown as it is."""
    return html.escape(str(text), quote=False)


def layout(fig: go.Figure, title: str, x: str, y: str) -> go.Figure:
    """Common layout; ``title``, ``x`` and ``y`` are escaped here (they may hold column names)."""
    fig.update_layout(title={"text": plain(title), "x": 0, "xanchor": "left"},
                      xaxis_title=plain(x), yaxis_title=plain(y), height=360,
                      margin={"l": 60, "r": 20, "t": 50, "b": 50},
                      legend={"orientation": "h", "y": -0.25})
    return fig


def show(fig: go.Figure, name: str, key: str | None = None) -> None:
    """Render with a camera button that saves a high-resolution PNG or an SVG named ``name``."""
    fmt = st.session_state.get("chart_format", "png")
    filename = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "figure"
    st.plotly_chart(fig, key=key, config={"displaylogo": False, "toImageButtonOptions": {
        "format": fmt, "filename": filename, "scale": 3 if fmt == "png" else 1}})


def class_size_histogram(fk: np.ndarray, k: int) -> go.Figure:
    """Records by the size of their equivalence class (bucketed)."""
    labels, counts, colours = [], [], []
    for lo, hi, label in SIZE_BUCKETS:
        labels.append(label)
        counts.append(int(((fk >= lo) & (fk <= hi)).sum()))
        colours.append("#d1495b" if hi <= k else AFTER)
    fig = go.Figure(go.Bar(x=labels, y=counts, marker_color=colours,
                           hovertemplate="class size %{x}: %{y} records<extra></extra>"))
    fig.update_xaxes(type="category")  # "6–10" beside "1": keep every label
    return layout(fig, "Records by equivalence-class size (red: k ≤ threshold)",
                   "class size f_k", "records")


def before_after_bars(before: pd.Series, after: pd.Series, title: str) -> go.Figure:
    """Category shares before and after (value_counts of each, aligned)."""
    cats = before.index.union(after.index)
    fig = go.Figure([
        go.Bar(name="original", x=[plain(c) for c in cats],
               y=before.reindex(cats, fill_value=0), marker_color=BEFORE),
        go.Bar(name="protected", x=[plain(c) for c in cats],
               y=after.reindex(cats, fill_value=0), marker_color=AFTER)])
    fig.update_layout(barmode="group")
    fig.update_xaxes(type="category")
    return layout(fig, title, "category", "records")


def overlaid_histograms(x: np.ndarray, y: np.ndarray, title: str, bins: int = 40) -> go.Figure:
    """Histograms of two numeric samples on common bins (counts computed here)."""
    both = np.concatenate([x[~np.isnan(x)], y[~np.isnan(y)]])
    edges = np.histogram_bin_edges(both, bins=bins) if len(both) else np.array([0.0, 1.0])
    mids = (edges[:-1] + edges[1:]) / 2
    fig = go.Figure([
        go.Bar(name="original", x=mids, y=np.histogram(x[~np.isnan(x)], edges)[0],
               marker_color=BEFORE, opacity=0.6, width=np.diff(edges)),
        go.Bar(name="protected", x=mids, y=np.histogram(y[~np.isnan(y)], edges)[0],
               marker_color=AFTER, opacity=0.6, width=np.diff(edges))])
    fig.update_layout(barmode="overlay")
    return layout(fig, title, "value", "records")


def heatmap(matrix: pd.DataFrame, title: str, zmin: float = 0.0, zmax: float = 1.0,
            colorscale: str = "Blues", x: str = "released", y: str = "original") -> go.Figure:
    text = np.vectorize(lambda v: f"{v:.3f}")(matrix.to_numpy())
    fig = go.Figure(go.Heatmap(z=matrix.to_numpy(), x=[plain(c) for c in matrix.columns],
                               y=[plain(c) for c in matrix.index], zmin=zmin, zmax=zmax,
                               colorscale=colorscale, text=text, texttemplate="%{text}",
                               hovertemplate="%{y} → %{x}: %{z:.4f}<extra></extra>"))
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(type="category")
    return layout(fig, title, x, y)


def tradeoff_scatter(table: pd.DataFrame, risk: str, loss: str, risk_label: str,
                     loss_label: str) -> go.Figure:
    """Risk against loss, one colour per method, error bars over seeds, the Pareto front."""
    fig = go.Figure()
    for i, ((method, column), rows) in enumerate(table.groupby(["method", "column"],
                                                               sort=False)):
        err_x = rows.get(f"{loss}_sd")
        err_y = rows.get(f"{risk}_sd")
        labels = [plain(f"{m} {c} {p}={v:g}") if m != "BASELINE" else "baseline" for m, c, p, v in
                  zip(rows["method"], rows["column"], rows["param_name"],
                      rows["param_value"].fillna(0))]
        fig.add_trace(go.Scatter(
            x=rows[loss], y=rows[risk], mode="markers", text=labels,
            name=str(method) if method == "BASELINE" else plain(f"{method} {column}"),
            marker={"size": 11, "color": COLOURS[i % len(COLOURS)],
                    "line": {"width": 2, "color": ["#111" if p else "rgba(0,0,0,0)"
                                                   for p in rows["pareto"]]}},
            error_x={"array": err_x, "visible": err_x is not None},
            error_y={"array": err_y, "visible": err_y is not None},
            hovertemplate="%{text}<br>loss %{x:.4f}<br>risk %{y:.3f}<extra></extra>"))
    front = table[table["pareto"]].sort_values(loss)
    fig.add_trace(go.Scatter(x=front[loss], y=front[risk], mode="lines", name="Pareto front",
                             line={"color": "#111", "dash": "dot", "width": 1.5},
                             hoverinfo="skip"))
    return layout(fig, "Risk against information loss (outlined: Pareto-optimal)",
                   loss_label, risk_label)


def parameter_lines(table: pd.DataFrame, metric: str, label: str, title: str) -> go.Figure:
    """One line per (method, column) of ``metric`` against the parameter value."""
    fig = go.Figure()
    rows = table[table["method"] != "BASELINE"]
    for i, ((method, column), g) in enumerate(rows.groupby(["method", "column"], sort=False)):
        g = g.sort_values("param_value")
        sd = g.get(f"{metric}_sd")
        fig.add_trace(go.Scatter(x=g["param_value"], y=g[metric], mode="lines+markers",
                                 name=plain(f"{method} {column} ({g['param_name'].iloc[0]})"),
                                 line={"color": COLOURS[i % len(COLOURS)]},
                                 error_y={"array": sd, "visible": sd is not None}))
    base = table[table["method"] == "BASELINE"]
    if len(base):
        fig.add_hline(y=float(base[metric].iloc[0]), line_dash="dot", line_color="#8b98a9",
                      annotation_text="baseline", annotation_position="top left")
    return layout(fig, title, "parameter value", label)
