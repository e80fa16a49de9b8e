"""Primary rules (sdc_core/tables/cell_rules.py) on hand-worked cells, the arithmetic in comments,
and against the rules' definitions evaluated cell by cell in plain Python."""

import inspect

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdc_core.errors import SdcInputError
from sdc_core.tables.cell_rules import (
    DEFAULT_THRESHOLD,
    dominance_rule,
    p_rule,
    threshold_rule,
)
from sdc_core.tables.crosstab import TOTAL, crosstab
from sdc_core.tables.responses import response_table


def one_cell(amounts, top=4):
    """A one-way table whose first cell holds ``amounts`` and a second cell one large amount."""
    df = pd.DataFrame({"a": ["cell"] * len(amounts) + ["other"],
                       "y": list(amounts) + [1000.0]})
    return crosstab(df, ["a"], sum_column="y", top=top)


def test_the_default_threshold_is_seed_004s_option_threshold():
    assert inspect.signature(response_table).parameters["t"].default == DEFAULT_THRESHOLD
    assert inspect.signature(threshold_rule).parameters["t"].default == DEFAULT_THRESHOLD


def test_threshold_marks_cells_between_zero_and_t_and_asks_for_zero_to_t():
    # counts x: 1, y: 4, z: 5, w: 0 (an empty combination of a 2-way table is not primary)
    df = pd.DataFrame({"a": ["x"] * 1 + ["y"] * 4 + ["z"] * 5, "b": ["u"] * 10})
    t = crosstab(df, ["a", "b"])
    r = threshold_rule(t, t=5)
    f = t.frame.assign(primary=r.primary, lower=r.lower, upper=r.upper).set_index(["a", "b"])
    assert f.loc[("x", "u"), ["primary", "lower", "upper"]].tolist() == [True, 1, 4]  # 5 − 1
    assert f.loc[("y", "u"), ["primary", "lower", "upper"]].tolist() == [True, 4, 1]  # 5 − 4
    assert not f.loc[("z", "u"), "primary"]  # 5 is not below 5
    assert f.loc[("x", TOTAL), "primary"]  # a margin of 1 is as small as its cell
    assert not f.loc[(TOTAL, "u"), "primary"]


def test_threshold_on_a_magnitude_table_counts_contributors_and_protects_a_share():
    # cell x: 2 records of 30 and 10 (sum 40) → primary at t = 3; protection 10 % of 40 = 4
    df = pd.DataFrame({"a": ["x", "x", "y", "y", "y"], "y": [30.0, 10.0, 1.0, 1.0, 1.0]})
    r = threshold_rule(crosstab(df, ["a"], sum_column="y"), t=3, pct=10)
    assert r.primary.tolist() == [True, False, False]
    assert r.lower[0] == pytest.approx(4.0) and r.upper[0] == pytest.approx(4.0)


def test_dominance_hand_worked():
    # contributions 60, 25, 10, 5: total 100
    t = one_cell([60, 25, 10, 5])
    # (1, 50): 60 > 50 → primary; protection 100/50 · 60 − 100 = 20 on each side
    r = dominance_rule(t, n=1, k=50)
    assert r.primary[0] and r.upper[0] == pytest.approx(20) and r.lower[0] == pytest.approx(20)
    # (2, 85): 60 + 25 = 85, not more than 85 % of 100 → not primary
    assert not dominance_rule(t, n=2, k=85).primary[0]
    # (2, 80): 85 > 80 → primary; upper = 100/80 · 85 − 100 = 6.25
    r = dominance_rule(t, n=2, k=80)
    assert r.primary[0] and r.upper[0] == pytest.approx(6.25)
    # (3, 90): 95 > 90 → primary; upper = 100/90 · 95 − 100 = 5.555…
    r = dominance_rule(t, n=3, k=90)
    assert r.primary[0] and r.upper[0] == pytest.approx(100 / 90 * 95 - 100)
    # the other cell (one contributor, 1000) is dominated by any (n, k)
    assert r.primary[1]


def test_dominance_lower_protection_stops_at_zero():
    # one contributor of 10: (1, 20): upper = 100/20 · 10 − 10 = 40, lower = min(10, 40) = 10
    r = dominance_rule(one_cell([10]), n=1, k=20)
    assert r.upper[0] == pytest.approx(40) and r.lower[0] == pytest.approx(10)


def test_p_percent_hand_worked():
    # contributions 50, 40, 6, 4: total 100, remainder 100 − 50 − 40 = 10
    t = one_cell([50, 40, 6, 4])
    # p = 10: 10 < 0.10 · 50 = 5? no → safe
    assert not p_rule(t, p=10).primary[0]
    # p = 25: 10 < 0.25 · 50 = 12.5 → primary, 12.5 on each side
    r = p_rule(t, p=25)
    assert r.primary[0] and r.lower[0] == pytest.approx(12.5) and r.upper[0] == 12.5
    # two contributors 70, 30: remainder 0 < any p % of 70 → primary; p = 10 → 7
    r = p_rule(one_cell([70, 30]), p=10)
    assert r.primary[0] and r.upper[0] == pytest.approx(7)


def test_the_magnitude_rules_refuse_a_count_table_and_too_few_contributions():
    counts = crosstab(pd.DataFrame({"a": ["x", "y"]}), ["a"])
    with pytest.raises(SdcInputError, match="magnitude"):
        p_rule(counts)
    with pytest.raises(SdcInputError, match="largest contributions"):
        dominance_rule(one_cell([1, 2], top=2), n=3)
    with pytest.raises(SdcInputError, match="k must"):
        dominance_rule(one_cell([1, 2]), n=1, k=0)
    with pytest.raises(SdcInputError, match="p must"):
        p_rule(one_cell([1, 2]), p=-1)


def test_rules_combine_into_the_larger_protection():
    t = one_cell([50, 40, 6, 4])
    a, b = p_rule(t, p=25), dominance_rule(t, n=1, k=40)
    both = a | b
    assert np.array_equal(both.primary, a.primary | b.primary)
    assert np.array_equal(both.upper, np.maximum(a.upper, b.upper))


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 50)), min_size=1, max_size=25),
       st.integers(1, 3), st.floats(10, 100), st.floats(1, 60))
@settings(max_examples=60, deadline=None, derandomize=True)
def test_rules_agree_with_their_definitions_cell_by_cell(rows, n, k, p):
    df = pd.DataFrame(rows, columns=["a", "y"]).astype({"y": float})
    t = crosstab(df, ["a"], sum_column="y", top=3)
    dom, pr = dominance_rule(t, n=n, k=k), p_rule(t, p=p)
    for i, label in enumerate(t.frame["a"]):
        amounts = sorted(df["y"] if label == TOTAL else df.loc[df["a"].astype(str) == label, "y"],
                         reverse=True)
        total = sum(amounts)
        x1 = amounts[0] if amounts else 0.0
        x2 = amounts[1] if len(amounts) > 1 else 0.0
        assert dom.primary[i] == (total > 0 and sum(amounts[:n]) > k / 100 * total)
        assert pr.primary[i] == (x1 > 0 and total - x1 - x2 < p / 100 * x1)
        if pr.primary[i]:
            assert pr.upper[i] == pytest.approx(p / 100 * x1)
            assert pr.lower[i] == pytest.approx(min(total, p / 100 * x1))


def p_for_dominance(k: float) -> float:
    """The SDC handbook's (Hundepool et al.) p of the p % rule that replaces a (2, k)
    dominance rule: p = 100 (100 − k) / k."""
    return 100 * (100 - k) / k


def test_the_handbooks_replacement_of_a_dominance_rule_by_a_p_rule():
    """The handbook replaces a (2, 80) rule by p = 25 and a (2, 95) rule by p = 5.26; with
    R = X − x₁ − x₂ the (2, k) rule reads R < (100 − k)/k · (x₁ + x₂) and that p % rule
    R < (100 − k)/k · x₁, so every cell the p % rule finds, the dominance rule finds too."""
    assert p_for_dominance(80) == pytest.approx(25)
    assert round(p_for_dominance(95), 2) == 5.26


@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 1000)), min_size=1, max_size=30),
       st.sampled_from([70.0, 80.0, 85.0, 90.0, 95.0]))
@settings(max_examples=60, deadline=None, derandomize=True)
def test_the_replacing_p_rule_finds_no_cell_the_dominance_rule_misses(rows, k):
    df = pd.DataFrame(rows, columns=["a", "y"]).astype({"y": float})
    t = crosstab(df, ["a"], sum_column="y")
    dom, pr = dominance_rule(t, n=2, k=k), p_rule(t, p=p_for_dominance(k))
    assert not (pr.primary & ~dom.primary).any()
    # and a cell with one contributor is sensitive under both
    alone = (t.frame["contributors"].to_numpy() == 1) & (t.values > 0)
    assert dom.primary[alone].all() and pr.primary[alone].all()
