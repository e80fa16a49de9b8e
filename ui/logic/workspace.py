"""A workspace file: the work done on a data set, without its records, to go on another day.

It is JSON (pure Python here; the Data and Export pages offer it):

```json
{"workspace": 1,
 "data": {"name": "survey.csv", "records": 1200, "columns": ["age", "sex", …],
          "fingerprint": "3f2a…"},
 "roles": {"qi": […], "sensitive": […], "weight": null, "numeric": […], "ignore": […],
           "household": null},
 "recipe": {"seed": 42, "steps": […]},
 "risk": {"k": 5, "na": "wildcard", "alpha": 1.0},
 "known": […],
 "tradeoffs": {"w_t_band_values": "5, 10", "w_t_target": "every_class", …},
 "tables": {"w_tables_kind": "Cross table with margins", "w_tables_cross": ["sex", "age"], …},
 "analyses": {"confidence": 0.95, "analyses": […]}}
```

It holds no value of any record: the data set's name, size, column names and fingerprint (the
content hash the sidebar shows), the roles, the Protect page's recipe, the risk settings, the
columns the attacker is assumed to know, the Trade-offs form (grid and target), the Tables page's
settings and the benchmark analyses (their spec, as ``compare --analysis`` reads it). Like a recipe,
a merge of levels names the levels it merges.

Opening it with a data set applies all of it or nothing: a column it names that the data set
lacks, a recipe the Protect page cannot show, a risk setting out of range: each refuses the
whole file with a message. A data set other than the one it was saved with (another fingerprint)
is allowed when it has the columns, and said.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sdc_core.assess import RiskOptions
from sdc_core.checks import check_json_size, shown
from sdc_core.errors import SdcInputError
from sdc_core.recipe import parse_recipe
from sdc_core.roles import Roles
from sdc_core.utility.analysis import parse_spec
from ui.logic.cross_tables import table_field
from ui.logic.protect import ProtectSettings, from_steps
from ui.logic.session import Notice
from ui.logic.text import md

VERSION = 1
#: The Trade-offs form's fields a workspace keeps (:func:`views.tradeoffs.keep`).
FORM_PREFIX = "w_t_"
#: The Tables page's fields a workspace keeps (:data:`ui.logic.cross_tables.TABLE_FIELDS`).
TABLES_PREFIX = "w_tables_"
_ROLE_LISTS = ("qi", "sensitive", "numeric", "ignore")
_NA = ("wildcard", "category")


@dataclass(frozen=True)
class Workspace:
    """What a workspace file restores; ``data`` describes the data set it was saved with."""

    data: dict[str, Any]
    roles: Roles
    settings: ProtectSettings
    risk: RiskOptions
    known: list[str] = field(default_factory=list)
    tradeoffs: dict[str, Any] = field(default_factory=dict)
    #: the benchmark analyses (a spec of :func:`sdc_core.utility.analysis.parse_spec`), None
    #: when the file has none
    analyses: dict[str, Any] | None = None
    #: how the data set was sampled: {"sampling_fraction": f}, {"population_size": N} or {}
    sampling: dict[str, float] = field(default_factory=dict)
    #: the Tables page's settings, by widget key
    tables: dict[str, Any] = field(default_factory=dict)


def to_json(name: str, records: int, columns: Sequence[str], fingerprint: str, roles: Roles,
            steps: list[dict[str, Any]], seed: int, risk: RiskOptions, known: Sequence[str],
            tradeoffs: dict[str, Any], analyses: dict[str, Any] | None = None,
            sampling: dict[str, float] | None = None,
            tables: dict[str, Any] | None = None) -> str:
    """The workspace file of this work (see the module docstring)."""
    return json.dumps({
        "workspace": VERSION,
        "data": {"name": name, "records": int(records), "columns": [str(c) for c in columns],
                 "fingerprint": fingerprint},
        "roles": {"qi": roles.qi, "sensitive": roles.sensitive, "weight": roles.weight,
                  "numeric": roles.numeric, "ignore": roles.ignore,
                  **({"household": roles.household} if roles.household else {})},
        "recipe": {"seed": int(seed), "steps": steps},
        "risk": {"k": risk.k, "na": risk.na, "alpha": risk.alpha},
        "known": list(known),
        "tradeoffs": {k: v for k, v in sorted(tradeoffs.items()) if k.startswith(FORM_PREFIX)},
        **({"tables": {k: v for k, v in sorted(tables.items()) if k.startswith(TABLES_PREFIX)}}
           if tables else {}),
        **({"analyses": analyses} if analyses is not None else {}),
        **({"sampling": sampling} if sampling else {}),
    }, indent=2, ensure_ascii=False, default=str) + "\n"


def _names(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise SdcInputError(f"{what} must be a list of column names")
    return value


def _roles(data: Any) -> Roles:
    if not isinstance(data, dict) or set(data) - {*_ROLE_LISTS, "weight", "household"}:
        raise SdcInputError("roles must be an object with qi, sensitive, weight, numeric, "
                            "ignore and household")
    weight, household = data.get("weight"), data.get("household")
    if weight is not None and not isinstance(weight, str):
        raise SdcInputError("the weight must be a column name or null")
    if household is not None and not isinstance(household, str):
        raise SdcInputError("the household must be a column name or null")
    roles = Roles(weight=weight, household=household,
                  **{n: _names(data.get(n, []), f"roles.{n}") for n in _ROLE_LISTS})
    if problems := roles.problems():
        raise SdcInputError("; ".join(problems))
    return roles


def _risk(data: Any) -> RiskOptions:
    if not isinstance(data, dict) or set(data) - {"k", "na", "alpha"}:
        raise SdcInputError("risk must be an object with k, na and alpha")
    default = RiskOptions()
    k, na, alpha = (data.get("k", default.k), data.get("na", default.na),
                    data.get("alpha", default.alpha))
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= 1000:
        raise SdcInputError(f"risk.k must be a whole number from 1 to 1000, not {k!r}")
    if na not in _NA:
        raise SdcInputError(f"risk.na must be wildcard or category, not {na!r}")
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not 0 <= alpha <= 1:
        raise SdcInputError(f"risk.alpha must be a number from 0 to 1, not {alpha!r}")
    return RiskOptions(k, na, float(alpha))


def _sampling(data: Any) -> dict[str, float]:
    """{"sampling_fraction": f in (0, 1]} or {"population_size": N ≥ 1} or {}."""
    if not isinstance(data, dict) or len(data) > 1 \
            or set(data) - {"sampling_fraction", "population_size"}:
        raise SdcInputError('sampling must be {"sampling_fraction": f} or '
                            '{"population_size": N}')
    for key, value in data.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not (0 < value <= 1 if key == "sampling_fraction"
                        else 1 <= value <= _MAX_AMOUNT):  # what the Risk page's field draws
            raise SdcInputError(f"sampling: {key} must be "
                                + ("a number in (0, 1]" if key == "sampling_fraction"
                                   else "a number of people from 1 to 2^53 − 1")
                                + f", not {shown(value)}")
    return {k: float(v) for k, v in data.items()}


#: The Trade-offs form's fields of fixed names: what each must hold to be drawn by its widget
#: (views/tradeoffs.py): a whole number in a range, a choice, True/False, a number ≥ 0.
#: The Trade-offs form's seeds per randomised setting, its first seed, its Pareto risks: what
#: its widgets offer (views/tradeoffs.py draws them from these).
SEEDS, FIRST_SEED, PARETO = (1, 20), (0, 2**31 - 1), ("linkage", "naive")
_FORM_FIELDS: dict[str, tuple[str, Any]] = {
    "w_t_seeds": ("whole", SEEDS), "w_t_seed": ("whole", FIRST_SEED),
    "w_t_pareto": ("choice", PARETO), "w_t_combine": ("flag", None),
    "w_t_exhaustive": ("flag", None),
    "w_t_target": ("name", None), "w_t_at_most": ("amount", None),
    "w_t_loss": ("name", None), "w_t_keep": ("name", None), "w_t_keep_bound": ("amount", None),
}
#: The longest text of a values field (a list of numbers).
_MAX_FIELD_TEXT = 1000
#: The largest number a number field takes (JavaScript's safe integers).
_MAX_AMOUNT = 2**53 - 1


def _form_field(key: str) -> tuple[str, Any] | None:
    """What the Trade-offs form's field ``key`` may hold: a fixed field of
    :data:`_FORM_FIELDS`, a method's columns (a list of names) or its values (text)."""
    return _FORM_FIELDS.get(key, ("columns", None) if key.endswith("_cols") else
                            ("text", None) if "_values" in key else None)


def _fields(data: Any, section: str, page: str, prefix: str,
            field_of: Callable[[str], tuple[str, Any] | None]) -> dict[str, Any]:
    """The fields of a page's form (``section`` of the file), each checked against what its
    widget can draw (:func:`fits`; a value the page cannot draw broke it on every visit)."""
    if not isinstance(data, dict):
        raise SdcInputError(f"{section} must be an object of the {page}'s fields")
    for key, value in data.items():
        where = f"{section}: {shown(key)}"
        kind = field_of(key) if isinstance(key, str) and key.startswith(prefix) else None
        if kind is None:
            raise SdcInputError(f"{where} is not a field of the {page}")
        if not fits(*kind, value):
            raise SdcInputError(f"{where} must be {wanted(*kind)}, not {shown(value)}")
    return dict(data)


def _form(data: Any) -> dict[str, Any]:
    """The Trade-offs form's fields (:func:`_form_field`), checked."""
    return _fields(data, "tradeoffs", "Trade-offs form", FORM_PREFIX, _form_field)


def tables_fields(data: Any, section: str = "tables") -> dict[str, Any]:
    """The Tables page's settings by widget key, each checked against what its widget can
    draw (:func:`ui.logic.cross_tables.table_field`); ``section`` names them in a refusal (a
    link's ``tables`` too)."""
    return _fields(data, section, "Tables page", TABLES_PREFIX, table_field)


_WANTED = {"whole": "a whole number from {0} to {1}", "choice": "one of {0}, {1}",
           "flag": "true or false", "name": "a name or null",
           "amount": "a number from 0 to 2^53 − 1", "columns": "a list of column names",
           "text": "text of at most {0} characters", "number": "a number from {0:g} to {1:g}",
           "texts": "a list of texts"}


def wanted(kind: str, limits: Any) -> str:
    """What a field of ``kind`` must hold, in words."""
    if kind == "text":
        limits = (limits or _MAX_FIELD_TEXT,)
    return _WANTED[kind].format(*limits or ())


def fits(kind: str, limits: Any, value: Any) -> bool:
    """Whether ``value`` is what a field of ``kind`` and ``limits`` may hold: a whole number
    or a number in the range ``limits``, one of the choices ``limits``, True/False, a name or
    null, an amount ≥ 0, a list of names, text of at most ``limits`` (default 1000)
    characters, a list of texts."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "whole":
        return isinstance(value, int) and not isinstance(value, bool) \
            and limits[0] <= value <= limits[1]
    if kind == "number":
        return number and limits[0] <= value <= limits[1]
    if kind == "choice":
        return value in limits and isinstance(value, str)
    if kind == "flag":
        return isinstance(value, bool)
    if kind == "name":
        return value is None or (isinstance(value, str) and len(value) <= 100)
    if kind == "amount":
        return number and 0 <= value <= _MAX_AMOUNT
    if kind in ("columns", "texts"):
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return isinstance(value, str) and len(value) <= (limits or _MAX_FIELD_TEXT)


def read(text: str | bytes, columns: Sequence[str]) -> Workspace:
    """The workspace in ``text`` (a file's bytes are measured before they are decoded, bytes
    that are not UTF-8 replaced), checked against a data set with these ``columns``; an error
    (nothing to apply) when anything in it cannot be used as it is."""
    check_json_size(len(text) if isinstance(text, bytes)
                    else len(text.encode("utf-8", errors="replace")), "workspace file")
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise SdcInputError(f"not a workspace file: not JSON (line {err.lineno}: "
                            f"{err.msg})") from None
    except RecursionError:  # deeper than Python's parser goes
        raise SdcInputError("the workspace file is nested too deeply to be read") from None
    except ValueError:  # Python reads whole numbers of at most 4,300 digits
        raise SdcInputError("the workspace file holds a number of more than 4,300 digits") \
            from None
    if not isinstance(data, dict) or "workspace" not in data:
        raise SdcInputError("not a workspace file (it has no \"workspace\" version; a recipe "
                            "is loaded on the Protect page)")
    if type(data["workspace"]) is not int or data["workspace"] != VERSION:  # not true, 1.0
        raise SdcInputError(f"workspace version {data['workspace']!r} is not supported "
                            f"(expected {VERSION})")
    unknown = set(data) - {"workspace", "data", "roles", "recipe", "risk", "known", "tradeoffs",
                           "analyses", "sampling", "tables"}
    if unknown:
        raise SdcInputError(f"unknown key(s) {', '.join(sorted(unknown))}")
    about = data.get("data", {})
    if not isinstance(about, dict):
        raise SdcInputError("data must be an object describing the data set")
    roles = _roles(data.get("roles", {}))
    saved = data.get("recipe", {"seed": 42, "steps": []})
    if isinstance(saved, dict) and "household" not in saved:  # the roles' (record swapping
        saved = {**saved, "household": roles.household}  # needs it)
    recipe = parse_recipe(saved)
    settings = from_steps(recipe.steps, recipe.seed)
    known = _names(data.get("known", []), "known")
    named = [*roles.qi, *roles.sensitive, *roles.numeric, *roles.ignore,
             *([roles.weight] if roles.weight else []),
             *([roles.household] if roles.household else []), *known,
             *(c for s in recipe.steps for c in ([s["column"]] if "column" in s
                                                 else s["columns"]))]
    analyses = None
    if "analyses" in data:
        spec = parse_spec(data["analyses"])
        analyses = spec.to_json()
        named += [c for c in spec.table_columns()]
    missing = [c for c in dict.fromkeys(named) if c not in set(map(str, columns))]
    if missing:
        raise SdcInputError(f"it names column(s) this data set does not have: "
                            f"{', '.join(missing)}")
    return Workspace(about, roles, settings, _risk(data.get("risk", {})), known,
                     _form(data.get("tradeoffs", {})), analyses,
                     _sampling(data.get("sampling", {})), tables_fields(data.get("tables", {})))


def difference(saved: dict[str, Any], name: str, records: int, fingerprint: str) -> str | None:
    """How the open data set differs from the one the workspace was saved with (None: it is
    the same file)."""
    if saved.get("fingerprint") == fingerprint:
        return None
    return (f"it was saved with {saved.get('name', 'another data set')} "
            f"({saved.get('records', '?')} records); the open data set is {name} "
            f"({records:,} records), a different file with the columns it names")


def carried_notice(before: str, name: str, before_columns: Sequence[object],
                   columns: Sequence[object], kept: bool, why: Sequence[str]) -> Notice | None:
    """What the Data page says of the roles when a table (``name``, ``columns``) replaces
    another (``before``, ``before_columns``): kept (:func:`sdc_core.roles.carry_roles`), with
    the roles dropped and why; or, not kept though at least half of the columns before are
    there (another version of the same table), why not. Nothing for an unrelated table, whose
    roles are suggested as for any first upload. Markdown, names escaped."""
    if kept:
        text = (f"The roles of {md(before)} are kept: {md(name)} has the same columns, so it "
                "is read as the same table in another file.")
        if not why:
            return Notice("success", text)
        return Notice("warning", f"{text} Not kept: {md('; '.join(why))}.")
    shared = sum(c in set(columns) for c in before_columns)
    if not before_columns or shared < len(before_columns) / 2:
        return None
    return Notice("warning", f"The roles of {md(name)} are suggested afresh, not kept from "
                             f"{md(before)}: {md('; '.join(why))}.")
