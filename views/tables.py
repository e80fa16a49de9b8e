"""Response tables: what a survey organiser may be shown, with small counts suppressed."""

import pandas as pd
import streamlit as st

from sdc_core.errors import SdcInputError
from sdc_core.io import table_bytes
from sdc_core.tables import (
    audit,
    naive_publication,
    pet_survey,
    question_counts,
    response_table,
)
from ui import state
from ui.logic.text import md
from ui.sidebar import render_sidebar

st.title("Response tables")
st.caption("Answer counts for an organiser, safe for small groups: a question with fewer than "
           "Q responses is hidden, an option chosen by fewer than T people shows as "
           "\"less than T\", and non-response is published as an interval computed only from "
           "what is shown, so it gives nothing away.")

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
            st.warning(f"Hidden: fewer than {int(q)} responses.", icon=":material/visibility_off:")
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

render_sidebar()
