"""How the Tables page, its downloads and the report show a published cross table (no
Streamlit): the settings, the 2-way pivot with its margins, each method's utility and
protection figures under their names (:mod:`sdc_core.names`) and the texts around them
(docs/tables.md, "Publishing a table").

The tables come from :func:`sdc_core.tables.table_release.release_table`, one per method:
suppression, differential privacy and the cell key method, for the same settings."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

import pandas as pd

from sdc_core.checks import MAX_JSON_BYTES
from sdc_core.errors import SdcInputError
from sdc_core.names import count_text, label
from sdc_core.tables.cell_rules import K_RANGE, N_RANGE, P_RANGE, T_RANGE, Rule
from sdc_core.tables.dp_tables import MAX_CONTRIBUTIONS, nonresponse
from sdc_core.tables.hierarchy import Hierarchy, Prefixes, prefixes
from sdc_core.tables.linked import LinkedRelease, table_name
from sdc_core.tables.table_release import DEFAULT_RULE, TABLE_METHODS, TableRelease, unit_text

#: Each method's heading, in :data:`~sdc_core.tables.table_release.TABLE_METHODS`' order
METHOD_TITLES = {"suppress": "Suppression", "dp": "Differential privacy",
                 "ckm": "Cell key method"}
#: How a hidden figure shows in a pivot
HIDDEN = "✕"
#: Why differential privacy is not offered for a table of sums without its clip bound
CLIP_NEEDED = ("A DP table of sums needs the bound U of one contribution (“DP: clip U”): each "
               "contribution is clipped to [0, U] and the noise scaled to U/ε. Set it from what "
               "one contributor can plausibly add, not from the data.")
#: The range of the clip bound U of a DP sum
CLIPS = (0.001, float(2**53))
#: From this many cells and margins the page warns that suppression may take a while (a table
#: of 40,000 took half a minute to suppress and audit)
LARGE_TABLE = 10_000
#: The utility figures of every method, by their keys in :mod:`sdc_core.names`
UTILITY_KEYS = ("absD", "relabsD", "hellinger", "false_zeros", "false_nonzeros", "blank")

#: The most tables the Tables page adds to the one being built (published together with it)
MAX_ADDED = 5
#: Why differential privacy and the cell key method are not offered for tables published together
LINKED_REFUSED = ("Tables published together (linked tables) are protected by suppression: "
                  "differential privacy and the cell key method here publish one table at a "
                  "time.")

#: A table column's code list on the Tables page (docs/tables.md, "On the Tables page"): none,
#: prefix lengths typed in, or an uploaded file (the radio's options, with their labels)
CODE_LIST_KINDS = {"none": "none", "prefix": "prefix lengths", "file": "a code list file"}
#: The longest text of prefix lengths the page takes
MAX_PREFIX_TEXT = 100
#: The largest code list file the page takes: the upload gate's limit of a JSON file
#: (ui/infra/uploads.py), for a CSV one too
MAX_CODE_LIST_BYTES = MAX_JSON_BYTES
#: Why differential privacy and the cell key method do not publish a table with a code list
HIERARCHY_REFUSED = ("With a code list the table is published by suppression only: differential "
                     "privacy and the cell key method here do not make every level of a code "
                     "list add up.")

#: The Tables page's two parts, and the two sources of its answer counts (its radios' options)
PARTS = ("Answer counts", "Cross table with margins")
SOURCES = ("Current data set", "Example: the pet survey (100 participants)")
#: Whom a cross table protects when the Data page tags a household id: each person (the id's
#: distinct values), or each record
UNITS = ("person", "record")
#: The Tables page's thresholds, counts and ε: the range each field takes; a cross table's
#: rule takes the numbers the rules take (sdc_core/tables/cell_rules.py), the other thresholds
#: the same
THRESHOLDS, SEEDS, EPSILONS = T_RANGE, (0, 2**31 - 1), (0.01, 100.0)
PERCENTS, DOMINANCE_N, DOMINANCE_K, PARTICIPANTS = P_RANGE, N_RANGE, K_RANGE, (1, 10_000_000)
#: The Tables page's widgets whose values are kept between visits, in a reload, a workspace file
#: and a link (docs/tables.md, "On the Tables page"): what each may hold, as
#: :func:`ui.logic.workspace.tables_fields` checks a file's or a link's values before a widget
#: draws them (a kind and its limits, as :func:`ui.logic.workspace.fits` reads them)
TABLE_FIELDS: dict[str, tuple[str, Any]] = {
    "w_tables_kind": ("choice", PARTS), "w_tables_source": ("choice", SOURCES),
    "w_tables_q": ("whole", THRESHOLDS), "w_tables_t": ("whole", THRESHOLDS),
    "w_tables_multi": ("flag", None), "w_tables_delim": ("text", 3),
    "w_tables_cross": ("columns", None), "w_tables_cross_sum": ("name", None),
    "w_tables_cross_t": ("whole", THRESHOLDS),
    "w_tables_cross_rule": ("choice", ("p", "dominance")),
    "w_tables_cross_p": ("number", PERCENTS), "w_tables_cross_n": ("whole", DOMINANCE_N),
    "w_tables_cross_k": ("number", DOMINANCE_K), "w_tables_eps": ("number", EPSILONS),
    "w_tables_seed": ("whole", SEEDS), "w_tables_ckm_t": ("whole", THRESHOLDS),
    "w_tables_unit": ("choice", UNITS), "w_tables_max_c": ("whole", (1, MAX_CONTRIBUTIONS)),
    "w_tables_diff_column": ("name", None), "w_tables_added": ("whole", (0, MAX_ADDED)),
}
#: Kept widgets whose key ends in a name: the participants N (per number of rows), the question
#: columns (per source), the levels merged (per column) and each added table's columns (by its
#: place)
TABLE_FIELD_PREFIXES: dict[str, tuple[str, Any]] = {
    "w_tables_n_": ("whole", PARTICIPANTS), "w_tables_questions_": ("columns", None),
    "w_tables_added_": ("columns", None),
    "w_tables_diff_levels_": ("texts", None),
    "w_tables_h_kind_": ("choice", tuple(CODE_LIST_KINDS)),
    "w_tables_h_prefix_": ("text", MAX_PREFIX_TEXT)}


def table_field(key: str) -> tuple[str, Any] | None:
    """What the Tables page's kept widget ``key`` may hold (:data:`TABLE_FIELDS`), None when
    it is not one."""
    if key in TABLE_FIELDS:
        return TABLE_FIELDS[key]
    for prefix, kind in TABLE_FIELD_PREFIXES.items():
        if key.startswith(prefix):
            return kind
    return None


class CodeList(NamedTuple):
    """A table column's code list as the page's cached calls are keyed by it (hashable): the
    ``column``, its ``kind`` ("prefix" or "file"), the prefix lengths' text or the file's name,
    and the file's SHA-256 (empty for prefix lengths). The code list itself is read by
    :func:`prefix_list` or :func:`file_list`."""

    column: str
    kind: str
    text: str
    digest: str = ""


def prefix_list(column: str, text: str) -> tuple[CodeList, Prefixes]:
    """The code list of ``column`` given as prefix lengths (``2,4``), read as whole numbers
    only (:func:`sdc_core.tables.hierarchy.prefixes`); an :class:`SdcInputError` in one
    sentence when the text is not such lengths."""
    text = text.strip()
    if len(text) > MAX_PREFIX_TEXT:
        raise SdcInputError(f"prefix lengths are at most {MAX_PREFIX_TEXT} characters, such "
                            "as 2,4")
    return CodeList(column, "prefix", text), prefixes(text)


def file_list(column: str, name: str, raw: bytes) -> CodeList:
    """The key of ``column``'s code list file ``name`` (its bytes ``raw``, never kept): an
    :class:`SdcInputError` when the file is larger than :data:`MAX_CODE_LIST_BYTES`; the file
    itself is read by :func:`sdc_core.tables.hierarchy.read_hierarchy` (the uploader takes
    only CSV and JSON files)."""
    if len(raw) > MAX_CODE_LIST_BYTES:
        raise SdcInputError(f"the code list file is {len(raw):,} bytes; the page takes at most "
                            f"{MAX_CODE_LIST_BYTES:,}")
    return CodeList(column, "file", name, hashlib.sha256(raw).hexdigest())


def code_list_text(lists: tuple[CodeList, ...],
                   specs: Mapping[str, Hierarchy | Prefixes]) -> list[str]:
    """One line per code list: "region: prefix lengths 2,4" or "region: 12 codes from
    h.csv" (the names as they are: the caller escapes them)."""
    lines = []
    for cl in lists:
        spec = specs.get(cl.column)
        if cl.kind == "prefix":
            lines.append(f"{cl.column}: prefix lengths {cl.text}")
        elif isinstance(spec, Hierarchy):
            lines.append(f"{cl.column}: {len(spec.parent):,} codes from {cl.text}")
    return lines


@dataclass(frozen=True)
class CrossSettings:
    """The Tables page's cross-table settings: 1 to 3 ``columns``, an optional ``sum_column``,
    the primary ``rule`` of suppression (a :class:`~sdc_core.tables.cell_rules.Rule`), the DP
    ``epsilon``, the ``seed`` of the DP noise and of the cell keys, the cell key method's
    ``threshold`` (a published count below it is blank), the ``household`` id whose persons
    the figures protect (None: the records), DP's ``max_contributions`` per person (None:
    the default of :func:`sdc_core.tables.dp_tables.default_contributions`), the ``clip``
    bound U of one contribution to a DP sum (None: not given) and the ``code_lists`` of some
    table columns (:class:`CodeList`: the table then has their inner nodes, by suppression
    only)."""

    columns: tuple[str, ...]
    sum_column: str | None = None
    rule: Rule = DEFAULT_RULE
    epsilon: float = 1.0
    seed: int = 0
    threshold: int = 10
    household: str | None = None
    max_contributions: int | None = None
    clip: float | None = None
    code_lists: tuple[CodeList, ...] = ()

    def methods(self) -> tuple[str, ...]:
        """The methods offered: all three, but DP for sums only with its ``clip`` bound, and
        suppression alone with a code list."""
        if self.code_lists:
            return ("suppress",)
        if self.sum_column is not None and self.clip is None:
            return tuple(m for m in TABLE_METHODS if m != "dp")
        return TABLE_METHODS

    def refused(self, method: str) -> str:
        """Why ``method`` is not offered (:meth:`methods`): a code list's or a clip bound's
        sentence."""
        return HIERARCHY_REFUSED if self.code_lists else CLIP_NEEDED

    def to_dict(self) -> dict[str, Any]:
        """The settings by field (the session keeps them: :func:`settings_from` reads them
        back), the rule as it is."""
        return {**asdict(self), "rule": self.rule}


def page_rule(kind: str, threshold: int = 5, n: int = 2, k: float = 85.0,
              p: float = 10.0) -> Rule:
    """The primary rule of the page's fields (``kind`` "threshold", "dominance" or "p"): t and
    n whole, k and p to six significant digits, as the page has always shown and applied them
    (a value kept in a workspace file or a link may hold more)."""
    if kind == "threshold":
        return Rule("threshold", (int(threshold),))
    if kind == "dominance":
        return Rule("dominance", (int(n), float(f"{k:g}")))
    return Rule("p", (float(f"{p:g}"),))


def published_frame(release: TableRelease) -> pd.DataFrame:
    """What is published and downloaded: one row per cell and margin, the table's columns,
    ``count`` (or ``sum``; missing when hidden), ``status`` and ``unit`` (whom the rules
    counted; the command line's file, a count a whole number)."""
    return release.published()


def _figure(v: object) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
        return HIDDEN
    return count_text(float(v))  # type: ignore[arg-type]


def shown_table(release: TableRelease, tidy: bool = False) -> pd.DataFrame:
    """The table as the page shows it. A 2-way table as a pivot: a row per level of the first
    column and ``Total``, a column per level of the second and ``Total``, each figure as text
    (:data:`HIDDEN` when hidden); a 1- or 3-way table (or any, ``tidy``) tidy: the columns,
    the figure as text and its status."""
    cols = list(release.truth.columns)
    frame = release.frame
    text = [_figure(v) for v in frame[release.value].astype(object)]
    if tidy or len(cols) != 2:
        out = frame[cols].astype(str).copy()
        out[release.value] = text
        out["status"] = frame["status"].to_numpy()
        return out.reset_index(drop=True)
    rows = list(dict.fromkeys(frame[cols[0]].astype(str)))
    heads = list(dict.fromkeys(frame[cols[1]].astype(str)))
    cells = dict(zip(zip(frame[cols[0]].astype(str), frame[cols[1]].astype(str)), text))
    out = pd.DataFrame([[cells.get((r, h), "") for h in heads] for r in rows],
                       index=pd.Index(rows, name=str(cols[0])),
                       columns=pd.Index(heads, name=str(cols[1])))
    return out


def status_counts(release: TableRelease) -> str:
    """How many cells and margins have each status: "12 published, 2 primary, 3 secondary"."""
    counts = release.frame["status"].value_counts()
    order = ["published", "primary", "secondary", "perturbed"]
    return ", ".join(f"{int(counts[s])} {s}" for s in order if s in counts)


def narrowest_interval(release: TableRelease) -> float | None:
    """min (hi − lo) over the hidden cells' audited intervals (suppression); None when nothing
    is hidden or the table was not suppressed."""
    hidden = release.hidden()
    if hidden.empty or "lo" not in hidden:
        return None
    return float((hidden["hi"] - hidden["lo"]).min())


def cell_accuracy(release: TableRelease) -> float | None:
    """The ±95 % accuracy of a cell's DP count (the largest over the cells, margins left out);
    None for another method."""
    if "accuracy" not in release.frame:
        return None
    cells = release.frame.loc[~release.frame["margin"].astype(bool), "accuracy"]
    return float(cells.max()) if len(cells) else None


def utility_rows(release: TableRelease) -> pd.DataFrame:
    """The utility of a published table against the true one: absD, relabsD, Hellinger
    distance, false zeros, false non-zeros (over the cells published) and the cells hidden,
    one row each (``measure``, ``value`` as text)."""
    u = release.utility
    values = {"absD": u.absD, "relabsD": u.relabsD, "hellinger": u.hellinger,
              "false_zeros": u.false_zeros, "false_nonzeros": u.false_nonzeros,
              "blank": u.blank}
    return pd.DataFrame({"measure": [label(k) for k in UTILITY_KEYS],
                         "value": [_value(values[k]) for k in UTILITY_KEYS]})


def _value(v: float | None) -> str:
    if v is None:
        return "—"
    return count_text(v) if float(v).is_integer() else f"{v:.4g}"


def protection_rows(release: TableRelease, threshold: int) -> pd.DataFrame:
    """What protects the table, one row each (``measure``, ``value`` as text): whom the rules
    count (``unit``: records, or the household id's distinct persons); suppression, the
    audit's verdict and the narrowest hidden interval; differential privacy, ε (per record or
    per person), a cell's ±95 % accuracy and, with a household id, the records kept per
    person and those dropped; the cell key method, the share of cells perturbed and its
    ``threshold``."""
    rows: list[tuple[str, str]] = [("unit", unit_text(release.household))]
    if release.method == "suppress":
        audit = release.audit
        verdict = ("passes" if audit is None or audit.passes
                   else f"fails: {audit.exposed_cells} cells exposed" + (
                       f", {audit.unchecked_cells} not checked in the time allowed"
                       if audit.unchecked_cells else ""))
        rows += [("audit", verdict), ("rule", str(release.rule)),
                 (label("narrowest_interval"), _value(narrowest_interval(release)))]
    elif release.method == "dp":
        rows += [("ε", f"{_value(release.epsilon)} per {release.unit}"),
                 (label("dp_accuracy"), "±" + _value(cell_accuracy(release)))]
        if release.household is not None:
            rows += [("records per person", f"at most {release.max_contributions}"),
                     ("records dropped", _value(release.records_dropped))]
    elif release.noise is not None:
        rows += [(label("perturbed"), f"{release.utility.perturbed:.1%}"),
                 ("noise", "m·x₁·z, D {D:g}, V {V:g}, m {m:g}; p % floor p {p:g}"
                  .format(**release.noise))]
    else:
        blank = f"counts below {int(threshold)} blank"
        if release.household is not None:
            blank += f", and cells of fewer than {int(threshold)} persons"
        rows += [(label("perturbed"), f"{release.utility.perturbed:.1%}"), ("threshold", blank)]
    return pd.DataFrame(rows, columns=["measure", "value"])


def audit_text(release: TableRelease) -> tuple[bool, list[str]]:
    """Whether the suppressed table passes its audit, and the sentences to show: the
    narrowest interval when it passes, the findings (one per exposed cell) when it fails."""
    audit = release.audit
    if audit is None:
        return True, []
    if not audit.passes:
        return False, audit.findings(tuple(release.truth.columns))
    narrow = narrowest_interval(release)  # inexact intervals lie inside: still "at least"
    counted = (f" The rule counted distinct {release.household}: a cell of one person's "
               "several records is as small as that one person." if release.household else "")
    if narrow is None:
        return True, ["Audit passed: no cell is hidden." + counted]
    return True, [f"Audit passed: every hidden cell can still be anything in an interval at "
                  f"least {count_text(narrow)} wide given everything published." + counted]


def dp_text(release: TableRelease) -> str:
    """What a DP table's ε and accuracy say, and for whom ε holds: per person with a household
    id (its records beyond c dropped), else plainly per record."""
    acc = cell_accuracy(release)
    what = "count" if release.clip is None else "sum"
    head = (f"ε = {_value(release.epsilon)}: each {what} is within ±{_value(acc)} of the true "
            f"{what} with 95 % probability; the margins are sums of the noisy cells. ")
    if release.clip is not None:
        head += (f"Each contribution was clipped to [0, {_value(release.clip)}] first (the "
                 "accuracy is against the clipped sums). ")
    if release.household is None:
        return head + ("ε is per record: a person with k records in the table has up to k·ε. "
                       "Tag a household or person id on the Data page to protect persons.")
    return head + (f"ε is per person (distinct {release.household}): each keeps at most "
                   f"{release.max_contributions} records ({_value(release.records_dropped)} "
                   f"dropped), and the noise is scaled to {release.max_contributions}.")


def nonresponse_text(release: TableRelease, records: int) -> str:
    """The records with a blank in a table column (non-response), as a reader of the DP table
    works them out: N − the published grand total, at least 0 (post-processing of published
    counts: no further privacy cost; :func:`sdc_core.tables.dp_tables.nonresponse`), beside the true
    number."""
    frame = release.frame
    cells = frame.loc[~frame["margin"].astype(bool), "count"].astype(float).to_numpy()
    derived = nonresponse(records, list(cells))
    return (f"Non-response (records with a blank in a table column) from the published counts: "
            f"{records:,} − Σ cells = {derived:,.0f} (true {release.truth.left_out:,}).")


def ckm_text(release: TableRelease, threshold: int) -> str:
    """What the cell key method did."""
    if release.noise is not None:
        text = ("Each sum moved by m·x₁·z, x₁ the cell's largest contribution and z read from "
                "a noise table at the cell key (D {D:g}, V {V:g}, m {m:g}); the cells the p % "
                "rule (p {p:g}) finds sensitive moved by at least p % of x₁ beyond what the "
                "others hold. Margins have their own keys, so they need not add up."
                .format(**release.noise))
        if release.household is not None:
            text += f" One key per person (distinct {release.household})."
        return text
    text = (f"{release.utility.perturbed:.1%} of the published cells differ from the true "
            f"count; counts below {int(threshold)} are blank, the rest rounded to 5.")
    if release.household is not None:
        text += (f" Every record of a person has the person's key (distinct "
                 f"{release.household}), and a cell of fewer than {int(threshold)} persons is "
                 "blank.")
    return text


def comparison_table(releases: Mapping[str, TableRelease | str],
                     threshold: int) -> pd.DataFrame:
    """The three methods side by side (the report): a row per figure (utility, then
    protection), a column per method; a method not offered shows why in every row."""
    measures: list[str] = []
    columns: dict[str, dict[str, str]] = {}
    for method, made in releases.items():
        col: dict[str, str] = {}
        if isinstance(made, TableRelease):
            for frame in (utility_rows(made), protection_rows(made, threshold)):
                for m, v in zip(frame["measure"], frame["value"]):
                    col[m] = v
                    if m not in measures:
                        measures.append(m)
        columns[METHOD_TITLES[method]] = col
    for method, made in releases.items():
        if not isinstance(made, TableRelease):
            columns[METHOD_TITLES[method]] = dict.fromkeys(measures, "not offered")
    return pd.DataFrame({"measure": measures} | {
        title: [col.get(m, "—") for m in measures] for title, col in columns.items()})


def table_title(settings: CrossSettings) -> str:
    """"sex × region" or "sum of income by sex × region"."""
    what = " × ".join(settings.columns)
    return f"sum of {settings.sum_column} by {what}" if settings.sum_column else what


def file_name(stem: str, method: str, extension: str) -> str:
    """The download's name: ``<stem>_table_<method><extension>``."""
    return f"{stem}_table_{method}{extension}"


def settings_from(stored: Mapping[str, Any]) -> CrossSettings:
    """The settings :meth:`CrossSettings.to_dict` kept (other keys, the data set's id, left
    out)."""
    bound, clip = stored.get("max_contributions"), stored.get("clip")
    return CrossSettings(tuple(stored["columns"]), stored.get("sum_column"),
                         stored["rule"], float(stored["epsilon"]), int(stored["seed"]),
                         int(stored["threshold"]), stored.get("household"),
                         None if bound is None else int(bound),
                         None if clip is None else float(clip))


def settings_text(settings: CrossSettings) -> str:
    """The settings in one line: "rule threshold:5; ε 1, seed 0; cell key threshold 10", and
    whom they protect: "on records" or "on distinct hid"."""
    text = f"suppression's rule {settings.rule.text} on {unit_text(settings.household)}"
    per = "record" if settings.household is None else "person"
    text += f"; DP ε {settings.epsilon:g} per {per}, seed {settings.seed}"
    if settings.household is not None and settings.max_contributions is not None:
        text += f", at most {settings.max_contributions} records per person"
    if settings.sum_column is None:
        text += f"; cell key threshold {settings.threshold}, seed {settings.seed}"
    else:
        clip = "not given" if settings.clip is None else f"{settings.clip:g}"
        text += f", clip U {clip}; cell key method for sums, seed {settings.seed}"
    return text


def table_size(df: pd.DataFrame, columns: tuple[str, ...] | list[str]) -> int:
    """The cells and margins of the cross table of ``columns``: Π (levels_c + 1), a column's
    levels its distinct values present (a record with a blank is left out of the table)."""
    size = 1
    for c in columns:
        size *= int(df[c].nunique(dropna=True)) + 1
    return size


# -- tables published together (docs/tables.md, "Linked tables") -------------------------------


def linked_set(first: tuple[str, ...] | list[str],
               added: list[list[str]]) -> tuple[tuple[str, ...], ...]:
    """The tables the page publishes: the one being built, then each added table that has
    columns (an added table with none chosen yet is left out), each as a tuple of its columns;
    the core refuses a set it cannot publish (:func:`sdc_core.tables.linked.check_tables`)."""
    return tuple(tuple(str(c) for c in t) for t in [list(first), *added] if t)


def linked_union(tables: tuple[tuple[str, ...], ...]) -> list[str]:
    """The columns of the set, in order of first appearance."""
    return list(dict.fromkeys(c for t in tables for c in t))


def linked_title(columns: tuple[str, ...], sum_column: str | None) -> str:
    """"sex × region" or "sum of income by sex × region" (:func:`table_title`)."""
    return table_title(CrossSettings(columns, sum_column))


def linked_text(made: LinkedRelease) -> tuple[bool, str]:
    """Whether the joint audit passes, and the line that says the tables are protected
    together: the rule, the cells hidden, the audit's verdict, the hidden cells it could not
    check and the records left out for a blank."""
    audit = made.audit
    n = len(made.tables)
    text = (f"These {n} tables are protected together (linked tables): rule {made.rule.text} "
            f"on {unit_text(made.finest.unit)}, {made.hidden_cells} "
            f"{'cell' if made.hidden_cells == 1 else 'cells'} hidden (a cell shared by tables "
            "counted once); joint audit " + ("passed" if audit.passes else "FAILED"))
    if audit.unchecked_cells:
        text += f" ({audit.unchecked_cells} hidden cells not checked in the time allowed)"
    if made.left_out:
        text += (f"; {made.left_out} {'record' if made.left_out == 1 else 'records'} with a "
                 "blank in a column of the set left out of every table")
    return audit.passes, text + "."


def linked_part(made: LinkedRelease, frame: pd.DataFrame,
                table: tuple[str, ...]) -> pd.DataFrame:
    """One table's published cells from the set's long frame (:meth:`LinkedRelease.frame`):
    its columns, the figure as text (:data:`HIDDEN` when hidden) and the status."""
    rows = frame[frame["table"] == table_name(table)]
    out = rows[list(table)].reset_index(drop=True).astype(str)
    out[made.value] = [_figure(v) for v in rows[made.value]]
    out["status"] = rows["status"].to_numpy()
    return out


def linked_file_name(stem: str) -> str:
    """The download's name: ``<stem>_tables_linked.csv``."""
    return f"{stem}_tables_linked.csv"
