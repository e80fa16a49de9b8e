"""Trade-offs page: sweep parameters, compare risk and loss, pick a setting. The page reads
its form (:func:`sweep_form`), runs the grid :func:`ui.logic.tradeoff_grid.build_grid` makes
of it (:func:`run`) and draws the last sweep (:func:`show_sweep`)."""

import json
import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from sdc_core.errors import SdcInputError
from sdc_core.methods import Method, registry
from sdc_core.names import COUNT_AND_PERCENT, count_and_percent, name
from sdc_core.sweep.run import (
    LOSS,
    LOSSES,
    PARETO_RISK,
    RECORD_BY_RECORD,
    SweepResult,
    off_the_front,
    run_sweep,
)
from sdc_core.utility.validity import HOLDS, LABELS, S_PMSE_RULE, VERDICT_RULE
from ui import charts, state
from ui.infra import workers
from ui.logic import tradeoff_grid
from ui.logic.figures import parameter_lines, setting_labels, tradeoff_scatter
from ui.logic.groups import (
    NO_GEOGRAPHY,
    ColumnGroups,
    method_columns,
    method_defaults,
    offered_columns,
)
from ui.logic.metrics import loss_text
from ui.logic.protect import from_steps, page_methods, replaced_notice
from ui.logic.report import RELEASE_LOSS_FORMULA, RELEASE_LOSS_LABEL
from ui.logic.text import column_label, md, md_list
from ui.logic.tradeoff_grid import (
    EVERY_CLASS,
    EXHAUSTIVE_MAX,
    KEPT,
    MethodChoice,
    SweepForm,
    analysis_labels,
    attribute_labels,
    sweep_heading,
    swept_params,
    target_figure,
)
from ui.logic.workspace import FIRST_SEED, PARETO, SEEDS
from ui.page import PageContext, context, table_columns
from ui.sidebar import render_sidebar

#: One block per declared method with something to sweep: its ``main``, or parameters
#: declared ``sweep`` (top and bottom codes); not record swapping, whose steps need their
#: hierarchy, donor profiles and the household id (:func:`household_block`)
SWEPT = [m for m in page_methods()
         if (m.main or swept_params(m)) and not m.extra.get("household")
         and m.target != "table"]
#: The whole-table methods (synthesis), whether or not the Protect page offers them: their
#: parameters' values, no column (:func:`table_block`)
WHOLE_TABLE = [m for m in registry().values() if m.target == "table" and swept_params(m)]
#: The methods on households (record swapping): their ``main`` swept, their other parameters
#: as the Protect page holds them (:func:`ui.logic.tradeoff_grid.household_fixed`)
ON_HOUSEHOLDS = [m for m in page_methods() if m.main and m.extra.get("household")]
PARETO_LABELS = {p: name(PARETO_RISK[p]) for p in PARETO}
#: The losses a sweep ranks by (``sweep.LOSSES``), in the form and on the charts' axis
LOSS_LABELS = {LOSS: name(LOSS), **{m: LABELS[m] for m in LOSSES[1:]}}
LOSS_AXES = {LOSS: RELEASE_LOSS_LABEL,
             **{m: f"{LABELS[m]} (benchmark analyses)" for m in LOSSES[1:]}}
#: The epsilon target (docs/utility.md, "Attribute disclosure in a sweep")
EPSILON_TARGET = {"epsilon_max": "ε at most … (the largest local-DP ε of the perturbed "
                                 "columns)"}
#: The inference target, offered when a sensitive column is tagged
INFERENCE_TARGET = {"inference_gain": "attribute-inference gain on a sensitive column at most "
                                      "… points"}


@dataclass(frozen=True)
class Sweeping:
    """What the page's parts read, made once a run from its context (:func:`sweeping`)."""

    ctx: PageContext
    groups: ColumnGroups
    #: The benchmark analyses, None when there are none
    spec: dict[str, Any] | None
    #: The risk measures, with the population's when the file's sampling is known (the Risk
    #: page) or a weight is tagged, and the household figures with a household id
    risk_labels: dict[str, str]
    #: The tagged sensitive columns: the sweep's attribute-inference attack guesses them
    sensitive: list[str]
    #: The attribute-disclosure targets (docs/utility.md, "Attribute disclosure in a sweep")
    attribute_targets: dict[str, str]
    #: The form's widgets, kept between visits (:func:`keep` notes them)
    form_keys: list[str] = field(default_factory=list)

    @property
    def targets(self) -> list[str | None]:
        """The risk targets the form offers."""
        return [None, EVERY_CLASS, *self.risk_labels, *self.attribute_targets]


def sweeping(ctx: PageContext) -> Sweeping:
    """The page's :class:`Sweeping` for the context ``ctx``."""
    roles = ctx.roles
    sensitive = [c for c in roles.sensitive if c in ctx.df.columns]
    return Sweeping(
        ctx, ctx.groups(), state.analysis_spec(),
        tradeoff_grid.risk_labels(ctx.opts.k,
                                  bool(state.sampling()) or roles.weight is not None,
                                  households=roles.household is not None),
        sensitive, EPSILON_TARGET | (INFERENCE_TARGET if sensitive else {}))


def keep(page: Sweeping, key: str, default: object, options: list | None = None,
         choices: list | None = None) -> None:
    """Seed the widget ``key`` with its kept value (:func:`ui.state.seed_kept`) and note it
    among the widgets this page keeps."""
    state.seed_kept(key, default, options, choices)
    page.form_keys.append(key)


def method_block(page: Sweeping, m: Method) -> MethodChoice:
    """One method's part of the form: its columns, its values, its other swept parameters'
    values and, for a per-column method, each column's own."""
    groups, roles = page.groups, page.ctx.roles
    options = method_columns(m, groups, roles)
    st.markdown(f"**{m.label}** ("
                + ", ".join(filter(None, [m.main, *swept_params(m)])) + ")")
    if m.columns == "keys":  # the quasi-identifiers themselves
        chosen = list(roles.qi)
    else:
        default = method_defaults(m, groups, roles)
        keep(page, f"w_t_{m.name}_cols", default[:1] if m.per_column else default, options)
        chosen = st.multiselect(f"{m.label} columns", options, key=f"w_t_{m.name}_cols")
    text = ""
    if m.main:
        keep(page, f"w_t_{m.name}_values", m.sweep_values)
        text = st.text_input(f"{m.label} values", key=f"w_t_{m.name}_values",
                             placeholder="e.g. {}: 2, 5".format(
                                 (m.param(m.main).label or m.main).format(
                                     column="each column")))
    swept: dict[str, str] = {}  # the values of its other swept parameters
    for param in map(m.param, swept_params(m)):
        keep(page, f"w_t_{m.name}_{param.name}_values", "")
        swept[param.name] = st.text_input(
            f"{m.label}: {param.name} values", key=f"w_t_{m.name}_{param.name}_values",
            placeholder="none" if m.main is None else f"{param.default:g}",
            help=(param.label or param.name).format(column="each column") + ". "
            + (f"Each value is tried with every {m.main} value above (combined: one "
               "value)." if m.main else "Each value is a setting of each column "
               "(combined: every combination codes at one of them)."))
    held = tradeoff_grid.household_held(m, state.protect_settings(), roles.household)
    if held:
        st.caption("Drawn once per household, as on the Protect page.")
    own: dict[str, str] = {}  # a per-column method's own values (empty: those above)
    if m.per_column and options:
        with st.expander(f"{m.label} values per column"):
            for c in options:
                keep(page, f"w_t_{m.name}_values:{c}", "")
                own[c] = st.text_input(
                    f"{m.label} values of {md(c)}", key=f"w_t_{m.name}_values:{c}",
                    placeholder="the values above",
                    help=f"Used when {md(c)} is among the {m.label.lower()} columns.")
    return MethodChoice(m, chosen, text, own, swept, held=held)


def table_block(page: Sweeping, m: Method) -> MethodChoice:
    """A whole-table method's part of the form (synthesis): a values field per parameter it
    sweeps, no column (docs/utility.md, "Synthesis in a sweep")."""
    st.markdown(f"**{m.label}** ({', '.join(swept_params(m))}; the whole table)")
    swept: dict[str, str] = {}
    first = swept_params(m)[0]
    for param in map(m.param, swept_params(m)):
        key = f"w_t_{m.name}_{param.name}_values"
        keep(page, key, tradeoff_grid.swept_start(m, param.name))
        flags = param.type == "bool"
        swept[param.name] = st.text_input(
            f"{m.label}: {param.name} values", key=key,
            placeholder="true, false" if flags else "e.g. 5, 20",
            help=(param.label or param.name) + ". " + (param.help + " " if param.help else "")
            + ("Each value is a setting; " if param.name == first else
               f"Each value is tried with every {first} value (combined: one value); ")
            + ("true or false, separated by commas. " if flags else "")
            + "Empty: not swept. A synthetic row gives the released keys' risk, replicated "
              "uniques and DiSCO; what compares record by record (the linkage attack, IL1) "
              "is blank for it.")
    return MethodChoice(m, [], swept=swept)


def household_block(page: Sweeping, m: Method) -> MethodChoice:
    """A method on households' part of the form (with a household id): its ``main`` values,
    its other parameters those the Protect page holds, or why it cannot be swept yet."""
    ctx = page.ctx
    fixed = tradeoff_grid.household_fixed(m, state.protect_settings())
    st.markdown(f"**{m.label}** ({m.main})")
    keep(page, f"w_t_{m.name}_values", "")
    text = st.text_input(f"{m.label} values", key=f"w_t_{m.name}_values",
                         disabled=fixed is None, placeholder=f"e.g. {m.sweep_values}",
                         help=f"Each value is a setting: the households given another's "
                              f"geography, as a share of all (household id "
                              f"{md(ctx.roles.household or '')}). Empty: not swept.")
    if fixed is None:
        if not state.protect_settings().columns.get(m.name) and not ctx.geography():
            st.caption(f"{NO_GEOGRAPHY} If a column is an area, mark it as geography on the "
                       "Protect page (record swapping) to sweep the swap rate.")
        else:
            st.caption("Set its geography and donor profiles on the Protect page first: the "
                       "sweep takes them, and its other settings, from there.")
        return MethodChoice(m, [])
    st.caption(f"With the Protect page's {tradeoff_grid.fixed_text(m, fixed)}.")
    return MethodChoice(m, [], text, fixed=fixed)


def sweep_form(page: Sweeping) -> tuple[SweepForm, bool]:
    """The form, seeded from its last visit: what it holds, and whether it was submitted."""
    with st.form("sweep_form", border=True, enter_to_submit=False):  # Enter in a field: no sweep
        cols = st.columns(3)
        methods = []
        for i, m in enumerate(SWEPT):
            with cols[i % 3]:
                methods.append(method_block(page, m))
        if page.ctx.roles.household is not None:
            for i, m in enumerate(ON_HOUSEHOLDS, start=len(SWEPT)):
                with cols[i % 3]:
                    methods.append(household_block(page, m))
        else:  # a synthetic table keeps no household whole: not swept with a household id
            for i, m in enumerate(WHOLE_TABLE, start=len(SWEPT)):
                with cols[i % 3]:
                    methods.append(table_block(page, m))
        form = sweep_options(page, methods)
        submitted = st.form_submit_button("Run the sweep", icon=":material/play_arrow:",
                                          type="primary")
    for key in page.form_keys:
        state.keep_form_value(key, state.widget(key))  # for the next visit
    return form, submitted


def sweep_options(page: Sweeping, methods: list[MethodChoice]) -> SweepForm:
    """The form's settings below the methods': seeds, the Pareto front's risk, combining, the
    risk target and, with benchmark analyses, the loss and what to keep of them."""
    loss, kept, bound = LOSS, None, HOLDS
    sensitive, targets, attribute_targets = page.sensitive, page.targets, page.attribute_targets
    for key, default, choices in (
            ("w_t_seeds", 3, None), ("w_t_seed", 0, None),
            ("w_t_pareto", "linkage", list(PARETO_LABELS)), ("w_t_combine", False, None),
            ("w_t_exhaustive", False, None),
            ("w_t_target", None, targets), ("w_t_at_most", 1.0, None),
            ("w_t_target_column", sensitive[0] if sensitive else None, list(sensitive) or None)):
        # a workspace's choice the page lacks: the default
        keep(page, key, default, choices=choices)
    c1, c2, c3 = st.columns(3)
    seeds = c1.number_input("Seeds per randomised setting", *SEEDS, key="w_t_seeds")
    seed = c2.number_input("First seed", *FIRST_SEED, key="w_t_seed")
    pareto_risk = c3.radio("Pareto front by", ["linkage", "naive"], key="w_t_pareto",
                           format_func=PARETO_LABELS.get,
                           help="Which risk decides the Pareto-optimal settings: the linkage "
                                "attack sees every method; the released keys' re-identifications "
                                "(sdcMicro) do not see values moved at random.")
    c1, c2, c3 = st.columns(3)
    combine = c1.toggle("Combine the methods", key="w_t_combine",
                        help="Try every combination of the values above, each a recipe of "
                             "several steps in the Protect page's order; every method is also "
                             "tried off.")
    exhaustive = c1.toggle("Try every combination for the target", key="w_t_exhaustive",
                           help="Combined, with a risk target: evaluate every combination (the "
                                "command line's exhaustive search) instead of the pruned search, "
                                "which skips what monotone parameters settle and can miss the "
                                "best when risk is not monotone (PRAM between seeds, bands that "
                                f"are not nested). For at most {EXHAUSTIVE_MAX} combinations.")
    measure = c2.selectbox("Risk target", targets, key="w_t_target",
                           format_func=lambda m: "none" if m is None else
                           f"every class ≥ {page.ctx.opts.k} (k-anonymity)" if m == EVERY_CLASS
                           else attribute_targets[m] if m in attribute_targets
                           else page.risk_labels[m],
                           help="Find the setting that keeps this risk at most the value on "
                                "the right at the least information loss. \"Every class ≥ k\" "
                                "asks for no record in a class smaller than k (the value on "
                                "the right is then not used).")
    at_most = c3.number_input("at most", 0.0, step=0.1, format="%g", key="w_t_at_most")
    target_column = None
    if sensitive:
        target_column = c3.selectbox("sensitive column of the inference target", sensitive,
                                     key="w_t_target_column",
                                     help="The column whose attribute-inference gain the "
                                          "\"attribute-inference gain\" target bounds.")
    if page.spec is not None:
        keep(page, "w_t_loss", LOSS, choices=list(LOSSES))
        keep(page, "w_t_keep", None, choices=[None, *KEPT])
        keep(page, "w_t_keep_bound", HOLDS)
        c1, c2, c3 = st.columns(3)
        loss = c1.radio("Loss axis", list(LOSSES), key="w_t_loss", format_func=LOSS_LABELS.get,
                        help="What the Pareto front and the best setting rank by, and the "
                             "charts' loss axis: IL1 over the released columns, or what the "
                             "benchmark analyses lose: 1 − their mean CI overlap (0: every "
                             "interval reproduced), the largest total variation distance of "
                             "their tables, or S_pMSE. " + S_PMSE_RULE)
        kept = c2.selectbox("and keep", [None, *KEPT], key="w_t_keep",
                            format_func=lambda m: "nothing more" if m is None
                            else f"{LABELS[m]} {KEPT[m]}",
                            help="With a risk target, the best setting must also keep this "
                                 "figure of the benchmark analyses: the mean CI overlap at "
                                 f"least the value on the right ({HOLDS:g}: what an analysis "
                                 "needs to hold), the share of analyses that hold at least "
                                 "it (1: every analysis holds, by the verdict the Protect "
                                 "page shows), the worst-table TVD or S_pMSE at most it. "
                                 + S_PMSE_RULE + " " + md(VERDICT_RULE))
        bound = c3.number_input("kept at", 0.0, step=0.05, format="%g", key="w_t_keep_bound")
    else:
        st.caption("Benchmark analyses (a regression, a mean by group, a table) can be the loss "
                   "axis and part of the target: write them in the Protect page's \"Benchmark "
                   "analyses\" editor.")
    return SweepForm(methods, int(seeds), int(seed), pareto_risk, bool(combine),
                     bool(exhaustive), measure, float(at_most), loss, kept, float(bound),
                     target_column)


def run(page: Sweeping, form: SweepForm, notices: DeltaGenerator) -> None:
    """Run the sweep of ``form`` in a worker process, a progress bar and a cancel button in
    ``notices``, and keep it (:func:`ui.state.set_sweep`); say why a form makes no sweep."""
    ctx = page.ctx
    ds, roles, opts, df = ctx.ds, ctx.roles, ctx.opts, ctx.df
    running = notices.empty()  # the cancel button and the progress bar while it runs
    try:
        grid = tradeoff_grid.build_grid(
            form, numeric=page.groups.numeric, k=opts.k, known=ctx.known(),
            not_released=[c for c in roles.ignore if c in df.columns], analysis=page.spec,
            sampled=state.sampling(), sensitive=page.sensitive, household=roles.household)
        state.set_sweep_running(True)  # still set on the next run if cancelled
        with running.container():
            st.button("Cancel the sweep", icon=":material/cancel:", key="t_cancel",
                      help="Stops the sweep; the last finished sweep stays.")
            bar = st.progress(0.0, text="Running the sweep…")

        def progress(done: int, total: int, label: str) -> None:
            bar.progress(done / total, text=f"{done}/{total}: {md(label)}")

        # in a worker process: a Cancel click or a closed tab stops this run at the progress
        # bar, which stops the sweep
        result = workers.run(run_sweep, df, list(roles.qi), grid, roles.weight, opts.na,
                             opts.alpha, progress=progress)
        state.forget_click("t_scatter")  # a click on the last sweep's chart
        state.forget_widgets("t_scatter")
        state.set_sweep(result, grid, ds.dataset_id, list(roles.qi))
    except (SdcInputError, workers.WorkerLost) as err:
        notices.error(md(err), icon=":material/error:")
    running.empty()
    state.set_sweep_running(False)


def open_on_protect(page: Sweeping, table: pd.DataFrame, row: int,
                    source: str = "this setting of the sweep") -> None:
    """Put a row's recipe on the Protect page and go there (or say why it cannot); a notice
    there says what it replaced, with Undo at hand (``source``: what was opened)."""
    roles = page.ctx.roles
    recipe = json.loads(table.at[row, "recipe"])
    try:
        settings = from_steps(recipe["steps"], int(recipe["seed"]),
                              offered_columns(page.groups, roles))
    except SdcInputError as err:
        st.error(f"This setting cannot be shown on the Protect page: {md(err)}. Download its "
                 "recipe and apply it with the command line.", icon=":material/error:")
        return
    before = state.protect_settings()
    kind, text = replaced_notice(before.steps(roles.qi), before.seed, settings.steps(roles.qi),
                                 settings.seed, source)
    state.set_protect_settings(settings, reseed_widgets=True)
    state.set_notice("opened", kind, text)
    st.switch_page("views/protect.py")


def clicked_row(points: list[dict], table: pd.DataFrame) -> int | None:
    """The setting of a new click on the chart (not the baseline), once per click."""
    ids = [p.get("customdata") for p in points]
    ids = [int(i[0] if isinstance(i, list) else i) for i in ids if i is not None]
    row = next((i for i in ids if i in table.index and table.at[i, "method"] != "BASELINE"),
               None)
    if row is None or not state.new_click("t_scatter", row):
        return None
    return row


def best_setting(page: Sweeping, table: pd.DataFrame, sweep: dict) -> None:
    """The cheapest setting under the target: what it is, open it, download its recipe."""
    result = sweep["result"]
    target, best, loss = sweep["grid"]["target"], result.best, result.loss
    goal = tradeoff_grid.target_text(target, sweep["grid"]["k"], len(page.ctx.df),
                                     page.risk_labels)
    kept = target.get("keep")
    figure = target_figure(target)  # the table's column the target bounds
    if best is None:
        rows = table.iloc[1:]
        low = rows[figure].min()
        under = rows[rows[figure] <= target["at_most"]]
        near = "" if not kept or under.empty else (
            f"; of the settings under the risk, the best {md(LABELS[kept['measure']])} is "
            + (f"{under[kept['measure']].max():.4g}" if KEPT[kept["measure"]] == "≥"
               else f"{under[kept['measure']].min():.4g}"))
        st.warning(f"No setting meets {md(goal)} (the lowest risk is {low:.4g}{near}). Try "
                   "stronger values or more methods.", icon=":material/block:")
        return
    row = table.loc[best]
    risk = figure
    figures = [f"{md(name(COUNT_AND_PERCENT[risk]))} {count_and_percent(risk, row)}"
               if risk in COUNT_AND_PERCENT else
               f"{md(page.risk_labels.get(risk) or sweep_heading(risk) or risk)} "
               f"{row[risk]:.4g}"]
    if kept:
        figures.append(f"{md(LABELS[kept['measure']])} {row[kept['measure']]:.4g}")
    if loss != LOSS and (not kept or loss != kept["measure"]):
        figures.append(f"{md(LABELS[loss])} {row[loss]:.4g}")
    if pd.isna(row.get(RECORD_BY_RECORD)):  # a synthetic row has neither
        figures += [f"{column_label(LOSS)} {loss_text(row[LOSS])}",  # as the Protect page's
                    f"{int(row['suppressed_values'])} suppressed values"]       # tile
    else:
        figures.append("a synthetic file (IL1 and the linkage attack do not apply)")
    st.success(f"**Cheapest setting under {md(goal)}** (by {md(LOSS_LABELS[loss])}): "
               f"{md(setting_labels(table)[best])} — {', '.join(figures)}.",
               icon=":material/star:")
    a, b = st.columns(2)
    if a.button("Open the best on the Protect page", icon=":material/shield:", key="t_open_best"):
        open_on_protect(page, table, best, "the sweep's best setting")
    recipe = json.loads(row["recipe"])
    b.download_button("Download its recipe (JSON)",
                      json.dumps({"version": 1, **recipe}, indent=2, ensure_ascii=False),
                      f"{page.ctx.ds.stem}_best_recipe.json", "application/json",
                      on_click="ignore", icon=":material/download:", key="t_best_recipe")


def show_sweep(page: Sweeping, sweep: dict) -> None:
    """The last sweep on this data set: its best setting under the target, its charts (a
    click opens a setting on the Protect page), its table, and a setting to load."""
    ds = page.ctx.ds
    result = sweep["result"]
    table: pd.DataFrame = result.table
    g = sweep["grid"]
    loss, loss_axis = result.loss, LOSS_AXES[result.loss]
    if sweep["qi"] != list(page.ctx.roles.qi):
        st.warning("The quasi-identifiers changed since this sweep ran: run it again.",
                   icon=":material/sync_problem:")
    if g.get("target"):
        best_setting(page, table, sweep)
    risk_labels = page.risk_labels | attribute_labels(list(table.columns))
    choices = list(risk_labels)
    if state.widget("w_t_risk", None) not in choices:
        state.forget_widgets("w_t_risk")  # an attribute figure this sweep lacks
    if g.get("target") and not state.has_widget("w_t_risk") \
            and target_figure(g["target"]) in choices:
        state.set_widget("w_t_risk", target_figure(g["target"]))  # the target's axis first
    risk_choice = st.radio("Risk measure", choices, horizontal=True, key="w_t_risk",
                           format_func=risk_labels.get,
                           help="The linkage attack is what an attacker who knows the true "
                                "values re-identifies; the released keys' figures read the "
                                "released values as if they were true.")
    label = risk_labels[risk_choice]
    # ε is ∞ where a column has no deniability: such rows have no point on the charts
    no_point = table[risk_choice].map(lambda v: isinstance(v, float) and math.isinf(v))
    # nor has a synthetic row where an axis compares record by record (the linkage attack, IL1)
    unmatched = off_the_front(table, risk_choice, loss)
    plotted = table[~no_point & ~unmatched]
    combined = bool(g.get("combine"))
    kind = "combinations" if combined else "one-step settings"
    about = (f"{ds.name}; sweep of {len(table) - 1} {kind}, seeds {g['seed']}–"
               f"{g['seed'] + g['seeds'] - 1}; quasi-identifiers {', '.join(sweep['qi'])}"
               + (f"; attacker also knows {', '.join(g['known'])}" if g.get("known") else ""))
    on_axis = g.get("target") and target_figure(g["target"]) == risk_choice
    clicked = charts.show(
        tradeoff_scatter(plotted, risk_choice, loss, label, loss_axis,
                         target=g["target"]["at_most"] if on_axis else None,
                         best=result.best),
        f"{ds.stem}_tradeoff", key="t_scatter", select=True, context=about)
    if no_point.any():
        n = int(no_point.sum())
        st.caption(f"{n} {'row has' if n == 1 else 'rows have'} no deniability (ε = ∞): "
                   f"{'it is' if n == 1 else 'they are'} left out of the charts.")
    if unmatched.any():
        st.caption(synthetic_text(int(unmatched.sum()), label, loss_axis))
    row = clicked_row(clicked, table)
    if row is not None:
        open_on_protect(page, table, row)
    if not combined:
        swept = [m for m in table["method"].unique() if m != "BASELINE"]
        method = st.selectbox("Method for the parameter plots", swept, key="w_t_method")
        part = table[table["method"].isin(["BASELINE", method])]
        param = part["param_name"].iloc[-1]
        loss_title = "Information loss" if loss == LOSS else LABELS[loss]
        a, b = st.columns(2)
        with a:
            charts.show(parameter_lines(part[~no_point], risk_choice, label,
                                        f"{label} against {method} {param}"),
                        f"{ds.stem}_risk_by_{method}_{param}", key="t_risk", context=about)
        with b:
            charts.show(parameter_lines(part, loss, loss_axis,
                                        f"{loss_title} against {method} {param}"),
                        f"{ds.stem}_loss_by_{method}_{param}", key="t_loss", context=about)
    sweep_table(result, g)
    load_setting(page, table, kind)


def synthetic_text(n: int, risk: str, loss: str) -> str:
    """Why ``n`` synthetic rows have no point on a chart of ``risk`` against ``loss``, in
    one line."""
    rows = "synthetic row has" if n == 1 else "synthetic rows have"
    return (f"{n} {rows} no point: {md(risk)} or {md(loss)} compares record by record, and "
            "a synthetic record is the release of no original record. The released keys' "
            "re-identifications against a loss of the benchmark analyses put both kinds of "
            "release on one plot.")


def sweep_table(result: SweepResult, g: dict) -> None:
    """The sweep's table, a row a setting headed by its recipe, and what its columns are."""
    table, loss = result.table, result.loss
    shown = table.drop(columns="recipe")
    if shown["param_value"].isna().all():  # a combined grid: its values have columns of their own
        shown = shown.drop(columns="param_value")
    # every parameter value of a row in its first column, pinned: the table scrolls sideways
    # under it (a band's origin and a combination's values are not off-screen)
    shown.insert(0, "setting", setting_labels(table))
    analyses = [a["name"] for a in (g.get("analysis") or {}).get("analyses", [])]
    infinite = [c for c in shown.columns if shown[c].dtype.kind == "f"
                and shown[c].map(lambda v: math.isinf(v)).any()]
    for c in infinite:  # ε of a column with no deniability: "∞", the others as numbers
        shown[c] = shown[c].map(lambda v: "∞" if math.isinf(v) else
                                None if math.isnan(v) else f"{v:.4f}")
    headings = analysis_labels(analyses) | {
        c: h for c in shown.columns if (h := sweep_heading(c)) is not None}
    st.dataframe(shown, hide_index=True, width="stretch", column_config=table_columns(
        shown, {c: "%.4f" for c in shown.columns if shown[c].dtype.kind == "f"
                and c != "param_value"}, labels=headings)
        | {"setting": st.column_config.Column("setting", width="large", pinned=True,
                                              help="The row's recipe: every parameter value")})
    front_by = g.get("pareto_risk", "linkage")
    st.caption(f"pareto: no other setting is at least as good on {name(PARETO_RISK[front_by])}"
               + (", information loss (IL1 over the released columns)" if loss == LOSS
                  else f", {md(LABELS[loss])} of the benchmark analyses")
               + " and suppressed values, and better on one. " + RELEASE_LOSS_FORMULA
               + (f" The attacker also knows {md_list(g['known'])}." if g.get("known") else ""))
    if g.get("analysis"):
        st.caption(f"Benchmark analyses: {md_list(analyses)}. The mean CI overlap is the mean "
                   "over the analyses with intervals of how much each estimate's protected "
                   "confidence interval overlaps the original one (1: reproduced; an analysis "
                   f"needs {HOLDS:g} or more to hold), 1 − it the loss; the columns \"CI "
                   "overlap: …\" and \"TVD: …\" give each analysis's own, \"holds: …\" 1 when "
                   "its verdict is \"holds\" (the share of seeds, for a random method), and the "
                   "share of analyses that hold how many do; the worst-table TVD is the "
                   "largest total variation distance between the original and protected "
                   "tables (0: the same, 1: disjoint). " + md(S_PMSE_RULE))
    if result.off_front:
        rows = "row is" if result.off_front == 1 else "rows are"
        st.caption(f"{result.off_front} synthetic {rows} left out of the Pareto front and "
                   "the best setting: the front's risk or loss compares record by record. "
                   "Their blank figures are not zeros; the column record_by_record says why.")
    if result.pruned:
        st.caption(f"The pruned search evaluated {result.evaluated} of {result.asked} "
                   "combinations: it skips those that monotone parameters settle (stronger "
                   "than one that meets the target, weaker than one that fails it)."
                   + (f" Evaluated pairs that contradict it here: {result.violations}; the "
                      "best may differ from trying every combination."
                      if result.violations else ""))
    elif g.get("search") == "exhaustive":
        st.caption(f"The exhaustive search evaluated every one of the {result.evaluated} "
                   "combinations.")


def load_setting(page: Sweeping, table: pd.DataFrame, kind: str) -> None:
    """A setting of the sweep to open on the Protect page."""
    labels = setting_labels(table)
    rows = table.index[table["method"] != "BASELINE"].tolist()
    pick = st.selectbox("Load a setting into Protect", rows, key="w_t_pick",
                        help="Or click its point in the chart above.",
                        format_func=lambda i: labels[i] + (" (Pareto-optimal)"
                                                           if table.at[i, "pareto"] else ""))
    if st.button("Open it on the Protect page", icon=":material/shield:") and pick is not None:
        open_on_protect(page, table, pick)
    st.caption(f"Sweep of {len(table) - 1} {kind} on {md(page.ctx.ds.name)}; each row is its "
               "recipe with the first seed, so the Protect page shows one of its runs. Click a "
               "point of the chart to open its setting on the Protect page.")


st.title("Trade-offs")
st.caption("Try several settings of each method, one at a time or in every combination, and "
           "compare what each removes in risk with what it costs in information; give a risk "
           "target to find the cheapest setting that meets it. Randomised methods run over "
           "several seeds: their points carry error bars. The risk axis is by default the "
           "linkage attack, which every method moves; the released keys' measures are there "
           "too. With benchmark analyses, what they lose can be the loss axis and part of the "
           "target.")
page = sweeping(context(purpose="first"))
form, submitted = sweep_form(page)
notices = st.container()  # one slot in every run: what follows keeps its place (and state)
if submitted:
    run(page, form, notices)
elif state.sweep_running():
    state.set_sweep_running(False)
    notices.info("The sweep was cancelled." + (" The results below are from the previous "
                                               "sweep." if state.sweep() is not None else ""),
                 icon=":material/cancel:")
if (last := state.sweep(page.ctx.ds.dataset_id)) is not None:
    show_sweep(page, last)
render_sidebar()
