"""Distance to the closest record (docs/measures.md, "Distance to the closest record") against a
plain loop over every pair of records, on outside data, and on the command line."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdc_core.errors import SdcInputError
from sdc_core.risk.closest import closest_record
from tests.cli_run import run
from tests.corpus import load


def reference(original: pd.DataFrame, released: pd.DataFrame, columns: list[str]) -> list[float]:
    """min over original x of √[(1/p) Σ_c ((z_c − x_c)/R_c)²] for each complete released z."""
    xs = [r for r in original[columns].itertuples(index=False)
          if not any(pd.isna(v) for v in r)]
    spread = [max(r[j] for r in xs) - min(r[j] for r in xs) for j in range(len(columns))]
    spread = [s if s > 0 else 1.0 for s in spread]
    out = []
    for z in released[columns].itertuples(index=False):
        if any(pd.isna(v) for v in z):
            continue
        # the root of the sum of squares by math.hypot: no square overflows on a tiny spread
        out.append(min(math.hypot(*(float(z[j] - x[j]) / float(spread[j])
                                    for j in range(len(columns)))) / math.sqrt(len(columns))
                       for x in xs))
    return out


def test_the_worked_example_of_the_docs():
    r = closest_record(pd.DataFrame({"a": [0.0, 10.0]}), pd.DataFrame({"a": [0, 5, 9]}), ["a"])
    assert r.distances.tolist() == pytest.approx([0.0, 0.5, 0.1])
    assert r.summary()["dcr_zero_percent"] == pytest.approx(100 / 3)


def test_outside_data_equals_the_pairwise_loop():
    df = load("carData/Chile")[["population", "age", "income", "statusquo"]].head(300)
    sample = df.sample(frac=0.7, random_state=1)  # fewer records, shuffled, then moved:
    released = sample + np.random.default_rng(3).normal(0, 0.5, size=sample.shape)  # no rows
    got = closest_record(df, released, list(df.columns))
    want = reference(df, released, list(df.columns))
    assert got.distances == pytest.approx(want, abs=1e-12)
    assert got.left_out == int(released.isna().any(axis=1).sum()) > 0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-5, 5), st.one_of(st.none(), st.floats(-3, 3))),
                min_size=1, max_size=12),
       st.lists(st.tuples(st.integers(-6, 6), st.one_of(st.none(), st.floats(-4, 4))),
                min_size=1, max_size=12))
def test_any_small_tables_equal_the_pairwise_loop(xs, zs):
    original = pd.DataFrame(xs, columns=["a", "b"]).astype({"a": "Int64", "b": "Float64"})
    released = pd.DataFrame(zs, columns=["a", "b"]).astype({"a": "Int64", "b": "Float64"})
    if original.isna().any(axis=1).all() or released.isna().any(axis=1).all():
        with pytest.raises(SdcInputError, match="no record is complete"):
            closest_record(original, released, ["a", "b"])
        return
    want = reference(original, released, ["a", "b"])
    try:
        got = closest_record(original, released, ["a", "b"]).distances
    except SdcInputError as err:  # a range of a few 1e-324: a ratio past the largest float
        assert "too far apart" in str(err) and max(want) > 1e300, (err, want)
        return
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        if math.isinf(w):  # the loop's ratio overflowed at the edge of the float range, the
            assert g > 1e300  # k-d tree's (divided by √p first) did not
        else:  # huge distances differ in their last bit: relative as well as absolute
            assert g == pytest.approx(w, rel=1e-12, abs=1e-12)


def test_a_huge_finite_distance_equals_the_loop_to_its_last_bits():
    """A range of 2.7e-41 (found by Hypothesis): the distance, 3.3e40, is finite and equals
    the loop's up to rounding."""
    original = pd.DataFrame({"a": [0, 0], "b": [0.0, 2.6908576098287464e-41]})
    released = pd.DataFrame({"a": [0], "b": [1.25]})
    want = reference(original, released, ["a", "b"])
    got = closest_record(original, released, ["a", "b"]).distances
    assert want[0] > 1e40 and got == pytest.approx(want, rel=1e-12)


def test_a_range_of_a_subnormal_width_is_refused_in_one_line():
    """b's original range is 5e-324, the smallest float: the released 2.0 lies 4e323 ranges
    away, past the largest float (the reference loop gives inf)."""
    original = pd.DataFrame({"a": [0, 1], "b": [0.0, 5e-324]})
    released = pd.DataFrame({"a": [0], "b": [2.0]})
    assert math.isinf(reference(original, released, ["a", "b"])[0])
    with pytest.raises(SdcInputError, match=r"^the values of b lie too far apart[^\n]*$"):
        closest_record(original, released, ["a", "b"])


def test_a_table_without_numbers_is_refused_in_one_line():
    df = pd.DataFrame({"s": list("abc")})
    with pytest.raises(SdcInputError, match="no numeric column"):
        closest_record(df, df, ["s"])


def test_compare_closest_gives_the_figures_and_a_line(tmp_path):
    df = load("carData/Chile")[["sex", "age", "income", "statusquo"]]
    df.to_csv(tmp_path / "o.csv", index=False)
    df.iloc[::-1].to_csv(tmp_path / "r.csv", index=False)  # the same records, reversed
    out = run("compare", tmp_path / "o.csv", tmp_path / "r.csv", "--numeric",
              "age,income,statusquo", "--closest", "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["dcr_median"] == 0.0 and got["dcr_zero_percent"] == 100.0
    assert got["dcr_n"] == int(df[["age", "income", "statusquo"]].notna().all(axis=1).sum())
    text = run("compare", tmp_path / "o.csv", tmp_path / "r.csv", "--closest")
    assert text.returncode == 0 and "distance to the closest record: median 0" in text.stdout
    plain = json.loads(run("compare", tmp_path / "o.csv", tmp_path / "r.csv", "--json").stdout)
    assert "dcr_median" not in plain  # only when asked: a k-d tree query per record
    engine = run("compare", tmp_path / "o.csv", tmp_path / "r.csv", "--closest",
                 "--engine", "duckdb")
    assert engine.returncode == 2 and engine.stderr.count("\n") == 1
    assert "--closest reads both tables in memory" in engine.stderr


def test_compare_closest_refuses_an_overflowing_distance_in_one_line(tmp_path):
    """The subnormal range above, through the command line: exit 2, one line, no inf."""
    pd.DataFrame({"a": [0, 1], "b": [0.0, 5e-324]}).to_csv(tmp_path / "o.csv", index=False)
    pd.DataFrame({"a": [0, 1], "b": [2.0, 0.0]}).to_csv(tmp_path / "r.csv", index=False)
    assert pd.read_csv(tmp_path / "o.csv")["b"].iloc[1] == 5e-324  # the file keeps the width
    out = run("compare", tmp_path / "o.csv", tmp_path / "r.csv", "--numeric", "a,b",
              "--closest", "--json")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "the values of b lie too far apart" in out.stderr
