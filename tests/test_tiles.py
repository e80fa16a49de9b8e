"""Metric tiles as one HTML element (ui/logic/tiles.py): what a browser reads back is what
``st.metric`` showed (name, value, delta and its colour, help), any text stays text, and a
help is reachable by keyboard and named for a screen reader."""

from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.hostile_text import BIDI, IMAGE, LINK, SPOOFED
from ui.logic.text import md
from ui.logic.tiles import STYLE, Tile, TileReader, read_tiles, text, tiles_html

HOSTILE = [
    IMAGE, LINK, SPOOFED, "<img src=x onerror=alert(1)>", "<script>alert(1)</script>",
    '"><svg onload=alert(1)>', "</div></div><style>*{display:none}</style>", "**bold** _it_",
    "&amp; &lt;b&gt;", "a\\*b", "{{ x }}", "x" * 100_000, "", " ", "\n\t", "é ñ 中文 🙂",
    "javascript:alert(1)", "' onmouseover='alert(1)", "<!-- c -->", "]]>", "\x00\x01",
]


class Markup(HTMLParser):
    """The tags and attribute names of an HTML text, as a browser parses it."""

    def __init__(self, body: str) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attributes: set[str] = set()
        self.feed(body)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes |= {name for name, _ in attrs}


@pytest.mark.parametrize("hostile", HOSTILE, ids=range(len(HOSTILE)))
def test_any_text_is_shown_as_its_characters_and_never_as_markup(hostile):
    tile = Tile(hostile, hostile, f"-{hostile}", "inverse", hostile)
    body = tiles_html([tile], title=hostile, notes=[hostile], key=hostile)
    # only the tiles' own tags, whatever the text: no image, link, script or handler
    markup = Markup(body)
    assert markup.tags <= {"div", "span", "p", "button"}
    assert markup.attributes <= {"class", "data-testid", "role", "aria-label", "aria-hidden",
                                 "aria-describedby", "type", "id"}
    [shown] = read_tiles(body)
    plain = text(hostile)  # the characters the browser shows (direction controls escaped)
    assert shown.label == unescape(plain)
    assert shown.value == unescape(plain) and shown.help == unescape(plain)
    reader = TileReader()
    reader.feed(body)
    assert reader.notes == [unescape(plain)]


def test_markdown_escapes_are_undone_and_direction_controls_shown_as_escapes():
    """A name reaches a tile Markdown-escaped, as ``st.metric`` took it: the tile shows the
    name's own characters, and a direction control as its escape (the text reads in the order
    it is stored)."""
    [shown] = read_tiles(tiles_html([Tile(md("a*b [c](d) 50%"), "1")]))
    assert shown.label == "a*b [c](d) 50%"
    [shown] = read_tiles(tiles_html([Tile(md(SPOOFED), "1")]))
    assert "\u202e" not in shown.label and "\\u202e" in shown.label
    [shown] = read_tiles(tiles_html([Tile(BIDI, "1")]))
    assert not set(BIDI) & set(shown.label)


@given(st.text(max_size=60), st.text(max_size=30), st.one_of(st.none(), st.text(max_size=20)),
       st.text(max_size=80))
def test_every_text_reads_back_as_given(name, value, delta, help_text):
    """Any text, Markdown-escaped as the pages give it, reads back as its characters."""
    tile = Tile(md(name), md(value), md(delta) if delta else None, "normal", md(help_text))
    [shown] = read_tiles(tiles_html([tile]))
    assert shown.label == unescape(text(md(name)))
    assert shown.value == unescape(text(md(value)))
    assert shown.help == (unescape(text(md(help_text))) if help_text else "")
    assert shown.delta == (unescape(text(md(delta))).strip() if delta else "")


@pytest.mark.parametrize("delta, color, tone, arrow", [
    ("+1.2 points", "normal", "good", "▲"), ("-1.2 points", "normal", "bad", "▼"),
    ("+1.2 points", "inverse", "bad", "▲"), ("-1.2 points", "inverse", "good", "▼"),
    ("−3", "inverse", "good", "▼"), ("+3", "off", "off", "▲"), ("-3", "off", "off", "▼"),
    ("0.5 (was 0.4)", "normal", "good", "▲")])
def test_a_delta_reads_as_st_metric_reads_it(delta, color, tone, arrow):
    """A text starting with a minus is a fall; "normal" shows a rise green, "inverse" a fall
    green, "off" grey; the arrow is hidden from a screen reader (the sign says it)."""
    body = tiles_html([Tile("Risk", "1 %", delta, color)])
    assert f'sdc-tile-delta sdc-{tone}"' in body
    assert f'<span aria-hidden="true">{arrow}</span>' in body
    assert read_tiles(body)[0].delta == delta


def test_no_delta_and_no_help_draw_nothing_for_them():
    body = tiles_html([Tile("Smallest class", "1")])
    assert "stMetricDelta" not in body and "sdcTileHelp" not in body and "tooltip" not in body


def test_each_help_is_a_named_button_that_describes_itself_by_a_unique_id():
    """Keyboard and screen reader: each help is a button (a Tab stop) named after its tile,
    whose description is its tooltip; the ids differ between tiles and between groups."""
    one = tiles_html([Tile("A", "1", help="about a"), Tile("B", "2", help="about b")], key="x")
    two = tiles_html([Tile("A", "1", help="about a")], key="y")
    buttons = re.findall(r'<button type="button" class="sdc-help" aria-label="About ([^"]*)" '
                         r'aria-describedby="([^"]*)"', one + two)
    assert [name for name, _ in buttons] == ["A", "B", "A"]
    ids = [i for _, i in buttons]
    assert len(set(ids)) == 3
    for i in ids:
        assert re.search(rf'role="tooltip" id="{i}"', one + two)
    # shown on hover and on keyboard focus
    assert ".sdc-help:hover + .sdc-tip, .sdc-help:focus + .sdc-tip" in STYLE
