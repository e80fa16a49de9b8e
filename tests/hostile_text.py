"""Text built to be read as Markdown (an image the browser would fetch, a link, bold type) and
:func:`leaks`, which finds it unescaped on a page in AppTest: the pages must show it as those
characters (tests/test_app_hostile_text.py and the page tests that upload it); and names
holding Unicode's direction controls, which every page, figure and report shows escaped
(:func:`controls` finds them).

AppTest gives each element's Markdown source; an escaped name has a backslash before every
bracket and colon and a word joiner after ``:``, so an unescaped ``](``, ``![``, ``**`` or
``://`` is a leak. This module imports no Streamlit itself (the AppTest is the caller's).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from streamlit.testing.v1 import AppTest

#: An image the browser would fetch from a server of the attacker's, and a link
IMAGE = "![t](http://127.0.0.1:9/x.png)"
LINK = "[Session expired - sign in again](http://127.0.0.1:9/phish)"
#: Unicode's direction controls (issue 51): a name holding the right-to-left override U+202E,
#: ``invoice\u202efdp.exe``, is shown as "invoiceexe.pdf"
BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
RLO = "\u202e"
SPOOFED = f"name{RLO}gnp.exe"
#: The AppTest elements whose Markdown source :func:`leaks` reads
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
    # the tiles drawn as HTML: a name is written as text, so no tag of the hostile text is there
    found += [f"html: {e.proto.body[:120]}" for e in at.get("html")
              if re.search(r"<(a|img|script|iframe)\b", e.proto.body)]
    return found


def hostile_csv() -> bytes:
    """A CSV file with :data:`IMAGE` and :data:`LINK` as column names and values, and bold
    type."""
    rows = [f"age,{IMAGE},sex,{LINK}"] + [
        f"{20 + i % 5},{IMAGE if i % 2 else LINK},{'m' if i % 3 else 'f'},**bold**"
        for i in range(40)]
    return ("\n".join(rows) + "\n").encode()


def controls(texts: list[str]) -> list[str]:
    """The texts that hold a direction control."""
    return [t[:120] for t in texts if any(c in t for c in BIDI)]
