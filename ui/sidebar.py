"""The sidebar every page ends with: the current data set and its roles."""

import streamlit as st

from ui import state
from ui.text import FINGERPRINT_HELP, md, md_list


def render_sidebar() -> None:
    ds = state.current_dataset()
    if ds is None:
        return
    r = state.roles()
    with st.sidebar:
        st.markdown(f"**{md(ds.name)}**")
        st.caption(f"{len(ds.df):,} records × {ds.df.shape[1]} columns · file SHA-256 "
                   f"`{ds.dataset_id}…`", help=FINGERPRINT_HELP)
        st.markdown(f"Quasi-identifiers: {md_list(r.qi)}  \nSensitive: {md_list(r.sensitive)}"
                    f"  \nWeight: {md(r.weight) if r.weight else '—'}")
        st.caption("Data stays in this session's memory; nothing is stored or sent anywhere.")
