"""AppTest of the Protect page's "Does the analysis hold?" panel and its editor (issue 26,
item 4): the built-in example's analyses compared on every move, with the core's figures;
changes of the spec tried on the data before they are kept; user text shown as text."""

import json

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from sdc_core.data.io import EXAMPLE_PATH, read_table
from sdc_core.examples import example
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.utility.analysis import parse_spec
from sdc_core.utility.validity import Validity, term_holds, verdict_text, worst_term
from tests.apptest import app_test, editing, errors, opened, protect_page, spec, tile_notes, tiles
from tests.cli_run import run
from tests.conftest import plain
from tests.hostile_text import leaks
from ui.logic.text import md

HOSTILE = "**bold** <img src=x onerror=alert(1)>"
QI = ["age", "gender", "race"]


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in tiles(at) if m.label == label)


def verdicts(at: AppTest) -> list[str]:
    """Each analysis's verdict line, under the headline tiles: after the rule of a verdict,
    before the propensity score and its rule."""
    return tile_notes(at, "mean CI overlap")[1:-2]


def interval_chart(at: AppTest) -> dict | None:
    """The figure of the panel's interval chart, if it is drawn."""
    charts = [c for c in at.get("plotly_chart") if c.key == "an_chart"]
    return json.loads(charts[0].proto.spec) if charts else None


def add(at: AppTest, kind: str, name: str, **fields) -> AppTest:
    """Open the editor, fill the "Add an analysis" fields and click Add."""
    editing(at).selectbox(key="w_an_kind").set_value(kind).run()
    at.text_input(key="w_an_name").set_value(name)
    for key, value in fields.items():
        widget = {"formula": at.text_input, "columns": at.multiselect}.get(key, at.selectbox)
        widget(key=f"w_an_{key}").set_value(value)
    at.button(key="w_an_add").click().run()
    assert not at.exception
    return at


def test_the_example_holds_before_protection():
    at = protect_page()
    assert metric(at, "mean CI overlap") == "1.000"
    assert metric(at, "worst-table TVD") == "0.000"
    lines = verdicts(at)
    for a in example("actg175").analyses["analyses"]:
        assert any(line.startswith(f"{a['name']}: holds (") for line in lines), lines
    assert any(e.label == "Benchmark analyses (2)" for e in at.expander)


def banded_by_10() -> tuple[AppTest, pd.DataFrame, pd.DataFrame]:
    """The Protect page with age in bands of 10, the example table and the core's release of
    the page's recipe."""
    at = protect_page()
    at.slider(key="w_p_band_age").set_value(10).run()
    assert not at.exception
    steps = at.session_state["protect"].steps(QI)
    df = read_table(EXAMPLE_PATH)
    released = apply_recipe(parse_recipe({"version": 1, "seed": 42, "steps": steps}), df).data
    return at, df, released


def test_banding_age_lowers_the_overlap_to_the_cores_figure():
    at, df, released = banded_by_10()
    report = Validity(parse_spec(example("actg175").analyses), df).compare(released)
    assert report.mean_ci_overlap < 1
    assert metric(at, "mean CI overlap") == f"{report.mean_ci_overlap:.3f}"
    assert metric(at, "worst-table TVD") == f"{report.worst_tvd:.3f}"
    assert metric(at, "S_pMSE") == f"{report.pmse.s_pmse:.3f}"
    first = report.analyses[0]
    assert verdicts(at) == [f"{r.name}: {verdict_text(r)}" for r in report.analyses]
    # every term of the analyses with intervals, its figures and the worst one marked, once
    # their fold is opened
    assert not any("worst" in d.value.columns for d in at.dataframe)
    opened(at, "an_details")
    every = next(d.value for d in at.dataframe if "worst" in d.value.columns
                 and "analysis" in d.value.columns)
    terms = [(r, t) for r in report.analyses if r.kind != "table" for t in r.terms]
    assert every["term"].tolist() == [t.term for _, t in terms]
    assert every["analysis"].tolist() == [r.name for r, _ in terms]
    assert every["CI overlap"].tolist() == pytest.approx([t.ci_overlap for _, t in terms],
                                                         nan_ok=True)
    assert every["std. difference"].tolist() == pytest.approx([t.std_diff for _, t in terms],
                                                              nan_ok=True)
    assert every["term holds"].tolist() == [term_holds(t) for _, t in terms]
    assert every["worst"].tolist() == [t is worst_term(r) for r, t in terms]
    named = [worst_term(r) for r in report.analyses if r.kind != "table"]
    assert every["worst"].sum() == sum(w is not None for w in named) >= 1
    assert interval_chart(at) is None  # the terms are drawn on demand
    at.selectbox(key="w_an_detail").set_value(first.name).run()
    terms = next(d.value for d in at.dataframe if "CI overlap" in d.value.columns
                 and "analysis" not in d.value.columns)
    assert terms["CI overlap"].tolist() == pytest.approx([t.ci_overlap for t in first.terms])
    chart = interval_chart(at)
    assert [t["name"] for t in chart["data"]] == ["original", "protected"]
    assert chart["data"][1]["y"] == [t.term for t in first.terms]


def test_adding_an_analysis_keeps_it_in_the_spec():
    at = add(protect_page(), "mean", "weight by sex", column="wtkg", by="gender")
    assert spec(at)["analyses"][-1] == {"name": "weight by sex", "kind": "mean",
                                        "column": "wtkg", "by": "gender"}
    assert any(e.label == "Benchmark analyses (3)" for e in at.expander)
    assert any(line.startswith("weight by sex: holds (") for line in verdicts(at))
    at = add(at, "ols", "cd4 model", formula="cd420 ~ age + C(arms)")
    assert spec(at)["analyses"][-1]["formula"] == "cd420 ~ age + C(arms)"
    at = add(at, "table", "race by sex", columns=["race", "gender"])
    assert spec(at)["analyses"][-1]["columns"] == ["race", "gender"]
    assert not errors(at)


@pytest.mark.parametrize("formula, words", [
    ("cd420 ~ age +", "the formula is refused at the end"),
    ("cd420 ~ age + nosuch", "the data has no column(s) nosuch"),
    ("cd420 ~ age + I(2 * age)", "the terms are collinear"),
])
def test_a_formula_that_does_not_fit_is_refused(formula, words):
    at = protect_page()
    before = spec(at)
    at = add(at, "ols", "bad", formula=formula)
    assert spec(at) == before
    assert any(words in e for e in errors(at)), errors(at)


def test_a_name_already_used_or_empty_is_refused():
    at = protect_page()
    before = spec(at)
    at = add(at, "mean", "CD4 at 20 weeks", column="wtkg")
    assert spec(at) == before and any("duplicate name" in e for e in errors(at))
    at = add(at, "mean", "  ", column="wtkg")
    assert spec(at) == before and any("name must be non-empty" in e for e in errors(at))


@pytest.mark.parametrize("raw, words", [
    (b"not json", "the analysis spec is not valid JSON"),
    (b"[" * 100_000, "the analysis spec is nested too deeply to be read"),
    (b'{"analyses": ' + b" " * 2_000_000 + b"[]}", "the analysis spec is larger than 2 MB"),
    (b"\xff\xfe{}", "the analysis spec is not UTF-8 text"),
    (b'{"analyses": []}', "'analyses' must be a non-empty list"),
    (json.dumps({"analyses": [{"name": "m", "kind": "mean", "column": "nosuch"}]}).encode(),
     "the data has no column(s) nosuch"),
])
def test_a_bad_spec_file_is_refused(raw, words):
    at = editing(protect_page())
    before = spec(at)
    at.file_uploader(key="analyses_upload").set_value(("spec.json", raw,
                                                       "application/json")).run()
    assert not at.exception
    assert spec(at) == before
    assert any(words in e for e in errors(at)), errors(at)


def test_a_spec_file_replaces_the_spec():
    new = {"confidence": 0.9, "analyses": [{"name": "weight", "kind": "mean",
                                            "column": "wtkg"}], "columns": ["wtkg", "age"]}
    at = editing(protect_page())
    at.file_uploader(key="analyses_upload").set_value(
        ("spec.json", json.dumps(new).encode(), "application/json")).run()
    assert not at.exception and not errors(at)
    assert spec(at) == parse_spec(new).to_json()
    assert at.number_input(key="w_an_confidence").value == 0.9
    assert at.multiselect(key="w_an_table_columns").value == ["wtkg", "age"]


def test_the_settings_change_the_spec():
    at = editing(protect_page())
    at.number_input(key="w_an_confidence").set_value(0.9).run()
    assert spec(at)["confidence"] == 0.9
    at.multiselect(key="w_an_table_columns").set_value(["age", "race"]).run()
    assert spec(at)["columns"] == ["age", "race"]
    opened(at, "an_details")
    tables = next(t.value for t in at.table if "false zeros" in t.value.columns)
    assert sorted(map(plain, tables["table"])) == ["age", "age × race", "race"]
    at.multiselect(key="w_an_table_columns").set_value([]).run()
    assert "columns" not in spec(at)


def test_a_hostile_name_is_shown_as_text():
    at = add(protect_page(), "mean", HOSTILE, column="wtkg")
    assert spec(at)["analyses"][-1]["name"] == HOSTILE
    shown = [m.value for m in at.markdown if HOSTILE in plain(m.value)]
    assert shown and all(md(HOSTILE) in m for m in shown)  # every character escaped
    assert any(line.startswith(f"{HOSTILE}: holds") for line in verdicts(at))  # as text
    assert not leaks(at)
    at.session_state["an_details"] = True
    at.slider(key="w_p_band_age").set_value(10).run()
    at.selectbox(key="w_an_detail").set_value(HOSTILE).run()
    assert not at.exception and not leaks(at)
    title = interval_chart(at)["layout"]["title"]["text"]
    assert "&lt;img" in title and "<img" not in title  # Plotly reads HTML in its text


def test_removing_analyses():
    at = editing(protect_page())
    at.button(key="w_an_remove_0").click().run()
    assert [a["name"] for a in spec(at)["analyses"]] == ["mean CD4 at 20 weeks by arm"]
    assert any(e.label == "Benchmark analyses (1)" for e in at.expander)
    at.button(key="w_an_remove_0").click().run()
    assert spec(at) is None
    assert any("No benchmark analyses for this data set" in m.value for m in at.markdown)
    assert not any(m.label == "mean CI overlap" for m in tiles(at))
    at = add(at, "mean", "weight", column="wtkg")
    assert spec(at) == {"confidence": 0.95, "analyses": [
        {"name": "weight", "kind": "mean", "column": "wtkg"}]}


def test_the_pmse_toggle():
    """In the editor (a setting of the analyses), kept when the editor is folded again."""
    at = protect_page()
    assert not any(t.key == "w_an_pmse" for t in at.toggle)  # folded with the editor
    editing(at)
    assert at.toggle(key="w_an_pmse").value  # 2139 rows: on
    at.toggle(key="w_an_pmse").set_value(False).run()
    assert metric(at, "S_pMSE") == "—"
    assert any("pMSE was not computed" in n for n in tile_notes(at, "S_pMSE"))
    at.session_state["w_an_editor"] = False
    at.slider(key="w_p_band_age").set_value(5).run()
    assert not any(t.key == "w_an_pmse" for t in at.toggle)
    assert metric(at, "S_pMSE") == "—"
    editing(at)
    assert not at.toggle(key="w_an_pmse").value


def test_the_export_page_reports_the_protect_pages_entry(monkeypatch):
    """One truth: the report's comparison is the object the Protect page showed."""
    import streamlit

    import ui.analyses
    seen, made = [], {}
    original, download = ui.analyses.validity_report, streamlit.download_button

    def recorded(*args, **kwargs):
        seen.append(original(*args, **kwargs))
        return seen[-1]

    def recording(label, data, *args, **kwargs):
        made[kwargs.get("key")] = data
        return download(label, data, *args, **kwargs)

    monkeypatch.setattr(ui.analyses, "validity_report", recorded)
    monkeypatch.setattr(streamlit, "download_button", recording)
    at = protect_page()
    at.slider(key="w_p_band_age").set_value(10).run()
    shown = metric(at, "mean CI overlap")
    at.switch_page("views/export.py").run()
    assert not at.exception
    assert len(seen) >= 2 and seen[-1] is seen[-2]
    assert f"{seen[-1].mean_ci_overlap:.3f}" == shown
    html = made["dl_report"]().decode()
    assert "<h2>Does the analysis hold?</h2>" in html
    assert f"<td>{seen[-1].mean_ci_overlap:.6g}</td>" in html


def test_a_spec_that_does_not_fit_the_data_is_said_not_raised():
    """A spec kept for other data (say, from an older workspace) is an error on the page and
    a warning on the Export page, never a traceback."""
    at = app_test().run()
    at.session_state["analyses"] = {"confidence": 0.95, "analyses": [
        {"name": "gone", "kind": "mean", "column": "nosuch"}]}
    at.switch_page("views/protect.py").run()
    assert not at.exception
    assert any("cannot be compared: analysis 'gone': the data has no column(s) nosuch" in e
               for e in errors(at)), errors(at)
    at.switch_page("views/export.py").run()
    assert not at.exception
    assert any("leaves out the benchmark analyses" in w.value for w in at.warning)


def test_the_cli_prints_the_verdict_lines_the_page_shows(tmp_path):
    at, df, released = banded_by_10()
    released.to_csv(tmp_path / "released.csv", index=False)
    (tmp_path / "spec.json").write_text(json.dumps(spec(at)))
    out = run("compare", EXAMPLE_PATH, tmp_path / "released.csv", "--analysis",
              tmp_path / "spec.json")
    assert out.returncode == 0, out.stderr
    shown = verdicts(at)
    assert len(shown) == len(spec(at)["analyses"]) and "worst term" in shown[0]
    printed = [line[2:] for line in out.stdout.splitlines() if line[2:] in shown]
    assert printed == shown


def test_a_reports_frames_are_built_once_and_equal_a_fresh_build():
    """Every session that reaches a release reads its cached report: the frames the panel
    shows are built once per report (ui.analyses.shown_frames), equal to a fresh build, and
    the memo keeps no more than its bound."""
    from ui import analyses
    from ui.logic.report import WORST_TABLES, tables_frame

    _, df, released = banded_by_10()
    validity = Validity(parse_spec(example("actg175").analyses), df)
    report = validity.compare(released)
    terms, worst = analyses.shown_frames(report)
    assert analyses.shown_frames(report)[0] is terms
    pd.testing.assert_frame_equal(terms, analyses.every_term(report))
    fresh = tables_frame(report.tables[:WORST_TABLES]).round(4)
    pd.testing.assert_frame_equal(worst, fresh.assign(table=fresh["table"].map(md)))
    other = validity.compare(df)  # an equal-looking report of another release: its own frames
    assert analyses.shown_frames(other)[0] is not terms
    for _ in range(analyses.SHOWN_KEPT + 3):
        analyses.shown_frames(validity.compare(df))
    assert len(analyses._SHOWN) == analyses.SHOWN_KEPT


def test_the_report_made_in_a_worker_is_the_one_made_here():
    """ui.logic.workbench.release_validity (the job ui.compute.validity_report hands a worker)
    makes the release again from the recipe and compares it: the same report as comparing the
    page's release here, with the original side made once per table and spec."""
    from ui.logic import workbench

    at, df, released = banded_by_10()
    steps = at.session_state["protect"].steps(QI)
    recipe = json.dumps({"version": 1, "seed": 42, "steps": steps})
    text = json.dumps(example("actg175").analyses)
    here = Validity(parse_spec(example("actg175").analyses), df).compare(
        released, changed=["age"], with_pmse=True)
    there = workbench.release_validity(df, "t1", text, recipe, ["age"], True)
    assert there.summary() == here.summary() and there.per_analysis() == here.per_analysis()
    kept = workbench._VALIDITIES[("t1", text)]
    workbench.release_validity(df, "t1", text, recipe, ["age"], False)
    assert workbench._VALIDITIES[("t1", text)] is kept
