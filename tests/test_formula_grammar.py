"""Formulas generated from the formula language's grammar (docs/formulas.md, "Grammar"), its
numbers written every way a visitor may write one (issue 51): each formula is either refused by
the parser in one line or handed on as text that Python and patsy read, and estimated on a
small table without an internal error.

Before issue 51 the parser read ``I(x + 01)``, ``I(x ** 04)``, ``power(x, 04)`` and
``Treatment(reference=01)`` as numbers; Python does not (a whole number does not begin with 0),
so patsy's SyntaxError escaped as an internal error. The number rule is checked against
Python's own reading of a literal (``ast.literal_eval`` of the test's own text, which reads and
runs nothing): a number is accepted exactly when Python reads it as one decimal number of at
most 1e15."""

from __future__ import annotations

import ast
import math
import warnings

import numpy as np
import pandas as pd
import patsy
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sdc_core.errors import SdcInputError
from sdc_core.utility.analysis import Analysis, estimate
from sdc_core.utility.formula import MAX_POWER, Binary, Number, parse_formula

# -- numbers ----------------------------------------------------------------------------------

#: Pieces of a number as it may be typed: digits of 0-9 and of other scripts (Arabic-Indic,
#: fullwidth, Devanagari), a superscript, the point, exponents, underscores, prefixes of other
#: bases and the imaginary unit.
PIECES = ["0", "0", "1", "4", "7", "9", "_", ".", "e", "E", "e+", "e-", "j", "x", "o", "b",
          "\u0661", "\uff15", "\u0967", "\u00b2"]


@st.composite
def decimal(draw) -> str:
    """A decimal number in Python's forms, leading zeros and underscores included: ``1``,
    ``007``, ``1_000``, ``0.5``, ``.5``, ``5.``, ``1e-05``, ``01E+3``."""
    def digits() -> str:
        run = draw(st.text("0123456789", min_size=1, max_size=5))
        zeros = "0" * draw(st.integers(0, 3))
        under = draw(st.booleans()) and len(run) > 1
        return zeros + (run[0] + "_" + run[1:] if under else run)

    whole = digits()
    form = draw(st.sampled_from(["int", "point", "lead", "trail", "exp", "point-exp"]))
    text = {"int": whole, "point": f"{whole}.{digits()}", "lead": f".{digits()}",
            "trail": f"{whole}.", "exp": whole, "point-exp": f"{whole}.{digits()}"}[form]
    if form.endswith("exp"):
        text += draw(st.sampled_from(["e", "E"])) + draw(st.sampled_from(["", "+", "-"])) \
            + digits()
    return text


HOSTILE_NUMBERS = ["01", "04", "00", "0_0", "0_1", "1__0", "1_", "1e", "1e+", "1.e5", "1..2",
                   "0x1f", "0X1F", "0o17", "0b101", "1j", "2.5J", "1e400", "1e-400",
                   "9" * 30, "0" * 300 + "1", "1" + "0" * 15, "1" + "0" * 16, "1e15", "1e16",
                   "\u0661", "1\u0661", "\uff11\uff10", "\u00b2", ".\u0661", "1_000.000_1"]


def number_texts() -> st.SearchStrategy[str]:
    """What may stand where a number goes: Python's decimal forms, the hostile list, and runs
    of :data:`PIECES` (no sign: a sign is an operator of the grammar)."""
    pieces = st.lists(st.sampled_from(PIECES), min_size=1, max_size=7).map("".join).filter(
        lambda s: not (s[0].isalpha() or s[0] == "_"))  # a letter begins a column's name
    return st.one_of(decimal(), st.sampled_from(HOSTILE_NUMBERS), pieces)


def python_number(text: str) -> float | None:
    """The value Python reads from ``text`` as one decimal number literal of at most 1e15, or
    None (not such a literal: another base, complex, a syntax error, too large)."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or text[:2].lower() in ("0x", "0o", "0b"):
        return None
    value = float(value)
    return value if math.isfinite(value) and abs(value) <= 1e15 else None


def one_line(err: SdcInputError) -> str:
    message = str(err)
    assert message and "\n" not in message and len(message) < 400, message
    assert "Traceback" not in message and "SyntaxError" not in message, message
    return message


@settings(max_examples=400, deadline=None)
@given(number_texts())
@example("01")
@example("04")
@example("0x1f")
@example("1_000")
@example("\u0661")
def test_a_number_is_read_exactly_when_python_reads_it(text):
    want = python_number(text)
    try:
        formula = parse_formula(f"y ~ I(x + {text})")
    except SdcInputError as err:
        message = one_line(err)
        assert want is None, f"{text!r} is Python's {want!r}, refused: {message}"
        return
    assert want is not None, f"{text!r} accepted, Python does not read it as a number"
    ((factor,),) = formula.terms
    assert isinstance(factor.expr, Binary) and isinstance(factor.expr.right, Number)
    assert factor.expr.right.value == want
    ast.parse(formula.code.split(" ~ ")[1], mode="eval")


@pytest.mark.parametrize(("text", "words"), [
    ("y ~ I(x + 01)", r"refused at '01' \(character 11\): a whole number does not begin with "
                      r"0 \(write 1\)"),
    ("y ~ I(x ** 04)", "refused at '04'.*write 4"),
    ("y ~ power(x, 04)", "refused at '04'.*write 4"),
    ("y ~ C(g, Treatment(reference=01))", "refused at '01'.*write 1"),
    ("y ~ C(g, Treatment(-007))", "refused at '007'.*write 7"),
    ("y ~ I(x + 0x1f)", "refused at '0x1f'.*decimal"),
    ("y ~ I(x * 1j)", "refused at '1j'.*complex"),
    ("y ~ I(x + \u0661)", "refused at '\u0661'.*digits 0 to 9"),
    ("y ~ I(x + 1\uff10)", "refused at '1\uff10'.*digits 0 to 9"),
    ("y ~ I(x + \u00b2)", "refused at '\u00b2'.*not a name"),
    ("y ~ x\u00b2", "refused at 'x\u00b2'.*not a name"),
    ("y ~ I(x + 1__0)", "refused at '1__0'.*not a number"),
    ("y ~ I(x + 1e)", "refused at '1e'.*not a number"),
])
def test_numbers_python_does_not_read_are_refused_naming_the_token(text, words):
    with pytest.raises(SdcInputError, match=words) as err:
        parse_formula(text)
    one_line(err.value)


@pytest.mark.parametrize(("text", "code"), [
    ("y ~ I(x + 1_000)", "y ~ I(x + 1_000)"), ("y ~ I(x * 00)", "y ~ I(x * 00)"),
    ("y ~ I(x * 01.5e-01)", "y ~ I(x * 01.5e-01)"), ("y ~ I(x / 5.)", "y ~ I(x / 5.)"),
    ("y ~ C(h, Treatment(0_0))", "y ~ C(h, Treatment(0_0))"),
])
def test_numbers_python_reads_are_written_out_as_typed(text, code):
    assert parse_formula(text).code == code


# -- formulas from the grammar -----------------------------------------------------------------

#: Columns of :func:`small_table` that hold numbers, and the others
NUMERIC = ["x", "z", "`w v`", 'Q("w v")']
CATEGORICAL = ["g", "h"]
FUNCTIONS = ["log", "log1p", "log2", "log10", "exp", "sqrt", "abs", "square", "center",
             "standardize", "scale", "np.log", "np.sqrt", "np.abs", "np.exp"]
SPACE = st.sampled_from(["", " "])


@st.composite
def arith(draw, depth: int = 0) -> str:
    """``arith`` of the grammar: numbers, columns, functions, signs, + - * / and powers."""
    kinds = ["number", "column"] + (["call", "power-call", "paren", "sign", "binary", "power"]
                                    if depth < 3 else [])
    kind = draw(st.sampled_from(kinds))
    s = draw(SPACE)
    if kind == "number":
        return draw(number_texts())
    if kind == "column":
        return draw(st.sampled_from(NUMERIC))
    if kind == "call":
        return f"{draw(st.sampled_from(FUNCTIONS))}({draw(arith(depth + 1))})"
    if kind == "power-call":
        return f"{draw(st.sampled_from(['power', 'np.power']))}({draw(arith(depth + 1))},{s}" \
               f"{draw(powers())})"
    if kind == "paren":
        return f"({draw(arith(depth + 1))})"
    if kind == "sign":
        return draw(st.sampled_from(["-", "+"])) + draw(arith(depth + 1))
    if kind == "power":
        return f"{draw(st.sampled_from(NUMERIC))}{s}**{s}{draw(powers())}"
    op = draw(st.sampled_from(["+", "-", "*", "/"]))
    return f"{draw(arith(depth + 1))}{s}{op}{s}{draw(arith(depth + 1))}"


def powers() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from([str(k) for k in range(1, MAX_POWER + 1)]),
                     number_texts())


def levels() -> st.SearchStrategy[str]:
    """A reference level: a number (maybe signed), a quoted text, True or False."""
    return st.one_of(number_texts(), number_texts().map(lambda t: "-" + t),
                     st.sampled_from(['"g1"', "'g0'", '"none"', "True", "False"]))


@st.composite
def factor(draw) -> str:
    kind = draw(st.sampled_from(["column", "C", "C-ref", "I", "call"]))
    if kind == "column":
        return draw(st.sampled_from(NUMERIC + CATEGORICAL))
    if kind == "C":
        return f"C({draw(st.sampled_from(CATEGORICAL))})"
    if kind == "C-ref":
        named = draw(st.sampled_from(["", "reference="]))
        return f"C({draw(st.sampled_from(CATEGORICAL))}, Treatment({named}{draw(levels())}))"
    if kind == "I":
        return f"I({draw(arith())})"
    return f"{draw(st.sampled_from(FUNCTIONS))}({draw(arith(1))})"


@st.composite
def terms(draw, depth: int = 0) -> str:
    """``terms`` of the grammar: factors joined by + - * / : with parentheses, 0 and 1, and
    now and then a number that is not 0 or 1."""
    kind = draw(st.sampled_from(["factor", "factor", "constant"]
                                + (["join", "join", "paren"] if depth < 2 else [])))
    if kind == "factor":
        return draw(factor())
    if kind == "constant":
        return draw(st.one_of(st.sampled_from(["0", "1", "-1"]), number_texts()))
    if kind == "paren":
        return f"({draw(terms(depth + 1))})"
    s = draw(SPACE)
    op = draw(st.sampled_from(["+", "+", "-", "*", "/", ":"]))
    return f"{draw(terms(depth + 1))}{s}{op}{s}{draw(terms(depth + 1))}"


@st.composite
def formulas(draw) -> str:
    response = draw(st.sampled_from(["y", "log(y)", "np.log(y)", "sqrt(y)"]) | st.builds(
        lambda a: f"I(y + {a})", arith(2)))
    return f"{response} ~ {draw(terms())}"


def small_table(n: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(51)
    x = rng.normal(5, 2, n).round(1)
    return pd.DataFrame({
        "y": np.exp(0.5 + 0.1 * x + rng.normal(0, 0.3, n)), "x": x,
        "z": rng.integers(0, 6, n), "g": pd.array(rng.choice(["g0", "g1", "g2"], n),
                                                   dtype="str"),
        "h": rng.integers(1, 4, n), "w v": rng.normal(0, 1, n)})


TABLE = small_table()


@settings(max_examples=300, deadline=None)
@given(formulas())
@example("y ~ I(x + 01)")
@example("y ~ I(x ** 04)")
@example("y ~ power(x, 04)")
@example("y ~ C(h, Treatment(reference=01))")
@example("y ~ I(x + 1_0) + C(h, Treatment(1_0))")
def test_a_formula_of_the_grammar_is_estimated_or_refused_by_the_parser(text):
    """Refused by the parser in one line; or handed on as code Python's grammar and patsy's
    formula reader accept (both read only), and estimated, or refused by the estimate in one
    line (collinear terms, an infinite term, a level the data lacks), never an internal
    error."""
    try:
        formula = parse_formula(text)
    except SdcInputError as err:
        one_line(err)
        return
    for part in (formula.response, *(f for term in formula.terms for f in term)):
        ast.parse(part.code, mode="eval")
    patsy.ModelDesc.from_formula(formula.code)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = estimate(Analysis("m", "ols", formula=text), TABLE)
        except SdcInputError as err:
            one_line(err)
            return
    assert len(result.terms) >= 1
