"""A survey table and the workspace file of its settings (ui.logic.workspace): read back by
tests/test_workspace.py, opened on the Data page by tests/test_resume.py."""

from __future__ import annotations

import pandas as pd

from sdc_core.assess import RiskOptions
from sdc_core.roles import Roles
from ui.logic import workspace

SURVEY = pd.DataFrame({"age": range(18, 58), "sex": ["F", "M"] * 20,
                       "secret": [f"Zq{i}" for i in range(40)]})


def survey_workspace(**change) -> str:
    """The workspace file of settings for :data:`SURVEY`, with the fields ``change`` names
    replaced (the arguments of :func:`ui.logic.workspace.to_json`)."""
    args = dict(name="survey.csv", records=40, columns=list(SURVEY.columns), fingerprint="f00d",
                roles=Roles(qi=["age", "sex"], sensitive=["secret"]),
                steps=[{"method": "band", "column": "age", "width": 10}], seed=7,
                risk=RiskOptions(k=3, na="category", alpha=0.5), known=[],
                tradeoffs={"w_t_band_values": "5, 10", "w_t_target": "every_class"})
    return workspace.to_json(**{**args, **change})


SURVEY_ANALYSES = {"confidence": 0.9, "analyses": [
    {"name": "mean age by sex", "kind": "mean", "column": "age", "by": "sex"}]}
