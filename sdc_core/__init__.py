"""sdc_core: statistical disclosure control measures and methods, pure and vectorised.

Pandas/NumPy in, pandas/NumPy out; no user-interface code. The command line is
``python -m sdc_core`` (see ``sdc_core.cli``); the Python API for notebooks is the names of
``__all__``, importable from here (``from sdc_core import risk_profile``) and described, with
worked examples, in ``docs/python.md``:

- reading: :func:`read_table`, :func:`load_example`, :func:`example`, :func:`infer_kinds`,
  :func:`write_table`
- risk: :func:`risk_profile`, :func:`riskiest_classes`, :func:`key_subset_snapshots`,
  :func:`small_count_levels`, :func:`sensitive_report`, :func:`suda2`,
  :func:`population_risk`, :func:`closeness` / :func:`closeness_report` (t-closeness,
  β-likeness, δ-disclosure), :func:`household_risk` and :func:`composition_uniques`, and
  after protection :func:`linkage_attack`, :func:`household_linkage`,
  :func:`attribute_inference` and :func:`recipe_deniability` (what perturbation buys)
- protection: :func:`parse_recipe`, :func:`load_recipe`, :func:`make_recipe`,
  :func:`apply_recipe`, :func:`describe_steps`
- utility: :func:`il1`, :func:`eigenvalue_similarity`, :func:`distribution_report`, and the
  benchmark analyses :func:`parse_spec` / :class:`Validity`
- trade-offs: :func:`run_sweep` (a grid of settings, with a target: the search for the cheapest)
- response tables: :func:`response_table`, :func:`audit`

The names are loaded on first use (PEP 562): ``import sdc_core`` stays light (no pandas), so
the command line answers ``--help`` at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sdc_core.lazy import lazy_getattr
from sdc_core.version import __version__ as __version__  # re-exported: sdc_core.__version__

if TYPE_CHECKING:
    from sdc_core.data.io import Kind, infer_kinds, load_example, read_table, write_table
    from sdc_core.errors import SdcInputError
    from sdc_core.examples import Example, example
    from sdc_core.recipe import (
        ApplyResult,
        Recipe,
        apply_recipe,
        describe_steps,
        load_recipe,
        make_recipe,
        parse_recipe,
    )
    from sdc_core.risk.attribute import AttributeScan
    from sdc_core.risk.closeness import Closeness, closeness, closeness_report
    from sdc_core.risk.deniability import Deniability, recipe_deniability
    from sdc_core.risk.household import (
        HouseholdLinkage,
        HouseholdRisk,
        composition_uniques,
        household_linkage,
        household_risk,
    )
    from sdc_core.risk.inference import InferenceColumn, InferenceResult, attribute_inference
    from sdc_core.risk.ldiversity import LDiversity
    from sdc_core.risk.linkage import LinkageResult, linkage_attack
    from sdc_core.risk.population_risk import PopulationRisk, population_risk
    from sdc_core.risk.profile import (
        RiskProfile,
        key_subset_snapshots,
        risk_profile,
        riskiest_classes,
        sensitive_report,
        small_count_levels,
    )
    from sdc_core.risk.suda2 import Suda2Result, suda2
    from sdc_core.sweep.run import SweepResult, run_sweep
    from sdc_core.tables.responses import AuditResult, PublishedQuestion, audit, response_table
    from sdc_core.utility.analysis import AnalysisSpec, parse_spec
    from sdc_core.utility.distribution import distribution_report
    from sdc_core.utility.eigen import eigenvalue_similarity
    from sdc_core.utility.il1 import IL1Result, il1
    from sdc_core.utility.validity import Validity, ValidityReport

__all__ = [
    # reading
    "Example", "Kind", "SdcInputError", "example", "infer_kinds", "load_example", "read_table",
    "write_table",
    # risk
    "AttributeScan", "Closeness", "Deniability", "HouseholdLinkage", "HouseholdRisk",
    "InferenceColumn", "InferenceResult", "LDiversity", "LinkageResult", "PopulationRisk",
    "RiskProfile", "Suda2Result", "attribute_inference", "closeness", "closeness_report",
    "composition_uniques", "household_linkage", "household_risk", "key_subset_snapshots",
    "linkage_attack", "population_risk", "recipe_deniability", "risk_profile",
    "riskiest_classes", "sensitive_report", "small_count_levels", "suda2",
    # protection
    "ApplyResult", "Recipe", "apply_recipe", "describe_steps", "load_recipe", "make_recipe",
    "parse_recipe",
    # utility
    "AnalysisSpec", "IL1Result", "Validity", "ValidityReport", "distribution_report",
    "eigenvalue_similarity", "il1", "parse_spec",
    # trade-offs
    "SweepResult", "run_sweep",
    # response tables
    "AuditResult", "PublishedQuestion", "audit", "response_table",
]

#: The module that defines each public name (the names of ``__all__``, each once).
_MODULES: dict[str, tuple[str, ...]] = {
    "sdc_core.errors": ("SdcInputError",),
    "sdc_core.examples": ("Example", "example"),
    "sdc_core.data.io": ("Kind", "infer_kinds", "load_example", "read_table", "write_table"),
    "sdc_core.recipe": ("ApplyResult", "Recipe", "apply_recipe", "describe_steps",
                        "load_recipe", "make_recipe", "parse_recipe"),
    "sdc_core.risk.attribute": ("AttributeScan",),
    "sdc_core.risk.closeness": ("Closeness", "closeness", "closeness_report"),
    "sdc_core.risk.deniability": ("Deniability", "recipe_deniability"),
    "sdc_core.risk.household": ("HouseholdLinkage", "HouseholdRisk", "composition_uniques",
                                "household_linkage", "household_risk"),
    "sdc_core.risk.inference": ("InferenceColumn", "InferenceResult", "attribute_inference"),
    "sdc_core.risk.ldiversity": ("LDiversity",),
    "sdc_core.risk.linkage": ("LinkageResult", "linkage_attack"),
    "sdc_core.risk.population_risk": ("PopulationRisk", "population_risk"),
    "sdc_core.risk.profile": ("RiskProfile", "key_subset_snapshots", "risk_profile",
                              "riskiest_classes", "sensitive_report", "small_count_levels"),
    "sdc_core.risk.suda2": ("Suda2Result", "suda2"),
    "sdc_core.sweep.run": ("SweepResult", "run_sweep"),
    "sdc_core.tables.responses": ("AuditResult", "PublishedQuestion", "audit", "response_table"),
    "sdc_core.utility.analysis": ("AnalysisSpec", "parse_spec"),
    "sdc_core.utility.distribution": ("distribution_report",),
    "sdc_core.utility.eigen": ("eigenvalue_similarity",),
    "sdc_core.utility.il1": ("IL1Result", "il1"),
    "sdc_core.utility.validity": ("Validity", "ValidityReport"),
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names}


__getattr__ = lazy_getattr(__name__, _EXPORTS)


def __dir__() -> list[str]:
    """The module's names with the public ones not loaded yet."""
    return sorted(set(globals()) | set(__all__))
