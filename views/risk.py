"""Risk page: the disclosure risk of releasing the table as it is, or as the Protect page's
settings release it, or both side by side."""

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from sdc_core.assess import RiskOptions
from sdc_core.errors import SdcInputError
from sdc_core.names import label, name, tile
from sdc_core.risk import AttributeScan, LDiversity, RiskProfile
from sdc_core.risk.inference import InferenceResult
from sdc_core.risk.suda2 import shared_counts
from ui import charts, compute, population, state, suda_cache
from ui.infra import workers
from ui.logic.figures import class_size_histogram
from ui.logic.groups import column_groups
from ui.logic.households import RISK_TILES, HouseholdFigures, household_note, household_tiles
from ui.logic.metrics import RISK_PAGE, figures, risk_rows
from ui.logic.protect import describe
from ui.logic.risk_tables import ldiversity_tile
from ui.logic.session import RISK_VIEWS
from ui.logic.suda_chart import contribution_bars
from ui.logic.text import md, md_list
from ui.page import PageContext, context, show_tiles, table_columns
from ui.release import ProtectedTable, attacker_candidates, protect_page_table
from ui.sidebar import render_sidebar

VIEWS = dict(zip(RISK_VIEWS, ("Original data", "Protected data (Protect page's settings)",
                              "Both, side by side"), strict=True))


@dataclass(frozen=True)
class Release:
    """A table the page measures: the data set as loaded, or as the Protect page's settings
    release it, with its risk profile and risk tables (from the caches of ``dataset_id``)."""

    title: str  # its heading beside the other
    df: pd.DataFrame
    dataset_id: str
    key: str  # the suffix of its widgets' keys
    stem: str  # the start of its figures' file names
    context: str  # what a figure's caption says of it
    p: RiskProfile
    top: pd.DataFrame
    rare: pd.DataFrame
    ldiv: dict[str, LDiversity]
    scan: AttributeScan
    table: ProtectedTable | None = None  # the Protect page's release (None: the original)


@dataclass(frozen=True)
class Measuring:
    """What the page's sections read: its context, with the risk options as the settings
    above set them, and the original data's :class:`Release` (the release's figures change
    from it)."""

    ctx: PageContext
    original: Release


def sample_note(ctx: PageContext) -> None:
    """Say when the data set is a sample of its file."""
    source = ctx.ds.source
    if source is not None and source.is_sample:
        st.info(f"Measured on the sample: {source.sampled:,} of the {source.total:,} records "
                "of the file. A sample's classes are smaller than the whole file's, so its "
                "shares of unique and small-class records are higher; the Data page computes "
                "the risk of the whole file.", icon=":material/filter_alt:")


def measured(ctx: PageContext, title: str, table: pd.DataFrame, dataset_id: str, key: str,
             stem: str, context: str) -> Release:
    """``table``'s risk profile and risk tables (cached under ``dataset_id``)."""
    roles, opts = ctx.roles, ctx.opts
    p = compute.profile(dataset_id, tuple(roles.qi), roles.weight, opts.k, opts.na, opts.alpha,
                        table)
    released = tuple(c for c in table.columns if c not in roles.ignore)
    top, rare, ldiv, scan = compute.risk_tables(dataset_id, tuple(roles.qi), roles.weight, opts.k,
                                                opts.na, opts.alpha, tuple(roles.sensitive),
                                                released, table)
    return Release(title, table, dataset_id, key, stem, context, p, top, rare, ldiv, scan)


def places(n: int, narrow: bool) -> list[DeltaGenerator]:
    """``n`` places side by side; beside the other table (``narrow``) two a row."""
    per_row = min(n, 2) if narrow else n
    return [c for _ in range(-(-n // per_row)) for c in st.columns(per_row)][:n]


def sections(shown: list[Release], render: Callable[[Release, bool], None]) -> None:
    """One section for every table shown: as it is for one, in two headed columns for two."""
    if len(shown) == 1:
        render(shown[0], False)
        return
    for column, r in zip(st.columns(len(shown), gap="large"), shown):
        with column:
            st.markdown(f"**{r.title}**")
            render(r, True)


def measures(page: Measuring, r: Release, narrow: bool) -> None:
    """The risk measures of ``r``; of the protected table with the change from the original."""
    roles, opts, original = page.ctx.roles, page.ctx.opts, page.original
    p = r.p
    before = original.p if r is not original else None

    rows = risk_rows(figures(p), figures(before) if before else None, opts.k, RISK_PAGE)
    n = len(r.df)
    uniques = int((p.fk == 1).sum())
    small = int((p.fk <= opts.k).sum())
    example = ", ".join(f"{c} = {r.top.iloc[0][c]}" for c in roles.qi) if len(r.top) else ""
    typical = int(p.median_k)
    keys_risk = name("avg_linkage_risk_percent")
    show_tiles([row.tile for row in rows], [0, 4, 5], "r-risk")
    # how each tile's figure is computed, a paragraph a tile in the tiles' order
    lead = [f"**{row.name}**: " for row in rows]
    with st.expander("How each is computed", icon=":material/school:"):
        st.markdown(
            lead[0] + f"Σᵢ 1/f_k(i) = {p.expected_reidentifications:,.2f}. An attacker who "
            f"knows {md_list(roles.qi)} of a person finds the f_k records that match and picks "
            f"one: right with probability 1/f_k. A record in a class of {typical} adds "
            f"1/{typical}; a unique record adds 1."
            + (f" Without missing keys the sum is the number of classes, {p.n_classes:,}."
               if not p.n_records_with_missing_keys else ""))
        if roles.weight:
            st.markdown(
                lead[1] + f"100 · mean(rᵢ). With the weight {md(roles.weight)}, F_k = Σ "
                "weights over the class estimates the class size in the *population*; with "
                "p = f_k/F_k, sdcMicro's individual risk (Benedetti–Franconi) is "
                "r = p/(1−p)·ln(1/p) for f_k = 1, p/(1−p) − (p/(1−p))²·ln(1/p) for f_k = 2 and "
                "p/(f_k−1+p) above. A record unique in the sample is rarely unique in the "
                f"population, so the global risk ({p.global_risk_percent:.3f} %) is below the "
                f"{keys_risk} 100·mean(1/f_k) ({p.avg_linkage_risk_percent:.3f} %), which takes "
                "the sample as the population.")
        else:
            st.markdown(
                lead[1] + f"100 · mean(rᵢ) = {p.global_risk_percent:.4f} %. No weight is tagged, "
                "so the table is taken as the whole population: rᵢ = 1/f_k and the global risk "
                f"equals the {keys_risk}. Tag a sampling weight on the Data page to estimate "
                "population frequencies (sdcMicro's individual risk).")
        st.markdown(
            lead[2] + f"100 · mean(f_k = 1): {uniques:,} of {n:,} records are alone in their "
            "class" + (f", e.g. the record with {md(example)}. Anyone who knows these values "
                       "about that person finds their record." if uniques and example else "."))
        st.markdown(
            lead[3] + f"100 · mean(f_k ≤ {opts.k}): {small:,} records are in classes of at "
            f"most {opts.k}. k-anonymity with k = {opts.k} asks that none be in a class of "
            f"fewer than {opts.k} (\"{tile('percent_below_k', opts.k)}\"): a class of exactly "
            f"{opts.k} is allowed. Change k in the settings above.")
        st.markdown(
            lead[4] + f"the smallest class has {p.min_k:g} record(s); half of the records are "
            f"in classes of at most {p.median_k:g}. The table has {n:,} records in "
            f"{p.n_classes:,} classes.")
    if p.n_records_with_missing_keys:
        st.caption(f"{p.n_records_with_missing_keys:,} records have a missing key value; "
                   + (f"it matches any value (sdcMicro's rule), with α = {opts.alpha:g}."
                      if opts.na == "wildcard" else "it is treated as a category of its own."))


def household_figures(ctx: PageContext, r: Release) -> HouseholdFigures | str | None:
    """The household figures of ``r`` (docs/measures.md, "Household risk"): the original's
    from their cache, the release's from the Protect page's entry; the reason (text) when they
    cannot be computed, None when no household is set."""
    ds, roles, opts, df = ctx.ds, ctx.roles, ctx.opts, ctx.df
    if not roles.household:
        return None
    if r.table is not None:
        return r.table.workbench.households
    try:
        return compute.households(ds.dataset_id, tuple(roles.qi), roles.household,
                                  roles.weight, opts.na, opts.alpha,
                                  tuple(state.known_columns(df)), df)
    except SdcInputError as err:
        return str(err)


def households(page: Measuring, r: Release, narrow: bool) -> None:
    """Household risk of ``r`` beside its individual risk: household risk and
    re-identifications, households and their mean size, households unique by composition; of
    the release with the change from the original and the household linkage attack."""
    original = page.original
    got = household_figures(page.ctx, r)
    if isinstance(got, str) or got is None:
        st.warning(f"No household risk for {md(page.ctx.roles.household)}: "
                   + (md(got) if got else "not computed") + ". Choose another household id "
                   "on the Data page.", icon=":material/warning:")
        return
    before = household_figures(page.ctx, original) if r is not original else None
    keys = RISK_TILES + (("household_linkage_reidentified",) if r is not original else ())
    shown = household_tiles(got, before if isinstance(before, HouseholdFigures) else None, keys)
    show_tiles([t.tile for t in shown], [0, 1], "r-households", notes=[household_note(got)])


def households_section(page: Measuring, shown: list[Release]) -> None:
    """The "Households" part, when the session has a household id."""
    if page.ctx.roles.household:
        st.subheader("Households", anchor=False)
        sections(shown, partial(households, page))


def classes(page: Measuring, r: Release, narrow: bool) -> None:
    """The class sizes and, under them (the table is wide), the riskiest classes."""
    roles, opts = page.ctx.roles, page.ctx.opts
    charts.show(class_size_histogram(r.p.fk, opts.k), f"{r.stem}_class_sizes",
                key=f"risk_hist{r.key}", context=f"{r.context}; quasi-identifiers "
                                                 f"{', '.join(map(str, roles.qi))}; "
                                                 f"classes ≤ {opts.k} hatched")
    st.markdown("**Riskiest classes**")
    st.dataframe(r.top, hide_index=True, width="stretch", column_config=table_columns(
        r.top, {"individual_risk": "%.4f"}, {"records": "records with these values"}))
    st.caption("The classes with the highest individual risk; k is the class size f_k"
               + ("; the keys are the released values." if r is not page.original else "."))


def keys(ctx: PageContext, r: Release, narrow: bool) -> None:
    """The measures on every subset of the keys (a wide table) and under them the rare key
    values."""
    roles, opts = ctx.roles, ctx.opts
    st.markdown("**Which key drives the risk**")
    try:
        snap = compute.snapshots(r.dataset_id, tuple(roles.qi), roles.weight, opts.k,
                                 opts.na, opts.alpha, r.df)
        shown = snap.drop(columns="n_keys")
        st.dataframe(shown, hide_index=True, width="stretch", column_config=table_columns(
            shown, dict.fromkeys(("percent_unique", "percent_k_le_threshold",
                                  "expected_reidentifications", "global_risk_percent"), "%.2f"),
            {"keys": "quasi-identifiers"}))
        st.caption("The same measures for every subset of the quasi-identifiers.")
    except SdcInputError as err:
        st.info(md(err))
    st.markdown(f"**Rare values** (held by at most {opts.k} records)")
    if len(r.rare):
        rare = r.rare.astype({"level": str})
        st.dataframe(rare, hide_index=True, width="stretch" if narrow else "content",
                     column_config=table_columns(rare, labels={
                         "variable": "quasi-identifier", "level": "value", "count": "records"}))
    else:
        st.caption("No key value is that rare.")


def in_population(ctx: PageContext, r: Release, narrow: bool) -> None:
    """How much of the population is unique on the keys, by the models (ui.population)."""
    population.section(r.df, r.dataset_id, ctx.roles.qi, ctx.roles.weight, r.key, r.stem,
                       r.context, narrow, r.p.n_records_with_missing_keys, ctx.opts.na)


def special_uniques(ctx: PageContext, fraction: float, r: Release, narrow: bool) -> None:
    """SUDA2's special uniques of ``r``, with the DIS sampling ``fraction``: at once when
    quick, else on request."""
    roles = ctx.roles
    suda_key = (r.dataset_id, tuple(roles.qi))
    expected = suda_cache.expected_seconds(r.p.n_classes, len(roles.qi))
    if expected > suda_cache.AUTO_SECONDS and not state.suda_requested(r.key, suda_key):
        st.info(f"SUDA2 looks at up to 2^{len(roles.qi)} − 1 = {2 ** len(roles.qi) - 1:,} "
                f"subsets of the {len(roles.qi)} quasi-identifiers: up to about "
                f"{expected:,.0f} s on this table, so it runs on request.",
                icon=":material/hourglass:")
        if st.button("Compute SUDA2", key=f"risk_suda_go{r.key}", icon=":material/play_arrow:"):
            state.request_suda(r.key, suda_key)
            st.rerun()
        return
    try:
        with st.spinner("Looking for minimal sample uniques…"):
            sres = suda_cache.suda2_result(r.dataset_id, tuple(roles.qi), fraction, r.df)
            stop = suda_cache.top_records(r.dataset_id, tuple(roles.qi), fraction, 10, r.df)
    except SdcInputError as err:
        st.info(md(err), icon=":material/info:")
        return
    except workers.WorkerLost as err:  # its worker process died
        st.error(md(err), icon=":material/error:")
        return
    ssum = sres.summary()
    sm = places(3, narrow)
    sm[0].metric(tile("n_records_score_positive"), f"{ssum['n_records_score_positive']:,}",
                 help="Records with a positive SUDA score: at least one minimal sample unique. "
                      "Only records unique on all the quasi-identifiers can have one.")
    sm[1].metric(tile("max_score"), f"{ssum['max_score']:g}",
                 help=f"An MSU of s keys scores (M − s)! with M = {sres.n_variables} keys; a "
                      "record's score is the sum over its MSUs.")
    sm[2].metric(tile("max_dis_score"), f"{ssum['max_dis_score']:.6f}",
                 help="sdcMicro's DIS-SUDA score: the score turned into a probability that a "
                      "sample unique is a population unique, given the sampling fraction.")
    if not ssum["n_records_score_positive"]:
        st.success("No record is unique on the quasi-identifiers: no special uniques.",
                   icon=":material/check:")
        return
    how = st.expander("How: minimal sample uniques on this table", icon=":material/school:",
                      key=f"risk_how_msu{r.key}", on_change="rerun")
    if how.open:  # worked out once opened
        with how:
            first = stop.iloc[0]
            row = int(first["row"])
            msu = sres.msus_of(row)[0]
            counts = shared_counts(r.df, row, msu)

            def key_set(names: tuple[str, ...]) -> str:
                return "{" + ", ".join(md(c) for c in names) + "}"

            values = ", ".join(f"{md(c)} = {md(first[c])}" for c in msu)
            parts = [f"{counts[s]:,} have " + ", ".join(f"{md(c)} = {md(first[c])}" for c in s)
                     for s in counts if len(s) < len(msu)]
            weights = ", ".join(f"{w:g}" for w in sres.weights.values())
            st.markdown(
                f"A *minimal sample unique* (MSU) of a record is a set of its key values that no "
                f"other record shares, while every smaller part of it is shared. Row {row} is the "
                f"only record with {values}" + (f" — yet {', '.join(parts)}" if parts else "")
                + f": {key_set(msu)} is one of its MSUs. All its MSUs: "
                + ", ".join(key_set(s) for s in sres.msus_of(row))
                + f". With M = {sres.n_variables} keys an MSU of 1, 2, … keys scores "
                f"(M − s)! = {weights}; the SUDA score adds these over a record's MSUs "
                f"({first['suda_score']:g} here). The DIS score scales the scores into a "
                f"probability: with P = {sres.n_in_pairs:,} records whose key values exactly one "
                f"other record shares, f = {sres.dis_fraction:g} and Q = 1 + (8 − M)/20, "
                f"dis = 1 / (1 + P(1 − f)/f / (score^Q · Σ score^−Q)) = {first['dis_score']:.6f} "
                "for this row.")
    charts.show(contribution_bars(sres.attribute_contributions()),
                f"{r.stem}_suda2_contributions", key=f"risk_suda_contrib{r.key}",
                context=f"{r.context}; SUDA2 on {', '.join(map(str, roles.qi))}; "
                        f"DisFraction {fraction:g}")
    st.caption("A key's contribution is the share of the total score from MSUs that include "
               "it, so the bars add up to more than 100 %.")
    st.markdown("**Records with the highest SUDA score**")
    st.dataframe(stop, hide_index=True, width="stretch", column_config=table_columns(
        stop, {"dis_score": "%.6f"}, widths={"msus": "large"}))
    st.caption("row: position in the table (from 0); minimal sample uniques: the key sets on "
               "which the record is unique while every smaller part of them is shared.")


def sensitive(page: Measuring, r: Release, narrow: bool) -> None:
    """l-diversity of the sensitive columns and the released columns that give them away."""
    original = page.original
    cols = places(min(len(r.ldiv), 4), narrow)
    for i, (s, v) in enumerate(r.ldiv.items()):
        value, note = ldiversity_tile(v, original.ldiv[s] if r is not original else None)
        cols[i % len(cols)].metric(
            f"l-diversity of {md(s)}", value, note, delta_color="off", delta_arrow="off",
            help="l = number of distinct values of the sensitive column in a class; l = 1 "
                 "means everyone in the class shares it, so knowing the keys discloses it. "
                 "Classes whose sensitive values are all missing release none and are counted "
                 "apart.")
    for s, v in r.ldiv.items():
        if v.percent_no_sensitive_value > 0:
            st.caption(f"{v.percent_no_sensitive_value:.2f} % of records are in classes where "
                       f"no value of {md(s)} is released (all missing): they are left out of "
                       "min l rather than counted as l = 0.")
    for f in r.scan.findings:
        z, sv = md(f.column), md(f.sensitive)
        if f.level == "determines":
            st.error(f"{z} determines {sv}: each value of {z} goes with one value of {sv}, so "
                     f"releasing both discloses {sv} for every record. Drop or coarsen one of "
                     "them.", icon=":material/link:")
        else:
            st.warning(f"{z} nearly determines {sv}: its most common {sv} value per {z} value "
                       f"is right for {100 * f.share:.1f} % of records.", icon=":material/link:")
    for c in r.scan.direct_identifiers:
        st.warning(f"{md(c)} has a distinct value on almost every record: a direct identifier. "
                   "Tag it 'Not released' on the Data page.", icon=":material/badge:")
    if not r.scan.findings and not r.scan.direct_identifiers:
        st.success("No released column determines a sensitive one.", icon=":material/check:")
    if r.table is not None:
        perturbed_reading(page.ctx, r.table)


#: The posterior-aware reading of a perturbed sensitive column: the attack's figures, then the
#: exact deniability of its transition matrix (docs/measures.md)
READING = ("inference_accuracy", "inference_baseline", "inference_gain", "epsilon",
           "guess_accuracy", "baseline")


def perturbed_reading(ctx: PageContext, table: ProtectedTable) -> None:
    """When the release perturbed a sensitive column: say that l-diversity and the attribute
    scan read its released values, and show beside them what an attacker infers of the true
    ones (the attribute-inference attack against its baseline) and the column's exact
    deniability (docs/measures.md, "The attribute-inference attack", "Deniability: what
    perturbation buys")."""
    ds, roles, df = ctx.ds, ctx.roles, ctx.df
    wb = table.workbench
    try:  # the Protect page's own figures when its entry holds them, else the same core call
        moved = [d for d in (getattr(wb, "deniability", ())
                             or compute.deniability(ds.dataset_id, table.recipe, df))
                 if d.column in roles.sensitive and d.column in table.df.columns]
    except SdcInputError as err:
        st.info(md(err), icon=":material/info:")
        return
    if not moved:
        return
    cols = [d.column for d in moved]
    st.info(f"The release perturbs {md_list(cols)}: l-diversity and the attribute scan above "
            "read the released (perturbed) values as if they were true. What an attacker who "
            "knows the keys infers of the true values is below: the attribute-inference "
            "attack's accuracy against its baseline (the release with the column withheld), "
            "and the exact figures of the column's transition matrix.",
            icon=":material/shuffle:")
    groups = column_groups(ds, roles)
    known = [c for c in state.known_columns(df) if c in attacker_candidates(groups, roles)]
    rows = []
    held = getattr(wb, "inference", None)
    found = {c.column: c for c in held.columns} if isinstance(held, InferenceResult) else {}
    try:
        if isinstance(held, str):
            raise SdcInputError(held)
        if not set(cols) <= set(found):
            attack = compute.inference(ds.dataset_id, table.recipe, tuple(roles.qi),
                                       tuple(cols), tuple(known), df, wb.applied)
            found = {c.column: c for c in attack.columns}
    except SdcInputError as err:
        st.info(f"No attribute-inference attack: {md(err)}", icon=":material/info:")
    for d in moved:
        a = found.get(d.column)
        rows.append({"column": d.column, "method": d.method,
                     "inference_accuracy": a.accuracy if a else None,
                     "inference_baseline": a.baseline if a else None,
                     "inference_gain": a.gain if a else None,
                     "epsilon": d.epsilon if d.deniable else None,
                     "guess_accuracy": d.guess_accuracy, "baseline": d.baseline})
    reading = pd.DataFrame(rows)
    st.dataframe(reading, hide_index=True, width="stretch", column_config=table_columns(
        reading, {**dict.fromkeys(READING, "%.4f"), "inference_gain": "%.2f"},
        {"column": "sensitive column", "method": "perturbed by",
         **{k: label(k) for k in READING}}))
    st.caption("Attribute-inference gain: points above the baseline. ε blank: no deniability "
               "(a released value rules a true one out). "
               + " ".join(f"{md(d.column)}: {md(d.meaning)}." for d in moved))


def view_choice() -> str:
    """Which tables the page measures: the original, the protected or both."""
    state.bind("w_risk_view", state.risk_view())
    view = st.radio("Measure", list(VIEWS), key="w_risk_view", format_func=VIEWS.get,
                    horizontal=True,
                    help="The protected data is the table the Protect page's current "
                         "settings release: the same table, and the same figures, as the "
                         "Protect page shows.")
    state.set_risk_view(view)
    return view


def risk_settings(ctx: PageContext) -> str | None:
    """The settings of the risk measures (kept by :func:`ui.state.set_risk_options`) and how
    the file was sampled; why a sampling given cannot be used, if it cannot."""
    opts = state.risk_options()
    with st.expander("Settings: threshold k, missing key values, how the file was sampled",
                     icon=":material/tune:"):
        c1, c2, c3 = st.columns(3)
        state.bind("w_risk_k", opts.k)
        state.bind("w_risk_na", opts.na)
        state.bind("w_risk_alpha", opts.alpha)
        k = c1.number_input("Threshold k", 1, 1000, key="w_risk_k",
                            help="A record is at risk when few records (itself included) share its "
                                 "quasi-identifier values: \"Records in classes < k\" counts those "
                                 "in classes of fewer than k records (what k-anonymity removes); "
                                 "\"Records in classes ≤ k\" and the class-size chart also count "
                                 "the classes of exactly k.")
        na = c2.radio("Missing key values", ["wildcard", "category"], key="w_risk_na",
                      format_func={"wildcard": "match any value (sdcMicro)",
                                   "category": "are a category of their own"}.get)
        alpha = c3.slider("α: weight of wildcard matches", 0.0, 1.0, key="w_risk_alpha", step=0.05,
                          disabled=na != "wildcard",
                          help="How much a record with a missing key counts towards the classes it "
                               "could belong to (1 = fully, sdcMicro's default).")
        state.set_risk_options(RiskOptions(int(k), na, round(float(alpha), 2)))  # step 0.05
        sampling_refused = population.sampling_inputs(ctx.df, ctx.roles.weight)
    return sampling_refused


def releases(ctx: PageContext, view: str) -> tuple[Release, list[Release]]:
    """The original data's :class:`Release` and those ``view`` shows (the protected table as
    the Protect page's settings release it); the page stops when the original cannot be
    measured."""
    ds = ctx.ds
    # the measures take seconds on a large table: until they are drawn, the place under the
    # settings says so rather than staying empty
    pending = st.empty()
    pending.info("Computing the risk figures… they appear here when ready.",
                 icon=":material/hourglass:")
    try:
        original = measured(ctx, "Original data", ctx.df, ds.dataset_id, "", ds.stem,
                            f"{ds.name} as loaded")
    except SdcInputError as err:
        pending.empty()
        st.error(md(err), icon=":material/error:")
        render_sidebar()
        st.stop()
    shown = [original]
    if view != "original":
        try:
            table = protect_page_table(ds, ctx.roles, ctx.opts)
            if table is None:
                st.info("No protection is set on the Protect page: the figures are the original "
                        "data's. Choose methods on the Protect page to measure the release here.",
                        icon=":material/info:")
            else:
                steps = json.loads(table.recipe)
                protected = replace(measured(
                    ctx, "Protected data", table.df, table.dataset_id, "_protected",
                    f"{ds.stem}_protected",
                    f"{ds.name}; {describe(steps['steps'], steps['seed'])}"), table=table)
                shown = [protected] if view == "protected" else [original, protected]
                st.caption(f"Protected with the Protect page's settings: "
                           f"{md(describe(steps['steps'], steps['seed']))}. The protected data's "
                           "key values are the released ones (bands, merged levels).")
        except SdcInputError as err:
            st.error(f"The Protect page's settings cannot be applied: {md(err)}. The figures are "
                     "the original data's.", icon=":material/error:")

    pending.empty()
    return original, shown


def population_section(ctx: PageContext, shown: list[Release], refused: str | None) -> None:
    """Risk in the population, when the file's sampling is known (or a weight is tagged)."""
    if refused or population.known(ctx.roles.weight):
        st.subheader("In the population", anchor=False)
        if refused:
            st.error(f"No figures in the population: {refused}. Change how the file was "
                     "sampled in the settings above.", icon=":material/error:")
        else:
            sections(shown, partial(in_population, ctx))


def dis_fraction() -> float:
    """The special uniques' heading and the DIS sampling fraction (kept between visits)."""
    st.subheader("Special uniques (SUDA2)", anchor=False)
    st.caption("A record is a *special unique* when a few of its key values already single it "
               "out: sdcMicro's SUDA2 finds, for every record, the smallest sets of keys on which "
               "it is unique and scores it higher the smaller they are. Sampling weights play no "
               "part.")
    state.bind("w_risk_dis_fraction", state.suda_dis_fraction())
    st.columns(4)[0].number_input(
        "DIS sampling fraction", min_value=0.0001, max_value=1.0, step=0.01, format="%.4f",
        key="w_risk_dis_fraction",
        help="The share of the population in the file (sdcMicro's DisFraction, default 0.01). "
             "It changes the DIS score only.")
    fraction = float(state.widget("w_risk_dis_fraction"))
    state.set_suda_dis_fraction(fraction)
    return fraction


def sensitive_section(page: Measuring, shown: list[Release]) -> None:
    """l-diversity and the attribute scan of the sensitive columns."""
    st.subheader("Sensitive columns", anchor=False)
    if not page.ctx.roles.sensitive:
        st.info("Tag sensitive columns on the Data page to check l-diversity and the columns that "
                "give them away.", icon=":material/info:")
    else:
        sections(shown, partial(sensitive, page))
        closeness_section(page, shown)


#: The field's attribute-disclosure measures of a sensitive column (docs/measures.md,
#: "t-closeness, β-likeness and δ-disclosure")
CLOSENESS = ("t_closeness", "beta_likeness", "enhanced_beta_likeness", "delta_disclosure")


def closeness_section(page: Measuring, shown: list[Release]) -> None:
    """t-closeness, basic and enhanced β-likeness and δ-disclosure of each sensitive column:
    one row per column, the original's figures and, when the release is measured, the
    release's beside them."""
    st.markdown("**How far each class's distribution of a sensitive column is from the "
                "table's**")
    roles, original = page.ctx.roles, page.original
    tables = [original] + [r for r in shown if r is not original]
    rows: dict[str, dict[str, object]] = {s: {"column": s} for s in roles.sensitive}
    unbounded: list[str] = []
    try:
        for r in tables:
            figures_of = compute.closeness(r.dataset_id, tuple(roles.qi), tuple(roles.sensitive),
                                           r.df)
            suffix = "" if r is original else ", released"
            for s, c in figures_of.items():
                rows[s] |= {f"{k}{suffix}": getattr(c, k) for k in CLOSENESS}
                if not c.delta_bounded:
                    unbounded.append(f"{md(s)}{suffix and ' (released)'}")
    except SdcInputError as err:
        st.info(md(err), icon=":material/info:")
        return
    table = pd.DataFrame(list(rows.values()))
    names = {"column": "sensitive column"} | {
        f"{k}{suffix}": f"{label(k)}{suffix}" for k in CLOSENESS for suffix in ("", ", released")}
    st.dataframe(table, hide_index=True, width="stretch", column_config=table_columns(
        table, {c: "%.4f" for c in table.columns if c != "column"},
        {c: v for c, v in names.items() if c in table.columns}))
    st.caption("Each figure is the worst class's, the classes those of the quasi-identifiers "
               "(a missing key value a value of its own). t-closeness: the Earth Mover's "
               "Distance between a class's distribution q and the table's p (ordered for a "
               "numeric column, equal distances otherwise), 0–1; basic β-likeness: the largest "
               "relative gain (q_i − p_i)/p_i; enhanced: max_i min{β, −ln p_i}; δ-disclosure: "
               "the largest |ln(q_i/p_i)| over the values a class holds."
               + (f" Some class lacks a value of {', '.join(unbounded)}: the paper's δ is then "
                  "infinite; the figure shown is over the values the classes hold."
                  if unbounded else ""))


ctx = context("Disclosure risk", "to measure risk")
sample_note(ctx)
view = view_choice()
sampling_refused = risk_settings(ctx)
ctx = replace(ctx, opts=state.risk_options())  # as the settings above set them
original, shown = releases(ctx, view)
page = Measuring(ctx, original)
st.caption(f"Quasi-identifiers: {md_list(ctx.roles.qi)}. An attacker who knows these values "
           f"about a person finds the records that match; the fewer they are, the likelier a "
           f"re-identification.")
sections(shown, partial(measures, page))
households_section(page, shown)
sections(shown, partial(classes, page))
sections(shown, partial(keys, ctx))
population_section(ctx, shown, sampling_refused)
fraction = dis_fraction()
sections(shown, partial(special_uniques, ctx, fraction))
sensitive_section(page, shown)
render_sidebar()
