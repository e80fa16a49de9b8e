"""AppTest of the risk in the population after protection (issue 27): the Protect page's row
of population metrics, with deltas against the original under the session's sampling, and the
report's "Risk in the population" section with the same figures (one truth). Expected values
come from the core (:func:`sdc_core.risk.population_risk.population_risk`) on the protected
table, made by the recipe the page's settings give."""

import math

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from sdc_core.data.io import EXAMPLE_PATH, read_table
from sdc_core.examples import example
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.risk.population_risk import PopulationRisk, population_risk
from tests.apptest import app_test, downloads, tile_notes, tiles
from tests.conftest import plain
from tests.hostile_text import leaks
from ui.logic.report import (
    MODEL_NAMES,
    dankar_name,
    figure,
    figure_delta,
    loglinear_r2,
    sampling_text,
)

QI = ["age", "gender", "race"]
SAMPLED = {"sampling_fraction": 0.01}
HOSTILE = "**bold** <img src=x onerror=alert(1)>"
NOT_SAMPLED = "How the file was sampled"


def protect_page(sampling: dict | None = None, data: str | None = None) -> AppTest:
    at = app_test()
    if data is not None:
        at.query_params["data"] = data
    at.run()
    if sampling is not None:
        at.session_state["sampling"] = sampling
    at.switch_page("views/protect.py").run()
    assert not at.exception
    return at


def population_metrics(at: AppTest) -> dict[str, object]:
    return {m.label: m for m in tiles(at)
            if m.label.startswith(("Population uniqueness", "Log-linear r2"))}


def captions(at: AppTest) -> str:
    """The captions and the notes under the tiles, as read."""
    return " ".join([*(plain(c.value) for c in at.caption), *tile_notes(at)])


def released(at: AppTest, df: pd.DataFrame, qi: list[str]) -> pd.DataFrame:
    """The table the page's settings make (its recipe applied by the core)."""
    settings = at.session_state["protect"]
    recipe = {"version": 1, "seed": settings.seed, "steps": settings.steps(qi)}
    return apply_recipe(parse_recipe(recipe), df).data


def assert_shown(at: AppTest, before: PopulationRisk, after: PopulationRisk) -> None:
    shown = population_metrics(at)
    model = after.uniqueness.dankar_model
    label = f"Population uniqueness ({MODEL_NAMES[model]})" if model else "Population uniqueness"
    assert set(shown) == {label, "Log-linear r2 (sdcMicro)"}
    unique, r2 = shown[label], shown["Log-linear r2 (sdcMicro)"]
    assert unique.value == f"{figure(after.percent)} %"
    assert float(unique.value.rstrip(" %").replace(",", "")) == pytest.approx(after.percent,
                                                                             rel=0.01)
    assert (unique.delta or None) == figure_delta(after.percent, before.percent, " points")
    assert r2.value == figure(loglinear_r2(after))
    assert float(r2.value) == pytest.approx(after.loglinear["default"].r2, rel=0.01)
    assert (r2.delta or None) == figure_delta(loglinear_r2(after), loglinear_r2(before))
    # no help button: nothing new to Tab through before the "Before and after" chart
    assert not unique.help and not r2.help
    assert "a blank key counts as a category of its own" in captions(at)
    assert sampling_text(after.sampling) in captions(at)


def test_the_population_metrics_follow_the_protection():
    df = read_table(EXAMPLE_PATH)
    at = protect_page(SAMPLED)
    before = population_risk(df, QI, None, **SAMPLED)
    assert_shown(at, before, before)
    assert all(not m.delta for m in population_metrics(at).values())  # nothing changed yet
    assert any('<p class="sdc-tiles-title">In the population (after protection)</p>'
               in e.proto.body for e in at.get("html"))

    at.slider(key="w_p_band_age").set_value(10).run()
    assert not at.exception
    after = population_risk(released(at, df, QI), QI, None, **SAMPLED)
    assert after.percent < before.percent
    assert loglinear_r2(after) < loglinear_r2(before)
    assert_shown(at, before, after)
    assert all(m.delta.startswith("-") for m in population_metrics(at).values())


def test_without_sampling_a_caption_points_to_the_risk_page():
    at = protect_page()
    assert not population_metrics(at)
    assert NOT_SAMPLED in captions(at)
    assert not any("In the population (after" in e.proto.body for e in at.get("html"))


def test_a_population_smaller_than_the_file_is_said_not_raised():
    at = protect_page({"population_size": 10})
    assert not population_metrics(at)
    assert "In the population: not estimated (the population size must be at least" \
        in captions(at)
    at.switch_page("views/export.py").run()
    assert not at.exception
    assert any("leaves out the risk in the population" in w.value for w in at.warning)


def test_the_report_has_the_pages_figures(monkeypatch):
    made = downloads(monkeypatch)
    df = read_table(EXAMPLE_PATH)
    at = protect_page(SAMPLED)
    at.slider(key="w_p_band_age").set_value(10).run()
    shown = {k: (m.value, m.delta or None) for k, m in population_metrics(at).items()}
    before = population_risk(df, QI, None, **SAMPLED)
    after = population_risk(released(at, df, QI), QI, None, **SAMPLED)
    at.switch_page("views/export.py").run()
    assert not at.exception
    html = made["dl_report"]().decode()
    assert "<h2>Risk in the population</h2>" in html
    assert f"How the file was sampled: {sampling_text(after.sampling)}" in html
    for risk in (before, after):
        u = risk.uniqueness
        for value in (100 * u.dankar.share, u.dankar.count, 100 * u.zayatz.share,
                      u.zayatz.count, 100 * u.sample_uniqueness):
            assert f"<td>{value:.6g}</td>" in html
        for model in ("pitman", "snb"):
            est = getattr(u, model)
            assert (f"<td>{100 * est.share:.6g}</td>" if est.share is not None
                    else f"<td>not valid: {est.reason}</td>") in html
        for method in ("default", "CE", "PML"):
            r = risk.loglinear[method]
            for value in (r.r1, r.r2, r.tau1 / r.sample_uniques, r.tau2 / r.sample_uniques):
                assert f"<td>{value:.6g}</td>" in html
    assert f"<td>{dankar_name(after)}</td>" in html
    # the page showed the same objects' figures
    assert after.uniqueness.dankar_model is not None
    assert shown == {f"Population uniqueness ({dankar_name(after)})":
                     (f"{figure(after.percent)} %",
                      figure_delta(after.percent, before.percent, " points")),
                     "Log-linear r2 (sdcMicro)":
                     (figure(loglinear_r2(after)),
                      figure_delta(loglinear_r2(after), loglinear_r2(before)))}


def test_the_report_leaves_the_section_out_without_sampling(monkeypatch):
    made = downloads(monkeypatch)
    at = protect_page()
    at.switch_page("views/export.py").run()
    assert not at.exception
    assert "Risk in the population" not in made["dl_report"]().decode()


def test_the_household_example_takes_n_from_the_weights(monkeypatch):
    made = downloads(monkeypatch)
    e = example("household")
    df = read_table(e.path)
    qi, weight = list(e.roles.qi), e.roles.weight
    at = protect_page(data="household")
    assert at.session_state["dataset"].example == "household"
    assert "sampling" not in at.session_state or not at.session_state["sampling"]
    before = population_risk(df, qi, weight)
    total = df[weight].sum()
    assert before.sampling.source == "weights"
    assert before.sampling.population == pytest.approx(total)
    assert f"N = {total:,.0f} (the sum of the weights)" in captions(at)
    assert_shown(at, before, before)
    assert not math.isnan(before.percent)
    at.switch_page("views/export.py").run()
    assert not at.exception
    html = made["dl_report"]().decode()
    assert f"N = {total:,.0f} (the sum of the weights)" in html
    assert not leaks(at)
