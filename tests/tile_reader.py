"""Tiles drawn as one HTML element (:mod:`ui.logic.tiles`) read back as a browser shows them:
each tile's name, value, delta and help, and the notes under the group (no Streamlit: the unit
tier reads the HTML directly, the AppTest helpers from the page's ``html`` elements)."""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser


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
