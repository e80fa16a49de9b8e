"""The project cites its own docs, and what it cites is there: no reference to a design document
outside the repository is left, every ``docs/X.md`` the code, the tests, the benches and the docs
name exists, every section they quote by name (``docs/measures.md, "The released keys"``) is a
heading (or a bold paragraph lead) of that file, and every link between the docs reaches a file
and, with ``#anchor``, one of its headings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: Folders that are not the project's own text
SKIP = {".venv", ".git", "node_modules", ".hypothesis", ".pytest_cache", ".ruff_cache",
        "test-results", "__pycache__", "images"}
SUFFIXES = {".py", ".md", ".toml", ".txt", ".cfg", ".ini", ".sh", ".conf", ".json", ".R"}
NAMES = {"Makefile", "Dockerfile", "run"}
#: The old form of a reference, written in two parts so that this file does not hold it
OLD = "DESIGN" + " §"
#: ``docs/X.md``, and ``docs/X.md, "Section"`` (the quote may wrap onto the next line)
CITED = re.compile(r"docs/([\w-]+\.md)")
QUOTED = re.compile(r"docs/([\w-]+\.md),\s+\"([^\"]+)\"")
#: In the docs: a Markdown link to another doc, ``[text](X.md)`` or ``[text](X.md#anchor)``
LINK = re.compile(r"\]\(((?:docs/)?[\w-]+\.md)(?:#([\w-]+))?\)")
#: In the docs: ``[X.md, "Section"](…)``
LINK_QUOTED = re.compile(r"\[([\w-]+\.md),\s+\"([^\"]+)\"\]")


def project_files() -> list[Path]:
    out = []
    for path in ROOT.rglob("*"):
        rel = path.relative_to(ROOT).parts
        if any(part in SKIP for part in rel[:-1]) or not path.is_file():
            continue
        if (path.suffix in SUFFIXES or path.name in NAMES) and path != Path(__file__):
            out.append(path)
    return sorted(out)


def text_of(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def sections(doc: Path) -> set[str]:
    """The headings of a Markdown file, and the bold leads of its paragraphs and list items
    (``**The attackers.**``), as written, without trailing punctuation."""
    text = re.sub(r"^\s*```.*?^\s*```", "", text_of(doc), flags=re.S | re.M)
    found = {m.group(1).strip() for m in re.finditer(r"^#+\s+(.+)$", text, flags=re.M)}
    found |= {m.group(1).strip() for m in
              re.finditer(r"^(?:\s*[-*]\s+)?\*\*([^*]+?)[.:]?\*\*", text, flags=re.M)}
    return {s.rstrip(".:") for s in found}


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation other than ``-`` and ``_`` dropped,
    spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def anchors(doc: Path) -> set[str]:
    text = re.sub(r"^\s*```.*?^\s*```", "", text_of(doc), flags=re.S | re.M)
    return {anchor(m.group(1).strip()) for m in re.finditer(r"^#+\s+(.+)$", text, flags=re.M)}


def quoted(text: str) -> str:
    """A quoted section name as one line: wrapped in a comment, the prefix of its next line
    (``#``, ``#:``) is not part of it."""
    return " ".join(re.sub(r"\n\s*#:?", " ", text).split())


def test_the_files_are_read():
    files = project_files()
    names = {p.relative_to(ROOT).as_posix() for p in files}
    assert {"README.md", "docs/architecture.md", "sdc_core/cli.py", "tests/conftest.py"} <= names


def test_no_reference_to_an_outside_design_document():
    found = [f"{p.relative_to(ROOT)}:{n}" for p in project_files()
             for n, line in enumerate(text_of(p).splitlines(), 1) if OLD in line]
    assert found == [], "cite the project's docs (docs/…), not an outside document: " + \
        ", ".join(found)


def test_every_cited_doc_exists():
    missing = sorted({f"{p.relative_to(ROOT)}: docs/{name}" for p in project_files()
                      for name in CITED.findall(text_of(p)) if not (DOCS / name).is_file()})
    assert missing == []


def test_every_quoted_section_exists():
    cited = [(p, name, quoted(section)) for p in project_files()
             for name, section in QUOTED.findall(text_of(p))]
    cited += [(p, name, quoted(section)) for p in DOCS.glob("*.md")
              for name, section in LINK_QUOTED.findall(text_of(p))]
    assert len(cited) >= 5  # the check reads something
    missing = [f"{p.relative_to(ROOT)}: {name}, \"{section}\"" for p, name, section in cited
               if not (DOCS / name).is_file() or section not in sections(DOCS / name)]
    assert missing == []


def test_every_link_between_the_docs_arrives():
    docs = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
    broken = []
    links = [(doc, target, anchor_) for doc in docs
             for target, anchor_ in LINK.findall(text_of(doc))]
    assert len(links) >= 20 and sum(1 for *_, a in links if a) >= 5  # the check reads something
    for doc, target, anchor_ in links:
        path = doc.parent / target  # the README links docs/X.md, a doc X.md
        if not path.is_file():
            broken.append(f"{doc.name}: {target}")
        elif anchor_ and anchor_ not in anchors(path):
            broken.append(f"{doc.name}: {target}#{anchor_}")
    assert broken == []


@pytest.mark.parametrize(("heading", "expected"), [
    ("Risk after protection: the linkage attack", "risk-after-protection-the-linkage-attack"),
    ("Files on the server (`SDC_DATA_DIR`)", "files-on-the-server-sdc_data_dir"),
    ("Does the analysis hold?", "does-the-analysis-hold"),
])
def test_anchors_as_github_makes_them(heading, expected):
    assert anchor(heading) == expected


def test_sections_read_headings_and_bold_leads(tmp_path):
    doc = tmp_path / "x.md"
    doc.write_text("# Title\n\n## The released keys\n\n**The attackers.** A blank …\n\n"
                   "- **Load.** text\n\n```\n## not a heading\n```\n", encoding="utf-8")
    assert sections(doc) == {"Title", "The released keys", "The attackers", "Load"}
