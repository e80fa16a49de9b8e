"""Command line: ``python -m sdc_core COMMAND …`` (docs/cli.md), installed as the command ``sdc``.

Bad input (missing file, unknown column, bad parameter) prints one line ``sdc_core: error: …``
(``sdc: error: …`` when run as ``sdc``) to stderr and exits with code 2; nothing else ever
prints a traceback.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sdc_core.errors import SdcInputError
from sdc_core.names import COUNT_AND_PERCENT, MEASURES
from sdc_core.names import name as measure_name
from sdc_core.version import __version__

if TYPE_CHECKING:
    import pandas as pd

    from sdc_core.tables.cell_rules import Rule
    from sdc_core.tables.differencing import DifferencingResult

# Each command imports what it needs when it runs (pandas alone takes ~0.6 s to import), so
# ``--help`` and bad arguments answer at once.

EXIT_BAD_INPUT = 2


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error instead of usage + message."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise SdcInputError(message)


def _column_list(text: str) -> list[str]:
    cols = [c.strip() for c in text.split(",")]
    if not text.strip() or any(not c for c in cols):
        raise argparse.ArgumentTypeError(f"expected comma-separated column names, got {text!r}")
    return cols


def _column_list_or_none(text: str) -> list[str]:
    """A comma-separated list of column names, or none at all (an empty text)."""
    return _column_list(text) if text.strip() else []


def _add_engine_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("engine (files too large for memory; see docs/engines.md)")
    g.add_argument("--engine", choices=["pandas", "duckdb", "spark"], default="pandas",
                   help="pandas (the whole table in memory; the reference), duckdb (in "
                        "process, out of core) or spark; the engines read Parquet or CSV, a "
                        "file or a directory of parts")
    g.add_argument("--memory-limit", metavar="SIZE",
                   help="DuckDB: memory limit, e.g. 4GB (it spills to --temp-dir beyond it)")
    g.add_argument("--temp-dir", metavar="DIR",
                   help="DuckDB: where it spills (choose approved storage: the data is "
                        "written there while the command runs)")
    g.add_argument("--threads", type=int, help="DuckDB: number of threads")
    g.add_argument("--spark-master",
                   help="Spark: master URL (default: spark-submit's --master, else local[*])")
    g.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                   help="Spark: a spark.* setting (repeatable)")


def _engine_options(args: argparse.Namespace) -> Any:
    from sdc_core.engines import EngineOptions

    if args.engine != "duckdb" and (args.memory_limit or args.temp_dir or args.threads):
        raise SdcInputError("--memory-limit, --temp-dir and --threads go with --engine duckdb")
    conf = {}
    for item in args.spark_conf:
        key, sep, value = item.partition("=")
        if not sep or not key.startswith("spark."):
            raise SdcInputError(f"--spark-conf takes spark.KEY=VALUE, not {item!r}")
        conf[key] = value
    if args.engine != "spark" and (conf or args.spark_master):
        raise SdcInputError("--spark-master and --spark-conf go with --engine spark")
    return EngineOptions(memory_limit=args.memory_limit, temp_dir=args.temp_dir,
                         threads=args.threads, spark_master=args.spark_master, spark_conf=conf)


def _with_engine(args: argparse.Namespace, job: Any) -> Any:
    """Run ``job(engine)`` on a new session of the chosen engine, closed afterwards."""
    from sdc_core.engines import open_engine

    engine = open_engine(args.engine, _engine_options(args))
    try:
        return job(engine)
    finally:
        engine.close()


def _port(text: str) -> int:
    if not (text.isdigit() and 1 <= int(text) <= 65535):
        raise argparse.ArgumentTypeError(f"expected a port number from 1 to 65535, got {text!r}")
    return int(text)


#: The object ``add_subparsers`` returns, to which each command's builder adds its parser.
_Subparsers = argparse._SubParsersAction


def _add_data(parser: argparse.ArgumentParser) -> None:
    """The input file, the first positional argument of ``risk`` and ``apply``."""
    parser.add_argument("data", help="CSV/TSV/Excel/Parquet/Stata/SPSS file")


def _add_weight(parser: argparse.ArgumentParser) -> None:
    """``--weight``: the sampling-weight column."""
    parser.add_argument("--weight", help="sampling-weight column")


def _add_json(parser: argparse.ArgumentParser) -> None:
    """``--json``: the result as one JSON object on standard output."""
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _add_risk(sub: _Subparsers) -> None:
    """``risk``: the disclosure-risk profile of a file."""
    risk = sub.add_parser("risk", help="disclosure-risk profile on quasi-identifiers")
    _add_data(risk)
    risk.add_argument("--qi", required=True, type=_column_list,
                      help="quasi-identifiers, comma-separated")
    risk.add_argument("--sensitive", type=_column_list, default=[],
                      help="sensitive columns, comma-separated: adds their l-diversity, the "
                           "attribute scan and, for each one that is not a quasi-identifier, "
                           "t-closeness, basic and enhanced β-likeness and δ-disclosure "
                           "(JSON: closeness)")
    _add_weight(risk)
    risk.add_argument("--k", type=float, default=5, help="k-anonymity threshold T (default 5)")
    risk.add_argument("--na", choices=["wildcard", "category"], default="wildcard",
                      help="missing keys match any value (default) or are a category")
    risk.add_argument("--alpha", type=float, default=1.0,
                      help="weight of wildcard matches with another missing pattern, in [0, 1]")
    risk.add_argument("--dis-fraction", type=float, default=0.01, metavar="F",
                      help="SUDA2 special uniques: the sampling fraction of the DIS score, in "
                           "(0, 1] (sdcMicro's DisFraction, default 0.01)")
    risk.add_argument("--no-suda2", action="store_true",
                      help="skip SUDA2 (it looks at up to 2^m - 1 key subsets: about 2-3x "
                           "slower with each extra key)")
    population = risk.add_mutually_exclusive_group()
    population.add_argument("--sampling-fraction", type=float, metavar="F",
                            help="the file is this share of its population (0 < F ≤ 1): adds "
                                 "the population uniqueness models (Zayatz, Pitman, SNB, "
                                 "Dankar's rule) and the log-linear risks")
    population.add_argument("--population", type=float, metavar="N",
                            help="the population's size (at least the file's records): as "
                                 "--sampling-fraction with F = records / N; with --weight and "
                                 "neither, N is the weights' sum")
    risk.add_argument("--household", metavar="COLUMN",
                      help="household-id column: adds household risk 1 - prod(1 - r) over each "
                           "household's members and the households unique by composition "
                           "(the pandas engine only)")
    _add_json(risk)
    risk.add_argument("--records", type=Path, metavar="OUT.csv",
                      help="write fk, Fk, risk (and, with SUDA2, suda_score and dis_score; "
                           "with --household, household_risk) per input row, in input order")
    _add_engine_options(risk)
    risk.set_defaults(func=_cmd_risk)


def _add_apply(sub: _Subparsers) -> None:
    """``apply``: a recipe applied to a file."""
    apply = sub.add_parser("apply", help="apply a recipe (JSON) and write the protected table")
    _add_data(apply)
    apply.add_argument("--recipe", required=True, type=Path, help="recipe JSON file")
    apply.add_argument("-o", "--output", required=True, type=Path,
                       help="output file: .csv, .parquet or .xlsx")
    apply.add_argument("--no-neutralize", action="store_true",
                       help="keep text cells that begin with = + - @ and direction controls "
                            "(U+202E) as they are (CSV/Excel)")
    _add_engine_options(apply)
    apply.set_defaults(func=_cmd_apply)


def _add_compare(sub: _Subparsers) -> None:
    """``compare``: information loss of a protected table, and the linkage attack."""
    compare = sub.add_parser(
        "compare", help="information loss of a protected table (and, with --qi, the linkage "
                        "attack)",
        description="Information loss of PROTECTED against ORIGINAL (rows aligned). It leads "
                    "with IL1_release = (1/|C|) Σ_{c∈C} IL1_c, the mean IL1 over the released "
                    "columns C: the original's columns less --not-released, an unchanged "
                    "column counting 0 and a column of C missing from PROTECTED (dropped) "
                    "counting the maximum 1; then IL1_overall (a mean over the changed "
                    "columns). Band labels (\"15–19\", \"[15, 20)\") of a column of numbers "
                    "or dates are measured as the bands' midpoints. With --qi "
                    "it adds the linkage attack: an attacker who knows the true "
                    "quasi-identifiers (and the --known columns) looks for each person among "
                    "the released records. --recipe tells it which steps were public "
                    "recodings (the attacker applies them too) and which columns were "
                    "perturbed numerically (matched by nearest distance). Without --recipe "
                    "the released values are taken as they are: no recoding, every "
                    "quasi-identifier compared exactly. Of the attackers it runs (every "
                    "candidate alike, fewest blanks first, nearest first: "
                    "docs/measures.md), the one that re-identifies most gives the figures. "
                    "With --recipe it adds what perturbation buys (JSON: attribute), per "
                    "column a PRAM, relabeling or randomized response step perturbs: the "
                    "local-DP ε (null when infinite: no deniability), the attacker's "
                    "best-guess accuracy for the true value and its baseline (guess the "
                    "commonest), and the posterior; with --household (or the recipe's "
                    "household) also what all of a household's released records give away: "
                    "household_guess_accuracy and the composed household_epsilon. With "
                    "--sensitive it adds, per sensitive "
                    "column, the attribute-inference attack (JSON: inference; the same "
                    "attacker as the linkage attack guesses the column's true value: "
                    "accuracy against the baseline of the release with the column "
                    "withheld, and CAP) and the release's t-closeness, β-likeness and "
                    "δ-disclosure (JSON: closeness).")
    compare.add_argument("original")
    compare.add_argument("protected")
    compare.add_argument("--numeric", type=_column_list_or_none,
                         help="numeric columns (default: those read as numeric, not "
                              "categorical, in the original)")
    compare.add_argument("--qi", type=_column_list,
                         help="quasi-identifiers: run the linkage attack on them")
    compare.add_argument("--recipe", type=Path, metavar="R.json",
                         help="the recipe that made PROTECTED (needs --qi)")
    compare.add_argument("--sensitive", type=_column_list, default=[],
                         help="sensitive columns, comma-separated: the attribute-inference "
                              "attack on each and the release's t-closeness, β-likeness and "
                              "δ-disclosure (needs --qi)")
    compare.add_argument("--known", type=_column_list, default=[],
                         help="extra numeric columns the attacker knows, matched by nearest "
                              "distance (needs --qi)")
    compare.add_argument("--records", type=Path, metavar="OUT.csv",
                         help="write the headline attacker's p_link and candidates per "
                              "input row, in input order "
                              "(needs --qi)")
    compare.add_argument("--not-released", type=_column_list, default=[], metavar="A,B",
                         help="columns of ORIGINAL that are not part of the release (the "
                              "page's \"not released\" columns): left out of IL1 whether "
                              "PROTECTED has them or not; any other column of ORIGINAL missing "
                              "from PROTECTED counts as dropped (IL1 1)")
    compare.add_argument("--il1-missing", choices=["max", "ignore"], default="max",
                         help="a numeric value blanked by protection counts as the maximum "
                              "IL1 loss 1 (max, the default) or is left out (ignore, "
                              "sdcMicro's reading)")
    compare.add_argument("--table", type=_column_list, action="append", default=[],
                         metavar="A,B", dest="tables",
                         help="a frequency table to compare cell by cell (absD, relabsD, "
                              "abssqrtD, false zeros and non-zeros: docs/utility.md, \"Tables "
                              "after record swapping\"); repeat for more tables")
    compare.add_argument("--household", metavar="COLUMN",
                         help="the household-id column: each household counts once in the "
                              "--table tables, and with --qi the household linkage attack "
                              "runs (JSON: household_linkage)")
    compare.add_argument("--closest", action="store_true",
                         help="the distance of each released record to the closest original "
                              "record on the numeric columns, in any row (JSON: dcr_median, "
                              "dcr_zero_percent: docs/measures.md, \"Distance to the closest "
                              "record\")")
    compare.add_argument("--analysis", type=Path, metavar="SPEC.json",
                         help="benchmark analyses to re-estimate on both tables (OLS, logit, "
                              "means, proportions, tables: docs/utility.md): adds their terms "
                              "with CI overlap, the 1- and 2-way tables' TVD and Hellinger "
                              "distance, and pMSE / S_pMSE")
    _add_json(compare)
    _add_engine_options(compare)
    compare.set_defaults(func=_cmd_compare)


def _add_sweep(sub: _Subparsers) -> None:
    """``sweep``: risk and utility over a grid of settings."""
    sweep = sub.add_parser("sweep", help="risk and utility for a grid of settings")
    sweep.add_argument("data")
    sweep.add_argument("--qi", required=True, type=_column_list, help="quasi-identifiers")
    sweep.add_argument("--grid", required=True, type=Path, help="grid JSON file")
    sweep.add_argument("-o", "--output", required=True, type=Path, help="table (.csv)")
    _add_weight(sweep)
    sweep.add_argument("--na", choices=["wildcard", "category"], default="wildcard")
    sweep.add_argument("--alpha", type=float, default=1.0)
    sweep.add_argument("--best-recipe", type=Path, metavar="OUT.json",
                       help="with a target in the grid: write the best setting's recipe")
    sweep.set_defaults(func=_cmd_sweep)


def _add_tables(sub: _Subparsers) -> None:
    """``tables``: response counts with small-count suppression."""
    tables = sub.add_parser(
        "tables", help="answer counts with small-count suppression; cross tables with margins",
        description="With --question: seed 004's answer counts for an organiser. With --cross: "
                    "the 1-, 2- or 3-way table of the columns with every margin (a margin's "
                    "label is Total), published by suppression (a primary rule, secondary "
                    "cells chosen so that no hidden cell can be worked out, and the audit of "
                    "every hidden cell's interval), differential privacy (discrete Laplace "
                    "counts or clipped sums, margins the sums of noisy cells) or the cell key "
                    "method (counts, or sums with noise scaled to each cell's largest "
                    "contribution); one row "
                    "per cell and margin with the value (blank when hidden) and its status "
                    "(published, primary, secondary, perturbed): docs/tables.md.")
    tables.add_argument("data", help="one row per participant; an empty cell = no response")
    tables.add_argument("--question", type=_column_list, action="extend", default=[],
                        help="question column(s), comma-separated or repeated")
    tables.add_argument("--cross", type=_column_list, metavar="A,B[,C]", action="append",
                        help="a cross table of 1 to 3 columns with its margins; repeated, "
                             "linked tables protected together (every table from the same "
                             "records, at most 3 columns in all, a shared cell one status in "
                             "every table, the audit on all the tables at once; the output's "
                             "first column, table, names each table by its columns)")
    tables.add_argument("--sum", metavar="COLUMN",
                        help="with --cross: the sum of this column per cell (a magnitude table)")
    tables.add_argument("--rule", default=None, metavar="RULE",
                        help="with --cross: the primary rule, threshold:T (counts; default "
                             "threshold:5), dominance:N,K or p:P (sums; default p:10)")
    tables.add_argument("--protection", type=float, metavar="Q",
                        help="with suppression: interval protection, each primary cell's "
                             "feasible interval reaching its value ± Q %% (more secondary "
                             "cells until it does)")
    tables.add_argument("--secondary", choices=["auto", "milp", "hypercube", "gauss"],
                        default="auto",
                        help="with suppression: how the secondary cells are chosen (auto: the "
                             "exact MILP on a small table, hypercubes past it; gauss: Gaussian "
                             "elimination, repaired by hypercubes where the audit asks)")
    tables.add_argument("--method", choices=["suppress", "dp", "ckm"], default="suppress",
                        help="with --cross: suppression (default), differential privacy or the "
                             "cell key method")
    tables.add_argument("--epsilon", type=float, default=1.0,
                        help="with --method dp: the privacy loss ε (default 1)")
    tables.add_argument("--clip", type=float, metavar="U",
                        help="with --method dp and --sum (required there): each contribution "
                             "clipped to [0, U], the noise scaled to U/ε")
    tables.add_argument("--seed", type=int, default=0,
                        help="with --method dp or ckm: the seed of the noise or the record keys")
    tables.add_argument("--ckm-threshold", type=int, default=10,
                        help="with --method ckm: a published count below this is blank (10)")
    tables.add_argument("--household", metavar="COLUMN",
                        help="with --cross: the household or person id; the rules count "
                             "distinct ids, not records, DP bounds each person's records and "
                             "the cell key method gives a person one key (docs/tables.md)")
    tables.add_argument("--max-contributions", type=int, metavar="C",
                        help="with --method dp and --household: keep at most C records per "
                             "person, the noise scaled to C (default: the 95th percentile of "
                             "records per person)")
    tables.add_argument("--difference", metavar="COLUMN=L1,L2",
                        help="with --cross: also publish the table with these levels of COLUMN "
                             "merged and report what subtracting the two tells")
    tables.add_argument("--hierarchy", action="append", default=[], metavar="COLUMN=SPEC",
                        help="with --cross and suppression: a code list for COLUMN, a row per "
                             "inner node that is the sum of its children: FILE.csv (rows "
                             "code,parent; a blank parent for a root), FILE.json ({\"code\": "
                             "\"parent\"}, null for a root) or prefix:2,4 (\"0301\" under "
                             "\"03\"); repeated for several columns (docs/tables.md)")
    tables.add_argument("-o", "--output", type=Path, metavar="OUT.csv",
                        help="with --cross: write the table (CSV, Excel or Parquet) here")
    tables.add_argument("--participants", type=int,
                        help="number of participants N (default: the number of rows)")
    tables.add_argument("--q", type=int, default=10,
                        help="hide a question with fewer responses than this (default 10)")
    tables.add_argument("--t", type=int, default=5,
                        help="show an option's count only from this many (default 5)")
    tables.add_argument("--multi", action="store_true",
                        help="multi-select: each cell lists the chosen options")
    tables.add_argument("--delimiter", default=";", help="separator of --multi cells (;)")
    tables.add_argument("--indicators", type=_column_list,
                        help="one multi-select question from one column per option "
                             "(selected = true / non-zero / non-empty)")
    _add_json(tables)
    tables.set_defaults(func=_cmd_tables)


def _add_dashboard(sub: _Subparsers) -> None:
    """``dashboard``: start the Streamlit dashboard."""
    dashboard = sub.add_parser(
        "dashboard", help="start the dashboard (needs the [dashboard] extra)",
        description="Start the Streamlit dashboard at http://ADDRESS:PORT; Ctrl-C stops it. "
                    "Its settings are the .streamlit/config.toml beside its app.py; an "
                    "environment variable overrides one, e.g. "
                    "STREAMLIT_SERVER_MAX_UPLOAD_SIZE=500 (see docs/deploying.md).")
    dashboard.add_argument("--port", type=_port, default=8501, help="port (default 8501)")
    dashboard.add_argument("--address", default="127.0.0.1",
                           help="address to listen on (default 127.0.0.1: this machine only)")
    dashboard.set_defaults(func=_cmd_dashboard)


def _add_pack(sub: _Subparsers) -> None:
    """``pack``: the release decision pack (docs/releases.md)."""
    from sdc_core.release_types import RELEASE_TYPES

    pack = sub.add_parser(
        "pack", help="a release decision pack: the released file, internal and external "
                     "reports, manifests, the trade-off figure",
        description="Apply RECIPE to ORIGINAL and write into the folder OUT: released.csv, "
                    "internal.html (replicable, with the seed), external.html (for the data "
                    "users: no seed), manifest.json (no seed) and manifest-internal.json "
                    "(SHA-256 of every file, versions, the release type and its targets, the "
                    "decision, compare --json's figures, a status pass/fail/review per "
                    "output), tradeoff.svg and tradeoff.pdf, and table-N.csv per --table. "
                    "Roles as in compare. With --parent the recipe starts from the parent "
                    "pack's release and may only coarsen it (docs/releases.md, \"Lineage\").")
    pack.add_argument("original")
    pack.add_argument("--recipe", required=True, type=Path, metavar="R.json",
                      help="the recipe (with --parent: run on the parent's release)")
    pack.add_argument("--type", required=True, choices=list(RELEASE_TYPES), dest="kind",
                      help="release type: public-use, scientific-use, teaching or "
                           "secure-access file")
    pack.add_argument("--qi", required=True, type=_column_list, help="quasi-identifiers")
    pack.add_argument("--sensitive", type=_column_list, default=[], help="sensitive columns")
    pack.add_argument("--known", type=_column_list, default=[],
                      help="extra numeric columns the attacker knows")
    pack.add_argument("--household", metavar="COLUMN", help="the household-id column")
    _add_weight(pack)
    pack.add_argument("--numeric", type=_column_list_or_none,
                      help="numeric columns (default: those read as numeric)")
    pack.add_argument("--not-released", type=_column_list, default=[], metavar="A,B",
                      help="columns of ORIGINAL that are not part of the release")
    pack.add_argument("--target", action="append", default=[], metavar="FIGURE<=LIMIT",
                      help="change or add a target of the release type, e.g. "
                           "linkage_risk_percent<=2 (repeat for more)")
    pack.add_argument("--table", type=_column_list, action="append", default=[],
                      metavar="A,B", dest="tables",
                      help="a cross table published with the release (from ORIGINAL, "
                           "suppressed by --table-rule and audited); repeat for more")
    pack.add_argument("--question", action="append", default=[], metavar="COLUMN",
                      dest="questions",
                      help="a question whose answer counts are published with the release "
                           "(counts below 5 hidden, audited as tables --question); repeat "
                           "for more")
    pack.add_argument("--table-rule", default="threshold:5", metavar="RULE",
                      help="the tables' primary rule (default threshold:5)")
    pack.add_argument("--analysis", type=Path, metavar="SPEC.json",
                      help="benchmark analyses: their CI overlap tells the data users which "
                           "estimates to trust less")
    pack.add_argument("--grid", type=Path, metavar="GRID.json",
                      help="a sweep's grid: its settings on the trade-off figure")
    pack.add_argument("--decision", type=Path, metavar="DECISION.json",
                      help="the decision fields (decision, steward, checker, dates, "
                           "board_reference, comments, outputs): blank without it")
    pack.add_argument("--title", default=None, help="the pack's title (default: the file's "
                                                     "name)")
    pack.add_argument("--parent", type=Path, metavar="PARENT_PACK",
                      help="the folder of the pack this release is made from")
    pack.add_argument("--zip", action="store_true", help="also write OUT.zip")
    pack.add_argument("-o", "--output", required=True, type=Path, metavar="OUT",
                      help="the pack's folder (new, or empty)")
    pack.set_defaults(func=_cmd_pack)


#: Each command's parser builder, in the order of ``--help``.
_COMMANDS = (_add_risk, _add_apply, _add_compare, _add_sweep, _add_tables, _add_pack,
             _add_dashboard)


def build_parser(name: str = "sdc_core") -> argparse.ArgumentParser:
    """The parser; ``name`` is the program's name in messages (``sdc`` for the installed
    command). Each command's arguments come from its builder (``_add_risk`` …)."""
    parser = _Parser(prog="python -m sdc_core" if name == "sdc_core" else name,
                     description="Statistical disclosure control: risk, methods, utility.")
    parser.add_argument("--version", action="version", version=f"{name} {__version__}")
    parser.set_defaults(program=name)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for add in _COMMANDS:
        add(sub)
    return parser


@functools.cache
def _parser(name: str) -> argparse.ArgumentParser:
    """:func:`build_parser` once a process for each program name: building it takes 4 ms,
    which in-process runs (the conformance harness's, tests/conformance.py) paid every time."""
    return build_parser(name)


def _parsed(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """``parser.parse_args(argv)`` with every list its own: an option left out holds the
    parser's default list, which the next run of the same parser would otherwise share."""
    args = parser.parse_args(argv)
    for key, value in vars(args).items():
        if isinstance(value, list):
            setattr(args, key, list(value))
    return args


def dashboard_app() -> Path | None:
    """The dashboard's ``app.py``: the installed package ``sdc_dashboard`` beside ``sdc_core``
    (the wheel), else the checkout's, beside ``sdc_core/``; with its ``ui/`` package."""
    root = Path(__file__).resolve().parents[1]
    for app in (root / "sdc_dashboard" / "app.py", root / "app.py"):
        if app.is_file() and (app.parent / "ui" / "__init__.py").is_file():
            return app
    return None


def dashboard_command(app: Path, address: str, port: int) -> list[str]:
    """``streamlit run`` on ``app`` (as ``make run``); Streamlit reads the rest of the settings
    from the ``.streamlit/config.toml`` beside it, whatever the working directory."""
    return [sys.executable, "-m", "streamlit", "run", str(app), "--server.address", address,
            "--server.port", str(port), "--browser.gatherUsageStats", "false"]


def _cmd_dashboard(args: argparse.Namespace) -> int:
    from importlib.util import find_spec

    missing = [name for name in ("streamlit", "plotly") if find_spec(name) is None]
    if missing:
        raise SdcInputError(f"the dashboard needs {' and '.join(missing)}: "
                            'pip install "sdc-workbench[dashboard]"')
    app = dashboard_app()
    if app is None:
        raise SdcInputError("the dashboard's files (app.py, ui/, views/) are not installed")
    command = dashboard_command(app, args.address, args.port)
    # one BLAS thread per computation, as `make run` (sessions share the cores)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":  # Streamlit takes this process's place: signals, exit code and all
        os.execv(command[0], command)
    import subprocess

    with subprocess.Popen(command) as server:
        try:
            return server.wait()
        except KeyboardInterrupt:  # Ctrl-C reached the server too: let it stop
            return server.wait()


def read_bounded(path: Path) -> pd.DataFrame:
    """The table at ``path``, refused when it would take more memory than the budget
    (``SDC_MEMORY_BUDGET``, default half the machine's) or holds a cell longer than
    ``SDC_MAX_CELL`` characters (default 65,536): see :mod:`sdc_core.data.decoded`. With
    ``SDC_MEMORY_BUDGET`` set, the file is read in a child process whose memory is capped at
    the budget (:mod:`sdc_core.capped`): no file's trick takes the run past it."""
    from sdc_core.data.decoded import BUDGET_ENV, budget, max_cell

    if os.environ.get(BUDGET_ENV):
        from sdc_core.capped import read_capped

        return read_capped(path, cap=budget(), max_table=budget(), max_cell=max_cell())
    from sdc_core.data.io import read_table

    return read_table(path, max_table=budget(), max_cell=max_cell())


def _read_text(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeError) as err:
        raise SdcInputError(f"{path}: cannot read the {what} "
                            f"({getattr(err, 'strerror', None) or err})") from None


def _read_json(path: Path, what: str) -> object:
    from sdc_core.checks import parse_json

    text = _read_text(path, what)  # its error names the path already
    try:
        return parse_json(text, what)
    except SdcInputError as err:
        raise SdcInputError(f"{path}: {err}") from None


def _cmd_compare(args: argparse.Namespace) -> int:
    from sdc_core.assess import Setting, assess
    from sdc_core.data.columns import read_like
    from sdc_core.recipe import load_recipe, release_notes

    if args.qi is None and (args.recipe or args.known or args.records or args.sensitive):
        raise SdcInputError("--recipe, --known, --records and --sensitive go with --qi")
    if args.engine != "pandas":
        if args.tables or args.household:
            raise SdcInputError("--table and --household read both tables in memory: use the "
                                "pandas engine")
        if args.analysis:
            raise SdcInputError("--analysis reads both tables in memory: use the pandas engine")
        if args.sensitive or args.closest:
            raise SdcInputError(f"{'--sensitive' if args.sensitive else '--closest'} reads "
                                "both tables in memory: use the pandas engine")
        return _compare_on_engine(args)
    spec = _analysis_spec(args.analysis) if args.analysis else None
    recipe = load_recipe(_read_text(args.recipe, "recipe")) if args.recipe else None
    original, protected = read_bounded(args.original), read_bounded(args.protected)
    protected = read_like(protected, original)
    numeric = _numeric_columns(args, original)
    if args.sensitive:
        from sdc_core.risk.inference import check_sensitive

        check_sensitive(original, protected, args.qi, args.known, args.sensitive)
    setting = Setting(tuple(args.qi or ()), tuple(numeric), tuple(args.sensitive),
                      tuple(args.known), household=args.household,
                      il1_missing=args.il1_missing, not_released=tuple(args.not_released),
                      tables=tuple(tuple(t) for t in args.tables), closest=args.closest)
    assessment = assess(original, protected, setting, recipe if args.qi is not None else None,
                        analyses=spec)
    out = assessment.to_json(distribution=args.json)
    if args.qi is not None and recipe is None:
        out["attribute_note"] = NO_RECIPE_ATTRIBUTE
    if args.records is not None:
        _write_records(assessment.linkage.records(), args.records)
    out["release_notes"] = release_notes(recipe, original)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    _print_compare(out, args, recipe)
    _print_households_and_tables(out)
    if args.closest:
        print(f"distance to the closest record: median {out['dcr_median']:.4g}, "
              f"{out['dcr_zero_percent']:.2f} % of {out['dcr_n']} released records copy an "
              f"original one on {', '.join(map(str, out['dcr_columns']))}")
    if spec is not None:
        _print_validity(out)
    return 0


def _numeric_columns(args: argparse.Namespace, original: pd.DataFrame) -> list[str]:
    """``--numeric``, or the columns read as numeric with the household id left out; refused
    when ``--numeric`` names the household id (an id is not a measure). ``compare``'s and
    ``pack``'s."""
    from sdc_core.data.io import Kind, infer_kinds

    numeric = args.numeric if args.numeric is not None else [
        c for c, k in infer_kinds(original).items()
        if k is Kind.NUMERIC and c != args.household]
    if args.household is not None and args.household in numeric:
        raise SdcInputError(f"--numeric names {args.household}, the household id "
                            "(--household): an id is not a measure; leave it out")
    return numeric


def _read_parent(folder: Path, original: pd.DataFrame) -> Any:
    """The parent pack in ``folder``: its manifests and released file (read with the
    ``original``'s column types, as ``compare`` reads a release), checked."""
    from sdc_core.data.columns import read_like
    from sdc_core.pack import INTERNAL_MANIFEST, MANIFEST, RELEASED, parent_from

    if not folder.is_dir():
        raise SdcInputError(f"{folder}: --parent names the folder of a pack")
    released = folder / RELEASED
    raw = _read_bytes(released, "parent's released file")
    return parent_from(_read_text(folder / MANIFEST, "parent manifest"),
                       _read_text(folder / INTERNAL_MANIFEST, "parent internal manifest "
                                  "(the parent's recipe with its seed)"),
                       raw, read_like(read_bounded(released), original))


def _read_bytes(path: Path, what: str) -> bytes:
    from sdc_core.data.io import MAX_BYTES

    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise SdcInputError(f"{path}: the {what} is {size:,} bytes; at most {MAX_BYTES:,}")
        return path.read_bytes()
    except OSError as err:
        raise SdcInputError(f"{path}: cannot read the {what} "
                            f"({getattr(err, 'strerror', None) or err})") from None


def _cmd_pack(args: argparse.Namespace) -> int:
    from sdc_core.assess import RiskOptions, Setting
    from sdc_core.pack import Decision, PackRequest, build_pack, load_decision, sha256
    from sdc_core.recipe import load_recipe
    from sdc_core.release_types import parse_target, release_type, with_targets
    from sdc_core.tables.cell_rules import Rule

    out = args.output
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise SdcInputError(f"{out}: the pack's folder must be new or empty")
    kind = with_targets(release_type(args.kind), [parse_target(t) for t in args.target])
    recipe = load_recipe(_read_text(args.recipe, "recipe"))
    decision = load_decision(_read_text(args.decision, "decision")) if args.decision \
        else Decision()
    spec = _analysis_spec(args.analysis) if args.analysis else None
    rule = Rule.parse(args.table_rule)
    raw = _read_bytes(Path(args.original), "original")
    original = read_bounded(Path(args.original))
    parent = _read_parent(args.parent, original) if args.parent is not None else None
    numeric = _numeric_columns(args, original)
    if args.sensitive:
        from sdc_core.keys import check_columns

        check_columns(original, args.sensitive, "sensitive")
    setting = Setting(tuple(args.qi), tuple(numeric), tuple(args.sensitive), tuple(args.known),
                      weight=args.weight, household=args.household,
                      risk=RiskOptions(kind.k), not_released=tuple(args.not_released))
    sweep = None
    if args.grid is not None:
        from sdc_core.sweep.run import run_sweep

        sweep = run_sweep(original, args.qi, _read_json(args.grid, "grid"), args.weight).table
    req = PackRequest(original, recipe, kind, setting,
                      title=args.title if args.title is not None else Path(args.original).name,
                      original_sha256=sha256(raw), parent=parent,
                      tables=tuple(tuple(t) for t in args.tables), table_rule=rule,
                      questions=tuple(args.questions),
                      analyses=spec, sweep=sweep, decision=decision)
    made = build_pack(req)
    written = made.write(out)
    if args.zip:
        zipped = out.with_name(out.name + ".zip")
        zipped.write_bytes(made.zip_bytes())
        written.append(zipped)
    for uid, status in made.statuses.items():
        print(f"{uid}: {status.status}" + "".join(f"\n  {r}" for r in status.reasons))
    print(f"wrote {len(written)} files to {out} ({kind.name})")
    return 0


def _print_households_and_tables(out: dict[str, Any]) -> None:
    """The household linkage attack and the ``--table`` tables, a line each."""
    if "household_linkage" in out:
        h = out["household_linkage"]
        print(f"household linkage attack: {h['household_linkage_reidentified']} of "
              f"{h['households']} households re-identified "
              f"({h['household_linkage_reidentified_percent']:.2f} %, "
              f"{h['household_linkage_people']} people)")
    for t in out.get("cell_loss", {}).get("tables", []):
        print(f"table {' × '.join(map(str, t['columns']))} ({t['cells']} cells): "
              + ", ".join(f"{measure_name(m)} {t[m]:.6g}" for m in
                          ("absD", "relabsD", "abssqrtD", "false_zeros", "false_nonzeros")))


#: Why ``compare`` has no ``attribute`` key without a recipe.
NO_RECIPE_ATTRIBUTE = ("no --recipe: which columns were perturbed, and how, is unknown, so "
                       "their deniability (attribute) is not computed")


def _analysis_spec(path: Path) -> Any:
    """The benchmark analyses of a spec file (:func:`sdc_core.utility.analysis.parse_spec`)."""
    from sdc_core.utility.analysis import parse_spec

    try:
        return parse_spec(_read_json(path, "analysis spec"))
    except SdcInputError as err:
        message = str(err)
        raise SdcInputError(message if message.startswith(str(path))
                            else f"{path}: {message}") from None


def _print_validity(out: dict[str, Any]) -> None:
    """The analyses' verdicts (each line as the Protect page writes it: NAME: its
    ``verdict_text``), the worst tables and pMSE, a few lines."""
    from sdc_core.utility.validity import S_PMSE_RULE, VERDICT_RULE

    def num(v: float | None, spec: str = ".4f") -> str:
        return "n/a" if v is None else format(v, spec)

    print(f"mean CI overlap  {num(out['mean_ci_overlap'])} (1 − it: the analyses' loss); "
          f"share of analyses that hold {num(out['analyses_holding'], '.3f')}")
    for a in out["analyses"]:
        print(f"  {a['name']}: {a['verdict_text']}")
        if "error" in a:
            print(f"    {a['error']}")
    print(f"  {VERDICT_RULE}")
    print(f"worst-table TVD  {num(out['worst_tvd'])} over {len(out['tables'])} 1- and 2-way "
          f"tables of {', '.join(out['table_columns'])}")
    for t in out["tables"][:5]:
        print(f"  {' × '.join(map(str, t['columns']))}: TVD {t['tvd']:.4f}, "
              f"Hellinger {t['hellinger']:.4f}, false zeros {t['false_zeros']}, "
              f"false non-zeros {t['false_nonzeros']}")
    if out.get("pmse") is not None:
        print(f"pMSE             {out['pmse']:.6g}; S_pMSE {out['s_pmse']:.4g} "
              f"({out['pmse_model']['parameters']} parameters)")
        print(f"  {S_PMSE_RULE}")
    elif "pmse_error" in out:
        print(f"pMSE             not computed: {out['pmse_error']}")


def _compare_on_engine(args: argparse.Namespace) -> int:
    from sdc_core.engines import jobs
    from sdc_core.recipe import load_recipe, release_notes

    recipe = load_recipe(_read_text(args.recipe, "recipe")) if args.recipe else None

    def job(engine: Any) -> dict[str, Any]:
        attack = jobs.linkage(engine, args.original, args.protected, args.qi, recipe,
                              args.known, args.records) if args.qi is not None else {}
        return {**jobs.compare(engine, args.original, args.protected, args.numeric,
                               args.il1_missing, args.not_released), **attack}
    out = _with_engine(args, job)
    out["release_notes"] = release_notes(recipe)
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        _print_compare(out, args, recipe)
    return 0


def _print_compare(out: dict[str, Any], args: argparse.Namespace, recipe: Any) -> None:
    if "record_by_record" in out:
        _print_unaligned(out)
        return
    _print_il1(out)
    for note in out.get("release_notes", []):
        print(f"note: {note}")
    if args.qi is None:
        return
    print(f"linkage attack on {', '.join(args.qi)}"
          + (f" (known: {', '.join(args.known)})" if args.known else "")
          + ("" if recipe else ", released values taken as they are (no --recipe)"))
    for key in ("linkage_reidentifications", "linkage_risk_percent", "linkage_percent_certain",
                "drisk_percent"):
        if key in out:
            print(_figure_line(key, out[key]))
    _print_attackers(out)
    _print_perturbation(out)
    _print_synthetic(out)


def _print_unaligned(out: dict[str, Any]) -> None:
    """``compare`` of a release without row correspondence: why the record-by-record
    measures give no number, then the measures of the release as a set of records."""
    print(f"release          {out['records']} records, from {out['original_records']}")
    print(f"note: {out['record_by_record']} (IL1, the eigenvalue similarity, the linkage "
          "attacks, deniability and the attribute-inference attack are not computed)")
    for note in out.get("release_notes", []):
        print(f"note: {note}")
    _print_synthetic(out)


def _print_synthetic(out: dict[str, Any]) -> None:
    """Replicated uniques, DiSCO beside the original's own, and the distance against a
    holdout, a line each (docs/measures.md, "Disclosure risk of a synthetic release")."""
    if "replicated_uniques" not in out:
        return
    print(f"{measure_name('replicated_uniques')}: {out['replicated_uniques']} "
          f"({out['replicated_uniques_percent']:.2f} % of the original's records)")
    for d in out["disco"]:
        print(f"  {d['column']}: {measure_name('disco_percent')} {d['disco_percent']:.2f} % "
              f"({measure_name('disco_original_percent')} {d['disco_original_percent']:.2f} %)")
    if "dcr_train_share" in out:
        print(f"{measure_name('dcr_train_share')}: {out['dcr_train_share']:.4f} (by chance "
              f"{out['dcr_expected_share']:.4f}); {measure_name('exact_copies')} "
              f"{out['exact_copies']}")


def _print_perturbation(out: dict[str, Any]) -> None:
    """What perturbation buys, one line per perturbed column, then the attribute-inference
    attack and the release's closeness, one line per sensitive column."""
    if "attribute_note" in out:
        print(f"note: {out['attribute_note']}")
    elif not out.get("attribute"):
        print("deniability: no column is perturbed (PRAM, relabeling, randomized response)")
    else:
        print("deniability of the perturbed columns (what perturbation buys)")
        for d in out["attribute"]:
            print(f"  {d['column']} ({d['method']}): {d['meaning']}; "
                  f"{measure_name('guess_accuracy')} {_share(d['guess_accuracy'])} vs "
                  f"{measure_name('baseline')} {_share(d['baseline'])}")
            if "household_meaning" in d:
                print(f"    {d['household_meaning']}")
            if d.get("household_warning"):
                print(f"    warning: {d['household_warning']}")
    if "inference" in out:
        i = out["inference"]
        print(f"attribute-inference attack (the linkage attack's attacker guesses each "
              f"sensitive column): {measure_name('inference_gain')} "
              f"{_points(i['inference_gain'])} overall")
        for c in i["attribute_inference"]:
            cap = ("" if c["inference_cap"] is None
                   else f", {measure_name('inference_cap')} {_share(c['inference_cap'])}")
            print(f"  {c['column']} ({c['kind']}): {measure_name('inference_accuracy')} "
                  f"{_share(c['inference_accuracy'])} vs {measure_name('inference_baseline')} "
                  f"{_share(c['inference_baseline'])} ({_points(c['inference_gain'])}{cap}; "
                  f"{c['inference_n']} records)")
    if out.get("closeness"):
        print("closeness of the sensitive columns over the release's classes (the worst class)")
        for line in _closeness_lines(out["closeness"], "the release"):
            print(line)


def _share(v: float | None) -> str:
    """A share 0–1 as a percentage with one decimal; n/a when undefined (null)."""
    return "n/a" if v is None else f"{100 * v:.1f} %"


def _points(v: float | None) -> str:
    """A gain in percentage points, signed; n/a when undefined (null)."""
    return "n/a" if v is None else f"{v:+.1f} points"


def _closeness_lines(entries: list[dict[str, Any]], of: str) -> list[str]:
    """One line per sensitive column: t-closeness, basic and enhanced β-likeness, δ-disclosure
    (docs/measures.md, "t-closeness, β-likeness and δ-disclosure")."""
    def num(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.6f}"

    return [f"  {c['column']} in {of}: " + ", ".join(
        f"{measure_name(k)} {num(c[k])}" for k in
        ("t_closeness", "beta_likeness", "enhanced_beta_likeness", "delta_disclosure"))
        + ("" if c["delta_disclosure_bounded"] else
           " (over the values a class holds; a class lacks one, so the paper's δ is ∞)")
        for c in entries]


def _print_attackers(out: dict[str, Any]) -> None:
    """The linkage attack's headline attacker (the one whose figures are above), then every
    attacker's re-identifications and risk (docs/measures.md, "The attackers")."""
    from sdc_core.risk.linkage import ATTACKER_NAMES

    top = out["linkage_attacker"]
    print(f"  {'attacker':<{_NAME_WIDTH}}{ATTACKER_NAMES[top]} (of "
          f"{len(out['linkage_attackers'])}, the one that re-identifies most)")
    for a, f in out["linkage_attackers"].items():
        print(f"    {ATTACKER_NAMES[a]:<{_NAME_WIDTH - 2}}{f['linkage_reidentifications']:.6f} "
              f"({f['linkage_risk_percent']:.6f} %)")


#: The width of a figure's name on the command line's text (:mod:`sdc_core.names`).
_NAME_WIDTH = 35


def _figure_line(key: str, value: float, k: int | str = "k") -> str:
    """One figure of ``risk`` or ``compare``: its name (:mod:`sdc_core.names`), its value with
    six decimals (a class size as it is) and its unit."""
    unit = " %" if MEASURES[key].unit == "%" else ""
    text = f"{value:g}" if key in ("min_k", "median_k") else f"{value:.6f}"
    return f"  {measure_name(key, k):<{_NAME_WIDTH}}{text}{unit}"


def _print_il1(out: dict[str, Any]) -> None:
    for key in ("IL1_release", "IL1_overall", "IL1_numeric", "IL1_categorical"):
        note = {"IL1_release": f" (mean IL1 over the {len(out['released_columns'])} released "
                               "columns)",
                "IL1_overall": " (mean over the changed columns)"}.get(key, "")
        print(f"{measure_name(key):<16} {out[key]:.6f}{note}")
    print(f"IL1 reading      il1_missing = {out['il1_missing']}: "
          + _IL1_READING[out['il1_missing']])
    print(f"{measure_name('eigenvalue_similarity_percent')} "
          f"{out['eigenvalue_similarity_percent']:.6f} %")
    for c in out["changed_columns"]:
        print(f"  changed: {c} (IL1 {out['per_column'][c]:.6f})")
    for c in out["dropped_columns"]:
        print(f"  dropped: {c} (IL1 1)")


_LOSS_READING = {
    "ci_overlap_loss": "1 − the mean CI overlap of the benchmark analyses",
    "worst_tvd": "the largest total variation distance of the compared tables",
    "s_pmse": "S_pMSE of the propensity model (near 1: not told apart)"}

_IL1_READING = {
    "max": "a numeric value blanked by protection counts as the maximum loss 1",
    "ignore": "numeric values blanked by protection are left out (sdcMicro's reading)"}


def _write_records(frame: pd.DataFrame, path: Path) -> None:
    try:
        frame.to_csv(path, index=False)
    except OSError as err:
        raise SdcInputError(f"{path}: cannot write ({err.strerror})") from None


def _cmd_sweep(args: argparse.Namespace) -> int:
    from sdc_core.data.io import write_table
    from sdc_core.sweep.run import PARETO_RISK, run_sweep

    if args.output.suffix.lower() != ".csv":
        raise SdcInputError(f"{args.output}: the sweep table is written as .csv")
    df = read_bounded(args.data)
    grid = _read_json(args.grid, "grid")

    def progress(done: int, total: int, label: str) -> None:
        if total >= 10 and (done == total or done % max(1, total // 10) == 0):
            print(f"sweep: {done}/{total} ({label})", file=sys.stderr, flush=True)

    result = run_sweep(df, args.qi, grid, args.weight, args.na, args.alpha, progress)
    table = result.table
    write_table(table, args.output)
    best = table[table["pareto"]]
    print(f"wrote {len(table)} rows to {args.output}; Pareto-optimal: "
          + ", ".join(_setting_name(r) for r in best.itertuples()))
    assert isinstance(grid, dict)  # run_sweep refused anything else
    if result.off_front:
        risk = PARETO_RISK[grid.get("pareto_risk", "linkage")]
        print(f"{result.off_front} synthetic rows are left out of the Pareto front and the "
              f"best: {risk} or {result.loss} compares record by record (record_by_record)")
    reading = grid.get("il1_missing", "max")
    hidden = set(grid.get("not_released", []))
    if result.loss != "IL1_release":
        print(f"loss {result.loss}: {_LOSS_READING[result.loss]}")
    print(f"IL1_release: mean IL1 over the {len(df.columns) - len(hidden)} released "
          "columns" + (f" (not released: {', '.join(sorted(map(str, hidden)))})" if hidden
                       else ""))
    print(f"IL1 reading il1_missing = {reading}: {_IL1_READING[reading]}")
    if result.pruned:
        print(f"pruned search: evaluated {result.evaluated} of {result.asked} combinations"
              + (f"; {result.violations} evaluated pairs contradict its monotonicity "
                 'assumption, so the best may differ from an exhaustive search ("search": '
                 '"exhaustive")' if result.violations else ""))
    if result.target is None:
        if args.best_recipe:
            raise SdcInputError("--best-recipe needs a target in the grid")
        return 0
    t = result.target
    if result.best is None:
        low = table.iloc[1:][t.measure].min()
        raise SdcInputError(f"no setting meets {t.describe()} (the lowest {t.measure} is "
                            f"{low:.6g}); the table is written")
    row = table.loc[result.best]
    recipe = result.best_recipe
    assert recipe is not None  # there is a best row
    kept = f", {t.keep.measure} {row[t.keep.measure]:.6g}" if t.keep else ""
    loss = f"{result.loss} {row[result.loss]:.6g}, " if result.loss != "IL1_release" else ""
    pair = COUNT_AND_PERCENT.get(t.measure)  # a count with its percentage, and back
    other = f" ({pair} {row[pair]:.6g})" if pair else ""
    print(f"best under {t.describe()}: {t.measure} {row[t.measure]:.6g}{other}{kept}, {loss}"
          f"IL1_release {row['IL1_release']:.6g} (IL1_overall {row['IL1_overall']:.6g}), "
          f"suppressed values {row['suppressed_values']:.6g}; recipe: "
          f"{json.dumps(recipe, ensure_ascii=False)}")
    if args.best_recipe:
        _write_text(args.best_recipe, json.dumps({"version": 1, **recipe}, indent=2,
                                                 ensure_ascii=False) + "\n")
        print(f"wrote the best recipe to {args.best_recipe}")
    return 0


def _setting_name(r: Any) -> str:
    """A table row in a few words: "BASELINE", "band age width=10", or its recipe's steps."""
    from sdc_core.recipe import describe_steps

    if r.method == "BASELINE":
        return "BASELINE"
    return describe_steps(json.loads(r.recipe)["steps"])


def _write_text(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        raise SdcInputError(f"{path}: cannot write ({err.strerror})") from None


def _cmd_tables(args: argparse.Namespace) -> int:
    from sdc_core.tables.responses import audit, response_table

    if args.cross is not None:
        if args.question or args.indicators:
            raise SdcInputError("give --cross or --question/--indicators, not both")
        return _cross_table(args)
    if args.household is not None or args.max_contributions is not None \
            or args.protection is not None or args.hierarchy:
        raise SdcInputError("--household, --max-contributions, --protection and --hierarchy go "
                            "with --cross")
    if not args.question and not args.indicators:
        raise SdcInputError("give --question (answer counts) or --cross (a cross table)")
    df = read_bounded(args.data)
    questions: list[str | list[str]] = list(args.question)
    if args.indicators:
        questions.append(args.indicators)
    published = [response_table(df, q, args.participants, args.q, args.t, args.multi,
                                args.delimiter) for q in questions]
    if args.json:
        out = {"questions": [p.to_dict() for p in published]}
        for entry, p in zip(out["questions"], published):
            entry["audit_passes"] = audit(p).passes if p.shown else True
        print(json.dumps(out, indent=2))
        return 0
    for p in published:
        if p.shown:
            assert p.responses is not None  # a shown question publishes its responses
            head = f"{p.responses.display} responses"
        else:
            head = f"hidden (fewer than {p.q} responses)"
        print(f"{p.question}: {head}")
        for o in p.options:
            print(f"  {o.option:<30} {o.display}")
        if p.nonresponse is not None:
            print(f"  {'(no response)':<30} {p.nonresponse.display}")
    return 0


def _cross_table(args: argparse.Namespace) -> int:
    """``tables --cross``: the published cross table (docs/tables.md, "Publishing a table")."""
    from sdc_core.data.io import WRITABLE_EXTENSIONS, write_table
    from sdc_core.tables.cell_rules import Rule
    from sdc_core.tables.table_release import TIME_LIMIT, release_table, unit_text

    if args.output is None and not args.json:
        raise SdcInputError("--cross writes a table: give -o OUT.csv (or --json)")
    if args.output is not None and args.output.suffix.lower() not in WRITABLE_EXTENSIONS:
        raise SdcInputError(f"{args.output}: output must end in "
                            f"{', '.join(WRITABLE_EXTENSIONS)}")
    if args.max_contributions is not None and (args.method != "dp" or args.household is None):
        raise SdcInputError("--max-contributions goes with --method dp and --household (without "
                            "a household id each record is its own unit)")
    rule = Rule.parse(args.rule or ("p:10" if args.sum else "threshold:5"))  # text only here
    hierarchies = _hierarchies(args.hierarchy)
    if hierarchies and args.difference:
        raise SdcInputError("--difference takes a table without --hierarchy")
    if len(args.cross) > 1:
        return _linked_tables(args, rule, hierarchies)
    df = read_bounded(args.data)
    made = release_table(df, args.cross[0], args.sum, args.method, rule, args.epsilon, args.seed,
                         args.ckm_threshold, args.household, args.max_contributions,
                         protection=args.protection, secondary=args.secondary,
                         hierarchies=hierarchies, clip=args.clip)
    pair = _difference(args, df, rule) if args.difference else None
    cols = list(made.truth.columns)
    out = made.published()
    if args.output is not None:
        write_table(out, args.output)
    if args.json:
        made_json = made.to_json()
        if pair is not None:
            made_json["differencing"] = pair.to_json()
        if hierarchies:
            made_json["unused_codes"] = _unused(hierarchies, made.truth)
        print(json.dumps(made_json, indent=2, default=str))
        return 0
    hidden = int(out[made.value].isna().sum())
    if made.method == "suppress":
        unchecked = made.audit.unchecked_cells if made.audit is not None else 0
        shielded = "" if args.protection is None else \
            f" with interval protection {args.protection:g} %"
        what = f"rule {rule.text}{shielded} on {unit_text(made.household)}, {hidden} cells " \
            "hidden, audit " + (
            "passed" if made.audit is not None and made.audit.passes else "FAILED") + (
            f" ({unchecked} hidden cells not checked within {TIME_LIMIT:g} s)"
            if unchecked else "")
    elif made.method == "dp" and made.clip is not None:
        what = f"ε {args.epsilon:g} per {made.unit}, contributions clipped to [0, " \
            f"{made.clip:g}], Laplace noise" + (
            f", at most {made.max_contributions} records per person ({made.records_dropped} "
            "dropped)" if made.household is not None else "")
    elif made.method == "dp":
        what = f"ε {args.epsilon:g} per {made.unit}, discrete Laplace noise" + (
            f", at most {made.max_contributions} records per person ({made.records_dropped} "
            "dropped)" if made.household is not None else
            " (a person with k records: up to k·ε; give --household to protect persons)")
    elif made.noise is not None:
        what = "the cell key method for sums, noise m·x₁·z with D {D:g}, V {V:g}, m {m:g}, " \
            "sensitive cells (p {p:g} %) moved at least p % of x₁".format(**made.noise) + (
            f", one key per {made.household}" if made.household is not None else "")
    else:
        what = f"the cell key method, counts below {args.ckm_threshold} blank" + (
            f", one key per {made.household} and cells of fewer persons blank"
            if made.household is not None else "")
    print(f"{' × '.join(cols)}: {len(out)} cells and margins, {what}; "
          f"absD {made.utility.absD:g} against the true table"
          + (f"; wrote {args.output}" if args.output is not None else ""))
    if pair is not None:
        print(pair.summary())
    _print_unused(hierarchies, made.truth)
    return 0


def _used_codes(table: Any) -> dict[str, list[str]]:
    """Each column's codes in a cross table: its levels and its code list's inner nodes."""
    nodes = table.nodes or ((),) * len(table.columns)
    return {c: [*lv, *nd] for c, lv, nd in zip(table.columns, table.levels, nodes)}


def _unused(hierarchies: dict[str, Any], table: Any) -> dict[str, list[str]]:
    """Per column with a code list, the codes no record falls under (``--json``)."""
    from sdc_core.tables.hierarchy import unused_codes

    used = _used_codes(table)
    return {c: unused_codes(h, used[c]) for c, h in hierarchies.items()}


def _print_unused(hierarchies: dict[str, Any], table: Any) -> None:
    """The note that codes of a list are left out, when some are."""
    from sdc_core.tables.hierarchy import unused_note

    note = unused_note(hierarchies, _used_codes(table)) if hierarchies else ""
    if note:
        print(f"note: {note}")


def _hierarchies(specs: list[str]) -> dict[str, Any]:
    """``--hierarchy COLUMN=SPEC`` (repeated) as each column's code list
    (:mod:`sdc_core.tables.hierarchy`): ``prefix:2,4``, or a CSV or JSON file read within
    its size bound before it is decoded."""
    from sdc_core.tables.hierarchy import MAX_BYTES, parse_spec, prefixes, read_hierarchy

    out: dict[str, Any] = {}
    for text in specs:
        column, spec = parse_spec(text)
        if column in out:
            raise SdcInputError(f"--hierarchy names the column {column[:80]!r} twice")
        if spec.lower().startswith("prefix:"):
            out[column] = prefixes(spec[len("prefix:"):])
            continue
        path = Path(spec)
        try:
            size = path.stat().st_size
            if size > MAX_BYTES:
                raise SdcInputError(f"{path}: the hierarchy file is {size:,} bytes; at most "
                                    f"{MAX_BYTES:,}")
            with path.open("rb") as f:
                raw = f.read(MAX_BYTES + 1)  # a file that grew since is refused all the same
        except OSError as err:
            raise SdcInputError(f"{path}: cannot read the hierarchy "
                                f"({getattr(err, 'strerror', None) or err})") from None
        try:
            out[column] = read_hierarchy(raw, path.name)
        except SdcInputError as err:
            raise SdcInputError(f"{path}: {err}") from None
    return out


def _linked_tables(args: argparse.Namespace, rule: Rule, hierarchies: dict[str, Any]) -> int:
    """``tables --cross A,B --cross A,C …``: linked tables protected together (docs/tables.md,
    "Linked tables")."""
    from sdc_core.data.io import write_table
    from sdc_core.tables.linked import release_linked
    from sdc_core.tables.table_release import TIME_LIMIT, unit_text

    if args.method != "suppress":
        raise SdcInputError("linked tables (--cross repeated) are published by suppression "
                            "(--method suppress)")
    if args.difference:
        raise SdcInputError("--difference takes one --cross table")
    df = read_bounded(args.data)
    made = release_linked(df, args.cross, args.sum, rule, args.household,
                          protection=args.protection, secondary=args.secondary,
                          hierarchies=hierarchies)
    out = made.frame()
    if args.output is not None:
        write_table(out, args.output)
    audit = made.audit
    if args.json:
        cells = out.astype(object).where(out.notna(), None)
        print(json.dumps({"tables": [list(t) for t in made.tables], "rule": rule.text,
                          "protection": args.protection,
                          "value": made.value, "household": made.finest.unit,
                          "unit": unit_text(made.finest.unit), "left_out": made.left_out,
                          "method": made.method, "audit_passes": audit.passes,
                          "unchecked_cells": audit.unchecked_cells,
                          **({"unused_codes": _unused(hierarchies, made.finest)}
                             if hierarchies else {}),
                          "cells": cells.to_dict(orient="records")}, indent=2, default=str))
        return 0
    unchecked = audit.unchecked_cells
    print(f"{len(made.tables)} linked tables ({'; '.join(map(','.join, made.tables))}): "
          f"{len(out)} cells and margins, rule {rule.text}"
          + ("" if args.protection is None else
             f" with interval protection {args.protection:g} %")
          + f" on {unit_text(made.finest.unit)}, "
          f"{made.hidden_cells} cells hidden (a cell shared by tables counted once), joint "
          "audit "
          + ("passed" if audit.passes else "FAILED")
          + (f" ({unchecked} hidden cells not checked within {TIME_LIMIT:g} s)" if unchecked
             else "")
          + (f"; {made.left_out} records with a blank left out of every table"
             if made.left_out else "")
          + (f"; wrote {args.output}" if args.output is not None else ""))
    _print_unused(hierarchies, made.finest)
    return 0


def _difference(args: argparse.Namespace, df: pd.DataFrame, rule: Rule) -> DifferencingResult:
    """``--difference COLUMN=L1,L2``: the table and the same with the levels merged
    (docs/tables.md, "Differencing between two tables")."""
    from sdc_core.tables.differencing import differencing_risk

    column, eq, levels = str(args.difference).partition("=")
    merged = [v.strip() for v in levels.split(",") if v.strip()]
    if not eq or not column.strip() or len(merged) < 2:
        raise SdcInputError("--difference takes COLUMN=L1,L2 (at least two levels to merge)")
    if args.sum:
        raise SdcInputError("--difference compares count tables: leave out --sum")
    return differencing_risk(df, args.cross[0], column.strip(), merged, args.method, rule,
                             args.epsilon, args.seed, args.ckm_threshold,
                             household=args.household,
                             max_contributions=args.max_contributions)


def _cmd_apply(args: argparse.Namespace) -> int:
    from sdc_core.data.io import WRITABLE_EXTENSIONS, export_notes, write_table
    from sdc_core.methods.banding import release_note
    from sdc_core.recipe import apply_recipe, load_recipe, release_notes

    if args.output.suffix.lower() not in WRITABLE_EXTENSIONS:
        raise SdcInputError(f"{args.output}: output must end in "
                            f"{', '.join(WRITABLE_EXTENSIONS)}")
    text = _read_text(args.recipe, "recipe")
    recipe = load_recipe(text)
    if args.engine != "pandas":
        from sdc_core.engines import jobs

        reports = _with_engine(args, lambda e: jobs.apply(e, args.data, recipe, args.output,
                                                          not args.no_neutralize))
        for report in reports:
            print(f"step {report['step']} {report['method']} {report['column']}")
        for note in release_notes(recipe):
            print(f"{args.program}: note: {note}", file=sys.stderr)
        print(f"wrote the protected table to {args.output} ({args.engine})")
        return 0
    df = read_bounded(args.data)
    result = apply_recipe(recipe, df)
    for warning in result.warnings:
        print(f"{args.program}: warning: {warning}", file=sys.stderr)
    write_table(result.data, args.output, neutralize=not args.no_neutralize)
    for note in export_notes(result.data, args.output.suffix, not args.no_neutralize):
        print(f"{args.program}: note: {note}", file=sys.stderr)
    for note in filter(None, map(release_note, result.reports)):
        print(f"{args.program}: note: {note}", file=sys.stderr)
    for report in result.reports:
        details = ", ".join(f"{k} {_short(v)}" for k, v in report.items()
                            if k not in ("step", "method", "column"))
        named = " ".join(filter(None, (report["method"], report["column"])))  # synthesis: none
        print(f"step {report['step']} {named}: {details}")
        if report["method"] == "local_suppression":
            print(f"  k ≥ {report['k']} when a blank matches any value (sdcMicro's reading; "
                  f"smallest class {report['min_k_after']:g}); read as a value of its own the "
                  f"smallest class is {report['min_k_after_as_category']:g}")
    print(f"wrote {len(result.data)} records to {args.output}")
    return 0


def _short(value: object) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def _cmd_risk(args: argparse.Namespace) -> int:
    from sdc_core.assess import RiskOptions, Sampling, Setting, Unavailable, assess, given
    from sdc_core.risk import sensitive_report
    from sdc_core.risk.closeness import closeness_json
    from sdc_core.risk.household import risk_json

    if not float(args.k).is_integer():
        raise SdcInputError(f"--k must be a whole number ≥ 1, not {args.k:g}")
    if args.engine != "pandas":
        return _risk_on_engine(args)
    df = read_bounded(args.data)
    if args.sensitive:
        from sdc_core.keys import check_columns

        check_columns(df, args.sensitive, "sensitive")
    # the table judged as its own release: the figures of its keys
    table = assess(df, df, Setting(
        tuple(args.qi), sensitive=tuple(args.sensitive), weight=args.weight,
        household=args.household, risk=RiskOptions(int(args.k), args.na, args.alpha),
        sampling=Sampling(args.sampling_fraction, args.population)))
    profile = table.keys
    result = profile.summary()
    records = profile.records()
    if args.household is not None:
        hr = given(table.household_risk)
        result.update(risk_json(args.household, hr.n_households, hr.expected_reidentifications,
                                len(df), given(table.composition_uniques)))
        records["household_risk"] = hr.risk
    result.update(l_diversity={}, attribute_disclosure=[], direct_identifiers=[], closeness=[])
    result["population"] = _population(table, args)
    if args.sensitive:  # the scan looks at every column: only when there is something to scan
        ldiv, scan = sensitive_report(df, profile, args.sensitive)
        closeness = table.closeness
        result.update(l_diversity={s: v.to_dict() for s, v in ldiv.items()},
                      attribute_disclosure=[f.to_dict() for f in scan.findings],
                      direct_identifiers=scan.direct_identifiers,
                      closeness=[] if isinstance(closeness, Unavailable)
                      else closeness_json(closeness))
    result["suda2"] = None
    if not args.no_suda2:
        from sdc_core.checks import check_probability
        from sdc_core.risk.suda2 import suda2

        fraction = check_probability("--dis-fraction", args.dis_fraction, low_open=True)
        try:
            special = suda2(df, args.qi, dis_fraction=fraction)
        except SdcInputError as err:  # too many keys for SUDA2: the rest still stands
            print(f"{args.program}: note: SUDA2 skipped: {err}", file=sys.stderr)
        else:
            result["suda2"] = special.summary()
            records = records.join(special.records())
    if args.records is not None:
        _write_records(records, args.records)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(_format_risk(result))
    return 0


def _population(table: Any, args: argparse.Namespace) -> dict[str, Any] | None:
    """The population figures of the table's assessment when the sampling is known (given,
    or the weights' sum)."""
    from sdc_core.assess import Unavailable

    given = args.sampling_fraction is not None or args.population is not None
    if not given and args.weight is None:
        return None
    population = table.population
    if isinstance(population, Unavailable):
        if given and population.asked:
            raise SdcInputError(population.reason)
        if population.asked:  # implied by the weights alone: the rest of the figures stand
            print(f"{args.program}: note: population figures skipped: {population.reason}",
                  file=sys.stderr)
        return None
    return population.to_json()


def _risk_on_engine(args: argparse.Namespace) -> int:
    from sdc_core.checks import check_k
    from sdc_core.engines import jobs

    if args.sampling_fraction is not None or args.population is not None:
        raise SdcInputError("--sampling-fraction and --population read the table in memory: "
                            "use the pandas engine")
    k = check_k(int(args.k))
    result = _with_engine(args, lambda e: jobs.risk(e, args.data, args.qi, args.weight, k,
                                                    args.na, args.alpha, args.sensitive,
                                                    args.records, args.household))
    if not args.no_suda2:
        print(f"{args.program}: note: SUDA2 runs on the pandas engine only; not computed on "
              f"{args.engine}", file=sys.stderr)
    if args.sensitive:
        print(f"{args.program}: note: t-closeness, β-likeness and δ-disclosure run on the "
              f"pandas engine only; not computed on {args.engine}", file=sys.stderr)
    print(json.dumps(result, indent=2) if args.json else _format_risk(result))
    return 0


def _format_risk(r: dict) -> str:
    lines = [
        f"Risk on {', '.join(r['qi'])} ({r['n_records']} records, {r['n_classes']} classes"
        + (f", weight {r['weight']}" if r["weight"] else "") + ")",
    ]
    k = r["k_threshold"]
    for key in ("percent_unique", "percent_k_le_threshold", "percent_below_k",
                "expected_reidentifications", "avg_linkage_risk_percent", "global_risk_percent",
                "global_expected_reidentifications", "min_k", "median_k"):
        lines.append(_figure_line(key, r[key], k))
    if "household_risk_pct" in r:
        lines.append(f"  {'household risk (' + str(r['household']) + ')':<{_NAME_WIDTH}}"
                     f"{r['household_risk_pct']:.6f} % "
                     f"({r['household_expected_reidentifications']:.6f} expected "
                     f"re-identifications; {r['households']} households, "
                     f"{r['household_composition_uniques']} unique by composition)")
    if r["n_records_with_missing_keys"]:
        lines.append(f"  {measure_name('n_records_with_missing_keys'):<{_NAME_WIDTH}}"
                     f"{r['n_records_with_missing_keys']} "
                     f"(na = {r['na']}, alpha = {r['alpha']:g})")
    for s, v in r["l_diversity"].items():
        lines.append(f"  l-diversity of {s}: min l = {v['min_l']}, "
                     f"{v['percent_l_eq_1']:.2f} % of records in classes with l = 1, "
                     f"{v['percent_no_sensitive_value']:.2f} % in classes with no {s} value "
                     "released (l = 0, left out of min l)")
    lines += _closeness_lines(r.get("closeness", []), "the table")
    for f in r["attribute_disclosure"]:
        lines.append(f"  WARNING: {f['column']} {f['level']} {f['sensitive']} "
                     f"({100 * f['share']:.1f} % of records)")
    for c in r["direct_identifiers"]:
        lines.append(f"  WARNING: {c} is a direct identifier (distinct on almost every record)")
    if r.get("population"):
        lines += _format_population(r["population"])
    if r.get("suda2"):
        s = r["suda2"]
        lines.append(f"  SUDA2 special uniques           {s['n_records_score_positive']} records "
                     f"score > 0; max score {s['max_score']:g}, max DIS score "
                     f"{s['max_dis_score']:.6f} (DisFraction {s['dis_fraction']:g})")
        lines.append("  SUDA2 attribute contributions   " + ", ".join(
            f"{c} {v:.2f} %" for c, v in s["attribute_contributions"].items()))
    return "\n".join(lines)


def _format_population(p: dict[str, Any]) -> list[str]:
    """The population figures of ``risk``: the sampling, each model, the log-linear risks."""
    source = {"fraction": "given", "population": "from the population size",
              "weights": "from the weights' sum"}[p["population_source"]]
    lines = [f"In the population (sampling fraction {p['sampling_fraction']:.6g}, N = "
             f"{p['population_size']:,.0f}, {source}; a blank key is a category of its own)",
             f"  sample uniqueness               {100 * p['sample_uniqueness']:.6f} %"]
    for model in ("zayatz", "pitman", "snb", "dankar"):
        name = f"{model} ({p['dankar_model']})" if model == "dankar" else model
        if p[model] is None:
            lines.append(f"  {name:<31} not valid: {p['reasons'].get(model, '')}")
        else:
            lines.append(f"  {name:<31} {100 * p[model]:.6f} % of the population unique "
                         f"({p[f'{model}_count']:,.1f} people)")
    for method, r in p["loglinear"].items():
        if "error" in r:
            lines.append(f"  log-linear {method:<20} not computed: {r['error']}")
        else:
            lines.append(f"  log-linear {method:<20} r1 {r['r1']:.6g}, r2 {r['r2']:.6g} "
                         f"(sdcMicro: over {r['cells']} cells); per sample unique r1 "
                         f"{r['r1_per_unique']:.6g}, r2 {r['r2_per_unique']:.6g}")
    return lines


def _invoked_name(argv: Sequence[str] | None) -> str:
    """``sdc_core`` (``python -m sdc_core``, or ``main`` called with arguments), else the name
    the command was run by: ``sdc`` for the installed script."""
    if argv is None and sys.argv and sys.argv[0]:
        stem = Path(sys.argv[0]).stem
        if stem not in ("__main__", "-c"):
            return stem
    return "sdc_core"


def _one_line(text: str) -> str:
    """``text`` on one line: a line break or other control character (from a column name, a
    cell, a file name) written as its escape (``\\n``), so an error stays one line."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    name = _invoked_name(argv)
    try:
        args = _parsed(_parser(name), argv)
        if hasattr(args, "engine"):
            _engine_options(args)  # settings that do not fit the engine are an error at once
        return args.func(args)
    except SdcInputError as err:
        print(f"{name}: error: {_one_line(str(err))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return 0
    except Exception as err:  # a bug, not bad input: still one line unless debugging
        if os.environ.get("SDC_DEBUG"):
            raise
        print(f"{name}: internal error: {type(err).__name__}: {_one_line(str(err))} "
              "(set SDC_DEBUG=1 for details)", file=sys.stderr)
        return 1
