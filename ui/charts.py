"""Figures on a page: a chart with its camera button, its "Export for print" control and the
numbers behind it (Streamlit). The figures themselves are built in :mod:`ui.logic.figures`."""

from __future__ import annotations

import re
from functools import partial
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from ui import state
from ui.logic.figure_export import ASPECT, FORMATS, MIME, caption, chromium, figure_bytes
from ui.logic.figures import figure_tables
from ui.logic.text import md


def show(fig: go.Figure, name: str, key: str | None = None, select: bool = False,
         context: str = "") -> list[dict[str, Any]]:
    """Render with a camera button that saves a high-resolution PNG or an SVG named ``name``,
    an "Export for print" control (PNG, SVG or PDF at a chosen width, rendered on the server,
    captioned with ``context``: the data, settings and seed behind the chart) and under it,
    collapsed, the numbers behind the chart as tables (its text alternative). With ``select``
    a click on a point reruns the page; the selected points are returned. The projector view
    draws it with larger type."""
    if state.projector():  # a copy: the figure may be cached
        fig = go.Figure(fig).update_layout(font={"size": 19}, height=460)
    fmt = state.chart_format()
    filename = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "figure"
    config = {"displaylogo": False, "toImageButtonOptions": {
        "format": fmt, "filename": filename, "scale": 3 if fmt == "png" else 1}}
    points: list[dict[str, Any]] = []
    if select:
        event = st.plotly_chart(fig, key=key, config=config, on_select="rerun",
                                selection_mode="points")
        points = list(event.selection.points) if event else []
    else:
        st.plotly_chart(fig, key=key, config=config)
    print_export(fig, filename, f"x_{key or filename}", context)
    numbers = st.expander(TABLE_LABEL, icon=":material/table:", key=f"n_{key or filename}",
                          on_change="rerun")
    if numbers.open:  # drawn once opened: a slider move redraws only what is seen
        with numbers:
            numbers_behind(fig)
    return points


def numbers_behind(fig: go.Figure) -> None:
    """The numbers behind ``fig`` as tables (:func:`figure_tables`) and its notes."""
    tables, notes = figure_tables(fig)
    for title, table in tables:
        if len(tables) > 1:
            st.caption(md(title))
        st.dataframe(table, hide_index=table.index.name is None, width="stretch")
    for note in notes:
        st.caption(md(note))


def print_export(fig: go.Figure, filename: str, key: str, context: str) -> None:
    """The "Export for print" popover: format, width, and a download made on click (its
    controls drawn once it is open)."""
    box = st.popover("Export for print", icon=":material/print:", key=f"{key}_open",
                     on_change="rerun")
    if not box.open:
        return
    with box:
        fmt = st.radio("Format", FORMATS, horizontal=True, key=f"{key}_fmt",
                       format_func=str.upper)
        width = int(st.number_input("Width in pixels", 300, 4000, 1200, step=100,
                                    key=f"{key}_width",
                                    help=f"The height follows ({ASPECT:g} × width)."))
        note = caption(context)
        if chromium() is None:
            st.warning("Server-side export needs Chromium on the server (as root: apt-get "
                       "install chromium fonts-liberation). The camera button of the chart "
                       "still saves PNG or SVG.", icon=":material/warning:")
            return
        st.download_button(f"Download {fmt.upper()}",
                           partial(figure_bytes, fig, fmt, width, note, filename),
                           file_name=f"{filename}.{fmt}", mime=MIME[fmt],
                           on_click="ignore", icon=":material/download:", key=f"{key}_download")
        st.caption("Caption in the file: " + md(note))


#: The label of the expander under every chart that holds its numbers.
TABLE_LABEL = "Numbers behind this chart"
