"""Sweeps: Table S4-A of seed 003, agreement with a full recomputation, the Pareto front."""

import json

import numpy as np
import pandas as pd
import pytest

from sdc_core.errors import SdcInputError
from sdc_core.recipe import RANDOM_METHODS, apply_recipe, parse_recipe
from sdc_core.risk import risk_profile
from sdc_core.risk.linkage import linkage_attack
from sdc_core.sweep.run import COLUMNS, pareto_front, parse_grid, run_sweep
from sdc_core.utility import eigenvalue_similarity, il1
from tests.cli_run import run
from tests.conftest import ROOT
from tests.sweep_grid import GRID, NUMERIC, QI


@pytest.fixture(scope="module")
def table(actg):
    return run_sweep(actg, QI, GRID).table


def test_table_s4a_deterministic_columns(table):
    assert list(table.columns[: len(COLUMNS)]) == COLUMNS
    s4a = {  # Table S4-A: percent_unique, k<=5, avg linkage, expected re-ids, eigen similarity
        "BASELINE": (1.3557737260402059, 10.518934081346423, 8.508648901355773, 182, 100.0),
        5: (0.09350163627863488, 1.402524544179523, 2.0570359981299675, 44, 99.93706208855507),
        10: (0.09350163627863488, 0.6077606358111267, 100 * 25 / 2139, 25, 99.74682945827294),
        15: (0.04675081813931744, 0.3740065451145395, 0.8415147265077139, 18, 99.39224354378824),
    }
    base = table.iloc[0]
    bands = table[table["method"] == "band"].set_index("param_value")
    for key, expected in s4a.items():
        row = base if key == "BASELINE" else bands.loc[key]
        got = [row["percent_unique"], row["percent_k_le_threshold"],
               row["avg_linkage_risk_percent"], row["expected_reidentifications"],
               row["eigenvalue_similarity_percent"]]
        np.testing.assert_allclose(got[:4], expected[:4], rtol=0, atol=1e-9)
        assert got[4] == pytest.approx(expected[4], abs=1e-9)
    assert bands.loc[10, "IL1_overall"] == pytest.approx(0.04385710370621141, abs=1e-12)
    assert base["method"] == "BASELINE" and base["IL1_overall"] == 0


def test_pram_rows_have_categorical_loss_near_p(table, actg):
    pram_rows = table[table["method"] == "pram"]
    assert len(pram_rows) == 6 and (pram_rows["n_seeds"] == 5).all()
    for row in pram_rows.itertuples():
        p = row.param_value
        se = np.sqrt(p * (1 - p) / (len(actg) * 5))  # mean share over 5 seeds
        assert abs(row.IL1_categorical - p) < 4 * se
        assert row.IL1_numeric == 0 and row.eigenvalue_similarity_percent == 100
        assert row.IL1_categorical_sd > 0


def test_fast_path_equals_full_recomputation(actg):
    grid = {"seeds": 2, "numeric": NUMERIC, "known": ["cd40"], "settings": [
        {"method": "band", "column": "age", "param": "width", "values": [7]},
        {"method": "rank_swap", "column": "cd496", "param": "window_percent", "values": [5]},
        {"method": "rank_swap", "column": "age", "param": "window_percent", "values": [5]},
        {"method": "pram", "column": "gender", "param": "p", "values": [0.2]},
        {"method": "recode", "column": "race", "param": "min_count", "values": [700]},
        {"method": "noise", "columns": ["wtkg", "cd40"], "param": "p", "values": [100]},
        {"method": "microaggregation", "columns": ["wtkg", "cd40"], "param": "k",
         "values": [4], "fixed": {"algorithm": "mdav"}},
        {"method": "relabel", "column": "race", "param": "alpha", "values": [0.3]},
        {"method": "local_suppression", "columns": QI, "param": "k", "values": [3]}]}
    fast = run_sweep(actg, QI, grid).table.iloc[1:].reset_index(drop=True)
    settings = parse_grid(grid, actg).settings
    for i, s in enumerate(settings):
        seeds = [0, 1] if s.step["method"] in RANDOM_METHODS else [0]
        rows = []
        for seed in seeds:
            recipe = parse_recipe({"seed": seed, "steps": [s.step]})
            out = apply_recipe(recipe, actg).data
            p = risk_profile(out, QI)
            u = il1(actg, out, NUMERIC)
            attack = linkage_attack(actg, out, QI, recipe, ["cd40"])
            rows.append([p.percent_unique, p.percent_k_le_threshold, p.avg_linkage_risk_percent,
                         p.expected_reidentifications, attack.linkage_reidentifications,
                         attack.linkage_risk_percent, u.IL1_numeric, u.IL1_categorical,
                         u.IL1_overall, eigenvalue_similarity(actg, out, NUMERIC)])
        expected = np.mean(rows, axis=0)
        got = fast.loc[i, ["percent_unique", "percent_k_le_threshold",
                           "avg_linkage_risk_percent", "expected_reidentifications",
                           "linkage_reidentifications", "linkage_risk_percent",
                           "IL1_numeric", "IL1_categorical", "IL1_overall",
                           "eigenvalue_similarity_percent"]].to_numpy(dtype=float)
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)


def test_linkage_columns_and_pareto_risk(actg):
    grid = {"seeds": 3, "numeric": NUMERIC, "settings": [
        {"method": "band", "column": "age", "param": "width", "values": [10]},
        {"method": "pram", "column": "race", "param": "p", "values": [0.5]},
        {"method": "rank_swap", "column": "age", "param": "window_percent", "values": [20]}]}
    table = run_sweep(actg, QI, grid).table.set_index("method")
    assert table.loc["BASELINE", "linkage_reidentifications"] == pytest.approx(182, abs=1e-9)
    assert table.loc["band", "linkage_reidentifications"] == pytest.approx(25, abs=1e-9)
    for method in ("pram", "rank_swap"):  # the naive risk stays near 182, the attack drops
        assert table.loc[method, "expected_reidentifications"] > 175
        assert table.loc[method, "linkage_reidentifications"] < 100
        assert table.loc[method, "linkage_reidentifications_sd"] > 0
    # by the attack a 20 % age swap re-identifies fewer than 10-year bands at less loss: it
    # dominates them; read naively it removes no risk, and the bands are on the front
    swap, bands = table.loc["rank_swap"], table.loc["band"]
    assert swap["linkage_reidentifications"] < bands["linkage_reidentifications"]
    assert swap["IL1_overall"] < bands["IL1_overall"]
    assert bool(swap["pareto"]) and not bool(bands["pareto"])
    naive = run_sweep(actg, QI, {**grid, "pareto_risk": "naive"}).table.set_index("method")
    assert bool(naive.loc["band", "pareto"])
    assert naive["expected_reidentifications"].tolist() == \
        table["expected_reidentifications"].tolist()


def test_pareto_front():
    risk = np.array([10, 5, 5, 1, 8])
    loss = np.array([0, 1, 2, 3, 3])
    assert pareto_front(risk, loss).tolist() == [True, True, False, True, False]


@pytest.mark.parametrize("grid, message", [
    ({"settings": []}, "settings must be a non-empty list"),
    ({"settings": [{"method": "band", "column": "age", "param": "width"}]}, "missing key 'values'"),
    ({"settings": [{"method": "band", "column": "zzz", "param": "width", "values": [5]}]},
     "unknown column(s) zzz"),
    ({"settings": [{"method": "band", "column": "age", "param": "width", "values": ["x"]}]},
     "width must be a number"),
    ({"seeds": 0, "settings": []}, "seeds must be a whole number"),
    ({"seeds": 1_000_000, "settings": []}, "seeds must be a whole number from 1 to 100"),
    ({"seed": 2**64, "settings": []}, "seed must be a whole number from 0 to"),
    ({"max_settings": 10**9, "settings": []}, "max_settings must be a whole number from 1 to"),
    ({"speed": 1, "settings": []}, "unknown key(s) speed"),
    ({"pareto_risk": "x", "settings": []}, "pareto_risk must be one of linkage, naive"),
    ({"known": ["zzz"], "settings": []}, "unknown known column(s) zzz"),
    ({"il1_missing": "zero", "settings": []}, "il1_missing must be one of max, ignore"),
    ({"settings": [{"method": ["band"], "column": "age", "param": "width", "values": [5]}]},
     "unknown method ['band']"),
    ({"settings": [{"method": {"a": 1}, "column": "age", "param": "width", "values": [5]}]},
     "unknown method {'a': 1}"),
])
def test_grid_errors(actg, grid, message):
    with pytest.raises(SdcInputError) as err:
        run_sweep(actg, QI, grid)
    assert message in str(err.value)


def test_suppression_costs_more_il1_under_max_than_ignore(actg):
    setting = {"method": "local_suppression", "columns": QI, "param": "k", "values": [5]}
    rows = {m: run_sweep(actg, QI, {"numeric": NUMERIC, "il1_missing": m, "settings": [setting]})
            .table.iloc[1] for m in ("max", "ignore")}
    blanked = rows["max"]["suppressed_values"]
    assert blanked > 0 and blanked == rows["ignore"]["suppressed_values"]
    # only ages are blanked (every age is present in the original); the rest is unchanged
    protected = apply_recipe(parse_recipe({"seed": 0, "steps": [
        {"method": "local_suppression", "columns": QI, "k": 5}]}), actg).data
    assert int(protected["age"].isna().sum()) == blanked and actg["age"].notna().all()
    assert rows["ignore"]["IL1_overall"] == 0.0  # sdcMicro's reading: blanks cost nothing
    assert rows["max"]["IL1_overall"] == pytest.approx(blanked / len(actg), abs=1e-12)
    assert rows["max"]["IL1_numeric"] > rows["ignore"]["IL1_numeric"]


def test_cli_sweep_and_compare(tmp_path):
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps(GRID))
    out = tmp_path / "table.csv"
    data = ROOT / "sdc_core" / "data" / "actg175.csv"
    res = run("sweep", data, "--qi", "age,gender,race", "--grid", grid, "-o", out)
    assert res.returncode == 0, res.stderr
    assert "sweep: 33/33" in res.stderr  # progress on stderr
    table = pd.read_csv(out)
    assert len(table) == 10 and table["pareto"].dtype == bool
    protected = tmp_path / "p.csv"
    recipe = tmp_path / "r.json"
    recipe.write_text('{"seed": 1, "steps": [{"method": "band", "column": "age", "width": 10}]}')
    assert run("apply", data, "--recipe", recipe, "-o", protected).returncode == 0
    res = run("compare", data, protected, "--numeric", ",".join(NUMERIC), "--json")
    assert res.returncode == 0, res.stderr
    r = json.loads(res.stdout)
    assert round(r["IL1_overall"], 7) == 0.0438571
    assert round(r["eigenvalue_similarity_percent"], 6) == 99.746829
    assert r["changed_columns"] == ["age"]
    res = run("compare", data, out)  # a sweep's table is no release of the data
    assert res.returncode == 2 and res.stderr.count("\n") == 1
    assert "the tables have different columns (only in the protected: " in res.stderr
