"""Linked tables: several cross tables of the same file protected together (docs/tables.md,
"Linked tables").

Tables of columns T₁, T₂, … from one file are margins of one finer table: the cross table of
the union U = T₁ ∪ T₂ ∪ … (at most 3 columns), where the cells of T_j are those whose label is
``Total`` on every column of U outside T_j. So a cell two tables share (the margin of region in
region × age and region × sex) is one cell of the finer table and has **one status** in all of
them, and a reader who holds every table knows exactly: the published cells of every table, the
finer table's additivity and non-negativity — its other cells (the combinations no table
publishes) being unknowns. The **joint audit** is the finer table's audit
(:func:`sdc_core.tables.suppression_audit.audit`) with every cell no table publishes counted
as hidden: a linear programme over the finest cross classification with every published cell
of every table as a constraint. **Linked protection** is the finer table's secondary suppression
with the primary cells of the published cells only (by the rule, cell by cell), and the cells no
table publishes suppressed from the start at no cost (``hidden``): every pattern it returns
protects each primary cell against all the tables at once.

Every table is built on the same records: a record with a blank in any column of U is left out
of all of them (:attr:`LinkedRelease.left_out` says how many).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sdc_core.errors import SdcInputError
from sdc_core.tables.cell_rules import Rule, RuleResult, interval_protection
from sdc_core.tables.crosstab import MAX_COLUMNS, TOTAL, CrossTable, crosstab
from sdc_core.tables.hierarchy import Hierarchy, Prefixes
from sdc_core.tables.suppression_audit import (
    AuditReport,
    Progress,
    SecondaryMethod,
    _audit,
    _Clock,
    secondary_suppression,
)
from sdc_core.tables.table_release import (
    DEFAULT_RULE,
    TIME_LIMIT,
    primary_cells,
    unit_text,
    whole_counts,
)

#: The most tables a linked set may hold
MAX_TABLES = 20


def table_name(columns: Sequence[str]) -> str:
    """A table's name in the output's ``table`` column: its columns joined with commas."""
    return ",".join(columns)


Tables = tuple[tuple[str, ...], ...]


def check_tables(tables: Sequence[Sequence[str]]) -> tuple[Tables, list[str]]:
    """The tables as tuples and the union of their columns in order of first appearance;
    refused: no table, more than :data:`MAX_TABLES`, a table twice, a column twice in a table,
    a union of more than :data:`~sdc_core.tables.crosstab.MAX_COLUMNS` columns."""
    if not tables:
        raise SdcInputError("linked tables: give at least one table")
    if len(tables) > MAX_TABLES:
        raise SdcInputError(f"linked tables: at most {MAX_TABLES} tables, not {len(tables)}")
    out = tuple(tuple(str(c) for c in t) for t in tables)
    seen = set()
    for t in out:
        if not t or len(set(t)) != len(t):
            raise SdcInputError(f"linked tables: a table needs distinct columns, not "
                                f"{table_name(t)[:80]!r}")
        if frozenset(t) in seen:
            raise SdcInputError(f"linked tables: the table of {table_name(t)[:80]} is given "
                                "twice")
        seen.add(frozenset(t))
    union = list(dict.fromkeys(c for t in out for c in t))
    if len(union) > MAX_COLUMNS:
        raise SdcInputError(f"linked tables span {len(union)} columns "
                            f"({', '.join(union)[:120]}); their finest cross classification "
                            f"takes at most {MAX_COLUMNS}")
    return out, union


def groups(tables: Sequence[Sequence[str]]) -> list[Tables]:
    """The tables in groups that share columns (connected through a common column), in the
    order of their first table: a group is linked; two groups share only the grand total,
    which tells nothing of one about the other (docs/tables.md, "Linked tables")."""
    given = [tuple(str(c) for c in t) for t in tables]
    parent = list(range(len(given)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i
    for i, j in itertools.combinations(range(len(given)), 2):
        if set(given[i]) & set(given[j]):
            parent[root(j)] = root(i)
    out: dict[int, list[tuple[str, ...]]] = {}
    for i, t in enumerate(given):
        out.setdefault(root(i), []).append(t)
    return [tuple(g) for g in out.values()]


def membership(finest: CrossTable, tables: Sequence[Sequence[str]]) -> np.ndarray:
    """Tables × cells: whether each cell of the finer table is a cell of each table (its label
    ``Total`` on every column outside the table)."""
    labels = {c: finest.frame[c].to_numpy() == TOTAL for c in finest.columns}
    out = np.ones((len(tables), len(finest.frame)), dtype=bool)
    for j, t in enumerate(tables):
        for c in finest.columns:
            if c not in t:
                out[j] &= labels[c]
    return out


def finer_table(df: pd.DataFrame, tables: Sequence[Sequence[str]],
                sum_column: str | None = None, household: str | None = None,
                hierarchies: Mapping[str, Hierarchy | Prefixes] | None = None
                ) -> tuple[CrossTable, np.ndarray, Tables]:
    """The finer table of the set (with the ``hierarchies`` of its columns: every table has a
    row per inner node of a column it holds), which cells each table has, and the tables
    checked."""
    checked, union = check_tables(tables)
    finest = crosstab(df, union, sum_column, unit=household, hierarchies=hierarchies)
    return finest, membership(finest, checked), checked


@dataclass(frozen=True)
class LinkedRelease:
    """Linked tables as published (module docstring): the finer table, each table's cells
    (``member``: tables × cells), the status of every cell of the finer table (``published``,
    ``primary``, ``secondary``, ``unpublished``), the rule, the joint audit and the
    suppression's method."""

    tables: Tables
    finest: CrossTable
    member: np.ndarray
    status: np.ndarray
    rule: Rule
    audit: AuditReport
    method: str

    @property
    def value(self) -> str:
        return self.finest.value_column

    @property
    def hidden_cells(self) -> int:
        """The tables' cells hidden, primary or secondary (a cell shared by tables counted
        once)."""
        return int(np.isin(self.status, ["primary", "secondary"]).sum())

    @property
    def left_out(self) -> int:
        """Records left out of every table for a blank in a column of the set."""
        return self.finest.left_out

    def frame(self) -> pd.DataFrame:
        """The tables in one long frame: ``table`` (its columns joined with commas), every
        column of the set (blank where the column is not the table's), the value (blank when
        hidden, a count a whole number), ``status`` and ``unit``; table after table, each in
        the finer table's order."""
        parts = []
        cols = list(self.finest.columns)
        values = self.finest.frame[self.value].where(
            pd.Series(self.status == "published", index=self.finest.frame.index))
        for j, t in enumerate(self.tables):
            rows = self.member[j]
            part = self.finest.frame.loc[rows, cols].copy()
            for c in cols:
                if c not in t:
                    part[c] = ""
            part.insert(0, "table", table_name(t))
            part[self.value] = values[rows]
            part["status"] = self.status[rows]
            parts.append(part)
        out = whole_counts(pd.concat(parts, ignore_index=True))
        out["unit"] = unit_text(self.finest.unit)
        return out

    def passes(self) -> bool:
        """The joint audit finds every primary cell protected (and every hidden cell
        checked)."""
        return self.audit.passes


def published_rules(finest: CrossTable, rule: Rule, published: np.ndarray,
                    protection: float | None = None) -> RuleResult:
    """The rule's primary cells of the finer table, among the cells a table publishes (with
    ``protection``, interval protection of q %)."""
    r = primary_cells(finest, rule)
    if protection is not None:
        r = interval_protection(r, finest, protection)
    return RuleResult(r.rule, r.primary & published, np.where(published, r.lower, 0.0),
                      np.where(published, r.upper, 0.0))


def release_linked(df: pd.DataFrame, tables: Sequence[Sequence[str]],
                   sum_column: str | None = None, rule: Rule = DEFAULT_RULE,
                   household: str | None = None, time_limit: float | None = TIME_LIMIT,
                   progress: Progress | None = None,
                   protection: float | None = None,
                   secondary: SecondaryMethod = "auto",
                   hierarchies: Mapping[str, Hierarchy | Prefixes] | None = None
                   ) -> LinkedRelease:
    """Publish ``tables`` of ``df`` together by suppression (module docstring).

    Parameters
    ----------
    df : pandas.DataFrame
        One row per record.
    tables : sequence of sequences of str
        Each table's columns; together at most 3 columns.
    sum_column : str, optional
        Sum this column per cell (magnitude tables, the dominance or p % rule).
    rule : Rule, default threshold:5
        The primary rule, applied to every published cell.
    household : str, optional
        The household or person id: the unit of protection.
    time_limit : float or None
        Seconds allowed to the suppression and its audits.
    progress : callable, optional
        ``progress(done, total, label)``.
    protection : float, optional
        Interval protection q, in % of a primary cell's value.
    secondary : {"auto", "milp", "hypercube", "gauss"}
        How the secondary cells are chosen.
    hierarchies : mapping of str to Hierarchy or Prefixes, optional
        A code list for some of the columns (docs/tables.md, "Hierarchical code lists").

    Returns
    -------
    LinkedRelease

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"r": list("aaaaabbbbbbbbb"), "s": list("mfmfmfmfmfmfmm"),
    ...                    "g": list("xxyyyxxxyyyyyx")})
    >>> made = release_linked(df, [["r", "s"], ["r", "g"]], rule=Rule("threshold", (3,)))
    >>> made.passes(), sorted(set(made.frame()["table"]))
    (True, ['r,g', 'r,s'])
    """
    finest, member, checked = finer_table(df, tables, sum_column, household, hierarchies)
    published = np.asarray(member.any(axis=0), dtype=bool)
    rules = published_rules(finest, rule, published, protection)
    done = secondary_suppression(finest, rules, method=secondary,
                                 budget=time_limit, progress=progress, hidden=~published)
    return LinkedRelease(checked, finest, member, done.status, rule, done.report, done.method)


def rows_of(finest: CrossTable, member: np.ndarray, own: CrossTable) -> np.ndarray:
    """For each row of ``own`` (a table of the set built alone), the row of the finer table
    that is the same cell (by its labels); refused when they are not the same cells or do not
    hold the same values (a table built on other records)."""
    cols = list(own.columns)
    rows = np.flatnonzero(member)
    where = {tuple(k): i for k, i in zip(finest.frame.loc[rows, cols].itertuples(index=False),
                                          rows)}
    try:
        out = np.array([where[tuple(k)] for k in own.frame[cols].itertuples(index=False)],
                       dtype=np.int64)
    except KeyError:
        raise SdcInputError(f"the table of {table_name(cols)[:80]} has cells the set does "
                            "not have") from None
    if len(out) != len(rows) or not np.allclose(finest.values[out], own.values):
        raise SdcInputError(f"the table of {table_name(cols)[:80]} was not made from the "
                            "set's records")
    return out


def joint_audit(df: pd.DataFrame, own: Sequence[tuple[CrossTable, np.ndarray]],
                rule: Rule = DEFAULT_RULE,
                time_limit: float | None = TIME_LIMIT) -> AuditReport:
    """The joint audit of tables published each with its own pattern: ``own`` holds each
    table (its cross table, built alone) and its hidden mask, one per row of its frame. A cell
    of the finer table is known when any table publishes it; the primary cells are the rule's
    among the cells the tables publish or hide. The audit of tables protected one by one, to
    set beside :func:`release_linked`'s (the same programme)."""
    if not own:
        raise SdcInputError("joint audit: give at least one table")
    first = own[0][0]
    finest, member, _ = finer_table(df, [t.columns for t, _ in own], first.sum_column,
                                    first.unit)
    known = np.zeros(len(finest.frame), dtype=bool)
    for j, (table, mask) in enumerate(own):
        m = np.asarray(mask, dtype=bool)
        if m.shape != (len(table.frame),):
            raise SdcInputError(f"joint audit: table {j + 1} has {len(table.frame)} cells, "
                                f"not {m.size}")
        known[rows_of(finest, member[j], table)[~m]] = True
    rules = published_rules(finest, rule, np.asarray(member.any(axis=0), dtype=bool))
    return _audit(finest, ~known, rules, None, False, None, _Clock(time_limit, None))
