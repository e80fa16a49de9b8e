"""The decision pack's trade-off figure: risk against information loss, the chosen setting
marked, as SVG and PDF for print (docs/releases.md, "The pack").

Drawn with Matplotlib's Agg backend, which reads no display, fetches nothing and embeds its own
font (DejaVu Sans, shipped with Matplotlib), so the same data give the same bytes on every
machine: the SVG's ids are salted with a constant and neither file carries a date.

The figure's points: the original (no protection), the settings of a sweep when one was run
(grey), and the release (a star). The axes are the linkage attack's re-identifications
(Σ p_i) and ``IL1_release``, the figures the Trade-offs page plots.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

import numpy as np

RISK_AXIS = "linkage attack re-identifications (Σ p_i)"
LOSS_AXIS = "IL1 release (information loss, 0–1)"


@dataclass(frozen=True)
class Point:
    """A setting on the figure: its loss (``IL1_release``) and risk (the linkage attack's
    re-identifications, ``linkage_reidentifications``)."""

    loss: float
    risk: float


def _figure(original: Point, chosen: Point, others: list[Point]) -> Any:
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.0, 4.4), dpi=100)
    ax = fig.add_subplot()
    if others:
        xs = np.array([p.loss for p in others])
        ys = np.array([p.risk for p in others])
        ax.scatter(xs, ys, s=22, color="#9aa3ad", label="the sweep's settings", zorder=2)
    ax.scatter([original.loss], [original.risk], s=60, facecolors="none",
               edgecolors="#1c2330", linewidths=1.5, label="the original (no protection)",
               zorder=3)
    ax.scatter([chosen.loss], [chosen.risk], s=260, marker="*", color="#c2410c",
               edgecolors="#1c2330", linewidths=0.8, label="this release (chosen setting)",
               zorder=4)
    xs_all = [original.loss, chosen.loss, *(p.loss for p in others)]
    ys_all = [original.risk, chosen.risk, *(p.risk for p in others)]
    pad = max(max(xs_all) - min(xs_all), 1e-3) * 0.08
    ax.set_xlim(min(xs_all) - pad, max(xs_all) + pad)
    ax.set_ylim(0, max(max(ys_all), 1.0) * 1.12)
    right = chosen.loss > (min(xs_all) + max(xs_all)) / 2  # the label on the star's open side
    ax.annotate(f"this release\n({chosen.loss:.3g}, {chosen.risk:.4g})",
                (chosen.loss, chosen.risk), textcoords="offset points",
                xytext=(-12 if right else 12, 10), ha="right" if right else "left", fontsize=9)
    ax.set_xlabel(LOSS_AXIS)
    ax.set_ylabel(RISK_AXIS)
    ax.set_title(TITLE, fontsize=11)
    ax.grid(True, color="#e5e7eb", zorder=0)
    fig.legend(fontsize=8, loc="lower center", ncol=3, frameon=False)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


#: The figure's title: fixed text, never a user's (Matplotlib reads ``$…$`` as mathematics).
TITLE = "Risk against information loss"


def tradeoff_files(original: Point, chosen: Point,
                   others: list[Point] | None = None) -> dict[str, bytes]:
    """The figure as ``{"svg": …, "pdf": …}`` bytes, the same for the same points."""
    import matplotlib

    fig = _figure(original, chosen, list(others or []))
    out = {}
    with matplotlib.rc_context({"svg.hashsalt": "sdc-pack", "svg.fonttype": "path",
                                "pdf.compression": 6}):
        for fmt in ("svg", "pdf"):
            buf = io.BytesIO()
            fig.savefig(buf, format=fmt, metadata={"Date": None, "Creator": None}
                        if fmt == "svg" else {"CreationDate": None, "Creator": None,
                                              "Producer": None})
            out[fmt] = buf.getvalue()
    return out


def inline_svg(svg: bytes) -> str:
    """The SVG as markup to place in an HTML page: its XML declaration and doctype left out.
    Its text is Matplotlib's own (the axes' names, numbers), drawn as paths."""
    text = svg.decode("utf-8")
    return text[text.index("<svg"):]
