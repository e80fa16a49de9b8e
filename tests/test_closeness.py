"""t-closeness, β-likeness and δ-disclosure (sdc_core/risk/closeness.py): hand-worked tables,
pycanon 1.3.6's outputs on outside tables (tests/data/pycanon/), a brute-force reference and
Hypothesis over column kinds."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdc_core.errors import SdcInputError
from sdc_core.risk.closeness import closeness, closeness_report
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "data" / "pycanon"
FIGURES = ("t_closeness", "beta_likeness", "enhanced_beta_likeness", "delta_disclosure")


def test_ordered_emd_is_li_et_al_salary_example():
    """Li, Li & Venkatasubramanian (2007), §4: salaries 3k…11k, one record each (p = 1/9).

    Class {3k, 4k, 5k}: q − p = +2/9 on the three lowest, −1/9 on the six others; the running
    sums are 2, 4, 6, 5, 4, 3, 2, 1 (/9) over the first m − 1 = 8 values, 27/9 = 3 in all, and
    EMD = 3/8 = 0.375 (the paper's 0.375). Class {6k, 8k, 11k}: running sums −1, −2, −3, −1, −2,
    0, −1, −2 (/9) → 12/9/8 = 1/6 (the paper's 0.167). Class {7k, 9k, 10k}: −1, −2, −3, −4, −2,
    −3, −1, +1 (/9) → 17/72. t = max = 0.375.
    """
    classes = ["a", "a", "a", "b", "c", "b", "c", "c", "b"]  # b = {6, 8, 11}, c = {7, 9, 10}
    df = pd.DataFrame({"x": classes, "salary": range(3, 12)})
    c = closeness(df, ["x"], "salary")
    assert c.ordered and c.n_values == 9 and c.n_classes == 3
    assert c.t_closeness == pytest.approx(0.375, abs=1e-12)
    # b against the other six as one class (q = 1/6 there: running sums 1, 2, 3, 1, 2, 0, 1, 2
    # over 18, 12/18/8 = 1/12): t = max(1/6, 1/12) = 1/6, the paper's 0.167
    b_vs_rest = df.assign(x=np.where(df.x == "b", "b", "r"))
    assert closeness(b_vs_rest, ["x"], "salary").t_closeness == pytest.approx(1 / 6, abs=1e-12)
    # c against the rest (running sums 1, 2, 3, 4, 2, 3, 1, −1 over 18 → 17/144): 17/72
    c_vs_rest = df.assign(x=np.where(df.x == "c", "c", "r"))
    assert closeness(c_vs_rest, ["x"], "salary").t_closeness == pytest.approx(17 / 72, abs=1e-12)


def test_equal_distance_basic_and_enhanced_beta_and_delta_by_hand():
    """S categorical, 6 records: p(x) = 3/6, p(y) = 2/6, p(z) = 1/6.

    Class a = {x, y, z}: q = 1/3 each; ½ Σ|q − p| = ½ (1/6 + 0 + 1/6) = 1/6. Class b = {x, x, y}:
    q = 2/3, 1/3, 0; ½ (1/6 + 0 + 1/6) = 1/6. t = 1/6.
    β: (q − p)/p = (1/3 − 1/6)/(1/6) = 1 for z in a; (2/3 − 1/2)/(1/2) = 1/3 for x in b → β = 1.
    Enhanced: min{β, −ln min p} = min{1, ln 6 = 1.79} = 1.
    δ over the values a class holds: |ln((1/3)/(1/6))| = ln 2 in a, |ln((2/3)/(1/2))| = ln 4/3
    in b → δ = ln 2; b lacks z, so the paper's δ is infinite (``delta_bounded`` False).
    """
    df = pd.DataFrame({"x": list("aaabbb"), "s": ["x", "y", "z", "x", "x", "y"]})
    c = closeness(df, ["x"], "s")
    assert not c.ordered
    assert c.t_closeness == pytest.approx(1 / 6, abs=1e-12)
    assert c.beta_likeness == pytest.approx(1.0, abs=1e-12)
    assert c.enhanced_beta_likeness == pytest.approx(1.0, abs=1e-12)
    assert c.delta_disclosure == pytest.approx(math.log(2), abs=1e-12)
    assert c.delta_bounded is False
    assert c.to_json() == {"t_closeness": c.t_closeness, "beta_likeness": c.beta_likeness,
                           "enhanced_beta_likeness": c.enhanced_beta_likeness,
                           "delta_disclosure": c.delta_disclosure,
                           "delta_disclosure_bounded": False}


def test_enhanced_beta_caps_a_rare_value_at_minus_log_p():
    """10 records, S = u × 9 and v × 1: p(v) = 0.1. Class a = {v, u}: q(v) = 1/2,
    β = (0.5 − 0.1)/0.1 = 4; enhanced = min{4, −ln 0.1 = 2.302585} = ln 10.
    Equal distance: class a ½ (|0.5 − 0.9| + |0.5 − 0.1|) = 0.4. δ = ln 5 (v in a)."""
    df = pd.DataFrame({"x": ["a", "a"] + ["b"] * 8, "s": ["v"] + ["u"] * 9})
    c = closeness(df, ["x"], "s")
    assert (c.t_closeness, c.beta_likeness) == pytest.approx((0.4, 4.0), abs=1e-12)
    assert c.enhanced_beta_likeness == pytest.approx(math.log(10), abs=1e-12)
    assert c.delta_disclosure == pytest.approx(math.log(5), abs=1e-12)


def test_ordered_uses_ranks_not_values_and_text_numbers_are_categories():
    """S = 1, 2, 10 | 1, 1, 2: the ordered distance is |i − j|/(m − 1) on the ranks, so 10 is
    as far from 2 as 2 from 1: class a's running sums −1/6, −1/6 → 1/3 / 2 = 1/6. The same
    numbers as text take the equal distance: ½ (1/6 + 0 + 1/6) = 1/6; a numeric S of values
    1, 2, 3 in classes {1, 3}, {2, 2} gives 1/4 ordered but 1/2 as text."""
    df = pd.DataFrame({"x": list("aaabbb"), "s": [1.0, 2.0, 10.0, 1.0, 1.0, 2.0]})
    assert closeness(df, ["x"], "s").t_closeness == pytest.approx(1 / 6, abs=1e-12)
    # p = 1/4, 1/2, 1/4. Class {1, 3}: q − p = +1/4, −1/2, +1/4, running sums 1/4, −1/4 →
    # (1/2)/2 = 1/4; class {2, 2}: −1/4, +1/2, −1/4 → sums −1/4, 1/4 → 1/4. t = 1/4 ordered;
    # as text ½ (1/4 + 1/2 + 1/4) = 1/2 for either class
    df = pd.DataFrame({"x": list("aabb"), "s": [1, 3, 2, 2]})
    assert closeness(df, ["x"], "s").t_closeness == pytest.approx(0.25, abs=1e-12)
    assert closeness(df.assign(s=df.s.astype(str)), ["x"], "s").t_closeness == \
        pytest.approx(0.5, abs=1e-12)
    df = pd.DataFrame({"x": list("aabbb"), "s": [1, 2, 2, 3, 3]})
    # p = 1/5, 2/5, 2/5; a: q = 1/2, 1/2, 0 → sums 3/10, 4/10 → 7/10/2 = 0.35;
    # text: ½ (3/10 + 1/10 + 4/10) = 0.4
    assert closeness(df, ["x"], "s").t_closeness == pytest.approx(0.35, abs=1e-12)
    assert closeness(df.assign(s=df.s.astype(str)), ["x"], "s").t_closeness == \
        pytest.approx(0.4, abs=1e-12)


def test_blanks():
    """A blank S leaves its record out of q and p; a blank key is a value of its own, or with
    ``na="drop"`` puts its record in no class while it still counts in p."""
    df = pd.DataFrame({"x": ["a", "a", "a", None, "b", "b"], "s": [1, 2, 3, 1, 1, 2]})
    # drop: p = 1/2, 1/3, 1/6 (all six); a = {1, 2, 3} → 1/6; b = {1, 2}: q = 1/2, 1/2, 0 →
    # sums 0, 1/6 → 1/12. t = 1/6. category: {1} as a class: sums 1/2, 1/6 → 1/3.
    assert closeness(df, ["x"], "s", na="drop").t_closeness == pytest.approx(1 / 6, abs=1e-12)
    assert closeness(df, ["x"], "s").t_closeness == pytest.approx(1 / 3, abs=1e-12)
    blank_s = pd.DataFrame({"x": list("aaab"), "s": [1, 2, None, 1]})
    same = pd.DataFrame({"x": list("aab"), "s": [1, 2, 1]})
    assert closeness(blank_s, ["x"], "s") == closeness(same, ["x"], "s")
    empty = closeness(pd.DataFrame({"x": ["a", "b"], "s": [None, None]}), ["x"], "s")
    assert empty.to_json()["t_closeness"] == 0.0 and empty.n_values == 0
    with pytest.raises(SdcInputError):
        closeness(df, ["x"], "s", na="wildcard")
    with pytest.raises(SdcInputError):
        closeness(df, ["x", "s"], "s")
    with pytest.raises(SdcInputError):
        closeness(df, ["x"], "nope")


def prepared(case: dict, tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    df = tables[case["table"]].copy()
    for col, width in case.get("band", {}).items():
        df[col] = np.floor(df[col] / width) * width
    for col in case.get("text", []):
        df[col] = df[col].astype(str)
    return df


def test_pycanon_outputs():
    """Equal to pycanon 1.3.6 on francdat, testdata and ACTG 175 (tests/data/pycanon/README.md:
    the cases' blank keys are compared under the ``na`` pycanon's grouping amounts to)."""
    spec = json.loads((FIXTURES / "cases.json").read_text())
    out = json.loads((FIXTURES / "outputs.json").read_text())
    assert out["pycanon"] == "1.3.6" and len(out["cases"]) == len(spec["cases"]) >= 18
    tables = {k: pd.read_csv(ROOT / v) for k, v in spec["tables"].items()}
    kinds = set()
    for case in out["cases"]:
        c = closeness(prepared(case, tables), case["qi"], case["sensitive"],
                      na=case.get("na", "category"))
        kinds.add(c.ordered)
        for k in FIGURES:
            assert getattr(c, k) == pytest.approx(case[k], abs=1e-9, rel=0), (case, k)
    assert kinds == {True, False}


def _brute(df: pd.DataFrame, s: str, cls: str | None = None, na: str = "category") -> float:
    """EMD of one class (``cls``) or the max over classes, one record at a time (the key is
    the first column; ``na="drop"``: a blank key in no class, but in p)."""
    data = df[df[s].notna()]
    ordered = pd.api.types.is_numeric_dtype(data[s]) and not pd.api.types.is_bool_dtype(data[s])
    values = sorted(set(data[s])) if ordered else list(dict.fromkeys(data[s]))
    p = [sum(v == x for x in data[s]) / len(data) for v in values]
    out = []
    for key, group in data.groupby(df.columns[0], dropna=(na == "drop")):
        if cls is not None and key != cls:
            continue
        q = [sum(v == x for x in group[s]) / len(group) for v in values]
        if ordered and len(values) > 1:
            run, total = 0.0, 0.0
            for qi, pi in zip(q[:-1], p[:-1]):
                run += qi - pi
                total += abs(run)
            out.append(total / (len(values) - 1))
        else:
            out.append(0.5 * sum(abs(a - b) for a, b in zip(q, p)))
    return max(out, default=0.0)


def _brute_all(df: pd.DataFrame, s: str, na: str) -> dict[str, float]:
    data = df[df[s].notna()]
    values = list(dict.fromkeys(data[s]))
    p = {v: sum(v == x for x in data[s]) / len(data) for v in values}
    beta, delta = 0.0, 0.0
    for _, group in data.groupby(df.columns[0], dropna=(na == "drop")):
        for v in values:
            q = sum(v == x for x in group[s]) / len(group)
            beta = max(beta, (q - p[v]) / p[v])
            if q > 0:
                delta = max(delta, abs(math.log(q / p[v])))
    return {"t_closeness": _brute(df, s, na=na), "beta_likeness": beta,
            "enhanced_beta_likeness": min(beta, -math.log(min(p.values()))) if p else 0.0,
            "delta_disclosure": delta}


KINDS = {
    "bool": lambda v: pd.Series([bool(x % 2) for x in v], dtype=bool),
    "Int64": lambda v: pd.Series([None if x < 0 else x for x in v], dtype="Int64"),
    "boolean": lambda v: pd.Series([None if x < 0 else bool(x % 2) for x in v],
                                   dtype="boolean"),
    "string": lambda v: pd.Series([None if x < 0 else f"v{x}" for x in v], dtype="string"),
    "category": lambda v: pd.Series([None if x < 0 else f"c{x}" for x in v], dtype="category"),
    "float": lambda v: pd.Series([np.nan if x < 0 else x / 2 for x in v], dtype=float),
    "object": lambda v: pd.Series([None if x < 0 else f"o{x}" for x in v], dtype=object),
}


@st.composite
def tables(draw: st.DrawFn) -> tuple[pd.DataFrame, str]:
    n = draw(st.integers(1, 25))
    keys = draw(st.lists(st.sampled_from(["a", "b", "c", None]), min_size=n, max_size=n))
    values = draw(st.lists(st.integers(-1, 4), min_size=n, max_size=n))
    kind = draw(st.sampled_from(sorted(KINDS)))
    key_kind = draw(st.sampled_from(["object", "string", "category"]))
    return pd.DataFrame({"x": pd.Series(keys, dtype=key_kind), "s": KINDS[kind](values)}), kind


@settings(max_examples=150, deadline=None)
@given(tables(), st.sampled_from(["category", "drop"]))
def test_bounds_and_brute_force_over_column_kinds(table, na):
    df, _ = table
    c = closeness(df, ["x"], "s", na=na)
    assert 0.0 <= c.t_closeness <= 1.0
    assert c.beta_likeness >= 0.0 and c.delta_disclosure >= 0.0
    assert 0.0 <= c.enhanced_beta_likeness <= c.beta_likeness + 1e-12
    ref = _brute_all(df, "s", na)
    for k in FIGURES:
        assert getattr(c, k) == pytest.approx(ref[k], abs=1e-9), k
    one = closeness(df.assign(x="same"), ["x"], "s")  # a single class equal to the table
    assert one.to_json() == {k: 0.0 for k in FIGURES} | {"delta_disclosure_bounded": True}
    json.dumps(c.to_json(), allow_nan=False)


def test_report_by_column(actg):
    report = closeness_report(actg, ["age", "gender", "race"], ["treat", "cd40"])
    assert list(report) == ["treat", "cd40"]
    assert report["treat"].ordered and report["cd40"].ordered  # integer codes are numbers
    assert report["cd40"] == closeness(actg, ["age", "gender", "race"], "cd40")
    # with two values the ordered and the equal distance agree
    as_text = closeness(actg.assign(treat=actg.treat.astype(str)), ["age", "gender", "race"],
                        "treat")
    assert not as_text.ordered
    assert as_text.t_closeness == pytest.approx(report["treat"].t_closeness, abs=1e-12)
