"""One assessment of a release: the figures of a protected table, each part computed once, on
first access (docs/architecture.md, "A measure").

A release is judged in a **setting** (:class:`Setting`): the roles of the columns (keys,
numeric columns, sensitive columns, the columns an attacker also knows, the weight and the
household id), how risk is measured (:class:`RiskOptions`: the threshold k, missing keys as
wildcards or a category, α) and how the file was sampled. :func:`assess` takes the original,
the release, the setting and the recipe that made the release, and gives an
:class:`Assessment` whose parts are:

- ``keys``: the risk profile of the released keys (:func:`~sdc_core.risk.risk_profile`);
- ``linkage``: the linkage attack of the original's attacker on the release, the recipe's
  public recodings applied first (:func:`~sdc_core.risk.linkage.linkage_attack`);
- ``loss``, ``similarity``, ``numeric``: IL1 of the columns the recipe touches, the
  eigenvalue similarity of the numeric columns, and the numeric columns both tables hold
  numbers in (:mod:`sdc_core.utility`);
- ``deniability``: what the perturbation buys, per perturbed column and, with a household id,
  per household (:mod:`sdc_core.risk.deniability`);
- ``inference``: the attribute-inference attack on the sensitive columns;
- ``households``: the household risk, composition uniques and household linkage attack;
- ``population``: the risk in the population, from how the file was sampled.

A part that the setting does not ask for, or that cannot be computed, holds an
:class:`Unavailable` with its reason, never a text in a number's place.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import pandas as pd

from sdc_core.checks import check_k
from sdc_core.classes import check_alpha
from sdc_core.errors import SdcInputError
from sdc_core.keys import NA_MODES
from sdc_core.recipe import ApplyResult, Recipe, apply_recipe
from sdc_core.risk import RiskProfile, risk_profile
from sdc_core.risk.deniability import Deniability, household_figures, recipe_deniability
from sdc_core.risk.household import HouseholdFigures, table_households
from sdc_core.risk.inference import InferenceResult, attribute_inference
from sdc_core.risk.linkage import LinkageResult, linkage_attack
from sdc_core.risk.population_risk import PopulationRisk, population_risk
from sdc_core.utility import eigenvalue_similarity, il1
from sdc_core.utility.il1 import IL1Result, numbers_in_both


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
    """What a release is judged in: the columns' roles, how risk is measured and how the file
    was sampled (None: nothing says). Tuples, so that a setting can key a cache."""

    qi: tuple[str, ...]
    numeric: tuple[str, ...] = ()
    sensitive: tuple[str, ...] = ()
    known: tuple[str, ...] = ()
    weight: str | None = None
    household: str | None = None
    risk: RiskOptions = RiskOptions()
    sampling: Sampling | None = None


@dataclass(frozen=True)
class Unavailable:
    """A part of an assessment that is not there, and why: ``asked`` False when the setting
    does not call for it (no sensitive column, no household id), True when it does but the
    part cannot be computed (the reason is then the error's one line)."""

    reason: str
    asked: bool = True


class Assessment:
    """The figures of one release in one setting (the module's text); each part is computed
    on first access and kept."""

    def __init__(self, original: pd.DataFrame, applied: ApplyResult, setting: Setting,
                 recipe: Recipe) -> None:
        self.original = original
        self.applied = applied
        self.setting = setting
        self.recipe = recipe

    @property
    def released(self) -> pd.DataFrame:
        return self.applied.data

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
        return linkage_attack(self.original, self.released, list(self.setting.qi), self.recipe,
                              list(self.setting.known), self.applied.reports)

    @cached_property
    def touched(self) -> list[str]:
        """The columns the recipe's steps name, in the order they first appear."""
        return list(dict.fromkeys(c for s in self.recipe.steps
                                  for c in ([s["column"]] if "column" in s else s["columns"])))

    @cached_property
    def loss(self) -> IL1Result:
        """IL1 of the touched columns, every column released (a column recoded to text is
        compared as categories)."""
        return il1(self.original, self.released, list(self.setting.numeric),
                   columns=self.touched)

    @cached_property
    def similarity(self) -> float:
        """The eigenvalue similarity (%) of the numeric columns' correlations."""
        return eigenvalue_similarity(self.original, self.released, list(self.setting.numeric))

    @cached_property
    def numeric(self) -> list[str]:
        """The numeric columns that hold numbers in both tables."""
        return list(numbers_in_both(self.original, self.released, list(self.setting.numeric)))

    @cached_property
    def deniability(self) -> tuple[Deniability, ...]:
        """The deniability of every column the recipe perturbs and, with a household id, what
        all of a household's released records give away; a household id that cannot be read
        adds nothing here (``households`` says why)."""
        figures = recipe_deniability(self.recipe, self.original, matrices=self.applied.matrices)
        household = self.setting.household
        if household is None or not figures:
            return tuple(figures)
        try:
            return tuple(household_figures(figures, self.recipe, self.original, self.released,
                                           household))
        except SdcInputError:
            return tuple(figures)

    @cached_property
    def inference(self) -> InferenceResult | Unavailable:
        """The attribute-inference attack by the linkage attack's attacker on the sensitive
        columns the release keeps (not a key or a known column)."""
        s = self.setting
        columns = [c for c in s.sensitive if c in self.released.columns
                   and c in self.original.columns and c not in s.qi and c not in s.known]
        if not columns or not s.qi:
            return Unavailable("no sensitive column beside the keys", asked=False)
        try:
            return attribute_inference(self.original, self.released, list(s.qi), columns,
                                       self.recipe, list(s.known), reports=self.applied.reports)
        except SdcInputError as err:
            return Unavailable(str(err))

    @cached_property
    def households(self) -> HouseholdFigures | Unavailable:
        """The household risk, composition uniques and household linkage attack of the
        release (docs/measures.md, "Household risk")."""
        s = self.setting
        if not s.household or not s.qi:
            return Unavailable("no household id", asked=False)
        try:
            return table_households(self.original, self.released, list(s.qi), s.household,
                                    s.weight, s.risk.na, s.risk.alpha, self.recipe,
                                    list(s.known), self.applied.reports)
        except SdcInputError as err:
            return Unavailable(str(err))

    @cached_property
    def population(self) -> PopulationRisk | Unavailable:
        """The risk in the population of the release, from how the file was sampled."""
        s = self.setting
        sampling = s.sampling or Sampling()
        try:
            found = population_risk(self.released, list(s.qi), s.weight,
                                    sampling.sampling_fraction, sampling.population_size)
        except SdcInputError as err:
            return Unavailable(str(err))
        return found if found is not None else Unavailable(
            "nothing says how the file was sampled", asked=False)


def assess(original: pd.DataFrame, setting: Setting, recipe: Recipe,
           applied: ApplyResult | None = None) -> Assessment:
    """The assessment of the release ``recipe`` makes of ``original`` (``applied``: the result
    of applying it, when the caller has it already; a recipe's draws are seeded, so applying
    it again gives the same table)."""
    return Assessment(original, applied or apply_recipe(recipe, original), setting, recipe)
