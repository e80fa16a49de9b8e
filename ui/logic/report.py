"""A self-contained HTML report of a protection (no Streamlit): everything escaped, figures
embedded with their JavaScript so it opens offline."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd
import plotly.graph_objects as go

from sdc_core import __version__
from sdc_core.assess import Assessment, Unavailable
from sdc_core.data.io import neutralize_bidi
from sdc_core.names import label, name
from sdc_core.pack_html import html_table
from sdc_core.recipe import step_notes
from sdc_core.risk import RiskProfile
from sdc_core.risk.closeness import Closeness
from sdc_core.risk.deniability import Deniability
from sdc_core.risk.inference import InferenceResult
from sdc_core.risk.linkage import ATTACKER_NAMES, ATTACKER_RULES, LinkageResult
from sdc_core.risk.population import ModelEstimate
from sdc_core.risk.population_risk import LOGLINEAR_METHODS, PopulationRisk, Sampling
from sdc_core.sweep.run import LOSS, SweepResult
from sdc_core.tables.table_release import TableRelease
from sdc_core.utility.analysis import AnalysisResult
from sdc_core.utility.fidelity import TableResult
from sdc_core.utility.validity import (
    LABELS,
    S_PMSE_RULE,
    VERDICT_RULE,
    ValidityReport,
    term_holds,
    verdict_text,
    worst_term,
)
from ui.logic.cross_tables import (
    METHOD_TITLES,
    CrossSettings,
    audit_text,
    comparison_table,
    settings_text,
    shown_table,
    status_counts,
    table_title,
)
from ui.logic.deniability_view import (
    NO_SENSITIVE,
    NOTHING_PERTURBED,
    deniability_table,
    detail_note,
    household_summary,
    household_warnings,
    inference_note,
    inference_table,
    nearly_constant_note,
    posterior_table,
)
from ui.logic.figures import tradeoff_scatter
from ui.logic.households import HouseholdFigures
from ui.logic.metrics import (  # noqa: F401 — the pages take these names from here too
    IL1_READING,
    RELEASE_LOSS_FORMULA,
    RELEASE_LOSS_LABEL,
    REPORT_RISK,
    MetricRow,
    release_loss_help,
    risk_rows,
    utility_rows,
)
from ui.logic.metrics import figures as before_figures
from ui.logic.synthetic_view import SYNTHETIC_NOTE, record_by_record, synthetic_table
from ui.logic.text import column_label
from ui.logic.workbench import LINKAGE_KEYS, RISK_KEYS, risk_after, shown

if TYPE_CHECKING:
    from sdc_core.risk.synthetic import SyntheticRisk

#: How the report names each risk figure (:mod:`sdc_core.names`).
RISK_NAMES = {k: label(k) for k in (*RISK_KEYS, *LINKAGE_KEYS, "drisk_percent")}


def _after(row: MetricRow) -> Any:
    """A row's figure after protection, or what a figure that gives none shows."""
    return row.value if row.after is None else row.after


def utility_table(utility: dict[str, Any], unaligned: str | None = None) -> pd.DataFrame:
    """The information-loss figures of the report: the headline ``IL1_release`` first (over
    the ``released`` columns), then the other IL1 figures and the eigenvalue similarity
    (:func:`ui.logic.metrics.utility_rows`, the Protect page's); ``unaligned``: why the
    release's rows are not the original's (none of them has a number)."""
    rows = utility_rows(utility, unaligned)
    return pd.DataFrame({"measure": [r.label for r in rows], "value": [_after(r) for r in rows]})


def risk_table(before: RiskProfile, attacked: LinkageResult,
               after: dict[str, Any], unaligned: str | None = None) -> pd.DataFrame:
    """Risk before and after protection: the released keys' measures (read as if the keys were
    true) and the linkage attack (an attacker who knows the true values), the figures of
    :func:`ui.logic.metrics.risk_rows` that the Protect and Risk pages show; ``unaligned``:
    why the release's rows are not the original's (the linkage attack has no number after)."""
    rows = risk_rows(after, before_figures(before, attacked, keys=REPORT_RISK), "k", REPORT_RISK,
                     unaligned)
    if "drisk_percent" in after:
        rows += risk_rows(after, None, "k", ["drisk_percent"])
    return pd.DataFrame({"measure": [r.label for r in rows],
                         "before": [r.before for r in rows], "after": [_after(r) for r in rows]})


def attackers_table(attacked: LinkageResult, after: dict[str, Any]) -> pd.DataFrame:
    """Every attacker of the linkage attack (docs/measures.md, "The attackers"): how it ranks
    the candidates, its re-identifications before (``attacked``, the data as loaded) and after
    protection (``after``'s ``linkage_attackers``), and which one is the headline."""
    figures = after["linkage_attackers"]
    return pd.DataFrame({
        "attacker": [ATTACKER_NAMES[a] for a in figures],
        "ranks the candidates": [ATTACKER_RULES[a] for a in figures],
        f"{name('linkage_reidentifications')} before":
            [attacked.attackers[a].figures()["linkage_reidentifications"] for a in figures],
        f"{name('linkage_reidentifications')} after":
            [f["linkage_reidentifications"] for f in figures.values()],
        f"{label('linkage_risk_percent')} after":
            [f["linkage_risk_percent"] for f in figures.values()],
        f"{label('linkage_percent_certain')} after":
            [f["linkage_percent_certain"] for f in figures.values()],
        "headline": ["yes" if a == after["linkage_attacker"] else "" for a in figures]})


#: What the population figures are, in one line (the Protect page and the report).
POPULATION_MODELS = (
    "Model estimates for the population, from the class sizes of the released keys and how the "
    "file was sampled: Zayatz, Pitman and the slide negative binomial (SNB) each estimate how "
    "many people in the population are unique on the keys, and Dankar's rule picks one (Pitman "
    "when it is valid at a sampling fraction up to 0.1, else Zayatz, or SNB when it is smaller "
    "above 0.1); the log-linear model fits the key table and gives r1, the expected sample "
    "uniques that are unique in the population, and r2, the expected correct matches of sample "
    "uniques, divided by the cells kept (sdcMicro's normalisation) or by the sample uniques. A "
    "blank key counts as a category of its own.")

#: The uniqueness models as the page and the report name them (Dankar's pick included).
MODEL_NAMES = {"zayatz": "Zayatz", "pitman": "Pitman", "snb": "SNB"}

#: Where the population size N came from.
SAMPLING_SOURCES = {"fraction": "from the sampling fraction given",
                    "population": "the population size given",
                    "weights": "the sum of the weights"}


def sampling_text(s: Sampling) -> str:
    """How the file was sampled, in words: "sampling fraction 0.01, N = 213,900 (from the
    sampling fraction given)"."""
    return (f"sampling fraction {s.fraction:.6g}, N = {s.population:,.0f} "
            f"({SAMPLING_SOURCES[s.source]})")


def figure(value: float | None) -> str:
    """A population figure to three significant digits (at least two decimals), without an
    exponent down to 10⁻⁶; "—" when there is none."""
    if value is None or not math.isfinite(value):
        return "—"
    if value == 0:
        return "0"
    if abs(value) < 1e-6:
        return f"{value:.2e}"
    return f"{value:,.{max(2, 2 - math.floor(math.log10(abs(value))))}f}"


def figure_delta(after: float | None, before: float | None, unit: str = "") -> str | None:
    """The change of a population figure as a metric's delta ("-0.0210 points", or without a
    ``unit`` "-0.0105 (was 0.107)"); None when nothing changed or a side has no figure."""
    if after is None or before is None or not (math.isfinite(after) and math.isfinite(before)):
        return None
    change = after - before
    if abs(change) < 5e-13 * max(1.0, abs(before)):
        return None
    text = f"{'+' if change > 0 else ''}{figure(change)}"
    return f"{text}{unit}" if unit else f"{text} (was {figure(before)})"


def dankar_name(risk: PopulationRisk) -> str:
    """The model Dankar's rule picked ("none: no sample unique" when there is nothing to
    estimate)."""
    model = risk.uniqueness.dankar_model
    return MODEL_NAMES[model] if model is not None else "none: no sample unique"


def loglinear_r2(risk: PopulationRisk) -> float | None:
    """The log-linear default r2 (sdcMicro's normalisation), or None when it was not
    computed."""
    r = risk.loglinear.get("default")
    return None if r is None or isinstance(r, str) else r.r2


def _model_cells(est: ModelEstimate) -> tuple[object, object]:
    """A model's share (in %) and count, or, when it is not valid, why (and "not valid")."""
    if est.share is None or est.count is None:
        return f"not valid: {est.reason}" if est.reason else "not valid", "not valid"
    return 100.0 * est.share, est.count


def population_table(before: PopulationRisk, after: PopulationRisk) -> pd.DataFrame:
    """The uniqueness models before and after protection, a row per figure."""
    rows: list[tuple[str, object, object]] = [
        ("sample uniques (records alone in their class)", before.uniqueness.sample_uniques,
         after.uniqueness.sample_uniques),
        ("sample uniqueness (%)", 100.0 * before.uniqueness.sample_uniqueness,
         100.0 * after.uniqueness.sample_uniqueness)]
    for model in ("zayatz", "pitman", "snb", "dankar"):
        b = _model_cells(getattr(before.uniqueness, model))
        a = _model_cells(getattr(after.uniqueness, model))
        if model == "dankar":  # the headline: named as everywhere (sdc_core.names)
            rows.append((label("population_uniqueness_percent"), b[0], a[0]))
            rows.append((f"{name('dankar_count')} (people)", b[1], a[1]))
        else:
            rows.append((f"{MODEL_NAMES[model]}: population unique (%)", b[0], a[0]))
            rows.append((f"{MODEL_NAMES[model]}: population uniques (people)", b[1], a[1]))
        if model == "dankar":
            rows.append(("Dankar's rule picks", dankar_name(before), dankar_name(after)))
    return pd.DataFrame({"measure": [r[0] for r in rows], "before": [r[1] for r in rows],
                         "after": [r[2] for r in rows]})


def loglinear_table(before: PopulationRisk, after: PopulationRisk) -> pd.DataFrame:
    """The log-linear risks before and after, both ways: sdcMicro's r1 and r2 (over the cells
    kept) and the same per sample unique; a method not computed says why."""
    rows: list[list[object]] = []
    for method in LOGLINEAR_METHODS:
        sides = [before.loglinear.get(method), after.loglinear.get(method)]
        for reading in ("sdcMicro: over the cells kept", "per sample unique"):
            row: list[object] = [method, reading]
            for figure_name in ("r1", "r2"):
                for r in sides:
                    if r is None or isinstance(r, str):
                        row.append(f"not computed: {r}" if r else "not computed")
                    elif reading.startswith("sdcMicro"):
                        row.append(getattr(r, figure_name))
                    else:
                        tau = r.tau1 if figure_name == "r1" else r.tau2
                        row.append(tau / (r.sample_uniques or 1))
            rows.append(row)
    return pd.DataFrame(rows, columns=["method", "reading", "r1 before", "r1 after",
                                       "r2 before", "r2 after"])


def loglinear_divisors(before: PopulationRisk, after: PopulationRisk) -> str:
    """The model and the divisors of the two readings: the cells kept c and the sample
    uniques s_1 (plain text: escape it where it is shown)."""
    def side(risk: PopulationRisk) -> str:
        r = next((r for r in risk.loglinear.values() if not isinstance(r, str)), None)
        return ("not computed" if r is None else
                f"c = {r.cells:,} cells kept, s_1 = {r.sample_uniques:,} sample uniques")
    r = next((r for r in (*before.loglinear.values(), *after.loglinear.values())
              if not isinstance(r, str)), None)
    model = f"The model: {r.formula} (main effects of the keys). " if r is not None else ""
    return (f"{model}Before: {side(before)}; after: {side(after)}. sdcMicro's modRisk reports "
            "r1 = τ1/c and r2 = τ2/c; per sample unique they are τ1/s_1 and τ2/s_1. default "
            "fits the sample counts; CE and PML the population scale (with a constant sampling "
            "fraction they agree).")


def population_section(before: PopulationRisk, after: PopulationRisk) -> str:
    """The report's "Risk in the population" section, every string escaped."""
    e = html.escape
    sampled = f"<p>How the file was sampled: {e(sampling_text(before.sampling))}"
    if after.sampling != before.sampling:
        sampled += f"; after protection {e(sampling_text(after.sampling))}"
    return (f"<h2>Risk in the population</h2>{sampled}.</p>"
            f"<p class=\"small\">{e(POPULATION_MODELS)}</p>"
            f"<h3>Population uniqueness</h3>{html_table(population_table(before, after))}"
            f"<h3>Log-linear risk</h3>{html_table(loglinear_table(before, after))}"
            f"<p class=\"small\">{e(loglinear_divisors(before, after))}</p>")


#: The report's household figures, in their order (docs/measures.md, "Household risk").
HOUSEHOLD_KEYS = ("households", "household_size_mean", "household_risk_pct",
                  "household_expected_reidentifications", "household_composition_uniques",
                  "household_composition_unique_percent", "household_linkage_reidentified",
                  "household_linkage_reidentified_percent", "household_linkage_people",
                  "household_linkage_people_percent", "household_linkage_expected",
                  "household_linkage_expected_people")

#: What the report's household figures are (plain text).
HOUSEHOLD_NOTE = (
    "Household risk R_h = 1 − Π_{j∈h}(1 − r_j), given to every member of household h, r_j the "
    "individual risk of the keys: the chance that some member, and with them the household, is "
    "re-identified (sdcMicro's measure_risk with a household id); household risk = 100 · Σ_i "
    "R_h(i) / n. A household's composition is the multiset of its members' key values. The "
    "household linkage attack: the attacker knows every member's true keys, applies the "
    "recipe's public recodings to them (banding, top/bottom coding, recoding), as the "
    "person-level linkage attack does, and matches the composition against the released "
    "households' (a blank matching any value, perturbed numbers by the nearest); a household is "
    "re-identified when exactly one released household matches, itself (before protection: the "
    "households unique by composition, when no key is blank). docs/measures.md, \"Household "
    "risk\".")


def household_table(before: HouseholdFigures, after: HouseholdFigures) -> pd.DataFrame:
    """The household figures before and after protection, a row each, named by
    :mod:`sdc_core.names` (:data:`HOUSEHOLD_KEYS`)."""
    b, a = before.summary(), after.summary()
    return pd.DataFrame({"measure": [label(k) for k in HOUSEHOLD_KEYS],
                         "before": [b[k] for k in HOUSEHOLD_KEYS],
                         "after": [a[k] for k in HOUSEHOLD_KEYS]})


def household_section(before: HouseholdFigures, after: HouseholdFigures | str) -> str:
    """The report's "Household risk" section: the household id, the figures before and after
    protection and what they are (``after`` text: why the release's cannot be computed),
    every string escaped."""
    e = html.escape
    head = (f"<h2>Household risk</h2><p>Households: the records that share "
            f"{e(str(before.risk.household))}.</p>")
    if isinstance(after, str):
        return f"{head}<p class=\"small\">Not computed for the release: {e(after)}</p>"
    return (f"{head}{html_table(household_table(before, after))}"
            f"<p class=\"small\">{e(HOUSEHOLD_NOTE)}</p>")


#: The tables of a validity report shown before the rest.
WORST_TABLES = 10


def terms_frame(result: AnalysisResult) -> pd.DataFrame:
    """One analysis's terms compared, a row each (NaN where a side has no figure), with
    whether each term holds (J ≥ 0.75 and |d| < 1, :func:`~sdc_core.utility.validity.term_holds`;
    None for a table's cells) and the one its verdict names (``worst``)."""
    worst = worst_term(result)
    table = result.kind == "table"
    return pd.DataFrame({
        "term": [t.term for t in result.terms],
        "original": [t.original for t in result.terms],
        "original low": [t.original_low for t in result.terms],
        "original high": [t.original_high for t in result.terms],
        "protected": [t.protected for t in result.terms],
        "protected low": [t.protected_low for t in result.terms],
        "protected high": [t.protected_high for t in result.terms],
        "CI overlap": [t.ci_overlap for t in result.terms],
        "std. difference": [t.std_diff for t in result.terms],
        "original in protected CI": [t.original_in_protected_ci for t in result.terms],
        "term holds": [None if table else term_holds(t) for t in result.terms],
        "worst": [t is worst for t in result.terms]})


def tables_frame(tables: list[TableResult]) -> pd.DataFrame:
    """The 1- and 2-way tables compared, a row each, in the order given (worst first)."""
    return pd.DataFrame({
        "table": [" × ".join(map(str, t.columns)) for t in tables],
        "TVD": [t.tvd for t in tables], "Hellinger": [t.hellinger for t in tables],
        "false zeros": [t.false_zeros for t in tables],
        "false non-zeros": [t.false_nonzeros for t in tables]})


def pmse_text(report: ValidityReport) -> str:
    """The propensity model's figures in words, or why there are none."""
    if report.pmse is not None:
        return (f"pMSE {report.pmse.pmse:.4g}, S_pMSE {report.pmse.s_pmse:.3g} (a logistic "
                f"model with {report.pmse.k} parameters on {report.pmse.n:,} stacked rows).")
    if report.pmse_error:
        return f"pMSE could not be computed: {report.pmse_error}"
    return "pMSE was not computed (the propensity model is off)."


def validity_section(report: ValidityReport) -> str:
    """The report's "Does the analysis hold?" section, every string escaped."""
    e = html.escape
    summary = report.summary()
    headline = pd.DataFrame({"measure": [LABELS[k] for k in ("mean_ci_overlap", "worst_tvd",
                                                             "s_pmse")],
                             "value": [summary[k] for k in ("mean_ci_overlap", "worst_tvd",
                                                            "s_pmse")]})
    parts = [f"<h2>Does the analysis hold?</h2>{html_table(headline)}"
             f"<p class=\"small\">{e(VERDICT_RULE)}</p>"]
    for r in report.analyses:
        parts.append(f"<h3>{e(r.name)}</h3><p>{e(verdict_text(r))}</p>")
        if r.error:
            parts.append(f"<p class=\"small\">{e(r.error)}</p>")
        if r.terms:
            parts.append(html_table(terms_frame(r)))
    worst = report.tables[:WORST_TABLES]
    parts.append(f"<h3>The {len(worst)} worst of {len(report.tables)} 1- and 2-way "
                 f"tables</h3>{html_table(tables_frame(worst))}")
    if report.missing:
        parts.append(f"<p class=\"small\">Columns the release drops (their tables count "
                     f"TVD 1): {e(', '.join(map(str, report.missing)))}</p>")
    parts.append(f"<h3>Propensity score (pMSE)</h3><p>{e(pmse_text(report))}</p>"
                 f"<p class=\"small\">{e(S_PMSE_RULE)}</p>")
    return "".join(parts)


def buys_section(figures: Sequence[Deniability], inference: InferenceResult | str | None,
                 nearly: tuple[str, Mapping[str, float]] | None = None,
                 unaligned: str | None = None) -> str:
    """What the protection buys (docs/measures.md, "Deniability: what perturbation buys",
    "Deniability with a household id" and "The attribute-inference attack"): the Protect
    page's table, a row per perturbed column
    (:func:`~ui.logic.deniability_view.deniability_table`), with a household id what the
    household id gives away and the warnings of the Protect page, each column's posterior
    behind a disclosure, the columns nearly constant within the households (``nearly``: the
    household id and :func:`~sdc_core.households.nearly_constant`), and the
    attribute-inference attack per sensitive column; ``unaligned``: why the release's rows
    are not the original's (a synthetic release), said instead."""
    e = html.escape
    parts = ["<h2>What this buys</h2>"]
    if unaligned is not None:  # a synthetic release: no record is the release of another
        return "".join(parts) + (f"<p class=\"small\">No deniability figure and no "
                                 f"attribute-inference attack: {e(unaligned)}.</p>")
    if not figures:
        parts.append(f"<p class=\"small\">{e(NOTHING_PERTURBED)}</p>")
    else:
        parts.append(html_table(deniability_table(figures)))
        summary = household_summary(figures)
        if summary:
            parts.append(f"<p class=\"small\">{e(summary)}</p>")
        parts += [f"<p><strong>Warning:</strong> {e(w)}</p>" for w in household_warnings(figures)]
        for d in figures:
            parts.append(f"<details><summary>Posterior of {e(str(d.column))}: P(true value | "
                         f"released value)</summary><p class=\"small\">{e(detail_note(d))}</p>"
                         f"{posterior_table(d).to_html(escape=True, border=0, classes='t', float_format='{:.4f}'.format)}"  # noqa: E501
                         "</details>")
    if nearly is not None:
        parts.append(f"<p class=\"small\">{e(nearly_constant_note(*nearly))}</p>")
    if inference is None:
        parts.append(f"<p class=\"small\">{e(NO_SENSITIVE)}</p>")
    elif isinstance(inference, str):
        parts.append(f"<p class=\"small\">The attribute-inference attack cannot run: "
                     f"{e(inference)}</p>")
    else:
        parts.append(f"<h3>Attribute-inference attack</h3>{html_table(inference_table(inference))}"
                     f"<p class=\"small\">{e(inference_note(inference))}</p>")
    return "".join(parts)


#: The four measures of a sensitive column (docs/measures.md, "t-closeness, β-likeness and
#: δ-disclosure"), in the Risk page's order.
CLOSENESS = ("t_closeness", "beta_likeness", "enhanced_beta_likeness", "delta_disclosure")


def closeness_table(before: dict[str, Closeness], after: dict[str, Closeness]) -> pd.DataFrame:
    """One row per sensitive column: the original's four figures and the release's beside
    them (``closeness_report`` of each table), headed by their names."""
    rows = []
    for column, c in before.items():
        row: dict[str, object] = {"sensitive column": column}
        row |= {label(k): getattr(c, k) for k in CLOSENESS}
        if column in after:
            row |= {f"{label(k)}, released": getattr(after[column], k) for k in CLOSENESS}
        rows.append(row)
    return pd.DataFrame(rows)


def closeness_section(before: dict[str, Closeness], after: dict[str, Closeness]) -> str:
    """t-closeness, basic and enhanced β-likeness and δ-disclosure of each sensitive column,
    original and release (the Risk page's table, :func:`closeness_table`)."""
    if not before:
        return ""
    unbounded = [f"{s}{suffix}" for figures, suffix in ((before, ""), (after, " (released)"))
                 for s, c in figures.items() if not c.delta_bounded]
    note = (f" Some class lacks a value of {', '.join(unbounded)}: the paper's δ is then "
            "infinite; the figure shown is over the values the classes hold." if unbounded else "")
    return (f"<h3>How far each class's distribution of a sensitive column is from the "
            f"table's</h3>{html_table(closeness_table(before, after))}<p class=\"small\">Each "
            "figure is the worst class's, the classes those of the quasi-identifiers (a missing "
            "key value a value of its own); docs/measures.md, \"t-closeness, β-likeness and "
            f"δ-disclosure\".{html.escape(note)}</p>")


def tables_section(settings: CrossSettings, releases: Mapping[str, TableRelease | str]) -> str:
    """The cross table last shown on the Tables page, published by each method (docs/tables.md,
    "Publishing a table"): the methods' utility and protection figures side by side
    (:func:`~ui.logic.cross_tables.comparison_table`), why a method is not offered, the
    suppressed table (``✕`` a hidden figure) and its audit's verdict or findings."""
    e = html.escape
    parts = [f"<h2>Published tables</h2><p>{e(table_title(settings))}: "
             f"{e(settings_text(settings))}.</p>",
             html_table(comparison_table(releases, settings.threshold))]
    refused = [m for m, made in releases.items() if not isinstance(made, TableRelease)]
    for m in refused:
        parts.append(f"<p class=\"small\">{e(METHOD_TITLES[m])}: {e(str(releases[m]))}</p>")
    suppressed = releases.get("suppress")
    if isinstance(suppressed, TableRelease):
        shown = shown_table(suppressed)
        pivot = len(settings.columns) == 2
        passes, lines = audit_text(suppressed)
        parts.append(f"<h3>The suppressed table</h3>"
                     f"{shown.to_html(index=pivot, escape=True, border=0, classes='t')}"
                     f"<p class=\"small\">✕ hidden · {e(status_counts(suppressed))}</p>")
        parts += [f"<p>{'' if passes else 'Audit: '}{e(line)}</p>" for line in lines]
    return "".join(parts)


#: The room above the sweep's plot for its title of three lines, and the title's distance
#: from the figure's top (px).
TITLE_ROOM, TITLE_PAD = 115, 24


def sweep_figure(result: SweepResult) -> go.Figure:
    """The last sweep's trade-off chart for the report; its star, the sweep's cheapest setting
    under its target, is said not to be the report's recipe unless it is."""
    loss = column_label(LOSS) if result.loss == LOSS \
        else f"{LABELS[result.loss]} (benchmark analyses)"
    fig = tradeoff_scatter(result.table, "linkage_reidentifications", result.loss,
                           label("linkage_reidentifications"), loss, best=result.best)
    if result.best is not None:
        # in short lines: on one line it was wider than the report's page, cut at its edge
        fig.layout.title.text = ("The last sweep: risk against information loss<br>(★ its "
                                 "cheapest setting under the target,<br>which is not "
                                 "necessarily this report's recipe)")
        fig.layout.height += TITLE_ROOM - fig.layout.margin.t
        fig.layout.margin.t = TITLE_ROOM
        # from the figure's top down (Plotly centres a title in the room above the plot, and
        # its lines grow both ways: the last one touched the plot)
        fig.layout.title.update(yref="container", y=1 - TITLE_PAD / fig.layout.height,
                                yanchor="top", pad={"l": 8})
    return fig


def build_report(title: str, fingerprint: str, n_records: int, n_columns: int,
                 roles: dict[str, object], recipe_text: str, risk: pd.DataFrame,
                 utility: pd.DataFrame, figures: list[go.Figure],
                 file_sha256: str | None = None, notes: list[str] | None = None,
                 validity: ValidityReport | None = None,
                 population: tuple[PopulationRisk, PopulationRisk] | None = None,
                 attackers: pd.DataFrame | None = None,
                 buys: tuple[Sequence[Deniability], InferenceResult | str | None] | None = None,
                 closeness: tuple[dict[str, Closeness], dict[str, Closeness]] | None = None,
                 households: tuple[HouseholdFigures, HouseholdFigures | str] | None = None,
                 tables: tuple[CrossSettings, Mapping[str, TableRelease | str]] | None = None,
                 nearly_constant: tuple[str, Mapping[str, float]] | None = None,
                 synthetic: tuple[str, SyntheticRisk | str | None] | None = None) -> str:
    """The report as one HTML document; ``fingerprint`` is the table fingerprint (SHA-256 of
    the table as CSV text), ``file_sha256`` the (start of the) uploaded file's hash;
    ``validity``, when given, adds whether the benchmark analyses hold; ``population``, the
    risk in the population before and after protection, adds its section; ``attackers``
    (:func:`attackers_table`) names the linkage attack's headline attacker, with every
    attacker's figures behind a disclosure; ``buys``, the workbench's deniability and
    attribute-inference figures, adds what the protection buys (:func:`buys_section`);
    ``closeness``, ``closeness_report`` of the original and of the release, adds their
    t-closeness, β-likeness and δ-disclosure (:func:`closeness_section`); ``households``, the
    household figures of the original and of the release, adds their household risk and the
    household linkage attack (:func:`household_section`); ``tables``, the Tables page's last
    cross-table settings and the table each method publishes (or why it is not offered), adds
    them (:func:`tables_section`); ``nearly_constant``, the household id and the columns nearly
    constant within its households, says which they are under what the protection buys;
    ``synthetic``, why a release's rows are not the original's and its figures as a set of
    records (or why they cannot be computed), adds them (:func:`synthetic_section`)."""
    parts = []
    for i, fig in enumerate(figures):
        parts.append(fig.to_html(full_html=False, include_plotlyjs=(i == 0),
                                 config={"displaylogo": False}))
    role_rows = pd.DataFrame({"role": list(roles),
                              "columns": [", ".join(map(str, v)) if isinstance(v, list)
                                          else ("—" if v is None else str(v))
                                          for v in roles.values()]})
    e = html.escape
    notes_html = "".join(f"<p>{e(n)}</p>" for n in notes or [])
    attackers_html = ""
    if attackers is not None:
        top = attackers[attackers["headline"] == "yes"].iloc[0]
        attackers_html = (
            f"<p class=\"small\">The linkage attack's figures are those of the attacker that "
            f"re-identifies most of the {len(attackers)} it runs: {e(top['attacker'])} "
            f"({e(top['ranks the candidates'])}).</p><details><summary>Every attacker of the "
            f"linkage attack</summary>{html_table(attackers)}</details>")
    file_line = f" · file SHA-256 <code>{e(file_sha256)}…</code>" if file_sha256 else ""
    file_note = (" The file SHA-256 is a hash of the uploaded file's bytes: another name for the "
                 "same data.") if file_sha256 else ""
    # every string of the text escaped where it is written; its direction controls here, once
    # (the figures' text is plain(), ui/logic/figures.py)
    return neutralize_bidi(f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Disclosure-control report: {e(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 1000px; margin: 2em auto; color: #1c2330; }}
h1 {{ font-size: 1.6em; }}
h2 {{ font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }}
table.t {{ border-collapse: collapse; margin: .5em 0; }}
table.t td, table.t th {{ padding: .25em .8em; border-bottom: 1px solid #eee; text-align: left; }}
pre {{ background: #f3f5f8; padding: 1em; overflow-x: auto; }}
.small {{ color: #5b6675; font-size: .9em; }}
</style></head><body>
<h1>Disclosure-control report: {e(title)}</h1>
<p class="small">sdc_core {e(__version__)} · {n_records:,} records × {n_columns} columns ·
table fingerprint <code>{e(fingerprint)}</code>{file_line}</p>
<p class="small">The table fingerprint is the SHA-256 of the table's content written as CSV text
(column names and values, in order), whatever the file format; <code>python -m sdc_core
apply</code> warns when the recipe meets a table with another one.{file_note}</p>
<h2>Column roles</h2>{html_table(role_rows)}
<h2>Recipe</h2><p class="small">Apply it with <code>python -m sdc_core apply DATA --recipe
recipe.json -o OUT</code>; the same data, recipe and seed give the same file.</p>
<pre>{e(recipe_text)}</pre>
<h2>Disclosure risk before and after</h2>
<p class="small">The released keys' measures read the released values as if they were true (how
unique the released keys look; sdcMicro's convention). The linkage attack is what an attacker who
knows the true values and the public recodings actually re-identifies; it assumes the attacker
knows the person is in the file.</p>{html_table(risk)}{attackers_html}{notes_html}
{synthetic_section(*synthetic) if synthetic is not None else ""}
{household_section(*households) if households is not None else ""}
{population_section(*population) if population is not None else ""}
{closeness_section(*closeness) if closeness is not None else ""}
{buys_section(*buys, nearly=nearly_constant, unaligned=synthetic[0] if synthetic else None)
 if buys is not None else ""}
<h2>Information loss</h2>{html_table(utility)}<p class="small">{e(RELEASE_LOSS_FORMULA)}
{e(IL1_READING)}</p>
{validity_section(validity) if validity is not None else ""}
{tables_section(*tables) if tables is not None else ""}
<h2>Figures</h2>""") + "".join(parts) + "\n</body></html>"



@dataclass(frozen=True)
class ReportSource:
    """What a report is of: its title, the table fingerprint (SHA-256 of the table as CSV text),
    its size, the roles as the report shows them, the recipe's text, the uploaded file's hash
    (its start) and notes on how the figures were computed (a sample)."""

    title: str
    fingerprint: str
    n_records: int
    n_columns: int
    roles: dict[str, object]
    recipe_text: str
    file_sha256: str | None = None
    notes: tuple[str, ...] = ()


#: What each part of an assessment adds to the report, for the page's "leaves out" warnings.
REPORT_PARTS = {"population": "the risk in the population",
                "closeness": "t-closeness and β-likeness",
                "households": "the household risk"}


def left_out(before: Assessment, after: Assessment) -> dict[str, str]:
    """The report's parts the setting asks for that cannot be computed, by part: why (the
    original's reason first)."""
    out = {}
    for part in REPORT_PARTS:
        for a in (before, after) if part != "households" else (before,):
            found = getattr(a, part)
            if isinstance(found, Unavailable) and found.asked:
                out[part] = found.reason
                break
    return out


def report_of(source: ReportSource, before: Assessment, after: Assessment,
              utility: dict[str, Any], figures: list[go.Figure],
              validity: ValidityReport | None = None,
              tables: tuple[CrossSettings, Mapping[str, TableRelease | str]] | None = None,
              nearly_constant: tuple[str, Mapping[str, float]] | None = None) -> str:
    """The report of a release, read from two assessments: ``before``, the data as loaded
    judged as its own release, and ``after``, the release's (the Protect page's); ``utility``
    the Protect page's information-loss figures (:meth:`ui.logic.workbench.Workbench.utility_for`,
    the columns not released left out); ``validity``, ``tables`` and ``nearly_constant`` as
    :func:`build_report` takes them. A part that cannot be computed is left out
    (:func:`left_out` says why)."""
    risk = risk_after(after)
    unaligned = after.rows
    population = None
    if not isinstance(before.population, Unavailable) \
            and not isinstance(after.population, Unavailable):
        population = (before.population, after.population)
    closeness = None
    if not isinstance(before.closeness, Unavailable) \
            and not isinstance(after.closeness, Unavailable):
        closeness = (before.closeness, after.closeness)
    households = None
    if not isinstance(before.households, Unavailable):
        later_h = after.households
        households = (before.households, later_h if not isinstance(later_h, Unavailable)
                      else later_h.reason)
    assert after.applied is not None  # the release of a recipe
    return build_report(
        source.title, source.fingerprint, source.n_records, source.n_columns, source.roles,
        source.recipe_text, risk_table(before.keys, before.linkage, risk, unaligned),
        utility_table(utility, unaligned),
        figures, file_sha256=source.file_sha256,
        notes=[*source.notes, *step_notes(after.applied.reports)], validity=validity,
        population=population,
        attackers=attackers_table(before.linkage, risk) if unaligned is None else None,
        buys=(after.deniability, shown(after.inference)), closeness=closeness,
        households=households, tables=tables, nearly_constant=nearly_constant,
        synthetic=None if unaligned is None else (unaligned, shown(after.synthetic)))


def synthetic_section(unaligned: str, risk: SyntheticRisk | str | None) -> str:
    """The report's section on a release whose rows are not the original's (a synthetic
    release; docs/measures.md, "Disclosure risk of a synthetic release"): why the figures
    that compare record by record give no number, then its figures as a set of records
    (:func:`~ui.logic.synthetic_view.synthetic_table`), or why they cannot be computed."""
    e = html.escape
    head = (f"<h2>A synthetic release</h2><p>{e(record_by_record(unaligned))}</p>")
    if risk is None:
        return head
    if isinstance(risk, str):
        return f"{head}<p class=\"small\">Not computed for the release: {e(risk)}</p>"
    return (f"{head}{html_table(synthetic_table(risk))}"
            f"<p class=\"small\">{e(SYNTHETIC_NOTE)}</p>")
