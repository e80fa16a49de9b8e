"""AppTest of the Tables page: the answer counts, and the cross table with margins by
suppression, differential privacy and the cell key method side by side, its downloads and the
report's section."""

from sdc_core.io import EXAMPLE_PATH, read_table, table_bytes
from sdc_core.names import count_text
from sdc_core.table_release import release_table
from tests.apptest import app_test, downloads
from tests.conftest import plain
from tests.hostile_text import IMAGE, LINK, hostile_csv, leaks
from ui.logic.cross_tables import SUMS_REFUSED

PETS = "Example: the pet survey (100 participants)"


def open_page():
    at = app_test(timeout=60).run()
    at.switch_page("views/tables.py").run()
    assert not at.exception
    return at


def test_pet_example_shows_the_seed_table_and_passes_the_audit():
    at = open_page()
    at.radio(key="w_tables_source").set_value(PETS).run()
    assert not at.exception
    published = at.dataframe[0].value
    assert published["responses"].tolist() == ["42", "33", "9", "less than 5", "less than 5",
                                               "between 8 and 16"]
    raw = at.dataframe[1].value
    assert raw["responses"].tolist() == [42, 33, 9, 2, 4, 10]
    assert "Audit passed" in at.success[0].value
    assert any("private" in m.value for m in at.markdown)
    assert at.get("download_button")


def test_thresholds_hide_a_question_and_naive_leak_is_explained():
    at = open_page()
    at.radio(key="w_tables_source").set_value(PETS).run()
    at.number_input(key="w_tables_q").set_value(95).run()
    assert "Hidden: fewer than 95 responses" in at.warning[0].value
    at.number_input(key="w_tables_q").set_value(10).run()
    expander_text = " ".join(plain(m.value) for m in at.markdown)  # findings are escaped
    assert "Elephant: the non-response figure narrows its count to 2–4" in expander_text
    at.number_input(key="w_tables_t").set_value(10).run()
    assert at.dataframe[0].value["responses"].tolist()[2] == "less than 10"  # Dolphin 9


def test_current_data_set_questions():
    at = open_page()
    at.multiselect(key="w_tables_questions_Current").set_value(["race", "karnof"]).run()
    assert not at.exception and len(at.subheader) == 2


# -- cross tables with margins ----------------------------------------------------------------

CROSS = "Cross table with margins"
TITLES = {"suppress": "Suppression", "dp": "Differential privacy", "ckm": "Cell key method"}


def cross_page(columns: list[str]):
    at = open_page()
    at.radio(key="w_tables_kind").set_value(CROSS).run()
    assert not at.exception
    at.multiselect(key="w_tables_cross").set_value(columns).run()
    assert not at.exception
    return at


def method_block(at, method: str):
    """The column of the page that shows one method (headed by its title)."""
    found = [c for c in at.columns if [s.value for s in c.subheader] == [TITLES[method]]]
    assert len(found) == 1, method
    return found[0]


def test_the_cross_table_shows_three_methods_side_by_side():
    df = read_table(EXAMPLE_PATH)
    at = cross_page(["race", "karnof"])
    assert at.radio(key="w_tables_kind").options == ["Answer counts", CROSS]
    made = release_table(df, ["race", "karnof"], rule="threshold:5")
    assert not made.hidden().empty  # karnof 70 is small: the check below can fail
    block = method_block(at, "suppress")
    pivot = block.dataframe[0].value
    assert list(pivot.columns) == sorted({str(v) for v in df["karnof"]}, key=int) + ["Total"]
    shown_hidden = {(str(r), str(c)) for r in pivot.index for c in pivot.columns
                    if pivot.loc[r, c] == "✕"}
    want = {(str(a), str(b)) for a, b in made.hidden()[["race", "karnof"]].values}
    assert shown_hidden == want
    for r, c in [(r, c) for r in pivot.index for c in pivot.columns if (r, c) not in want]:
        true = ((df["race"].astype(str) == r) | (r == "Total")) & (
            (df["karnof"].astype(str) == c) | (c == "Total"))
        assert pivot.loc[r, c] == f"{int(true.sum()):,}"  # counted here, not by the core
    assert any(s.value.startswith("Audit passed") for s in block.success)
    dp = method_block(at, "dp")
    protection = dp.dataframe[-1].value
    assert dict(zip(protection["measure"], protection["value"]))["ε"] == "1"
    assert any("ε = 1" in c.value for c in dp.caption)
    ckm = method_block(at, "ckm")
    assert any("counts below 10 are blank" in c.value for c in ckm.caption)
    at.number_input(key="w_tables_eps").set_value(0.5).run()
    protection = method_block(at, "dp").dataframe[-1].value
    assert dict(zip(protection["measure"], protection["value"]))["ε"] == "0.5"


def test_a_table_of_sums_is_published_by_suppression_alone():
    at = cross_page(["race", "gender"])
    at.selectbox(key="w_tables_cross_sum").set_value("cd40").run()
    assert not at.exception
    assert at.number_input(key="w_tables_eps").disabled
    for method in ("dp", "ckm"):
        block = method_block(at, method)
        assert [i.value for i in block.info] == [SUMS_REFUSED] and not block.dataframe
    assert method_block(at, "suppress").dataframe
    assert at.radio(key="w_tables_cross_rule").value == "p"


def test_the_downloads_are_the_command_lines_table(monkeypatch):
    made = downloads(monkeypatch)
    df = read_table(EXAMPLE_PATH)
    cross_page(["race", "karnof"])
    for method in ("suppress", "dp", "ckm"):
        release = release_table(df, ["race", "karnof"], method=method, rule="threshold:5")
        frame = release.frame[["race", "karnof", release.value, "status"]]
        assert made[f"dl_tables_{method}_csv"] == table_bytes(frame, ".csv"), method
    excel = made["dl_tables_suppress_xlsx"]()
    assert excel == table_bytes(release_table(df, ["race", "karnof"]).frame[
        ["race", "karnof", "count", "status"]], ".xlsx")


def test_the_report_has_the_published_tables(monkeypatch):
    made = downloads(monkeypatch)
    df = read_table(EXAMPLE_PATH)
    at = cross_page(["race", "karnof"])
    at.switch_page("views/export.py").run()
    assert not at.exception
    html = made["dl_report"]().decode()
    assert "<h2>Published tables</h2>" in html
    releases = {m: release_table(df, ["race", "karnof"], method=m) for m in TITLES}
    for m, release in releases.items():
        assert f"<th>{TITLES[m]}</th>" in html
        assert f"<td>{count_text(release.utility.absD)}</td>" in html
    dp = releases["dp"].frame
    accuracy = dp.loc[~dp["margin"], "accuracy"].max()
    assert f"<td>±{accuracy:.4g}</td>" in html
    assert "<td>passes</td>" in html and "Audit passed" in html
    assert html.count("<td>✕</td>") == len(releases["suppress"].hidden())


def test_the_report_leaves_tables_out_until_one_is_shown(monkeypatch):
    made = downloads(monkeypatch)
    at = open_page()
    at.switch_page("views/export.py").run()
    assert "Published tables" not in made["dl_report"]().decode()


def test_hostile_column_names_as_table_columns_stay_text():
    at = app_test(timeout=60).run()
    at.file_uploader(key="uploader").set_value((f"{IMAGE}.csv", hostile_csv(), "text/csv")).run()
    at.switch_page("views/tables.py").run()
    at.radio(key="w_tables_kind").set_value(CROSS).run()
    at.multiselect(key="w_tables_cross").set_value([IMAGE, LINK]).run()
    assert not at.exception and not leaks(at)
    pivot = method_block(at, "suppress").dataframe[0].value
    assert pivot.index.name == IMAGE and pivot.columns.name == LINK
    assert any("127\\.0\\.0\\.1" in s.value for s in at.subheader)  # named, escaped


def test_a_table_the_core_refuses_is_an_error_not_a_traceback():
    at = app_test(timeout=60).run()
    rows = ["a,b"] + [f"{'Total' if i % 4 == 0 else 'x'},{'u' if i % 3 else 'v'}"
                      for i in range(40)]
    at.file_uploader(key="uploader").set_value(
        ("t.csv", ("\n".join(rows) + "\n").encode(), "text/csv")).run()
    at.switch_page("views/tables.py").run()
    at.radio(key="w_tables_kind").set_value(CROSS).run()
    at.multiselect(key="w_tables_cross").set_value(["a", "b"]).run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 3 and all("Total" in e and "margin" in e for e in errors)


def test_differencing_and_dp_nonresponse_are_the_cores():
    """The differencing part gives each method's summary of ``differencing_risk`` for the
    levels chosen, and the DP column the non-response a reader works out from its counts."""
    from sdc_core.differencing import differencing_risk

    df = read_table(EXAMPLE_PATH)
    at = cross_page(["race", "karnof"])
    dp = method_block(at, "dp")
    made = release_table(df, ["race", "karnof"], method="dp", rule="threshold:5")
    cells = made.frame.loc[~made.frame["margin"], "count"].astype(float)
    derived = max(0.0, len(df) - float(cells.sum()))
    assert any(f"= {derived:,.0f} (true {made.truth.left_out:,})" in plain(c.value)
               for c in dp.caption)
    at.selectbox(key="w_tables_diff_column").set_value("karnof").run()
    at.multiselect(key="w_tables_diff_levels_karnof").set_value(["70", "80"]).run()
    assert not at.exception and not at.error
    shown = " ".join(plain(c.value) for c in at.caption)
    for method in ("suppress", "dp", "ckm"):
        want = differencing_risk(df, ["race", "karnof"], "karnof", ["70", "80"], method,
                                 "threshold:5").summary()
        assert want in shown, method
