"""Release types: public-use, scientific-use, teaching and secure-access files as presets.

A release type says who the intruder is (:class:`Scenario`: which columns he is assumed to know,
whether he is assumed to know that the person is in the file), the targets a release of that
type must meet (:class:`Target`: a figure named as in ``compare --json`` or ``risk --json``, and
its limit in the direction its declaration in :mod:`sdc_core.names` says is better), the figures
its decision pack must carry, and what its external note may show (docs/releases.md gives the
reasoning and its sources). The targets are defaults: the steward may change them
(:func:`with_targets`), and the pack records the ones used.

:func:`judge` gives an output's status from its figures, with the field names of an output
checker's results (docs/releases.md, "Status of an output"):

- ``fail``: a target is missed;
- ``review``: no target is missed but one cannot be read (its figure is not computed for this
  release, e.g. no sensitive column was named), or the type asks a person to check every output
  (secure access);
- ``pass``: every target is met.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sdc_core.errors import SdcInputError
from sdc_core.names import MEASURES, name

#: The statuses of an output, in the order a board reads them.
STATUSES = ("fail", "review", "pass")


@dataclass(frozen=True)
class Scenario:
    """The intruder a release type assumes: who he is (``intruder``), whether he is assumed to
    know that the person he looks for is in the file (``knows_membership``: the linkage attack
    is then read as it is; without it a file that is a sample protects too, which the risk in
    the population measures) and which columns he knows (``knows``: the quasi-identifiers)."""

    intruder: str
    knows_membership: bool
    knows: str = "the quasi-identifiers, from public sources or registers"


@dataclass(frozen=True)
class Target:
    """``figure`` at most (or, for a figure where higher is better, at least) ``limit``. The
    figure is a key of ``compare --json`` or ``risk --json`` (:data:`TARGET_FIGURES`)."""

    figure: str
    limit: float

    def __post_init__(self) -> None:
        if self.figure not in TARGET_FIGURES:
            raise SdcInputError(f"a target's figure must be one of "
                                f"{', '.join(TARGET_FIGURES)}, not {self.figure[:60]!r}")
        if isinstance(self.limit, bool) or not isinstance(self.limit, (int, float)) \
                or not math.isfinite(self.limit) or self.limit < 0:
            raise SdcInputError(f"the target of {self.figure} must be a finite number ≥ 0")

    @property
    def better(self) -> str:
        """"lower" or "higher", from the figure's declaration."""
        return MEASURES[self.figure].better or "lower"

    @property
    def unit(self) -> str:
        """The limit's unit as a target writes it: "%", "points" (percentage points) or ""."""
        m = MEASURES[self.figure]
        return "%" if m.unit == "%" else "points" if "percentage points" in m.formula else ""

    def text(self, k: int | str = "k") -> str:
        """The target as a board reads it: "linkage attack risk ≤ 1 %"; ``k`` the k-anonymity
        threshold a figure's name may hold."""
        unit = f" {self.unit}" if self.unit else ""
        return f"{name(self.figure, k)} {'≤' if self.better == 'lower' else '≥'} " \
               f"{self.limit:g}{unit}"

    def met(self, value: float) -> bool:
        return value <= self.limit if self.better == "lower" else value >= self.limit

    def to_json(self, k: int | str = "k") -> dict[str, Any]:
        return {"figure": self.figure, "limit": self.limit, "better": self.better,
                "text": self.text(k)}


#: The figures a target may name: risk and loss figures of one number each, where one side is
#: better (:mod:`sdc_core.names`).
TARGET_FIGURES = ("percent_below_k", "percent_unique", "global_risk_percent",
                  "avg_linkage_risk_percent", "linkage_risk_percent", "linkage_percent_certain",
                  "inference_gain", "replicated_uniques_percent", "IL1_release",
                  "eigenvalue_similarity_percent")


@dataclass(frozen=True)
class ReleaseType:
    """A release type (module docstring): its ``key`` (``puf``, ``suf``, ``teaching``,
    ``secure``), ``name``, ``scenario``, the k of the k-anonymity figures, the default
    ``targets``, the figures its pack must carry (``required``), whether the external note may
    show a PRAM step's transition matrix (``pram_matrix``), whether every output goes to a
    person's review whatever its figures (``always_review``) and the release type it is made
    from when it nests in another (``made_from``)."""

    key: str
    name: str
    scenario: Scenario
    k: int
    targets: tuple[Target, ...]
    required: tuple[str, ...]
    pram_matrix: bool
    always_review: bool = False
    made_from: str | None = None
    note: str = field(default="", compare=False)

    def to_json(self) -> dict[str, Any]:
        return {"type": self.key, "name": self.name,
                "intruder": self.scenario.intruder,
                "knows_membership": self.scenario.knows_membership,
                "knows": self.scenario.knows, "k": self.k,
                "targets": [t.to_json(self.k) for t in self.targets],
                "required_figures": list(self.required),
                "external_pram_matrix": self.pram_matrix,
                "always_review": self.always_review, "made_from": self.made_from}


_RISK = ("percent_below_k", "global_risk_percent", "linkage_risk_percent")

#: The four release types (docs/releases.md: the reasoning and its sources).
RELEASE_TYPES: dict[str, ReleaseType] = {t.key: t for t in (
    ReleaseType(
        "puf", "public-use file",
        Scenario("anyone who downloads the file, matching it with a register or what he knows "
                 "of a neighbour", knows_membership=True),
        k=5,
        targets=(Target("percent_below_k", 0), Target("linkage_risk_percent", 1),
                 Target("inference_gain", 5)),
        required=(*_RISK, "inference_gain", "IL1_release"),
        pram_matrix=True, made_from="suf",
        note="published to anyone: the strictest targets, and made from the licensed file so "
             "that the two nest"),
    ReleaseType(
        "suf", "scientific-use file",
        Scenario("a licensed researcher who has signed not to re-identify, or one who breaks "
                 "the licence", knows_membership=False),
        k=3,
        targets=(Target("percent_below_k", 1), Target("linkage_risk_percent", 5)),
        required=(*_RISK, "IL1_release"),
        pram_matrix=True,
        note="licensed to researchers: the licence and the sample protect too, so the targets "
             "are looser; the PRAM matrix is given so analyses can be corrected"),
    ReleaseType(
        "teaching", "teaching file",
        Scenario("anyone, a class or whoever it passes to: a teaching file travels beyond its "
                 "course", knows_membership=True),
        k=5,
        targets=(Target("percent_below_k", 0), Target("linkage_risk_percent", 0.5),
                 Target("linkage_percent_certain", 0), Target("inference_gain", 2)),
        required=(*_RISK, "linkage_percent_certain", "inference_gain"),
        pram_matrix=False, made_from="suf",
        note="distributed widely and judged on how it teaches, not on exact estimates: the "
             "lowest risk, at whatever loss"),
    ReleaseType(
        "secure", "secure-access file",
        Scenario("an accredited researcher inside a controlled environment, whose every output "
                 "is checked before it leaves", knows_membership=True),
        k=2,
        targets=(Target("linkage_risk_percent", 20),),
        required=_RISK,
        pram_matrix=True, always_review=True,
        note="never leaves the controlled environment: the file keeps its detail and each "
             "output is checked by a person"),
)}


def release_type(key: str) -> ReleaseType:
    """The release type ``key`` (``puf``, ``suf``, ``teaching``, ``secure``)."""
    try:
        return RELEASE_TYPES[key]
    except (KeyError, TypeError):
        raise SdcInputError(f"release type must be one of {', '.join(RELEASE_TYPES)}, "
                            f"not {str(key)[:40]!r}") from None


_TARGET = re.compile(r"\s*([A-Za-z_0-9]+)\s*(?:<=|>=|=)\s*([0-9.eE+-]+)\s*")


def parse_target(text: str) -> Target:
    """``figure<=limit`` (or ``>=``, ``=``: the direction is the figure's own), as the command
    line's ``--target`` gives it."""
    found = _TARGET.fullmatch(text[:200])
    if found is None:
        raise SdcInputError(f"a target is FIGURE<=LIMIT, e.g. linkage_risk_percent<=1, not "
                            f"{text[:60]!r}")
    try:
        limit = float(found[2])
    except ValueError:
        raise SdcInputError(f"the limit of {found[1]} must be a number, not "
                            f"{found[2][:20]!r}") from None
    return Target(found[1], limit)


def with_targets(kind: ReleaseType, changed: Sequence[Target]) -> ReleaseType:
    """``kind`` with the steward's ``changed`` targets replacing (or adding to) its own."""
    by_figure = {t.figure: t for t in kind.targets}
    by_figure.update({t.figure: t for t in changed})
    return replace(kind, targets=tuple(by_figure.values()))


def flat_figures(compare: Mapping[str, Any], keys: Mapping[str, Any]) -> dict[str, float]:
    """The one-number figures a target may read, from ``compare --json``'s dict and the
    released keys' ``risk --json`` figures; a figure not computed is absent."""
    out: dict[str, float] = {}
    for key in TARGET_FIGURES:
        for source in (compare, compare.get("inference") or {}, keys):
            v = source.get(key)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
                out[key] = float(v)
                break
    return out


#: The figures a target may name that compare a release record by record: none of them for a
#: release whose rows are not the original's (a synthetic file).
RECORD_BY_RECORD = ("linkage_risk_percent", "linkage_percent_certain", "inference_gain",
                    "IL1_release")
#: Why no attribute-inference gain is read without a sensitive column.
NO_SENSITIVE = "no sensitive column was named"


def missing_figures(rows: str | None, sensitive: bool) -> dict[str, str]:
    """Why a target's figure is absent: ``rows`` the reason a release has no row
    correspondence (None: it has), ``sensitive`` whether a sensitive column was named."""
    if rows is not None:
        return dict.fromkeys(RECORD_BY_RECORD, rows)
    return {} if sensitive else {"inference_gain": NO_SENSITIVE}


@dataclass(frozen=True)
class Status:
    """An output's status (``pass``, ``fail``, ``review``) and why, one reason a target."""

    status: str
    reasons: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "reasons": list(self.reasons)}


def judge(kind: ReleaseType, figures: Mapping[str, float],
          missing: Mapping[str, str] | None = None) -> Status:
    """The status of a released file of type ``kind`` with ``figures``
    (:func:`flat_figures`); ``missing``: why a figure that is absent was not computed."""
    missing = missing or {}
    reasons, worst = [], "pass"
    for t in kind.targets:
        if t.figure not in figures:
            why = missing.get(t.figure, "not computed for this release")
            reasons.append(f"{t.text(kind.k)}: cannot be read ({why})")
            worst = "review" if worst == "pass" else worst
            continue
        value = figures[t.figure]
        if t.met(value):
            reasons.append(f"{t.text(kind.k)}: met ({value:.6g})")
        else:
            reasons.append(f"{t.text(kind.k)}: MISSED ({value:.6g})")
            worst = "fail"
    if kind.always_review and worst == "pass":
        worst = "review"
        reasons.append(f"a {kind.name} is checked by a person, output by output")
    return Status(worst, tuple(reasons))


def release_status(kind: ReleaseType, compare: Mapping[str, Any], keys: Mapping[str, Any],
                   missing: Mapping[str, str] | None = None) -> Status:
    """The status of a release of type ``kind`` from ``compare --json``'s figures (or those of
    them the page has), the released keys' ``risk --json`` figures and why a figure is absent
    (:func:`missing_figures`): the decision pack's and the Protect page's."""
    return judge(kind, flat_figures(compare, keys), missing)
