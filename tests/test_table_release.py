"""Publishing a cross table (sdc_core/tables/table_release.py, docs/tables.md "Publishing a table"):
the three methods give one row per cell and margin in the cross table's order, the suppressed
table passes its audit and its hidden cells carry the audit's intervals, the DP and cell-key
tables are the core functions' own, and ``tables --cross`` writes exactly that table; hostile
input is refused in one line."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from sdc_core.errors import SdcInputError
from sdc_core.tables.cell_rules import Rule, dominance_rule, p_rule, threshold_rule
from sdc_core.tables.crosstab import TOTAL, crosstab
from sdc_core.tables.suppression_audit import audit
from sdc_core.tables.table_release import release_table
from sdc_core.teaching_households import HOUSEHOLDS_PATH
from tests.cli_run import run


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    return pd.read_csv(HOUSEHOLDS_PATH)


@pytest.mark.parametrize("method", ["suppress", "dp", "ckm"])
def test_one_row_per_cell_and_margin_in_the_tables_order(df, method):
    made = release_table(df, ["region", "agegroup", "sex"], method=method,
                         rule=Rule("threshold", (40,)))
    table = crosstab(df, ["region", "agegroup", "sex"])
    cols = list(table.columns)
    assert made.frame[cols].astype(str).equals(table.frame[cols].astype(str))
    assert set(made.frame["status"]) <= {"published", "primary", "secondary", "perturbed"}
    shown = made.frame["count"].notna()
    if method == "suppress":
        same = made.frame.loc[shown, "count"].to_numpy(dtype=float)
        assert (same == table.frame.loc[shown, "count"].to_numpy(dtype=float)).all()
        assert (made.frame.loc[~shown, "status"].isin(["primary", "secondary"])).all()
        assert made.audit is not None and made.audit.passes
        direct = audit(table, ~shown.to_numpy(), None).frame
        hidden = made.hidden()
        assert hidden["lo"].tolist() == direct["lo"].tolist()
        assert hidden["hi"].tolist() == direct["hi"].tolist()
        # a hidden cell is never pinned by what is published
        assert (hidden["hi"] > hidden["lo"]).all()
    else:
        assert (made.frame.loc[~shown, "status"] == "primary").all()
    assert made.utility.cells + made.utility.blank == int((~table.margin).sum())


def test_a_threshold_hides_small_cells_and_their_partners(df):
    made = release_table(df, ["district", "tenure"], rule=Rule("threshold", (20,)))
    primary = made.frame["status"] == "primary"
    counts = crosstab(df, ["district", "tenure"]).frame["count"]
    assert ((counts[primary] > 0) & (counts[primary] < 20)).all()
    assert (made.frame["status"] == "secondary").any()  # one hidden cell alone is recovered
    # no published row or column of the table leaves exactly one hidden cell beside its total
    frame = made.frame
    for axis in ("district", "tenure"):
        other = "tenure" if axis == "district" else "district"
        for _, group in frame[frame[other] != TOTAL].groupby(axis):
            inner = group[group[other] != TOTAL]
            assert inner["count"].isna().sum() != 1


def test_dp_is_seeded_and_its_margins_are_sums_of_noisy_cells(df):
    a = release_table(df, ["region", "sex"], method="dp", epsilon=0.5, seed=7)
    b = release_table(df, ["region", "sex"], method="dp", epsilon=0.5, seed=7)
    c = release_table(df, ["region", "sex"], method="dp", epsilon=0.5, seed=8)
    pd.testing.assert_frame_equal(a.frame, b.frame)
    assert not a.frame["count"].equals(c.frame["count"])
    assert a.epsilon == pytest.approx(0.5)
    cells = a.frame[~a.frame["margin"]]
    for region, group in cells.groupby("region"):
        margin = a.frame[(a.frame["region"] == region) & (a.frame["sex"] == TOTAL)]
        assert float(margin["count"].iloc[0]) == pytest.approx(float(group["count"].sum()))
    assert (a.frame["accuracy"] > 0).all()


def test_the_cell_key_method_is_consistent_across_tables(df):
    """The same records give the same published count in any table: the one-way table of
    region equals the region margins of region × agegroup."""
    one = release_table(df, ["region"], method="ckm", seed=3)
    two = release_table(df, ["region", "agegroup"], method="ckm", seed=3)
    margins = two.frame[two.frame["agegroup"] == TOTAL].set_index("region")["count"]
    own = one.frame.set_index("region")["count"]
    assert own.astype(float).equals(margins.astype(float).reindex(own.index))
    assert (one.frame["count"].dropna() % 5 == 0).all()  # the default ptable rounds to 5


@pytest.mark.parametrize("rule, words", [
    ("threshold", "takes 1 number"), ("threshold:x", "must be numbers"),
    ("dominance:2", "takes 2 number"), ("median:3", "rule must be"),
    ("threshold:2.5", "whole number"), ("p:nan", "p must be a number from 0.1 to 100"),
])
def test_bad_rules_are_refused(rule, words):
    with pytest.raises(SdcInputError, match=words):
        Rule.parse(rule)


@pytest.mark.parametrize("name, parameters, words", [
    ("threshold", (), "rule threshold takes 1 number"),
    ("dominance", (2,), r"rule dominance takes 2 number\(s\): dominance:2,85"),
    ("median", (3,), "rule must be threshold:T, dominance:N,K or p:P, not 'median'"),
    (["p"], (10,), "rule must be"), ("<b>p</b>", (10,), "rule must be"),
    ("p", 10, "rule p takes 1 number"), ("p", "10", "rule p takes 1 number"),
    ("p", ("10",), "p must be a number from 0.1 to 100, not '10'"),
    ("threshold", (True,), "t must be a whole number"),
    ("threshold", (2.5,), "t must be a whole number from 1 to 1,000, not 2.5"),
    ("p", (float("nan"),), "p must be a number from 0.1 to 100, not nan"),
    ("dominance", (2, 1e300), "k must be a number from 1 to 100"),
])
def test_a_rule_is_checked_when_it_is_made(name, parameters, words):
    """Issue 52: a Rule refuses what parse_rule refused, in the same words, however it is
    made (the page builds it from its fields, the command line from its text)."""
    with pytest.raises(SdcInputError, match=words):
        Rule(name, parameters)


@pytest.mark.parametrize("rule", ["threshold:5", ("threshold", 5), None])
def test_release_table_takes_a_rule_not_its_text(rule):
    """Issue 52: the core reads no rule text; text handed to it is refused in one line that
    says how to read it."""
    with pytest.raises(SdcInputError, match="the primary rule must be a Rule"):
        release_table(pd.DataFrame({"a": list("xxy")}), ["a"], rule=rule)


@pytest.mark.parametrize("text", ["threshold:5", "threshold:1000", "dominance:2,85",
                                  "dominance:10,99.5", "p:10", "p:0.1", "p:12.3456789"])
def test_a_rules_text_is_the_text_it_was_read_from(text):
    """Issue 52: reports, JSON and audits print ``Rule.text``, the text the rule had before it
    was a value; the numbers are those of the text."""
    rule = Rule.parse(text)
    assert rule.text == str(rule) == text
    name, _, numbers = text.partition(":")
    assert rule == Rule(name, tuple(float(v) for v in numbers.split(",")))
    assert rule.parameters == tuple(float(v) for v in numbers.split(","))


#: Numbers a rule cannot use (issue 51): non-finite, out of range, or so large (or small) that a
#: protection 100/k · x or p/100 · x overflows; ``p:1e308`` printed numpy's RuntimeWarning with
#: a file path and went on
UNUSABLE = [
    ("p:1e308", r"p must be a number from 0\.1 to 100, not 1e\+308"),
    ("p:1e300", "p must be a number from 0.1 to 100"), ("p:101", "p must be a number from"),
    ("p:1e-320", "p must be a number from"), ("p:0.05", "p must be a number from"),
    ("p:inf", "p must be a number from 0.1 to 100, not inf"),
    ("p:-inf", "p must be a number from 0.1 to 100, not -inf"),
    ("p:nan", "p must be a number from 0.1 to 100, not nan"),
    ("dominance:2,1e-310", r"k must be a number from 1 to 100, not 1e-310"),
    ("dominance:2,0.5", "k must be a number from 1 to 100"),
    ("dominance:2,1e300", "k must be a number from 1 to 100"),
    ("dominance:1e300,85", r"n must be a whole number from 1 to 10, not 1e\+300"),
    ("dominance:11,85", "n must be a whole number from 1 to 10"),
    ("dominance:0,85", "n must be a whole number from 1 to 10"),
    ("threshold:1e300", r"t must be a whole number from 1 to 1,000, not 1e\+300"),
    ("threshold:9223372036854775808", "t must be a whole number from 1 to 1,000"),
    ("threshold:1001", "t must be a whole number from 1 to 1,000"),
    ("threshold:0", "t must be a whole number from 1 to 1,000"),
    ("threshold:2.5", "t must be a whole number from 1 to 1,000, not 2.5"),
]


@pytest.mark.parametrize(("rule", "words"), UNUSABLE)
def test_a_rule_number_it_cannot_use_is_refused_in_one_line(rule, words, tmp_path):
    """The command line, with warnings as errors (``-W error``): exit 2 and one line, no
    warning; the Python API refuses it the same way."""
    import warnings

    data = tmp_path / "amounts.csv"
    rows = ["a,b,amount"] + [f"{'xyz'[i % 3]},{'uv'[i % 2]},{1000 * (i + 1)}" for i in range(30)]
    data.write_text("\n".join(rows) + "\n")
    summed = [] if rule.startswith("threshold") else ["--sum", "amount"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        done = run("tables", data, "--cross", "a,b", *summed, "--rule", rule, "--json")
    assert done.returncode == 2 and done.stdout == "", done.stderr
    line = done.stderr.removesuffix("\n")
    assert "\n" not in line and len(line) < 200 and "Warning" not in line, line
    assert re.search(f"^sdc_core: error: {words}", line), line
    frame = pd.read_csv(data)
    with pytest.raises(SdcInputError, match=words):
        release_table(frame, ["a", "b"], None if not summed else "amount",
                      rule=Rule.parse(rule))


@pytest.mark.parametrize(("function", "kwargs", "words"), [
    (threshold_rule, {"t": 10**400}, "t must be a whole number from 1 to 1,000, not 1000"),
    (threshold_rule, {"t": 5, "pct": 1e308}, "pct must be a number from 0.1 to 100"),
    (dominance_rule, {"n": 2, "k": float("nan")}, "k must be a number from 1 to 100, not nan"),
    (dominance_rule, {"n": True, "k": 85}, "n must be a whole number from 1 to 10, not True"),
    (p_rule, {"p": "10"}, "p must be a number from 0.1 to 100, not '10'"),
    (p_rule, {"p": 1e308}, "p must be a number from 0.1 to 100, not 1e\\+308"),
])
def test_the_rule_functions_check_their_numbers(function, kwargs, words):
    table = crosstab(pd.DataFrame({"a": list("xxy"), "y": [1.0, 2.0, 3.0]}), ["a"],
                     sum_column="y")
    with pytest.raises(SdcInputError, match=words) as err:
        function(table, **kwargs)
    assert len(str(err.value)) < 120


def test_amounts_too_large_to_stay_exact_are_refused_before_any_rule(tmp_path):
    """Amounts of 1e306 to 1e308 summed to infinity or overflowed the protection 100/k · x and
    the comparison's whole numbers (RuntimeWarnings, an internal error under ``-W error``); a
    sum column whose largest amount passes 2^53 is refused in one line, in a real process
    run with ``-W error``."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    for big in (1e308, 1e306, 2.0**53 + 2):
        data = tmp_path / "big.csv"
        rows = ["a,b,y"] + [f"{'xz'[i % 2]},{'uv'[i % 3 > 0]},{big if i % 5 == 0 else 7}"
                            for i in range(40)]
        data.write_text("\n".join(rows) + "\n")
        for rule in ("p:10", "dominance:1,1"):
            done = subprocess.run([sys.executable, "-W", "error", "-m", "sdc_core", "tables",
                                   str(data), "--cross", "a,b", "--sum", "y", "--rule", rule,
                                   "--json"], cwd=ROOT, capture_output=True, text=True,
                                  timeout=120)
            assert done.returncode == 2 and done.stdout == "", (big, rule, done.stderr)
            assert re.fullmatch(r"sdc_core: error: sum column 'y' holds amounts adding up to "
                                r"more than 2\^53 \(9,007,199,254,740,992\)[^\n]*\n",
                                done.stderr), done.stderr
    rows = ["a,b,y"] + [f"{'xz'[i % 2]},{'uv'[i % 3 > 0]},{1000 + i}" for i in range(40)]
    data.write_text("\n".join(rows) + "\n")  # p/100 · x₁ = 1e306 · 1039 overflowed
    done = subprocess.run([sys.executable, "-W", "error", "-m", "sdc_core", "tables", str(data),
                           "--cross", "a,b", "--sum", "y", "--rule", "p:1e308", "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr == "sdc_core: error: p must be a number from 0.1 to 100, not 1e+308\n"


def test_a_sum_column_may_add_up_to_2_to_the_53():
    at_most = pd.DataFrame({"a": ["x", "y"], "y": [2.0**52, 2.0**52]})
    assert crosstab(at_most, ["a"], sum_column="y").values.max() == 2.0**53
    with pytest.raises(SdcInputError, match=r"adding up to more than 2\^53"):
        crosstab(at_most.assign(y=[2.0**52, 2.0**52 + 2]), ["a"], sum_column="y")


def test_the_command_line_writes_the_published_table(df, tmp_path):
    out = tmp_path / "t.csv"
    done = run("tables", HOUSEHOLDS_PATH, "--cross", "district,tenure", "--rule", "threshold:20",
               "-o", out)
    assert done.returncode == 0, done.stderr
    written = pd.read_csv(out, keep_default_na=False, dtype=str)
    assert list(written.columns) == ["district", "tenure", "count", "status", "unit"]
    assert set(written["unit"]) == {"records"}
    made = release_table(df, ["district", "tenure"], rule=Rule("threshold", (20,)))
    assert written["status"].tolist() == made.frame["status"].tolist()
    blank = written["count"] == ""
    assert blank.tolist() == made.frame["count"].isna().tolist()
    assert (written.loc[written["district"] == TOTAL, "tenure"].tolist()
            == ["owner", "renter", "social", TOTAL])
    js = json.loads(run("tables", HOUSEHOLDS_PATH, "--cross", "district,tenure", "--rule",
                        "threshold:20", "--json").stdout)
    assert js["audit_passes"] is True
    assert [h["lo"] for h in js["hidden"]] == made.hidden()["lo"].tolist()
    assert len(js["hidden"]) == int(made.frame["count"].isna().sum())


@pytest.mark.parametrize("args, words", [
    (["--cross", "region,nope", "-o", "x.csv"], "unknown table column"),
    (["--cross", "region,sex,tenure,htype", "-o", "x.csv"], "1 to 3 columns"),
    (["--cross", "region", "--sum", "sex", "-o", "x.csv"], "sex"),
    (["--cross", "region", "--sum", "income", "--method", "dp", "-o", "x.csv"],
     "give --clip U"),
    (["--cross", "region", "--method", "dp", "--epsilon", "-1", "-o", "x.csv"], "epsilon"),
    (["--cross", "region", "-o", "x.txt"], "output must end in"),
    (["--cross", "region"], "give -o"),
    (["--cross", "region", "--question", "sex", "-o", "x.csv"], "not both"),
])
def test_bad_cross_tables_exit_2_with_one_line(args, words, tmp_path):
    fixed = [str(tmp_path / a) if a.startswith("x.") else a for a in args]
    done = run("tables", HOUSEHOLDS_PATH, *fixed)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert words in done.stderr


def test_hostile_labels_stay_data_in_the_csv(tmp_path):
    df = pd.DataFrame({"<b>a</b>": ["=cmd|' /C calc'!A0", "+1", "x"] * 10,
                       "b": ["u", "v"] * 15})
    src = tmp_path / "h.csv"
    df.to_csv(src, index=False)
    out = tmp_path / "t.csv"
    done = run("tables", src, "--cross", "<b>a</b>,b", "-o", out)
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert "\n=cmd" not in text and "\n+1" not in text  # neutralised for spreadsheets
    assert np.isfinite(pd.read_csv(out)["count"].dropna()).all()


def test_the_cell_key_method_reads_levels_as_the_cross_table_does():
    """Dates (and any kind whose text differs between a value and its column) label the
    records as the cross table labels its levels, so every record is counted; a level only
    records left out hold (a blank in the other column) is an empty cell, published 0."""
    df = pd.DataFrame({"d": pd.to_datetime(["2020-01-01"] * 30 + ["2021-01-01"] * 20
                                           + ["2022-01-01"] * 3),
                       "s": ["a", "b"] * 25 + [None] * 3})
    made = release_table(df, ["d", "s"], method="ckm", threshold=0)
    truth = made.truth.frame["count"].to_numpy(dtype=float)
    got = made.frame["count"].to_numpy(dtype=float)
    assert not np.isnan(got).any()
    assert got[-1] == 50  # the grand total: every record with no blank (a multiple of 5)
    empty = made.frame["d"].astype(str).str.startswith("2022")
    assert (truth[empty.to_numpy()] == 0).all() and (got[empty.to_numpy()] == 0).all()
    assert (made.frame.loc[empty, "status"] == "published").all()


@pytest.mark.parametrize("method", ["dp", "ckm"])
@pytest.mark.parametrize("rule", ["bogus", "p:<b>1</b>", "threshold:0", "x" * 5000])
def test_a_rule_it_cannot_read_is_refused_whatever_the_method(method, rule):
    """Issue 52: the command line reads ``--rule`` into a Rule before it publishes, so a rule
    it cannot use is refused in one line with DP and the cell key method too (it was ignored
    there, the rule read only by suppression)."""
    done = run("tables", HOUSEHOLDS_PATH, "--cross", "district,tenure", "--method", method,
               "--rule", rule, "--json")
    assert done.returncode == 2 and done.stdout == "", done.stderr
    line = done.stderr.removesuffix("\n")
    assert "\n" not in line and "Traceback" not in line and len(line) < 200, line
    assert re.match(r"sdc_core: error: (rule|t must)", line), line
