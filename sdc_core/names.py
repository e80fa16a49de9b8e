"""One name per measure: the display name, unit and formula of every figure the project reports.

The pages, the report, the command line's text and the Trade-offs page read their names here
(docs/measures.md, "Names", lists the same table), so a figure is called the same everywhere
and the two "re-identification" figures cannot be confused:

- the **keys' re-identifications** Σ 1/f_k and the **keys' re-identification risk**
  100 · mean(1/f_k) read the released keys as if they were true (sdcMicro's convention);
- the **linkage attack re-identifications** Σ p_i and the **linkage attack risk**
  100 · mean(p_i) are what an attacker who knows the true values achieves.

A key is the figure's name in JSON (``risk --json``, ``compare --json``), in a sweep's columns,
in a target and in the records files; it stays what it was, so workspaces, grids and scripts
keep working. ``{k}`` in a name stands for the k-anonymity threshold.

Units: ``count`` (records or people, possibly fractional as an expectation), ``%`` (0–100),
``share 0–1``, ``index`` (a figure whose range the formula gives) and ``score``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class Measure:
    """How a figure is called (``name``; ``{k}``: the threshold), in what ``unit``, and what it
    is (``formula``, in the notation of docs/measures.md).

    A headline figure of an assessment (docs/architecture.md, "A measure") also says which
    ``part`` of :class:`sdc_core.assess.Assessment` gives it (:data:`PARTS`: where its JSON
    is and what it needs), which way is ``better`` (``"lower"`` or ``"higher"``: less risk or
    less loss), whether a sweep may ``target`` it (the Trade-offs page's targets) and whether
    the ``engines`` (DuckDB, Spark) compute it."""

    name: str
    unit: str
    formula: str
    part: str | None = None
    better: str | None = None
    target: bool = False
    engines: bool = False

    def __post_init__(self) -> None:
        if self.part is not None and self.part not in PARTS:
            raise ValueError(f"{self.name}: part must be one of {', '.join(PARTS)}")
        if self.better not in (None, "lower", "higher"):
            raise ValueError(f"{self.name}: better must be lower, higher or None")

    @property
    def needs(self) -> tuple[str, ...]:
        """What the measure needs from the setting (:data:`NEEDS`): its part's."""
        return PARTS[self.part].needs if self.part is not None else ()


UNITS = ("count", "%", "share 0–1", "index", "score")

#: What a measure can need: quasi-identifiers, sensitive columns, a household id, how the file
#: was sampled, the recipe that made the release, a release whose row i is the release of the
#: original's row i (``rows``: :attr:`sdc_core.methods.spec.Method.keeps_rows`), benchmark
#: analyses, frequency tables to compare, numeric columns (read as numbers).
NEEDS = ("keys", "sensitive", "household", "sampling", "recipe", "rows", "analyses", "tables",
         "numeric")


@dataclass(frozen=True)
class Part:
    """A part of an assessment as the command line gives it: the command (``risk`` or
    ``compare``), the key of ``--json``'s output that holds its figures (None: the top level;
    a list of objects, one per column or table, when ``each`` says so) and what it needs."""

    command: str
    json: str | None
    needs: tuple[str, ...] = ()
    each: bool = False

    def __post_init__(self) -> None:
        unknown = set(self.needs) - set(NEEDS)
        if unknown:
            raise ValueError(f"needs must be among {', '.join(NEEDS)}, not {sorted(unknown)}")


#: The parts of :class:`sdc_core.assess.Assessment` that hold headline figures, by attribute.
PARTS: dict[str, Part] = {
    "keys": Part("risk", None, ("keys",)),
    "population": Part("risk", "population", ("keys", "sampling")),
    "linkage": Part("compare", None, ("keys", "rows")),
    "loss": Part("compare", None, ("rows",)),
    "similarity": Part("compare", None, ("rows",)),
    "deniability": Part("compare", "attribute", ("keys", "recipe", "rows"), each=True),
    "inference": Part("compare", "inference", ("keys", "sensitive", "rows")),
    "closeness": Part("compare", "closeness", ("keys", "sensitive"), each=True),
    "households": Part("risk", None, ("keys", "household")),
    "household_deniability": Part("compare", "attribute",
                                  ("keys", "recipe", "rows", "household"), each=True),
    "household_linkage": Part("compare", "household_linkage", ("keys", "household", "rows")),
    "closest": Part("compare", None, ("numeric",)),
    "analyses": Part("compare", None, ("analyses",)),
    "cell_loss": Part("compare", "cell_loss.tables", ("tables",), each=True),
    # a release read as a set of records (docs/measures.md, "Disclosure risk of a synthetic
    # release"): any release with keys, a synthetic one above all
    "synthetic": Part("compare", None, ("keys",)),
    "disco": Part("compare", "disco", ("keys", "sensitive"), each=True),
}

_M = Measure
#: Every measure by its key, in the order of docs/measures.md's table.
MEASURES: dict[str, Measure] = {
    # the released keys read as if true
    "n_records": _M("records", "count", "n"),
    "n_classes": _M("equivalence classes", "count", "number of distinct key combinations"),
    "percent_unique": _M("unique records", "%", "100 · mean(f_k = 1)"),
    "percent_k_le_threshold": _M("records in classes ≤ {k}", "%", "100 · mean(f_k ≤ k)"),
    "percent_below_k": _M("records in classes < {k}", "%", "100 · mean(f_k < k)"),
    "expected_reidentifications": _M("keys' re-identifications", "count", "Σ 1/f_k"),
    "avg_linkage_risk_percent": _M("keys' re-identification risk", "%", "100 · mean(1/f_k)"),
    "global_risk_percent": _M("global risk", "%", "100 · mean(r), r the individual risk"),
    "global_expected_reidentifications": _M("global re-identifications", "count", "Σ r"),
    "min_k": _M("smallest class", "count", "min f_k"),
    "median_k": _M("median class size", "count", "median of f_k over the records"),
    "min_k_wildcard": _M("smallest class, a blank matching any value", "count",
                         "min f_k, a missing key matching any value"),
    "min_k_category": _M("smallest class, a blank as a value of its own", "count",
                         "min f_k, a missing key a value of its own"),
    "n_records_with_missing_keys": _M("records with missing keys", "count",
                                      "records with a missing value on some key"),
    "fk": _M("class size f_k", "count", "records sharing the record's key values"),
    "Fk": _M("population class size F_k", "count", "Σ w over the record's class"),
    "risk": _M("individual risk", "share 0–1", "r: 1/f_k, or Benedetti–Franconi with weights"),
    # l-diversity of a sensitive column S
    "min_l": _M("min l", "count", "min l over the records with l ≥ 1"),
    "percent_l_eq_1": _M("records with l = 1", "%", "100 · mean(l = 1)"),
    "percent_no_sensitive_value": _M("records with no sensitive value released", "%",
                                     "100 · mean(l = 0)"),
    # how far a class's distribution q of S is from the table's p (the worst class)
    "t_closeness": _M("t-closeness", "share 0–1",
                      "max over classes of EMD(q, p), ordered for numeric S, equal otherwise"),
    "beta_likeness": _M("basic β-likeness", "index",
                        "max over classes and values of (q_i − p_i)/p_i"),
    "enhanced_beta_likeness": _M("enhanced β-likeness", "index", "max_i min{β, −ln p_i}"),
    "delta_disclosure": _M("δ-disclosure", "index",
                           "max over classes and values with q_i > 0 of |ln(q_i/p_i)|"),
    # attribute disclosure: a released column Z that (nearly) determines S
    "share": _M("share of records Z determines S on", "share 0–1",
                "Σ_z max_s n(z, s) / Σ_z n(z), over Z values held by two or more records"),
    "n_values": _M("values of Z", "count", "distinct Z values where Z and S are present"),
    # SUDA2 special uniques
    "n_records_score_positive": _M("records with MSUs", "count",
                                   "records with a minimal sample unique (MSU): score > 0"),
    "max_score": _M("max SUDA score", "score", "max score_i"),
    "max_dis_score": _M("max DIS score", "share 0–1", "max dis_i"),
    "n_msus": _M("minimal sample uniques", "count", "number of (record, MSU) pairs"),
    "attribute_contributions": _M("SUDA attribute contribution", "%",
                                  "100 · Σ_i credit of key j in i / Σ_i score_i"),
    "suda_score": _M("SUDA score", "score", "Σ over the record's MSUs S of (M − |S|)!"),
    "dis_score": _M("DIS score", "share 0–1", "1 / (1 + (U/Dis − U) / (score^Q · A))"),
    # the population (how the file was sampled)
    "sampling_fraction": _M("sampling fraction π", "share 0–1", "n/N"),
    "population_size": _M("population size N", "count", "given, n/π, or Σ w"),
    "sample_size": _M("records", "count", "n"),
    "classes": _M("equivalence classes", "count", "u, the classes of the sample"),
    "sample_uniques": _M("sample uniques", "count", "s_1, the records alone in their class"),
    "sample_uniqueness": _M("sample uniqueness", "share 0–1", "s_1/n"),
    "zayatz": _M("Zayatz: population uniqueness", "share 0–1", "S_1/N, Zayatz (1991)"),
    "zayatz_count": _M("Zayatz: population uniques", "count", "S_1, Zayatz (1991)"),
    "pitman": _M("Pitman: population uniqueness", "share 0–1", "S_1/N, Pitman's formula"),
    "pitman_count": _M("Pitman: population uniques", "count", "S_1, Pitman's formula"),
    "snb": _M("SNB: population uniqueness", "share 0–1", "S_1/N, slide negative binomial"),
    "snb_count": _M("SNB: population uniques", "count", "S_1, slide negative binomial"),
    "dankar": _M("Dankar's rule: population uniqueness", "share 0–1",
                 "S_1/N of the model Dankar's rule picks"),
    "dankar_count": _M("Dankar's rule: population uniques", "count",
                       "S_1 of the model Dankar's rule picks"),
    "population_uniqueness_percent": _M("Dankar's rule: population uniqueness", "%",
                                        "100 · S_1/N of the model Dankar's rule picks"),
    "r1": _M("log-linear r1", "share 0–1", "τ1/c, τ1 = Σ e^{−μ} over the sample uniques"),
    "r2": _M("log-linear r2", "share 0–1",
             "τ2/c, τ2 = Σ (1 − e^{−μ})/μ over the sample uniques"),
    "r1_per_unique": _M("log-linear r1 per sample unique", "share 0–1", "τ1/s_1"),
    "r2_per_unique": _M("log-linear r2 per sample unique", "share 0–1", "τ2/s_1"),
    "tau1": _M("log-linear τ1", "count", "Σ e^{−μ} over the sample uniques"),
    "tau2": _M("log-linear τ2", "count", "Σ (1 − e^{−μ})/μ over the sample uniques"),
    "cells": _M("cells kept", "count", "c, the cells of the key table the model keeps"),
    "occupied_cells": _M("occupied cells", "count", "cells of the key table with a record"),
    "table_cells": _M("cells of the key table", "count", "∏ levels of the keys"),
    # the linkage attack (the attacker knows the true values)
    "linkage_reidentifications": _M("linkage attack re-identifications", "count", "Σ p_i"),
    "linkage_risk_percent": _M("linkage attack risk", "%", "100 · mean(p_i)"),
    "linkage_percent_certain": _M("linkage attack certain links", "%",
                                  "100 · mean(M_i = {i})"),
    "drisk_percent": _M("dRisk, interval disclosure", "%",
                        "100 · share of records within ±0.05·s_c on every distance column"),
    # how near each released record lies to some original record (any row)
    "dcr_median": _M("median distance to the closest record", "share 0–1",
                     "median over released z of min_x √[(1/p) Σ_c ((z_c − x_c)/R_c)²]"),
    "dcr_zero_percent": _M("released records copying an original one", "%",
                           "100 · mean over released z of [min_x d(z, x) = 0]"),
    "dcr_n": _M("released records measured", "count",
                "released records complete on the numeric columns"),
    "p_link": _M("linkage probability", "share 0–1", "p_i = 1/|M_i| when i ∈ M_i, else 0"),
    "candidates": _M("best candidates", "count", "|M_i|"),
    # a release without row correspondence (docs/measures.md, "Disclosure risk of a synthetic
    # release"): q_i the key combination of original record i, f_o and f_s its counts in the
    # original and the release, T and H the training and holdout parts
    "replicated_uniques": _M("replicated uniques", "count",
                             "|{i : f_o(q_i) = 1 and f_s(q_i) = 1}|"),
    "replicated_uniques_percent": _M("replicated uniques", "%", "100 · replicated uniques / n"),
    "disco_percent": _M("DiSCO", "%",
                        "100 · |{i : q_i holds one value t_s of t in the release, t_s = t_i}| / n"),
    "disco_original_percent": _M("DiO, DiSCO of the original", "%",
                                 "DiSCO with the original as the release"),
    "dcr_train_share": _M("release records nearer a training record", "share 0–1",
                          "mean over released z of [d_T(z) < d_H(z)], a tie counting ½"),
    "dcr_expected_share": _M("share nearer a training record by chance", "share 0–1",
                             "|T| / (|T| + |H|)"),
    "exact_copies": _M("exact copies of training records", "count",
                       "released records equal to a training record on every column"),
    # household risk and the household linkage attack (docs/measures.md, "Household risk")
    "households": _M("households", "count", "number of distinct household ids"),
    "household_size_mean": _M("mean household size", "count", "n / households"),
    "household_expected_reidentifications": _M("household re-identifications", "count",
                                               "Σ_i R_h(i), R_h = 1 − Π_{j∈h}(1 − r_j)"),
    "household_risk_pct": _M("household risk", "%", "100 · Σ_i R_h(i) / n"),
    "household_risk": _M("household risk R_h", "share 0–1",
                         "1 − Π_{j∈h}(1 − r_j), given to every member of h"),
    "household_composition_uniques": _M("households unique by composition", "count",
                                        "households whose multiset of members' key tuples no "
                                        "other household has"),
    "household_composition_unique_percent": _M("households unique by composition", "%",
                                               "100 · composition uniques / households"),
    "household_linkage_reidentified": _M("households re-identified", "count",
                                         "|{h : p_h = 1}|, p_h = 1/|M_h| when the released h "
                                         "is among the best matches M_h of h's composition "
                                         "(the recipe's public recodings applied), else 0"),
    "household_linkage_reidentified_percent": _M("households re-identified", "%",
                                                 "100 · |{h : p_h = 1}| / households"),
    "household_linkage_people": _M("people in households re-identified", "count",
                                   "Σ |h| over the h with p_h = 1"),
    "household_linkage_people_percent": _M("people in households re-identified", "%",
                                           "100 · Σ |h| over the h with p_h = 1 / n"),
    "household_linkage_expected": _M("expected households re-identified", "count", "Σ_h p_h"),
    "household_linkage_expected_people": _M("expected people re-identified", "count",
                                            "Σ_h |h| · p_h"),
    # the attribute-inference attack (the linkage attack's attacker guesses a sensitive column)
    "inference_accuracy": _M("attribute-inference accuracy", "share 0–1",
                             "mean hit_i over the records with a true value; overall: mean over "
                             "the sensitive columns"),
    "inference_baseline": _M("attribute-inference baseline", "share 0–1",
                             "mean hit_i guessing from the released marginal alone (its mode, "
                             "or its mean)"),
    "inference_gain": _M("attribute-inference gain", "index",
                         "100 · (accuracy − baseline), in percentage points"),
    "inference_cap": _M("mean correct attribution probability (CAP)", "share 0–1",
                        "mean n_i(x_i) / Σ_v n_i(v), 0 where no candidate has a value"),
    "inference_width": _M("attribute-inference interval half-width", "index",
                          "tolerance · IQR of the original column, in the column's unit"),
    "inference_n": _M("records attacked", "count", "records with a true value of the column"),
    # deniability of a perturbed column (its transition matrix P and original distribution π)
    "epsilon": _M("local-DP ε", "index",
                  "ln max_k max_{i,j} P(k|i)/P(k|j); ∞: no deniability"),
    "guess_accuracy": _M("best-guess accuracy", "share 0–1", "Σ_k max_i P(k|i)·π_i"),
    "baseline": _M("best-guess baseline", "share 0–1", "max_i π_i, the commonest true value"),
    "epsilon_max": _M("largest local-DP ε", "index",
                      "max over the perturbed columns of ε; ∞: one has no deniability"),
    # ... with a household id: what all of a household's released records give away
    "household_guess_accuracy": _M("household best-guess accuracy", "share 0–1",
                                   "max of the majority vote's and the Bayes guess's accuracy "
                                   "from all of a household's released values"),
    "household_majority_accuracy": _M("household majority-vote accuracy", "share 0–1",
                                      "mean over the records of [x_i = the most frequent "
                                      "released value of its household]"),
    "household_bayes_accuracy": _M("household Bayes-guess accuracy", "share 0–1",
                                   "mean over the records of [x_i = argmax_j π_j Π_{l∈h} "
                                   "P(y_l|j)]"),
    "household_epsilon": _M("household local-DP ε", "index",
                            "m · ε, m the most records of one household; ε when drawn once "
                            "per household"),
    "household_max_records": _M("most records of one household", "count",
                                "max_h |{i ∈ h : x_i present}|"),
    "household_constant_share": _M("households constant", "share 0–1",
                                   "households of two or more records holding one value / "
                                   "households of two or more records"),
    # information loss
    "IL1_release": _M("IL1 release", "share 0–1", "(1/|C|) Σ_{c∈C} IL1_c"),
    "IL1_overall": _M("IL1 overall", "share 0–1",
                      "mean of IL1 numeric and IL1 categorical (those that exist)"),
    "IL1_numeric": _M("IL1 numeric", "share 0–1", "mean IL1_c over the changed numeric columns"),
    "IL1_categorical": _M("IL1 categorical", "share 0–1",
                          "mean IL1_c over the changed categorical columns"),
    "eigenvalue_similarity_percent": _M("eigenvalue similarity", "%",
                                        "100 · (1 − Σ|λ′ − λ| / p)"),
    "suppressed_values": _M("suppressed values", "count",
                            "numeric values protection turned into missing ones"),
    "tvd": _M("TVD", "share 0–1", "½ Σ |p − p′|"),
    "ks": _M("KS statistic", "share 0–1", "sup_x |F(x) − F′(x)|"),
    "mean_shift": _M("mean shift", "index", "mean(x′) − mean(x), in the column's unit"),
    "sd_shift": _M("standard-deviation shift", "index", "sd(x′) − sd(x), in the column's unit"),
    # do the analyses hold?
    "ci_overlap": _M("CI overlap", "index", "J = ½ [(U − L)/(U_o − L_o) + (U − L)/(U_p − L_p)]"),
    "mean_ci_overlap": _M("mean CI overlap", "index", "mean over the analyses of mean J"),
    "ci_overlap_loss": _M("1 − mean CI overlap", "index", "1 − mean CI overlap"),
    "std_diff": _M("standardised difference", "index", "(θ_p − θ_o)/se_o"),
    "dropped_original": _M("original rows left out", "count",
                           "rows of x with a missing value the analysis reads"),
    "dropped_protected": _M("protected rows left out", "count",
                            "rows of x′ with a missing value the analysis reads"),
    "hellinger": _M("Hellinger distance", "share 0–1", "√(1 − Σ √(p·p′))"),
    "false_zeros": _M("false zeros", "count", "cells with p > 0 and p′ = 0"),
    "false_nonzeros": _M("false non-zeros", "count", "cells with p = 0 and p′ > 0"),
    # tables after record swapping (sdcMicro's infoLoss; n, n′ the cell counts of x and x′)
    "absD": _M("absolute count difference", "count", "Σ_c |n′_c − n_c|"),
    "relabsD": _M("relative count difference", "index", "Σ_{c : n_c > 0} |n′_c − n_c| / n_c"),
    "abssqrtD": _M("root count difference", "index", "Σ_c |√n′_c − √n_c|"),
    "worst_tvd": _M("worst-table TVD", "share 0–1", "max TVD over the compared tables"),
    # a published cross table against the true one (docs/tables.md)
    "blank": _M("cells hidden", "count", "cells (not margins) published blank"),
    "perturbed": _M("cells perturbed", "share 0–1",
                    "published cells whose figure differs from the true one / published cells"),
    "narrowest_interval": _M("narrowest hidden interval", "count",
                             "min over the hidden cells of hi − lo, the audited interval"),
    "dp_accuracy": _M("±95 % accuracy of a cell", "count",
                      "a with P(|n′ − n| ≤ a) ≥ 0.95 for the discrete Laplace noise at ε"),
    "holds": _M("analysis holds", "share 0–1",
                "1 when the analysis's verdict is \"holds\", else 0 (a sweep: mean over seeds)"),
    "analyses_holding": _M("share of analyses that hold", "share 0–1",
                           "analyses that hold / analyses with a verdict"),
    "pmse": _M("pMSE", "index", "Σ (p̂ − c)² / N, from 0 to 0.25"),
    "s_pmse": _M("S_pMSE", "index", "pMSE / [(k − 1)(1 − c)² c / N]"),
    # a sweep's rows
    "n_seeds": _M("seeds", "count", "runs averaged (randomised methods)"),
    "n_steps": _M("steps", "count", "steps of the row's recipe"),
}

#: The headline figures of each part of an assessment: the part (None: a figure shown beside
#: them, or a sweep's own), which way is better (the pages colour a change by it), whether a
#: sweep may target it and whether the engines compute it (:class:`Measure`).
HEADLINES: dict[str, tuple[str | None, str, bool, bool]] = {
    "expected_reidentifications": ("keys", "lower", True, True),
    "avg_linkage_risk_percent": ("keys", "lower", True, True),
    "global_risk_percent": ("keys", "lower", False, True),
    "percent_unique": ("keys", "lower", True, True),
    "percent_k_le_threshold": ("keys", "lower", True, True),
    "percent_below_k": ("keys", "lower", True, True),
    "min_k": ("keys", "higher", False, True),
    "median_k": (None, "higher", False, False),
    "min_k_wildcard": (None, "higher", False, False),
    "min_k_category": (None, "higher", False, False),
    "drisk_percent": (None, "lower", False, False),
    "population_uniqueness_percent": ("population", "lower", True, False),
    "linkage_reidentifications": ("linkage", "lower", True, True),
    "linkage_risk_percent": ("linkage", "lower", True, True),
    "linkage_percent_certain": ("linkage", "lower", False, True),
    "IL1_release": ("loss", "lower", False, True),
    "IL1_overall": ("loss", "lower", False, True),
    "IL1_numeric": ("loss", "lower", False, True),
    "IL1_categorical": ("loss", "lower", False, True),
    "eigenvalue_similarity_percent": ("similarity", "higher", False, True),
    "epsilon": ("deniability", "lower", True, False),
    "guess_accuracy": ("deniability", "lower", True, False),
    "baseline": ("deniability", "lower", False, False),
    "epsilon_max": (None, "lower", True, False),
    "household_guess_accuracy": ("household_deniability", "lower", False, False),
    "household_epsilon": ("household_deniability", "lower", False, False),
    "inference_accuracy": ("inference", "lower", True, False),
    "inference_baseline": ("inference", "lower", False, False),
    "inference_gain": ("inference", "lower", True, False),
    "t_closeness": ("closeness", "lower", True, False),
    "beta_likeness": ("closeness", "lower", True, False),
    "enhanced_beta_likeness": ("closeness", "lower", True, False),
    "delta_disclosure": ("closeness", "lower", True, False),
    "dcr_median": ("closest", "higher", False, False),
    "dcr_zero_percent": ("closest", "lower", False, False),
    "household_risk_pct": ("households", "lower", True, True),
    "household_expected_reidentifications": ("households", "lower", True, True),
    "household_linkage_reidentified": ("household_linkage", "lower", True, False),
    "household_linkage_reidentified_percent": ("household_linkage", "lower", False, False),
    "household_linkage_people": ("household_linkage", "lower", False, False),
    "household_linkage_expected": ("household_linkage", "lower", False, False),
    "mean_ci_overlap": ("analyses", "higher", False, False),
    "ci_overlap_loss": ("analyses", "lower", False, False),
    "worst_tvd": ("analyses", "lower", False, False),
    "pmse": ("analyses", "lower", False, False),
    "s_pmse": ("analyses", "lower", False, False),
    "analyses_holding": ("analyses", "higher", False, False),
    "replicated_uniques": ("synthetic", "lower", False, False),
    "replicated_uniques_percent": ("synthetic", "lower", False, False),
    "disco_percent": ("disco", "lower", False, False),
    "absD": ("cell_loss", "lower", False, False),
    "relabsD": ("cell_loss", "lower", False, False),
    "abssqrtD": ("cell_loss", "lower", False, False),
}
for _key, (_part, _better, _target, _engines) in HEADLINES.items():
    MEASURES[_key] = replace(MEASURES[_key], part=_part, better=_better, target=_target,
                             engines=_engines)


def headlines(part: str) -> tuple[str, ...]:
    """The keys of the headline figures of an assessment ``part``, in the order of
    :data:`MEASURES`."""
    return tuple(k for k, m in MEASURES.items() if m.part == part)


#: Figures given both as a count and as a percentage of the records: each one's other form.
#: Wherever a target is a percentage the page shows the count beside it, and the other way round.
COUNT_AND_PERCENT = {"linkage_risk_percent": "linkage_reidentifications",
                     "avg_linkage_risk_percent": "expected_reidentifications"}
COUNT_AND_PERCENT |= {v: k for k, v in COUNT_AND_PERCENT.items()}


def name(key: str, k: int | str = "k") -> str:
    """The display name of the measure ``key``, with the threshold ``k`` in it."""
    return MEASURES[key].name.replace("{k}", str(k))


def label(key: str, k: int | str = "k") -> str:
    """The name with its unit where no value beside it carries the unit: a table's heading, an
    axis, a choice of measure ("unique records (%)")."""
    m = MEASURES[key]
    return f"{name(key, k)} (%)" if m.unit == "%" else name(key, k)


def tile(key: str, k: int | str = "k") -> str:
    """The name as a tile's label, capitalised unless its second letter is a capital
    ("Unique records", "dRisk …"; the value shows its unit)."""
    text = name(key, k)
    return text if text[1:2].isupper() else text[0].upper() + text[1:]


def count_and_percent(key: str, row: Mapping[str, Any]) -> str:
    """A count with its percentage, or a percentage with its count, as one value
    ("170 (7.95 %)" for either of the linkage attack's figures): ``row`` (a dict or a table's
    row) holds both figures of :data:`COUNT_AND_PERCENT`."""
    pair = COUNT_AND_PERCENT[key]
    count, percent = (pair, key) if MEASURES[key].unit == "%" else (key, pair)
    return f"{count_text(row[count])} ({row[percent]:.2f} %)"


def count_text(v: float) -> str:
    """A count as a whole number when it is one, else with two decimals: 182, 18.34."""
    return f"{v:,.0f}" if float(v).is_integer() else f"{v:,.2f}"
