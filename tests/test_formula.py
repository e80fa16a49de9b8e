"""The formula language (issue 38, docs/formulas.md): what the parser accepts and refuses, its
expansion of terms against patsy's, bounded design matrices, and formulas generated from the
grammar fitted to statsmodels' estimates to 1e-8 (statsmodels' formula API given the same
formula in patsy's own notation, in the test, where the text is the test's own)."""

import warnings

import numpy as np
import pandas as pd
import patsy
import pytest
import statsmodels.formula.api as smf
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sdc_core.errors import SdcInputError
from sdc_core.utility.analysis import Analysis, estimate, formula_variables
from sdc_core.utility.formula import (
    MAX_COLUMNS,
    MAX_DEPTH,
    MAX_LENGTH,
    MAX_POWER,
    MAX_TERMS,
    check_design,
    design_bound,
    parse_formula,
)

TOL = 1e-8


# -- what is accepted, and what it reads ------------------------------------------------------

@pytest.mark.parametrize(("text", "columns", "code"), [
    ("cd420 ~ age + C(treat) + cd40", ["cd420", "age", "treat", "cd40"],
     "cd420 ~ age + C(treat) + cd40"),
    ("np.log(income) ~ age + C(sex) + C(region) + household_size",
     ["income", "age", "sex", "region", "household_size"],
     "np.log(income) ~ age + C(sex) + C(region) + household_size"),
    ('log(y) ~ C(a, Treatment(1)) + I(b**2) + Q("c d"):e', ["y", "a", "b", "c d", "e"],
     'log(y) ~ C(a, Treatment(1)) + I(b ** 2) + Q("c d") : e'),
    ("y ~ `monthly income` + C(`x-y`, Treatment(reference='no'))",
     ["y", "monthly income", "x-y"],
     "y ~ Q(\"monthly income\") + C(Q(\"x-y\"), Treatment(reference='no'))"),
    ("y ~ I((x - 50) ** 2) + sqrt(abs(x)) - 1", ["y", "x"],
     "y ~ I((x - 50) ** 2) + sqrt(abs(x)) - 1"),
    ("y ~ 0 + a*b + power(x, 3)", ["y", "a", "b", "x"], "y ~ 0 + a * b + power(x, 3)"),
    ("y ~ a / (b + c)", ["y", "a", "b", "c"], "y ~ a / (b + c)"),
    ("y ~ log", ["y", "log"], 'y ~ Q("log")'),
    ("y ~ größe", ["y", "größe"], "y ~ größe"),
])
def test_accepted_formulas_read_their_columns_and_are_written_out(text, columns, code):
    formula = parse_formula(text)
    assert formula.columns == columns
    assert formula.code == code
    assert formula_variables(text) == columns


@pytest.mark.parametrize(("text", "token"), [
    ("I(__import__('os').system('id')) ~ x", "'__import__'"),
    ("y ~ np.testing._private.utils.os.system('id')", "'testing'"),
    ("y ~ x.__class__", "'__class__'"),
    ("y ~ ｌｏｇ(x)", "'ｌｏｇ'"),  # NFKC-normalises to log: refused, not read as log
    ("y ~ np.ｌｏｇ(x)", "'ｌｏｇ'"),
    ("y ~ C(x, Treatment(__import__('os')))", "'__import__'"),
    ("y ~ C(x, levels=1)", "'levels'"),
    ("y ~ lambda: 1", "'lambda'"),
    ("y ~ x[0]", "'['"),
    ("y ~ [c for c in x]", "'['"),
    ("y ~ 'text'", "\"'text'\""),
    ("y ~ f'{x}'", "\"'{x}'\""),
    ("y ~ (x := 1)", "'='"),
    ("y ~ np.log(x, out=x)", "','"),
    ("y ~ I(x ** 0.5)", "'0.5'"),
    ("y ~ I(x ** 9)", "'9'"),
    ("y ~ x ** 2", "'**'"),
    ("y ~ 2", "'2'"),
    ("y ~ x; import os", "';'"),
    ("y ~ x\x00", "'\\x00'"),
    ("y ~ eval('1')", "'eval'"),
    ("y ~ open('f')", "'open'"),
    ("y ~ __builtins__", "'__builtins__'"),
])
def test_refused_formulas_name_the_offending_token(text, token):
    with pytest.raises(SdcInputError) as err:
        parse_formula(text)
    message = str(err.value)
    assert "\n" not in message
    assert f"refused at {token}" in message, message


@pytest.mark.parametrize(("text", "words"), [
    ("y ~ " + "(" * (MAX_DEPTH + 1) + "x" + ")" * (MAX_DEPTH + 1), "nested more than"),
    ("y ~ " + "log(" * (MAX_DEPTH + 1) + "x" + ")" * (MAX_DEPTH + 1), "nested more than"),
    ("y ~ " + " + ".join(f"x{i}" for i in range(MAX_TERMS + 1)), "more than 400 tokens"),
    ("y ~ " + "(a+b+c+d+e+f)*(g+h+i+j+k+l)*(m+n+o+p+q+r)", "more than 200 terms"),
    ("y ~ " + "*".join("abcdefghi"), "more than 200 terms"),
    ("y ~ " + "x + " * MAX_LENGTH + "x", "characters, more than"),
    ("x + z", "has no response"),
    ("~ x", "has no response"),
    ("log ~ log(log)", "has the name of a function"),
    ("y ~ (1 + a):b", "interacts the intercept"),
    ("y ~ -a", "minus sign before a term"),
    ("y ~ x - x - 1", "leaves nothing to estimate"),
])
def test_limits_and_structure_are_refused_in_one_line(text, words):
    with pytest.raises(SdcInputError, match=words) as err:
        parse_formula(text)
    assert "\n" not in str(err.value) and len(str(err.value)) < 400


def test_a_non_text_formula_is_refused():
    with pytest.raises(SdcInputError, match="must be text"):
        parse_formula(["y ~ x"])


def test_the_power_limit_is_the_documented_one():
    parse_formula(f"y ~ I(x ** {MAX_POWER})")
    with pytest.raises(SdcInputError, match=f"from 1 to {MAX_POWER}"):
        parse_formula(f"y ~ I(x ** {MAX_POWER + 1})")


# -- formulas from the grammar ----------------------------------------------------------------

#: (the formula language's text, patsy's text of the same formula) of each factor
FACTORS = [
    ("x", "x"), ("z", "z"), ("g", "g"), ("C(h)", "C(h)"), ("`w v`", 'Q("w v")'),
    ('C(g, Treatment("g1"))', 'C(g, Treatment("g1"))'),
    ("C(h, Treatment(reference=2))", "C(h, Treatment(reference=2))"),
    ("I(x ** 2)", "I(x ** 2)"), ("I((z - 1) / 2)", "I((z - 1) / 2)"),
    ("np.sqrt(abs(x))", "np.sqrt(abs(x))"), ("log1p(abs(z))", "log1p(abs(z))"),
    ("center(x)", "center(x)"), ("standardize(z)", "standardize(z)"),
    ("exp(-x / 10)", "exp(-x / 10)"), ("power(z, 2)", "power(z, 2)"),
]
RESPONSES = [("y", "y"), ("np.log(y)", "np.log(y)"), ("I(y / 10)", "I(y / 10)"),
             ("log(y + 1)", "log(y + 1)")]


@st.composite
def rhs(draw, depth=0):
    """A right-hand side as (language text, patsy text): factors joined by + * / : with
    parentheses, at most a few terms."""
    if depth >= 2 or draw(st.booleans()):
        return draw(st.sampled_from(FACTORS))
    left, right = draw(rhs(depth + 1)), draw(rhs(depth + 1))
    op = draw(st.sampled_from(["+", "+", "*", ":", "/", "-"]))
    parens = draw(st.booleans())
    wrap = (lambda s: f"({s})") if parens else (lambda s: s)
    return wrap(f"{left[0]} {op} {right[0]}"), wrap(f"{left[1]} {op} {right[1]}")


@st.composite
def formulas(draw):
    (lhs, lhs_patsy), (r, r_patsy) = draw(st.sampled_from(RESPONSES)), draw(rhs())
    tail = draw(st.sampled_from(["", " - 1", " + 0"]))
    return f"{lhs} ~ {r}{tail}", f"{lhs_patsy} ~ {r_patsy}{tail}"


def grammar_table(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(5, 2, n).round(1)
    z = rng.integers(0, 6, n)
    g = rng.choice(["g0", "g1", "g2"], n)
    h = rng.integers(1, 4, n)
    w = rng.normal(0, 1, n)
    y = np.exp(0.5 + 0.1 * x + 0.05 * z + (g == "g1") * 0.2 + rng.normal(0, 0.3, n))
    df = pd.DataFrame({"y": y, "x": x, "z": z, "g": pd.array(g, dtype="str"), "h": h,
                       "w v": w})
    df.loc[rng.random(n) < 0.05, "x"] = np.nan
    return df


#: What statsmodels' formula API is given for the reference fit: the functions the
#: grammar's texts call, by the names they are written with.
REFERENCE_ENV = {"np": np, "log": np.log, "abs": np.abs, "log1p": np.log1p, "exp": np.exp,
                 "power": np.power}


@settings(max_examples=60, deadline=None)
@given(formulas(), st.integers(0, 2**31 - 1), st.sampled_from(["ols", "logit"]))
def test_formulas_from_the_grammar_give_statsmodels_estimates(pair, seed, kind):
    text, patsy_text = pair
    if not patsy.ModelDesc.from_formula(patsy_text).rhs_termlist:
        with pytest.raises(SdcInputError, match="leaves nothing to estimate"):
            parse_formula(text)
        return
    df = grammar_table(seed, 160)
    if kind == "logit":
        text = "b ~ " + text.split(" ~ ", 1)[1]
        patsy_text = "b ~ " + patsy_text.split(" ~ ", 1)[1]
        df["b"] = (df["y"] > df["y"].median()).astype(int)
    used = formula_variables(text)
    complete = df[used].dropna()
    if "g" in complete:  # patsy reads text as categories either way
        complete = complete.assign(g=complete["g"].astype(object))
    make = smf.ols if kind == "ols" else smf.logit
    try:
        got = estimate(Analysis("m", kind, formula=text), df)
    except SdcInputError as err:  # collinear, separated or too few rows: no reference fit
        assert any(w in str(err) for w in ("collinear", "separation", "converge", "too few"))
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make(patsy_text, complete, eval_env=REFERENCE_ENV)
        fit = model.fit(disp=0) if kind == "logit" else model.fit()
    ci = fit.conf_int()
    want = pd.DataFrame({"estimate": fit.params, "se": fit.bse, "low": ci[0], "high": ci[1]})
    assert list(got.terms.index) == list(want.index)
    assert got.dropped == len(df) - int(fit.nobs)
    scale = np.maximum(1.0, np.abs(want.to_numpy()))
    np.testing.assert_array_less(np.abs(got.terms.to_numpy() - want.to_numpy()) / scale, TOL)


@settings(max_examples=150, deadline=None)
@given(formulas())
def test_the_terms_are_patsys_expansion(pair):
    """The parser's terms (what the design bound counts) are the terms patsy reads from the
    same formula: the same sets of factors, the intercept aside."""
    text, patsy_text = pair
    assume(patsy.ModelDesc.from_formula(patsy_text).rhs_termlist)
    ours = {frozenset(patsy.EvalFactor(f.code).name() for f in term)
            for term in parse_formula(text).terms}
    theirs = {frozenset(f.name() for f in term.factors)
              for term in patsy.ModelDesc.from_formula(patsy_text).rhs_termlist
              if term.factors}
    assert ours == theirs


# -- bounded design matrices ------------------------------------------------------------------

def wide_table(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(38)
    return pd.DataFrame({"y": rng.normal(size=n), "id": pd.array(
        [f"p{i}" for i in range(n)], dtype="str"), "sex": rng.choice(["f", "m"], n),
        "code": np.arange(n) % 700, "x": rng.normal(size=n)})


def test_the_bound_counts_levels_and_multiplies_interactions():
    df = wide_table(1400)
    bound = design_bound(parse_formula("y ~ x + C(sex) + C(code):sex"), df)
    # 1 + 1 (x) + 2 (sex) + 700 × 2 (the interaction, every level of both) = 1404
    assert bound.columns == 1404
    assert bound.widest == "C(code):sex" and bound.widest_columns == 1400
    assert bound.response == 1


def test_a_huge_design_is_refused_before_it_is_built():
    df = wide_table(20_000)
    with pytest.raises(SdcInputError, match=r"up to 40,002 columns, more than 500; the term "
                                             r"'id:sex' alone needs 40,000"):
        check_design(parse_formula("y ~ x + id:sex"), df)
    with pytest.raises(SdcInputError, match="analysis 'm': the model would have up to"):
        estimate(Analysis("m", "ols", formula="y ~ x + id:sex"), df)
    with pytest.raises(SdcInputError, match="analysis 'm': the model would have up to"):
        estimate(Analysis("m", "logit", formula="y ~ center(x) + C(code)*C(sex)"), df)


def test_the_memory_allowance_bounds_rows_times_columns():
    df = wide_table(1000)
    formula = parse_formula("y ~ x + C(sex)")
    # 1,000 rows × (4 columns on the right + 1 response) × 8 bytes
    assert check_design(formula, df, allowance=8 * 1000 * 5).columns == 4
    with pytest.raises(SdcInputError, match=r"would take about 40\.0 kB, more than the 40\.0 kB"
                                            r" a model may use; the term 'C\(sex\)' alone"):
        check_design(formula, df, allowance=8 * 1000 * 5 - 1)


def test_the_allowance_follows_the_memory_budget(monkeypatch):
    df = wide_table(2000)
    monkeypatch.setenv("SDC_MEMORY_BUDGET", "1MB")  # 62,500 bytes for a model
    with pytest.raises(SdcInputError, match="a model may use"):
        estimate(Analysis("m", "ols", formula="y ~ center(x) + C(sex)"), df)
    monkeypatch.setenv("SDC_MEMORY_BUDGET", "1GB")
    assert len(estimate(Analysis("m", "ols", formula="y ~ center(x) + C(sex)"), df).terms) == 3


def test_a_text_response_is_refused_as_not_one_column():
    df = wide_table(5000)
    with pytest.raises(SdcInputError, match="one column of numbers"):
        estimate(Analysis("m", "ols", formula="id ~ x"), df)


def test_columns_up_to_the_limit_are_fitted():
    n = 4 * MAX_COLUMNS
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"y": rng.normal(size=n), "k": np.arange(n) % (MAX_COLUMNS - 1)})
    assert len(estimate(Analysis("m", "ols", formula="y ~ C(k)"), df).terms) == MAX_COLUMNS - 1


def test_a_propensity_model_past_the_allowance_is_refused(monkeypatch):
    from sdc_core.utility.fidelity import pmse

    df = wide_table(4000).drop(columns="id")
    protected = df.assign(x=df["x"] + 0.1)
    assert pmse(df, protected, ["sex", "x"]).k == 3
    monkeypatch.setenv("SDC_MEMORY_BUDGET", "1MB")  # 62,500 bytes for a model
    with pytest.raises(SdcInputError, match=r"propensity model's design would take about "
                                             r"192\.0 kB \(8,000 distinct rows × 3 parameters\)"):
        pmse(df, protected, ["sex", "x"])


def test_a_table_analysis_of_too_many_cells_is_refused():
    from sdc_core.utility.analysis import MAX_TABLE_CELLS

    df = wide_table(MAX_TABLE_CELLS + 1)
    with pytest.raises(SdcInputError, match=r"analysis 't': the table has 10,001 cells, more "
                                             r"than 10,000"):
        estimate(Analysis("t", "table", columns=("id", "sex")), df)
    assert len(estimate(Analysis("t", "table", columns=("code", "sex")), df).terms) == 1400


@pytest.mark.parametrize("formula", ["y ~ exp(x * 1000)", "y ~ I(x / 0)",
                                     "y ~ center(exp(x * 1000))", "I(y / 0) ~ x"])
def test_an_infinite_term_is_named_not_read_as_collinear(formula):
    df = wide_table(50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(SdcInputError, match="is infinite on some rows"):
            estimate(Analysis("m", "ols", formula=formula), df)
