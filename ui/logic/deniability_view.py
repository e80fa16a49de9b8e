"""What a protection buys, as tables (no Streamlit): the deniability of every perturbed column
(docs/measures.md, "Deniability: what perturbation buys") and the attribute-inference attack on
the release (docs/measures.md, "The attribute-inference attack"), for the Protect page and the
report alike: the same figures under the same names (:mod:`sdc_core.names`).

One summary row per perturbed column, whatever their number (a survey of 25 answers gives 25
rows); the posterior and the transition matrix of a column are tables of their own, shown one
column at a time."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd

from sdc_core.households import NEARLY_CONSTANT
from sdc_core.methods.common import MAX_DENSE_LEVELS
from sdc_core.names import label
from sdc_core.risk.deniability import Deniability
from sdc_core.risk.inference import InferenceResult

#: The heading of the column that says what ε means.
MEANING = "what ε means"
#: The heading of the column of the best guess's gain over the baseline.
GAIN = "gain over baseline (points)"
#: The heading of the column that says how a column was drawn, with a household id.
DRAWN = "drawn"
#: What the part says when no column is perturbed at random.
NOTHING_PERTURBED = ("No column is perturbed at random (PRAM, random relabeling, randomized "
                     "response), so the release gives no respondent deniability: a released "
                     "value is read as the true one, or (banded, recoded) as a public function "
                     "of it.")
#: What the part says when no sensitive column is tagged.
NO_SENSITIVE = ("Tag sensitive columns on the Data page to see the attribute-inference attack: "
                "how often the linkage attack's attacker guesses each one's true value from "
                "the release, against the same attacker with the column withheld.")


#: What "—" stands for in the CAP column of the attribute-inference table.
NO_CAP = ("CAP is a figure of a categorical column (the share of the matching records that "
          "carry the true value): — for a numeric one.")


def epsilon_words(epsilon: float) -> str:
    """ε in words, short: "∞: no deniability", or "any answer at most e^ε = 3 times likelier"
    (the full sentence is :attr:`Deniability.meaning`).

    Examples
    --------
    >>> epsilon_words(math.inf)
    '∞: no deniability'
    >>> epsilon_words(math.log(3))
    'any answer at most e^ε = 3 times likelier to give this release'
    """
    if math.isnan(epsilon):
        return "not computed: a column too wide (its steps' figures have no closed form)"
    if not math.isfinite(epsilon):
        return "∞: no deniability"
    ratio = f"{math.exp(epsilon):.4g}" if epsilon < 700 else f"10^{epsilon / math.log(10):.0f}"
    return f"any answer at most e^ε = {ratio} times likelier to give this release"


def deniability_table(figures: Sequence[Deniability]) -> pd.DataFrame:
    """One row per perturbed column: the column, the method(s) composed, ε (``inf`` for none),
    the best-guess accuracy, its baseline, the gain in points (100 · (accuracy − baseline)),
    with a household id the household best-guess accuracy and the household ε (docs/measures.md,
    "Deniability with a household id"), and what ε means, the figures of
    :func:`~sdc_core.risk.deniability.recipe_deniability` and
    :func:`~sdc_core.risk.deniability.household_figures` unchanged.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.risk.deniability import deniability
    >>> m = pd.DataFrame([[0.75, 0.25], [0.25, 0.75]], index=["0", "1"], columns=["0", "1"])
    >>> t = deniability_table([deniability(m, pd.Series({"0": 0.5, "1": 0.5}), "x", "pram")])
    >>> t.iloc[0].tolist()[:2], round(float(t.iloc[0]["local-DP ε"]), 4)
    (['x', 'pram'], 1.0986)
    """
    columns: dict[str, list] = {
        "column": [str(d.column) for d in figures],
        "method": [d.method for d in figures],
        label("epsilon"): [float(d.epsilon) for d in figures],
        label("guess_accuracy"): [float(d.guess_accuracy) for d in figures],
        label("baseline"): [float(d.baseline) for d in figures],
        GAIN: [100.0 * (d.guess_accuracy - d.baseline) for d in figures]}
    if any(d.household is not None for d in figures):
        columns |= {
            label("household_guess_accuracy"): [
                math.nan if d.household is None else float(d.household.guess_accuracy)
                for d in figures],
            label("household_epsilon"): [
                math.nan if d.household is None else float(d.household.epsilon)
                for d in figures],
            DRAWN: ["" if d.household is None else
                    "once per household" if d.household.per_household else "per record"
                    for d in figures]}
    return pd.DataFrame(columns | {MEANING: [epsilon_words(d.epsilon) for d in figures]})


def household_summary(figures: Sequence[Deniability]) -> str | None:
    """What the household id gives away, in words (docs/measures.md, "Deniability with a
    household id"): what the two household columns of :func:`deniability_table` are, then
    :attr:`~sdc_core.risk.deniability.HouseholdGuess.meaning` of the column where the
    household's records add most to one record's guess; None without household figures."""
    held = [d.household for d in figures if d.household is not None]
    if not held:
        return None
    top = max(held, key=lambda h: h.guess_accuracy - h.record_accuracy)
    return (f"The household id {top.household} is released with the records, so an attacker "
            f"can read all of a household's records together. {label('household_guess_accuracy')}"
            ": the share of the records whose true value the better of two guesses from all "
            "of their household's released values gets right (the majority vote; the Bayes "
            f"guess of a value constant within the household). {label('household_epsilon')}: "
            "the bound for all of a household's records, m × ε for m records drawn one by "
            "one, ε for a column drawn once per household. " + top.meaning)


def household_warnings(figures: Sequence[Deniability]) -> list[str]:
    """A warning per column perturbed record by record although it is constant, or nearly so,
    within the households (:attr:`~sdc_core.risk.deniability.HouseholdGuess.warning`)."""
    return [d.household.warning for d in figures
            if d.household is not None and d.household.warning]


def nearly_constant_note(household: str, shares: Mapping[str, float]) -> str:
    """Which columns are nearly constant within the households (at least
    :data:`~sdc_core.households.NEARLY_CONSTANT` of the households of two or more records
    constant, not all: :func:`~sdc_core.households.nearly_constant`), with their shares, in
    a sentence; what to do with them.

    Examples
    --------
    >>> nearly_constant_note("id", {"educ": 0.9835})
    'Nearly constant within the households of id (at least 95 % of the households of two or more records hold one value): educ (98.4 %). Perturb such a column once per household (One draw per household): record by record, the household id undoes part of the perturbation.'
    """  # noqa: E501
    if not shares:
        return (f"No column is nearly constant within the households of {household} (at least "
                f"{100 * NEARLY_CONSTANT:.0f} % of the households of two or more records "
                "holding one value, not all).")
    listed = ", ".join(f"{c} ({100 * v:.1f} %)" for c, v in shares.items())
    return (f"Nearly constant within the households of {household} (at least "
            f"{100 * NEARLY_CONSTANT:.0f} % of the households of two or more records hold one "
            f"value): {listed}. Perturb such a column once per household (One draw per "
            "household): record by record, the household id undoes part of the perturbation.")


def wide_matrix_text(column: str, levels: int) -> str:
    """Why a wide column's transition matrix is not drawn (docs/measures.md, "Wide
    columns")."""
    return (f"{column} has {levels:,} levels, more than {MAX_DENSE_LEVELS:,}: its "
            f"{levels:,} × {levels:,} transition matrix is not built or drawn (its figures are "
            "computed in closed form).")


def posterior_table(d: Deniability) -> pd.DataFrame:
    """P(true i | released k) of one column: a row per true value (its share π_i first), a
    column per released value; the column's posterior as the core gives it."""
    table = d.posterior.copy()
    table.insert(0, "π (original share)", d.prior.reindex(table.index).to_numpy())
    table.index = pd.Index([str(v) for v in table.index], name="true value")
    return table


def matrix_table(d: Deniability) -> pd.DataFrame:
    """P(released k | true i) of one column, the steps composed: a row per true value."""
    table = d.matrix.copy()
    table.index = pd.Index([str(v) for v in table.index], name="true value")
    return table


def detail_note(d: Deniability) -> str:
    """What the figures of one column are made of: the full meaning of its ε, what the
    household id gives away (with one), the steps composed, those left out and the blanks."""
    parts = [d.meaning + "."]
    if d.household is not None:
        parts.append(d.household.meaning)
    if d.steps:
        parts.append("Steps composed: " + ", ".join(map(str, d.steps)) + ".")
    if d.not_modelled:
        parts.append("Steps left out of the matrix (not value by value): "
                     + ", ".join(map(str, d.not_modelled)) + ".")
    if d.wide and not math.isnan(d.epsilon):  # the figures hold; the tables are not drawn
        parts.append(d.wide + f"; the largest posterior is {d.largest_posterior:.4f}.")
    if d.unreachable:
        unreachable = ", ".join(d.unreachable[:20]) + (" …" if len(d.unreachable) > 20 else "")
        parts.append(f"Released values no present value can produce: {unreachable}.")
    if d.n_blank:
        parts.append(f"{d.n_blank:,} blank values are released as blanks and left out.")
    return " ".join(parts)


def inference_table(result: InferenceResult) -> pd.DataFrame:
    """One row per sensitive column: the attack's accuracy, baseline and gain (points), CAP and
    the records attacked, as :meth:`InferenceColumn.summary` gives them, under their names."""
    keys = ("inference_accuracy", "inference_baseline", "inference_gain", "inference_cap",
            "inference_n")
    rows = [c.summary() for c in result.columns]
    table = pd.DataFrame({"column": [str(r["column"]) for r in rows],
                          "kind": [r["kind"] for r in rows]}
                         | {label(k): [r[k] for r in rows] for k in keys})
    # CAP is a figure of a categorical column only: a numeric one has none (NaN, shown "—"),
    # never the text "None" of a column of Python values
    cap = label("inference_cap")
    table[cap] = pd.to_numeric(table[cap], errors="coerce").astype(float)
    return table


#: How :func:`inference_shown` writes each figure: shares to 4 decimals and the gain in points
#: to 2, as :func:`inference_note` does, the records as a count
_SHOWN_FORMATS = {"inference_accuracy": "{:.4f}", "inference_baseline": "{:.4f}",
                  "inference_gain": "{:+.2f}", "inference_cap": "{:.4f}",
                  "inference_n": "{:,.0f}"}


def inference_shown(result: InferenceResult) -> pd.DataFrame:
    """:func:`inference_table` as the Protect page shows it, indexed by column: every figure
    written out (:data:`_SHOWN_FORMATS`), "—" where there is none (CAP of a numeric column).
    Text made here, not by a pandas ``Styler``: a one-row styled table cost the server about
    10 ms to draw on every move."""
    table = inference_table(result).set_index("column")
    for key, form in _SHOWN_FORMATS.items():
        column = label(key)
        table[column] = [("—" if pd.isna(v) else form.format(v)) for v in table[column]]
    return table


def inference_note(result: InferenceResult) -> str:
    """The attack's overall figures (means over the sensitive columns) in a sentence."""
    return (f"Over the {len(result.columns)} sensitive column(s): {label('inference_accuracy')} "
            f"{result.accuracy:.4f} against {label('inference_baseline')} {result.baseline:.4f} "
            f"({label('inference_gain')} {result.gain:+.2f} points). The attacker knows each "
            "person's keys" + (f" and {', '.join(map(str, result.distance))}"
                               if result.distance else "")
            + " and guesses the commonest released value among the best candidates (numeric: "
            "their mean, a hit within the interval)."
            + (f" {NO_CAP}" if any(c.cap is None for c in result.columns) else ""))
