"""Combined grids and the cheapest setting under a risk target: rows equal apply + compare of
their recipes, the pruned search finds what trying everything finds, budget and target errors."""

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.common import survey_table
from sdc_core.errors import SdcInputError
from sdc_core.methods.banding import measured
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.risk import risk_profile
from sdc_core.risk.linkage import linkage_attack
from sdc_core.sweep.run import LOSS, run_sweep
from sdc_core.sweep.search import Dimension, Target, pruned_search, violations
from sdc_core.utility import eigenvalue_similarity, il1
from tests.cli_run import run
from tests.conftest import ROOT

QI = ["age", "gender", "race"]
NUMERIC = ["age", "wtkg", "cd40"]
GRID = {"combine": True, "seeds": 2, "numeric": NUMERIC, "known": ["cd40"], "settings": [
    {"method": "pram", "column": "race", "param": "p", "values": [0.2, 0]},
    {"method": "band", "column": "age", "param": "width", "values": [10, 0, 5]},
    {"method": "rank_swap", "column": "wtkg", "param": "window_percent", "values": [0, 5]},
    {"method": "recode", "column": "karnof", "param": "min_count", "values": [0, 100]},
    {"method": "local_suppression", "columns": QI, "param": "k", "values": [0, 3]}]}
MEASURES = ["percent_unique", "percent_k_le_threshold", "avg_linkage_risk_percent",
            "expected_reidentifications", "linkage_reidentifications", "linkage_risk_percent",
            "IL1_numeric", "IL1_categorical", "IL1_overall", "eigenvalue_similarity_percent",
            "suppressed_values", "IL1_release", "percent_below_k"]


@pytest.fixture(scope="module")
def combined(actg):
    return run_sweep(actg, QI, GRID)


def test_every_combination_in_the_protect_pages_order(combined):
    table = combined.table
    assert combined.asked == combined.evaluated == 2 * 3 * 2 * 2 * 2 == len(table) - 1
    assert table.columns[-1] == "recipe" and "band age width" in table
    steps = [json.loads(r)["steps"] for r in table["recipe"].iloc[1:]]
    assert steps[0] == []  # every method off: the first, weakest combination
    order = ["band", "recode", "pram", "rank_swap", "local_suppression"]  # declared order
    for s in steps:
        methods = [step["method"] for step in s]
        assert methods == sorted(methods, key=order.index)
    # off values leave the step out and the values are ordered weakest first
    assert table["band age width"].iloc[1:3].tolist() == [0, 0]
    assert sorted(set(table["band age width"].iloc[1:])) == [0, 5, 10]
    assert (table["n_steps"].iloc[1:] == [len(s) for s in steps]).all()


def test_rows_equal_apply_and_compare_of_their_recipes(actg, combined):
    table = combined.table
    random = table["method"].str.contains("pram|rank_swap")
    picks = [1, 2] + table.index[random].tolist()[-2:] + table.index[~random].tolist()[-2:]
    for i in picks:
        recipe = json.loads(table.at[i, "recipe"])
        seeds = [0, 1] if table.at[i, "n_seeds"] == 2 else [0]
        rows = []
        for seed in seeds:
            r = parse_recipe({**recipe, "seed": seed})
            out = apply_recipe(r, actg).data
            p = risk_profile(out, QI)
            numbers = measured(actg, out)  # band labels as their midpoints
            numeric = [c for c in NUMERIC if pd.api.types.is_numeric_dtype(numbers[c])]
            u = il1(actg, out, numeric)
            attack = linkage_attack(actg, out, QI, r, ["cd40"])
            rows.append([p.percent_unique, p.percent_k_le_threshold,
                         p.avg_linkage_risk_percent, p.expected_reidentifications,
                         attack.linkage_reidentifications, attack.linkage_risk_percent,
                         u.IL1_numeric, u.IL1_categorical, u.IL1_overall,
                         eigenvalue_similarity(actg, out, NUMERIC),
                         int((out.isna() & actg.notna()).to_numpy().sum()),
                         sum(u.per_column.values()) / actg.shape[1],  # IL1_release
                         p.percent_below_k])
        got = table.loc[i, MEASURES].to_numpy(dtype=float)
        np.testing.assert_allclose(got, np.mean(rows, axis=0), rtol=1e-9, atol=1e-9,
                                   err_msg=table.at[i, "recipe"])


def test_a_step_on_another_column_adds_its_loss_to_il1_release(combined, actg):
    """Recoding karnof (89 of 2,139 levels below 100 become 'other') adds 89/2139 over the 27
    released columns to IL1_release, whatever else the recipe does; IL1_overall, a mean over
    the changed columns, can fall when a cheap step is added."""
    t = combined.table.iloc[1:]
    fixed = t[(t["pram race p"] == 0) & (t["rank_swap wtkg window_percent"] == 0)]
    others = ["band age width", "local_suppression age+gender+race k"]
    pairs = fixed[fixed["recode karnof min_count"] == 0].merge(
        fixed[fixed["recode karnof min_count"] == 100], on=others, suffixes=("", "_recoded"))
    assert len(pairs) == 6
    np.testing.assert_allclose(pairs["IL1_release_recoded"] - pairs["IL1_release"],
                               89 / 2139 / actg.shape[1], rtol=0, atol=1e-12)
    assert (pairs["IL1_overall_recoded"] < pairs["IL1_overall"]).any()


def exhaustive_and_pruned(df, qi, grid):
    return (run_sweep(df, qi, {**grid, "search": "exhaustive"}),
            run_sweep(df, qi, {**grid, "search": "pruned"}))


#: A grid of 144 combinations on ACTG 175, searched for each target below
ACTG_SEARCH = {"combine": True, "seeds": 1, "numeric": NUMERIC, "settings": [
    {"method": "band", "column": "age", "param": "width", "values": [0, 2, 5, 10, 15, 20]},
    {"method": "recode", "column": "race", "param": "min_count", "values": [0, 500]},
    {"method": "local_suppression", "columns": QI, "param": "k", "values": [0, 2, 3, 5]},
    {"method": "rank_swap", "column": "wtkg", "param": "window_percent", "values": [0, 1, 5]}]}


@pytest.fixture(scope="module")
def actg_exhaustive(actg):
    """Every row of :data:`ACTG_SEARCH`: what no target changes (a target only picks a row)."""
    return run_sweep(actg, QI, {**ACTG_SEARCH, "search": "exhaustive",
                                "target": {"measure": "percent_below_k", "at_most": 0.0}})


def best_by_definition(table: pd.DataFrame, measure: str, at_most: float) -> str | None:
    """The recipe of the row that meets the target at the least IL1_release, then fewest
    suppressed values, fewest steps, first in the table (docs/utility.md, "Combined grids and
    the cheapest setting under a risk target")."""
    rows = table.iloc[1:].assign(at=range(len(table) - 1))
    rows = rows[rows[measure] <= at_most + 1e-12]
    if rows.empty:
        return None
    return rows.sort_values([LOSS, "suppressed_values", "n_steps", "at"],
                            kind="stable")["recipe"].iloc[0]


@pytest.mark.parametrize("target", [
    {"measure": "percent_below_k", "at_most": 0.0},  # every class ≥ k
    {"measure": "linkage_risk_percent", "at_most": 1.0},
    {"measure": "percent_k_le_threshold", "at_most": 1.0},
    {"measure": "expected_reidentifications", "at_most": 40},
    {"measure": "linkage_reidentifications", "at_most": 100},
])
def test_pruned_search_finds_the_exhaustive_best_on_actg(actg, actg_exhaustive, target):
    full = actg_exhaustive
    assert not full.pruned and full.evaluated == 144
    best = best_by_definition(full.table, target["measure"], target["at_most"])
    assert best is not None
    pruned = run_sweep(actg, QI, {**ACTG_SEARCH, "search": "pruned", "target": target})
    assert pruned.pruned and pruned.evaluated < 144
    assert json.dumps(pruned.best_recipe, sort_keys=True) == json.dumps(json.loads(best),
                                                                         sort_keys=True)
    # rows the pruned search evaluated are the same rows as in the exhaustive table
    evaluated, everything = pruned.table.iloc[1:], full.table.iloc[1:]
    joined = evaluated.merge(everything, on="recipe", suffixes=("", "_full"))
    assert len(joined) == len(evaluated)
    np.testing.assert_allclose(joined["IL1_release"], joined["IL1_release_full"], atol=0)


@pytest.mark.parametrize("seed", [1, 2])
def test_pruned_search_finds_the_exhaustive_best_on_generated_tables(seed):
    df = survey_table(3000, seed)
    qi = ["age", "sex", "region"]
    grid = {"combine": True, "seeds": 1, "numeric": ["age", "income"],
            "target": {"measure": "percent_k_le_threshold", "at_most": 2.0}, "settings": [
                {"method": "band", "column": "age", "param": "width",
                 "values": [0, 5, 10, 20, 25]},
                {"method": "recode", "column": "region", "param": "min_count",
                 "values": [0, 50, 100, 200]},
                {"method": "local_suppression", "columns": qi, "param": "k",
                 "values": [0, 2, 3]}]}
    full, pruned = exhaustive_and_pruned(df, qi, grid)
    assert full.best is not None
    assert pruned.best_recipe == full.best_recipe
    assert pruned.evaluated < full.evaluated


@st.composite
def monotone_problems(draw):
    """A lattice with random monotone risk and loss (some dimensions not monotone, some
    monotone for risk only)."""
    sizes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    mono = draw(st.lists(st.booleans(), min_size=len(sizes), max_size=len(sizes)))
    weights = draw(st.lists(st.lists(st.integers(0, 3), min_size=4, max_size=4),
                            min_size=len(sizes), max_size=len(sizes)))
    loss_mono = draw(st.lists(st.booleans(), min_size=len(sizes), max_size=len(sizes)))
    noise = draw(st.integers(0, 10**6))
    return sizes, mono, [m and lm for m, lm in zip(mono, loss_mono)], weights, noise


@settings(max_examples=300, deadline=None)
@given(monotone_problems(), st.integers(0, 30))
def test_pruned_search_is_exact_under_monotonicity(problem, at_most):
    sizes, mono, loss_mono, weights, noise = problem
    dims = [Dimension(f"d{i}", "p", tuple(range(n)), tuple(({"i": j},) for j in range(n)), m, lm)
            for i, (n, m, lm) in enumerate(zip(sizes, mono, loss_mono))]
    rng = np.random.default_rng(noise)
    shift = {x: rng.integers(0, 3) for x in itertools.product(*(range(n) for n in sizes))}

    def strength(x):  # non-decreasing in monotone coordinates; free in the others
        return sum(np.cumsum(w)[j] if m else w[j] for w, j, m in zip(weights, x, mono))

    def risk(x):
        return 30 - strength(x)

    def loss(x):  # non-decreasing in the loss-monotone coordinates, free in the others
        return sum(np.cumsum(w)[j] if lm else w[-1 - j]
                   for w, j, lm in zip(weights, x, loss_mono)) \
            + shift[tuple(0 if lm else j for j, lm in zip(x, loss_mono))]

    target = Target("risk", at_most)
    seen = []

    def meets(x):
        seen.append(x)
        return target.met(risk(x))

    pruned_search(dims, meets)
    everything = list(itertools.product(*(range(n) for n in sizes)))
    met = [x for x in everything if target.met(risk(x))]
    order = {x: i for i, x in enumerate(everything)}

    def best(xs):
        return min(xs, key=lambda x: (loss(x), order[x])) if xs else None

    got = best([x for x in seen if target.met(risk(x))])
    want = best(met)
    assert (got is None) == (want is None)
    assert got == want
    assert len(set(seen)) == len(seen)  # nothing evaluated twice
    assert violations(dims, seen, [risk(x) for x in seen], [loss(x) for x in seen]) == 0


@pytest.mark.parametrize("grid, message", [
    ({"combine": True, "settings": [
        {"method": "band", "column": "age", "param": "width", "values": list(range(1, 60))},
        {"method": "pram", "column": "race", "param": "p", "values": [0, 0.1, 0.2]},
        {"method": "pram", "column": "gender", "param": "p", "values": [0, 0.1, 0.2]}]},
     "grid: 531 combinations asked for (59 × 3 × 3), more than max_settings = 500"),
    ({"combine": True, "max_settings": 4, "settings": [
        {"method": "band", "column": "age", "param": "width", "values": [0, 5, 10]},
        {"method": "pram", "column": "race", "param": "p", "values": [0, 0.1]}]},
     "6 combinations asked for (3 × 2), more than max_settings = 4"),
    ({"max_settings": 2, "settings": [
        {"method": "band", "column": "age", "param": "width", "values": [5, 10, 15]}]},
     "3 settings asked for, more than max_settings = 2"),
    ({"target": {"measure": "risk", "at_most": 1}, "settings": []}, "target measure must be"),
    ({"target": {"measure": "linkage_risk_percent", "at_most": -1}, "settings": []},
     "target at_most must be a number ≥ 0"),
    ({"target": {"measure": "linkage_risk_percent"}, "settings": []},
     'target must be {"measure": …, "at_most": …}'),
    ({"combine": "yes", "settings": []}, "combine must be true or false"),
    ({"search": "greedy", "settings": []}, "search must be one of pruned, exhaustive"),
    ({"combine": True, "settings": [
        {"method": "band", "column": "age", "param": "width", "values": [5]},
        {"method": "band", "column": "age", "param": "width", "values": [10]}]},
     "band age width is set twice"),
    ({"combine": True, "settings": [
        {"method": "band", "column": "age", "param": "width", "values": ["wide"]}]},
     "values of width must be numbers"),
])
def test_budget_and_target_errors(actg, grid, message):
    with pytest.raises(SdcInputError) as err:
        run_sweep(actg, QI, grid)
    assert message in str(err.value)


def test_no_setting_meets_the_target(actg):
    grid = {"combine": True, "target": {"measure": "linkage_reidentifications", "at_most": 0},
            "settings": [{"method": "band", "column": "age", "param": "width",
                          "values": [0, 5]}]}
    result = run_sweep(actg, QI, grid)
    assert result.best is None and result.best_recipe is None
    assert not result.table["best"].any() and not result.table["meets_target"].iloc[1:].any()


def cli(*args):
    return run(*args)


def test_cli_prints_and_writes_the_best_recipe(tmp_path, actg):
    grid = {"combine": True, "numeric": NUMERIC,
            "target": {"measure": "linkage_risk_percent", "at_most": 1.0}, "settings": [
                {"method": "band", "column": "age", "param": "width", "values": [0, 5, 10, 15]},
                {"method": "local_suppression", "columns": QI, "param": "k", "values": [0, 3]}]}
    (tmp_path / "grid.json").write_text(json.dumps(grid))
    data = ROOT.parent / "shared" / "data" / "actg175.csv"
    done = cli("sweep", data, "--qi", ",".join(QI), "--grid", tmp_path / "grid.json",
               "-o", tmp_path / "t.csv", "--best-recipe", tmp_path / "best.json")
    assert done.returncode == 0, done.stderr
    assert "pruned search: evaluated" in done.stdout and "best under linkage_risk_percent ≤ 1" \
        in done.stdout
    best = json.loads((tmp_path / "best.json").read_text())
    table = pd.read_csv(tmp_path / "t.csv")
    row = table[table["best"]].iloc[0]
    assert json.loads(row["recipe"])["steps"] == best["steps"]
    assert row["linkage_risk_percent"] <= 1.0
    out = apply_recipe(parse_recipe(best), actg).data
    again = linkage_attack(actg, out, QI, parse_recipe(best))
    assert again.linkage_risk_percent == pytest.approx(row["linkage_risk_percent"], abs=1e-9)
    grid["target"]["at_most"] = 0
    (tmp_path / "grid.json").write_text(json.dumps(grid))
    done = cli("sweep", data, "--qi", ",".join(QI), "--grid", tmp_path / "grid.json",
               "-o", tmp_path / "t.csv", "--best-recipe", tmp_path / "none.json")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "no setting meets linkage_risk_percent ≤ 0" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "none.json").exists()


@pytest.mark.parametrize("combine", [True, False])
def test_one_value_for_several_columns_of_a_one_column_method(actg, combine):
    grid = {"combine": combine, "settings": [
        {"method": "pram", "columns": ["gender", "race"], "param": "p", "values": [0.1, 0.2]},
        {"method": "band", "column": "age", "param": "width", "values": [10]}]}
    table = run_sweep(actg, QI, grid).table
    pram = [json.loads(r)["steps"] for r in table["recipe"] if '"pram"' in r]
    assert len(pram) == 2  # combined: each with bands of 10 years
    for steps in pram:
        both = [s for s in steps if s["method"] == "pram"]
        assert [s["column"] for s in both] == ["gender", "race"]
        assert both[0]["p"] == both[1]["p"]
    if combine:
        assert "pram gender+race p" in table


def test_every_class_at_least_k_is_a_target(actg):
    """``percent_below_k ≤ 0`` (the page's "every class ≥ k"): the best recipe, applied, leaves
    no class smaller than k, and every cheaper combination leaves one."""
    result = run_sweep(actg, QI, {**GRID, "seeds": 1, "k": 3, "search": "exhaustive",
                                  "target": {"measure": "percent_below_k", "at_most": 0.0}})
    table = result.table
    assert result.best is not None
    best = parse_recipe(json.loads(table.at[result.best, "recipe"]))
    assert risk_profile(apply_recipe(best, actg).data, QI, k=3).min_k >= 3
    rows = table.iloc[1:]
    cheaper = rows[rows[LOSS] < table.at[result.best, LOSS]]
    assert len(cheaper) > 0 and (cheaper["percent_below_k"] > 0).all()
