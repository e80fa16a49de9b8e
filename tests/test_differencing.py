"""Differencing between two published tables (sdc_core/tables/differencing.py): the intervals the
pair leaves against brute-force enumeration of every consistent whole-number table, the DP and
cell-key differences against a loop over the two releases, and hostile inputs."""

import itertools
import json

import numpy as np
import pandas as pd
import pytest

from sdc_core.errors import SdcInputError
from sdc_core.tables.cell_rules import Rule
from sdc_core.tables.differencing import differencing_risk
from tests.cli_run import run

TOTAL = "Total"


def _records(cells):
    rows = []
    for key, n in cells.items():
        rows += [key] * n
    return pd.DataFrame(rows, columns=["region", "age"])


#: fine cells: (r1, a) = 1 is below threshold 3; its cheapest partners in the fine table are in
#: column b, in the coarse table (b and c merged, 11 a row) column d
HAND = {("r1", "a"): 1, ("r1", "b"): 3, ("r1", "c"): 8, ("r1", "d"): 5,
        ("r2", "a"): 3, ("r2", "b"): 3, ("r2", "c"): 8, ("r2", "d"): 5}


def _published(frame, cols):
    """{labels: value} of the figures shown (cells and margins)."""
    out = {}
    for r in frame.to_dict(orient="records"):
        if not pd.isna(r["count"]):
            out[tuple(str(r[c]) for c in cols)] = float(r["count"])
    return out


def _figures(cells, merge=None):
    """Every cell and margin of the table of ``cells`` (levels mapped by ``merge`` on cols)."""
    out = {}
    for (r, c), n in cells.items():
        c = merge.get(c, c) if merge else c
        for key in ((r, c), (r, TOTAL), (TOTAL, c), (TOTAL, TOTAL)):
            out[key] = out.get(key, 0) + n
    return out


def _brute_force(res, use_coarse):
    """min and max of each hidden fine cell over every whole-number table that shows the same
    published figures (the fine table, and the coarse one when ``use_coarse``)."""
    cols = ["region", "age"]
    fine = _published(res.fine.frame, cols)
    coarse = _published(res.coarse.frame, cols)
    merge = {m: res.label for m in res.merged}
    cells = [k for k in HAND]
    hidden = [k for k in cells if k not in fine]
    known = {k: int(fine[k]) for k in cells if k in fine}
    # a cell is at most its region's total, shown in the fine table here
    bound = {k: int(fine[(k[0], TOTAL)]) for k in hidden}
    found = {k: [] for k in hidden}
    for values in itertools.product(*[range(bound[k] + 1) for k in hidden]):
        table = {**known, **dict(zip(hidden, values))}
        figs = _figures(table)
        if any(figs[k] != v for k, v in fine.items()):
            continue
        if use_coarse:
            cfigs = _figures(table, merge)
            if any(cfigs[k] != v for k, v in coarse.items()):
                continue
        for k, v in zip(hidden, values):
            found[k].append(v)
    return {k: (min(v), max(v)) for k, v in found.items()}


@pytest.mark.parametrize("integer", [False, True])
def test_a_table_that_passes_its_audit_is_exposed_by_the_merged_table(integer):
    res = differencing_risk(_records(HAND), ["region", "age"], "age", ["b", "c"],
                            rule=Rule("threshold", (3,)), integer=integer)
    assert res.fine.audit.passes
    got = {(r.region, r.age): (r.lo, r.hi) for r in res.frame.itertuples()}
    alone = {(r.region, r.age): (r.lo_alone, r.hi_alone) for r in res.frame.itertuples()}
    assert got == _brute_force(res, use_coarse=True)
    assert alone == _brute_force(res, use_coarse=False)
    # the coarse table publishes b + c per region, which the fine table hides in b
    shown = _published(res.coarse.frame, ["region", "age"])
    assert ("r1", "b+c") in shown
    # the primary cell: protected by the fine table alone, pinned by the pair
    row = res.frame[(res.frame["region"] == "r1") & (res.frame["age"] == "a")].iloc[0]
    assert row["status"] == "primary" and not row["exposed_alone"]
    assert row["lo"] == row["hi"] == HAND[("r1", "a")] and row["exposed"]
    # exposure by the threshold rule's own protection: the interval must reach 0 and 3
    exposed = {(r.region, r.age) for r in res.frame.itertuples()
               if r.status == "primary" and (r.lo > 0 or r.hi < 3)}
    assert exposed == {k for k, e in zip(got, res.frame["exposed"]) if e}
    assert res.exposed_alone == 0 and res.exposed == len(exposed) == 1
    out = res.to_json()
    json.dumps(out)
    assert out["exposed"] == 1 and out["fine_audit_passes"] is True
    assert "\n" not in res.summary() and "by the two tables 1" in res.summary()


def test_merging_levels_nothing_hides_leaves_the_intervals_alone():
    res = differencing_risk(_records(HAND), ["region", "age"], "age", ["c", "d"],
                            rule=Rule("threshold", (3,)))
    assert (res.frame["lo"].to_numpy() == res.frame["lo_alone"].to_numpy()).all()
    assert (res.frame["hi"].to_numpy() == res.frame["hi_alone"].to_numpy()).all()
    assert res.exposed == 0


def _loop(res):
    """pairs, small, exposed by subtraction, straight from the two releases' frames."""
    cols = ["region", "age"]
    fine = _published(res.fine.frame[~res.fine.frame["margin"]], cols)
    coarse = _published(res.coarse.frame[~res.coarse.frame["margin"]], cols)
    truth = res.fine.truth.frame[~res.fine.truth.margin]
    true = {(str(r["region"]), str(r["age"])): int(r["count"])
            for r in truth.to_dict(orient="records")}
    pairs = small = exposed = 0
    for region in {k[0] for k in true}:
        members = [(region, m) for m in res.merged]
        if (region, res.label) not in coarse:
            continue
        for f in members:
            others = [g for g in members if g != f]
            if all(g in fine for g in others):
                got = coarse[(region, res.label)] - sum(fine[g] for g in others)
                pairs += 1
                if 1 <= true[f] <= 4:
                    small += 1
                    exposed += got == true[f]
    return pairs, small, exposed


@pytest.mark.parametrize("method", ["dp", "ckm"])
@pytest.mark.parametrize("seed", [0, 3])
def test_noisy_differences_agree_with_a_loop(method, seed):
    rng = np.random.default_rng(seed)
    cells = {(f"r{i}", lev): int(rng.integers(0, 25)) for i in range(8) for lev in "abcd"}
    res = differencing_risk(_records(cells), ["region", "age"], "age", ["a", "c", "d"],
                            method=method, epsilon=0.5, seed=seed, threshold=3)
    c = res.counts
    assert (c.pairs, c.small, c.exposed) == _loop(res)
    assert res.label == "a+c+d" and c.pairs > 0 and c.small > 0
    out = res.to_json()
    json.dumps(out)
    assert out["differences"]["pairs"] == c.pairs
    assert "\n" not in res.summary()


@pytest.mark.parametrize("columns, column, merged, says", [
    (["region", "age"], "nope", ["a", "b"], "unknown column"),
    (["region", "age"], "age", ["a", "zz"], "no level"),
    (["region", "age"], "age", ["a"], "at least 2"),
    (["region", "age"], "age", ["a", "a"], "at least 2"),
    (["region", "age"], "age", "ab", "at least 2"),
    (["region"], "age", ["a", "b"], "must be one of the table's columns"),
])
def test_hostile_inputs_are_refused_in_one_line(columns, column, merged, says):
    with pytest.raises(SdcInputError) as err:
        differencing_risk(_records(HAND), columns, column, merged)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_a_merged_label_that_is_already_a_level_is_refused():
    cells = {**HAND, ("r1", "a+b"): 2}
    with pytest.raises(SdcInputError, match="already has a level"):
        differencing_risk(_records(cells), ["region", "age"], "age", ["a", "b"])


def test_a_categorical_column_keeps_its_order():
    df = _records(HAND)
    df["age"] = pd.Categorical(df["age"], categories=["d", "c", "b", "a"])
    res = differencing_risk(df, ["region", "age"], "age", ["b", "c"], rule=Rule("threshold", (3,)))
    assert res.coarse.truth.levels[1] == ("d", "b+c", "a")
    assert res.exposed == 1


def test_the_command_line_adds_the_pair_to_its_json(tmp_path):
    data = tmp_path / "hand.csv"
    _records(HAND).to_csv(data, index=False)
    done = run("tables", data, "--cross", "region,age", "--rule", "threshold:3",
               "--difference", "age=b,c", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)["differencing"]
    direct = differencing_risk(_records(HAND), ["region", "age"], "age", ["b", "c"],
                               rule=Rule("threshold", (3,)))
    assert out == json.loads(json.dumps(direct.to_json()))
    assert out["exposed_alone"] == 0 and out["exposed"] == 1
    for bad in ("age=b", "age", "age=b,zz", "nope=b,c"):
        done = run("tables", data, "--cross", "region,age", "--difference", bad, "--json")
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, bad


def test_a_date_column_merges_as_its_text_does():
    """The levels merged are the cross table's level text; a date column gives what the same
    dates written as that text give, for every method."""
    days = ["2020-01-01"] * 30 + ["2021-01-01"] * 20 + ["2022-01-01"] * 4
    dates = pd.DataFrame({"d": pd.to_datetime(days), "s": ["a", "b"] * 27})
    texts = dates.assign(d=[f"{d} 00:00:00" for d in days])
    merged = ["2021-01-01 00:00:00", "2022-01-01 00:00:00"]
    for method in ("suppress", "dp", "ckm"):
        a = differencing_risk(dates, ["d", "s"], "d", merged, method).to_json()
        b = differencing_risk(texts, ["d", "s"], "d", merged, method).to_json()
        assert a == b, method


def _many_hidden():
    """A 20 × 10 table of counts 0–11 (a fifth of its cells below 5) and the same with ages b
    and c merged, both suppressed to threshold 5."""
    from sdc_core.tables.differencing import _coarse_column, cover_matrix
    from sdc_core.tables.table_release import release_table
    rng = np.random.default_rng(0)
    cells = {(f"r{i:02d}", a): int(rng.integers(0, 12)) for i in range(20) for a in "abcdefghij"}
    df = _records(cells)
    fine = release_table(df, ["region", "age"], rule=Rule("threshold", (5,)))
    coarse = release_table(df.assign(age=_coarse_column(df["age"], ["b", "c"], "b+c")),
                           ["region", "age"], rule=Rule("threshold", (5,)))
    return fine, coarse, cover_matrix(fine, coarse, "age", ["b", "c"], "b+c")


def test_the_pairs_intervals_are_bounded_in_programmes_and_time(monkeypatch):
    """Issue 51: the pair's intervals took two linear programmes per hidden cell with no time
    limit. They are decided as the cross-table audit decides: every solution found widens
    every cell's known interval, so far fewer programmes than two a cell, each interval inside
    the exact one (and equal where exact); and a time limit leaves the cells not decided
    unchecked, never protected."""
    import sdc_core.tables.suppression_audit as audit
    from sdc_core.tables.differencing import pair_intervals
    fine, coarse, cover = _many_hidden()
    hidden = int(fine.frame[fine.value].isna().sum())
    assert hidden >= 50
    calls = {"n": 0}
    solve = audit.linprog

    def counted(*args, **kw):
        calls["n"] += 1
        return solve(*args, **kw)

    monkeypatch.setattr(audit, "linprog", counted)
    full = pair_intervals(fine, coarse, cover, exact=True)
    calls["n"] = 0
    quick = pair_intervals(fine, coarse, cover, exact=False)
    assert full.checked.all() and full.exact.all() and quick.checked.all()
    assert calls["n"] <= hidden // 2                  # 24 for 68 cells, where 136 were run
    assert (quick.lo >= full.lo).all() and (quick.hi <= full.hi).all()
    same = quick.exact
    assert (quick.lo[same] == full.lo[same]).all() and (quick.hi[same] == full.hi[same]).all()
    calls["n"] = 0
    late = pair_intervals(fine, coarse, cover, time_limit=0.0)
    assert calls["n"] == 0 and late.unchecked == hidden and np.isnan(late.lo).all()
