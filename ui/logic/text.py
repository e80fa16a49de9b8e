"""Showing user-supplied text (column names, values, file names) safely in Markdown."""

import re
from collections.abc import Sequence
from pathlib import Path

from sdc_core.data.io import neutralize_bidi
from sdc_core.names import count_text, label

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=&^])")
#: What the Markdown renderer turns into a link by itself, even escaped: ``http://…``,
#: ``www.…`` and ``name@host``
_AUTOLINK = re.compile(r"(?i)://|www\.|@")
#: An invisible word joiner, put inside those so that they stay text
_JOINER = "\u2060"


def md(text: object) -> str:
    """``text`` with every Markdown/HTML special character escaped, so that a column named
    ``![x](http://…)`` is shown as those characters and never becomes a link or an image; an
    address the renderer would link by itself gets an invisible word joiner after its first
    character (``:⁠//``, ``w⁠ww.``, ``@⁠``); a direction control is shown as its escape
    (``\\u202e``, :func:`sdc_core.data.io.neutralize_bidi`), so the text reads in the order it is
    stored."""
    text = neutralize_bidi(str(text))
    text = _AUTOLINK.sub(lambda m: m.group()[0] + _JOINER + m.group()[1:], text)
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text).replace("\n", " ")


def md_list(items: Sequence[object]) -> str:
    return ", ".join(md(i) for i in items) if items else "—"


def file_stem(name: str) -> str:
    """A name for downloaded files from a data set's name: without its extension, safe in a
    file name (``treatment`` of treatment.csv)."""
    stem = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in Path(name).stem)
    return stem or "data"


def number(v: float) -> str:
    """A count as a whole number when it is one, else with two decimals: 182, 18.34."""
    return count_text(v)


def delta_text(after: float, before: float, unit: str = "") -> str | None:
    """The change from ``before`` to ``after`` as a metric's delta ("-157 (was 182)", or with a
    ``unit``: "-1.25 points"), or None (no arrow, no colour) when nothing changed."""
    change = after - before
    if abs(change) < 5e-13 * max(1.0, abs(before)):
        return None
    return (f"{'+' if change > 0 else ''}{number(change)} (was {number(before)})" if not unit else
            f"{change:+.2f}{unit}")


#: What the two fingerprints of a data set cover (shown wherever one of them is).
FINGERPRINT_HELP = (
    "Two fingerprints name the same data. The file SHA-256 is a hash of the uploaded file's "
    "bytes (its first 16 hex digits name the data set in this session). The table fingerprint "
    "is the SHA-256 of the table's content written as CSV text — column names and values, in "
    "order — so it is the same whatever the file format; recipes and reports carry it, and "
    "`python -m sdc_core apply` warns when a recipe meets a table with another one.")

#: What the id of a data set read from a file on the server covers (it stands where an upload's
#: file SHA-256 does).
SAMPLE_ID_HELP = (
    "The id of a file read on the server (or of its sample) is a hash of the file's path, the "
    "size and modification time of its files, the sample seed and the sample size: it names "
    "these records in this session. The table fingerprint that recipes and reports carry is "
    "the SHA-256 of the records read, written as CSV text.")


def smallest_class_help(wildcard: float, category: float) -> str:
    """What the smallest class means, under both readings of a missing key."""
    text = ("The fewest records that share one combination of key values: the data is "
            "k-anonymous for every k up to it.")
    if wildcard == category:
        return text
    return (f"{text} With missing keys it depends on how a blank is read: {wildcard:g} when a "
            f"blank matches any value (sdcMicro's reading), {category:g} when it is a value of "
            "its own.")


#: How the pages' tables head the measures' columns (downloads, the report's data and the
#: command line keep the machine names): each measure's name and unit (:mod:`sdc_core.names`),
#: for the keys distinct enough not to be a data column's name; a column ``<name>_sd`` is
#: headed "<label>, sd".
COLUMN_LABELS = {key: label(key) for key in (
    "percent_unique", "percent_k_le_threshold", "percent_below_k", "expected_reidentifications",
    "avg_linkage_risk_percent", "global_risk_percent", "median_k", "Fk", "suda_score",
    "dis_score", "population_uniqueness_percent", "linkage_reidentifications",
    "linkage_risk_percent", "IL1_release", "IL1_overall", "IL1_numeric", "IL1_categorical",
    "eigenvalue_similarity_percent", "suppressed_values", "n_seeds", "n_steps")} | {
    "param_name": "parameter", "param_value": "value", "pareto": "Pareto-optimal",
    "meets_target": "meets the target", "individual_risk": label("risk"), "k": label("fk"),
    "msus": "minimal sample uniques",
}


def column_label(name: str) -> str:
    """A table's heading for the column ``name`` (:data:`COLUMN_LABELS`)."""
    if name.endswith("_sd") and name[:-3] in COLUMN_LABELS:
        return f"{COLUMN_LABELS[name[:-3]]}, sd"
    return COLUMN_LABELS.get(name, name)
