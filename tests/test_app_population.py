"""AppTest of the Risk page's risk in the population (issue 27): how the file was sampled in
the settings, the models' share of population uniques beside the sample's, the log-linear
risks, the models against the sampling fraction and the worked example. The expected figures
are the core's, computed here on the same table."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from sdc_core.data.io import read_table
from sdc_core.risk.population_risk import population_risk
from sdc_core.teaching import HOUSEHOLD_PATH
from tests.apptest import app_test, metrics, risk_page_with_age_banded, tiles
from tests.conftest import plain
from tests.hostile_text import leaks
from ui.population import NAMES, people, percent

QI = ["age", "gender", "race"]
HOUSEHOLD_QI = ["region", "age", "sex", "household_size"]
MODEL_LABELS = ["Sample uniqueness", "Zayatz", "Pitman", "SNB"]


def risk_page() -> AppTest:
    at = app_test().run()
    at.switch_page("views/risk.py").run()
    assert not at.exception
    return at


def household_risk_page() -> AppTest:
    at = app_test().run()
    at.selectbox(key="example_pick").set_value("household")
    next(b for b in at.button if b.label == "Load built-in data").click().run()
    at.switch_page("views/risk.py").run()
    assert not at.exception and at.session_state["roles"].weight == "weight"
    return at


def opened(at: AppTest, *keys: str) -> AppTest:
    """Open the expanders of these keys and run: what is folded in them is drawn only once
    they are open."""
    for key in keys:
        at.session_state[key] = True
    return at.run()


def population_charts(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")
            if c.key and c.key.startswith("risk_population")]


def texts(at: AppTest) -> str:
    return " ".join(str(e.value) for kind in ("markdown", "caption", "error", "info")
                    for e in getattr(at, kind))


def expected_value(est) -> str:
    return percent(est.share) if est.share is not None else "not valid"


def test_nothing_about_the_population_until_the_sampling_is_given():
    at = risk_page()
    assert at.radio(key="w_risk_sampling").value == "none"
    assert "In the population" not in [s.value for s in at.subheader]
    assert not population_charts(at)
    assert not any(label in metrics(at) for label in MODEL_LABELS)
    assert not any("tau1" in d.value.columns for d in at.dataframe)
    assert at.session_state["sampling"] == {}


def test_a_sampling_fraction_shows_the_cores_figures(actg):
    at = risk_page()
    at.radio(key="w_risk_sampling").set_value("fraction").run()
    at.number_input(key="w_risk_fraction").set_value(0.01).run()
    assert not at.exception
    assert at.session_state["sampling"] == {"sampling_fraction": 0.01}
    assert "In the population" in [s.value for s in at.subheader]
    expected = population_risk(actg, QI, sampling_fraction=0.01)
    u = expected.uniqueness
    m = metrics(at)
    assert m["Sample uniqueness"] == percent(u.sample_uniqueness) == "1.36 %"
    for attr, name in NAMES.items():
        assert m[name] == expected_value(getattr(u, attr)), name
    dankar = f"Dankar's rule: {NAMES[u.dankar_model]}"
    assert m[dankar] == percent(u.dankar.share)
    assert m[dankar] == m[NAMES[u.dankar_model]]  # the model it picked, named
    # an invalid model says so, with its reason; a valid one gives its count of people
    helps = {x.label: x.help for x in tiles(at)}
    for attr, name in NAMES.items():
        est = getattr(u, attr)
        assert (est.reason in helps[name] if est.share is None
                else people(est.count) in helps[name]), name
    assert f"N = {expected.sampling.population:,.0f} people" in texts(at)
    assert "a category of its own" in texts(at)

    # the log-linear risks, both normalisations
    table = next(d.value for d in at.dataframe if "tau1" in d.value.columns)
    assert table["method"].tolist() == ["default", "CE", "PML"]
    for row in table.itertuples():
        r = expected.loglinear[row.method]
        assert math.isclose(row.r1, r.r1) and math.isclose(row.r2, r.r2)
        assert math.isclose(row.r1_per_unique, r.tau1 / r.sample_uniques)
        assert math.isclose(row.r2_per_unique, r.tau2 / r.sample_uniques)
        assert row.cells == r.cells
    assert "sdcMicro's normalisation divides the totals by the c cells" in texts(at)

    # the models against the sampling fraction, the chosen one marked
    (spec,) = population_charts(at)
    assert spec["layout"]["xaxis"]["type"] == "log"
    lines = [s for s in spec["layout"]["shapes"] if s["type"] == "line"]
    assert [s["x0"] for s in lines] == [0.01] and lines[0]["x1"] == 0.01
    assert any("chosen π = 0.01" in a["text"] for a in spec["layout"]["annotations"])
    names = [t["name"] for t in spec["data"]]
    assert names[0] == "Dankar's rule" and spec["data"][0]["line"]["width"] > 2  # distinct
    assert {"Zayatz", "SNB"} <= set(names) and "Pitman (not valid)" in names

    # the worked example on this table
    opened(at, "risk_how_population")
    how = next(e for e in at.expander if e.label == "How: population uniqueness on this table")
    worked = " ".join(x.value for x in how.markdown)
    h = expected.histogram
    assert f"n = {h.n:,} records fall into u = {h.u:,} classes" in worked
    assert f"s_1 = {h.uniques}, s_2 = {int(h.counts[1])}" in worked
    assert f"= {people(u.zayatz.count)}: {percent(u.zayatz.share)} of N" in worked
    assert "π = 0.01 ≤ 0.1" in worked and u.pitman.reason in worked
    assert f"k = {u.snb.parameters['k']:.4g}" in worked


def test_the_sampling_survives_a_page_change():
    at = risk_page()
    at.radio(key="w_risk_sampling").set_value("fraction").run()
    at.number_input(key="w_risk_fraction").set_value(0.05).run()
    at.switch_page("views/data.py").run()
    at.switch_page("views/risk.py").run()
    assert not at.exception
    assert at.radio(key="w_risk_sampling").value == "fraction"
    assert at.number_input(key="w_risk_fraction").value == 0.05
    assert len(population_charts(at)) == 1


def test_with_weights_n_is_their_sum_by_default():
    at = household_risk_page()
    df = read_table(HOUSEHOLD_PATH)
    total = float(df["weight"].sum())
    assert at.radio(key="w_risk_sampling").value == "none"
    assert at.session_state["sampling"] == {}
    assert f"N defaults to the sum of the weights of weight: N = {total:,.0f} people" \
        in texts(at)
    expected = population_risk(df, HOUSEHOLD_QI, "weight")
    assert expected.sampling.source == "weights"
    assert math.isclose(expected.sampling.population, total)
    m = metrics(at)
    assert m["Sample uniqueness"] == percent(expected.uniqueness.sample_uniqueness)
    for attr, name in NAMES.items():
        assert m[name] == expected_value(getattr(expected.uniqueness, attr)), name
    (spec,) = population_charts(at)
    assert [s["x0"] for s in spec["layout"]["shapes"]] == [pytest.approx(len(df) / total)]


def test_a_population_smaller_than_the_file_is_refused():
    at = risk_page()
    at.radio(key="w_risk_sampling").set_value("population").run()
    assert at.number_input(key="w_risk_population").value == 100 * 2139
    at.number_input(key="w_risk_population").set_value(1000).run()
    assert not at.exception
    said = [plain(e.value) for e in at.error]
    assert any("the population size must be at least the 2,139 records" in e for e in said)
    assert at.session_state["sampling"] == {"population_size": 213_900.0}  # 1,000 not kept
    assert not population_charts(at)
    assert not any(label in metrics(at) for label in MODEL_LABELS)
    at.number_input(key="w_risk_population").set_value(10_000).run()  # then a good one
    assert not at.exception and not [e for e in at.error if "population" in e.value]
    assert at.session_state["sampling"] == {"population_size": 10_000.0}
    assert "π = n/N = 2,139/10,000 = 0.2139." in texts(at)
    assert len(population_charts(at)) == 1


def test_a_zero_fraction_is_refused_with_a_message():
    at = risk_page()
    at.radio(key="w_risk_sampling").set_value("fraction").run()
    at.number_input(key="w_risk_fraction").set_value(0.0).run()
    assert not at.exception
    assert any("the sampling fraction must lie in (0, 1]" in plain(e.value) for e in at.error)
    assert at.session_state["sampling"] == {"sampling_fraction": 0.01}  # the last good one
    assert not population_charts(at)


HOSTILE = "**x** <b>y</b>"


def test_a_hostile_key_name_appears_literally():
    rows = [f"age,sex,{HOSTILE}"] + [f"{20 + i % 7},{'m' if i % 3 else 'f'},v{i % 4}"
                                      for i in range(300)]
    at = app_test().run()
    at.file_uploader(key="uploader").set_value(
        ("hostile.csv", ("\n".join(rows) + "\n").encode(), "text/csv")).run()
    at.multiselect(key="w_qi").set_value(["age", "sex", HOSTILE]).run()
    at.switch_page("views/risk.py").run()
    at.radio(key="w_risk_sampling").set_value("fraction").run()
    at.number_input(key="w_risk_fraction").set_value(0.02).run()
    assert not at.exception and not leaks(at)
    assert len(population_charts(at)) == 1
    population = [e.value for kind in ("markdown", "caption") for e in getattr(at, kind)
                  if "population" in str(e.value) or "classes" in str(e.value)]
    assert any(HOSTILE in plain(t) for t in population)  # shown as its characters
    assert not any(HOSTILE in t or "<b>" in t for t in population)  # never as Markdown/HTML
    df = pd.DataFrame([r.split(",") for r in rows[1:]], columns=rows[0].split(","))
    df["age"] = df["age"].astype(int)
    expected = population_risk(df, ["age", "sex", HOSTILE], sampling_fraction=0.02)
    assert metrics(at)["Zayatz"] == expected_value(expected.uniqueness.zayatz)


def test_both_tables_side_by_side_each_with_their_figures():
    at = risk_page_with_age_banded(10)
    at.radio(key="w_risk_sampling").set_value("fraction").run()
    at.number_input(key="w_risk_fraction").set_value(0.2).run()
    at.radio(key="w_risk_view").set_value("both").run()
    assert not at.exception
    assert len(population_charts(at)) == 2
    shares = [m.value for m in tiles(at) if m.label == "Sample uniqueness"]
    assert len(shares) == 2 and shares[0] == "1.36 %" and shares[1] != shares[0]
    opened(at, "risk_how_population", "risk_how_population_protected")  # worked examples
    assert "π = 0.2 > 0.1" in " ".join(x.value for x in at.markdown)


def test_tradeoffs_targets_population_uniqueness_with_the_sessions_sampling(actg):
    """The sampling set on the Risk page reaches the sweep: its rows carry Dankar's population
    uniqueness and the target may bound it; the best row is the core's on the same grid."""
    from sdc_core.roles import EXAMPLE_ROLES
    from sdc_core.sweep.run import POPULATION, run_sweep

    at = app_test(timeout=120).run()
    at.session_state["sampling"] = {"sampling_fraction": 0.05}
    at.switch_page("views/tradeoffs.py").run()
    at.number_input(key="w_t_seeds").set_value(1)
    at.text_input(key="w_t_band_values").set_value("5, 10, 20")
    at.multiselect(key="w_t_pram_cols").set_value([])
    at.selectbox(key="w_t_target").set_value(POPULATION)
    at.number_input(key="w_t_at_most").set_value(0.01)
    at.button[0].click().run()
    assert not at.exception and not at.error
    grid = at.session_state["sweep"]["grid"]
    assert grid["sampling_fraction"] == 0.05
    assert grid["target"] == {"measure": POPULATION, "at_most": 0.01}
    expected = run_sweep(actg, EXAMPLE_ROLES.qi, grid)
    table = next(d.value for d in at.dataframe if "method" in d.value.columns)
    assert list(table[POPULATION]) == list(expected.table[POPULATION])
    best = table[table["best"]].iloc[0]
    want = expected.table.loc[expected.best]
    assert (best["param_value"], best[POPULATION]) == (want["param_value"], want[POPULATION])
    assert best[POPULATION] <= 0.01
