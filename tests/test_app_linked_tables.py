"""AppTest of the Tables page's "Add a table": tables added to the cross table being built are
published together by suppression (docs/tables.md, "Linked tables", "On the Tables page"): the
joint audit's line, each table's cells, the command line's long CSV, the core's refusals as
messages, hostile column names as text, and the added tables kept through a rerun."""

from streamlit.testing.v1 import AppTest

from sdc_core.data.io import EXAMPLE_PATH, read_table, table_bytes
from sdc_core.tables.cell_rules import Rule
from sdc_core.tables.linked import release_linked
from tests.apptest import app_test, downloads
from tests.cli_run import run
from tests.conftest import plain
from tests.hostile_text import IMAGE, LINK, hostile_csv, leaks
from ui.logic.cross_tables import LINKED_REFUSED, PARTS

ADD = "tables_add_table"
CROSS = PARTS[1]


def cross_page(columns: list[str]) -> AppTest:
    """The Tables page's cross table of ``columns`` on the built-in data set."""
    at = app_test(timeout=60).run()
    at.switch_page("views/tables.py").run()
    at.radio(key="w_tables_kind").set_value(CROSS).run()
    at.multiselect(key="w_tables_cross").set_value(columns).run()
    assert not at.exception
    return at


def add_table(at: AppTest, columns: list[str], place: int = 0) -> AppTest:
    """Click "Add a table" and choose the added table's columns."""
    at.button(key=ADD).click().run()
    assert not at.exception
    at.multiselect(key=f"w_tables_added_{place}").set_value(columns).run()
    assert not at.exception
    return at


def audit_lines(at: AppTest) -> list[str]:
    return [plain(e.value) for e in [*at.success, *at.error]
            if "protected together" in plain(e.value)]


def test_a_second_table_sharing_a_column_is_published_together():
    df = read_table(EXAMPLE_PATH)
    at = add_table(cross_page(["race", "karnof"]), ["race", "gender"])
    made = release_linked(df, [["race", "karnof"], ["race", "gender"]],
                          rule=Rule("threshold", (5,)))
    lines = audit_lines(at)
    assert len(lines) == 1 and "These 2 tables are protected together" in lines[0]
    assert ("joint audit passed" if made.passes() else "joint audit FAILED") in lines[0]
    assert LINKED_REFUSED in [i.value for i in at.info]
    assert len(at.dataframe) == 2  # one per table; the three methods' columns are gone
    frame = made.frame()
    for shown, table in zip(at.dataframe, made.tables):
        view = shown.value
        assert list(view.columns) == [*table, "count", "status"]
        want = frame[frame["table"] == ",".join(table)]
        assert view["status"].tolist() == want["status"].tolist()
        assert view[list(table)].values.tolist() == want[list(table)].astype(str).values.tolist()
        assert [v for v, s in zip(view["count"], view["status"]) if s != "published"] == \
            ["✕"] * int((want["status"] != "published").sum())
    assert [d.proto.label for d in at.get("download_button")] == ["CSV (all the tables)"]


def test_the_download_is_the_command_lines_file(monkeypatch, tmp_path):
    made = downloads(monkeypatch)
    df = read_table(EXAMPLE_PATH)
    at = add_table(cross_page(["race", "karnof"]), ["race", "gender"])
    at.number_input(key="w_tables_cross_t").set_value(8).run()
    assert not at.exception
    release = release_linked(df, [["race", "karnof"], ["race", "gender"]],
                             rule=Rule("threshold", (8,)))
    assert made["dl_tables_linked_csv"] == table_bytes(release.frame(), ".csv")
    out = tmp_path / "linked.csv"
    done = run("tables", EXAMPLE_PATH, "--cross", "race,karnof", "--cross", "race,gender",
               "--rule", "threshold:8", "-o", out)
    assert done.returncode == 0, done.stderr
    assert made["dl_tables_linked_csv"] == out.read_bytes()


def test_a_set_of_four_columns_is_refused_in_one_message():
    at = add_table(cross_page(["race", "karnof"]), ["gender", "symptom"])
    assert not at.exception
    errors = [plain(e.value) for e in at.error]
    assert len(errors) == 1 and "span 4 columns" in errors[0] and "at most 3" in errors[0]
    assert not at.dataframe


def test_a_table_given_twice_is_refused():
    at = add_table(cross_page(["race", "karnof"]), ["karnof", "race"])
    errors = [plain(e.value) for e in at.error]
    assert not at.exception and len(errors) == 1 and "twice" in errors[0]


def test_added_tables_are_kept_and_removed():
    at = add_table(cross_page(["race", "karnof"]), ["race", "gender"])
    at = add_table(at, ["karnof"], place=1)
    assert len(at.dataframe) == 3 and "These 3 tables" in audit_lines(at)[0]
    at.number_input(key="w_tables_cross_t").set_value(6).run()  # a rerun keeps them
    assert at.multiselect(key="w_tables_added_1").value == ["karnof"]
    at.switch_page("views/data.py").run()  # and so does a visit to another page
    at.switch_page("views/tables.py").run()
    assert at.multiselect(key="w_tables_added_0").value == ["race", "gender"]
    assert at.multiselect(key="w_tables_added_1").value == ["karnof"]
    at.button(key="tables_remove_0").click().run()
    assert not at.exception
    assert at.multiselect(key="w_tables_added_0").value == ["karnof"]
    assert not [m for m in at.multiselect if m.key == "w_tables_added_1"]
    at.button(key="tables_remove_0").click().run()
    assert not at.exception and not audit_lines(at)
    assert at.button(key=ADD).click().run().multiselect(key="w_tables_added_0").value == []
    assert len(at.columns) >= 3  # one table again: the three methods side by side


def test_hostile_column_names_stay_text():
    at = app_test(timeout=60).run()
    at.file_uploader(key="uploader").set_value((f"{IMAGE}.csv", hostile_csv(), "text/csv")).run()
    at.switch_page("views/tables.py").run()
    at.radio(key="w_tables_kind").set_value(CROSS).run()
    at.multiselect(key="w_tables_cross").set_value([IMAGE, LINK]).run()
    add_table(at, [IMAGE, "sex"])
    assert not at.exception and not leaks(at)
    assert len(at.dataframe) == 2 and audit_lines(at)
    assert IMAGE in at.dataframe[1].value.columns
    add_table(at, [LINK, "age"], place=1)  # four columns: refused, the names escaped
    assert not at.exception and not leaks(at)
    assert any("span 4 columns" in plain(e.value) for e in at.error)
