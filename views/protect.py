"""Protect page: apply methods with sliders and watch risk and utility change, live."""

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypedDict

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from sdc_core import release_types
from sdc_core.errors import SdcInputError
from sdc_core.methods import Method, Param, registry
from sdc_core.methods.recode import as_json, as_text
from sdc_core.names import count_and_percent, label, name
from sdc_core.risk.linkage import ATTACKER_NAMES, ATTACKER_RULES, LinkageResult
from sdc_core.risk.population_risk import PopulationRisk
from sdc_core.utility import randomized_response_error
from ui import analyses, charts, compute, state
from ui.guard import guarded
from ui.infra import uploads
from ui.logic.deniability_view import (
    GAIN,
    MEANING,
    NO_SENSITIVE,
    NOTHING_PERTURBED,
    deniability_table,
    detail_note,
    household_summary,
    household_warnings,
    inference_note,
    inference_shown,
    matrix_table,
    nearly_constant_note,
    posterior_table,
    wide_matrix_text,
)
from ui.logic.figures import heatmap
from ui.logic.groups import (
    NO_GEOGRAPHY,
    ColumnGroups,
    geography_options,
    method_columns,
    method_defaults,
    offered_columns,
    same_levels,
)
from ui.logic.households import (
    PROTECT_TILES,
    household_attack_note,
    household_note,
    household_tiles,
)
from ui.logic.metrics import PROTECT_RISK, figures, risk_rows, utility_rows
from ui.logic.protect import (
    MAX_PAGE_SEED,
    PROFILES_EXAMPLE,
    ProtectSettings,
    chosen_param,
    describe,
    from_steps,
    full_step,
    in_words,
    page_methods,
    read_profiles,
    read_recipe_file,
    recipe_household_note,
    takes_whole,
)
from ui.logic.release_view import (
    TYPE_KEYS,
    status_line,
    type_caption,
    type_name,
    workbench_status,
)
from ui.logic.report import (
    IL1_READING,
    MODEL_NAMES,
    attackers_table,
    dankar_name,
    figure,
    figure_delta,
    loglinear_r2,
    sampling_text,
)
from ui.logic.synthetic_view import (
    SYNTHESIS_NOTE,
    SYNTHETIC_NOTE,
    disco_table,
    record_by_record,
    synthetic_rows,
)
from ui.logic.text import md, md_list, number
from ui.logic.tiles import Tile
from ui.logic.workbench import Workbench, recipe_json
from ui.page import PageContext, context, guarded_part, show_notice, show_tiles
from ui.release import attacker_candidates
from ui.sidebar import render_sidebar


def recipe_loader(ctx: PageContext, groups: ColumnGroups) -> None:
    """A recipe file to load into the settings (the columns ``groups`` offers), and whether it
    loaded."""
    with st.expander("Load a recipe", icon=":material/upload_file:"):
        upload = st.file_uploader("Recipe (JSON)", type=["json"], key="recipe_upload",
                                  max_upload_size=uploads.widget_limit("json"),
                                  help="A recipe exported from the Export page (or written by "
                                       "hand).")
        if upload is not None and state.new_upload("recipe", upload.file_id):
            try:
                recipe = read_recipe_file(upload.getvalue())
                # refuses a swap's other id
                note = recipe_household_note(recipe, ctx.roles.household)
                state.set_protect_settings(from_steps(recipe.steps, recipe.seed,
                                                      offered_columns(groups, ctx.roles)),
                                           reseed_widgets=True)
                state.set_recipe_steps_to_check(recipe.steps)
                if note is None:
                    state.set_notice("recipe", "success", "Recipe loaded.")
                else:
                    state.set_notice("recipe", "warning", f"Recipe loaded. {md(note)}")
            except SdcInputError as err:
                state.set_notice("recipe", "error", f"Recipe not loaded: {md(err)}")
            st.rerun()
        show_notice(state.notice("recipe"))


def attacker_controls(ctx: PageContext, groups: ColumnGroups) -> None:
    """The extra columns an attacker is assumed to know (numeric, not already a key)."""
    candidates = attacker_candidates(groups, ctx.roles)
    state.bind("w_p_known", [c for c in state.known_columns(ctx.df) if c in candidates])
    known = st.multiselect("Columns an attacker also knows", candidates, key="w_p_known",
                           help="The linkage attack matches these by nearest value, as it "
                                "does rank-swapped keys (e.g. a weight measured elsewhere).")
    state.set_known_columns(known)


def release_type_control() -> None:
    """The release type the settings aim at (a preset of targets: docs/releases.md), kept for
    the Export page's decision pack, with its intruder and targets; whether the release meets
    them is said under the risk tiles (:func:`release_status`)."""
    state.bind("w_release_type", state.release_type())
    key = st.selectbox("Release type", TYPE_KEYS, key="w_release_type", format_func=type_name,
                       help="Who the release is for sets the intruder assumed and the targets "
                            "it must meet; the Export page's decision pack is made for it.")
    state.set_release_type(key)
    st.caption(type_caption(release_types.release_type(state.release_type())))


def release_status(ctx: PageContext, wb: Workbench) -> str:
    """One line (Markdown-escaped): whether the release meets the targets of the chosen
    release type, as the decision pack will judge it."""
    kind = release_types.release_type(state.release_type())
    try:
        status = workbench_status(kind, wb, ctx.roles.ignore, bool(ctx.roles.sensitive))
    except SdcInputError as err:
        return md(f"As a {kind.name}, this release cannot be judged: {err}")
    return status_line(kind, status)


#: The key of the fragment that draws the results (and the undo buttons): a value control's
#: move reruns it alone, the controls staying as the user left them.
RESULTS = "protect_results"
#: The key of the fragment of the whole workbench, controls and results: what changes the
#: controls themselves (columns chosen, undo) reruns it.
WORKBENCH = "protect_workbench"


@guarded
def moved(m: Method, p: Param, column: str | None, key: str) -> None:
    """A value control's callback: the settings take its new value (an emptied number field:
    the default) and only the results are drawn again; the controls too when the value
    decides whether another control applies (PRAM's invariant form disables its p)."""
    value = state.widget(key)
    settings = state.protect_settings().with_value(m, p.name, column,
                                                   p.default if value is None else value)
    state.set_protect_settings(settings, source=key)
    st.rerun(WORKBENCH if m.governs(p.name) else RESULTS)


@guarded
def seed_moved() -> None:
    """The seed field's callback (as :func:`moved`)."""
    state.set_protect_settings(replace(state.protect_settings(),
                                       seed=int(state.widget("w_p_seed"))),
                               source="w_p_seed")
    st.rerun(RESULTS)


class ValueCallback(TypedDict):
    """The keywords of a value control that redraws only the results when it moves."""

    on_change: Callable[..., None]
    args: tuple[Any, ...]
    disabled: bool


def param_control(df: pd.DataFrame, m: Method, p: Param, value: Any, key: str,
                  column: str | None = None, options: list[str] | None = None,
                  disabled: bool = False) -> Any:
    """The widget of one declared parameter of ``m``, seeded once from ``value``: a select box
    for a choice, a toggle for true/false, a text field for text, a list or an object
    (:func:`json_control`), the ``options`` in the order chosen for a list of columns, a number
    field for a number without a range or a default (empty: the default), else a slider, of
    whole numbers for whole numbers and whole-number steps (band width), its end read from
    ``df``'s ``column`` for a range that depends on the data; a slider or a field reaches at
    least the seeded value. A value control (choice, toggle, number) redraws only the results
    when it moves (:func:`moved`). A control ``disabled`` (it does not apply with the others'
    values) keeps its value."""
    label = (p.label or p.name).format(column=md(column) if column else "")
    help_text = p.help or None
    fast: ValueCallback = {"on_change": moved, "args": (m, p, column, key),
                           "disabled": disabled}
    if p.type == "choice":
        state.bind(key, value if value in p.choices else p.default)
        return st.selectbox(label, list(p.choices), key=key, help=help_text, **fast)
    if p.type == "bool":
        state.bind(key, bool(value))
        return st.toggle(label, key=key, help=help_text, **fast)
    if p.type == "text":
        state.bind(key, "" if value is None else str(value))
        return st.text_input(label, key=key, help=help_text, disabled=disabled)
    if p.type == "columns":
        state.bind(key, [c for c in value or [] if c in (options or [])])
        return st.multiselect(label, options or [], key=key, help=help_text,
                              disabled=disabled) or None
    if p.type in ("list", "object"):
        return json_control(p, value, key, label, disabled)
    if p.type == "column_lists":
        return profiles_control(df, p, value, key, label, disabled)
    high = p.high(df[column]) if callable(p.high) else p.high
    kind: Callable[[float], float] = int if takes_whole(p) else float
    if high is None or p.default is None:  # a number field; empty is the default
        state.bind(key, None if value is None else kind(value))
        seeded = state.widget(key)
        top = high if high is not None else p.most  # synthesis's records: at most 10⁷
        got = st.number_input(
            label, None if p.low is None else kind(p.low),
            None if top is None else max(kind(top), kind(top) if seeded is None else seeded),
            value=None, step=kind(p.step) if p.step else None, key=key,
            format="%d" if kind is int else "%g", help=help_text,
            placeholder="none" if p.default is None else f"{p.default:g}", **fast)
        return p.default if got is None else got
    assert p.low is not None, "a parameter with a range and a default declares its low end"
    state.bind(key, kind(value))
    # a setting past the slider's end (a band wider than half the data's range, PRAM p 0.9 from
    # a recipe, a link or a sweep) widens the slider instead of being cut to its end
    high = max(kind(high), state.widget(key))
    return st.slider(label, kind(p.low), high, step=kind(p.step or 1), key=key,
                     help=help_text, **fast)


def read_json(p: Param, text: str) -> Any:
    """The value of a list or object control's text (empty: None); ValueError when it does
    not read."""
    text = text.strip()
    if not text:
        return None
    try:
        return json.loads(f"[{text}]" if p.type == "list" and not text.startswith("[")
                          else text)
    except RecursionError as err:  # too deep
        raise ValueError(str(err)) from err


def json_control(p: Param, value: Any, key: str, label: str, disabled: bool = False) -> Any:
    """A list parameter as its values separated by commas (JSON values: text in quotes), an
    object as JSON (empty: none); text that does not read is said so under the field and not
    applied."""
    listed = p.type == "list"
    shown = "" if value is None else (
        ", ".join(json.dumps(v, ensure_ascii=False) for v in value) if listed
        else json.dumps(value, ensure_ascii=False))
    state.bind(key, shown)
    text = st.text_input(label, key=key, help=p.help or None, placeholder="none",
                         disabled=disabled)
    try:
        return read_json(p, text)
    except ValueError:  # not JSON, a number of 4,300 digits, too deep
        st.error(f"{label}: " + ("values separated by commas, text in quotes" if listed else
                                 "this is not JSON") + ": not applied.",
                 icon=":material/error:")
        return None


def profiles_control(df: pd.DataFrame, p: Param, value: Any, key: str, label: str,
                     disabled: bool = False) -> Any:
    """A list of lists of column names (record swapping's donor profiles) as JSON text (empty:
    none); text that does not read as such (:func:`~ui.logic.protect.read_profiles`) is said
    so under the field and not applied; a name must be one of ``df``'s columns."""
    state.bind(key, "" if value is None else json.dumps(value, ensure_ascii=False))
    text = st.text_input(label, key=key, help=p.help or None, disabled=disabled,
                         placeholder=PROFILES_EXAMPLE)
    try:
        return read_profiles(text, [str(c) for c in df.columns])
    except ValueError as err:
        st.error(f"{label}: {md(err)}: not applied.", icon=":material/error:")
        return None


def method_params(ctx: PageContext, m: Method, s: ProtectSettings, column: str | None = None,
                  options: list[str] | None = None,
                  param_options: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """The controls of ``m`` (of ``column``'s, for a per-column method): those marked ``more``
    under an expander. A per-column method's ``main`` slider is keyed ``w_p_<method>_<column>``
    and its other controls ``w_p_<method>:<param>:<column>``; the others' controls
    ``w_p_<method>_<param>``. A list of columns offers ``options``, or its own
    ``param_options[name]``."""
    def key(p: Param) -> str:
        if column is None:
            return f"w_p_{m.name}_{p.name}"
        return f"w_p_{m.name}_{column}" if p.name == m.main else f"w_p_{m.name}:{p.name}:{column}"

    def current(p: Param) -> Any:
        """The control's value as the user left it: its widget's, else the settings'."""
        if not state.has_widget(key(p)):
            return s.value(m, p.name, column)
        held = state.widget(key(p))
        try:
            if p.type in ("list", "object"):
                return read_json(p, held)
            if p.type == "column_lists":
                return read_profiles(held)
        except ValueError:  # not applied
            return None
        return held
    now = {p.name: current(p) for p in m.controls}

    def control(p: Param) -> Any:
        alone = p.household and not ctx.roles.household  # one draw per household: none set
        got = param_control(ctx.df, m, p, s.value(m, p.name, column), key(p), column,
                            (param_options or {}).get(p.name, options),
                            disabled=alone or not m.applies(p.name, now))
        return p.default if alone else got
    values = {p.name: control(p) for p in m.controls if not p.more}
    more = [p for p in m.controls if p.more]
    if more:
        where = f" for {md(column)}" if column is not None else ""
        with st.expander(f"{m.label}: more settings{where} ("
                         + ", ".join(p.name for p in more) + ")"):
            values |= {p.name: control(p) for p in more}
    return values


def merge_control(df: pd.DataFrame, p: Param, groups: dict[str, list[Any]], key: str,
                  column: str) -> dict[str, list[Any]]:
    """Merges of the levels of ``df``'s ``column``, one row each (the levels, their new
    label), seeded once from ``groups``; a row with no level or no label is not a merge yet."""
    counts = df[column].value_counts(sort=False)
    levels = sorted(counts.index.tolist(), key=lambda v: (isinstance(v, str), v))
    rows = list(groups.items())
    state.bind(f"{key}_n", max(1, len(rows)))
    st.markdown((p.label or p.name).format(column=md(column)), help=p.help or None)
    merged: dict[str, list[Any]] = {}
    for j in range(state.count(f"{key}_n")):
        label, members = rows[j] if j < len(rows) else ("", [])
        wanted = {as_text(v) for v in members}
        state.bind(f"{key}_{j}_levels", [v for v in levels if as_text(v) in wanted])
        state.bind(f"{key}_{j}_label", str(label))
        left, right = st.columns([3, 2])
        chosen = left.multiselect(f"Levels of {md(column)} to merge", levels,
                                  key=f"{key}_{j}_levels", label_visibility="collapsed",
                                  format_func=lambda v: f"{v} ({counts[v]:,})",
                                  placeholder="Levels to merge")
        new = right.text_input(f"New label for them ({md(column)})", key=f"{key}_{j}_label",
                               label_visibility="collapsed", placeholder="New label").strip()
        if chosen and new:
            merged.setdefault(new, []).extend(as_json(v) for v in chosen)
    st.button("Another merge", key=f"{key}_more", icon=":material/add:",
              on_click=guarded(state.add_one), args=(f"{key}_n",))
    return merged


@guarded
def add_columns(key: str, more: list[str]) -> None:
    """The callback of :func:`like_columns`' button: ``more`` join the method's columns."""
    state.set_widget(key, [*state.widget(key), *more])


def like_columns(ctx: PageContext, m: Method, chosen: list[str], options: list[str]) -> None:
    """A button that adds to ``m``'s columns, at once, every other column of ``options`` with
    exactly the levels of the column chosen last (the items of a survey, all scored 1–6)."""
    if not chosen:
        return
    levels = compute.level_sets(ctx.ds.dataset_id, tuple(options), ctx.df)
    like = chosen[-1]
    more = [c for c in same_levels(levels, like) if c not in chosen]
    if more:
        which = f"the {len(more)} other columns" if len(more) > 1 else "the other column"
        # a short label: the button is as wide as a third of the controls (191 px at 1280 px)
        st.button(f"Add {len(more)} more like {md(like)}",
                  key=f"p_{m.name}_like", icon=":material/library_add:", on_click=add_columns,
                  args=(f"w_p_{m.name}_cols", more),
                  help=f"Add {which} with the levels of {md(like)}: the columns whose values "
                       f"are {md(like)}'s {len(levels[like])} levels, no more and no fewer: "
                       f"{md_list(more)}.")


def swapping_controls(ctx: PageContext, m: Method, s: ProtectSettings, i: int,
                      categorical: list[str]) -> tuple[list[str], dict[str, Any]] | None:
    """Record swapping's controls: its geography, the columns suggested as areas
    (:meth:`ui.page.PageContext.geography`) and any other categorical column only once the
    steward marks columns as geography, then its other parameters; None (said plainly) while
    the table has no geography and none is marked."""
    st.markdown(f"**{i} · {m.label}**: {m.summary}")
    suggested = ctx.geography()
    held = [c for c in s.columns.get(m.name, []) if c in categorical]
    if not suggested:
        st.info(NO_GEOGRAPHY, icon=":material/location_off:")
    state.bind(f"w_p_{m.name}_mark", any(c not in suggested for c in held))
    marking = st.checkbox("Mark other columns as geography", key=f"w_p_{m.name}_mark",
                          help="Offer every categorical column as an area of the hierarchy: "
                               "tick it only for a column that is one (the region, district "
                               "or municipality a household lives in).")
    options = geography_options(suggested, held, categorical, marking)
    if not options:
        return None
    chooses = m.param(str(chosen_param(m)))
    state.bind(f"w_p_{m.name}_cols", held)
    hierarchy = st.multiselect(chooses.label or chooses.name, options, key=f"w_p_{m.name}_cols",
                               help=chooses.help or None, placeholder="Areas, coarsest first")
    others = [str(c) for c in ctx.df.columns if c != ctx.roles.household and c not in hierarchy]
    values = method_params(ctx, m, s, param_options={p.name: others for p in m.controls})
    st.caption(f"The household id is {md(ctx.roles.household)}. Households are swapped "
               "while the swap rate is above 0: the k rule (households with a member "
               "whose risk-variable class in the area holds fewer than k records) "
               "applies only then. Swapping needs the hierarchy and the donor "
               f"profiles, e.g. {md(PROFILES_EXAMPLE)}.")
    return hierarchy, values


def controls(ctx: PageContext, groups: ColumnGroups, s: ProtectSettings) -> ProtectSettings:
    """One block of controls per declared method (on the columns ``groups`` offers it), in the
    order they are applied."""
    columns: dict[str, list[str]] = {}
    values: dict[str, dict[str, Any]] = {}
    for i, m in enumerate(page_methods(), start=1):
        options = method_columns(m, groups, ctx.roles)
        if m.per_column:
            if not options:
                continue
            st.markdown(f"**{i} · {m.label}** {m.summary}")
            got = {c: method_params(ctx, m, s, c) for c in options}
            held = [c for c in s.values.get(m.name, {}) if c in got]  # a recipe's order
            values[m.name] = {c: got[c] for c in held + [c for c in got if c not in held]}
            continue
        if m.extra.get("household") and not ctx.roles.household:
            st.markdown(f"**{i} · {m.label}**: {m.summary}")
            st.caption("Set a household id on the Data page to swap households.")
            continue
        if chosen_param(m):  # record swapping: on a geography only
            swap = swapping_controls(ctx, m, s, i, [c for c in options if c != ctx.roles.household])
            if swap is not None:
                columns[m.name], values[m.name] = swap
            continue
        st.markdown(f"**{i} · {m.label}**: {m.summary}")
        if m.target == "table":  # synthesis: the whole table, no column to choose
            values[m.name] = method_params(ctx, m, s)
            st.caption(md(SYNTHESIS_NOTE))
            continue
        if m.columns != "keys":
            chosen = [c for c in s.columns.get(m.name, []) if c in options]
            state.bind(f"w_p_{m.name}_cols", chosen if m.name in s.columns else
                       [c for c in method_defaults(m, groups, ctx.roles) if c in options])
            chooses = chosen_param(m)
            columns[m.name] = st.multiselect(
                (m.param(chooses).label or chooses) if chooses else f"{m.label} columns",
                options, key=f"w_p_{m.name}_cols",
                help=(m.param(chooses).help or None) if chooses else None)
            if m.columns == "categorical" and not chooses:
                like_columns(ctx, m, columns[m.name], options)
        values[m.name] = method_params(ctx, m, s, options=list(ctx.roles.qi) if m.columns == "keys"
                                       else columns[m.name])
        if m.merge and m.target == "column":
            merges = s.merges(m)
            values[m.name][m.merge.name] = {
                c: g for c in columns.get(m.name, [])
                if (g := merge_control(ctx.df, m.merge, merges.get(c, {}),
                                       f"w_p_{m.name}_{m.merge.name}_{c}", c))}
    state.bind("w_p_seed", int(s.seed))
    seed = st.number_input("Seed", 0, MAX_PAGE_SEED, key="w_p_seed", on_change=seed_moved,
                           help="The random methods are reproducible from this seed. A fixed "
                                "seed is for teaching and reproducibility; for a real release "
                                "choose a new, secret one.")
    return ProtectSettings(columns, values, int(seed))


def attack_how(ctx: PageContext, wb: Workbench, before: float, known: list[str]) -> None:
    """The two readings of risk explained on the numbers in front of the user."""
    after = wb.after
    naive, linked = after["expected_reidentifications"], after["linkage_reidentifications"]
    exact, distance = after["linkage_exact_columns"], after["linkage_distance_columns"]
    top = after["linkage_attacker"]
    st.markdown(
        f"**How unique the released keys look**: {name('expected_reidentifications')} "
        f"{count_and_percent('expected_reidentifications', after)}, Σ 1/f_k over the released "
        f"values of {md_list(ctx.roles.qi)} read as if they were true (sdcMicro's measure). It "
        "drops when classes grow (banding, suppression) and cannot see values that were moved "
        "at random.")
    st.markdown(
        f"**What an attacker actually re-identifies**: {name('linkage_reidentifications')} "
        f"{count_and_percent('linkage_reidentifications', after)}. The attacker knows "
        f"each person's true {md_list(ctx.roles.qi)}" + (f" and {md_list(known)}" if known else "")
        + " and the public recodings of the recipe (banding, top coding), and looks for the "
        "person among the released records: "
        + (f"the candidates must agree on {md_list(exact)} (a blank matches anything)" if exact
           else "no column is compared exactly")
        + (f" and are compared by their distance on {md_list(distance)} (in standard "
           "deviations)" if distance else "")
        + f". The attack runs {len(after['linkage_attackers'])} attackers that rank these "
        "candidates differently and reports the one that re-identifies most, here "
        f"**{ATTACKER_NAMES[top]}**: {ATTACKER_RULES[top]}. It picks one of its best "
        "candidates at random and is right with probability 1/(number of best candidates) "
        "when the person is among them, else 0. The figure is "
        f"the sum over the {len(ctx.df):,} records (in brackets: in percent of them, the "
        f"{name('linkage_risk_percent')}); {after['linkage_percent_certain']:.2f} % are "
        "linked with certainty (a single candidate, and the right one). The table of every "
        "attacker, below, shows the others.")
    if abs(naive - linked) > 1e-9:
        st.markdown(
            f"Here the attack finds {number(abs(naive - linked))} "
            + ("fewer" if linked < naive else "more") + " re-identifications than the keys "
            "suggest: " + ("perturbed values send the attacker to the wrong record."
                           if linked < naive else
                           "the known columns and the blanks' true values narrow the search."))
    st.caption(f"Before protection the attack re-identifies {number(before)}. Both figures "
               "assume the attacker knows the person is in the file (sample-based risk).")
    if "drisk_percent" in after:
        st.caption(f"sdcMicro's interval disclosure (dRisk): {after['drisk_percent']:.2f} % of "
                   "records have every distance value within ±5 % of a standard deviation of "
                   "its released value.")


def attackers(wb: Workbench, linked_before: LinkageResult) -> None:
    """Every attacker of the linkage attack, before and after protection, the headline
    marked (docs/measures.md, "The attackers")."""
    st.caption("Each attacker keeps the released records that agree with what it knows (a "
               "blank matching anything), ranks them its way and picks one of its best at "
               "random; the headline figures are those of the attacker that re-identifies "
               "most.")
    st.dataframe(attackers_table(linked_before, wb.after), hide_index=True)


#: Why the Protect page shows no figure of the population: nothing says how it was sampled.
UNSAMPLED = ("In the population: say how the file was sampled (its sampling fraction or the "
             "population size) under \"How the file was sampled\" on the Risk page to see how "
             "many people in the population the released keys single out.")


def population_figures(ctx: PageContext, wb: Workbench
                       ) -> tuple[PopulationRisk, PopulationRisk] | str:
    """Risk in the population after protection and the original's under the same sampling
    (the session's, as the Risk page was told; with a weight column and nothing told, N is
    the weights' sum); when there are none, why not, as a note for the risk tiles: not
    estimated (and the reason), or :data:`UNSAMPLED`."""
    after = wb.population  # computed with the move's other figures
    try:
        before = compute.population(ctx.ds.dataset_id, ctx.qi, ctx.roles.weight,
                                    state.sampling_key(), ctx.df)
    except SdcInputError as err:
        after = str(err)
    if isinstance(after, str):
        return f"In the population: not estimated ({md(after)})."
    if before is None or after is None:
        return UNSAMPLED
    return after, before


def population(ctx: PageContext, after: PopulationRisk, before: PopulationRisk) -> None:
    """The population's figures of :func:`population_figures` as tiles, with what they are.
    Metrics without a help button: nothing here is a Tab stop before the "Before and after"
    chart."""
    model = after.uniqueness.dankar_model  # None: no sample unique, nothing to estimate
    r2 = loglinear_r2(after)
    shown = [Tile(f"Population uniqueness ({MODEL_NAMES[model]})" if model is not None
                  else "Population uniqueness", f"{figure(after.percent)} %",
                  figure_delta(after.percent, before.percent, " points"), "inverse"),
             Tile("Log-linear r2 (sdcMicro)", figure(r2), figure_delta(r2, loglinear_r2(before)),
                  "inverse")]
    picked = ("" if dankar_name(after) == dankar_name(before)
              else f" (before protection: {dankar_name(before)})")
    if model is None:
        picked += ": no record is unique on the released keys, so none is unique in the population"
    failed = after.loglinear.get("default")
    note = (
        f"Model estimates for the population from the released {md_list(ctx.roles.qi)}, at "
        f"{sampling_text(after.sampling)}; a blank key counts as a category of its own. "
        f"Population uniqueness: the share of the population unique on the keys, by the model "
        f"Dankar's rule picks{picked}. Log-linear r2: the expected correct matches of sample "
        "uniques over the cells kept (sdcMicro's normalisation)"
        + (f"; not computed: {md(failed)}" if isinstance(failed, str) else "")
        + ". Deltas against the original under the same sampling; the report on the Export "
        "page has every model.")
    show_tiles(shown, [0, 1], "p-population", "In the population (after protection)", [note])


def households(ctx: PageContext, wb: Workbench) -> None:
    """The household risk of the release against the original's and the household linkage
    attack on it, beside the person-level figures (docs/measures.md, "Household risk");
    computed with the move's other figures, only when a household id is set."""
    after = wb.households
    try:
        before = compute.households(ctx.ds.dataset_id, ctx.qi, str(ctx.roles.household),
                                    ctx.roles.weight, ctx.opts.na, ctx.opts.alpha,
                                    tuple(state.known_columns(ctx.df)), ctx.df)
    except SdcInputError as err:
        after = str(err)
    if isinstance(after, str):
        st.warning(f"No household risk: {md(after)}", icon=":material/warning:")
        return
    if after is None:
        return
    show_tiles([t.tile for t in household_tiles(after, before, PROTECT_TILES)], [0],
               "p-households", "Households (after protection)",
               [f"{household_note(after)} {household_attack_note(after, before)}"])


def buys(ctx: PageContext, wb: Workbench) -> None:
    """What this buys (docs/measures.md, "Deniability: what perturbation buys" and "The
    attribute-inference attack"): a summary row per perturbed column, the posterior and the
    transition matrix of one column at a time under an expander (drawn once opened), and the
    attribute-inference attack per sensitive column."""
    head = "**What this buys**"
    if wb.rows is not None:  # a synthetic release: no record is the release of an original one
        st.markdown(head)
        st.caption(f"No deniability figure and no attribute-inference attack: {md(wb.rows)}.")
        return
    # the notes of the parts with no table of their own, and the attack's before its table,
    # as one element, under the heading when nothing else is drawn between (fewer a move redraws)
    quiet = [] if wb.deniability else [NOTHING_PERTURBED]
    if wb.deniability:
        st.markdown(head)
        head = ""
        st.dataframe(deniability_table(wb.deniability), hide_index=True, key="p_buys",
                     column_config={
                         MEANING: st.column_config.TextColumn(width="large"),
                         label("epsilon"): st.column_config.NumberColumn(format="%.3f"),
                         label("guess_accuracy"): st.column_config.NumberColumn(format="%.4f"),
                         label("baseline"): st.column_config.NumberColumn(format="%.4f"),
                         GAIN: st.column_config.NumberColumn(format="%.2f"),
                         label("household_guess_accuracy"):
                             st.column_config.NumberColumn(format="%.4f"),
                         label("household_epsilon"):
                             st.column_config.NumberColumn(format="%.3f")})
        st.caption("Per perturbed column: the local-DP ε of its transition matrix (∞: no "
                   "deniability), and the chance that an attacker who sees the released value "
                   "guesses the true one, against guessing the commonest true value.")
        summary = household_summary(wb.deniability)
        if summary:
            st.caption(md(summary))
        for warning in household_warnings(wb.deniability):
            st.warning(md(warning), icon=":material/warning:")
        fold = st.expander("Posterior and transition matrix of a perturbed column",
                           icon=":material/grid_on:", key="p_buys_detail", on_change="rerun")
        if fold.open:
            with fold:
                by_column = {str(d.column): d for d in wb.deniability}
                chosen = st.selectbox("Perturbed column", list(by_column), key="w_p_buys_col")
                d = by_column[chosen]
                st.caption(md(detail_note(d)))
                st.markdown("P(true value | released value)")
                st.dataframe(posterior_table(d).round(4))
                st.markdown("P(released value | true value)")
                st.dataframe(matrix_table(d).round(4))
    if ctx.roles.household:
        try:
            nearly = compute.nearly_constant_columns(ctx.ds.dataset_id, ctx.roles.household, ctx.df)
        except SdcInputError:  # a blank id: the household figures say so
            pass
        else:
            quiet.append(md(nearly_constant_note(ctx.roles.household, nearly)))
    if wb.inference is None:
        quiet.append(NO_SENSITIVE)
    elif isinstance(wb.inference, str):
        quiet.append(f"The attribute-inference attack cannot run: {md(wb.inference)}")
    else:  # what the attack's table below shows
        quiet.append(md(inference_note(wb.inference)))
    if head:
        st.markdown("\n\n".join([head, *quiet]))
    else:
        st.caption("\n\n".join(quiet))
    if wb.inference is not None and not isinstance(wb.inference, str):
        # a row per sensitive column, few: a plain table (no Tab stop of its own)
        st.table(inference_shown(wb.inference))


def synthetic(wb: Workbench) -> None:
    """A synthetic release's own figures (docs/measures.md, "Disclosure risk of a synthetic
    release"): why the record-by-record figures show none, replicated uniques and, with a
    holdout, the distance against it as tiles, DiSCO beside DiO per sensitive column."""
    assert wb.rows is not None, "a release whose rows are not the original's"
    st.info(md(record_by_record(wb.rows)), icon=":material/scatter_plot:")
    found = wb.synthetic
    if isinstance(found, str):
        st.warning(f"No figure of the synthetic release: {md(found)}",
                   icon=":material/warning:")
        return
    if found is None:  # no quasi-identifiers: nothing to read the records by
        return
    show_tiles([row.tile for row in synthetic_rows(found)], [0], "p-synthetic",
               "The synthetic release as a set of records")
    if found.disco:
        # a row per sensitive column, few: a plain table
        st.table(disco_table(found).set_index("column").style.format("{:.2f}"))
    else:
        st.caption("Tag sensitive columns on the Data page to see DiSCO: how often the "
                   "release gives away a sensitive value from the keys.")
    st.caption(md(SYNTHETIC_NOTE))


def results(ctx: PageContext, wb: Workbench, text: str, known: list[str],
            settings_text: str | None = None) -> None:
    """The figures of ``wb``, the table recipe ``text`` makes; the recipe box shows
    ``settings_text`` instead, the settings as they stand, when they are not those measured
    (they cannot be applied). A release whose rows are not the original's (synthesis) shows
    no number where a figure compares record by record, says why, and shows its own figures
    (:func:`synthetic`)."""
    before = compute.profile(ctx.ds.dataset_id, ctx.qi, ctx.roles.weight, ctx.opts.k, ctx.opts.na,
                             ctx.opts.alpha, ctx.df)
    linked_before = compute.linkage_before(ctx.ds.dataset_id, ctx.qi, tuple(known), ctx.df)
    rows = risk_rows(wb.after, figures(before, linked_before), ctx.opts.k, PROTECT_RISK,
                     wb.rows)
    # dRisk, measured on distance columns, after PROTECT_RISK's tiles; under them, why the
    # population's figures are not shown, when they are not (one element fewer a move)
    in_population = population_figures(ctx, wb)
    # whether the release meets its type's targets: a note under the tiles, no element more
    show_tiles([row.tile for row in rows], [0, 1, 6], "p-risk",
               notes=[*([in_population] if isinstance(in_population, str) else ()),
                      release_status(ctx, wb)])
    if wb.rows is not None:
        synthetic(wb)
    if ctx.roles.household:
        households(ctx, wb)
    if not isinstance(in_population, str):
        population(ctx, *in_population)
    if wb.rows is None:
        how = st.expander("How: two readings of the risk, and every attacker",
                          icon=":material/school:", key="p_how", on_change="rerun")
        if how.open:  # the expanders of the results are drawn once opened, not on every move
            with how:
                attack_how(ctx, wb, linked_before.linkage_reidentifications, known)
                attackers(wb, linked_before)
    loss = utility_rows(wb.utility_for(ctx.roles.ignore), wb.rows)
    show_tiles([row.tile for row in loss], [0], "p-loss")
    if any(r["method"] == "local_suppression" for r in wb.applied.reports):
        st.caption(IL1_READING)
    recipe = json.loads(text)
    context = f"{ctx.ds.name}; {describe(recipe['steps'], recipe['seed'])}"
    analyses.panel(ctx.ds, wb, text, context)
    if not wb.changed:
        if recipe["steps"]:  # steps that change no value here
            st.info("These settings change no value of the data.", icon=":material/tune:")
        else:
            st.info("No method is active: move a slider to protect the data.",
                    icon=":material/tune:")
        if recipe["steps"] or settings_text is not None:
            recipe_box(settings_text or text)
        return
    column = st.selectbox("Before and after", wb.changed, key="w_protect_view",
                          format_func=str)
    charts.show(wb.figure(column), f"{ctx.ds.stem}_{column}_before_after", key="protect_column",
                context=context)
    # the chart's note and the steps' descriptions, as one caption until something else is
    # drawn between them (fewer elements a move redraws)
    notes = [note] if (note := wb.figure_note(column)) is not None else []

    def said() -> None:
        if notes:
            st.caption("\n\n".join(notes))
            notes.clear()
    methods = registry()
    for report in wb.applied.reports:
        m, col = methods[report["method"]], report["column"]
        if m.describe:
            notes.append(md(m.describe(report)))
        if report["step"] in wb.applied.matrices:
            said()
            matrix = st.expander(f"Transition matrix of {md(col)} ({m.label})",
                                 key=f"p_matrix_{report['step']}", on_change="rerun")
            shown = wb.applied.matrices[report["step"]]
            if matrix.open and not isinstance(shown, pd.DataFrame):  # past the dense bound
                matrix.caption(md(wide_matrix_text(col, shown.shape[0])))
            elif matrix.open:
                with matrix:
                    charts.show(heatmap(shown, f"{col}: P(released | original)"),
                                f"{ctx.ds.stem}_{col}_matrix", key=f"matrix_{report['step']}",
                                context=context)
        if m.name == "randomized_response" and report["keep_probability"] > 0 \
                and wb.rows is None:  # answers read record by record
            said()
            st.caption("Estimated shares from the protected answers:")
            err = randomized_response_error(ctx.df[col], wb.applied.data[col],
                                            report["keep_probability"])
            st.dataframe(err.round(4), hide_index=True, width="stretch")
    said()
    buys(ctx, wb)
    recipe_box(settings_text or text)


def recipe_box(text: str) -> None:
    """The recipe of the page's settings, a line a field."""
    box = st.expander("Recipe of these settings", icon=":material/receipt_long:",
                      key="p_recipe", on_change="rerun")
    if box.open:
        with box:
            st.code(json.dumps(json.loads(text), indent=2), language="json")


def history_buttons() -> None:
    """Undo, redo and reset of the settings (each can itself be undone or redone), into the
    horizontal container above the controls: side by side, each as wide as its label (they
    wrap to a second row in a narrow column). Each redraws the whole workbench: the controls
    show the settings it brings back."""
    h = state.protect_history()
    st.button("Undo", key="p_undo", icon=":material/undo:", on_click=redraw_after,
              args=(state.undo_protect,), disabled=not h.past,
              help="Back to the settings before the last change. A burst of changes of "
                   "one control (ten presses on a number's +, a slider moved with the arrow "
                   f"keys) is one change; a pause of {state.BURST_SECONDS:g} s ends it.")
    st.button("Redo", key="p_redo", icon=":material/redo:", on_click=redraw_after,
              args=(state.redo_protect,), disabled=not h.future,
              help="Forward to the settings undone.")
    st.button("Reset all", key="p_reset", icon=":material/restart_alt:",
              on_click=redraw_after, args=(state.reset_protect,),
              help="Every method off (the seed is kept); Undo brings the settings back.")


@guarded
def redraw_after(change: Callable[[], None]) -> None:
    """A history button's callback: ``change`` the settings, then redraw the workbench (the
    buttons sit in the results fragment, whose own rerun would leave the controls as they
    were)."""
    change()
    st.rerun(WORKBENCH)


@st.fragment(key=RESULTS)
@guarded_part
def results_part(ctx: PageContext, numeric: list[str], history: DeltaGenerator) -> None:
    """The history buttons (into ``history``, above the controls) and the results of the
    settings as stored, utility measured on the ``numeric`` columns: a value control's move
    reruns this alone."""
    settings = state.protect_settings()
    with history:
        history_buttons()
    text = recipe_json(settings.steps(ctx.roles.qi), settings.seed, ctx.roles.household)
    known = state.known_columns(ctx.df)

    def evaluated(recipe: str) -> Workbench:
        return compute.workbench(ctx.ds.dataset_id, recipe, ctx.qi, ctx.roles.weight, ctx.opts.k,
                                 ctx.opts.na, ctx.opts.alpha, tuple(numeric), tuple(known),
                                 state.sampling_key(), ctx.df, tuple(ctx.roles.sensitive),
                                 ctx.roles.household)
    try:
        wb = evaluated(text)
    except SdcInputError as failed:
        err = in_words(str(failed), settings.steps(ctx.roles.qi))
        # a setting not complete yet (invariant PRAM before its θ is typed) leaves the results
        # of the last settings that applied in place, under a note, rather than a blank column
        last = state.last_applied(ctx.ds.dataset_id)
        try:
            fallback = evaluated(last) if last is not None else None
        except SdcInputError:  # nor do the last ones now (other roles)
            fallback = None
        if fallback is None:
            st.error(f"These settings cannot be applied: {md(err)}", icon=":material/error:")
            if settings.steps(ctx.roles.qi):
                recipe_box(text)
            return
        assert last is not None  # the fallback was measured from the last settings
        recipe = json.loads(last)
        st.warning(f"These settings cannot be applied: {md(err)}. The figures below are "
                   "those of the last settings that could be "
                   f"({md(describe(recipe['steps'], recipe['seed']))}).",
                   icon=":material/pending:")
        results(ctx, fallback, last, known, text)
        state.settle_protect()
        return
    state.set_last_applied(ctx.ds.dataset_id, text)
    results(ctx, wb, text, known)
    state.settle_protect()


@st.fragment(key=WORKBENCH)
@guarded_part
def workbench(ctx: PageContext, groups: ColumnGroups) -> None:
    """The controls (on the columns ``groups`` offers) and, beside them, the results
    (:func:`results_part`)."""
    left, right = st.columns([1, 2], gap="large")
    with left:
        # above the controls, drawn once their change is recorded: the buttons side by side
        history = st.container(horizontal=True, gap="small")
        settings = controls(ctx, groups, state.protect_settings())
        st.markdown("**Attacker**")
        attacker_controls(ctx, groups)
        st.markdown("**Release**")
        release_type_control()
    state.set_protect_settings(settings)
    steps = settings.steps(ctx.roles.qi)
    loaded = state.take_recipe_steps_to_check()
    shown = [full_step(s) for s in steps]
    lost = [s for s in (loaded or []) if full_step(s) not in shown]
    if lost:
        st.warning("These steps of the recipe have no control on this page for the current "
                   "roles and were left out: " + "; ".join(
                       md(json.dumps(s, ensure_ascii=False)) for s in lost),
                   icon=":material/warning:")
    with right:
        results_part(ctx, groups.numeric, history)


ctx = context("Protect", "first")
groups = ctx.groups()
show_notice(state.take_notice("opened"))  # a setting opened from the Trade-offs page
recipe_loader(ctx, groups)
st.caption(f"Quasi-identifiers: {md_list(ctx.roles.qi)} · numeric columns for utility: "
           f"{md_list(groups.numeric)}. Methods apply in the order shown; every move recomputes "
           "risk and utility.")
workbench(ctx, groups)
render_sidebar()
