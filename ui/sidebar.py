"""The sidebar every page ends with: the teaching controls (projector view, a link to this
state), the current data set and its roles."""

import streamlit as st

from ui import guard, links, state
from ui.infra import memory, pace
from ui.logic.text import FINGERPRINT_HELP, SAMPLE_ID_HELP, md, md_list


def render_sidebar(lesson_data: str | None = None) -> None:
    """The sidebar; on the Lessons page ``lesson_data`` names the data the lesson in front of
    the learner works on, which the sidebar shows in place of the session's data set."""
    ds = state.current_dataset()
    if ds is None:
        return
    r = state.roles()
    with st.sidebar:
        teaching_controls(ds.name if ds.example else None)
        if lesson_data is not None and lesson_data != ds.name:
            st.markdown(f"**This lesson's data:** {md(lesson_data)}")
            st.caption(f"The lessons bring their own data. The other pages work on "
                       f"{md(ds.name)}, which stays as it is.")
            return
        st.markdown(f"**This lesson's data:** {md(ds.name)}" if lesson_data is not None
                    else f"**{md(ds.name)}**")
        source = ds.source
        if source is None:
            st.caption(f"{len(ds.df):,} records × {ds.df.shape[1]} columns · file SHA-256 "
                       f"`{ds.short_id}…`", help=FINGERPRINT_HELP)
        else:
            st.caption(f"{len(ds.df):,} records × {ds.df.shape[1]} columns · "
                       f"{'sample' if source.is_sample else 'file'} id `{ds.short_id}…`",
                       help=SAMPLE_ID_HELP)
            if source.is_sample:
                st.caption(f":material/filter_alt: **A sample**: {source.sampled:,} of the "
                           f"{source.total:,} records of {md(source.path)} (seed "
                           f"{source.seed}). Every page works on the sample; the Data page "
                           "gives the whole file's risk.")
        st.markdown(f"Quasi-identifiers: {md_list(r.qi)}  \nSensitive: {md_list(r.sensitive)}"
                    f"  \nWeight: {md(r.weight) if r.weight else '—'}"
                    + (f"  \nHousehold: {md(r.household)}" if r.household else ""))
        if st.user.get("is_logged_in", False):
            st.button(f"Sign out {st.user.get('email') or ''}".strip(),
                      on_click=guard.guarded(st.logout), icon=":material/logout:",
                      key="sign_out")
        sessions, total = memory.LEDGER.total()
        own = ("This built-in data set is held once by the server for every session: it "
               "takes nothing of its memory for this session" if ds.example else
               f"This data set takes about "
               f"{memory.size_text(memory.LEDGER.held(state.session_id()))} of the server's "
               "memory")
        st.caption(f":material/memory: {own}; {sessions} session{'s' if sessions != 1 else ''} "
                   f"hold{'s' if sessions == 1 else ''} data of "
                   f"{'its' if sessions == 1 else 'their'} own, and with the built-in data sets "
                   f"{memory.size_text(total)} of its {memory.size_text(memory.budget())} "
                   "budget is taken.")
        st.caption("Data stays in this session's memory; nothing is stored or sent anywhere."
                   if source is None else "Read from the server's data directory, never "
                   "written; the records read stay in this session's memory.")


def _projector_changed() -> None:
    state.set_projector(st.session_state["w_projector"])


def teaching_controls(built_in: str | None) -> None:
    """The projector view's toggle, and the link that opens this page in this state (for a
    built-in data set ``built_in``; an uploaded one is never in a link)."""
    # set on every run, not seeded once: a widget's identity includes its page, so the toggle
    # of the page before would leave this page's toggle at its default
    st.session_state["w_projector"] = state.projector()
    st.toggle("Projector view", key="w_projector", on_change=guard.guarded(_projector_changed),
              help="Larger type and only the main figures, readable from the back of a room.")
    share_link(built_in)


#: The popover that shows the link (its open state is a widget's, so opening it reruns
#: :func:`share_link`).
LINK_POPOVER = "w_share_link"


@st.fragment
def share_link(built_in: str | None) -> None:
    """The link that opens this page in this state, built when its popover is opened.

    The sidebar is drawn by a page's full run, but a page part that reruns on its own (the
    Protect page's controls and results, ``st.fragment``) changes the settings without
    drawing the sidebar again: a link written then would carry the settings of the last full
    run. Opening the popover reruns this fragment, which reads the session's state as it is
    at that moment. Its run on its own is timed as a page's is (:func:`ui.infra.pace.timed`)."""
    with (pace.timed(state.session_id()),
          st.popover("Copy link to this state", icon=":material/link:", width="stretch",
                     key=LINK_POPOVER, on_change="rerun")):
        st.code(links.address(links.to_query(links.current())), language=None,
                wrap_lines=True)
        if built_in:
            st.caption(f"Opens this page with {md(built_in)}, its roles, the Protect page's "
                       "settings, the Tables page's settings, the risk settings, the Risk "
                       "page's view, the lesson and the view, in a new session of its own: "
                       "project it, and a class lands in the same place. The link holds "
                       "settings, not data.")
        else:
            st.caption("Your data set is your own file: uploaded data cannot travel in a link, "
                       "nor can its roles or settings (they name its columns). The link opens "
                       "this page on the built-in example with the risk settings, the Risk "
                       "page's view, the lesson and the view, and tells the recipient that it "
                       "was made on a file of yours: they must load the same file on the Data "
                       "page themselves (send it another way, if they may have it).")
