"""AppTest of the Risk page's attribute disclosure (issue 42, items 3 and 5): t-closeness,
β-likeness and δ-disclosure of the sensitive columns, of the original and of the Protect page's
release, and, when the release perturbs a sensitive column, the attribute-inference attack and
the exact deniability beside l-diversity (docs/measures.md)."""

import math

import pandas as pd
from streamlit.testing.v1 import AppTest

from sdc_core.data.io import EXAMPLE_PATH, read_table
from sdc_core.names import label
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.risk.closeness import closeness_report
from sdc_core.risk.deniability import recipe_deniability
from sdc_core.risk.inference import attribute_inference
from tests.apptest import app_on
from tests.conftest import plain
from ui.logic.protect import ProtectSettings

QI = ["age", "gender", "race"]
CLOSENESS = ("t_closeness", "beta_likeness", "enhanced_beta_likeness", "delta_disclosure")
PRAM = ProtectSettings(columns={"pram": ["treat"]}, values={"pram": {"p": 0.2}})


def closeness_table(at: AppTest) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if "t_closeness" in d.value.columns)


def released(settings: ProtectSettings) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    df = read_table(EXAMPLE_PATH)
    recipe = {"version": 1, "seed": settings.seed, "steps": settings.steps(QI)}
    return df, apply_recipe(parse_recipe(recipe), df).data, recipe


def test_the_original_has_one_row_per_sensitive_column_equal_to_the_core():
    at = app_on("views/risk.py")
    table = closeness_table(at)
    expected = closeness_report(read_table(EXAMPLE_PATH), QI, ["treat"])["treat"]
    assert table["column"].tolist() == ["treat"]
    assert list(table.columns) == ["column", *CLOSENESS]  # no release measured
    for k in CLOSENESS:
        assert math.isclose(table[k].iloc[0], getattr(expected, k), rel_tol=1e-12)
    assert 0 < table["t_closeness"].iloc[0] < 1  # the classes do differ from the table
    # no release: no note on perturbed values
    assert not any("read the released (perturbed) values" in i.value for i in at.info)


def test_the_release_perturbing_a_sensitive_column_shows_its_closeness_and_the_attack():
    at = app_on("views/risk.py")
    at.session_state["protect"] = PRAM
    at.radio(key="w_risk_view").set_value("protected").run()
    assert not at.exception
    df, out, recipe = released(PRAM)
    before = closeness_report(df, QI, ["treat"])["treat"]
    after = closeness_report(out, QI, ["treat"])["treat"]
    table = closeness_table(at)
    assert len(table) == 1
    for k in CLOSENESS:
        assert math.isclose(table[k].iloc[0], getattr(before, k), rel_tol=1e-12)
        assert math.isclose(table[f"{k}, released"].iloc[0], getattr(after, k), rel_tol=1e-12)
    assert table["delta_disclosure, released"].iloc[0] != table["delta_disclosure"].iloc[0]

    note = [i.value for i in at.info if "read the released (perturbed) values" in i.value]
    assert len(note) == 1 and "treat" in note[0]
    reading = next(d.value for d in at.dataframe if "inference_accuracy" in d.value.columns)
    attack = attribute_inference(df, out, QI, ["treat"], parse_recipe(recipe)).columns[0]
    den = recipe_deniability(parse_recipe(recipe), df)[0]
    row = reading.iloc[0]
    assert row["column"] == "treat" and row["method"] == "pram"
    assert math.isclose(row["inference_accuracy"], attack.accuracy, rel_tol=1e-12)
    assert math.isclose(row["inference_baseline"], attack.baseline, rel_tol=1e-12)
    assert math.isclose(row["epsilon"], den.epsilon, rel_tol=1e-12)
    assert math.isclose(row["guess_accuracy"], den.guess_accuracy, rel_tol=1e-12)
    assert math.isclose(row["baseline"], den.baseline, rel_tol=1e-12)
    assert 0 < row["epsilon"] < math.inf
    assert den.meaning in plain(" ".join(c.value for c in at.caption))


def test_a_release_leaving_the_sensitive_column_alone_has_no_note():
    at = app_on("views/risk.py")
    at.session_state["protect"] = ProtectSettings(values={"band": {"age": {"width": 10}}})
    at.radio(key="w_risk_view").set_value("both").run()
    assert not at.exception
    _, out, _ = released(ProtectSettings(values={"band": {"age": {"width": 10}}}))
    table = closeness_table(at)
    after = closeness_report(out, QI, ["treat"])["treat"]
    assert math.isclose(table["t_closeness, released"].iloc[0], after.t_closeness)
    assert not any("read the released (perturbed) values" in i.value for i in at.info)
    assert not any("inference_accuracy" in d.value.columns for d in at.dataframe)
    assert label("t_closeness") == "t-closeness"


def test_the_l_diversity_tile_is_no_change_and_shows_no_arrow():
    """Issue 50: the tile's note (the share of records in classes with l = 1) was drawn as a
    change, with an arrow up; on the panel COUNT/rwm5yr, as on both views of the Risk page,
    it is a reading of the tile: the figures the core gives, no arrow."""
    from streamlit.proto.Metric_pb2 import Metric as MetricProto

    from sdc_core.risk import risk_profile, sensitive_report
    from tests import rwm5yr
    from tests.apptest import app_test

    df = rwm5yr.persons(300)
    at = app_test().run()
    at.file_uploader(key="uploader").set_value(
        ("rwm5yr.csv", rwm5yr.csv_bytes(df), "text/csv")).run()
    at.multiselect(key="w_qi").set_value(rwm5yr.KEYS).run()
    at.multiselect(key="w_sensitive").set_value(["outwork"]).run()
    at.switch_page("views/risk.py").run()
    assert not at.exception
    ldiv = sensitive_report(df, risk_profile(df, rwm5yr.KEYS), ["outwork"],
                            list(df.columns))[0]["outwork"]
    [tile] = [m for m in at.metric if m.label == "l-diversity of outwork"]
    assert tile.value == f"min l = {ldiv.min_l}"
    assert tile.delta == f"{ldiv.percent_l_eq_1:.2f} % of records in classes with l = 1"
    assert tile.proto.direction == MetricProto.MetricDirection.NONE
    at.switch_page("views/protect.py").run()
    at.slider(key="w_p_band_age").set_value(10).run()
    at.switch_page("views/risk.py").run()
    at.radio(key="w_risk_view").set_value("both").run()
    assert not at.exception
    tiles = [m for m in at.metric if m.label == "l-diversity of outwork"]
    assert len(tiles) == 2 and all(t.proto.direction == MetricProto.MetricDirection.NONE
                                   for t in tiles)
