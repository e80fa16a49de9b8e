"""Data page: load a table (upload or the built-in example), look at it, tag column roles."""

import pandas as pd
import streamlit as st

from sdc_core.io import SUPPORTED_EXTENSIONS
from sdc_core.roles import EXAMPLE_ROLES, Roles, suggest_roles
from ui import compute, state, upload
from ui.sidebar import render_sidebar
from ui.text import FINGERPRINT_HELP, md

st.title("Data")
st.caption("Load a table, check how each column was read, and tag the role each column plays "
           "in the release. The roles drive every other page.")

left, right = st.columns([3, 1], vertical_alignment="bottom")
uploaded = left.file_uploader(
    "Upload a table", type=[e.lstrip(".") for e in SUPPORTED_EXTENSIONS], key="uploader",
    help="CSV/TSV (delimiter and encoding detected), Excel .xlsx, Parquet, Stata .dta, "
         "SPSS .sav. The file is read in memory and never stored.")
if right.button("Load example: ACTG 175", icon=":material/science:", width="stretch"):
    state.load_example()
    st.session_state["upload_file_id"] = uploaded.file_id if uploaded else None

if uploaded is not None and uploaded.file_id != st.session_state.get("upload_file_id"):
    st.session_state["upload_file_id"] = uploaded.file_id
    upload.start(uploaded.getvalue(), uploaded.name)
if upload.error() and uploaded is not None:
    st.error(f"The file was not loaded: {upload.error()}", icon=":material/error:")

ds = state.ensure_dataset()
df = ds.df
st.subheader(ds.name, anchor=False)
c1, c2, c3 = st.columns(3)
c1.metric("Records", f"{len(df):,}")
c2.metric("Columns", df.shape[1])
c3.metric("Missing values", f"{int(df.isna().sum().sum()):,}")
if ds.is_example:
    st.caption("Example: the ACTG 175 AIDS trial data (speff2trial / UCI, CC BY 4.0), "
               "tagged as in the seed study: keys age, gender, race; sensitive treat.")

roles_tab, columns_tab, preview_tab = st.tabs(["Roles", "Columns", "Preview"])

with roles_tab:
    r = state.roles()
    columns = list(df.columns)
    numeric_cols = [c for c in columns if pd.api.types.is_numeric_dtype(df[c])
                    and not pd.api.types.is_bool_dtype(df[c])]
    state.bind("w_qi", r.qi)
    state.bind("w_sensitive", r.sensitive)
    state.bind("w_weight", r.weight)
    state.bind("w_numeric", r.numeric)
    state.bind("w_ignore", r.ignore)
    a, b = st.columns(2)
    qi = a.multiselect("Quasi-identifiers", columns, key="w_qi",
                       help="Columns an attacker could know from elsewhere (age, sex, region…): "
                            "records that share them form the equivalence classes.")
    sensitive = b.multiselect("Sensitive columns", columns, key="w_sensitive",
                              help="What must not be learnt about a person (diagnosis, "
                                   "treatment…): checked for l-diversity and for columns that "
                                   "give them away.")
    weight = a.selectbox("Sampling weight", [None] + numeric_cols, key="w_weight",
                         format_func=lambda c: "none" if c is None else str(c),
                         placeholder="none: the table is the whole population",
                         help="Survey weight: estimates population class sizes F_k for "
                              "sdcMicro's individual risk.")
    numeric = b.multiselect("Numeric columns for utility", numeric_cols, key="w_numeric",
                            help="Used for information loss (IL1) and correlation structure.")
    ignore = st.multiselect("Not released", columns, key="w_ignore",
                            help="Direct identifiers and anything dropped from the release.")
    new = Roles(qi=qi, sensitive=sensitive, weight=weight, numeric=numeric, ignore=ignore)
    state.set_roles(new)
    for problem in new.problems():
        st.warning(problem, icon=":material/warning:")
    if not qi:
        st.info("Tag at least one quasi-identifier to measure disclosure risk.",
                icon=":material/info:")
    if st.button("Reset to suggested roles", icon=":material/auto_fix_high:"):
        state.set_roles(EXAMPLE_ROLES if ds.is_example else suggest_roles(df, ds.kinds))
        for key in ("w_qi", "w_sensitive", "w_weight", "w_numeric", "w_ignore"):
            del st.session_state[key]
        st.rerun()

with columns_tab:
    r = state.roles()
    role_of = {c: "quasi-identifier" for c in r.qi}
    role_of.update({c: "sensitive" for c in r.sensitive})
    role_of.update({c: "not released" for c in r.ignore})
    if r.weight:
        role_of[r.weight] = "weight"
    summary = compute.column_profile(ds.dataset_id, df)
    summary.insert(1, "kind", [ds.kinds[c].value for c in df.columns])
    summary.insert(2, "role", [role_of.get(c, "numeric (utility)" if c in r.numeric else "")
                               for c in df.columns])
    st.dataframe(summary, hide_index=True, width="stretch")
    st.caption("Kinds are inferred: identifier = a distinct value on almost every record; "
               "categorical = text or at most 10 distinct numbers; date = date values.")

with preview_tab:
    st.dataframe(df.head(20), width="stretch")
    st.caption(f"The first 20 of {len(df):,} records (only a preview is sent to the browser).")
    st.caption(f"File SHA-256 {md(ds.dataset_id)}… (a hash of the file's bytes). "
               + FINGERPRINT_HELP)

render_sidebar()
