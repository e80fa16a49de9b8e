"""What a protection buys, as tables (no Streamlit): the deniability of every perturbed column
(docs/measures.md, "Deniability: what perturbation buys") and the attribute-inference attack on
the release (docs/measures.md, "The attribute-inference attack"), for the Protect page and the
report alike: the same figures under the same names (:mod:`sdc_core.names`).

One summary row per perturbed column, whatever their number (a survey of 25 answers gives 25
rows); the posterior and the transition matrix of a column are tables of their own, shown one
column at a time."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from sdc_core.names import label
from sdc_core.risk.deniability import Deniability
from sdc_core.risk.inference import InferenceResult

#: The heading of the column that says what ε means.
MEANING = "what ε means"
#: The heading of the column of the best guess's gain over the baseline.
GAIN = "gain over baseline (points)"
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
    if not math.isfinite(epsilon):
        return "∞: no deniability"
    ratio = f"{math.exp(epsilon):.4g}" if epsilon < 700 else f"10^{epsilon / math.log(10):.0f}"
    return f"any answer at most e^ε = {ratio} times likelier to give this release"


def deniability_table(figures: Sequence[Deniability]) -> pd.DataFrame:
    """One row per perturbed column: the column, the method(s) composed, ε (``inf`` for none),
    the best-guess accuracy, its baseline, the gain in points (100 · (accuracy − baseline)) and
    what ε means, the figures of :func:`~sdc_core.risk.deniability.recipe_deniability`
    unchanged.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.risk.deniability import deniability
    >>> m = pd.DataFrame([[0.75, 0.25], [0.25, 0.75]], index=["0", "1"], columns=["0", "1"])
    >>> t = deniability_table([deniability(m, pd.Series({"0": 0.5, "1": 0.5}), "x", "pram")])
    >>> t.iloc[0].tolist()[:2], round(float(t.iloc[0]["local-DP ε"]), 4)
    (['x', 'pram'], 1.0986)
    """
    return pd.DataFrame({
        "column": [str(d.column) for d in figures],
        "method": [d.method for d in figures],
        label("epsilon"): [float(d.epsilon) for d in figures],
        label("guess_accuracy"): [float(d.guess_accuracy) for d in figures],
        label("baseline"): [float(d.baseline) for d in figures],
        GAIN: [100.0 * (d.guess_accuracy - d.baseline) for d in figures],
        MEANING: [epsilon_words(d.epsilon) for d in figures],  # last: the widest
    })


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
    """What the figures of one column are made of: the full meaning of its ε, the steps
    composed, those left out and the blanks."""
    parts = [d.meaning + "."]
    if d.steps:
        parts.append("Steps composed: " + ", ".join(map(str, d.steps)) + ".")
    if d.not_modelled:
        parts.append("Steps left out of the matrix (not value by value): "
                     + ", ".join(map(str, d.not_modelled)) + ".")
    if d.unreachable:
        parts.append("Released values no present value can produce: "
                     + ", ".join(d.unreachable) + ".")
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
