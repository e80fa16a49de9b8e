"""Tables: answer counts for a survey organiser with small counts suppressed, and cross tables
with margins published by suppression, differential privacy and the cell key method side by
side (docs/tables.md); a column's code list gives a cross table the rows of its groups, by
suppression. With a household id tagged on the Data page, a cross table protects the
person the id names, by default. Every setting is kept between visits, in a reload, the
workspace file and a link (docs/tables.md, "On the Tables page")."""

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pandas as pd
import streamlit as st

from sdc_core.data.io import table_bytes
from sdc_core.errors import SdcInputError
from sdc_core.tables.crosstab import level_codes
from sdc_core.tables.dp_tables import MAX_CONTRIBUTIONS
from sdc_core.tables.hierarchy import Hierarchy, Prefixes, axis_tree, unused_note
from sdc_core.tables.responses import (
    audit,
    naive_publication,
    pet_survey,
    question_counts,
    response_table,
)
from sdc_core.tables.table_release import TABLE_METHODS
from ui import compute, state
from ui.guard import guarded
from ui.infra import uploads
from ui.logic.cross_tables import (
    CLIPS,
    CODE_LIST_KINDS,
    DOMINANCE_K,
    DOMINANCE_N,
    EPSILONS,
    LARGE_TABLE,
    LINKED_REFUSED,
    MAX_ADDED,
    MAX_PREFIX_TEXT,
    METHOD_TITLES,
    PARTICIPANTS,
    PARTS,
    PERCENTS,
    SEEDS,
    SOURCES,
    THRESHOLDS,
    UNITS,
    CodeList,
    CrossSettings,
    audit_text,
    ckm_text,
    code_list_text,
    dp_text,
    file_list,
    file_name,
    linked_file_name,
    linked_part,
    linked_set,
    linked_text,
    linked_title,
    linked_union,
    nonresponse_text,
    page_rule,
    prefix_list,
    protection_rows,
    published_frame,
    shown_table,
    status_counts,
    table_size,
    table_title,
    utility_rows,
)
from ui.logic.groups import measure_columns
from ui.logic.session import Dataset
from ui.logic.text import md
from ui.sidebar import render_sidebar

ANSWERS, CROSS = PARTS
#: A table column's code lists, by column (:func:`code_lists`)
Specs = Mapping[str, Hierarchy | Prefixes]
#: The widgets of this run whose values are kept for the next visit (:func:`keep`)
KEPT: list[str] = []


def keep(key: str, default: Any, options: list | None = None,
         choices: list | None = None) -> None:
    """Seed the widget ``key`` with its kept value (:func:`ui.state.seed_kept`) and note it
    among the widgets this page keeps."""
    state.seed_kept(key, default, options, choices)
    KEPT.append(key)


#: The most levels the differencing part offers to merge
MAX_DIFF_LEVELS = 200


def answer_counts() -> None:
    """Seed 004's answer counts, their audit and the download."""
    keep("w_tables_source", SOURCES[0], choices=list(SOURCES))
    source = st.radio("Data", list(SOURCES), horizontal=True, key="w_tables_source")
    ds = state.ensure_dataset()
    df = ds.df if source == SOURCES[0] else pet_survey()

    c1, c2, c3, c4 = st.columns(4)
    keep("w_tables_q", 10)
    q = c1.number_input("Question threshold Q", *THRESHOLDS, key="w_tables_q",
                        help="Hide a question with fewer responses than this.")
    keep("w_tables_t", 5)
    t = c2.number_input("Option threshold T", *THRESHOLDS, key="w_tables_t",
                        help="Show an option's count only when at least this many chose it.")
    n_key = f"w_tables_n_{len(df)}"
    keep(n_key, len(df))
    state.set_widget(n_key, max(len(df), int(state.widget(n_key))))  # at least the rows
    n = c3.number_input("Participants N", len(df), PARTICIPANTS[1], key=n_key,
                        help="Everyone invited to answer; defaults to the number of rows.")
    keep("w_tables_multi", False)
    multi = c4.toggle("Multi-select cells", key="w_tables_multi",
                      help="Each cell lists the chosen options, separated by the delimiter.")
    keep("w_tables_delim", ";")
    delimiter = c4.text_input("Delimiter", key="w_tables_delim", max_chars=3,
                              disabled=not multi)

    default = ["favourite animal"] if source != SOURCES[0] else [
        c for c, k in ds.kinds.items() if k.value == "categorical"][:2]
    questions_key = f"w_tables_questions_{source[:7]}"
    keep(questions_key, [c for c in default if c in df.columns], options=list(df.columns))
    questions = st.multiselect("Question columns", list(df.columns), key=questions_key)
    if not questions:
        st.info("Choose at least one question column.", icon=":material/info:")

    published_rows = []
    for question in questions:
        try:
            table = response_table(df, question, int(n), int(q), int(t), multi, delimiter or ";")
            _, counts, responses = question_counts(df, question, multi, delimiter or ";")
        except SdcInputError as err:
            st.error(md(err), icon=":material/error:")
            continue
        st.subheader(md(question), anchor=False, divider="gray")
        left, right = st.columns(2)
        with left:
            st.markdown("**What the organiser sees**")
            if not table.shown:
                st.warning(f"Hidden: fewer than {int(q)} responses.",
                           icon=":material/visibility_off:")
            else:
                view = table.frame()
                st.dataframe(view, hide_index=True, width="stretch")
                published_rows += [{"question": str(question), "option": r.option,
                                    "responses": r.responses} for r in view.itertuples()]
        with right:
            st.markdown("**Raw counts: private, never shown to the organiser**")
            raw = pd.DataFrame({"option": list(counts) + ["(no response)"],
                                "responses": list(counts.values()) + [int(n) - responses]})
            st.dataframe(raw, hide_index=True, width="stretch")
        if table.shown:
            result = audit(table)
            if result.passes:
                st.success("Audit passed: every hidden count can still be anything from "
                           + "; ".join(f"{md(o.option)} {o.low}–{o.high}"
                                       for o in result.options)
                           + " given the published table." if result.options else
                           "Audit passed: no count is hidden.", icon=":material/verified_user:")
            else:
                for finding in result.findings():
                    st.error(f"Audit: {md(finding)}", icon=":material/gpp_bad:")
            with st.expander("Why not publish the exact non-response?"):
                naive = audit(naive_publication(table, responses))
                st.markdown(f"Subtracting gives exactly {int(n) - responses} non-responses. The "
                            "audit of that table:")
                for finding in naive.findings() or ["no leak in this case, but it can leak in "
                                                    "others"]:
                    st.markdown(f"- {md(finding)}")

    if published_rows:
        st.download_button("Download the published table (CSV)",
                           table_bytes(pd.DataFrame(published_rows), ".csv"),
                           file_name="response_tables.csv", mime="text/csv",
                           on_click="ignore", icon=":material/download:")



def cross_settings(ds: Dataset) -> CrossSettings | None:
    """The cross table's controls; None until a column is chosen (or while the household id
    cannot be the table's unit: then an error says why)."""
    df = ds.df
    kinds = {c: k.value for c, k in ds.kinds.items()}
    tagged = state.roles().household
    household_id = tagged if tagged in df.columns else None
    categorical = [c for c in df.columns if kinds.get(c) == "categorical" and c != household_id]
    numeric = measure_columns(ds, state.roles())  # never the household id
    c1, c2 = st.columns([3, 2])
    keep("w_tables_cross", categorical[:2], options=list(df.columns))
    columns = c1.multiselect("Table columns (1 to 3)", list(df.columns), max_selections=3,
                             key="w_tables_cross",
                             help="The first column's levels are the rows of a 2-way table, "
                                  "the second's its columns; every margin and the grand "
                                  "total are published too.")
    keep("w_tables_cross_sum", None, choices=[None, *numeric])
    sum_column = c2.selectbox("Sum of", [None, *numeric], key="w_tables_cross_sum",
                              format_func=lambda c: "— (count the records)" if c is None
                              else str(c),
                              help="A magnitude table: the sum of this column per cell (an id "
                                   "is never summed).")
    household = unit_choice(household_id)
    r1, r2, r3, r4, r5 = st.columns(5)
    if sum_column is None:
        keep("w_tables_cross_t", 5)
        t = r1.number_input("Threshold T", *THRESHOLDS, key="w_tables_cross_t",
                            help="Suppression's primary rule: a cell of fewer than T "
                                 "contributors (records, or with a household id persons) is "
                                 "hidden.")
        rule = page_rule("threshold", threshold=int(t))
    else:
        keep("w_tables_cross_rule", "p", choices=["p", "dominance"])
        which = r1.radio("Primary rule", ["p", "dominance"], key="w_tables_cross_rule",
                         format_func={"p": "p %", "dominance": "dominance (n, k)"}.get,
                         help="p %: a cell is hidden when the second-largest contributor "
                              "could estimate the largest's amount within p %. Dominance: "
                              "when the n largest contributors hold more than k % of the "
                              "cell's sum. With a household id a contributor is a person, "
                              "the amounts of their records in the cell added up.")
        if which == "p":
            keep("w_tables_cross_p", 10.0)
            p = r2.number_input("p (%)", *PERCENTS, key="w_tables_cross_p")
            rule = page_rule("p", p=float(p))
        else:
            keep("w_tables_cross_n", 2)
            n = r2.number_input("n", *DOMINANCE_N, key="w_tables_cross_n")
            keep("w_tables_cross_k", 85.0)
            k = r2.number_input("k (%)", *DOMINANCE_K, key="w_tables_cross_k")
            rule = page_rule("dominance", n=int(n), k=float(k))
    sums = sum_column is not None
    keep("w_tables_eps", 1.0)
    eps = r3.number_input("DP ε", *EPSILONS, step=0.1, key="w_tables_eps",
                          help="Differential privacy: the privacy loss of the table, per "
                               "person with a household id, else per record; smaller is more "
                               "private and noisier.")
    keep("w_tables_seed", 0)
    seed = r4.number_input("Seed", *SEEDS, key="w_tables_seed",
                           help="Of the DP noise (and of which records of a person DP keeps) "
                                "and of the cell key method's record keys.")
    keep("w_tables_ckm_t", 10)
    threshold = r5.number_input("Cell key threshold", *THRESHOLDS, key="w_tables_ckm_t",
                                disabled=sums,
                                help="The cell key method: a published count below it is "
                                     "blank, the rest rounded to 5; with a household id a cell "
                                     "of fewer persons is blank too.")
    clip = None
    if sums:
        clip = r5.number_input(
            "DP: clip U", *CLIPS, value=None, key="w_tables_clip",
            placeholder="required for DP",
            help="Differential privacy on sums: each contribution (a record's amount, or a "
                 "person's amounts in a cell) is clipped to [0, U] and the noise scaled to "
                 "U/ε. Set U from what one contributor can plausibly add, not from the data.")
    if not columns:
        st.info("Choose 1 to 3 table columns.", icon=":material/info:")
        return None
    bound = None
    if household is not None:
        try:
            default_bound = compute.unit_bound(ds.dataset_id, household, tuple(columns),
                                               sum_column, df)
        except SdcInputError as err:
            st.error(md(err), icon=":material/error:")
            return None
        keep("w_tables_max_c", default_bound)
        bound = int(r3.number_input(
            "DP: records per person at most", 1, MAX_CONTRIBUTIONS, key="w_tables_max_c",
            help=f"DP keeps at most this many records of each person (the others "
                 f"dropped, chosen by the seed) and scales its noise to it, so that ε is "
                 f"per person. The default, {default_bound}, is the 95th percentile of "
                 "records per person: it keeps at least 95 % of the persons whole. It is "
                 "read from the data, so set it from the design (the waves of a panel) "
                 "when you know it."))
    return CrossSettings(tuple(columns), sum_column, rule, float(eps), int(seed), int(threshold),
                         household, bound, None if clip is None else float(clip))


def unit_choice(household_id: str | None) -> str | None:
    """Whom the figures protect: with a household id tagged on the Data page, each person (by
    default) or each record, as the steward chooses; the household column, or None for the
    records."""
    if household_id is None:
        st.caption("No household or person id is tagged on the Data page: every record counts "
                   "as a contributor of its own, and DP's ε is per record. A person with "
                   "several records (a panel, repeated visits) is protected only when the id "
                   "is tagged.")
        return None
    keep("w_tables_unit", UNITS[0], choices=list(UNITS))
    unit = st.radio("Protect", list(UNITS), horizontal=True, key="w_tables_unit",
                    format_func={"person": f"each person (distinct {md(household_id)})",
                                 "record": "each record"}.get,
                    help="Each person: the threshold counts the distinct ids in a cell, the "
                         "dominance and p % rules add up a person's amounts, DP bounds each "
                         "person's records and the cell key method gives a person one key. "
                         "Each record: every record counts as a contributor of its own.")
    st.caption(f"Household id **{md(household_id)}** (tagged on the Data page). "
               + ("The published values are still record counts (or sums); the rules count "
                  "persons." if unit == "person" else
                  "Counted by records, a cell of one person's several records can be "
                  "published as if it were several people."))
    return household_id if unit == "person" else None


def method_column(ds: Dataset, settings: CrossSettings, method: str, specs: Specs) -> bool:
    """One method's table, utility, protection and downloads, the columns' code lists
    ``specs`` applied; whether it was published."""
    st.subheader(METHOD_TITLES[method], anchor=False)
    if method not in settings.methods():
        st.info(settings.refused(method), icon=":material/block:")
        return False
    try:
        with st.spinner("Publishing the table…"):
            made = compute.cross_table(ds.dataset_id, settings.columns, settings.sum_column, method,
                                       settings.rule, settings.epsilon, settings.seed,
                                       settings.threshold, settings.household,
                                       settings.max_contributions, ds.df,
                                       settings.clip if method == "dp" else None,
                                       settings.code_lists, specs)
    except SdcInputError as err:
        st.error(md(err), icon=":material/error:")
        return False
    st.dataframe(shown_table(made), hide_index=len(settings.columns) != 2, width="stretch")
    axes = (f"rows {md(settings.columns[0])}, columns {md(settings.columns[1])} · "
            if len(settings.columns) == 2 else "")
    st.caption(f"{axes}✕ hidden · {status_counts(made)}")
    if len(settings.columns) == 2:
        with st.expander("Each cell's status"):
            st.dataframe(shown_table(made, tidy=True), hide_index=True, width="stretch")
    if method == "suppress":
        passes, lines = audit_text(made)
        for line in lines:
            if passes:
                st.success(md(line), icon=":material/verified_user:")
            else:
                st.error(f"Audit: {md(line)}", icon=":material/gpp_bad:")
    elif method == "dp":
        st.caption(md(dp_text(made)))
        if settings.sum_column is None:  # non-response follows from counts, not sums
            st.caption(nonresponse_text(made, len(ds.df)))
    else:
        st.caption(md(ckm_text(made, settings.threshold)))
    st.markdown("**Utility** (against the true table)")
    st.dataframe(utility_rows(made), hide_index=True, width="stretch")
    st.markdown("**Protection**")
    st.dataframe(protection_rows(made, settings.threshold), hide_index=True, width="stretch")
    out = published_frame(made)
    d1, d2 = st.columns(2)
    with d1:
        st.download_button("CSV", table_bytes(out, ".csv"),
                           file_name=file_name(ds.stem, method, ".csv"), mime="text/csv",
                           on_click="ignore", icon=":material/download:",
                           key=f"dl_tables_{method}_csv")
    with d2:
        st.download_button("Excel", lambda: table_bytes(out, ".xlsx"),
                           file_name=file_name(ds.stem, method, ".xlsx"),
                           mime="application/vnd.openxmlformats-officedocument."
                                "spreadsheetml.sheet",
                           on_click="ignore", icon=":material/download:",
                           key=f"dl_tables_{method}_xlsx")
    return True


def differencing_part(ds: Dataset, settings: CrossSettings) -> None:
    """What subtracting this table from the same table with levels merged gives away, by each
    method (docs/tables.md, "Differencing between two tables")."""
    with st.expander("Differencing: the same table published with levels merged",
                     icon=":material/difference:"):
        st.caption("A second table of the same data that merges some levels of a column (two "
                   "age groups, say) lets a reader subtract: a cell hidden in one table may "
                   "follow from the other. Choose the levels the second table merges.")
        keep("w_tables_diff_column", settings.columns[0], choices=list(settings.columns))
        column = st.selectbox("Column", list(settings.columns), key="w_tables_diff_column",
                              format_func=str)
        try:
            levels = level_codes(ds.df[column], None)[1][:MAX_DIFF_LEVELS]  # the table's text
        except SdcInputError:  # the column cannot make a table: the methods above say why
            return
        levels_key = f"w_tables_diff_levels_{column}"
        keep(levels_key, [], options=levels)
        merged = st.multiselect("Levels merged in the second table", levels, key=levels_key)
        if len(merged) < 2:
            st.info("Choose two or more levels to merge.", icon=":material/info:")
            return
        for method, col in zip(TABLE_METHODS, st.columns(3)):
            if settings.sum_column is not None and method != "suppress":
                continue  # differencing compares count tables
            with col:
                st.markdown(f"**{METHOD_TITLES[method]}**")
                try:
                    result = compute.differencing(ds.dataset_id, settings.columns, column,
                                                  tuple(merged), method, settings.rule,
                                                  settings.epsilon, settings.seed,
                                                  settings.threshold, settings.household,
                                                  settings.max_contributions, ds.df)
                except SdcInputError as err:
                    st.error(md(err), icon=":material/error:")
                    continue
                st.caption(md(result.summary()))


#: How many tables the steward added to the one being built (the count of :func:`added_tables`)
ADDED = "w_tables_added"


def added_tables(columns: list[str]) -> list[list[str]]:
    """The further tables the steward adds to the one being built, each a choice of 1 to 3
    columns, published together with it (docs/tables.md, "On the Tables page"): their columns,
    in the order added (an added table with none chosen yet is empty)."""
    keep(ADDED, 0)
    count = min(state.count(ADDED), MAX_ADDED)
    added = []
    for place in range(count):
        key = f"w_tables_added_{place}"
        keep(key, [], options=columns)
        left, right = st.columns([5, 1], vertical_alignment="bottom")
        added.append(left.multiselect(f"Table {place + 2}: columns (1 to 3)", columns,
                                      max_selections=3, key=key))
        right.button("Remove", key=f"tables_remove_{place}", icon=":material/delete:",
                     on_click=remove_table, args=(place, count))
    st.button("Add a table", key="tables_add_table", icon=":material/add:",
              on_click=guarded(state.add_one), args=(ADDED,), disabled=count >= MAX_ADDED,
              help="Another table of this file, published together with this one by "
                   "suppression: a cell two tables share has one status in both, and the "
                   "audit reads every table at once (linked tables). Together the tables "
                   f"take at most 3 columns; at most {MAX_ADDED} tables are added.")
    return added


@guarded
def remove_table(place: int, count: int) -> None:
    """The callback of an added table's Remove button: the tables after it move up one."""
    for later in range(place, count - 1):
        state.set_widget(f"w_tables_added_{later}",
                         state.widget(f"w_tables_added_{later + 1}", []))
    last = f"w_tables_added_{count - 1}"
    state.forget_widgets(last)
    state.keep_form_value(last, [])  # an added table starts empty
    state.set_widget(ADDED, count - 1)


def linked_tables(ds: Dataset, settings: CrossSettings,
                  tables: tuple[tuple[str, ...], ...], specs: Specs) -> None:
    """The tables published together by suppression (docs/tables.md, "Linked tables"), the
    columns' code lists ``specs`` applied: the joint audit's line, each table's cells and the
    command line's long CSV."""
    st.subheader(f"{len(tables)} tables published together", anchor=False, divider="gray")
    st.info(LINKED_REFUSED, icon=":material/block:")
    union = linked_union(tables)
    if len(union) <= 3 and table_size(ds.df, union) > LARGE_TABLE:
        st.warning("The finest table of these columns is large: choosing its secondary cells "
                   "and auditing them may take a minute.", icon=":material/hourglass_top:")
    try:
        with st.spinner("Publishing the tables together…"):
            made = compute.linked_tables(ds.dataset_id, tables, settings.sum_column,
                                         settings.rule, settings.household, ds.df,
                                         settings.code_lists, specs)
    except SdcInputError as err:
        st.error(md(err), icon=":material/error:")
        return
    passes, line = linked_text(made)
    if passes:
        st.success(md(line), icon=":material/verified_user:")
    else:
        st.error(f"Joint audit: {md(line)}", icon=":material/gpp_bad:")
    frame = made.frame()
    for table in made.tables:
        st.markdown(f"**{md(linked_title(table, settings.sum_column))}**")
        st.dataframe(linked_part(made, frame, table), hide_index=True, width="stretch")
    st.caption("✕ hidden. A cell two tables share (a margin of both) has one status in "
               "both.")
    st.download_button("CSV (all the tables)", table_bytes(frame, ".csv"),
                       file_name=linked_file_name(ds.stem), mime="text/csv",
                       on_click="ignore", icon=":material/download:",
                       key="dl_tables_linked_csv")
    st.caption("The download has one row per cell and margin of each table: `table` (its "
               "columns joined by commas), every column of the set (blank where it is not "
               "the table's), the count (or sum; blank when hidden), its status and the unit, "
               "as `python -m sdc_core tables DATA --cross A,B --cross A,C -o OUT.csv` "
               "writes it. The report on the Export page holds the last single cross table "
               "shown here.")


def code_lists(df: pd.DataFrame, columns: list[str]) -> tuple[tuple[CodeList, ...], Specs] | None:
    """Each table column's code list, as the steward gives it (docs/tables.md, "On the Tables
    page"): none, prefix lengths typed in or a CSV or JSON file uploaded (its bytes read in
    memory, never kept on disk), checked against the column's codes in ``df``. The lists' keys
    and the lists by column; None, with one sentence on the page, while a list is refused or
    its file not yet given."""
    lists: list[CodeList] = []
    specs: dict[str, Hierarchy | Prefixes] = {}
    used: dict[str, list[str] | None] = {}  # each column's codes and groups in the table
    ready = True
    with st.expander("Code lists (hierarchies)", icon=":material/account_tree:"):
        st.caption("A column's codes may sit in a tree of groups (0301 and 0302 under 03): "
                   "the table then has a row for every group, each the sum of its children, "
                   "and is published by suppression. Give the tree as prefix lengths (2,4: "
                   "0301 under 03) or as a file, CSV rows code,parent or JSON "
                   "{\"code\": \"parent\"} (a blank parent or null for a top group).")
        for column in columns:
            kind_key, text_key = f"w_tables_h_kind_{column}", f"w_tables_h_prefix_{column}"
            keep(kind_key, "none", choices=list(CODE_LIST_KINDS))
            kind = st.radio(f"Code list of {md(column)}", list(CODE_LIST_KINDS),
                            horizontal=True, key=kind_key, format_func=CODE_LIST_KINDS.get)
            try:
                if kind == "prefix":
                    keep(text_key, "")
                    text = st.text_input("Prefix lengths", key=text_key,
                                         max_chars=MAX_PREFIX_TEXT, placeholder="2,4",
                                         help="Increasing whole numbers: the parent of a code "
                                              "is its longest prefix of one of these lengths.")
                    if not text.strip():
                        st.info("Give the prefix lengths, such as 2,4.", icon=":material/info:")
                        ready = False
                        continue
                    listed, prefix = prefix_list(column, text)
                    used[column] = fits_codes(df, column, prefix)
                    lists.append(listed)
                    specs[column] = prefix
                elif kind == "file":
                    upload = st.file_uploader(
                        "Code list file (CSV or JSON)", type=["csv", "json"],
                        key=f"tables_h_file_{column}",
                        max_upload_size=uploads.widget_limit("json"),
                        help="CSV rows code,parent, or a JSON object {\"code\": \"parent\"}. "
                             "Read in memory, never stored.")
                    if upload is None:
                        st.info("Upload the code list file.", icon=":material/info:")
                        ready = False
                        continue
                    raw = upload.getvalue()
                    listed = file_list(column, upload.name, raw)
                    spec = compute.code_list(listed.digest, listed.text, raw)
                    used[column] = fits_codes(df, column, spec)
                    specs[column] = spec
                    lists.append(listed)
            except SdcInputError as err:
                st.error(f"Code list of {md(column)}: {md(err)}", icon=":material/error:")
                ready = False
        if lists and ready:
            held = {c: codes for c, codes in used.items() if codes is not None}
            note = unused_note({c: specs[c] for c in held}, held)
            st.caption(md("; ".join([*code_list_text(tuple(lists), specs),
                                     *([note] if note else [])])))
    return (tuple(lists), specs) if ready else None


def fits_codes(df: pd.DataFrame, column: str, spec: Hierarchy | Prefixes) -> list[str] | None:
    """The codes the column's table holds under ``spec`` (its levels, then their groups:
    :func:`sdc_core.tables.hierarchy.axis_tree`), once ``spec`` fits the column's codes as the
    table reads them (each a leaf of the list: :meth:`sdc_core.tables.hierarchy.Hierarchy.
    for_codes`, which refuses in one sentence); None for a column that cannot make a table
    (the methods say why)."""
    try:
        levels = level_codes(df[column], None)[1]
    except SdcInputError:
        return None
    return [*levels, *axis_tree(levels, spec.for_codes(column, levels))[0]]


def cross_tables() -> None:
    """The cross table of the current data set, by the three methods side by side (with code
    lists, by suppression); with tables added, the set published together by suppression."""
    ds = state.ensure_dataset()
    settings = cross_settings(ds)
    if settings is None:
        return
    tables = linked_set(settings.columns, added_tables(list(ds.df.columns)))
    given = code_lists(ds.df, linked_union(tables))
    if given is None:
        return
    lists, specs = given
    if len(tables) > 1:
        linked_tables(ds, replace(settings, code_lists=lists), tables, specs)
        return
    settings = replace(settings, code_lists=lists)
    st.subheader(md(table_title(settings)), anchor=False, divider="gray")
    size = table_size(ds.df, settings.columns)
    if size > LARGE_TABLE:
        st.warning(f"This table has {size:,} cells and margins: choosing its secondary cells "
                   "and auditing them may take a minute.", icon=":material/hourglass_top:")
    shown = []
    for method, column in zip(TABLE_METHODS, st.columns(3)):
        with column:
            shown.append(method_column(ds, settings, method, specs))
    if lists:
        st.caption("A table with code lists goes neither into the differencing part nor into "
                   "the report on the Export page: both take a table without one.")
        return
    if shown[0]:  # the report's "Published tables" section (Export page)
        state.set_cross_table_settings(settings.to_dict(), ds.dataset_id)
    differencing_part(ds, settings)
    st.caption("Each download has one row per cell and per margin (a margin's label is "
               "\"Total\"): the table's columns, the count (or sum; blank when hidden), its "
               "status (published, primary, secondary, perturbed) and the unit the rules "
               "counted (records, or distinct ids of the household column), as `python -m "
               "sdc_core tables DATA --cross A,B [--household ID] -o OUT.csv` writes it. The "
               "report on the Export page holds the last cross table shown here.")


st.title("Tables")
st.caption("Tables a steward may publish. **Answer counts** for a survey organiser: a question "
           "with fewer than Q responses is hidden, an option chosen by fewer than T people "
           "shows as \"less than T\", and non-response is published as an interval computed "
           "only from what is shown. **Cross tables with margins** of 1 to 3 columns, counts or "
           "sums, published by suppression, differential privacy and the cell key method side "
           "by side, with what each costs and protects.")
keep("w_tables_kind", ANSWERS, choices=list(PARTS))
kind = st.radio("Table", list(PARTS), horizontal=True, key="w_tables_kind")
if kind == ANSWERS:
    answer_counts()
else:
    cross_tables()
for widget_key in KEPT:  # for the next visit, a reload, the workspace file and a link
    state.keep_form_value(widget_key, state.widget(widget_key))

render_sidebar()
