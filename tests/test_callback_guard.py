"""Every callback of the pages goes through ``ui.guard`` (issue 39, item 4), so that one that
fails says so in one line (tests/test_app_callback_guard.py)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_callback_of_the_pages_is_guarded():
    """Every ``on_change``/``on_click`` that names a function goes through ``ui.guard``."""
    unguarded = []
    for path in [*ROOT.glob("ui/*.py"), *ROOT.glob("views/*.py")]:
        text = path.read_text()
        # a keyword (on_change=f) or a dict entry ("on_change": f), not an annotation
        callback = r'(?:"on_(?:change|click)"\s*:|\bon_(?:change|click)\s*=)\s*([^,)\s]+)'
        for m in re.finditer(callback, text):
            target = m.group(1)
            if target.startswith(('"', "'", "guarded(", "guard.guarded(")):
                continue
            name = target.split(".")[-1]
            if not re.search(rf"@guarded\s*\ndef {re.escape(name)}\(", text):
                unguarded.append(f"{path.relative_to(ROOT)}: {m.group(0)}")
    assert unguarded == []
