"""The metric table the Protect page, the Risk page and the report share (ui.logic.metrics):
the core's figures, under the names of sdc_core.names, on the ACTG example."""

import math

import pytest

from sdc_core.names import COUNT_AND_PERCENT, MEASURES, count_and_percent, label, tile
from sdc_core.risk import risk_profile
from sdc_core.risk.linkage import linkage_attack
from ui.logic import metrics, report
from ui.logic.workbench import evaluate, recipe_json

QI = ["age", "gender", "race"]
STEPS = [{"method": "band", "column": "age", "width": 10}]


@pytest.fixture(scope="module")
def measured(actg):
    """The figures before (profile and linkage attack of the data as loaded) and after a band
    of age, as the Protect page computes them."""
    page = evaluate(actg, recipe_json(STEPS, 1), QI, None, 5, "wildcard", 1.0, ["age"], [])
    return risk_profile(actg, QI, k=5), linkage_attack(actg, actg, QI), page


def test_protect_rows_are_the_core_figures(measured):
    profile, attacked, page = measured
    before = metrics.figures(profile, attacked)
    rows = metrics.risk_rows(page.after, before, 5)
    assert [r.key for r in rows] == list(metrics.PROTECT_RISK)
    for r in rows:
        assert r.name == tile(r.key, 5) and r.label == label(r.key, 5)
        assert r.after == page.after[r.key]
        source = attacked if r.key.startswith("linkage_") else profile
        assert r.before == getattr(source, r.key)
        assert r.help
        assert r.delta_color == ("normal" if r.key == "min_k" else "inverse")
    by = {r.key: r for r in rows}
    # the banding lowers the keys' re-identifications: a change, written as the tiles write it
    keys = "expected_reidentifications"
    assert by[keys].value == count_and_percent(keys, page.after)
    assert by[keys].after < by[keys].before and by[keys].delta.startswith("-")
    assert by["percent_unique"].value == f"{page.after['percent_unique']:.2f} %"
    assert by["percent_unique"].delta == \
        f"{page.after['percent_unique'] - profile.percent_unique:+.2f} points"
    assert by["min_k"].value == f"{page.after['min_k']:g}"
    assert "k = 5" in by["percent_below_k"].help and "fewer than" in by["percent_below_k"].help


def test_no_change_and_no_before(measured):
    profile, attacked, _ = measured
    same = metrics.risk_rows(metrics.figures(profile), metrics.figures(profile), 5,
                             metrics.RISK_PAGE)
    assert [r.key for r in same] == list(metrics.RISK_PAGE)
    assert all(r.delta is None for r in same)  # nothing changed: no arrow
    alone = metrics.risk_rows(metrics.figures(profile), None, 5, metrics.RISK_PAGE)
    assert all(r.delta is None and r.before is None for r in alone)
    assert {r.key: r.after for r in alone}["median_k"] == profile.median_k


def test_drisk_follows_on_the_protect_page(measured):
    _, _, page = measured
    after = {**page.after, "drisk_percent": 12.5}
    rows = metrics.risk_rows(after, None, 5)
    assert rows[-1].key == "drisk_percent" and rows[-1].value == "12.50 %"
    assert [r.key for r in metrics.risk_rows(after, None, 5, ["percent_unique"])] == \
        ["percent_unique"]


def test_utility_rows(measured):
    _, _, page = measured
    u = page.utility_for([])
    rows = metrics.utility_rows(u)
    assert [r.key for r in rows] == list(metrics.UTILITY)
    assert [r.after for r in rows] == [u[k] for k in metrics.UTILITY]
    assert rows[0].name == metrics.RELEASE_LOSS_LABEL
    assert f"|C| = {len(u['released'])}" in rows[0].help
    assert rows[1].name == tile("IL1_overall") and rows[1].value == f"{u['IL1_overall']:.4f}"
    assert rows[-1].value.endswith(" %")


def test_the_report_shows_the_same_figures(measured):
    profile, attacked, page = measured
    table = report.risk_table(profile, attacked, page.after).set_index("measure")
    rows = metrics.risk_rows(page.after, metrics.figures(profile, attacked), 5)
    for r in rows:
        heading = label(r.key)  # the report speaks of k, not of its value
        assert table.loc[heading, "after"] == r.after
        assert math.isclose(table.loc[heading, "before"], r.before)
    loss = report.utility_table(page.utility_for([]))
    assert loss["value"].tolist() == [r.after for r in metrics.utility_rows(
        page.utility_for([]))]
    assert loss["measure"].iloc[0].startswith(metrics.RELEASE_LOSS_LABEL)


def test_every_measure_is_named_by_the_core():
    for key in (*metrics.PROTECT_RISK, *metrics.RISK_PAGE, *metrics.REPORT_RISK,
                *metrics.UTILITY, "drisk_percent"):
        assert key in MEASURES
    assert set(COUNT_AND_PERCENT) >= {"linkage_reidentifications", "expected_reidentifications"}


def test_every_il1_tile_is_written_alike():
    """Issue 50: the headline tile read "0" beside the others' "0.0000" (and "0.5" beside
    "0.5000"): one format for every IL1 figure, four decimals, four significant digits below
    0.01."""
    base = {"released": ["a", "b"], "eigenvalue_similarity_percent": 100.0}
    zero = metrics.utility_rows({**base, "IL1_release": 0.0, "IL1_overall": 0.0,
                                 "IL1_numeric": 0.0, "IL1_categorical": 0.0})
    assert [r.value for r in zero[:4]] == ["0.0000"] * 4
    some = metrics.utility_rows({**base, "IL1_release": 0.5, "IL1_overall": 0.5,
                                 "IL1_numeric": 0.00168681, "IL1_categorical": 0.0438571})
    assert [r.value for r in some[:4]] == ["0.5000", "0.5000", "0.001687", "0.0439"]
