"""Linked tables (docs/tables.md, "Linked tables"): tables of one file protected together.

The joint audit is checked here by a linear programme of its own, written from the definition
(the finest cross classification's cells as unknowns ≥ 0, every published cell of every table an
equality), not by the library's audit; a case where tables protected one by one each pass alone
and fail together, and the linked protection passes; and the command line's output."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from sdc_core.errors import SdcInputError
from sdc_core.tables.cell_rules import Rule
from sdc_core.tables.crosstab import TOTAL
from sdc_core.tables.hierarchy import hierarchy
from sdc_core.tables.linked import joint_audit, release_linked
from sdc_core.tables.table_release import primary_cells, release_table
from tests.cli_run import run
from tests.conftest import SHARED_DATA

#: A file where region × sex and region × age, each protected alone, pass their audits and
#: together give a hidden cell away (found by a search over random tables; the data, not a
#: result, is written here)
SMALL = pd.DataFrame({
    "r": list("cababccbccbbaccc"), "s": list("mfmfmfffmfmmfffm"),
    "g": list("yxyyxyxyxxxyxxzx")})
THREE = Rule("threshold", (3,))


Key = frozenset  # a cell: its (column, level) pairs, the columns that are not Total


def interior_intervals(df: pd.DataFrame, union: list[str], shown: dict[Key, float],
                       hidden: list[Key], amounts: str | None = None,
                       parents: dict[str, dict[str, str]] | None = None
                       ) -> dict[Key, tuple[float, float, float]]:
    """For each ``hidden`` cell, [min, max] of its value (the count, or the sum of
    ``amounts``) over the non-negative tables of the finest cross classification of ``union``
    that give every ``shown`` cell its value, and its true value: the joint audit from its
    definition. ``parents`` gives a column's code list (code → parent, a root's parent
    blank): a cell labelled with an inner node adds up the leaves below it."""
    up = parents or {}

    def under(column: str, leaf: str, label: str) -> bool:  # leaf is label or below it
        code: str | None = leaf
        while code is not None:
            if code == label:
                return True
            code = up.get(column, {}).get(code) or None
        return False
    sub = df.dropna(subset=union)
    levels = [sorted(sub[c].astype(str).unique()) for c in union]
    cells = list(itertools.product(*levels))
    index = {c: i for i, c in enumerate(cells)}
    truth = np.zeros(len(cells))
    weight = np.ones(len(sub)) if amounts is None else sub[amounts].fillna(0).to_numpy(float)
    for key, w in zip(sub[union].astype(str).itertuples(index=False), weight):
        truth[index[tuple(key)]] += w

    def row(key: Key) -> np.ndarray:  # the finest cells a table's cell adds up
        want = dict(key)
        return np.array([all(under(k, c[union.index(k)], v) for k, v in want.items())
                         for c in cells], dtype=float)
    a_eq = np.array([row(k) for k in shown]) if shown else None
    scale = max([1.0, *map(abs, shown.values())])  # HiGHS's tolerances are absolute
    b_eq = np.array(list(shown.values())) / scale if shown else None
    out = {}
    for key in hidden:
        c = row(key)
        found = []
        for sign in (1, -1):
            res = linprog(sign * c, A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs")
            if res.status == 3:  # unbounded above: nothing published bounds the cell
                found.append(np.inf)
                continue
            assert res.status == 0, res.message
            found.append(sign * res.fun * scale)
        out[key] = (found[0], found[1], float(c @ truth))
    return out


def check_joint(df: pd.DataFrame, tables: list[list[str]], rule: Rule,
                amounts: str | None = None,
                parents: dict[str, dict[str, str]] | None = None) -> None:
    """Linked protection of ``tables`` (with ``parents``, the code lists of columns): one
    status per cell, every primary cell hidden and protected and no secondary cell pinned, by
    :func:`interior_intervals`."""
    made = release_linked(df, tables, amounts, rule, hierarchies={
        c: hierarchy([*((code, up or None) for code, up in p.items()),
                      *((n, None) for n in set(p.values()) - set(p) - {""})])
        for c, p in (parents or {}).items()})
    tol = 1e-6 * max(1.0, float(np.abs(made.finest.values).max()))
    union = list(made.finest.columns)
    shown: dict[Key, float] = {}
    hidden: dict[Key, str] = {}
    for rec in made.frame().to_dict(orient="records"):
        key = frozenset((c, str(rec[c])) for c in union if rec[c] not in ("", TOTAL))
        if rec["status"] == "published":
            shown[key] = float(rec[made.value])
        else:
            hidden[key] = rec["status"]
    assert not set(shown) & set(hidden)  # a shared cell: the same status in every table
    primary = primary_cells(made.finest, rule)
    need = {}
    for i in np.flatnonzero(primary.primary & made.member.any(axis=0)):
        rec = made.finest.frame.iloc[i]
        key = frozenset((c, str(rec[c])) for c in union if rec[c] != TOTAL)
        need[key] = (primary.lower[i], primary.upper[i])
    assert set(need) <= set(hidden)  # every primary cell is hidden
    found = interior_intervals(df, union, shown, list(hidden), amounts, parents)
    for key, (lo, hi, v) in found.items():
        if key in need:
            lower, upper = need[key]
            assert lo <= v - lower + tol and hi >= v + upper - tol, (key, lo, hi, v)
        else:  # a secondary cell is not pinned (else it would be published)
            assert hi - lo > tol, (key, lo, hi, v)
    assert made.passes()


def test_tables_protected_one_by_one_pass_alone_and_fail_together() -> None:
    tables = [["r", "s"], ["r", "g"]]
    own = []
    for t in tables:
        alone = release_table(SMALL, t, rule=THREE)
        assert alone.audit.passes  # each table alone is safe …
        own.append((alone.truth, alone.frame["count"].isna().to_numpy()))
    joint = joint_audit(SMALL, own, THREE)
    assert not joint.passes  # … together they give a hidden cell away
    exposed = joint.frame[joint.frame["exposed"]]
    assert len(exposed) and (exposed["lo"] == exposed["hi"]).any()  # pinned exactly
    linked = release_linked(SMALL, tables, rule=THREE)
    assert linked.passes()
    check_joint(SMALL, tables, THREE)


def test_the_linked_frame_is_each_table_cell_by_cell() -> None:
    tables = [["r", "s"], ["r", "g"]]
    made = release_linked(SMALL, tables, rule=THREE)
    frame = made.frame()
    assert list(frame.columns) == ["table", "r", "s", "g", "count", "status", "unit"]
    for t in tables:
        part = frame[frame["table"] == ",".join(t)]
        alone = release_table(SMALL, t, rule=THREE).truth.frame
        assert len(part) == len(alone)
        for other in set(made.finest.columns) - set(t):
            assert (part[other] == "").all()
        shown = part[part["status"] == "published"]
        truth = alone.set_index(t)["count"]
        for _, r in shown.iterrows():
            assert int(r["count"]) == truth[tuple(r[c] for c in t)]
    # a margin the two tables share (each region's total) has one status in both
    margins = frame[(frame["r"] != TOTAL) & ((frame["s"] == TOTAL) | (frame["g"] == TOTAL))]
    assert (margins.groupby("r")["status"].nunique() == 1).all()
    assert str(frame["count"].dtype) == "Int64"


@st.composite
def linked_sets(draw: st.DrawFn) -> tuple[pd.DataFrame, list[list[str]], Rule,
                                          dict[str, dict[str, str]]]:
    """Tables of two or three columns of 2–3 levels each; column a may carry a random code
    list: each leaf under one of two inner nodes or directly under the total, the second
    node perhaps under the first."""
    n = draw(st.integers(8, 40))
    k = draw(st.integers(2, 3))
    columns = ["a", "b", "c"][:k]
    data = {c: draw(st.lists(st.sampled_from(["u", "v", "w"][:draw(st.integers(2, 3))]),
                             min_size=n, max_size=n)) for c in columns}
    pairs = [list(p) for p in itertools.combinations(columns, 2)] + [[c] for c in columns]
    tables = draw(st.lists(st.sampled_from(pairs), min_size=2, max_size=3, unique_by=tuple))
    rule = Rule("threshold", (draw(st.integers(2, 4)),))
    parents: dict[str, dict[str, str]] = {}
    if any("a" in t for t in tables) and draw(st.booleans()):
        up = {leaf: draw(st.sampled_from(["", "N1", "N2"])) for leaf in sorted(set(data["a"]))}
        if draw(st.booleans()):
            up["N2"] = "N1"
        used = {p for c, p in up.items() if p and c in data["a"]}
        used |= {up[c] for c in used if up.get(c)}
        parents["a"] = {c: p for c, p in up.items() if c in data["a"] or c in used}
    return pd.DataFrame(data), tables, rule, parents


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(linked_sets())
def test_every_linked_set_passes_its_joint_audit(case) -> None:
    """Random linked sets, with and without a code list, each checked by a linear programme
    over the finest cells written from the definition."""
    df, tables, rule, parents = case
    check_joint(df, tables, rule, parents=parents)


def test_linked_magnitude_tables_protect_every_primary_cell() -> None:
    df = pd.read_csv(SHARED_DATA / "testdata.csv")[["roof", "water", "urbrur", "income"]]
    tables = [["roof", "water"], ["roof", "urbrur"]]
    made = release_linked(df, tables, "income", Rule("p", (10.0,)))
    assert made.value == "sum" and (made.status == "primary").any()
    check_joint(df, tables, Rule("p", (10.0,)), "income")


def test_linked_tables_of_outside_data_with_a_code_list_pass_the_joint_audit() -> None:
    """sdcMicro's testdata: the relationship to the head by roof and by water, the
    relationships grouped into the nuclear family (head, partner, child: codes 1–3) and the
    others (a code list of code → parent), checked by the test's own linear programme over
    the finest cells."""
    df = pd.read_csv(SHARED_DATA / "testdata.csv")[["relat", "roof", "water"]].dropna()
    df["relat"] = "r" + df["relat"].astype(int).astype(str)
    groups = {c: "nuclear" if int(c[1:]) <= 3 else "other" for c in df["relat"].unique()}
    tables = [["relat", "roof"], ["relat", "water"]]
    made = release_linked(df, tables, rule=THREE, hierarchies={"relat": hierarchy(
        [*groups.items(), *((g, None) for g in set(groups.values()))])})
    assert made.finest.hierarchical and (made.status == "primary").any()
    check_joint(df, tables, THREE, parents={"relat": groups})


def test_households_are_the_unit_of_linked_tables() -> None:
    df = pd.read_csv(SHARED_DATA / "testdata.csv")
    made = release_linked(df, [["roof", "urbrur"], ["roof", "walls"]], rule=Rule(
        "threshold", (5,)), household="ori_hid")
    assert made.passes()
    assert set(made.frame()["unit"]) == {"distinct ori_hid"}


@pytest.mark.parametrize(("tables", "message"), [
    ([["a", "b"], ["c", "d"]], "span 4 columns"),
    ([["a", "b"], ["b", "a"]], "given twice"),
    ([["a", "a"]], "distinct columns"),
    ([], "at least one"),
    ([["a"]] * 21, "at most 20")])
def test_a_linked_set_that_cannot_be_built_is_refused(tables, message) -> None:
    df = pd.DataFrame({c: ["x", "y"] * 5 for c in "abcd"})
    with pytest.raises(SdcInputError, match=message):
        release_linked(df, tables)


def test_the_command_line_publishes_linked_tables(tmp_path: Path) -> None:
    data = tmp_path / "small.csv"
    SMALL.to_csv(data, index=False)
    out = tmp_path / "out.csv"
    r = run("tables", data, "--cross", "r,s", "--cross", "r,g", "--rule", "threshold:3",
            "-o", out)
    assert r.returncode == 0, r.stderr
    assert "2 linked tables" in r.stdout and "joint audit passed" in r.stdout
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert list(written.columns[:4]) == ["table", "r", "s", "g"]
    assert set(written["table"]) == {"r,s", "r,g"}
    counts = written.loc[written["count"] != "", "count"]
    assert counts.str.fullmatch(r"\d+").all()  # whole numbers beside the blanks
    js = run("tables", data, "--cross", "r,s", "--cross", "r,g", "--rule", "threshold:3",
             "--json")
    assert js.returncode == 0, js.stderr
    got = json.loads(js.stdout)
    assert got["audit_passes"] is True and got["tables"] == [["r", "s"], ["r", "g"]]
    for args, message in [(("--cross", "r,s", "--cross", "r,g", "--method", "dp"),
                           "suppression"),
                          (("--cross", "r,s", "--cross", "g", "--difference", "r=a,b"),
                           "one --cross")]:
        bad = run("tables", data, *args, "-o", tmp_path / "x.csv")
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and message in bad.stderr


def test_a_published_count_is_a_whole_number(tmp_path: Path) -> None:
    out = tmp_path / "one.csv"
    r = run("tables", SHARED_DATA / "actg175.csv", "--cross", "karnof,race", "-o", out)
    assert r.returncode == 0, r.stderr
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    shown = written.loc[written["count"] != "", "count"]
    assert len(shown) and shown.str.fullmatch(r"\d+").all()
    assert (written["count"] == "").any()  # a hidden cell is blank


def test_tables_are_grouped_by_the_columns_they_share() -> None:
    from sdc_core.tables.linked import groups

    assert groups([["a", "b"], ["c"], ["b", "d"], ["e", "c"]]) == [
        (("a", "b"), ("b", "d")), (("c",), ("e", "c"))]
    assert groups([["a"]]) == [(("a",),)]


def test_interval_protection_adds_cells_until_the_interval_reaches_it() -> None:
    """A dominated cell (one contributor of 1000) hidden with its smallest partner (120) can
    be anywhere in [0, 1120]: the p % rule's protection (100) holds, interval protection of
    100 % (up to 2000) does not, and the larger partner is hidden instead."""
    df = pd.DataFrame({"a": ["A"] + ["B"] * 3 + ["C"] * 10,
                       "y": [1000.0, 40, 40, 40] + [500.0] * 10})
    plain = release_table(df, ["a"], "y", rule=Rule("p", (10.0,)))
    shielded = release_table(df, ["a"], "y", rule=Rule("p", (10.0,)), protection=100)
    assert plain.audit.passes and shielded.audit.passes
    def hidden_value(made):
        return float(made.truth.frame.loc[made.frame["status"] == "secondary", "sum"].sum())
    assert hidden_value(plain) == 120.0 and hidden_value(shielded) == 5000.0
    for made, reach in ((plain, 1100.0), (shielded, 2000.0)):
        shown = {frozenset((("a", r["a"]),) if r["a"] != TOTAL else ()): float(r["sum"])
                 for _, r in made.frame.iterrows() if r["status"] == "published"}
        hidden = [frozenset((("a", r["a"]),)) for _, r in made.frame.iterrows()
                  if r["status"] != "published"]
        lo, hi, v = interior_intervals(df, ["a"], shown, hidden, "y")[
            frozenset((("a", "A"),))]
        assert v == 1000.0 and lo <= 0.0 + 1e-6 and hi >= reach - 1e-6
    assert shielded.to_json()["protection"] == 100
    with pytest.raises(SdcInputError, match="interval protection"):
        release_table(df, ["a"], method="dp", protection=10)


def test_linked_tables_take_interval_protection() -> None:
    df = pd.read_csv(SHARED_DATA / "testdata.csv")[["roof", "water", "urbrur", "income"]]
    made = release_linked(df, [["roof", "water"], ["roof", "urbrur"]], "income",
                          Rule("p", (10.0,)), protection=50)
    assert made.passes()
    found = made.audit.frame[made.audit.frame["primary"]]
    assert ((found["lo"] <= found["value"] * 0.5 + 1e-6)
            & (found["hi"] >= found["value"] * 1.5 - 1e-6)).all()
