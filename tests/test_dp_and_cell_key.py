"""DP counts and the cell key method (sdc_core.tables.dp_tables, sdc_core.tables.cell_key,
sdc_core.tables.count_tables; docs/tables.md, "Differential privacy counts", "The cell key method",
"Utility and protection side by side").

References: OpenDP's accuracy against the closed form of the discrete Laplace tail derived here
and against a value printed in OpenDP's documentation; the noise's coverage over many seeded
draws within binomial tolerance; margins' accuracy against convolutions in plain loops; the
cell key method against outputs of the ONS package ``cell-key-perturbation`` 3.1.0 on a small
table (run separately; its outputs are written below as literals); consistency, the default
ptable, the utility and differencing figures against plain loops."""

import math
from collections import Counter, defaultdict

import numpy as np
import opendp.prelude as dp
import pandas as pd
import pytest

from sdc_core.errors import SdcInputError
from sdc_core.rng import ids_from_column
from sdc_core.tables import cell_key as ck
from sdc_core.tables import count_tables as ct
from sdc_core.tables import dp_tables as dpt

# -- differential privacy ------------------------------------------------------------------


def laplace_tail(scale: float, a: int) -> float:
    """P(|X| ≥ a) for a discrete Laplace X with p(k) = (1 − r)/(1 + r)·r^|k|, r = e^(−1/s), a ≥ 1:
    2·Σ_{k ≥ a} (1 − r)/(1 + r)·r^k = 2·r^a/(1 + r)."""
    r = math.exp(-1.0 / scale)
    return 2.0 * r ** a / (1.0 + r)


def laplace_accuracy_closed_form(scale: float, alpha: float) -> float:
    """Solving α = 2·r^a/(1 + r) for a: a = s·ln(2 / (α·(1 + r)))."""
    r = math.exp(-1.0 / scale)
    return scale * math.log(2.0 / (alpha * (1.0 + r)))


@pytest.mark.parametrize("scale", [3.0, 1.0, 0.5, 10.0])
def test_opendp_accuracy_is_the_discrete_laplace_quantile(scale):
    """Scale 3 (OpenDP's example) and scale 1 (ε = 1, sensitivity 1): OpenDP's accuracy is the
    closed form, and the tail beyond it, summed term by term, is at most α."""
    acc = dp.discrete_laplacian_scale_to_accuracy(scale, 0.05)
    assert acc == pytest.approx(laplace_accuracy_closed_form(scale, 0.05), rel=1e-9)
    r = math.exp(-1.0 / scale)
    tail = sum(2 * (1 - r) / (1 + r) * r ** k for k in range(math.ceil(acc), 5000))
    assert tail <= 0.05 + 1e-12
    assert laplace_tail(scale, math.ceil(acc) - 1) > 0.05


def test_opendp_documented_gaussian_scale():
    """OpenDP's accuracy page: the Gaussian scale for accuracy 2 at 95 % is 1.020426913849308."""
    assert dp.accuracy_to_gaussian_scale(accuracy=2.0, alpha=0.05) == pytest.approx(
        1.020426913849308, rel=1e-12)


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0])
def test_scale_is_one_over_epsilon_and_cells_carry_opendp_accuracy(eps):
    t = pd.DataFrame({"a": ["x", "y", "z"], "count": [40, 3, 0]})
    d = dpt.dp_counts(t, epsilon=eps, seed=5)
    assert d.scale == pytest.approx(1.0 / eps)
    assert d.epsilon == pytest.approx(eps, rel=1e-9)
    cells = d.table[~d.table["margin"]]
    assert np.allclose(cells["accuracy"], laplace_accuracy_closed_form(1 / eps, 0.05))
    assert (d.table["status"] == "perturbed").all()


def brute_convolution(pmf: dict[int, float], m: int) -> dict[int, float]:
    out = {0: 1.0}
    for _ in range(m):
        nxt: dict[int, float] = defaultdict(float)
        for a, pa in out.items():
            for b, pb in pmf.items():
                nxt[a + b] += pa * pb
        out = nxt
    return out


@pytest.mark.parametrize(("mechanism", "scale", "m"),
                         [("laplace", 1.0, 1), ("laplace", 1.0, 2), ("laplace", 2.0, 3),
                          ("gaussian", 1.5, 1), ("gaussian", 1.5, 4), ("laplace", 0.7, 5)])
def test_margin_accuracy_against_plain_convolution(mechanism, scale, m):
    half = 80
    if mechanism == "laplace":
        w = {k: math.exp(-abs(k) / scale) for k in range(-half, half + 1)}
    else:
        w = {k: math.exp(-k * k / (2 * scale * scale)) for k in range(-half, half + 1)}
    z = sum(w.values())
    dist = brute_convolution({k: v / z for k, v in w.items()}, m)
    a = 1
    while sum(p for k, p in dist.items() if abs(k) >= a) > 0.05:
        a += 1
    assert dpt.sum_accuracy(mechanism, scale, m) == a
    if m == 1 and mechanism == "gaussian":
        assert a == dp.discrete_gaussian_scale_to_accuracy(scale, 0.05)
    if m == 1 and mechanism == "laplace":
        assert a == math.ceil(dp.discrete_laplacian_scale_to_accuracy(scale, 0.05))


def test_the_normal_limit_of_a_large_margin_is_close(monkeypatch):
    """Past the largest convolution grid the sum is taken as normal: within one of the exact
    figure for 400 cells, and a very small ε over many cells finishes."""
    exact = dpt.sum_accuracy("laplace", 2.0, 400)
    monkeypatch.setattr(dpt, "MAX_GRID", 1 << 8)
    assert abs(dpt.sum_accuracy("laplace", 2.0, 400) - exact) <= 1
    monkeypatch.undo()
    sd = math.sqrt(2 * math.exp(-1 / 1000) / (1 - math.exp(-1 / 1000)) ** 2 * 10 ** 6)
    assert dpt.sum_accuracy("laplace", 1000.0, 10 ** 6) == math.floor(1.959963984540054 * sd) + 1


def test_coverage_of_seeded_noise_within_binomial_tolerance():
    """|published − true| < accuracy for about the share the distribution gives (≥ 95 %),
    over 40 seeds × 150 cells of a 2-way table, and for the margins."""
    rows = [(f"r{i}", f"c{j}", (i * 7 + j * 3) % 23) for i in range(15) for j in range(10)]
    t = pd.DataFrame(rows, columns=["r", "c", "count"])
    truth = ct.with_margins(ct.full_grid(t), ["r", "c"])
    hit = Counter()
    seen = Counter()
    acc = {}
    for seed in range(40):
        d = dpt.dp_counts(t, epsilon=0.5, seed=seed, clip=False)
        err = np.abs(d.table["count"].to_numpy() - truth["count"].to_numpy())
        for m, e, a in zip(d.table["cells"], err, d.table["accuracy"]):
            seen[m] += 1
            hit[m] += int(e < a)
            acc[m] = a
    scale = 2.0
    p_cell = 1 - laplace_tail(scale, math.ceil(acc[1]))
    n = seen[1]
    assert abs(hit[1] / n - p_cell) <= 4 * math.sqrt(p_cell * (1 - p_cell) / n)
    assert p_cell >= 0.95
    for m in (10, 15, 150):   # row margins, column margins, grand total
        # at least 95 % within the binomial tolerance
        assert hit[m] / seen[m] >= 0.95 - 4 * math.sqrt(0.05 * 0.95 / seen[m])


@pytest.mark.parametrize(("mechanism", "scale"), [("laplace", 1.5), ("gaussian", 2.0)])
def test_seeded_noise_has_the_mechanism_distribution(mechanism, scale):
    t = pd.DataFrame({"a": [f"v{i}" for i in range(20000)], "count": 0})
    if mechanism == "laplace":
        d = dpt.dp_counts(t, epsilon=1 / scale, seed=11, clip=False)
    else:
        d = dpt.dp_counts(t, mechanism="gaussian", rho=1 / (2 * scale * scale), seed=11,
                         clip=False)
        assert d.scale == pytest.approx(scale)
        assert d.rho == pytest.approx(1 / (2 * scale * scale))
    noise = d.table[~d.table["margin"]]["count"].to_numpy()
    f = (lambda k: math.exp(-abs(k) / scale)) if mechanism == "laplace" else (
        lambda k: math.exp(-k * k / (2 * scale * scale)))
    z = sum(f(k) for k in range(-200, 201))
    for k in range(-4, 5):
        p = f(k) / z
        got = float(np.mean(noise == k))
        assert abs(got - p) <= 4.5 * math.sqrt(p * (1 - p) / len(noise)), k


def test_margins_are_sums_of_noisy_cells_and_seeds_reproduce():
    t = pd.DataFrame({"a": list("xxyyz"), "b": list("uvuvu"), "count": [30, 4, 12, 1, 7]})
    d1 = dpt.dp_counts(t, epsilon=0.3, seed=9, clip=False)
    d2 = dpt.dp_counts(t, epsilon=0.3, seed=9, clip=False)
    d3 = dpt.dp_counts(t, epsilon=0.3, seed=10, clip=False)
    pd.testing.assert_frame_equal(d1.table, d2.table)
    assert not d1.table["count"].equals(d3.table["count"])
    cells = {(r.a, r.b): r.count for r in d1.table.itertuples() if not r.margin}
    assert len(cells) == 6   # the grid: (z, v) is there with its noise
    pub = {(r.a, r.b): r.count for r in d1.table.itertuples()}
    for a in "xyz":
        assert pub[(a, "Total")] == sum(v for (x, _), v in cells.items() if x == a)
    for b in "uv":
        assert pub[("Total", b)] == sum(v for (_, y), v in cells.items() if y == b)
    assert pub[("Total", "Total")] == sum(cells.values())
    clipped = dpt.dp_counts(t, epsilon=0.3, seed=9)
    assert (clipped.table["count"] >= 0).all()
    assert (clipped.table["count"].to_numpy() == np.maximum(d1.table["count"], 0)).all()


def test_unseeded_draws_come_from_opendp():
    t = pd.Series([5, 0, 9], index=pd.Index(["x", "y", "z"], name="a"))
    d = dpt.dp_counts(t, epsilon=1.0, clip=False)
    assert d.seed is None
    cells = d.table[~d.table["margin"]]["count"].to_numpy()
    assert d.table["count"].iloc[-1] == cells.sum()
    g = dpt.dp_counts(t, mechanism="gaussian", rho=0.5)
    # OpenDP's (ε, δ) of 0.5-zCDP at δ = 1e-6: ρ + 2√(ρ ln(1/δ)) bounds it
    assert 0 < g.epsilon <= 0.5 + 2 * math.sqrt(0.5 * math.log(1e6))


def test_nonresponse_is_post_processing():
    assert dpt.nonresponse(20, [14, 3]) == 3.0
    assert dpt.nonresponse(20, [14, 9]) == 0.0
    with pytest.raises(SdcInputError):
        dpt.nonresponse(float("nan"), [1])


@pytest.mark.parametrize("kwargs", [
    {"epsilon": 0}, {"epsilon": -1}, {"epsilon": float("nan")}, {"epsilon": "1"},
    {"epsilon": True}, {"epsilon": 1e9}, {"mechanism": "exponential"}, {"alpha": 0.9},
    {"seed": -1}, {"seed": 2.5}, {"mechanism": "gaussian", "rho": 0}, {"epsilon": 1e-9},
    {"mechanism": "gaussian", "rho": 1e-12}, {"mechanism": "gaussian", "rho": "x"},
])
def test_dp_refuses_bad_parameters(kwargs):
    t = pd.DataFrame({"a": ["x"], "count": [3]})
    with pytest.raises(SdcInputError):
        dpt.dp_counts(t, **kwargs)


@pytest.mark.parametrize("table", [
    pd.DataFrame({"a": ["x"], "count": [-1]}),
    pd.DataFrame({"a": ["x"], "count": [1.5]}),
    pd.DataFrame({"a": ["x"], "count": ["many"]}),
    pd.DataFrame({"a": ["Total", "x"], "count": [1, 2]}),
    pd.DataFrame({"a": ["x", "x"], "count": [1, 2]}),
    pd.DataFrame({"a": [None], "count": [1]}),
    pd.DataFrame({"count": [1]}),
    pd.DataFrame({"a": ["x"]}),
    "a,count\nx,1",
])
def test_tables_are_checked(table):
    with pytest.raises(SdcInputError):
        dpt.dp_counts(table, seed=1)


def test_a_huge_grid_is_refused(monkeypatch):
    monkeypatch.setattr(ct, "MAX_CELLS", 100)
    t = pd.DataFrame({"a": range(20), "b": range(20), "count": 1})
    with pytest.raises(SdcInputError, match="grid"):
        ct.full_grid(t)


# -- the cell key method -------------------------------------------------------------------


def ons_data() -> pd.DataFrame:
    rows = []
    for i in range(800):
        a = "c" if i % 97 == 0 else "ab"[(i // 7) % 2]
        b = "wxyz"[(i // 3) % 4] if i % 50 else "v"
        rows.append({"a": a, "b": b, "g": "u" if i < 780 else "t",
                     "rkey": (i * 37 + 11) % 256})
    return pd.DataFrame(rows)


def ons_ptable() -> pd.DataFrame:
    return pd.DataFrame([(p, c, 0 if p < 2 else ((c + p) % 5) - 2)
                         for p in range(1, 751) for c in range(256)],
                        columns=["pcv", "ckey", "pvalue"])


#: ``create_perturbed_table(data, ptable, [], tab_vars, "rkey", use_existing_ons_id=False,
#: threshold=10)`` of the ONS package 3.1.0 on :func:`ons_data` and :func:`ons_ptable`:
#: (cell, true count, cell key, published count or None for its NA)
ONS = {
    ("a", "b"): [(("a", "v"), 8, 76, 10), (("a", "w"), 99, 9, 100), (("a", "x"), 96, 197, 97),
                 (("a", "y"), 105, 227, 105), (("a", "z"), 91, 170, 90),
                 (("b", "v"), 7, 137, None), (("b", "w"), 94, 134, 95),
                 (("b", "x"), 99, 64, 100), (("b", "y"), 87, 129, 86),
                 (("b", "z"), 105, 2, 105), (("c", "v"), 1, 11, None),
                 (("c", "w"), 2, 37, None), (("c", "x"), 3, 93, None),
                 (("c", "y"), 3, 138, None), (("c", "z"), 0, 0, None)],
    ("a",): [(("a",), 399, 167, 398), (("b",), 392, 210, 392), (("c",), 9, 23, None)],
    ("b",): [(("v",), 16, 224, 14), (("w",), 195, 180, 193), (("x",), 198, 98, 197),
             (("y",), 195, 238, 196), (("z",), 196, 172, 197)],
    ("g",): [(("t",), 20, 2, 20), (("u",), 780, 142, 780)],   # 780 > 750: pcv 530
}


@pytest.mark.parametrize("columns", list(ONS))
def test_cell_key_method_matches_the_ons_package(columns):
    data = ons_data()
    t = ck.ckm_table(data, list(columns), record_key="rkey", ptable=ons_ptable(),
                     threshold=10, margins=False).table
    got = [(tuple(r[c] for c in columns), int(r["ckey"]),
            None if pd.isna(r["count"]) else int(r["count"])) for _, r in t.iterrows()]
    assert got == [(cell, ckey, pub) for cell, _, ckey, pub in ONS[columns]]
    truth = Counter(tuple(row) for row in data[list(columns)].itertuples(index=False))
    assert [truth[cell] for cell, *_ in ONS[columns]] == [n for _, n, _, _ in ONS[columns]]


def test_margins_are_consistent_with_the_smaller_tables():
    """Equal record sets → equal cell keys → equal published values: the 2-way table's
    margins are the 1-way tables' cells, and a 3-way table's (a, b, Total) cells are the
    2-way table's cells."""
    data = ons_data()
    data["h"] = np.where(np.arange(len(data)) % 3 == 0, "p", "q")
    two = ck.ckm_table(data, ["a", "b"], seed=4).table
    three = ck.ckm_table(data, ["a", "b", "h"], seed=4).table
    one_a = ck.ckm_table(data, ["a"], seed=4).table
    pub2 = {(r.a, r.b): (r.count, r.ckey) for r in two.itertuples()}
    for r in three[three["h"] == "Total"].itertuples():
        assert pub2[(r.a, r.b)][1] == r.ckey
        assert pub2[(r.a, r.b)][0] is r.count or pub2[(r.a, r.b)][0] == r.count
    for r in one_a.itertuples():
        c = pub2[(r.a, "Total")]
        assert c[1] == r.ckey and (c[0] is r.count or c[0] == r.count)


def test_cell_keys_are_sums_of_record_keys():
    data = ons_data()
    ids = ids_from_column(np.arange(len(data)) * 13 + 5)
    keys = ck.record_keys(ids, 21)
    t = ck.ckm_table(data, ["a", "b"], seed=21, ids=ids, threshold=0).table
    sums: dict = defaultdict(int)
    for (a, b), k in zip(data[["a", "b"]].itertuples(index=False), keys):
        sums[(a, b)] += int(k)
        sums[(a, "Total")] += int(k)
        sums[("Total", b)] += int(k)
        sums[("Total", "Total")] += int(k)
    for r in t.itertuples():
        assert r.ckey == sums[(r.a, r.b)] % 256
    # row order does not change a record's key when ids come from an id column
    order = np.random.default_rng(0).permutation(len(data))
    shuffled = ck.ckm_table(data.iloc[order], ["a", "b"], seed=21, ids=ids[order],
                            threshold=0).table
    pd.testing.assert_frame_equal(t, shuffled)


def test_record_keys_are_uniform():
    keys = ck.record_keys(np.arange(256 * 400, dtype=np.uint64), 1)
    counts = np.bincount(keys, minlength=256)
    assert counts.min() >= 0 and keys.max() <= 255
    chi2 = float(((counts - 400) ** 2 / 400).sum())
    assert chi2 < 255 + 6 * math.sqrt(2 * 255)   # mean 255, sd √510


def test_default_ptable_by_loops():
    p = ck.default_ptable()
    dense = ck.check_ptable(p)
    for n in range(1, 40):
        ups = 0
        for key in range(256):
            post = n + dense[n - 1, key]
            if n < 10:
                assert post == 0
                continue
            assert post % 5 == 0 and abs(post - n) < 5
            ups += post > n
        if n >= 10:
            r = n % 5
            assert ups == (0 if r == 0 else math.ceil(256 * r / 5))
            mean = sum(n + dense[n - 1, key] for key in range(256)) / 256
            assert 0 <= mean - n < 5 / 256


def test_default_rounding_with_blanks():
    data = pd.DataFrame({"a": ["x"] * 23 + ["y"] * 4 + ["z"] * 10})
    t = ck.ckm_table(data, ["a"], seed=2).table
    pub = dict(zip(t["a"], t["count"]))
    assert pub["x"] in (20, 25) and pd.isna(pub["y"]) and pub["z"] == 10
    assert pub["Total"] in (35, 40)
    assert dict(zip(t["a"], t["status"])) == {"x": "perturbed", "y": "primary",
                                              "z": "published", "Total": "perturbed"}


def bad_ptables() -> list:
    good = ck.default_ptable(max_pcv=250)
    neg = good.copy()
    neg.loc[(neg.pcv == 3) & (neg.ckey == 0), "pvalue"] = -4
    dup = pd.concat([good, good.iloc[:1]], ignore_index=True)
    gap = good.iloc[1:]
    text = good.astype({"pvalue": object})
    text.loc[0, "pvalue"] = "drop table"
    frac = good.astype({"pvalue": float})
    frac.loc[0, "pvalue"] = 0.5
    odd = ck.default_ptable(max_pcv=300)
    wide = good.copy()
    wide.loc[0, "ckey"] = 256
    return [neg, dup, gap, text, frac, odd, wide, good.drop(columns="pvalue"), "pcv,ckey",
            good.iloc[:0]]


@pytest.mark.parametrize("ptable", bad_ptables())
def test_user_ptables_are_checked(ptable):
    with pytest.raises(SdcInputError):
        ck.ckm_table(ons_data(), ["a"], ptable=ptable)


def test_a_huge_ptable_is_refused(monkeypatch):
    monkeypatch.setattr(ck, "MAX_PTABLE_ROWS", 1000)
    with pytest.raises(SdcInputError, match="rows"):
        ck.check_ptable(ck.default_ptable())


def test_a_small_user_ptable_works_without_wrap():
    p = ck.default_ptable(threshold=3, base=2, max_pcv=100)
    data = pd.DataFrame({"a": ["x"] * 237 + ["y"] * 2})
    t = ck.ckm_table(data, ["a"], ptable=p, threshold=3, seed=0).table
    # 237 > 100: pcv = 1 + (236 mod 100) = 37, odd: rounded to 236 or 238
    assert int(t["count"].iloc[0]) in (236, 238)
    assert pd.isna(t["count"].iloc[1])


@pytest.mark.parametrize("kwargs", [{"threshold": -1}, {"threshold": 2.5}, {"seed": -3},
                                    {"record_key": "nope"}, {"ids": np.arange(3)}])
def test_ckm_refuses_bad_parameters(kwargs):
    with pytest.raises(SdcInputError):
        ck.ckm_table(ons_data(), ["a"], **kwargs)


def test_ckm_refuses_bad_record_keys():
    data = ons_data()
    data.loc[0, "rkey"] = 300
    with pytest.raises(SdcInputError):
        ck.ckm_table(data, ["a"], record_key="rkey")
    with pytest.raises(SdcInputError):
        ck.ckm_table(data, ["nope"])


# -- utility and protection ----------------------------------------------------------------


def test_compare_published_against_loops():
    true = pd.DataFrame({"a": list("vwxyz"), "count": [10, 2, 0, 7, 31]})
    pub = pd.DataFrame({"a": list("vwxyz"), "count": [10, 0, 3, None, 30],
                        "margin": False})
    c = ct.compare_published(true, pub, ["a"])
    shown = [(10, 10), (2, 0), (0, 3), (31, 30)]
    assert c.cells == 4 and c.blank == 1
    assert c.absD == sum(abs(b - a) for a, b in shown)
    assert c.relabsD == pytest.approx(sum(abs(b - a) / a for a, b in shown if a > 0))
    assert (c.false_zeros, c.false_nonzeros) == (1, 1)
    na, nb = sum(a for a, _ in shown), sum(b for _, b in shown)
    h = math.sqrt(0.5 * sum((math.sqrt(a / na) - math.sqrt(b / nb)) ** 2 for a, b in shown))
    assert c.hellinger == pytest.approx(h)
    assert c.perturbed == pytest.approx(3 / 4)


def brute_differencing(truth, fine, coarse, merge):
    pairs = small = exposed = 0
    groups = defaultdict(list)
    for cell in truth:
        groups[merge.get(cell, cell)].append(cell)
    for c, members in groups.items():
        if len(members) < 2 or coarse.get(c) is None:
            continue
        for f in members:
            if any(fine.get(g) is None for g in members if g != f):
                continue
            rec = coarse[c] - sum(fine[g] for g in members if g != f)
            pairs += 1
            if 1 <= truth[f] <= 4:
                small += 1
                exposed += rec == truth[f]
    return pairs, small, exposed


def test_differencing_exposes_a_small_cell_of_exact_tables_and_not_of_ckm():
    data = pd.DataFrame({"a": ["x"] * 30 + ["y"] * 3 + ["z"] * 12 + ["w"] * 2})
    merge = {"y": "yz", "z": "yz"}
    truth = {"x": 30, "y": 3, "z": 12, "w": 2}
    true_t = pd.DataFrame({"a": list(truth), "count": list(truth.values())})
    # threshold suppression of y alone, the merged category published exactly
    fine = true_t.assign(count=[30, None, 12, None])
    coarse = pd.DataFrame({"a": ["x", "yz", "w"], "count": [30, 15, None]})
    d = ct.differencing(true_t, fine, coarse, "a", merge)
    assert (d.pairs, d.small, d.exposed) == brute_differencing(
        truth, {"x": 30, "y": None, "z": 12, "w": None}, {"x": 30, "yz": 15, "w": None}, merge)
    assert d.exposed == 1
    # the cell key method on both tables
    merged = data.assign(a=data["a"].replace(merge))
    f = ck.ckm_table(data, ["a"], seed=1, threshold=0).table
    c = ck.ckm_table(merged, ["a"], seed=1, threshold=0).table
    fd = {r.a: (None if pd.isna(r.count) else int(r.count)) for r in f.itertuples()
          if not r.margin}
    cd = {r.a: (None if pd.isna(r.count) else int(r.count)) for r in c.itertuples()
          if not r.margin}
    d2 = ct.differencing(true_t, f, c, "a", merge)
    assert (d2.pairs, d2.small, d2.exposed) == brute_differencing(truth, fd, cd, merge)


def test_side_by_side_figures_on_a_2_way_table():
    rng = np.random.default_rng(3)
    data = pd.DataFrame({"a": rng.choice(list("pqrs"), 600, p=[.5, .3, .15, .05]),
                         "b": rng.choice(list("uvw"), 600, p=[.6, .3, .1])})
    true = data.value_counts(["a", "b"]).rename("count").reset_index()
    noisy = dpt.dp_counts(true, epsilon=1.0, seed=2)
    ckm = ck.ckm_table(data, ["a", "b"], seed=2)
    cd = ct.compare_published(true, noisy.table, ["a", "b"])
    cc = ct.compare_published(true, ckm.table, ["a", "b"])
    assert cd.blank == 0 and cd.cells == len(ct.full_grid(true))
    assert 0 <= cd.hellinger < 0.1 and 0 <= cc.hellinger < 0.1
    assert cc.blank == int(ckm.table[~ckm.table["margin"]]["count"].isna().sum())


def test_differencing_of_dp_tables_against_loops():
    rng = np.random.default_rng(8)
    data = pd.DataFrame({"a": rng.choice(list("pqrst"), 300, p=[.6, .25, .1, .03, .02]),
                         "b": rng.choice(list("uv"), 300)})
    merge = {"s": "st", "t": "st", "r": "rq", "q": "rq"}
    true = data.value_counts(["a", "b"]).rename("count").reset_index()
    coarse_true = data.assign(a=data["a"].replace(merge)).value_counts(["a", "b"])
    fine = dpt.dp_counts(true, epsilon=0.5, seed=1).table
    coarse = dpt.dp_counts(coarse_true.rename("count").reset_index(), epsilon=0.5,
                          seed=2).table
    d = ct.differencing(ct.full_grid(true), fine, coarse, "a", merge)
    truth = {(r.a, r.b): r.count for r in ct.full_grid(true).itertuples()}
    fd = {(r.a, r.b): r.count for r in fine.itertuples() if not r.margin}
    cd = {(r.a, r.b): r.count for r in coarse.itertuples() if not r.margin}
    expected = brute_differencing(truth, fd, cd,
                                  {(a, b): (merge.get(a, a), b) for a, b in truth})
    assert (d.pairs, d.small, d.exposed) == expected
    assert d.pairs == 8   # (q, r) and (s, t) for u and v: four cells each recovered once


@pytest.mark.parametrize("seed", range(5))
def test_with_margins_against_loops(seed):
    rng = np.random.default_rng(seed)
    cells = pd.DataFrame({"a": rng.choice(list("xy"), 12), "b": rng.choice(list("uvw"), 12),
                          "c": rng.choice(list("pq"), 12)}).drop_duplicates()
    cells["count"] = rng.integers(0, 9, len(cells))
    m = ct.with_margins(cells, ["a", "b", "c"])
    got = {(r.a, r.b, r.c): r.count for r in m.itertuples()}
    assert len(got) == len(m)   # no cell or margin twice
    want: dict = defaultdict(int)
    for r in cells.itertuples():
        for mask in range(8):
            key = tuple(v if mask >> i & 1 else "Total" for i, v in enumerate((r.a, r.b, r.c)))
            want[key] += r.count
    assert got == dict(want)
    assert (m["margin"] == [any(v == "Total" for v in k) for k in got]).all()
