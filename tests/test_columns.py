"""The column model (``sdc_core.data.columns``, ``docs/columns.md``) and the three bugs the walk
with an outside survey file found (Ecdat's ``Treatment``: 2,675 people, four True/False columns):
local suppression crashed on a True/False key, the linkage attack said zero after a recoding of it,
and a recoding that changed nothing cost 100 %."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pandas as pd
import pytest

from sdc_core.classes import class_sizes
from sdc_core.cli import main
from sdc_core.data import columns
from sdc_core.data.io import read_table, table_bytes
from sdc_core.errors import SdcInputError
from sdc_core.methods.banding import band
from sdc_core.methods.recode import recode
from sdc_core.methods.suppression import local_suppression
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.sweep.run import run_sweep
from sdc_core.utility.il1 import categorical_il1
from tests import corpus
from ui.logic.workbench import evaluate, recipe_json

WALK_QI = ["age", "educ", "ethn", "married"]


@pytest.mark.parametrize("values, dtype, expected", [
    ([True, False], "bool", "boolean"), ([True, None], "boolean", "boolean"),
    ([True, None], object, "boolean"), ([1, None], "Int64", "integer"),
    ([1, 2], "uint8", "integer"), ([1.5, None], "float64", "float"),
    ([1.5, None], "Float64", "float"), (["a", None], "str", "text"),
    (["a", None], "string", "text"), (["a", None], object, "text"),
    (["a", "b"], "category", "category"), ([1, "a"], object, "mixed"),
    ([pd.Timestamp("2024-01-01"), None], "datetime64[ns]", "datetime"),
])
def test_storage_of_every_dtype(values, dtype, expected):
    assert columns.storage(pd.Series(values, dtype=dtype)) == expected


def test_a_method_names_the_column_and_its_kind():
    with pytest.raises(SdcInputError) as err:
        band(pd.Series([True, False], name="married"), 5)
    assert str(err.value) == ("banding takes numbers or dates; column 'married' holds "
                              "True/False values (bool)")


def test_blanks_keep_the_kind():
    assert str(columns.blank(pd.Series([True, False]), np.array([True, False])).dtype) \
        == "boolean"
    assert str(columns.blank(pd.Series([1, 2]), np.array([False, True])).dtype) == "Int64"
    assert str(columns.blank(pd.Series([1, 2], dtype="uint8"), np.array([True, False])).dtype) \
        == "UInt8"


def test_values_compare_by_what_they_are():
    a, b = columns.compare_keys(pd.Series([True, False, None], dtype="boolean"),
                                pd.Series(["True", "False", None], dtype="str"))
    assert list(a == b)[:2] == [True, True] and a[2] is None and b[2] is None
    a, b = columns.compare_keys(pd.Series([1, 2]), pd.Series(["1", "02"]))
    assert list(a == b) == [True, True]
    a, b = columns.compare_keys(pd.Series(pd.to_datetime(["2024-03-01", "2024-03-02 12:30"],
                                                              format="ISO8601")),
                                pd.Series(["2024-03-01", "2024-03-02 12:30:00"]))
    assert list(a == b) == [True, True]
    assert columns.canonical("other") == "other" and columns.canonical(2.50) == "2.5"


def test_a_recoding_keeps_the_kind():
    married = pd.Series([True, False, True], name="married")
    out = recode(married, groups={"yes": ["True"]}).values
    assert columns.storage(out) == "text" and out.tolist() == ["yes", "False", "yes"]
    same = recode(married, min_count=1).values
    assert same.dtype == bool and same.equals(married)
    cats = pd.Series(pd.Categorical(["a", "b", "c", "a"]), name="c")
    merged = recode(cats, groups={"a": ["b"]}).values
    assert isinstance(merged.dtype, pd.CategoricalDtype) and merged.tolist() == ["a"] * 2 + [
        "c", "a"]
    codes = pd.Series(pd.Categorical([1, 2, 3, 1]), name="k")
    other = recode(codes, min_count=2).values
    assert list(other.cat.categories) == ["1", "2", "3", "other"]


def test_calendar_dates_are_read_as_dates():
    df = pd.DataFrame({"d": [dt.date(2024, 1, 1), None, dt.date(2024, 5, 3)]})
    back = read_table(table_bytes(df, ".parquet"), name="t.parquet")
    assert columns.storage(back["d"]) == "datetime"


def test_mixed_columns_are_written_to_parquet_as_text():
    df = pd.DataFrame({"m": [1, "a", None, 2.5]}, dtype=object)
    back = read_table(table_bytes(df, ".parquet"), name="t.parquet")
    assert back["m"].tolist()[:2] == ["1", "a"] and back["m"].isna().tolist()[2]


# --- the walk's file ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def treatment() -> pd.DataFrame:
    return corpus.load("Ecdat/Treatment")


def test_local_suppression_takes_true_false_keys(treatment):
    """Bug 1: ``Invalid value 'nan' for dtype 'bool'``. Now the True/False key keeps its
    kind, with blanks."""
    out = local_suppression(treatment, WALK_QI, 5)
    assert class_sizes(out.data, WALK_QI).fk.min() >= 5
    assert columns.storage(out.data["married"]) == "boolean"


def test_recoding_a_true_false_key_links_and_costs_nothing(treatment, tmp_path):
    """Bugs 2 and 3: a recoding of `married` that changes no value left the attack at zero
    re-identifications on the written file and cost IL1 = 1 on the page."""
    recipe = {"version": 1, "seed": 1, "steps": [
        {"method": "recode", "column": "married", "min_count": 5}]}
    page = evaluate(treatment, recipe_json(recipe["steps"], 1), WALK_QI, None, 5, "wildcard",
                    1.0, [])
    assert page.utility["per_column"]["married"] == 0.0
    original = tmp_path / "treatment.csv"
    original.write_bytes(table_bytes(treatment, ".csv"))
    (tmp_path / "r.json").write_text(json.dumps(recipe))
    released = apply_recipe(parse_recipe(recipe), treatment).data
    assert categorical_il1(treatment["married"], released["married"]) == (0.0, False)
    naive = page.after["expected_reidentifications"]
    assert page.after["linkage_reidentifications"] == pytest.approx(naive, abs=1e-9) and naive > 0
    for ext in (".csv", ".parquet"):
        out = tmp_path / f"out{ext}"
        assert main(["apply", str(original), "--recipe", str(tmp_path / "r.json"), "-o",
                     str(out)]) == 0


def test_the_walk_reaches_k5_on_the_page_in_a_sweep_and_in_apply(treatment, tmp_path, capsys):
    """Item 5: local suppression to k = 5 on the walk's keys: the same figures on the Protect
    page, in a sweep row and from ``apply`` + ``risk`` on the written file."""
    steps = [{"method": "band", "column": "age", "width": 5},
             {"method": "local_suppression", "columns": WALK_QI, "k": 5}]
    page = evaluate(treatment, recipe_json(steps, 0), WALK_QI, None, 5, "wildcard", 1.0,
                    ["age", "educ", "re74", "re75", "re78"])
    assert page.after["fk"].min() >= 5
    grid = {"combine": True, "numeric": ["age", "educ", "re74", "re75", "re78"], "settings": [
        {"method": "band", "column": "age", "param": "width", "values": [5]},
        {"method": "local_suppression", "columns": WALK_QI, "param": "k", "values": [5]}]}
    table = run_sweep(treatment, WALK_QI, grid).table
    row = table[table["method"] == "band+local_suppression"].iloc[0]
    original = tmp_path / "treatment.csv"
    original.write_bytes(table_bytes(treatment, ".csv"))
    (tmp_path / "r.json").write_text(json.dumps({"version": 1, "seed": 0, "steps": steps}))
    assert main(["apply", str(original), "--recipe", str(tmp_path / "r.json"), "-o",
                 str(tmp_path / "out.csv")]) == 0
    capsys.readouterr()
    assert main(["risk", str(tmp_path / "out.csv"), "--qi", ",".join(WALK_QI), "--json",
                 "--no-suda2"]) == 0
    risk = json.loads(capsys.readouterr().out)
    assert risk["min_k"] >= 5
    for key in ("expected_reidentifications", "percent_unique", "percent_k_le_threshold",
                "percent_below_k", "min_k"):
        assert risk[key] == pytest.approx(page.after[key], abs=1e-9)
        if key != "min_k":  # not a sweep column
            assert row[key] == pytest.approx(page.after[key], abs=1e-9)
    for key in ("linkage_reidentifications", "IL1_numeric", "IL1_categorical"):
        assert row[key] == pytest.approx({**page.after, **page.utility}[key], abs=1e-9)


def test_the_walk_reaches_k5_on_the_protect_page(treatment):
    """The same release on the Protect page itself (AppTest): the walk's file uploaded, its
    keys tagged, the recipe loaded; the page shows the figures of ``evaluate`` (above equal to
    the sweep's and the command line's) and no record left unique."""
    from tests.apptest import app_test, tiles
    from ui.logic.text import number

    steps = [{"method": "band", "column": "age", "width": 5},
             {"method": "local_suppression", "columns": WALK_QI, "k": 5}]
    at = app_test(timeout=120).run()
    at.file_uploader(key="uploader").set_value(
        ("treatment.csv", table_bytes(treatment, ".csv"), "text/csv")).run()
    at.multiselect(key="w_qi").set_value(WALK_QI).run()
    at.switch_page("views/protect.py").run()
    recipe = json.dumps({"version": 1, "seed": 0, "steps": steps}).encode()
    at.file_uploader(key="recipe_upload").set_value(("walk.json", recipe,
                                                     "application/json")).run()
    assert not at.exception and any("Recipe loaded" in s.value for s in at.success)
    shown = {m.label: m.value for m in tiles(at)}
    numeric = list(at.session_state["roles"].numeric)
    page = evaluate(read_table(table_bytes(treatment, ".csv"), name="t.csv"),
                    recipe_json(steps, 0), WALK_QI, None, 5, "wildcard", 1.0, numeric)
    assert page.after["fk"].min() >= 5 and shown["Unique records"] == "0.00 %"
    # k in front: the smallest class, and no record in a class smaller than k
    assert shown["Smallest class"] == f"{page.after['min_k']:g}" and page.after["min_k"] >= 5
    assert shown["Records in classes < 5"] == "0.00 %"
    assert shown["Keys' re-identifications"] == \
        f"{number(page.after['expected_reidentifications'])} " \
        f"({page.after['avg_linkage_risk_percent']:.2f} %)"
    assert shown["Linkage attack re-identifications"] == \
        f"{number(page.after['linkage_reidentifications'])} " \
        f"({page.after['linkage_risk_percent']:.2f} %)"
    assert shown["IL1 categorical"] == f"{page.utility['IL1_categorical']:.4f}"
