"""Cross tables with margins (sdc_core/tables/crosstab.py) against counts and sums taken record by
record in plain Python."""

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdc_core.errors import SdcInputError
from sdc_core.tables.crosstab import MAX_CELLS, TOTAL, crosstab, margin_constraints


def brute_cells(df, cols, sum_col=None):
    """Every cell and margin: (count, amounts) from a loop over the records."""
    levels = [sorted({str(v) for v in df[c] if pd.notna(v)}) for c in cols]
    out = {}
    for key in itertools.product(*[lv + [TOTAL] for lv in levels]):
        amounts, n = [], 0
        for _, row in df.iterrows():
            if any(pd.isna(row[c]) for c in cols):
                continue
            if all(k == TOTAL or str(row[c]) == k for c, k in zip(cols, key)):
                n += 1
                if sum_col is not None and pd.notna(row[sum_col]):
                    amounts.append(float(row[sum_col]))
        out[key] = (n, sorted(amounts, reverse=True))
    return out


def small_frame(seed, n=40, blanks=False):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.choice(["p", "q", "r"], n), "b": rng.choice(["u", "v"], n),
                       "c": rng.choice([1, 2, 3, 4], n),
                       "y": np.round(rng.exponential(10.0, n), 1)})
    if blanks:
        df.loc[rng.random(n) < 0.15, "a"] = None
        df.loc[rng.random(n) < 0.15, "y"] = np.nan
    return df


@pytest.mark.parametrize("cols", [["a"], ["a", "b"], ["a", "b", "c"], ["c", "a"]])
def test_counts_sums_and_top_contributions_match_a_record_loop(cols):
    df = small_frame(1, blanks=True)
    t = crosstab(df, cols, sum_column="y", top=3)
    expected = brute_cells(df, cols, "y")
    got = t.frame
    assert len(got) == len(expected)  # every combination, empty cells included
    for _, row in got.iterrows():
        key = tuple(row[c] for c in cols)
        n, amounts = expected[key]
        assert row["count"] == n
        assert row["contributors"] == len(amounts)
        assert row["sum"] == pytest.approx(sum(amounts))
        tops = amounts[:3] + [0.0] * (3 - len(amounts[:3]))
        assert [row["x1"], row["x2"], row["x3"]] == pytest.approx(tops)
        assert row["margin"] == (TOTAL in key)
    assert t.left_out == int(df["a"].isna().sum())


def test_an_empty_combination_is_a_cell_with_count_zero():
    df = pd.DataFrame({"a": ["x", "y"], "b": ["u", "v"]})
    f = crosstab(df, ["a", "b"]).frame.set_index(["a", "b"])["count"]
    assert f[("x", "v")] == 0 and f[("y", "u")] == 0
    assert f[("x", TOTAL)] == 1 and f[(TOTAL, TOTAL)] == 2


def test_a_categorical_column_keeps_every_category_in_its_order():
    df = pd.DataFrame({"a": pd.Categorical(["low", "high", None],
                                           categories=["low", "mid", "high"])})
    t = crosstab(df, ["a"])
    assert t.frame["a"].tolist() == ["low", "mid", "high", TOTAL]
    assert t.frame["count"].tolist() == [1, 0, 1, 2] and t.left_out == 1


def test_blanks_are_left_out_or_a_level_of_their_own():
    df = pd.DataFrame({"a": ["x", None, "x", " "]})
    left = crosstab(df, ["a"])
    assert left.frame["a"].tolist() == ["x", TOTAL]
    assert left.frame["count"].tolist() == [2, 2] and left.left_out == 2
    kept = crosstab(df, ["a"], blank_label="(blank)")
    assert dict(zip(kept.frame["a"], kept.frame["count"])) == {"x": 2, "(blank)": 2, TOTAL: 4}
    assert kept.left_out == 0


@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 1), st.integers(0, 2),
                          st.integers(0, 9)), min_size=1, max_size=30),
       st.integers(1, 3))
@settings(max_examples=40, deadline=None, derandomize=True)
def test_every_margin_is_the_sum_of_its_cells(rows, k):
    df = pd.DataFrame(rows, columns=["a", "b", "c", "y"])
    cols = ["a", "b", "c"][:k]
    t = crosstab(df, cols, sum_column="y")
    for col in ("count", "sum"):
        assert np.abs(t.constraints @ t.frame[col].to_numpy(dtype=float)).max() == 0
    # the grand total is the number of records and the sum of all amounts
    grand = t.frame[t.frame[cols].eq(TOTAL).all(axis=1)]
    assert grand["count"].item() == len(df) and grand["sum"].item() == df["y"].sum()


def test_the_constraints_list_each_margin_once_per_axis_it_totals():
    shape = (3, 4, 2)
    a = margin_constraints(shape).toarray()
    cells = list(itertools.product(*[range(s) for s in shape]))
    expected = set()
    for cell in cells:
        for d, size in enumerate(shape):
            if cell[d] == size - 1:
                members = [cell[:d] + (level,) + cell[d + 1:] for level in range(size - 1)]
                row = np.zeros(len(cells))
                row[cells.index(cell)] = 1
                for m in members:
                    row[cells.index(m)] = -1
                expected.add(tuple(row))
    assert {tuple(r) for r in a} == expected and len(a) == len(expected)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"columns": ["nope"]}, "unknown table column"),
    ({"columns": []}, "1 to 3 columns"),
    ({"columns": ["a", "b", "c", "y"]}, "1 to 3 columns"),
    ({"columns": ["a", "a"]}, "named twice"),
    ({"columns": ["a"], "sum_column": "a"}, "takes"),
    ({"columns": ["a"], "sum_column": "nope"}, "unknown sum column"),
    ({"columns": ["a"], "sum_column": "neg"}, "negative"),
    ({"columns": ["t"]}, "Total"),
    ({"columns": ["a"], "blank_label": "p"}, "same text"),
])
def test_hostile_requests_are_refused_in_one_sentence(kwargs, message):
    df = small_frame(2).assign(neg=-1.0, t=["Total", "x"] * 20)
    df.loc[0, "a"] = None  # a blank, so that a blank label is used
    with pytest.raises(SdcInputError, match=message):
        crosstab(df, **kwargs)


def test_a_table_past_the_cell_bound_is_refused_before_it_is_built():
    n = 1000
    df = pd.DataFrame({"a": np.arange(n), "b": np.arange(n)})
    assert (n + 1) ** 2 > MAX_CELLS
    with pytest.raises(SdcInputError, match="cells"):
        crosstab(df, ["a", "b"])
