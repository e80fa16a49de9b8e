"""Cached calls into sdc_core, keyed by the data set id (a content hash) and every parameter.

DataFrames are passed as ``_df`` (not hashed: Streamlit would hash only a sample of a large
frame); the data set id stands in for them. Results that hold per-record arrays are kept with
``cache_resource`` (shared, never mutated) so that a hit costs no copy.

What is pure computation runs in a worker process (:func:`ui.infra.workers.run_on`, the table
sent to a worker once): the server's interpreter lock stays free for the pages of the other
sessions, and the machine's other cores do the work. The functions sent there are the core's
or pure ones of :mod:`ui.logic` (:mod:`ui.logic.workbench`, :mod:`ui.logic.risk_tables`): a
worker unpickling one imports neither this module nor Streamlit.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pandas as pd
import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from sdc_core.assess import (
    Assessment,
    RiskOptions,
    Sampling,
    Setting,
    assess,
    given,
    given_or,
)
from sdc_core.households import household_level_columns, nearly_constant
from sdc_core.recipe import ApplyResult, apply_recipe, parse_recipe
from sdc_core.risk import AttributeScan, RiskProfile, key_subset_snapshots
from sdc_core.risk.closeness import Closeness
from sdc_core.risk.deniability import Deniability, recipe_deniability
from sdc_core.risk.inference import InferenceResult
from sdc_core.risk.linkage import LinkageResult
from sdc_core.risk.population_risk import PopulationRisk
from sdc_core.tables.cell_rules import Rule
from sdc_core.tables.differencing import DifferencingResult, differencing_risk
from sdc_core.tables.hierarchy import Hierarchy, Prefixes, read_hierarchy
from sdc_core.tables.linked import LinkedRelease, release_linked
from sdc_core.tables.table_release import TableRelease, release_table
from sdc_core.tables.table_release import unit_bound as unit_bound_of
from sdc_core.utility.analysis import parse_spec
from sdc_core.utility.validity import Validity, ValidityReport
from ui.infra import memory, workers
from ui.logic import groups
from ui.logic.cross_tables import CodeList
from ui.logic.households import HouseholdFigures
from ui.logic.risk_tables import tables_of
from ui.logic.workbench import (
    Workbench,
    detached,
    part_of_original,
    part_of_release,
    release_population,
    release_validity,
    with_population,
)


def profile(dataset_id: str, qi: tuple[str, ...], weight: str | None, k: int, na: str,
            alpha: float, _df: pd.DataFrame) -> RiskProfile:
    """The risk profile of a table (the data as loaded, or a release by its
    :func:`protected_id`): the ``keys`` part of its assessment."""
    setting = Setting(qi, weight=weight, risk=RiskOptions(k, na, alpha))
    return given(original_part(dataset_id, setting, "keys", _df))


@st.cache_data(max_entries=16, show_spinner=False)
def level_sets(dataset_id: str, columns: tuple[str, ...],
               _df: pd.DataFrame) -> dict[str, frozenset[str]]:
    """:func:`ui.logic.groups.level_sets` of the data set."""
    return groups.level_sets(_df, list(columns))


@st.cache_resource(max_entries=16, show_spinner=False)
def protected(dataset_id: str, recipe_json: str, _df: pd.DataFrame) -> ApplyResult:
    return apply_recipe(parse_recipe(json.loads(recipe_json)), _df)


def protected_id(dataset_id: str, recipe_json: str) -> str:
    """The id of the table a recipe makes of a data set: it keys the protected table's caches
    (risk profile, risk tables, SUDA2) as the data set id keys the original's."""
    return f"{dataset_id}+{hashlib.sha256(recipe_json.encode()).hexdigest()[:32]}"


@st.cache_resource(max_entries=24, show_spinner=False)
def workbench(dataset_id: str, recipe_json: str, qi: tuple[str, ...], weight: str | None,
              k: int, na: str, alpha: float, numeric: tuple[str, ...], known: tuple[str, ...],
              given: tuple[tuple[str, float], ...], _df: pd.DataFrame,
              sensitive: tuple[str, ...] = (), household: str | None = None) -> Workbench:
    """The protected table with its risk and utility (see :func:`ui.logic.workbench.evaluate`), and
    its risk in the population from how the file was sampled (``given``: the items of
    :func:`ui.state.sampling`), the two computed at once in two workers; the
    attribute-inference attack on the ``sensitive`` columns and, with a ``household`` id, the
    household figures of the release (docs/measures.md, "Household risk") with the first."""
    with ThreadPoolExecutor(2) as both:
        wb = both.submit(workers.run_on, dataset_id, _df, detached, recipe_json, list(qi),
                         weight, k, na, alpha, list(numeric), list(known),
                         sensitive=list(sensitive), household=household)
        population = (both.submit(workers.run_on, dataset_id, _df, release_population,
                                   recipe_json, list(qi), weight, dict(given))
                      if given or weight is not None else None)
        return with_population(wb.result(), _df, population.result() if population else None)


@st.cache_resource(max_entries=8, show_spinner=False)
def validity(dataset_id: str, spec_json: str, _df: pd.DataFrame) -> Validity:
    """The original side of a benchmark-analysis spec (its JSON text, ``spec_json``): the
    original's estimates, made once per data set and spec; an
    :class:`~sdc_core.errors.SdcInputError` when the spec does not fit the data."""
    return Validity(parse_spec(json.loads(spec_json)), _df)


@st.cache_resource(max_entries=24, show_spinner=False)
def validity_report(dataset_id: str, recipe_json: str, spec_json: str, with_pmse: bool,
                    _validity: Validity, _wb: Workbench, _df: pd.DataFrame) -> ValidityReport:
    """Does the analysis hold on the table ``recipe_json`` makes (``_wb``'s)? Only the
    protected side is estimated, the columns the recipe left unchanged taken as the
    original's; ``with_pmse``: fit the propensity model. In a worker
    (:func:`ui.logic.workbench.release_validity`, which makes the same release again from
    the recipe), so that the sessions waiting for it are not also kept from drawing; a
    synthetic release, costly to make again, is compared here on the workbench's table."""
    if _wb.rows is not None:
        return _validity.compare(_wb.applied.data, changed=_wb.changed, with_pmse=with_pmse)
    return workers.run_on(dataset_id, _df, release_validity, dataset_id, spec_json,
                          recipe_json, list(_wb.changed), with_pmse)


def population(dataset_id: str, qi: tuple[str, ...], weight: str | None,
               given_: tuple[tuple[str, float], ...], _df: pd.DataFrame) -> PopulationRisk | None:
    """Risk in the population of the table ``dataset_id`` (the original's, or a protected
    table's :func:`protected_id`): the uniqueness models and log-linear risks, from how it was
    sampled (``given_``: the items of :func:`ui.state.sampling`), the ``population`` part of
    its assessment; None when nothing says."""
    setting = Setting(qi, weight=weight, sampling=Sampling(**dict(given_)) if given_ else None)
    return given_or(original_part(dataset_id, setting, "population", _df), None)


def linkage_before(dataset_id: str, qi: tuple[str, ...], known: tuple[str, ...],
                   _df: pd.DataFrame) -> LinkageResult:
    """The linkage attack on the data as loaded (released unchanged): the ``linkage`` part of
    its assessment."""
    return given(original_part(dataset_id, Setting(qi, known=known), "linkage", _df))


@st.cache_data(max_entries=16, show_spinner=False)
def snapshots(dataset_id: str, qi: tuple[str, ...], weight: str | None, k: int, na: str,
              alpha: float, _df: pd.DataFrame) -> pd.DataFrame:
    return workers.run_on(dataset_id, _df, key_subset_snapshots, list(qi), weight=weight, k=k,
                          na=na, alpha=alpha)


@st.cache_resource(max_entries=64, show_spinner=False)
def original(dataset_id: str, setting_key: str, _setting: Setting,
             _df: pd.DataFrame) -> Assessment:
    """The assessment of a table (the data as loaded, or a release by its :func:`protected_id`)
    judged as its own release: one per table and setting, shared by the pages and sessions;
    :func:`original_part` fills its parts, each under the fields of the setting it reads, so
    that a change elsewhere does not recompute them. ``setting_key`` is ``repr(_setting)``,
    every field of the frozen setting as text: Streamlit hashes that text in 12 µs, the
    setting itself in 380 µs, and a Protect move asks for several parts."""
    return assess(_df, _df, _setting)


#: The fields of a setting that each part of a table's own assessment reads.
_READS = {"keys": ("qi", "weight", "risk"), "linkage": ("qi", "known"),
          "population": ("qi", "weight", "sampling"), "closeness": ("qi", "sensitive"),
          "households": ("qi", "known", "weight", "household", "risk")}


def original_part(dataset_id: str, setting: Setting, part: str, _df: pd.DataFrame) -> Any:
    """A part of :func:`original`, asked with the fields of ``setting`` the part reads (so the
    pages, each with its own setting, and the report, with the whole one, share it), computed
    once in a worker (two sessions asking at the same moment may both compute it: the same
    figures)."""
    fields = {f: getattr(setting, f) for f in _READS[part]}
    if part == "households":  # the household risk reads na and alpha, not the threshold k
        fields["risk"] = RiskOptions(na=setting.risk.na, alpha=setting.risk.alpha)
    setting = Setting(**fields)
    a = original(dataset_id, repr(setting), setting, _df)
    if part not in a.__dict__:
        a.keep(**{part: workers.run_on(dataset_id, _df, part_of_original, setting, part)})
    return getattr(a, part)


def households(dataset_id: str, qi: tuple[str, ...], household: str, weight: str | None,
               na: str, alpha: float, known: tuple[str, ...], _df: pd.DataFrame
               ) -> HouseholdFigures:
    """The household figures of the data as loaded (docs/measures.md, "Household risk"):
    household risk R_h = 1 − Π_{j∈h}(1 − r_j), households unique by composition and the
    household linkage attack on the unchanged table by the attacker of the release's (the
    ``known`` columns too): the original's assessment's ``households``; an
    :class:`~sdc_core.errors.SdcInputError` when the household column cannot be read
    (blank ids, also a key)."""
    setting = Setting(qi, known=known, weight=weight, household=household,
                      risk=RiskOptions(na=na, alpha=alpha))
    return given(original_part(dataset_id, setting, "households", _df))


@st.cache_data(max_entries=8, show_spinner=False)
def household_level(dataset_id: str, household: str, _df: pd.DataFrame) -> list[str]:
    """The columns constant within every household (docs/measures.md, "Household risk")."""
    return household_level_columns(_df, household)


@st.cache_data(max_entries=8, show_spinner=False)
def nearly_constant_columns(dataset_id: str, household: str,
                            _df: pd.DataFrame) -> dict[str, float]:
    """The columns nearly constant within the households, with their shares (docs/measures.md,
    "Deniability with a household id"; :func:`sdc_core.households.nearly_constant`)."""
    return nearly_constant(_df, household)


@st.cache_data(max_entries=16, show_spinner=False)
def missing_values(dataset_id: str, _df: pd.DataFrame) -> int:
    """The missing cells of the data set: counted once, not on every run of the Data page (a
    first visitor's page: a connection flood ran it for every session)."""
    return int(_df.isna().sum().sum())


@st.cache_data(max_entries=8, show_spinner=False)
def column_profile(dataset_id: str, _df: pd.DataFrame) -> pd.DataFrame:
    """Missing and distinct counts and a few example values per column."""
    return pd.DataFrame({
        "column": [str(c) for c in _df.columns],
        "missing": [int(_df[c].isna().sum()) for c in _df.columns],
        "distinct": [int(_df[c].nunique()) for c in _df.columns],
        "examples": [", ".join(map(str, _df[c].dropna().unique()[:5])) for c in _df.columns],
    })


@st.cache_resource(max_entries=16, show_spinner=False)
def risk_tables(dataset_id: str, qi: tuple[str, ...], weight: str | None, k: int, na: str,
                alpha: float, sensitive: tuple[str, ...], released: tuple[str, ...],
                _df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, dict, AttributeScan]:
    """Riskiest classes, rare key values, l-diversity and the attribute-disclosure scan."""
    p = profile(dataset_id, qi, weight, k, na, alpha, _df)
    return workers.run_on(dataset_id, _df, tables_of, p, list(qi), k, list(sensitive),
                          list(released))


def closeness(dataset_id: str, qi: tuple[str, ...], sensitive: tuple[str, ...],
              _df: pd.DataFrame) -> dict[str, Closeness]:
    """t-closeness, basic and enhanced β-likeness and δ-disclosure of each sensitive column of
    the table ``dataset_id`` (the original's, or a protected table's :func:`protected_id`)
    over the classes of ``qi``, a blank key a value of its own (docs/measures.md,
    "t-closeness, β-likeness and δ-disclosure"): the ``closeness`` part of its assessment."""
    return given_or(original_part(dataset_id, Setting(qi, sensitive=sensitive), "closeness",
                                  _df), {})


@st.cache_resource(max_entries=16, show_spinner=False)
def deniability(dataset_id: str, recipe_json: str, _df: pd.DataFrame) -> list[Deniability]:
    """The exact deniability of every column a recipe perturbs (docs/measures.md,
    "Deniability: what perturbation buys"), π the original's. Computed here: its steps run on
    the perturbed columns' way only, and the core takes the recipe before the table."""
    return recipe_deniability(parse_recipe(json.loads(recipe_json)), _df)


@st.cache_resource(max_entries=16, show_spinner=False)
def inference(dataset_id: str, recipe_json: str, qi: tuple[str, ...],
              sensitive: tuple[str, ...], known: tuple[str, ...], _df: pd.DataFrame,
              _applied: ApplyResult) -> InferenceResult:
    """The attribute-inference attack of the original ``_df`` on the release ``_applied`` the
    recipe makes of it (docs/measures.md, "The attribute-inference attack"): the linkage
    attack's attacker, who knows the keys and the ``known`` columns, guesses each sensitive
    column's true value: the ``inference`` part of the release's assessment (an
    :class:`~sdc_core.errors.SdcInputError` with its reason when it cannot be computed)."""
    setting = Setting(qi, sensitive=sensitive, known=known)
    return given(workers.run_on(dataset_id, _df, part_of_release, _applied, setting,
                                recipe_json, "inference"))


@st.cache_data(max_entries=16, show_spinner=False)
def differencing(dataset_id: str, columns: tuple[str, ...], column: str, merged: tuple[str, ...],
                 method: str, rule: Rule, epsilon: float, seed: int, threshold: int,
                 household: str | None, max_contributions: int | None,
                 _df: pd.DataFrame) -> DifferencingResult:
    """The table of ``columns`` and the same with ``merged`` levels of ``column`` as one,
    published by ``method``: what subtracting them gives away (docs/tables.md, "Differencing
    between two tables"); cancelled, as the table's own job is, once the browser session has
    ended (:func:`while_connected`)."""
    return workers.run_on(dataset_id, _df, differencing_risk, list(columns), column,
                          list(merged), method, rule, epsilon, seed, threshold,
                          household=household, max_contributions=max_contributions,
                          progress=while_connected(session_id()))


@st.cache_data(max_entries=24, show_spinner=False)
def cross_table(dataset_id: str, columns: tuple[str, ...], sum_column: str | None, method: str,
                rule: Rule, epsilon: float, seed: int, threshold: int, household: str | None,
                max_contributions: int | None, _df: pd.DataFrame,
                clip: float | None = None, code_lists: tuple[CodeList, ...] = (),
                _hierarchies: Mapping[str, Hierarchy | Prefixes] | None = None) -> TableRelease:
    """The cross table of ``columns`` published by ``method`` (docs/tables.md, "Publishing a
    table"), protecting the persons of ``household`` (None: the records), a DP sum's
    contributions clipped to [0, ``clip``], with the code lists ``_hierarchies`` of some
    columns (keyed by ``code_lists``, which names them: a file by its digest):
    :func:`sdc_core.tables.table_release.release_table` of the data set, the command line's table
    for the same settings; an :class:`~sdc_core.errors.SdcInputError` when the settings do not
    fit the data."""
    return workers.run_on(dataset_id, _df, release_table, list(columns), sum_column, method,
                          rule, epsilon, seed, threshold, household, max_contributions,
                          progress=while_connected(session_id()), clip=clip,
                          hierarchies=dict(_hierarchies or {}) or None)


@st.cache_data(max_entries=16, show_spinner=False)
def linked_tables(dataset_id: str, tables: tuple[tuple[str, ...], ...], sum_column: str | None,
                  rule: Rule, household: str | None, _df: pd.DataFrame,
                  code_lists: tuple[CodeList, ...] = (),
                  _hierarchies: Mapping[str, Hierarchy | Prefixes] | None = None
                  ) -> LinkedRelease:
    """The cross tables ``tables`` of the data set published together by suppression
    (docs/tables.md, "Linked tables"), protecting the persons of ``household`` (None: the
    records), with the code lists ``_hierarchies`` of some columns (keyed by ``code_lists``):
    :func:`sdc_core.tables.linked.release_linked`, the command line's tables for the
    same settings (``tables --cross A,B --cross A,C``); run in a worker and cancelled, as the
    single table's job is, once the browser session has ended (:func:`while_connected`); an
    :class:`~sdc_core.errors.SdcInputError` when the set cannot be published (more than 3
    columns in all, a table twice)."""
    return workers.run_on(dataset_id, _df, release_linked, [list(t) for t in tables],
                          sum_column, rule, household, progress=while_connected(session_id()),
                          hierarchies=dict(_hierarchies or {}) or None)


@st.cache_data(max_entries=8, show_spinner=False)
def code_list(digest: str, name: str, _raw: bytes) -> Hierarchy:
    """The code list file ``name`` whose bytes ``_raw`` have the SHA-256 ``digest``, read and
    checked once (:func:`sdc_core.tables.hierarchy.read_hierarchy`); the bytes stay in memory
    only. An :class:`~sdc_core.errors.SdcInputError` in one sentence when it cannot be read."""
    return read_hierarchy(_raw, name)


class SessionEnded(RuntimeError):
    """The browser session that asked for a computation has gone: its job is cancelled."""


def session_id() -> str:
    """Streamlit's id of the session running this script ("" outside a server)."""
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else ""


def while_connected(session: str) -> workers.Progress:
    """A progress callback for :func:`ui.infra.workers.run` that cancels the job (raises
    :class:`SessionEnded`) once the browser session ``session`` is no longer connected: a
    closed tab frees its worker at the job's next progress report. It touches no page
    element, so a cached function may pass it (a cached call replays the elements it wrote)."""

    def progress(done: int, total: int, label: str) -> None:
        if session and not memory.is_active(session):
            raise SessionEnded("the browser session that asked for this has ended")

    return progress


@st.cache_data(max_entries=16, show_spinner=False)
def unit_bound(dataset_id: str, household: str, columns: tuple[str, ...],
               sum_column: str | None, _df: pd.DataFrame) -> int:
    """DP's default records per person with the household id ``household`` as the table's unit
    (:func:`sdc_core.tables.table_release.unit_bound`); an :class:`~sdc_core.errors.SdcInputError`
    when the id cannot be that unit (absent, blank ids, a table column or the sum)."""
    return unit_bound_of(_df, household, list(columns), sum_column)
