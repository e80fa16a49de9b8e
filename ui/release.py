"""The table the Protect page's current settings release, for the pages that measure it
beside the original (the Risk page): read from the Protect page's own cache entry, so that
both pages show one table and one set of figures."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from sdc_core.assess import RiskOptions
from sdc_core.roles import Roles
from ui import compute, state
from ui.logic.groups import ColumnGroups, column_groups
from ui.logic.session import Dataset
from ui.logic.workbench import Workbench, recipe_json


def attacker_candidates(groups: ColumnGroups, roles: Roles) -> list[str]:
    """The columns the linkage attack may assume an attacker also knows: numbers that are
    neither a key nor the weight (the Protect page's choice)."""
    return [c for c in groups.numbers if c not in roles.qi and c != roles.weight]


@dataclass(frozen=True)
class ProtectedTable:
    """The data set as the Protect page's current settings release it."""

    dataset_id: str  # keys the protected table's caches (:func:`ui.compute.protected_id`)
    recipe: str  # the settings' recipe (:func:`ui.logic.workbench.recipe_json`)
    workbench: Workbench  # the Protect page's own cache entry: the same table and figures

    @property
    def df(self) -> pd.DataFrame:
        return self.workbench.applied.data


def protect_page_table(ds: Dataset, roles: Roles, opts: RiskOptions) -> ProtectedTable | None:
    """The protected table of the Protect page's settings, from the very cache entry the
    Protect page reads (same recipe, numeric and known columns); None when no method is
    active. Raises :class:`~sdc_core.errors.SdcInputError` when the settings cannot be
    applied."""
    settings = state.protect_settings()
    steps = settings.steps(roles.qi)
    if not steps:
        return None
    text = recipe_json(steps, settings.seed, roles.household)
    groups = column_groups(ds, roles)
    candidates = attacker_candidates(groups, roles)
    known = [c for c in state.known_columns(ds.df) if c in candidates]
    wb = compute.workbench(ds.dataset_id, text, tuple(roles.qi), roles.weight, opts.k, opts.na,
                           opts.alpha, tuple(groups.numeric), tuple(known),
                           state.sampling_key(), ds.df, tuple(roles.sensitive),
                           roles.household)
    return ProtectedTable(compute.protected_id(ds.dataset_id, text), text, wb)
