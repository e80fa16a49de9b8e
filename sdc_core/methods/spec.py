"""One declaration per protection method, beside its code.

Each method module ends with a :class:`Method`: its parameters (name, type, range, default,
step, help text), the columns it takes, whether it draws random numbers and what its output tells
an attacker (:class:`Release`, read by the linkage attack of docs/measures.md). Recipe validation
and ``apply``, sweeps, the Protect page's controls, the Trade-offs settings and the linkage attack
all read these declarations (:func:`sdc_core.methods.registry`), so a new method touches only
its own module and its tests.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import pandas as pd


class Release(Enum):
    """What a method's output tells an attacker who knows the recipe (docs/methods.md,
    "What each method tells an attacker")."""

    #: deterministic and value by value (banding, top/bottom coding, recoding): the attacker
    #: applies it to the true values and compares exactly
    RECODING = "public recoding"
    #: categories moved at random (PRAM, relabeling, randomized response): compared exactly
    PERTURBATION = "perturbation"
    #: numbers moved (rank swapping, noise, microaggregation): matched by nearest distance
    NUMERIC_PERTURBATION = "numeric perturbation"
    #: values blanked (local suppression): a released blank matches anything
    SUPPRESSION = "suppression"
    #: columns left out of the release
    DROP = "drop"
    #: a synthetic table: no record is the release of an original record, so no attack
    #: matches record by record (docs/methods.md, "Synthesis (sequential CART)")
    SYNTHESIS = "synthesis"


class EngineRun(Enum):
    """How the out-of-core engines (DuckDB, Spark) run a method's step (docs/engines.md,
    "Which operations run where")."""

    #: value by value, one batch of rows at a time
    BATCH = "batch"
    #: batch by batch, given the whole column's sorted categories and their counts
    LEVELS = "levels"
    #: batch by batch, given figures of the whole column (the engine computes them first)
    WHOLE_COLUMN = "whole_column"
    #: alone, on the whole table: a record's result depends on the other records' values
    WHOLE_TABLE = "whole_table"
    #: not at all: the engines refuse the step with the method's ``engine_reason``
    PANDAS_ONLY = "pandas_only"


#: Parameter types: a real number, a whole number, text, one of ``choices``, true/false,
#: a list of column names, a list of values, an object (mapping), a merge of the step's
#: column's levels ``{label: [level, …]}`` (the Protect page offers a merge per column as an
#: alternative to ``main``: a step made there holds one or the other), and a list of lists of
#: column names (record swapping's donor profiles).
PARAM_TYPES = ("number", "whole", "text", "choice", "bool", "columns", "list", "object",
               "merge", "column_lists")

#: Which columns a method takes: the numeric quasi-identifiers that are not category codes,
#: the categorical columns, any numeric column, or the quasi-identifiers themselves.
COLUMN_KINDS = ("numeric_keys", "categorical", "numeric", "keys")


@dataclass(frozen=True)
class Param:
    """One parameter of a method step.

    ``low``/``high``/``step`` bound its control (``high`` may be a function of the column, e.g.
    half its range; a recipe's value past ``high`` widens the control); ``most`` is the largest
    value the method takes at all (a probability 1, a percentage 100; None: no bound but what a
    browser's number holds exactly, ±(2**53 − 1)); ``control`` says whether the Protect page
    offers it (the others are for recipes), ``more`` whether it shows it under the method's
    "More settings" rather than beside ``main``; ``required`` whether a recipe step must give
    it. ``needs`` names a true/false parameter this one applies with only (PRAM's retention θ,
    with its invariant form); ``unused_with`` names parameters whose setting, away from their
    defaults, makes this one not apply (PRAM's p beside its invariant and matrix forms): the
    Protect page disables such a control and its step leaves the parameter out. ``sweep``:
    whether the Trade-offs page offers to sweep it besides the method's ``main`` (a band's
    origin, top and bottom codes): its values field starts empty. ``household``: whether it
    applies only with a household id (the recipe's, the page's): a recipe step that sets it
    without one is refused, the Protect page disables its control, and the recipe reads it
    rather than the method (:data:`PER_HOUSEHOLD`).
    """

    name: str
    type: str
    default: Any = None
    low: float | None = None
    high: float | Callable[[pd.Series], float] | None = None
    step: float | None = None
    most: float | None = None
    help: str = ""
    label: str = ""
    required: bool = False
    control: bool = True
    more: bool = False
    choices: tuple[Any, ...] = ()
    needs: str | None = None
    unused_with: tuple[str, ...] = ()
    sweep: bool = False
    household: bool = False

    def __post_init__(self) -> None:
        if self.type not in PARAM_TYPES:
            raise ValueError(f"parameter {self.name}: type must be one of {PARAM_TYPES}")


#: The parameter of a method on categories that draws once per household
#: (docs/methods.md, "One draw per household").
PER_HOUSEHOLD = "per_household"


def per_household_param() -> Param:
    """The parameter :data:`PER_HOUSEHOLD` of PRAM, random relabeling and randomized response:
    with a household id, the step runs on each household's first record and every record of
    the household gets its new value (docs/methods.md, "One draw per household")."""
    return Param(PER_HOUSEHOLD, "bool", False, more=True, household=True,
                 label="One draw per household",
                 help="Needs a household id. Each household's first record is perturbed once "
                      "and every record of the household gets its new value, so the household "
                      "id cannot undo the perturbation by a majority of the household's "
                      "records. For an attribute constant, or nearly so, within a household: "
                      "a record whose value differs from its household's first record is "
                      "released from the first record's value.")


@dataclass(frozen=True)
class Method:
    """A protection method as recipes, sweeps and the dashboard see it.

    - ``run``: the pure function. One-column methods (``target="column"``) take the column as a
      Series, several-column methods (``target="columns"``) the table and the column list;
      whole-table methods (``target="table"``: synthesis) the table and all its columns, their
      step naming no column, and their result replaces the table, rows and index included;
      random methods also take ``seed``, ``step`` and ``rid``.
    - ``main``: the parameter a slider and a sweep move; ``off``: its value that switches the
      method off (on the Protect page and in a combined sweep); ``stronger``: which way of
      ``main`` protects more, ``"higher"`` or ``"lower"`` values (the order a pruned search
      assumes risk falls and loss grows in).
    - ``switches``: parameters that switch the method on without ``main`` (PRAM's invariant
      and matrix forms): a step may hold one of them instead of ``main``.
    - ``per_column``: the Protect page offers one setting of every control per column
      (banding).
    - ``columns``: which columns it takes (:data:`COLUMN_KINDS`); ``"keys"`` means the
      quasi-identifiers, implied rather than chosen.
    - ``describe``: a one-line account of a step's report for the Protect page.
    - ``order``: its place on the Protect page and in a recipe made there (methods apply in
      this order); ``ui=False`` keeps a method to recipes and the command line.
    - ``engine`` (no default: every method says): how the DuckDB and Spark engines run it
      (:class:`EngineRun`): ``batch`` (value by value, one batch at a time), ``levels`` (needs
      the whole column's categories and counts first: PRAM, relabeling, recoding, randomized
      response; its ``run`` takes them as ``levels``), ``whole_column`` (needs other figures
      of the whole column, each computed by the engine module
      :mod:`sdc_core.engines.jobs`: banding's column kind, which chooses its ``auto`` labels,
      top/bottom coding's percentile thresholds, noise's moments), ``whole_table`` (runs
      alone on the whole table: dropping, rank swapping, microaggregation) or
      ``pandas_only``, refused by the engines with ``engine_reason`` (local suppression,
      record swapping). ``engine_reason`` is set for ``pandas_only`` and only then.
    - ``extra``: what few methods need besides: ``implied_columns`` (the parameters whose
      columns a step changes: record swapping), ``household`` (a method on households),
      ``may_be_empty`` (list parameters that may be ``[]``), ``check`` (a function of the
      step's parameters that raises :class:`~sdc_core.errors.SdcInputError` on values out of
      range, run when a recipe is read, before any data: synthesis).
    - ``keeps_rows``: whether its release keeps the original's rows in order, row i of the
      release being the release of row i (a method that blanks values or drops columns
      keeps rows; one that removed, added or reordered records would not).
    """

    name: str
    label: str
    summary: str
    run: Callable[..., Any]
    release: Release
    target: str
    params: tuple[Param, ...]
    order: int
    engine: EngineRun
    random: bool = False
    main: str | None = None
    off: Any = 0
    stronger: str = "higher"
    switches: tuple[str, ...] = ()
    per_column: bool = False
    columns: str = "numeric"
    default_columns: str | None = None
    sweep_values: str = ""
    describe: Callable[[dict[str, Any]], str] | None = None
    ui: bool = True
    engine_reason: str = ""
    keeps_rows: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.target not in ("column", "columns", "table"):
            raise ValueError(f"method {self.name}: target must be column, columns or table")
        if self.stronger not in ("higher", "lower"):
            raise ValueError(f"method {self.name}: stronger must be higher or lower")
        if self.columns not in COLUMN_KINDS:
            raise ValueError(f"method {self.name}: columns must be one of {COLUMN_KINDS}")
        if not isinstance(self.engine, EngineRun):
            raise ValueError(f"method {self.name}: engine must be an EngineRun")
        if (self.engine is EngineRun.PANDAS_ONLY) != bool(self.engine_reason):
            raise ValueError(f"method {self.name}: a pandas_only engine, and only it, gives "
                             "its engine_reason")

    @property
    def required(self) -> frozenset[str]:
        """The keys a recipe step must have (besides ``method``): its ``column`` or
        ``columns`` (a whole-table step names none) and its required parameters."""
        target = set() if self.target == "table" else {self.target}
        return frozenset(target | {p.name for p in self.params if p.required})

    @property
    def optional(self) -> frozenset[str]:
        return frozenset(p.name for p in self.params if not p.required)

    @property
    def controls(self) -> tuple[Param, ...]:
        """The parameters the Protect page offers beside its columns, ``main`` first (a merge
        has its own control per column: :attr:`merge`)."""
        return tuple(sorted((p for p in self.params if p.control and p.type != "merge"),
                            key=lambda p: p.name != self.main))

    @property
    def merge(self) -> Param | None:
        """The merge parameter the Protect page offers per column, if the method has one."""
        return next((p for p in self.params if p.type == "merge" and p.control), None)

    def param(self, name: str) -> Param:
        return next(p for p in self.params if p.name == name)

    def applies(self, name: str, values: Mapping[str, Any]) -> bool:
        """Whether parameter ``name`` applies with these parameter ``values`` (a parameter
        left out holds its default): its ``needs`` is set and none of its ``unused_with``
        is away from its default."""
        p = self.param(name)

        def held(other: str) -> Any:
            return values.get(other, self.param(other).default)
        return (p.needs is None or bool(held(p.needs))) and all(
            held(other) in (None, self.param(other).default) for other in p.unused_with)

    @property
    def household_params(self) -> tuple[str, ...]:
        """The parameters that apply only with a household id (:attr:`Param.household`)."""
        return tuple(p.name for p in self.params if p.household)

    def governs(self, name: str) -> bool:
        """Whether parameter ``name`` decides whether another one applies."""
        return any(name == p.needs or name in p.unused_with for p in self.params)
