"""The report's sections (ui.logic.report, the HTML the Export page downloads) built from the
core's results alone: the risk table carries both readings of risk (the keys' and the linkage
attack's) with the notes on the steps and the loss's formula, "Does the analysis hold?" holds
every verdict, term and figure, and "Risk in the population" its model and figures; names
from the data are escaped. The sections the pages hand the report are tested through the
pages (tests/test_app_pages.py, tests/test_app_analyses.py,
tests/test_app_population_protect.py)."""

from html import escape as html_escape

import pandas as pd
import pytest

from sdc_core.risk.population_risk import population_risk
from sdc_core.utility.analysis import parse_spec
from sdc_core.utility.validity import Validity, verdict_text
from ui.logic.report import build_report, population_section, risk_table, utility_table
from ui.logic.workbench import RISK_KEYS

HOSTILE = "**bold** <img src=x onerror=alert(1)>"
QI = ["age", "gender", "race"]


def test_the_report_holds_the_section_with_names_escaped(actg):
    analyses = {"analyses": [
        {"name": HOSTILE, "kind": "mean", "column": "cd420", "by": "arms"},
        {"name": "<b>table</b>", "kind": "table", "columns": ["race", "gender"]},
        {"name": "fails", "kind": "ols", "formula": "cd420 ~ age"}]}
    released = actg.assign(age=actg["age"] // 10 * 10).drop(columns=["race"])
    report = Validity(parse_spec(analyses), actg).compare(released, changed=["age"])
    from sdc_core.risk import risk_profile
    from sdc_core.risk.linkage import linkage_attack
    before = risk_profile(actg, QI)
    after = {k: getattr(before, k) for k in RISK_KEYS}
    attacked = linkage_attack(actg, actg, QI)
    after |= attacked.summary()
    utility = {"IL1_release": 0.0, "IL1_overall": 0.0, "IL1_numeric": 0.0,
               "IL1_categorical": 0.0, "eigenvalue_similarity_percent": 100.0,
               "released": list(actg.columns)}
    html = build_report("t", "f" * 64, len(actg), actg.shape[1], {}, "{}",
                        risk_table(before, attacked, after), utility_table(utility), [],
                        validity=report)
    assert "<h2>Does the analysis hold?</h2>" in html
    assert HOSTILE not in html and "<b>table</b>" not in html
    assert "**bold** &lt;img src=x onerror=alert(1)&gt;" in html
    assert "&lt;b&gt;table&lt;/b&gt;" in html
    assert "does not hold" in html  # the table of a dropped column
    assert "S_pMSE is pMSE over its expected value" in html
    assert "cd420 | arms=" in html  # the terms table
    for r in report.analyses:  # the verdict the page and the CLI write
        assert f"<p>{html_escape(verdict_text(r))}</p>" in html
    assert "<th>worst</th>" in html and "<th>term holds</th>" in html
    without = build_report("t", "f" * 64, len(actg), actg.shape[1], {}, "{}",
                           risk_table(before, attacked, after), utility_table(utility), [])
    assert "Does the analysis hold?" not in without


def test_the_section_escapes_names():
    df = pd.DataFrame({HOSTILE: [1, 1, 2, 3, 4, 5, 5, 6] * 3,
                       "<b>sex</b>": list("mfmfmfmm") * 3})
    keys = [HOSTILE, "<b>sex</b>"]
    before = population_risk(df, keys, None, population_size=2400)
    after = population_risk(df.assign(**{HOSTILE: df[HOSTILE] // 3}), keys, None,
                            population_size=2400)
    section = population_section(before, after)
    assert "<img" not in section and "<b>sex" not in section
    assert "&lt;img src=x onerror=alert(1)&gt;" in section and "&lt;b&gt;sex" in section
    assert "N = 2,400 (the population size given)" in section
    html = build_report("t", "f" * 64, len(df), df.shape[1], {}, "{}", df.head(1),
                        df.head(1), [], population=(before, after))
    assert section in html
    assert "<img" not in html


def test_without_a_sample_unique_the_section_says_no_model_is_picked():
    df = pd.DataFrame({"a": [1, 1, 2, 2, 3, 3] * 4, "b": list("xxyyzz") * 4})
    risk = population_risk(df, ["a", "b"], None, sampling_fraction=0.1)
    assert risk.uniqueness.sample_uniques == 0 and risk.uniqueness.dankar_model is None
    section = population_section(risk, risk)
    assert "<td>none: no sample unique</td>" in section
    assert "<td>Dankar's rule: population uniqueness (%)</td>\n      <td>0</td>" in section


def test_report_carries_both_readings_of_risk(actg):
    from sdc_core.risk import risk_profile
    from sdc_core.risk.linkage import linkage_attack
    from ui.logic.report import build_report, risk_table, step_notes, utility_table
    from ui.logic.workbench import evaluate, recipe_json

    qi = ["age", "gender", "race"]
    text = recipe_json([{"method": "rank_swap", "column": "age", "window_percent": 10}], 1)
    wb = evaluate(actg, text, qi, None, 5, "wildcard", 1.0, ["age", "wtkg"], ["wtkg"])
    table = risk_table(risk_profile(actg, qi), linkage_attack(actg, actg, qi, known=["wtkg"]),
                       wb.after)
    rows = dict(zip(table["measure"], zip(table["before"], table["after"])))
    assert rows["keys' re-identifications"][0] == 182
    assert rows["keys' re-identification risk (%)"][0] == pytest.approx(100 * 182 / 2139)
    linkage = rows["linkage attack re-identifications"]
    assert linkage[1] == wb.after["linkage_reidentifications"] < linkage[0]
    assert "dRisk, interval disclosure (%)" in rows
    html = build_report("t", "f", len(actg), actg.shape[1], {"known to the attacker": ["wtkg"]},
                        text, table, utility_table(wb.utility_for(["pidnum"])), [],
                        notes=step_notes(
                            [{"method": "local_suppression", "k": 5, "min_k_after": 5.0,
                              "min_k_after_as_category": 1.0, "suppressed": {"age": 3}}]))
    assert "smallest class is 5 when a blank matches any value" in html
    assert "a blank leaves the smallest class at 1." in html
    assert "maximum loss 1" in html
    assert "IL1 release (information loss): mean over the 26 released columns" in html
    assert "IL1 release = (1/|C|) · Σ IL1(c) over the released columns C" in html
    assert "linkage attack re-identifications" in html
    assert "what an attacker who\nknows the true values" in html
