"""Figures the project quotes are figures it measured: every passage of the README and docs/
that quotes a time names the benchmark that measured it (``bench/bench_x.py`` or ``python -m
bench.bench_x``), and that benchmark exists, so an unsourced timing cannot come back.

A passage is a paragraph, or one item of a list; a table is read with the paragraph before it
(where its benchmark and conditions are said). Code blocks are left out (a proxy's
``proxy_read_timeout 3600s`` is a setting, not a figure)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: A duration: "0.23 s", "46–51 ms", "5 to 17 s", "2.1–2.2 s", "a minute" is not a figure
TIME = re.compile(r"\d(?:[\d.,]*\d)?\s?(?:s|ms|µs|seconds?|minutes?)(?![\w/])")
#: A duration that is a setting or a rule, not a measured figure: "the burst ends after 2 s",
#: "a step every 5 s", "idle for 60 minutes"
SETTING = re.compile(r"\b(?:after|every|for|within|timeout of|waits?)\s+(?:about\s+)?"
                     r"\d(?:[\d.,]*\d)?\s?(?:s|ms|seconds?|minutes?)(?![\w/])")
#: A benchmark named as a file or as a module
BENCH = re.compile(r"bench[/.](bench_\w+)")
ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d+\.)\s")


def passages(text: str) -> list[str]:
    """The passages of a Markdown text: paragraphs and list items outside code blocks, each
    table with the paragraph before it."""
    text = re.sub(r"^\s*```.*?^\s*```", "", text, flags=re.S | re.M)
    out: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        lines = block.splitlines()
        if lines and all(line.lstrip().startswith("|") for line in lines if line.strip()):
            out.append((out.pop() if out else "") + "\n" + block)  # a table: with its lead
            continue
        items: list[list[str]] = []
        for line in lines:
            if ITEM.match(line) or not items:
                items.append([line])
            else:
                items[-1].append(line)
        out.extend("\n".join(item) for item in items)
    return out


def quotes_a_time(passage: str) -> bool:
    """Whether the passage quotes a duration other than a setting."""
    return bool(TIME.search(SETTING.sub("", passage)))


def timed_passages() -> list[tuple[str, str]]:
    return [(path.relative_to(ROOT).as_posix(), p) for path in DOCS
            for p in passages(path.read_text(encoding="utf-8")) if quotes_a_time(p)]


def test_the_docs_quote_times():
    """The check below reads something: the README's speed claim and the load tables."""
    found = timed_passages()
    assert len(found) >= 10
    assert any(doc == "README.md" and "a risk profile of a million" in " ".join(p.split())
               for doc, p in found)


@pytest.mark.parametrize(("doc", "passage"), timed_passages(),
                         ids=lambda v: v if v.endswith(".md") else v.split("\n")[0][:50])
def test_every_quoted_time_names_the_bench_that_measured_it(doc, passage):
    named = BENCH.findall(passage)
    assert named, (f"{doc}: a time without the benchmark that measured it "
                   f"({TIME.search(SETTING.sub('', passage)).group()}):\n{passage}")
    for name in named:
        assert (ROOT / "bench" / f"{name}.py").is_file(), f"{doc}: no bench/{name}.py"


def test_every_bench_the_docs_name_exists():
    for path in DOCS:
        for name in BENCH.findall(path.read_text(encoding="utf-8")):
            assert (ROOT / "bench" / f"{name}.py").is_file(), f"{path.name}: bench/{name}.py"


def test_passages_split_as_read():
    text = ("Lead, measured by `bench/bench_x.py`:\n\n| a | b |\n| --- | --- |\n| 1 s | 2 |\n\n"
            "- first item 3 s\n- second, `bench/bench_y.py`\n  goes on\n\n```\nx 3600s\n```\n")
    got = passages(text)
    assert got[0].startswith("Lead") and "| 1 s | 2 |" in got[0]
    assert got[1:] == ["- first item 3 s", "- second, `bench/bench_y.py`\n  goes on"]
    assert not any("3600s" in p for p in got)
    assert [quotes_a_time(p) for p in got] == [True, True, False]
    # a setting is not a figure; a measured time beside one still is
    assert not quotes_a_time("The burst ends after 2 s without a change, a step every 5 s.")
    assert quotes_a_time("The burst ends after 2 s; a move takes 0.09 s.")
