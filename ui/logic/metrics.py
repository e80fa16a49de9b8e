"""The metric table the Protect page, the Risk page and the report share (no Streamlit): one
row per measure, named by :mod:`sdc_core.names`, with its value before and after protection,
the change, what it means and how it is written, so that every view shows the same figure
under the same name.

A row's ``name`` is a tile's label (:func:`sdc_core.names.tile`), its ``label`` a table's
heading (:func:`sdc_core.names.label`, the report's); ``value`` and ``delta`` are the texts a
tile shows (``delta`` None when nothing changed or there is no figure before)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sdc_core.names import COUNT_AND_PERCENT, MEASURES, count_and_percent, label, name, tile
from ui.logic.text import delta_text, smallest_class_help
from ui.logic.tiles import DeltaColor, Tile
from ui.logic.workbench import LINKAGE_KEYS, RISK_KEYS

#: How IL1 reads a numeric value that protection turned into a missing one (the default).
IL1_READING = ("IL1 counts a numeric value blanked by protection as the maximum loss 1 "
               "(sdcMicro leaves such values out; python -m sdc_core compare --il1-missing "
               "ignore gives its reading).")

#: The headline loss as the pages and the report name it (``IL1_release``).
RELEASE_LOSS_LABEL = f"{name('IL1_release')} (information loss)"

#: What the headline loss is (:mod:`sdc_core.utility.il1`).
RELEASE_LOSS_FORMULA = (
    "IL1 release = (1/|C|) · Σ IL1(c) over the released columns C, every column not tagged "
    "\"not released\": a changed column adds its IL1 (0 = unchanged, 1 = every value lost; a "
    "column dropped from the release counts 1), so adding a step on another column never "
    "lowers it. The Protect and Trade-offs pages, the report and python -m sdc_core compare "
    "give the same figure; IL1 overall is a mean over the changed columns "
    "only and falls when a cheap step on another column is added.")


def release_loss_help(n_released: int) -> str:
    """What the headline loss is, with the number |C| of released columns."""
    return f"{RELEASE_LOSS_FORMULA} Here |C| = {n_released}."


#: The Protect page's risk tiles, in their order (``drisk_percent`` follows when measured).
PROTECT_RISK = ("linkage_reidentifications", "expected_reidentifications",
                "linkage_percent_certain", "global_risk_percent", "percent_unique",
                "percent_k_le_threshold", "min_k", "percent_below_k")
#: The Risk page's tiles of a table's risk, in their order.
RISK_PAGE = ("expected_reidentifications", "global_risk_percent", "percent_unique",
             "percent_k_le_threshold", "min_k", "percent_below_k", "median_k")
#: The report's risk table: the released keys' measures, then the linkage attack's.
REPORT_RISK = (*RISK_KEYS, *LINKAGE_KEYS)
#: The information-loss figures, the headline first.
UTILITY = ("IL1_release", "IL1_overall", "IL1_numeric", "IL1_categorical",
           "eigenvalue_similarity_percent")

#: Measures whose change reads in whole figures (a class size).
_SIZES = ("min_k", "median_k")
#: ``st.metric``'s delta colour of a measure, by which way is better (sdc_core.names).
_DELTA_COLOR: dict[str | None, DeltaColor] = {
    "higher": "normal", "lower": "inverse", None: "off"}


@dataclass(frozen=True)
class MetricRow:
    """One measure of the table (module docstring)."""

    key: str
    name: str
    label: str
    after: Any
    before: Any
    value: str
    delta: str | None
    help: str
    #: ``st.metric``'s ``delta_color``: "inverse" for a risk (down is good), "normal" for a
    #: class size (up is good), "off" for an information-loss figure
    delta_color: DeltaColor

    @property
    def tile(self) -> Tile:
        """The measure as a tile (:mod:`ui.logic.tiles`)."""
        return Tile(self.name, self.value, self.delta, self.delta_color, self.help)


def _keys_risk() -> str:
    return name("avg_linkage_risk_percent")


#: What each risk measure is, given the threshold k and the figures after protection.
_RISK_HELP: dict[str, Callable[[int | str, Mapping[str, Any]], str]] = {
    "linkage_reidentifications": lambda k, a: (
        "Expected re-identifications Σ p_i: what an attacker who knows the true values "
        "actually re-identifies (of the attackers the attack runs, the one that re-identifies "
        f"most). In brackets the {name('linkage_risk_percent')}, 100·mean(p_i): the same in "
        "percent of the records."),
    "expected_reidentifications": lambda k, a: (
        "Expected re-identifications Σ 1/f_k: how unique the released keys look, read as if "
        "they were true (sdcMicro): an attacker picks one of the f_k matching records at "
        f"random. In brackets the {_keys_risk()}, 100·mean(1/f_k): the same in percent of the "
        "records."),
    "linkage_percent_certain": lambda k, a: (
        "Records the attacker links with certainty: a single best candidate, and the right "
        "one."),
    "global_risk_percent": lambda k, a: (
        "sdcMicro's global risk: mean individual risk of the released keys (with a weight, "
        f"population uniqueness); without a weight it equals the {_keys_risk()} "
        "100·mean(1/f_k)."),
    "percent_unique": lambda k, a: (
        "Records alone in their class of released keys: no other record shares their "
        "combination of key values (f_k = 1)."),
    "percent_k_le_threshold": lambda k, a: (
        f"Records whose class of released keys has at most k = {k} members (f_k ≤ {k}): a "
        f"class of exactly {k} counts."),
    "min_k": lambda k, a: smallest_class_help(a["min_k_wildcard"], a["min_k_category"]),
    "percent_below_k": lambda k, a: (
        f"Records whose class of released keys has fewer than k = {k} members (f_k < {k}): "
        "what k-anonymity (and local suppression) brings to 0. "
        f"\"{tile('percent_k_le_threshold', k)}\" also counts classes of exactly {k}."),
    "median_k": lambda k, a: "The median of f_k over records.",
    "min_k_wildcard": lambda k, a: "The smallest class when a blank key matches any value "
                                   "(sdcMicro's reading).",
    "min_k_category": lambda k, a: "The smallest class when a blank key is a value of its own.",
    "avg_linkage_risk_percent": lambda k, a: (
        "100·mean(1/f_k): the released keys' expected re-identifications in percent of the "
        "records."),
    "linkage_risk_percent": lambda k, a: (
        "100·mean(p_i): the linkage attack's re-identifications in percent of the records."),
    "drisk_percent": lambda k, a: (
        "sdcMicro's interval disclosure on the distance columns: the share of records whose "
        "every distance value lies within ±5 % of a standard deviation of its released value."),
}


def figures(*sources: Any, keys: Sequence[str] = (*RISK_KEYS, "median_k", *LINKAGE_KEYS)
            ) -> dict[str, Any]:
    """The figures ``keys`` of ``sources`` (a :class:`~sdc_core.risk.RiskProfile`, a
    :class:`~sdc_core.risk.linkage.LinkageResult`, a mapping), each from the first that has
    it: the "before" of :func:`risk_rows`."""
    out: dict[str, Any] = {}
    for key in keys:
        for s in sources:
            if isinstance(s, Mapping):
                if key in s:
                    out[key] = s[key]
                    break
            elif hasattr(s, key):
                out[key] = getattr(s, key)
                break
    return out


def _value(key: str, after: Mapping[str, Any]) -> str:
    if key in COUNT_AND_PERCENT:
        return count_and_percent(key, after)
    if key in _SIZES:
        return f"{after[key]:g}"
    return f"{after[key]:.2f} %"


def _delta(key: str, after: Mapping[str, Any], before: Mapping[str, Any] | None) -> str | None:
    if before is None or before.get(key) is None:
        return None
    unit = "" if key in COUNT_AND_PERCENT or key in _SIZES else " points"
    return delta_text(after[key], before[key], unit)


#: What a figure that gives no number shows in its place.
NO_FIGURE = "—"


def unavailable_row(key: str, reason: str, k: int | str = "k",
                    before: Mapping[str, Any] | None = None) -> MetricRow:
    """The tile or table row of the measure ``key`` that gives no number after protection
    (a synthetic release's linkage attack): "—", ``reason`` as its help, the figure
    ``before`` when there is one."""
    return MetricRow(key, tile(key, k), label(key, k), None,
                     None if before is None else before.get(key), NO_FIGURE, None,
                     f"No figure: {reason}.", "off")


def risk_rows(after: Mapping[str, Any], before: Mapping[str, Any] | None, k: int | str,
              keys: Sequence[str] = PROTECT_RISK, unaligned: str | None = None
              ) -> list[MetricRow]:
    """The rows of the risk measures ``keys`` (with ``drisk_percent`` after them when
    ``after`` has it and ``keys`` is the Protect page's): ``after`` the figures measured
    (the Protect page's ``Workbench.after``, a profile's :func:`figures`), ``before`` those
    of the data as loaded (:func:`figures`; None: no change shown), ``k`` the threshold.
    ``unaligned``: why the release's rows are not the original's (a synthetic release), so
    a measure ``after`` lacks (the linkage attack's) is an :func:`unavailable_row`."""
    keys = list(keys)
    if keys == list(PROTECT_RISK) and "drisk_percent" in after:
        keys.append("drisk_percent")
    return [unavailable_row(key, unaligned, k, before)
            if unaligned is not None and key not in after else
            MetricRow(key, tile(key, k), label(key, k), after[key],
                      None if before is None else before.get(key), _value(key, after),
                      _delta(key, after, before), _RISK_HELP[key](k, after),
                      _DELTA_COLOR[MEASURES[key].better])
            for key in keys]


def loss_text(value: float) -> str:
    """An IL1 figure as every tile writes it, the headline and the others alike: four decimals,
    and four significant digits below 0.01 (the headline, a mean over every released column,
    is often that small).

    Examples
    --------
    >>> [loss_text(v) for v in (0.0, 0.0438571, 0.00168681, 0.5)]
    ['0.0000', '0.0439', '0.001687', '0.5000']
    """
    if value == 0 or not math.isfinite(value) or abs(value) >= 0.01:
        return f"{value:.4f}"
    return f"{value:.{3 - math.floor(math.log10(abs(value)))}f}"


#: How each information-loss figure is written, and what it is.
_UTILITY_FORMAT: dict[str, Callable[[float], str]] = {
    "IL1_release": loss_text, "IL1_overall": loss_text, "IL1_numeric": loss_text,
    "IL1_categorical": loss_text, "eigenvalue_similarity_percent": "{:.3f} %".format}
_UTILITY_HELP = {
    "IL1_overall": "The mean of the numeric and categorical IL1 of the changed columns. A mean "
                   "over the changed columns only, it falls when a cheap step on another "
                   "column is added.",
    "IL1_numeric": "Mean |x′ − x| / range over the changed numeric columns.",
    "IL1_categorical": "Share of changed values, over the changed categorical columns.",
    "eigenvalue_similarity_percent": "How well the correlation structure of the numeric "
                                     "columns is kept (100 % = unchanged).",
}


def utility_rows(utility: Mapping[str, Any], unaligned: str | None = None
                 ) -> list[MetricRow]:
    """The information-loss rows of ``utility`` (``Workbench.utility_for``): the headline
    ``IL1_release`` over the ``released`` columns first (its label says over how many), then
    the other IL1 figures and the eigenvalue similarity. No change: they measure the
    protection itself. ``unaligned``: why the release's rows are not the original's (a
    synthetic release): every row an :func:`unavailable_row`."""
    if unaligned is not None:  # the headline under the name it has when it has a number
        rows = [unavailable_row(key, unaligned) for key in UTILITY]
        return [replace(rows[0], name=RELEASE_LOSS_LABEL, label=RELEASE_LOSS_LABEL), *rows[1:]]
    n = len(utility["released"])
    rows = []
    for key in UTILITY:
        headline = key == "IL1_release"
        rows.append(MetricRow(
            key, RELEASE_LOSS_LABEL if headline else tile(key),
            f"{RELEASE_LOSS_LABEL}: mean over the {n} released columns" if headline
            else label(key), utility[key], None, _UTILITY_FORMAT[key](utility[key]),
            None, release_loss_help(n) + " " + IL1_READING if headline else _UTILITY_HELP[key],
            "off"))
    return rows
