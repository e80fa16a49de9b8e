"""The verdict of an analysis names its worst term (sdc_core.utility.validity; docs/utility.md,
"The verdict"): a mean by group whose one group moves by a known number of standard errors,
worked by hand; the rule at its boundaries; the order that picks the worst term; a table's
worst cell; the same verdict in ``compare --json``, in ``compare``'s text and in a sweep."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.sweep.run import run_sweep
from sdc_core.utility.analysis import AnalysisResult, TermResult, parse_spec
from sdc_core.utility.validity import (
    HOLDS,
    TERM_OVERLAP,
    TERM_SE,
    Validity,
    term_holds,
    verdict,
    verdict_text,
    worst_term,
)
from tests.cli_run import run

GROUPS = list("abcde")
N = 200  # rows per group
SPEC = {"analyses": [{"name": "mean y by g", "kind": "mean", "column": "y", "by": "g"}],
        "pmse": False}


def grouped(seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"g": np.repeat(GROUPS, N), "y": rng.normal(50.0, 10.0, N * 5)})


def moved(df: pd.DataFrame, group: str, k: float) -> pd.DataFrame:
    """``df`` with y of one group shifted by k of that group's standard errors se = s/√n."""
    y = df.loc[df["g"] == group, "y"].to_numpy()
    se = y.std(ddof=1) / math.sqrt(len(y))
    return df.assign(y=df["y"] + np.where(df["g"] == group, k * se, 0.0))


def by_hand(k: float) -> tuple[float, float]:
    """A shift of k standard errors keeps the interval's width w = 2 t se (t of n − 1 degrees
    of freedom), so J = ½[(w − k se)/w + (w − k se)/w] = 1 − k/(2t) and d = k; the mean J̄
    over the five groups, four unmoved (J = 1), is (4 + J)/5."""
    j = 1 - k / (2 * stats.t.ppf(0.975, N - 1))
    return j, (4 + j) / 5


def compared(k: float):
    df = grouped()
    return Validity(parse_spec(SPEC), df).compare(moved(df, "c", k)).analyses[0]


def test_a_group_moved_by_1_06_se_is_named_and_the_verdict_is_not_plain_holds():
    result = compared(1.06)
    j, mean = by_hand(1.06)
    c = next(t for t in result.terms if t.term == "y | g=c")
    assert c.std_diff == pytest.approx(1.06, rel=1e-9)
    assert c.ci_overlap == pytest.approx(j, rel=1e-9)
    assert result.mean_ci_overlap == pytest.approx(mean, rel=1e-9)
    # what the rule before it called "holds": J̄ ≥ 0.9 and every θ_o inside its interval
    assert result.mean_ci_overlap >= HOLDS
    assert all(t.original_in_protected_ci for t in result.terms)
    assert verdict(result) == "holds on average" and worst_term(result) is c
    assert verdict_text(result) == (f"holds on average (mean; mean CI overlap {mean:.3f}); "
                                    f"worst term y | g=c: moved by 1.06 SE, CI overlap {j:.3f}")


def test_a_group_moved_by_0_9_se_holds_and_is_still_named():
    result = compared(0.9)
    j, mean = by_hand(0.9)
    assert j >= TERM_OVERLAP
    assert verdict(result) == "holds"
    assert verdict_text(result) == (f"holds (mean; mean CI overlap {mean:.3f}); worst term "
                                    f"y | g=c: moved by 0.90 SE, CI overlap {j:.3f}")


def test_an_analysis_reproduced_exactly_names_no_term():
    df = grouped()
    result = Validity(parse_spec(SPEC), df).compare(df).analyses[0]
    assert worst_term(result) is None
    assert verdict_text(result) == "holds (mean; mean CI overlap 1.000)"
    table = parse_spec({"analyses": [{"name": "g", "kind": "table", "columns": ["g"]}]})
    same = Validity(table, df).compare(df.sample(frac=1, random_state=1)).analyses[0]
    assert worst_term(same) is None and verdict_text(same).startswith("holds (table; TVD 0.000")


def term(name: str, overlap: float, d: float) -> TermResult:
    """A term with the figures the rule reads (its original inside the protected interval)."""
    return TermResult(name, 1.0, 0.0, 2.0, 1.0, 0.0, 2.0, overlap, d, True)


JUST_UNDER_OVERLAP = float(np.nextafter(TERM_OVERLAP, 0))
JUST_UNDER_SE = float(np.nextafter(TERM_SE, 0))


@pytest.mark.parametrize("overlap, d, holds", [
    (TERM_OVERLAP, 0.0, True), (JUST_UNDER_OVERLAP, 0.0, False),
    (1.0, JUST_UNDER_SE, True), (1.0, TERM_SE, False),
    (1.0, -JUST_UNDER_SE, True), (1.0, -TERM_SE, False),
    (math.nan, 0.5, True), (0.9, math.nan, True), (0.0, math.nan, False),
])
def test_the_rule_at_its_boundaries(overlap, d, holds):
    t = term("x", overlap, d)
    assert term_holds(t) is holds
    terms = [term(f"t{i}", 1.0, 0.0) for i in range(9)] + [t]  # J̄ ≥ 0.9 either way
    known = [u.ci_overlap for u in terms if not math.isnan(u.ci_overlap)]
    result = AnalysisResult("a", "ols", terms, float(np.mean(known)))
    assert result.mean_ci_overlap >= HOLDS
    assert verdict(result) == ("holds" if holds else "holds on average")
    if not holds:
        assert worst_term(result) is t
        assert verdict_text(result).startswith("holds on average (ols; mean CI overlap ")


def test_the_worst_term_is_a_failing_one_first_then_the_lowest_overlap_then_the_largest_move():
    fails_by_move = term("moved", 0.80, 1.2)
    wider = term("wider", 0.76, 0.1)  # the lowest overlap, but it holds
    steady = term("steady", 0.95, 0.0)
    result = AnalysisResult("a", "ols", [steady, wider, fails_by_move], 0.84)
    assert worst_term(result) is fails_by_move
    fails_by_overlap = term("apart", 0.60, 0.5)
    result = AnalysisResult("a", "ols", [fails_by_move, fails_by_overlap], 0.7)
    assert worst_term(result) is fails_by_overlap
    tie = [term("small move", 0.6, 0.2), term("large move", 0.6, -1.5)]
    assert worst_term(AnalysisResult("a", "ols", tie, 0.6)) is tie[1]
    no_overlap = term("zero width", math.nan, 3.0)
    assert worst_term(AnalysisResult("a", "ols", [no_overlap, fails_by_move], 0.8)) \
        is fails_by_move
    assert worst_term(AnalysisResult("a", "ols", [steady, wider], 0.85)) is wider
    assert worst_term(AnalysisResult("a", "ols", error="protected: x")) is None


def test_a_tables_worst_cell_is_the_share_that_moved_most():
    """50 new rows of a new cell: its share goes from 0 to 50/1050, every other one shrinks by
    the factor 1000/1050, so the new cell moved most."""
    df = grouped().assign(h=np.tile(["u", "v"], N * 5 // 2))
    extra = pd.DataFrame({"g": ["z"] * 50, "y": 0.0, "h": ["u"] * 50})
    protected = pd.concat([df, extra], ignore_index=True)
    spec = parse_spec({"analyses": [{"name": "g × h", "kind": "table", "columns": ["g", "h"]}],
                       "pmse": False})
    result = Validity(spec, df).compare(protected).analyses[0]
    p = df.groupby(["g", "h"]).size() / len(df)
    q = protected.groupby(["g", "h"]).size() / len(protected)
    cells = p.index.union(q.index)
    moved_by = (q.reindex(cells, fill_value=0) - p.reindex(cells, fill_value=0)).abs()
    g, h = moved_by.idxmax()
    assert (g, h) == ("z", "u")
    worst = worst_term(result)
    assert worst.term == f"g={g}, h={h}" and math.isnan(worst.original)
    assert result.tvd == pytest.approx(0.5 * moved_by.sum(), rel=1e-12)
    assert verdict(result) == ("holds" if result.tvd <= 0.05 else "does not hold")
    assert verdict_text(result).endswith(f"; worst cell g=z, h=u: share 0.000 → "
                                         f"{50 / 1050:.3f}")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("verdict")
    original, protected = grouped(), moved(grouped(), "c", 1.06)
    original.to_csv(d / "original.csv", index=False)
    protected.to_csv(d / "protected.csv", index=False)
    (d / "spec.json").write_text(json.dumps(SPEC))
    return d


def test_compare_json_carries_the_verdict_its_text_and_worst_term(files):
    out = run("compare", files / "original.csv", files / "protected.csv", "--analysis",
              files / "spec.json", "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    original = pd.read_csv(files / "original.csv")
    want = Validity(parse_spec(SPEC), original).compare(
        pd.read_csv(files / "protected.csv")).analyses[0]
    a = got["analyses"][0]
    assert a["verdict"] == verdict(want) == "holds on average"
    assert a["verdict_text"] == verdict_text(want)
    assert a["worst_term"]["term"] == "y | g=c"
    assert a["worst_term"]["std_diff"] == pytest.approx(1.06, rel=1e-9)
    assert a["worst_term"]["ci_overlap"] == pytest.approx(by_hand(1.06)[0], rel=1e-9)
    assert got["analyses_holding"] == 0.0


def test_compare_text_prints_the_verdict_line_the_page_shows(files):
    out = run("compare", files / "original.csv", files / "protected.csv", "--analysis",
              files / "spec.json")
    assert out.returncode == 0, out.stderr
    want = Validity(parse_spec(SPEC), pd.read_csv(files / "original.csv")).compare(
        pd.read_csv(files / "protected.csv")).analyses[0]
    assert f"  mean y by g: {verdict_text(want)}" in out.stdout.splitlines()
    assert "holds on average" in out.stdout and "moved by 1.06 SE" in out.stdout


def test_a_sweep_row_carries_each_analysis_verdict_and_a_target_can_keep_them_all(actg):
    spec = {"analyses": [{"name": "cd4", "kind": "ols", "formula": "cd420 ~ age + cd40"},
                         {"name": "race", "kind": "proportion", "column": "race"}],
            "pmse": False}
    grid = {"analysis": spec, "settings": [
        {"method": "noise", "columns": ["age"], "param": "p", "values": [50, 250]},
        {"method": "noise", "columns": ["cd40"], "param": "p", "values": [30]}],
        "target": {"measure": "linkage_risk_percent", "at_most": 100,
                   "keep": {"measure": "analyses_holding", "at_least": 1}}}
    table = run_sweep(actg, ["age", "gender", "race"], grid).table
    validity = Validity(parse_spec(spec), actg)
    for i in range(1, len(table)):
        row = table.iloc[i]
        recipe = json.loads(row["recipe"])
        runs = [validity.compare(apply_recipe(parse_recipe(
            {**recipe, "seed": recipe["seed"] + j}), actg).data).analyses
            for j in range(int(row["n_seeds"]))]
        for k, name in enumerate(("cd4", "race")):
            assert row[f"holds: {name}"] == pytest.approx(
                np.mean([verdict(r[k]) == "holds" for r in runs]))
        every = np.mean([all(verdict(a) == "holds" for a in r) for r in runs])
        assert row["meets_target"] == (every == 1) == (row["analyses_holding"] == 1)
    assert table["meets_target"].any() and not table["meets_target"].iloc[1:].all()


def test_the_report_writes_the_verdict_the_page_shows_and_marks_the_worst_term():
    from html import escape

    from ui.logic.report import terms_frame, validity_section
    df = grouped()
    spec = parse_spec({"analyses": [
        {"name": "<b>mean</b> y by g", "kind": "mean", "column": "y", "by": "g"}],
        "pmse": False})
    report = Validity(spec, df).compare(moved(df, "c", 1.06))
    section = validity_section(report)
    result = report.analyses[0]
    assert f"<p>{escape(verdict_text(result))}</p>" in section
    assert "<b>mean</b>" not in section and "&lt;b&gt;mean&lt;/b&gt; y by g" in section
    frame = terms_frame(result)
    assert frame.loc[frame["worst"], "term"].tolist() == ["y | g=c"]
    assert frame["term holds"].tolist() == [t.term != "y | g=c" for t in result.terms]
    assert "<th>worst</th>" in section


def test_the_docs_show_the_verdicts_the_core_writes():
    from pathlib import Path
    doc = (Path(__file__).resolve().parents[1] / "docs" / "utility.md").read_text("utf-8")
    df = grouped().assign(h=np.tile(["u", "v"], N * 5 // 2))
    extra = pd.DataFrame({"g": ["z"] * 50, "y": 0.0, "h": ["u"] * 50})
    table = parse_spec({"analyses": [{"name": "g × h", "kind": "table", "columns": ["g", "h"]}],
                        "pmse": False})
    lines = [verdict_text(compared(1.06)), verdict_text(compared(0.9)), verdict_text(
        Validity(table, df).compare(pd.concat([df, extra], ignore_index=True)).analyses[0])]
    for line in lines:
        assert f"\n{line}\n" in doc, line
    assert f"J̄ = (4 + {by_hand(1.06)[0]:.3f})/5 = {by_hand(1.06)[1]:.3f}" in doc
    assert f"J ≥ {TERM_OVERLAP:g} and |d| < {TERM_SE:g}" in doc
