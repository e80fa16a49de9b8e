"""Tables after record swapping (sdc_core.utility.cell_loss; docs/utility.md, "Tables after
record swapping"): absD, relabsD, abssqrtD, false zeros and false non-zeros checked against a
hand-worked table, against plain loops over the rows of random tables (Hypothesis), and on the
households example swapped, where what a swap of households can and cannot change is derived
from the exchange itself."""

import math
from collections import Counter, defaultdict

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdc_core.errors import SdcInputError
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.utility.cell_loss import MEASURES, cell_loss
from tests.conftest import ROOT

HOUSEHOLDS = ROOT / "sdc_core" / "data" / "households.csv"


def brute(original: pd.DataFrame, protected: pd.DataFrame, cols: list[str]) -> dict:
    """The measures of one table by loops over the rows (missing values one cell: None)."""
    def key(row):
        return tuple(None if pd.isna(v) else v for v in row)
    n = Counter(key(r) for r in original[cols].itertuples(index=False))
    m = Counter(key(r) for r in protected[cols].itertuples(index=False))
    cells = set(n) | set(m)
    return {"cells": len(cells),
            "absD": sum(abs(m[c] - n[c]) for c in cells),
            "relabsD": sum(abs(m[c] - n[c]) / n[c] for c in cells if n[c] > 0),
            "abssqrtD": sum(abs(math.sqrt(m[c]) - math.sqrt(n[c])) for c in cells),
            "false_zeros": sum(1 for c in cells if n[c] > 0 and m[c] == 0),
            "false_nonzeros": sum(1 for c in cells if n[c] == 0 and m[c] > 0)}


def test_a_table_worked_by_hand():
    x = pd.DataFrame({"region": list("aaaabbc"), "sex": list("ffmmffm")})
    y = pd.DataFrame({"region": list("aaabbbd"), "sex": list("ffmmffm")})
    # region: n = (a 4, b 2, c 1, d 0), n′ = (a 3, b 3, c 0, d 1)
    #   absD = 1 + 1 + 1 + 1 = 4, relabsD = 1/4 + 1/2 + 1/1 = 1.75 (d has n = 0),
    #   abssqrtD = (2 − √3) + (√3 − √2) + 1 + 1 = 4 − √2
    # region × sex: n = (af 2, am 2, bf 2, cm 1), n′ = (af 2, am 1, bm 1, bf 2, dm 1)
    #   absD = 0 + 1 + 1 + 0 + 1 + 1 = 4, false zeros: cm; false non-zeros: bm, dm
    region, both = cell_loss(x, y, [["region"], ["region", "sex"]]).tables
    assert (region.cells, region.absD, region.false_zeros, region.false_nonzeros) == (4, 4, 1, 1)
    assert region.relabsD == pytest.approx(1.75, abs=1e-15)
    assert region.abssqrtD == pytest.approx(4 - math.sqrt(2), abs=1e-12)
    assert (both.cells, both.absD, both.false_zeros, both.false_nonzeros) == (6, 4, 1, 2)
    assert both.relabsD == pytest.approx(1 / 2 + 1, abs=1e-15)
    # per-cell |n′ − n| of region: 1, 1, 1, 1; relabsD's terms ¼, ½, 1
    assert region.quantiles["absD"] == (1.0,) * len(region.probs)
    assert region.quantiles["relabsD"][0] == 0.25 and region.quantiles["relabsD"][-1] == 1.0


def test_the_worst_table_by_each_measure():
    x = pd.DataFrame({"a": [1, 1, 2, 2], "b": ["u", "v", "u", "v"]})
    y = pd.DataFrame({"a": [1, 2, 2, 2], "b": ["u", "u", "u", "v"]})
    report = cell_loss(x, y, [["a"], ["b"], ["a", "b"]])
    sums = {cols: brute(x, y, list(cols)) for cols in [("a",), ("b",), ("a", "b")]}
    for m in MEASURES:
        value, cols = report.worst[m]
        assert value == pytest.approx(max(s[m] for s in sums.values()))
        assert sums[cols][m] == pytest.approx(value)
    # a and a × b both have absD 2 (|2 − 1| + |2 − 3|; the cells 1v and 2u): the first wins
    assert sums[("a",)]["absD"] == sums[("a", "b")]["absD"] == 2
    assert report.to_json()["worst"]["absD"]["columns"] == ["a"]


cell = st.one_of(st.sampled_from(["p", "q", "r"]), st.integers(0, 2), st.none())


@st.composite
def two_tables(draw):
    cols = ["c0", "c1", "c2"]
    def table():
        rows = draw(st.lists(st.tuples(cell, cell, cell), min_size=1, max_size=30))
        return pd.DataFrame(rows, columns=cols)
    return table(), table()


@settings(max_examples=150, deadline=None)
@given(tables=two_tables(),
       chosen=st.lists(st.lists(st.sampled_from(["c0", "c1", "c2"]), min_size=1, max_size=3,
                                unique=True), min_size=1, max_size=3))
def test_random_tables_agree_with_loops_over_the_rows(tables, chosen):
    x, y = tables
    report = cell_loss(x, y, chosen)
    for cols, t in zip(chosen, report.tables, strict=True):
        ref = brute(x, y, cols)
        assert t.columns == tuple(cols)
        assert (t.cells, t.absD, t.false_zeros, t.false_nonzeros) == \
            (ref["cells"], ref["absD"], ref["false_zeros"], ref["false_nonzeros"])
        assert t.relabsD == pytest.approx(ref["relabsD"], rel=1e-12, abs=1e-12)
        assert t.abssqrtD == pytest.approx(ref["abssqrtD"], rel=1e-12, abs=1e-12)
        assert t.abssqrtD <= t.absD + 1e-12       # |√a − √b| ≤ |a − b| for whole a, b
        if len(x) == len(y):                      # Σ (n′ − n) = 0: absD is twice the gain
            assert t.absD % 2 == 0


def test_households_count_once():
    x = pd.DataFrame({"hid": [1, 1, 1, 2], "region": ["a", "a", "a", "b"]})
    y = pd.DataFrame({"hid": [1, 1, 1, 2], "region": ["b", "b", "b", "a"]})
    (people,) = cell_loss(x, y, [["region"]]).tables
    (homes,) = cell_loss(x, y, [["region"]], household="hid").tables
    assert people.absD == 4 and homes.absD == 0


@pytest.mark.parametrize("tables, message", [
    ([], "non-empty list of non-empty lists"), ([[]], "non-empty list of non-empty lists"),
    ("region", "non-empty list of non-empty lists"), ([["county"]], r"not in both tables: county"),
    ([["region", "region"]], "names a column twice")])
def test_bad_tables_are_refused(tables, message):
    x = pd.DataFrame({"region": ["a"]})
    with pytest.raises(SdcInputError, match=message):
        cell_loss(x, x, tables)


def test_bad_probabilities_and_household_are_refused():
    x = pd.DataFrame({"region": ["a"]})
    with pytest.raises(SdcInputError, match="probs"):
        cell_loss(x, x, [["region"]], probs=[1.5])
    with pytest.raises(SdcInputError, match="household column 'hid'"):
        cell_loss(x, x, [["region"]], household="hid")


# -- on a swap of the households example ------------------------------------------------------

def swapped(df: pd.DataFrame, k: int = 3, rate: float = 0.05, seed: int = 1) -> pd.DataFrame:
    recipe = parse_recipe({"seed": seed, "household": "hid", "steps": [{
        "method": "record_swap", "hierarchy": ["region", "district"],
        "similar": [["hsize", "htype"], ["hsize"]], "swap_rate": rate, "k": k,
        "risk_variables": ["agegroup", "sex"]}]})
    return apply_recipe(recipe, df).data


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_swap_changes_the_districts_but_households_staying_in_their_region_change_nothing(
        seed):
    df = pd.read_csv(HOUSEHOLDS)
    out = swapped(df, seed=seed)
    report = cell_loss(df, out, [["region", "sex"], ["region", "agegroup", "sex"],
                                 ["district", "agegroup"], ["agegroup", "sex"],
                                 ["region", "hsize"], ["district", "hsize"]])
    by = {t.columns: t for t in report.tables}
    assert by[("district", "agegroup")].absD > 0
    # tables without the geography: no column changed
    assert by[("agegroup", "sex")].absD == 0
    # every profile holds hsize: a pair swaps as many people each way, for every area
    assert by[("region", "hsize")].absD == by[("district", "hsize")].absD == 0
    # a household that stayed in its region adds nothing to a region table: the change is
    # what the households that left their region took out of it and brought to another
    moved = defaultdict(int)
    before = df.groupby("hid")["region"].first()
    after = out.groupby("hid")["region"].first()
    left = set(before.index[before != after])
    for (hid, region_from, agegroup, sex), region_to in zip(
            df[["hid", "region", "agegroup", "sex"]].itertuples(index=False), out["region"],
            strict=True):
        if hid in left:
            moved[(region_from, agegroup, sex)] -= 1
            moved[(region_to, agegroup, sex)] += 1
    assert by[("region", "agegroup", "sex")].absD == sum(abs(v) for v in moved.values())
    people = int(df["hid"].isin(left).sum())
    assert by[("region", "sex")].absD <= 2 * people
    assert report.worst["absD"][1] == ("district", "agegroup")


def test_swaps_inside_one_region_leave_its_tables_alone():
    df = pd.read_csv(HOUSEHOLDS)
    one = df[df["region"] == df["region"].iloc[0]].reset_index(drop=True)
    out = swapped(one, k=3, rate=0.2)
    assert (out["district"] != one["district"]).any()
    report = cell_loss(one, out, [["region", "agegroup", "sex"], ["district", "agegroup"]])
    assert [t.absD for t in report.tables][0] == 0
    assert report.tables[1].absD > 0
    assert np.isclose(report.tables[1].absD, brute(one, out, ["district", "agegroup"])["absD"])
