"""The decision pack's two documents (docs/releases.md, "The pack"): ``internal.html`` for the
board, replicable, and ``external.html`` for the data users, with no seed.

Both are one self-contained page: no script, no font or style sheet fetched, the trade-off
figure inline as SVG. Every text that comes from the data, the steward or the decision (column
names, values, titles, names, comments) is written as HTML text (:func:`html.escape`, and the
direction controls neutralised), never as markup.
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from sdc_core.data.io import neutralize_bidi
from sdc_core.names import name
from sdc_core.pack_figure import inline_svg
from sdc_core.recipe import RANDOM_METHODS
from sdc_core.utility.validity import TABLE_HOLDS, TERM_OVERLAP, TERM_SE

if TYPE_CHECKING:
    from sdc_core.assess import Assessment
    from sdc_core.lineage import Lineage
    from sdc_core.pack import PackRequest, PackTable
    from sdc_core.recipe import Recipe

e = html.escape

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1000px; margin: 2em auto; color: #1c2330; }
h1 { font-size: 1.6em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
table.t { border-collapse: collapse; margin: .5em 0; }
table.t td, table.t th { padding: .25em .8em; border-bottom: 1px solid #eee; text-align: left; }
pre { background: #f3f5f8; padding: 1em; overflow-x: auto; white-space: pre-wrap; }
.small { color: #5b6675; font-size: .9em; }
.pass { color: #166534; font-weight: 600; } .fail { color: #b91c1c; font-weight: 600; }
.review { color: #92400e; font-weight: 600; }
figure svg { max-width: 100%; height: auto; }
@media print { body { margin: 0; max-width: none; } details { display: block; } }
"""


@dataclass(frozen=True)
class PackView:
    """What both documents read: the request, the release's and the original's assessments,
    ``compare --json``'s figures, the keys' risk before and after, the outputs with their
    status, the tables, the lineage check, what each step did, why there is no figure,
    each question's answer counts as published, the software's versions and the original's
    table fingerprint."""

    req: PackRequest
    after: Assessment
    before: Assessment
    figures: dict[str, Any]
    keys_before: dict[str, Any]
    keys_after: dict[str, Any]
    outputs: list[dict[str, Any]]
    tables: list[PackTable]
    lineage: Lineage | None
    mitigation: list[str]
    figure_note: str | None
    answers: list[tuple[str, pd.DataFrame]]
    software: dict[str, str | None]
    fingerprint: str


def html_table(df: pd.DataFrame) -> str:
    """A table of a report (the pack's documents and the Export page's report): its text
    escaped, numbers to six significant digits, and a figure that does not exist (None, NaN)
    as "—"."""
    return df.to_html(index=False, escape=True, border=0, classes="t", na_rep="—",
                      float_format="{:.6g}".format)


def _value(v: object) -> str:
    if isinstance(v, float):
        return "—" if not math.isfinite(v) else f"{v:.6g}"
    return "—" if v is None else str(v)


def _page(title: str, body: str) -> bytes:
    return neutralize_bidi(f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{e(title)}</title><style>{STYLE}</style></head><body>
{body}
</body></html>
""").encode()


def _outputs(view: PackView, internal: bool) -> str:
    rows = [{"output": o["uid"], "type": o["type"], "status": o["status"],
             "reasons": " · ".join(o["reasons"]),
             **({"mitigation": " · ".join(o["mitigation"])} if internal else {}),
             "steward": o["steward_decision"] or "—", "checker": o["checker_decision"] or "—",
             **({"exception requested": o["exception"] or "—"} if internal else {})}
            for o in view.outputs]
    return html_table(pd.DataFrame(rows))


def _decision(view: PackView) -> str:
    d = view.req.decision
    rows = [("decision", d.decision or "(not decided)"), ("steward", d.steward),
            ("steward's date", d.steward_date), ("checker", d.checker),
            ("checker's date", d.checker_date), ("board reference", d.board_reference),
            ("comments", d.comments)]
    return html_table(pd.DataFrame(rows, columns=["field", "value"]).replace("", "—"))


def _type_section(view: PackView) -> str:
    k = view.req.kind
    targets = pd.DataFrame({"target": [t.text(k.k) for t in k.targets],
                            "figure": [t.figure for t in k.targets]})
    return (f"<h2>Release type: {e(k.name)}</h2><p>{e(k.note)}.</p>"
            f"<p><b>Intruder:</b> {e(k.scenario.intruder)}; he knows {e(k.scenario.knows)}, "
            f"and is {'' if k.scenario.knows_membership else 'not '}assumed to know that the "
            f"person he looks for is in the file.</p>{html_table(targets)}")


def _risk(view: PackView) -> str:
    keys = ["percent_unique", "percent_below_k", "global_risk_percent",
            "avg_linkage_risk_percent", "min_k", "median_k"]
    k = view.req.kind.k
    rows = [{"figure": name(key, k), "key": key, "original": _value(view.keys_before.get(key)),
             "release": _value(view.keys_after.get(key))} for key in keys]
    if view.after.rows is None:
        for key in ("linkage_reidentifications", "linkage_risk_percent",
                    "linkage_percent_certain"):
            rows.append({"figure": name(key), "key": key,
                         "original": _value(getattr(view.before.linkage, key)),
                         "release": _value(view.figures.get(key))})
    inference = view.figures.get("inference")
    if inference:
        rows.append({"figure": name("inference_gain"), "key": "inference_gain",
                     "original": "—", "release": _value(inference.get("inference_gain"))})
    return html_table(pd.DataFrame(rows))


def _utility(view: PackView) -> str:
    f = view.figures
    if "record_by_record" in f:
        return f"<p>{e(str(f['record_by_record']))}</p>"
    rows = [{"figure": name(key), "key": key, "value": _value(f.get(key))}
            for key in ("IL1_release", "IL1_numeric", "IL1_categorical", "IL1_overall",
                        "eigenvalue_similarity_percent") if key in f]
    return html_table(pd.DataFrame(rows))


def _distribution(view: PackView) -> tuple[str, list[str]]:
    """The changed columns' shifts and the columns to trust less, by the rules of "Does the
    analysis hold?" (docs/utility.md): a categorical column whose 1-way TVD is above
    ``TABLE_HOLDS``; a numeric column whose mean moved by ``TERM_SE`` of its standard errors
    or more, d = (x̄′ − x̄)/(s/√n) with s and n the original's."""
    changed = set(view.figures.get("changed_columns", []))
    rows, less = [], []
    for r in view.figures.get("distribution", []):
        column = r.get("column")
        if changed and column not in changed:
            continue
        d = None
        if r.get("mean_shift") is not None and column in view.req.original.columns:
            x = pd.to_numeric(view.req.original[column], errors="coerce").dropna()
            se = float(x.std()) / math.sqrt(len(x)) if len(x) > 1 else 0.0
            d = float(r["mean_shift"]) / se if se > 0 else None
        rows.append({"column": column, "kind": r.get("kind"), "TVD": r.get("tvd"),
                     "mean shift": r.get("mean_shift"), "sd shift": r.get("sd_shift"),
                     "mean shift (standard errors)": d})
        if (r.get("tvd") or 0) > TABLE_HOLDS or (d is not None and abs(d) >= TERM_SE):
            less.append(str(column))
    if not rows:
        return "<p>No column's distribution changed.</p>", []
    return html_table(pd.DataFrame(rows)), less


def _analyses(view: PackView) -> tuple[str, list[str]]:
    """The benchmark analyses' terms with their CI overlap, and the estimates to trust less:
    the terms that do not hold (CI overlap below ``TERM_OVERLAP`` or moved by ``TERM_SE``
    standard errors or more, docs/utility.md)."""
    a = view.figures.get("analyses")
    if not isinstance(a, list) or not a:
        return ("<p class=\"small\">No benchmark analysis was named for this pack: the "
                "columns' shifts above are what it measures.</p>"), []
    rows, less = [], []
    for analysis in a:
        for t in analysis.get("terms", []):
            overlap, d = t.get("ci_overlap"), t.get("std_diff")
            rows.append({"analysis": analysis.get("name"), "term": t.get("term"),
                         "original": t.get("original"), "release": t.get("protected"),
                         "CI overlap": overlap, "moved (standard errors)": d})
            if (isinstance(overlap, (int, float)) and overlap < TERM_OVERLAP) or \
                    (isinstance(d, (int, float)) and abs(d) >= TERM_SE):
                less.append(f"{analysis.get('name')}: {t.get('term')}")
    return html_table(pd.DataFrame(rows)), less


#: The most levels a transition matrix shown in the external note may have (the manifest has
#: every one).
MATRIX_LEVELS = 30


def _matrices(view: PackView) -> str:
    """Each perturbed column's transition matrix P(released | true), for the data users to
    correct their analyses (types that give random steps' parameters)."""
    if not view.req.kind.pram_matrix:
        return ""
    parts = []
    for entry in view.figures.get("attribute", []):
        matrix = entry.get("matrix")
        if not isinstance(matrix, dict) or not matrix:
            continue
        title = f"<h3>{e(str(entry.get('column')))} ({e(str(entry.get('method')))})</h3>"
        if len(matrix) > MATRIX_LEVELS:
            parts.append(f"{title}<p class=\"small\">{len(matrix)} levels: the matrix is in "
                         "manifest.json (figures, attribute).</p>")
            continue
        df = pd.DataFrame(matrix).T  # rows: the true level; columns: the released one
        df.insert(0, "true \\ released", df.index)
        parts.append(title + html_table(df))
    if not parts:
        return ""
    return ("<h2>Transition matrices</h2><p class=\"small\">P(released value | true value) of "
            "each perturbed column: with them an analysis can be corrected for the "
            "perturbation.</p>" + "".join(parts))


def _tables(view: PackView) -> str:
    """Each published table, cell by cell with its status (a hidden cell blank), then each
    question's answer counts."""
    parts = []
    for t in view.tables:
        parts.append(f"<h3>{e(t.summary)}</h3>")
        parts.append(html_table(t.frame.drop(columns="unit")))
    for question, frame in view.answers:
        parts.append(f"<h3>Answers to {e(question)}</h3>" + (
            html_table(frame) if len(frame) else "<p>Not published: too few responses.</p>"))
    return "".join(parts)


def _methods_in_words(view: PackView) -> str:
    kind = view.req.kind
    items = []
    for step in view.req.recipe.steps:
        cols = ", ".join(str(c) for c in step.get("columns", [step.get("column")])
                         if c is not None)
        random = step["method"] in RANDOM_METHODS
        params = {k: v for k, v in step.items() if k not in ("method", "column", "columns")}
        text = f"{step['method']} of {cols or 'the table'}"
        if params and (kind.pram_matrix or not random):
            text += " (" + ", ".join(f"{k} {json.dumps(v, ensure_ascii=False)}"
                                     for k, v in params.items()) + ")"
        elif random:
            text += " (its parameters are withheld for this release type)"
        items.append(f"<li>{e(text)}</li>")
    return f"<ul>{''.join(items) or '<li>no protection</li>'}</ul>"


def internal_html(view: PackView, whole: Recipe, svg: bytes | None) -> bytes:
    """The board's document: everything, replicable (the recipe with its seed)."""
    req = view.req
    distribution, _ = _distribution(view)
    analyses, _ = _analyses(view)
    lineage = ""
    if view.lineage is not None:
        rows = pd.DataFrame([c.to_json() for c in view.lineage.columns])
        lineage = (f"<h2>Lineage</h2><p>Made from the parent pack's release (SHA-256 "
                   f"<code>{e(req.parent.sha256 if req.parent else '')}</code>): every column "
                   f"is the parent's, coarsened, or dropped.</p>{html_table(rows)}")
    figure = (f"<figure>{inline_svg(svg)}<figcaption class=\"small\">The chosen setting (★) "
              "against the original and any sweep's settings; also tradeoff.svg and "
              "tradeoff.pdf.</figcaption></figure>" if svg is not None
              else f"<p class=\"small\">{e(view.figure_note or '')}</p>")
    recipe_text = json.dumps(req.recipe.to_dict(), indent=2, ensure_ascii=False)
    figures_json = json.dumps(view.figures, indent=1, ensure_ascii=False, default=str)
    whole_text = ("" if req.parent is None else
                  "<p>The recipe from the original (the parent's steps, then these):</p>"
                  f"<pre>{e(json.dumps(whole.to_dict(), indent=2, ensure_ascii=False))}</pre>")
    roles = pd.DataFrame({"role": ["quasi-identifiers", "sensitive", "known", "household",
                                   "weight"],
                          "columns": [", ".join(req.setting.qi) or "—",
                                      ", ".join(req.setting.sensitive) or "—",
                                      ", ".join(req.setting.known) or "—",
                                      req.setting.household or "—",
                                      req.setting.weight or "—"]})
    body = f"""<h1>{e(req.title)}: internal report</h1>
<p class="small">For the disclosure review board: replicable, with the recipe's seed. Not for
the data users (external.html is theirs).</p>
<h2>Decision</h2>{_decision(view)}
<h2>Status of each output</h2>{_outputs(view, internal=True)}
{_type_section(view)}
<h2>Inputs and software</h2>{html_table(_inputs(view))}
<h2>Column roles</h2>{html_table(roles)}
<h2>Recipe</h2><p class="small">Replay: <code>python -m sdc_core apply ORIGINAL --recipe
recipe.json -o released.csv</code> gives the same file.</p><pre>{e(recipe_text)}</pre>{whole_text}
<h2>What each step did</h2><ul>{''.join(f'<li>{e(m)}</li>' for m in view.mitigation)}</ul>
<h2>Disclosure risk before and after</h2>{_risk(view)}
<h2>Information loss</h2>{_utility(view)}
<h2>Distributions of the changed columns</h2>{distribution}
<h2>Benchmark analyses</h2>{analyses}
{lineage}
{'<h2>Published tables</h2>' + _tables(view) if view.tables or view.answers else ''}
<h2>Trade-off</h2>{figure}
<h2>Figures as compare --json gives them</h2>
<details><summary>JSON</summary><pre>{e(figures_json)}</pre></details>
"""
    return _page(f"{req.title}: internal report", body)


def _inputs(view: PackView) -> pd.DataFrame:
    req = view.req
    rows = [("original file SHA-256", req.original_sha256 or "—"),
            ("original table fingerprint", view.fingerprint),
            ("parent release SHA-256", req.parent.sha256 if req.parent else "—")]
    rows += [(f"{k} version", v or "not installed") for k, v in view.software.items()]
    return pd.DataFrame(rows, columns=["what", "value"])


def external_html(view: PackView) -> bytes:
    """The data users' note: the methods in words and their effect on analyses; no seed, no
    counts of the riskiest records, a random step's parameters only where the type allows."""
    req = view.req
    kind = req.kind
    distribution, less = _distribution(view)
    analyses, less_terms = _analyses(view)
    trust = [*less, *less_terms]
    rule = (f"a column whose TVD is above {TABLE_HOLDS:g} or whose mean moved by {TERM_SE:g} "
            f"standard error or more; a term whose CI overlap is below {TERM_OVERLAP:g} or "
            f"that moved by {TERM_SE:g} standard error or more")
    trust_html = (f"<p><b>Estimates to trust less</b>: {e(', '.join(trust))}.</p>" if trust
                  else "<p>No estimate to trust less.</p>") + \
        f"<p class=\"small\">The rule: {e(rule)}.</p>"
    body = f"""<h1>{e(req.title)}: note for data users</h1>
<p>This file is a <b>{e(kind.name)}</b>: {e(kind.note)}.</p>
<h2>How the file was protected</h2>{_methods_in_words(view)}
<p class="small">A random step draws anew each time it is run; what it changed is not a
property of any one record.</p>
{_matrices(view)}
<h2>Effect on analyses</h2>{distribution}{analyses}{trust_html}
<h2>Information loss</h2>{_utility(view)}
{'<h2>Published tables</h2><p class="small">Cells marked primary or secondary are hidden '
 '(blank).</p>' + _tables(view) if view.tables or view.answers else ''}
<h2>Status</h2>{_outputs(view, internal=False)}
"""
    return _page(f"{req.title}: note for data users", body)
