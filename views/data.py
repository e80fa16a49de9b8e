"""Data page: load a table (upload or the built-in example), look at it, tag column roles."""

import pandas as pd
import streamlit as st

from sdc_core.errors import SdcInputError
from sdc_core.io import SUPPORTED_EXTENSIONS
from sdc_core.roles import EXAMPLE_ROLES, Roles, suggest_roles
from ui import compute, server_files, state, upload
from ui.sidebar import render_sidebar
from ui.text import FINGERPRINT_HELP, SAMPLE_ID_HELP, md, md_list

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

root = server_files.data_dir()  # only when the operator sets SDC_DATA_DIR
if root is not None:
    with st.expander("Open a file on the server", icon=":material/dns:"):
        st.caption(f"For tables too big to upload: a Parquet or CSV file, or a directory of "
                   f"parts, in the server's data directory {md(root)}. At most "
                   f"{server_files.SAMPLE_LIMIT:,} records are read into the session (a larger "
                   "file is sampled); the risk of the whole file is computed where it lies, "
                   "with DuckDB. The file is only read, never changed.")
        found = server_files.listing(root) if root.is_dir() else []
        if not root.is_dir():
            st.warning(f"{server_files.ENV_VAR} names {md(root)}, which is not a directory.",
                       icon=":material/warning:")
        elif not found:
            st.caption("No Parquet or CSV file, nor directory of them, was found there.")
        # keys without the "w_" prefix: opening a file installs a data set, which clears the
        # "w_" widgets after these were drawn
        current = state.server_file()
        opened = current.path.name + "/" * current.path.is_dir() if current else None
        if st.session_state.get("srv_pick") not in found:
            st.session_state.pop("srv_pick", None)  # gone from the directory since
        state.bind("srv_pick", opened if opened in found else (found[0] if found else None))
        state.bind("srv_path", "")
        state.bind("srv_seed", current.seed if current else 0)
        a, b = st.columns([3, 1])
        pick = a.selectbox("File or directory of parts", found, key="srv_pick",
                           placeholder="nothing found")
        typed = a.text_input("Or a path inside the directory", key="srv_path",
                             placeholder="e.g. 2024/census.parquet",
                             help="Relative to the data directory; used instead of the choice "
                                  "above when given. Paths that lead outside it are refused.")
        seed = b.number_input("Sample seed", 0, 2**31 - 1, key="srv_seed",
                              help="Which records a large file's sample holds: the same seed "
                                   "always gives the same records.")
        if b.button("Open the file", icon=":material/folder_open:", key="srv_open",
                    width="stretch"):
            if server_files.open_file(root, typed.strip() or pick or "", int(seed)):
                st.session_state["upload_file_id"] = uploaded.file_id if uploaded else None

ds = state.ensure_dataset()
df = ds.df
source = ds.source
st.subheader(ds.name, anchor=False)
c1, c2, c3 = st.columns(3)
c1.metric("Records in the sample" if source and source.is_sample else "Records", f"{len(df):,}")
c2.metric("Columns", df.shape[1])
c3.metric("Missing values", f"{int(df.isna().sum().sum()):,}")
if ds.is_example:
    st.caption("Example: the ACTG 175 AIDS trial data (speff2trial / UCI, CC BY 4.0), "
               "tagged as in the seed study: keys age, gender, race; sensitive treat.")
if source and source.is_sample:
    st.info(f"This is a sample: {source.sampled:,} of the {source.total:,} records of "
            f"{md(source.path)} on the server, chosen by seed {source.seed} (the same seed "
            "always gives the same records). Every page works on the sample. The box below "
            "these tabs gives the risk of the whole file, and the Export page the command that "
            "protects the whole file.", icon=":material/filter_alt:")
elif source:
    st.caption(f"All {source.total:,} records of {md(source.path)}, read on the server.")

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
    if source:
        st.caption(f"{'Sample' if source.is_sample else 'File'} id {md(ds.dataset_id)}… "
                   + SAMPLE_ID_HELP)
    else:
        st.caption(f"File SHA-256 {md(ds.dataset_id)}… (a hash of the file's bytes). "
                   + FINGERPRINT_HELP)

if source:
    with st.container(border=True):
        st.subheader("Risk of the whole file", anchor=False)
        r = state.roles()
        opts = state.risk_options()
        if not r.qi:
            st.caption("Tag quasi-identifiers above to compare the risk of the sample with "
                       "the risk of the whole file.")
        else:
            try:
                now = server_files.stamp(source.path)
            except (SdcInputError, OSError):
                now = None
            if now != source.stamp:
                st.warning(f"{md(source.path.name)} has changed on the server since it was "
                           "opened (or is gone): the sample no longer matches it. Open it "
                           "again.", icon=":material/warning:")
            key = (str(source.path), now, tuple(r.qi), r.weight, opts.k, opts.na, opts.alpha)
            whole = state.whole_file_risk(key)
            if now is not None and st.button("Compute the risk of the whole file (DuckDB)",
                                             icon=":material/database:", key="srv_risk"):
                with st.spinner(f"DuckDB reads all {source.total:,} records…"):
                    try:
                        whole = server_files.whole_file_risk(*key)
                    except SdcInputError as err:
                        st.error(f"The risk of the whole file was not computed: {err}",
                                 icon=":material/error:")
                    else:
                        state.set_whole_file_risk(key, whole)
            try:
                sample = compute.profile(ds.dataset_id, tuple(r.qi), r.weight, opts.k,
                                         opts.na, opts.alpha, df).summary()
            except SdcInputError as err:
                st.error(f"The risk of the sample was not computed: {err}",
                         icon=":material/error:")
            else:
                st.dataframe(server_files.figures_table(sample, whole, opts.k),
                             hide_index=True, width="stretch")
            st.caption(
                f"Quasi-identifiers {md_list(r.qi)}"
                + (f", weight {md(r.weight)}" if r.weight else ", no weight")
                + f"; threshold k = {opts.k}, missing keys "
                + ("match any value" if opts.na == "wildcard" else "are a category of their own")
                + " (set on the Risk page). " + (
                    "A sample's classes are smaller than the whole file's, so its shares of "
                    "unique and small-class records are higher; the whole file's figures are "
                    "those of a release of the whole file." if source.is_sample else ""))

render_sidebar()
