"""Trade-offs page: sweep parameters, compare risk and loss, pick a setting."""

import json

import pandas as pd
import streamlit as st

from sdc_core.errors import SdcInputError
from sdc_core.sweep import run_sweep
from ui import charts, state
from ui.page import (
    column_groups,
    method_columns,
    method_defaults,
    require_quasi_identifiers,
)
from ui.protect import from_steps, page_methods
from ui.sidebar import render_sidebar
from ui.text import md, md_list

st.title("Trade-offs")
st.caption("Try several settings of each method, one at a time, and compare what each removes "
           "in risk with what it costs in information. Randomised methods run over several "
           "seeds: their points carry error bars. The risk axis is by default the linkage "
           "attack, which every method moves; the released keys' measures are there too.")
ds = state.ensure_dataset()
roles = state.roles()
opts = state.risk_options()
df = ds.df
require_quasi_identifiers(roles, "first")

groups = column_groups(ds, roles)
numeric = groups.numeric

SWEPT = [m for m in page_methods() if m.main]  # one block per declared method
PARETO_LABELS = {"linkage": "linkage attack", "naive": "released keys"}
RISK_LABELS = {"linkage_reidentifications": "linkage attack: re-identifications",
               "linkage_risk_percent": "linkage attack: risk (%)",
               "expected_reidentifications": "released keys: expected re-identifications",
               "avg_linkage_risk_percent": "released keys: average risk (%)",
               "percent_unique": "unique records (%)",
               "percent_k_le_threshold": f"k ≤ {opts.k} (%)"}
known = state.known_columns(df)

settings = []
with st.form("sweep_form", border=True):
    cols = st.columns(3)
    for i, m in enumerate(SWEPT):
        options = method_columns(m, groups, roles)
        with cols[i % 3]:
            st.markdown(f"**{m.label}** ({m.main})")
            if m.columns == "keys":  # the quasi-identifiers themselves
                chosen = list(roles.qi)
            else:
                default = method_defaults(m, groups, roles)
                chosen = st.multiselect(f"{m.label} columns", options,
                                        default=(default[:1] if m.per_column else default),
                                        key=f"w_t_{m.name}_cols")
            text = st.text_input(f"{m.label} values", m.sweep_values, key=f"w_t_{m.name}_values",
                                 placeholder=f"e.g. {m.param(m.main).label or m.main}: 2, 5")
            settings.append((m, chosen, text))
    c1, c2, c3 = st.columns(3)
    seeds = c1.number_input("Seeds per randomised setting", 1, 20, 3, key="w_t_seeds")
    seed = c2.number_input("First seed", 0, 2**31 - 1, 0, key="w_t_seed")
    pareto_risk = c3.radio("Pareto front by", ["linkage", "naive"], key="w_t_pareto",
                           format_func=PARETO_LABELS.get,
                           help="Which risk decides the Pareto-optimal settings: the linkage "
                                "attack sees every method; the released keys' re-identifications "
                                "(sdcMicro) do not see values moved at random.")
    run = st.form_submit_button("Run the sweep", icon=":material/play_arrow:", type="primary")


def parse_values(text: str, label: str) -> list[float | int]:
    try:
        values = [float(v) for v in text.replace(";", ",").split(",") if v.strip()]
    except ValueError:
        raise SdcInputError(f"{label}: values must be numbers separated by commas") from None
    return [int(v) if v.is_integer() else v for v in values]


if run:
    try:
        grid_settings = []
        for m, chosen, text in settings:
            values = parse_values(text, m.label)
            fixed = {p.name: p.default for p in m.controls if p.name != m.main}
            if not values or not chosen:
                continue
            if m.target == "column":
                grid_settings += [{"method": m.name, "column": c, "param": m.main,
                                   "values": values, "fixed": fixed} for c in chosen]
            else:
                grid_settings.append({"method": m.name, "columns": chosen, "param": m.main,
                                      "values": values, "fixed": fixed})
        if not grid_settings:
            raise SdcInputError("choose at least one method with a column and values")
        grid = {"seeds": int(seeds), "seed": int(seed), "numeric": numeric, "k": opts.k,
                "known": known, "pareto_risk": pareto_risk, "settings": grid_settings}
        bar = st.progress(0.0, text="Running the sweep…")
        table = run_sweep(df, roles.qi, grid, roles.weight, opts.na, opts.alpha,
                          progress=lambda done, total, label: bar.progress(
                              done / total, text=f"{done}/{total}: {label}"))
        bar.empty()
        for key in ("t_clicked", "t_scatter"):  # a click on the last sweep's chart
            st.session_state.pop(key, None)
        st.session_state["sweep"] = {"table": table, "grid": grid, "dataset_id": ds.dataset_id,
                                     "qi": list(roles.qi)}
    except SdcInputError as err:
        st.error(str(err), icon=":material/error:")

def pick_from_click(points: list[dict], table: pd.DataFrame) -> None:
    """A click on a setting's point selects it in the select box below (once per new click,
    so that choosing with the keyboard afterwards is not overridden)."""
    ids = [p.get("customdata") for p in points]
    ids = [int(i[0] if isinstance(i, list) else i) for i in ids if i is not None]
    row = next((i for i in ids if i in table.index and table.at[i, "method"] != "BASELINE"),
               None)
    if row is not None and row != st.session_state.get("t_clicked"):
        st.session_state["t_clicked"] = row
        st.session_state["w_t_pick"] = row


sweep = st.session_state.get("sweep")
if sweep and sweep["dataset_id"] == ds.dataset_id:
    table: pd.DataFrame = sweep["table"]
    if sweep["qi"] != list(roles.qi):
        st.warning("The quasi-identifiers changed since this sweep ran: run it again.",
                   icon=":material/sync_problem:")
    risk_choice = st.radio("Risk measure", list(RISK_LABELS), horizontal=True, key="w_t_risk",
                           format_func=RISK_LABELS.get,
                           help="The linkage attack is what an attacker who knows the true "
                                "values re-identifies; the released keys' figures read the "
                                "released values as if they were true.")
    label = RISK_LABELS[risk_choice]
    g = sweep["grid"]
    context = (f"{ds.name}; sweep of {len(table) - 1} one-step settings, seeds {g['seed']}–"
               f"{g['seed'] + g['seeds'] - 1}; quasi-identifiers {', '.join(sweep['qi'])}"
               + (f"; attacker also knows {', '.join(g['known'])}" if g.get("known") else ""))
    clicked = charts.show(charts.tradeoff_scatter(table, risk_choice, "IL1_overall", label,
                                                  "IL1 overall (information loss)"),
                          f"{ds.name}_tradeoff", key="t_scatter", select=True, context=context)
    pick_from_click(clicked, table)
    swept = [m for m in table["method"].unique() if m != "BASELINE"]
    method = st.selectbox("Method for the parameter plots", swept, key="w_t_method")
    part = table[table["method"].isin(["BASELINE", method])]
    param = part["param_name"].iloc[-1]
    a, b = st.columns(2)
    with a:
        charts.show(charts.parameter_lines(part, risk_choice, label,
                                           f"{label} against {method} {param}"),
                    f"{ds.name}_risk_by_{method}_{param}", key="t_risk", context=context)
    with b:
        charts.show(charts.parameter_lines(part, "IL1_overall", "IL1 overall",
                                           f"Information loss against {method} {param}"),
                    f"{ds.name}_loss_by_{method}_{param}", key="t_loss", context=context)
    st.dataframe(table.drop(columns="step"), hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.4f") for c in
                                table.columns if table[c].dtype.kind == "f"
                                and c != "param_value"})
    front_by = sweep["grid"].get("pareto_risk", "linkage")
    st.caption("pareto: no other setting is at least as good on "
               + {"linkage": "re-identifications by the linkage attack",
                  "naive": "re-identifications read from the released keys"}[front_by]
               + ", IL1 overall and suppressed values, and better on one."
               + (f" The attacker also knows {md_list(sweep['grid']['known'])}."
                  if sweep["grid"].get("known") else ""))
    rows = table.index[table["method"] != "BASELINE"].tolist()
    pick = st.selectbox("Load a setting into Protect", rows, key="w_t_pick",
                        help="Or click its point in the chart above.",
                        format_func=lambda i: f"{table.at[i, 'method']} {table.at[i, 'column']}"
                                              f" {table.at[i, 'param_name']} = "
                                              f"{table.at[i, 'param_value']:g}"
                                              + (" (Pareto-optimal)" if table.at[i, 'pareto']
                                                 else ""))
    if st.button("Open it on the Protect page", icon=":material/shield:") and pick is not None:
        step = json.loads(table.at[pick, "step"])
        state.set_protect_settings(from_steps([step], int(sweep["grid"]["seed"])),
                                   reseed_widgets=True)
        st.switch_page("pages/protect.py")
    st.caption(f"Sweep of {len(table) - 1} settings on {md(ds.name)}; each row is the one-step "
               "recipe with the first seed, so the Protect page shows one of its runs. Click a "
               "point of the chart to select its setting.")

render_sidebar()
