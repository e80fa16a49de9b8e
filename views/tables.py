"""Tables: answer counts for a survey organiser with small counts suppressed, and cross tables
with margins published by suppression, differential privacy and the cell key method side by
side (docs/tables.md)."""

import pandas as pd
import streamlit as st

from sdc_core.crosstab import level_codes
from sdc_core.errors import SdcInputError
from sdc_core.io import table_bytes
from sdc_core.table_release import TABLE_METHODS
from sdc_core.tables import (
    audit,
    naive_publication,
    pet_survey,
    question_counts,
    response_table,
)
from ui import compute, state
from ui.logic.cross_tables import (
    LARGE_TABLE,
    METHOD_TITLES,
    SUMS_REFUSED,
    CrossSettings,
    audit_text,
    ckm_text,
    dp_text,
    file_name,
    nonresponse_text,
    protection_rows,
    published_frame,
    rule_text,
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

ANSWERS, CROSS = "Answer counts", "Cross table with margins"

st.title("Tables")
st.caption("Tables a steward may publish. **Answer counts** for a survey organiser: a question "
           "with fewer than Q responses is hidden, an option chosen by fewer than T people "
           "shows as \"less than T\", and non-response is published as an interval computed "
           "only from what is shown. **Cross tables with margins** of 1 to 3 columns, counts or "
           "sums, published by suppression, differential privacy and the cell key method side "
           "by side, with what each costs and protects.")
kind = st.radio("Table", [ANSWERS, CROSS], horizontal=True, key="w_tables_kind")


#: The most levels the differencing part offers to merge
MAX_DIFF_LEVELS = 200


def answer_counts() -> None:
    """Seed 004's answer counts, their audit and the download."""
    source = st.radio("Data", ["Current data set", "Example: the pet survey (100 participants)"],
                      horizontal=True, key="w_tables_source")
    ds = state.ensure_dataset()
    df = ds.df if source == "Current data set" else pet_survey()

    c1, c2, c3, c4 = st.columns(4)
    q = c1.number_input("Question threshold Q", 1, 1000, 10, key="w_tables_q",
                        help="Hide a question with fewer responses than this.")
    t = c2.number_input("Option threshold T", 1, 1000, 5, key="w_tables_t",
                        help="Show an option's count only when at least this many chose it.")
    n = c3.number_input("Participants N", len(df), 10_000_000, len(df), key=f"w_tables_n_{len(df)}",
                        help="Everyone invited to answer; defaults to the number of rows.")
    multi = c4.toggle("Multi-select cells", key="w_tables_multi",
                      help="Each cell lists the chosen options, separated by the delimiter.")
    delimiter = c4.text_input("Delimiter", ";", key="w_tables_delim", max_chars=3,
                              disabled=not multi)

    default = ["favourite animal"] if source != "Current data set" else [
        c for c, k in ds.kinds.items() if k.value == "categorical"][:2]
    questions = st.multiselect("Question columns", list(df.columns),
                               default=[c for c in default if c in df.columns],
                               key=f"w_tables_questions_{source[:7]}")
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
    """The cross table's controls; None until a column is chosen."""
    df = ds.df
    kinds = {c: k.value for c, k in ds.kinds.items()}
    categorical = [c for c in df.columns if kinds.get(c) == "categorical"]
    numeric = measure_columns(ds, state.roles())  # never the household id
    c1, c2 = st.columns([3, 2])
    columns = c1.multiselect("Table columns (1 to 3)", list(df.columns),
                             default=categorical[:2], max_selections=3, key="w_tables_cross",
                             help="The first column's levels are the rows of a 2-way table, "
                                  "the second's its columns; every margin and the grand "
                                  "total are published too.")
    sum_column = c2.selectbox("Sum of", [None, *numeric], key="w_tables_cross_sum",
                              format_func=lambda c: "— (count the records)" if c is None
                              else str(c),
                              help="A magnitude table: the sum of this column per cell.")
    r1, r2, r3, r4, r5 = st.columns(5)
    if sum_column is None:
        t = r1.number_input("Threshold T", 1, 1000, 5, key="w_tables_cross_t",
                            help="Suppression's primary rule: a count below T is hidden.")
        rule = rule_text("threshold", threshold=int(t))
    else:
        which = r1.radio("Primary rule", ["p", "dominance"], key="w_tables_cross_rule",
                         format_func={"p": "p %", "dominance": "dominance (n, k)"}.get,
                         help="p %: a cell is hidden when the second-largest contributor "
                              "could estimate the largest's amount within p %. Dominance: "
                              "when the n largest contributors hold more than k % of the "
                              "cell's sum.")
        if which == "p":
            p = r2.number_input("p (%)", 0.1, 100.0, 10.0, key="w_tables_cross_p")
            rule = rule_text("p", p=float(p))
        else:
            n = r2.number_input("n", 1, 10, 2, key="w_tables_cross_n")
            k = r2.number_input("k (%)", 1.0, 100.0, 85.0, key="w_tables_cross_k")
            rule = rule_text("dominance", n=int(n), k=float(k))
    counts_only = sum_column is not None
    eps = r3.number_input("DP ε", 0.01, 100.0, 1.0, 0.1, key="w_tables_eps",
                          disabled=counts_only,
                          help="Differential privacy: the privacy loss of each published "
                               "count; smaller is more private and noisier.")
    seed = r4.number_input("Seed", 0, 2**31 - 1, 0, key="w_tables_seed", disabled=counts_only,
                           help="Of the DP noise and of the cell key method's record keys.")
    threshold = r5.number_input("Cell key threshold", 1, 1000, 10, key="w_tables_ckm_t",
                                disabled=counts_only,
                                help="The cell key method: a published count below it is "
                                     "blank, the rest rounded to 5.")
    if not columns:
        st.info("Choose 1 to 3 table columns.", icon=":material/info:")
        return None
    return CrossSettings(tuple(columns), sum_column, rule, float(eps), int(seed), int(threshold))


def method_column(ds: Dataset, settings: CrossSettings, method: str) -> bool:
    """One method's table, utility, protection and downloads; whether it was published."""
    st.subheader(METHOD_TITLES[method], anchor=False)
    if method not in settings.methods():
        st.info(SUMS_REFUSED, icon=":material/block:")
        return False
    try:
        with st.spinner("Publishing the table…"):
            made = compute.cross_table(ds.dataset_id, settings.columns, settings.sum_column, method,
                                       settings.rule, settings.epsilon, settings.seed,
                                       settings.threshold, ds.df)
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
        st.caption(dp_text(made))
        st.caption(nonresponse_text(made, len(ds.df)))
    else:
        st.caption(ckm_text(made, settings.threshold))
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
        column = st.selectbox("Column", list(settings.columns), key="w_tables_diff_column",
                              format_func=str)
        try:
            levels = level_codes(ds.df[column], None)[1][:MAX_DIFF_LEVELS]  # the table's text
        except SdcInputError:  # the column cannot make a table: the methods above say why
            return
        merged = st.multiselect("Levels merged in the second table", levels,
                                key=f"w_tables_diff_levels_{column}")
        if len(merged) < 2:
            st.info("Choose two or more levels to merge.", icon=":material/info:")
            return
        for method, col in zip(TABLE_METHODS, st.columns(3)):
            if method not in settings.methods():
                continue
            with col:
                st.markdown(f"**{METHOD_TITLES[method]}**")
                try:
                    result = compute.differencing(ds.dataset_id, settings.columns, column,
                                                  tuple(merged), method, settings.rule,
                                                  settings.epsilon, settings.seed,
                                                  settings.threshold, ds.df)
                except SdcInputError as err:
                    st.error(md(err), icon=":material/error:")
                    continue
                st.caption(md(result.summary()))


def cross_tables() -> None:
    """The cross table of the current data set, by the three methods side by side."""
    ds = state.ensure_dataset()
    settings = cross_settings(ds)
    if settings is None:
        return
    st.subheader(md(table_title(settings)), anchor=False, divider="gray")
    size = table_size(ds.df, settings.columns)
    if size > LARGE_TABLE:
        st.warning(f"This table has {size:,} cells and margins: choosing its secondary cells "
                   "and auditing them may take a minute.", icon=":material/hourglass_top:")
    shown = []
    for method, column in zip(TABLE_METHODS, st.columns(3)):
        with column:
            shown.append(method_column(ds, settings, method))
    if shown[0]:  # the report's "Published tables" section (Export page)
        state.set_cross_table_settings(settings.to_dict(), ds.dataset_id)
    differencing_part(ds, settings)
    st.caption("Each download has one row per cell and per margin (a margin's label is "
               "\"Total\"): the table's columns, the count (or sum; blank when hidden) and its "
               "status (published, primary, secondary, perturbed), as `python -m sdc_core "
               "tables DATA --cross A,B -o OUT.csv` writes it. The report on the Export page "
               "holds the last cross table shown here.")


if kind == ANSWERS:
    answer_counts()
else:
    cross_tables()

render_sidebar()
