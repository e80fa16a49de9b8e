"""Plotly figures built from aggregates (never from raw rows), and the tables of the numbers
behind them (:func:`figure_tables`). Pure: no Streamlit; :mod:`ui.charts` shows them on a page."""

from __future__ import annotations

import html
import json
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from sdc_core.data.io import neutralize_bidi
from sdc_core.recipe import describe_steps
from sdc_core.risk.population import UniquenessCurve
from sdc_core.utility.analysis import TermResult

# Every colour is at least 3:1 against the white plot background (WCAG 2.1 AA, 1.4.11
# non-text contrast); none carries meaning alone (legends, patterns, labels).
COLOURS = ["#1f6feb", "#d1495b", "#a8740f", "#00798c", "#4f8a6c", "#8d6a9f", "#2e4057"]
BEFORE, AFTER, RISK = "#7a8799", "#1f6feb", "#d1495b"
#: Marker shapes, so that the series of a chart with more series than :data:`COLOURS` differ
#: in shape where their colours repeat (and in shape as well as colour for every reader).
SYMBOLS = ["circle", "square", "diamond", "triangle-up", "triangle-down", "pentagon",
           "hexagon", "cross", "x", "star-triangle-up"]
#: The marker of a synthetic release on the trade-off chart (no series' shape above)
SYNTHETIC_SYMBOL = "star-diamond"
#: Legend entries a row under a chart, and the height each further row adds.
LEGEND_PER_ROW, LEGEND_ROW = 3, 24
SIZE_BUCKETS = [(1, 1, "1"), (2, 2, "2"), (3, 3, "3"), (4, 4, "4"), (5, 5, "5"),
                (6, 10, "6–10"), (11, 20, "11–20"), (21, 50, "21–50"), (51, 100, "51–100"),
                (101, np.inf, "> 100")]


def plain(text: object) -> str:
    """User text for a figure: Plotly reads <b>, <a href=…> and friends in titles, names and
    tick labels, so the text is HTML-escaped to be shown as it is, direction controls as their
    escape (``\\u202e``, :func:`sdc_core.data.io.neutralize_bidi`)."""
    return html.escape(neutralize_bidi(str(text)), quote=False)


def common_layout(title: str, x: str, y: str) -> dict[str, Any]:
    """The layout every figure shares; ``title``, ``x`` and ``y`` are escaped here (they may
    hold column names)."""
    return {"title": {"text": plain(title), "x": 0, "xanchor": "left"},
            "xaxis": {"title": {"text": plain(x)}}, "yaxis": {"title": {"text": plain(y)}},
            "height": 360, "margin": {"l": 60, "r": 20, "t": 50, "b": 50},
            "legend": {"orientation": "h", "y": -0.25}}


def layout(fig: go.Figure, title: str, x: str, y: str) -> go.Figure:
    """:func:`common_layout` on a built figure."""
    return fig.update_layout(common_layout(title, x, y))


def spec_figure(traces: list[dict[str, Any]], title: str, x: str, y: str,
                xaxis: dict[str, Any] | None = None, **extra: Any) -> go.Figure:
    """A figure of plain Plotly ``traces`` (each with its ``type``) and
    :func:`common_layout` (``xaxis``: more of the x axis; ``extra``: more of the layout), taken
    as it is: Plotly's validation of every property on the way in took more time than the
    rest of a slider move on the Protect page, so the figures drawn on every move are built
    this way (tests check them against Plotly's validation)."""
    spec = common_layout(title, x, y)
    spec["xaxis"] |= xaxis or {}
    return go.Figure({"data": traces, "layout": spec | extra}, _validate=False)


def _text(value: object) -> object:
    """A label as the user wrote it: figure text was HTML-escaped for Plotly (``plain``); a
    table cell is shown as plain text, so it is unescaped."""
    return html.unescape(value) if isinstance(value, str) else value


def _axis_title(axis: object, default: str) -> str:
    text = getattr(getattr(axis, "title", None), "text", None)
    return str(_text(text)) if text else default


def _values(values: object) -> list | None:
    return None if values is None else [_text(v) for v in np.asarray(values, dtype=object)]


def _errors(error: Any, n: int) -> list | None:
    """The symmetric error bars of a trace (its Plotly ``error_x``/``error_y``, or None), when
    they are shown and given as an array."""
    if error is None or not error.visible or error.array is None:
        return None
    values = list(np.asarray(error.array, dtype=object))
    return values if len(values) == n else None


def figure_tables(fig: go.Figure) -> tuple[list[tuple[str, pd.DataFrame]], list[str]]:
    """The data of a figure as tables, built from its traces: one matrix per heatmap (rows are
    its y, columns its x); the x/y traces in one table, wide (one column per trace) when they
    share their x values, else long (a ``series`` column). Horizontal reference lines drawn
    across the plot (``add_hline``) become notes. Cheap: figures hold aggregates only."""
    x_title = _axis_title(fig.layout.xaxis, "x")
    y_title = _axis_title(fig.layout.yaxis, "y")
    if y_title == x_title:
        y_title = f"{y_title} (y)"
    tables: list[tuple[str, pd.DataFrame]] = []
    parts: list[tuple[str, pd.DataFrame]] = []
    for i, trace in enumerate(fig.data):
        name = str(_text(trace.name)) if trace.name else f"series {i + 1}"
        if trace.type == "heatmap":
            z = np.asarray(trace.z, dtype=float)
            columns = _values(trace.x) or list(range(z.shape[1]))
            rows = _values(trace.y) or list(range(z.shape[0]))
            table = pd.DataFrame(z, index=pd.Index([str(r) for r in rows],
                                                   name=f"{y_title} ↓ / {x_title} →"),
                                 columns=[str(c) for c in columns])
            tables.append((name if trace.name else "matrix", table))
            continue
        y = _values(getattr(trace, "y", None))
        if y is None:
            continue
        x = _values(getattr(trace, "x", None)) or list(range(len(y)))
        part = pd.DataFrame({x_title: x[:len(y)], y_title: y})
        labels = _values(getattr(trace, "text", None))
        if labels is not None and len(labels) == len(y) and any(labels):
            part["label"] = [str(v) for v in labels]
        for axis, title in (("x", x_title), ("y", y_title)):
            err = _errors(getattr(trace, f"error_{axis}", None), len(y))
            if err is not None:
                part[f"± {title}"] = err
        parts.append((name, part))
    if parts:
        tables.insert(0, ("series", _join(parts, x_title, y_title)))
    notes = []
    marks = {a.y: str(_text(a.text)) for a in fig.layout.annotations or ()
             if a.text and str(a.xref).endswith("domain")}
    for s in fig.layout.shapes or ():
        if s.type == "line" and s.y0 == s.y1 and str(s.xref).endswith(("domain", "paper")):
            notes.append(f"{marks.get(s.y0, 'reference line')}: {y_title} = {s.y0:g}")
    return tables, notes


def _join(parts: list[tuple[str, pd.DataFrame]], x_title: str, y_title: str) -> pd.DataFrame:
    """One table of x/y traces: wide when every trace has the same x values, else long."""
    if len(parts) == 1:
        return parts[0][1]
    first = parts[0][1]
    same_x = all(list(p[x_title]) == list(first[x_title]) and "label" not in p
                 for _, p in parts)
    names = [n for n, _ in parts]
    if same_x and len(set(names)) == len(names):
        wide = first[[x_title]].copy()
        for name, p in parts:
            for column in p.columns.drop(x_title):
                wide[name if column == y_title else f"{name}: {column}"] = p[column].to_numpy()
        return wide
    return pd.concat([p.assign(series=name)[["series", *p.columns]] for name, p in parts],
                     ignore_index=True)


def class_size_histogram(fk: np.ndarray, k: int) -> go.Figure:
    """Records by the size of their equivalence class (bucketed)."""
    labels, counts, risky = [], [], []
    for lo, hi, label in SIZE_BUCKETS:
        labels.append(label)
        counts.append(int(((fk >= lo) & (fk <= hi)).sum()))
        risky.append(hi <= k)
    flag = f"classes ≤ {k}: at risk"
    # colour is not the only cue: the buckets at risk are also hatched, named in the hover
    # text and in the table under the chart, and marked by a labelled band over the plot
    bars = {"type": "bar", "x": labels, "y": counts, "name": "records",
            "text": [flag if r else "" for r in risky], "textposition": "none", "marker": {
                "color": [RISK if r else AFTER for r in risky],
                "pattern": {"shape": ["/" if r else "" for r in risky], "fgcolor": "#ffffff",
                            "size": 8, "solidity": 0.3}},
            "hovertemplate": "class size %{x}: %{y} records %{text}<extra></extra>"}
    band: dict[str, Any] = {}
    if any(risky):  # a labelled band over the buckets at risk
        band = {"shapes": [{"type": "rect", "x0": -0.5, "x1": sum(risky) - 0.5, "xref": "x",
                            "y0": 0, "y1": 1, "yref": "y domain", "fillcolor": RISK,
                            "opacity": 0.08, "line": {"width": 0}}],
                "annotations": [{"text": f"{flag} (hatched)", "x": -0.5, "xref": "x",
                                 "xanchor": "left", "y": 1, "yref": "y domain",
                                 "yanchor": "top", "showarrow": False}]}
    return spec_figure([bars], f"Records by equivalence-class size (red, hatched: classes ≤ {k})",
                       "class size f_k", "records",
                       xaxis={"type": "category"},  # "6–10" beside "1": keep every label
                       **band)


def before_after_bars(before: pd.Series, after: pd.Series, title: str) -> go.Figure:
    """Records per category before and after (counts of each, aligned): the bars in the order
    of ``before``'s index, then the categories only ``after`` has."""
    cats = before.index.append(after.index[~after.index.isin(before.index)])
    labels = [plain(c) for c in cats]
    return spec_figure([
        {"type": "bar", "name": "original", "x": labels,
         "y": before.reindex(cats, fill_value=0).to_numpy(), "marker": {"color": BEFORE}},
        {"type": "bar", "name": "protected", "x": labels,
         "y": after.reindex(cats, fill_value=0).to_numpy(), "marker": {"color": AFTER}}],
        title, "category", "records", xaxis={"type": "category"}, barmode="group")


def overlaid_histograms(x: np.ndarray, y: np.ndarray, title: str, bins: int = 40,
                        edges: np.ndarray | None = None) -> go.Figure:
    """Histograms of two numeric samples on common bins (counts computed here): ``edges``, or
    ``bins`` equal bins over both."""
    both = np.concatenate([x[~np.isnan(x)], y[~np.isnan(y)]])
    if edges is None:
        edges = np.histogram_bin_edges(both, bins=bins) if len(both) else np.array([0.0, 1.0])
    mids = (edges[:-1] + edges[1:]) / 2
    # told apart by form as well as colour: protected values are bars, the original a step line
    # (Plotly draws lines above bars whatever the order of the traces)
    return spec_figure([
        {"type": "scatter", "name": "original", "x": mids,
         "y": np.histogram(x[~np.isnan(x)], edges)[0], "mode": "lines",
         "line": {"color": "#2e4057", "width": 2, "shape": "hvh"}},
        {"type": "bar", "name": "protected", "x": mids,
         "y": np.histogram(y[~np.isnan(y)], edges)[0], "marker": {"color": AFTER},
         "opacity": 0.8, "width": np.diff(edges)}], title, "value", "records")


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


def setting_labels(table: pd.DataFrame) -> list[str]:
    """Each trade-off row in a few words, from its recipe ("band age width=10; pram …")."""
    return ["baseline" if m == "BASELINE" else describe_steps(json.loads(r)["steps"])
            for m, r in zip(table["method"], table["recipe"])]


def tradeoff_scatter(table: pd.DataFrame, risk: str, loss: str, risk_label: str,
                     loss_label: str, target: float | None = None,
                     best: int | None = None) -> go.Figure:
    """Risk against loss, one colour per method (or combination of methods), error bars over
    seeds, the Pareto front; with a ``target`` on this risk its line, and the ``best`` row
    marked."""
    labels = pd.Series(setting_labels(table), index=table.index)
    traces = []
    for i, ((method, column), rows) in enumerate(table.groupby(["method", "column"],
                                                               sort=False)):
        err_x = rows.get(f"{loss}_sd")
        err_y = rows.get(f"{risk}_sd")
        # a synthetic release (no row correspondence): its own shape, "synthetic" in the legend
        synthetic = "record_by_record" in rows and bool(rows["record_by_record"].notna().all())
        name = str(method) if method == "BASELINE" else plain(
            f"{method} {column}".strip() + (" (synthetic)" if synthetic else ""))
        symbol = SYNTHETIC_SYMBOL if synthetic else SYMBOLS[(i // len(COLOURS)) % len(SYMBOLS)]
        traces.append({
            "type": "scatter", "x": rows[loss].to_numpy(), "y": rows[risk].to_numpy(),
            "mode": "markers", "text": [plain(t) for t in labels[rows.index]],
            "customdata": rows.index.to_numpy(),  # the table row: a click opens the setting
            "unselected": {"marker": {"opacity": 0.5}},  # after a click the others stay legible
            "name": name,
            "marker": {"size": 11, "color": COLOURS[i % len(COLOURS)], "symbol": symbol,
                       "line": {"width": 2, "color": ["#111" if p else "rgba(0,0,0,0)"
                                                      for p in rows["pareto"]]}},
            "error_x": _error_bars(err_x), "error_y": _error_bars(err_y),
            "hovertemplate": "%{text}<br>loss %{x:.4f}<br>risk %{y:.3f}<extra></extra>"})
    front = table[table["pareto"]].sort_values(loss)
    traces.append({"type": "scatter", "x": front[loss].to_numpy(), "y": front[risk].to_numpy(),
                   "mode": "lines", "name": "Pareto front",
                   "line": {"color": "#111", "dash": "dot", "width": 1.5},
                   "hoverinfo": "skip"})
    if best is not None:
        traces.append({
            "type": "scatter", "x": [table.at[best, loss]], "y": [table.at[best, risk]],
            "mode": "markers", "name": "best under the target", "customdata": [best],
            "text": [plain(labels[best])],
            "marker": {"symbol": "star", "size": 20, "color": "#f5c518",
                       "line": {"width": 1.5, "color": "#111"}},
            "hovertemplate": "best: %{text}<br>loss %{x:.4f}<br>risk %{y:.3f}<extra></extra>"})
    rows = -(-len(traces) // LEGEND_PER_ROW)  # the legend's rows under the chart
    # the chart keeps its height: the legend's rows are added to it, in a bottom margin of
    # their own under the axis title (a legend placed in the plot's units grew into the title)
    return spec_figure(traces, "Risk against information loss (outlined: Pareto-optimal)",
                       loss_label, risk_label, xaxis=axis_title_below(loss_label),
                       **legend_below(rows),
                       **({} if target is None else
                          hline(target, "dash", f"target ≤ {target:g}", "right")))


#: The room under the plot for the x axis' tick labels and title, the title's distance from
#: the tick labels, and the plot's own height (px).
AXIS_ROOM, TITLE_STANDOFF, PLOT_HEIGHT = 75, 12, 260


def axis_title_below(title: str) -> dict[str, Any]:
    """An x axis whose ``title`` keeps :data:`TITLE_STANDOFF` from the tick labels."""
    return {"title": {"text": plain(title), "standoff": TITLE_STANDOFF}, "automargin": True}


def legend_below(rows: int, top: int = 50) -> dict[str, Any]:
    """The layout of a chart whose legend of ``rows`` rows sits in the bottom margin: its top
    :data:`AXIS_ROOM` under the plot (under the x axis' tick labels and title), its rows growing
    downwards; the plot keeps the 260 px of :func:`common_layout`."""
    bottom = AXIS_ROOM + LEGEND_ROW * rows
    return {"height": top + PLOT_HEIGHT + bottom,
            "margin": {"l": 60, "r": 20, "t": top, "b": bottom},
            "legend": {"orientation": "h", "y": -AXIS_ROOM / PLOT_HEIGHT, "yanchor": "top",
                       "x": 0, "xanchor": "left"}}


def _error_bars(sd: pd.Series | None) -> dict[str, Any]:
    """Error bars of a trace from a spread column (none without one)."""
    return {"array": sd.to_numpy(), "visible": True} if sd is not None else {"visible": False}


def hline(y: float, dash: str, text: str, side: str) -> dict[str, Any]:
    """A labelled horizontal reference line across the plot (as Plotly's ``add_hline``, its
    label at the top ``side``): layout ``shapes`` and ``annotations`` for :func:`spec_figure`."""
    return {"shapes": [{"type": "line", "x0": 0, "x1": 1, "xref": "x domain", "y0": y,
                        "y1": y, "yref": "y", "line": {"color": BEFORE, "dash": dash}}],
            "annotations": [{"text": text, "showarrow": False, "x": 0 if side == "left" else 1,
                             "xanchor": side, "xref": "x domain", "y": y,
                             "yanchor": "bottom", "yref": "y"}]}


def parameter_lines(table: pd.DataFrame, metric: str, label: str, title: str) -> go.Figure:
    """One line per (method, column) of ``metric`` against the parameter value."""
    rows = table[table["method"] != "BASELINE"]
    traces = []
    for i, ((method, column), g) in enumerate(rows.groupby(["method", "column"], sort=False)):
        g = g.sort_values("param_value")
        traces.append({
            "type": "scatter", "x": g["param_value"].to_numpy(), "y": g[metric].to_numpy(),
            "mode": "lines+markers",
            "name": plain(f"{method} {column} ({g['param_name'].iloc[0]})"),
            "line": {"color": COLOURS[i % len(COLOURS)]},
            "error_y": _error_bars(g.get(f"{metric}_sd"))})
    base = table[table["method"] == "BASELINE"]
    return spec_figure(traces, title, "parameter value", label,
                       **(hline(float(base[metric].iloc[0]), "dot", "baseline", "left")
                          if len(base) else {}))


def spread_figure(spread: pd.DataFrame, truth: float) -> go.Figure:
    """Simulated randomized-response estimates against the number of participants
    (:func:`sdc_core.methods.randomized_response.estimate_spread`), with the band of ±1.96
    standard errors around the truth and the true share."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=spread["participants"], y=spread["estimate"], mode="markers",
                             name="simulated surveys", marker={"size": 5, "opacity": 0.45,
                                                               "color": AFTER}))
    se = spread.groupby("participants")["se"].first()
    centre = np.round(se.index.to_numpy() * truth) / se.index.to_numpy()
    for sign, name in ((1, "+1.96 standard errors"), (-1, "−1.96 standard errors")):
        fig.add_trace(go.Scatter(x=se.index, y=centre + sign * 1.96 * se.to_numpy(),
                                 mode="lines", name=name, legendgroup="se",
                                 line={"color": COLOURS[1], "dash": "dash"}))
    fig.add_hline(y=truth, line_color=BEFORE, annotation_text="true share")
    fig.update_xaxes(type="log")
    return layout(fig, "Spread of the estimate against the number of participants",
                  "participants (log scale)", "estimated share")


def interval_chart(terms: list[TermResult], title: str) -> go.Figure:
    """Per term (a row, in the analysis's order), the original and the protected estimate with
    its interval: two horizontal error bars side by side; a term estimated on one side only
    has one. Term names and ``title`` are user text, escaped for Plotly (``plain``). Built in
    one go (it is redrawn on every move of the Protect page)."""
    names = [plain(t.term) for t in terms]
    traces = []
    for side, colour, symbol in (("original", BEFORE, "circle"),
                                 ("protected", AFTER, "diamond")):
        x = np.array([getattr(t, side) for t in terms], dtype=float)
        half = (np.array([getattr(t, f"{side}_high") for t in terms], dtype=float)
                - np.array([getattr(t, f"{side}_low") for t in terms], dtype=float)) / 2
        traces.append({
            "type": "scatter", "x": x, "y": names, "name": side, "mode": "markers",
            "orientation": "h", "customdata": half,
            "marker": {"color": colour, "symbol": symbol, "size": 9},
            "error_x": {"type": "data", "array": half, "visible": True, "color": colour,
                        "thickness": 2},
            "hovertemplate": f"{side} %{{x:.4g}} ± %{{customdata:.3g}}<extra></extra>"})
    return spec_figure(traces, title, "estimate", "term", yaxis={
        "title": {"text": "term"}, "type": "category", "autorange": "reversed",
        "automargin": True}, height=max(260, 110 + 34 * len(terms)), scattermode="group")


#: The uniqueness models of :func:`uniqueness_curves`: label, colour, dash and marker (told
#: apart by dash and marker as well as colour).
UNIQUENESS_MODELS = (("zayatz", "Zayatz", COLOURS[0], "solid", "circle"),
                     ("pitman", "Pitman", COLOURS[1], "dash", "square"),
                     ("snb", "SNB", COLOURS[2], "dot", "diamond"))


def uniqueness_curves(curve: UniquenessCurve, chosen: float) -> go.Figure:
    """Each model's share of population uniques (percent of N) against the sampling fraction
    on a log axis from 0.001 to 1 (:func:`sdc_core.risk.population_risk.sensitivity`), with
    Dankar's rule as a wide band under them, the sample uniqueness as a dotted reference and
    the ``chosen`` fraction as a vertical dashed line. A model invalid at a fraction has no
    point there (NaN); one invalid everywhere keeps its legend entry, marked so."""
    x = np.asarray(curve.fractions, dtype=float)
    picked = [{"zayatz": "Zayatz", "pitman": "Pitman", "snb": "SNB"}.get(m or "", "none")
              for m in curve.dankar_model]
    traces = [{
        "type": "scatter", "x": x, "y": 100 * np.asarray(curve.dankar, dtype=float),
        "mode": "lines", "name": "Dankar's rule", "customdata": picked,
        "line": {"color": "#2e4057", "width": 9}, "opacity": 0.35,
        "hovertemplate": "π = %{x:.4g}: %{y:.4g} % (Dankar's rule: %{customdata})"
                         "<extra></extra>"}]
    for attr, label, colour, dash, symbol in UNIQUENESS_MODELS:
        y = 100 * np.asarray(getattr(curve, attr), dtype=float)
        traces.append({
            "type": "scatter", "x": x, "y": y, "mode": "lines+markers",
            "name": label if np.isfinite(y).any() else f"{label} (not valid)",
            "line": {"color": colour, "dash": dash, "width": 2},
            "marker": {"symbol": symbol, "size": 6, "color": colour},
            "hovertemplate": f"π = %{{x:.4g}}: %{{y:.4g}} % ({label})<extra></extra>"})
    traces.append({
        "type": "scatter", "x": x, "y": np.full(len(x), 100 * curve.sample_uniqueness),
        "mode": "lines", "name": "sample uniqueness (of the file's records)",
        "line": {"color": BEFORE, "dash": "dot", "width": 1.5},
        "hovertemplate": "sample uniqueness %{y:.4g} %<extra></extra>"})
    rows = -(-len(traces) // LEGEND_PER_ROW)
    # a shape on a log axis is placed in data units, an annotation in log units (plotly.js)
    return spec_figure(
        traces, "Population uniques against the sampling fraction",
        "sampling fraction π (log scale)", "population uniques (% of N)",
        xaxis={"type": "log", "range": [-3.0, 0.0]},
        yaxis={"title": {"text": "population uniques (% of N)"}, "rangemode": "tozero"},
        height=360 + LEGEND_ROW * (rows - 1),
        shapes=[{"type": "line", "x0": chosen, "x1": chosen, "xref": "x", "y0": 0, "y1": 1,
                 "yref": "y domain", "line": {"dash": "dash", "color": "#111", "width": 1.5}}],
        annotations=[{"x": float(np.log10(chosen)), "y": 1, "xref": "x", "yref": "paper",
                      "text": f"chosen π = {chosen:.4g}", "showarrow": False,
                      "xanchor": "left", "yanchor": "top", "xshift": 4,
                      "bgcolor": "rgba(255,255,255,0.8)"}])
