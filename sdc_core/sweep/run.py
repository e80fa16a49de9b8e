"""Parameter sweeps: one row of risk and utility per setting (seed 003, Table S4-A).

This module runs a grid; :mod:`sdc_core.sweep.grid` parses and expands it (its names are importable
from here too).

A grid names settings to try one at a time on the original table:

```json
{"seeds": 5, "seed": 0, "numeric": ["age", "wtkg"], "k": 5, "known": [],
 "not_released": ["pidnum"], "pareto_risk": "linkage", "il1_missing": "max", "settings": [
  {"method": "band", "column": "age", "param": "width", "values": [5, 10, 15]},
  {"method": "pram", "column": "gender", "param": "p", "values": [0.01, 0.05, 0.1]},
  {"method": "pram", "column": "race", "param": "retention", "values": [0.9, 0.8],
   "fixed": {"invariant": true}}]}
```

Each setting is the one-step recipe ``{"seed": s, "steps": [{"method", "column", param: value,
**fixed}]}``, so any row can be reproduced with ``apply``. Randomised methods (PRAM, relabeling,
rank swapping, randomized response) run with seeds ``seed, seed+1, …`` (``seeds`` of them) and
report the mean, with the standard deviation in ``*_sd`` columns; the last column, ``recipe``,
holds each setting's recipe as JSON (to reopen it). The first row is the unprotected
``BASELINE``.

``"combine": true`` makes every combination of the settings one multi-step recipe, and
``"target"`` names the cheapest setting that meets a risk target, found by a pruned search
unless ``"search": "exhaustive"``; ``"max_settings"`` (default 500) bounds the settings or
combinations asked for. See :mod:`sdc_core.sweep.search` and ``docs/utility.md``.

Benchmark analyses. ``"analysis"`` holds a spec of :func:`sdc_core.utility.analysis.parse_spec`
(the file ``compare --analysis`` reads). Every row then also carries the figures of
:mod:`sdc_core.utility.validity` for its release — ``mean_ci_overlap``, ``ci_overlap_loss``
(1 − it), ``worst_tvd``, ``pmse``, ``s_pmse``, ``analyses_holding`` (the share of the analyses
whose verdict is "holds", :func:`sdc_core.utility.validity.verdict`) and two per analysis
(``ci_overlap: NAME``, or ``tvd: NAME`` for a table, and ``holds: NAME``, 1 when its verdict is
"holds", else 0) — the mean over seeds with the spread in ``*_sd``. ``"loss"`` names
the loss the Pareto front and the target's best rank by (:data:`LOSSES`: ``IL1_release`` by
default), and the target may keep a utility besides its risk bound::

    "loss": "ci_overlap_loss",
    "target": {"measure": "linkage_risk_percent", "at_most": 1,
               "keep": {"measure": "mean_ci_overlap", "at_least": 0.9}}

(``at_least`` for a figure where higher is better, ``at_most`` otherwise: :data:`KEEP_MEASURES`);
``{"measure": "analyses_holding", "at_least": 1}`` keeps every analysis holding, by the verdict
the Protect page shows.

Attribute disclosure. A row also carries, for every column its recipe perturbs (PRAM,
relabeling, randomized response), ``epsilon: COL`` and ``guess_accuracy: COL``
(:func:`sdc_core.risk.deniability.recipe_deniability`) and ``epsilon_max``, their largest ε
(with ``"household"``, also ``household_guess_accuracy: COL`` and ``household_epsilon: COL``,
:func:`sdc_core.risk.deniability.household_figures`);
with ``"sensitive": [...]``, ``inference_accuracy: COL`` and ``inference_gain: COL`` per
sensitive column and the mean ``inference_gain``
(:func:`sdc_core.risk.inference.attribute_inference`, with ``known``), and ``t_closeness: COL``,
``beta_likeness: COL``, ``enhanced_beta_likeness: COL``, ``delta_disclosure: COL`` per sensitive
column that is not a key (:func:`sdc_core.risk.closeness.closeness`). A target may bound them
(:data:`ATTRIBUTE_TARGETS`: ``{"measure": "inference_gain", "column": "N1", "at_most": 5}``);
not being monotone, they are searched exhaustively (docs/utility.md, "Attribute disclosure in a
sweep").

Synthesis. A setting of ``synthesize`` names no column and sweeps ``min_leaf`` or
``smoothing`` (combined: one of them, synthesis also tried off, its step last). Its rows give
the released keys' risk and the measures of a release read as a set of records
(:data:`SYNTHETIC`, ``disco_percent: COL``, which every row of a grid with keys carries);
the figures that compare record by record are blank and ``record_by_record`` says why; the
front and the best leave out a synthetic row whose front risk or loss is blank
(docs/utility.md, "Synthesis in a sweep").

Risk is measured on the quasi-identifiers, twice: the measures of seed 003, which read the
released keys as if they were true (``expected_reidentifications`` …), and the linkage attack of
:mod:`sdc_core.risk.linkage` (``linkage_reidentifications``, ``linkage_risk_percent``), which
also sees perturbation; ``known`` names extra numeric columns the attacker knows. IL1 and
eigenvalue similarity are measured on the ``numeric`` columns and, for IL1, the categorical
ones. Speed: the quasi-identifiers are factorised once and only a changed key is re-encoded; IL1
is computed for the changed column only (the others are unchanged); for the correlation matrix
only the changed column's row is recomputed.

The loss of a row is the headline ``IL1_release`` of :mod:`sdc_core.utility.il1`:
(1/|C|) Σ_{c∈C} IL1_c over the released columns C, the table's columns less ``not_released``
(the columns tagged "not released" on the Data page), unchanged columns counting 0; the same
figure, over the same C, as the Protect page, the report and ``compare`` give for the same
release. Seed 003's ``IL1_overall`` (a mean over the changed columns) stays in the table.
``il1_missing`` is the reading of a numeric value that a setting turned into a missing one:
``"max"`` (the default) counts it as the maximum IL1 loss 1, ``"ignore"`` leaves it out of IL1
(sdcMicro's reading, for parity), see :mod:`sdc_core.utility.il1`. ``suppressed_values`` counts
those values whatever the reading. A row is **Pareto-optimal** (``pareto``) when no other row is
at most as high on the risk, ``IL1_release`` and ``suppressed_values`` and lower on one of them
(without the third criterion, under ``"ignore"``, a suppression would look nearly free).
The risk is ``linkage_reidentifications`` (``"pareto_risk":
"linkage"``, the default) or ``expected_reidentifications`` (``"pareto_risk": "naive"``).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd

from sdc_core import rng
from sdc_core.classes import check_weights, sizes_from_keys
from sdc_core.data.columns import is_number, restore
from sdc_core.errors import SdcInputError
from sdc_core.keys import encode_keys
from sdc_core.methods.banding import measured, read_bands, recipe_labels, whole_number_columns
from sdc_core.methods.spec import Release
from sdc_core.names import MEASURES
from sdc_core.recipe import (
    METHODS,
    NOT_KEPT_ROWS,
    RANDOM_METHODS,
    Recipe,
    run_step,
    step_columns,
    table_step,
)
from sdc_core.risk.closeness import closeness
from sdc_core.risk.deniability import household_figures, recipe_deniability
from sdc_core.risk.inference import attribute_inference
from sdc_core.risk.linkage import linkage_attack
from sdc_core.risk.profile import profile_from_sizes
from sdc_core.risk.synthetic import recipe_synthetic_risk, synthesis_split
from sdc_core.sweep.grid import (
    ATTRIBUTE_TARGETS,
    CLOSENESS_TARGETS,
    HOUSEHOLD,
    KEEP_MEASURES,
    LINKAGE,
    LOSS,
    LOSSES,
    MAX_SEEDS,
    MAX_SETTINGS,
    MAX_SETTINGS_LIMIT,
    PARETO_RISK,
    POPULATION,
    RISK,
    SEARCHES,
    TARGET_MEASURES,
    VALIDITY,
    Grid,
    Setting,
    combination_setting,
    describe_setting,
    parse_grid,
)
from sdc_core.sweep.search import Dimension, Target, combinations, pruned_search, violations
from sdc_core.utility.eigen import column_correlations, correlation_matrix, tidy
from sdc_core.utility.il1 import (
    categorical_il1,
    check_il1_missing,
    combine,
    il1,
    numbers_in_both,
    numeric_il1,
    released_columns,
)

if TYPE_CHECKING:  # statsmodels and scipy load in a second: only for grids that need them
    from sdc_core.utility.analysis import AnalysisSpec

UTILITY = ["IL1_numeric", "IL1_categorical", "IL1_overall", "eigenvalue_similarity_percent"]
COLUMNS = ["method", "column", "param_name", "param_value"] + RISK + LINKAGE + UTILITY + [
    "pareto", "suppressed_values", "n_seeds"]
PREFIXES_KEPT = 64
#: The figures of a release read as a set of records (:mod:`sdc_core.risk.synthetic`) every row
#: of a grid with keys carries, besides ``disco_percent: <column>`` per sensitive column that
#: is not a key (docs/utility.md, "Synthesis in a sweep").
SYNTHETIC = ["replicated_uniques", "replicated_uniques_percent"]
#: The distance against a holdout, in the rows of a synthesis step that held records out.
HOLDOUT = ["dcr_train_share", "dcr_expected_share", "exact_copies"]
#: The column of a row whose release does not keep the original's rows (synthesis): why its
#: record-by-record figures are blank (the assessment's ``record_by_record``).
RECORD_BY_RECORD = "record_by_record"
Progress = Callable[[int, int, str], None]


class Changes(NamedTuple):
    """What a recipe's steps did to the table: the columns they changed (new values), one
    report per step, and the transition matrix of each PRAM-like step by step number."""

    values: dict[str, pd.Series]
    reports: list[dict[str, Any]]
    matrices: dict[int, pd.DataFrame]


class SweepContext:
    """What every setting shares: encoded keys, baseline measures, baseline correlations, and
    the released columns C of ``IL1_release`` (``df``'s columns less ``not_released``)."""

    def __init__(self, df: pd.DataFrame, qi: Sequence[str], numeric: Sequence[str], k: int,
                 weight: str | None, na: str, alpha: float, known: Sequence[str] = (),
                 il1_missing: str = "max", not_released: Sequence[str] = (),
                 analysis: AnalysisSpec | None = None,
                 sampling: dict[str, float] | None = None,
                 sensitive: Sequence[str] = (), household: str | None = None) -> None:
        self.df, self.qi, self.numeric, self.k = df, list(qi), list(numeric), k
        self.na, self.alpha, self.known = na, alpha, list(known)
        self.not_released = list(not_released)
        self.released = released_columns(list(df.columns), self.not_released)
        self.il1_missing = check_il1_missing(il1_missing)
        self.keys = encode_keys(df, qi, na)
        self.w = check_weights(df, weight)
        self.rid = rng.record_ids(len(df))
        self.whole = whole_number_columns(df)
        self.r0 = correlation_matrix(df, self.numeric)
        self.lam0 = np.sort(np.linalg.eigvalsh(self.r0))[::-1] if self.numeric else np.array([])
        self.attacked = df[self.qi + self.known]
        self._prefixes: OrderedDict[tuple[int, str], Changes] = OrderedDict()
        self.household, self.plan = household, None
        self.weight = weight
        if household is not None:
            from sdc_core.methods.households import household_plan

            if household in self.qi:
                raise SdcInputError(f"{household}: the household column cannot also be a key")
            self.plan = household_plan(df, household)
        self.baseline_risk = self.risk(self.keys) | self.linkage(self.attacked, None)
        self.validity, self.validity_columns = None, []
        if analysis is not None:
            from sdc_core.utility.analysis import analysis_columns
            from sdc_core.utility.validity import Validity

            self.validity = Validity(analysis, df)
            self.validity_columns = list(dict.fromkeys(
                [*analysis.table_columns(), *(c for a in analysis.analyses
                                              for c in analysis_columns(a))]))
        self.baseline_validity = self.analyses({})
        self.population_size = self._population_size(weight, sampling or {})
        # the population models' classes (a blank a category of its own), encoded once: a
        # setting re-encodes only the keys it changed
        self.population_keys = None if self.population_size is None else \
            encode_keys(df, self.qi, "category")
        self.baseline_population = self.population({})
        self.sensitive = list(sensitive)
        # the inference attack reads the keys, the known columns and the sensitive ones
        self.inferred = list(dict.fromkeys(self.qi + self.known + self.sensitive))
        self.baseline_inference = self.inference({}, None, [])
        # t-closeness and the rest of a sensitive column that is not a key
        self.closed = [c for c in self.sensitive if c not in self.qi]
        self.baseline_closeness = self.closeness({}, force=True)
        self.baseline_households = self.households({}, force=True)
        self.baseline_synthetic = self.synthetic(self.df[self.qi + self.closed])

    def households(self, changed: dict[str, pd.Series], recipe: Recipe | None = None,
                   reports: Sequence[dict[str, Any]] | None = None, force: bool = False
                   ) -> dict[str, float]:
        """``household_risk_pct``, ``household_expected_reidentifications`` (household risk
        of the released keys) and ``household_linkage_reidentified`` (the household linkage
        attack, with the ``recipe``'s public recodings as its steps' ``reports`` resolved
        them, and the known columns) with the grid's household; none without one
        (docs/utility.md, "Households in a sweep")."""
        if self.household is None:
            return {}
        if not force and not any(c in self.attacked for c in changed):
            return dict(self.baseline_households)
        from sdc_core.risk.household import household_linkage, household_risk

        cols = list(dict.fromkeys([*self.qi, *self.known, self.household]
                                  + ([self.weight] if self.weight else [])))
        release = self.df[cols].assign(**{c: v for c, v in changed.items() if c in cols})
        risk = household_risk(release, self.qi, self.household, self.weight, self.na,
                              self.alpha)
        attack = household_linkage(self.df[cols], release, self.qi, self.household, recipe,
                                   self.known, reports)
        return {"household_risk_pct": risk.risk_percent,
                "household_expected_reidentifications": risk.expected_reidentifications,
                "household_linkage_reidentified": float(attack.reidentified)}

    def deniability(self, recipe: Recipe, matrices: dict[int, pd.DataFrame],
                    changed: dict[str, pd.Series] | None = None) -> dict[str, float]:
        """``epsilon: <c>``, ``guess_accuracy: <c>`` per column the recipe perturbs
        (:func:`recipe_deniability`, from the step ``matrices`` the run held) and
        ``epsilon_max``, their largest ε; with the grid's household, also
        ``household_guess_accuracy: <c>`` and ``household_epsilon: <c>`` from the ``changed``
        columns (:func:`household_figures`); none when it perturbs no column (docs/utility.md,
        "Attribute disclosure in a sweep")."""
        if not any(METHODS[s["method"]].release is Release.PERTURBATION for s in recipe.steps):
            return {}
        out: dict[str, float] = {}
        # the steps read only their own columns: the table is cut to them (the same draws)
        touched = list(dict.fromkeys(c for s in recipe.steps for c in step_columns(s)))
        touched += [recipe.household] if recipe.household else []  # record swapping's
        figures = recipe_deniability(recipe, self.df[touched], matrices=matrices)
        if self.household is not None and figures:
            original = self.df[touched]
            released = original.assign(**{c: v for c, v in (changed or {}).items()
                                          if c in original.columns})
            figures = household_figures(figures, recipe, original, released, self.household)
        for d in figures:
            out |= {f"epsilon: {d.column}": d.epsilon,
                    f"guess_accuracy: {d.column}": d.guess_accuracy}
            if d.household is not None:
                out |= {f"household_guess_accuracy: {d.column}": d.household.guess_accuracy,
                        f"household_epsilon: {d.column}": d.household.epsilon}
        if out:
            out["epsilon_max"] = max(v for c, v in out.items() if c.startswith("epsilon: "))
        return out

    def inference(self, changed: dict[str, pd.Series], recipe: Recipe | None,
                  reports: list[dict[str, Any]]) -> dict[str, float]:
        """``inference_accuracy: <c>`` and ``inference_gain: <c>`` per sensitive column and the
        mean gain ``inference_gain`` (:func:`attribute_inference` with the grid's known
        columns) on the table with the ``changed`` columns; none without sensitive columns."""
        if not self.sensitive:
            return {}
        if changed and not any(c in self.inferred for c in changed):
            return dict(self.baseline_inference)
        released = self.df[self.inferred].assign(
            **{c: v for c, v in changed.items() if c in self.inferred})
        result = attribute_inference(self.df, released, self.qi, self.sensitive, recipe,
                                     self.known, reports=reports)
        out: dict[str, float] = {}
        for c in result.columns:
            out |= {f"inference_accuracy: {c.column}": c.accuracy,
                    f"inference_gain: {c.column}": c.gain}
        return out | {"inference_gain": result.gain}

    def closeness(self, changed: dict[str, pd.Series], force: bool = False) -> dict[str, float]:
        """``t_closeness: <c>``, ``beta_likeness: <c>``, ``enhanced_beta_likeness: <c>`` and
        ``delta_disclosure: <c>`` per sensitive column that is not a key
        (:func:`sdc_core.risk.closeness.closeness` of the release, default ``na``)."""
        if not self.closed:
            return {}
        read = self.qi + self.closed
        if not force and not any(c in read for c in changed):
            return dict(self.baseline_closeness)
        release = self.df[read].assign(**{c: v for c, v in changed.items() if c in read})
        out: dict[str, float] = {}
        for c in self.closed:
            r = closeness(release, self.qi, c)
            out |= {f"{m}: {c}": float(getattr(r, m)) for m in CLOSENESS_TARGETS}
        return out

    def risk(self, keys, w: np.ndarray | None = None) -> dict[str, float]:
        """The RISK figures of the encoded ``keys`` (weights ``w``: the original's by
        default)."""
        cs = sizes_from_keys(keys, self.w if w is None else w, self.alpha)
        m = profile_from_sizes(cs.fk, cs.Fk, cs.n_classes, self.k)
        return {key: m[key] for key in RISK}

    def linkage(self, released: pd.DataFrame, recipe: Recipe | None,
                reports: list[dict[str, Any]] | None = None) -> dict[str, float]:
        """The linkage attack on the quasi-identifiers (and known columns) of ``released``
        (``reports``: what each step of ``recipe`` did, as the attack reads its recodings)."""
        result = linkage_attack(self.attacked, released, self.qi, recipe, self.known, reports)
        return {"linkage_reidentifications": result.linkage_reidentifications,
                "linkage_risk_percent": result.linkage_risk_percent}

    def similarity(self, r: np.ndarray) -> float:
        p = len(self.numeric)
        if p == 0:
            return 100.0
        lam = np.sort(np.linalg.eigvalsh(r))[::-1]
        return float(100.0 * (1.0 - np.abs(lam - self.lam0).sum() / p))

    def column_setting(self, column: str, values: pd.Series, recipe: Recipe,
                       reports: list[dict[str, Any]]) -> dict[str, float]:
        """Measures after replacing one column by ``values`` (made by ``recipe``)."""
        original = self.df[column]
        # band labels count as their midpoints; a column recoded to text (rare codes →
        # "other") is compared as categories and leaves the correlation measure unchanged
        numbers = read_bands(values, original)
        is_num = column in self.numeric and is_number(original) and is_number(numbers)
        value, changed = numeric_il1(original, numbers, self.il1_missing) if is_num \
            else categorical_il1(original, numbers)
        loss = combine({column: value}, [column] if is_num else [], [column] if changed else [],
                       self.released, missing=self.il1_missing)
        risk = self.risk(self.keys.with_column(column, values, self.na)) \
            if column in self.qi else {key: self.baseline_risk[key] for key in RISK}
        if column in self.attacked:
            risk |= self.linkage(self.attacked.assign(**{column: values}), recipe, reports)
        else:
            risk |= {key: self.baseline_risk[key] for key in LINKAGE}
        similarity = 100.0
        if is_num:
            frame = self.df[self.numeric].assign(**{column: numbers})
            row = column_correlations(frame, column, self.numeric)
            j = self.numeric.index(column)
            r = self.r0.copy()
            r[j, :] = row
            r[:, j] = row
            similarity = self.similarity(tidy(r))
        suppressed = int((values.isna() & original.notna()).sum())
        return {**risk, **loss.summary(), "eigenvalue_similarity_percent": similarity,
                "suppressed_values": suppressed}

    def table_setting(self, protected: pd.DataFrame, recipe: Recipe, changed: Sequence[str],
                      reports: list[dict[str, Any]]) -> dict[str, float]:
        """Measures after steps that changed several columns (local suppression,
        microaggregation, noise, a combination). A numeric column recoded to text is compared
        as categories and leaves the correlation measure; band labels count as their
        midpoints."""
        numbers = measured(self.df, protected)
        numeric = numbers_in_both(self.df, numbers, self.numeric)
        result = il1(self.df, protected, [c for c in numeric if c in changed], list(changed),
                     missing=self.il1_missing, not_released=self.not_released)
        risk = self.risk(encode_keys(protected, self.qi, self.na)) \
            | self.linkage(protected[self.attacked.columns], recipe, reports)
        r = self.r0 if not self.numeric else correlation_matrix(
            numbers.assign(**{c: self.df[c] for c in self.numeric if c not in numeric}),
            self.numeric)
        suppressed = int(sum((protected[c].isna() & self.df[c].notna()).sum() for c in changed))
        return {**risk, **result.summary(), "eigenvalue_similarity_percent": self.similarity(r),
                "suppressed_values": suppressed}

    def _population_size(self, weight: str | None, given: dict[str, float]) -> float | None:
        """N, from the grid's ``sampling_fraction`` or ``population``, or the weights' sum."""
        if not given and weight is None:
            return None
        from sdc_core.risk.population_risk import sampling

        try:
            s = sampling(self.df, weight, given.get("sampling_fraction"), given.get("population"))
        except SdcInputError as err:
            if given:
                raise SdcInputError(f"grid: {err}") from None
            return None  # implied by weights that cannot be a population: no such figure
        return None if s is None else s.population

    def population(self, changed: dict[str, pd.Series]) -> dict[str, float]:
        """:data:`POPULATION` of the released keys (the ``changed`` ones replaced), when the
        grid says how the file was sampled; none otherwise."""
        if self.population_size is None:
            return {}
        moved = {c: v for c, v in changed.items() if c in self.qi}
        if changed and not moved:
            return dict(self.baseline_population)
        from sdc_core.risk.population import dankar_estimate, histogram_of_codes

        keys = self.population_keys
        assert keys is not None  # made with population_size
        for column, values in moved.items():
            keys = keys.with_column(column, values, "category")
        share = dankar_estimate(histogram_of_codes(keys),
                                population_size=self.population_size)[0].share
        assert share is not None  # Dankar's rule falls back on Zayatz, which always has one
        return {POPULATION: 100.0 * share}

    def analyses(self, changed: dict[str, pd.Series]) -> dict[str, float]:
        """The figures of the grid's benchmark analyses (:mod:`sdc_core.utility.validity`) on
        the table with the ``changed`` columns: the summary, then one per analysis; none
        without analyses."""
        if self.validity is None:
            return {}
        cols = self.validity_columns
        moved = [c for c in changed if c in cols]
        frame = self.df[cols].assign(**{c: changed[c] for c in moved})
        report = self.validity.compare(frame, changed=moved)
        return report.summary() | report.per_analysis()

    def changes(self, steps: list[dict[str, Any]], seed: int) -> Changes:
        """The columns ``steps`` change, with their values after the last one, what each step
        did (its report) and the step matrices. Prefixes are kept (least recently used first
        out), so combinations that share their first steps run them once."""
        key = (seed, json.dumps(steps, sort_keys=True, default=str))
        if key in self._prefixes:
            self._prefixes.move_to_end(key)
            return self._prefixes[key]
        before, reports, matrices = self.changes(steps[:-1], seed) if len(steps) > 1 \
            else Changes({}, [], {})
        step = steps[-1]
        cols = step_columns(step)
        if self.household is None:
            frame = pd.DataFrame({c: before[c] if c in before else self.df[c] for c in cols
                                  if c in before or c in self.df.columns}, index=self.df.index)
        else:  # a step on households reads the household column and its other parameters'
            frame = self.df.assign(**before)
        done = run_step(frame, step, seed, len(steps) - 1, self.rid, self.household, self.plan)
        out = Changes({**before, **{c: restore(self.df[c], done.values[c])
                                    for c in done.values.columns}}, reports + [done.info],
                      matrices if done.matrix is None else {**matrices,
                                                            len(steps): done.matrix})
        self._prefixes[key] = out
        if len(self._prefixes) > PREFIXES_KEPT:
            self._prefixes.popitem(last=False)
        return out

    def evaluate(self, steps: list[dict[str, Any]], seed: int) -> dict[str, float]:
        """The measures of the recipe ``steps`` run with ``seed`` on the original table."""
        if not steps:
            return self.baseline()
        steps = recipe_labels(steps, self.whole)  # its bands written as apply_recipe writes them
        if table_step(steps[-1]):
            return self.synthetic_setting(steps, seed)
        recipe = Recipe(seed=seed, steps=steps, household=self.household)
        changed, reports, matrices = self.changes(steps, seed)
        if len(changed) == 1:
            (column, values), = changed.items()
            measures = self.column_setting(column, values, recipe, reports)
        else:
            measures = self.table_setting(self.df.assign(**changed), recipe, list(changed),
                                          reports)
        return measures | self.analyses(changed) | self.population(changed) \
            | self.deniability(recipe, matrices, changed) \
            | self.inference(changed, recipe, reports) \
            | self.closeness(changed) | self.households(changed, recipe, reports) \
            | self.synthetic(self.df[self.qi + self.closed].assign(
                **{c: v for c, v in changed.items() if c in self.qi or c in self.closed}),
                recipe, reports, changed)

    def synthetic(self, released: pd.DataFrame, recipe: Recipe | None = None,
                  reports: list[dict[str, Any]] | None = None,
                  changed: dict[str, pd.Series] | None = None,
                  split: tuple[pd.DataFrame, np.ndarray] | None = None) -> dict[str, float]:
        """The release read as a set of records (:func:`recipe_synthetic_risk`, as the
        assessment's ``synthetic`` part): ``replicated_uniques``,
        ``replicated_uniques_percent`` and ``disco_percent: <c>`` per sensitive column that is
        not a key, against the original as the attacker sees it (the recipe's public
        recodings applied; with a synthesis step's holdout, ``split``, the records it fitted
        on, and the distance against the holdout, :data:`HOLDOUT`); none without keys. A
        release that keeps rows and changed no key or sensitive column has the baseline's."""
        if not self.qi:
            return {}
        if changed is not None and not any(c in self.qi or c in self.closed for c in changed):
            return dict(self.baseline_synthetic)
        numeric = [] if split is None else list(numbers_in_both(self.df, released,
                                                                 self.numeric))
        found = recipe_synthetic_risk(self.df, released, self.qi, self.closed, recipe, reports,
                                      numeric, split)
        out: dict[str, float] = {"replicated_uniques": float(found.replicated_uniques),
                                 "replicated_uniques_percent": found.replicated_uniques_percent}
        out |= {f"disco_percent: {c}": d.disco_percent for c, d in found.disco.items()}
        return out | {k: float(v) for k, v in (found.holdout or {}).items()}

    def synthetic_setting(self, steps: list[dict[str, Any]], seed: int) -> dict[str, float]:
        """The measures of a recipe whose last step makes a new table (synthesis) from the
        original after the steps before it: the released keys' risk (:data:`RISK`, the
        release's own weights), the population's, the benchmark analyses', t-closeness and
        the rest of each sensitive column, and :meth:`synthetic`; the figures that compare
        record by record (the measures that need ``rows``, :mod:`sdc_core.names`) and the
        suppressed values are left out, blank in the row
        (docs/utility.md, "Synthesis in a sweep")."""
        before, reports, _ = self.changes(steps[:-1], seed) if len(steps) > 1 \
            else Changes({}, [], {})
        given = self.df.assign(**before)
        index = len(steps) - 1
        done = run_step(given, steps[-1], seed, index, self.rid)
        release = done.values
        w = check_weights(release, self.weight)
        out = self.risk(encode_keys(release, self.qi, self.na), w)
        recipe = Recipe(seed=seed, steps=steps)  # as the assessment reads it
        out |= self.synthetic(release, recipe, reports + [done.info],
                              split=synthesis_split(self.df, recipe, given))
        if self.validity is not None:
            report = self.validity.compare(release[[c for c in self.validity_columns
                                                    if c in release.columns]])
            out |= report.summary() | report.per_analysis()
        if self.population_size is not None:
            from sdc_core.risk.population import dankar_estimate, histogram_of_codes

            share_unique = dankar_estimate(
                histogram_of_codes(encode_keys(release, self.qi, "category")),
                population_size=self.population_size)[0].share
            assert share_unique is not None  # Dankar's rule falls back on Zayatz
            out[POPULATION] = 100.0 * share_unique
        for c in self.closed:
            r = closeness(release[self.qi + self.closed], self.qi, c)
            out |= {f"{m}: {c}": float(getattr(r, m)) for m in CLOSENESS_TARGETS}
        return out

    def baseline(self) -> dict[str, float]:
        return {**self.baseline_risk, "IL1_release": 0.0, "IL1_numeric": 0.0,
                "IL1_categorical": 0.0, "IL1_overall": 0.0,
                "eigenvalue_similarity_percent": 100.0, "suppressed_values": 0,
                **self.baseline_validity, **self.baseline_population,
                **self.baseline_inference, **self.baseline_closeness,
                **self.baseline_households, **self.baseline_synthetic}


def pareto_front(*criteria: np.ndarray) -> np.ndarray:
    """True where no other point is ≤ on every criterion and < on one (lower is better); a
    criterion one of two points lacks (NaN: a synthetic row's suppressed values) does not
    decide between them."""
    pts = np.column_stack([np.asarray(c, dtype=float) for c in criteria])
    a, b = pts[None, :, :], pts[:, None, :]  # [i, j]: point j against point i
    lacking = np.isnan(a) | np.isnan(b)
    le = np.all((a <= b) | lacking, axis=2)
    lt = np.any(a < b, axis=2)
    return ~np.any(le & lt, axis=1)


@dataclass(frozen=True)
class SweepResult:
    """The trade-off table of a sweep, and with a target its best row.

    Made by :func:`run_sweep`. The table's loss is ``loss`` (:data:`LOSS` unless the grid chose
    another of :data:`LOSSES`); with a target, its best row (``best``: a table index, None when
    no setting meets it) and :attr:`best_recipe`, the recipe of that row; ``asked``: the settings
    the grid names, ``evaluated``: those run; ``violations``: evaluated pairs that contradict the
    pruned search's monotonicity.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per evaluated setting, the ``BASELINE`` first; the last column, ``recipe``, holds
        each setting's recipe as JSON.
    asked : int
        The settings (or combinations) the grid names.
    evaluated : int
        Those run.
    target : Target, optional
        The grid's target.
    best : int, optional
        The table index of the cheapest row that meets the target.
    violations : int, default 0
        Evaluated pairs that contradict the pruned search's monotonicity.
    pruned : bool, default False
        Whether the pruned search ran.
    loss : str, default "IL1_release"
        The loss the Pareto front and the target rank by.
    off_front : int, default 0
        The rows of releases that do not keep rows (synthesis) left out of the front and the
        best: the front's risk or loss compares record by record (:func:`off_the_front`).

    Examples
    --------
    >>> from sdc_core import example, load_example, run_sweep
    >>> df, roles = load_example(), example("actg175").roles
    >>> grid = {"numeric": roles.numeric, "not_released": roles.ignore, "settings": [
    ...     {"method": "band", "column": "age", "param": "width", "values": [5, 10]}]}
    >>> grid |= {"target": {"measure": "linkage_reidentifications", "at_most": 30}}
    >>> sweep = run_sweep(df, roles.qi, grid)
    >>> sweep.asked, sweep.evaluated, sweep.best
    (2, 2, 2)
    >>> sweep.best_recipe
    {'seed': 0, 'steps': [{'method': 'band', 'column': 'age', 'width': 10}]}
    """

    table: pd.DataFrame
    asked: int
    evaluated: int
    target: Target | None = None
    best: int | None = None
    violations: int = 0
    pruned: bool = False
    loss: str = LOSS
    off_front: int = 0

    @property
    def best_recipe(self) -> dict[str, Any] | None:
        """The best row's recipe (``{"seed", "steps"}``, for :func:`sdc_core.recipe.parse_recipe`);
        None without a best row."""
        return None if self.best is None else json.loads(self.table.at[self.best, "recipe"])


def _row(setting: Setting, results: list[dict[str, float]], seed: int,
         dims: list[Dimension] | None, household: str | None = None) -> dict[str, Any]:
    frame = pd.DataFrame(results)
    recipe: dict[str, Any] = {"seed": seed, "steps": setting.steps}
    if household is not None:
        recipe = {"seed": seed, "household": household, "steps": setting.steps}
    row = {"method": setting.method, "column": setting.column, "param_name": setting.param,
           "param_value": setting.value, **frame.mean().to_dict(), "n_seeds": len(results),
           RECORD_BY_RECORD: None if all(METHODS[s["method"]].keeps_rows for s in setting.steps)
           else NOT_KEPT_ROWS,
           "n_steps": len(setting.steps),
           "recipe": json.dumps(recipe, ensure_ascii=False)}
    if dims is not None:
        row |= {d.label: d.values[i] for d, i in zip(dims, setting.point)}
    if len(results) > 1:
        row |= {f"{c}_sd": v for c, v in frame.std(ddof=1).items()}
    return row


def attribute_columns(table: pd.DataFrame, perturbed: Sequence[str],
                      sensitive: Sequence[str], household: bool = False) -> list[str]:
    """The attribute-disclosure columns of a sweep's table, in order: ε and guess accuracy per
    perturbed column (with a ``household``, the household guess accuracy and ε too),
    ``epsilon_max``, then accuracy and gain per sensitive column and the mean gain; only those
    the grid asked for (a perturbing setting, a sensitive column)."""
    per = ("epsilon", "guess_accuracy") + (("household_guess_accuracy", "household_epsilon")
                                           if household else ())
    names = [f"{m}: {c}" for c in perturbed for m in per]
    names += ["epsilon_max"] if perturbed else []
    names += [f"{m}: {c}" for c in sensitive for m in ("inference_accuracy", "inference_gain")]
    names += ["inference_gain"] if sensitive else []
    names += [f"{m}: {c}" for c in sensitive for m in CLOSENESS_TARGETS
              if f"{m}: {c}" in table.columns]
    for c in names:
        if c not in table:  # no row reached it (a pruned search): a column of blanks
            table[c] = np.nan
    return names


def needs_rows(column: str) -> bool:
    """Whether a sweep table's ``column`` (a figure, ``<figure>: <column>`` or its ``_sd``)
    compares record by record (:mod:`sdc_core.names`: a measure that needs ``rows``), so a
    release that does not keep rows has no number for it; the suppressed values too."""
    base = column.removesuffix("_sd").split(": ")[0]
    return base == "suppressed_values" or (base in MEASURES and "rows" in MEASURES[base].needs)


def off_the_front(table: pd.DataFrame, risk: str, loss: str) -> pd.Series:
    """The rows the Pareto front and the best leave out: a release that does not keep rows
    (:data:`RECORD_BY_RECORD`) whose ``risk`` or ``loss`` is blank for it (the linkage risk,
    IL1), being at most as good as no other row on a figure it does not have."""
    if RECORD_BY_RECORD not in table:
        return pd.Series(False, index=table.index)
    return table[RECORD_BY_RECORD].notna() & (table[risk].isna() | table[loss].isna())


def _best(table: pd.DataFrame, loss: str = LOSS, off: pd.Series | None = None) -> int | None:
    """The row that meets the target at the least ``loss``, then fewest suppressed values,
    fewest steps, earliest (module docstring of :mod:`sdc_core.sweep.search`), among the rows
    not ``off`` the front (:func:`off_the_front`)."""
    kept = table["meets_target"] & (table["method"] != "BASELINE")
    met = table[kept if off is None else kept & ~off]
    if met.empty:
        return None
    order = met.assign(_at=np.arange(len(met))).sort_values(
        [loss, "suppressed_values", "n_steps", "_at"], kind="stable")
    return int(order.index[0])


def run_sweep(df: pd.DataFrame, qi: Sequence[str], grid: Any, weight: str | None = None,
              na: str = "wildcard", alpha: float = 1.0,
              progress: Progress | None = None) -> SweepResult:
    """The trade-off table of a grid (module docstring): one row of risk and loss per setting.

    Each setting of the grid is a recipe run on ``df``; its row holds the risk on ``qi`` (the
    measures of :func:`risk_profile` and of :func:`linkage_attack`), the loss
    IL1_release = (1/|C|) Σ_{c∈C} IL1_c (:func:`il1`), eigenvalue similarity and, with an
    ``"analysis"`` spec, the figures of :class:`Validity`. The unprotected ``BASELINE`` is the first
    row; ``pareto`` marks the rows no other row is as low as on the risk, the loss and the
    suppressed values, and lower on one. With ``"combine": true`` every combination of the settings
    is one recipe, and a ``"target"`` names the cheapest that meets a risk bound (a pruned search
    unless ``"search": "exhaustive"``); randomised methods run over ``seeds`` seeds and report the
    mean. ``docs/utility.md`` describes the grid's keys.

    Parameters
    ----------
    df : pandas.DataFrame
        The original table.
    qi : sequence of str
        The quasi-identifiers.
    grid : dict
        The grid: ``settings`` (each ``method``, ``column``, ``param``, ``values``, optional
        ``fixed``), and optionally ``seeds``, ``seed``, ``numeric``, ``k``, ``known``,
        ``not_released``, ``pareto_risk``, ``il1_missing``, ``combine``, ``target``, ``search``,
        ``max_settings``, ``analysis``, ``loss``, ``sensitive``, ``household``.
    weight : str, optional
        A sampling-weight column (as in :func:`risk_profile`).
    na : {"wildcard", "category"}, default "wildcard"
        The reading of a missing key.
    alpha : float, default 1.0
        The weight of a wildcard match.
    progress : callable, optional
        Called as ``progress(done, total, label)`` after each run.

    Returns
    -------
    SweepResult
        ``table`` one row per setting (the baseline first), and with a target the ``best`` row
        and its recipe (``best_recipe``).

    Raises
    ------
    SdcInputError
        When the grid is not valid (an unknown key, method, column or parameter, a value out of
        range, too many settings), a target needs the population size and nothing gives it, or
        a setting cannot run on the table; the message starts with ``grid``.

    Examples
    --------
    >>> from sdc_core import example, load_example, run_sweep
    >>> df, roles = load_example(), example("actg175").roles
    >>> grid = {"numeric": roles.numeric, "not_released": roles.ignore, "settings": [
    ...     {"method": "band", "column": "age", "param": "width", "values": [5, 10]}]}
    >>> sweep = run_sweep(df, roles.qi, grid)
    >>> columns = ["method", "param_value", "linkage_reidentifications", "IL1_release", "pareto"]
    >>> sweep.table[columns].round(4)
         method  param_value  linkage_reidentifications  IL1_release  pareto
    0  BASELINE          NaN                      182.0       0.0000    True
    1      band          5.0                       44.0       0.0009    True
    2      band         10.0                       25.0       0.0017    True
    """
    g = parse_grid(grid, df)
    settings = g.settings or [combination_setting(g.dimensions, x)
                              for x in combinations(g.dimensions)]
    try:
        ctx = SweepContext(df, qi, g.numeric, g.k, weight, na, alpha, g.known, g.il1_missing,
                           g.not_released, g.analysis, g.sampling, g.sensitive, g.household)
    except SdcInputError as err:
        raise SdcInputError(f"grid: {err}") from None
    if g.target is not None and g.target.measure == POPULATION and ctx.population_size is None:
        raise SdcInputError(f"grid: the target {POPULATION} needs the population: "
                            '"sampling_fraction", "population" or a weight column')
    if g.target is not None and g.target.measure.split(": ")[0] in CLOSENESS_TARGETS \
            and g.target.measure.split(": ", 1)[1] in qi:
        raise SdcInputError(f"grid: the target {g.target.measure} needs a sensitive column "
                            "that is not a key")
    rows: dict[int, dict[str, Any]] = {}  # by the setting's position in enumeration order

    def runs(steps: list[dict[str, Any]]) -> int:
        return g.seeds if any(s["method"] in RANDOM_METHODS for s in steps) else 1

    total = sum(runs(s.steps) for s in settings)
    done = 0

    def evaluate(i: int) -> dict[str, Any]:
        """Run setting i (over the seeds) and keep its row."""
        nonlocal done
        s = settings[i]
        label = describe_setting(s)
        results = []
        for j in range(runs(s.steps)):
            try:
                results.append(ctx.evaluate(s.steps, g.seed + j))
            except SdcInputError as err:
                raise SdcInputError(f"grid setting {label}: {err}") from None
            done += 1
            if progress:
                progress(done, total, label)
        rows[i] = _row(s, results, g.seed, g.dims, g.household)
        return rows[i]

    pruned = g.dims is not None and g.target is not None and g.search == "pruned"
    if pruned:
        target = g.target
        assert target is not None
        at = {s.combination: i for i, s in enumerate(settings)}
        pruned_search(g.dimensions, lambda x: target.met(evaluate(at[x])[target.measure]))
    else:
        for i in range(len(settings)):
            evaluate(i)
    base = {"method": "BASELINE", "column": "", "param_name": "", "param_value": np.nan,
            **ctx.baseline(), "n_seeds": 1, "n_steps": 0,
            "recipe": json.dumps({"seed": g.seed, "steps": []}
                                 | ({"household": g.household} if g.household else {}))}
    done_at = sorted(rows)
    table = pd.DataFrame([base] + [rows[i] for i in done_at])
    # a synthetic row without the front's risk or loss is left out of it; a loss that could
    # not be had otherwise (NaN: no analysis with intervals) ranks last
    off = off_the_front(table, PARETO_RISK[g.pareto_risk], g.loss)
    on = ~off.to_numpy()
    front = np.zeros(len(table), dtype=bool)
    front[on] = pareto_front(table[PARETO_RISK[g.pareto_risk]][on],
                             table[g.loss][on].fillna(np.inf), table["suppressed_values"][on])
    table["pareto"] = front
    validity = list(ctx.baseline_validity)  # the analyses' figures (not their _sd columns)
    attribute = attribute_columns(table, g.perturbed, g.sensitive, g.household is not None)
    households = list(ctx.baseline_households)
    synthetic = list(ctx.baseline_synthetic) + [c for c in HOLDOUT if c in table]
    whole = any(r[RECORD_BY_RECORD] is not None for r in rows.values())
    extra = [LOSS] + validity + list(ctx.baseline_population) + households + attribute + \
        synthetic + [d.label for d in g.dims or []] + ["n_steps"] + (
            [RECORD_BY_RECORD] if whole else [])
    if g.target is not None:
        met = table[g.target.measure] <= g.target.at_most
        if g.target.keep is not None:
            met &= table[g.target.keep.measure].map(g.target.keep.met)
        table["meets_target"] = met
        best = _best(table, g.loss, off)
        table["best"] = table.index == best
        extra += ["meets_target", "best"]
    sd_cols = [f"{c}_sd" for c in RISK + LINKAGE + UTILITY + [LOSS] + validity + [POPULATION]
               + households + attribute + synthetic
               if f"{c}_sd" in table]
    table = table[COLUMNS + extra + sd_cols + ["recipe"]]
    found = None if g.target is None else best
    bad = 0
    if g.dims and g.target is not None:
        evaluated = table.iloc[1:]
        bad = violations(g.dims, [settings[i].point for i in done_at],
                         evaluated[g.target.measure], evaluated[g.loss])
    return SweepResult(table, len(settings), len(table) - 1, g.target, found, bad, pruned,
                       g.loss, int(off.sum()))


__all__ = ["ATTRIBUTE_TARGETS", "COLUMNS", "HOUSEHOLD", "KEEP_MEASURES", "LINKAGE", "LOSS",
           "LOSSES", "MAX_SEEDS", "MAX_SETTINGS", "MAX_SETTINGS_LIMIT", "PARETO_RISK", "POPULATION",
           "PREFIXES_KEPT", "RECORD_BY_RECORD", "RISK", "SEARCHES", "TARGET_MEASURES",
           "UTILITY", "VALIDITY", "Grid",
           "Progress", "SYNTHETIC", "Setting", "SweepContext", "SweepResult",
           "attribute_columns", "combination_setting", "describe_setting", "needs_rows",
           "off_the_front", "pareto_front", "parse_grid", "run_sweep"]
