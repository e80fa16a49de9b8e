"""Deniability (sdc_core.risk.deniability): the transition matrix of every per-value method, the
local-DP ε, the best-guess accuracy and the posterior, against hand-worked references, the
methods' own figures, the real methods' draws, and over every column kind."""

from __future__ import annotations

import doctest
import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdc_core.errors import SdcInputError
from sdc_core.methods.pram import flip_matrix, invariant_matrix
from sdc_core.methods.randomized_response import epsilon as rr_epsilon
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.risk import deniability as den
from sdc_core.risk.deniability import (
    compose,
    deniability,
    local_epsilon,
    prior,
    recipe_deniability,
    step_matrix,
)


def recipe(*steps: dict, seed: int = 7) -> object:
    return parse_recipe({"seed": seed, "steps": list(steps)})


def survey(n: int, shares: dict[str, float], name: str = "q1") -> pd.Series:
    """n answers in the given shares, in a shuffled order."""
    counts = [round(n * v) for v in shares.values()]
    values = np.repeat(list(shares), counts)
    return pd.Series(np.random.default_rng(0).permutation(values), name=name, dtype="str")


def test_the_docstring_examples_run():
    assert doctest.testmod(den).failed == 0


# ---------------------------------------------------------------------------- references


def test_the_two_coin_randomized_response_gives_ln_3():
    """Seed 002: a first coin keeps the answer (q = ½), else a second coin answers yes or no.
    P(yes | yes) = ½ + ½·½ = ¾, P(yes | no) = ½·½ = ¼: the matrix [[¾, ¼], [¼, ¾]], and
    ε = ln(¾ / ¼) = ln 3 ≈ 1.0986, what the method's own ``epsilon`` gives."""
    s = pd.Series(["yes"] * 20 + ["no"] * 80, name="violated", dtype="str")
    step = {"method": "randomized_response", "column": "violated", "keep_probability": 0.5}
    m = step_matrix(step, s)
    assert m.loc["yes", "yes"] == m.loc["no", "no"] == 0.75
    assert m.loc["yes", "no"] == m.loc["no", "yes"] == 0.25
    (d,) = recipe_deniability(recipe(step), s.to_frame())
    assert d.epsilon == pytest.approx(math.log(3), abs=1e-12)
    assert d.epsilon == pytest.approx(rr_epsilon(0.5, 2), abs=1e-12)
    # π = (no 0.8, yes 0.2): released "yes" is ¾·0.2 = 0.15 from a yes, ¼·0.8 = 0.2 from a no,
    # so the attacker guesses "no" on either: accuracy 0.8·¾ + 0.8·¼ = 0.8 = the baseline
    assert d.guess_accuracy == pytest.approx(0.8) and d.baseline == pytest.approx(0.8)
    assert d.posterior.loc["yes", "yes"] == pytest.approx(0.15 / 0.35)
    assert "at most e^ε = 3 times likelier" in d.meaning


@pytest.mark.parametrize("q", [0.0, 0.1, 0.5, 0.75, 0.99, 1.0])
@pytest.mark.parametrize("k", [2, 3, 6])
def test_randomized_response_epsilon_agrees_with_the_method(q, k):
    cats = [f"c{i}" for i in range(k)]
    s = pd.Series(cats * 3, name="a", dtype="str")
    m = step_matrix({"method": "randomized_response", "column": "a", "keep_probability": q}, s)
    np.testing.assert_allclose(m.to_numpy(), q * np.eye(k) + (1 - q) / k)
    assert local_epsilon(m) == pytest.approx(rr_epsilon(q, k), abs=1e-12) \
        if q < 1 else local_epsilon(m) == rr_epsilon(q, k) == math.inf


def test_seed_000_relabeling_by_hand():
    """Seed 000: π = (A 0.5, B 0.3, C 0.2), α = 0.10. R = 0.9·I + 0.1·1πᵀ:

        A: 0.95 0.03 0.02
        B: 0.05 0.93 0.02
        C: 0.05 0.03 0.92

    ε: column k's largest over smallest entry is (1 − α + απ_k)/(απ_k): A 0.95/0.05 = 19,
    B 0.93/0.03 = 31, C 0.92/0.02 = 46, so ε = ln 46 ≈ 3.8286 (e^ε = 46).
    Guess accuracy: the largest of R[i, k]·π_i per released k: A 0.95·0.5 = 0.475, B 0.93·0.3
    = 0.279, C 0.92·0.2 = 0.184; Σ = 0.938 = (1 − α) + αΣπ², against the baseline 0.5.
    Posterior: the released shares are π again (0.5, 0.3, 0.2), and P(true i | released k) =
    R[i, k]·π_i/π_k: released A → (0.95, 0.03, 0.02), B → (0.05, 0.93, 0.02), C → (0.05, 0.03,
    0.92)."""
    s = survey(1000, {"A": 0.5, "B": 0.3, "C": 0.2})
    (d,) = recipe_deniability(recipe({"method": "relabel", "column": "q1", "alpha": 0.1}),
                              s.to_frame())
    hand = np.array([[0.95, 0.03, 0.02], [0.05, 0.93, 0.02], [0.05, 0.03, 0.92]])
    np.testing.assert_allclose(d.matrix.to_numpy(), hand, atol=1e-12)
    assert list(d.matrix.index) == list(d.matrix.columns) == ["A", "B", "C"]
    assert d.epsilon == pytest.approx(math.log(46), abs=1e-12)
    assert d.guess_accuracy == pytest.approx(0.938, abs=1e-12)
    assert d.baseline == pytest.approx(0.5)
    np.testing.assert_allclose(d.posterior.to_numpy(), hand.T, atol=1e-12)
    assert d.unreachable == () and d.n_blank == 0 and d.method == "relabel"
    # docs/measures.md: ε = ln(1 + (1 − α)/(α·min π)) comes down to ln 10 at α = 1/2.8
    (d,) = recipe_deniability(recipe({"method": "relabel", "column": "q1", "alpha": 1 / 2.8}),
                              s.to_frame())
    assert d.epsilon == pytest.approx(math.log(10), abs=1e-12)
    assert d.guess_accuracy == pytest.approx(1 - 1 / 2.8 + 0.38 / 2.8, abs=1e-12)


@pytest.mark.parametrize("k", [2, 3, 4, 6])
@pytest.mark.parametrize("p", [0.01, 0.1, 0.3, 0.5, 0.7, 0.95, 1.0])
def test_pram_flip_epsilon(k, p):
    """PRAM flip: P(k|k) = 1 − p, P(k|i) = p/(K − 1) for i ≠ k. Each released column holds
    these two values, so ε = |ln((1 − p)(K − 1)/p)|: ln((1 − p)(K − 1)/p) for p < (K − 1)/K
    (keeping is likelier than any one flip), 0 at p = (K − 1)/K (the release is uniform,
    independent of the answer), and ln(p/((1 − p)(K − 1))) above; p = 1 with K = 2 rules the
    answer out (∞), as p = 0 does (no protection)."""
    s = pd.Series([f"v{i}" for i in range(k)] * 4, name="x", dtype="str")
    m = step_matrix({"method": "pram", "column": "x", "p": p}, s)
    np.testing.assert_allclose(m.to_numpy(), flip_matrix(k, p))
    eps = local_epsilon(m)
    if p == 1.0:  # P(k|k) = 0 < p/(K − 1): a released value rules its own level out
        assert eps == math.inf
        return
    expected = abs(math.log((1 - p) * (k - 1) / p))
    assert eps == pytest.approx(expected, abs=1e-12)
    if p < (k - 1) / k:
        assert eps == pytest.approx(math.log((1 - p) * (k - 1) / p), abs=1e-12)


def test_no_protection_has_no_deniability():
    s = pd.Series(list("aabbc"), name="x", dtype="str")
    (d,) = recipe_deniability(recipe({"method": "pram", "column": "x", "p": 0.0}),
                              s.to_frame())
    assert d.epsilon == math.inf and not d.deniable and d.guess_accuracy == 1.0
    assert d.meaning.startswith("ε = ∞: no deniability")
    out = d.to_json()
    assert out["epsilon"] is None and out["deniable"] is False
    json.dumps(out, allow_nan=False)  # plain JSON: no NaN, no Infinity
    two = pd.DataFrame({"x": ["a", "b"]})
    tiny = recipe_deniability(recipe({"method": "pram", "column": "x", "p": 5e-324}), two)[0]
    assert tiny.epsilon > 700 and "e^ε = 10^3" in tiny.meaning  # past a float's e^ε


def test_invariant_pram_is_the_methods_matrix():
    s = survey(1000, {"a": 0.6, "b": 0.3, "c": 0.1}, name="x")
    m = step_matrix({"method": "pram", "column": "x", "invariant": True, "retention": 0.8}, s)
    pi, _ = prior(s)
    R = invariant_matrix(pi.to_numpy(), 0.8)
    np.testing.assert_allclose(m.to_numpy(), R, atol=1e-12)
    np.testing.assert_allclose(pi.to_numpy() @ R, pi.to_numpy(), atol=1e-12)  # πR = π
    d = deniability(m, pi)
    ratios = [R[:, k].max() / R[:, k].min() for k in range(3)]
    assert d.epsilon == pytest.approx(math.log(max(ratios)), abs=1e-12)


def test_a_user_matrix_and_a_zero_in_it():
    s = pd.Series(list("aabbbc"), name="x", dtype="str")
    given_ = {"a": {"a": 0.8, "b": 0.2}, "b": {"a": 0.1, "b": 0.8, "c": 0.1},
              "c": {"b": 0.5, "c": 0.5}}
    m = step_matrix({"method": "pram", "column": "x", "matrix": given_}, s)
    assert m.loc["b", "c"] == 0.1 and m.loc["a", "c"] == 0.0
    d = deniability(m, prior(s)[0])
    assert d.epsilon == math.inf  # released c rules a true a out
    full = {a: {b: (0.8 if a == b else 0.1) for b in "abc"} for a in "abc"}
    m = step_matrix({"method": "pram", "column": "x", "matrix": full}, s)
    assert local_epsilon(m) == pytest.approx(math.log(8))


def test_the_step_matrix_is_the_table_the_method_returns():
    s = survey(500, {"a": 0.5, "b": 0.25, "c": 0.15, "d": 0.1}, name="x")
    for step in ({"method": "pram", "column": "x", "p": 0.2},
                 {"method": "pram", "column": "x", "invariant": True, "retention": 0.7},
                 {"method": "relabel", "column": "x", "alpha": 0.3},
                 {"method": "randomized_response", "column": "x", "keep_probability": 0.6,
                  "categories": ["a", "b", "c", "d", "e"]}):
        result = apply_recipe(recipe(step), s.to_frame())
        pd.testing.assert_frame_equal(step_matrix(step, s), result.matrices[1],
                                      check_dtype=False)


# ------------------------------------------------------------- deterministic recodings


def test_a_recoding_that_merges_levels():
    """Recoding {ab: [a, b]} with π = (a 0.3, b 0.5, c 0.2): P(ab | a) = P(ab | b) = 1,
    P(c | c) = 1. Released "ab" rules a true c out (1 against 0), so ε = ∞; the attacker
    guesses the commonest level of each group: max(π_a, π_b) + π_c = 0.5 + 0.2 = 0.7, against
    the baseline 0.5; P(true a | released ab) = 0.3/0.8."""
    s = pd.Series(["a"] * 3 + ["b"] * 5 + ["c"] * 2, name="x", dtype="str")
    step = {"method": "recode", "column": "x", "groups": {"ab": ["a", "b"]}}
    m = step_matrix(step, s)
    assert m.to_dict("index") == {"a": {"ab": 1.0, "c": 0.0}, "b": {"ab": 1.0, "c": 0.0},
                                  "c": {"ab": 0.0, "c": 1.0}}
    assert recipe_deniability(recipe(step), s.to_frame()) == []  # a recoding is not perturbed
    (d,) = recipe_deniability(recipe(step), s.to_frame(), recodings=True)
    assert d.epsilon == math.inf
    assert d.guess_accuracy == pytest.approx(0.5 + 0.2) and d.baseline == pytest.approx(0.5)
    assert d.posterior.loc["a", "ab"] == pytest.approx(0.3 / 0.8)


def test_merging_every_level_leaves_only_the_baseline():
    s = pd.Series(list("aabc"), name="x", dtype="str")
    (d,) = recipe_deniability(recipe({"method": "recode", "column": "x",
                                      "groups": {"all": ["a", "b", "c"]}}), s.to_frame(),
                              recodings=True)
    assert d.epsilon == 0.0 and d.guess_accuracy == pytest.approx(0.5) == d.baseline


def test_banding_is_a_deterministic_limit():
    ages = pd.Series([21, 23, 23, 27, 34, 34, 34, 38, 45], name="age")
    (d,) = recipe_deniability(recipe({"method": "band", "column": "age", "width": 10}),
                              ages.to_frame(), recodings=True)
    assert set(d.matrix.columns) == {"20–29", "30–39", "40–49"}
    assert ((d.matrix == 0) | (d.matrix == 1)).all().all()
    assert d.epsilon == math.inf
    # Σ over bands of the commonest age in the band: 23 (2/9) + 34 (3/9) + 45 (1/9)
    assert d.guess_accuracy == pytest.approx(6 / 9) and d.baseline == pytest.approx(3 / 9)


def test_a_recoding_before_a_pram_is_composed():
    """recode {ab: [a, b]} then PRAM p = 0.2 over (ab, c): P(ab | a) = 0.8, P(c | a) = 0.2,
    the same for b, and P(c | c) = 0.8: released ab no longer rules c out, ε = ln 4."""
    s = pd.Series(list("aabbbbcccc"), name="x", dtype="str")
    steps = ({"method": "recode", "column": "x", "groups": {"ab": ["a", "b"]}},
             {"method": "pram", "column": "x", "p": 0.2})
    (d,) = recipe_deniability(recipe(*steps), s.to_frame())
    assert d.method == "recode → pram" and d.steps == (1, 2)
    np.testing.assert_allclose(d.matrix.loc[["a", "b", "c"], ["ab", "c"]].to_numpy(),
                               [[0.8, 0.2], [0.8, 0.2], [0.2, 0.8]])
    assert d.epsilon == pytest.approx(math.log(4))
    first = step_matrix(steps[0], s)
    assert compose(first, step_matrix(steps[1], apply_recipe(recipe(steps[0]),
                                                             s.to_frame()).data["x"])).equals(
        d.matrix)


# ----------------------------------------------------------------- blanks and edges


def test_blanks_are_left_out_and_released_blank():
    s = pd.Series(["a", None, "b", "a", None, "c"], name="x", dtype="str")
    r = recipe({"method": "pram", "column": "x", "p": 0.3})
    (d,) = recipe_deniability(r, s.to_frame())
    assert d.n_blank == 2
    assert d.prior.to_dict() == {"a": 0.5, "b": 0.25, "c": 0.25}
    assert list(d.matrix.index) == ["a", "b", "c"]  # no row or column for a blank
    released = apply_recipe(r, s.to_frame()).data["x"]
    assert (released.isna() == s.isna()).all()  # a blank is released blank, a value a value


def test_a_released_level_no_answer_produces():
    s = pd.Series(["yes", "no", "no"], name="x", dtype="str")
    (d,) = recipe_deniability(recipe({"method": "randomized_response", "column": "x",
                                      "keep_probability": 1.0,
                                      "categories": ["yes", "no", "maybe"]}), s.to_frame())
    assert d.unreachable == ("maybe",) and "maybe" not in d.posterior.columns
    assert d.prior["maybe"] == 0.0 and d.epsilon == math.inf
    assert d.to_json()["unreachable"] == ["maybe"]


def test_dropped_and_suppressed_columns():
    df = pd.DataFrame({"x": list("aabbcc"), "y": list("abcabc"), "z": list("aaabbb")})
    r = recipe({"method": "pram", "column": "x", "p": 0.1},
               {"method": "pram", "column": "y", "p": 0.1},
               {"method": "drop", "columns": ["x"]},
               {"method": "local_suppression", "columns": ["y", "z"], "k": 2})
    (d,) = recipe_deniability(r, df)
    assert d.column == "y" and d.steps == (2,) and d.not_modelled == (4,)


def test_the_draws_follow_the_record_id():
    """With a record id the chained steps draw as apply_recipe does: the second step's matrix
    (a relabeling redrawing from the PRAM's output) is built on the same output."""
    df = pd.DataFrame({"id": np.arange(400)[::-1], "x": list("aaabbbbccd") * 40})
    r = parse_recipe({"seed": 3, "record_id": "id", "steps": [
        {"method": "pram", "column": "x", "p": 0.3},
        {"method": "relabel", "column": "x", "alpha": 0.4}]})
    (d,) = recipe_deniability(r, df)
    first = apply_recipe(parse_recipe({"seed": 3, "record_id": "id", "steps": r.steps[:1]}), df)
    then = step_matrix(r.steps[1], first.data["x"])
    pd.testing.assert_frame_equal(d.matrix, compose(first.matrices[1], then))
    with pytest.raises(SdcInputError, match="record_id column 'nope'"):
        recipe_deniability(parse_recipe({"seed": 3, "record_id": "nope", "steps": r.steps}), df)


def test_a_method_without_a_per_value_matrix_is_refused():
    with pytest.raises(SdcInputError, match="no per-value transition"):
        step_matrix({"method": "rank_swap", "column": "w", "window_percent": 5},
                    pd.Series([1.0, 2.0, 3.0], name="w"))


def test_a_matrix_that_is_not_stochastic_is_refused():
    with pytest.raises(SdcInputError, match="summing to 1"):
        deniability(pd.DataFrame([[0.5, 0.4], [0.5, 0.5]], index=["a", "b"],
                                 columns=["a", "b"]), pd.Series({"a": 0.5, "b": 0.5}))


# ------------------------------------------------------------------------- Monte Carlo


@pytest.mark.parametrize("steps", [
    ({"method": "relabel", "column": "q1", "alpha": 0.1},),
    ({"method": "pram", "column": "q1", "p": 0.15},),
    ({"method": "pram", "column": "q1", "invariant": True, "retention": 0.6},),
    ({"method": "randomized_response", "column": "q1", "keep_probability": 0.5,
      "categories": ["A", "B", "C", "D"]},),
    ({"method": "recode", "column": "q1", "groups": {"BC": ["B", "C"]}},
     {"method": "pram", "column": "q1", "p": 0.2},
     {"method": "relabel", "column": "q1", "alpha": 0.3}),
], ids=["relabel", "pram-flip", "pram-invariant", "rr", "recode-pram-relabel"])
def test_the_real_methods_draw_the_matrix(steps):
    """200,000 answers (π = 0.5/0.3/0.2) through apply_recipe: each empirical share
    n_ik/n_i is within 4 standard errors √(P(1 − P)/n_i) of P[i, k] (exactly P where P is 0
    or 1)."""
    s = survey(200_000, {"A": 0.5, "B": 0.3, "C": 0.2})
    r = recipe(*steps, seed=11)
    released = apply_recipe(r, s.to_frame()).data["q1"].astype(str)
    (d,) = recipe_deniability(r, s.to_frame())
    counts = pd.crosstab(s.astype(str), released)
    n_i = counts.sum(axis=1)
    assert set(d.matrix.index) - set(counts.index) <= {"D"}  # a category no one answered
    for i in counts.index:
        for k in d.matrix.columns:
            p = d.matrix.loc[i, k]
            seen = counts.loc[i, k] / n_i[i] if k in counts.columns else 0.0
            if p in (0.0, 1.0):
                assert seen == p, (i, k)
            else:
                assert abs(seen - p) <= 4 * math.sqrt(p * (1 - p) / n_i[i]), (i, k, seen, p)
    assert set(counts.columns) <= set(d.matrix.columns)


# ------------------------------------------------------------------ over column kinds

KINDS = ("bool", "Int64", "boolean", "string", "category", "object")


@st.composite
def columns(draw: st.DrawFn) -> pd.Series:
    kind = draw(st.sampled_from(KINDS))
    n = draw(st.integers(2, 40))
    blanks = kind != "bool"
    if kind in ("bool", "boolean"):
        pool: list = [True, False]
    elif kind == "Int64":
        pool = [1, 2, 3, 7]
    else:
        pool = ["a", "b", "c", "d"]
    values = draw(st.lists(st.sampled_from(pool + ([None] if blanks else [])),
                           min_size=n, max_size=n))
    if kind == "bool":
        return pd.Series(values, name="x", dtype=bool)
    if kind == "category":
        return pd.Series(values, name="x", dtype="category")
    if kind == "object":
        return pd.Series(values, name="x", dtype=object)
    return pd.Series(values, name="x", dtype=kind)


@st.composite
def steps(draw: st.DrawFn) -> dict:
    method = draw(st.sampled_from(["pram", "pram_invariant", "relabel", "randomized_response"]))
    prob = draw(st.floats(0.0, 1.0))
    if method == "pram":
        return {"method": "pram", "column": "x", "p": prob}
    if method == "pram_invariant":
        return {"method": "pram", "column": "x", "invariant": True,
                "retention": max(prob, 0.01)}
    if method == "relabel":
        return {"method": "relabel", "column": "x", "alpha": prob}
    return {"method": "randomized_response", "column": "x", "keep_probability": prob}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(columns(), st.lists(steps(), min_size=1, max_size=2))
def test_the_figures_hold_over_column_kinds(s, chosen):
    if any(c["method"] == "randomized_response" for c in chosen) and s.nunique() < 2:
        return  # randomized response needs two answers
    r = recipe(*chosen)
    try:
        out = recipe_deniability(r, s.to_frame())
    except SdcInputError:  # the method refuses the column: apply_recipe must too
        with pytest.raises(SdcInputError):
            apply_recipe(r, s.to_frame())
        return
    (d,) = out
    assert d.epsilon >= 0.0
    assert d.n_blank == int(s.isna().sum())
    if d.n_blank < len(s):
        assert d.prior.sum() == pytest.approx(1.0)
        assert d.baseline <= d.guess_accuracy + 1e-12
        assert d.guess_accuracy <= 1.0 + 1e-12
        np.testing.assert_allclose(d.posterior.sum(axis=0).to_numpy(), 1.0, atol=1e-9)
        np.testing.assert_allclose(d.matrix.sum(axis=1).to_numpy(), 1.0, atol=1e-9)
    released = apply_recipe(r, s.to_frame()).data["x"]
    assert (released.isna() == s.isna()).all()
    assert {str(v) for v in released.dropna()} <= set(d.matrix.columns)
    json.dumps(d.to_json(), allow_nan=False)
