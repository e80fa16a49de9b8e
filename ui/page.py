"""What the pages share: the run's prologue (:func:`begin_run`), the analysis pages' context
(:func:`context`: the data set, its roles and the risk options, or a stop when a page needs
quasi-identifiers and none is tagged), metric places, error reporting and table columns."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd
import streamlit as st

from sdc_core.assess import RiskOptions
from sdc_core.errors import SdcInputError
from sdc_core.roles import Roles
from ui import compute, guard, links, resume, state, upload
from ui.infra import memory, pace, workers
from ui.logic.groups import ColumnGroups, column_groups, geography_suggestions
from ui.logic.session import Dataset, Notice
from ui.logic.text import column_label, md
from ui.logic.tiles import STYLE as TILES_CSS
from ui.logic.tiles import Tile, tiles_html
from ui.sidebar import render_sidebar

#: A metric's label, value and change wrap instead of being cut with "…", in every view: three
#: metrics side by side beside the Protect page's controls are about 140 px wide at 1280×800,
#: narrower than a measure's one name ("Linkage attack re-identifications"), which is kept the
#: same everywhere rather than shortened for the tiles. Words break at hyphens. With it, the
#: look of the tiles drawn as HTML (:data:`ui.logic.tiles.STYLE`), once a page.
METRIC_CSS = """<style>
[data-testid="stMetricLabel"], [data-testid="stMetricLabel"] *,
[data-testid="stMetricValue"], [data-testid="stMetricValue"] *,
[data-testid="stMetricDelta"], [data-testid="stMetricDelta"] * {
  white-space: normal !important; height: auto !important; overflow: visible !important;
  text-overflow: clip !important; overflow-wrap: break-word; hyphens: auto; }
[data-testid="stMetricDelta"] { max-width: 100%; }
</style>""" + TILES_CSS

#: The projector view: larger type everywhere (Streamlit sizes its type in rem), and larger
#: figures in the metrics, so that they read from the back of a room (they wrap as in every
#: view: :data:`METRIC_CSS`): a figure's type is sized to the window (48 px at 1280 px wide,
#: at most 2.6rem), and the tooltips of the help icons keep within the window.
PROJECTOR_CSS = """<style>
html { font-size: 22px; }
[data-testid="stMetricValue"] { font-size: clamp(1.6rem, 3.75vw, 2.6rem); }
[data-testid="stMetricLabel"] p { font-size: 1.05rem; font-weight: 600; }
.sdc-tiles .sdc-tile-value { font-size: clamp(1.6rem, 3.75vw, 2.6rem); }
.sdc-tiles .sdc-tile-label { font-size: 1.05rem; font-weight: 600; }
.sdc-tiles .sdc-tip { max-width: min(32rem, 90vw); }
[data-testid="stTooltipContent"] { max-width: min(32rem, 90vw) !important; }
[data-testid="stTooltipContent"], [data-testid="stTooltipContent"] * {
  white-space: normal !important; overflow-wrap: break-word; }
</style>"""


def begin_run() -> None:
    """What every run does before its page (the entry point calls it): say what a widget's
    callback failed with since the last run (:mod:`ui.guard`), report server settings
    that cannot be read, note that this session is in use (and free the data of idle ones),
    take over the work of the session the address's resume token names (a reload, a
    reconnection: a session's first run), finish an upload interrupted by a change of page, say
    why an upload was dropped as it arrived,
    open the state a link describes (a session's first run), make sure there is a data set,
    say so once when the server had freed this session's, let metrics wrap, and set the
    projector view's type."""
    if (failed := guard.failure()) is not None:
        change_failed(failed)
    for problem in memory.settings_problems() + workers.settings_problems():
        st.error(f"Server setting ignored (the default is used): {md(problem)}",
                 icon=":material/error:")
    require_sign_in()
    resume.REGISTRY.forget(state.keep_alive())
    resume.begin()
    upload.finish_pending()
    upload.say_refused_arrival()
    linked = links.open_link()
    state.ensure_dataset()
    for problem in links.problems():
        st.warning(f"The link names something that is not here: {md(problem)}.",
                   icon=":material/link_off:")
    st.html(METRIC_CSS)
    if state.projector():
        st.html(PROJECTOR_CSS)
    if notice := state.freed_notice():
        st.warning(f"{notice}. The example data set is open instead: load your file again to "
                   "go on.", icon=":material/hourglass_disabled:")
    restarted = state.restarted_since()
    expired = resume.expired_notice()
    if expired == "browser" and not restarted:
        st.info("This address belongs to a session of another browser: its work stays there "
                "(a copied or projected address never opens it). A fresh session is open here.",
                icon=":material/lock_person:")
    elif expired and not (linked or restarted):
        st.warning("The session this address belonged to has ended (unused for longer than "
                   f"{memory.idle_seconds() / 60:g} minutes, or it is open in another tab), so "
                   "its work cannot be taken over here. The example data set is open instead.",
                   icon=":material/hourglass_disabled:")
    if restarted and not linked:  # a link opens its own state again
        st.warning("The server was restarted since this page was opened, so the session "
                   "expired and the data that was open in it is gone. The example data set is "
                   "open instead: load your file again to go on.",
                   icon=":material/restart_alt:")
    state.restart_said()


def show_tiles(tiles: Sequence[Tile], main: Sequence[int], key: str,
               title: str | None = None, notes: Sequence[str] = ()) -> None:
    """Metric tiles as one element (:mod:`ui.logic.tiles`): as many side by side as the width
    holds, under ``title`` and over ``notes`` (Markdown-escaped texts, a paragraph each); a
    move redraws one element where a tile an element took fifteen (docs/deploying.md, "A
    class at once, measured"). In the projector view only those numbered in ``main``, the rest
    in a "More measures" expander, and the notes as a caption under both."""
    if not state.projector():
        st.html(tiles_html(tiles, title, notes, key))
        return
    st.html(tiles_html([t for i, t in enumerate(tiles) if i in main], title, (), key))
    more = [t for i, t in enumerate(tiles) if i not in main]
    if more:
        st.expander("More measures", icon=":material/add_chart:").html(
            tiles_html(more, None, (), key + "-more"))
    if notes:
        st.caption("\n\n".join(notes))


def show_notice(notice: Notice | None) -> None:
    """Show a message a part of a page kept across a rerun (:func:`ui.state.set_notice`), as
    its kind: success, warning or error."""
    if notice is None:
        return
    say, icon = {"success": (st.success, ":material/check:"),
                 "warning": (st.warning, ":material/warning:"),
                 "error": (st.error, ":material/error:")}[notice.kind]
    say(notice.text, icon=icon)


def page_failed(err: Exception) -> None:
    """The last resort for an error no page expected: say so to this session only, keep its
    data and settings, and log where it happened for the operator. The log has the traceback's
    frames and the error's type but not its message, which may quote the user's data."""
    guard.log_failure("a page", err)
    st.error(f"This page could not be shown: {guard.unexpected(err)}. Only this page of your "
             "session stopped: your "
             "data set and settings are kept, and no one else on the server is affected. Open "
             "another page, or change the setting that led here.", icon=":material/error:")


def change_failed(err: Exception) -> None:
    """What a widget's callback failed with (:func:`ui.guard.guarded`, which logged it), said
    once at the top of the page drawn after it, as :func:`page_failed` says a page's."""
    st.error(f"This change could not be made: {guard.unexpected(err)}. Your data set and "
             "settings are kept, and "
             "no one else on the server is affected. Try another setting, or open another "
             "page.", icon=":material/error:")


def guarded_part(body: Callable[..., Any]) -> Callable[..., Any]:
    """A part of a page that Streamlit may run on its own (``st.fragment``: outside the entry
    point's ``try``), guarded as a page is: an error it did not expect is said where the part
    is drawn (:func:`page_failed`) instead of Streamlit's traceback. Decorate the function
    before ``st.fragment`` wraps it. A run of the part on its own is timed as a run of the
    page is (:func:`ui.infra.pace.timed`; inside its page's run it is part of that run)."""

    @functools.wraps(body)
    def run(*args: Any, **kwargs: Any) -> Any:
        with pace.timed(state.session_id()):
            try:
                return body(*args, **kwargs)
            except Exception as err:  # Streamlit's rerun and stop are no Exception: they pass
                page_failed(err)
                return None

    return run


def sign_in_required() -> bool:
    """Whether the operator set up sign-in: an ``[auth]`` section in ``.streamlit/secrets.toml``
    (Streamlit's OIDC, ``st.login``; docs/deploying.md). Off without it."""
    return st.secrets.load_if_toml_exists() and "auth" in st.secrets


def require_sign_in() -> None:
    """With sign-in set up, stop every run of a signed-out visitor at a sign-in button (no
    data is loaded or shown before)."""
    if not sign_in_required() or st.user.get("is_logged_in", False):
        return
    st.title("Sign in")
    st.write("This server asks you to sign in with your organisation's account before you "
             "open any data.")
    st.button("Sign in", on_click=guard.guarded(st.login), icon=":material/login:",
              type="primary")
    st.stop()


@dataclass(frozen=True)
class PageContext:
    """What an analysis page works on, read once at its start: the session's data set, its
    roles and the risk options (a page that changes them reads them again after its
    widgets)."""

    ds: Dataset
    roles: Roles
    opts: RiskOptions

    @property
    def df(self) -> pd.DataFrame:
        """The data set's table."""
        return self.ds.df

    @property
    def qi(self) -> tuple[str, ...]:
        """The quasi-identifiers, as the cached computations take them."""
        return tuple(self.roles.qi)

    def groups(self) -> ColumnGroups:
        """The columns each method may take (:func:`ui.logic.groups.column_groups`)."""
        return column_groups(self.ds, self.roles)

    def geography(self) -> list[str]:
        """The columns record swapping suggests as its geography
        (:func:`ui.logic.groups.geography_suggestions`); none without a household id, or when
        the household id has a blank (the pages say so)."""
        household = self.roles.household
        if household is None:
            return []
        try:
            constant = compute.household_level(self.ds.dataset_id, household, self.df)
        except SdcInputError:
            return []
        return geography_suggestions(self.df, self.groups().categorical, household, constant)

    def known(self) -> list[str]:
        """The extra columns the linkage attack assumes known, as they are now
        (:func:`ui.state.known_columns`)."""
        return state.known_columns(self.df)


def context(title: str | None = None, purpose: str | None = None) -> PageContext:
    """The prologue of an analysis page: its ``title``, the session's data set (the example on
    a first run), roles and risk options; with a ``purpose`` ("to measure risk"), the page
    stops at a hint (and the sidebar) when no quasi-identifier is tagged
    (:func:`require_quasi_identifiers`)."""
    if title is not None:
        st.title(title)
    ds = state.ensure_dataset()
    ctx = PageContext(ds, state.roles(), state.risk_options())
    if purpose is not None:
        require_quasi_identifiers(ctx.roles, purpose)
    return ctx


def require_quasi_identifiers(roles: Roles, purpose: str) -> None:
    """Stop the page with a hint when no quasi-identifier is tagged."""
    if not roles.qi:
        st.info(f"Tag at least one quasi-identifier on the Data page {purpose}.",
                icon=":material/info:")
        render_sidebar()
        st.stop()


ColumnWidth = Literal["small", "medium", "large"]
"""A width ``st.column_config.Column`` accepts by name."""


def table_columns(table: pd.DataFrame, decimals: Mapping[str, str] | None = None,
                  labels: Mapping[str, str] | None = None,
                  widths: Mapping[str, ColumnWidth] | None = None) -> dict[str, Any]:
    """``st.dataframe``'s column settings for ``table``: each measure headed in words
    (:func:`ui.logic.text.column_label`, or ``labels`` for names too plain to label everywhere:
    ``count``, ``level``), for the columns in ``decimals`` its number format, and for those in
    ``widths`` a width ("medium", "large") that shows their text: a column is otherwise sized
    to its heading and first values, and longer text is cut."""
    decimals, labels, widths = decimals or {}, labels or {}, widths or {}

    def config(c: str) -> Any:
        label = labels.get(c, column_label(c))
        if c in decimals:
            return st.column_config.NumberColumn(label, format=decimals[c])
        return st.column_config.Column(label, width=widths.get(c))

    return {c: config(c) for c in table.columns
            if c in labels or column_label(c) != c or c in decimals or c in widths}
