"""Text stays text: Markdown in a file name, column names, cell values and link parameters is
shown as those characters on every page, never as an image (which the browser would fetch), a
link or bold type (the hostile text and :func:`~tests.hostile_text.leaks`, which finds it
unescaped: tests/hostile_text.py)."""

from __future__ import annotations

import pytest

from tests.apptest import app_test, downloads, tiles
from tests.hostile_text import (
    IMAGE,
    LINK,
    MARKDOWN,
    RLO,
    SPOOFED,
    controls,
    hostile_csv,
    leaks,
)

PAGES = ("views/data.py", "views/risk.py", "views/protect.py", "views/tradeoffs.py",
         "views/export.py", "views/rr_lab.py", "views/tables.py", "views/lessons.py")


def test_hostile_names_and_values_stay_text_on_every_page():
    at = app_test().run()
    at.file_uploader(key="uploader").set_value((f"{IMAGE}.csv", hostile_csv(), "text/csv")).run()
    at.multiselect(key="w_qi").set_value(["age", "sex", IMAGE]).run()
    at.multiselect(key="w_sensitive").set_value([LINK]).run()
    assert not at.exception and not leaks(at)
    for page in PAGES[1:]:
        at.switch_page(page).run()
        if page == "views/tables.py":
            at.multiselect(key="w_tables_questions_Current").set_value([IMAGE, LINK]).run()
        assert not at.exception, page
        assert not leaks(at), page


def test_a_refused_upload_quotes_its_names_as_text():
    """The duplicate-column error quoted the names as Markdown."""
    at = app_test().run()
    at.file_uploader(key="uploader").set_value(
        ("dup.csv", f"a,{IMAGE},{IMAGE}\n1,2,3\n".encode(), "text/csv")).run()
    assert any("duplicate column names" in e.value for e in at.error)
    assert not leaks(at)


@pytest.mark.parametrize("key, value", [("qi", IMAGE), ("k", LINK), ("na", IMAGE),
                                        ("alpha", LINK), ("data", IMAGE), ("view", LINK)])
def test_link_parameters_stay_text(key, value):
    """A crafted link's parameters were echoed as Markdown in the link warning."""
    at = app_test()
    at.query_params[key] = value
    at.run()
    assert not at.exception and not leaks(at)


ISOLATED = "\u2067id\u2069\u200f"


def spoof_csv() -> bytes:
    rows = [f"age,sex,{SPOOFED},{ISOLATED}"] + [
        f"{20 + i % 5},{'m' if i % 3 else 'f'},{'a' if i % 2 else f'b{RLO}c'},x{i % 4}\u061c"
        for i in range(40)]
    return ("\n".join(rows) + "\n").encode()


def shown_text(at) -> list[str]:
    """The Markdown source of every element of the page and its sidebar."""
    return [str(e.value) for kind in MARKDOWN for e in getattr(at, kind)] + \
        [str(m.label) for m in tiles(at)]


def test_direction_controls_are_shown_escaped_in_the_sidebar_the_pages_and_the_report(
        monkeypatch):
    """A file name, column names and values holding direction controls: the sidebar, every
    page and the report show each control as its escape (``\\u202e``, visible), never the
    control itself."""
    made = downloads(monkeypatch)
    at = app_test().run()
    at.file_uploader(key="uploader").set_value((f"evil{RLO}vsc.csv", spoof_csv(),
                                                "text/csv")).run()
    at.multiselect(key="w_qi").set_value(["age", "sex", SPOOFED]).run()
    at.multiselect(key="w_sensitive").set_value([ISOLATED]).run()
    assert not at.exception
    sidebar = [str(e.value) for e in (*at.sidebar.markdown, *at.sidebar.caption)]
    assert any("evil\\\\u202evsc" in t for t in sidebar), sidebar  # "\\" escapes "\" in Markdown
    assert any("name\\\\u202egnp" in t and "\\\\u2067id\\\\u2069\\\\u200f" in t
               for t in sidebar), sidebar
    assert not controls(sidebar) and not controls(shown_text(at))
    for page in PAGES[1:]:
        at.switch_page(page).run()
        assert not at.exception, page
        assert not controls(shown_text(at)), page
    at.switch_page("views/export.py").run()
    html = made["dl_report"]().decode()
    assert not controls([html])
    assert "evil\\u202evsc" in html and "name\\u202egnp.exe" in html
