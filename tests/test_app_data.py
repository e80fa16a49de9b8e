"""AppTest of the Data page: example, uploads, role tagging."""

import io

import pandas as pd
import pytest

from tests.apptest import app_test, tiles
from tests.conftest import plain


@pytest.fixture
def at():
    app = app_test(timeout=60)
    app.run()
    assert not app.exception
    return app


def test_starts_with_the_example_loaded_and_tagged(at):
    assert at.title[0].value == "Data"
    assert tiles(at)[0].value == "2,139"
    assert tiles(at)[1].value == "27"
    assert at.multiselect(key="w_qi").value == ["age", "gender", "race"]
    assert at.multiselect(key="w_sensitive").value == ["treat"]
    assert at.multiselect(key="w_ignore").value == ["pidnum"]
    assert "ACTG 175" in at.sidebar.markdown[0].value


def test_roles_survive_a_rerun_and_reach_the_state(at):
    at.multiselect(key="w_qi").set_value(["age", "gender"]).run()
    at.multiselect(key="w_sensitive").set_value(["treat", "drugs"]).run()
    assert not at.exception
    roles = at.session_state["roles"]
    assert roles.qi == ["age", "gender"] and roles.sensitive == ["treat", "drugs"]
    assert "age, gender" in at.sidebar.markdown[1].value


def test_contradictory_roles_are_flagged(at):
    at.multiselect(key="w_sensitive").set_value(["treat", "age"]).run()
    assert any("age: tagged both quasi-identifier and sensitive" in plain(w.value)
               for w in at.warning)


def test_upload_replaces_the_example_with_suggested_roles(at):
    df = pd.DataFrame({"id": range(100, 130), "age": [20 + i % 12 for i in range(30)],
                       "sex": ["F", "M"] * 15, "income": [1000.5 + 37 * i for i in range(30)]})
    raw = df.to_csv(sep=";", index=False).encode()
    at.file_uploader[0].set_value(("survey.csv", raw, "text/csv")).run()
    assert not at.exception and not at.error
    assert tiles(at)[0].value == "30"
    assert at.multiselect(key="w_qi").value == ["age", "sex"]
    assert at.multiselect(key="w_ignore").value == ["id"]
    assert at.multiselect(key="w_numeric").value == ["age", "income"]
    assert plain(at.subheader[0].value) == "survey.csv"


@pytest.mark.parametrize("name, raw, message", [
    ("empty.csv", b"", "empty.csv: file is empty"),
    ("broken.parquet", b"not parquet at all", "broken.parquet: cannot be read as PARQUET"),
])
def test_bad_upload_shows_an_error_and_keeps_the_data(at, name, raw, message):
    at.file_uploader[0].set_value((name, raw, "application/octet-stream")).run()
    assert not at.exception
    assert len(at.error) == 1 and message in plain(at.error[0].value)
    assert tiles(at)[0].value == "2,139"  # the example is still there


def test_markdown_in_column_names_is_shown_as_text(at):
    df = pd.DataFrame({"![x](http://example.invalid/a.png)": ["a", "b"] * 15,
                       "age": list(range(30))})
    buf = io.BytesIO()
    df.to_parquet(buf)
    at.file_uploader[0].set_value(("evil.parquet", buf.getvalue(), "x")).run()
    at.multiselect(key="w_qi").set_value(["![x](http://example.invalid/a.png)"]).run()
    sidebar = at.sidebar.markdown[1].value
    assert "\\!\\[x\\]\\(http\\:" in sidebar and "](http" not in sidebar


def test_roles_survive_page_switches(at):
    at.multiselect(key="w_qi").set_value(["age", "race"]).run()
    at.switch_page("views/risk.py").run()
    assert "w_qi" not in at.session_state  # Streamlit drops the widget's key off its page
    at.switch_page("views/data.py").run()
    assert not at.exception
    assert at.multiselect(key="w_qi").value == ["age", "race"]


def test_an_upload_shows_its_stages_and_ends_loaded(at):
    csv = b"age;sex;income\n" + b"".join(f"{20 + i % 50};{'FM'[i % 2]};{i}\n".encode()
                                           for i in range(300))
    at.file_uploader[0].set_value(("survey.csv", csv, "text/csv")).run()
    assert not at.exception
    status = at.status[0]
    assert status.label == "Loaded survey\\.csv: 300 records × 3 columns"
    stages = [m.value for m in status.markdown]
    assert stages[:3] == ["Reading the file…", "Detecting column kinds of 300 records × 3 "
                          "columns…", "Suggesting column roles…"]
    assert stages[3] == "Computing risk on the suggested quasi-identifiers…"  # age, sex
    assert "pending_upload" not in at.session_state
    assert tiles(at)[0].value == "300"


RESUME = """
from ui import state, upload
upload.finish_pending()
state.ensure_dataset()
"""


@pytest.mark.parametrize("read_already", [False, True])
def test_an_upload_interrupted_by_a_page_change_goes_on_loading(read_already):
    """Streamlit stops a run when the user changes page; the entry point (app.py) of the next
    run, on the new page, finishes the pending upload and says so (AppTest does not rerun
    app.py itself, so the entry point's two calls are run here; the browser test covers the
    real page change)."""
    at = app_test(RESUME, timeout=60).run()
    pending = {"raw": b"city;n\nA;1\nB;2\nC;3\n", "name": "t.csv"}
    if read_already:
        pending["df"] = pd.DataFrame({"city": ["A", "B", "C"], "n": [1, 2, 3]})
    at.session_state["pending_upload"] = pending
    at.run()
    assert not at.exception
    status = at.status[0]
    assert status.label == "Loaded t\\.csv: 3 records × 2 columns"
    assert ("Reading the file…" in [m.value for m in status.markdown]) is not read_already
    assert at.session_state["dataset"].name == "t.csv"
    assert "pending_upload" not in at.session_state


def test_a_bad_pending_upload_is_reported_not_kept():
    at = app_test(RESUME, timeout=60).run()
    at.session_state["pending_upload"] = {"raw": b"\x00\x01garbage", "name": "t.parquet"}
    at.run()
    assert not at.exception
    assert at.status[0].label == "t\\.parquet was not loaded"
    assert at.session_state["upload_error"] and "pending_upload" not in at.session_state
    assert at.session_state["dataset"].is_example  # the previous data set stays


def test_whole_households_open_with_their_household_id(at):
    """The households example opens with its household id; the page says how many households
    and which columns are constant within them; the sidebar names it; 'none' clears it."""
    at.selectbox(key="example_pick").set_value("households")
    next(b for b in at.button if b.label == "Load built-in data").click().run()
    assert not at.exception and not at.error
    assert at.selectbox(key="w_household").value == "hid"
    assert at.session_state["roles"].household == "hid"
    caption = next(plain(c.value) for c in at.caption if "households of" in c.value)
    assert caption.startswith("1,200 households of 2.53 records on average in hid.")
    assert ("Constant within every household (household-level): region, district, hsize, "
            "htype, tenure, benefit, weight") in caption
    assert "Household: hid" in plain(at.sidebar.markdown[1].value)
    at.selectbox(key="w_household").set_value(None).run()
    assert at.session_state["roles"].household is None
    assert not any("households of" in c.value for c in at.caption)
    assert "Household:" not in plain(at.sidebar.markdown[1].value)


def test_a_household_id_that_is_also_a_key_is_flagged(at):
    at.selectbox(key="w_household").set_value("age").run()
    assert not at.exception
    assert any("household id cannot also be" in w.value for w in at.warning)
    at.selectbox(key="w_household").set_value("cd496").run()  # 797 blanks
    assert not at.exception
    assert any("'cd496' has 797 blank id(s)" in plain(w.value) for w in at.warning)


# -- the same table in another file (issue 50) -------------------------------------------------

def parquet(df: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    df.to_parquet(buf, index=False)
    return buf.getvalue()


def tagged_panel(at, df: pd.DataFrame):
    """The panel COUNT/rwm5yr uploaded as CSV, its keys, person id and numeric columns tagged
    (roles no suggestion gives: the steward's own)."""
    from tests import rwm5yr

    at.file_uploader[0].set_value(("rwm5yr.csv", rwm5yr.csv_bytes(df), "text/csv")).run()
    at.multiselect(key="w_qi").set_value(rwm5yr.KEYS).run()
    at.multiselect(key="w_sensitive").set_value(["outwork"]).run()
    at.multiselect(key="w_numeric").set_value(["docvis", "hhninc"]).run()
    at.selectbox(key="w_household").set_value(rwm5yr.ID).run()
    assert not at.exception
    return at.session_state["roles"]


def test_the_same_table_in_another_format_keeps_its_roles_and_says_so(at):
    from tests import rwm5yr

    df = rwm5yr.persons(400)
    tagged = tagged_panel(at, df)
    at.file_uploader[0].set_value(("rwm5yr.parquet", parquet(df), "application/octet-stream")
                                  ).run()
    assert not at.exception and not at.error
    assert plain(at.subheader[0].value) == "rwm5yr.parquet"
    assert at.session_state["roles"] == tagged
    assert at.multiselect(key="w_qi").value == rwm5yr.KEYS  # the widgets show them
    assert at.selectbox(key="w_household").value == rwm5yr.ID
    said = [plain(s.value) for s in at.success]
    assert any("The roles of rwm5yr.csv are kept: rwm5yr.parquet has the same columns" in s
               for s in said), said


def test_a_column_now_read_as_text_loses_its_numeric_role_and_that_is_said(at):
    from tests import rwm5yr

    df = rwm5yr.persons(400)
    tagged = tagged_panel(at, df)
    text = df.assign(hhninc=df["hhninc"].map(lambda v: f"{v:.2f} DM"))
    at.file_uploader[0].set_value(("rwm5yr.parquet", parquet(text), "application/octet-stream")
                                  ).run()
    assert not at.exception
    roles = at.session_state["roles"]
    assert roles.numeric == ["docvis"] and roles.qi == tagged.qi and roles.household == "id"
    said = [plain(w.value) for w in at.warning]
    assert any("are kept" in w and "Not kept: hhninc: a numeric column for utility holds "
               "numbers; this file reads it as text" in w for w in said), said


def test_another_version_of_the_table_says_why_its_roles_are_suggested_afresh(at):
    from tests import rwm5yr

    df = rwm5yr.persons(400)
    tagged_panel(at, df)
    fewer = df.drop(columns=["kids"]).rename(columns={"educ": "education"})
    at.file_uploader[0].set_value(("rwm5yr_v2.parquet", parquet(fewer),
                                   "application/octet-stream")).run()
    assert not at.exception
    said = [plain(w.value) for w in at.warning if "suggested afresh" in plain(w.value)]
    assert said == ["The roles of rwm5yr_v2.parquet are suggested afresh, not kept from "
                    "rwm5yr.csv: its columns are not those of the table before (not in it: "
                    "kids, educ; new: education)."]
    assert at.session_state["roles"].household is None  # suggested: id is not named like one


def test_an_unrelated_table_gets_suggested_roles_without_a_word(at):
    df = pd.DataFrame({"age": [20 + i % 12 for i in range(30)], "sex": ["F", "M"] * 15})
    at.file_uploader[0].set_value(("other.csv", df.to_csv(index=False).encode(), "text/csv")
                                  ).run()
    assert not at.exception
    assert not [w for w in (*at.warning, *at.success) if "roles" in plain(w.value)]


def test_a_hostile_file_name_in_the_roles_notice_stays_text(at):
    from tests.hostile_text import IMAGE, leaks

    df = pd.DataFrame({"age": [20 + i % 12 for i in range(30)], "sex": ["F", "M"] * 15})
    at.file_uploader[0].set_value((f"{IMAGE}.csv", df.to_csv(index=False).encode(), "text/csv")
                                  ).run()
    at.file_uploader[0].set_value((f"**bold**{IMAGE}.parquet", parquet(df),
                                   "application/octet-stream")).run()
    assert not at.exception
    assert any("are kept" in plain(s.value) for s in at.success)
    assert not leaks(at)
