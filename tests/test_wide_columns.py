"""Issue 51, finding 7: deniability on a wide column is bounded (docs/measures.md, "Wide
columns"). PRAM, relabeling and randomized response keep a matrix a·I + 1·cᵀ past
MAX_DENSE_LEVELS categories; its figures in closed form equal the dense computation; 15,000
levels in 100,000 records stay within 500 MB in a fresh process (a worker passed 8 GB); the
forms with no closed form are refused before the matrix exists."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from sdc_core.errors import SdcInputError
from sdc_core.methods import common
from sdc_core.methods.common import RankOne
from sdc_core.methods.pram import pram
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.risk import deniability as den
from sdc_core.risk.deniability import deniability, recipe_deniability
from tests.child_probe import PEAK


def dense_figures(p: np.ndarray, pi: np.ndarray) -> tuple[float, float, float]:
    """ε, the best-guess accuracy and the largest posterior from their definitions, in plain
    loops over a dense matrix."""
    k_true, k_out = p.shape
    eps = 0.0
    for k in range(k_out):
        col = [p[i, k] for i in range(k_true)]
        if max(col) > 0:
            eps = math.inf if min(col) == 0 else max(eps, math.log(max(col) / min(col)))
    acc = sum(max(p[i, k] * pi[i] for i in range(k_true)) for k in range(k_out))
    post = 0.0
    for k in range(k_out):
        total = sum(p[j, k] * pi[j] for j in range(k_true))
        if total > 0:
            post = max(post, max(p[i, k] * pi[i] / total for i in range(k_true)))
    return eps, acc, post


CASES = [("flip", 2, 0.2), ("flip", 3, 0.5), ("flip", 7, 0.05), ("flip", 40, 0.3),
         ("flip", 5, 0.0), ("relabel", 4, 0.3), ("relabel", 30, 0.9), ("rr", 6, 0.4),
         ("rr", 2, 1.0), ("both", 12, 0.25)]


def rank_one(kind: str, k: int, v: float, pi: np.ndarray) -> RankOne:
    levels = tuple(f"L{i}" for i in range(k))
    if kind == "flip":
        return RankOne(levels, 1 - v - v / (k - 1), np.full(k, v / (k - 1)))
    if kind == "relabel":
        return RankOne(levels, 1 - v, v * pi)
    if kind == "rr":
        return RankOne(levels, v, np.full(k, (1 - v) / k))
    return rank_one("flip", k, v, pi).then(rank_one("relabel", k, 0.5, pi))


@pytest.mark.parametrize(("kind", "k", "v"), CASES)
def test_the_closed_forms_equal_the_dense_figures(kind, k, v):
    g = np.random.default_rng(k)
    pi = g.dirichlet(np.ones(k))
    m = rank_one(kind, k, v, pi)
    prior = pd.Series(pi, index=list(m.levels))
    closed = deniability(m, prior)
    dense = m.dense()
    eps, acc, post = dense_figures(dense, pi)
    assert (closed.epsilon == eps) if math.isinf(eps) else abs(closed.epsilon - eps) < 1e-12
    assert abs(closed.guess_accuracy - acc) < 1e-12
    assert abs(closed.largest_posterior - post) < 1e-12
    assert closed.baseline == pi.max()
    # and the dense path of the same matrix gives the same figures
    full = deniability(m.frame(), prior)
    assert abs(full.guess_accuracy - closed.guess_accuracy) < 1e-12
    assert (full.epsilon == closed.epsilon) or abs(full.epsilon - closed.epsilon) < 1e-12
    assert closed.wide and closed.matrix.empty and closed.to_json()["matrix"] is None


def test_a_recipe_past_the_bound_gives_the_dense_recipes_figures(monkeypatch):
    g = np.random.default_rng(3)
    df = pd.DataFrame({"job": g.choice([f"j{i:02d}" for i in range(25)], 600,
                                       p=g.dirichlet(np.ones(25))),
                       "area": g.choice(list("abcdefgh"), 600)})
    recipe = parse_recipe({"seed": 2, "steps": [
        {"method": "pram", "column": "job", "p": 0.2},
        {"method": "relabel", "column": "area", "alpha": 0.3},
        {"method": "randomized_response", "column": "area", "keep_probability": 0.6}]})
    dense = recipe_deniability(recipe, df)
    narrow = apply_recipe(recipe, df)
    monkeypatch.setattr(common, "MAX_DENSE_LEVELS", 5)  # every matrix here is "wide"
    applied = apply_recipe(recipe, df)
    assert all(isinstance(m, RankOne) for m in applied.matrices.values())
    pd.testing.assert_frame_equal(applied.data, narrow.data)  # the same draws
    for held in (None, applied.matrices):
        wide = recipe_deniability(recipe, df, matrices=held)
        for d, w in zip(dense, wide):
            assert w.wide and w.column == d.column
            assert abs(w.epsilon - d.epsilon) < 1e-12
            assert abs(w.guess_accuracy - d.guess_accuracy) < 1e-12
            assert abs(w.largest_posterior - float(d.posterior.max().max())) < 1e-12


def test_forms_without_a_closed_form_are_refused_before_the_matrix(monkeypatch):
    monkeypatch.setattr(common, "MAX_DENSE_LEVELS", 10)
    s = pd.Series([f"v{i}" for i in range(11)] * 3)
    with pytest.raises(SdcInputError, match="11 × 11 transition matrix; at most 10"):
        pram(s, invariant=True, retention=0.8)
    with pytest.raises(SdcInputError, match="at most 10 categories"):
        pram(s, matrix={f"v{i}": {f"v{i}": 1.0} for i in range(11)})
    # a recoding of a wide column composed with PRAM: the figures say why they are missing
    monkeypatch.setattr(den, "MAX_DENSE_LEVELS", 10)
    recipe = parse_recipe({"seed": 1, "steps": [
        {"method": "recode", "column": "x", "min_count": 1},
        {"method": "pram", "column": "x", "p": 0.1}]})
    (d,) = recipe_deniability(recipe, pd.DataFrame({"x": s}))
    assert math.isnan(d.epsilon) and "not computed" in d.wide
    assert d.to_json()["epsilon"] is None and d.meaning == d.wide


CHILD = textwrap.dedent("""
    import json, resource, sys
    import numpy as np, pandas as pd
    from sdc_core.recipe import apply_recipe, parse_recipe
    from sdc_core.risk.deniability import recipe_deniability
    k, n = 15_000, 100_000
    g = np.random.default_rng(0)
    df = pd.DataFrame({"code": g.integers(0, k, n).astype(str),
                       "hh": np.arange(n) // 3})
    recipe = parse_recipe({"seed": 1, "steps": [{"method": "pram", "column": "code",
                                                 "p": 0.2}]})
    applied = apply_recipe(recipe, df)
    (d,) = recipe_deniability(recipe, df, matrices=applied.matrices)
    pi = df["code"].value_counts(normalize=True)
    out = {"k": int(len(pi)), "eps": d.epsilon, "acc": d.guess_accuracy,
           "json": len(json.dumps(d.to_json())),
           "peak_mb": peak() / 2**20}
    print(json.dumps(out))
""")


def test_15000_levels_in_100000_records_stay_within_500_mb():
    done = subprocess.run([sys.executable, "-c", PEAK + CHILD], capture_output=True, text=True,
                          timeout=600, check=True)
    out = json.loads(done.stdout.strip().splitlines()[-1])
    k, p = out["k"], 0.2
    assert k > 14_000
    assert out["peak_mb"] < 500, out  # the dense matrices took 8 GB
    assert abs(out["eps"] - math.log((1 - p) * (k - 1) / p)) < 1e-12
    # every released level's likeliest true value is itself here: accuracy = (1 − p)
    assert abs(out["acc"] - (1 - p)) < 1e-12
    assert out["json"] < 2_000_000  # no K × K matrix in the JSON either
