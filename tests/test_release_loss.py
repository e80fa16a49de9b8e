"""The headline loss IL1_release = (1/|C|) Σ_{c∈C} IL1_c over the released columns C: its
definition by hand, that a step on another column never lowers it, and one figure for the same
release on the Protect page, in a sweep row, in the report and in ``compare`` on the written
file."""

import contextlib
import io
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdc_core import cli
from sdc_core.data.io import EXAMPLE_PATH, table_bytes
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.roles import EXAMPLE_ROLES
from sdc_core.sweep.run import SweepContext, run_sweep
from sdc_core.utility import il1
from ui.logic.report import utility_table
from ui.logic.workbench import evaluate, recipe_json


def test_release_loss_by_hand():
    x = pd.DataFrame({"id": [1, 2, 3, 4], "a": [0.0, 5.0, 10.0, 10.0],
                      "c": ["u", "v", "w", "u"], "d": [1, 2, 3, 4], "e": ["p", "p", "q", "q"]})
    y = pd.DataFrame({"id": [9, 8, 7, 6], "a": [1.0, 5.0, 7.0, 10.0],
                      "c": ["u", "u", "w", "u"], "e": ["p", "p", "q", "q"]})  # d dropped
    r = il1(x, y, ["a"], not_released=["id"])
    # C = {a, c, d, e} (id is not released, so scrambling it costs nothing), |C| = 4:
    # a: range 10, |x′ − x| = 1, 0, 3, 0 → IL1_a = 4 / 10 / 4 = 0.1
    # c: v → u in 1 of 4 rows → IL1_c = 0.25
    # d: dropped → 1;  e: unchanged → 0
    # IL1_release = (0.1 + 0.25 + 1 + 0) / 4 = 0.3375
    assert r.released == ["a", "c", "d", "e"] and r.dropped == ["d"]
    assert r.per_column == pytest.approx({"a": 0.1, "c": 0.25, "e": 0.0, "d": 1.0})
    assert r.IL1_release == pytest.approx(0.3375, abs=1e-15)
    # seed 003's IL1_overall: mean of IL1_numeric (a: 0.1) and IL1_categorical (c: 0.25) over
    # the changed columns; the dropped d is not compared, so not among them
    assert r.changed == ["a", "c"] and r.IL1_overall == pytest.approx(0.175, abs=1e-15)
    # id released too: compared as categories (not in numeric), all 4 values differ → 1;
    # C has 5 columns: (0.1 + 0.25 + 1 + 0 + 1) / 5 = 0.47
    everything = il1(x, y, ["a"])
    assert everything.IL1_release == pytest.approx(0.47, abs=1e-15)
    assert everything.without(["id"]) == r  # the page's path: every column, then without
    assert il1(x, x, ["a"], not_released=["id"]).IL1_release == 0.0
    nothing = il1(x[["id"]], y[["id"]], not_released=["id"])  # C empty
    assert nothing.IL1_release == 0.0 and nothing.released == []


NUM_STEPS = (
    [{"method": "band", "width": w} for w in (1, 2, 5)]
    + [{"method": "rank_swap", "window_percent": w} for w in (10, 50)]
    + [{"method": "top_bottom_code", "top": 3.0}])
CAT_STEPS = ([{"method": "pram", "p": p} for p in (0.2, 0.6)]
             + [{"method": "recode", "min_count": m} for m in (2, 4)]
             + [{"method": "relabel", "alpha": 0.5}])


@st.composite
def releases(draw):
    """A table (two numeric columns with blanks, two categorical, an id not released), the
    steps of a recipe on distinct columns in any order, and a step on yet another column."""
    n = draw(st.integers(2, 25))
    nums = st.one_of(st.none(), st.sampled_from([0.0, 1.0, 2.5, 4.0, 7.0, 10.0]))
    cats = st.one_of(st.none(), st.sampled_from(["a", "b", "c", "d"]))
    df = pd.DataFrame({"id": range(n),
                       "x": pd.array(draw(st.lists(nums, min_size=n, max_size=n)), "Float64"),
                       "y": pd.array(draw(st.lists(nums, min_size=n, max_size=n)), "Float64"),
                       "s": draw(st.lists(cats, min_size=n, max_size=n)),
                       "t": draw(st.lists(cats, min_size=n, max_size=n))}).astype(
        {"s": object, "t": object})
    columns = draw(st.permutations(["x", "y", "s", "t", "id"]))
    k = draw(st.integers(0, 4))

    def step(c):
        pool = CAT_STEPS if c in ("s", "t") else NUM_STEPS
        return {**draw(st.sampled_from(pool)), "column": c}
    return df, [step(c) for c in columns[:k]], step(columns[k]), draw(st.integers(0, 99))


@settings(max_examples=80, deadline=None)
@given(releases())
def test_a_step_on_another_column_never_lowers_the_release_loss(release):
    df, steps, extra, seed = release
    numeric = ["x", "y"]
    ctx = SweepContext(df, ["s", "t"], numeric, 2, None, "wildcard", 1.0,
                       not_released=["id"])
    losses = []
    for recipe in (steps, steps + [extra]):
        out = apply_recipe(parse_recipe({"seed": seed, "steps": recipe}), df).data
        page = il1(df, out, numeric, not_released=["id"]).IL1_release
        assert ctx.evaluate(recipe, seed)["IL1_release"] == page  # one figure
        losses.append(page)
    # the other columns' values are the same (the new step comes last, so earlier random
    # draws are unchanged): its IL1 ≥ 0 is added to a sum over the same |C| columns
    assert losses[1] >= losses[0]


QI, NUMERIC = EXAMPLE_ROLES.qi, EXAMPLE_ROLES.numeric
SEED = 11


def _compare(original, protected, *extra: str) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["compare", str(original), str(protected), "--numeric",
                         ",".join(NUMERIC), "--json", *extra]) == 0
    return json.loads(out.getvalue())


def test_page_sweep_report_and_compare_give_one_release_loss(actg, tmp_path):
    grid = {"seeds": 1, "seed": SEED, "numeric": NUMERIC, "not_released": EXAMPLE_ROLES.ignore,
            "combine": True, "settings": [
                {"method": "rank_swap", "column": "wtkg", "param": "window_percent",
                 "values": [5]},
                {"method": "pram", "column": "race", "param": "p", "values": [0.1]},
                {"method": "band", "column": "age", "param": "width", "values": [10]}]}
    row = run_sweep(actg, QI, grid).table.iloc[1]
    recipe = json.loads(row["recipe"])
    assert [s["method"] for s in recipe["steps"]] == ["band", "pram", "rank_swap"]
    # the Protect page (and the report: the same Workbench, read with the page's roles)
    wb = evaluate(actg, recipe_json(recipe["steps"], recipe["seed"]), QI, None, 5, "wildcard",
                  1.0, NUMERIC)
    page = wb.utility_for(EXAMPLE_ROLES.ignore)
    assert len(page["released"]) == actg.shape[1] - 1  # every column but pidnum
    assert page["IL1_release"] == row["IL1_release"]
    report = utility_table(page).set_index("measure")["value"]
    assert report.iloc[0] == row["IL1_release"]
    assert report["IL1 overall"] == row["IL1_overall"] == page["IL1_overall"]
    # by hand: the three changed columns' IL1 over the 26 released columns
    by_hand = sum(page["per_column"][c] for c in ("age", "race", "wtkg")) / 26
    assert page["IL1_release"] == pytest.approx(by_hand, rel=1e-15)
    # compare on the file the Export page writes (the not-released column left out, or kept)
    released = wb.applied.data
    for keep in (False, True):
        written = released if keep else released.drop(columns=EXAMPLE_ROLES.ignore)
        for ext in (".parquet", ".csv"):
            path = tmp_path / f"released_{keep}{ext}"
            path.write_bytes(table_bytes(written, ext))
            got = _compare(EXAMPLE_PATH, path, "--not-released", "pidnum")
            assert got["IL1_release"] == row["IL1_release"]
            assert got["IL1_overall"] == pytest.approx(row["IL1_overall"], rel=1e-12)
    # without --not-released, the missing pidnum counts as dropped: IL1 1 over 27 columns
    got = _compare(EXAMPLE_PATH, tmp_path / "released_False.parquet")
    assert got["dropped_columns"] == ["pidnum"]
    assert got["IL1_release"] == pytest.approx((by_hand * 26 + 1) / 27, rel=1e-12)


def test_release_loss_of_one_at_a_time_rows_and_the_baseline(actg):
    grid = {"numeric": NUMERIC, "not_released": ["pidnum"], "settings": [
        {"method": "band", "column": "age", "param": "width", "values": [10]}]}
    table = run_sweep(actg, QI, grid).table
    assert table.at[0, "IL1_release"] == 0.0
    # seed 003's 10-year bands: IL1_age 0.0438571 over the 26 released columns
    assert table.at[1, "IL1_release"] == pytest.approx(0.04385710370621141 / 26, abs=1e-15)
    assert table.at[1, "IL1_overall"] == pytest.approx(0.04385710370621141, abs=1e-12)
    np.testing.assert_array_equal(table["pareto"], [True, True])


def test_compare_names_dropped_columns_and_refuses_bad_ones_in_one_line(actg, tmp_path, capsys):
    kept = tmp_path / "kept.parquet"
    kept.write_bytes(table_bytes(actg.drop(columns=["pidnum", "cd40"]), ".parquet"))
    assert cli.main(["compare", str(EXAMPLE_PATH), str(kept), "--not-released", "pidnum"]) == 0
    lines = capsys.readouterr().out.splitlines()
    # cd40 is released and missing: dropped, IL1 1 over the 26 released columns
    assert lines[0] == f"IL1 release      {1 / 26:.6f} (mean IL1 over the 26 released columns)"
    assert lines[1] == "IL1 overall      0.000000 (mean over the changed columns)"
    assert "  dropped: cd40 (IL1 1)" in lines
    for bad, message in (
            (["--not-released", "nosuch"], "unknown not-released column(s): nosuch"),
            (["--not-released", ""], "expected comma-separated column names")):
        assert cli.main(["compare", str(EXAMPLE_PATH), str(kept), *bad]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("sdc_core: error: ") and message in err[0]
    extra = tmp_path / "extra.parquet"
    extra.write_bytes(table_bytes(actg.assign(note="x"), ".parquet"))
    assert cli.main(["compare", str(EXAMPLE_PATH), str(extra)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["sdc_core: error: the tables have different columns (only in the protected: "
                   "note)"]


def test_compare_on_duckdb_gives_the_same_release_loss(actg, tmp_path):
    recipe = parse_recipe({"seed": 4, "steps": [
        {"method": "band", "column": "age", "width": 5},
        {"method": "rank_swap", "column": "wtkg", "window_percent": 5},
        {"method": "drop", "columns": ["cd40"]}]})
    out = tmp_path / "out.parquet"
    out.write_bytes(table_bytes(apply_recipe(recipe, actg).data.drop(columns="pidnum"),
                                ".parquet"))
    pandas = _compare(EXAMPLE_PATH, out, "--not-released", "pidnum")
    duckdb = _compare(EXAMPLE_PATH, out, "--not-released", "pidnum", "--engine", "duckdb")
    assert pandas["dropped_columns"] == duckdb["dropped_columns"] == ["cd40"]
    assert duckdb["IL1_release"] == pytest.approx(pandas["IL1_release"], rel=1e-12)
    assert pandas["IL1_release"] == pytest.approx(
        (pandas["per_column"]["age"] + pandas["per_column"]["wtkg"] + 1) / 26, rel=1e-15)
