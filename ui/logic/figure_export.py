"""Print-ready figures: PNG, SVG or PDF at a chosen width, rendered on the server.

Kaleido (pinned in requirements.txt) draws the figure in the Debian Chromium that ``make``
installs; nothing is ever downloaded at run time — without Chromium, :func:`figure_bytes` raises
:class:`ExportUnavailable` with the command that installs it. The page Chromium draws in loads
plotly.js from the installed plotly package and no MathJax: Kaleido's default page loads
MathJax from a CDN, which would make the server fetch and run a script from the internet on
every export (and read user text between ``$`` signs as LaTeX). Chromium itself runs without
network (:data:`OFFLINE_FLAGS`): the page and plotly.js are local files, and its own calls home
(component updates, safe browsing, metrics, account checks) are switched off or sent to a port
on 127.0.0.1 where nothing listens. The exported figure has a fixed font and size for print
and carries, as a subtitle, a caption naming the data, the settings and the seed that made it
(:func:`caption`).
"""

from __future__ import annotations

import datetime as dt
import html
import os
import re
import shutil

import plotly.graph_objects as go

from sdc_core import __version__

FORMATS = ("png", "svg", "pdf")
MIME = {"png": "image/png", "svg": "image/svg+xml", "pdf": "application/pdf"}
#: Installed with Chromium (Debian fonts-liberation): the same metrics on every machine.
FONT = "Liberation Sans, Arial, Helvetica, sans-serif"
#: Height over width of an exported figure.
ASPECT = 0.6
#: Kaleido's settings: its page without MathJax (its default fetches it from a CDN); plotly.js
#: is the installed plotly package's own file; the browser is :func:`offline_chromium`.
KALEIDO_OPTIONS = {"mathjax": False}
#: Chromium switches added to Kaleido's own (choreographer already turns off sync, component
#: updates and breakpad): no background requests of its own (variations, safe browsing lists,
#: translation, optimization hints, the network time, domain reliability reports, pings), no
#: host name resolved (every name maps to "not found"), and every request left — Chromium
#: still asks accounts.google.com and www.google.com for things in the background — sent to a
#: proxy at 127.0.0.1:9, where nothing listens, loopback included (``<-loopback>``). The page
#: Kaleido renders and plotly.js are ``file://`` URLs, which need no network. Measured
#: (tests/test_export_offline.py): without these switches one export sent 54 DNS queries for
#: www, accounts and clients2.google.com; with them it sends no byte to any address but
#: 127.0.0.1. What is left is Chromium's IPv6 route check, a UDP ``connect()`` to
#: 2001:4860:4860::8888 that sends nothing (the kernel picks a route, no packet leaves); only an
#: enterprise policy turns it off.
OFFLINE_FLAGS = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--metrics-recording-only",
    "--no-pings",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--disable-default-apps",
    "--no-service-autorun",
    "--disable-features=OptimizationHints,OptimizationGuideModelDownloading,Translate,"
    "MediaRouter,DialMediaRouteProvider,NetworkTimeServiceQuerying,AutofillServerCommunication,"
    "CertificateTransparencyComponentUpdater,InterestFeedContentSuggestions,DnsOverHttps",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    "--proxy-server=127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
)


class ExportUnavailable(RuntimeError):
    """No Chromium to render with on this server."""


def offline_chromium() -> type:
    """Kaleido's browser class (choreographer's ``Chromium``, which takes no switches of its
    own) with :data:`OFFLINE_FLAGS` after its command line: Kaleido passes ``browser_cls`` on
    to choreographer's ``Browser``."""
    from choreographer.browsers.chromium import Chromium

    class OfflineChromium(Chromium):
        def get_cli(self) -> list[str]:
            return [*super().get_cli(), *OFFLINE_FLAGS]

    return OfflineChromium


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
    legend, before = out.layout.legend, fig.layout
    if legend.yanchor == "top" and (legend.y or 0) < 0 and before.height:
        # a legend placed a fixed distance under the plot (ui.logic.figures.legend_below): the same
        # distance in pixels on the plot of the new size, not the same share of its height
        plot = before.height - (before.margin.t or 0) - (before.margin.b or 0)
        printed = out.layout.height - 90 - (out.layout.margin.b or 0)
        out.layout.legend.y = legend.y * plot / max(printed, 1)
    return out


def document_title(fig: go.Figure, name: str) -> str:
    """The title of the figure as plain text (without Plotly's HTML tags and escapes), or
    ``name`` (its file name) when it has none."""
    text = html.unescape(re.sub(r"<[^>]*>", " ", fig.layout.title.text or ""))
    return " ".join(text.split()) or name


def _pdf_text(text: str) -> bytes:
    """``text`` as a PDF text string: a literal string with ``\\``, ``(`` and ``)`` escaped
    when it is printable ASCII, else UTF-16BE with its byte-order mark, in hex."""
    if text.isascii() and text.isprintable():
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        return b"(" + escaped.encode("ascii") + b")"
    return b"<FEFF" + text.encode("utf-16-be").hex().upper().encode("ascii") + b">"


def _string_end(data: bytes, i: int) -> int:
    """The index after the PDF string that starts at ``data[i]``: a literal ``(…)`` (nested
    parentheses and backslash escapes) or a hex ``<…>``."""
    if data[i:i + 1] == b"<":
        return data.index(b">", i) + 1
    depth, j = 0, i
    while j < len(data):
        c = data[j:j + 1]
        if c == b"\\":
            j += 2
            continue
        depth += {b"(": 1, b")": -1}.get(c, 0)
        j += 1
        if depth == 0:
            return j
    return len(data)


def pdf_with_title(pdf: bytes, title: str) -> bytes:
    """``pdf`` with ``title`` as its document title (the Info dictionary's /Title, which
    Chromium sets from the page Kaleido renders in: "Kaleido-fier"). Written as an incremental
    update, the PDF way of changing a file: the Info dictionary again, with the new title and
    its other entries, a cross-reference section for it and a trailer pointing back to the
    original's; the original bytes are kept as they are. A file whose cross-references are
    not a classic table (none from Chromium) is returned unchanged."""
    end = re.search(rb"startxref\s+(\d+)\s+%%EOF\s*$", pdf)
    trailer = re.match(rb"trailer\s*<<(.*)>>\s*startxref", pdf[pdf.rfind(b"trailer"):], re.S)
    if not end or not trailer:
        return pdf
    fields = trailer.group(1)
    size_entry = re.search(rb"/Size\s+(\d+)", fields)
    root_entry = re.search(rb"/Root\s+\d+\s+\d+\s+R", fields)
    assert size_entry and root_entry, "a trailer holds /Size and /Root (PDF 1.7, 7.5.5)"
    size, root = int(size_entry.group(1)), root_entry.group(0)
    info = re.search(rb"/Info\s+(\d+)\s+(\d+)\s+R", fields)
    rest = b""
    if info:
        number, generation = int(info.group(1)), int(info.group(2))
        bodies = re.findall(rb"(?:^|\s)%d\s+%d\s+obj\s*<<(.*?)>>\s*endobj" % (number, generation),
                            pdf, re.S)
        rest = bodies[-1] if bodies else b""  # the latest version of the object
        key = re.search(rb"/Title\s*", rest)
        if key:
            rest = rest[:key.start()] + rest[_string_end(rest, key.end()):]
    else:
        number, generation, size = size, 0, size + 1
    body = b"%d %d obj\n<</Title %s\n%s>>\nendobj\n" % (number, generation, _pdf_text(title),
                                                        rest.strip())
    start = len(pdf) + 1
    xref = start + len(body)
    return pdf + b"\n" + body + (
        b"xref\n0 1\n0000000000 65535 f \n%d 1\n%010d %05d n \n"
        b"trailer\n<</Size %d %s /Info %d %d R /Prev %s>>\nstartxref\n%d\n%%%%EOF\n"
        % (number, start, generation, size, root, number, generation, end.group(1), xref))


def figure_bytes(fig: go.Figure, fmt: str, width: int, note: str, name: str = "figure") -> bytes:
    """The figure as a ``fmt`` file ``width`` pixels (SVG/PDF: CSS pixels) wide; a PDF is
    titled with the figure's title, or ``name`` (:func:`document_title`)."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    path = chromium()
    if path is None:
        raise ExportUnavailable("server-side export needs Chromium on the server "
                                "(as root: apt-get install chromium fonts-liberation, or "
                                "make test); the camera button of the chart still saves PNG "
                                "or SVG")
    os.environ.setdefault("BROWSER_PATH", path)  # Kaleido's browser: never a download
    import kaleido
    from kaleido.errors import ChromeNotFoundError

    printable = for_print(fig, note, width)
    try:  # as Figure.to_image, which cannot turn MathJax off (it passes only a location)
        data = kaleido.calc_fig_sync(
            printable.to_dict(), opts={"format": fmt, "width": width,
                                       "height": printable.layout.height, "scale": 1},
            kopts={**KALEIDO_OPTIONS, "browser_cls": offline_chromium()})  # Kaleido adds to it
    except ChromeNotFoundError:
        raise ExportUnavailable(f"server-side export found no Chromium at {path}") from None
    return pdf_with_title(data, document_title(fig, name)) if fmt == "pdf" else data
