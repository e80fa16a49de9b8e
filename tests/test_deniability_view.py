"""The tables of "What this buys" (ui/logic/deniability_view.py) and the worker's figures
(ui/logic/workbench.py): the core's numbers under the names of sdc_core.names, one row per
perturbed column (docs/measures.md, "Deniability: what perturbation buys")."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest

from sdc_core.names import label
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.risk.deniability import recipe_deniability
from sdc_core.risk.inference import attribute_inference
from ui.logic.deniability_view import (
    GAIN,
    MEANING,
    deniability_table,
    epsilon_words,
    inference_shown,
    inference_table,
    matrix_table,
    posterior_table,
)
from ui.logic.report import buys_section
from ui.logic.workbench import evaluate, recipe_json

QI = ["age", "sex"]


def survey(n: int = 600, items: int = 25) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"age": rng.integers(20, 30, n), "sex": rng.choice(["F", "M"], n),
                       "hiv": rng.choice(["y", "n"], n, p=[0.3, 0.7])})
    for i in range(items):
        df[f"q{i:02d}"] = rng.integers(1, 7, n)
    return df


def relabel_all(df: pd.DataFrame, alpha: float = 0.1) -> str:
    return recipe_json([{"method": "relabel", "column": c, "alpha": alpha}
                        for c in df.columns if c.startswith("q")], 7)


def same(a, b) -> bool:
    return (a.column == b.column and a.method == b.method and a.epsilon == b.epsilon
            and a.guess_accuracy == b.guess_accuracy and a.baseline == b.baseline
            and a.posterior.equals(b.posterior) and a.matrix.equals(b.matrix)
            and a.steps == b.steps)


def test_25_columns_give_25_rows_equal_to_the_core():
    df = survey()
    text = relabel_all(df)
    wb = evaluate(df, text, QI, None, 3, "wildcard", 1.0, [])
    core = recipe_deniability(parse_recipe(json.loads(text)), df)
    assert len(wb.deniability) == 25 == len(core)
    assert all(same(a, b) for a, b in zip(wb.deniability, core))
    t = deniability_table(wb.deniability)
    assert len(t) == 25 and t["column"].tolist() == [f"q{i:02d}" for i in range(25)]
    assert t[label("epsilon")].tolist() == [d.epsilon for d in core]
    assert t[label("guess_accuracy")].tolist() == [d.guess_accuracy for d in core]
    assert t[label("baseline")].tolist() == [d.baseline for d in core]
    assert t[GAIN].tolist() == [100 * (d.guess_accuracy - d.baseline) for d in core]
    assert (t[label("epsilon")] > 0).all() and np.isfinite(t[label("epsilon")]).all()


def test_composed_and_mixed_recipes_equal_the_core():
    """With the apply's result, PRAM then relabeling composes the step matrices it holds; a
    recoding on the column runs the steps: the same figures as without it."""
    df = survey(items=2)
    for steps in (
            [{"method": "pram", "column": "q00", "p": 0.2},
             {"method": "relabel", "column": "q00", "alpha": 0.3},
             {"method": "randomized_response", "column": "q01", "keep_probability": 0.6}],
            [{"method": "band", "column": "q00", "width": 2},
             {"method": "pram", "column": "q00", "p": 0.2}]):
        recipe = parse_recipe({"seed": 5, "steps": steps})
        fast = recipe_deniability(recipe, df, matrices=apply_recipe(recipe, df).matrices)
        core = recipe_deniability(recipe, df)
        assert len(fast) == len(core) >= 1 and all(same(a, b) for a, b in zip(fast, core))
    assert fast[0].method == "band → pram"


def test_no_perturbed_column_no_rows_and_the_flag_skips_them():
    df = survey(items=1)
    wb = evaluate(df, recipe_json([{"method": "band", "column": "age", "width": 5}], 1),
                  QI, None, 3, "wildcard", 1.0, [])
    assert wb.deniability == () and deniability_table(wb.deniability).empty
    skipped = evaluate(df, relabel_all(df), QI, None, 3, "wildcard", 1.0, [], buys=False)
    assert skipped.deniability == () and skipped.inference is None


def test_epsilon_in_words():
    assert epsilon_words(math.inf) == "∞: no deniability"
    assert "e^ε = 3 times" in epsilon_words(math.log(3))
    df = survey(items=1)
    d = recipe_deniability(parse_recipe(json.loads(relabel_all(df, 1.0))), df)[0]
    row = deniability_table([d]).iloc[0]
    assert row[MEANING] == epsilon_words(d.epsilon)


def test_posterior_and_matrix_tables_are_the_core_s():
    df = survey(items=1)
    d = recipe_deniability(parse_recipe(json.loads(relabel_all(df, 0.4))), df)[0]
    post = posterior_table(d)
    assert post.drop(columns="π (original share)").to_numpy().tolist() \
        == d.posterior.to_numpy().tolist()
    assert post["π (original share)"].sum() == pytest.approx(1.0)
    assert np.allclose(post.drop(columns="π (original share)").sum(axis=0), 1.0)
    assert matrix_table(d).to_numpy().tolist() == d.matrix.to_numpy().tolist()
    assert post.index.name == "true value"


def test_inference_in_the_worker_and_its_table():
    df = survey(items=1)
    text = recipe_json([{"method": "pram", "column": "hiv", "p": 0.3}], 2)
    wb = evaluate(df, text, QI, None, 3, "wildcard", 1.0, [], sensitive=["hiv", "age"])
    recipe = parse_recipe(json.loads(text))
    out = apply_recipe(recipe, df)
    core = attribute_inference(df, out.data, QI, ["hiv"], recipe, reports=out.reports)
    t = inference_table(wb.inference)
    assert t["column"].tolist() == ["hiv"]  # a key is not attacked as sensitive
    assert t[label("inference_accuracy")].iloc[0] == core.columns[0].accuracy
    assert t[label("inference_baseline")].iloc[0] == core.columns[0].baseline
    assert t[label("inference_gain")].iloc[0] == core.columns[0].gain
    assert evaluate(df, text, QI, None, 3, "wildcard", 1.0, []).inference is None


def test_the_page_writes_the_attack_s_figures_out_and_a_missing_cap_as_a_dash():
    """inference_shown: the table's figures as text, shares to 4 decimals and the gain to 2
    as the note writes them; a numeric sensitive column has no CAP: "—", not "nan"."""
    df = survey(items=1)
    df["income"] = np.random.default_rng(5).normal(50, 10, len(df)).round()
    text = recipe_json([{"method": "pram", "column": "hiv", "p": 0.3}], 2)
    wb = evaluate(df, text, QI, None, 3, "wildcard", 1.0, [], sensitive=["hiv", "income"])
    shown, table = inference_shown(wb.inference), inference_table(wb.inference)
    assert shown.index.tolist() == table["column"].tolist()
    for (_, figures), (_, row) in zip(table.iterrows(), shown.iterrows()):
        assert row[label("inference_accuracy")] == f"{figures[label('inference_accuracy')]:.4f}"
        assert row[label("inference_gain")] == f"{figures[label('inference_gain')]:+.2f}"
        cap = figures[label("inference_cap")]
        assert row[label("inference_cap")] == ("—" if np.isnan(cap) else f"{cap:.4f}")
    assert "—" in shown[label("inference_cap")].tolist()  # income is numeric: no CAP
    assert not shown.map(lambda v: "nan" in str(v).lower()).any().any()


def test_the_report_section_is_the_page_table():
    df = survey(items=3)
    wb = evaluate(df, relabel_all(df), QI, None, 3, "wildcard", 1.0, [], sensitive=["hiv"])
    html = buys_section(wb.deniability, wb.inference)
    assert "What this buys" in html and html.count("<tr>") >= 3 + 1 + 1
    for d in wb.deniability:
        assert f"<td>{d.column}</td>" in html
    assert label("epsilon") in html and label("inference_accuracy") in html
    assert "No column is perturbed" in buys_section((), None)


def test_the_report_carries_the_section_when_given():
    from ui.logic.report import build_report

    df = survey(items=2)
    wb = evaluate(df, relabel_all(df), QI, None, 3, "wildcard", 1.0, [], sensitive=["hiv"])
    args = ("t", "fp", len(df), df.shape[1], {"qi": QI}, "{}", pd.DataFrame({"a": [1]}),
            pd.DataFrame({"b": [2]}), [])
    with_buys = build_report(*args, buys=(wb.deniability, wb.inference))
    assert buys_section(wb.deniability, wb.inference) in with_buys
    assert "What this buys" not in build_report(*args)


def test_cap_of_a_numeric_sensitive_column_is_a_dash_never_none():
    """Issue 50: on the panel COUNT/rwm5yr, the report's attribute-inference table showed
    "None" for the CAP of a numeric sensitive column (income). CAP belongs to a categorical
    column; a numeric one has none, shown "—" and said why."""
    from tests.rwm5yr import KEYS, persons
    from ui.logic.deniability_view import NO_CAP, inference_note

    df = persons(300)
    release = apply_recipe(parse_recipe({"seed": 1, "steps": [
        {"method": "band", "column": "age", "width": 10}]}), df).data
    cap = label("inference_cap")
    for sensitive in (["hhninc"], ["outwork", "hhninc"]):
        result = attribute_inference(df, release, KEYS, sensitive)
        table = inference_table(result)
        assert table[cap].dtype == float
        for c, value in zip(result.columns, table[cap], strict=True):
            assert (c.cap is None and math.isnan(value)) or value == c.cap
        html = buys_section([], result)
        rows = [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(
            r"<tr>(.*?)</tr>", html, re.S)]
        caps = [row[5] for row in rows if row]
        assert caps[-1] == "—" and "None" not in html and "NaN" not in html, caps
        assert NO_CAP in inference_note(result)
    assert result.columns[0].cap is not None  # outwork, categorical: its figure
