"""Tables of sums by the cell key method and by differential privacy (sdc_core/tables/
cell_key_sums.py, sdc_core/tables/dp_sums.py; docs/tables.md, "The cell key method for magnitude
tables" and "Differential privacy sums"): reproducible, consistent between tables, noise scaled to
the largest contribution (CKM) or to U/ε (DP) as the definitions say, checked against loops over
the records written from the definitions, and hostile input refused in one line."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from sdc_core import rng
from sdc_core.errors import SdcInputError
from sdc_core.tables.cell_key import record_keys
from sdc_core.tables.cell_key_sums import (
    DEFAULT_MAGNITUDE,
    ckm_sums,
    contributor_cell_keys,
    noise_table,
)
from sdc_core.tables.cell_rules import Rule
from sdc_core.tables.crosstab import TOTAL, crosstab
from sdc_core.tables.dp_sums import bounded_sums, dp_sums
from sdc_core.tables.table_release import release_table
from tests.cli_run import run

P10 = Rule("p", (10.0,))


def _cells(rows: int, per: int, amount: float = 1.0) -> pd.DataFrame:
    """``rows`` cells of one column, each of ``per`` records of the same amount: x₁ = amount and
    X − x₁ − x₂ = (per − 2)·amount, never sensitive at p 10 for per ≥ 3."""
    return pd.DataFrame({"a": np.repeat([f"c{i:05d}" for i in range(rows)], per),
                         "y": np.full(rows * per, amount)})


# -- the cell key method for sums ------------------------------------------------------------

def test_the_noise_table_has_mean_0_variance_v_and_stays_within_d():
    for d, v in ((3.0, 1.0), (1.0, 0.2), (5.0, 4.0)):
        z = noise_table(d, v)
        assert len(z) == 256 and np.all(np.diff(z) > 0)
        assert np.array_equal(z, -z[::-1]) and not np.any(z == 0)
        assert abs(float(z.mean())) < 1e-12
        assert math.isclose(float((z ** 2).mean()), v, rel_tol=1e-9)
        assert float(np.abs(z).max()) <= d


@pytest.mark.parametrize(("d", "v"), [(3.0, 3.0), (0.0, 1.0), (3.0, float("nan")),
                                      (float("inf"), 1.0), ("3", 1.0), (True, 1.0)])
def test_a_noise_table_it_cannot_make_is_refused(d, v):
    with pytest.raises(SdcInputError, match="noise"):
        noise_table(d, v)


def test_the_noise_over_many_cells_has_mean_0_and_variance_v():
    """3,000 cells of 20 records of 1 (x₁ = 1, none sensitive): z = δ / (m · x₁) over their
    cell keys. Tolerances 4 standard errors: mean √(V/n); variance √((μ₄ − V²)/n) with
    μ₄ ≤ D² V (|z| ≤ D)."""
    df = _cells(3000, 20)
    made = release_table(df, ["a"], "y", method="ckm", seed=11, rule=P10)
    cells = made.frame[~made.frame["margin"]]
    z = (cells["sum"].to_numpy() - 20.0) / DEFAULT_MAGNITUDE
    n, d, v = len(z), 3.0, 1.0
    assert abs(float(z.mean())) < 4 * math.sqrt(v / n)
    assert abs(float(z.var()) - v) < 4 * math.sqrt((d * d * v - v * v) / n)
    assert float(np.abs(z).max()) <= d + 1e-9
    assert len(np.unique(np.round(z, 9))) > 200  # the cell keys reach most of the table


def test_the_noise_scales_with_the_largest_contribution_not_the_total():
    """The same records (so the same cell keys), the largest amount of each cell doubled: the
    perturbation doubles; the other amounts changed (the total moves), it does not."""
    base = pd.DataFrame({"a": np.repeat(list("uvwxyz"), 12),
                         "y": np.tile([50.0] + [10.0] * 11, 6)})
    bigger = base.assign(y=np.tile([100.0] + [10.0] * 11, 6))
    wider = base.assign(y=np.tile([50.0] + [30.0] * 11, 6))
    delta = {}
    for name, df in (("base", base), ("bigger", bigger), ("wider", wider)):
        made = ckm_sums(df, crosstab(df, ["a"], "y"), seed=4)
        assert not made.frame["sensitive"].any()
        delta[name] = made.frame["perturbation"].to_numpy()
    assert np.allclose(delta["bigger"], 2 * delta["base"], rtol=1e-12)
    assert np.allclose(delta["wider"], delta["base"], rtol=1e-12)
    assert np.all(delta["base"] != 0)


def test_the_same_contributors_give_the_same_sum_in_every_table(households):
    """A margin of the region × tenure table is the region cell of the one-way table, the
    (region, tenure, Total) cell of a three-way table the (region, tenure) cell; with a
    household id too."""
    for unit in (None, "hid"):
        one = release_table(households, ["region"], "income", method="ckm", seed=3,
                            household=unit).frame
        two = release_table(households, ["region", "tenure"], "income", method="ckm", seed=3,
                            household=unit).frame
        three = release_table(households, ["region", "tenure", "sex"], "income", method="ckm",
                              seed=3, household=unit).frame
        first = one.set_index("region")["sum"]
        margin = two[two["tenure"] == TOTAL].set_index("region")["sum"]
        assert np.array_equal(first.to_numpy(), margin.reindex(first.index).to_numpy())
        inner = two.set_index(["region", "tenure"])["sum"]
        from_three = three[three["sex"] == TOTAL].set_index(["region", "tenure"])["sum"]
        assert np.array_equal(inner.to_numpy(), from_three.reindex(inner.index).to_numpy())
        other = release_table(households, ["region"], "income", method="ckm", seed=4,
                              household=unit).frame
        assert not np.array_equal(other["sum"].to_numpy(), one["sum"].to_numpy())


def test_a_sensitive_cell_hides_its_largest_contribution_by_p_percent():
    """Cells of one dominant amount (100, 6, 1: X − x₁ − x₂ = 1 < 10): whatever the sign of
    the noise, the second contributor's estimate X′ − x₂ misses x₁ by at least p % of x₁; both
    signs occur; a cell of equal amounts is moved by m · x₁ · z alone."""
    rows = 400
    dominant = pd.DataFrame({"a": np.repeat([f"d{i:04d}" for i in range(rows)], 3),
                             "y": np.tile([100.0, 6.0, 1.0], rows)})
    for p in (10.0, 25.0):
        made = ckm_sums(dominant, crosstab(dominant, ["a"], "y"), seed=2, p=p)
        cells = made.frame[~made.frame["margin"]]
        assert cells["sensitive"].all()
        miss = np.abs(cells["sum"].to_numpy() - 6.0 - 100.0)
        assert np.all(miss >= p / 100 * 100.0 - 1e-9)
        signs = np.sign(cells["perturbation"].to_numpy())
        assert (signs > 0).any() and (signs < 0).any()
        assert np.all(cells["sum"].to_numpy() >= 0)
    even = _cells(50, 5, 40.0)
    made = ckm_sums(even, crosstab(even, ["a"], "y"), seed=2)
    cells = made.frame[~made.frame["margin"]]
    assert not cells["sensitive"].any()
    assert np.allclose(cells["perturbation"], DEFAULT_MAGNITUDE * 40.0 * cells["noise"])


def _ckm_by_loop(df: pd.DataFrame, columns: list[str], value: str, seed: int,
                 unit: str | None, p: float = 10.0) -> dict[tuple[str, ...], float]:
    """Each cell's and margin's published sum from the definition, record by record: the keys
    of its distinct contributors summed mod 256, x₁ ≥ x₂ the largest (per-person) sums, δ =
    m · x₁ · z(k), floored at p/100 · x₁ + X − x₁ − x₂ when sensitive."""
    z_of = noise_table()
    ids = rng.record_ids(len(df)) if unit is None else rng.ids_from_column(df[unit].to_numpy())
    keys = record_keys(ids, seed)
    who = np.arange(len(df)) if unit is None else df[unit].to_numpy()
    labels = [df[c].astype(str).to_numpy() for c in columns]
    amounts = df[value].to_numpy(dtype=float)
    levels = [sorted(set(lab), key=lambda s: (float(s), s)) + [TOTAL] for lab in labels]
    out = {}
    for cell in pd.MultiIndex.from_product(levels):
        key_of: dict[object, int] = {}
        per: dict[object, float] = {}
        for r in range(len(df)):
            if all(lv == TOTAL or labels[i][r] == lv for i, lv in enumerate(cell)):
                key_of[who[r]] = int(keys[r])
                per[who[r]] = per.get(who[r], 0.0) + amounts[r]
        total = sum(per.values())
        top = sorted(per.values(), reverse=True) + [0.0, 0.0]
        z = z_of[sum(key_of.values()) % 256]
        delta = DEFAULT_MAGNITUDE * top[0] * z
        rest = total - top[0] - top[1]
        if top[0] > 0 and rest < p / 100 * top[0]:
            delta = math.copysign(max(abs(delta), p / 100 * top[0] + rest), z)
        out[tuple(cell)] = total + delta
    return out


@pytest.mark.parametrize("unit", [None, "hid"])
def test_a_loop_over_the_records_gives_the_published_sums(actg, unit):
    """ACTG 175 (weight in kg by arm and race; with a made-up household of every three
    patients): the release equals the loop written from the definition."""
    df = actg[["arms", "race", "wtkg"]].copy()
    df["hid"] = np.arange(len(df)) // 3
    made = release_table(df, ["arms", "race"], "wtkg", method="ckm", seed=9, household=unit)
    expected = _ckm_by_loop(df, ["arms", "race"], "wtkg", 9, unit)
    got = {tuple(str(v) for v in row[:2]): row[2]
           for row in made.frame[["arms", "race", "sum"]].itertuples(index=False)}
    assert got.keys() == expected.keys()
    for cell, value in expected.items():
        assert math.isclose(got[cell], value, rel_tol=1e-12), cell
    assert made.noise is not None and made.noise["p"] == 10.0


def test_a_person_has_one_key_in_a_cell():
    """Two records of one person in a cell count the person's key once."""
    df = pd.DataFrame({"a": ["x", "x", "x"], "y": [1.0, 2.0, 3.0], "h": ["p", "p", "q"]})
    keys = record_keys(rng.ids_from_column(np.array(["p", "q"], dtype=object)), 5)
    got = contributor_cell_keys(df, crosstab(df, ["a"], "y", unit="h"), 5, "h")
    assert got.tolist() == [int(keys.sum()) % 256] * 2


# -- DP sums --------------------------------------------------------------------------------

def test_contributions_are_clipped_before_they_are_summed():
    df = pd.DataFrame({"a": list("xxxyy"), "y": [5.0, 500.0, np.nan, 20.0, 30.0],
                       "h": [1, 1, 2, 3, 3]})
    table = crosstab(df, ["a"], "y")
    assert bounded_sums(df, table, 25.0).tolist() == [5.0 + 25.0, 20.0 + 25.0]
    assert bounded_sums(df, table, 25.0, units=df["h"].to_numpy()).tolist() == [25.0, 25.0]


def test_the_laplace_scale_is_u_over_epsilon():
    """2,000 cells of 50 records of 1,000 clipped at U = 400 (true sum 20,000 each, 25 scales
    from 0, so no figure is clipped at 0): noise = published − 20,000. Continuous: E|N| = s,
    SD(|N|) = s, so within 4 s/√n; whole amounts: discrete Laplace of variance
    2e^(−1/s)/(1 − e^(−1/s))², within 4 standard errors (μ₄ ≤ 24 s⁴, the continuous law's)."""
    n, u, eps = 2000, 400.0, 0.5
    s = u / eps
    df = _cells(n, 50, 1000.5)
    made = dp_sums(df, crosstab(df, ["a"], "y"), clip=u, epsilon=eps, seed=8)
    noise = made.frame.loc[~made.frame["margin"], "sum"].to_numpy() - 50 * u
    assert not made.whole and made.scale == s
    assert abs(float(np.abs(noise).mean()) - s) < 4 * s / math.sqrt(n)
    assert math.isclose(made.epsilon, eps, rel_tol=1e-9)
    whole = _cells(n, 50, 1000.0)
    made = dp_sums(whole, crosstab(whole, ["a"], "y"), clip=400, epsilon=eps, seed=8)
    noise = made.frame.loc[~made.frame["margin"], "sum"].to_numpy() - 50 * u
    assert made.whole and np.all(noise == np.round(noise))
    q = math.exp(-1 / s)
    var = 2 * q / (1 - q) ** 2
    assert abs(float(noise.var()) - var) < 4 * math.sqrt((24 * s ** 4 - var ** 2) / n)


def test_margins_are_sums_of_noisy_cells_and_carry_their_accuracy(actg):
    made = release_table(actg, ["arms", "race"], "wtkg", method="dp", clip=150.0, seed=1)
    f = made.frame
    cells = f[~f["margin"]].copy()
    for arm, part in cells.groupby("arms"):
        margin = f[(f["arms"] == arm) & (f["race"] == TOTAL)]["sum"].iloc[0]
        assert math.isclose(margin, part["sum"].sum(), rel_tol=1e-12)
    acc = float(cells["accuracy"].iloc[0])
    assert math.isclose(acc, 150.0 * math.log(1 / 0.05), rel_tol=1e-9)
    assert f.loc[f["margin"], "accuracy"].min() > acc
    assert made.clip == 150.0 and made.to_json()["clip"] == 150.0


def test_a_household_is_bounded_in_records_and_in_each_cell(households):
    """With a household id: each person's records beyond c dropped, a person's sum in a cell
    clipped at U, the noise scaled to c · U/ε; the loop over persons gives the clipped sums."""
    df = households
    table = crosstab(df, ["region"], "income", unit="hid")
    made = dp_sums(df, table, clip=30000.0, epsilon=1.0, seed=5, household="hid",
                   max_contributions=2)
    assert made.scale == 2 * 30000.0 and made.records_dropped > 0
    from sdc_core.households import household_codes
    from sdc_core.tables.dp_tables import bound_contributions

    units, _ = household_codes(df, "hid")
    keep = bound_contributions(units, 2, 5)
    kept = df[keep]
    expected = {str(r): float(g.groupby("hid")["income"].sum().clip(upper=30000.0).sum())
                for r, g in kept.groupby("region")}
    got = bounded_sums(df, table, 30000.0, keep, units)
    assert dict(zip(table.levels[0], got.tolist())) == pytest.approx(expected, rel=1e-12)
    assert kept.groupby("hid").size().max() <= 2


def test_a_dp_sum_needs_its_bound():
    df = _cells(3, 4)
    with pytest.raises(SdcInputError, match="give --clip U"):
        release_table(df, ["a"], "y", method="dp")
    with pytest.raises(SdcInputError, match="clip bound goes with"):
        release_table(df, ["a"], method="dp", clip=4.0)


# -- the command line -------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["ckm", "dp"])
def test_the_same_seed_writes_the_same_bytes(method, households, tmp_path):
    data = tmp_path / "h.csv"
    households.to_csv(data, index=False)
    outs = []
    for seed, name in ((1, "a.csv"), (1, "b.csv"), (2, "c.csv")):
        done = run("tables", data, "--cross", "region,tenure", "--sum", "income", "--method",
                   method, "--seed", str(seed), *(["--clip", "50000"] if method == "dp" else []),
                   "-o", tmp_path / name)
        assert done.returncode == 0, done.stderr
        outs.append((tmp_path / name).read_bytes())
    assert outs[0] == outs[1] and outs[0] != outs[2]
    head = outs[0].decode().splitlines()[0]
    assert head == "region,tenure,sum,status,unit"
    done = run("tables", data, "--cross", "region", "--sum", "income", "--method", method,
               *(["--clip", "50000"] if method == "dp" else []), "--json")
    parsed = json.loads(done.stdout)
    assert parsed["value"] == "sum" and parsed["utility"]["absD"] > 0
    assert ("clip" in parsed) == (method == "dp") and ("noise" in parsed) == (method == "ckm")


@pytest.mark.parametrize(("clip", "words"), [
    ("-1", "clip bound U must be a number above 0"), ("nan", "clip bound U"),
    ("inf", "clip bound U"), ("1e400", "clip bound U"), ("0", "clip bound U"),
    ("1e300", "at most 2^53"), ("abc", "invalid float value"), (None, "give --clip U")])
def test_a_bad_clip_exits_2_in_one_line(clip, words, households, tmp_path):
    data = tmp_path / "h.csv"
    households.to_csv(data, index=False)
    given = [] if clip is None else [f"--clip={clip}"]
    done = run("tables", data, "--cross", "region", "--sum", "income", "--method", "dp",
               *given, "--json")
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.count("\n") == 1 and words in done.stderr, done.stderr
    done = run("tables", data, "--cross", "region", "--sum", "income", "--method", "ckm",
               "--clip", "5", "--json")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
