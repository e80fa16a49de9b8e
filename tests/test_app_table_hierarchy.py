"""AppTest of the Tables page's code lists (hierarchies, docs/tables.md "On the Tables page"):
a column's prefix lengths or uploaded code list file give the cross table its inner nodes, each
the sum of its children, published by suppression with its audit; DP and the cell key method say
in one sentence why they do not publish it; added tables take the same code lists. And the
hostile corpus of the new input: prefix text and files the page refuses in one sentence each,
never an exception, and codes that are Markdown or HTML shown as text."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from sdc_core.tables.hierarchy import MAX_BYTES, MAX_DEPTH
from tests.apptest import app_test, downloads
from tests.cli_run import run
from tests.conftest import plain
from tests.hostile_text import IMAGE, LINK, leaks
from ui.logic.cross_tables import HIERARCHY_REFUSED, MAX_CODE_LIST_BYTES

CROSS = "Cross table with margins"
#: Each code of the column ``nace`` and its records by ``size``: C101 and C102 under C10, C201
#: under C20, C10 and C20 under C; D351 and D352 under D35 under D. (C201, l) holds 2 records,
#: below the threshold 5.
RECORDS = {("C101", "s"): 9, ("C101", "l"): 7, ("C102", "s"): 6, ("C102", "l"): 8,
           ("C201", "s"): 11, ("C201", "l"): 2, ("D351", "s"): 12, ("D351", "l"): 6,
           ("D352", "s"): 5, ("D352", "l"): 9}
CODES = sorted({code for code, _ in RECORDS})
#: The tree of prefix lengths 1,3, each inner node's children
CHILDREN = {"C10": ["C101", "C102"], "C20": ["C201"], "D35": ["D351", "D352"],
            "C": ["C10", "C20"], "D": ["D35"]}


def data_csv() -> bytes:
    rows = ["nace,size"] + [f"{code},{size}" for (code, size), n in RECORDS.items()
                            for _ in range(n)]
    return ("\n".join(rows) + "\n").encode()


def code_page() -> AppTest:
    """The Tables page's cross table of nace × size on :func:`data_csv`."""
    at = app_test(timeout=60).run()
    at.file_uploader(key="uploader").set_value(("firms.csv", data_csv(), "text/csv")).run()
    at.switch_page("views/tables.py").run()
    at.radio(key="w_tables_kind").set_value(CROSS).run()
    at.multiselect(key="w_tables_cross").set_value(["nace", "size"]).run()
    assert not at.exception and not at.error
    return at


def with_prefixes(at: AppTest, text: str) -> AppTest:
    at.radio(key="w_tables_h_kind_nace").set_value("prefix").run()
    at.text_input(key="w_tables_h_prefix_nace").input(text).run()
    return at


def with_file(at: AppTest, name: str, raw: bytes) -> AppTest:
    at.radio(key="w_tables_h_kind_nace").set_value("file").run()
    at.file_uploader(key="tables_h_file_nace").set_value((name, raw, "text/plain")).run()
    return at


def suppression_block(at: AppTest):
    found = [c for c in at.columns if [s.value for s in c.subheader] == ["Suppression"]]
    assert len(found) == 1
    return found[0]


def true_count(node: str, size: str) -> int:
    """The records under ``node`` (a code, an inner node or Total) and ``size`` (or Total),
    counted here from :data:`RECORDS`, not by the core."""
    return sum(n for (code, s), n in RECORDS.items()
               if (node == "Total" or code.startswith(node)) and size in (s, "Total"))


def assert_inner_rows_add_up(at: AppTest) -> None:
    """The suppressed pivot has every inner node's row; each published figure is the true
    count, and a node's published row is the sum of its children's wherever all are shown."""
    pivot = suppression_block(at).dataframe[0].value
    assert list(pivot.index) == [*CODES, *sorted(CHILDREN), "Total"]
    hidden = 0
    for node in pivot.index:
        for size in pivot.columns:
            shown = pivot.loc[node, size]
            if shown == "✕":
                hidden += 1
                continue
            assert shown == f"{true_count(node, size):,}", (node, size)
    assert hidden >= 2 and pivot.loc["C201", "l"] == "✕"  # the small cell and a partner
    for node, kids in CHILDREN.items():
        for size in pivot.columns:
            figures = [pivot.loc[k, size] for k in [node, *kids]]
            if "✕" not in figures:
                assert int(figures[0].replace(",", "")) == sum(
                    int(f.replace(",", "")) for f in figures[1:]), (node, size)
    assert any(s.value.startswith("Audit passed") for s in suppression_block(at).success)


def test_prefix_lengths_give_inner_nodes_that_add_up_and_pass_the_audit():
    at = with_prefixes(code_page(), "1,3")
    assert not at.exception and not at.error
    assert_inner_rows_add_up(at)
    refused = [i.value for i in at.info if i.value == HIERARCHY_REFUSED]
    assert len(refused) == 2  # DP and the cell key method, one sentence each
    assert any("nace: prefix lengths 1,3" in plain(c.value) for c in at.caption)


def test_the_download_is_the_command_lines_file(monkeypatch, tmp_path):
    """One truth: the suppressed table's download with prefix lengths 1,3 is, byte for byte,
    what ``tables --cross nace,size --hierarchy nace=prefix:1,3`` writes from the same file."""
    made = downloads(monkeypatch)
    with_prefixes(code_page(), "1,3")
    data, out = tmp_path / "firms.csv", tmp_path / "out.csv"
    data.write_bytes(data_csv())
    done = run("tables", data, "--cross", "nace,size", "--hierarchy", "nace=prefix:1,3",
               "-o", out)
    assert done.returncode == 0, done.stderr
    assert made["dl_tables_suppress_csv"] == out.read_bytes()
    assert b"\nC10,s," in out.read_bytes()  # an inner node's row


@pytest.mark.parametrize("name, raw", [
    ("nace.csv", b"code,parent\nC,\nD,\nC10,C\nC20,C\nD35,D\nC101,C10\nC102,C10\nC201,C20\n"
                 b"D351,D35\nD352,D35\n"),
    ("nace.json", json.dumps({"C": None, "D": "", "C10": "C", "C20": "C", "D35": "D",
                              "C101": "C10", "C102": "C10", "C201": "C20", "D351": "D35",
                              "D352": "D35"}).encode()),
])
def test_a_code_list_file_gives_the_same_table(name, raw):
    at = with_file(code_page(), name, raw)
    assert not at.exception and not at.error
    assert_inner_rows_add_up(at)
    assert any(f"10 codes from {name}" in plain(c.value) for c in at.caption)


def test_the_added_tables_take_the_same_code_lists():
    at = with_prefixes(code_page(), "1,3")
    at.button(key="tables_add_table").click().run()
    at.multiselect(key="w_tables_added_0").set_value(["nace"]).run()
    assert not at.exception and not at.error
    assert any("joint audit passed" in s.value for s in at.success)
    one_way = at.dataframe[-1].value  # the table of nace alone
    assert list(one_way["nace"]) == [*CODES, *sorted(CHILDREN), "Total"]
    for node, kids in CHILDREN.items():
        rows = dict(zip(one_way["nace"], one_way["count"]))
        if "✕" not in [rows[k] for k in [node, *kids]]:
            assert int(rows[node]) == sum(int(rows[k]) for k in kids)
        assert rows[node] in ("✕", f"{true_count(node, 'Total'):,}")


def test_other_lengths_give_another_table_not_the_cached_one():
    """The cached table is keyed by the code list: prefix lengths 1 after 1,3 drop the
    middle level."""
    at = with_prefixes(code_page(), "1,3")
    at.text_input(key="w_tables_h_prefix_nace").input("1").run()
    assert not at.exception and not at.error
    pivot = suppression_block(at).dataframe[0].value
    assert list(pivot.index) == [*CODES, "C", "D", "Total"]
    assert pivot.loc["D", "Total"] == f"{true_count('D', 'Total'):,}"
    at.radio(key="w_tables_h_kind_nace").set_value("none").run()
    assert list(suppression_block(at).dataframe[0].value.index) == [*CODES, "Total"]
    assert not [i for i in at.info if i.value == HIERARCHY_REFUSED]


def test_the_settings_survive_a_page_change():
    at = with_prefixes(code_page(), "1,3")
    at.switch_page("views/data.py").run()
    at.switch_page("views/tables.py").run()
    assert at.radio(key="w_tables_h_kind_nace").value == "prefix"
    assert at.text_input(key="w_tables_h_prefix_nace").value == "1,3"
    assert_inner_rows_add_up(at)


# -- the hostile corpus ------------------------------------------------------------------------

def refused_once(at: AppTest, *words: str) -> str:
    """The page's one error about the code list (no exception, no table), holding ``words``."""
    assert not at.exception
    errors = [plain(e.value) for e in at.error]
    assert len(errors) == 1, errors
    assert errors[0].startswith("Code list of nace: ")
    for word in words:
        assert word in errors[0], errors[0]
    assert not [c for c in at.columns if [s.value for s in c.subheader] == ["Suppression"]]
    assert not leaks(at)
    return errors[0]


@pytest.mark.parametrize("text, words", [
    ("abc", ["whole numbers"]),
    ("0", ["increasing whole numbers"]),
    ("2,2", ["increasing"]),
    ("-1", ["increasing"]),
    ("9" * 99, ["whole numbers"]),
    ("99999", ["from 1 to 200"]),
    ("2,4,", ["whole numbers"]),
    ("__import__('os')", ["whole numbers"]),
    ("1;3", ["whole numbers"]),
])
def test_bad_prefix_text_is_one_sentence(text, words):
    refused_once(with_prefixes(code_page(), text), *words)


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("name, raw, words", [
    ("cycle.csv", b"C,D\nD,C\n", ["cycle"]),
    ("orphan.csv", b"C101,C10\n", ["not a code of the hierarchy"]),
    ("absent.csv", b"C101,\nC102,\n", ["which its hierarchy does not hold"]),
    ("inner.csv", b"C101,\nC102,C101\nC201,\nD351,\nD352,\n", ["must be a leaf"]),
    ("bad.json", b'{"C101": "C10",', ["not valid JSON"]),
    ("list.json", b'["C101", "C10"]', ["JSON object"]),
    ("deep.json", DEEP.encode(), ["nested too deeply"]),
    ("number.json", b'{"C101": 3}', ["must be text"]),
    ("twice.json", b'{"C": null, "C": null}', ["twice"]),
    ("total.csv", b"Total,\n", ["grand total"]),
    ("latin.csv", "Café,\n".encode("latin-1"), ["not UTF-8"]),
    ("three.csv", b"a,b,c\n", ["two fields"]),
    ("huge.csv", b"C,\n" * (MAX_CODE_LIST_BYTES // 3 + 1), ["at most"]),
    ("tall.csv", ("\n".join(f"L{i},{f'L{i - 1}' if i else ''}"
                            for i in range(MAX_DEPTH + 1)) + "\n").encode(), ["deeper than"]),
])
def test_hostile_code_list_files_are_one_sentence(name, raw, words):
    refused_once(with_file(code_page(), name, raw), *words)


def test_a_list_code_absent_from_the_data_is_left_out():
    """A code of the list with no record below it has no row (docs/tables.md: it is left
    out), the page names it as the command line does, and the table is built."""
    raw = b"C,\nD,\nE,\nC10,C\nC20,C\nD35,D\nE99,E\nC101,C10\nC102,C10\nC201,C20\n" \
          b"D351,D35\nD352,D35\n"
    at = with_file(code_page(), "extra.csv", raw)
    assert not at.exception and not at.error
    assert_inner_rows_add_up(at)
    notes = [plain(c.value) for c in at.caption if "no record" in c.value]
    assert len(notes) == 1 and "2 codes of the code list of 'nace' have no record and are " \
        "left out ('E', 'E99')" in notes[0]
    assert not any("no record" in c.value for c in with_prefixes(code_page(), "1,3").caption)


def test_the_size_bound_holds_below_the_cores():
    assert MAX_CODE_LIST_BYTES <= MAX_BYTES


def test_codes_that_are_markdown_or_html_stay_text():
    """Codes of the data and the list that are a Markdown image, a link and HTML are shown as
    those characters (a dataframe's text, an escaped message), never rendered."""
    html = "<img src=x onerror=alert(1)>"
    rows = ["code,size"] + [f"\"{c}\",{s}" for c in (IMAGE, LINK, html) for s in "sl"
                            for _ in range(6)]
    at = app_test(timeout=60).run()
    at.file_uploader(key="uploader").set_value(
        ("h.csv", ("\n".join(rows) + "\n").encode(), "text/csv")).run()
    at.switch_page("views/tables.py").run()
    at.radio(key="w_tables_kind").set_value(CROSS).run()
    at.multiselect(key="w_tables_cross").set_value(["code", "size"]).run()
    at.radio(key="w_tables_h_kind_code").set_value("file").run()
    listed = {IMAGE: f"**bold** {html}", LINK: f"**bold** {html}", html: f"**bold** {html}",
              f"**bold** {html}": None}
    at.file_uploader(key="tables_h_file_code").set_value(
        ("x.json", json.dumps(listed).encode(), "text/plain")).run()
    assert not at.exception and not at.error and not leaks(at)
    pivot = suppression_block(at).dataframe[0].value
    assert set(pivot.index) == {IMAGE, LINK, html, f"**bold** {html}", "Total"}
    assert pivot.loc[f"**bold** {html}", "Total"] == "36"
    # a refused list names the hostile code escaped, in one sentence
    at.file_uploader(key="tables_h_file_code").set_value(
        ("y.json", json.dumps({IMAGE: LINK}).encode(), "text/plain")).run()
    assert not at.exception and len(at.error) == 1 and not leaks(at)
    assert "not a code of the hierarchy" in plain(at.error[0].value)
