"""Export page: the protected data, its recipe, the trade-off table, a report and the release
decision pack."""

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from sdc_core import release_types
from sdc_core.assess import RiskOptions, Sampling, Setting, assess
from sdc_core.data.io import EXCEL_MAX_ROWS, export_notes, table_bytes
from sdc_core.engines.kernels import check_engine_step
from sdc_core.errors import SdcInputError
from sdc_core.methods.banding import release_note
from sdc_core.pack import DECISIONS, MAX_FIELD, parse_decision
from sdc_core.recipe import fingerprint, make_recipe
from sdc_core.release_types import Target, with_targets
from sdc_core.risk import RiskProfile
from sdc_core.tables.table_release import TABLE_METHODS, TableRelease
from sdc_core.utility.analysis import parse_spec
from ui import analyses, compute, server_files, state
from ui.infra import workers
from ui.logic.cross_tables import CLIP_NEEDED, CrossSettings, settings_from
from ui.logic.figures import class_size_histogram
from ui.logic.release_view import PACK_FILES, pack_zip, target_label, type_caption
from ui.logic.report import REPORT_PARTS, ReportSource, left_out, report_of, sweep_figure
from ui.logic.text import FINGERPRINT_HELP, SAMPLE_ID_HELP, md, md_list
from ui.logic.workbench import Workbench, recipe_json
from ui.page import PageContext, context
from ui.sidebar import render_sidebar


@dataclass(frozen=True)
class Protection:
    """What this page writes: the Protect page's steps for the roles as they stand, their seed,
    and the recipe's text they make (what the protected data's caches are keyed by)."""

    steps: list[dict[str, Any]]
    seed: int
    text: str


def protection_of(ctx: PageContext) -> Protection:
    """The Protect page's settings as they stand, under ``ctx``'s roles."""
    settings = state.protect_settings()
    steps = settings.steps(ctx.roles.qi)
    return Protection(steps, settings.seed,
                      recipe_json(steps, settings.seed, ctx.roles.household))


@st.cache_data(max_entries=8, show_spinner=False)
def fingerprint_of(dataset_id: str, _df: pd.DataFrame) -> str:
    return workers.run_on(dataset_id, _df, fingerprint)  # a hash of the whole table


#: Up to this many records the CSV and Parquet files are made with the page (under a second);
#: larger tables and Excel files are made when their button is clicked.
EAGER_ROWS = 200_000
#: The rows a file made on click is first tried on, so that a writer that refuses the data is
#: said on the page rather than on a click that does nothing (a column's type the writer does
#: not take shows in its first rows; an Excel trial of 1,000 rows took 0.1 s on every view).
WRITER_TRIAL_ROWS = 100


@st.cache_data(max_entries=12, show_spinner="Preparing the file…")
def data_bytes(dataset_id: str, recipe_text: str, drop: tuple[str, ...], ext: str,
               neutralize: bool, _df: pd.DataFrame) -> bytes:
    out = compute.protected(dataset_id, recipe_text, _df).data
    # written in a worker process: the server's interpreter lock stays free for other sessions
    return workers.run(table_bytes, out.drop(columns=[c for c in drop if c in out.columns]), ext,
                       neutralize)


def intro(ctx: PageContext, protection: Protection) -> None:
    """What the files are made of (a sample, the Protect page's steps); the page stops when the
    Protect settings cannot be applied."""
    source = ctx.ds.source  # set when the data was read from a file on the server
    steps = protection.steps
    if source is not None and source.is_sample:
        st.info(f"The data on this page is a sample: {source.sampled:,} of the {source.total:,} "
                f"records of {md(source.path)}. The protected data downloaded here is the "
                "sample's; to protect the whole file, run the command under *Protect the whole "
                "file* below.", icon=":material/filter_alt:")

    if not steps:
        st.info("No protection is set yet: the files below are the data as loaded. Set methods on "
                "the Protect page.", icon=":material/info:")
    else:
        st.caption(f"{len(steps)} step(s) from the Protect page, seed {protection.seed}. "
                   "Every randomised result records its seed; a fixed seed is for teaching and "
                   "reproducibility, a release should use a new secret one.")

    try:
        compute.protected(ctx.ds.dataset_id, protection.text, ctx.df)
    except SdcInputError as err:
        st.error(f"The Protect settings cannot be applied: {md(err)}", icon=":material/error:")
        render_sidebar()
        st.stop()


def protected_data(ctx: PageContext, text: str) -> None:
    """The protected data (of the recipe ``text``) as CSV, Parquet and Excel files, and what
    each file changes."""
    source, stem = ctx.ds.source, ctx.ds.stem
    st.subheader("Protected data", anchor=False)
    neutralize = st.toggle("Neutralise spreadsheet formulas (recommended)", value=True,
                           key="w_x_neutralize",
                           help="Text cells that begin with = + - @ get a leading apostrophe so a "
                                "spreadsheet does not run them, and direction controls (U+202E "
                                "and the like) in cells and column names are written as "
                                "`\\u202e`, so the text shows in the order it is stored.")
    drop_ignored = st.toggle("Leave out the columns tagged 'Not released'", value=True,
                             key="w_x_drop")
    drop = tuple(ctx.roles.ignore) if drop_ignored else ()
    written = compute.protected(ctx.ds.dataset_id, text, ctx.df).data
    written = written.drop(columns=[c for c in drop if c in written.columns])
    c1, c2, c3 = st.columns(3)
    for col, ext, mime in ((c1, ".csv", "text/csv"), (c2, ".parquet", "application/octet-stream"),
                           (c3, ".xlsx", "application/vnd.openxmlformats-officedocument."
                                         "spreadsheetml.sheet")):
        make = partial(data_bytes, ctx.ds.dataset_id, text, drop, ext, neutralize, ctx.df)
        raw: bytes | Callable[[], bytes] = make
        try:
            if ext != ".xlsx" and len(ctx.df) <= EAGER_ROWS:
                # made now, not on click: Streamlit keeps a file made on click only until any two
                # runs of any sessions end, so on a busy server the browser could miss it (404)
                raw = make()
            else:  # made on click: its writer is tried on the first rows now
                workers.run(table_bytes, written.head(WRITER_TRIAL_ROWS), ext, neutralize)
        except Exception as err:  # noqa: BLE001 — said on the page, never a dead button
            if not isinstance(err, SdcInputError):  # logged by type only: no value of the data
                logging.getLogger("sdc_dashboard").error("writing %s failed with %s", ext,
                                                         type(err).__name__)
            col.error(f"{ext[1:].upper()} cannot be written: "
                      + (md(err) if isinstance(err, SdcInputError)
                         else f"an unexpected {type(err).__name__}") + ".",
                      icon=":material/error:")
            continue
        too_long = ext == ".xlsx" and len(ctx.df) > EXCEL_MAX_ROWS
        col.download_button(f"Download {ext[1:].upper()}", raw,
                            file_name=f"{stem}_protected{ext}", mime=mime, on_click="ignore",
                            icon=":material/download:", width="stretch",
                            key=f"dl_data{ext}", disabled=too_long,
                            help=f"Excel holds at most {EXCEL_MAX_ROWS:,} rows" if too_long
                            else None)
    for ext in (".csv", ".parquet", ".xlsx"):
        for note in export_notes(written, ext, neutralize):
            st.caption(f"{ext[1:].upper()}: {md(note)}.")
    released = compute.protected(ctx.ds.dataset_id, text, ctx.df)
    for note in filter(None, map(release_note, released.reports)):
        st.warning(f"Released values: {md(note)}.", icon=":material/info:")
    if source is not None and source.is_sample:
        st.caption(f"These files hold the protected sample ({len(ctx.df):,} records), not the "
                   "whole file.")


def recipe_section(ctx: PageContext, protection: Protection) -> str:
    """The recipe, to download, and how to apply it (to the whole file, for a server file); its
    text."""
    source, stem = ctx.ds.source, ctx.ds.stem
    st.subheader("Recipe", anchor=False)
    table_fingerprint = fingerprint_of(ctx.ds.dataset_id, ctx.df)
    recipe = replace(make_recipe(protection.steps, protection.seed,
                                 description=f"protection of {ctx.ds.name}",
                                 household=ctx.roles.household),
                     input_fingerprint=table_fingerprint)
    recipe_text = recipe.to_json()
    st.download_button("Download the recipe (JSON)", recipe_text.encode(),
                       file_name=f"{stem}_recipe.json", mime="application/json",
                       on_click="ignore", icon=":material/receipt_long:", key="dl_recipe")
    if source is None:
        st.caption("Load it again on the Protect page, or apply it to the full file with "
                   "`python -m sdc_core apply DATA --recipe recipe.json -o OUT.csv`. It carries "
                   f"the table fingerprint `{table_fingerprint[:16]}…`; the sidebar's file "
                   f"SHA-256 `{ctx.ds.short_id}…` names the same data.", help=FINGERPRINT_HELP)
    else:
        st.caption("Load it again on the Protect page. It carries the table fingerprint "
                   f"`{table_fingerprint[:16]}…` of the "
                   + ("sample" if source.is_sample else "records read") + " it was made on.",
                   help=SAMPLE_ID_HELP)
        st.subheader("Protect the whole file", anchor=False)
        st.markdown("Save the recipe above as "
                    f"`{stem}_recipe.json` on the server, then run there:")
        st.code(server_files.apply_command(source.path, stem), language="bash", wrap_lines=True)
        st.caption("Add `--memory-limit 4GB` (and `--temp-dir DIR`) to bound the memory DuckDB "
                   "uses. The command applies the same steps with the same seed to every record "
                   "of the file. Each record's random draws come from its position in the whole "
                   "file, and category counts, means and ranks from the whole column, so the "
                   "protected whole file is not the protected sample row for row.")
        for i, step in enumerate(protection.steps):
            try:
                check_engine_step(i, step, "duckdb")
            except SdcInputError as err:
                st.warning(f"The command above will refuse this recipe: {md(err)}.",
                           icon=":material/warning:")
    return recipe_text


def workspace_section(stem: str) -> None:
    """The workspace file of this session's work, named after the data set's ``stem``."""
    st.subheader("Workspace", anchor=False)
    st.download_button("Download the workspace (JSON)", state.workspace_text(),
                       file_name=f"{stem}_workspace.json", mime="application/json",
                       on_click="ignore", icon=":material/work_history:", key="dl_workspace")
    st.caption("Roles, recipe, risk settings, the attacker's known columns and the Trade-offs "
               "form, without any record: open it on the Data page with this data set to go on "
               "another day.")


def tradeoff_table(stem: str, sweep: dict | None) -> None:
    """The last sweep's table, when one ran on this data set (named after its ``stem``)."""
    st.subheader("Trade-off table", anchor=False)
    if sweep is not None:
        st.download_button("Download the trade-off table (CSV)",
                           table_bytes(sweep["result"].table, ".csv"),
                           file_name=f"{stem}_tradeoffs.csv", mime="text/csv",
                           on_click="ignore", icon=":material/table:", key="dl_sweep")
    else:
        st.caption("Run a sweep on the Trade-offs page to export its table.")


def report_section(ctx: PageContext, text: str, recipe_text: str, sweep: dict | None) -> None:
    """The HTML report of the protection, made when it is downloaded, from two assessments:
    the data as loaded judged as its own release, and the Protect page's release (of the recipe
    ``text``; the report shows ``recipe_text``, the recipe file's)."""
    source, stem = ctx.ds.source, ctx.ds.stem
    st.subheader("Report", anchor=False)
    if not ctx.roles.qi:
        st.caption("Tag quasi-identifiers on the Data page to include risk in a report.")
        return
    numeric = [c for c in ctx.roles.numeric if c in ctx.df.columns]
    known = state.known_columns(ctx.df)
    given = state.sampling_key()
    sensitive = tuple(c for c in ctx.roles.sensitive if c in ctx.df.columns)
    setting = Setting(ctx.qi, tuple(numeric), sensitive, tuple(known), ctx.roles.weight,
                      ctx.roles.household, ctx.opts, Sampling(**dict(given)) if given else None)
    try:
        wb = compute.workbench(ctx.ds.dataset_id, text, ctx.qi, ctx.roles.weight, ctx.opts.k,
                               ctx.opts.na, ctx.opts.alpha, tuple(numeric), tuple(known), given,
                               ctx.df, tuple(ctx.roles.sensitive), ctx.roles.household)
        # the parts the pages show, from their caches (computed in a worker, once)
        before = assess(ctx.df, ctx.df, setting)
        before.keep(**{part: compute.original_part(ctx.ds.dataset_id, setting, part, ctx.df)
                       for part in ("keys", "linkage", "population", "closeness", "households")})
        after = wb.assessment
        assert after is not None  # the workbench's
        after.keep(closeness=compute.original_part(compute.protected_id(ctx.ds.dataset_id, text),
                                                   setting, "closeness", wb.applied.data))
    except SdcInputError as err:
        st.error(f"The report cannot be made: {md(err)}", icon=":material/error:")
        return
    for part, reason in left_out(before, after).items():
        st.warning(f"The report leaves out {REPORT_PARTS[part]}: {md(reason)}",
                   icon=":material/warning:")

    def report_figures(before: RiskProfile = before.keys, wb: Workbench = wb) -> list[go.Figure]:
        """The report's figures, made when it is downloaded (not on every view)."""
        figures = [class_size_histogram(before.fk, ctx.opts.k).update_layout(
                       title_text="Class sizes before protection"),
                   class_size_histogram(wb.after["fk"], ctx.opts.k).update_layout(
                       title_text="Class sizes after protection")]
        if sweep is not None:
            figures.append(sweep_figure(sweep["result"]))
        return figures

    try:  # the Protect page's entry: the same figures
        validity = analyses.validity_report(ctx.ds, wb, text)
    except SdcInputError as err:
        st.warning(f"The report leaves out the benchmark analyses: {md(err)}",
                   icon=":material/warning:")
        validity = None
    shown_roles: dict[str, object] = {
        "quasi-identifiers": ctx.roles.qi, "sensitive": ctx.roles.sensitive,
        "weight": ctx.roles.weight, "numeric (utility)": numeric, "known to the attacker": known,
        "not released": ctx.roles.ignore}
    if ctx.roles.household:
        shown_roles["household id"] = ctx.roles.household
    report_source = ReportSource(
        ctx.ds.name, fingerprint_of(ctx.ds.dataset_id, ctx.df), len(ctx.df), ctx.df.shape[1],
        shown_roles, recipe_text, file_sha256=ctx.ds.short_id if source is None else None,
        notes=(f"Computed on a sample of {source.sampled:,} of the {source.total:,} records of "
               f"{source.path} (seed {source.seed}); the figures are the sample's.",)
        if source is not None and source.is_sample else ())
    report = partial(report_of, report_source, before, after, wb.utility_for(ctx.roles.ignore),
                     validity=validity, tables=published_tables(ctx),
                     nearly_constant=nearly_constant(ctx))
    st.download_button("Download the report (HTML)",
                       lambda: report(report_figures()).encode("utf-8"),
                       file_name=f"{stem}_report.html", mime="text/html",
                       on_click="ignore", icon=":material/description:", key="dl_report")
    st.caption("One self-contained HTML file (it opens offline): both fingerprints, roles, "
               "recipe, risk before and after (the released keys' measures and the linkage "
               "attack; with a household id, the household risk; with how the file was "
               "sampled, the risk in the population), the last cross table of the Tables "
               "page by each method, "
               "information loss, whether the benchmark analyses hold, and the figures.")


def pack_section(ctx: PageContext, recipe_text: str, sweep: dict | None) -> None:
    """The release decision pack of the Protect page's release (the recipe file's
    ``recipe_text``) as one zip file, made when it is downloaded, for the release type chosen
    on the Protect page: its targets as the steward sets them here, the decision's fields, the
    Tables page's last cross table and the last sweep's settings for the trade-off figure."""
    st.subheader("Decision pack", anchor=False)
    kind = release_types.release_type(state.release_type())
    st.caption(f"Release type: **{md(kind.name)}**, chosen on the Protect page. "
               + type_caption(kind))
    if not ctx.roles.qi:
        st.caption("Tag quasi-identifiers on the Data page to make a decision pack.")
        return
    st.markdown("**Targets** (the type's by default: change them if the board asks for "
                "others)")
    columns = st.columns(len(kind.targets))
    changed = []
    for column, t in zip(columns, kind.targets, strict=True):
        key = f"w_x_target_{kind.key}_{t.figure}"
        state.bind(key, float(t.limit))
        limit = column.number_input(md(target_label(t, kind.k)), min_value=0.0, key=key,
                                    format="%g", step=0.1)
        changed.append(Target(t.figure, float(limit)))
    kind = with_targets(kind, changed)
    st.markdown("**Decision**")
    decision = st.selectbox("Decision", DECISIONS, key="w_x_decision",
                            format_func=lambda d: d or "not decided yet")
    left, right = st.columns(2)
    steward = left.text_input("Steward", max_chars=MAX_FIELD, key="w_x_steward")
    steward_date = left.date_input("Steward's date", value=None, key="w_x_steward_date")
    checker = right.text_input("Checker", max_chars=MAX_FIELD, key="w_x_checker")
    checker_date = right.date_input("Checker's date", value=None, key="w_x_checker_date")
    board = st.text_input("Board reference", max_chars=MAX_FIELD, key="w_x_board")
    comments = st.text_area("Comments", max_chars=MAX_FIELD, key="w_x_comments")
    try:
        decided = parse_decision({
            "decision": decision, "steward": steward, "checker": checker,
            "steward_date": steward_date.isoformat() if steward_date else "",
            "checker_date": checker_date.isoformat() if checker_date else "",
            "board_reference": board, "comments": comments})
    except SdcInputError as err:
        st.error(f"The decision pack cannot be made: {md(err)}", icon=":material/error:")
        return
    sensitive = tuple(c for c in ctx.roles.sensitive if c in ctx.df.columns)
    given = state.sampling_key()
    setting = Setting(ctx.qi, tuple(c for c in ctx.roles.numeric if c in ctx.df.columns),
                      sensitive, tuple(state.known_columns(ctx.df)), ctx.roles.weight,
                      ctx.roles.household, RiskOptions(kind.k, ctx.opts.na, ctx.opts.alpha),
                      Sampling(**dict(given)) if given else None,
                      not_released=tuple(ctx.roles.ignore))
    stored = state.cross_table_settings(ctx.ds.dataset_id)
    table = settings_from(stored) if stored is not None else None
    spec = None
    try:  # a workspace may hold analyses the formula language refuses: the pack goes without
        kept = state.analysis_spec()
        spec = parse_spec(kept) if kept is not None else None
    except SdcInputError as err:
        st.warning(f"The decision pack leaves out the benchmark analyses: {md(err)}",
                   icon=":material/warning:")
    make = partial(workers.run_on, ctx.ds.dataset_id, ctx.df, pack_zip, recipe_text, kind,
                   setting, ctx.ds.name, decided,
                   tables=(table.columns,) if table is not None else (),
                   table_rule=table.rule if table is not None else None,
                   sweep=sweep["result"].table if sweep is not None else None,
                   analyses=spec)
    st.download_button("Download the decision pack (ZIP)", make,
                       file_name=f"{ctx.ds.stem}_{kind.key}_pack.zip", mime="application/zip",
                       on_click="ignore", icon=":material/folder_zip:", key="dl_pack")
    st.caption(f"One zip file for the disclosure review board and the data users: {PACK_FILES}. "
               f"Made for a {md(kind.name)}"
               + (f", with the cross table of {md_list(table.columns)}" if table else "")
               + (", with the last sweep's settings in the figure" if sweep else "")
               + (", with the benchmark analyses' CI overlap in the external note"
                  if spec is not None else "") + ".")


def nearly_constant(ctx: PageContext) -> tuple[str, dict[str, float]] | None:
    """The household id and the columns nearly constant within its households, for the
    report (the Protect page's call: the same columns); None without a household id or when
    it cannot be read (the household section says why)."""
    household = ctx.roles.household
    if not household:
        return None
    try:
        return household, compute.nearly_constant_columns(ctx.ds.dataset_id, household, ctx.df)
    except SdcInputError:
        return None


def published_tables(ctx: PageContext
                     ) -> tuple[CrossSettings, dict[str, TableRelease | str]] | None:
    """The Tables page's last cross table of this data set, published by each method (the
    page's cached calls: the same cells), for the report's "Published tables"; None when none
    was shown."""
    stored = state.cross_table_settings(ctx.ds.dataset_id)
    if stored is None:
        return None
    settings = settings_from(stored)
    releases: dict[str, TableRelease | str] = {}
    try:
        for method in TABLE_METHODS:
            releases[method] = compute.cross_table(
                ctx.ds.dataset_id, settings.columns, settings.sum_column, method, settings.rule,
                settings.epsilon, settings.seed, settings.threshold, settings.household,
                settings.max_contributions, ctx.df, settings.clip if method == "dp" else None
            ) if method in settings.methods() else CLIP_NEEDED
    except SdcInputError as err:
        st.warning(f"The report leaves out the published tables: {md(err)}",
                   icon=":material/warning:")
        return None
    return settings, releases


def figures_section() -> None:
    """The format every chart's camera button saves."""
    st.subheader("Figures", anchor=False)
    state.bind("w_chart_format", state.chart_format())
    fmt = st.radio("The camera button of every chart saves", ["png", "svg"], horizontal=True,
                   key="w_chart_format", format_func={"png": "PNG at 3× resolution",
                                                      "svg": "SVG (vector)"}.get)
    state.set_chart_format(fmt)
    st.caption("For print, every chart also has **Export for print**: PNG, SVG or PDF at a width "
               "you choose, drawn on the server with a fixed font and a caption that names the "
               "data, the settings and the seed behind it.")


ctx = context("Export")
protection = protection_of(ctx)
intro(ctx, protection)
protected_data(ctx, protection.text)
recipe_text = recipe_section(ctx, protection)
sweep = state.sweep(ctx.ds.dataset_id)  # the Trade-offs page's last sweep on this data set
workspace_section(ctx.ds.stem)
tradeoff_table(ctx.ds.stem, sweep)
report_section(ctx, protection.text, recipe_text, sweep)
pack_section(ctx, recipe_text, sweep)
figures_section()
render_sidebar()
