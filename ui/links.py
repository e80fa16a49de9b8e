"""Links that open a prepared state: the query parameters of a page's address name a built-in
data set, its roles, a recipe, the risk settings, a lesson and the view, e.g.

    http://host/lessons?data=household&qi=region,age,sex&recipe=eNqr…&k=3&lesson=coarsen

- ``data``: a built-in data set (:mod:`sdc_core.examples`);
- ``qi``, ``sensitive``, ``numeric``, ``ignore`` (comma-separated column names), ``weight`` and
  ``household``: only the roles that differ from the data set's own;
- ``recipe``: the Protect page's settings, the recipe ``{"seed", "steps"}`` as compact JSON,
  zlib-compressed, in URL-safe base64 without padding;
- ``tables``: the Tables page's settings (by widget key, :data:`ui.logic.cross_tables.
  TABLE_FIELDS`), packed as ``recipe`` is;
- ``k``, ``na``, ``alpha``: the risk settings that differ from the defaults;
- ``risk_view``: what the Risk page measures, when it is not the original (``protected``,
  ``both``);
- ``lesson``: a lesson of the Lessons page; ``view=projector``: the projector view.

The page is the address's path. A link never carries uploaded data: for an uploaded table or a
file on the server it holds no data set, roles, recipe nor Tables settings (their column names
and merge labels come from the data), only ``data=upload`` or ``data=server_file`` (which name
no file), the lesson, the risk settings, the Risk page's view and the view; the recipient is
told that the data could not travel with the link and what to load. A session reads its
address once, on its first run; a name that is missing (a data set, a column, a lesson) or a
value that cannot be read is reported, and the default is used instead.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from sdc_core.assess import RiskOptions
from sdc_core.errors import SdcInputError
from sdc_core.examples import DEFAULT_EXAMPLE, EXAMPLES, example
from sdc_core.recipe import parse_recipe
from sdc_core.roles import Roles
from ui import state
from ui.logic.groups import column_groups, offered_columns
from ui.logic.lessons import LESSONS
from ui.logic.protect import from_steps
from ui.logic.session import RISK_VIEWS
from ui.logic.workspace import TABLES_PREFIX, tables_fields

#: The query parameters a link may hold (Streamlit's own ``run`` is not one of them).
KEYS = ("data", "qi", "sensitive", "numeric", "ignore", "weight", "household", "recipe",
        "tables", "k", "na", "alpha", "risk_view", "lesson", "view")
#: What ``data`` says of a data set of the sender's own, which the link does not carry: what
#: the recipient must load to see what the sender saw.
OWN_DATA = {
    "upload": "the sender's own uploaded file, which a link never carries (uploaded data stays "
              "in the session it was loaded into); the built-in example is open instead: to "
              "see what the sender saw, get the same file from them and load it on the Data "
              "page (the link's risk settings, lesson and view are applied here)",
    "server_file": "a file the sender opened on the server, which a link does not carry; the "
                   "built-in example is open instead: to see what the sender saw, open the "
                   "same file under \"Open a file on the server\" on the Data page (the link's "
                   "risk settings, lesson and view are applied here)"}
_LISTS = ("qi", "sensitive", "numeric", "ignore")
#: The roles held by one column (or none)
_ONE = ("weight", "household")
_MAX_RECIPE = 100_000  # bytes of recipe JSON a link may unpack to
_OPENED = state.LINK_OPENED
_PROBLEMS = state.LINK_PROBLEMS


@dataclass(frozen=True)
class LinkState:
    """What a link opens. ``example``: a built-in data set (None: the default, and then no
    roles nor recipe); ``roles``: None for the data set's own; ``steps``: None for no recipe."""

    example: str | None = None
    roles: Roles | None = None
    steps: list[dict[str, Any]] | None = None
    seed: int = 42
    risk: RiskOptions = field(default_factory=RiskOptions)
    lesson: str | None = None
    projector: bool = False
    #: the Tables page's settings by widget key (None: none kept)
    tables: dict[str, Any] | None = None
    #: what the Risk page measures (:data:`~ui.logic.session.RISK_VIEWS`)
    risk_view: str = "original"
    #: with no ``example``, the kind of data of the sender's own (a key of :data:`OWN_DATA`)
    own: str | None = None


def _pack(data: dict[str, Any]) -> str:
    """``data`` as compact JSON, zlib-compressed, in URL-safe base64 without padding."""
    text = json.dumps(data, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return base64.urlsafe_b64encode(zlib.compress(text.encode("utf-8"), 9)).decode().rstrip("=")


def _unpack(text: str, what: str) -> dict[str, Any]:
    """The object :func:`_pack` made, read with at most :data:`_MAX_RECIPE` bytes unpacked;
    an :class:`SdcInputError` naming ``what`` when it cannot be read."""
    unreadable = SdcInputError(f"the {what} in the link cannot be read (is the link complete?)")
    unpack = zlib.decompressobj()
    try:
        raw = unpack.decompress(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)),
                                _MAX_RECIPE)
    except (binascii.Error, zlib.error, ValueError):
        raise unreadable from None
    if unpack.unconsumed_tail:
        raise SdcInputError(f"the {what} in the link unpacks to more than {_MAX_RECIPE:,} "
                            "bytes")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # not UTF-8 or JSON, nested deeper than Python's
        raise unreadable from None  # parser goes, or a number of more than 4,300 digits
    if not isinstance(data, dict):
        raise unreadable
    return data


def encode_recipe(steps: list[dict[str, Any]], seed: int) -> str:
    return _pack({"seed": int(seed), "steps": steps})


def decode_recipe(text: str, household: str | None = None) -> tuple[list[dict[str, Any]], int]:
    """The steps and seed of an encoded recipe, checked as a recipe file is
    (:func:`~sdc_core.recipe.parse_recipe`) with the link's household id (the roles'), which
    record swapping needs; the steps as a recipe file holds them."""
    data = _unpack(text, "recipe")
    recipe = parse_recipe({"version": 1, "seed": data.get("seed", 42),
                           "steps": data.get("steps", []), "household": household})
    return recipe.to_dict()["steps"], recipe.seed


def to_query(link: LinkState) -> dict[str, str]:
    """The query parameters of ``link``: only what differs from the defaults."""
    query: dict[str, str] = {}
    if link.example is None and link.own is not None:
        query["data"] = link.own
    if link.example is not None:
        query["data"] = link.example
        own = example(link.example).roles
        if link.roles is not None:
            for name in _LISTS:
                if getattr(link.roles, name) != getattr(own, name):
                    query[name] = ",".join(getattr(link.roles, name))
            for name in _ONE:
                if getattr(link.roles, name) != getattr(own, name):
                    query[name] = getattr(link.roles, name) or ""
        if link.steps:
            query["recipe"] = encode_recipe(link.steps, link.seed)
        if link.tables:
            query["tables"] = _pack(link.tables)
    default = RiskOptions()
    for f in fields(RiskOptions):
        value = getattr(link.risk, f.name)
        if value != getattr(default, f.name):
            query[f.name] = str(value)
    if link.risk_view != "original":
        query["risk_view"] = link.risk_view
    if link.lesson is not None:
        query["lesson"] = link.lesson
    if link.projector:
        query["view"] = "projector"
    return query


def _risk(params: Mapping[str, str], problems: list[str]) -> RiskOptions:
    default = RiskOptions()
    k, na, alpha = default.k, params.get("na", default.na), default.alpha
    try:
        k = int(params.get("k", default.k))
        if not 1 <= k <= 1000:
            raise ValueError
    except ValueError:
        problems.append(f"the threshold k '{params['k']}' is not a whole number from 1 to 1000; "
                        f"k = {default.k} is used")
        k = default.k
    if na not in ("wildcard", "category"):
        problems.append(f"'{na}' is not a way to treat missing key values (wildcard or "
                        "category); wildcard is used")
        na = default.na
    try:
        alpha = float(params.get("alpha", default.alpha))
        if not 0 <= alpha <= 1:
            raise ValueError
    except ValueError:
        problems.append(f"α '{params['alpha']}' is not a number from 0 to 1; α = 1 is used")
        alpha = default.alpha
    return RiskOptions(k, na, alpha)


def _roles(params: Mapping[str, str], own: Roles, columns: Sequence[str],
           problems: list[str]) -> Roles | None:
    if not any(name in params for name in (*_LISTS, *_ONE)):
        return None
    chosen = {name: [c for c in params[name].split(",") if c] if name in params
              else getattr(own, name) for name in _LISTS}
    one = {name: (params[name] or None) if name in params else getattr(own, name)
           for name in _ONE}
    missing = [c for c in dict.fromkeys(sum(chosen.values(), []) + [c for c in one.values() if c])
               if c not in columns]
    if missing:
        problems.append(f"the data set has no column {', '.join(map(repr, missing))}; its own "
                        "roles are used")
        return None
    return Roles(qi=chosen["qi"], sensitive=chosen["sensitive"], numeric=chosen["numeric"],
                 ignore=chosen["ignore"], weight=one["weight"], household=one["household"])


def _steps(text: str, columns: Sequence[str], problems: list[str],
           household: str | None = None) -> tuple[list[dict[str, Any]] | None, int]:
    try:
        steps, seed = decode_recipe(text, household)
        from_steps(steps, seed)  # the Protect page can show it
    except SdcInputError as err:
        problems.append(f"{err}; the Protect page opens with no method on")
        return None, 42
    named = [c for s in steps for c in ([s["column"]] if "column" in s else s.get("columns")
                                        or s.get("hierarchy", []))]
    missing = [c for c in dict.fromkeys(named) if c not in columns]
    if missing:
        problems.append(f"the recipe names the column {', '.join(map(repr, missing))}, which "
                        "the data set does not have; the Protect page opens with no method on")
        return None, 42
    return steps, seed


def _tables(text: str, problems: list[str]) -> dict[str, Any] | None:
    """The Tables page's settings of a link, checked as a workspace file's are
    (:func:`ui.logic.workspace.tables_fields`); None, with the problem, when they cannot be
    used."""
    try:
        return tables_fields(_unpack(text, "Tables page's settings"), "the link's tables")
    except SdcInputError as err:
        problems.append(f"{err}; the Tables page opens with its defaults")
        return None


def read_link(params: Mapping[str, str],
              columns: Callable[[str], Sequence[str]]) -> tuple[LinkState, list[str]]:
    """The state a link's parameters describe, and what in them could not be used (each a
    sentence). ``columns(key)`` gives the column names of a built-in data set."""
    problems: list[str] = []
    key = params.get("data")
    roles, steps, seed, tables, own = None, None, 42, None, None
    if key in OWN_DATA:
        own = key
        problems.append(f"this link was made on {OWN_DATA[key]}")
        key = None
    elif key is not None and key not in EXAMPLES:
        problems.append(f"there is no built-in data set '{key}' (there are "
                        f"{', '.join(EXAMPLES)}); a link carries only these, never uploaded "
                        "data: the default data set is open, with its own roles and no method "
                        "on; for a file of your own, load it on the Data page")
        key = None
    if key is not None:
        names = list(columns(key))
        roles = _roles(params, example(key).roles, names, problems)
        if "recipe" in params:
            steps, seed = _steps(params["recipe"], names, problems,
                                 (roles or example(key).roles).household)
        if "tables" in params:
            tables = _tables(params["tables"], problems)
    lesson = params.get("lesson")
    if lesson is not None and lesson not in LESSONS:
        problems.append(f"there is no lesson '{lesson}'; the Lessons page opens at the first")
        lesson = None
    view = params.get("view")
    if view not in (None, "projector"):
        problems.append(f"there is no view '{view}' (there is projector); the usual view is "
                        "used")
    risk_view = params.get("risk_view", "original")
    if risk_view not in RISK_VIEWS:
        problems.append(f"the Risk page has no view '{risk_view}' (there are "
                        f"{', '.join(RISK_VIEWS)}); it measures the original")
        risk_view = "original"
    return LinkState(key, roles, steps, seed, _risk(params, problems), lesson,
                     view == "projector", tables or None, risk_view, own), problems


def example_columns(key: str) -> list[str]:
    """The column names of a built-in data set (its file's header)."""
    return [str(c) for c in pd.read_csv(example(key).path, nrows=0).columns]


def open_link() -> bool:
    """On a session's first run, open the state its address describes (a fresh session: there
    is nothing of the user's to replace), and say whether there was one. What could not be
    used waits in :func:`problems`."""
    if st.session_state.get(_OPENED):
        return False
    st.session_state[_OPENED] = True
    params = {k: st.query_params[k] for k in KEYS if k in st.query_params}
    if not params:
        return False
    link, found = read_link(params, example_columns)
    state.load_example(link.example or DEFAULT_EXAMPLE)
    if link.roles is not None:
        state.set_roles(link.roles)
    if link.steps is not None:
        groups = column_groups(state.ensure_dataset(), state.roles())
        try:  # whole or not at all: the roles decide which columns each method is offered
            settings = from_steps(link.steps, link.seed, offered_columns(groups, state.roles()))
        except SdcInputError as err:
            found.append(f"{err}; the Protect page opens with no method on")
        else:
            state.set_protect_settings(settings, reseed_widgets=True)
    for widget_key, value in (link.tables or {}).items():
        state.keep_form_value(widget_key, value)
    state.set_risk_options(link.risk)
    state.set_risk_view(link.risk_view)
    state.set_lesson(link.lesson)
    state.set_projector(link.projector)
    st.session_state[_PROBLEMS] = found
    return True


def problems() -> list[str]:
    """What the link this session was opened with named but could not be used, once."""
    return st.session_state.pop(_PROBLEMS, [])


def current() -> LinkState:
    """The session's state, as a link can carry it."""
    ds = state.current_dataset()
    built_in = ds.example if ds is not None else None
    own = None if ds is None or built_in else "server_file" if ds.source else "upload"
    settings = state.protect_settings()
    steps = settings.steps(state.roles().qi) if built_in else None
    tables = state.kept_form_values(TABLES_PREFIX) if built_in else None
    return LinkState(built_in, state.roles() if built_in else None, steps or None,
                     settings.seed, state.risk_options(), state.lesson(), state.projector(),
                     tables or None, state.risk_view(), own)


def address(query: Mapping[str, str]) -> str:
    """The address of this page, as the browser sees the server, with ``query``."""
    base = st.context.url or ""
    return base + ("?" + urlencode(query, safe=",") if query else "")
