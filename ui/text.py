"""Showing user-supplied text (column names, values, file names) safely in Markdown."""

import re

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=&^])")


def md(text: object) -> str:
    """``text`` with every Markdown/HTML special character escaped, so that a column named
    ``![x](http://…)`` is shown as those characters and never becomes a link or an image."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text)).replace("\n", " ")


def md_list(items: list[object]) -> str:
    return ", ".join(md(i) for i in items) if items else "—"
