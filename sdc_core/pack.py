"""The release decision pack: what a steward hands a disclosure review board and the data users.

One folder (docs/releases.md, "The pack"):

- ``released.csv``: the released file;
- ``internal.html``: everything, replicable (the recipe with its seed, hashes, versions, risk
  and utility before and after, what each step did, every output's status);
- ``external.html``: for the data users: the methods in words and their effect on analyses,
  no seed, no counts of the riskiest records, and a random step's parameters only where the
  release type allows them;
- ``manifest.json``: the machine-readable pack without a seed; ``manifest-internal.json``: the
  same with the recipe, its seed and every figure;
- ``tradeoff.svg`` and ``tradeoff.pdf``: the trade-off figure, the chosen setting marked;
- ``table-N.csv``: each published cross table, cell by cell with its status.

The manifest's ``figures`` are ``compare --json``'s for the same release, under the same names
(the external manifest leaves out, and names, the parts its release type withholds); every
output (the release, each table) has a status ``pass``/``fail``/``review`` with its reasons,
the mitigation applied and the decisions, under the field names of an output checker's results
file where they mean the same (``uid``, ``status``, ``type``, ``files``, ``outcome``,
``summary``, ``timestamp``, ``comments``, ``exception``). No record of the data enters a
manifest.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import platform
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd

from sdc_core.assess import Assessment, Setting, assess
from sdc_core.checks import parse_json
from sdc_core.data.io import table_bytes
from sdc_core.errors import SdcInputError
from sdc_core.lineage import Lineage, check_lineage
from sdc_core.pack_figure import Point, tradeoff_files
from sdc_core.recipe import (
    RANDOM_METHODS,
    Recipe,
    apply_recipe,
    fingerprint,
    parse_recipe,
    release_notes,
    step_columns,
    step_notes,
)
from sdc_core.release_types import ReleaseType, Status, missing_figures, release_status
from sdc_core.tables.cell_rules import Rule
from sdc_core.tables.linked import groups, release_linked
from sdc_core.tables.responses import PublishedQuestion, audit, response_table
from sdc_core.tables.suppression_audit import AuditReport
from sdc_core.tables.table_release import release_table
from sdc_core.version import __version__

PACK_FORMAT, PACK_VERSION = "sdc-release-pack", 1
RELEASED = "released.csv"
INTERNAL_HTML, EXTERNAL_HTML = "internal.html", "external.html"
MANIFEST, INTERNAL_MANIFEST = "manifest.json", "manifest-internal.json"
FIGURE = "tradeoff"

#: The numerical libraries whose versions a pack records (with Python's and the project's).
DEPENDENCIES = ("numpy", "pandas", "scipy", "scikit-learn", "statsmodels", "pyarrow", "opendp",
                "matplotlib")

#: A decision's answers; blank until a board decides.
DECISIONS = ("", "approved", "approved with conditions", "rejected", "deferred")
#: The longest text of a decision field, and of a decision file (characters).
MAX_FIELD, MAX_DECISION = 4_000, 64_000
#: The most outputs a decision file may name.
MAX_OUTPUTS = 100


@dataclass(frozen=True)
class OutputDecision:
    """The decisions on one output: the steward's, the checker's, and the steward's request
    for an exception (a reason to release an output that fails)."""

    steward_decision: str = ""
    checker_decision: str = ""
    exception: str = ""


@dataclass(frozen=True)
class Decision:
    """The board's decision on the release (:data:`DECISIONS`), who made and checked it,
    when, the board's reference, comments, and per output (by its ``uid``) the decisions on
    it. Every field is text, blank until filled; shown as text wherever it appears."""

    decision: str = ""
    steward: str = ""
    checker: str = ""
    steward_date: str = ""
    checker_date: str = ""
    board_reference: str = ""
    comments: str = ""
    outputs: Mapping[str, OutputDecision] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)
                               if f.name != "outputs"}
        out["outputs"] = {uid: vars(d) for uid, d in self.outputs.items()}
        return out

    def on(self, uid: str) -> OutputDecision:
        return self.outputs.get(uid, OutputDecision())


def _text_field(where: str, value: object) -> str:
    if not isinstance(value, str):
        raise SdcInputError(f"decision: {where} must be text, not {type(value).__name__}")
    if len(value) > MAX_FIELD:
        raise SdcInputError(f"decision: {where} is {len(value):,} characters; at most "
                            f"{MAX_FIELD:,}")
    return value


def parse_decision(data: object) -> Decision:
    """A :class:`Decision` from JSON data (``--decision``, the page's fields): known keys
    only, text only, each at most :data:`MAX_FIELD` characters."""
    if not isinstance(data, dict):
        raise SdcInputError("decision: must be a JSON object")
    names = {f.name for f in fields(Decision)}
    unknown = sorted(str(k)[:40] for k in data if k not in names)
    if unknown:
        raise SdcInputError(f"decision: unknown keys {', '.join(map(repr, unknown[:5]))}; "
                            f"known: {', '.join(sorted(names))}")
    values = {k: _text_field(k, v) for k, v in data.items() if k != "outputs"}
    if values.get("decision", "") not in DECISIONS:
        raise SdcInputError(f"decision: decision must be one of "
                            f"{', '.join(repr(d) for d in DECISIONS)}")
    outputs = data.get("outputs", {})
    if not isinstance(outputs, dict) or len(outputs) > MAX_OUTPUTS:
        raise SdcInputError(f"decision: outputs must be an object of at most {MAX_OUTPUTS} "
                            "outputs, by uid")
    known = {f.name for f in fields(OutputDecision)}
    parsed = {}
    for uid, entry in outputs.items():
        where = f"outputs[{str(uid)[:40]!r}]"
        if not isinstance(entry, dict) or set(entry) - known:
            raise SdcInputError(f"decision: {where} must be an object with "
                                f"{', '.join(sorted(known))}")
        parsed[_text_field("an output's uid", uid)] = OutputDecision(
            **{k: _text_field(f"{where}.{k}", v) for k, v in entry.items()})
    return Decision(**values, outputs=parsed)


def load_decision(text: str) -> Decision:
    """:func:`parse_decision` of JSON text of at most :data:`MAX_DECISION` characters."""
    if len(text) > MAX_DECISION:
        raise SdcInputError(f"decision: the file is {len(text):,} characters; at most "
                            f"{MAX_DECISION:,}")
    return parse_decision(parse_json(text, "decision"))


@dataclass(frozen=True)
class Parent:
    """A release a child pack is made from: its released table, its recipe (with its seed,
    from its internal manifest), its manifest, and the SHA-256 of its released file."""

    released: pd.DataFrame
    recipe: Recipe
    manifest: dict[str, Any]
    sha256: str


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _pack_manifest(data: object) -> dict[str, Any]:
    if not isinstance(data, dict) or data.get("format") != PACK_FORMAT:
        raise SdcInputError(f"the parent is not a release pack (no {PACK_FORMAT!r} manifest)")
    return data


def dig(data: object, *keys: str) -> object:
    """``data[k1][k2]…``, or None where a level is missing or not an object (a manifest read
    from a file may hold anything)."""
    for k in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(k)
    return data


def parent_from(manifest_text: str, internal_text: str, released_bytes: bytes,
                released: pd.DataFrame) -> Parent:
    """A parent pack from its two manifests and its released file (bytes and table): the
    file must be the one its manifest names, by SHA-256."""
    manifest, internal = (_pack_manifest(parse_json(text, what)) for text, what in (
        (manifest_text, "parent manifest"), (internal_text, "parent internal manifest")))
    listed = manifest.get("files")
    files = {f["name"]: f.get("sha256") for f in listed
             if isinstance(f, dict) and isinstance(f.get("name"), str)} \
        if isinstance(listed, list) else {}
    found = sha256(released_bytes)
    if files.get(RELEASED) != found:
        raise SdcInputError(f"the parent's {RELEASED} is not the file its manifest names "
                            f"(SHA-256 {found[:12]}…): it has changed since the pack was made")
    if internal.get("files") != manifest.get("files"):
        raise SdcInputError("the parent's two manifests name different files")
    return Parent(released, parse_recipe(internal.get("recipe_from_original")
                                         or internal.get("recipe")), manifest, found)


def _resolved(steps: Sequence[dict[str, Any]],
              reports: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``steps`` with each band step's labels as its run resolved them (``auto`` depends on
    the other band steps of its recipe: written out, a step reads the same in another)."""
    out = []
    for step, report in zip(steps, reports, strict=True):
        if step["method"] == "band" and step.get("label", "auto") == "auto" \
                and "label" in report:
            step = {**step, "label": report["label"]}
        out.append(step)
    return out


def compose(parent: Recipe, parent_reports: Sequence[dict[str, Any]], child: Recipe,
            child_reports: Sequence[dict[str, Any]]) -> Recipe:
    """The recipe that makes the child from the original: the parent's steps, then the
    child's, their band labels as each resolved them (:func:`_resolved`); the child's steps
    draw nothing (:func:`~sdc_core.lineage.check_lineage`), so the parent's seed serves
    both."""
    return replace(parent, steps=[*_resolved(parent.steps, parent_reports),
                                  *_resolved(child.steps, child_reports)],
                   input_fingerprint=None, description=None)


def versions() -> dict[str, str | None]:
    """The project's, Python's and the numerical libraries' versions (None: not installed)."""
    out: dict[str, str | None] = {"sdc_core": __version__,
                                  "python": platform.python_version()}
    for dist in DEPENDENCIES:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


@dataclass(frozen=True)
class PackTable:
    """Cross tables published with the release as one output: a table alone, or tables that
    share columns, protected together (:func:`sdc_core.tables.linked.release_linked`). Their
    cells as published (``frame``), their status and outcome, how they were suppressed, and
    the internal manifest's entry."""

    tables: tuple[tuple[str, ...], ...]
    frame: pd.DataFrame
    status: Status
    outcome: dict[str, int]
    method: str
    internal: dict[str, Any]

    @property
    def uid(self) -> str:
        if len(self.tables) == 1:
            return "table:" + ",".join(self.tables[0])
        return "tables:" + ";".join(",".join(t) for t in self.tables)

    @property
    def summary(self) -> str:
        if len(self.tables) == 1:
            return f"cross table of {', '.join(self.tables[0])}"
        return (f"{len(self.tables)} linked cross tables ("
                + "; ".join(", ".join(t) for t in self.tables) + ")")


def audit_status(report: AuditReport, rule: Rule, hidden: int, linked: bool = False) -> Status:
    """Suppressed tables' status from their audit: ``fail`` when a hidden cell can be narrowed
    below its protection, ``review`` when some hidden cells were not checked in time, else
    ``pass``; ``linked``: the audit is the joint one of several tables."""
    what = "the joint audit of the tables" if linked else "the audit"
    if not report.passes and not report.unchecked_cells:
        return Status("fail", (f"rule {rule.text}: {what} finds a hidden cell that the "
                               "published cells pin down or narrow below its protection",))
    if report.unchecked_cells:
        return Status("review", (f"rule {rule.text}: {report.unchecked_cells} hidden cells "
                                 "were not checked within the time allowed",))
    return Status("pass", (f"rule {rule.text}: {hidden} cells hidden; {what} finds every "
                           "hidden cell protected",))


def pack_tables(df: pd.DataFrame, tables: Sequence[Sequence[str]], rule: Rule,
                household: str | None) -> list[PackTable]:
    """The tables as outputs: each group of tables that share columns
    (:func:`sdc_core.tables.linked.groups`) protected together, a table alone on its own."""
    out = []
    for group in groups(tables):
        if len(group) == 1:
            made = release_table(df, list(group[0]), rule=rule, household=household)
            assert made.audit is not None  # suppressed
            frame = made.published()
            out.append(PackTable(group, frame, audit_status(
                made.audit, rule, int(frame[made.value].isna().sum())), table_outcome(
                frame), made.suppression or "", made.to_json()))
            continue
        linked = release_linked(df, group, rule=rule, household=household)
        frame = linked.frame()
        out.append(PackTable(group, frame, audit_status(linked.audit, rule,
                                                        linked.hidden_cells, linked=True),
                             table_outcome(frame), f"linked, {linked.method}",
                             {"tables": [list(t) for t in group], "rule": rule.text,
                              "audit_passes": linked.audit.passes,
                              "unchecked_cells": linked.audit.unchecked_cells,
                              "left_out": linked.left_out,
                              "cells": frame.astype(object).where(frame.notna(), None)
                              .to_dict(orient="records")}))
    return out


def answers_status(table: PublishedQuestion) -> Status:
    """An answer-count table's status from its audit: ``fail`` when the published counts pin
    a hidden count or the non-response figure narrows one, else ``pass``."""
    if not table.shown:
        return Status("pass", (f"fewer than {table.q} responses: the question is not "
                               "published",))
    found = audit(table).findings()
    if found:
        return Status("fail", tuple(found))
    hidden = sum(o.count is None for o in table.options)
    return Status("pass", (f"counts below {table.t} hidden ({hidden} options); the audit "
                           "finds none pinned",))


def answers_frame(table: PublishedQuestion) -> pd.DataFrame:
    """An answer-count table as published, with each row's status."""
    if not table.shown:
        return pd.DataFrame({"option": [], "responses": [], "status": []})
    out = table.frame()  # the options, then "(no response)", published as an interval
    out["status"] = [*("published" if o.count is not None else "hidden"
                       for o in table.options), "published"]
    return out


def table_outcome(frame: pd.DataFrame) -> dict[str, int]:
    """Published cells by status (``published``, ``primary``, ``secondary``; a cell that
    linked tables share counted in each)."""
    return {str(k): int(v) for k, v in frame["status"].value_counts().sort_index().items()}


@dataclass
class Pack:
    """A built pack: its files by name (bytes), both manifests, the status of every output,
    and the release's assessment."""

    files: dict[str, bytes]
    manifest: dict[str, Any]
    internal: dict[str, Any]
    statuses: dict[str, Status]
    assessment: Assessment

    def write(self, folder: Path) -> list[Path]:
        """Write every file into ``folder`` (made if missing); returns the paths written."""
        folder.mkdir(parents=True, exist_ok=True)
        out = []
        for name, data in self.files.items():
            (folder / name).write_bytes(data)
            out.append(folder / name)
        return out

    def zip_bytes(self) -> bytes:
        """The pack as one zip file, the same bytes for the same pack (fixed times)."""
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            for name, data in self.files.items():
                info = zipfile.ZipInfo(f"release-pack/{name}", (1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, data)
        return buf.getvalue()


@dataclass(frozen=True)
class PackRequest:
    """What a pack is made of: the original table (and the SHA-256 of its file, when read
    from one), the recipe, the release type (its targets as the steward set them), the
    setting the release is judged in, the decision, a parent pack, the cross tables to
    publish with it and their primary rule, the questions whose answer counts are published
    (small counts suppressed, :func:`sdc_core.tables.responses.response_table`'s defaults),
    the benchmark analyses, a sweep's settings for
    the trade-off figure (rows with ``IL1_release`` and ``linkage_reidentifications``), a
    title and the time it is made (ISO 8601; None: now)."""

    original: pd.DataFrame
    recipe: Recipe
    kind: ReleaseType
    setting: Setting
    title: str = "release"
    original_sha256: str | None = None
    decision: Decision = Decision()
    parent: Parent | None = None
    tables: tuple[tuple[str, ...], ...] = ()
    table_rule: Rule | None = None
    questions: tuple[str, ...] = ()
    analyses: Any = None
    sweep: pd.DataFrame | None = None
    created: str | None = None


def _made(req: PackRequest, original_fingerprint: str) -> tuple[Recipe, Any, Lineage | None]:
    """The recipe that makes the release from the original, its result, and the lineage
    check when the release is made from a parent (refused: an error with every reason)."""
    if req.parent is None:
        return req.recipe, apply_recipe(req.recipe, req.original), None
    p = req.parent
    if original_fingerprint != dig(p.manifest, "inputs", "original", "fingerprint"):
        raise SdcInputError("the original is not the one the parent pack was made from "
                            "(its table fingerprint differs)")
    child = apply_recipe(req.recipe, p.released)
    lineage = check_lineage(p.released, child.data, req.recipe)
    if not lineage.accepted:
        raise SdcInputError("lineage refused: " + "; ".join(lineage.refused))
    whole = compose(p.recipe, apply_recipe(p.recipe, req.original).reports, req.recipe,
                    child.reports)
    applied = apply_recipe(whole, req.original)
    if fingerprint(applied.data) != fingerprint(child.data):
        raise SdcInputError("the parent's recipe and this one, run on the original, do not "
                            "give the file made from the parent's release: the parent pack "
                            "does not replay")
    return whole, applied, lineage


def _points(req: PackRequest, before: Assessment, after: Assessment) -> tuple[Point, Point,
                                                                              list[Point]]:
    origin = Point(0.0, before.linkage.linkage_reidentifications)
    chosen = Point(after.loss.summary()["IL1_release"], after.linkage.linkage_reidentifications)
    others = []
    if req.sweep is not None:
        for _, r in req.sweep.iterrows():
            if pd.notna(r.get("IL1_release")) and pd.notna(r.get("linkage_reidentifications")):
                others.append(Point(float(r["IL1_release"]),
                                    float(r["linkage_reidentifications"])))
    return origin, chosen, others


def _steps(recipe: Recipe, kind: ReleaseType, internal: bool) -> list[dict[str, Any]]:
    """The recipe's steps as the manifest gives them: method, columns, parameters (a random
    step's withheld where the type keeps them from the data users), never the seed."""
    out = []
    for i, step in enumerate(recipe.steps, 1):
        params = {k: v for k, v in step.items() if k not in ("method", "column", "columns")}
        shown = internal or kind.pram_matrix or step["method"] not in RANDOM_METHODS
        out.append({"step": i, "method": step["method"],
                    "columns": [str(c) for c in step_columns(step)],
                    "random": step["method"] in RANDOM_METHODS,
                    "parameters": params if shown else None})
    return out


#: What the external manifest leaves out for a type that keeps random steps' parameters from
#: the data users, and why.
WITHHELD = {"attribute": "each perturbed column's transition matrix and posterior (what a "
                         "random step's parameters give away)"}


def released_recipe(recipe: Recipe, not_released: Sequence[str],
                    columns: Sequence[object]) -> Recipe:
    """``recipe`` with a last step that drops the columns ``not_released`` that ``columns``
    (of the table it runs on) hold: the released file leaves them out, as the Export page's
    files do, and the recipe in the pack says so."""
    dropped = [c for c in not_released if c in columns]
    if not dropped:
        return recipe
    return replace(recipe, steps=[*recipe.steps, {"method": "drop", "columns": dropped}])


def build_pack(req: PackRequest) -> Pack:
    """The pack of ``req`` (module docstring); an error when a parent's lineage is refused.
    The columns the setting does not release are dropped from the released file
    (:func:`released_recipe`)."""
    from sdc_core import pack_html

    base = req.original if req.parent is None else req.parent.released
    req = replace(req, recipe=released_recipe(req.recipe, req.setting.not_released,
                                              list(base.columns)))
    created = req.created or dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
    original_fingerprint = fingerprint(req.original)  # the table as CSV text: once
    whole, applied, lineage = _made(req, original_fingerprint)
    setting = req.setting
    # judged as compare judges a written release: every column may have changed
    after = assess(req.original, applied.data, setting, whole, None, req.analyses)
    before = assess(req.original, req.original, setting)
    figures = after.to_json(distribution=True)
    figures["release_notes"] = release_notes(whole, req.original)
    keys_after, keys_before = after.keys.summary(), before.keys.summary()
    statuses = {"release": release_status(req.kind, figures, keys_after, missing_figures(
        after.rows, bool(setting.sensitive)))}

    files: dict[str, bytes] = {RELEASED: table_bytes(applied.data, ".csv")}
    figure_note, plotted = None, None
    if after.rows is None:
        origin, chosen, others = _points(req, before, after)
        plotted = {"original": vars(origin), "release": vars(chosen),
                   "sweep": [vars(p) for p in others]}
        svg_pdf = tradeoff_files(origin, chosen, others)
        files[f"{FIGURE}.svg"], files[f"{FIGURE}.pdf"] = svg_pdf["svg"], svg_pdf["pdf"]
    else:
        figure_note = (f"no trade-off figure: {after.rows} (its loss and its linkage attack "
                       "compare record by record)")
    rule = req.table_rule or Rule("threshold", (5,))
    tables = pack_tables(req.original, req.tables, rule, setting.household)
    for n, t in enumerate(tables, 1):
        files[f"table-{n}.csv"] = table_bytes(t.frame, ".csv")
        statuses[t.uid] = t.status

    answers = []
    for question in req.questions:
        published = response_table(req.original, question)
        answers.append(published)
        files[f"answers-{len(answers)}.csv"] = table_bytes(answers_frame(published), ".csv")
        statuses[f"answers:{question}"] = answers_status(published)

    mitigation = step_notes(applied.reports)
    outputs = []
    for uid, status in statuses.items():
        d = req.decision.on(uid)
        if uid == "release":
            entry = {"uid": uid, "type": "microdata", "files": [RELEASED],
                     "summary": f"{req.kind.name}: {status.status}",
                     "outcome": {"records": len(applied.data),
                                 "columns": len(applied.data.columns)},
                     "mitigation": mitigation}
        elif uid.startswith("answers:"):
            i = [f"answers:{a.question}" for a in answers].index(uid)
            a = answers[i]
            entry = {"uid": uid, "type": "answer counts", "files": [f"answers-{i + 1}.csv"],
                     "summary": f"answer counts of {a.question}: {status.status}",
                     "outcome": {"published": sum(o.count is not None for o in a.options),
                                 "hidden": sum(o.count is None for o in a.options)},
                     "mitigation": [f"counts below {a.t} hidden, the question hidden below "
                                    f"{a.q} responses"]}
        else:
            t = next(t for t in tables if t.uid == uid)
            entry = {"uid": uid, "type": "table" if len(t.tables) == 1 else "linked tables",
                     "files": [f"table-{tables.index(t) + 1}.csv"],
                     "summary": f"{t.summary}: {status.status}", "outcome": t.outcome,
                     "mitigation": [f"primary cells by rule {rule.text}, secondary "
                                    f"suppression ({t.method})"]}
        entry.update(status=status.status, reasons=list(status.reasons), timestamp=created,
                     comments=[], exception=d.exception,
                     steward_decision=d.steward_decision, checker_decision=d.checker_decision)
        outputs.append(entry)

    common: dict[str, Any] = {
        "format": PACK_FORMAT, "format_version": PACK_VERSION, "title": req.title,
        "created": created, "software": versions(), "release_type": req.kind.to_json(),
        "decision": req.decision.to_json(),
        "inputs": {"original": {"sha256": req.original_sha256,
                                "fingerprint": original_fingerprint,
                                "records": len(req.original),
                                "columns": len(req.original.columns)},
                   "parent": None if req.parent is None else {
                       "sha256": req.parent.sha256,
                       "release_type": dig(req.parent.manifest, "release_type", "type"),
                       "title": dig(req.parent.manifest, "title")}},
        "roles": {"qi": list(setting.qi), "sensitive": list(setting.sensitive),
                  "known": list(setting.known), "household": setting.household,
                  "weight": setting.weight, "numeric": list(setting.numeric),
                  "not_released": list(setting.not_released)},
        "outputs": outputs,
        "lineage": None if lineage is None else lineage.to_json(),
        "figure": {"files": [] if plotted is None else [f"{FIGURE}.svg", f"{FIGURE}.pdf"],
                   "note": figure_note, "risk": "linkage_reidentifications",
                   "loss": "IL1_release", "points": plotted},
    }
    external_figures = {k: v for k, v in figures.items()
                        if req.kind.pram_matrix or k not in WITHHELD}
    manifest = {**common, "audience": "external",
                "methods": _steps(req.recipe, req.kind, internal=False),
                "figures": external_figures,
                "figures_withheld": {} if req.kind.pram_matrix
                else {k: v for k, v in WITHHELD.items() if k in figures},
                "keys_risk": {"release": keys_after}}
    internal = {**common, "audience": "internal",
                "methods": _steps(req.recipe, req.kind, internal=True),
                "recipe": req.recipe.to_dict(),
                "recipe_from_original": whole.to_dict() if req.parent is not None else None,
                "step_reports": applied.reports, "warnings": list(applied.warnings),
                "figures": figures, "figures_withheld": {},
                "keys_risk": {"original": keys_before, "release": keys_after},
                "tables": [{"uid": t.uid, **t.internal} for t in tables],
                "answers": [a.to_dict() for a in answers]}
    view = pack_html.PackView(req, after, before, figures, keys_before, keys_after, outputs,
                              tables, lineage, mitigation, figure_note,
                              [(a.question, answers_frame(a)) for a in answers],
                              common["software"], original_fingerprint)
    files[INTERNAL_HTML] = pack_html.internal_html(view, whole, files.get(f"{FIGURE}.svg"))
    files[EXTERNAL_HTML] = pack_html.external_html(view)
    listed = [{"name": n, "sha256": sha256(b), "bytes": len(b)} for n, b in files.items()]
    manifest["files"] = internal["files"] = listed
    files[MANIFEST] = _json_bytes(manifest)
    files[INTERNAL_MANIFEST] = _json_bytes(internal)
    return Pack(files, manifest, internal, statuses, after)


def _json_bytes(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False, default=_plain) + "\n").encode()


def _plain(v: object) -> object:
    """A numpy or pandas value as JSON (the reports hold numpy numbers)."""
    if hasattr(v, "item"):
        return v.item()
    if isinstance(v, (set, frozenset, tuple)):
        return list(v)
    return str(v)
