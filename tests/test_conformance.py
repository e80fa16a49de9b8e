"""The conformance harness: random tables over every kind of column a reader produces (the column
model, ``docs/columns.md``), with missing values, random roles and random recipes drawn from the
method registry (each method on each kind it takes, one to four steps, any order); every example
must satisfy the invariants of :func:`tests.conformance.check_release`."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdc_core.columns import STORAGES, storage, storage_takes, takes
from sdc_core.errors import SdcInputError
from sdc_core.io import read_table, table_bytes
from sdc_core.methods import registry
from tests.conformance import check_release, same_values

METHODS = registry()
#: The kinds of column the harness draws (each a pandas dtype a reader gives), with the storage
#: of the column model each one is.
KINDS = {"bool": "boolean", "boolean": "boolean", "int64": "integer", "Int64": "integer",
         "UInt8": "integer", "float64": "float", "Float64": "float", "str": "text",
         "object": "text", "category": "category", "ordered": "category",
         "int_category": "category", "datetime": "datetime", "datetime_tz": "datetime",
         "mixed": "mixed"}
TEXT = ("a", "b", "c", "d e", "True", "1", "07", "2.5", "x")


def _column(draw, kind: str, n: int, blanks: bool = True) -> pd.Series:
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
    return pd.DataFrame({f"{kind}_{i}": _column(draw, kind, n) for i, kind in enumerate(kinds)})


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


def _step(draw, method, df: pd.DataFrame, qi: list[str], column: str | None = None) -> dict:
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


#: Every method of the registry with every kind of column it takes (the first step of a
#: release of :func:`releases`).
PAIRS = [(m, kind) for m, method in METHODS.items() if m != "drop" for kind in KINDS
         if _accepts(method, KINDS[kind])]


@st.composite
def releases(draw, first: tuple[str, str] | None = None):
    """A table, its roles and a recipe of one to four steps; with ``first`` = (method, kind) the
    table has a column of that kind and the first step is that method on it (a quasi-identifier
    when the method works on the keys)."""
    df = draw(tables())
    if first:
        df.insert(0, f"{first[1]}_first", _column(draw, first[1], len(df)))
    cols = list(df.columns)
    qi = draw(st.lists(st.sampled_from(cols), min_size=1, max_size=min(4, len(cols)),
                       unique=True))
    if first and cols[0] not in qi:
        qi = [cols[0]] + qi[:3]
    numeric = [c for c in cols if storage(df[c]) in ("integer", "float")]
    known = [c for c in numeric if c not in qi][:draw(st.integers(0, 1))]
    steps = [_step(draw, METHODS[first[0]], df, qi, cols[0])] if first else []
    names = [m for m in METHODS if m != "drop"]
    steps += [_step(draw, METHODS[draw(st.sampled_from(names))], df, qi)
              for _ in range(draw(st.integers(0 if first else 1, 3)))]
    recipe = {"version": 1, "seed": draw(st.integers(0, 2**32)), "steps": steps}
    return df, qi, numeric, known, recipe


@settings(max_examples=5, deadline=None, derandomize=True)
@given(st.data())
def test_every_storage_is_drawn(data):
    """The harness covers the column model: every storage it names comes out of a kind."""
    for kind, expected in KINDS.items():
        assert storage(_column(data.draw, kind, 8, blanks=False)) == expected, kind
    assert set(KINDS.values()) == set(STORAGES)


@pytest.mark.parametrize("first", PAIRS, ids=[f"{m}-{k}" for m, k in PAIRS])
@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_every_method_on_every_kind(first, data):
    """Each method on each kind it takes, then up to three more random steps."""
    df, qi, numeric, known, recipe = data.draw(releases(first))
    check_release(df, qi, numeric, recipe, known=known)


@settings(max_examples=100, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(releases())
def test_every_release_agrees_everywhere(case):
    """One to four random steps in any order, on any column (a column a method does not take
    must be refused in one line)."""
    df, qi, numeric, known, recipe = case
    check_release(df, qi, numeric, recipe, known=known)


@settings(max_examples=10, deadline=None, derandomize=True)
@given(st.data())
def test_every_kind_survives_parquet(data):
    """A table of every kind reads back from Parquet with the values it was written with."""
    df = pd.DataFrame({kind: _column(data.draw, kind, 12) for kind in KINDS})
    back = read_table(table_bytes(df, ".parquet"), name="t.parquet")
    assert same_values(df, back)
