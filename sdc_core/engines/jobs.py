"""The risk, apply and compare commands on an engine: aggregates from the engine, finished by
the same numpy code as the pandas reference (docs/engines.md).

- **risk**: the class table (one row per distinct key tuple, missing positions included, with
  its records and weight) is all the k-profile, F_k, individual risk and the wildcard reading of
  missing keys need (:func:`sdc_core.risk.profile.profile_from_sizes` with ``counts``); l-diversity
  reads the table of distinct (keys, sensitive value) rows, the attribute scan the (Z, S) counts.
- **apply**: each step in order on the engine's lazy table: batch steps through
  :mod:`sdc_core.engines.kernels`, rank swapping in the engine's own terms, microaggregation by
  the reference on its columns gathered in position order; written in position order.
- **compare**: IL1 from sums over batches of the two tables side by side, eigenvalue similarity
  from the engine's correlations; the linkage attack's exact-key part from the table of
  distinct (attacker's keys, released keys) pairs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sdc_core import rng
from sdc_core.classes import _wildcard_sizes, check_alpha, class_sizes
from sdc_core.data.columns import is_date, is_number, require_storage
from sdc_core.data.io import Kind, number_kind
from sdc_core.engines import kernels
from sdc_core.engines.base import PROTECTED_PREFIX, Engine
from sdc_core.engines.source import POS, open_source
from sdc_core.errors import SdcInputError
from sdc_core.keys import check_columns, encode_keys
from sdc_core.methods.banding import (
    Bands,
    auto_label,
    read_bands,
    recipe_labels,
    top_bottom_thresholds,
)
from sdc_core.methods.rank_swap import DRAW_ORDER, DRAW_PHASE, window_ranks
from sdc_core.methods.spec import EngineRun
from sdc_core.recipe import METHODS, Recipe, step_columns
from sdc_core.risk.attribute import AttributeScan, determination_share, identifier_like, scan
from sdc_core.risk.ldiversity import l_diversity, summarize
from sdc_core.risk.linkage import (
    attack_columns,
    attack_summary,
    check_roles,
    joint_codes,
    link,
    public_recodings,
)
from sdc_core.risk.profile import OTHER_READING, profile_from_sizes
from sdc_core.utility.eigen import eigen_similarity, tidy
from sdc_core.utility.il1 import (
    NumericParts,
    categorical_il1_parts,
    check_il1_missing,
    combine,
    numeric_il1_parts,
    released_columns,
)

NUMBER_KINDS = ("int", "float")


#: The storage of the column model (:mod:`sdc_core.data.columns`) of each kind an engine reports.
ENGINE_STORAGE = {"int": "integer", "float": "float", "date": "datetime", "bool": "boolean",
                  "text": "text"}


def _require(kinds: dict[str, str], cols: Sequence[str], accepted: tuple[str, ...],
             method: str) -> None:
    """The column model's one-line refusal (:func:`sdc_core.data.columns.require`) for an engine's
    columns."""
    for c in cols:
        require_storage(ENGINE_STORAGE[kinds[c]], c, accepted, method, kinds[c])


def _check(engine: Engine, t: Any, cols: Sequence[str], role: str) -> dict[str, str]:
    kinds = engine.columns(t)
    check_columns(pd.DataFrame(columns=list(kinds)), cols, role)
    return kinds


# ----------------------------------------------------------------------------------------- risk

def class_profile(table: pd.DataFrame, qi: Sequence[str], k: int, na: str, alpha: float,
                  weighted: bool) -> tuple[dict[str, Any], np.ndarray, np.ndarray, np.ndarray]:
    """The risk summary from a class table (``qi`` columns, ``__n`` records, ``__w`` weight),
    and f_k, F_k and the individual risk of each of its rows."""
    alpha = check_alpha(alpha)
    keys = encode_keys(table, qi, na)
    counts = table["__n"].to_numpy(dtype=np.float64)
    wsum = table["__w"].to_numpy(dtype=np.float64) if weighted else counts
    missing = np.logical_or.reduce([c < 0 for c in keys.codes])
    if missing.any():
        codes = np.column_stack(keys.codes)
        fk, Fk = _wildcard_sizes(codes, counts, wsum, alpha, int(counts.sum()))
    else:
        fk, Fk = counts.copy(), wsum.copy()
    measures = profile_from_sizes(fk, Fk, len(table), k, counts=counts)
    risk = measures.pop("risk")
    n_missing = table[list(qi)].isna().to_numpy().any(axis=1)
    measures["n_records_with_missing_keys"] = int(counts[n_missing].sum())
    return measures, fk, Fk, risk


def risk(engine: Engine, data: str | Path, qi: Sequence[str], weight: str | None = None,
         k: int = 5, na: str = "wildcard", alpha: float = 1.0,
         sensitive: Sequence[str] = (), records: Path | None = None,
         household: str | None = None) -> dict[str, Any]:
    """``risk --json``'s object (without SUDA2) computed on the engine; with ``records``, f_k,
    F_k and the risk of every record written there in position order (and, with
    ``household``, its household's risk)."""
    t = engine.scan(open_source(data))
    kinds = _check(engine, t, qi, "quasi-identifier")
    if weight is not None:
        check_columns(pd.DataFrame(columns=list(kinds)), [weight], "weight")
        _require(kinds, [weight], ("number",), "the weight")
    # in key order: the engines return classes in any order, and the float sums over them
    # would then differ in the last bits between runs
    table = engine.group_counts(t, qi, weight).sort_values(
        list(qi), na_position="last", kind="stable").reset_index(drop=True)
    if table.empty:
        raise SdcInputError("the table has no records")
    if weight is not None:
        _check_weights(engine, t, weight)
    measures, fk, Fk, risk_c = class_profile(table, qi, k, na, alpha, weight is not None)
    other = OTHER_READING[na]
    measures[f"min_k_{na}"] = measures["min_k"]
    measures[f"min_k_{other}"] = measures["min_k"] if not measures[
        "n_records_with_missing_keys"] else class_profile(table, qi, k, other, alpha,
                                                          weight is not None)[0]["min_k"]
    out: dict[str, Any] = {"qi": list(qi), "weight": weight, "na": na, "alpha": float(alpha)}
    for key, value in measures.items():
        out[key] = int(value) if float(value).is_integer() else float(value)
    out.update(l_diversity={}, attribute_disclosure=[], direct_identifiers=[], suda2=None)
    if sensitive:
        _check(engine, t, sensitive, "sensitive")
        ldiv = {}
        for s in sensitive:
            pairs = engine.group_counts(t, list(qi) + [s])
            classes = class_sizes(pairs, qi, na=na, alpha=alpha)
            ldiv[s] = summarize(s, l_diversity(pairs, classes, s).per_record,
                                pairs["__n"].to_numpy()).to_dict()
        found = attribute_scan(engine, t, list(sensitive), list(kinds))
        out.update(l_diversity=ldiv,
                   attribute_disclosure=[f.to_dict() for f in found.findings],
                   direct_identifiers=found.direct_identifiers)
    per_household = None
    if household is not None:
        check_columns(pd.DataFrame(columns=list(kinds)), [household], "household")
        figures, per_household = _household(engine, t, list(qi), household, table, risk_c)
        out.update(figures)
    if records is not None:
        per_class = table[list(qi)].copy()
        inner = ["__r_fk", "__r_wk", "__r_risk"]  # engines may ignore the case of names
        for name, values in zip(inner, (fk, Fk, risk_c)):
            per_class[name] = values
        joined = engine.attach(t, per_class, qi)
        names = ["fk", "Fk", "risk"]
        if per_household is not None and household is not None:
            joined = engine.attach(joined, per_household, [household])
            inner, names = inner + ["__r_hh"], names + ["household_risk"]
        engine.write(joined, records, inner, neutralize=False, names=names)
    return out


def _household(engine: Engine, t: Any, qi: list[str], household: str, table: pd.DataFrame,
               risk_c: np.ndarray) -> tuple[dict[str, Any], pd.DataFrame]:
    """The household figures of ``risk --household`` (docs/measures.md, "Household risk") from
    the engine's counts of (household, keys): each record's individual risk is its class's, a
    household's risk 1 − Π(1 − r_i) over its members, as the pandas path computes them; and
    the household risk per household id (to attach to the records)."""
    from sdc_core.households import household_codes
    from sdc_core.risk.household import combine_household_risk, composition_uniques, risk_json

    pairs = engine.group_counts(t, [household, *qi])
    classes = table[qi].assign(__class_risk=risk_c)
    merged = pairs.merge(classes, on=qi, how="left", sort=False)  # missing keys match missing
    # one row per record again (the engines' counts are of distinct tuples)
    people = merged.loc[merged.index.repeat(merged["__n"].to_numpy(dtype=np.int64))]
    people = people.reset_index(drop=True)
    code, n_households = household_codes(people, household, qi, records=False)  # counts:
    # their rows are no records of the file
    risk_h = combine_household_risk(people["__class_risk"].to_numpy(), code, n_households)
    total = float(risk_h[code].sum())
    uniques = composition_uniques(people[[household, *qi]], qi, household)
    first = np.unique(code, return_index=True)[1]
    per_household = pd.DataFrame({household: people[household].to_numpy()[first],
                                  "__r_hh": risk_h})
    return risk_json(household, n_households, total, len(people), uniques), per_household


def _check_weights(engine: Engine, t: Any, weight: str) -> None:
    def bad(batch: pd.DataFrame) -> tuple[int, int]:
        w = batch[weight].to_numpy(dtype=np.float64, na_value=np.nan)
        return int(np.isnan(w).sum()), int(((w <= 0) | ~np.isfinite(w)).sum())
    parts = engine.reduce_batches(t, [weight], bad)
    missing = sum(p[0] for p in parts)
    if missing:
        raise SdcInputError(f"weight column '{weight}' has {missing} missing values")
    if sum(p[1] for p in parts):
        raise SdcInputError(f"weight column '{weight}' must be positive and finite")


def attribute_scan(engine: Engine, t: Any, sensitive: list[str], columns: list[str],
                   near: float = 0.95, identifier_share: float = 0.95) -> AttributeScan:
    """:func:`sdc_core.risk.attribute.attribute_disclosure_scan` from the engine's counts (the
    numbers of present and distinct values of every column in one pass)."""
    figures = dict(zip(columns, engine.present_distinct(t, columns)))

    def is_identifier(c: str) -> bool:
        return identifier_like(*figures[c], identifier_share)

    def mode_share(s: str) -> float:
        counts = engine.group_counts(t, [s])
        present = counts[counts[s].notna()]["__n"]
        return float(present.max() / present.sum()) if len(present) else 1.0

    def share(z: str, s: str) -> tuple[float, int] | None:
        pairs = engine.group_counts(t, [z, s])
        return determination_share(pairs[z], pairs[s], pairs["__n"].to_numpy())
    return scan(sensitive, columns, is_identifier, mode_share, share, near)


# ---------------------------------------------------------------------------------------- apply

def apply(engine: Engine, data: str | Path, recipe: Recipe, output: Path,
          neutralize: bool = True) -> list[dict[str, Any]]:
    """Run the recipe on the engine and write the protected table to ``output``; one report
    per step (what it did, in the recipe's terms).

    Consecutive batch steps that do not read a column an earlier one of them writes run in one
    pass over the table (their column figures are the same before and after the others)."""
    if recipe.household is not None:
        raise SdcInputError("a recipe with a household runs on the pandas engine only: keeping "
                            "each household's columns consistent needs the whole table")
    for i, step in enumerate(recipe.steps):
        kernels.check_engine_step(i, step, engine.name)
    t = engine.scan(open_source(data), recipe.record_id)
    kinds = engine.columns(t)  # its bands written alike, as the pandas reference writes them
    steps = list(enumerate(recipe_labels(recipe.steps, lambda c: kinds.get(c) == "int")))
    while steps:
        group = [steps.pop(0)]
        if _alone(group[0][1]):
            t = run_steps(engine, t, group, recipe.seed)
            continue
        written = set(step_columns(group[0][1]))
        while steps and not _alone(steps[0][1]) \
                and not written & set(step_columns(steps[0][1])):
            written |= set(step_columns(steps[0][1]))
            group.append(steps.pop(0))
        t = run_steps(engine, t, group, recipe.seed)
    engine.write(t, output, list(engine.columns(t)), neutralize)
    return [{"step": i + 1, "method": step["method"],
             "column": step.get("column", ", ".join(step.get("columns", [])))}
            for i, step in enumerate(recipe.steps)]


def _alone(step: dict[str, Any]) -> bool:
    """Whether the step runs alone, not in a batch pass: its method is declared
    ``whole_table`` (a drop, and the methods whose result for a record depends on the other
    records' values and not only on figures of the whole column)."""
    return METHODS[step["method"]].engine is EngineRun.WHOLE_TABLE


def run_steps(engine: Engine, t: Any, steps: list[tuple[int, dict[str, Any]]],
              seed: int) -> Any:
    """Steps (index, step) on the engine's table: a step of a ``whole_table`` method alone
    (:data:`WHOLE_TABLE`), or batch steps none of which reads a column another writes, in one
    pass (see the module docstring)."""
    kinds = engine.columns(t)
    ahead = _noise_ahead(engine, t, steps, kinds)
    fns: list[Any] = []
    inputs: list[str] = []
    outputs: dict[str, str] = {}
    for index, step in steps:
        method = step["method"]
        where = f"step {index + 1} ({method})"
        cols = step_columns(step)
        unknown = [c for c in cols if c not in kinds]
        if unknown:
            raise SdcInputError(f"{where}: unknown column '{unknown[0]}'" if "column" in step
                                else f"{where}: unknown column(s) "
                                     f"{', '.join(map(str, unknown))}")
        try:
            if _alone(step):
                return WHOLE_TABLE[method](engine, t, step, kinds, seed, index)
            fn, out = _prepare(engine, t, step, kinds, seed, index, ahead)
            _probe(fn, engine, t, cols)
        except SdcInputError as err:
            message = str(err)
            raise SdcInputError(message if message.startswith("step ") else
                                f"{where}: {message}") from None
        fns.append(fn)
        inputs += [c for c in cols if c not in inputs]
        outputs |= out

    def all_steps(batch: pd.DataFrame) -> pd.DataFrame:
        return pd.concat([fn(batch) for fn in fns], axis=1)
    return engine.map_batches(t, all_steps, inputs, outputs)


def _noise_ahead(engine: Engine, t: Any, steps: list[tuple[int, dict[str, Any]]],
                 kinds: dict[str, str]) -> dict[int, Any]:
    """The figures of a pass's noise steps on numeric columns, when there are several,
    computed side by side: one pass over the table a round for all of them
    (:func:`sdc_core.engines.kernels.run_in_lockstep`) instead of four or five each. By step
    index, its moments or its input error, which :func:`_noise_moments` then gives in the
    step's turn; none if a pass failed (each step then computes its own, and fails in its
    turn)."""
    noise = [(i, step) for i, step in steps if step["method"] == "noise"
             and all(kinds.get(c) in NUMBER_KINDS for c in step_columns(step))]
    if len(noise) < 2:
        return {}
    cols = list(dict.fromkeys(c for _, step in noise for c in step_columns(step)))
    try:
        outcomes = kernels.run_in_lockstep(lambda fn: engine.reduce_batches(t, cols, fn),
                                           [kernels.noise_passes(step) for _, step in noise])
    except Exception:
        return {}
    return {i: outcome for (i, _), outcome in zip(noise, outcomes)}


def _prepare(engine: Engine, t: Any, step: dict[str, Any], kinds: dict[str, str], seed: int,
             index: int, ahead: dict[int, Any] | None = None) -> tuple[Any, dict[str, str]]:
    """A batch step's function and the kinds of the columns it writes, from the figures of
    the whole columns it reads, as its method's ``engine`` declares
    (:class:`~sdc_core.methods.spec.EngineRun`): the column's levels, or the figures
    :data:`WHOLE_COLUMN` computes for it (or ``ahead`` computed, :func:`_noise_ahead`)."""
    spec = METHODS[step["method"]]
    cols = step_columns(step)
    extra: dict[str, Any] = {}
    if spec.engine is EngineRun.LEVELS:
        extra = {"levels": kernels.levels_from_counts(engine.group_counts(t, cols), cols[0])}
    elif spec.engine is EngineRun.WHOLE_COLUMN:
        computed = {"ahead": ahead[index]} if ahead and index in ahead else {}
        step, extra = WHOLE_COLUMN[spec.name](engine, t, step, kinds, **computed)
    return kernels.step_function(step, seed, index, extra), \
        kernels.output_kinds(step, kinds, extra)


#: A step with the figures of the whole column it needs: the step (settings resolved) and the
#: method's extra arguments.
Figures = tuple[dict[str, Any], dict[str, Any]]


def _band_labels(engine: Engine, t: Any, step: dict[str, Any], kinds: dict[str, str]
                 ) -> Figures:
    """A band step labelled ``auto`` with its labels resolved from the whole column's kind,
    so that every batch writes the same labels."""
    if step.get("label", "auto") != "auto":
        return step, {}
    bands = Bands.of(step.get("width"), step.get("origin", 0.0), step.get("breaks"))
    return step | {"label": auto_label(kinds[step["column"]] == "int", bands)}, {}


def _thresholds(engine: Engine, t: Any, step: dict[str, Any], kinds: dict[str, str]
                ) -> Figures:
    """A top/bottom coding step of a numeric column with percentile thresholds resolved to
    numbers, from two order statistics of the whole column
    (:func:`sdc_core.methods.banding.percentile`); another column's step is left for the
    method to refuse."""
    col = step["column"]
    pct = {k: step.get(k) for k in ("top", "bottom", "top_percentile", "bottom_percentile")}
    if kinds[col] not in NUMBER_KINDS or (pct["top_percentile"] is None
                                          and pct["bottom_percentile"] is None):
        return step, {}
    m = engine.present_count(t, col)
    top, bottom = top_bottom_thresholds(**pct, m=m, order_statistics=lambda ranks:
                                        engine.order_statistics(t, col, ranks))
    resolved = {k: v for k, v in step.items() if k not in pct}
    return resolved | {k: v for k, v in (("top", top), ("bottom", bottom))
                       if v is not None}, {}


def _noise_moments(engine: Engine, t: Any, step: dict[str, Any], kinds: dict[str, str],
                   ahead: Any = None) -> Figures:
    """A noise step with its columns' moments (:func:`sdc_core.engines.kernels.noise_moments`),
    or those computed ``ahead`` (:func:`_noise_ahead`: the moments, or the input error)."""
    cols = step_columns(step)
    _require(kinds, cols, ("number",), "noise")
    if ahead is None:
        return step, kernels.noise_moments(lambda fn: engine.reduce_batches(t, cols, fn), step)
    if isinstance(ahead, SdcInputError):
        raise ahead
    return step, ahead


#: The figures of the whole column each ``whole_column`` method needs, computed on the engine.
WHOLE_COLUMN: dict[str, Callable[..., Figures]] = {
    "band": _band_labels, "top_bottom_code": _thresholds, "noise": _noise_moments}


def _probe(fn: Any, engine: Engine, t: Any, cols: list[str]) -> None:
    """Run the step on the first rows once, so that a bad setting is an error with the step's
    name here rather than an exception inside the engine's workers."""
    engine.reduce_batches(t, cols, lambda batch: (fn(batch.head(64)), None)[1], first_only=True)


def _drop(engine: Engine, t: Any, step: dict[str, Any], kinds: dict[str, str], seed: int,
          index: int) -> Any:
    return engine.drop(t, step_columns(step))


def _rank_swap(engine: Engine, t: Any, step: dict[str, Any], kinds: dict[str, str], seed: int,
               index: int) -> Any:
    col = step["column"]
    p = float(step.get("window_percent", 2.5))
    if not 0 < p <= 100:
        raise SdcInputError(f"window_percent must lie in (0, 100], not {p!r}")
    _require(kinds, [col], ("number", "date"), "rank swapping")
    m = engine.present_count(t, col)
    if m < 2:
        return t
    w = window_ranks(m, p)
    phase = rng.key(seed, index, DRAW_PHASE) % (w + 1)
    return engine.rank_swap(t, col, w, phase, rng.key(seed, index, DRAW_ORDER))


def _microaggregate(engine: Engine, t: Any, step: dict[str, Any], kinds: dict[str, str],
                    seed: int, index: int) -> Any:
    """Microaggregation: its groups come from every record's values (MDAV's distances, the
    univariate methods' ranks), so the step's columns are gathered in position order (8 bytes
    per value), the reference runs on them as on the pandas engine, and each record's group
    mean goes back to it by position."""
    cols = step_columns(step)
    _require(kinds, cols, ("number",), "microaggregation")
    parts = engine.reduce_batches(t, [POS] + cols, lambda batch: batch[[POS] + cols])
    whole = pd.concat(parts, ignore_index=True).sort_values(POS, kind="stable")
    args = {k: v for k, v in step.items() if k not in ("method", "columns")}
    means = METHODS["microaggregation"].run(whole.reset_index(drop=True), cols,
                                            **args).values[cols].to_numpy(dtype=np.float64)
    positions = whole[POS].to_numpy(dtype=np.int64)

    def by_position(batch: pd.DataFrame) -> pd.DataFrame:
        row = np.searchsorted(positions, batch[POS].to_numpy(dtype=np.int64))
        return pd.DataFrame(means[row], columns=cols, index=batch.index)
    return engine.map_batches(t, by_position, [POS] + cols, {c: "float" for c in cols})


#: How each ``whole_table`` method runs on the engine's whole table.
WHOLE_TABLE = {"drop": _drop, "rank_swap": _rank_swap, "microaggregation": _microaggregate}


# -------------------------------------------------------------------------------------- compare

def band_numbers(engine: Engine, t: Any, original: dict[str, str]) -> Any:
    """``t`` (a release) with every text column whose ``original`` kind is numbers or dates
    and whose distinct values are all band labels read back as the band midpoints, as the
    pandas measures read it (:func:`sdc_core.methods.banding.read_bands`); the decision is
    made on the whole column's distinct values, so every batch is read alike."""
    kinds = engine.columns(t)
    outputs = {}
    for c, kind in kinds.items():
        if kind != "text" or original.get(c) not in (*NUMBER_KINDS, "date"):
            continue
        values = engine.group_counts(t, [c])[c].dropna()
        if len(values) and _measurable(read_bands(values.astype(str))):
            outputs[c] = "date" if original[c] == "date" else "float"
    if not outputs:
        return t

    def midpoints(batch: pd.DataFrame) -> pd.DataFrame:
        out = {}
        for c, kind in outputs.items():
            v = read_bands(batch[c])
            out[c] = v if _measurable(v) else pd.Series(
                pd.NaT if kind == "date" else np.nan, index=batch.index,
                dtype="datetime64[ns]" if kind == "date" else np.float64)
        return pd.DataFrame(out, index=batch.index)
    return engine.map_batches(t, midpoints, list(outputs), outputs)


def _measurable(s: pd.Series) -> bool:
    """Whether ``s`` holds numbers or dates (band labels read back)."""
    return is_number(s) or is_date(s)


def compare(engine: Engine, original: str | Path, protected: str | Path,
            numeric: Sequence[str] | None = None, missing: str = "max",
            not_released: Sequence[str] = ()) -> dict[str, Any]:
    """``compare --json``'s IL1 and eigenvalue figures computed on the engine (rows matched by
    position): IL1 over the released columns C, the original's less ``not_released``, a column
    of C missing from ``protected`` counting as dropped (:mod:`sdc_core.utility.il1`)."""
    check_il1_missing(missing)
    a, b = engine.scan(open_source(original)), engine.scan(open_source(protected))
    ka, kb = engine.columns(a), engine.columns(b)
    if list(kb) != [c for c in ka if c in kb]:
        raise SdcInputError("the tables have different columns (the protected table may only "
                            "lack some of the original's, the others in their order)")
    b = band_numbers(engine, b, ka)
    kb = engine.columns(b)
    na_, nb_ = engine.count(a), engine.count(b)
    if na_ != nb_:
        raise SdcInputError(f"the tables differ in length: {na_} and {nb_} rows (rows are "
                            "compared by position)")
    if numeric is None:
        numeric = default_numeric(engine, a, ka)
    unknown = sorted(set(numeric) - set(ka))
    if unknown:
        raise SdcInputError(f"unknown numeric column(s): {', '.join(map(str, unknown))}")
    numeric = [c for c in numeric if c in kb]  # a dropped column has no correlations left
    bad = [c for c in numeric if kb[c] not in NUMBER_KINDS]
    if bad:
        raise SdcInputError(f"column '{bad[0]}' is no longer numeric after protection; "
                            "compare it as categorical")
    released = released_columns(list(ka), not_released)
    dropped = [c for c in released if c not in kb]
    both = engine.align(a, b)
    cols = [c for c in released if c in kb]
    num = set(numeric)
    mixed = {c: (ka[c] in NUMBER_KINDS) != (kb[c] in NUMBER_KINDS) for c in cols}

    def parts(batch: pd.DataFrame) -> dict[str, Any]:
        out = {}
        for c in cols:
            x, y = batch[c], batch[PROTECTED_PREFIX + c]
            out[c] = numeric_il1_parts(x, y, missing) if c in num \
                else categorical_il1_parts(x, y, mixed[c])
        return out
    inputs = cols + [PROTECTED_PREFIX + c for c in cols]
    results = engine.reduce_batches(both, inputs, parts)
    per_column: dict[str, float] = {}
    changed: list[str] = []
    for c in cols:
        if c in num:
            total = NumericParts(0.0, 0, 0, False, np.nan, np.nan)
            for r in results:
                total = total.plus(r[c])
            value, is_changed = total.finish(), total.changed
        else:
            differs = sum(r[c][0] for r in results)
            present = sum(r[c][1] for r in results)
            value = differs / present if present else 0.0
            is_changed = any(r[c][2] for r in results)
        per_column[c] = value
        if is_changed:
            changed.append(c)
    result = combine(per_column, num, changed, released, dropped, missing)
    eig = eigen_similarity(tidy(engine.corr(a, list(numeric))),
                           tidy(engine.corr(b, list(numeric))))
    return {**result.summary(), "il1_missing": missing, "eigenvalue_similarity_percent": eig,
            "numeric": list(numeric), "released_columns": result.released,
            "dropped_columns": result.dropped, "changed_columns": result.changed,
            "per_column": result.per_column}


def linkage(engine: Engine, original: str | Path, protected: str | Path, qi: Sequence[str],
            recipe: Recipe | None = None, known: Sequence[str] = (),
            records: Path | None = None) -> dict[str, Any]:
    """The linkage attack (docs/measures.md) on the engine, exact-key part: the table of distinct
    (y = D(x), z) pairs on the exact columns, with their records, is all that
    :func:`sdc_core.risk.linkage.link` needs (each pair's candidates are the records of the
    released keys it fits), for every attacker; the headline is the one that re-identifies
    most. With ``records``, the headline's p_link and number of candidates of every record
    written there in position order."""
    a, b = engine.scan(open_source(original)), engine.scan(open_source(protected))
    ka, kb = engine.columns(a), engine.columns(b)
    n, nb = engine.count(a), engine.count(b)
    if n != nb:
        raise SdcInputError(f"the protected table has {nb} records, the original {n}: they "
                            "must be aligned row by row")
    if n == 0:
        raise SdcInputError("the table has no records")
    qi, known = check_roles(pd.DataFrame(columns=list(ka)), qi, known)
    exact, distance = attack_columns(qi, known, list(kb), recipe)
    if distance:
        raise SdcInputError(
            f"the linkage attack compares {', '.join(map(str, distance))} by distance (a "
            "perturbed number or a known column); nearest-neighbour matching runs on the "
            "pandas engine only")
    if recipe is not None:  # its bands written as the release writes them
        recipe = replace(recipe, steps=recipe_labels(recipe.steps,
                                                     lambda c: ka.get(c) == "int"))
    for i, step in public_recodings(recipe, exact):  # none without a recipe
        assert recipe is not None
        kernels.check_engine_step(i, step, engine.name)
        a = run_steps(engine, a, [(i, step)], recipe.seed)
    released = [PROTECTED_PREFIX + c for c in exact]
    both = engine.align(a, b)
    pairs = engine.group_counts(both, exact + released)
    z = pairs[released].set_axis(exact, axis=1)
    y_codes, z_codes = joint_codes(pairs[exact], z, exact)
    none = np.empty((len(pairs), 0))
    weight = pairs["__n"].to_numpy(dtype=np.int64)
    attacks = link(y_codes, z_codes, none, none, weight)
    out = attack_summary(attacks, exact, [], weight)
    if records is not None:
        top = attacks[out["linkage_attacker"]]
        per_pair = pairs[exact + released].copy()
        per_pair["__r_p"], per_pair["__r_c"] = top.p_link, top.candidates
        engine.write(engine.attach(both, per_pair, exact + released), records,
                     ["__r_p", "__r_c"], neutralize=False, names=["p_link", "candidates"])
    return out


def default_numeric(engine: Engine, t: Any, kinds: dict[str, str]) -> list[str]:
    """The columns the pandas reference reads as numeric (:func:`sdc_core.data.io.number_kind`)."""
    numbers = [c for c, kind in kinds.items() if kind in NUMBER_KINDS]
    numeric = []
    for c, figures in zip(numbers, engine.present_distinct(t, numbers)):
        def whole(c: str = c, kind: str = kinds[c]) -> bool:
            return kind == "int" or _whole(engine, t, c)
        if number_kind(*figures, whole) is Kind.NUMERIC:
            numeric.append(c)
    return numeric


def _whole(engine: Engine, t: Any, col: str) -> bool:
    def whole(batch: pd.DataFrame) -> bool:
        x = batch[col].to_numpy(dtype=np.float64, na_value=np.nan)
        x = x[~np.isnan(x)]
        return bool(np.all(np.mod(x, 1) == 0))
    return all(engine.reduce_batches(t, [col], whole))

