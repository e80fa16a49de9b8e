"""One published cross table, by suppression, differential privacy or the cell key method
(docs/tables.md, "Publishing a table"): the one function the command line's ``tables --cross``,
the Tables page and the report call, so they give the same cells under the same names.

- ``suppress``: the table of :func:`sdc_core.tables.crosstab.crosstab`, its primary cells by a rule
  (a :class:`~sdc_core.tables.cell_rules.Rule`: ``threshold:T`` for counts, ``dominance:N,K`` or
  ``p:P`` for a magnitude table; :mod:`sdc_core.tables.cell_rules`), secondary cells chosen and
  audited by :func:`sdc_core.tables.suppression_audit.secondary_suppression`; each hidden cell
  carries the interval [lo, hi] the published table leaves it.
- ``dp``: the cells' counts with discrete Laplace noise at ε
  (:func:`sdc_core.tables.dp_tables.dp_counts`, seeded), the margins the sums of the noisy cells;
  each figure carries its ±95 % accuracy. A magnitude table: each contribution clipped to
  [0, ``clip``] and Laplace noise of scale c · U/ε (:func:`sdc_core.tables.dp_sums.dp_sums`).
- ``ckm``: the cell key method (:func:`sdc_core.tables.cell_key.ckm_table`): record keys from the
  seed, the default perturbation table (under ``threshold`` blank, the rest rounded to 5). A
  magnitude table: the same record keys, noise m · x₁ · z(cell key) and a floor for the cells
  the p % rule finds sensitive (:func:`sdc_core.tables.cell_key_sums.ckm_sums`).

With a household id (``household``) the unit of protection is the person (or household) the id
names, not the record (docs/tables.md, "The unit of protection"): the published values stay the
records' counts (or sums), the threshold rule counts each cell's distinct persons, the dominance
and p % rules rank per-person sums, DP keeps at most c records per person and scales its noise
to c (ε per person), and the cell key method gives every record of a person the person's key
and blanks a cell of fewer persons than its threshold.

Every release has one row per cell and per margin (a margin's label is ``Total``), in the
order of the cross table, with the value (``count``, or ``sum`` for a magnitude table; missing
when hidden) and its ``status``: published, primary, secondary or perturbed; and its utility
against the true table (:func:`sdc_core.tables.count_tables.compare_published`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sdc_core import rng
from sdc_core.checks import shown
from sdc_core.errors import SdcInputError
from sdc_core.households import household_codes
from sdc_core.tables.cell_key import ckm_table
from sdc_core.tables.cell_key_sums import DEFAULT_P, ckm_sums
from sdc_core.tables.cell_rules import (
    Rule,
    RuleResult,
    dominance_rule,
    interval_protection,
    p_rule,
    threshold_rule,
)
from sdc_core.tables.count_tables import Comparison, compare_published
from sdc_core.tables.crosstab import (
    CrossTable,
    crosstab,
    level_codes,
    record_cells,
    unit_codes,
)
from sdc_core.tables.dp_sums import dp_sums
from sdc_core.tables.dp_tables import bound_contributions, default_contributions, dp_counts
from sdc_core.tables.hierarchy import Hierarchy, Prefixes
from sdc_core.tables.suppression_audit import (
    AuditReport,
    Progress,
    SecondaryMethod,
    secondary_suppression,
)

#: How a table may be published
TABLE_METHODS = ("suppress", "dp", "ckm")
#: What each published figure protects: every record, or the person a household id names
UNITS = ("record", "person")
#: Seconds a suppressed table's secondary suppression and audit may take (the page's and the
#: command line's; docs/tables.md, "The audit's bound"): past them, the hidden cells not yet
#: decided are reported as not checked and the audit does not pass
TIME_LIMIT = 90.0


def unit_text(household: str | None) -> str:
    """Whom the rules counted, as the downloads' ``unit`` column says it: "records" or
    "distinct <household column>"."""
    return "records" if household is None else f"distinct {household}"


#: Suppression's primary rule when none is given: the threshold rule at 5 (a count table)
DEFAULT_RULE = Rule("threshold", (5,))


def primary_cells(table: CrossTable, rule: Rule) -> RuleResult:
    """The primary cells of ``rule`` on ``table``: the threshold rule on a count table, the
    dominance and p % rules on a magnitude table."""
    if not isinstance(rule, Rule):
        raise SdcInputError(f"the primary rule must be a Rule (Rule.parse reads one from text "
                            f"such as threshold:5), not {shown(rule)}")
    name, v = rule.name, rule.parameters
    if name == "threshold":
        return threshold_rule(table, int(v[0]))
    if table.sum_column is None:
        raise SdcInputError(f"the {name} rule reads contributions: give a column to sum")
    if name == "dominance":
        return dominance_rule(table, int(v[0]), v[1])
    return p_rule(table, v[0])


@dataclass(frozen=True)
class TableRelease:
    """A published table (module docstring).

    ``frame``: the table's columns, ``count`` or ``sum`` (missing when hidden), ``status``,
    ``margin``, ``unit`` (:func:`unit_text`), and with ``suppress`` ``lo`` and ``hi`` (a
    hidden cell's audited interval), with ``dp`` ``accuracy`` (±, 95 %). ``truth`` the true
    table (its ``unit`` the household column, or None); ``utility`` the published cells against
    it; ``audit`` the audit of a suppressed table; ``epsilon`` of a DP table, per person of at
    most ``max_contributions`` records (``records_dropped`` left out to keep that bound);
    ``clip`` the bound U of one contribution to a DP sum; ``noise`` the parameters of the cell
    key method for sums (D, V, m, p, seed)."""

    method: str
    truth: CrossTable
    frame: pd.DataFrame
    utility: Comparison
    rule: Rule | None = None
    audit: AuditReport | None = None
    epsilon: float | None = None
    suppression: str | None = None
    max_contributions: int | None = None
    records_dropped: int | None = None
    protection: float | None = None
    clip: float | None = None
    noise: dict[str, Any] | None = None

    @property
    def value(self) -> str:
        return self.truth.value_column

    @property
    def household(self) -> str | None:
        """The household column whose distinct values the figures protect (None: records)."""
        return self.truth.unit

    @property
    def unit(self) -> str:
        """"person" with a household id, else "record" (:data:`UNITS`)."""
        return UNITS[self.household is not None]

    def published(self) -> pd.DataFrame:
        """The table as it is published: its columns, ``count`` or ``sum`` (blank when
        hidden), ``status`` and ``unit``; a count stays a whole number beside the blanks
        (``Int64``: written "24", not "24.0")."""
        return whole_counts(self.frame[[*self.truth.columns, self.value, "status", "unit"]])

    def hidden(self) -> pd.DataFrame:
        """The hidden cells with their audited intervals (``suppress``)."""
        if "lo" not in self.frame:
            return self.frame.iloc[0:0]
        return self.frame[self.frame[self.value].isna()]

    def to_json(self) -> dict[str, Any]:
        cols = list(self.truth.columns)
        keep = cols + [self.value, "status"] + [c for c in ("accuracy",) if c in self.frame]
        cells = self.frame[keep].astype(object).where(self.frame[keep].notna(), None)
        out: dict[str, Any] = {
            "method": self.method, "columns": cols, "value": self.value,
            "rule": None if self.rule is None else self.rule.text,
            "protection": self.protection,
            "epsilon": self.epsilon, "suppression": self.suppression,
            "household": self.household, "unit": self.unit,
            "cells": cells.to_dict(orient="records"), "utility": self.utility.to_json()}
        if self.method == "dp":
            out.update(epsilon_unit=self.unit, max_contributions=self.max_contributions,
                       records_dropped=self.records_dropped)
        if self.clip is not None:
            out["clip"] = self.clip
        if self.noise is not None:
            out["noise"] = self.noise
        if self.audit is not None:
            out["audit_passes"] = self.audit.passes
            out["unchecked_cells"] = self.audit.unchecked_cells
            found = self.audit.frame.set_index("cell")
            out["hidden"] = [{**{c: r[c] for c in cols}, "lo": _number(r["lo"]),
                              "hi": _number(r["hi"]), "status": r["status"],
                              "exact": bool(found.at[cell, "exact"]),
                              "checked": bool(found.at[cell, "checked"])}
                             for cell, r in self.hidden().iterrows()]
            if "persons_lo" in self.audit.frame:  # the persons a reader can infer
                for entry, cell in zip(out["hidden"], self.hidden().index):
                    entry["persons_lo"] = _number(found.at[cell, "persons_lo"])
                    entry["persons_hi"] = _number(found.at[cell, "persons_hi"])
        return out


def whole_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its ``count`` column, when every count shown is whole, as ``Int64``:
    a published count is written "24", not "24.0", beside the blanks of hidden cells."""
    if "count" not in frame:
        return frame
    v = frame["count"]
    if not bool((v.dropna() % 1 == 0).all()):
        return frame
    return frame.assign(count=v.round().astype("Int64"))


def _number(v: object) -> float | None:
    """A figure for JSON: None for a missing one (a cell not checked)."""
    return None if pd.isna(v) else float(v)  # type: ignore[arg-type]


def release_table(df: pd.DataFrame, columns: list[str], sum_column: str | None = None,
                  method: str = "suppress", rule: Rule = DEFAULT_RULE,
                  epsilon: float = 1.0, seed: int = 0, threshold: int = 10,
                  household: str | None = None,
                  max_contributions: int | None = None,
                  time_limit: float | None = TIME_LIMIT,
                  progress: Progress | None = None,
                  protection: float | None = None,
                  secondary: SecondaryMethod = "auto",
                  hierarchies: Mapping[str, Hierarchy | Prefixes] | None = None,
                  clip: float | None = None) -> TableRelease:
    """Publish the cross table of ``columns`` (module docstring).

    Parameters
    ----------
    df : pandas.DataFrame
        One row per record.
    columns : list of str
        1 to 3 table columns.
    sum_column : str, optional
        Sum this column per cell (a magnitude table).
    method : {"suppress", "dp", "ckm"}
    rule : Rule, default threshold:5
        The primary rule of ``suppress`` (threshold t for counts; dominance n, k or p % for
        sums); ``ckm`` on sums reads the p of a p % rule for its sensitive cells (default
        :data:`sdc_core.tables.cell_key_sums.DEFAULT_P`).
    epsilon : float
        ε of ``dp``.
    seed : int
        Seed of the DP noise (and of which records of a person DP keeps) or of the cell key
        method's record keys.
    threshold : int
        ``ckm``: a published count below it is blank (with ``household``, also a cell of fewer
        persons).
    household : str, optional
        The household or person id: the unit of protection (module docstring).
    max_contributions : int, optional
        ``dp`` with ``household``: c, the most records kept per person (default
        :func:`sdc_core.tables.dp_tables.default_contributions`); without ``household`` it must be
        1 or absent (every record is its own unit).
    time_limit : float or None, default :data:`TIME_LIMIT`
        ``suppress``: seconds allowed to the secondary suppression and its audits (None: no
        limit; :func:`sdc_core.tables.suppression_audit.secondary_suppression`'s ``budget``).
    progress : callable, optional
        ``suppress``: ``progress(done, total, label)`` as it goes (an exception it raises stops
        it).
    protection : float, optional
        ``suppress``: interval protection q, in % of a primary cell's value: its feasible
        interval must reach x (1 ± q/100) (:func:`sdc_core.tables.cell_rules.interval_protection`).
    secondary : {"auto", "milp", "hypercube", "gauss"}
        ``suppress``: how the secondary cells are chosen
        (:func:`sdc_core.tables.suppression_audit.secondary_suppression`'s ``method``).
    hierarchies : mapping of str to Hierarchy or Prefixes, optional
        ``suppress``: a code list for some of the columns, a row per inner node
        (docs/tables.md, "Hierarchical code lists").
    clip : float, optional
        ``dp`` on sums (required there, refused elsewhere): U, the most one contributor adds to
        a cell (:func:`sdc_core.tables.dp_sums.check_clip`).

    Returns
    -------
    TableRelease

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": list("xxxyyyyyyyzzzzzzz"), "b": list("uvuuvuvuvuvuvuvuv")})
    >>> r = release_table(df, ["a"], rule=Rule("threshold", (4,)))
    >>> r.frame["status"].tolist()
    ['primary', 'secondary', 'published', 'published']
    >>> r.hidden()[["a", "lo", "hi"]].values.tolist(), r.audit.passes
    ([['x', 0.0, 10.0], ['y', 0.0, 10.0]], True)
    """
    if method not in TABLE_METHODS:
        raise SdcInputError(f"method must be one of {', '.join(TABLE_METHODS)}, not {method!r}")
    if protection is not None and method != "suppress":
        raise SdcInputError("interval protection goes with suppression (method suppress)")
    if hierarchies and method != "suppress":
        raise SdcInputError("a table with a hierarchy is published by suppression (method "
                            "suppress)")
    if clip is not None and (method != "dp" or sum_column is None):
        raise SdcInputError("a clip bound goes with a DP table of sums (method dp and a column "
                            "to sum)")
    if method == "ckm" and sum_column is not None and isinstance(rule, Rule) \
            and rule.name == "dominance":
        raise SdcInputError("the cell key method for sums protects the cells the p % rule "
                            "finds sensitive: give a p rule (p:10), not a dominance rule")
    table = crosstab(df, columns, sum_column, unit=household, hierarchies=hierarchies)
    cols = list(table.columns)
    value = table.value_column
    truth_cells = table.frame.loc[~table.margin, cols + [value]].rename(columns={value: "count"})
    if method == "suppress":
        rules = primary_cells(table, rule)
        if protection is not None:
            rules = interval_protection(rules, table, protection)
        done = secondary_suppression(table, rules, method=secondary,
                                     budget=time_limit, progress=progress)
        frame = done.published(table)
        frame["margin"] = table.margin
        found = done.report.frame.set_index("cell")
        frame["lo"] = found["lo"].reindex(range(len(frame))).to_numpy()
        frame["hi"] = found["hi"].reindex(range(len(frame))).to_numpy()
        published = frame.rename(columns={value: "count"})
        frame["unit"] = unit_text(household)
        return TableRelease("suppress", table, frame,
                            compare_published(truth_cells, published, cols), rule,
                            done.report, suppression=done.method, protection=protection)
    if method == "dp":
        if household is None and max_contributions not in (None, 1):
            raise SdcInputError("a bound on the records per person needs a household id: "
                                "without one, each record is its own unit (c = 1)")
        c, dropped, bounded = 1, 0, truth_cells
        if household is not None:
            units, _ = household_codes(df, household)  # checked by the table already
            c = default_contributions(units) if max_contributions is None \
                else int(max_contributions)
        if sum_column is not None:
            return _dp_sum_release(df, table, truth_cells, clip, epsilon, seed, household, c)
        if household is not None:
            keep = bound_contributions(units, c, seed)
            dropped = int((~keep).sum())
            bounded = truth_cells.assign(count=_cell_counts(df, table, keep))
        made = dp_counts(bounded, epsilon=epsilon, seed=seed, max_contributions=c)
        frame = _aligned(table, made.table, ["count", "accuracy", "status"])
        frame["unit"] = unit_text(household)
        return TableRelease("dp", table, frame, compare_published(truth_cells, frame, cols),
                            epsilon=made.epsilon, max_contributions=c, records_dropped=dropped)
    if sum_column is not None:
        p = rule.parameters[0] if isinstance(rule, Rule) and rule.name == "p" else DEFAULT_P
        noisy = ckm_sums(df, table, seed=seed, household=household, p=p)
        frame = noisy.frame[cols + ["sum", "status", "margin"]].copy()
        frame["unit"] = unit_text(household)
        return TableRelease("ckm", table, frame,
                            compare_published(truth_cells, frame.rename(columns={"sum": "count"}),
                                              cols), noise=noisy.parameters())
    labelled, kept = _labelled_records(df, table)
    # each record's key from its position in the whole file, as every other table of it; with
    # a household id, every record of a person the person's key, drawn from its id
    ids = rng.record_ids(len(df)) if household is None else \
        rng.ids_from_column(df[household].to_numpy())
    made_ckm = ckm_table(labelled, cols, seed=seed, threshold=threshold, ids=ids[kept])
    frame = _aligned(table, made_ckm.table, ["count", "status"])
    if household is not None:  # a cell of fewer persons than the threshold is blank too
        few = (table.contributors > 0) & (table.contributors < threshold)
        frame.loc[few, "count"] = pd.NA
        frame.loc[few, "status"] = "primary"
    frame["unit"] = unit_text(household)
    return TableRelease("ckm", table, frame, compare_published(truth_cells, frame, cols))


def _dp_sum_release(df: pd.DataFrame, table: CrossTable, truth_cells: pd.DataFrame,
                    clip: float | None, epsilon: float, seed: int, household: str | None,
                    c: int) -> TableRelease:
    """The DP magnitude table of :func:`release_table` (:func:`sdc_core.tables.dp_sums.
    dp_sums`): the noisy sums with their accuracy, against the true (unclipped) sums."""
    made = dp_sums(df, table, clip, epsilon=epsilon, seed=seed, household=household,
                   max_contributions=c)
    frame = made.frame[list(table.columns) + ["sum", "accuracy", "status", "margin"]].copy()
    frame["unit"] = unit_text(household)
    return TableRelease("dp", table, frame,
                        compare_published(truth_cells, frame.rename(columns={"sum": "count"}),
                                          list(table.columns)),
                        epsilon=made.epsilon, max_contributions=c,
                        records_dropped=made.records_dropped, clip=made.clip)


def unit_bound(df: pd.DataFrame, household: str, columns: list[str],
               sum_column: str | None = None) -> int:
    """Check ``household`` as the unit of protection of the table of ``columns`` (refused as
    :func:`release_table` refuses it) and give DP's default bound on the records per person,
    :func:`sdc_core.tables.dp_tables.default_contributions` (the Tables page offers it)."""
    codes = unit_codes(df, household, columns, sum_column)
    assert codes is not None  # a household was given
    return default_contributions(codes)


def _cell_counts(df: pd.DataFrame, table: CrossTable, keep: np.ndarray) -> np.ndarray:
    """The records kept (``keep``) in each cell of ``table`` (margins left out, in the
    table's order), by the table's own levels: a level only dropped records hold stays a cell,
    with count 0 (which cells exist does not depend on the records)."""
    flat, _ = record_cells(df, table, keep)
    return np.bincount(flat, minlength=int(np.prod([len(lv) for lv in table.levels])))


def _aligned(table: CrossTable, made: pd.DataFrame, take: list[str]) -> pd.DataFrame:
    """The rows of ``made`` (labels as text) in the cross table's order, with ``margin``. A
    cell ``made`` lacks (a level only records left out hold: no record falls in it) is an
    empty cell: its count 0 is published as it is, as the methods publish a true 0."""
    cols = list(table.columns)
    left = table.frame[cols].astype(str)
    right = made[cols + take].copy()
    for c in cols:
        right[c] = right[c].astype(str)
    out = left.merge(right, on=cols, how="left", validate="one_to_one", indicator=True)
    empty = (out.pop("_merge") == "left_only").to_numpy()
    out["margin"] = table.margin
    out.loc[empty, "status"] = "published"
    out["count"] = out["count"].astype("Float64")
    out.loc[empty, "count"] = 0.0
    return out


def _labelled_records(df: pd.DataFrame, table: CrossTable) -> tuple[pd.DataFrame, np.ndarray]:
    """The records as the cross table labels them (its levels' text,
    :func:`sdc_core.tables.crosstab.level_codes`; a record with a blank in a table column left
    out, as the table leaves it out), and which records are kept."""
    out = {}
    keep = np.ones(len(df), dtype=bool)
    for c in table.columns:
        codes, levels = level_codes(df[c], None)
        keep &= codes >= 0
        out[c] = np.asarray(levels + [""], dtype=object)[codes]  # −1: the blank, left out
    return pd.DataFrame(out)[keep].reset_index(drop=True), keep
