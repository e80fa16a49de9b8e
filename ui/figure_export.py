"""Print-ready figures: PNG, SVG or PDF at a chosen width, rendered on the server.

Kaleido (pinned in requirements.txt) draws the figure in the Debian Chromium that ``make``
installs; nothing is ever downloaded at run time — without Chromium, :func:`figure_bytes` raises
:class:`ExportUnavailable` with the command that installs it. The exported figure has a fixed
font and size for print and carries, as a subtitle, a caption naming the data, the settings and
the seed that made it (:func:`caption`).
"""

from __future__ import annotations

import datetime as dt
import html
import os
import shutil

import plotly.graph_objects as go

from sdc_core import __version__

FORMATS = ("png", "svg", "pdf")
MIME = {"png": "image/png", "svg": "image/svg+xml", "pdf": "application/pdf"}
#: Installed with Chromium (Debian fonts-liberation): the same metrics on every machine.
FONT = "Liberation Sans, Arial, Helvetica, sans-serif"
#: Height over width of an exported figure.
ASPECT = 0.6


class ExportUnavailable(RuntimeError):
    """No Chromium to render with on this server."""


def chromium() -> str | None:
    """The Chromium Kaleido will use: ``BROWSER_PATH`` if set, else the one on ``PATH``."""
    return os.environ.get("BROWSER_PATH") or shutil.which("chromium") \
        or shutil.which("chromium-browser")


def caption(context: str, today: dt.date | None = None) -> str:
    """``context`` (data, settings, seed) followed by the version and date that made it."""
    stamp = f"sdc_core {__version__} · {(today or dt.date.today()).isoformat()}"
    return f"{context} · {stamp}" if context else stamp


def for_print(fig: go.Figure, note: str, width: int) -> go.Figure:
    """A copy of ``fig`` with the print font, a white background, its size fixed and ``note``
    as the title's subtitle (HTML-escaped: it may hold column names)."""
    out = go.Figure(fig)
    title = out.layout.title.text or ""
    out.update_layout(
        title={"text": title, "subtitle": {"text": html.escape(note, quote=False),
                                           "font": {"size": 11}}},
        font={"family": FONT, "size": 13}, width=width, height=int(round(width * ASPECT)),
        template="plotly_white", paper_bgcolor="white", plot_bgcolor="white",
        margin={"t": 90})
    return out


def figure_bytes(fig: go.Figure, fmt: str, width: int, note: str) -> bytes:
    """The figure as a ``fmt`` file ``width`` pixels (SVG/PDF: CSS pixels) wide."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    path = chromium()
    if path is None:
        raise ExportUnavailable("server-side export needs Chromium on the server "
                                "(as root: apt-get install chromium fonts-liberation, or "
                                "make test); the camera button of the chart still saves PNG "
                                "or SVG")
    os.environ.setdefault("BROWSER_PATH", path)  # Kaleido's browser: never a download
    printable = for_print(fig, note, width)
    return printable.to_image(format=fmt, width=width, height=printable.layout.height, scale=1)
