"""Model formulas: a closed language of the project's own, parsed before anything is evaluated
(docs/formulas.md holds the grammar).

A formula such as ``np.log(income) ~ age + C(sex) + I(age ** 2)`` is read by
:func:`parse_formula` with a tokenizer and a recursive-descent parser written here: nothing of
the text is ever handed to Python's ``eval`` as the visitor wrote it. What the parser accepts:

- **column names**: an identifier (``age``), or a quoted name for any other text
  (```monthly income``` or ``Q("monthly income")``);
- **terms** joined as in Wilkinson–Rogers notation: ``a + b``, ``a - b`` (leave a term out),
  ``a:b`` (interaction), ``a*b`` (= a + b + a:b), ``a/b`` (= a + a:b), parentheses, ``0`` or
  ``-1`` (no intercept) and ``1``;
- **factors**: a column, ``C(column)`` (categorical) with an optional reference level as a
  literal (``C(race, Treatment("white"))`` or ``Treatment(reference=2)``), ``I(arithmetic)``,
  or one of the elementwise functions of :data:`FUNCTIONS` of an arithmetic expression;
- **arithmetic** inside ``I(…)`` and function arguments: columns, numbers (decimal, as Python
  writes them: :data:`_NUMBER`; ``01`` or ``0x1f`` is refused, not handed on), ``+ - * /``,
  unary minus, parentheses, ``x ** k`` for a whole number k from 1 to :data:`MAX_POWER`, and
  the elementwise functions.

Anything else — attribute access other than the ``np.`` aliases, subscripts, calls of
anything not listed, keywords, strings outside a reference level or a quoted name, lambdas,
comprehensions, names that only normalise (NFKC) to an allowed one — is refused with one line
that names the offending token. The parsed formula is then written out again by the parser
(:attr:`Formula.code`): every column a plain identifier or ``Q("…")``, every function one of
the list, and patsy builds the design matrix from that text in a namespace that holds only
the allowed functions (:data:`NAMESPACE`, where ``np`` is a namespace of the listed functions,
not numpy). Term names are patsy's, as before (``C(treat)[T.1]``).

:func:`design_bound` computes the size of the design matrix from the parsed formula and the
columns' level counts before it is built: a term has Π over its factors of the levels of a
categorical factor (1 for a numeric one) columns, and the matrix rows × columns × 8 bytes.
:func:`check_design` refuses a model of more than :data:`MAX_COLUMNS` columns or whose matrix
would take more than :func:`design_allowance`, naming the term that needs the most.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import keyword
import math
import re
import types
import unicodedata
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sdc_core.data.decoded import budget, size_text
from sdc_core.errors import SdcInputError

#: The longest formula read, in characters.
MAX_LENGTH = 2000
#: The most tokens a formula may have (names, numbers, operators, parentheses): a chain of
#: operators is a tree as deep as it is long, for this parser and for patsy's.
MAX_TOKENS = 400
#: The deepest nesting of parentheses and calls.
MAX_DEPTH = 20
#: The most terms a formula may expand to (``a*b*c`` is 7 terms).
MAX_TERMS = 200
#: The highest power ``x ** k`` (k a whole number from 1 to this).
MAX_POWER = 4
#: The most columns a model's design matrix may have.
MAX_COLUMNS = 500
#: The share of the memory budget one design matrix may take: a fit holds four to six times
#: its matrix at its peak (tracemalloc, 20,000 rows × 202 columns: 4.0 for statsmodels' OLS,
#: 4.1 for the logit, 6.0 for the OLS on distinct rows), so a fit stays within 3/8 of it.
DESIGN_SHARE = 16

#: The elementwise functions a formula may call, by name, with their number of arguments and
#: whether they take one row's values alone (``center`` and ``standardize`` read the column).
FUNCTIONS: dict[str, tuple[int, bool]] = {
    "log": (1, True), "log1p": (1, True), "log2": (1, True), "log10": (1, True),
    "exp": (1, True), "sqrt": (1, True), "abs": (1, True), "square": (1, True),
    "power": (2, True), "center": (1, False), "standardize": (1, False), "scale": (1, False),
}
#: The functions that may also be written ``np.<name>``.
NUMPY_ALIASES = frozenset({"log", "log1p", "log2", "log10", "exp", "sqrt", "abs", "square",
                           "power"})


def _stateful() -> dict[str, Any]:
    import patsy

    return {"center": patsy.center, "standardize": patsy.standardize, "scale": patsy.scale}


_NUMPY = {"log": np.log, "log1p": np.log1p, "log2": np.log2, "log10": np.log10, "exp": np.exp,
          "sqrt": np.sqrt, "abs": np.abs, "square": np.square, "power": np.power}

#: Names the re-written code calls besides the functions: never used for a column as a bare
#: name (such a column is written ``Q("…")``).
_CALLED = frozenset({"C", "I", "Q", "Treatment", "np", *FUNCTIONS})


def namespace(categorical: Callable[..., Any]) -> dict[str, Any]:
    """What the re-written code may name: the listed functions (``np`` a namespace of them
    alone), ``C`` as ``categorical``, and patsy's ``I``, ``Q`` and ``Treatment``."""
    import patsy.builtins

    return {**_NUMPY, **_stateful(), "np": types.SimpleNamespace(**_NUMPY), "C": categorical,
            "I": patsy.builtins.I, "Q": patsy.builtins.Q, "Treatment": patsy.builtins.Treatment}


# -- the parsed tree ------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    """A column named in a formula; ``quoted`` the string token of ``Q("…")`` as written."""

    name: str
    quoted: str | None = None


@dataclass(frozen=True)
class Number:
    value: float
    text: str


@dataclass(frozen=True)
class Call:
    """An elementwise function (``written`` as in the formula: ``log`` or ``np.log``)."""

    function: str
    written: str
    args: tuple[Arith, ...]


@dataclass(frozen=True)
class Unary:
    op: str
    arg: Arith


@dataclass(frozen=True)
class Binary:
    op: str
    left: Arith
    right: Arith


Arith = Column | Number | Call | Unary | Binary


@dataclass(frozen=True)
class Factor:
    """One factor of a term: a column, ``C(column[, reference])``, ``I(arith)`` or a function
    call; ``code`` is how it is written out for patsy (its name in term names)."""

    kind: str  # "column", "C", "I" or "call"
    expr: Arith
    reference: str | None = None  # Treatment's argument as written: 2, "a" or reference="a"

    @property
    def code(self) -> str:
        if self.kind == "C":
            inner = _arith_code(self.expr)
            ref = "" if self.reference is None else f", Treatment({self.reference})"
            return f"C({inner}{ref})"
        if self.kind == "I":
            return f"I({_arith_code(self.expr)})"
        return _arith_code(self.expr)

    @property
    def columns(self) -> list[str]:
        return [c.name for c in _columns(self.expr)]


@dataclass(frozen=True)
class Node:
    """A formula-level operation: ``+ - * / :`` (binary), ``neg``/``pos`` (unary)."""

    op: str
    args: tuple[Formulaic, ...]


@dataclass(frozen=True)
class Constant:
    """``0`` or ``1`` at the formula level (the intercept)."""

    value: int


Formulaic = Node | Factor | Constant


@dataclass(frozen=True)
class Formula:
    """A parsed formula: the response factor, the right-hand side's tree and its terms (each
    a tuple of factors, in patsy's expansion, the intercept left out), the columns read (in
    order of appearance) and the text written out for patsy."""

    text: str
    response: Factor
    rhs: Formulaic
    terms: tuple[tuple[Factor, ...], ...]

    @property
    def code(self) -> str:
        return f"{self.response.code} ~ {_formula_code(self.rhs)}"

    @property
    def columns(self) -> list[str]:
        found = dict.fromkeys(self.response.columns)
        for factor in _factors(self.rhs):
            found |= dict.fromkeys(factor.columns)
        return list(found)

    @property
    def row_by_row(self) -> bool:
        """Whether every function works value by value (not ``center`` and the like)."""
        return all(FUNCTIONS[c.function][1] for f in (self.response, *_factors(self.rhs))
                   for c in _calls(f.expr))


# -- tokens ---------------------------------------------------------------------------------

#: A number token is the whole run a number begins (a digit of any script, or a point and a
#: digit) up to what cannot continue one: ``0x1f``, ``1j``, ``1__0`` and ``1\u0661`` are one
#: token each, checked against :data:`_NUMBER` and refused whole.
_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<number>(?:\d|\.\d)(?:[eE][+-]|[\w.])*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<backtick>`[^`\n]*`)
  | (?P<name>[^\W\d]\w*)
  | (?P<op>\*\*|[~+\-*/:(),=.])
""", re.VERBOSE)

_DIGITS = r"[0-9](?:_?[0-9])*"
_EXPONENT = rf"[eE][+-]?{_DIGITS}"
#: A number as Python writes a decimal literal, the form Python (and so patsy) reads: digits
#: 0-9 with single underscores between them, a whole number without leading zeros (``0``,
#: ``00`` and ``0_0`` are zero), a fraction and an exponent (where leading zeros are allowed).
_NUMBER = re.compile(rf"""
    (?:{_DIGITS})?\.{_DIGITS}(?:{_EXPONENT})?     # 1.5, .5, 01.5e-3
  | {_DIGITS}\.(?:{_EXPONENT})?                   # 5., 5.e3
  | {_DIGITS}{_EXPONENT}                          # 1e5, 01E+05
  | [1-9](?:_?[0-9])* | 0(?:_?0)*                 # 10, 1_000, 0, 00
""", re.VERBOSE)


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    at: int


def _tokens(text: str) -> list[Token]:
    out, at = [], 0
    while at < len(text):
        m = _TOKEN.match(text, at)
        if m is None:
            raise _refuse(text, Token("char", text[at], at), "this character is not part of a "
                          "formula")
        token = Token(m.lastgroup or "", m.group(), at)
        if token.kind == "number" and not _NUMBER.fullmatch(token.text):
            raise _refuse(text, token, _not_a_number(token.text))
        if token.kind == "name" and not token.text.isidentifier():
            raise _refuse(text, token, "not a name (letters, digits and '_', not beginning "
                          "with a digit); quote a column of another name as `…`")
        if token.kind != "space":
            out.append(token)
        at = m.end()
        if len(out) > MAX_TOKENS:
            raise SdcInputError(f"the formula has more than {MAX_TOKENS} tokens (names, "
                                "numbers, operators and parentheses)")
    out.append(Token("end", "", len(text)))
    return out


def _not_a_number(text: str) -> str:
    """Why a number token is not one Python reads (:data:`_NUMBER`)."""
    if not text.isascii():
        return "a number is written with the digits 0 to 9"
    if text[:2].lower() in ("0x", "0o", "0b"):
        return "numbers are decimal (no 0x, 0o or 0b)"
    if text[-1] in "jJ" and _NUMBER.fullmatch(text[:-1]):
        return "complex numbers are not part of the formula language"
    whole = text.lstrip("0_")
    if re.fullmatch(r"0[0-9_]*", text) and _NUMBER.fullmatch(whole):
        shown = whole if len(whole) <= 40 else whole[:39] + "…"
        return f"a whole number does not begin with 0 (write {shown})"
    return ("not a number (digits 0 to 9, a '.', an exponent such as e-3, a single '_' "
            "between digits)")


def _show(token: str) -> str:
    """A token for a message: at most 40 characters, control characters escaped."""
    shown = token if len(token) <= 40 else token[:39] + "…"
    return repr(shown) if shown else "the end of the formula"


def _refuse(text: str, token: Token, why: str) -> SdcInputError:
    where = f"at {_show(token.text)}" if token.kind != "end" else "at the end"
    return SdcInputError(f"the formula is refused {where} (character {token.at + 1}): {why}")


# -- the parser -----------------------------------------------------------------------------


def _node(op: str, left: Formulaic, right: Formulaic) -> Node:
    return Node(op, (left, right))


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.i = 0
        self.depth = 0

    # helpers
    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def peek(self, k: int = 1) -> Token:
        return self.tokens[min(self.i + k, len(self.tokens) - 1)]

    def take(self) -> Token:
        t = self.tok
        self.i += 1
        return t

    def refuse(self, why: str, token: Token | None = None) -> SdcInputError:
        return _refuse(self.text, token or self.tok, why)

    def expect(self, text: str, why: str) -> Token:
        if self.tok.text != text or self.tok.kind not in ("op",):
            raise self.refuse(why)
        return self.take()

    @contextlib.contextmanager
    def nested(self) -> Iterator[None]:
        """One level deeper (a parenthesis, a call, a sign) for what is read inside."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.refuse(f"nested more than {MAX_DEPTH} deep")
        yield
        self.depth -= 1

    def chain(self, operand: Callable[[], Any], ops: tuple[str, ...],
              make: Callable[[str, Any, Any], Any]) -> Any:
        """``operand (op operand)*`` for the operators ``ops``, joined from the left."""
        left = operand()
        while self.tok.kind == "op" and self.tok.text in ops:
            op = self.take().text
            left = make(op, left, operand())
        return left

    # the formula level
    def formula(self) -> tuple[Factor, Formulaic]:
        if not any(t.kind == "op" and t.text == "~" for t in self.tokens):
            raise SdcInputError("the formula has no response (y ~ …)")
        if self.tok.text == "~":
            raise self.refuse("the formula has no response (y ~ …)")
        response = self.factor(what="the response")
        if self.tok.text != "~":
            raise self.refuse("expected '~' after the response (one column or function of "
                              "columns, y ~ …)")
        self.take()
        rhs = self.sum()
        if self.tok.kind != "end":
            raise self.refuse("expected '+', '-', '*', '/', ':' or the end")
        return response, rhs

    def sum(self) -> Formulaic:
        return self.chain(self.unary, ("+", "-"), _node)

    def unary(self) -> Formulaic:
        if self.tok.kind == "op" and self.tok.text in ("+", "-"):
            op = self.take().text
            with self.nested():
                return Node("neg" if op == "-" else "pos", (self.unary(),))
        return self.product()

    def product(self) -> Formulaic:
        return self.chain(self.interaction, ("*", "/"), _node)

    def interaction(self) -> Formulaic:
        return self.chain(self.atom, (":",), _node)

    def atom(self) -> Formulaic:
        t = self.tok
        if t.text == "(" and t.kind == "op":
            self.take()
            with self.nested():
                inner = self.sum()
            self.expect(")", "expected ')'")
            return inner
        if t.kind == "number":
            if t.text not in ("0", "1"):
                raise self.refuse("a number among the terms must be 0 or 1 (the intercept); "
                                  "write arithmetic inside I(…)")
            self.take()
            return Constant(int(t.text))
        if t.text == "**":
            raise self.refuse("powers of terms are not part of the language; write I(x ** 2)")
        return self.factor()

    def factor(self, what: str = "a term") -> Factor:
        t = self.tok
        if t.kind == "name" and self.peek().text == "(" and t.text in ("C", "I"):
            self.take()
            self.take()
            with self.nested():
                if t.text == "I":
                    expr = self.arith()
                    self.expect(")", "expected ')' to close I(")
                    return Factor("I", expr)
                column = self.column(required="C(…) takes a column")
                reference = None
                if self.tok.text == ",":
                    self.take()
                    reference = self.reference()
                self.expect(")", "expected ')' to close C(; C takes a column and an optional "
                            "Treatment(reference level)")
                return Factor("C", column, reference)
        if t.kind in ("name", "string", "backtick"):
            expr = self.operand()
            if self.tok.kind == "op" and self.tok.text == "**":
                raise self.refuse("powers are written inside I(…), as I(x ** 2)")
            return Factor("call" if isinstance(expr, Call) else "column", expr)
        raise self.refuse(f"expected {what}: a column, C(…), I(…) or a function such as "
                          "log(…)")

    def reference(self) -> str:
        t = self.tok
        if not (t.kind == "name" and t.text == "Treatment" and self.peek().text == "("):
            raise self.refuse("the second argument of C is Treatment(reference level), with "
                              "the level a number or a quoted text")
        self.take()
        self.take()
        named = ""
        if self.tok.kind == "name" and self.tok.text == "reference" and self.peek().text == "=":
            self.take()
            self.take()
            named = "reference="
        value = self.literal()
        self.expect(")", "expected ')' to close Treatment(")
        return named + value

    def literal(self) -> str:
        """A reference level: a number (with an optional minus), a quoted text, True or False,
        as written."""
        t = self.tok
        sign = ""
        if t.kind == "op" and t.text == "-" and self.peek().kind == "number":
            sign = self.take().text
            t = self.tok
        if t.kind == "number":
            self.take()
            _finite(self, t)
            return sign + t.text
        if t.kind == "string" and not sign:
            self.take()
            _string(self, t)
            return t.text
        if t.kind == "name" and t.text in ("True", "False") and not sign:
            self.take()
            return t.text
        raise self.refuse("a reference level is a number or a quoted text")

    def column(self, required: str) -> Column:
        t = self.tok
        if t.kind == "backtick":
            self.take()
            name = t.text[1:-1]
            if not name or not name.isprintable():
                raise self.refuse("a quoted name must be printable text, not empty", t)
            return Column(name)
        if t.kind == "name" and t.text == "Q" and self.peek().text == "(":
            self.take()
            self.take()
            s = self.tok
            if s.kind != "string":
                raise self.refuse('Q takes a quoted column name, as Q("monthly income")')
            self.take()
            name = _string(self, s)
            if not name or not name.isprintable():
                raise self.refuse("a quoted name must be printable text, not empty", s)
            self.expect(")", "expected ')' to close Q(")
            return Column(name, s.text)
        if t.kind == "name" and self.peek().text not in ("(", "."):
            if keyword.iskeyword(t.text) or keyword.issoftkeyword(t.text):
                raise self.refuse("a Python keyword is not a column name here; quote a column "
                                  "of that name as `name`")
            if t.text.startswith("__"):
                raise self.refuse("a name that begins with '__' is not a column name here; "
                                  "quote a column of that name as `name`")
            self.take()
            return Column(t.text)
        if t.kind == "string":
            raise self.refuse('text is allowed only as a reference level or a quoted column '
                              'name, Q("…") or `…`')
        raise self.refuse(required)

    # arithmetic
    def arith(self) -> Arith:
        return self.chain(self.arith_term, ("+", "-"), Binary)

    def arith_term(self) -> Arith:
        return self.chain(self.arith_unary, ("*", "/"), Binary)

    def arith_unary(self) -> Arith:
        if self.tok.kind == "op" and self.tok.text in ("+", "-"):
            op = self.take().text
            with self.nested():
                return Unary(op, self.arith_unary())
        base = self.arith_atom()
        if self.tok.kind == "op" and self.tok.text == "**":
            self.take()
            return Binary("**", base, self.power())
        return base

    def power(self) -> Number:
        t = self.tok
        if t.kind != "number" or not t.text.isdigit() or not 1 <= int(t.text) <= MAX_POWER:
            raise self.refuse(f"a power is a whole number from 1 to {MAX_POWER}")
        self.take()
        return Number(float(t.text), t.text)

    def arith_atom(self) -> Arith:
        t = self.tok
        if t.kind == "op" and t.text == "(":
            self.take()
            with self.nested():
                inner = self.arith()
            self.expect(")", "expected ')'")
            return inner
        if t.kind == "number":
            self.take()
            return Number(_finite(self, t), t.text)
        if t.kind == "name" and t.text in ("C", "I") and self.peek().text == "(":
            raise self.refuse(f"{t.text}(…) stands for a whole term, not inside arithmetic")
        return self.operand()

    def operand(self) -> Arith:
        """A column or a call of a listed function."""
        t = self.tok
        if t.kind == "name" and self.peek().text == ".":
            return self.aliased()
        if t.kind == "name" and self.peek().text == "(" and t.text != "Q":
            if t.text not in FUNCTIONS:
                raise self.refuse(f"{t.text!r} is not a function of the formula language "
                                  f"(allowed: {', '.join(FUNCTIONS)})")
            self.take()
            return self.call(t.text, t.text)
        return self.column(required="expected a column, a number or a function")

    def aliased(self) -> Call:
        t = self.take()
        dot = self.take()
        attr = self.tok
        if t.text != "np" or attr.kind != "name" or attr.text not in NUMPY_ALIASES \
                or self.peek().text != "(":
            raise self.refuse("attribute access is not part of the formula language (only "
                              f"np.{', np.'.join(sorted(NUMPY_ALIASES))})",
                              attr if attr.kind == "name" else dot)
        self.take()
        return self.call(attr.text, f"np.{attr.text}")

    def call(self, function: str, written: str) -> Call:
        self.expect("(", "expected '('")
        arity = FUNCTIONS[function][0]
        with self.nested():
            args = [self.arith()]
            if arity == 2:
                self.expect(",", f"{written} takes two arguments")
                args.append(self.power())
            if self.tok.text == ",":
                raise self.refuse(f"{written} takes {arity} argument{'s' if arity > 1 else ''}")
            self.expect(")", f"expected ')' to close {written}(")
        return Call(function, written, tuple(args))


def _finite(parser: _Parser, t: Token) -> float:
    value = float(t.text)
    if not math.isfinite(value) or abs(value) > 1e15:
        raise parser.refuse("a number of at most 1e15", t)
    return value


def _string(parser: _Parser, t: Token) -> str:
    """The text of a string token (a plain Python string literal, read as a literal)."""
    try:
        value = ast.literal_eval(t.text)
    except (ValueError, SyntaxError):
        raise parser.refuse("a quoted text that cannot be read", t) from None
    if not isinstance(value, str):
        raise parser.refuse("a quoted text that cannot be read", t)
    return value


# -- expansion (patsy's rules) --------------------------------------------------------------

@dataclass(frozen=True)
class _Expr:
    intercept: bool
    removed: bool
    terms: tuple[tuple[Factor, ...], ...]


def _term(factors: tuple[Factor, ...]) -> tuple[Factor, ...]:
    return tuple(dict.fromkeys(factors))


def _unique(terms: list[tuple[Factor, ...]]) -> tuple[tuple[Factor, ...], ...]:
    seen: dict[frozenset[Factor], tuple[Factor, ...]] = {}
    for t in terms:
        seen.setdefault(frozenset(t), t)
    if len(seen) > MAX_TERMS:
        raise SdcInputError(f"the formula expands to more than {MAX_TERMS} terms")
    return tuple(seen.values())


def _interact(a: _Expr, b: _Expr) -> list[tuple[Factor, ...]]:
    if a.intercept or b.intercept:
        raise SdcInputError("the formula interacts the intercept (1) with a term")
    if len(a.terms) * len(b.terms) > MAX_TERMS:
        raise SdcInputError(f"the formula expands to more than {MAX_TERMS} terms")
    return [_term(x + y) for x in a.terms for y in b.terms]


def _expand(node: Formulaic) -> _Expr:
    """The terms of a formula-level tree, as patsy expands them (docs/formulas.md)."""
    if isinstance(node, Factor):
        return _Expr(False, False, ((node,),))
    if isinstance(node, Constant):
        return _Expr(node.value == 1, node.value == 0, ())
    if node.op in ("neg", "pos"):
        (arg,) = node.args
        if node.op == "pos":
            return _expand(arg)
        if isinstance(arg, Constant):
            return _Expr(arg.value == 0, arg.value == 1, ())
        raise SdcInputError("a minus sign before a term needs a term on its left (a - b); "
                            "only -1 and -0 stand alone")
    left, right = node.args
    a = _expand(left)
    if node.op == "+":
        if isinstance(right, Constant) and right.value == 0:
            return _Expr(False, True, a.terms)
        b = _expand(right)
        if b.intercept:
            return _Expr(True, False, _unique([*a.terms, *b.terms]))
        return _Expr(a.intercept, a.removed, _unique([*a.terms, *b.terms]))
    if node.op == "-":
        if isinstance(right, Constant):
            return _Expr(right.value == 0, right.value == 1, a.terms)
        b = _expand(right)
        gone = {frozenset(t) for t in b.terms}
        terms = tuple(t for t in a.terms if frozenset(t) not in gone)
        if b.intercept:
            return _Expr(False, True, terms)
        return _Expr(a.intercept, a.removed, terms)
    b = _expand(right)
    if node.op == ":":
        return _Expr(False, False, _unique(_interact(a, b)))
    if node.op == "*":
        return _Expr(False, False, _unique([*a.terms, *b.terms, *_interact(a, b)]))
    # a / b: a's terms, then all of a's factors interacted with each term of b
    whole = _Expr(False, False, (_term(tuple(f for t in a.terms for f in t)),))
    if a.intercept:
        raise SdcInputError("the formula interacts the intercept (1) with a term")
    return _Expr(False, False, _unique([*a.terms, *_interact(whole, b)]))


# -- writing out ----------------------------------------------------------------------------

_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "unary": 3, "**": 4}


def _plain(name: str) -> bool:
    """Whether a column may be written as a bare name: an identifier Python reads as this very
    name (NFKC-stable), no keyword, no name the code calls, not patsy's reserved ``_`` names."""
    return (name.isidentifier() and unicodedata.normalize("NFKC", name) == name
            and not keyword.iskeyword(name) and not keyword.issoftkeyword(name)
            and name not in _CALLED and name not in ("True", "False", "None")
            and not name.startswith("_"))


def _quote(name: str) -> str:
    if '"' not in name and "\\" not in name and name.isprintable():
        return f'"{name}"'
    return repr(name)


def _arith_code(e: Arith, parent: int = 0, right: bool = False) -> str:
    if isinstance(e, Column):
        if e.quoted is not None:
            return f"Q({e.quoted})"
        return e.name if _plain(e.name) else f"Q({_quote(e.name)})"
    if isinstance(e, Number):
        return e.text
    if isinstance(e, Call):
        return f"{e.written}({', '.join(_arith_code(a) for a in e.args)})"
    if isinstance(e, Unary):
        own = _PRECEDENCE["unary"]
        code = f"{e.op}{_arith_code(e.arg, own)}"
    else:
        own = _PRECEDENCE[e.op]
        if e.op == "**":
            code = f"{_arith_code(e.left, own + 1)} ** {_arith_code(e.right, own)}"
        else:
            code = f"{_arith_code(e.left, own)} {e.op} {_arith_code(e.right, own, True)}"
    return f"({code})" if own < parent or (right and own == parent) else code


def _formula_code(node: Formulaic, parent: int = 0, right: bool = False) -> str:
    if isinstance(node, Factor):
        return node.code
    if isinstance(node, Constant):
        return str(node.value)
    if node.op in ("neg", "pos"):
        own = 1
        code = ("-" if node.op == "neg" else "+") + _formula_code(node.args[0], 2)
    else:
        own = {"+": 1, "-": 1, "*": 2, "/": 2, ":": 3}[node.op]
        code = f"{_formula_code(node.args[0], own)} {node.op} " \
               f"{_formula_code(node.args[1], own, True)}"
    return f"({code})" if own < parent or (right and own == parent) else code


# -- walking --------------------------------------------------------------------------------

def _factors(node: Formulaic) -> list[Factor]:
    if isinstance(node, Factor):
        return [node]
    if isinstance(node, Constant):
        return []
    return [f for a in node.args for f in _factors(a)]


def _columns(e: Arith) -> list[Column]:
    if isinstance(e, Column):
        return [e]
    if isinstance(e, Number):
        return []
    if isinstance(e, Call):
        return [c for a in e.args for c in _columns(a)]
    if isinstance(e, Unary):
        return _columns(e.arg)
    return _columns(e.left) + _columns(e.right)


def _calls(e: Arith) -> list[Call]:
    if isinstance(e, Call):
        return [e, *(c for a in e.args for c in _calls(a))]
    if isinstance(e, Unary):
        return _calls(e.arg)
    if isinstance(e, Binary):
        return _calls(e.left) + _calls(e.right)
    return []


# -- the entry point ------------------------------------------------------------------------


def parse_formula(text: str) -> Formula:
    """The formula ``text`` parsed (module docstring), or an :class:`SdcInputError` of one
    line naming the offending token. Only formulas that parse are cached."""
    if not isinstance(text, str):
        raise SdcInputError(f"a formula must be text such as 'y ~ x', not {type(text).__name__}")
    try:
        return _parse(text)
    except RecursionError:  # the limits keep trees shallow: a backstop, not a path
        raise SdcInputError("the formula is nested too deeply to read") from None


@functools.lru_cache(maxsize=256)
def _parse(text: str) -> Formula:
    if len(text) > MAX_LENGTH:
        raise SdcInputError(f"the formula has {len(text):,} characters, more than the "
                            f"{MAX_LENGTH:,} read")
    parser = _Parser(text)
    response, rhs = parser.formula()
    expanded = _expand(rhs)
    if not expanded.terms and expanded.removed:
        raise SdcInputError("the formula leaves nothing to estimate: no term and no intercept")
    formula = Formula(text, response, rhs, expanded.terms)
    clash = sorted(set(formula.columns) & _names_called(formula))
    if clash:
        raise SdcInputError(f"the column {clash[0]!r} has the name of a function the formula "
                            "calls; rename the column to use both")
    return formula


def _names_called(formula: Formula) -> set[str]:
    """The names the written-out code calls (a column of such a name would hide them)."""
    called: set[str] = set()
    for factor in (formula.response, *_factors(formula.rhs)):
        called |= {"C"} if factor.kind == "C" else {"I"} if factor.kind == "I" else set()
        called |= {"Treatment"} if factor.reference is not None else set()
        called |= {c.written.split(".")[0] for c in _calls(factor.expr)}
        if any(c.quoted is not None or not _plain(c.name) for c in _columns(factor.expr)):
            called.add("Q")  # the column is written Q("…")
    return called


# -- the size of a design matrix ------------------------------------------------------------

def design_allowance() -> int:
    """The most bytes one design matrix may take: 1/:data:`DESIGN_SHARE` of the memory budget
    (``SDC_MEMORY_BUDGET``, else half the machine's memory)."""
    return budget() // DESIGN_SHARE


def _width(factor: Factor, levels: Mapping[str, int], numeric: Mapping[str, bool],
           rows: int) -> int:
    """The columns a factor can take: the levels of a categorical one (``C(x)``, or a column
    that does not hold numbers), 1 for a numeric one; any other function of a column that does
    not hold numbers at most the product of its columns' levels, and at most the rows."""
    cols = factor.columns
    if factor.kind == "C" or (factor.kind == "column" and not numeric[cols[0]]):
        return max(1, levels[cols[0]])
    if all(numeric[c] for c in cols):
        return 1
    return max(1, min(rows, math.prod(levels[c] for c in cols)))


@dataclass(frozen=True)
class DesignBound:
    """At most how many columns the response and the right-hand side take, and the widest
    term with its columns."""

    response: int
    columns: int
    widest: str
    widest_columns: int


def design_bound(formula: Formula, data: pd.DataFrame) -> DesignBound:
    """The columns of the design matrices of ``formula`` on ``data`` (its columns' levels
    counted, missing left out), at most: Σ over terms of Π over factors of the factor's width,
    plus the intercept."""
    from sdc_core.data.columns import is_number

    used = formula.columns
    numeric = {c: is_number(data[c]) for c in used}
    levels = {c: int(data[c].nunique()) for c in used if not numeric[c] or any(
        f.kind == "C" and f.columns == [c] for f in _factors(formula.rhs))}
    levels |= {c: 1 for c in used if c not in levels}
    rows = len(data)
    widths = [math.prod(_width(f, levels, numeric, rows) for f in term)
              for term in formula.terms]
    names = [":".join(f.code for f in term) for term in formula.terms]
    at = int(np.argmax(widths)) if widths else 0
    return DesignBound(_width(formula.response, levels, numeric, rows), 1 + sum(widths),
                       names[at] if names else "1", widths[at] if widths else 1)


def check_design(formula: Formula, data: pd.DataFrame, rows: int | None = None,
                 allowance: int | None = None, bound: DesignBound | None = None
                 ) -> DesignBound:
    """An :class:`SdcInputError` when the model would have more than :data:`MAX_COLUMNS`
    columns or its matrices (``rows`` rows on the right, by default those of ``data``; every
    row of ``data`` for the response) would take more than ``allowance`` bytes (default
    :func:`design_allowance`), naming the widest term; else its :func:`design_bound` (given as
    ``bound`` when it is known: it counts the columns' levels)."""
    bound = design_bound(formula, data) if bound is None else bound
    rows = len(data) if rows is None else rows
    allowance = design_allowance() if allowance is None else allowance
    need = 8 * (rows * bound.columns + len(data) * bound.response)
    widest = f"the term {bound.widest!r} alone needs {bound.widest_columns:,}"
    if bound.response > 1 and bound.response * len(data) * 8 > allowance:
        raise SdcInputError(f"the response {formula.response.code!r} would take "
                            f"{bound.response:,} columns: it must be one column of numbers")
    if bound.columns > MAX_COLUMNS:
        raise SdcInputError(f"the model would have up to {bound.columns:,} columns, more than "
                            f"{MAX_COLUMNS:,}; {widest}: leave it out or recode it")
    if need > allowance:
        raise SdcInputError(f"the model's design matrix would take about {size_text(need)}, "
                            f"more than the {size_text(allowance)} a model may use; {widest}")
    return bound


__all__ = ["FUNCTIONS", "DesignBound", "Formula", "MAX_COLUMNS", "check_design", "design_allowance",
           "design_bound", "namespace", "parse_formula"]
