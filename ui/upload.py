"""Loading an upload with visible progress, and finishing it when the user leaves the page.

An upload is first kept as *pending* (its bytes in this session's memory, never on disk), then
read in stages shown in a status box: reading the file, detecting column kinds, suggesting roles,
computing risk on the suggested keys. Before any of it the server's memory budget must admit
what the table will take (:mod:`ui.infra.memory`); the file is read in a child process whose
memory is capped at what the session may take (:func:`read`), never in the server. Streamlit
stops a script run when the user changes page; the entry point then calls
:func:`finish_pending` on the new page, so a large upload is never dropped silently: it goes on
loading there, with the same messages, from the table already read if reading had finished.
"""

from __future__ import annotations

from contextlib import suppress

import pandas as pd
import streamlit as st

from sdc_core import capped
from sdc_core.data.io import infer_kinds, read_table
from sdc_core.errors import SdcInputError
from sdc_core.roles import suggest_roles
from ui import compute, state
from ui.infra import memory, uploads, warmup
from ui.logic.session import content_id
from ui.logic.text import md

_PENDING = "pending_upload"
_ERROR = "upload_error"


@warmup.preload
def _start_reader() -> None:
    """Start the process that forks the capped readers before the first upload needs it."""
    capped.start()


def _sample(raw: bytes, name: str) -> pd.DataFrame:
    """The estimate's sample (at most :data:`~ui.infra.memory.SAMPLE_BYTES` of text), read
    here."""
    return read_table(raw, name, max_cell=memory.max_cell())


def start(raw: bytes, name: str) -> None:
    """Keep an upload to load (replacing any other not yet loaded) and load it now, if the
    server's memory budget admits it (:mod:`ui.infra.memory`); else say why it was refused."""
    st.session_state.pop(_ERROR, None)
    try:
        need = memory.upload_need(raw, name, _sample)
    except SdcInputError as err:
        st.session_state[_ERROR] = str(err)
        return
    refused = memory.LEDGER.admit(state.session_id(), need, memory.budget())
    if refused:
        st.session_state[_ERROR] = refused
        return
    st.session_state[_PENDING] = {"raw": raw, "name": name}
    finish_pending(resumed=False)


def read(raw: bytes, name: str) -> pd.DataFrame:
    """The table of an admitted upload, read in a child process whose memory is capped
    (:func:`sdc_core.capped.read_capped`): first at what the session reserved when it was
    admitted; if it needs more, at all the room the session may still take, reserved at once
    (:meth:`~ui.infra.memory.Ledger.grow`). The table read is then admitted at its own
    footprint, since the estimate may have said less; a refusal raises
    :class:`~sdc_core.errors.SdcInputError`."""
    session, limit = state.session_id(), memory.budget()
    allowance = memory.table_allowance(session, raw)
    try:
        df = capped.read_capped(raw, name, cap=memory.LEDGER.reserved(session),
                                max_table=allowance, max_cell=memory.max_cell())
    except capped.OverCap:
        df = capped.read_capped(raw, name, cap=memory.LEDGER.grow(session, limit),
                                max_table=allowance, max_cell=memory.max_cell())
    refused = memory.LEDGER.admit(session, memory.held_bytes(df), limit)
    if refused:
        raise SdcInputError(f"{name}: {refused}")
    return df


def say_refused_arrival() -> None:
    """Say, once, why this session's last upload was dropped as it arrived: its bytes did not
    fit in the server's memory budget (:mod:`ui.infra.uploads`), so its uploader has no file."""
    refused = uploads.take_refusal(state.session_id())
    if refused:
        st.error(f"The file was not received: {md(refused)}", icon=":material/error:")


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
            df = pending.get("df")  # read before the user changed page
            if df is None:
                status.write("Reading the file…")
            if df is None:
                df = pending["df"] = read(raw, name)  # kept if the run is stopped now
            status.write(f"Detecting column kinds of {len(df):,} records × {df.shape[1]} "
                         "columns…")
            kinds = infer_kinds(df)
            status.write("Suggesting column roles…")
            ds = state.install(df, name, content_id(raw, name), kinds, suggest_roles(df, kinds))
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
