"""The Trade-offs page with benchmark analyses (issue 26 item 4): what the analyses lose can be
the loss axis and part of the target ("linkage risk ≤ 1 % and mean CI overlap ≥ 0.9"); the page
shows the setting the core picks, heads the analyses' columns in words (their names as text)
and keeps its new fields like the others."""

import json

from streamlit.testing.v1 import AppTest

from sdc_core.examples import EXAMPLES
from sdc_core.names import count_and_percent
from sdc_core.roles import EXAMPLE_ROLES
from sdc_core.sweep.run import run_sweep
from sdc_core.utility.validity import HOLDS, LABELS, S_PMSE_RULE
from tests.apptest import app_test
from tests.conftest import plain

HOSTILE = "**x** <b>y</b>"


def app_on(page: str) -> AppTest:
    at = app_test(timeout=120).run()
    at.switch_page(page).run()
    assert not at.exception
    return at


def headings(at: AppTest) -> dict[str, str]:
    """Every table's column headings on the page, by column name."""
    out: dict[str, str] = {}
    for frame in at.dataframe:
        out |= {c: s.get("label") for c, s in json.loads(frame.proto.columns or "{}").items()}
    return out


def small_grid(at: AppTest) -> None:
    """Band age 5, 10, 20 and noise on age and cd40 (it lowers the linkage risk and moves a
    regressor of the CD4 model), one seed; no PRAM."""
    at.number_input(key="w_t_seeds").set_value(1)
    at.text_input(key="w_t_band_values").set_value("5, 10, 20")
    at.multiselect(key="w_t_pram_cols").set_value([])
    at.multiselect(key="w_t_noise_cols").set_value(["age", "cd40"])
    at.text_input(key="w_t_noise_values").set_value("50, 100")


def shown_table(at: AppTest):
    return next(d.value for d in at.dataframe if "method" in d.value.columns)


def test_a_target_that_keeps_the_analyses_picks_the_cores_best_by_their_loss(actg):
    at = app_on("views/tradeoffs.py")
    small_grid(at)
    at.radio(key="w_t_loss").set_value("ci_overlap_loss")
    at.selectbox(key="w_t_target").set_value("linkage_risk_percent")
    at.number_input(key="w_t_at_most").set_value(1.0)
    at.selectbox(key="w_t_keep").set_value("mean_ci_overlap")  # at least 0.9 by default
    at.button[0].click().run()
    assert not at.exception and not at.error
    grid = at.session_state["sweep"]["grid"]
    assert grid["analysis"] == EXAMPLES["actg175"].analyses and grid["loss"] == "ci_overlap_loss"
    assert grid["target"] == {"measure": "linkage_risk_percent", "at_most": 1.0,
                              "keep": {"measure": "mean_ci_overlap", "at_least": HOLDS}}
    assert grid["settings"] == [
        {"method": "band", "column": "age", "param": "width", "values": [5, 10, 20]},
        {"method": "noise", "columns": ["age", "cd40"], "param": "p", "values": [50, 100]}]
    expected = run_sweep(actg, EXAMPLE_ROLES.qi, grid)
    t = expected.table
    assert expected.loss == "ci_overlap_loss" and expected.best is not None
    risk_met = t["linkage_risk_percent"] <= 1.0
    assert (risk_met & ~t["meets_target"]).any()  # the kept overlap really rules some out

    table = shown_table(at)
    assert table["best"].sum() == 1
    best = table[table["best"]].iloc[0]
    want = t.loc[expected.best]
    assert (best["method"], best["column"], best["param_value"]) == (
        want["method"], want["column"], want["param_value"])
    assert best["linkage_risk_percent"] <= 1.0 and best["mean_ci_overlap"] >= HOLDS
    assert best["ci_overlap_loss"] == want["ci_overlap_loss"]
    message = plain(at.success[0].value)
    # the bound in percent with its count of the 2,139 records
    assert message.startswith("**Cheapest setting under linkage attack risk (%) ≤ 1 (21.39 "
                              "linkage attack re-identifications) and mean CI overlap ≥ 0.9** "
                              "(by 1 − mean CI overlap)")
    assert ("linkage attack re-identifications "
            f"{count_and_percent('linkage_risk_percent', best)}") in message
    assert f"mean CI overlap {want['mean_ci_overlap']:.4g}" in message

    scatter = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert scatter["layout"]["xaxis"]["title"]["text"] == \
        f"{LABELS['ci_overlap_loss']} (benchmark analyses)"
    loss_plot = json.loads(at.get("plotly_chart")[2].proto.spec)
    assert loss_plot["layout"]["yaxis"]["title"]["text"] == \
        f"{LABELS['ci_overlap_loss']} (benchmark analyses)"
    heads = headings(at)
    assert heads["mean_ci_overlap"] == "mean CI overlap" and heads["s_pmse"] == "S_pMSE"
    assert heads["worst_tvd"] == "worst-table TVD"
    assert heads["ci_overlap: CD4 at 20 weeks"] == "CI overlap: CD4 at 20 weeks"
    assert S_PMSE_RULE in " ".join(plain(c.value) for c in at.caption)


def test_without_analyses_only_il1_is_offered_and_the_form_says_where_to_write_them():
    at = app_on("views/tradeoffs.py")
    at.radio(key="w_t_loss").set_value("s_pmse")
    at.button[0].click().run()  # kept: s_pmse
    assert at.session_state["sweep"]["grid"]["loss"] == "s_pmse"
    at.session_state["analyses"] = None  # what an upload without analyses leaves
    at.run()
    assert not at.exception
    keys = [w.key for w in [*at.radio, *at.selectbox, *at.number_input]]
    assert "w_t_loss" not in keys and "w_t_keep" not in keys and "w_t_keep_bound" not in keys
    assert any("Protect page's \"Benchmark analyses\" editor" in plain(c.value)
               for c in at.caption)
    at.number_input(key="w_t_seeds").set_value(1)
    at.button[0].click().run()
    assert not at.exception and not at.error
    grid = at.session_state["sweep"]["grid"]
    assert "analysis" not in grid and grid["loss"] == "IL1_release"
    assert "mean_ci_overlap" not in shown_table(at).columns


def test_a_hostile_analysis_name_is_a_heading_as_it_is():
    at = app_on("views/tradeoffs.py")
    at.session_state["analyses"] = {"confidence": 0.95, "analyses": [
        {"name": HOSTILE, "kind": "ols", "formula": "cd420 ~ age + C(treat) + cd40"}]}
    at.run()
    at.number_input(key="w_t_seeds").set_value(1)
    at.multiselect(key="w_t_pram_cols").set_value([])
    at.button[0].click().run()
    assert not at.exception and not at.error
    assert f"ci_overlap: {HOSTILE}" in shown_table(at).columns
    assert headings(at)[f"ci_overlap: {HOSTILE}"] == f"CI overlap: {HOSTILE}"
    for element in [*at.caption, *at.markdown]:  # named in a caption, as text
        assert "**x**" not in element.value and "<b>" not in element.value
    assert any(HOSTILE in plain(c.value) for c in at.caption)


def test_the_loss_and_the_kept_measure_survive_a_page_change():
    at = app_on("views/tradeoffs.py")
    at.radio(key="w_t_loss").set_value("worst_tvd")
    at.selectbox(key="w_t_keep").set_value("s_pmse")
    at.number_input(key="w_t_keep_bound").set_value(10.0)
    at.selectbox(key="w_t_target").set_value("linkage_risk_percent")
    at.number_input(key="w_t_seeds").set_value(1)
    at.multiselect(key="w_t_pram_cols").set_value([])
    at.button[0].click().run()
    assert not at.exception and not at.error
    assert at.session_state["sweep"]["grid"]["target"]["keep"] == {"measure": "s_pmse",
                                                                   "at_most": 10.0}
    at.switch_page("views/protect.py").run()
    at.switch_page("views/tradeoffs.py").run()
    assert not at.exception
    assert not [w for w in at.warning if "Session State" in w.value]  # seeded, not defaulted
    assert at.radio(key="w_t_loss").value == "worst_tvd"
    assert at.selectbox(key="w_t_keep").value == "s_pmse"
    assert at.number_input(key="w_t_keep_bound").value == 10.0
    # kept under the prefix the workspace file saves
    assert at.session_state["w_kept_w_t_loss"] == "worst_tvd"
    assert at.session_state["w_kept_w_t_keep_bound"] == 10.0


def test_keeping_an_analysis_figure_without_a_risk_target_is_refused():
    at = app_on("views/tradeoffs.py")
    at.selectbox(key="w_t_keep").set_value("mean_ci_overlap")
    at.button[0].click().run()
    assert not at.exception and "needs a risk target" in plain(at.error[0].value)
