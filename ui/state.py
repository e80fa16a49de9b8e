"""The session's shared state, behind one small interface.

Everything the pages share lives in ``st.session_state`` under the keys below, as plain values
(not widget keys, which Streamlit deletes when their page is not shown); the values' types are
defined in :mod:`ui.logic.session` (no Streamlit). A page never names ``st.session_state``: it
goes through the accessors here, and through the widget helpers (:func:`bind`, :func:`widget`,
:func:`has_widget`, :func:`set_widget`, :func:`forget_widgets`) for its own widgets' keys
(docs/architecture.md, "Where state lives"). Uploaded data stays in memory: nothing here
writes to disk.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd
import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from sdc_core.assess import RiskOptions
from sdc_core.data.io import Kind, infer_kinds, read_table
from sdc_core.examples import DEFAULT_EXAMPLE, example
from sdc_core.release_types import RELEASE_TYPES
from sdc_core.roles import Roles, carry_roles
from ui.infra import memory, warmup
from ui.infra.server import BROWSER_COOKIE, SERVER_RUN, issued_here
from ui.logic import lessons, workspace
from ui.logic.protect import ProtectSettings
from ui.logic.release_view import DEFAULT_TYPE
from ui.logic.session import (
    Applied,
    Dataset,
    History,
    Notice,
    ServerFile,
    Table,
    content_id,
)

_DATASET = "dataset"
_ROLES = "roles"
_WHOLE_FILE_RISK = "whole_file_risk"
_ANALYSES = "analyses"
_SAMPLING = "sampling"
_FREED = "dataset_freed"
_SWEEP = "sweep"
_SWEEP_RUNNING = "sweep_running"
_CHART_FORMAT = "chart_format"
_CROSS_TABLE = "cross_table"
_RELEASE_TYPE = "release_type"
_KEPT_FORM = "w_kept_"  # kept widget values between visits (Trade-offs form, Tables page)
#: The prefix of the pages' widget keys (and of the counts of their repeated rows): a new data
#: set or workspace drops them, and they re-seed from it (:func:`bind`)
WIDGET_PREFIX = "w_"
_RECIPE_STEPS = "recipe_steps_to_check"
_LAST_APPLIED = "protect_last_applied"
_RUN_PARAM = "run"  # the address names this server process (ui.infra.server.SERVER_RUN)
#: Set on a session's first run: whether a restart is still to be said
_RESTART_UNSAID = "restart_unsaid"
#: Set by :func:`ui.links.open_link` on a session's first run: a link was looked for
LINK_OPENED = "link_opened"
#: What the link a session was opened with could not use (:func:`ui.links.problems`)
LINK_PROBLEMS = "link_problems"


@dataclass(frozen=True)
class Value:
    """A value the session keeps in ``st.session_state``: its ``key`` (a ``*`` in it stands
    for any text: a family of keys, one for each uploader, chart or page part), whether a
    reload keeps it (``kept``: :mod:`ui.resume` moves it to the session taking the work over)
    and what it holds (``doc``)."""

    key: str
    kept: bool
    doc: str

    def names(self, key: str) -> bool:
        """Whether ``key`` is this value's key (or one of its family's)."""
        if "*" not in self.key:
            return key == self.key
        head, tail = self.key.split("*", 1)
        return len(key) >= len(head) + len(tail) and key.startswith(head) and key.endswith(tail)


#: Every value of the session's state, with its lifetime (docs/architecture.md, "Where state
#: lives"): those ``kept`` are what a reload takes over (:func:`kept_over_reload`), the others
#: last as long as the session. A page's own widgets (the widget helpers) are not values.
VALUES = (
    Value(_DATASET, True, "the open data set (ui.logic.session.Dataset)"),
    Value(_ROLES, True, "the columns' roles (sdc_core.roles.Roles)"),
    Value("protect", True, "the Protect page's settings (ui.logic.protect.ProtectSettings)"),
    Value("protect_history", True, "the Protect settings undo and redo go to (History)"),
    Value(_SWEEP, True, "the last sweep of the Trade-offs page"),
    Value("known", True, "the extra columns the linkage attack assumes known"),
    Value("risk_options", True, "the risk settings (sdc_core.assess.RiskOptions)"),
    Value(_WHOLE_FILE_RISK, True, "the risk of the whole server file last computed"),
    Value("lesson", True, "the lesson open on the Lessons page"),
    Value("lesson_values", True, "the settings of the lessons' controls"),
    Value("lessons_done", True, "the lessons whose task was met"),
    Value("projector", True, "whether the projector view is on"),
    Value(_CHART_FORMAT, True, "the format the charts' camera button saves"),
    Value("suda_dis_fraction", True, "the sampling fraction of SUDA's DIS score"),
    Value("risk_view", True, "what the Risk page measures"),
    Value(LINK_OPENED, True, "a link was looked for on the session's first run"),
    Value(_ANALYSES, True, "the open data set's benchmark analyses"),
    Value(_SAMPLING, True, "how the open data set was sampled from its population"),
    Value(_CROSS_TABLE, True, "the Tables page's last cross-table settings"),
    Value(_RELEASE_TYPE, True, "the release type chosen on the Protect page (a key of "
          "sdc_core.release_types.RELEASE_TYPES), which the Export page's pack takes"),
    Value(f"{_KEPT_FORM}*", True, "a kept widget value of the Trade-offs form or Tables page"),
    Value(_FREED, False, "why the server closed the session's data set, said once"),
    Value(_RESTART_UNSAID, False, "whether a server restart is still to be said"),
    Value(_SWEEP_RUNNING, False, "whether a sweep was started and has not ended"),
    Value(_RECIPE_STEPS, False, "the steps of the recipe file just loaded, checked once"),
    Value(_LAST_APPLIED, False, "the last Protect recipe whose results were drawn"),
    Value(LINK_PROBLEMS, False, "what the session's link could not use, said once"),
    Value("*_file_id", False, "the file an uploader last handled"),
    Value("*_message", False, "a notice kept for a part of a page"),
    Value("suda_requested*", False, "what SUDA2 of a release was asked for"),
    Value("*_clicked", False, "the last click on a chart handled"),
)


def kept_over_reload(key: str) -> bool:
    """Whether a reload keeps the session value ``key`` (a declared value, :data:`VALUES`,
    that is ``kept``)."""
    return any(v.kept and v.names(key) for v in VALUES)


def session_id() -> str:
    """Streamlit's id of this browser session."""
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "no-session"


def browser() -> str | None:
    """The browser this session runs in: its :data:`~ui.infra.server.BROWSER_COOKIE`, which the
    server sets on the page before the session's websocket opens (None outside a server)."""
    try:
        value = st.context.cookies.get(BROWSER_COOKIE)
    except Exception:  # no request behind this run (a bare script)
        return None
    return value if isinstance(value, str) else None  # (a test's stand-in runtime: not one)


def current_dataset() -> Dataset | None:
    """The session's data set; None when there is none, or when the server freed it (the
    session idle too long: then :func:`freed_notice` says so once)."""
    ds = st.session_state.get(_DATASET)
    if ds is not None and ds.table.df is None:
        del st.session_state[_DATASET]
        st.session_state[_FREED] = memory.LEDGER.freed(session_id()) or (
            f"{ds.name} was closed by the server to free memory")
        return None
    return ds


def freed_notice() -> str | None:
    """Why the session's data set was closed by the server, once."""
    return st.session_state.pop(_FREED, None)


def restarted_since() -> bool:
    """Whether the session's address named an earlier server process on its first run (the
    server restarted under an open page) and that has not been said yet (:func:`restart_said`):
    a first run stopped before its notice was drawn (a click while the new server's slow first
    run went on) leaves the notice to the next run. Every run leaves the address naming this
    process (a change of page clears it)."""
    seen = st.query_params.get(_RUN_PARAM)
    if seen != SERVER_RUN:
        st.query_params[_RUN_PARAM] = SERVER_RUN
    if _RESTART_UNSAID not in st.session_state:  # the session's first run
        named = browser()  # a browser this process named was not open before the restart:
        st.session_state[_RESTART_UNSAID] = (  # its address was copied from one that was
            seen is not None and seen != SERVER_RUN
            and not (named is not None and issued_here(named)))
    return st.session_state[_RESTART_UNSAID]


def restart_said() -> None:
    """The run got past the restart notice (drawn, or not wanted): no later run repeats it."""
    st.session_state[_RESTART_UNSAID] = False


def keep_alive() -> list[str]:
    """This session is in use: note it, and free the data of the sessions unused for the idle
    window, connected or not (a closed tab's work waits that long to be taken over by a reload,
    :mod:`ui.resume`); give the sessions freed."""
    memory.LEDGER.touch(session_id())
    idle = memory.idle_seconds()
    return memory.LEDGER.prune(memory.is_active, idle, grace=idle)


def install(df: pd.DataFrame, name: str, dataset_id: str, kinds: dict[str, Kind],
            suggested: Roles, source: ServerFile | None = None) -> Dataset:
    """Make an uploaded table (or one read from a file on the server, ``source``) the current
    data set: with the roles of the data set before when it is the same table in another file
    (the same column names, :func:`sdc_core.roles.carry_roles`), else with the ``suggested``
    roles; the notice ``roles`` says which, and why (:func:`ui.logic.workspace.carried_notice`).
    """
    before, held = current_dataset(), roles()
    columns = list(before.df.columns) if before is not None else []
    carried, why = carry_roles(held, columns, df) if before is not None else (None, [])
    ds = Dataset(Table(df), name, dataset_id, kinds, source=source)
    _install(ds, carried or suggested)
    said = workspace.carried_notice(before.name, name, columns, list(df.columns),
                                    carried is not None, why) if before is not None else None
    if said is not None:
        set_notice("roles", said.kind, said.text)
    return ds


def server_file() -> ServerFile | None:
    """Where the current data set was read on the server, if it was."""
    ds = current_dataset()
    return ds.source if ds is not None else None


@st.cache_resource(show_spinner=False)
def _example_table(key: str) -> tuple[pd.DataFrame, str, dict[str, Kind], int]:
    """A built-in data set as read, its id, its column kinds and its table's bytes: read once
    for every session (each opens with one), shared and never changed."""
    raw = example(key).path.read_bytes()
    df = read_table(raw, example(key).path.name)
    return (df, content_id(raw, example(key).path.name), infer_kinds(df),
            memory.memory_bytes(df))


@warmup.preload
def _read_default_example() -> None:
    """Read before the first visitor by the server's warm-up: every session opens with it."""
    _example_table(DEFAULT_EXAMPLE)


@warmup.positions
def _lesson_positions() -> Iterator[Callable[[], object]]:
    """Every position of the lessons' sliders, made by the server's warm-up before the first
    visitor (:func:`ui.logic.lessons.slider_positions`): a class moving a lesson's slider
    together finds each one made."""
    return lessons.slider_positions()


def load_example(key: str = DEFAULT_EXAMPLE) -> Dataset:
    """Make a built-in data set the current one, with its roles. The table is the one the
    server holds for every session: the memory ledger counts it once, for the server
    (:func:`ui.infra.memory.share_built_in`), and the session gives up the entry of any data of its
    own it held."""
    df, dataset_id, kinds, table_bytes = _example_table(key)
    memory.share_built_in(key, table_bytes, df)
    ds = Dataset(Table(df), example(key).name, dataset_id, dict(kinds), example=key)
    _install(ds, example(key).roles)
    return ds


def ensure_dataset() -> Dataset:
    """The current data set; on a session's first run, the built-in example."""
    return current_dataset() or load_example()


def _install(ds: Dataset, roles: Roles) -> None:
    if ds.is_example:  # held once for every session (load_example): nothing of its own
        memory.LEDGER.release(session_id())
    else:
        memory.LEDGER.hold(session_id(), memory.held_bytes(ds.df), ds.name, ds.table)
    st.session_state[_DATASET] = ds
    set_roles(roles)
    set_analysis_spec(example(ds.example).analyses or None if ds.example else None)
    set_sampling({})
    st.session_state.pop("protect", None)
    st.session_state.pop("protect_history", None)
    st.session_state.pop(_SWEEP, None)
    st.session_state.pop("known", None)
    st.session_state.pop(_WHOLE_FILE_RISK, None)
    forget_widgets(prefix=WIDGET_PREFIX)  # widgets re-seed from the new data set's roles


def analysis_spec() -> dict[str, Any] | None:
    """The benchmark analyses of the open data set (a spec of
    :func:`sdc_core.utility.analysis.parse_spec`, already checked against its columns), None
    when there are none."""
    return st.session_state.get(_ANALYSES)


def set_analysis_spec(spec: dict[str, Any] | None) -> None:
    st.session_state[_ANALYSES] = spec


def sampling() -> dict[str, float]:
    """How the open data set was sampled from its population, as the Risk page was told:
    ``{"sampling_fraction": f}`` or ``{"population_size": N}``, or empty (then, with a weight
    column, N is the weights' sum; without one, no population figures:
    :func:`sdc_core.risk.population_risk.sampling`)."""
    return dict(st.session_state.get(_SAMPLING, {}))


def sampling_key() -> tuple[tuple[str, float], ...]:
    """:func:`sampling` as the cached computations take it (``given`` of
    :func:`ui.compute.population` and :func:`ui.compute.workbench`)."""
    return tuple(sorted(sampling().items()))


def set_sampling(given: dict[str, float]) -> None:
    st.session_state[_SAMPLING] = dict(given)


def whole_file_risk(key: tuple) -> dict | None:
    """The risk of the whole server file last computed in this session, if it was computed for
    ``key`` (the file's stamp, the roles and the risk options)."""
    stored = st.session_state.get(_WHOLE_FILE_RISK)
    return stored["result"] if stored and stored["key"] == key else None


def set_whole_file_risk(key: tuple, result: dict) -> None:
    st.session_state[_WHOLE_FILE_RISK] = {"key": key, "result": result}


def roles() -> Roles:
    return st.session_state.get(_ROLES, Roles())


def set_roles(r: Roles) -> None:
    st.session_state[_ROLES] = r


def bind(widget_key: str, value: object) -> None:
    """Seed a keyed widget once from the plain state (never through a changing ``default``)."""
    if widget_key not in st.session_state:
        st.session_state[widget_key] = value


def add_one(key: str) -> None:
    """Count one more (a widget callback: e.g. one more row of a repeated control)."""
    st.session_state[key] = st.session_state.get(key, 0) + 1


def count(key: str) -> int:
    """What :func:`add_one` counted under ``key`` from its seed (:func:`bind`; none: 0)."""
    return int(st.session_state.get(key, 0))


_REQUIRED: Any = object()


def widget(key: str, default: Any = _REQUIRED) -> Any:
    """The value of the widget keyed ``key`` (drawn by the page, or the one whose callback
    runs); ``default`` when it holds none (not drawn yet, or dropped with its page), and
    without ``default`` a ``KeyError`` then."""
    if default is _REQUIRED:
        return st.session_state[key]
    return st.session_state.get(key, default)


def has_widget(key: str) -> bool:
    """Whether the widget keyed ``key`` holds a value (seeded, or set by the user)."""
    return key in st.session_state


def set_widget(key: str, value: object) -> None:
    """Set the value of the widget keyed ``key``: before it is drawn in the run, or in a
    callback (after it is drawn Streamlit refuses the change)."""
    st.session_state[key] = value


def forget_widgets(*keys: str, prefix: str | None = None) -> None:
    """Drop the values of the widgets keyed ``keys``, and of every one whose key starts with
    ``prefix``: each re-seeds when it is drawn next (:func:`bind`)."""
    under = [] if prefix is None else [k for k in st.session_state if str(k).startswith(prefix)]
    for key in [*keys, *under]:
        st.session_state.pop(key, None)


def risk_options() -> RiskOptions:
    return st.session_state.get("risk_options", RiskOptions())


def set_risk_options(o: RiskOptions) -> None:
    st.session_state["risk_options"] = o


def known_columns(df: pd.DataFrame) -> list[str]:
    """Extra columns the linkage attack assumes an attacker knows: those still in ``df`` and
    not tagged as quasi-identifiers since (a key is known anyway)."""
    keys = set(roles().qi)
    return [c for c in st.session_state.get("known", []) if c in df.columns and c not in keys]


def set_known_columns(columns: list[str]) -> None:
    st.session_state["known"] = list(columns)


def protect_settings() -> ProtectSettings:
    return st.session_state.get("protect", ProtectSettings())


#: How many earlier Protect settings undo can go back to.
UNDO_DEPTH = 100
#: A burst of changes of one control is one undo step: changes of the control that last moved
#: less than this many seconds after its previous change, or after the results of that change
#: were drawn (:func:`settle_protect`), join its step. Ten presses on a number field's + are
#: one step, however many of them the server took in one run; a change after a pause, or of
#: another control, is a step of its own.
BURST_SECONDS = 2.0


def protect_history() -> History:
    return st.session_state.get("protect_history", History())


def _reseed_protect_widgets() -> None:
    forget_widgets(prefix=f"{WIDGET_PREFIX}p_")


def set_protect_settings(p: ProtectSettings, reseed_widgets: bool = False,
                         source: str | None = None) -> None:
    """Store the Protect page's settings; the ones they replace can be undone when the recipe
    changes (a column chosen for a method still off makes no step of its own), in one step with
    the changes before it of the same control, ``source`` (its widget key), in a burst
    (:data:`BURST_SECONDS`). ``reseed_widgets`` when they come from elsewhere (a recipe, a
    trade-off row), so that the page's widgets show them."""
    current = protect_settings()
    qi = roles().qi

    def recipe(s: ProtectSettings) -> tuple[list[dict[str, Any]], int]:
        return s.steps(qi), s.seed
    if recipe(p) != recipe(current):
        h = protect_history()
        now = time.monotonic()
        if source is None or source != h.source or now - h.at >= BURST_SECONDS:
            h = History((h.past + (current,))[-UNDO_DEPTH:], (), source, now)  # a new step
        elif h.past and recipe(h.past[-1]) == recipe(p):
            # the burst is back where it began: no step at all; the next change starts another
            h = History(h.past[:-1])
        else:  # the burst's step holds the settings before it already
            h = History(h.past, (), source, now)
        st.session_state["protect_history"] = h
    st.session_state["protect"] = p
    if reseed_widgets:
        _reseed_protect_widgets()


def settle_protect() -> None:
    """The results of the current settings have been drawn: a burst of changes of one control
    goes on from the first drawing after its last change (a run of several seconds does not
    split it; a later redrawing, an expander opened, does not prolong it)."""
    h = protect_history()
    if h.source is not None and not h.drawn:
        st.session_state["protect_history"] = replace(h, at=time.monotonic(), drawn=True)


def undo_protect() -> None:
    """Back to the settings before the current ones (a button's callback)."""
    h = protect_history()
    if h.past:
        st.session_state["protect_history"] = History(h.past[:-1],
                                                      h.future + (protect_settings(),))
        st.session_state["protect"] = h.past[-1]
        _reseed_protect_widgets()


def redo_protect() -> None:
    """Forward to the settings last undone (a button's callback)."""
    h = protect_history()
    if h.future:
        st.session_state["protect_history"] = History(h.past + (protect_settings(),),
                                                      h.future[:-1])
        st.session_state["protect"] = h.future[-1]
        _reseed_protect_widgets()


def reset_protect() -> None:
    """Every method off, the seed kept (a button's callback; undo brings them back)."""
    set_protect_settings(ProtectSettings(seed=protect_settings().seed), reseed_widgets=True)


def lesson() -> str | None:
    """The lesson open on the Lessons page (None: the first)."""
    return st.session_state.get("lesson")


def set_lesson(key: str | None) -> None:
    st.session_state["lesson"] = key


def lesson_values() -> dict[str, Any]:
    """The settings of the lessons' controls, by widget key (kept while the page is away)."""
    return st.session_state.setdefault("lesson_values", {})


def lessons_done() -> set[str]:
    """The lessons whose task this session has met."""
    return st.session_state.setdefault("lessons_done", set())


def projector() -> bool:
    """Whether the projector view is on (larger type, fewer figures)."""
    return bool(st.session_state.get("projector", False))


def set_projector(on: bool) -> None:
    st.session_state["projector"] = bool(on)


def workspace_text() -> str:
    """The workspace file of this session's work (:mod:`ui.logic.workspace`)."""
    ds = ensure_dataset()
    settings = protect_settings()
    return workspace.to_json(ds.name, len(ds.df), list(ds.df.columns), ds.dataset_id, roles(),
                             settings.steps(roles().qi), settings.seed, risk_options(),
                             known_columns(ds.df), kept_form_values(workspace.FORM_PREFIX),
                             analysis_spec(), sampling(),
                             kept_form_values(workspace.TABLES_PREFIX))


def open_workspace(text: str | bytes) -> str | None:
    """Apply a workspace file to the open data set, all of it or nothing (an
    :class:`~sdc_core.errors.SdcInputError` says why); give how the data set differs from the
    one it was saved with, if it does."""
    ds = ensure_dataset()
    ws = workspace.read(text, list(ds.df.columns))
    forget_widgets(prefix=WIDGET_PREFIX)  # widgets (and the kept Trade-offs form) re-seed from it
    set_roles(ws.roles)
    set_protect_settings(ws.settings, reseed_widgets=True)
    set_risk_options(ws.risk)
    set_known_columns(ws.known)
    for key, value in {**ws.tradeoffs, **ws.tables}.items():
        keep_form_value(key, value)
    if ws.analyses is not None:
        set_analysis_spec(ws.analyses)
    set_sampling(ws.sampling)
    st.session_state.pop(_SWEEP, None)
    return workspace.difference(ws.data, ds.name, len(ds.df), ds.dataset_id)


# The values pages share, or keep from one run to the next, each read and written here only
# (docs/architecture.md, "Where state lives"); a page's own widgets it reads and sets by their
# keys, through the widget helpers above (bind, widget, has_widget, set_widget, forget_widgets).


def sweep(dataset_id: str | None = None) -> dict[str, Any] | None:
    """The last sweep of the Trade-offs page: ``{"result": SweepResult, "grid": dict,
    "dataset_id": str, "qi": list}``; with ``dataset_id``, only when it was run on that data
    set (the Export page's table and report take it)."""
    last = st.session_state.get(_SWEEP)
    if last is not None and dataset_id is not None and last["dataset_id"] != dataset_id:
        return None
    return last


def set_sweep(result: Any, grid: dict[str, Any], dataset_id: str, qi: list[str]) -> None:
    """Keep a finished sweep (:func:`sweep`)."""
    st.session_state[_SWEEP] = {"result": result, "grid": grid, "dataset_id": dataset_id,
                                "qi": list(qi)}


def sweep_running() -> bool:
    """Whether a sweep was started and has not ended (a Cancel click stops its run before
    :func:`set_sweep_running` clears it)."""
    return bool(st.session_state.get(_SWEEP_RUNNING, False))


def set_sweep_running(running: bool) -> None:
    st.session_state[_SWEEP_RUNNING] = bool(running)


def chart_format() -> str:
    """The format the camera button of every chart saves ("png" or "svg"; the Export page
    sets it)."""
    return st.session_state.get(_CHART_FORMAT, "png")


def set_chart_format(fmt: str) -> None:
    st.session_state[_CHART_FORMAT] = fmt


def kept_form_value(key: str, default: Any) -> Any:
    """What the widget ``key`` of a page that keeps its settings (the Trade-offs form, the
    Tables page) held when the page was last shown (a page change drops a widget's state; a
    workspace file or a link sets it), else ``default``."""
    return st.session_state.get(f"{_KEPT_FORM}{key}", default)


def seed_kept(key: str, default: Any, options: list | None = None,
              choices: list | None = None) -> None:
    """Seed the widget ``key`` of a page that keeps its settings with what it held when the
    page was last shown (:func:`kept_form_value`: a page change drops a widget's state; a
    reload, a workspace file or a link brings it back), else ``default``; a multiselect's kept
    columns or levels no longer offered (``options``) are left out, and a kept choice not among
    ``choices`` gives way to the default."""
    value = kept_form_value(key, default)
    if options is not None:
        value = [v for v in value if v in options]
    if choices is not None and value not in choices:
        value = default
    bind(key, value)


def keep_form_value(key: str, value: Any) -> None:
    """Keep a widget's value (:func:`kept_form_value`) for the next visit, a reload, the
    workspace file and a link."""
    st.session_state[f"{_KEPT_FORM}{key}"] = value


def kept_form_values(prefix: str) -> dict[str, Any]:
    """The kept values (:func:`keep_form_value`) of the widgets whose keys start with
    ``prefix``, by widget key."""
    return {str(k)[len(_KEPT_FORM):]: v for k, v in st.session_state.items()
            if str(k).startswith(_KEPT_FORM + prefix)}


def risk_view() -> str:
    """What the Risk page measures: "original", "protected" or "both" (kept while the page is
    away, and by a session taken over)."""
    return st.session_state.get("risk_view", "original")


def set_risk_view(view: str) -> None:
    st.session_state["risk_view"] = view


def suda_dis_fraction() -> float:
    """The sampling fraction SUDA's DIS score assumes on the Risk page (kept as
    :func:`risk_view` is)."""
    return float(st.session_state.get("suda_dis_fraction", 0.01))


def set_suda_dis_fraction(fraction: float) -> None:
    st.session_state["suda_dis_fraction"] = float(fraction)


def cross_table_settings(dataset_id: str | None = None) -> dict[str, Any] | None:
    """The Tables page's last cross-table settings (:class:`ui.logic.cross_tables.
    CrossSettings` as a dict, with the ``dataset_id`` they were made on); with ``dataset_id``,
    only when they were made on that data set (the Export page's report takes them)."""
    last = st.session_state.get(_CROSS_TABLE)
    if last is not None and dataset_id is not None and last["dataset_id"] != dataset_id:
        return None
    return last


def set_cross_table_settings(settings: dict[str, Any], dataset_id: str) -> None:
    """Keep the cross-table settings last shown (:func:`cross_table_settings`)."""
    st.session_state[_CROSS_TABLE] = {**settings, "dataset_id": dataset_id}


def release_type() -> str:
    """The release type chosen on the Protect page (a key of
    :data:`sdc_core.release_types.RELEASE_TYPES`; by default the scientific-use file): the
    Export page's decision pack is made for it."""
    key = st.session_state.get(_RELEASE_TYPE)
    return key if key in RELEASE_TYPES else DEFAULT_TYPE


def set_release_type(key: str) -> None:
    """Choose the release type (:func:`release_type`); a key that names none is ignored."""
    if key in RELEASE_TYPES:
        st.session_state[_RELEASE_TYPE] = key


def _new(key: str, value: object) -> bool:
    """Whether ``value`` differs from the one last kept under ``key``; if it does, it is kept."""
    if st.session_state.get(key) == value:
        return False
    st.session_state[key] = value
    return True


def new_upload(slot: str, file_id: str) -> bool:
    """Whether the file in the uploader ``slot`` ("upload": the Data page's table, "workspace",
    "recipe") is not the one it last handled (a rerun shows the same file again); if it is
    not, it is now (:func:`upload_handled`)."""
    return _new(f"{slot}_file_id", file_id)


def upload_handled(slot: str, file_id: str | None) -> None:
    """Take ``file_id`` as the file the uploader ``slot`` last handled (None: none), so that
    :func:`new_upload` does not take it up (a data set loaded otherwise replaces its file's)."""
    st.session_state[f"{slot}_file_id"] = file_id


def set_notice(slot: str, kind: str, text: str) -> None:
    """Keep a message for a part of a page (``slot``) to show after a rerun: ``kind``
    "success", "warning" or "error", ``text`` Markdown (the user's text already escaped)."""
    st.session_state[f"{slot}_message"] = Notice(kind, text)


def notice(slot: str) -> Notice | None:
    """The message kept for ``slot`` (:func:`set_notice`), shown on every run until another
    replaces it."""
    return st.session_state.get(f"{slot}_message")


def take_notice(slot: str) -> Notice | None:
    """The message kept for ``slot`` (:func:`set_notice`), shown once: the next run has none."""
    return st.session_state.pop(f"{slot}_message", None)


def set_recipe_steps_to_check(steps: list[dict[str, Any]]) -> None:
    """The steps of a recipe file just loaded into the Protect settings: the page says which
    of them it has no control for (:func:`take_recipe_steps_to_check`)."""
    st.session_state[_RECIPE_STEPS] = list(steps)


def take_recipe_steps_to_check() -> list[dict[str, Any]] | None:
    """The steps of the recipe file loaded last, once (None: none since)."""
    return st.session_state.pop(_RECIPE_STEPS, None)


def last_applied(dataset_id: str) -> str | None:
    """The recipe of the last Protect settings whose results the page drew, if they were
    applied to the data set ``dataset_id`` (settings that do not apply fall back to them)."""
    last: Applied | None = st.session_state.get(_LAST_APPLIED)
    return last.recipe if last is not None and last.dataset_id == dataset_id else None


def set_last_applied(dataset_id: str, recipe: str) -> None:
    """The Protect page drew the results of ``recipe`` on the data set ``dataset_id``."""
    st.session_state[_LAST_APPLIED] = Applied(dataset_id, recipe)


def suda_requested(release: str, key: tuple) -> bool:
    """Whether SUDA2 of the Risk page's ``release`` (the suffix of its widgets' keys) was
    asked for on ``key`` (the data set and the quasi-identifiers), as a slow run is."""
    return st.session_state.get(f"suda_requested{release}") == key


def request_suda(release: str, key: tuple) -> None:
    """Ask for SUDA2 of ``release`` on ``key`` (:func:`suda_requested`)."""
    st.session_state[f"suda_requested{release}"] = key


def new_click(chart: str, row: int) -> bool:
    """Whether ``row`` is not the row of the last click on the chart keyed ``chart`` handled
    (a rerun reports the same selection again); if it is not, it is now."""
    return _new(f"{chart}_clicked", row)


def forget_click(chart: str) -> None:
    """Forget the last click on the chart keyed ``chart`` handled (its chart is redrawn)."""
    st.session_state.pop(f"{chart}_clicked", None)
