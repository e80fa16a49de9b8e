"""One assessment of a release: the figures of a protected table, each part computed once, on
first access (docs/architecture.md, "A measure").

A release is judged in a **setting** (:class:`Setting`): the roles of the columns (keys,
numeric columns, sensitive columns, the columns an attacker also knows, the weight and the
household id), how risk is measured (:class:`RiskOptions`: the threshold k, missing keys as
wildcards or a category, α), how information loss is read and how the file was sampled.
:func:`assess` takes the original, the release (a table, or None: the recipe's), the setting
and, when known, the recipe that made the release, and gives an :class:`Assessment` whose
parts are:

- ``keys``: the risk profile of the released keys (:func:`~sdc_core.risk.risk_profile`);
- ``linkage``: the linkage attack of the original's attacker on the release, the recipe's
  public recodings applied first (:func:`~sdc_core.risk.linkage.linkage_attack`);
- ``loss``, ``similarity``, ``numeric``, ``distribution``: IL1 (of the columns the recipe
  touches when the assessment applied it, else of every column), the eigenvalue similarity of
  the numeric columns, the numeric columns both tables hold numbers in, and how far each
  column's distribution moved (:mod:`sdc_core.utility`);
- ``cell_loss``: the setting's frequency tables compared cell by cell;
- ``analyses``: whether the benchmark analyses hold, when a spec is given;
- ``deniability``: what the perturbation buys, per perturbed column and, with a household id,
  per household (:mod:`sdc_core.risk.deniability`);
- ``inference``, ``closeness``: the attribute-inference attack on the sensitive columns and
  the release's t-closeness, β-likeness and δ-disclosure of each;
- ``closest``: the distance of each released record to the closest original record, on the
  numeric columns (it needs no row correspondence);
- ``households``, ``household_linkage``: the household risk, composition uniques and
  household linkage attack, and that attack alone;
- ``synthetic``, ``disco``: the release read as a set of records (replicated uniques, DiSCO
  beside DiO, the distance against a holdout), and its DiSCO alone;
- ``population``: the risk in the population, from how the file was sampled.

:meth:`Assessment.to_json` is ``compare --json``: the parts under their keys
(:mod:`sdc_core.names`).

A part that the setting does not ask for, or that cannot be computed, holds an
:class:`Unavailable` with its reason, never a text in a number's place.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pandas as pd

from sdc_core.checks import check_k
from sdc_core.classes import check_alpha
from sdc_core.errors import SdcInputError
from sdc_core.keys import NA_MODES
from sdc_core.recipe import (
    NOT_KEPT_ROWS,
    ApplyResult,
    Recipe,
    apply_recipe,
    keeps_rows,
    step_columns,
)
from sdc_core.risk import RiskProfile, risk_profile
from sdc_core.risk.closeness import Closeness, closeness_json, closeness_report
from sdc_core.risk.deniability import Deniability, household_figures, recipe_deniability
from sdc_core.risk.household import (
    HouseholdFigures,
    HouseholdLinkage,
    HouseholdRisk,
    composition_uniques,
    household_linkage,
    household_risk,
    table_households,
)
from sdc_core.risk.inference import InferenceResult, attribute_inference
from sdc_core.risk.linkage import LinkageResult, linkage_attack
from sdc_core.utility.il1 import IL1Result, check_aligned, il1, numbers_in_both

if TYPE_CHECKING:  # imported where a part needs them (scipy and statsmodels take seconds)
    from sdc_core.risk.closest import ClosestRecord
    from sdc_core.risk.population_risk import PopulationRisk
    from sdc_core.risk.synthetic import Disco, SyntheticRisk
    from sdc_core.utility.analysis import AnalysisSpec
    from sdc_core.utility.cell_loss import CellLossReport
    from sdc_core.utility.validity import ValidityReport

T = TypeVar("T")
E = TypeVar("E")


@dataclass(frozen=True)
class RiskOptions:
    """How risk is measured: the threshold ``k`` (a class of fewer than k records is at risk),
    missing key values as wildcards or a category (``na``) and ``alpha``, the weight a
    missing value has in the class sizes (docs/measures.md, "Missing key values")."""

    k: int = 5
    na: str = "wildcard"
    alpha: float = 1.0

    def __post_init__(self) -> None:
        check_k(self.k)
        check_alpha(self.alpha)
        if self.na not in NA_MODES:
            raise SdcInputError(f"na must be one of {', '.join(NA_MODES)}, not {self.na!r}")


@dataclass(frozen=True)
class Sampling:
    """How the file was sampled from its population: the sampling fraction or the population
    size (one is enough; docs/measures.md, "Risk in the population")."""

    sampling_fraction: float | None = None
    population_size: float | None = None


@dataclass(frozen=True)
class Setting:
    """What a release is judged in: the columns' roles, how risk is measured, how information
    loss reads a blanked number (``il1_missing``) and which columns are not released, the
    frequency tables to compare cell by cell, whether to measure the distance to the closest
    record (``closest``: a k-d tree query per released record, seconds on 10⁵ records) and how
    the file was sampled (None: nothing says). Tuples, so that a setting can key a cache."""

    qi: tuple[str, ...]
    numeric: tuple[str, ...] = ()
    sensitive: tuple[str, ...] = ()
    known: tuple[str, ...] = ()
    weight: str | None = None
    household: str | None = None
    risk: RiskOptions = RiskOptions()
    sampling: Sampling | None = None
    il1_missing: str = "max"
    not_released: tuple[str, ...] = ()
    tables: tuple[tuple[str, ...], ...] = ()
    closest: bool = False


@dataclass(frozen=True)
class Unavailable:
    """A part of an assessment that is not there, and why: ``asked`` False when the setting
    does not call for it (no sensitive column, no household id), True when it does but the
    part cannot be computed (the reason is then the error's one line)."""

    reason: str
    asked: bool = True


#: Why an assessment without its recipe has no deniability figures.
NO_RECIPE = ("no recipe: which columns were perturbed, and how, is unknown, so their "
             "deniability is not computed")


class Assessment:
    """The figures of one release in one setting (the module's text); each part is computed
    on first access and kept. ``applied``: the recipe's result when the assessment made the
    release itself (the recipe's steps then say which columns can have changed)."""

    def __init__(self, original: pd.DataFrame, released: pd.DataFrame, setting: Setting,
                 recipe: Recipe | None = None, applied: ApplyResult | None = None,
                 analyses: AnalysisSpec | None = None) -> None:
        self.original = original
        self.released = released
        self.setting = setting
        self.recipe = recipe
        self.applied = applied
        self.spec = analyses

    def keep(self, **parts: Any) -> None:
        """Parts computed elsewhere (another worker process, from the same original, release
        and setting), kept as if computed here."""
        unknown = [p for p in parts if not self.is_part(p)]
        if unknown:
            raise ValueError(f"not parts of an assessment: {', '.join(unknown)}")
        self.__dict__.update(parts)

    def computed(self, *parts: str) -> Assessment:
        """The assessment with ``parts`` computed now, where it runs (a worker process that
        sends it back), rather than on first access."""
        for part in parts:
            if not self.is_part(part):
                raise ValueError(f"not a part of an assessment: {part}")
            getattr(self, part)
        return self

    @classmethod
    def is_part(cls, name: str) -> bool:
        """Whether ``name`` is a part (computed on first access), not a field or a method."""
        return isinstance(getattr(cls, name, None), cached_property)

    @cached_property
    def reports(self) -> list[dict[str, Any]] | None:
        """What each step of the recipe did (the recodings as the release resolved them),
        read by every attack; None without a recipe."""
        if self.applied is not None:
            return self.applied.reports
        return apply_recipe(self.recipe, self.original).reports if self.recipe else None

    @cached_property
    def rows(self) -> str | None:
        """Why row i of the release is not the release of the original's row i, which every
        measure that compares record by record needs (docs/architecture.md, "A measure"):
        None when it is (as far as can be told: the recipe's methods keep rows, the two
        tables have as many records)."""
        if self.recipe is not None and not keeps_rows(self.recipe):
            return NOT_KEPT_ROWS
        if len(self.released) != len(self.original):
            return (f"the release has {len(self.released)} records, the original "
                    f"{len(self.original)}: a measure that compares record by record needs "
                    "the release of each record in its row")
        return None

    def _aligned(self) -> None:
        """Refuse, with its reason, a release whose rows are not the original's."""
        if self.rows is not None:
            raise SdcInputError(self.rows)

    @cached_property
    def keys(self) -> RiskProfile:
        """The risk profile of the released keys."""
        s = self.setting
        return risk_profile(self.released, list(s.qi), weight=s.weight, k=s.risk.k,
                            na=s.risk.na, alpha=s.risk.alpha)

    @cached_property
    def linkage(self) -> LinkageResult:
        """The linkage attack of the original's attacker (the keys and the known columns, the
        recipe's public recodings applied as the release resolved them)."""
        self._aligned()
        return linkage_attack(self.original, self.released, list(self.setting.qi), self.recipe,
                              list(self.setting.known), self.reports)

    @cached_property
    def touched(self) -> list[str] | None:
        """The columns the recipe's steps name, in the order they first appear, when the
        assessment applied the recipe itself; None (every column may have changed) for a
        release read from elsewhere."""
        if self.applied is None or self.recipe is None:
            return None
        return list(dict.fromkeys(c for s in self.recipe.steps for c in step_columns(s)))

    @cached_property
    def loss(self) -> IL1Result:
        """IL1 of the touched columns (of every column for a release read from elsewhere),
        every column released but the setting's ``not_released`` (a column recoded to text is
        compared as categories)."""
        self._aligned()
        s = self.setting
        return il1(self.original, self.released, list(s.numeric), columns=self.touched,
                   missing=s.il1_missing, not_released=list(s.not_released))

    @cached_property
    def numeric(self) -> list[str]:
        """The numeric columns that hold numbers in both tables."""
        return list(numbers_in_both(self.original, self.released, list(self.setting.numeric)))

    @cached_property
    def similarity(self) -> float:
        """The eigenvalue similarity (%) of the numeric columns' correlations (those the
        release holds: a dropped column has no correlations left to compare)."""
        from sdc_core.utility import eigenvalue_similarity

        self._aligned()
        return eigenvalue_similarity(self.original, self.released, self.released_numeric)

    @cached_property
    def released_numeric(self) -> list[str]:
        """The setting's numeric columns that the release holds."""
        return [c for c in self.setting.numeric if c in self.released.columns]

    @cached_property
    def distribution(self) -> pd.DataFrame:
        """How far each column's distribution moved (TVD, KS, mean and sd shifts)."""
        from sdc_core.utility import distribution_report

        return distribution_report(self.original, self.released, self.released_numeric)

    @cached_property
    def cell_loss(self) -> CellLossReport | Unavailable:
        """The setting's frequency tables compared cell by cell, a household once with a
        household id (docs/utility.md, "Tables after record swapping")."""
        from sdc_core.utility.cell_loss import cell_loss

        if not self.setting.tables:
            return Unavailable("no table to compare", asked=False)
        return cell_loss(self.original, self.released, [list(t) for t in self.setting.tables],
                         household=self.setting.household)

    @cached_property
    def analyses(self) -> ValidityReport | Unavailable:
        """Whether the benchmark analyses hold on the release (docs/utility.md)."""
        from sdc_core.utility.validity import Validity

        if self.spec is None:
            return Unavailable("no benchmark analyses", asked=False)
        return Validity(self.spec, self.original).compare(self.released)

    @cached_property
    def person_deniability(self) -> tuple[Deniability, ...] | Unavailable:
        """The deniability of every column the recipe perturbs, record by record."""
        if self.recipe is None:
            return Unavailable(NO_RECIPE, asked=False)
        if self.rows is not None:
            return Unavailable(self.rows)
        matrices = self.applied.matrices if self.applied is not None else None
        return tuple(recipe_deniability(self.recipe, self.original, matrices=matrices))

    @cached_property
    def household_deniability(self) -> tuple[Deniability, ...] | Unavailable:
        """:attr:`person_deniability` with what all of a household's released records give
        away (the setting's household id, else the recipe's)."""
        figures = self.person_deniability
        household = self.setting.household or (self.recipe.household if self.recipe else None)
        if isinstance(figures, Unavailable) or household is None or not figures:
            return Unavailable("no household id", asked=False)
        try:
            return tuple(household_figures(figures, self.recipe, self.original,  # type: ignore[arg-type]
                                           self.released, household))
        except SdcInputError as err:
            return Unavailable(str(err))

    @cached_property
    def deniability(self) -> tuple[Deniability, ...]:
        """What the perturbation buys: per household where the household id can be read,
        else per record; nothing without a recipe (``households`` says why a household id
        cannot be read)."""
        if not isinstance(self.household_deniability, Unavailable):
            return self.household_deniability
        person = self.person_deniability
        return () if isinstance(person, Unavailable) else person

    @cached_property
    def sensitive(self) -> list[str]:
        """The sensitive columns both tables hold that are not a key or a known column."""
        s = self.setting
        return [c for c in s.sensitive if c in self.released.columns
                and c in self.original.columns and c not in s.qi and c not in s.known]

    @cached_property
    def inference(self) -> InferenceResult | Unavailable:
        """The attribute-inference attack by the linkage attack's attacker on the sensitive
        columns the release keeps (not a key or a known column)."""
        s = self.setting
        if not self.sensitive or not s.qi:
            return Unavailable("no sensitive column beside the keys", asked=False)
        if self.rows is not None:
            return Unavailable(self.rows)
        try:
            return attribute_inference(self.original, self.released, list(s.qi),
                                       self.sensitive, self.recipe, list(s.known),
                                       reports=self.reports)
        except SdcInputError as err:
            return Unavailable(str(err))

    @cached_property
    def closeness(self) -> dict[str, Closeness] | Unavailable:
        """t-closeness, β-likeness and δ-disclosure of each sensitive column of the release,
        a blank key a value of its own (docs/measures.md, "t-closeness, β-likeness and
        δ-disclosure")."""
        columns = [c for c in self.setting.sensitive
                   if c in self.released.columns and c not in self.setting.qi]
        if not columns:
            return Unavailable("no sensitive column beside the keys", asked=False)
        try:
            return closeness_report(self.released, list(self.setting.qi), columns, "category")
        except SdcInputError as err:
            return Unavailable(str(err))

    @cached_property
    def households(self) -> HouseholdFigures | Unavailable:
        """The household risk, composition uniques and household linkage attack of the
        release (docs/measures.md, "Household risk")."""
        s = self.setting
        if not s.household or not s.qi:
            return Unavailable("no household id", asked=False)
        if self.rows is not None:
            return Unavailable(self.rows)
        try:
            return table_households(self.original, self.released, list(s.qi), s.household,
                                    s.weight, s.risk.na, s.risk.alpha, self.recipe,
                                    list(s.known), self.reports)
        except SdcInputError as err:
            return Unavailable(str(err))

    @cached_property
    def household_risk(self) -> HouseholdRisk | Unavailable:
        """The household risk R_h = 1 − Π_{j∈h}(1 − r_j) of the released keys alone, without
        the attack (docs/measures.md, "Household risk")."""
        s = self.setting
        if not s.household:
            return Unavailable("no household id", asked=False)
        try:
            return household_risk(self.released, list(s.qi), s.household, s.weight,
                                  s.risk.na, s.risk.alpha)
        except SdcInputError as err:
            return Unavailable(str(err))

    @cached_property
    def composition_uniques(self) -> int | Unavailable:
        """The release's households unique by composition."""
        s = self.setting
        if not s.household:
            return Unavailable("no household id", asked=False)
        try:
            return composition_uniques(self.released, list(s.qi), s.household)
        except SdcInputError as err:
            return Unavailable(str(err))

    @cached_property
    def household_linkage(self) -> HouseholdLinkage | Unavailable:
        """The household linkage attack alone (the ``households`` part's, when that part was
        computed already)."""
        s = self.setting
        if not s.household or not s.qi:
            return Unavailable("no household id", asked=False)
        if self.rows is not None:
            return Unavailable(self.rows)
        if "households" in self.__dict__ and isinstance(self.households, HouseholdFigures):
            return self.households.attack
        return household_linkage(self.original, self.released, list(s.qi), s.household,
                                 self.recipe, list(s.known), self.reports)

    @cached_property
    def closest(self) -> ClosestRecord | Unavailable:
        """The distance to the closest original record of each released record, on the
        numeric columns (docs/measures.md, "Distance to the closest record"); it needs no row
        correspondence."""
        from sdc_core.risk.closest import closest_record

        if not self.setting.closest:
            return Unavailable("the distance to the closest record was not asked for",
                               asked=False)
        try:
            return closest_record(self.original, self.released, list(self.setting.numeric))
        except SdcInputError as err:
            return Unavailable(str(err))

    @cached_property
    def split(self) -> tuple[pd.DataFrame, np.ndarray] | None:
        """The table a synthesis step of the recipe was given (the original after the steps
        before it) and which of its records the step held out of the fit
        (:func:`~sdc_core.risk.synthetic.synthesis_split`). None without a synthesis step
        that held records out."""
        from sdc_core.risk.synthetic import synthesis_split

        return synthesis_split(self.original, self.recipe)

    @property
    def held_out(self) -> tuple[pd.DataFrame, pd.DataFrame] | None:
        """The records a synthesis step fitted on and those it held out, as it was given them
        (:attr:`split`); None without a holdout."""
        if self.split is None:
            return None
        given, out = self.split
        return given[~out], given[out]

    @cached_property
    def synthetic(self) -> SyntheticRisk | Unavailable:
        """The release read as a set of records (docs/measures.md, "Disclosure risk of a
        synthetic release"): replicated uniques on the keys and DiSCO of each sensitive
        column beside the original's own, against the original as the attacker sees it (the
        recipe's public recodings applied; with a holdout, the records the synthesis step
        fitted on), and, when a synthesis step held records out, the distance against the
        holdout on the numeric columns, between the records as the step was given them.
        Needs no row correspondence: it applies to any release."""
        from sdc_core.risk.synthetic import recipe_synthetic_risk

        s = self.setting
        if not s.qi:
            return Unavailable("no quasi-identifiers", asked=False)
        closed = [c for c in s.sensitive if c not in s.qi]  # a key is no secret of its own
        return recipe_synthetic_risk(self.original, self.released, list(s.qi), closed,
                                     self.recipe, self.reports, self.numeric, self.split)

    @cached_property
    def disco(self) -> Mapping[str, Disco] | Unavailable:
        """DiSCO beside DiO of each sensitive column (the :attr:`synthetic` part's)."""
        found = self.synthetic
        if isinstance(found, Unavailable):
            return found
        if not found.disco:
            return Unavailable("no sensitive column beside the keys", asked=False)
        return found.disco

    @cached_property
    def population(self) -> PopulationRisk | Unavailable:
        """The risk in the population of the release, from how the file was sampled."""
        from sdc_core.risk.population_risk import population_risk

        s = self.setting
        sampling = s.sampling or Sampling()
        try:
            found = population_risk(self.released, list(s.qi), s.weight,
                                    sampling.sampling_fraction, sampling.population_size)
        except SdcInputError as err:
            return Unavailable(str(err))
        return found if found is not None else Unavailable(
            "nothing says how the file was sampled", asked=False)

    def to_json(self, distribution: bool = True) -> dict[str, Any]:
        """The assessment as ``compare --json`` gives it: IL1 and the eigenvalue similarity;
        with keys, the linkage attack and, with a recipe, what the perturbation buys
        (``attribute``), with sensitive columns ``inference`` and
        ``closeness``; the benchmark analyses, the household linkage attack and the tables'
        ``cell_loss`` when the setting asks; ``distribution`` (``distribution=False``: left
        out). A part the setting asks for that cannot be computed raises its error."""
        s = self.setting
        if self.rows is not None:
            return self._unaligned_json(distribution)
        loss = self.loss
        out: dict[str, Any] = {**loss.summary(), "il1_missing": loss.il1_missing,
                               "eigenvalue_similarity_percent": self.similarity,
                               "numeric": self.released_numeric,
                               "released_columns": loss.released,
                               "dropped_columns": loss.dropped, "changed_columns": loss.changed,
                               "per_column": loss.per_column}
        if s.qi:
            out.update(self.linkage.summary())
            if not isinstance(self.person_deniability, Unavailable):
                out["attribute"] = [d.to_json() for d in given(self.deniability_strict)]
            if s.sensitive:
                out["inference"] = json.loads(given(self.inference).to_json())
                out["closeness"] = closeness_json(given(self.closeness))
        if s.qi:
            out.update(given(self.synthetic).to_json())
        return self._common_json(out, distribution)

    def _unaligned_json(self, distribution: bool) -> dict[str, Any]:
        """:meth:`to_json` of a release whose row i is not the release of the original's row
        i (a synthetic file): ``record_by_record`` says why the measures that compare record
        by record (IL1, the eigenvalue similarity, the linkage attacks, deniability, the
        attribute-inference attack) give no number; the measures of the release as a set of
        records are given."""
        check_aligned(self.original, self.released, dropped=True, rows=False)  # its columns
        s = self.setting
        out: dict[str, Any] = {"record_by_record": self.rows, "numeric": self.released_numeric,
                               "released_columns": [str(c) for c in self.released.columns],
                               "records": len(self.released),
                               "original_records": len(self.original)}
        if s.qi:
            out.update(given(self.synthetic).to_json())
            if s.sensitive:
                out["closeness"] = closeness_json(given(self.closeness))
        return self._common_json(out, distribution)

    def _common_json(self, out: dict[str, Any], distribution: bool) -> dict[str, Any]:
        """The parts of :meth:`to_json` that need no row correspondence."""
        s = self.setting
        if s.closest:
            out.update(given(self.closest).summary())
        if self.spec is not None:
            out.update(given(self.analyses).to_json())
        if s.household is not None and s.qi and self.rows is None:
            out["household_linkage"] = given(self.household_linkage).summary()
        if s.tables:
            out["cell_loss"] = given(self.cell_loss).to_json()
        if distribution:
            out["distribution"] = json.loads(self.distribution.to_json(orient="records"))
        return out

    @property
    def deniability_strict(self) -> tuple[Deniability, ...] | Unavailable:
        """:attr:`deniability`, where a household id that cannot be read is an error."""
        household = self.household_deniability
        if isinstance(household, Unavailable) and household.asked:
            return household
        return self.deniability


def given(part: Any) -> Any:
    """A part, or its error (:class:`SdcInputError`) when it cannot be computed."""
    if isinstance(part, Unavailable):
        raise SdcInputError(part.reason)
    return part


def given_or(part: T | Unavailable, empty: E) -> T | E:
    """A part; ``empty`` where the setting does not ask for it; its error
    (:class:`SdcInputError`) where it is asked for and cannot be computed."""
    if isinstance(part, Unavailable):
        if part.asked:
            raise SdcInputError(part.reason)
        return empty
    return part


def assess(original: pd.DataFrame, released: pd.DataFrame | None, setting: Setting,
           recipe: Recipe | None = None, applied: ApplyResult | None = None,
           analyses: AnalysisSpec | None = None) -> Assessment:
    """The assessment of ``released`` (None: the release ``recipe`` makes of ``original``) in
    ``setting``; ``recipe``: the recipe that made it, when known; ``applied``: the result of
    applying it, when the caller has it already (a recipe's draws are seeded, so applying it
    again gives the same table); ``analyses``: benchmark analyses to re-estimate."""
    if released is None:
        if recipe is None:
            raise SdcInputError("nothing to assess: give the release or its recipe")
        applied = applied or apply_recipe(recipe, original)
        released = applied.data
    return Assessment(original, released, setting, recipe, applied, analyses)
