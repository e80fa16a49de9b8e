"""Text stays text: Markdown in a file name, column names, cell values and link parameters is
shown as those characters on every page, never as an image (which the browser would fetch), a
link or bold type. AppTest gives each element's Markdown source; an escaped name has a backslash
before every bracket and colon and a word joiner after ``:``, so an unescaped ``](``, ``![``,
``**`` or ``://`` is a leak."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import app_test

IMAGE = "![t](http://127.0.0.1:9/x.png)"
LINK = "[Session expired - sign in again](http://127.0.0.1:9/phish)"
PAGES = ("views/data.py", "views/risk.py", "views/protect.py", "views/tradeoffs.py",
         "views/export.py", "views/rr_lab.py", "views/tables.py", "views/lessons.py")
MARKDOWN = ("markdown", "caption", "error", "warning", "info", "success", "subheader",
            "header", "title")


def leaks(at: AppTest) -> list[str]:
    """Every element whose Markdown source holds the hostile text unescaped."""
    found = []
    for kind in MARKDOWN:
        for element in getattr(at, kind):
            text = str(element.value)
            if "](" in text or "![" in text or "**bold**" in text or "127.0.0.1:9" in text \
                    or "://127" in text:  # a bare address is linked by the renderer
                found.append(f"{kind}: {text[:120]}")
    found += [f"metric: {m.label}" for m in at.metric if "](" in str(m.label)]
    return found


def hostile_csv() -> bytes:
    rows = [f"age,{IMAGE},sex,{LINK}"] + [
        f"{20 + i % 5},{IMAGE if i % 2 else LINK},{'m' if i % 3 else 'f'},**bold**"
        for i in range(40)]
    return ("\n".join(rows) + "\n").encode()


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
