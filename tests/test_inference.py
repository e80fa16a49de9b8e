"""The attribute-inference attack (sdc_core.risk.inference, docs/measures.md "The
attribute-inference attack"): hand-worked cases, a brute-force reference written from the
definition (record against record, O(n²)) over column kinds and blanks, and PRAM on the
sensitive column bringing the accuracy down towards the baseline."""

from __future__ import annotations

import json
import math
import os
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdc_core.errors import SdcInputError
from sdc_core.names import MEASURES
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.risk.inference import attribute_inference
from sdc_core.risk.linkage import linkage_attack
from tests.child_probe import PEAK

TIE = 1e-9


def blank(v: Any) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))


def brute(original: pd.DataFrame, released: pd.DataFrame, keys: list[str], s: str,
          known: tuple[str, ...] = (), numeric: bool = False,
          tolerance: float = 0.1) -> dict[str, float]:
    """The figures from the definition: for every record i and every released record j, j is a
    candidate when every key is missing on either side or equal; of the candidates, the best
    are the nearest on the known columns (standardised by the original's sd, over the columns
    present in both; ties within 1e-9·max(1, d_min))."""
    n = len(original)
    x = [None if blank(v) else v for v in original[s].astype(object)]
    z = [None if blank(v) else v for v in released[s].astype(object)]
    sd = {}
    for c in known:
        col = original[c].astype("Float64").dropna().to_numpy(dtype=float)
        v = float(np.std(col, ddof=1)) if len(col) > 1 else 0.0
        sd[c] = v if np.isfinite(v) and v > 0 else 1.0
    xv = {c: original[c].astype(object).tolist() for c in [*keys, *known]}
    zv = {c: released[c].astype(object).tolist() for c in [*keys, *known]}
    best: list[list[int]] = []
    for i in range(n):
        cands, dist = [], []
        for j in range(n):
            ok = True
            for c in keys:
                a, b = xv[c][i], zv[c][j]
                if not (blank(a) or blank(b) or a == b):
                    ok = False
            if not ok:
                continue
            d2 = 0.0
            for c in known:
                a, b = xv[c][i], zv[c][j]
                if not (blank(a) or blank(b)):
                    d2 += ((float(a) - float(b)) / sd[c]) ** 2
            cands.append(j)
            dist.append(math.sqrt(d2))
        if cands:
            low = min(dist)
            cands = [j for j, d in zip(cands, dist) if d <= low + TIE * max(1.0, low)]
        best.append(cands)
    present = [i for i in range(n) if x[i] is not None]
    if numeric:
        xs = original[s].astype("Float64").dropna()
        width = tolerance * float(xs.quantile(0.75) - xs.quantile(0.25))
        zvals = [float(v) for v in z if v is not None]
        overall = sum(zvals) / len(zvals) if zvals else math.nan
        hits = base = 0.0
        for i in present:
            vals = [float(z[j]) for j in best[i] if z[j] is not None]
            guess = sum(vals) / len(vals) if vals else overall
            hits += abs(float(x[i]) - guess) <= width
            base += abs(float(x[i]) - overall) <= width
        m = len(present)
        return {"accuracy": hits / m, "baseline": base / m}
    marginal: dict[Any, int] = {}
    for v in z:
        if v is not None:
            marginal[v] = marginal.get(v, 0) + 1

    def share(counts: dict[Any, int], v: Any) -> float:
        top = max(counts.values())
        modes = [u for u, k in counts.items() if k == top]
        return (v in modes) / len(modes)

    hits = base = cap = 0.0
    for i in present:
        counts: dict[Any, int] = {}
        for j in best[i]:
            if z[j] is not None:
                counts[z[j]] = counts.get(z[j], 0) + 1
        b = share(marginal, x[i]) if marginal else 0.0
        base += b
        hits += share(counts, x[i]) if counts else b
        cap += counts.get(x[i], 0) / sum(counts.values()) if counts else 0.0
    m = len(present)
    return {"accuracy": hits / m, "baseline": base / m, "cap": cap / m}


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


# --- hand-worked ---------------------------------------------------------------------------

def six() -> tuple[pd.DataFrame, pd.DataFrame]:
    original = pd.DataFrame({"sex": list("FFFMMM"), "s": list("aabbba")})
    released = original.copy()
    released.loc[2, "sex"] = None  # record 2's key blanked: a candidate of everyone
    return original, released


def test_six_records_by_hand():
    # F: candidates {0, 1, 2} → a, a, b: mode a; 0 and 1 hit, 2 (true b) misses.
    # M: candidates {2, 3, 4, 5} → b, b, b, a: mode b; 3 and 4 hit, 5 misses. Accuracy 4/6.
    # Released marginal a 3, b 3: two modes, every record ½ a hit. CAP: 2/3, 2/3, 1/3, 3/4,
    # 3/4, 1/4 → 41/72.
    c = attribute_inference(*six(), ["sex"], ["s"]).columns[0]
    assert (c.kind, c.n) == ("categorical", 6)
    assert c.accuracy == pytest.approx(4 / 6) and c.baseline == 0.5
    assert c.gain == pytest.approx(100 * (4 / 6 - 0.5))
    assert c.cap == pytest.approx(41 / 72)
    assert brute(*six(), ["sex"], "s") == pytest.approx(
        {"accuracy": 4 / 6, "baseline": 0.5, "cap": 41 / 72})


def test_a_single_match_gives_its_released_value_and_ties_count_a_fraction():
    original = pd.DataFrame({"id": [1, 2, 3, 4, 4, 4], "s": list("aabbab")})
    released = original.assign(s=list("abbbca"))
    # 1, 2, 3 alone: guesses a, b, b → hit, miss, hit. 4: released b, c, a, three modes: a and
    # b each ⅓. Released marginal b 3: baseline (2 true b + b) / 6 → records 2, 3, 5 true b.
    c = attribute_inference(original, released, ["id"], ["s"]).columns[0]
    assert c.accuracy == pytest.approx((1 + 0 + 1 + 1 / 3 + 1 / 3 + 1 / 3) / 6)
    assert c.baseline == pytest.approx(3 / 6)
    assert c.cap == pytest.approx((1 + 0 + 1 + 1 / 3 + 1 / 3 + 1 / 3) / 6)


def test_numeric_by_hand():
    df = pd.DataFrame({"g": list("xxxyyy"), "v": [10, 20, 30, 40, 50, 60]})
    # means 20 and 50; IQR 47.5 − 22.5 = 25, tolerance 0.4 → ±10: every record hits.
    # Baseline: the released mean 35 → 30 and 40 only.
    c = attribute_inference(df, df, ["g"], ["v"], numeric=["v"], tolerance=0.4).columns[0]
    assert (c.kind, c.width, c.cap) == ("numeric", 10.0, None)
    assert c.accuracy == 1.0 and c.baseline == pytest.approx(2 / 6)
    c = attribute_inference(df, df, ["g"], ["v"], numeric=["v"], tolerance=0.39).columns[0]
    assert c.accuracy == pytest.approx(2 / 6)  # 10 and 30 (60, 40) now 10 away: outside


def test_blank_sensitive_values():
    original = pd.DataFrame({"k": list("aabb"), "s": pd.array(["x", None, "y", "y"],
                                                                dtype="string")})
    released = original.assign(s=pd.array([None, "x", None, None], dtype="string"))
    # record 1's true value is blank: left out (n = 3). k = b: no released value → the baseline
    # guess x (the only released value): misses both y.
    c = attribute_inference(original, released, ["k"], ["s"]).columns[0]
    assert c.n == 3 and c.accuracy == pytest.approx(1 / 3) and c.baseline == pytest.approx(1 / 3)
    assert c.cap == pytest.approx(1 / 3)


def test_public_recodings_are_applied_as_the_linkage_attack_does():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"age": rng.integers(0, 90, 400), "s": rng.choice(list("abc"), 400)})
    recipe = parse_recipe({"seed": 1, "steps": [{"method": "band", "column": "age",
                                                 "width": 10}]})
    released = apply_recipe(recipe, df).data
    got = attribute_inference(df, released, ["age"], ["s"], recipe).columns[0]
    banded = df.assign(age=released["age"])
    assert got == attribute_inference(banded, released, ["age"], ["s"]).columns[0]
    assert close(got.accuracy, brute(banded, released, ["age"], "s")["accuracy"])


def test_overall_and_json():
    df = pd.DataFrame({"k": list("aabb"), "s": list("xxyz"), "t": [True, True, False, True]})
    result = attribute_inference(df, df, ["k"], ["s", "t"])
    assert result.accuracy == pytest.approx(np.mean([c.accuracy for c in result.columns]))
    assert result.gain == pytest.approx(100 * (result.accuracy - result.baseline))
    data = json.loads(result.to_json())
    assert [c["column"] for c in data["attribute_inference"]] == ["s", "t"]
    assert data["inference_accuracy"] == pytest.approx(result.accuracy)
    assert data["inference_exact_columns"] == ["k"]
    s = json.loads(result.columns[0].to_json())
    assert s["inference_accuracy"] == result.columns[0].accuracy and s["inference_width"] is None
    # every figure has its one name (sdc_core.names, docs/measures.md "Names")
    numbers = {k for c in data["attribute_inference"] for k, v in c.items()
               if k not in ("column", "kind")} | {k for k, v in data.items()
                                                  if isinstance(v, float)}
    assert numbers <= set(MEASURES)


def test_refusals():
    df = pd.DataFrame({"k": list("ab"), "s": list("xy")})
    with pytest.raises(SdcInputError, match="aligned"):
        attribute_inference(df, df.iloc[:1], ["k"], ["s"])
    with pytest.raises(SdcInputError, match="unknown sensitive"):
        attribute_inference(df, df, ["k"], ["nope"])
    with pytest.raises(SdcInputError, match="cannot also be sensitive"):
        attribute_inference(df, df, ["k"], ["k"])
    with pytest.raises(SdcInputError, match="not in the release"):
        attribute_inference(df, df[["k"]], ["k"], ["s"])
    with pytest.raises(SdcInputError, match="tolerance"):
        attribute_inference(df, df, ["k"], ["s"], tolerance=-1)
    with pytest.raises(SdcInputError, match="takes numbers"):
        attribute_inference(df, df, ["k"], ["s"], numeric=["s"])


# --- PRAM on the sensitive column ----------------------------------------------------------

def test_pram_on_the_sensitive_column_brings_accuracy_towards_the_baseline():
    rng = np.random.default_rng(7)
    n = 600
    df = pd.DataFrame({"id": rng.permutation(n), "s": rng.choice(list("abcd"), n,
                                                                        p=[.4, .3, .2, .1])})
    acc = []
    for p in (0.0, 0.2, 0.5):
        steps = [{"method": "pram", "column": "s", "p": p}] if p else []
        recipe = parse_recipe({"seed": 2, "steps": steps})
        released = apply_recipe(recipe, df).data
        c = attribute_inference(df, released, ["id"], ["s"], recipe).columns[0]
        assert close(c.accuracy, brute(df, released, ["id"], "s")["accuracy"])
        acc.append((c.accuracy, c.baseline))
    assert acc[0][0] == 1.0  # every record unique: the released value is the truth
    assert acc[0][0] > acc[1][0] > acc[2][0] > acc[2][1]
    assert acc[1][0] == pytest.approx(0.8, abs=0.06)  # flip p: about 1 − p right
    assert acc[2][0] - acc[2][1] < acc[1][0] - acc[1][1]  # the gain shrinks


# --- the brute-force reference over column kinds ---------------------------------------------

KINDS = ["bool", "Int64", "boolean", "string", "category"]


def column(kind: str, rng: np.random.Generator, n: int, levels: int, blanks: float) -> pd.Series:
    if kind == "bool":
        return pd.Series(rng.integers(0, 2, n).astype(bool))
    codes = rng.integers(0, levels, n)
    miss = rng.random(n) < blanks
    if kind == "Int64":
        s = pd.Series(pd.array(codes, dtype="Int64"))
    elif kind == "boolean":
        s = pd.Series(pd.array(codes % 2 == 1, dtype="boolean"))
    elif kind == "string":
        s = pd.Series(pd.array([f"v{c}" for c in codes], dtype="string"))
    else:
        s = pd.Series(pd.Categorical([f"c{c}" for c in codes],
                                     categories=[f"c{c}" for c in range(levels)]))
    s[miss] = None
    return s


def perturb(s: pd.Series, rng: np.random.Generator, share: float, blanks: float) -> pd.Series:
    """Some values swapped among records, some blanked (not a bool column)."""
    out = s.copy()
    moved = np.flatnonzero(rng.random(len(s)) < share)
    out.iloc[moved] = s.iloc[rng.permutation(moved)].to_numpy()
    if s.dtype != bool:
        out[rng.random(len(s)) < blanks] = None
    return out


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 14),
       key_kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=3),
       s_kind=st.sampled_from(KINDS), levels=st.integers(1, 4),
       blanks=st.sampled_from([0.0, 0.2, 0.5]), share=st.sampled_from([0.0, 0.3, 1.0]),
       known=st.booleans())
def test_equals_the_brute_force_reference(seed, n, key_kinds, s_kind, levels, blanks, share,
                                          known):
    rng = np.random.default_rng(seed)
    keys = [f"k{i}" for i in range(len(key_kinds))]
    original = pd.DataFrame({k: column(kind, rng, n, levels, blanks)
                             for k, kind in zip(keys, key_kinds)})
    original["s"] = column(s_kind, rng, n, levels + 1, blanks)
    extra: tuple[str, ...] = ()
    if known:  # a known number, compared by distance as the linkage attack does
        original["w"] = column("Int64", rng, n, 6, blanks).astype("Float64")
        extra = ("w",)
    released = pd.DataFrame({c: perturb(original[c], rng, share, blanks)
                             for c in original.columns})
    if original["s"].isna().all():
        return
    got = attribute_inference(original, released, keys, ["s"], known=extra,
                              numeric=[]).columns[0]
    want = brute(original, released, keys, "s", extra)
    assert close(got.accuracy, want["accuracy"]), (got, want)
    assert close(got.baseline, want["baseline"]), (got, want)
    assert got.cap is not None and close(got.cap, want["cap"]), (got, want)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 14),
       key_kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=2),
       blanks=st.sampled_from([0.0, 0.3]), share=st.sampled_from([0.0, 0.5]),
       tolerance=st.sampled_from([0.0, 0.1, 0.5]), known=st.booleans())
def test_numeric_equals_the_brute_force_reference(seed, n, key_kinds, blanks, share, tolerance,
                                                  known):
    rng = np.random.default_rng(seed)
    keys = [f"k{i}" for i in range(len(key_kinds))]
    original = pd.DataFrame({k: column(kind, rng, n, 3, blanks)
                             for k, kind in zip(keys, key_kinds)})
    original["v"] = column("Int64", rng, n, 40, blanks)
    extra: tuple[str, ...] = ()
    if known:  # a known number compared by distance: the linkage attack's matching sums
        original["w"] = column("Int64", rng, n, 6, blanks).astype("Float64")
        extra = ("w",)
    released = pd.DataFrame({c: perturb(original[c], rng, share, blanks)
                             for c in original.columns})
    if original["v"].isna().all():
        return
    got = attribute_inference(original, released, keys, ["v"], known=extra, numeric=["v"],
                              tolerance=tolerance).columns[0]
    want = brute(original, released, keys, "v", extra, numeric=True, tolerance=tolerance)
    assert close(got.accuracy, want["accuracy"]), (got, want)
    assert close(got.baseline, want["baseline"]), (got, want)


def test_a_perturbed_release_with_a_known_column_equals_the_brute_force_reference():
    """The recipe's path (PRAM on S, a known number compared by distance, so the linkage
    attack's own matching counts the candidates) against the definition."""
    rng = np.random.default_rng(11)
    n = 300
    df = pd.DataFrame({"a": rng.integers(0, 40, n), "b": rng.choice(list("xyz"), n),
                       "w": rng.normal(size=n).round(1), "s": rng.choice(list("pq"), n)})
    recipe = parse_recipe({"seed": 4, "steps": [{"method": "pram", "column": "s", "p": 0.3}]})
    released = apply_recipe(recipe, df).data
    got = attribute_inference(df, released, ["a", "b"], ["s"], recipe, known=["w"])
    assert got.distance == ("w",)
    want = brute(df, released, ["a", "b"], "s", ("w",))
    assert close(got.columns[0].accuracy, want["accuracy"])
    assert close(got.columns[0].cap, want["cap"])
    # the same release, a numeric sensitive column guessed by the mean of the candidates
    released = released.assign(v=df["w"] * 3 + rng.normal(size=n))
    df = df.assign(v=df["w"] * 3)
    got_v = attribute_inference(df, released, ["a", "b"], ["v"], recipe, known=["w"],
                                numeric=["v"]).columns[0]
    want_v = brute(df, released, ["a", "b"], "v", ("w",), numeric=True)
    assert close(got_v.accuracy, want_v["accuracy"])
    assert close(got_v.baseline, want_v["baseline"])
    assert got_v.accuracy > got_v.baseline  # the known number gives the value away
    # the candidates are the linkage attack's: where it is certain, the guess is the release
    link = linkage_attack(df, released, ["a", "b"], recipe, known=["w"])
    assert (link.attackers["any_match"].p_link == 1.0).any()


WIDE_CHILD = """
import json, resource
resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))  # the old matrix: > 20 GB
import numpy as np, pandas as pd
from sdc_core.risk.inference import attribute_inference
g = np.random.default_rng(0)
n = 200_000
df = pd.DataFrame({"sex": g.choice(["F", "M"], n), "band": g.integers(0, 10, n),
                   "code": g.integers(0, 100_000, n).astype(str)})
c = attribute_inference(df, df, ["sex", "band"], ["code"]).columns[0]
# from the definition: n_i(v) the records of i's class with value v; a hit 1/t when x_i is
# among the t commonest values of its class; CAP n_i(x_i) / class size
n_v = df.groupby(["sex", "band", "code"])["code"].transform("size")
top = n_v.groupby([df["sex"], df["band"]]).transform("max")
ties = (df.assign(n=n_v, top=top)[(n_v == top).to_numpy()]
        .groupby(["sex", "band"])["code"].transform("nunique"))
t = ties.reindex(df.index).groupby([df["sex"], df["band"]]).transform("max")
hit = np.where(n_v == top, 1.0 / t, 0.0)
size = df.groupby(["sex", "band"])["code"].transform("size")
print(json.dumps({"accuracy": c.accuracy, "cap": c.cap, "levels": int(df["code"].nunique()),
                  "ref_accuracy": float(hit.mean()), "ref_cap": float((n_v / size).mean()),
                  "peak_mb": peak() / 2**20}))
"""


def test_issue_51_a_sensitive_column_of_100000_categories_stays_bounded():
    """200,000 records, 20 classes of the keys, a sensitive column of 100,000 categories: the
    counts per class, not per record (a worker passed 5.5 GB)."""
    import json
    import subprocess
    import sys

    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", PEAK + WIDE_CHILD], capture_output=True, text=True,
                          timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["levels"] > 80_000 and out["peak_mb"] < 1_000, out
    assert abs(out["accuracy"] - out["ref_accuracy"]) < 1e-12
    assert abs(out["cap"] - out["ref_cap"]) < 1e-12


def test_issue_51_too_many_values_with_distance_columns_are_refused_before_any_pass(
        monkeypatch):
    """With distance columns the candidates are counted in one pass per value of S: a column
    past MAX_LINK_LEVELS values is one line, before the first pass."""
    from sdc_core.risk import inference

    rng = np.random.default_rng(2)
    n = 200
    df = pd.DataFrame({"a": rng.integers(0, 5, n), "w": rng.normal(size=n).round(1),
                       "s": [f"v{i}" for i in range(n)]})
    monkeypatch.setattr(inference, "MAX_LINK_LEVELS", 150)
    with pytest.raises(SdcInputError, match=r"s: 200 values; .* at most 150 \(recode"):
        attribute_inference(df, df, ["a"], ["s"], known=["w"])
    monkeypatch.setattr(inference, "MAX_LINK_LEVELS", 200)
    assert attribute_inference(df, df, ["a"], ["s"], known=["w"]).distance == ("w",)
