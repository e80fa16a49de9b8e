"""A synthetic release on the Protect page and in the report (no Streamlit): what its figures
are and why those that compare record by record show none (docs/measures.md, "Disclosure risk
of a synthetic release").

The measures of a release read as a set of records (replicated uniques, DiSCO beside DiO, the
distance against a holdout) come from the assessment's ``synthetic`` part
(:class:`~sdc_core.risk.synthetic.SyntheticRisk`) under their names in :mod:`sdc_core.names`,
so the page, the report and ``compare --json`` give the same figure under the same name."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from sdc_core.names import label, tile
from ui.logic.metrics import MetricRow
from ui.logic.text import number

if TYPE_CHECKING:
    from sdc_core.risk.synthetic import SyntheticRisk

#: What the Protect page says under its synthesis block.
SYNTHESIS_NOTE = (
    "Synthesis replaces the whole table, after the steps above, by records drawn from trees "
    "fitted on it. No released record is the release of an original one: the figures that "
    "compare record by record (the linkage attack, IL1, deniability, the attribute-inference "
    "attack) show no number and say why; replicated uniques and DiSCO take their place.")

#: The figures that compare record by record, as the page and the report name them.
RECORD_BY_RECORD = ("the linkage attack, IL1 and the eigenvalue similarity, deniability, the "
                    "attribute-inference attack and the household linkage attack")

#: What replicated uniques and DiSCO are, in a line for a caption.
SYNTHETIC_NOTE = (
    "Replicated uniques: original records unique on the keys whose key combination is unique "
    "in the release too. DiSCO: original records whose key combination holds, in the release, "
    "a single value of the sensitive column, equal to their own; DiO is the same in the "
    "original itself, what the file gives away before any release.")


def record_by_record(reason: str) -> str:
    """Why the figures that compare record by record give no number, in one sentence:
    ``reason`` (the assessment's :attr:`~sdc_core.assess.Assessment.rows`)."""
    return f"No figure for {RECORD_BY_RECORD}: {reason}."


def _share(value: float) -> str:
    return f"{value:.3f}"


def synthetic_rows(risk: SyntheticRisk) -> list[MetricRow]:
    """The tiles of a synthetic release: replicated uniques (a count, in brackets its percent
    of the original's records) and, with a holdout, the share of released records nearer a
    training record (beside its value by chance) and the exact copies of training records."""
    rows = [MetricRow("replicated_uniques", tile("replicated_uniques"),
                      label("replicated_uniques"), risk.replicated_uniques, None,
                      f"{number(risk.replicated_uniques)} "
                      f"({risk.replicated_uniques_percent:.2f} %)", None,
                      "Original records unique on the keys whose key combination is unique in "
                      "the release too (synthpop's repU); in brackets in percent of the "
                      "original's records.", "off")]
    if risk.holdout is not None:
        h = risk.holdout
        rows += [MetricRow("dcr_train_share", tile("dcr_train_share"), label("dcr_train_share"),
                           h["dcr_train_share"], None, _share(h["dcr_train_share"]), None,
                           "The share of released records nearer a training record than any "
                           f"held-out record; {_share(h['dcr_expected_share'])} (the "
                           f"{label('dcr_expected_share')}) when the synthesiser did not "
                           "memorise its training records.", "off"),
                 MetricRow("exact_copies", tile("exact_copies"), label("exact_copies"),
                           h["exact_copies"], None, number(h["exact_copies"]), None,
                           "Released records equal to a training record on every column.",
                           "off")]
    return rows


def disco_table(risk: SyntheticRisk) -> pd.DataFrame:
    """DiSCO per sensitive column beside DiO, the original's own (%)."""
    return pd.DataFrame({"column": [str(c) for c in risk.disco],
                         label("disco_percent"): [d.disco_percent for d in risk.disco.values()],
                         label("disco_original_percent"):
                             [d.disco_original_percent for d in risk.disco.values()]})


def synthetic_table(risk: SyntheticRisk) -> pd.DataFrame:
    """Every figure of a synthetic release as the report's table (measure, value): replicated
    uniques, with a holdout the distance figures, then DiSCO and DiO per sensitive column."""
    rows: list[tuple[str, float]] = [
        (label("replicated_uniques"), risk.replicated_uniques),
        (label("replicated_uniques_percent"), risk.replicated_uniques_percent)]
    if risk.holdout is not None:
        rows += [(label(k), risk.holdout[k])
                 for k in ("dcr_train_share", "dcr_expected_share", "exact_copies")]
    for column, d in risk.disco.items():
        rows += [(f"{label('disco_percent')}: {column}", d.disco_percent),
                 (f"{label('disco_original_percent')}: {column}", d.disco_original_percent)]
    return pd.DataFrame({"measure": [m for m, _ in rows], "value": [v for _, v in rows]})
