"""Attribute disclosure in a sweep (docs/utility.md, "Attribute disclosure in a sweep"): the
deniability and inference columns equal the core's functions, the ε and inference-gain targets
pick the cheapest setting that meets them, and bad grids are refused in one line."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from sdc_core.errors import SdcInputError
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.risk.closeness import closeness
from sdc_core.risk.deniability import recipe_deniability
from sdc_core.risk.inference import attribute_inference
from sdc_core.sweep.run import COLUMNS, parse_grid, run_sweep

QI = ["sex", "region"]
KNOWN = ["age"]
SENSITIVE = ["N1", "N2"]
ALPHAS = [0.05, 0.1, 0.2, 0.4, 0.6, 0.8]
PS = [0.05, 0.1, 0.3, 0.5]
GRID = {"seeds": 1, "known": KNOWN, "sensitive": SENSITIVE, "settings": [
    {"method": "band", "column": "age", "param": "width", "values": [5, 10]},
    {"method": "relabel", "column": "N1", "param": "alpha", "values": ALPHAS},
    {"method": "pram", "column": "N1", "param": "p", "values": PS},
    {"method": "pram", "column": "region", "param": "p", "values": [0.1]}]}


@pytest.fixture(scope="module")
def survey() -> pd.DataFrame:
    """600 respondents: two keys, a known age, and two answers scored 1–6, N2 tied to sex."""
    rng = np.random.default_rng(42)
    n = 600
    sex = rng.choice(["F", "M"], n)
    return pd.DataFrame({
        "sex": sex,
        "region": rng.choice([f"R{i}" for i in range(6)], n, p=[.3, .2, .2, .1, .1, .1]),
        "age": rng.integers(18, 80, n),
        "N1": rng.choice(np.arange(1, 7), n, p=[.35, .25, .15, .1, .1, .05]),
        "N2": np.where(sex == "F", rng.integers(1, 4, n), rng.integers(3, 7, n))})


@pytest.fixture(scope="module")
def sweep(survey):
    return run_sweep(survey, QI, GRID)


def _row(table: pd.DataFrame, method: str, column: str, value: float) -> pd.Series:
    rows = table[(table["method"] == method) & (table["column"] == column)
                 & (table["param_value"] == value)]
    assert len(rows) == 1
    return rows.iloc[0]


@pytest.mark.parametrize(("method", "column", "value"),
                         [("relabel", "N1", 0.2), ("pram", "N1", 0.1), ("pram", "region", 0.1),
                          ("band", "age", 10)])
def test_the_columns_equal_the_core_functions_on_the_same_release(survey, sweep, method, column,
                                                                  value):
    row = _row(sweep.table, method, column, value)
    recipe = parse_recipe(json.loads(row["recipe"]))
    released = apply_recipe(recipe, survey)
    inference = attribute_inference(survey, released.data, QI, SENSITIVE, recipe, KNOWN,
                                    reports=released.reports)
    for c in inference.columns:
        assert row[f"inference_accuracy: {c.column}"] == pytest.approx(c.accuracy, abs=1e-12)
        assert row[f"inference_gain: {c.column}"] == pytest.approx(c.gain, abs=1e-9)
    assert row["inference_gain"] == pytest.approx(inference.gain, abs=1e-9)
    deniability = {d.column: d for d in recipe_deniability(recipe, survey)}
    assert set(deniability) == ({column} if method != "band" else set())
    for c in ("N1", "region"):
        if c in deniability:
            assert row[f"epsilon: {c}"] == pytest.approx(deniability[c].epsilon, abs=1e-12)
            assert row[f"guess_accuracy: {c}"] == pytest.approx(deniability[c].guess_accuracy,
                                                                abs=1e-12)
        else:  # a column the row does not perturb has no figure
            assert np.isnan(row[f"epsilon: {c}"]) and np.isnan(row[f"guess_accuracy: {c}"])
    expected_max = max((d.epsilon for d in deniability.values()), default=np.nan)
    assert row["epsilon_max"] == pytest.approx(expected_max, nan_ok=True)


def test_the_baseline_is_the_attack_on_the_original(survey, sweep):
    base = sweep.table.iloc[0]
    assert base["method"] == "BASELINE"
    inference = attribute_inference(survey, survey, QI, SENSITIVE, known=KNOWN)
    assert base["inference_accuracy: N2"] == pytest.approx(inference.columns[1].accuracy)
    assert base["inference_gain"] == pytest.approx(inference.gain)
    assert np.isnan(base["epsilon_max"])  # no perturbation, no deniability figure
    # N2 is tied to sex: the attack gains on it; more relabeling of N1 lowers its accuracy
    assert base["inference_gain: N2"] > 20
    relabel = sweep.table[sweep.table["method"] == "relabel"]
    assert relabel["inference_accuracy: N1"].iloc[-1] < relabel["inference_accuracy: N1"].iloc[0]


def test_the_columns_come_in_order_and_only_when_asked(survey, sweep):
    attribute = ["epsilon: N1", "guess_accuracy: N1", "epsilon: region", "guess_accuracy: region",
                 "epsilon_max", "inference_accuracy: N1", "inference_gain: N1",
                 "inference_accuracy: N2", "inference_gain: N2", "inference_gain"]
    columns = list(sweep.table.columns)
    assert [c for c in columns if c in attribute] == attribute
    plain = {"seeds": 1, "known": KNOWN, "settings": GRID["settings"][:1]}
    table = run_sweep(survey, QI, plain).table
    assert not [c for c in table.columns if "epsilon" in c or "inference" in c]
    assert list(table.columns[: len(COLUMNS)]) == COLUMNS


def test_todays_figures_do_not_change(survey, sweep):
    today = run_sweep(survey, QI, {k: v for k, v in GRID.items() if k != "sensitive"}).table
    shared = [c for c in today.columns if c in sweep.table.columns]
    assert not [c for c in today.columns if "inference" in c]
    assert set(today.columns) - set(shared) == set()
    pd.testing.assert_frame_equal(today[shared], sweep.table[shared])


def _brute_best(table: pd.DataFrame, figure: str, at_most: float) -> int | None:
    """The cheapest row meeting ``figure`` ≤ ``at_most`` by trying every row: least IL1_release,
    then fewest suppressed values and steps, then the earliest."""
    best, key = None, None
    for i, row in table.iloc[1:].iterrows():
        if not row[figure] <= at_most:
            continue
        k = (row["IL1_release"], row["suppressed_values"], row["n_steps"], i)
        if key is None or k < key:
            best, key = i, k
    return best


def test_an_epsilon_target_picks_the_cheapest_setting(survey):
    grid = GRID | {"target": {"measure": "epsilon_max", "at_most": 2}}
    result = run_sweep(survey, QI, grid)
    table = result.table
    eps = table["epsilon_max"].iloc[1:]
    assert (eps <= 2).any() and (eps > 2).any()  # the target separates the rows
    assert result.best is not None
    assert result.best == _brute_best(table, "epsilon_max", 2)
    assert list(table.index[table["meets_target"]]) == list(eps.index[eps <= 2])
    best = table.loc[result.best]
    assert best["epsilon_max"] <= 2 and best["method"] in ("relabel", "pram")
    # ε falls as α grows (the relabeling's closed form), ∞ nowhere on this grid
    relabel = table[table["method"] == "relabel"]["epsilon: N1"].to_numpy()
    assert np.all(np.diff(relabel) < 0) and np.isfinite(relabel).all()


def test_an_inference_target_bounds_the_gain_over_the_baseline(survey):
    grid = GRID | {"target": {"measure": "inference_gain", "column": "N1", "at_most": 5}}
    result = run_sweep(survey, QI, grid)
    assert result.target is not None and result.target.measure == "inference_gain: N1"
    table = result.table
    gain = table["inference_gain: N1"].iloc[1:]
    assert (gain <= 5).any() and (gain > 5).any()
    assert result.best == _brute_best(table, "inference_gain: N1", 5)
    assert result.target.describe() == "inference_gain: N1 ≤ 5"


def test_a_combined_grid_tries_every_combination_for_an_attribute_target(survey):
    settings = [{"method": "relabel", "column": "N1", "param": "alpha", "values": [0, 0.1, 0.6]},
                {"method": "pram", "column": "region", "param": "p", "values": [0, 0.5]}]
    grid = {"combine": True, "sensitive": ["N1"], "settings": settings,
            "target": {"measure": "epsilon", "column": "N1", "at_most": 2}}
    assert parse_grid(grid, survey).search == "exhaustive"
    result = run_sweep(survey, QI, grid)
    assert not result.pruned and result.evaluated == result.asked == 6
    assert result.best == _brute_best(result.table, "epsilon: N1", 2)
    with pytest.raises(SdcInputError, match="not monotone.*exhaustive"):
        parse_grid(grid | {"search": "pruned"}, survey)


@pytest.mark.parametrize(("change", "message"), [
    ({"sensitive": "N1"}, "grid: sensitive must be a list of column names"),
    ({"sensitive": ["N9"]}, "grid: unknown sensitive column(s) N9"),
    ({"sensitive": ["age"]}, "grid: age: a known column cannot also be sensitive"),
    ({"sensitive": ["sex"]}, "grid: sex: a key or known column cannot also be sensitive"),
    ({"target": {"measure": "epsilon", "at_most": 2}}, 'grid: the target epsilon needs a "column"'),
    ({"target": {"measure": "epsilon_max", "column": "N1", "at_most": 2}},
     "grid: the target epsilon_max takes no column"),
    ({"target": {"measure": "percent_unique", "column": "N1", "at_most": 2}},
     "grid: the target percent_unique takes no column"),
    ({"target": {"measure": "epsilon", "column": "N2", "at_most": 2}},
     "grid: the target epsilon needs a setting that perturbs N2"),
    ({"target": {"measure": "epsilon", "column": ["N1"], "at_most": 2}},
     "grid: the target epsilon's column must be a column name"),
    ({"target": {"measure": "inference_gain", "column": "region", "at_most": 5}},
     "grid: the target inference_gain on region needs region among the sensitive columns"),
    ({"sensitive": [], "target": {"measure": "inference_gain", "at_most": 5}},
     "grid: the target inference_gain needs sensitive columns"),
    ({"target": {"measure": "epsilon_max", "at_most": -1}},
     "grid: target at_most must be a number ≥ 0"),
    ({"target": {"measure": "epsilon_mean", "at_most": 1}}, "grid: target measure must be one of"),
])
def test_bad_grids_are_refused_in_one_line(survey, change, message):
    with pytest.raises(SdcInputError) as err:
        run_sweep(survey, QI, GRID | change)
    assert str(err.value).startswith(message)
    assert "\n" not in str(err.value)


def test_epsilon_max_without_a_perturbing_setting_is_refused(survey):
    grid = {"settings": GRID["settings"][:1], "target": {"measure": "epsilon_max", "at_most": 2}}
    with pytest.raises(SdcInputError, match="^grid: the target epsilon_max needs a setting that "
                                            "perturbs a column"):
        parse_grid(grid, survey)


def test_no_deniability_reads_infinity_and_epsilon_is_not_monotone_in_p(survey):
    """PRAM with p = 1 never releases the true answer: a released value rules it out, ε = ∞
    (inf in the table, never meeting a bound), while p = 5/6 gives ε = 0 — ε falls, then rises
    with p, so the pruned search is not used for it."""
    grid = {"settings": [{"method": "pram", "column": "N2", "param": "p",
                          "values": [0.5, 5 / 6, 1.0]}],
            "target": {"measure": "epsilon_max", "at_most": 1}}
    table = run_sweep(survey, QI, grid).table.set_index("param_value")
    eps = table["epsilon: N2"]
    assert eps[0.5] == pytest.approx(math.log(5))  # ln(0.5 / (0.5 / 5)), K = 6 answers
    assert eps[5 / 6] == pytest.approx(0.0, abs=1e-12)
    assert math.isinf(eps[1.0]) and math.isinf(table.loc[1.0, "epsilon_max"])
    assert list(table["meets_target"].iloc[1:]) == [False, True, False]


CLOSENESS = ("t_closeness", "beta_likeness", "enhanced_beta_likeness", "delta_disclosure")


@pytest.mark.parametrize(("method", "column", "value"),
                         [("BASELINE", None, None), ("pram", "N1", 0.3), ("band", "age", 10)])
def test_the_closeness_columns_equal_closeness_on_the_release(survey, sweep, method, column,
                                                              value):
    if method == "BASELINE":
        row, released = sweep.table.iloc[0], survey
    else:
        row = _row(sweep.table, method, column, value)
        released = apply_recipe(parse_recipe(json.loads(row["recipe"])), survey).data
    for c in SENSITIVE:
        r = closeness(released, QI, c)
        for m in CLOSENESS:
            assert row[f"{m}: {c}"] == pytest.approx(getattr(r, m), abs=1e-12), (m, c)
    # pram of N1 changes N1's distribution within the classes, not N2's
    if method == "pram":
        base = sweep.table.iloc[0]
        assert row["t_closeness: N1"] != base["t_closeness: N1"]
        assert row["t_closeness: N2"] == base["t_closeness: N2"]


def test_a_closeness_target_picks_the_best_row_of_a_brute_force_pass(survey):
    grid = {**GRID, "search": "exhaustive",
            "target": {"measure": "t_closeness", "column": "N1", "at_most": 0.087}}
    result = run_sweep(survey, QI, grid)
    table = result.table
    settings = table[table["method"] != "BASELINE"]
    met = settings[settings["t_closeness: N1"] <= 0.087]
    assert 0 < len(met) < len(settings)  # the bound separates the rows
    assert result.best is not None and result.best in met.index
    assert bool(table.at[result.best, "meets_target"])
    brute = min(met.index, key=lambda i: (table.at[i, "IL1_release"],
                                          table.at[i, "suppressed_values"],
                                          table.at[i, "n_steps"], list(table.index).index(i)))
    assert result.best == brute


@pytest.mark.parametrize("bad", [{"column": "age"}, {"column": "sex"}, {}])
def test_a_closeness_target_off_the_sensitive_columns_is_refused(survey, bad):
    grid = {**GRID, "target": {"measure": "beta_likeness", "at_most": 1, **bad}}
    with pytest.raises(SdcInputError) as err:
        run_sweep(survey, QI, grid)
    assert "\n" not in str(err.value) and "beta_likeness" in str(err.value)
