"""The audit and secondary suppression (sdc_core/tables/suppression_audit.py) against enumeration of
every whole-number table consistent with what is published, brute force over suppression
patterns, and seed 004's own audit (sdc_core/tables/responses.py)."""

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sdc_core.errors import SdcInputError
from sdc_core.tables import responses as tables
from sdc_core.tables import suppression_audit
from sdc_core.tables.cell_rules import RuleResult, dominance_rule, p_rule, threshold_rule
from sdc_core.tables.crosstab import TOTAL, CrossTable, crosstab, margin_constraints
from sdc_core.tables.suppression_audit import audit, secondary_suppression


def table_of(inner):
    """A count table whose cells are the array ``inner``, its margins summed by
    :func:`full_array`."""
    inner = np.asarray(inner)
    names = ("a", "b", "c")[:inner.ndim]
    levels = tuple(tuple(str(i) for i in range(s)) for s in inner.shape)
    keys = list(itertools.product(*[lv + (TOTAL,) for lv in levels]))
    frame = pd.DataFrame(keys, columns=list(names)).assign(
        count=full_array(inner).ravel(), margin=[TOTAL in k for k in keys])
    return CrossTable(names, levels, frame, margin_constraints(tuple(s + 1 for s in inner.shape)))


def full_array(inner):
    """``inner`` with every margin, each summed in a plain loop over the cells it covers."""
    inner = np.asarray(inner)
    shape = tuple(s + 1 for s in inner.shape)
    out = np.zeros(shape, dtype=np.int64)
    for cell in itertools.product(*[range(s) for s in shape]):
        ranges = [range(inner.shape[d]) if cell[d] == inner.shape[d] else [cell[d]]
                  for d in range(inner.ndim)]
        out[cell] = sum(int(inner[c]) for c in itertools.product(*ranges))
    return out


def brute_intervals(inner, suppressed, bound):
    """min and max of each suppressed cell over every table of whole numbers 0..bound in the
    suppressed inner cells whose published cells and margins are as published: every such
    table at once, one row a table, each cell and margin summed over the cells it covers as
    :func:`full_array` sums them."""
    inner = np.asarray(inner)
    shape = tuple(s + 1 for s in inner.shape)
    truth = full_array(inner)
    cells = list(itertools.product(*[range(s) for s in shape]))
    hidden_inner = [c for i, c in enumerate(cells) if suppressed[i]
                    and all(c[d] < inner.shape[d] for d in range(inner.ndim))]
    # every trial table: row r sets the hidden inner cells to the r-th tuple of 0..bound
    values = np.array(list(itertools.product(range(bound + 1), repeat=len(hidden_inner))),
                      dtype=np.int64)
    trial = np.broadcast_to(inner.astype(np.int64), (len(values),) + inner.shape).copy()
    for k, c in enumerate(hidden_inner):
        trial[(slice(None),) + c] = values[:, k]
    full = np.zeros((len(values),) + shape, dtype=np.int64)
    for cell in cells:
        ranges = [range(inner.shape[d]) if cell[d] == inner.shape[d] else [cell[d]]
                  for d in range(inner.ndim)]
        for c in itertools.product(*ranges):
            full[(slice(None),) + cell] += trial[(slice(None),) + c]
    consistent = np.ones(len(values), dtype=bool)
    for i, c in enumerate(cells):
        if not suppressed[i]:
            consistent &= full[(slice(None),) + c] == truth[c]
    seen = full[consistent]
    hidden = [c for i, c in enumerate(cells) if suppressed[i]]
    if not len(seen):
        return np.full(len(hidden), np.inf), np.full(len(hidden), -np.inf)
    return (np.array([seen[(slice(None),) + c].min() for c in hidden]),
            np.array([seen[(slice(None),) + c].max() for c in hidden]))


SHAPES = [(3,), (4,), (2, 2), (2, 3), (3, 2), (2, 2, 2)]


@st.composite
def audited_tables(draw):
    shape = draw(st.sampled_from(SHAPES))
    top = 2 if len(shape) == 3 else 3
    inner = np.array(draw(st.lists(st.integers(0, top), min_size=int(np.prod(shape)),
                                   max_size=int(np.prod(shape))))).reshape(shape)
    n_cells = int(np.prod([s + 1 for s in shape]))
    suppressed = np.array(draw(st.lists(st.booleans(), min_size=n_cells, max_size=n_cells)))
    return inner, suppressed


@given(audited_tables())
@settings(max_examples=60, deadline=None, derandomize=True)
def test_the_audit_matches_enumeration_of_every_consistent_table(case):
    inner, suppressed = case
    cells = list(itertools.product(*[range(s + 1) for s in inner.shape]))
    n_hidden_inner = sum(1 for i, c in enumerate(cells) if suppressed[i]
                         and all(c[d] < inner.shape[d] for d in range(inner.ndim)))
    assume(suppressed.any() and n_hidden_inner <= 4)
    bound = int(inner.sum()) + 2
    lo_b, hi_b = brute_intervals(inner, suppressed, bound)
    t = table_of(inner)
    exact = inner.ndim < 3  # 1- and 2-way: the LP's bounds are whole numbers
    rep = audit(t, suppressed, integer=not exact)
    lp = audit(t, suppressed).frame
    lo, hi = rep.frame["lo"].to_numpy(), rep.frame["hi"].to_numpy()
    # the relaxation is sound: never narrower than the whole-number interval
    assert (lp["lo"].to_numpy() <= lo_b + 1e-6).all() and (lp["hi"].to_numpy() >= hi_b - 1e-6).all()
    truncated = hi_b >= bound
    assert np.allclose(lo, lo_b)
    assert np.allclose(hi[~truncated], hi_b[~truncated])
    assert (hi[truncated] >= bound).all()
    # pinned exactly when enumeration leaves one value
    pinned = (lo_b == hi_b) & ~truncated
    assert np.array_equal(rep.frame["pinned"].to_numpy(), pinned)


def test_one_hidden_cell_of_a_row_with_its_total_is_recovered_then_protected():
    inner = np.array([[2, 7, 9], [6, 8, 5]])
    t = table_of(inner)
    rules = threshold_rule(t, t=5)
    # the 2 in row 0: its row total 18 and the other cells 7 and 9 are shown: 18 − 7 − 9 = 2
    hidden = rules.primary.copy()
    assert hidden.sum() == 1
    rep = audit(t, hidden, rules)
    assert rep.frame[["lo", "hi"]].values.tolist() == [[2.0, 2.0]]
    assert not rep.passes and rep.frame["pinned"].all()
    # required: reach 2 − 2 = 0 below and 2 + (5 − 2) = 5 above; short by 2 − 0 and 5 − 2
    assert rep.frame[["short_low", "short_high"]].values.tolist() == [[2.0, 3.0]]
    assert "pins it to 2" in rep.findings(t.columns)[0]
    for method in ("milp", "hypercube"):
        result = secondary_suppression(t, rules, method=method)
        assert result.report.passes
        row = result.report.frame.set_index("cell").loc[np.flatnonzero(rules.primary)[0]]
        assert row["lo"] <= 0 and row["hi"] >= 5  # the interval reaches 0 and the threshold
        # its own audit agrees: the cells published carry values, the hidden ones none
        published = result.published(t)
        assert published["count"].isna().sum() == result.suppressed.sum()
        assert set(published["status"]) <= {"published", "primary", "secondary"}


def pet_table():
    return crosstab(tables.pet_survey(), ["favourite animal"], blank_label="(no response)")


def seed_004_audit(question, t):
    """The pet question as a one-way table with its total (the participants): the audit with
    what the reader knows besides — a hidden option is below t, non-response lies in its
    published interval."""
    hidden_opts = {o.option for o in question.options if o.count is None}
    labels = t.frame["favourite animal"].tolist()
    hidden = np.array([lab in hidden_opts or (lab == "(no response)" and
                                              question.nonresponse.low != question.nonresponse.high)
                       for lab in labels])
    lo, hi = np.zeros(len(labels)), np.full(len(labels), np.inf)
    for i, lab in enumerate(labels):
        if lab in hidden_opts:
            hi[i] = question.t - 1
        if lab == "(no response)":
            lo[i], hi[i] = question.nonresponse.low, question.nonresponse.high
    return audit(t, hidden, bounds=(lo, hi)).frame.set_index("favourite animal")


@pytest.mark.parametrize("naive", [False, True])
def test_the_audit_agrees_with_seed_004s_audit_on_the_pet_question(naive):
    question = tables.response_table(tables.pet_survey(), "favourite animal")
    if naive:  # exact non-response N − responses: the hidden counts narrow to 2..4
        question = tables.naive_publication(question, 90)
    theirs = tables.audit(question)
    ours = seed_004_audit(question, pet_table())
    for o in theirs.options:
        assert (ours.loc[o.option, "lo"], ours.loc[o.option, "hi"]) == (o.low, o.high)
        assert ours.loc[o.option, "pinned"] == o.revealed
    # without the "less than 5" the reader knows, a hidden option could hold all 16 unknown
    t = pet_table()
    bare = audit(t, t.frame["count"].lt(5) & ~t.margin).frame
    assert bare["hi"].tolist() == [6.0, 6.0]  # Elephant 2 + Penguin 4 = 6 = 100 − 42 − 33 − 9 − 10


def test_the_audit_agrees_with_seed_004_when_thresholding_itself_gives_a_cell_away():
    # 20 of 20 participants chose Human: "Dancer: less than 5" must be 0
    df = pd.DataFrame({"q": ["Human"] * 20})
    question = tables.response_table(df, "q", options=["Human", "Dancer"])
    theirs = {o.option: (o.low, o.high) for o in tables.audit(question).options}
    t = table_of(np.array([0, 20]))  # Dancer 0, Human 20, total 20
    rep = audit(t, [True, False, False], bounds=(np.zeros(3), np.array([4.0, np.inf, np.inf])))
    assert (rep.frame["lo"].item(), rep.frame["hi"].item()) == theirs["Dancer"] == (0, 0)
    assert not rep.passes


@st.composite
def count_tables(draw, shapes=((3,), (2, 2), (2, 3), (3, 3), (2, 2, 2), (3, 2, 2))):
    shape = draw(st.sampled_from(list(shapes)))
    values = draw(st.lists(st.integers(0, 9), min_size=int(np.prod(shape)),
                           max_size=int(np.prod(shape))))
    return np.array(values).reshape(shape)


@given(count_tables(), st.sampled_from(["milp", "hypercube"]), st.integers(2, 6))
@settings(max_examples=40, deadline=None, derandomize=True)
def test_secondary_suppression_always_passes_the_audit(inner, method, threshold):
    t = table_of(inner)
    rules = threshold_rule(t, t=threshold)
    result = secondary_suppression(t, rules, method=method)
    assert result.report.passes
    check = audit(t, result.suppressed, rules).frame
    prim = check[check["primary"]]
    assert (prim["lo"] <= prim["value"] - prim["lower"] + 1e-6).all()
    assert (prim["hi"] >= prim["value"] + prim["upper"] - 1e-6).all()
    assert np.array_equal(result.status == "primary", rules.primary)
    # no secondary cell the reader can work out exactly is left suppressed
    assert not (check["pinned"] & ~check["primary"]).any()


def brute_cheapest(t, rules, weights):
    """The cheapest pattern that passes the audit, over every superset of the primary cells."""
    free = np.flatnonzero(~rules.primary)
    best = np.inf
    patterns = []
    for bits in itertools.product((False, True), repeat=len(free)):
        s = rules.primary.copy()
        s[free[np.array(bits, dtype=bool)]] = True
        patterns.append((float(weights[s].sum()), s))
    for cost, s in sorted(patterns, key=lambda p: p[0]):
        if cost >= best:
            break
        if audit(t, s, rules).passes:
            best = cost
    return best


@given(count_tables(shapes=((3,), (4,), (2, 2), (2, 3))), st.integers(2, 5),
       st.sampled_from(["total", "count"]))
@settings(max_examples=25, deadline=None, derandomize=True)
def test_the_exact_method_is_as_cheap_as_the_cheapest_pattern(inner, threshold, cost):
    t = table_of(inner)
    rules = threshold_rule(t, t=threshold)
    assume(rules.primary.any())
    weights = (t.values + 1.0 / (len(t.frame) + 1)) if cost == "total" else np.ones(len(t.frame))
    result = secondary_suppression(t, rules, method="milp", cost=cost)
    assert result.method == "milp" and result.report.passes
    got = float(weights[result.suppressed].sum())
    assert got == pytest.approx(brute_cheapest(t, rules, weights))


def test_a_magnitude_table_under_the_p_rule_is_protected():
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"region": rng.choice(list("ABCD"), 60),
                       "sector": rng.choice(list("xyz"), 60),
                       "turnover": np.round(rng.pareto(1.2, 60) * 100, 1)})
    t = crosstab(df, ["region", "sector"], sum_column="turnover")
    rules = p_rule(t, p=15)
    assert rules.primary.any()
    for method in ("milp", "hypercube"):
        result = secondary_suppression(t, rules, method=method)
        assert result.report.passes, result.report.findings(t.columns)


def test_auto_picks_the_heuristic_past_the_exact_methods_size(monkeypatch):
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"a": rng.integers(0, 4, 200), "b": rng.integers(0, 4, 200),
                       "c": rng.integers(0, 2, 200)})
    t = crosstab(df, ["a", "b", "c"])
    rules = threshold_rule(t, t=5)
    cells, primaries = len(t.frame), int(rules.primary.sum())
    assert primaries >= 5
    size = cells * (1 + 2 * primaries)  # the exact method's variables
    monkeypatch.setattr(suppression_audit, "MILP_MAX_VARIABLES", size)
    assert secondary_suppression(t, rules).method == "milp"
    monkeypatch.setattr(suppression_audit, "MILP_MAX_VARIABLES", size - 1)
    result = secondary_suppression(t, rules)
    assert result.method == "hypercube" and result.report.passes


def test_bad_masks_and_inconsistent_publications_are_refused():
    t = table_of(np.array([[1, 2], [3, 4]]))
    with pytest.raises(SdcInputError, match="one entry per cell"):
        audit(t, [True, False])
    with pytest.raises(SdcInputError, match="admit no table"):
        audit(t, t.frame["count"].eq(1).to_numpy(),
              bounds=(np.full(9, 2.0), np.full(9, np.inf)))
    with pytest.raises(SdcInputError, match="method"):
        secondary_suppression(t, threshold_rule(t), method="guess")  # type: ignore[arg-type]
    rules = threshold_rule(t)
    assert isinstance(rules, RuleResult)


def test_a_time_limited_exact_search_is_never_worse_than_the_heuristic():
    rng = np.random.default_rng(7)
    df = pd.DataFrame({"a": rng.integers(0, 6, 900), "b": rng.integers(0, 6, 900),
                       "c": rng.integers(0, 5, 900)})
    t = crosstab(df, ["a", "b", "c"])
    rules = threshold_rule(t, t=5)
    weights = t.values + 1.0 / (len(t.frame) + 1)
    quick = secondary_suppression(t, rules, method="milp", time_limit=0.5)
    heuristic = secondary_suppression(t, rules, method="hypercube")
    assert quick.report.passes and heuristic.report.passes
    assert weights[quick.suppressed].sum() <= weights[heuristic.suppressed].sum() + 1e-9


@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2),
                          st.one_of(st.floats(0, 500), st.floats(1e6, 1e9))),
                min_size=3, max_size=30),
       st.sampled_from(["milp", "hypercube"]), st.sampled_from(["p", "dominance"]))
@settings(max_examples=30, deadline=None, derandomize=True)
def test_a_magnitude_table_passes_the_audit_under_either_rule(rows, method, rule):
    df = pd.DataFrame(rows, columns=["a", "b", "y"])
    t = crosstab(df, ["a", "b"], sum_column="y")
    rules = p_rule(t, p=20) if rule == "p" else dominance_rule(t, n=1, k=60)
    result = secondary_suppression(t, rules, method=method)
    assert result.report.passes, result.report.findings(t.columns)
    assert np.array_equal(result.status == "primary", rules.primary)
