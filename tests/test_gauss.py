"""Secondary suppression by Gaussian elimination (sdc_core/tables/gauss.py): no primary cell
is a linear combination of the published cells (checked by matrix rank, not by the
elimination), and the pattern, repaired where needed, passes the same audit as today's."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdc_core.tables.cell_rules import threshold_rule
from sdc_core.tables.crosstab import crosstab
from sdc_core.tables.gauss import cell_vectors, gauss_pattern
from sdc_core.tables.suppression_audit import _weights, secondary_suppression
from tests.conftest import SHARED_DATA


def test_a_cell_s_vector_is_the_inner_cells_it_adds_up() -> None:
    vectors = cell_vectors((3, 3))  # a 2 × 2 table with its margins
    assert vectors[0] == [0] and vectors[4] == [3]  # inner cells
    assert vectors[2] == [0, 1]  # the first row's margin
    assert vectors[6] == [0, 2]  # the first column's margin
    assert vectors[8] == [0, 1, 2, 3]  # the grand total


def _matrix(shape: tuple[int, ...]) -> np.ndarray:
    vectors = cell_vectors(shape)
    m = np.zeros((len(vectors), int(np.prod([s - 1 for s in shape]))))
    for c, inner in enumerate(vectors):
        m[c, inner] = 1.0
    return m


@st.composite
def tables(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(5, 60))
    k = draw(st.integers(1, 3))
    return pd.DataFrame({c: draw(st.lists(st.sampled_from("uvwxy"[:draw(st.integers(2, 5))]),
                                          min_size=n, max_size=n)) for c in "abc"[:k]})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), st.integers(2, 6))
def test_no_primary_cell_is_in_the_span_of_the_published_cells(df: pd.DataFrame,
                                                               t: int) -> None:
    table = crosstab(df, list(df.columns))
    rules = threshold_rule(table, t)
    none = np.zeros(len(table.frame), dtype=bool)
    hidden = gauss_pattern(table, rules.primary, _weights(table, "total"), none)
    assert (hidden >= rules.primary).all()
    m = _matrix(table.shape)
    published = m[~hidden]
    rank = np.linalg.matrix_rank(published) if len(published) else 0
    for p in np.flatnonzero(rules.primary):
        assert np.linalg.matrix_rank(np.vstack([published, m[p]])) == rank + 1


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), st.integers(2, 6))
def test_the_gaussian_pattern_passes_the_audit_after_repair(df: pd.DataFrame, t: int) -> None:
    table = crosstab(df, list(df.columns))
    rules = threshold_rule(table, t)
    done = secondary_suppression(table, rules, method="gauss")
    assert done.method in ("gauss", "gauss+hypercube")
    assert done.report.passes
    assert (done.status[rules.primary] == "primary").all()


def test_gauss_and_today_s_methods_on_outside_data() -> None:
    df = pd.read_csv(SHARED_DATA / "actg175.csv")
    table = crosstab(df, ["karnof", "race", "gender"])
    rules = threshold_rule(table, 5)
    gauss = secondary_suppression(table, rules, method="gauss")
    today = secondary_suppression(table, rules)
    assert gauss.report.passes and today.report.passes
    for done in (gauss, today):
        assert (done.status[rules.primary] == "primary").all()
        assert (done.status == "secondary").any()


def test_out_of_time_the_elimination_stops_and_says_so() -> None:
    df = pd.read_csv(SHARED_DATA / "actg175.csv")
    table = crosstab(df, ["age", "karnof", "race"])
    rules = threshold_rule(table, 5)
    done = secondary_suppression(table, rules, method="gauss", budget=0.0)
    assert (done.status[rules.primary] == "primary").all()
    assert not done.report.passes and done.report.unchecked_cells > 0
