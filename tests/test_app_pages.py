"""AppTest of the Risk, Protect, Trade-offs, Randomized response lab and Export pages."""

import base64
import json

import numpy as np
import pytest
import streamlit as st
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as hs
from streamlit.testing.v1 import AppTest

from sdc_core.data.io import EXAMPLE_PATH, read_table
from sdc_core.risk import risk_profile
from tests.apptest import app_on, app_test, metrics, opened, opening, tiles
from tests.conformance import METHODS as CONFORMANCE_METHODS
from tests.conformance import draw_step as conformance_step
from tests.conftest import plain
from tests.hostile_files import HOSTILE
from ui.logic.metrics import loss_text
from ui.logic.protect import describe


def decoded(values: list | dict) -> np.ndarray:
    """A Plotly figure's array, written as a list or as typed bytes (``bdata``)."""
    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"])
    return np.asarray(values)


def count_of(value: str) -> float:
    """The count of a tile that shows it with its percentage: 170.5 of "170.50 (7.97 %)"."""
    return float(value.split(" (")[0].replace(",", ""))


def recipe_code(at: AppTest) -> str:
    """The JSON in the Protect page's "Recipe of these settings", opened."""
    return opened(at, "p_recipe").main.code[0].value


def frame_with(at: AppTest, column: str):
    """The first table with this column (every chart also has a table of its numbers)."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_risk_page_reference_figures_and_warnings():
    at = app_on("views/risk.py")
    m = metrics(at)
    assert m["Keys' re-identifications"] == "182 (8.51 %)"  # with the keys' risk, 182/2139
    assert m["Global risk"] == "8.51 %"
    assert m["Unique records"] == "1.36 %" and m["Records in classes ≤ 5"] == "10.52 %"
    assert m["Smallest class"] == "1" and m["Median class size"] == "33"
    below = risk_profile(read_table(EXAMPLE_PATH), ["age", "gender", "race"]).percent_below_k
    assert m["Records in classes < 5"] == f"{below:.2f} %" != m["Records in classes ≤ 5"]
    assert any("arms determines treat" in e.value for e in at.error)
    explained = " ".join(x.value for x in at.markdown)
    assert "29 of 2,139 records" in explained  # the worked example on this data
    assert "No weight is tagged" in explained
    snapshot = frame_with(at, "keys")
    assert snapshot["keys"].tolist()[-1] == "age+gender+race"


def test_risk_page_threshold_and_weight():
    at = app_on("views/risk.py")
    at.number_input(key="w_risk_k").set_value(3).run()
    assert "Records in classes ≤ 3" in metrics(at)
    at.switch_page("views/data.py").run()
    at.selectbox(key="w_weight").set_value("wtkg").run()
    at.switch_page("views/risk.py").run()
    assert not at.exception
    assert "population" in " ".join(x.value for x in at.markdown)
    assert metrics(at)["Global risk"] != "8.51 %"  # individual risk with F_k from the weight


def test_risk_page_without_quasi_identifiers():
    at = app_test(timeout=60).run()
    at.multiselect(key="w_qi").set_value([]).run()
    at.switch_page("views/risk.py").run()
    assert not at.exception and "Tag at least one quasi-identifier" in at.info[0].value


def delta(at: AppTest, label: str) -> str | None:
    return next(m for m in tiles(at) if m.label == label).delta


def test_protect_banding_slider_changes_risk_and_utility():
    at = app_on("views/protect.py")
    m = metrics(at)
    assert m["Keys' re-identifications"] == m["Linkage attack re-identifications"] \
        == "182 (8.51 %)"  # the count with its percentage of the 2,139 records
    for label in ("Keys' re-identifications", "Linkage attack re-identifications",
                  "Linkage attack certain links", "Global risk", "Unique records"):
        assert not delta(at, label)  # nothing changed: no arrow, no colour
    at.slider(key="w_p_band_age").set_value(10).run()
    m = metrics(at)
    assert m["Keys' re-identifications"] == m["Linkage attack re-identifications"] \
        == "25 (1.17 %)"  # a public recoding
    # a count, without decimals
    assert delta(at, "Linkage attack re-identifications") == "-157 (was 182)"
    assert m["Smallest class"] == "1" and not delta(at, "Smallest class")  # a class of one left
    assert m["IL1 overall"] == "0.0439" and m["Eigenvalue similarity"] == "99.747 %"
    # the headline: IL1 of age, 0.0438571, over the 26 released columns (pidnum is not released)
    assert m["IL1 release (information loss)"] == "0.001687"
    assert "w_p_band_gender" not in [s.key for s in at.slider]  # binary codes are not banded
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert spec["layout"]["title"]["text"] == "age: original and protected values per band"
    # counted per band on both sides: banding moves no record out of its band
    original, protected = (decoded(t["y"]) for t in spec["data"])
    assert original.tolist() == protected.tolist() and 5 <= len(original) <= 8
    assert original.sum() == 2139


def test_protect_every_method_and_reports():
    at = app_on("views/protect.py")
    at.slider(key="w_p_pram_p").set_value(0.1).run()
    at.multiselect(key="w_p_rank_swap_cols").set_value(["wtkg"]).run()
    at.slider(key="w_p_rank_swap_window_percent").set_value(5.0).run()
    at.multiselect(key="w_p_relabel_cols").set_value(["drugs"]).run()
    at.slider(key="w_p_relabel_alpha").set_value(0.3).run()
    at.multiselect(key="w_p_randomized_response_cols").set_value(["homo"]).run()
    at.slider(key="w_p_randomized_response_keep_probability").set_value(0.5).run()
    at.slider(key="w_p_local_suppression_k").set_value(5).run()
    assert not at.exception and not at.error
    captions = " ".join(c.value for c in at.caption).replace("\\", "")  # Markdown escapes
    assert "Rank swap of wtkg: window 107 ranks" in captions
    assert "expected changed share α(1 − Σp²)" in captions
    assert "ε = 1.099" in captions and "Local suppression: age" in captions
    assert "when a blank matches any value (sdcMicro's reading" in captions
    assert "read as a value of its own, a blank leaves the smallest class at" in captions
    assert "IL1 counts a numeric value blanked by protection as the maximum loss 1" in captions
    assert float(metrics(at)["Unique records"].split()[0]) == 0.0
    recipe = json.loads(recipe_code(at))
    assert [s["method"] for s in recipe["steps"]] == [
        "pram", "pram", "relabel", "rank_swap", "randomized_response", "local_suppression"]


def test_protect_loads_a_recipe_and_rejects_a_bad_one():
    at = app_on("views/protect.py")
    good = json.dumps({"seed": 7, "steps": [{"method": "band", "column": "age", "width": 15}]})
    at.file_uploader(key="recipe_upload").set_value(("r.json", good.encode(), "x")).run()
    assert not at.exception
    assert at.slider(key="w_p_band_age").value == 15 and at.number_input(key="w_p_seed").value == 7
    assert metrics(at)["Keys' re-identifications"] == "18 (0.84 %)"
    bad = b'{"seed": 1, "steps": [{"method": "drop", "columns": ["pidnum"]}]}'
    at.file_uploader(key="recipe_upload").set_value(("bad.json", bad, "x")).run()
    assert any("no control on the Protect page" in e.value for e in at.error)


def test_tradeoffs_sweep_table_and_loading_a_row():
    at = app_on("views/tradeoffs.py")
    at.text_input(key="w_t_local_suppression_values").set_value("3")  # submitted with the click
    at.button[0].click().run()
    assert not at.exception and not at.error
    table = frame_with(at, "method")
    assert table["method"].tolist()[:4] == ["BASELINE", "band", "band", "band"]
    assert table["expected_reidentifications"].tolist()[:4] == [182, 44, 25, 18]
    assert "local_suppression" in table["method"].tolist()
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in
              at.get("plotly_chart")]
    assert titles[0].startswith("Risk against information loss")
    at.selectbox(key="w_t_pick").set_value(2).run()
    at.button[1].click().run()
    assert at.title[0].value == "Protect"
    assert metrics(at)["Keys' re-identifications"] == "25 (1.17 %)"


def test_protect_linkage_attack_sees_perturbation_and_known_columns():
    at = app_on("views/protect.py")
    at.slider(key="w_p_pram_p").set_value(0.5).run()  # PRAM on gender and race
    m = metrics(at)
    blind = count_of(m["Linkage attack re-identifications"])
    assert blind < 120 < count_of(m["Keys' re-identifications"])
    how = " ".join(md.value for md in opened(at, "p_how").markdown)
    assert "What an attacker actually re-identifies" in how and "fewer re-identifications" in how
    at.multiselect(key="w_p_known").set_value(["wtkg"]).run()
    assert not at.exception
    assert at.session_state["known"] == ["wtkg"]
    assert count_of(metrics(at)["Linkage attack re-identifications"]) > 2 * blind  # weight
    at.slider(key="w_p_pram_p").set_value(0.0).run()
    at.multiselect(key="w_p_rank_swap_cols").set_value(["age"]).run()
    at.slider(key="w_p_rank_swap_window_percent").set_value(10.0).run()
    assert metrics(at)["dRisk, interval disclosure"] == page_drisk(at, ["wtkg"])
    assert "dRisk" in " ".join(c.value for c in at.caption)
    at.multiselect(key="w_p_known").set_value([]).run()  # age alone is compared by distance
    assert metrics(at)["dRisk, interval disclosure"] == page_drisk(at, [])


def page_drisk(at: AppTest, known: list[str]) -> str:
    """dRisk as the core computes it for the Protect page's recipe, formatted as shown."""
    from sdc_core.recipe import apply_recipe, parse_recipe
    from sdc_core.risk.linkage import linkage_attack

    actg = read_table(EXAMPLE_PATH)
    recipe = parse_recipe(json.loads(recipe_code(at)))
    released = apply_recipe(recipe, actg).data
    result = linkage_attack(actg, released, ["age", "gender", "race"], recipe, known=known)
    assert 0 < result.drisk_percent < 100  # the rule of sdcMicro 5.8.1: none outside
    return f"{result.drisk_percent:.2f} %"


def test_known_column_later_tagged_as_key_is_dropped():
    from sdc_core.roles import EXAMPLE_ROLES

    at = app_on("views/protect.py")
    at.multiselect(key="w_p_known").set_value(["wtkg"]).run()
    at.switch_page("views/data.py").run()
    at.session_state["roles"] = EXAMPLE_ROLES.__class__(
        **{**EXAMPLE_ROLES.__dict__, "qi": ["age", "gender", "race", "wtkg"]})
    for page in ("views/protect.py", "views/tradeoffs.py", "views/export.py"):
        at.switch_page(page).run()
        assert not at.exception and not at.error, page
    assert at.session_state["known"] == []  # a key is known anyway


def test_tradeoffs_uses_the_linkage_attack():
    at = app_on("views/tradeoffs.py")
    at.multiselect(key="w_t_rank_swap_cols").set_value(["age"])
    at.text_input(key="w_t_rank_swap_values").set_value("20")
    at.button[0].click().run()
    assert not at.exception and not at.error
    table = frame_with(at, "method").set_index(["method", "param_value"], drop=False)
    assert table["linkage_reidentifications"].iloc[0] == 182
    swap = table[table["method"] == "rank_swap"].iloc[0]
    assert swap["linkage_reidentifications"] < 60 < swap["expected_reidentifications"]
    assert bool(swap["pareto"])
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert spec["layout"]["yaxis"]["title"]["text"] == "linkage attack re-identifications"
    at.radio(key="w_t_pareto").set_value("naive")
    at.button[0].click().run()
    captions = " ".join(c.value for c in at.caption)
    assert "at least as good on keys' re-identifications" in captions


def test_tradeoffs_bad_values_show_an_error():
    at = app_on("views/tradeoffs.py")
    at.text_input(key="w_t_band_values").set_value("five")
    at.button[0].click().run()
    assert not at.exception and "values must be numbers" in at.error[0].value


def test_tradeoffs_a_refused_grid_leaves_no_progress_bar():
    at = app_on("views/tradeoffs.py")
    at.text_input(key="w_t_band_values").set_value(", ".join(map(str, range(2, 40))))
    at.text_input(key="w_t_pram_values").set_value(", ".join(f"0.{i:02d}" for i in range(1, 40)))
    at.toggle(key="w_t_combine").set_value(True)
    at.button[0].click().run()
    assert not at.exception and "more than max_settings = 500" in plain(at.error[0].value)
    assert not at.get("progress")
    assert "t_cancel" not in [b.key for b in at.button]


def test_randomized_response_lab():
    at = app_on("views/rr_lab.py")
    m = metrics(at)
    assert m["Privacy ε"] == "1.099"
    assert abs(float(m["Estimated share of violators"]) - 0.2) < 0.15
    at.slider(key="w_rr_q").set_value(1.0).run()
    assert metrics(at)["Privacy ε"] == "∞"
    assert metrics(at)["Estimated share of violators"] == "0.200"


def test_export_offers_every_download():
    at = app_on("views/protect.py")
    at.slider(key="w_p_band_age").set_value(10).run()
    at.switch_page("views/export.py").run()
    assert not at.exception
    labels = [b.label for b in at.get("download_button")]
    assert labels == ["Download CSV", "Download PARQUET", "Download XLSX",
                      "Download the recipe (JSON)", "Download the workspace (JSON)",
                      "Download the report (HTML)", "Download the decision pack (ZIP)"]
    at.radio(key="w_chart_format").set_value("svg").run()
    assert at.session_state["chart_format"] == "svg"


@pytest.mark.parametrize("page", ["views/risk.py", "views/protect.py", "views/tradeoffs.py",
                                  "views/rr_lab.py", "views/tables.py", "views/export.py"])
def test_every_page_survives_an_upload_without_quasi_identifiers(page):
    at = app_test(timeout=60).run()
    at.file_uploader[0].set_value(("t.csv", b"city;n\nA;1\nB;2\nC;3\n", "text/csv")).run()
    at.switch_page(page).run()
    assert not at.exception


def test_recipe_steps_without_a_control_are_refused_whole():
    """A step the page has no control for (for the current roles) refuses the recipe: the
    other steps are not applied either."""
    at = app_on("views/protect.py")
    recipe = json.dumps({"seed": 3, "steps": [
        {"method": "band", "column": "wtkg", "width": 10},  # wtkg is no quasi-identifier here
        {"method": "band", "column": "age", "width": 5}]})
    at.file_uploader(key="recipe_upload").set_value(("r.json", recipe.encode(), "x")).run()
    assert at.slider(key="w_p_band_age").value == 0
    assert any("Recipe not loaded: step 1" in e.value and "not on wtkg" in e.value
               for e in at.error)


def test_both_fingerprints_are_named(actg):
    import hashlib

    from sdc_core.data.io import EXAMPLE_PATH
    from sdc_core.recipe import fingerprint
    from ui.logic.report import build_report

    at = app_on("views/export.py")
    file_sha = hashlib.sha256(EXAMPLE_PATH.read_bytes()).hexdigest()[:16]
    table_fp = fingerprint(actg)
    assert any(f"file SHA-256 `{file_sha}…`" in c.value for c in at.sidebar.caption)
    captions = " ".join(c.value for c in at.caption)
    assert f"table fingerprint `{table_fp[:16]}…`" in captions and file_sha in captions
    html = build_report("t", table_fp, 1, 1, {}, "{}", actg.head(1), actg.head(1), [],
                        file_sha256=file_sha)
    assert f"table fingerprint <code>{table_fp}</code>" in html
    assert f"file SHA-256 <code>{file_sha}…</code>" in html


def test_every_chart_offers_a_print_export():
    at = opened(app_on("views/risk.py"), "x_risk_hist_open")  # the popover's controls
    assert at.radio(key="x_risk_hist_fmt").value == "png"
    labels = [b.label for b in at.get("download_button")]
    assert "Download PNG" in labels
    at.radio(key="x_risk_hist_fmt").set_value("pdf").run()
    at.number_input(key="x_risk_hist_width").set_value(1600).run()
    assert "Download PDF" in [b.label for b in at.get("download_button")]
    captions = " ".join(c.value for c in at.caption)
    assert "Caption in the file: ACTG 175" in captions and "quasi" in captions


def test_risk_page_reports_classes_without_a_sensitive_value():
    at = app_test(timeout=60).run()
    csv = b"age;sex;diag\n" + b"30;F;\n30;F;\n40;M;a\n40;M;b\n50;F;a\n50;F;a\n"
    at.file_uploader[0].set_value(("t.csv", csv, "text/csv")).run()
    at.multiselect(key="w_sensitive").set_value(["diag"]).run()
    at.switch_page("views/risk.py").run()
    assert not at.exception
    metric = next(m for m in tiles(at) if m.label.startswith("l-diversity of"))
    assert metric.value == "min l = 1"  # the class of 30 F releases no diag: not l = 0
    assert any("33.33 % of records are in classes where no value of diag is released" in c.value
               for c in at.caption)


def test_protect_offers_noise_and_recoding_from_their_declarations():
    at = app_on("views/protect.py")
    at.multiselect(key="w_p_noise_cols").set_value(["wtkg", "cd40"]).run()
    at.slider(key="w_p_noise_p").set_value(100.0).run()
    at.multiselect(key="w_p_recode_cols").set_value(["karnof"]).run()
    at.slider(key="w_p_recode_min_count").set_value(100).run()
    assert not at.exception and not at.error
    steps = json.loads(recipe_code(at))["steps"]
    # a step holds main and the controls away from their declared defaults
    assert {"method": "noise", "columns": ["wtkg", "cd40"], "p": 100} in steps
    assert {"method": "recode", "column": "karnof", "min_count": 100} in steps
    assert [s["method"] for s in steps] == ["recode", "noise"]  # declared order
    assert float(metrics(at)["IL1 numeric"]) > 0


def test_risk_page_suda2_section_shows_the_actg_figures():
    at = app_on("views/risk.py")
    m = metrics(at)
    assert m["Records with MSUs"] == "29"
    assert m["Max SUDA score"] == "2" and m["Max DIS score"] == "0.011560"
    assert any(s.value == "Special uniques (SUDA2)" for s in at.subheader)
    opened(at, "n_risk_suda_contrib", "risk_how_msu")  # the chart's numbers, the worked example
    contributions = frame_with(at, "share of the SUDA score (%)")
    assert dict(zip(contributions["key"], contributions["share of the SUDA score (%)"].round(2))) \
        == {"age": 100.0, "gender": 68.75, "race": 56.25}
    top = frame_with(at, "suda_score")
    assert top["row"].iloc[0] == 217 and top["msus"].iloc[0] == "age + gender; age + race"
    explained = " ".join(x.value for x in at.markdown)
    assert "minimal sample unique" in explained and "Row 217 is the only record" in explained


def test_risk_page_suda2_runs_on_request_when_slow(monkeypatch):
    import ui.suda_cache

    monkeypatch.setattr(ui.suda_cache, "AUTO_SECONDS", 0.0)
    at = app_on("views/risk.py")
    assert "Max SUDA score" not in metrics(at)
    assert any("runs on request" in i.value for i in at.info)
    at.button(key="risk_suda_go").click().run()
    assert not at.exception and metrics(at)["Max SUDA score"] == "2"


def test_protect_offers_microaggregation_from_its_declaration():
    at = app_on("views/protect.py")
    at.multiselect(key="w_p_microaggregation_cols").set_value(["age"]).run()
    at.slider(key="w_p_microaggregation_k").set_value(5).run()
    assert not at.exception and not at.error
    steps = json.loads(recipe_code(at))["steps"]
    assert steps == [{"method": "microaggregation", "columns": ["age"], "k": 5}]
    m = metrics(at)
    # age becomes a distance column of the attack (ties share): below the unprotected 182;
    # many groups hold one age only, so their mean is that age and the drop is small
    assert count_of(m["Linkage attack re-identifications"]) < 182
    captions = " ".join(c.value for c in at.caption).replace("\\", "")
    assert "Microaggregation (mdav, k = 5) of age:" in captions


def test_protect_merges_chosen_levels_into_a_label():
    at = app_on("views/protect.py")
    at.multiselect(key="w_p_recode_cols").set_value(["karnof"]).run()
    at.multiselect(key="w_p_recode_groups_karnof_0_levels").set_value([70, 80])
    at.text_input(key="w_p_recode_groups_karnof_0_label").set_value("80 or less").run()
    assert not at.exception and not at.error
    steps = json.loads(recipe_code(at))["steps"]
    assert steps == [{"method": "recode", "column": "karnof",
                      "groups": {"80 or less": [70, 80]}}]
    assert any("89 values changed, 4 levels → 3" in c.value for c in at.caption)
    at.button(key="w_p_recode_groups_karnof_more").click().run()
    at.multiselect(key="w_p_recode_groups_karnof_1_levels").set_value([90])
    at.text_input(key="w_p_recode_groups_karnof_1_label").set_value("80 or less").run()
    steps = json.loads(recipe_code(at))["steps"]
    assert steps[0]["groups"] == {"80 or less": [70, 80, 90]}
    at.slider(key="w_p_recode_min_count").set_value(50).run()  # merge first, then rare levels
    steps = json.loads(recipe_code(at))["steps"]
    assert [sorted(s) for s in steps] == [["column", "groups", "method"],
                                          ["column", "method", "min_count"]]
    assert float(metrics(at)["IL1 categorical"]) > 0


def test_protect_loads_a_recipe_with_a_merge():
    at = app_on("views/protect.py")
    steps = [{"method": "recode", "column": "race", "groups": {"any": [0, 1]}}]
    recipe = json.dumps({"seed": 3, "steps": steps})
    at.file_uploader(key="recipe_upload").set_value(("r.json", recipe.encode(), "x")).run()
    assert not at.exception and not at.error
    assert at.multiselect(key="w_p_recode_groups_race_0_levels").value == [0, 1]
    assert at.text_input(key="w_p_recode_groups_race_0_label").value == "any"
    assert json.loads(recipe_code(at))["steps"] == steps
    assert count_of(metrics(at)["Keys' re-identifications"]) < 182  # race, a key, no longer tells


def test_tradeoffs_finds_the_cheapest_combination_under_a_target():
    at = app_on("views/tradeoffs.py")
    at.number_input(key="w_t_seeds").set_value(1)  # a row is then the Protect page's figure
    at.text_input(key="w_t_band_values").set_value("5, 10, 15")
    at.multiselect(key="w_t_pram_cols").set_value(["gender", "race"])  # one p for both
    at.text_input(key="w_t_pram_values").set_value("0.05, 0.1")
    at.toggle(key="w_t_combine").set_value(True)
    at.selectbox(key="w_t_target").set_value("linkage_risk_percent")
    at.number_input(key="w_t_at_most").set_value(1.0)
    at.button[0].click().run()
    assert not at.exception and not at.error
    table = frame_with(at, "method")
    assert 1 < len(table) < 1 + 4 * 3  # of band off, 5, 10, 15 × PRAM off, 0.05, 0.1
    assert any(f"evaluated {len(table) - 1} of 12 combinations" in c.value for c in at.caption)
    assert table["best"].sum() == 1 and "IL1_release" in table
    best = table[table["best"]].iloc[0]
    assert best["linkage_risk_percent"] <= 1.0
    assert "Cheapest setting under" in at.success[0].value
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert any(t.get("name") == "best under the target" for t in spec["data"])
    assert any(s.get("type") == "line" and s.get("y0") == 1.0 for s in spec["layout"]["shapes"])
    opening(at, "p_recipe").button(key="t_open_best").click().run()
    assert at.title[0].value == "Protect"
    recipe = at.session_state["sweep"]["result"].table.loc[best.name, "recipe"]
    assert json.loads(at.main.code[0].value)["steps"] == json.loads(recipe)["steps"]
    # one headline loss: the Protect page shows the sweep row's, over the same columns
    assert metrics(at)["IL1 release (information loss)"] == loss_text(best["IL1_release"])


def test_opening_the_best_says_what_it_replaced_and_one_undo_brings_it_back():
    """Issue 50: "Open the best on the Protect page" replaced the whole recipe without a word.
    The Protect page now names the recipe it replaced and the one opened, and one Undo gives
    the previous recipe back (Redo the opened one)."""
    at = app_on("views/protect.py")
    at.slider(key="w_p_band_age").set_value(20).run()
    at.multiselect(key="w_p_pram_cols").set_value(["race"]).run()
    at.slider(key="w_p_pram_p").set_value(0.3).run()
    at.number_input(key="w_p_seed").set_value(7).run()
    qi = at.session_state["roles"].qi
    mine = at.session_state["protect"].steps(qi), at.session_state["protect"].seed
    assert mine == ([{"method": "band", "column": "age", "width": 20},
                     {"method": "pram", "column": "race", "p": 0.3}], 7)
    at.switch_page("views/tradeoffs.py").run()
    at.number_input(key="w_t_seeds").set_value(1)
    at.text_input(key="w_t_band_values").set_value("5, 10")
    at.text_input(key="w_t_pram_values").set_value("")
    at.selectbox(key="w_t_target").set_value("linkage_risk_percent")
    at.number_input(key="w_t_at_most").set_value(100.0)
    at.button[0].click().run()
    assert not at.exception and not at.error
    table = at.session_state["sweep"]["result"].table
    best = json.loads(table[table["best"]].iloc[0]["recipe"])
    at.button(key="t_open_best").click().run()
    assert at.title[0].value == "Protect" and not at.exception
    opened = at.session_state["protect"]
    assert (opened.steps(qi), opened.seed) == (best["steps"], best["seed"])
    said = [plain(w.value) for w in at.warning if "Opened the sweep's best setting" in
            plain(w.value)]
    assert said == [
        "Opened the sweep's best setting: it replaced the whole recipe of this page, which was "
        "band age width=20; pram race p=0.3; seed 7, by "
        f"{describe(best['steps'], best['seed'])}. Undo, above the controls, brings the "
        "previous recipe back."]
    at.switch_page("views/protect.py").run()  # (AppTest's next run goes back to the page
    # it was on: the click that switched pages does not move it)
    assert not [w for w in at.warning if "Opened the sweep" in plain(w.value)]  # said once
    at.button(key="p_undo").click().run()
    back = at.session_state["protect"]
    assert (back.steps(qi), back.seed) == mine
    assert at.slider(key="w_p_band_age").value == 20  # the controls show it
    at.button(key="p_redo").click().run()
    again = at.session_state["protect"]
    assert (again.steps(qi), again.seed) == (best["steps"], best["seed"])


def test_tradeoffs_target_every_class_at_least_k():
    """The target "every class ≥ k": the cheapest combination with no record in a class
    smaller than k, which opens on Protect showing a smallest class of at least k."""
    at = app_on("views/tradeoffs.py")
    at.text_input(key="w_t_band_values").set_value("5, 10")
    at.text_input(key="w_t_local_suppression_values").set_value("3, 5")
    at.toggle(key="w_t_combine").set_value(True)
    at.selectbox(key="w_t_target").set_value("every_class")
    at.button[0].click().run()
    assert not at.exception and not at.error
    assert at.session_state["sweep"]["grid"]["target"] == {"measure": "percent_below_k",
                                                           "at_most": 0.0}
    assert plain(at.success[0].value).startswith("**Cheapest setting under every class ≥ 5**")
    table = frame_with(at, "method")
    best = table[table["best"]].iloc[0]
    assert best["percent_below_k"] == 0
    at.button(key="t_open_best").click().run()
    assert at.title[0].value == "Protect"
    assert int(metrics(at)["Smallest class"]) >= 5
    assert metrics(at)["Records in classes < 5"] == "0.00 %"


def test_tradeoffs_says_when_no_setting_meets_the_target():
    at = app_on("views/tradeoffs.py")
    at.toggle(key="w_t_combine").set_value(True)
    at.selectbox(key="w_t_target").set_value("linkage_reidentifications")
    at.number_input(key="w_t_at_most").set_value(0.0)
    at.button[0].click().run()
    assert not at.exception and not at.error
    assert "No setting meets" in at.warning[0].value


def test_an_unexpected_error_is_a_message_and_a_log_without_the_data(monkeypatch, caplog):
    monkeypatch.undo()  # the real entry-point message, not the tests' re-raise
    monkeypatch.setattr("ui.compute.column_profile", fail_with_a_value)
    at = app_test(timeout=60).run()
    at.session_state["w_data_tab"] = "Columns"  # the column summary: drawn once chosen
    at.run()
    assert not at.exception
    assert plain(at.error[0].value).startswith(
        "This page could not be shown: an unexpected ValueError (bad value 'A_SECRET').")
    assert "your data set and settings are kept" in at.error[0].value
    logged = caplog.text
    assert "a page failed with ValueError" in logged and "fail_with_a_value" in logged
    assert "A_SECRET" not in logged


def fail_with_a_value(*args, **kwargs):
    value = "A_" + "SECRET"  # as a value, not in the source line the traceback quotes
    raise ValueError(f"bad value {value!r}")


def test_export_page_says_what_the_files_change():
    """A table with a formula in a header and a category and a control character: the Export
    page runs, and says what each format writes differently."""
    from sdc_core.data.io import table_bytes

    at = app_test().run()
    at.file_uploader(key="uploader").set_value(
        ("hostile.parquet", table_bytes(HOSTILE, ".parquet"), "application/octet-stream")).run()
    at.switch_page("views/export.py").run()
    assert not at.exception
    captions = [c.value for c in at.caption]
    assert any(c.startswith("CSV: ") and "leading apostrophe" in c for c in captions)
    assert any(c.startswith("XLSX: ") and "control characters" in c for c in captions)
    assert not any(c.startswith("PARQUET: ") for c in captions)


def test_a_recipe_outside_the_controls_is_refused_on_protect():
    """``pram p: -0.5`` in a loaded recipe put a Streamlit exception on the page."""
    at = app_on("views/protect.py")
    recipe = json.dumps({"version": 1, "seed": 1, "steps": [
        {"method": "pram", "column": "race", "p": -0.5}]}).encode()
    at.file_uploader(key="recipe_upload").set_value(("r.json", recipe, "application/json")).run()
    assert not at.exception
    assert plain(at.error[0].value).startswith(
        "Recipe not loaded: step 1 (pram): p = -0.5 is below the low end")


def test_a_file_that_cannot_be_written_is_said_on_the_export_page(monkeypatch, caplog):
    """A writer that fails (made now or on click) leaves a message in its column instead of a
    button that does nothing, the other formats stay offered, and the log names the error's
    type only, never a value of the data."""
    import sdc_core.data.io

    monkeypatch.setattr("ui.infra.workers.workers", lambda: 0)  # writer patched here
    real = sdc_core.data.io.table_bytes

    def refuse(df, ext, neutralize=True):
        if ext in (".parquet", ".xlsx"):
            fail_with_a_value()
        return real(df, ext, neutralize)

    monkeypatch.setattr(sdc_core.data.io, "table_bytes", refuse)
    st.cache_data.clear()  # files made by earlier tests are not made again
    at = app_on("views/export.py")
    assert not at.exception
    errors = [plain(e.value) for e in at.error]
    assert "PARQUET cannot be written: an unexpected ValueError." in errors
    assert "XLSX cannot be written: an unexpected ValueError." in errors
    labels = [b.label for b in at.get("download_button")]
    assert "Download CSV" in labels and "Download PARQUET" not in labels
    assert "Download XLSX" not in labels
    assert "SECRET" not in caplog.text and "SECRET" not in " ".join(errors)


def test_every_sweep_row_opens_on_protect_as_its_recipe():
    """Opening never changes a setting: every row of a combined sweep — bands wider than the
    band slider's data-given end among them (age spans 12–70: the slider ends at 29) — opens on
    the Protect page with "Recipe of these settings" equal to the row's recipe."""
    at = app_on("views/tradeoffs.py")
    at.text_input(key="w_t_band_values").set_value("40")
    at.text_input(key="w_t_local_suppression_values").set_value("3")
    at.toggle(key="w_t_combine").set_value(True)
    at.button[0].click().run()
    assert not at.exception and not at.error
    table = at.session_state["sweep"]["result"].table
    rows = table.index[table["method"] != "BASELINE"].tolist()
    assert any(json.loads(table.at[i, "recipe"])["steps"][:1] == [
        {"method": "band", "column": "age", "width": 40}] for i in rows)
    for i in rows:
        at.switch_page("views/tradeoffs.py").run()
        opening(at, "p_recipe").selectbox(key="w_t_pick").set_value(i)
        next(b for b in at.button if b.label == "Open it on the Protect page").click().run()
        assert not at.exception and not at.error, table.at[i, "recipe"]
        assert at.title[0].value == "Protect"
        recipe = json.loads(table.at[i, "recipe"])
        if not recipe["steps"]:  # every method off: no recipe to show
            assert any("No method is active" in x.value for x in [*at.info, *at.markdown])
            continue
        shown = json.loads(at.main.code[0].value)
        assert (shown["steps"], shown["seed"]) == (recipe["steps"], recipe["seed"]), i


def test_a_recipe_band_wider_than_the_data_widens_the_slider():
    """A band of width 40 on age (12–70; the slider's end is half the range) showed 29, its
    end, and applied 29: now the slider reaches 40 and the recipe is applied as written."""
    at = app_on("views/protect.py")
    recipe = json.dumps({"seed": 1, "steps": [{"method": "band", "column": "age", "width": 40}]})
    at.file_uploader(key="recipe_upload").set_value(("r.json", recipe.encode(), "x")).run()
    assert not at.exception and not at.error
    slider = at.slider(key="w_p_band_age")
    assert slider.value == 40 and slider.max == 40
    assert json.loads(recipe_code(at))["steps"] == json.loads(recipe)["steps"]
    assert recipe_code(at).count("\n") > 5  # a line a field, not one long line
    at.slider(key="w_p_band_age").set_value(10).run()  # the widened end goes with the value
    assert at.slider(key="w_p_band_age").max < 40


def test_a_recipe_past_a_sliders_end_is_shown_as_written():
    """PRAM p 0.9 (the slider ends at 0.5) and local suppression k 50 (it ends at 20) opened
    as 0.5 and 20: now the sliders reach the recipe's values."""
    at = app_on("views/protect.py")
    recipe = json.dumps({"seed": 1, "steps": [
        {"method": "pram", "column": "race", "p": 0.9},
        {"method": "local_suppression", "columns": ["age", "gender", "race"], "k": 50}]})
    at.file_uploader(key="recipe_upload").set_value(("r.json", recipe.encode(), "x")).run()
    assert not at.exception and not at.error
    assert at.slider(key="w_p_pram_p").value == 0.9 == at.slider(key="w_p_pram_p").max
    assert at.slider(key="w_p_local_suppression_k").value == 50
    assert json.loads(recipe_code(at))["steps"] == json.loads(recipe)["steps"]


def test_a_whole_number_control_refuses_a_fraction():
    at = app_on("views/protect.py")
    recipe = b'{"seed": 1, "steps": [{"method": "band", "column": "age", "width": 7.5}]}'
    at.file_uploader(key="recipe_upload").set_value(("r.json", recipe, "x")).run()
    assert not at.exception
    assert "width = 7.5 is not a whole number" in plain(at.error[0].value)
    assert at.slider(key="w_p_band_age").value == 0  # nothing of it applied


def test_downloads_are_named_after_the_data_set_without_its_extension():
    """treatment.csv's best recipe was offered as treatment.csv_best_recipe.json."""
    at = app_test(timeout=60).run()
    assert at.session_state["dataset"].stem == "actg175"
    at.file_uploader(key="uploader").set_value(
        ("my survey (v2).csv", b"age,sex\n30,F\n40,M\n", "text/csv")).run()
    assert at.session_state["dataset"].stem == "my_survey__v2_"


def test_tables_head_measures_in_words():
    """Tables on the pages head measures in words; the data (and downloads) keep the names."""
    at = app_on("views/risk.py")
    headings = {}
    for frame in at.dataframe:
        spec = json.loads(frame.proto.columns or "{}")
        headings |= {k: v.get("label") for k, v in spec.items()}
    assert headings["individual_risk"] == "individual risk"
    assert headings["percent_k_le_threshold"] == "records in classes ≤ k (%)"
    assert "percent_k_le_threshold" in frame_with(at, "keys").columns


def test_the_sweep_form_keeps_its_values_across_pages():
    """Trade-offs' form came back at its defaults after a page change while the old results
    stayed."""
    at = app_on("views/tradeoffs.py")
    at.text_input(key="w_t_band_values").set_value("7, 14")
    at.toggle(key="w_t_combine").set_value(True)
    at.selectbox(key="w_t_target").set_value("every_class")
    at.button[0].click().run()
    at.switch_page("views/protect.py").run()
    at.switch_page("views/tradeoffs.py").run()
    assert not at.exception
    assert not [w for w in at.warning if "Session State" in w.value]  # seeded, not defaulted
    assert at.text_input(key="w_t_band_values").value == "7, 14"
    assert at.toggle(key="w_t_combine").value is True
    assert at.selectbox(key="w_t_target").value == "every_class"
    # a combined grid's values have columns of their own: no empty "value" column
    assert "param_value" not in frame_with(at, "method").columns
    at.switch_page("views/data.py").run()
    at.file_uploader(key="uploader").set_value(
        ("other.csv", b"age,sex\n" + b"30,F\n40,M\n" * 15, "text/csv")).run()
    at.switch_page("views/tradeoffs.py").run()  # another data set: the defaults again
    assert at.text_input(key="w_t_band_values").value != "7, 14"


def shown_recipe(at: AppTest) -> dict | None:
    """The "Recipe of these settings" of the Protect page (None: no method is on), opened
    first if it is closed."""
    box = [e for e in at.expander if e.label == "Recipe of these settings"]
    if box and not box[0].code:
        box = [e for e in opened(at, "p_recipe").expander
               if e.label == "Recipe of these settings"]
    return json.loads(box[0].code[0].value) if box else None


#: Recipes of the harness's shape on the example, for each outcome: opened as they are (band
#: origin and labels, top coding, invariant PRAM, suppression's importance order) or refused.
LOADED = [
    [{"method": "band", "column": "age", "width": 15, "origin": 3, "label": "interval"}],
    [{"method": "top_bottom_code", "column": "age", "top_percentile": 95},
     {"method": "pram", "column": "race", "invariant": True, "retention": 0.8}],
    [{"method": "pram", "column": "gender", "p": 0.1},
     {"method": "local_suppression", "columns": ["age", "gender", "race"], "k": 3,
      "importance": ["race", "age", "gender"]}],
    [{"method": "pram", "column": "gender", "p": 0.1},
     {"method": "band", "column": "age", "width": 10}],  # not the page's order
    [{"method": "band", "column": "age", "width": 7.5}],  # the slider takes whole widths
    [{"method": "band", "column": "wtkg", "width": 10}],  # not a quasi-identifier
]


def harness_recipes(n: int) -> list[list[dict]]:
    """The first ``n`` distinct recipes the conformance harness draws on the example's
    quasi-identifiers (derandomized: the same every run)."""
    actg, qi = read_table(EXAMPLE_PATH)[["age", "gender", "race"]], ["age", "gender", "race"]
    methods = [m for name, m in CONFORMANCE_METHODS.items()
               if name not in ("drop", "synthesize")]  # synthesis: not on the Protect page
    found: list[list[dict]] = []

    @settings(max_examples=50, deadline=None, derandomize=True, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(data=hs.data())
    def draw(data: hs.DataObject) -> None:
        steps = [conformance_step(data.draw, data.draw(hs.sampled_from(methods)), actg, qi)
                 for _ in range(data.draw(hs.integers(1, 3)))]
        if steps not in found:
            found.append(steps)
    draw()
    return found[:n]


def test_harness_recipes_open_through_load_a_recipe_as_they_are_or_not_at_all():
    """Opening never changes a setting: recipes drawn by the conformance harness, and some of
    its shape for each outcome, loaded with "Load a recipe", either show their own steps and
    seed in "Recipe of these settings", or are refused whole: an error, and the settings
    before it stay."""
    at = app_on("views/protect.py")
    before, outcomes = shown_recipe(at), []
    for i, steps in enumerate(LOADED + harness_recipes(8)):
        recipe = {"version": 1, "seed": 1000 + i, "steps": steps}
        at.file_uploader(key="recipe_upload").set_value(
            (f"r{i}.json", json.dumps(recipe).encode(), "application/json")).run()
        assert not at.exception, recipe
        now = shown_recipe(at)
        if at.success and at.success[0].value == "Recipe loaded.":
            assert now is not None and (now["steps"], now["seed"]) == (steps, recipe["seed"]), \
                (recipe, [e.value for e in at.error])
            outcomes.append("opened")
        else:
            assert any(e.value.startswith("Recipe not loaded:") for e in at.error), recipe
            assert now == before, recipe  # nothing of it applied
            outcomes.append("refused")
        before = now
    assert outcomes[:len(LOADED)] == ["opened"] * 3 + ["refused"] * 3


def test_protect_offers_every_recipe_parameter():
    """Band origin and labels (per column), invariant PRAM, top/bottom coding and local
    suppression's importance order have controls; the recipe they make opens as it is."""
    at = app_on("views/protect.py")
    at.slider(key="w_p_band_age").set_value(10)
    at.number_input(key="w_p_band:origin:age").set_value(3)
    at.selectbox(key="w_p_band:label:age").set_value("interval")
    at.multiselect(key="w_p_top_bottom_code_cols").set_value(["wtkg"])
    at.number_input(key="w_p_top_bottom_code_top_percentile").set_value(95.0)
    at.toggle(key="w_p_pram_invariant").set_value(True).run()  # θ applies with it only
    at.number_input(key="w_p_pram_retention").set_value(0.8)
    at.slider(key="w_p_local_suppression_k").set_value(2)
    at.multiselect(key="w_p_local_suppression_importance").set_value(["race", "age", "gender"])
    at.run()
    assert not at.exception and not at.error
    recipe = shown_recipe(at)
    assert recipe["steps"] == [
        {"method": "band", "column": "age", "width": 10, "origin": 3, "label": "interval"},
        {"method": "top_bottom_code", "column": "wtkg", "top_percentile": 95},
        {"method": "pram", "column": "gender", "invariant": True, "retention": 0.8},
        {"method": "pram", "column": "race", "invariant": True, "retention": 0.8},
        {"method": "local_suppression", "columns": ["age", "gender", "race"], "k": 2,
         "importance": ["race", "age", "gender"]}]
    at.file_uploader(key="recipe_upload").set_value(
        ("r.json", json.dumps(recipe).encode(), "application/json")).run()
    assert at.success[0].value == "Recipe loaded." and shown_recipe(at) == recipe
    assert at.number_input(key="w_p_band:origin:age").value == 3


def test_protect_bands_between_custom_breaks_with_range_labels():
    """Breaks typed as numbers separated by commas replace the width (set to 0); ages 17–19
    are released as "0–17" and "18–29", never as a number outside the data."""
    at = app_on("views/protect.py")
    at.text_input(key="w_p_band:breaks:age").set_value("0, 18, 30, 65, 120")
    at.selectbox(key="w_p_band:label:age").set_value("range").run()
    assert not at.exception and not at.error
    assert shown_recipe(at)["steps"] == [
        {"method": "band", "column": "age", "label": "range", "breaks": [0, 18, 30, 65, 120]}]
    captions = " ".join(c.value for c in at.caption).replace("\\", "")
    assert "Banding of age: 4 bands between 0, 18, 30, 65, 120." in captions
    at.text_input(key="w_p_band:breaks:age").set_value("0, 18, oops").run()
    assert any("values separated by commas" in e.value for e in at.error)


def test_tradeoffs_sweeps_each_banded_column_over_its_own_values():
    """A values list per column: age gets 7 while the method's list (5, 10) is for the
    columns without their own."""
    at = app_on("views/tradeoffs.py")
    at.text_input(key="w_t_band_values").set_value("5, 10")
    at.text_input(key="w_t_band_values:age").set_value("7")
    at.button[0].click().run()
    assert not at.exception and not at.error
    table = at.session_state["sweep"]["result"].table
    widths = [s["width"] for r in table["recipe"] for s in json.loads(r)["steps"]
              if s["method"] == "band"]
    assert widths == [7]
