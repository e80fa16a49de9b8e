"""A group of metric tiles as one piece of HTML (no Streamlit): the Protect page draws each
group of its results as one element instead of a tile an element, so that a slider move
redraws fewer elements (docs/deploying.md, "A class at once, measured").

A tile shows what ``st.metric`` shows: its name, its value, the change as a coloured delta
with an arrow, and a help button whose text is shown on hover and on keyboard focus and read
by a screen reader as the button's description (``aria-describedby``). The texts are those a
``st.metric`` reads: plain text, or text whose Markdown specials are escaped
(:func:`ui.logic.text.md`); the escapes are undone and every character is then written as
HTML text, so nothing in a name, a value or a help becomes markup.

The delta reads as ``st.metric`` reads it: a text starting with a minus is a fall (arrow
down); ``delta_color`` "normal" shows a rise green and a fall red, "inverse" the other way
round, "off" both grey.

A tile and its parts carry the test ids of Streamlit's own metric (``stMetric``,
``stMetricLabel``, ``stMetricValue``, ``stMetricDelta``): the browser tests read a tile the
same way whichever draws it, and the pages' rules for metrics (wrap, never cut) hold for both.
:func:`read_tiles` reads the tiles back from the HTML as a browser shows them (the load
client, ``bench/st_client.py``, and the tests read the pages with it)."""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Literal

from sdc_core.data.io import neutralize_bidi

DeltaColor = Literal["normal", "inverse", "off"]

#: A Markdown escape as :func:`ui.logic.text.md` writes it: a backslash before a special.
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>~$:=&^])")

#: Colours of a delta with at least 4.5:1 contrast on its tinted background (WCAG 2.1 AA).
_GOOD, _BAD, _OFF = "#176d2e", "#b3261e", "#4a4f57"

#: How the tiles look: the page draws it once (``ui.page.METRIC_CSS``), not every group.
STYLE = f"""<style>
.sdc-tiles {{ display: flex; flex-wrap: wrap; gap: 0.5rem 1.5rem; margin: 0 0 0.5rem 0; }}
.sdc-tiles-title {{ flex: 1 0 100%; margin: 0; font-weight: 600; }}
.sdc-tiles-note {{ flex: 1 0 100%; margin: 0; font-size: 0.875rem; opacity: 0.6; }}
.sdc-tile {{ flex: 1 1 10rem; min-width: 8rem; position: relative; }}
.sdc-tile-label {{ font-size: 0.875rem; line-height: 1.4; overflow-wrap: anywhere;
  display: flex; align-items: flex-start; gap: 0.25rem; }}
.sdc-tile-value {{ font-size: 2.25rem; line-height: 1.25; overflow-wrap: anywhere; }}
.sdc-tile-delta {{ display: inline-block; font-size: 0.875rem; padding: 0 0.4rem;
  border-radius: 0.75rem; }}
.sdc-good {{ color: {_GOOD}; background: #e6f4ea; }}
.sdc-bad {{ color: {_BAD}; background: #fce8e6; }}
.sdc-off {{ color: {_OFF}; background: #eef0f3; }}
.sdc-help {{ flex: none; width: 1.1rem; height: 1.1rem; padding: 0; margin-top: 0.1rem;
  border: 1px solid currentColor; border-radius: 50%; background: transparent; color: inherit;
  font-size: 0.75rem; line-height: 1; cursor: help; opacity: 0.75; }}
.sdc-help:focus-visible {{ outline: 2px solid #1f6feb; outline-offset: 2px; }}
.sdc-tip {{ display: none; position: absolute; z-index: 5; top: 1.6rem; left: 0;
  max-width: 22rem; padding: 0.5rem 0.75rem; border-radius: 0.25rem; background: #0e1117;
  color: #ffffff; font-size: 0.875rem; line-height: 1.4; }}
.sdc-help:hover + .sdc-tip, .sdc-help:focus + .sdc-tip {{ display: block; }}
</style>"""


@dataclass(frozen=True)
class Tile:
    """One measure as a tile: what ``st.metric`` takes."""

    name: str
    value: str
    delta: str | None = None
    delta_color: DeltaColor = "normal"
    help: str | None = None


def text(markdown: object) -> str:
    """A tile's text as HTML text: Markdown escapes undone, direction controls shown as their
    escapes (:func:`sdc_core.data.io.neutralize_bidi`), every HTML special written as an
    entity."""
    return html.escape(neutralize_bidi(_ESCAPE.sub(r"\1", str(markdown))))


def _delta(delta: str, color: DeltaColor) -> str:
    """The delta's badge: an arrow (hidden from a screen reader: the sign says it) and the
    text, green when better, red when worse, grey when neither reads as better."""
    fall = delta.lstrip().startswith(("-", "−"))
    tone = "off" if color == "off" else ("bad" if fall == (color == "normal") else "good")
    arrow = "▼" if fall else "▲"
    return (f'<div><span class="sdc-tile-delta sdc-{tone}" data-testid="stMetricDelta">'
            f'<span aria-hidden="true">{arrow}</span> {text(delta)}</span></div>')


def tile_html(tile: Tile, tip_id: str) -> str:
    """One tile; ``tip_id`` names its help text on the page (``aria-describedby``)."""
    helped = "" if not tile.help else (
        f'<button type="button" class="sdc-help" aria-label="About {text(tile.name)}" '
        f'aria-describedby="{tip_id}" data-testid="sdcTileHelp">?</button>'
        f'<span class="sdc-tip" role="tooltip" id="{tip_id}">{text(tile.help)}</span>')
    delta = _delta(tile.delta, tile.delta_color) if tile.delta else ""
    return (f'<div class="sdc-tile" role="group" aria-label="{text(tile.name)}" '
            f'data-testid="stMetric">'
            f'<div class="sdc-tile-label"><span data-testid="stMetricLabel">{text(tile.name)}'
            f'</span>{helped}</div>'
            f'<div class="sdc-tile-value" data-testid="stMetricValue">{text(tile.value)}</div>'
            f'{delta}</div>')


def tiles_html(tiles: Sequence[Tile], title: str | None = None, notes: Sequence[str] = (),
               key: str = "tiles") -> str:
    """The tiles side by side, as many as the width holds, under a bold ``title`` and over
    small ``notes``, a paragraph each (texts as tile texts are); ``key`` tells the help texts
    of one group from another's on the page. Styled by :data:`STYLE`, which the page holds."""
    seed = hashlib.sha256(key.encode()).hexdigest()[:8]
    body = "".join(tile_html(t, f"sdc-tip-{seed}-{i}") for i, t in enumerate(tiles))
    head = f'<p class="sdc-tiles-title">{text(title)}</p>' if title else ""
    foot = "".join(f'<p class="sdc-tiles-note">{text(n)}</p>' for n in notes)
    return f'<div class="sdc-tiles" data-testid="sdcTiles">{head}{body}{foot}</div>'


# -- read back, as a browser shows them (the load client and the tests) --------------------

@dataclass(frozen=True)
class Shown:
    """A tile as the page shows it: an ``st.metric``'s or one of a group drawn as one HTML
    element (:mod:`ui.logic.tiles`), read back from the HTML as the browser reads it."""

    label: str
    value: str
    delta: str
    help: str


class TileReader(HTMLParser):
    """The tiles of :func:`ui.logic.tiles.tiles_html`: the text of each ``data-testid`` part
    (entities decoded, as a browser shows them) and the text of the tooltip."""

    PARTS = {"stMetricLabel": "label", "stMetricValue": "value", "stMetricDelta": "delta"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tiles: list[dict[str, str]] = []
        self.notes: list[str] = []
        self.stack: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        part = self.PARTS.get(a.get("data-testid") or "")
        if a.get("data-testid") == "stMetric":
            self.tiles.append({"label": "", "value": "", "delta": "", "help": ""})
        elif a.get("role") == "tooltip":
            part = "help"
        elif a.get("class") == "sdc-tiles-note":
            self.notes.append("")
            part = "note"
        if tag not in ("br", "img", "input"):
            self.stack.append(part or next((p for p in reversed(self.stack) if p), None))

    def handle_endtag(self, tag: str) -> None:
        if self.stack and tag not in ("br", "img", "input"):
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        part = self.stack[-1] if self.stack else None
        if part == "note":
            self.notes[-1] += data
        elif part and self.tiles:
            self.tiles[-1][part] += data


def read_tiles(body: str) -> list[Shown]:
    """The tiles of an HTML element, the arrow of a delta left out (hidden from a screen
    reader: the sign says it)."""
    reader = TileReader()
    reader.feed(body)
    return [Shown(t["label"], t["value"],
                  t["delta"].replace("▲", "").replace("▼", "").strip(), t["help"])
            for t in reader.tiles]
