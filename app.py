"""The dashboard's entry point: page setup and navigation.

Run with ``make run`` (or ``streamlit run app.py``). Pages live in ``views/``, not ``pages/``:
Streamlit would also serve a ``pages/`` folder as pages of their own, run without this entry
point. An address's query parameters may open a prepared state (``ui.links``). An error a page
did not expect becomes a message for that session only
(``ui.page.page_failed``). Each page ends with the shared sidebar (``ui.sidebar``); shared
state is in ``ui.state``; all computation is in ``sdc_core``.

This file is read twice. ``streamlit run app.py`` first imports it as a module (``app``), finds
the ``st.App`` at its end and serves it: Streamlit's server with the security headers of
``ui.infra.server`` on every response. Each session then runs it as ``__main__``: the page setup of
:func:`pages` (as ``AppTest.from_file`` does, which never imports it).
"""

from pathlib import Path

import streamlit as st

#: The page icon, served by the app itself (a Material icon name made the browser fetch it
#: from Google's font service)
ICON = Path(__file__).resolve().parent / "ui" / "assets" / "icon.png"


def pages() -> None:
    """A session's run: the page setup, the navigation and the page asked for, timed for the
    teacher's view of the class (``ui.infra.pace``)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    from ui.infra import pace, warmup

    ctx = get_script_run_ctx()
    with pace.timed(ctx.session_id if ctx is not None else None):
        warmup.visitor()  # the server's warm-up gives way to the pages from now on
        run_page()


def run_page() -> None:
    """The page setup, the navigation and the page asked for."""
    from ui.page import begin_run, page_failed

    st.set_page_config(page_title="SDC workbench: disclosure risk and utility",
                       page_icon=str(ICON), layout="wide")
    try:
        begin_run()
        st.navigation([
            st.Page("views/data.py", title="Data", icon=":material/table_view:", default=True),
            st.Page("views/risk.py", title="Risk", icon=":material/warning:"),
            st.Page("views/protect.py", title="Protect", icon=":material/shield:"),
            st.Page("views/tradeoffs.py", title="Trade-offs", icon=":material/scatter_plot:"),
            st.Page("views/rr_lab.py", title="Randomized response lab",
                    icon=":material/casino:"),
            st.Page("views/tables.py", title="Tables", icon=":material/ballot:"),
            st.Page("views/export.py", title="Export", icon=":material/download:"),
            st.Page("views/lessons.py", title="Lessons", icon=":material/school:"),
        ]).run()
    except Exception as err:  # anything else a page raised: Streamlit's own stop/rerun pass by
        page_failed(err)


if __name__ == "__main__":  # a session's run (Streamlit runs the script as __main__)
    pages()
else:  # the server's import: the app it serves (found by its name and its st.App call)
    from ui.infra import pace, server, warmup
    from ui.infra.server import middleware

    server.install()  # the headers on the answers the server makes without the app
    pace.install()  # when each request for a run arrives, for the teacher's view of the class
    app = st.App(Path(__file__).resolve(), middleware=middleware())
    warmup.start()  # the pages' modules, the example and a worker, before the first visitor
