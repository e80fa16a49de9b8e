"""Loading an upload with visible progress, and finishing it when the user leaves the page.

An upload is first kept as *pending* (its bytes in this session's memory, never on disk), then
read in stages shown in a status box: reading the file, detecting column kinds, suggesting roles,
computing risk on the suggested keys. Before any of it the server's memory budget must admit
what the table will take (:mod:`ui.infra.memory`). Streamlit stops a script run when the user
changes
page; the entry point then calls :func:`finish_pending` on the new page, so a large upload is never
dropped silently: it goes on loading there, with the same messages, from the table already read
if reading had finished.
"""

from __future__ import annotations

from contextlib import suppress

import pandas as pd
import streamlit as st

from sdc_core.errors import SdcInputError
from sdc_core.io import infer_kinds, read_table
from sdc_core.roles import suggest_roles
from ui import compute, state
from ui.infra import memory
from ui.logic.session import content_id
from ui.logic.text import md

_PENDING = "pending_upload"
_ERROR = "upload_error"


def start(raw: bytes, name: str) -> None:
    """Keep an upload to load (replacing any other not yet loaded) and load it now, if the
    server's memory budget admits it (:mod:`ui.infra.memory`); else say why it was refused."""
    st.session_state.pop(_ERROR, None)
    whole: dict[str, pd.DataFrame] = {}

    def read(r: bytes, n: str) -> pd.DataFrame:
        df = read_table(r, n, max_cell=memory.max_cell())
        if len(r) == len(raw):  # a small file, read whole for the estimate: not read again
            whole["df"] = df
        return df

    try:
        need = memory.upload_need(raw, name, read)
    except SdcInputError as err:
        st.session_state[_ERROR] = str(err)
        return
    refused = memory.LEDGER.admit(state.session_id(), need, memory.budget())
    if refused:
        st.session_state[_ERROR] = refused
        return
    st.session_state[_PENDING] = {"raw": raw, "name": name, **whole}
    finish_pending(resumed=False)


def error() -> str | None:
    """Why the last upload was not loaded, if it was not."""
    return st.session_state.get(_ERROR)


def finish_pending(resumed: bool = True) -> None:
    """Load the pending upload, if any, showing each stage; ``resumed`` when it was started on
    another run (the user changed page while it loaded)."""
    pending = st.session_state.get(_PENDING)
    if not pending:
        return
    raw, name = pending["raw"], pending["name"]
    size = f"{len(raw) / 1e6:,.1f} MB" if len(raw) >= 1e5 else f"{len(raw):,} bytes"
    label = (f"Still loading {md(name)} ({size}), started before you changed page…" if resumed
             else f"Loading {md(name)} ({size})…")
    with st.status(label, expanded=True) as status:
        try:
            df = pending.get("df")  # a small file is read whole when it is admitted
            if df is None or not resumed:
                status.write("Reading the file…")
            if df is None:
                df = pending["df"] = read_table(  # kept if the run is stopped now
                    raw, name, max_table=memory.table_allowance(state.session_id(), raw),
                    max_cell=memory.max_cell())
            status.write(f"Detecting column kinds of {len(df):,} records × {df.shape[1]} "
                         "columns…")
            kinds = infer_kinds(df)
            status.write("Suggesting column roles…")
            ds = state.install(df, name, content_id(raw), kinds, suggest_roles(df, kinds))
            roles = state.roles()
        except Exception as err:  # noqa: BLE001 — a failed upload is dropped, never retried
            st.session_state.pop(_PENDING, None)
            memory.LEDGER.cancel(state.session_id())
            st.session_state[_ERROR] = str(err) if isinstance(err, SdcInputError) else (
                f"{name}: could not be loaded (an unexpected {type(err).__name__}); the "
                "data set you had is kept")
            status.update(label=f"{md(name)} was not loaded", state="error", expanded=False)
            return
        st.session_state.pop(_PENDING, None)
        if roles.qi:
            status.write("Computing risk on the suggested quasi-identifiers…")
            opts = state.risk_options()
            # a warm cache for the Risk page, which says why when the roles do not fit
            with suppress(SdcInputError):
                compute.profile(ds.dataset_id, tuple(roles.qi), roles.weight, opts.k, opts.na,
                                opts.alpha, df)
        status.update(label=f"Loaded {md(name)}: {len(df):,} records × {df.shape[1]} columns",
                      state="complete", expanded=False)
