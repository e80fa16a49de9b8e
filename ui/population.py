"""The Risk page's risk in the population (issue 27): how the file was sampled, the models'
share of population uniques beside the sample's, the log-linear risks, the models against the
sampling fraction, and a worked example on the data in front of the user. The figures are the
core's (:mod:`sdc_core.risk.population_risk`); this module reads widgets and draws."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from sdc_core.errors import SdcInputError
from sdc_core.risk.population import (
    DANKAR_FRACTION,
    ModelEstimate,
    UniquenessCurve,
    log_p_single,  # Zayatz's P(f=1 | F=j)
)
from sdc_core.risk.population_risk import PopulationRisk, sampling, sensitivity
from ui import charts, compute, state
from ui.infra import workers
from ui.logic.figures import uniqueness_curves
from ui.logic.text import md, md_list
from ui.page import table_columns

#: How the file was sampled: the choices of the Risk page's settings.
MODES = {"none": "not known", "fraction": "sampling fraction", "population": "population size"}
#: The models' names as the page writes them.
NAMES = {"zayatz": "Zayatz", "pitman": "Pitman", "snb": "SNB"}
#: Where N came from, in words.
SOURCES = {"fraction": "from the sampling fraction given", "population": "given",
           "weights": "the sum of the weights"}
#: The class sizes the worked example lists (s_1, s_2, …).
FIRST_SIZES = 5


def percent(share: float) -> str:
    """A share as a percentage with three significant figures (two decimals from 1 %)."""
    v = 100.0 * share
    if v == 0:
        return "0 %"
    return f"{v:.2f} %" if v >= 1 else f"{v:.3g} %"


def people(count: float) -> str:
    """A count of people: one decimal below 100, whole above."""
    return f"{count:,.1f}" if count < 100 else f"{count:,.0f}"


def sampling_inputs(df: pd.DataFrame, weight: str | None) -> str | None:
    """The settings' "How the file was sampled": a choice and its number, kept through
    :func:`ui.state.set_sampling` when the core accepts it; otherwise the refusal is shown
    here and its reason returned (Markdown), for the page to say where the figures would be."""
    given = state.sampling()
    n = len(df)
    mode = ("fraction" if "sampling_fraction" in given
            else "population" if "population_size" in given else "none")
    labels = dict(MODES, none="from the weights" if weight else MODES["none"])
    state.bind("w_risk_sampling", mode)
    left, right = st.columns([2, 1])
    mode = left.radio(
        "How the file was sampled", list(MODES), key="w_risk_sampling", format_func=labels.get,
        horizontal=True,
        help="A record unique in a sample is usually not unique in the population it was drawn "
             "from. Give the share of the population in the file (the sampling fraction π) or "
             "the population's size N, and the section 'In the population' estimates how many "
             "people are unique on the keys." + (" With a weight and neither, N is the sum of "
                                                "the weights." if weight else ""))
    new: dict[str, float] = {}
    if mode == "fraction":
        state.bind("w_risk_fraction", float(given.get("sampling_fraction", 0.01)))
        new = {"sampling_fraction": float(right.number_input(
            "Sampling fraction π", min_value=0.0, max_value=1.0, step=0.001, format="%.4f",
            key="w_risk_fraction",
            help="The share of the population in the file, in (0, 1]: 0.01 for a 1 % sample."))}
    elif mode == "population":
        default = given.get("population_size") or _weights_total(df, weight) or 100.0 * n
        state.bind("w_risk_population", int(math.ceil(default)))
        new = {"population_size": float(right.number_input(
            "Population size N", min_value=1, step=1000, key="w_risk_population",
            help=f"The number of people the file was drawn from: at least its {n:,} records."))}
    try:
        s = sampling(df, weight, **new)
    except SdcInputError as err:
        st.error(f"Not used: {md(err)}.", icon=":material/error:")
        return md(err)
    state.set_sampling(new)
    if s is None:
        st.caption("Give the sampling fraction or the population size to estimate the risk "
                   "in the population.")
    elif s.source == "weights":
        st.caption(f"N defaults to the sum of the weights of {md(weight)}: N = "
                   f"{s.population:,.0f} people, so π = n/N = {s.fraction:.4g}.")
    elif s.source == "fraction":
        st.caption(f"The file's {n:,} records stand for N = n/π = {s.population:,.0f} people.")
    else:
        st.caption(f"π = n/N = {n:,}/{s.population:,.0f} = {s.fraction:.4g}.")
    return None


def _weights_total(df: pd.DataFrame, weight: str | None) -> float | None:
    try:
        s = sampling(df, weight)
    except SdcInputError:
        return None
    return s.population if s is not None else None


def known(weight: str | None) -> bool:
    """Whether the page has been told how the file was sampled (or has weights)."""
    return bool(state.sampling()) or weight is not None


@st.cache_resource(max_entries=16, show_spinner=False)
def curve(dataset_id: str, qi: tuple[str, ...], weight: str | None,
          given: tuple[tuple[str, float], ...], _risk: PopulationRisk) -> UniquenessCurve:
    """Every model against the sampling fraction (one SNB fit per fraction; in a worker)."""
    return workers.run(sensitivity, _risk)


def _metric_value(est: ModelEstimate) -> str:
    return percent(est.share) if est.share is not None else "not valid"


def _metric_help(name: str, est: ModelEstimate, big_n: float) -> str:
    if est.share is None or est.count is None:  # both None together (an invalid model)
        return f"{name}'s model is not valid on this table: {est.reason}."
    return (f"{name}: about {people(est.count)} of the N = {big_n:,.0f} people are unique on "
            "the keys (population uniques).")


def section(df: pd.DataFrame, dataset_id: str, qi: list[str], weight: str | None, key: str,
            stem: str, context: str, narrow: bool, missing_keys: int, na: str) -> None:
    """The figures in the population of one table (the original or the protected one)."""
    try:
        risk = compute.population(dataset_id, tuple(qi), weight, state.sampling_key(), df)
    except SdcInputError as err:
        st.error(md(err), icon=":material/error:")
        return
    if risk is None:
        return
    u, s = risk.uniqueness, risk.sampling
    model = NAMES.get(u.dankar_model or "", "")
    per_row = 2 if narrow else 3  # a share such as "0.000211 %" needs the width
    places = [c for _ in range(-(-5 // per_row)) for c in st.columns(per_row)][:5]
    places[0].metric("Sample uniqueness", percent(u.sample_uniqueness),
                     help=f"s_1/n: {u.sample_uniques:,} of the file's {u.sample_size:,} records "
                          "are alone in their class (a blank key a category of its own).")
    places[1].metric(f"Dankar's rule: {model}" if model else "Dankar's rule",
                     _metric_value(u.dankar),
                     help=(_metric_help("Dankar's rule", u.dankar, s.population)
                           + (f" The rule picks {model}'s model here (see How)." if model
                              else " No record is unique in the file, so none is in the "
                                   "population.")))
    for place, attr in zip(places[2:], NAMES):
        est: ModelEstimate = getattr(u, attr)
        place.metric(NAMES[attr], _metric_value(est), help=_metric_help(NAMES[attr], est,
                                                                          s.population))
    counts = ", ".join(
        f"{NAMES[a]} {people(getattr(u, a).count)}" if getattr(u, a).count is not None
        else f"{NAMES[a]} not valid ({getattr(u, a).reason})" for a in NAMES)
    st.caption(
        f"Share of the N = {s.population:,.0f} people ({SOURCES[s.source]}; π = "
        f"{s.fraction:.4g}) estimated unique on {md_list(qi)}; the sample uniqueness is the "
        f"share of the file's records. Population uniques: {counts}. The models read a blank "
        "key as a category of its own (a record with a missing key is in the class of the "
        "records with the same values and the same blanks)"
        + (", not as the wildcard of the measures above." if missing_keys and na == "wildcard"
           else "."))
    loglinear(risk)
    fit = curve(dataset_id, tuple(qi), weight, state.sampling_key(), risk)
    charts.show(uniqueness_curves(fit, s.fraction), f"{stem}_population_uniques",
                key=f"risk_population{key}",
                context=f"{context}; quasi-identifiers {', '.join(map(str, qi))}; "
                        f"sampling fraction {s.fraction:.4g}, N = {s.population:,.0f}")
    st.caption(f"The chosen fraction π = {s.fraction:.4g} is the dashed line (and its row in "
               "the numbers behind the chart). Dankar's rule, the wide band, follows the model "
               f"it picks: Pitman when valid up to π = {DANKAR_FRACTION:g}, above it the "
               "smaller of Zayatz and SNB.")
    how = st.expander("How: population uniqueness on this table", icon=":material/school:",
                      key=f"risk_how_population{key}", on_change="rerun")
    if how.open:  # worked out once opened
        with how:
            st.markdown(worked(risk, qi))


def loglinear(risk: PopulationRisk) -> None:
    """The log-linear risks of the sample uniques: a row per method, both normalisations."""
    rows, failed = [], []
    for method, r in risk.loglinear.items():
        if isinstance(r, str):
            failed.append(f"{method}: {md(r)}")
            continue
        uniques = r.sample_uniques or 1  # no sample unique: both totals are 0
        rows.append({"method": method, "r1": r.r1, "r2": r.r2,
                     "r1_per_unique": r.tau1 / uniques, "r2_per_unique": r.tau2 / uniques,
                     "tau1": r.tau1, "tau2": r.tau2, "cells": r.cells})
    st.markdown("**Log-linear risk of the sample uniques**")
    if rows:
        table = pd.DataFrame(rows)
        st.dataframe(table, hide_index=True, width="stretch", column_config=table_columns(
            table, dict.fromkeys(("r1", "r2", "r1_per_unique", "r2_per_unique", "tau1", "tau2"),
                                 "%.4g"),
            {"method": "model", "r1": "r1 (sdcMicro)", "r2": "r2 (sdcMicro)",
             "r1_per_unique": "r1 per sample unique", "r2_per_unique": "r2 per sample unique",
             "tau1": "τ1", "tau2": "τ2", "cells": "cells kept c"}))
    for line in failed:
        st.info(f"Not computed: {line}", icon=":material/info:")
    weighted = risk.sampling.source == "weights"
    st.caption(
        "For a sample unique, r1 reads P(F = 1 | f = 1), that it is unique in the population, "
        "and r2 E[1/F | f = 1], the chance that a match with it is right; τ1 and τ2 add them "
        "over the sample uniques. sdcMicro's normalisation divides the totals by the c cells "
        "of the key table kept (every occupied one), so r1 and r2 are averages over cells; "
        "per sample unique divides them by the s_1 sample uniques, so they are averages over "
        "the records at risk. The default model fits the sample counts; CE and PML the "
        "population's, "
        + ("from the weights." if weighted else
           "from the constant fraction π (so they agree)."))


def worked(risk: PopulationRisk, qi: list[str]) -> str:
    """The worked example: the histogram, π and N, each model with this table's numbers and
    Dankar's choice, as Markdown (user text escaped)."""
    h, s, u = risk.histogram, risk.sampling, risk.uniqueness
    n, big_n, f = h.n, s.population, s.fraction
    sizes = [(int(j), int(c)) for j, c in zip(h.sizes, h.counts)][:FIRST_SIZES]
    listed = ", ".join(f"s_{j} = {c:,}" for j, c in sizes)
    more = len(h.sizes) > FIRST_SIZES
    parts = [
        f"**The classes.** The records with the same values of {md_list(qi)} (a blank a value "
        f"of its own) form a class. This table's n = {n:,} records fall into u = {h.u:,} "
        f"classes: {listed}{', …' if more else ''} (s_j classes of j records"
        + (f"; the largest has {int(h.sizes[-1]):,}" if more else "")
        + f"). s_1 = {h.uniques:,} records are unique in the file: the sample uniqueness "
          f"s_1/n = {percent(u.sample_uniqueness)}.",
        f"**Sampling.** π = {f:.4g} and N = {big_n:,.0f} people ("
        + {"fraction": "N = n/π, from the fraction given",
           "population": "π = n/N, from the population size given",
           "weights": "N is the sum of the weights, π = n/N"}[s.source] + ").",
    ]
    parts.append(_zayatz(risk))
    pit = u.pitman
    if pit.share is not None and pit.count is not None:
        t, a = pit.parameters["theta"], pit.parameters["alpha"]
        parts.append(
            f"**Pitman.** The maximum-likelihood fit of Pitman's sampling formula to the "
            f"histogram gives θ = {t:.4g}, α = {a:.4g}; Hoshino's S_1 = Γ(θ+1)/Γ(θ+α) · N^α = "
            f"Γ({t + 1:.4g})/Γ({t + a:.4g}) · {big_n:,.0f}^{a:.4g} = {people(pit.count)}: "
            f"{percent(pit.share)} of N.")
    else:
        parts.append(f"**Pitman.** Not valid on this table: {pit.reason}.")
    snb = u.snb
    if snb.share is not None and snb.count is not None:
        k, p, big_k = snb.parameters["k"], snb.parameters["p"], snb.parameters["classes"]
        parts.append(
            f"**SNB.** The slide negative binomial's moment equations at π = {f:.4g} (on u, "
            f"s_1 and n) give k = {k:.4g}, p = {p:.4g} and K = {big_k:,.1f} population "
            f"classes; S_1 = K · p^k = {people(snb.count)}: {percent(snb.share)} of N.")
    else:
        parts.append(f"**SNB.** Not valid on this table at π = {f:.4g}: {snb.reason}.")
    parts.append(_dankar(risk))
    return "\n\n".join(parts)


def _zayatz(risk: PopulationRisk) -> str:
    h, s, u = risk.histogram, risk.sampling, risk.uniqueness
    n, big_n = h.n, s.population
    if not h.uniques:
        return "**Zayatz.** No record is unique in the file: no population unique is estimated."
    zayatz = u.zayatz
    assert zayatz.share is not None and zayatz.count is not None, "Zayatz is always estimated"
    terms = np.exp(log_p_single(h.sizes, n, big_n))  # P(f=1 | F=j) for each size j present
    shown = list(zip(h.sizes[:3], h.counts[:3], terms[:3]))
    denominator = float(np.dot(h.counts, terms))
    posterior = h.uniques * float(terms[0]) / denominator
    sum_text = " + ".join(f"{int(c):,}·{t:.4g}" for _, c, t in shown)
    if len(h.sizes) > 3:
        sum_text += " + …"
    return (
        "**Zayatz.** With simple random sampling, a class of j people leaves exactly one record "
        "in the file with probability P(f=1 | F=j) = j · (n/N) · Π_{i<j} (N−n−i+1)/(N−i): "
        + ", ".join(f"{t:.4g} for j = {int(j)}" for j, _, t in shown)
        + ". Bayes' rule, with the population's class sizes in the sample's proportions: "
        f"P(F=1 | f=1) = s_1·P(f=1|F=1) / Σ_j s_j·P(f=1|F=j) = {h.uniques:,}·{terms[0]:.4g} / "
        f"({sum_text}) = {posterior:.4g}. So S_1 = s_1 · P(F=1 | f=1) · N/n = {h.uniques:,} · "
        f"{posterior:.4g} · {big_n / n:,.4g} = {people(zayatz.count)}: "
        f"{percent(zayatz.share)} of N.")


def _dankar(risk: PopulationRisk) -> str:
    u, f = risk.uniqueness, risk.sampling.fraction
    if u.dankar_model is None:
        return ("**Dankar's rule.** No record is unique in the file, so the rule gives 0 "
                "population uniques.")
    picked = NAMES[u.dankar_model]
    zayatz, dankar = u.zayatz, u.dankar  # Zayatz is always estimated, so the rule's pick is
    assert zayatz.share is not None and dankar.share is not None and dankar.count is not None
    if f <= DANKAR_FRACTION:
        why = (f"π = {f:.4g} ≤ {DANKAR_FRACTION:g}, so the rule takes Pitman when it is valid"
               + (": it is." if u.dankar_model == "pitman"
                  else f", and Zayatz otherwise: Pitman is not valid ({u.pitman.reason})."))
    elif u.snb.share is None:
        why = (f"π = {f:.4g} > {DANKAR_FRACTION:g}, so the rule takes the smaller of Zayatz and "
               f"SNB; SNB is not valid ({u.snb.reason}), so Zayatz.")
    else:
        why = (f"π = {f:.4g} > {DANKAR_FRACTION:g}, so the rule takes the smaller of Zayatz "
               f"({percent(zayatz.share)}) and SNB ({percent(u.snb.share)}): {picked}.")
    return (f"**Dankar's rule** picks {picked}: {why} Its estimate: "
            f"{percent(dankar.share)} of N ({people(dankar.count)} people).")
