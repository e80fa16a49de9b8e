"""Hierarchical code lists (sdc_core/tables/hierarchy.py, docs/tables.md, "Hierarchical code
lists"): the hostile corpus of hierarchy files, additivity at every level of the built table,
secondary suppression on it checked by the audit and by a linear programme written here from
the definition over the leaf cells, random tables and hierarchies, linked tables and the
command line."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from sdc_core.errors import SdcInputError
from sdc_core.tables.cell_rules import Rule, threshold_rule
from sdc_core.tables.crosstab import TOTAL, CrossTable, crosstab
from sdc_core.tables.hierarchy import (
    MAX_BYTES,
    MAX_CODES,
    MAX_DEPTH,
    Hierarchy,
    Prefixes,
    flat_parents,
    hierarchy,
    moves,
    read_hierarchy,
)
from sdc_core.tables.linked import release_linked
from sdc_core.tables.suppression_audit import MAX_CUBES, _axis_moves, secondary_suppression
from tests.cli_run import run
from tests.conftest import SHARED_DATA

NACE = [("03", None), ("0301", "03"), ("0302", "03"), ("04", None), ("0410", "04"),
        ("041a", "0410"), ("041b", "0410"), ("0420", "04")]

# -- the hostile corpus ------------------------------------------------------------------------

CODE_TEXT = ["<script>alert(1)</script>", "**bold** ![t](http://127.0.0.1:9/x.png)",
             "__import__('os').system('echo pwned')", "=cmd|' /C calc'!A0", "{{7*7}}",
             "'; DROP TABLE t; --", "${jndi:ldap://127.0.0.1:9/a}"]

BAD_JSON = {
    "a number as parent": '{"a": 3}',
    "a list as parent": '{"a": ["b"]}',
    "an object as parent": '{"a": {"b": null}}',
    "a bool as parent": '{"a": true}',
    "a list, not an object": '[["a", null]]',
    "a string, not an object": '"a"',
    "a key given twice": '{"a": null, "a": null}',
    "not JSON": "{a: b}",
    "a huge number": '{"a": ' + "9" * 5000 + "}",
    "nested past the parser": "[" * 100_000 + "]" * 100_000,
}

BAD_CSV = {
    "a cycle": "a,b\nb,c\nc,a\n",
    "a code its own parent": "a,a\n",
    "an orphan": "a,\nb,nowhere\n",
    "a code given twice": "a,\nb,a\nb,\n",
    "three fields": "a,b,c\n",
    "a blank code": ",a\na,\n",
    "the grand total's label": "Total,\n",
    "a control character": "a\x07b,\n",
    "a code too long": "x" * 201 + ",\n",
}


@pytest.mark.parametrize("name", sorted(BAD_JSON))
def test_a_hostile_json_hierarchy_is_refused_in_one_line(name: str) -> None:
    with pytest.raises(SdcInputError) as err:
        read_hierarchy(BAD_JSON[name].encode(), "h.json")
    assert "\n" not in str(err.value) and len(str(err.value)) < 200


@pytest.mark.parametrize("name", sorted(BAD_CSV))
def test_a_hostile_csv_hierarchy_is_refused_in_one_line(name: str) -> None:
    with pytest.raises(SdcInputError) as err:
        read_hierarchy(BAD_CSV[name].encode(), "h.csv")
    assert "\n" not in str(err.value) and len(str(err.value)) < 200


def test_huge_deep_and_binary_hierarchies_are_refused() -> None:
    many = "".join(f"c{i},\n" for i in range(MAX_CODES + 1)).encode()
    with pytest.raises(SdcInputError, match="more than 100,000 codes"):
        read_hierarchy(many, "h.csv")
    with pytest.raises(SdcInputError, match="bytes; at most"):
        read_hierarchy(b"a,\n" * (MAX_BYTES // 3 + 1), "h.csv")
    chain = {f"n{i}": (f"n{i - 1}" if i else None) for i in range(MAX_DEPTH + 1)}
    with pytest.raises(SdcInputError, match="deeper than 20 levels"):
        read_hierarchy(json.dumps(chain).encode(), "h.json")
    deep_ok = {f"n{i}": (f"n{i - 1}" if i else None) for i in range(MAX_DEPTH)}
    assert read_hierarchy(json.dumps(deep_ok).encode(), "h.json").depth(f"n{MAX_DEPTH - 1}") \
        == MAX_DEPTH
    with pytest.raises(SdcInputError, match="not UTF-8"):
        read_hierarchy(b"\xff\xfe\x00a,\n", "h.csv")
    with pytest.raises(SdcInputError, match="cycle"):
        hierarchy([("a", "b"), ("b", "a")])
    with pytest.raises(SdcInputError, match="must be text"):
        hierarchy([(3, None)])


def test_code_text_is_data_it_comes_out_as_the_same_text() -> None:
    pairs = {"top": None} | {c: "top" for c in CODE_TEXT}
    h = read_hierarchy(json.dumps(pairs).encode(), "h.json")
    df = pd.DataFrame({"a": CODE_TEXT * 3})
    t = crosstab(df, ["a"], hierarchies={"a": h})
    assert t.frame["a"].tolist() == sorted(CODE_TEXT) + ["top", TOTAL]
    assert t.frame["count"].tolist() == [3] * len(CODE_TEXT) + [21, 21]
    # the same through CSV, quoted as CSV quotes them
    rows = "".join(f'"{c.replace(chr(34), chr(34) * 2)}",top\n' for c in CODE_TEXT)
    assert dict(read_hierarchy(("top,\n" + rows).encode(), "h.csv").parent) == pairs


def test_the_data_must_fit_the_hierarchy() -> None:
    h = hierarchy(NACE)
    with pytest.raises(SdcInputError, match="does not hold"):
        crosstab(pd.DataFrame({"a": ["0301", "9999"]}), ["a"], hierarchies={"a": h})
    with pytest.raises(SdcInputError, match="must be a leaf"):  # an inner node as a data code
        crosstab(pd.DataFrame({"a": ["0301", "03"]}), ["a"], hierarchies={"a": h})
    with pytest.raises(SdcInputError, match="not a column of the table"):
        crosstab(pd.DataFrame({"a": ["0301"]}), ["a"], hierarchies={"b": h})
    with pytest.raises(SdcInputError, match="increasing"):
        Prefixes((4, 2))


# -- the table ---------------------------------------------------------------------------------

def _leaves(h: Hierarchy, code: str) -> set[str]:
    kids = [c for c, p in h.parent.items() if p == code]
    return {code} if not kids else set().union(*(_leaves(h, k) for k in kids))


def _check_additivity(t: CrossTable, hs: dict[str, Hierarchy], df: pd.DataFrame) -> None:
    """Every cell from the records (a leaf cell: its records; a node: the records of its
    leaves), and every inner node the sum of its children on every axis."""
    cols = list(t.columns)
    lab = t.frame[cols].astype(str)
    for r, row in lab.iterrows():
        keep = np.ones(len(df), dtype=bool)
        for c in cols:
            if row[c] == TOTAL:
                continue
            under = _leaves(hs[c], row[c]) if c in hs else {row[c]}
            keep &= df[c].astype(str).isin(under).to_numpy()
        assert t.frame.loc[r, "count"] == keep.sum()
    index = {tuple(k): i for i, k in enumerate(lab.itertuples(index=False))}
    counts = t.frame["count"].to_numpy()
    for d, c in enumerate(cols):
        parent = dict(hs[c].parent) if c in hs else {}
        for key, i in index.items():
            node = key[d]
            if node == TOTAL:
                kids = [k for k in t.levels[d] + t.nodes[d] if parent.get(k) is None] \
                    if t.nodes else list(t.levels[d])
            else:
                kids = [k for k in t.levels[d] + (t.nodes[d] if t.nodes else ())
                        if parent.get(k) == node]
            if not kids:
                continue
            total = sum(counts[index[key[:d] + (k,) + key[d + 1:]]] for k in kids)
            assert counts[i] == total, (key, kids)


def test_every_inner_node_is_the_sum_of_its_children_on_every_axis() -> None:
    rng = np.random.default_rng(3)
    h = hierarchy(NACE)
    leaves = ["0301", "0302", "041a", "041b", "0420"]
    df = pd.DataFrame({"a": rng.choice(leaves, 200), "b": rng.choice(list("xyz"), 200),
                       "c": rng.choice(["11", "12", "21"], 200)})
    hs = {"a": h, "c": Prefixes((1,)).for_codes("c", ["11", "12", "21"])}
    t = crosstab(df, ["a", "b", "c"], hierarchies={"a": h, "c": Prefixes((1,))})
    assert t.shape == (5 + 3 + 1, 4, 3 + 2 + 1)
    assert list(t.nodes[0]) == ["03", "04", "0410"] and list(t.nodes[2]) == ["1", "2"]
    # one constraint per inner position × the other axes' positions
    assert t.constraints.shape[0] == 4 * 4 * 6 + 1 * 9 * 6 + 3 * 9 * 4
    assert np.abs(t.constraints @ t.values).max() == 0
    _check_additivity(t, hs, df)


def test_a_magnitude_table_s_nodes_rank_their_contributors() -> None:
    df = pd.DataFrame({"a": ["0301", "0302", "0302", "041a", "041b", "0420"],
                       "u": [1, 1, 2, 3, 3, 4], "y": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]})
    t = crosstab(df, ["a"], sum_column="y", unit="u", hierarchies={"a": hierarchy(NACE)})
    f = t.frame.set_index("a")
    assert f.loc["03", ["sum", "x1", "x2", "persons"]].tolist() == [6.0, 3.0, 3.0, 2]
    assert f.loc["0410", ["sum", "x1", "x2", "persons"]].tolist() == [9.0, 9.0, 0.0, 1]
    assert f.loc["04", ["sum", "x1", "x2", "persons"]].tolist() == [15.0, 9.0, 6.0, 2]
    assert f.loc[TOTAL, ["sum", "x1", "x2", "persons"]].tolist() == [21.0, 9.0, 6.0, 4]


def test_a_move_keeps_every_sum_of_its_axis() -> None:
    h = hierarchy(NACE)
    lv = ["0301", "0302", "041a", "041b", "0420"]
    t = crosstab(pd.DataFrame({"a": lv}), ["a"], hierarchies={"a": h})
    a = t.constraints.toarray()
    tree = t.tree[0]
    for i in range(len(tree)):
        found = moves(tree, i, 1000)
        assert found, i
        for pos, sign in found:
            v = np.zeros(len(tree))
            v[pos] = sign
            assert pos[0] == i and sign[0] == 1 and np.abs(a @ v).max() == 0


# -- suppression, checked from the definition ------------------------------------------------

def _reader_interval(t: CrossTable, hidden: np.ndarray, cell: int) -> tuple[float, float]:
    """min and max of a cell over the non-negative leaf tables that give every published cell
    its value: one variable per leaf cell, a published cell the sum of its leaves."""
    cols = list(t.columns)
    lab = t.frame[cols].astype(str).to_numpy()
    leaves = [i for i in range(len(lab)) if not t.margin[i]]
    under = []
    parents = [dict(zip(list(t.levels[d]) + list(t.nodes[d] if t.nodes else ()) + [TOTAL],
                        t.tree[d])) for d in range(len(cols))]
    names = [list(t.levels[d]) + list(t.nodes[d] if t.nodes else ()) + [TOTAL]
             for d in range(len(cols))]

    def covers(d: int, node: str, leaf: str) -> bool:
        pos = names[d].index(leaf)
        while pos >= 0:
            if names[d][pos] == node:
                return True
            pos = parents[d][names[d][pos]]
        return False
    for i in range(len(lab)):
        under.append([j for j, li in enumerate(leaves)
                      if all(covers(d, lab[i][d], lab[li][d]) for d in range(len(cols)))])
    x = t.values
    a_eq = np.zeros((int((~hidden).sum()), len(leaves)))
    for r, i in enumerate(np.flatnonzero(~hidden)):
        a_eq[r, under[i]] = 1
    c = np.zeros(len(leaves))
    c[under[cell]] = 1
    lo = linprog(c, A_eq=a_eq, b_eq=x[~hidden], bounds=(0, None), method="highs")
    hi = linprog(-c, A_eq=a_eq, b_eq=x[~hidden], bounds=(0, None), method="highs")
    assert lo.status == 0
    return float(lo.fun), (np.inf if hi.status == 3 else float(-hi.fun))


def _check_protected(t: CrossTable, threshold: int, method: str) -> int:
    rules = threshold_rule(t, threshold)
    r = secondary_suppression(t, rules, method=method)  # type: ignore[arg-type]
    assert r.report.passes, (method, r.report.findings(t.columns))
    hidden = r.suppressed
    for cell in np.flatnonzero(hidden):
        lo, hi = _reader_interval(t, hidden, int(cell))
        assert hi > lo + 1e-6, (method, cell)  # no hidden cell pinned
        if rules.primary[cell]:
            assert lo <= t.values[cell] - rules.lower[cell] + 1e-6
            assert hi >= t.values[cell] + rules.upper[cell] - 1e-6
    return int((r.status == "secondary").sum())


@pytest.mark.parametrize("method", ["milp", "gauss", "hypercube", "auto"])
def test_suppression_protects_every_primary_cell_of_a_hierarchical_table(method: str) -> None:
    rng = np.random.default_rng(11)
    leaves = ["0301", "0302", "041a", "041b", "0420"]
    df = pd.DataFrame({"a": rng.choice(leaves, 60, p=[.3, .1, .05, .25, .3]),
                       "b": rng.choice(list("xyz"), 60)})
    t = crosstab(df, ["a", "b"], hierarchies={"a": hierarchy(NACE)})
    secondary = _check_protected(t, 4, method)
    assert secondary > 0  # the primary cells alone would give themselves away


@st.composite
def _tables(draw: st.DrawFn) -> tuple[pd.DataFrame, dict[str, Hierarchy]]:
    n_leaves = draw(st.integers(2, 6))
    n_nodes = draw(st.integers(1, 3))
    nodes = [f"n{i}" for i in range(n_nodes)]
    parent: dict[str, str | None] = {}
    for i, n in enumerate(nodes):  # a node under an earlier node or the grand total: no cycle
        parent[n] = draw(st.sampled_from([None] + nodes[:i]))
    leaves = [f"l{i}" for i in range(n_leaves)]
    for leaf in leaves:
        parent[leaf] = draw(st.sampled_from([None] + nodes))
    used = {p for p in parent.values() if p is not None}
    pairs = [(c, p) for c, p in parent.items() if c in leaves or c in used]
    h = hierarchy(pairs)
    n = draw(st.integers(5, 40))
    a = draw(st.lists(st.sampled_from(leaves), min_size=n, max_size=n))
    b = draw(st.lists(st.sampled_from(["x", "y", "z"]), min_size=n, max_size=n))
    return pd.DataFrame({"a": a, "b": b}), {"a": h}


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(made=_tables(), two=st.booleans(), method=st.sampled_from(["milp", "gauss",
                                                                   "hypercube"]))
def test_random_hierarchies_add_up_and_their_suppression_protects(
        made: tuple[pd.DataFrame, dict[str, Hierarchy]], two: bool, method: str) -> None:
    df, hs = made
    cols = ["a", "b"] if two else ["a"]
    t = crosstab(df, cols, hierarchies=hs)
    leaves_used = sorted(set(df["a"]))
    assert list(t.levels[0]) == leaves_used
    assert np.abs(t.constraints @ t.values).max() == 0
    _check_additivity(t, {"a": hs["a"].for_codes("a", leaves_used)}, df)
    if (threshold_rule(t, 3).primary & (t.values > 0)).any():
        _check_protected(t, 3, method)


# -- outside data, linked tables, the command line --------------------------------------------

def test_ages_by_decade_from_their_first_digit() -> None:
    df = pd.read_csv(SHARED_DATA / "adult.csv", sep=";", usecols=["age", "sex"])
    df["age"] = df["age"].astype(str)
    t = crosstab(df, ["age", "sex"], hierarchies={"age": Prefixes((1,))})
    f = t.frame.set_index(["age", "sex"])["count"]
    for decade in sorted({a[0] for a in df["age"]}):
        want = int(df["age"].str.startswith(decade).sum())
        assert f[(decade, TOTAL)] == want
        assert f[(decade, "Female")] == int((df["age"].str.startswith(decade)
                                             & (df["sex"] == "Female")).sum())
    assert f[(TOTAL, TOTAL)] == len(df) == 30162


def test_linked_tables_take_the_hierarchies_of_their_columns() -> None:
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"a": rng.choice(["0301", "0302", "041a", "041b", "0420"], 80),
                       "b": rng.choice(list("xy"), 80), "c": rng.choice(list("uvw"), 80)})
    made = release_linked(df, [["a", "b"], ["a", "c"]], rule=Rule("threshold", (4,)),
                          hierarchies={"a": hierarchy(NACE)}, secondary="milp")
    assert made.passes()
    out = made.frame()
    ab = out[out["table"] == "a,b"].set_index(["a", "b"])["count"]
    assert set(ab.index.get_level_values(0)) == {"0301", "0302", "041a", "041b", "0420", "03",
                                                 "04", "0410", TOTAL}
    # the node 03 is a row of both tables with one status
    status = out[(out["a"] == "03") & ((out["b"] == TOTAL) if "b" in out else True)]
    assert len(set(status["status"])) == 1


def test_the_command_line_writes_inner_nodes_as_sums_of_their_children(tmp_path) -> None:
    data = tmp_path / "d.csv"
    rng = np.random.default_rng(2)
    pd.DataFrame({"a": rng.choice(["0301", "0302", "041a", "041b", "0420"], 300),
                  "b": rng.choice(list("xy"), 300)}).to_csv(data, index=False)
    hfile = tmp_path / "h.json"
    hfile.write_text(json.dumps(dict(NACE)))
    out = tmp_path / "out.csv"
    done = run("tables", data, "--cross", "a,b", "--hierarchy", f"a={hfile}", "-o", out)
    assert done.returncode == 0, done.stderr
    got = pd.read_csv(out, dtype={"a": str, "b": str})
    assert "audit passed" in done.stdout
    truth = crosstab(pd.read_csv(data, dtype=str), ["a", "b"],
                     hierarchies={"a": hierarchy(NACE)})
    f = truth.frame.set_index(["a", "b"])["count"]
    for b in ["x", "y", TOTAL]:
        assert f[("0410", b)] == f[("041a", b)] + f[("041b", b)]
        assert f[("04", b)] == f[("0410", b)] + f[("0420", b)]
    shown = got.set_index(["a", "b"])["count"].dropna()
    assert len(got) == len(truth.frame) and set(got["a"]) >= {"03", "04", "0410"}
    assert all(shown[k] == f[k] for k in shown.index)
    for key in itertools.product(["03", "04", "0410"], ["x", "y", TOTAL]):
        assert key in set(got.set_index(["a", "b"]).index)


def test_codes_of_the_list_no_record_falls_under_are_named(tmp_path) -> None:
    """A code list larger than the data (a whole classification): the codes with no record
    below them are left out of the table, and the command line says which, as text."""
    data = tmp_path / "d.csv"
    pd.DataFrame({"a": ["A01"] * 6 + ["A02"] * 6, "b": list("xy") * 6}).to_csv(data,
                                                                                index=False)
    hfile = tmp_path / "h.csv"
    hfile.write_text("code,parent\nA,\nA01,A\nA02,A\nB,\nB10,B\n<b>x</b>,B\n")
    done = run("tables", data, "--cross", "a,b", "--hierarchy", f"a={hfile}", "-o",
               tmp_path / "o.csv")
    assert done.returncode == 0, done.stderr
    note = [line for line in done.stdout.splitlines() if line.startswith("note:")]
    assert note == ["note: 3 codes of the code list of 'a' have no record and are left out "
                    "('<b>x</b>', 'B', 'B10')"]
    got = pd.read_csv(tmp_path / "o.csv", dtype=str)
    assert "A" in set(got["a"]) and not set(got["a"]) & {"B", "B10", "<b>x</b>"}
    linked = run("tables", data, "--cross", "a,b", "--cross", "a", "--hierarchy", f"a={hfile}",
                 "--json")
    assert json.loads(linked.stdout)["unused_codes"] == {"a": ["<b>x</b>", "B", "B10"]}
    flat = run("tables", data, "--cross", "a,b", "--hierarchy", "a=prefix:1", "--json")
    assert json.loads(flat.stdout)["unused_codes"] == {"a": []}


@pytest.mark.parametrize("spec, message", [
    ("a=prefix:4,2", "increasing"), ("a=prefix:x", "whole numbers"), ("a", "COLUMN=FILE"),
    ("a=missing.csv", "cannot read the hierarchy"), ("z=prefix:1", "not a column"),
])
def test_the_command_line_refuses_a_bad_hierarchy_in_one_line(tmp_path, spec: str,
                                                               message: str) -> None:
    data = tmp_path / "d.csv"
    pd.DataFrame({"a": ["0301", "0302"] * 5, "b": list("xy") * 5}).to_csv(data, index=False)
    done = run("tables", data, "--cross", "a,b", "--hierarchy", spec, "-o", tmp_path / "o.csv")
    assert done.returncode == 2 and message in done.stderr
    assert done.stderr.count("\n") == 1


def test_the_command_line_refuses_a_hostile_hierarchy_file(tmp_path) -> None:
    data = tmp_path / "d.csv"
    pd.DataFrame({"a": ["0301", "0302"] * 5}).to_csv(data, index=False)
    for name, text in [("h.json", BAD_JSON["a list as parent"]), ("h.csv", BAD_CSV["a cycle"]),
                       ("h.json", '{"0301": "<b>x</b>"}')]:
        hfile = tmp_path / name
        hfile.write_text(text)
        done = run("tables", data, "--cross", "a", "--hierarchy", f"a={hfile}", "-o",
                   tmp_path / "o.csv")
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    big = tmp_path / "big.csv"
    big.write_bytes(b"a,\n" * (MAX_BYTES // 3 + 1))
    done = run("tables", data, "--cross", "a", "--hierarchy", f"a={big}", "-o",
               tmp_path / "o.csv")
    assert done.returncode == 2 and "at most" in done.stderr
    done = run("tables", data, "--cross", "a", "--hierarchy", "a=prefix:2", "--method", "dp",
               "-o", tmp_path / "o.csv")
    assert done.returncode == 2 and "suppression" in done.stderr


@pytest.mark.parametrize("levels", [4, 1_090])
def test_a_flat_axis_offers_every_partner_and_the_margin(levels: int) -> None:
    """The hypercube's moves on a flat axis are those of the code list's definition
    (:func:`moves`), in the same order, however many levels: a 1,090-level axis (ACTG 175's
    cd80) keeps its margin move past the cube limit of 1,000."""
    tree = flat_parents(levels)
    for i in (0, levels // 2, levels):  # a level, another, the margin
        pos, sign = _axis_moves(tree, i, MAX_CUBES)
        want = moves(tree, i, 10 * levels)
        assert len(pos) == len(want) == levels
        assert [list(p) for p in pos] == [q for q, _ in want]
        assert [list(s) for s in sign] == [s for _, s in want]
    assert list(_axis_moves(tree, 0, MAX_CUBES)[0][-1]) == [0, levels]  # the margin
