"""The invariants every (table, roles, recipe) must satisfy, shared by the conformance harness
(``tests/test_conformance.py``, random tables) and the corpus of outside data
(``tests/test_corpus.py``, ``bench/bench_corpus.py``).

:func:`check_release` runs one release through every path that reports on it and asserts:

- only :class:`SdcInputError` is raised (then nothing else is checked);
- one composer: the release's assessment (:func:`sdc_core.assess.assess`) is the reference, and
  the Protect page's figures (:func:`ui.logic.workbench.evaluate`), ``compare`` and ``risk`` on
  the written file, the report's figures and the sweep row all equal it, to 1e-9: both risk
  readings, IL1 per column and the headline IL1_release;
- the linkage attack equals the O(n²) reference of docs/measures.md (:func:`reference_linkage`),
  attacker by attacker, and its headline is the attacker that re-identifies most;
- a step that changes no value leaves IL1 at 0 and both risk readings as they were;
- local suppression's promise: right after its step, every class on its keys has f_k ≥ k with
  blanks as wildcards;
- ``apply`` twice gives the same bytes; the recipe's round trip (to JSON and loaded back)
  changes nothing.

The command line reads one written file a release: CSV or Parquet, chosen from the recipe's
text (:func:`written_format`), so that the examples of a run take both about equally (``apply``
writing every format the same way twice is ``tests/test_cli.py``'s).

CSV keeps every value but three kinds of text, which the column model documents
(``docs/columns.md``): text that CSV readers take for a missing value ("", "NA", …), text
that begins with a formula character and text holding a direction control (U+202E), which the
export neutralises. :data:`CSV_SAFE` says
whether a table avoids them; when it does not, the written file is Parquet.

The Hypothesis strategies at the end draw the harness's cases: :func:`tables` (every kind of
column of :data:`KINDS`, with missing values) and :func:`releases` (a table, its roles and a
recipe of one to four steps, each drawn by :func:`draw_step`); :data:`PAIRS` is every method
with every kind of column it takes. ``METHODS`` is the registry (``sdc_core.recipe``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import io
import json
import math
import tempfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from hypothesis import strategies as st

from sdc_core import cli
from sdc_core.classes import class_sizes
from sdc_core.data.columns import canonical, compare_keys, restore, storage, storage_takes, takes
from sdc_core.data.io import BIDI_CONTROLS, FORMULA_START, read_table, table_bytes
from sdc_core.errors import SdcInputError
from sdc_core.methods import Release
from sdc_core.methods.banding import read_bands
from sdc_core.recipe import METHODS, Recipe, apply_recipe, load_recipe, parse_recipe, run_step
from sdc_core.risk import risk_profile
from sdc_core.risk.linkage import resolved_recoding
from sdc_core.sweep.run import SweepContext
from ui.logic import report
from ui.logic.workbench import LINKAGE_KEYS, RISK_KEYS, evaluate, recipe_json

TOL = 1e-9
#: Text that pandas' CSV reader reads as a missing value.
CSV_MISSING = {"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
               "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"}


def csv_safe(df: pd.DataFrame) -> bool:
    """Whether every text value of ``df`` survives a CSV file unchanged (module docstring)."""
    for c in df.columns:
        for v in pd.unique(df[c].dropna().astype(object)):
            if isinstance(v, str) and (v in CSV_MISSING or v.startswith(FORMULA_START)
                                       or v != v.strip() or "\n" in v or "\r" in v
                                       or any(c in v for c in BIDI_CONTROLS)):
                return False
    return True


def close(a: float, b: float, what: str) -> None:
    assert (a is None and b is None) or math.isclose(a, b, rel_tol=TOL, abs_tol=TOL), \
        f"{what}: {a!r} != {b!r}"


def _missing(v: Any) -> bool:
    return v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and math.isnan(v))


def _nearest(js: list[int], d: dict[int, float]) -> list[int]:
    d_min = min((d[j] for j in js), default=0.0)
    return [j for j in js if abs(d[j] - d_min) <= 1e-9 * max(1.0, d_min)]


def _most_agreeing(js: list[int], agree: dict[int, int]) -> list[int]:
    top = max((agree[j] for j in js), default=0)
    return [j for j in js if agree[j] == top]


def attackers_choose(cand: list[int], d: dict[int, float],
                     agree: dict[int, int]) -> dict[str, list[int]]:
    """Each attacker's best candidates M_i among the candidates ``cand``, from their distances
    ``d`` and agreements ``agree`` (docs/measures.md, "The attackers"): nearest
    (``any_match``); most agreements then nearest (``exact_first``; when a candidate lies at
    distance 0, contradicting none of the person's values, ``nearest_first``'s choice);
    nearest then most agreements (``nearest_first``)."""
    zero = bool(cand) and min(d[j] for j in cand) == 0.0
    nearest_first = _most_agreeing(_nearest(cand, d), agree)
    return {"any_match": _nearest(cand, d),
            "exact_first": nearest_first if zero
            else _nearest(_most_agreeing(cand, agree), d),
            "nearest_first": nearest_first}


def reference_linkage(original: pd.DataFrame, protected: pd.DataFrame, qi: Sequence[str],
                      recipe: Recipe, known: Sequence[str],
                      reports: Sequence[dict[str, Any]]) -> dict[str, np.ndarray]:
    """Every attacker's p_i by docs/measures.md, record against record: the
    attacker applies the recipe's public recodings (as each method declares, as the release
    resolved them) to the true values, compares the exact columns value by value (a blank on
    either side matches), counts the agreements (the columns, exact and distance, where both
    sides are present and equal) and ranks the candidates: nearest on the distance columns
    (``any_match``), most agreements then nearest (``exact_first``; nearest then most agreements
    when the nearest candidate is at distance 0), nearest then most agreements
    (``nearest_first``)."""
    perturbed = {c for s in recipe.steps
                 if METHODS[s["method"]].release is Release.NUMERIC_PERTURBATION
                 for c in ([s["column"]] if "column" in s else s["columns"])}
    exact = [c for c in qi if c in protected.columns and c not in perturbed]
    dist = [c for c in qi if c in protected.columns and c in perturbed] + [
        c for c in known if c in protected.columns]
    y = original.copy()
    for i, s in enumerate(recipe.steps):
        if METHODS[s["method"]].release is Release.RECODING and s["column"] in exact + dist:
            s = resolved_recoding(s, reports[i])
            if s is not None:
                c = s["column"]
                y[c] = restore(original[c], run_step(y, s, recipe.seed, i, None).values[c])
    # band labels the attacker made on a column the release then perturbed: their midpoints
    y = y.assign(**{c: read_bands(y[c], original[c]) for c in dist})

    def measurable(s: pd.Series) -> bool:
        return (pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)) \
            or pd.api.types.is_datetime64_any_dtype(s)
    exact += [c for c in dist if not (measurable(y[c]) and measurable(protected[c]))]
    dist = [c for c in dist if c not in exact]

    def numbers(frame: pd.DataFrame, c: str) -> list[float]:
        s = frame[c]
        if pd.api.types.is_datetime64_any_dtype(s):
            return [math.nan if _missing(v) else (v - pd.Timestamp(0, tz=v.tz)).total_seconds()
                    / 86400 for v in s]
        return [math.nan if _missing(v) else float(v) for v in s.astype(object)]

    sd = {}
    for c in dist:
        v = np.array([a for a in numbers(original, c) if not math.isnan(a)])
        s = float(np.std(v, ddof=1)) if len(v) > 1 else 0.0
        sd[c] = s if s > 0 and math.isfinite(s) else 1.0
    yv = {c: y[c].astype(object).tolist() for c in exact}
    zv = {c: protected[c].astype(object).tolist() for c in exact}
    yn = {c: numbers(y, c) for c in dist}
    zn = {c: numbers(protected, c) for c in dist}
    n = len(original)

    p = {a: np.zeros(n) for a in ("any_match", "exact_first", "nearest_first")}
    for i in range(n):
        cand = [j for j in range(n) if all(_missing(yv[c][i]) or _missing(zv[c][j])
                                           or canonical(yv[c][i]) == canonical(zv[c][j])
                                           for c in exact)]
        agree = {j: sum(not _missing(yv[c][i]) and not _missing(zv[c][j])
                        and canonical(yv[c][i]) == canonical(zv[c][j]) for c in exact)
                 + sum(yn[c][i] == zn[c][j] for c in dist)  # NaN equals nothing
                 for j in cand}
        d = {j: math.sqrt(sum(((yn[c][i] - zn[c][j]) / sd[c]) ** 2 for c in dist
                              if not (math.isnan(yn[c][i]) or math.isnan(zn[c][j]))))
             for j in cand}
        for a, m in attackers_choose(cand, d, agree).items():
            p[a][i] = 1.0 / len(m) if i in m else 0.0
    return p


def _cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(args)
    return code, out.getvalue(), err.getvalue()


def _cli_json(args: list[str]) -> dict[str, Any]:
    code, out, err = _cli(args)
    assert code == 0, f"{' '.join(args[:1])} exited {code}: {err.strip()}"
    return json.loads(out)


#: The information-loss figures every path reports
IL1_KEYS = ("IL1_release", "IL1_numeric", "IL1_categorical", "IL1_overall",
            "eigenvalue_similarity_percent")


def written_format(recipe_text: str, csv_holds_it: bool) -> str:
    """The file a release is written to for the command line (module docstring): CSV for about
    half the recipes (by a hash of their text: the same recipe, the same file), Parquet for the
    others and for every table CSV cannot hold (``csv_holds_it`` False)."""
    return ".csv" if csv_holds_it and zlib.crc32(recipe_text.encode()) % 2 else ".parquet"


def same_values(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    """Whether two aligned tables hold the same values, compared by what they are."""
    if list(a.columns) != list(b.columns):
        return False
    for c in a.columns:
        x, y = compare_keys(a[c].reset_index(drop=True), b[c].reset_index(drop=True))
        if not all((p is None and q is None) or (p is not None and q is not None and p == q)
                   for p, q in zip(x, y)):
            return False
    return True


def check_release(df: pd.DataFrame, qi: Sequence[str], numeric: Sequence[str],
                  recipe: dict[str, Any], weight: str | None = None,
                  known: Sequence[str] = (), k: int = 5) -> str:
    """Run the invariants of the module docstring; returns "refused: …" (an
    :class:`SdcInputError`, the one exception allowed) or "ok"."""
    qi, numeric, known = list(qi), list(numeric), list(known)
    try:
        parsed = parse_recipe(recipe)
        applied = apply_recipe(parsed, df)
        text = recipe_json(parsed.steps, parsed.seed)
        page = evaluate(df, text, qi, weight, k, "wildcard", 1.0, numeric, known, applied)
    except SdcInputError as err:
        message = str(err)
        assert message and "\n" not in message and "internal error" not in message
        return f"refused: {message}"
    released = applied.data
    figures = {**page.after, **page.utility}
    # the reference: the release's assessment, read as compare --json prints it
    reference = page.assessment
    assert reference is not None
    expected = {**reference.to_json(distribution=False),
                **{key: getattr(reference.keys, key) for key in RISK_KEYS}}

    # the page's figures are the assessment's
    for key in RISK_KEYS + LINKAGE_KEYS + IL1_KEYS:
        close(figures[key], expected[key], f"page {key}")
    for c, v in expected["per_column"].items():
        close(figures["per_column"][c], v, f"page IL1 {c}")

    # the linkage attack against its O(n²) reference
    if len(df) <= 60:
        p_ref = reference_linkage(df, released, qi, parsed, known, applied.reports)
        for a, p in p_ref.items():
            close(float(p.sum()), expected["linkage_attackers"][a]["linkage_reidentifications"],
                  f"linkage ({a}) vs reference")
        # the headline: the attacker that re-identifies most
        close(max(float(p.sum()) for p in p_ref.values()), expected["linkage_reidentifications"],
              "linkage vs reference")

    # apply twice: the same bytes; the recipe's round trip changes nothing
    again = apply_recipe(load_recipe(parsed.to_json()), df).data
    for ext in (".csv", ".parquet"):
        assert table_bytes(released, ext) == table_bytes(again, ext), f"apply twice ({ext})"

    # the report shows the assessment's figures
    before = risk_profile(df, qi, weight=weight, k=k)
    from sdc_core.risk.linkage import linkage_attack
    table = report.risk_table(before, linkage_attack(df, df, qi, None, known), page.after)
    for key, value in zip(table["measure"], table["after"]):
        name = next(k_ for k_, v in report.RISK_NAMES.items() if v == key)
        close(float(value), float(expected[name]), f"report {name}")

    # the sweep row: the sweep's own fast path
    touched = list(dict.fromkeys(c for s in parsed.steps
                                 for c in ([s["column"]] if "column" in s else s["columns"])))
    ctx = SweepContext(df, qi, [c for c in numeric if c in df.columns], k, weight, "wildcard",
                       1.0, known, "max")
    row = ctx.evaluate(parsed.steps, parsed.seed)
    for key in ("expected_reidentifications", "percent_unique", "percent_k_le_threshold",
                "linkage_reidentifications", "linkage_risk_percent") + IL1_KEYS:
        close(row[key], expected[key], f"sweep row {key}")

    # compare and risk on the written file
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        original_file = folder / "original.parquet"
        original_file.write_bytes(table_bytes(df, ".parquet"))
        (folder / "recipe.json").write_text(parsed.to_json())
        ext = written_format(text, csv_safe(df) and csv_safe(released))
        out = folder / f"released{ext}"
        code, _, err = _cli(["apply", str(original_file), "--recipe",
                             str(folder / "recipe.json"), "-o", str(out)])
        assert code == 0, f"apply exited {code}: {err.strip()}"
        assert len(read_table(out)) == len(df)
        args = ["compare", str(original_file), str(out), "--numeric", ",".join(numeric),
                "--qi", ",".join(qi), "--recipe", str(folder / "recipe.json"), "--json"]
        if known:
            args += ["--known", ",".join(known)]
        got = _cli_json(args)
        for key in LINKAGE_KEYS + IL1_KEYS:
            close(got[key], expected[key], f"compare {ext} {key}")
        for c in touched:
            if c in released.columns:
                close(got["per_column"][c], expected["per_column"][c], f"compare {ext} IL1 {c}")
        for c, v in got["per_column"].items():
            if c not in touched and c in released.columns:
                close(v, 0.0, f"compare {ext}: untouched column {c}")
        present = [c for c in qi if c in released.columns]
        if present:
            risk_args = ["risk", str(out), "--qi", ",".join(present), "--k", str(k),
                         "--json", "--no-suda2"]
            if weight and weight in released.columns:
                risk_args += ["--weight", weight]
            got = _cli_json(risk_args)
            for key in RISK_KEYS:
                close(got[key], expected[key], f"risk {ext} {key}")

    # steps that change nothing, and local suppression's promise, step by step; the page's
    # figures after the first j steps are computed when a check reads them
    applied_by = {len(parsed.steps): applied}

    @functools.cache
    def figures_after(j: int) -> Any:
        if j == len(parsed.steps):
            return page
        return evaluate(df, recipe_json(parsed.steps[:j], parsed.seed), qi, weight, k,
                        "wildcard", 1.0, numeric, known, applied_by.get(j))

    data = df
    for i, step in enumerate(parsed.steps):
        if i + 1 not in applied_by:
            applied_by[i + 1] = apply_recipe(Recipe(seed=parsed.seed, steps=parsed.steps[:i + 1]),
                                             df)
        done = applied_by[i + 1]
        if step["method"] == "local_suppression":
            sizes = class_sizes(done.data, step["columns"], alpha=step.get("alpha", 1.0))
            assert sizes.fk.min() >= step["k"], "local suppression: a class smaller than k"
        if same_values(data, done.data):
            now, previous = figures_after(i + 1), figures_after(i)
            for key in RISK_KEYS + LINKAGE_KEYS + ("IL1_numeric", "IL1_categorical"):
                value = {**now.after, **now.utility}[key]
                close(value, {**previous.after, **previous.utility}[key],
                      f"step {i + 1} changed nothing but moved {key}")
        if same_values(df, done.data):
            for key in ("IL1_release", "IL1_numeric", "IL1_categorical", "IL1_overall"):
                close(figures_after(i + 1).utility[key], 0.0,
                      f"nothing changed after step {i + 1}: {key}")
        data = done.data
    return "ok"


#: The figures of a synthetic release read as a set of records (:mod:`sdc_core.risk.synthetic`).
SYNTHETIC_KEYS = ("replicated_uniques", "replicated_uniques_percent")
HOLDOUT_KEYS = ("dcr_train_share", "dcr_expected_share", "exact_copies")


def check_synthetic_release(df: pd.DataFrame, qi: Sequence[str], numeric: Sequence[str],
                            sensitive: Sequence[str], recipe: dict[str, Any]) -> str:
    """One truth for a release whose rows are not the original's (a recipe ending in a
    synthesis step): the Protect page's figures (:func:`ui.logic.workbench.evaluate`), the
    report's table and ``compare --json`` / ``risk --json`` on the written file all equal a
    fresh assessment of the recipe, to 1e-9: the released keys' risk, replicated uniques,
    DiSCO and DiO per sensitive column and, with a holdout, the distance against it; the
    record-by-record figures give no number anywhere (the page's tiles "—", no linkage or IL1
    key in the JSON, ``record_by_record`` the reason). Returns "refused: …" or "ok"."""
    from sdc_core.assess import Setting, assess
    from ui.logic.metrics import NO_FIGURE, risk_rows, utility_rows
    from ui.logic.synthetic_view import synthetic_table

    qi, numeric, sensitive = list(qi), list(numeric), list(sensitive)
    # the table as a reader gives it, to the page and the command line alike: a category of
    # whole numbers reads back from Parquet as Int64, which synthesis draws as numbers
    df = read_table(table_bytes(df, ".parquet"), name="original.parquet")
    try:
        parsed = parse_recipe(recipe)
        text = recipe_json(parsed.steps, parsed.seed)
        page = evaluate(df, text, qi, None, 5, "wildcard", 1.0, numeric, sensitive=sensitive)
        reference = assess(df, None, Setting(tuple(qi), tuple(numeric), tuple(sensitive)),
                           parse_recipe(recipe))
        expected = reference.to_json(distribution=False)
    except SdcInputError as err:
        message = str(err)
        assert message and "\n" not in message and "internal error" not in message
        return f"refused: {message}"
    assert page.rows is not None and expected["record_by_record"] == page.rows
    assert not set(expected) & {*LINKAGE_KEYS, *IL1_KEYS, "per_column"}
    expected |= {key: getattr(reference.keys, key) for key in RISK_KEYS}

    # the page: the keys' risk as it is, no number where a figure compares record by record
    for key in RISK_KEYS:
        close(page.after[key], expected[key], f"page {key}")
    marked = risk_rows(page.after, None, 5, (*RISK_KEYS, *LINKAGE_KEYS), page.rows)
    assert [r.value for r in marked if r.key in LINKAGE_KEYS] == [NO_FIGURE] * len(LINKAGE_KEYS)
    assert {r.value for r in utility_rows(page.utility_for([]), page.rows)} == {NO_FIGURE}
    assert isinstance(page.synthetic, type(reference.synthetic)), page.synthetic
    got = page.synthetic.to_json()  # type: ignore[union-attr]
    for key in (*SYNTHETIC_KEYS, *(HOLDOUT_KEYS if "dcr_train_share" in expected else ())):
        close(got[key], expected[key], f"page {key}")
    assert [d["column"] for d in got["disco"]] == [d["column"] for d in expected["disco"]]
    for d, e in zip(got["disco"], expected["disco"]):
        close(d["disco_percent"], e["disco_percent"], f"page DiSCO {d['column']}")
        close(d["disco_original_percent"], e["disco_original_percent"], f"page DiO {d['column']}")

    # the report's table of the same figures
    shown = dict(zip(*synthetic_table(page.synthetic).to_dict("list").values()))  # type: ignore[arg-type]
    from sdc_core.names import label
    for key in SYNTHETIC_KEYS:
        close(float(shown[label(key)]), float(expected[key]), f"report {key}")
    for e in expected["disco"]:
        close(float(shown[f"{label('disco_percent')}: {e['column']}"]), e["disco_percent"],
              f"report DiSCO {e['column']}")

    # compare and risk on the written file
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        original_file = folder / "original.parquet"
        original_file.write_bytes(table_bytes(df, ".parquet"))
        (folder / "recipe.json").write_text(parsed.to_json())
        out = folder / "released.parquet"
        code, _, err = _cli(["apply", str(original_file), "--recipe",
                             str(folder / "recipe.json"), "-o", str(out)])
        assert code == 0, f"apply exited {code}: {err.strip()}"
        args = ["compare", str(original_file), str(out), "--numeric", ",".join(numeric),
                "--qi", ",".join(qi), "--recipe", str(folder / "recipe.json"), "--json"]
        if sensitive:
            args += ["--sensitive", ",".join(sensitive)]
        cli_out = _cli_json(args)
        assert cli_out["record_by_record"] == expected["record_by_record"]
        assert not set(cli_out) & {*LINKAGE_KEYS, *IL1_KEYS}
        for key in (*SYNTHETIC_KEYS, *(HOLDOUT_KEYS if "dcr_train_share" in expected else ())):
            close(cli_out[key], expected[key], f"compare {key}")
        for d, e in zip(cli_out["disco"], expected["disco"], strict=True):
            close(d["disco_percent"], e["disco_percent"], f"compare DiSCO {e['column']}")
        risk = _cli_json(["risk", str(out), "--qi", ",".join(qi), "--k", "5", "--json",
                          "--no-suda2"])
        for key in RISK_KEYS:
            close(risk[key], expected[key], f"risk {key}")
    return "ok"


# -- the harness's random tables and releases (Hypothesis strategies) ----------------------------

#: The kinds of column the harness draws (each a pandas dtype a reader gives), with the storage
#: of the column model each one is.
KINDS = {"bool": "boolean", "boolean": "boolean", "int64": "integer", "Int64": "integer",
         "UInt8": "integer", "float64": "float", "Float64": "float", "str": "text",
         "object": "text", "category": "category", "ordered": "category",
         "int_category": "category", "datetime": "datetime", "datetime_tz": "datetime",
         "mixed": "mixed"}
TEXT = ("a", "b", "c", "d e", "True", "1", "07", "2.5", "x")


def draw_column(draw, kind: str, n: int, blanks: bool = True) -> pd.Series:
    """A column of ``kind`` with few distinct values (so classes have ties) and missing values
    when the kind can hold them (and ``blanks``)."""
    def values(pool, missing=blanks):
        items = st.sampled_from(pool)
        return draw(st.lists(st.one_of(st.none(), items) if missing else items,
                             min_size=n, max_size=n))

    if kind == "bool":
        return pd.Series(values([True, False], missing=False), dtype=bool)
    if kind == "boolean":
        return pd.Series(values([True, False]), dtype="boolean")
    if kind == "int64":
        return pd.Series(values([0, 1, 2, 5, 17, 40], missing=False), dtype="int64")
    if kind in ("Int64", "UInt8"):
        return pd.Series(values([0, 1, 2, 5, 17, 40]), dtype=kind)
    if kind in ("float64", "Float64"):
        return pd.Series(values([0.5, 1.0, 2.25, 3.0, 7.5, -1.0]), dtype=kind)
    if kind in ("str", "object"):
        return pd.Series(values(list(TEXT)), dtype=kind)
    if kind in ("category", "ordered"):
        return pd.Series(pd.Categorical(values(["lo", "mid", "hi", "x y"]),
                                        categories=["lo", "mid", "hi", "x y"],
                                        ordered=kind == "ordered"))
    if kind == "int_category":
        return pd.Series(values([1, 2, 3])).astype("Int64").astype("category")
    if kind in ("datetime", "datetime_tz"):
        days = [dt.datetime(2020, 1, 1) + dt.timedelta(days=d) for d in (0, 1, 30, 31, 400)]
        s = pd.Series(pd.to_datetime(values(days)))
        return s.dt.tz_localize("UTC") if kind == "datetime_tz" else s
    return pd.Series(values([1, 2, "a", "b", 2.5]), dtype=object)


@st.composite
def tables(draw, max_rows: int = 30) -> pd.DataFrame:
    n = draw(st.integers(1, max_rows))
    kinds = draw(st.lists(st.sampled_from(list(KINDS)), min_size=1, max_size=6))
    return pd.DataFrame({f"{kind}_{i}": draw_column(draw, kind, n) for i, kind in enumerate(kinds)})


def _number(draw, p, column: pd.Series) -> float:
    low = p.low if p.low is not None else 0.0
    try:
        high = p.high(column) if callable(p.high) else p.high
    except SdcInputError:  # a column the method does not take: the step will be refused
        high = None
    high = high if high is not None and np.isfinite(high) and high > low else low + 10
    if p.type == "whole":
        return draw(st.integers(int(low) + 1, max(int(low) + 1, int(high))))
    return round(draw(st.floats(low, high, allow_nan=False, exclude_min=True)), 3) or high


def _accepts(method, s: pd.Series | str) -> bool:
    """Whether ``method`` takes a column (or a column of this storage)."""
    offered = storage_takes(s) if isinstance(s, str) else takes(s)
    if method.name == "recode" and "date" in offered:  # dates are banded, not recoded
        return False
    wanted = {"numeric": ("number", "date") if method.name in ("band", "rank_swap")
              else ("number",), "numeric_keys": ("number", "date"),
              "categorical": ("category",), "keys": ("category",)}[method.columns]
    return bool(set(wanted) & set(offered))


def draw_step(draw, method, df: pd.DataFrame, qi: list[str], column: str | None = None) -> dict:
    """A step of ``method`` on ``column`` (or on a column it takes; sometimes on one it does
    not, which must then be refused in one line), its main parameter drawn in its range."""
    fitting = [c for c in df.columns if _accepts(method, df[c])]
    if method.columns == "keys":
        fitting = qi
    if not fitting or draw(st.integers(0, 9)) == 0:
        fitting = list(df.columns)
    if method.target == "column":
        column = column or draw(st.sampled_from(fitting))
        step = {"method": method.name, "column": column}
    else:
        cols = draw(st.lists(st.sampled_from(fitting), min_size=1, max_size=3, unique=True))
        cols = list(dict.fromkeys([column] + cols)) if column else cols
        step = {"method": method.name, "columns": cols}
    sample = df[step.get("column") or step["columns"][0]]
    if method.main:
        p = method.param(method.main)
        step[method.main] = _number(draw, p, sample) if p.type in ("number", "whole") \
            else p.default
    if method.name == "band" and draw(st.booleans()):
        step["label"] = draw(st.sampled_from(["interval", "lower", "range"]))
        if step["label"] == "range":  # whole edges, for whole-number columns
            step["width"] = max(1, round(step["width"]))
    if method.name == "band" and draw(st.integers(0, 3)) == 0:  # custom breaks for a width
        present = pd.to_numeric(sample.dropna(), errors="coerce").dropna() \
            if storage(sample) in ("integer", "float") else pd.Series([0.0, 9.0])
        low, high = (float(np.floor(present.min())), float(np.floor(present.max())) + 1) \
            if len(present) else (0.0, 10.0)
        del step["width"]
        step["breaks"] = sorted({low, draw(st.sampled_from([low, (low + high) / 2])), high})
    if method.name == "top_bottom_code":
        step["top_percentile"] = draw(st.sampled_from([50, 80, 95]))
    if method.name == "recode" and draw(st.booleans()):
        level = sample.dropna().astype(str).iloc[0] if sample.notna().any() else "a"
        step.pop("min_count")
        step["groups"] = {draw(st.sampled_from(["other", "True", "1", "lo"])): [level]}
    if method.name == "local_suppression":
        step["k"] = draw(st.integers(2, 5))
    return step


#: Methods the harness does not draw: drop, record swapping (it needs a household column
#: and a geography: tests/test_record_swap.py), and synthesis (a new table, no record the
#: release of an original record, and the recipe's last step: tests/test_synthesize.py).
NOT_DRAWN = ("drop", "record_swap", "synthesize")

#: Every method of the registry with every kind of column it takes (the first step of a
#: release of :func:`releases`).
PAIRS = [(m, kind) for m, method in METHODS.items() if m not in NOT_DRAWN for kind in KINDS
         if _accepts(method, KINDS[kind])]


@st.composite
def releases(draw, first: tuple[str, str] | None = None):
    """A table, its roles and a recipe of one to four steps; with ``first`` = (method, kind) the
    table has a column of that kind and the first step is that method on it (a quasi-identifier
    when the method works on the keys)."""
    df = draw(tables())
    if first:
        df.insert(0, f"{first[1]}_first", draw_column(draw, first[1], len(df)))
    cols = list(df.columns)
    qi = draw(st.lists(st.sampled_from(cols), min_size=1, max_size=min(4, len(cols)),
                       unique=True))
    if first and cols[0] not in qi:
        qi = [cols[0]] + qi[:3]
    numeric = [c for c in cols if storage(df[c]) in ("integer", "float")]
    known = [c for c in numeric if c not in qi][:draw(st.integers(0, 1))]
    steps = [draw_step(draw, METHODS[first[0]], df, qi, cols[0])] if first else []
    names = [m for m in METHODS if m not in NOT_DRAWN]
    steps += [draw_step(draw, METHODS[draw(st.sampled_from(names))], df, qi)
              for _ in range(draw(st.integers(0 if first else 1, 3)))]
    recipe = {"version": 1, "seed": draw(st.integers(0, 2**32)), "steps": steps}
    return df, qi, numeric, known, recipe


@st.composite
def synthetic_releases(draw):
    """A release of :func:`releases` whose recipe ends in a synthesis step (min_leaf, smoothing,
    proper and a holdout drawn), with up to one sensitive column beside the keys."""
    df, qi, numeric, _, recipe = draw(releases())
    step = {"method": "synthesize", "min_leaf": draw(st.integers(1, 3)),
            "smoothing": draw(st.booleans()), "proper": draw(st.booleans()),
            "holdout": draw(st.sampled_from([0.0, 0.3]))}
    others = [c for c in df.columns if c not in qi]
    sensitive = [draw(st.sampled_from(others))] if others and draw(st.booleans()) else []
    recipe["steps"] = [*recipe["steps"][:draw(st.integers(0, 1))], step]
    return df, qi, numeric, sensitive, recipe
