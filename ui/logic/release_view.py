"""The release type on the Protect and Export pages (no Streamlit): what a type assumes and
asks, whether the Protect page's release meets its targets, read from the figures the page has
already computed, and the decision pack the Export page downloads.

The status is the pack's own (:func:`sdc_core.pack.build_pack`): the same
:func:`~sdc_core.release_types.release_status` on the same figures, the released keys' read at
the type's k (:func:`keys_at`), so the page says what the pack will say
(tests/test_release_view.py holds them equal).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pandas as pd

from sdc_core.assess import Setting
from sdc_core.names import name
from sdc_core.pack import Decision, PackRequest, build_pack
from sdc_core.recipe import parse_recipe
from sdc_core.release_types import (  # noqa: F401 — the page's tests read these here too
    NO_SENSITIVE,
    RECORD_BY_RECORD,
    RELEASE_TYPES,
    ReleaseType,
    Status,
    Target,
    missing_figures,
    release_status,
)
from sdc_core.risk.inference import InferenceResult
from sdc_core.risk.profile import RiskProfile, profile_from_sizes
from sdc_core.risk.synthetic import SyntheticRisk
from sdc_core.tables.cell_rules import Rule
from ui.logic.text import md
from ui.logic.workbench import Workbench

#: The release type a session starts with: the licensed file, the commonest release.
DEFAULT_TYPE = "suf"
#: The release types, in the order a steward meets them.
TYPE_KEYS = tuple(RELEASE_TYPES)
#: What the Export page's decision pack holds, as its caption says.
PACK_FILES = ("the released file (released.csv, the columns tagged 'Not released' left out), "
              "an internal report and manifest (the recipe with its seed, every figure "
              "before and after, every output's status; internal.html, "
              "manifest-internal.json), an external report and manifest for the data users "
              "(no seed; external.html, manifest.json), the trade-off figure (SVG and PDF) "
              "and each published cross table (table-N.csv)")


def type_name(key: str) -> str:
    """The name of the release type ``key`` ("public-use file")."""
    return RELEASE_TYPES[key].name


def targets_text(kind: ReleaseType) -> str:
    """The type's targets as a board reads them, separated by semicolons."""
    return "; ".join(t.text(kind.k) for t in kind.targets)


def type_caption(kind: ReleaseType) -> str:
    """Who the type's intruder is and what it asks, as Markdown-escaped text."""
    scenario = kind.scenario
    member = ("knows that the person is in the file" if scenario.knows_membership
              else "does not know whether the person is in the file")
    return md(f"Intruder: {scenario.intruder}. He knows {scenario.knows}, and {member}. "
              f"Targets: {targets_text(kind)}.")


def keys_at(keys: RiskProfile, k: int) -> dict[str, Any]:
    """The released keys' ``risk --json`` figures (:meth:`RiskProfile.summary`) with those
    that depend on the threshold read at ``k`` (the release type's), by the core's own
    :func:`~sdc_core.risk.profile.profile_from_sizes`."""
    summary = keys.summary()
    if keys.k_threshold == k:
        return summary
    at = profile_from_sizes(keys.fk, keys.Fk, keys.n_classes, k)
    return {**summary, **{key: at[key] for key in
                          ("k_threshold", "percent_k_le_threshold", "percent_below_k")}}


def workbench_figures(wb: Workbench, not_released: Sequence[str]) -> dict[str, Any]:
    """The ``compare --json`` figures a target reads, from what the Protect page computed
    already: the linkage attack, the loss with the columns ``not_released`` left out, the
    attribute-inference attack and, for a synthetic release, replicated uniques."""
    out: dict[str, Any] = {}
    if wb.rows is None:
        out.update(wb.assessment.linkage.summary())
        out.update(wb.utility_for(not_released))
        if isinstance(wb.inference, InferenceResult):
            out["inference"] = json.loads(wb.inference.to_json())
    elif isinstance(wb.synthetic, SyntheticRisk):
        out.update(wb.synthetic.to_json())
    return out


def workbench_status(kind: ReleaseType, wb: Workbench, not_released: Sequence[str],
                     sensitive: bool) -> Status:
    """The status of the Protect page's release ``wb`` as a release of type ``kind``
    (:func:`release_status`)."""
    missing = missing_figures(wb.rows, sensitive)
    if wb.rows is None and isinstance(wb.inference, str):
        missing["inference_gain"] = wb.inference
    return release_status(kind, workbench_figures(wb, not_released),
                          keys_at(wb.assessment.keys, kind.k), missing)


#: A status in words.
STATUS_WORDS = {"pass": "meets every target", "fail": "misses a target",
                "review": "goes to a person's review"}


def status_line(kind: ReleaseType, status: Status) -> str:
    """One line on the page: whether the release meets the type's targets, and the reasons
    that are not a target met (Markdown-escaped)."""
    said = [r for r in status.reasons if ": met (" not in r]
    head = f"As a {kind.name}, this release {STATUS_WORDS[status.status]} ({status.status})"
    return md(head + (": " + "; ".join(said) if said else "."))


def target_label(t: Target, k: int) -> str:
    """A target's number field: the figure's name and which side is allowed."""
    unit = f" ({t.unit})" if t.unit else ""
    side = "at most" if t.better == "lower" else "at least"
    return f"{name(t.figure, k)}{unit}: {side}"


def pack_zip(original: pd.DataFrame, recipe_text: str, kind: ReleaseType, setting: Setting,
             title: str, decision: Decision, tables: tuple[tuple[str, ...], ...] = (),
             table_rule: Rule | None = None, sweep: pd.DataFrame | None = None,
             analyses: Any = None) -> bytes:
    """The decision pack (:func:`sdc_core.pack.build_pack`) of the recipe ``recipe_text``
    applied to ``original``, as one zip file (the columns the setting does not release left
    out of the released file). A plain function of importable arguments: a worker process
    runs it."""
    recipe = parse_recipe(json.loads(recipe_text))
    req = PackRequest(original, recipe, kind, setting, title=title, decision=decision,
                      tables=tables, table_rule=table_rule, analyses=analyses, sweep=sweep)
    return build_pack(req).zip_bytes()
