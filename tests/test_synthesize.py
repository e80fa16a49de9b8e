"""Synthesis by sequential CART (issue 53; docs/methods.md, "Synthesis (sequential CART)"):
the method, its recipe step, its refusals and the command line."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdc_core.assess import Setting, assess
from sdc_core.errors import SdcInputError
from sdc_core.methods.synthesize import _donors, held_out, synthesize
from sdc_core.recipe import apply_recipe, keeps_rows, parse_recipe
from tests.cli_run import run
from tests.conftest import SHARED_DATA


def mixed(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """Numbers, counts, dates, text, categories and flags, with blanks."""
    r = np.random.default_rng(seed)
    age = r.integers(18, 90, n)
    return pd.DataFrame({
        "age": age,
        "income": np.where(r.random(n) < 0.1, np.nan, age * 300 + r.normal(0, 2000, n)),
        "kids": pd.array(np.where(r.random(n) < 0.1, None, r.integers(0, 4, n)), dtype="Int64"),
        "since": pd.to_datetime("2001-01-01") + pd.to_timedelta(r.integers(0, 5000, n), "D"),
        "region": pd.Categorical(r.choice(["n", "s", "e", "w"], n), categories=["n", "s", "e",
                                                                                 "w", "none"]),
        "job": pd.array(r.choice(["a", "b", "c", None], n), dtype="string"),
        "smoker": r.random(n) < 0.3,
        "note": r.choice(["x", "y", "z"], n).astype(object)})


def test_same_seed_same_bytes_other_seed_other_file():
    df = mixed()
    cols = list(df.columns)
    for kw in ({}, {"smoothing": True, "proper": True, "holdout": 0.2, "records": 150}):
        one = synthesize(df, cols, seed=5, **kw).values.to_csv().encode()
        two = synthesize(df, cols, seed=5, **kw).values.to_csv().encode()
        other = synthesize(df, cols, seed=6, **kw).values.to_csv().encode()
        assert one == two
        assert one != other


def test_the_trees_fitted_in_threads_give_the_one_thread_file():
    """The trees are fitted up front in threads (they see the fitted records alone): any
    number of threads gives the bytes of one, with blanks, smoothing, a bootstrap and a
    holdout."""
    df = mixed(3000, seed=2)
    cols = list(df.columns)
    for kw in ({}, {"smoothing": True, "proper": True, "holdout": 0.3, "records": 4000}):
        one = synthesize(df, cols, seed=7, workers=1, **kw).values.to_csv().encode()
        for workers in (2, 5):
            assert synthesize(df, cols, seed=7, workers=workers,
                              **kw).values.to_csv().encode() == one


def test_a_donor_is_the_leafs_record_at_the_drawn_position():
    """_donors against its definition, a loop: the fitted records of the synthetic record's
    leaf, in their order, and the one at ⌊u·size⌋."""
    r = np.random.default_rng(0)
    leaf_fit = r.choice([3, 4, 9, 12], size=200)
    leaf_syn = r.choice([3, 4, 9, 12], size=500)
    u = r.random(500)
    got = _donors(leaf_fit, leaf_syn, u)
    for k in range(500):
        members = [i for i in range(200) if leaf_fit[i] == leaf_syn[k]]
        assert got[k] == members[int(np.floor(u[k] * len(members)))]


def test_records_and_a_fresh_index():
    df = mixed().set_axis(range(1000, 1400))
    out = synthesize(df, list(df.columns), records=37, seed=1)
    assert len(out.values) == 37 and out.values.index.equals(pd.RangeIndex(37))
    assert out.info["records"] == 37 and out.info["fitted"] == 400


def test_held_out_records_are_never_donors():
    """A unique id visited first: with 5n draws nearly every fitted id appears, and no held-out
    one does; the held-out set is the one :func:`held_out` recomputes, ⌊0.3·n⌋ records."""
    n = 400
    df = mixed(n).assign(uid=np.arange(n) * 7)
    out = synthesize(df, list(df.columns), holdout=0.3, records=5 * n, seed=3,
                     visit=["uid"], step=2)
    out_mask = held_out(n, 0.3, seed=3, step=2)
    assert out_mask.sum() == 120 and out.info["held_out"] == 120
    drawn = set(out.values["uid"])
    assert drawn.isdisjoint(set(df["uid"][out_mask]))
    assert len(drawn) >= 0.95 * (n - 120)
    # the ids key the draw: other ids, other records held out
    other = held_out(np.arange(n, dtype=np.uint64) + 10_000, 0.3, seed=3, step=2)
    assert other.sum() == 120 and not np.array_equal(other, out_mask)


def test_proper_fits_on_a_bootstrap_sample():
    """A bootstrap sample holds about 1 − 1/e ≈ 63 % of the distinct records: drawing 5n
    records from it reaches at most those; without it nearly all (1 − e⁻⁵ ≈ 99 %)."""
    n = 1000
    df = pd.DataFrame({"uid": np.arange(n), "x": np.arange(n) % 7})
    share = {proper: synthesize(df, ["uid", "x"], proper=proper, records=5 * n,
                                seed=4).values["uid"].nunique() / n for proper in (False, True)}
    assert share[False] > 0.97
    assert 0.58 < share[True] < 0.68  # 0.632 ± 5 standard errors (√(0.23/1000) ≈ 0.015)


def test_smoothing_moves_numbers_off_the_donors_and_keeps_dtypes():
    df = mixed()
    plain = synthesize(df, list(df.columns), seed=2).values
    smooth = synthesize(df, list(df.columns), seed=2, smoothing=True).values
    seen = set(df["income"].dropna())
    assert set(plain["income"].dropna()) <= seen
    moved = ~smooth["income"].dropna().isin(seen)
    assert moved.mean() > 0.9
    assert smooth.dtypes.equals(df.dtypes)
    assert set(smooth["region"].dropna()) <= set(df["region"].dropna())  # not smoothed
    # whole numbers stay whole, dates dates
    assert (smooth["age"] == np.round(smooth["age"])).all()


@pytest.mark.parametrize("dtype", ["UInt8", "uint8", "Int8"])
def test_a_smoothed_small_integer_stays_within_its_dtype(dtype):
    """A smoothed draw of a column of 0s and 1s falls below 0 or past 1; in UInt8 it was cast
    as it was and raised (found by the conformance harness's synthetic releases)."""
    values = [0, 1] * 6 + [None] * 8 if dtype[0].isupper() else [0, 1] * 10
    df = pd.DataFrame({"x": pd.array(values, dtype=dtype), "y": [True, False] * 10})
    for seed in range(5):
        out = synthesize(df, ["x", "y"], min_leaf=1, smoothing=True, seed=seed).values
        assert out["x"].dtype == df["x"].dtype
        info = np.iinfo(df["x"].dtype.numpy_dtype if dtype[0].isupper() else df["x"].dtype)
        assert out["x"].dropna().between(info.min, info.max).all()


@st.composite
def frames(draw):
    """A table of every dtype the readers produce, with blanks, rare and unused levels."""
    n = draw(st.integers(4, 40))
    seed = draw(st.integers(0, 2**32 - 1))
    r = np.random.default_rng(seed)
    blank = r.random(n) < draw(st.sampled_from([0.0, 0.2, 0.6]))
    levels = ["common", "rare", "unused"]
    cat = np.where(np.arange(n) == 0, "rare", "common")
    r.shuffle(cat)
    huge = draw(st.sampled_from([1.0, 1e300]))
    cols = {
        "b": r.random(n) < 0.5,
        "i64": pd.array(np.where(blank, None, r.integers(-5, 5, n)), dtype="Int64"),
        "boolean": pd.array(np.where(blank, None, r.random(n) < 0.5), dtype="boolean"),
        "string": pd.array(np.where(blank, None, r.choice(["<b>x</b>", "**y**", "z"], n)),
                           dtype="string"),
        "cat": pd.Categorical(np.where(blank, None, cat), categories=levels),
        "date": pd.Series(pd.to_datetime("2020-01-01")
                          + pd.to_timedelta(r.integers(0, 900, n), "D")).mask(blank),
        "float": np.where(blank, np.nan, r.normal(0, huge, n)),
        "int": r.integers(-(2**62), 2**62, n),
        "text": pd.Series(r.choice(["a", "b", "=1+1"], n), dtype=object).mask(blank),
    }
    names = draw(st.permutations(list(cols)))
    return pd.DataFrame({c: cols[c] for c in names})


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(df=frames(), min_leaf=st.integers(1, 2), seed=st.integers(0, 2**64 - 1),
       records=st.sampled_from([None, 1, 25]))
def test_every_dtype_comes_back_with_values_seen_in_the_fit(df, min_leaf, seed, records):
    out = synthesize(df, list(df.columns), min_leaf=min_leaf, seed=seed, records=records).values
    assert out.dtypes.equals(df.dtypes)
    assert list(out.columns) == list(df.columns)
    assert out.index.equals(pd.RangeIndex(len(df) if records is None else records))
    assert list(out["cat"].cat.categories) == ["common", "rare", "unused"]
    for c in ("b", "boolean", "string", "cat", "text"):
        assert set(out[c].astype(object).where(out[c].notna(), None)) <= set(
            df[c].astype(object).where(df[c].notna(), None)), c
    for c in ("i64", "date", "float", "int"):
        got, had = out[c].dropna(), df[c].dropna()
        assert got.empty or (had.min() <= got.min() and got.max() <= had.max()), c
        assert out[c].isna().any() <= df[c].isna().any(), c


def test_the_first_column_follows_its_marginal_on_an_outside_table():
    """adult.csv (30,162 records): the first column of the visit is n draws with replacement
    from the original's values, so each level's share p̂ is within 4·√(p(1 − p)/n) of its
    share p (a binomial's standard error; fixed seed)."""
    df = pd.read_csv(SHARED_DATA / "adult.csv", sep=";")[["education", "sex", "age"]]
    out = synthesize(df, list(df.columns), seed=11).values
    p = df["education"].value_counts(normalize=True)
    got = out["education"].value_counts(normalize=True).reindex(p.index, fill_value=0.0)
    bound = 4 * np.sqrt(p * (1 - p) / len(df))
    assert (np.abs(got - p) <= bound).all()
    assert set(out["education"]) <= set(p.index)


def test_a_function_of_an_earlier_column_is_reproduced_exactly():
    """A column that is a function of an earlier one: every leaf is pure when every value of
    the earlier column has at least min_leaf records, so the synthetic records keep the
    function, categorical and numeric alike; with leaves of 200 records it does not (the check
    could fail)."""
    r = np.random.default_rng(0)
    n = 600
    age = r.permutation(np.repeat(np.arange(20, 70), n // 50))
    town = r.choice(["p", "q", "r", "s"], n)
    df = pd.DataFrame({"age": age, "town": town, "noise": r.normal(size=n),
                       "region": pd.Series(town).map({"p": "N", "q": "N", "r": "S", "s": "W"}),
                       "decade": age // 10 * 10, "double": 2.0 * age})
    assert df["age"].value_counts().min() >= 5
    out = synthesize(df, list(df.columns), min_leaf=5, seed=9).values
    assert (out["region"] == out["town"].map({"p": "N", "q": "N", "r": "S", "s": "W"})).all()
    assert (out["decade"] == out["age"] // 10 * 10).all()
    assert (out["double"] == 2.0 * out["age"]).all()
    coarse = synthesize(df, list(df.columns), min_leaf=200, seed=9).values  # 17+ ages a leaf
    assert (coarse["double"] != 2.0 * coarse["age"]).mean() > 0.5


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"holdout": 1.0}, "holdout must be a share in [0, 1), not 1.0"),
    ({"holdout": -0.1}, "holdout must be a share in [0, 1), not -0.1"),
    ({"holdout": 0.5, "min_leaf": 6}, "holdout 0.5 leaves 10 records to fit, fewer than "
                                      "2·min_leaf = 12"),
    ({"min_leaf": 0}, "min_leaf must be a whole number of at least 1, not 0"),
    ({"records": 0}, "records must be a whole number from 1 to 10,000,000, not 0"),
    ({"records": 10_000_001}, "records must be a whole number from 1 to 10,000,000"),
    ({"visit": ["age", "<b>pay</b>"]}, "visit names column(s) not in the table: '<b>pay</b>'"),
])
def test_refusals_in_one_sentence(kwargs, message):
    df = pd.DataFrame({"age": np.arange(20), "sex": list("mf") * 10})
    with pytest.raises(SdcInputError) as err:
        synthesize(df, list(df.columns), **kwargs)
    assert str(err.value).startswith(message)
    assert "\n" not in str(err.value)


def test_a_table_of_one_record_is_refused():
    with pytest.raises(SdcInputError, match="synthesis needs at least 2 records, and the "
                                            "table has 1"):
        synthesize(pd.DataFrame({"a": [1]}), ["a"], min_leaf=1)


STEP = {"method": "synthesize", "min_leaf": 5, "smoothing": False, "proper": False,
        "records": None, "holdout": 0}


@pytest.mark.parametrize(("change", "message"), [
    ({"min_leaf": "__import__('os').system('x')"},
     "min_leaf must be a whole number, not \"__import__('os').system('x')\""),
    ({"min_leaf": 10**400}, "min_leaf must be a whole number, not 1000000"),
    ({"records": 1e300}, "records must be a whole number from 1 to 10,000,000"),
    ({"records": -3}, "records must be a whole number from 1 to 10,000,000"),
    ({"holdout": "0.1"}, "holdout must be a number, not '0.1'"),
    ({"holdout": float("nan")}, "holdout must be a number, not nan"),
    ({"holdout": 2}, "holdout must be a share in [0, 1), not 2"),
    ({"smoothing": "yes"}, "smoothing must be true or false"),
    ({"proper": 1}, "proper must be true or false"),
    ({"visit": "age"}, "visit must be a non-empty list of column names"),
    ({"visit": [["age"]]}, "visit must be a non-empty list of column names"),
    ({"visit": [{"a": {"b": {"c": [1]}}}]}, "visit must be a non-empty list of column names"),
    ({"visit": ["age", "age"]}, "visit names a column more than once"),
    ({"columns": ["age"]}, "unknown key(s) columns"),
    ({"min_leaf": {"deep": [[[[[]]]]]}}, "min_leaf must be a whole number"),
])
def test_a_hostile_step_is_refused_with_one_readable_line(change, message):
    with pytest.raises(SdcInputError) as err:
        parse_recipe({"seed": 1, "steps": [{**STEP, **change}]})
    text = str(err.value)
    assert text.startswith("step 1 (synthesize): ") and message in text
    assert "\n" not in text and len(text) < 200


@pytest.mark.parametrize(("top", "steps", "message"), [
    ({"household": "hid"}, [STEP], "a synthetic table does not keep households whole"),
    ({"record_id": "pidnum"}, [STEP], "so it has no record id"),
    ({}, [STEP, {"method": "band", "column": "age", "width": 10}],
     "it makes a new table, so it must be the recipe's last step"),
])
def test_a_synthesis_step_where_it_cannot_stand_is_refused(top, steps, message):
    with pytest.raises(SdcInputError, match=message):
        parse_recipe({"seed": 1, **top, "steps": steps})


def test_apply_recipe_replaces_the_table(actg):
    recipe = parse_recipe({"seed": 42, "steps": [
        {"method": "band", "column": "age", "width": 10},
        {**STEP, "records": 500, "visit": ["age", "race"]}]})
    assert not keeps_rows(recipe)
    result = apply_recipe(recipe, actg)
    banded = apply_recipe(parse_recipe({"seed": 42, "steps": recipe.steps[:1]}), actg).data
    out = result.data
    assert len(out) == 500 and out.index.equals(pd.RangeIndex(500))
    assert out.dtypes.equals(banded.dtypes) and list(out.columns) == list(banded.columns)
    assert set(out["age"]) <= set(banded["age"])  # the bands of step 1, drawn as values
    report = result.reports[1]
    assert report["method"] == "synthesize" and report["records"] == 500
    assert report["visit"][:2] == ["age", "race"]
    again = apply_recipe(recipe, actg).data
    assert out.to_csv().encode() == again.to_csv().encode()
    with pytest.raises(SdcInputError, match=r"step 1 \(synthesize\): visit names column\(s\) "
                                            r"not in the table: '\*\*x\*\*'"):
        apply_recipe(parse_recipe({"seed": 1, "steps": [{**STEP, "visit": ["**x**"]}]}), actg)


def test_the_command_line_applies_a_synthesis_step(tmp_path):
    data = tmp_path / "d.csv"
    r = np.random.default_rng(1)
    pd.DataFrame({"age": r.integers(20, 60, 200), "sex": r.choice(["f", "m"], 200),
                  "pay": r.normal(3000, 400, 200).round(2)}).to_csv(data, index=False)
    recipe, out = tmp_path / "r.json", tmp_path / "o.csv"
    recipe.write_text(json.dumps({"seed": 3, "steps": [{**STEP, "records": 80}]}))
    res = run("apply", data, "--recipe", recipe, "-o", out)
    assert res.returncode == 0, res.stderr
    assert len(pd.read_csv(out)) == 80
    assert "step 1 synthesize: records 80, fitted 200, held_out 0" in res.stdout
    first = out.read_bytes()
    assert run("apply", data, "--recipe", recipe, "-o", out).returncode == 0
    assert out.read_bytes() == first
    for bad, message in (({**STEP, "holdout": 1.5}, "holdout must be a share in [0, 1)"),
                         ({**STEP, "visit": ["<script>x</script>"]}, "visit names column(s)")):
        recipe.write_text(json.dumps({"seed": 3, "steps": [bad]}))
        res = run("apply", data, "--recipe", recipe, "-o", tmp_path / "bad.csv")
        assert res.returncode == 2 and res.stdout == ""
        assert len(res.stderr.strip().splitlines()) == 1 and message in res.stderr


def test_the_assessment_matches_no_synthetic_record_to_an_original_one(actg):
    """The linkage attack, which matches record by record, is refused on a synthetic release
    (the recipe does not keep rows), while the released keys are still measured."""
    recipe = parse_recipe({"seed": 1, "steps": [STEP]})
    done = assess(actg, None, Setting(qi=("age", "gender", "race")), recipe)
    with pytest.raises(SdcInputError, match="does not keep the original's rows"):
        _ = done.linkage
    assert done.keys.n_records == len(actg)


def test_records_times_columns_past_the_cap_are_refused_before_any_fit(monkeypatch, tmp_path):
    """A recipe asks for the records and the table gives the columns: their product, what
    memory follows, is bounded before a tree is fitted (a fit would fail the test), and the
    command line says so in one line."""
    from sdc_core.methods import synthesize as module

    df = pd.DataFrame({f"c{j}": np.arange(20) % 3 for j in range(60)})
    monkeypatch.setattr(module, "_fit_tree", lambda *a, **k: pytest.fail("a tree was fitted"))
    message = (r"synthesis of 1,000,000 records × 60 columns would make 60,000,000 values, "
               r"more than the 50,000,000 one step makes: ask for fewer records$")
    with pytest.raises(SdcInputError, match="^" + message):
        module.synthesize(df, list(df.columns), records=1_000_000, seed=1)
    monkeypatch.undo()
    module.synthesize(df, list(df.columns), records=2, seed=1)  # 120 values: made
    df.to_csv(tmp_path / "wide.csv", index=False)
    (tmp_path / "r.json").write_text(json.dumps({"seed": 1, "steps": [
        {"method": "synthesize", "records": 1_000_000}]}))
    out = run("apply", tmp_path / "wide.csv", "--recipe", tmp_path / "r.json", "-o",
              tmp_path / "out.csv")
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert re.search(message[:-1], out.stderr) and not (tmp_path / "out.csv").exists()
