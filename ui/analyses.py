"""Benchmark analyses on the Protect page (issue 26): the editor of the session's spec and the
panel "Does the analysis hold?", which compares every analysis of the spec on the protected
table with the original on each move (:mod:`sdc_core.utility.validity`).

Every change of the spec is read (:func:`~sdc_core.utility.analysis.parse_spec`), checked
against the data's columns and tried on the original table before it is kept, so an analysis
that cannot be estimated is refused at once with its reason. User text (names, formulas,
columns, messages) is shown as text: escaped Markdown, table cells or escaped figure text.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

import pandas as pd
import streamlit as st

from sdc_core.checks import parse_json_bytes
from sdc_core.errors import SdcInputError
from sdc_core.utility.analysis import DEFAULT_CONFIDENCE, KINDS, check_columns, parse_spec
from sdc_core.utility.validity import (
    LABELS,
    S_PMSE_RULE,
    VERDICT_RULE,
    ValidityReport,
    figure_text,
    verdict_text,
)
from ui import charts, compute, state
from ui.guard import guarded
from ui.infra import uploads
from ui.logic.figures import interval_chart
from ui.logic.report import WORST_TABLES, pmse_text, tables_frame, terms_frame
from ui.logic.session import Dataset
from ui.logic.text import md
from ui.logic.tiles import Tile
from ui.logic.workbench import Workbench
from ui.page import show_notice, show_tiles

#: Up to this many rows the propensity model is fitted on every move by default (it takes
#: 0.1–0.35 s on 100k rows).
PMSE_ROWS = 50_000
#: The kinds of analysis as the editor names them.
KIND_LABELS = {"ols": "linear regression (OLS)", "logit": "logistic regression (logit)",
               "mean": "mean", "proportion": "shares of the levels", "table": "table of shares"}
FORMULA_EXAMPLE = "y ~ x + C(group)"
_NOTICE = "analyses"  # the last change's outcome, shown once (ui.state.set_notice)
_PMSE = "analyses_pmse"  # the toggle's choice per data set, kept off the page


def spec_text(spec: dict[str, Any]) -> str:
    """The canonical text of a spec: the cache key of everything computed from it."""
    return json.dumps(spec, sort_keys=True)


def with_pmse(ds: Dataset) -> bool:
    """Whether the propensity model is fitted on every move: as the Protect page's toggle was
    last set for this data set, by default on up to :data:`PMSE_ROWS` rows."""
    return bool(st.session_state.get(_PMSE, {}).get(ds.dataset_id, len(ds.df) <= PMSE_ROWS))


def validity_report(ds: Dataset, wb: Workbench, recipe_text: str) -> ValidityReport | None:
    """The session's spec compared on the workbench's protected table (cached: the Protect
    and Export pages read the same entry), None without a spec; an
    :class:`~sdc_core.errors.SdcInputError` when the spec does not fit the data."""
    spec = state.analysis_spec()
    if spec is None:
        return None
    text = spec_text(spec)
    validity = compute.validity(ds.dataset_id, text, ds.df)
    return compute.validity_report(ds.dataset_id, recipe_text, text, with_pmse(ds), validity,
                                   wb, ds.df)


# -- the editor -----------------------------------------------------------------------------


def checked(data: Any, ds: Dataset) -> dict[str, Any]:
    """The spec ``data`` as its file holds it, once it reads, names columns of the data and
    every analysis can be estimated on the original; else the first reason it cannot."""
    spec = parse_spec(data)
    check_columns(spec, list(ds.df.columns))
    text = spec_text(spec.to_json())
    for error in compute.validity(ds.dataset_id, text, ds.df).estimates.values():
        if isinstance(error, SdcInputError):
            raise error
    return spec.to_json()


def _keep(data: object, ds: Dataset, done: str) -> None:
    """Keep the spec ``data`` as read (None: no analyses) if it passes :func:`checked`, and say
    so; else say why it was refused and keep the spec as it was."""
    try:
        spec = None if data is None else checked(data, ds)
    except SdcInputError as err:
        _say("error", f"Not changed: {err}")
        _seed_settings(state.analysis_spec())  # the fields show the spec kept
        return
    state.set_analysis_spec(spec)
    _seed_settings(spec)
    _say("success", done)


def _say(kind: str, text: str) -> None:
    """Show the outcome of a change (``kind`` "success" or "error") once, in the editor, which
    stays open to show it."""
    state.set_notice(_NOTICE, kind, md(text))
    st.session_state["w_an_editor"] = True


def _seed_settings(spec: dict[str, Any] | None) -> None:
    """The confidence level and table columns fields as ``spec`` has them."""
    st.session_state["w_an_confidence"] = (spec or {}).get("confidence", DEFAULT_CONFIDENCE)
    st.session_state["w_an_table_columns"] = list((spec or {}).get("columns") or [])


def _new_analysis() -> dict[str, Any]:
    """The analysis the "Add an analysis" fields describe."""
    ss = st.session_state
    kind = ss["w_an_kind"]
    item: dict[str, Any] = {"name": ss.get("w_an_name", "").strip(), "kind": kind}
    if kind in ("ols", "logit"):
        item["formula"] = ss.get("w_an_formula", "").strip()
    elif kind == "table":
        item["columns"] = list(ss.get("w_an_columns", []))
    else:
        item["column"] = ss.get("w_an_column")
        item |= {key: ss[f"w_an_{key}"] for key in ("by", "weight")
                 if ss.get(f"w_an_{key}") is not None}
    return item


@guarded
def _add(ds: Dataset) -> None:
    spec = state.analysis_spec() or {"confidence": DEFAULT_CONFIDENCE, "analyses": []}
    item = _new_analysis()
    _keep({**spec, "analyses": [*spec["analyses"], item]}, ds, f"Added {item['name']}.")


@guarded
def _remove(ds: Dataset, name: str) -> None:
    spec = state.analysis_spec()
    assert spec is not None, "its widget is drawn only with a spec"
    rest = [a for a in spec["analyses"] if a["name"] != name]
    _keep({**spec, "analyses": rest} if rest else None, ds, f"Removed {name}.")


@guarded
def _set_confidence(ds: Dataset) -> None:
    spec = state.analysis_spec()
    assert spec is not None, "its widget is drawn only with a spec"
    _keep({**spec, "confidence": float(st.session_state["w_an_confidence"])}, ds,
          "Confidence level changed.")


@guarded
def _set_table_columns(ds: Dataset) -> None:
    held = state.analysis_spec()
    assert held is not None, "its widget is drawn only with a spec"
    spec = dict(held)
    spec.pop("columns", None)
    chosen = list(st.session_state["w_an_table_columns"])
    _keep({**spec, "columns": chosen} if chosen else spec, ds,
          "Columns of the table comparison changed.")


@guarded
def _upload(ds: Dataset) -> None:
    upload = st.session_state.get("analyses_upload")
    if upload is None:
        return
    try:
        data = parse_json_bytes(upload.getvalue(), "analysis spec")
    except SdcInputError as err:
        _say("error", f"Not changed: {upload.name}: {err}")
        return
    _keep(data, ds, f"Benchmark analyses read from {upload.name}.")


def describe(item: dict[str, Any]) -> str:
    """What one analysis of a spec estimates, in a few words (plain text)."""
    if "formula" in item:
        return item["formula"]
    if item["kind"] == "table":
        return " × ".join(item["columns"])
    return item["column"] + (f" by {item['by']}" if "by" in item else "") \
        + (f", weighted by {item['weight']}" if "weight" in item else "")


def _listing(ds: Dataset, spec: dict[str, Any]) -> None:
    """The spec's analyses, a line each with a Remove button."""
    for i, item in enumerate(spec["analyses"]):
        row = st.container(horizontal=True, vertical_alignment="center")
        row.markdown(f"**{md(item['name'])}** · {KIND_LABELS[item['kind']]}: "
                     f"{md(describe(item))}")
        row.button("Remove", key=f"w_an_remove_{i}", icon=":material/delete:",
                   on_click=_remove, args=(ds, item["name"]))


def _add_fields(ds: Dataset) -> None:
    """The "Add an analysis" fields: a kind, a name and the kind's own fields; the column
    estimated and the weight never the household id (an id is not a measure)."""
    columns = [str(c) for c in ds.df.columns]
    measures = [c for c in columns if c != state.roles().household]
    st.markdown("**Add an analysis**")
    kind = st.selectbox("Kind of analysis", list(KINDS), key="w_an_kind",
                        format_func=KIND_LABELS.__getitem__)
    st.text_input("Name", key="w_an_name", placeholder="e.g. income model")
    if kind in ("ols", "logit"):
        st.text_input("Formula", key="w_an_formula", placeholder=FORMULA_EXAMPLE,
                      help="A model formula, response ~ terms (docs/formulas.md): C(x) makes "
                           "x categorical, log(x) and I(x ** 2) transform it, a:b is an "
                           "interaction and a*b = a + b + a:b; quote other column names as "
                           "`monthly income`.")
    elif kind == "table":
        st.multiselect("Columns of the table", columns, key="w_an_columns")
    else:
        st.selectbox("Column estimated", measures, key="w_an_column")
        left, right = st.columns(2)
        left.selectbox("By (optional)", columns, index=None, key="w_an_by", placeholder="none",
                       help="Estimate it in each group of this column.")
        right.selectbox("Weight (optional)", measures, index=None, key="w_an_weight",
                        placeholder="none")
    st.button("Add the analysis", key="w_an_add", icon=":material/add:", on_click=_add,
              args=(ds,))


def _settings(ds: Dataset, spec: dict[str, Any]) -> None:
    """The confidence level and the columns of the table comparison and the pMSE model."""
    state.bind("w_an_confidence", spec["confidence"])
    state.bind("w_an_table_columns", list(spec.get("columns") or []))
    left, right = st.columns([1, 2])
    left.number_input("Confidence level", step=0.01, format="%.4g",
                      key="w_an_confidence", on_change=_set_confidence, args=(ds,))
    right.multiselect("Columns of the table comparison and pMSE model",
                      [str(c) for c in ds.df.columns], key="w_an_table_columns",
                      on_change=_set_table_columns, args=(ds,),
                      placeholder="the columns the analyses read",
                      help="Their 1- and 2-way tables are compared, and a propensity model "
                           "with their main effects tells the tables apart. Empty: the "
                           "columns the analyses read.")


def _files(ds: Dataset, spec: dict[str, Any] | None) -> None:
    """Upload a spec file, or download the current one."""
    st.file_uploader("Upload a spec (JSON)", type=["json"], key="analyses_upload",
                     max_upload_size=uploads.widget_limit("json"), on_change=_upload, args=(ds,),
                     help='{"confidence": 0.95, "analyses": [{"name": …, "kind": …}]}')
    if spec is not None:
        st.download_button("Download the spec (analyses.json)", json.dumps(spec, indent=2),
                           file_name="analyses.json", mime="application/json",
                           on_click="ignore", icon=":material/download:", key="w_an_download")
        st.caption("The same file `python -m sdc_core compare ORIGINAL PROTECTED --analysis "
                   "analyses.json` reads.")


def editor(ds: Dataset, spec: dict[str, Any] | None) -> None:
    """The expander "Benchmark analyses (N)": the analyses, a form to add one, the settings
    (with whether the propensity model is fitted on every move), and the spec file; the last
    change's outcome. Closed at first, it is drawn once opened (a slider move does not redraw
    the form)."""
    count = len(spec["analyses"]) if spec else 0
    box = st.expander(f"Benchmark analyses ({count})", icon=":material/edit_note:",
                      key="w_an_editor", on_change="rerun")
    if not box.open:
        return
    with box:
        show_notice(state.take_notice(_NOTICE))
        if spec is not None:
            _listing(ds, spec)
        _add_fields(ds)
        if spec is not None:
            _settings(ds, spec)
            _pmse_toggle(ds)
        _files(ds, spec)


def _pmse_toggle(ds: Dataset) -> None:
    """Whether the propensity model is fitted on every move, kept per data set
    (:func:`with_pmse`): a setting of the analyses, in their editor."""
    state.bind("w_an_pmse", with_pmse(ds))
    fit = st.toggle("Fit the propensity model (pMSE) on every move", key="w_an_pmse",
                    help=f"On by default up to {PMSE_ROWS:,} rows: it takes 0.1–0.35 s on "
                         "100k rows.")
    st.session_state[_PMSE] = {**st.session_state.get(_PMSE, {}), ds.dataset_id: fit}


# -- the panel ------------------------------------------------------------------------------


def _headline(report: ValidityReport) -> None:
    """The headline figures as tiles, over the rule of a verdict, each analysis's verdict (its
    name, user data, escaped) and the propensity score with its rule (the toggle that fits it
    is in the editor)."""
    s = report.summary()
    show_tiles([
        Tile(LABELS["mean_ci_overlap"], figure_text(s["mean_ci_overlap"]),
             help="The mean over the analyses with intervals of each one's mean CI overlap "
                  "(Karr et al. 2006): 1 when every interval is reproduced, 0 or less when "
                  "they no longer meet; an analysis that fails on the protected table "
                  "counts 0."),
        Tile(LABELS["worst_tvd"], figure_text(s["worst_tvd"]),
             help="The largest total variation distance ½ Σ |p − p′| among the 1- and "
                  "2-way tables and the table analyses: 0 for the same shares, 1 for "
                  "disjoint ones."),
        Tile(LABELS["s_pmse"], figure_text(s["s_pmse"]), help=S_PMSE_RULE)],
        [0, 1, 2], "an-headline",
        notes=[md(VERDICT_RULE), *(md(f"{r.name}: {verdict_text(r)}") for r in report.analyses),
               md(f"Propensity score: {pmse_text(report)}"), md(S_PMSE_RULE)])
    for r in report.analyses:
        if r.error:
            st.error(md(r.error), icon=":material/error:")


#: The columns of the panel's table of every term.
TERM_COLUMNS = ["analysis", "term", "CI overlap", "std. difference", "original in protected CI",
                "term holds", "worst"]


def every_term(report: ValidityReport) -> pd.DataFrame:
    """Every term of the analyses with intervals, a row each: its CI overlap J, standardised
    difference d = (θ_p − θ_o)/se_o, whether it holds (J ≥ 0.75 and |d| < 1) and whether its
    verdict names it (``worst``). A table's cells are left out (no intervals; its verdict
    names the cell that moved most, and its cells are shown on demand)."""
    frames = [terms_frame(r).assign(analysis=r.name) for r in report.analyses
              if r.terms and r.kind != "table"]
    return pd.concat(frames, ignore_index=True)[TERM_COLUMNS] if frames \
        else pd.DataFrame(columns=TERM_COLUMNS)


#: The frames :func:`_analyses` and :func:`_tables` show of a report, by the report (its id,
#: with the report itself kept so that the id is not reused), the most recent
#: :data:`SHOWN_KEPT`: a report is cached for every session that reaches its release
#: (:func:`ui.compute.validity_report`), and building its frames again for each of them was a
#: tenth of the server's time when a class moved the slider together on the built-in data
SHOWN_KEPT = 32
_SHOWN: OrderedDict[int, tuple[ValidityReport, pd.DataFrame, pd.DataFrame]] = OrderedDict()
_SHOWN_LOCK = threading.Lock()


def shown_frames(report: ValidityReport) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every term of ``report`` (:func:`every_term`) and its worst tables as shown (the
    :data:`~ui.logic.report.WORST_TABLES` first of :func:`~ui.logic.report.tables_frame`,
    rounded to 4 digits, the tables' names as escaped Markdown), built once per report: under
    the memo's lock, so that thirty sessions reaching a new report at once build it once (a
    build takes milliseconds, and the others would only build the same)."""
    with _SHOWN_LOCK:
        hit = _SHOWN.get(id(report))
        if hit is not None and hit[0] is report:
            _SHOWN.move_to_end(id(report))
            return hit[1], hit[2]
        worst = tables_frame(report.tables[:WORST_TABLES]).round(4)
        made = every_term(report), worst.assign(table=worst["table"].map(md))
        _SHOWN[id(report)] = (report, *made)
        while len(_SHOWN) > SHOWN_KEPT:
            _SHOWN.popitem(last=False)
        return made


def _analyses(report: ValidityReport, stem: str, context: str) -> None:
    """Every term's figures with its worst marked, then the interval chart and full table of
    the one chosen, if any (drawn on demand, they would slow every move)."""
    terms = shown_frames(report)[0]
    if len(terms):
        st.dataframe(terms, hide_index=True, width="stretch",
                     column_config={"CI overlap": st.column_config.NumberColumn(format="%.3f"),
                                    "std. difference": st.column_config.NumberColumn(
                                        format="%.2f"),
                                    "worst": st.column_config.CheckboxColumn(
                                        help="The term the verdict names")})
    names = [r.name for r in report.analyses if r.terms]
    if not names:
        return
    if st.session_state.get("w_an_detail") not in names:
        st.session_state.pop("w_an_detail", None)  # an analysis removed
    name = st.selectbox("Terms of an analysis", names, index=None, key="w_an_detail",
                        format_func=str, placeholder="Choose one to see each estimate and "
                                                     "its interval on both tables")
    if name is None:
        return
    r = next(r for r in report.analyses if r.name == name)
    frame = terms_frame(r)
    if r.kind == "table":
        st.dataframe(frame[["term", "original", "protected", "worst"]].rename(columns={
            "term": "cell", "original": "original share", "protected": "protected share"}),
            hide_index=True, width="stretch")
        return
    charts.show(interval_chart(r.terms, f"{r.name}: original and protected estimates"),
                f"{stem}_{r.name}_intervals", key="an_chart", context=context)
    st.dataframe(frame, hide_index=True, width="stretch")


def _tables(report: ValidityReport) -> None:
    """The 1- and 2-way tables, the worst first, the rest under an expander."""
    st.markdown(f"**1- and 2-way tables** of {len(report.columns)} column(s), the worst first")
    # a static table (no keyboard stops on the way to the controls below), whose cells are
    # Markdown: the column names escaped
    st.table(shown_frames(report)[1], hide_index=True)
    rest = report.tables[WORST_TABLES:]
    if rest:
        box = st.expander(f"The other {len(rest)} tables", key="an_other_tables",
                          on_change="rerun")
        if box.open:
            with box:
                st.dataframe(tables_frame(rest), hide_index=True, width="stretch")
    if report.missing:
        st.caption("Columns the release drops (their tables count TVD 1): "
                   + md(", ".join(map(str, report.missing))))


def panel(ds: Dataset, wb: Workbench, recipe_text: str, context: str) -> None:
    """"Does the analysis hold?": the editor, then the spec compared on the protected table
    (headline figures, each analysis, the tables, pMSE); without a spec, a line saying so."""
    spec = state.analysis_spec()
    if spec is None:  # the heading and what to do, as one element (fewer a move redraws)
        st.markdown("### Does the analysis hold?\n\nNo benchmark analyses for this data set: "
                    "add the estimates a user of the data would make (a regression, a mean by "
                    "group, a table) under *Benchmark analyses* below, and every move shows "
                    "whether they still come out the same.")
    else:
        st.subheader("Does the analysis hold?", anchor=False)
    editor(ds, spec)
    if spec is None:
        return
    try:
        report = validity_report(ds, wb, recipe_text)
    except SdcInputError as err:
        st.error(f"The benchmark analyses cannot be compared: {md(err)}",
                 icon=":material/error:")
        return
    assert report is not None, "None only without a spec, and there is one"
    _headline(report)
    # the terms and tables drawn once opened, not on every move (fewer elements a move redraws)
    details = st.expander("Every term and the 1- and 2-way tables", icon=":material/table:",
                          key="an_details", on_change="rerun")
    if details.open:
        with details:
            _analyses(report, ds.stem, context)
            _tables(report)

