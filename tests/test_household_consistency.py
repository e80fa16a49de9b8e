"""Methods that respect households (issue 43, item 4; docs/methods.md, "Households").

With the recipe's top-level ``household``, no released household carries two values of a
household-level column, for every method of the registry, on the generated household survey
(``hid``), on sdcMicro's testdata (``ori_hid``) and on generated household tables with nullable
dtypes and blanks. The outside corpus of ``tests/corpus.py`` is person-level tables from R
packages: none has a household id, so sdcMicro's testdata (outside data with households) is the
outside table here. References are plain loops over records and households.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdc_core import rng
from sdc_core.data.columns import restore
from sdc_core.errors import SdcInputError
from sdc_core.households import household_level_columns
from sdc_core.recipe import METHODS, apply_recipe, parse_recipe
from sdc_core.risk.deniability import recipe_deniability
from sdc_core.teaching_households import HOUSEHOLDS_PATH
from tests import conformance
from tests.conftest import DATA

SURVEY = pd.read_csv(HOUSEHOLDS_PATH)
TESTDATA = pd.read_csv(DATA / "testdata.csv")


# -- references: plain loops -----------------------------------------------------------------

def _key(v):
    """A value as a dict key, every kind of blank one key."""
    return "<blank>" if v is None or (not isinstance(v, str) and pd.isna(v)) else v


def split_households(df: pd.DataFrame, hid: str, column: str) -> list:
    """The households whose members hold two or more values of ``column``."""
    seen: dict = {}
    for h, v in zip(df[hid].tolist(), df[column].tolist(), strict=True):
        seen.setdefault(h, set()).add(_key(v))
    return [h for h, values in seen.items() if len(values) > 1]


def first_records(df: pd.DataFrame, hid: str) -> list[int]:
    """The position of each household's first record, households in order of first appearance."""
    first: dict = {}
    for i, h in enumerate(df[hid].tolist()):
        first.setdefault(h, i)
    return list(first.values())


def wildcard_fk(df: pd.DataFrame, keys: list[str]) -> np.ndarray:
    """f_k of every record by brute force: the records that agree on every key where both
    hold a value (a blank matches anything)."""
    match = np.ones((len(df), len(df)), dtype=bool)
    for c in keys:
        codes = pd.factorize(df[c])[0]  # -1 for a blank
        same = codes[:, None] == codes[None, :]
        match &= same | (codes[:, None] < 0) | (codes[None, :] < 0)
    return match.sum(axis=1)


def check_consistent(original: pd.DataFrame, released: pd.DataFrame, hid: str) -> list[str]:
    """The household-level columns of ``original``; fails on any household that the release
    splits."""
    level = household_level_columns(original, hid)
    for c in level:
        if c in released.columns:
            split = split_households(released, hid, c)
            assert not split, f"{c}: households {split[:5]} carry two values"
    return level


def apply(df: pd.DataFrame, steps: list[dict], household: str | None, seed: int = 7):
    recipe = {"seed": seed, "steps": steps} | ({"household": household} if household else {})
    return apply_recipe(parse_recipe(recipe), df)


# -- the steps: every method of the registry, on household-level and mixed columns -----------

#: (household-level categorical, second one, household-level number, person-level category,
#: person-level number) of each table
ROLES = {"survey": ("region", "tenure", "weight", "sex", "income"),
         "testdata": ("urbrur", "water", "household_weights", "sex", "income")}
TABLES = {"survey": (SURVEY, "hid"), "testdata": (TESTDATA, "ori_hid")}


def steps_of(method: str, table: str) -> list[dict]:
    """One or more steps of ``method``: on household-level columns, and for the methods on
    several columns also on a mix of household-level and person-level ones."""
    h, h2, hn, p, pn = ROLES[table]
    if method == "band":
        return [{"method": method, "column": hn, "width": 25 if table == "survey" else 10}]
    if method == "top_bottom_code":
        return [{"method": method, "column": hn, "top_percentile": 80}]
    if method == "recode":
        return [{"method": method, "column": h2, "min_count": 400 if table == "survey" else 200}]
    if method == "pram":
        return [{"method": method, "column": h, "p": 0.3},
                {"method": method, "column": h2, "invariant": True, "retention": 0.6}]
    if method == "relabel":
        return [{"method": method, "column": h, "alpha": 0.4}]
    if method == "randomized_response":
        return [{"method": method, "column": h2, "keep_probability": 0.5}]
    if method == "rank_swap":
        return [{"method": method, "column": hn, "window_percent": 10}]
    if method == "noise":
        return [{"method": method, "columns": [hn], "p": 50},
                {"method": method, "columns": [hn, pn], "kind": "correlated", "p": 50},
                {"method": method, "columns": [pn, hn], "kind": "correlated2", "delta": 0.3}]
    if method == "microaggregation":
        return [{"method": method, "columns": [hn], "k": 3},
                {"method": method, "columns": [hn, pn], "k": 4}]
    if method == "local_suppression":
        mixed = {"method": method, "columns": [h, h2, p, "agegroup"], "k": 10,
                 "importance": ["agegroup", p, h, h2]} if table == "survey" else \
            {"method": method, "columns": [h, h2, p], "k": 20}
        return [{"method": method, "columns": [h, h2], "k": 40}, mixed]
    if method == "record_swap":
        if table == "testdata":
            return []  # no two-level geography: tests/test_record_swap.py builds one
        return [{"method": method, "hierarchy": ["region", "district"],
                 "similar": [["hsize", "htype"], ["hsize"]], "swap_rate": 0.1, "k": 3,
                 "risk_variables": ["agegroup", "sex"], "carry_along": []}]
    if method == "drop":
        return [{"method": method, "columns": [hn]}]
    if method == "synthesize":
        return []  # refused with a household: tests/test_synthesize.py
    raise AssertionError(f"no steps for {method}: add them here")


CASES = [(table, method, i) for table in TABLES for method in METHODS
         for i in range(len(steps_of(method, table)))]


def test_every_method_of_the_registry_has_steps():
    assert {m for _, m, _ in CASES} == set(METHODS) - {"synthesize"}


@pytest.mark.parametrize(("table", "method", "which"), CASES)
def test_no_released_household_carries_two_values(table, method, which):
    df, hid = TABLES[table]
    step = steps_of(method, table)[which]
    released = apply(df, [step], hid).data
    level = check_consistent(df, released, hid)
    cols = [step["column"]] if "column" in step else step.get("columns") or step["hierarchy"]
    assert set(cols) & set(level)  # the step works on a household-level column
    if method != "drop":  # the step did something
        assert not all(conformance.same_values(df[[c]], released[[c]]) for c in cols)
    # without the household the methods that draw per record split households
    if method in ("pram", "relabel", "randomized_response", "noise") and which == 0:
        alone = apply(df, [step], None).data
        assert any(split_households(alone, hid, c) for c in cols if c in level)


@pytest.mark.parametrize("table", list(TABLES))
def test_a_whole_recipe_keeps_households_and_repeats(table):
    df, hid = TABLES[table]
    steps = [s for m in METHODS if m not in ("drop", "record_swap") for s in steps_of(m, table)]
    one, two = apply(df, steps, hid), apply(df, steps, hid)
    check_consistent(df, one.data, hid)
    pd.testing.assert_frame_equal(one.data, two.data)
    assert one.reports == two.reports
    other = apply(df, steps, hid, seed=8).data
    assert not one.data.equals(other)


@pytest.mark.parametrize("table", list(TABLES))
@pytest.mark.parametrize("method", ["pram", "relabel", "randomized_response", "rank_swap",
                                    "recode", "top_bottom_code"])
def test_a_household_column_runs_on_the_first_record_of_each_household(table, method):
    """Every member gets what the method gives the household's first record when it runs on
    one record per household, with the ids of those records."""
    df, hid = TABLES[table]
    step = steps_of(method, table)[0]
    c = step["column"]
    got = apply(df, [step], hid)
    first = first_records(df, hid)
    spec = METHODS[method]
    args = {k: v for k, v in step.items() if k not in ("method", "column")}
    if spec.random:
        args |= {"seed": 7, "step": 0, "rid": rng.record_ids(len(df))[first]}
    heads = spec.run(df[c].iloc[first].reset_index(drop=True), **args).values
    by_household = dict(zip(df[hid].iloc[first].tolist(), heads.tolist(), strict=True))
    expected = pd.Series([by_household[h] for h in df[hid].tolist()], name=c)
    assert conformance.same_values(got.data[[c]], restore(df[c], expected).to_frame())
    report = got.reports[0]
    assert report["per_household"] is True
    assert report["households"] == len(first)


@pytest.mark.parametrize("table", list(TABLES))
def test_person_level_columns_are_left_per_person(table):
    """A person-level column is protected record by record as without a household: members of
    a household still differ."""
    df, hid = TABLES[table]
    _, _, _, p, pn = ROLES[table]
    steps = [{"method": "pram", "column": p, "p": 0.3},
             {"method": "noise", "columns": [pn], "p": 50}]
    with_h, without = apply(df, steps, hid), apply(df, steps, None)
    pd.testing.assert_frame_equal(with_h.data, without.data)
    assert split_households(with_h.data, hid, p) and split_households(with_h.data, hid, pn)
    assert all("per_household" not in r and "household_columns" not in r
               for r in with_h.reports)


@pytest.mark.parametrize("table", list(TABLES))
def test_mixed_noise_gives_the_person_columns_their_own_draws(table):
    """Noise on a household-level and a person-level column: the person-level one gets the
    values it gets alone; the household-level one those of a step on it alone."""
    df, hid = TABLES[table]
    _, _, hn, _, pn = ROLES[table]
    step = {"method": "noise", "columns": [hn, pn], "p": 50}
    mixed = apply(df, [step], hid)
    person = apply(df, [{**step, "columns": [pn]}], hid).data
    household = apply(df, [{**step, "columns": [hn]}], hid).data
    assert conformance.same_values(mixed.data[[pn]], person[[pn]])
    assert conformance.same_values(mixed.data[[hn]], household[[hn]])
    report = mixed.reports[0]
    assert report["household_columns"] == [hn] and "per_household" not in report
    assert list(report["columns"]) == [hn, pn]
    assert split_households(mixed.data, hid, pn)


@pytest.mark.parametrize("table", list(TABLES))
def test_suppression_of_a_household_value_blanks_it_for_every_member(table):
    """Local suppression on mixed keys: the person-level run, then each household-level value
    blanked for the whole household wherever one member lost it; k still holds."""
    df, hid = TABLES[table]
    h, h2, _, p, _ = ROLES[table]
    step = steps_of("local_suppression", table)[1]
    keys = step["columns"]
    persons = apply(df, [step], None).data
    got = apply(df, [step], hid)
    expected, extra = persons.copy(), 0
    for c in (h, h2):
        lost = {x for x, before, after in zip(df[hid], df[c], persons[c], strict=True)
                if not pd.isna(before) and pd.isna(after)}
        for i, x in enumerate(df[hid].tolist()):
            if x in lost and not pd.isna(expected[c].iloc[i]):
                expected.loc[expected.index[i], c] = None
                extra += 1
    assert extra > 0  # the rule did something here
    assert conformance.same_values(got.data[keys], expected[keys])
    report = got.reports[0]
    assert report["household_extra_suppressed"] == extra
    blanked = {c: int((df[c].notna() & got.data[c].isna()).sum()) for c in keys}
    assert report["suppressed"] == blanked
    assert report["total_suppressed"] == sum(blanked.values())
    fk = wildcard_fk(got.data, keys)
    assert fk.min() >= step["k"] and report["min_k_after"] == fk.min()
    assert split_households(got.data, hid, p) or p not in keys


@pytest.mark.parametrize("table", list(TABLES))
def test_suppression_on_household_keys_reaches_k_households(table):
    """Local suppression on household-level keys only runs on the households: every class
    holds at least k households."""
    df, hid = TABLES[table]
    step = steps_of("local_suppression", table)[0]
    got = apply(df, [step], hid)
    heads = got.data.iloc[first_records(df, hid)]
    assert wildcard_fk(heads, step["columns"]).min() >= step["k"]
    assert got.reports[0]["per_household"] is True
    assert got.reports[0]["total_suppressed"] == sum(
        int((df[c].notna() & got.data[c].isna()).sum()) for c in step["columns"])


@pytest.mark.parametrize(("table", "column", "p"), [("survey", "region", 0.2),
                                                     ("testdata", "urbrur", 0.1),
                                                     ("testdata", "water", 0.3)])
def test_pram_changes_about_p_of_the_households(table, column, p):
    """PRAM with flip probability p changes each household's value with probability p: the
    number of changed households is within 4 binomial standard errors of p·H (fixed seed)."""
    df, hid = TABLES[table]
    out = apply(df, [{"method": "pram", "column": column, "p": p}], hid, seed=11).data
    first = first_records(df, hid)
    changed = sum(a != b for a, b in zip(df[column].iloc[first], out[column].iloc[first],
                                         strict=True))
    households = len(first)
    se = math.sqrt(households * p * (1 - p))
    assert abs(changed - p * households) <= 4 * se
    moved = {h for h, a, b in zip(df[hid], df[column], out[column], strict=True) if a != b}
    assert len(moved) == changed  # a household changes as a whole
    people = sum(1 for h in df[hid] if h in moved)
    assert people == int((df[column] != out[column]).sum()) > changed


def test_a_recipe_without_household_runs_record_by_record():
    """Without a household a random step is the method on the whole column with the row
    positions as record ids, as before households; reports say nothing of households."""
    df = SURVEY
    for step in (steps_of("pram", "survey")[0], steps_of("relabel", "survey")[0]):
        got = apply(df, [step], None)
        spec = METHODS[step["method"]]
        args = {k: v for k, v in step.items() if k not in ("method", "column")}
        direct = spec.run(df[step["column"]], seed=7, step=0,
                          rid=rng.record_ids(len(df)), **args).values
        assert conformance.same_values(got.data[[step["column"]]],
                                       restore(df[step["column"]], direct).to_frame())
        assert "per_household" not in got.reports[0]
        assert split_households(got.data, "hid", step["column"])


def test_the_attribute_attack_sees_the_household_release():
    """recipe_deniability runs the steps as apply does: with a recoding whose rare levels are
    counted over households, its matrix is the one of the household release."""
    df = SURVEY
    steps = steps_of("recode", "survey")
    released = apply(df, steps, "hid").data
    persons = apply(df, steps, None).data
    assert not released["tenure"].equals(persons["tenure"])  # households count otherwise
    recipe = parse_recipe({"seed": 7, "household": "hid", "steps": steps})
    [found] = recipe_deniability(recipe, df, recodings=True)
    pairs: dict = {}
    for a, b in zip(df["tenure"], released["tenure"], strict=True):
        pairs.setdefault(str(a), {}).setdefault(str(b), 0)
        pairs[str(a)][str(b)] += 1
    for level, row in found.matrix.iterrows():
        total = sum(pairs[level].values())
        for out, share in row.items():
            assert share == pytest.approx(pairs[level].get(out, 0) / total)


def test_a_step_on_the_household_column_is_refused():
    with pytest.raises(SdcInputError, match="household column"):
        apply(SURVEY, [{"method": "pram", "column": "hid", "p": 0.2}], "hid")
    assert "hid" not in apply(SURVEY, [{"method": "drop", "columns": ["hid"]}], "hid").data


def test_a_blank_household_id_is_refused():
    df = SURVEY.head(6).astype({"hid": "Int64"})
    df.loc[2, "hid"] = None
    with pytest.raises(SdcInputError, match="blank id"):
        apply(df, [{"method": "pram", "column": "region", "p": 0.2}], "hid")


# -- generated household tables --------------------------------------------------------------

#: Kinds of column a household-level column is drawn in (nullable ones with blanks among them).
HOUSEHOLD_KINDS = ["Int64", "Float64", "float64", "str", "object", "category", "boolean",
                   "int64", "int_category"]
DRAWN = [m for m in METHODS if m not in conformance.NOT_DRAWN]


@st.composite
def household_tables(draw, first: list[str]):
    """A table of households in shuffled order: household-level columns drawn per household
    (blanks included; the first of a kind of ``first``), person-level ones per record, the
    household id of a drawn kind."""
    sizes = draw(st.lists(st.integers(1, 4), min_size=3, max_size=16))
    n = sum(sizes)
    households = len(sizes)
    member = [h for h, size in enumerate(sizes) for _ in range(size)]
    columns = {}
    kinds = [draw(st.sampled_from(first))] + draw(st.lists(st.sampled_from(HOUSEHOLD_KINDS),
                                                           max_size=3))
    for i, kind in enumerate(kinds):
        per_household = conformance.draw_column(draw, kind, households)
        columns[f"h{i}_{kind}"] = per_household.iloc[member].reset_index(drop=True)
    for i, kind in enumerate(draw(st.lists(st.sampled_from(HOUSEHOLD_KINDS), min_size=1,
                                           max_size=3))):
        columns[f"p{i}_{kind}"] = conformance.draw_column(draw, kind, n)
    ids = draw(st.sampled_from(["int", "text"]))
    columns["hid"] = pd.Series([h * 7 + 3 if ids == "int" else f"H{h}" for h in member])
    order = draw(st.permutations(range(n)))
    return pd.DataFrame(columns).iloc[order].reset_index(drop=True)


@pytest.mark.parametrize("name", DRAWN)
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_generated_households_stay_consistent_under_every_method(name, data):
    """A step of the method on a household-level column (with more columns for a method on
    several), then a step of any method: no household carries two values of a column that is
    household-level in the table; the same seed gives the same release."""
    method = METHODS[name]
    df = data.draw(household_tables([k for k in HOUSEHOLD_KINDS
                                     if conformance._accepts(method, conformance.KINDS[k])]))
    level = household_level_columns(df, "hid")
    fitting = [c for c in level if conformance._accepts(method, df[c])]
    if not fitting:
        return
    column = data.draw(st.sampled_from(fitting))
    persons = df.drop(columns="hid")  # the steps' columns: a step on the id is refused
    qi = list(persons.columns)
    steps = [conformance.draw_step(data.draw, method, persons, qi, column)]
    if name == "microaggregation":  # groups of a few of the (few) households
        steps[0]["k"] = data.draw(st.integers(2, 3))
    more = data.draw(st.sampled_from(DRAWN))
    steps.append(conformance.draw_step(data.draw, METHODS[more], persons, qi))
    seed = data.draw(st.integers(0, 2**32))
    try:
        one = apply(df, steps, "hid", seed=seed)
    except SdcInputError:
        return
    check_consistent(df, one.data, "hid")
    two = apply(df, steps, "hid", seed=seed)
    pd.testing.assert_frame_equal(one.data, two.data)
    if method.target == "column":
        assert one.reports[0]["per_household"] is True
        assert one.reports[0]["households"] == df["hid"].nunique()
