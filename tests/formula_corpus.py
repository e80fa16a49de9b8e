"""Hostile model formulas (issue 38): what a visitor may type where a formula goes, each meant
to run code, read a file, escape the grammar, crash the parser or take the server's memory.

Before issue 38 patsy evaluated a formula as Python (``I(__import__('os').system(…))`` ran on
the server). Each payload that would run something tries to create the file ``MARKER``
(:func:`Payload.text` puts a test's own path there); a test asserts the file never appears.

A payload is refused at one of these stages (:attr:`Payload.stage`):

- ``parse``: by the formula language's parser (:func:`sdc_core.utility.formula.parse_formula`),
  so already by :func:`~sdc_core.utility.analysis.parse_spec`;
- ``columns``: it parses (a quoted name is a column name, nothing else), and the data has no
  such column (:func:`~sdc_core.utility.analysis.check_columns`);
- ``any``: either of the two (a name the parser may refuse or read as a quoted column);
- ``estimate``: it parses, and estimating it must refuse it.

The payloads are written for the built-in example ACTG 175 (columns ``cd420``, ``age``,
``race``, ``cd40``, ``pidnum`` …). ``BOUNDS`` are formulas whose design matrix would be huge on
:func:`wide_table` (20,000 rows, an identifier-like column ``id`` of distinct values): they
must be refused by the bounds before anything is built.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

PLACEHOLDER = "MARKER"
#: How a missing column is said (the core; a workspace file).
MISSING = "no column|does not have"



@dataclass(frozen=True)
class Payload:
    id: str
    raw: str
    #: a word of the refusal (a regular expression searched in the message)
    words: str = "formula"
    stage: str = "parse"

    def text(self, marker: object) -> str:
        """The formula, its marker the file ``marker``."""
        return self.raw.replace(PLACEHOLDER, str(marker))


def _p(id: str, raw: str, words: str = "formula", stage: str = "parse") -> Payload:
    return Payload(id, raw, words, stage)


SYSTEM = f"__import__('os').system('touch {PLACEHOLDER}')"
OPEN = f"open('{PLACEHOLDER}', 'w')"

CORPUS: list[Payload] = [
    # code in a term, in I(), on the left, inside a function
    _p("import-term", f"cd420 ~ age + {SYSTEM}"),
    _p("import-in-I", f"cd420 ~ I({SYSTEM})"),
    _p("import-in-I-arith", f"cd420 ~ I(age + {SYSTEM})"),
    _p("import-lhs", f"{SYSTEM} ~ age"),
    _p("import-lhs-I", f"I({SYSTEM}) ~ age"),
    _p("import-in-np-log", f"cd420 ~ np.log({SYSTEM})"),
    _p("import-in-log", f"cd420 ~ log(age + {SYSTEM})"),
    _p("import-in-power", f"cd420 ~ power(age, {SYSTEM})"),
    _p("import-in-center", f"cd420 ~ center({SYSTEM})"),
    _p("import-in-C", f"cd420 ~ C({SYSTEM})"),
    _p("import-in-Q", f"cd420 ~ Q({SYSTEM})"),
    _p("subprocess", f"cd420 ~ I(__import__('subprocess').run(['touch', '{PLACEHOLDER}']))"),
    # the reference level of C()
    _p("treatment-import", f"cd420 ~ C(race, Treatment({SYSTEM}))"),
    _p("treatment-open", f"cd420 ~ C(race, Treatment(reference={OPEN}))"),
    _p("treatment-extra-kw", f"cd420 ~ C(race, Treatment(reference=1, contrast={OPEN}))"),
    _p("treatment-expr", "cd420 ~ C(race, Treatment(1 + 1))"),
    _p("treatment-name", "cd420 ~ C(race, Treatment(reference=age))"),
    _p("C-levels-kw", f"cd420 ~ C(race, levels=[{OPEN}])"),
    _p("C-contrast-kw", f"cd420 ~ C(race, contrast={OPEN})"),
    _p("C-third-arg", f"cd420 ~ C(race, Treatment(1), {OPEN})"),
    _p("log-out-kw", f"cd420 ~ np.log(age, out={OPEN})"),
    _p("log-two-args", f"cd420 ~ log(age, {OPEN})"),
    # builtins through attributes of a column
    _p("mro-subclasses", "cd420 ~ age.__class__.__mro__[1].__subclasses__()"),
    _p("mro-in-I", "cd420 ~ I(age.__class__.__base__.__subclasses__())"),
    _p("to-csv", f"cd420 ~ age.to_csv('{PLACEHOLDER}')"),
    _p("to-csv-in-I", f"cd420 ~ I(age.to_csv('{PLACEHOLDER}'))"),
    _p("tofile", f"cd420 ~ I(age.values.tofile('{PLACEHOLDER}'))"),
    _p("to-pickle-lhs", f"cd420.to_pickle('{PLACEHOLDER}') ~ age"),
    _p("quoted-attr", f"cd420 ~ `age`.to_csv('{PLACEHOLDER}')"),
    _p("Q-attr", f"cd420 ~ Q('age').to_csv('{PLACEHOLDER}')"),
    _p("function-globals", f"cd420 ~ log.__globals__['__builtins__']['open']('{PLACEHOLDER}')"),
    _p("np-log-call-attr", "cd420 ~ np.log.__call__(age)"),
    # numpy's reach
    _p("np-testing-os", f"cd420 ~ np.testing._private.utils.os.system('touch {PLACEHOLDER}')"),
    _p("np-loadtxt", "cd420 ~ np.loadtxt('/etc/passwd')"),
    _p("np-fromfile", "cd420 ~ I(np.fromfile('/etc/passwd'))"),
    _p("np-save", f"cd420 ~ I(np.save('{PLACEHOLDER}', 1))"),
    _p("np-memmap", f"cd420 ~ np.lib.format.open_memmap('{PLACEHOLDER}', mode='w+', shape=1)"),
    _p("np-alias-no-call", "cd420 ~ np.log"),
    _p("numpy-name", "cd420 ~ numpy.log(age)"),
    # NFKC look-alikes: names Python would read as allowed ones
    _p("fullwidth-log", "cd420 ~ ｌｏｇ(age)"),
    _p("fullwidth-np-log", "cd420 ~ np.ｌｏｇ(age)"),
    _p("fullwidth-np", "cd420 ~ ｎｐ.log(age)"),
    _p("fullwidth-exec", f"cd420 ~ ｅｘｅｃ(\"open('{PLACEHOLDER}', 'w')\")"),
    _p("fullwidth-open", f"cd420 ~ I(ｏｐｅｎ('{PLACEHOLDER}', 'w'))"),
    _p("fullwidth-import", f"cd420 ~ __ｉｍｐｏｒｔ__('os').system('touch {PLACEHOLDER}')"),
    _p("modifier-letter-eval", f"cd420 ~ ᵉval(\"open('{PLACEHOLDER}', 'w')\")"),
    _p("modifier-letter-log", "cd420 ~ lᵒg(age)"),
    _p("subscript-i-name", "cd420 ~ ageᵢ", words=MISSING, stage="columns"),
    _p("fullwidth-column", "cd420 ~ ａｇｅ", words=MISSING, stage="columns"),
    # lambdas, comprehensions, subscripts, f-strings, walrus, conditionals
    _p("lambda", f"cd420 ~ I((lambda: {OPEN})())"),
    _p("lambda-term", "cd420 ~ lambda: 1"),
    _p("list-comprehension", f"cd420 ~ I([{OPEN} for _ in [0]])"),
    _p("generator", f"cd420 ~ I(({OPEN} for x in age))"),
    _p("set-comprehension", "cd420 ~ I({x for x in age})"),
    _p("subscript", "cd420 ~ age[0]"),
    _p("subscript-slice", "cd420 ~ I(age[0:1])"),
    _p("subscript-of-C", "cd420 ~ C(race)[0]"),
    _p("f-string", f"cd420 ~ f'{{{OPEN}}}'"),
    _p("f-string-in-I", f"cd420 ~ I(f\"{{{OPEN}}}\")"),
    _p("walrus", f"cd420 ~ I((x := {OPEN}))"),
    _p("conditional", f"cd420 ~ age if {OPEN} else cd40"),
    _p("await-yield", "cd420 ~ I(yield age)"),
    # dunder names
    _p("builtins-name", "cd420 ~ __builtins__", words="formula|column", stage="any"),
    _p("builtins-attr", f"cd420 ~ I(__builtins__.open('{PLACEHOLDER}', 'w'))"),
    _p("builtins-subscript", f"cd420 ~ __builtins__['open']('{PLACEHOLDER}', 'w')"),
    _p("dunder-import-name", "cd420 ~ __import__", words="formula|column", stage="any"),
    _p("dunder-class-lhs", "__class__ ~ age", words="formula|column", stage="any"),
    # strings outside a reference level or a quoted name
    _p("string-term", "cd420 ~ 'age'"),
    _p("string-lhs", "'cd420' ~ age"),
    _p("string-in-I", f"cd420 ~ I('{PLACEHOLDER}' * 2)"),
    _p("string-in-log", "cd420 ~ log('/etc/passwd')"),
    _p("string-in-C", "cd420 ~ C('race')"),
    _p("bytes-in-Q", "cd420 ~ Q(b'age')"),
    _p("concatenated-Q", "cd420 ~ Q('ag' 'e')"),
    _p("expression-in-Q", "cd420 ~ Q('ag' + 'e')"),
    # eval, exec, open and friends
    _p("eval", f"cd420 ~ eval(\"open('{PLACEHOLDER}', 'w')\")"),
    _p("eval-in-I", f"cd420 ~ I(eval(\"open('{PLACEHOLDER}', 'w')\"))"),
    _p("exec", f"cd420 ~ exec(\"open('{PLACEHOLDER}', 'w')\")"),
    _p("open", f"cd420 ~ {OPEN}"),
    _p("open-in-I", f"cd420 ~ I({OPEN})"),
    _p("compile", "cd420 ~ I(compile('1', 'f', 'exec'))"),
    _p("getattr", f"cd420 ~ getattr(age, 'to_csv')('{PLACEHOLDER}')"),
    _p("globals", "cd420 ~ I(globals())"),
    _p("breakpoint", "cd420 ~ breakpoint()"),
    _p("print", "cd420 ~ print(age)"),
    # statements and separators
    _p("semicolon", f"cd420 ~ age; {OPEN}"),
    _p("newline-statement", f"cd420 ~ age\n{OPEN}"),
    _p("comment", f"cd420 ~ age # {OPEN}"),
    _p("two-tildes", f"cd420 ~ age ~ {OPEN}"),
    _p("no-tilde", f"{OPEN}"),
    _p("backslash", "cd420 ~ age \\\n + cd40"),
    _p("empty", ""),
    _p("only-tilde", "~"),
    # size and depth
    _p("log-500-deep", "cd420 ~ " + "log(" * 500 + SYSTEM + ")" * 500),
    _p("log-25-deep", "cd420 ~ " + "log(" * 25 + "age" + ")" * 25),
    _p("parentheses-1000", "cd420 ~ " + "(" * 1000 + "age" + ")" * 1000),
    _p("parentheses-100", "cd420 ~ " + "(" * 100 + "age" + ")" * 100),
    _p("parentheses-in-I-100", "cd420 ~ I(" + "(" * 100 + "age" + ")" * 100 + ")"),
    _p("unary-minus-30", "cd420 ~ " + "-" * 30 + "1"),
    _p("unary-minus-in-I-30", "cd420 ~ I(" + "-" * 30 + "age)"),
    _p("terms-3000", "cd420 ~ " + " + ".join(f"x{i}" for i in range(3000)) + f" + I({OPEN})"),
    _p("terms-250", "cd420 ~ " + "+".join(f"x{i}" for i in range(250))),
    _p("expansion", "cd420 ~ (a+b+c+d+e+f)*(g+h+i+j+k+l)*(m+n+o+p+q+r)"),
    _p("chars-100000", f"cd420 ~ I({OPEN}) + " + "age + " * 16_664 + "age"),
    _p("power-huge", "cd420 ~ I(age ** 1000000)"),
    _p("power-tower", "cd420 ~ I(10 ** 10 ** 10)"),
    _p("power-of-column", "cd420 ~ I(age ** cd40)"),
    _p("number-huge", "cd420 ~ I(age * 1e400)"),
    _p("term-power", "cd420 ~ (age + cd40) ** 2"),
    _p("chain-plus-600", "cd420 ~ " + "+".join(["1"] * 600), words="tokens"),
    _p("chain-colon-400", "cd420 ~ " + ":".join(["age"] * 400), words="tokens"),
    _p("chain-in-I-990", "cd420 ~ I(age+" + "+".join(["1"] * 990) + ")", words="tokens"),
    # numbers Python does not read as written (issue 51: the parser let them through and
    # patsy's SyntaxError escaped)
    _p("leading-zero-in-I", "cd420 ~ I(age + 01)", words="does not begin with 0"),
    _p("leading-zero-power", "cd420 ~ I(age ** 04)", words="does not begin with 0"),
    _p("leading-zero-power-call", "cd420 ~ power(age, 04)", words="does not begin with 0"),
    _p("leading-zero-reference", "cd420 ~ C(race, Treatment(reference=01))",
       words="does not begin with 0"),
    _p("leading-zeros-300", "cd420 ~ I(age + " + "0" * 300 + "1)", words="does not begin"),
    _p("hex-number", "cd420 ~ I(age + 0x1f)", words="decimal"),
    _p("complex-number", "cd420 ~ I(age * 1j)", words="complex"),
    _p("double-underscore-number", "cd420 ~ I(age + 1__0)", words="not a number"),
    _p("arabic-indic-digit", "cd420 ~ I(age + \u0661)", words="digits 0 to 9"),
    _p("superscript-two", "cd420 ~ I(age ** \u00b2)", words="not a name"),
    # null bytes and control characters
    _p("null-byte", f"cd420 ~ age\x00 + I({OPEN})"),
    _p("escape-sequence", "cd420 ~ age\x1b[2J\x1b[31m"),
    _p("bell-backspace", "cd420 ~ age\x07\x08"),
    _p("zero-width-space", "cd420 ~ a\u200bge"),
    _p("right-to-left-override", f"cd420 ~ age\u202e + I({OPEN})"),
    _p("null-in-string", "cd420 ~ C(race, Treatment('\x00'), x)"),
    _p("carriage-return-in-name", "cd420 ~ `a\rb`", words="printable"),
    _p("line-separator-in-name", "cd420 ~ Q('a\u2028b')", words="printable"),
    _p("escape-in-name", "cd420 ~ `\x1b[2J\x1b[31mred`", words="printable"),
    _p("null-in-name", "cd420 ~ `a\x00b`", words="printable"),
    # Markdown and HTML
    _p("html-img", "cd420 ~ <img src=http://127.0.0.1:9/x.png>"),
    _p("markdown-link", "cd420 ~ [a](http://evil)"),
    _p("markdown-image-in-name", "cd420 ~ `![x](http://127.0.0.1:9/a.png)`", words=MISSING,
       stage="columns"),
    _p("html-in-name", "cd420 ~ `<img src=x onerror=alert(1)>`", words=MISSING,
       stage="columns"),
    _p("script-in-reference", "cd420 ~ C(race, Treatment('<script>alert(1)</script>'))",
       words="level|fit", stage="estimate"),
]

BY_ID = {p.id: p for p in CORPUS}
assert len(BY_ID) == len(CORPUS), "payload ids must be distinct"

#: A handful that stands for the corpus where a path is slow to drive (pages, subprocesses).
REPRESENTATIVE = ["import-in-I", "treatment-open", "to-csv-in-I", "fullwidth-np-log",
                  "html-img", "markdown-image-in-name", "chars-100000", "chain-plus-600"]


# -- huge designs ---------------------------------------------------------------------------

WIDE_ROWS = 20_000


def wide_table(rows: int = WIDE_ROWS, seed: int = 0) -> pd.DataFrame:
    """``rows`` rows: a numeric response ``y`` and regressor ``x``, a 0/1 ``b``, ``id`` (text,
    every value distinct, as an identifier), ``other`` (5 levels) and ``g`` (400 levels)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "y": rng.normal(size=rows), "x": rng.normal(size=rows),
        "b": rng.integers(0, 2, size=rows),
        "id": [f"p{i:06d}" for i in range(rows)],
        "other": rng.choice(list("abcde"), size=rows),
        "g": [f"g{i % 400:03d}" for i in range(rows)]})


@dataclass(frozen=True)
class Bound:
    id: str
    kind: str
    formula: str


#: Refused by the number of columns on :func:`wide_table` (more than MAX_COLUMNS).
BOUNDS = [
    Bound("id-x-other", "ols", "y ~ C(id):C(other)"),
    Bound("id-x-other-logit", "logit", "b ~ C(id):C(other)"),
    Bound("id-text-term", "ols", "y ~ x + id"),
    Bound("id-in-function", "ols", "y ~ log(x + 10):id"),
    Bound("id-response", "ols", "id ~ x"),
    Bound("id-star-g", "ols", "y ~ C(id) * C(g)"),
]
#: Refused by memory under a budget of :data:`SMALL_BUDGET` (400 levels on 20,000 rows: about
#: 64 MB of design matrix, 16 MB allowed).
SMALL_BUDGET = "256MB"
MEMORY_BOUNDS = [
    Bound("g-logit", "logit", "b ~ C(g)"),
    Bound("g-with-x", "ols", "y ~ C(g) + x"),
]

#: Legitimate formulas in the corpus's neighbourhood, on ACTG 175: they must still be fitted.
LEGITIMATE = [
    ("ols", "cd420 ~ age + C(treat) + cd40"),
    ("ols", "np.log(cd40 + 1) ~ I(age ** 2) + C(race, Treatment(reference=1))"),
    ("ols", "log(cd420 + 1) ~ log1p(cd40) + C(race, Treatment(1)):gender + sqrt(abs(age))"),
    ("ols", "cd420 ~ `age` + Q(\"cd40\") + C(arms, Treatment(reference=0))"),
    ("ols", "cd420 ~ center(age) + standardize(cd40) + power(wtkg, 2) - 1"),
    ("ols", "cd420 ~ (age + cd40) * C(gender) + I((wtkg - 70) ** 2 / 100)"),
    ("logit", "treat ~ age + cd40 + C(race)"),
    ("logit", "cens ~ np.sqrt(cd40) + I(wtkg ** 2) + C(gender, Treatment(reference=True))"),
]


# -- what a test of a path asks of a refusal --------------------------------------------------

NAME = "hostile"
#: A refusal longer than this does not read as a line (the 100,000-character payload must not
#: come back whole).
MAX_MESSAGE = 400
PREFIX = f"analysis '{NAME}': "


def cases(ids: list[str] | None = None, stages: tuple[str, ...] | None = None) -> list:
    """The payloads (all, or those of ``ids``; of ``stages`` only)."""
    chosen = CORPUS if ids is None else [BY_ID[i] for i in ids]
    return [pytest.param(p, id=p.id) for p in chosen if stages is None or p.stage in stages]


def readable(message: str, words: str, limit: int = MAX_MESSAGE) -> None:
    """One short line of text, no control character, no traceback, naming the problem."""
    assert message, "an empty message"
    assert len(message.splitlines()) == 1, f"more than one line: {message!r}"
    bad = [c for c in message if unicodedata.category(c) in ("Cc", "Zl", "Zp")]
    assert not bad, f"control characters {bad!r} in {message!r}"
    assert "Traceback" not in message and "File \"" not in message, message
    assert len(message) <= limit, f"{len(message)} characters: {message[:120]!r}…"
    assert re.search(words, message), f"{words!r} not in {message!r}"


def untouched(box: Path) -> None:
    assert not (box / "marker").exists(), "the payload ran: the marker file exists"
    assert not list(box.iterdir()), f"a payload wrote {list(box.iterdir())}"


def item(text: str, kind: str = "ols", name: str = NAME) -> dict:
    return {"name": name, "kind": kind, "formula": text}
