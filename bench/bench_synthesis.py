"""Synthesis by sequential CART (``sdc_core.methods.synthesize``) against the pandas-3 port of
synthpop's CART synthesiser (the PyPI package ``synthpop-py``), side by side in the same run.

The port pins plotly below 7, so it cannot live in the project's environment: the bench makes
its own, ``bench/.synthpop-env`` (a venv of this interpreter with ``synthpop-py`` and pyarrow;
ignored by git), when it is missing, and runs the port there as a subprocess on the same table
written to a temporary Parquet file. The port's time is its own ``fit`` + ``generate``, timed
inside the subprocess (no interpreter start, no file reading); this synthesiser's is
``synthesize`` in this process. Same settings: at least 5 records a leaf (synthpop's minbucket),
no smoothing (the port has none), as many synthetic records as the original, seed 1 for both.
The port fits with ``min_impurity_decrease=1e-8`` (rpart's cp), this synthesiser with 0.

Tables (10 mixed columns each):

- ``adult``: ``shared/data/adult.csv`` (30,162 records, 9 columns: age and 8 text columns)
  resampled with replacement to n records (uniform draws, seed 0), with one numeric column
  added, ``hours`` = clip(round(N(38 + 4·[Male] + 5·[>50K], 11)), 1, 99), whole hours a week;
  at 10k, 100k and 1M records.
- ``random``: the worst case, 10 independent random columns at 100k records: age 0–99, sex,
  a 30-level region, a log-normal income, a uniform weight, a 300-level job, kids 0–4 with
  10 % blanks (Int64), a day count 0–4999 (the port takes no datetimes), a flag, a normal
  score with 5 % blanks. The port reads kids as float64 (it takes no nullable integers).

For each synthesiser and table: the median time (``repeat`` runs; one at 1M), the ratio of this
synthesiser's time to the port's (and this synthesiser's CPU time over its threads: near the
wall-clock time when the other core is busy, up to twice it when both are free), the mean TVD
of the 1-way and of the 2-way tables (``sdc_core.utility.fidelity.table_fidelity``: numbers in
10 quantile bins of the original),
pMSE and S_pMSE (``sdc_core.utility.fidelity.pmse``, main effects; the random table without
its 300-level job, past the model's 100 parameters) and the replicated uniques
(``sdc_core.risk.synthetic.replicated_uniques``; keys sex, age, race, marital-status for adult,
age, sex, region, kids for random). This synthesiser is also timed with its trees fitted in one
thread (``workers=1``), the baseline of its threads. Target: 100,000 records x 10 columns in at
most 10 s.

The port at 1M records takes about 5 minutes; ``--port-max 100000`` leaves it out there.

Run: ``python -m bench.bench_synthesis [--sizes 10000,100000,1000000] [--port-max N]
[--repeat 3]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from sdc_core.errors import SdcInputError
from sdc_core.methods.synthesize import synthesize
from sdc_core.risk.synthetic import replicated_uniques
from sdc_core.utility.fidelity import pmse, table_fidelity

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT.parent / "shared" / "data" / "adult.csv"
ENV = Path(__file__).resolve().parent / ".synthpop-env"
PORT = "synthpop-py==0.1.3"
SEED = 1
#: The goal at 100,000 records x 10 columns, in seconds
TARGET = 10.0
#: The port, run in its own environment: argv = table.parquet, seed, out.parquet; prints the
#: seconds of fit + generate as JSON
PORT_SCRIPT = """
import json, sys, time, warnings
import pandas as pd
from synthpop import Synthesiser
warnings.simplefilter("ignore")
df = pd.read_parquet(sys.argv[1])
for c in df.columns:
    if isinstance(df[c].dtype, pd.Int64Dtype):
        df[c] = df[c].astype("float64")
start = time.perf_counter()
out = Synthesiser(random_seed=int(sys.argv[2])).fit(df).generate()
seconds = time.perf_counter() - start
out.to_parquet(sys.argv[3])
print(json.dumps({"seconds": seconds}))
"""


def port_python() -> Path:
    """The port's interpreter, its environment made first when it is missing."""
    python = ENV / "bin" / "python"
    if not python.exists():
        print(f"making {ENV.relative_to(ROOT)} with {PORT} (once)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(ENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", PORT, "pyarrow"],
                       check=True)
    return python


def adult_table(n: int, seed: int = 0) -> pd.DataFrame:
    """adult.csv resampled with replacement to n records, with ``hours`` added (module
    docstring)."""
    base = pd.read_csv(ADULT, sep=";")
    r = np.random.default_rng(seed)
    df = base.iloc[r.integers(0, len(base), n)].reset_index(drop=True)
    mean = 38 + 4 * (df["sex"] == "Male") + 5 * (df["salary-class"] == ">50K")
    df["hours"] = np.clip(np.round(r.normal(mean, 11)), 1, 99).astype(np.int64)
    return df


def random_table(n: int, seed: int = 0) -> pd.DataFrame:
    """Ten independent random columns (module docstring)."""
    r = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": r.integers(0, 100, n),
        "sex": pd.array(r.choice(np.array(["F", "M"]), n), dtype="str"),
        "region": pd.array(np.char.add("R", r.integers(0, 30, n).astype(str)), dtype="str"),
        "income": np.round(r.lognormal(10, 0.8, n), 2),
        "weight": r.uniform(50, 150, n),
        "job": pd.array(np.char.add("J", r.integers(0, 300, n).astype(str)), dtype="str"),
        "kids": pd.array(np.where(r.random(n) < 0.1, None, r.integers(0, 5, n)), dtype="Int64"),
        "since": r.integers(0, 5000, n),
        "smoker": r.random(n) < 0.3,
        "score": np.where(r.random(n) < 0.05, np.nan, r.normal(50, 10, n)),
    })


def timed(func: Callable[[], pd.DataFrame], repeat: int) -> tuple[float, float, pd.DataFrame]:
    """The median wall-clock and CPU seconds (this process, all threads) of ``repeat`` runs,
    and the last run's table."""
    times, cpu, out = [], [], pd.DataFrame()
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        out = func()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return float(np.median(times)), float(np.median(cpu)), out


def run_port(python: Path, df: pd.DataFrame, repeat: int) -> tuple[float, pd.DataFrame]:
    """The port's median seconds (its own timing of fit + generate) and its last table."""
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "table.parquet", Path(tmp) / "synthetic.parquet"
        df.to_parquet(src)
        times = []
        for _ in range(repeat):
            done = subprocess.run([str(python), "-c", PORT_SCRIPT, str(src), str(SEED),
                                   str(dst)], check=True, capture_output=True, text=True)
            times.append(json.loads(done.stdout.strip().splitlines()[-1])["seconds"])
        return float(np.median(times)), pd.read_parquet(dst)


def figures(original: pd.DataFrame, synthetic: pd.DataFrame, keys: list[str],
            model: list[str]) -> dict[str, str]:
    """Mean 1-way and 2-way TVD, pMSE and S_pMSE, replicated uniques, as printed."""
    tables = table_fidelity(original, synthetic, list(original.columns))
    one = np.mean([t.tvd for t in tables if len(t.columns) == 1])
    two = np.mean([t.tvd for t in tables if len(t.columns) == 2])
    try:
        p = pmse(original, synthetic, model)
        prop = f"{p.pmse:.2e} / {p.s_pmse:7.1f}"
    except SdcInputError as err:
        prop = f"refused ({str(err)[:40]})"
    count, percent = replicated_uniques(original, synthetic, keys)
    return {"tvd1": f"{one:.4f}", "tvd2": f"{two:.4f}", "pmse": prop,
            "repu": f"{count:,} ({percent:.2f} %)"}


def side_by_side(name: str, df: pd.DataFrame, keys: list[str], model: list[str],
                 repeat: int, python: Path | None) -> None:
    """One table: this synthesiser (threads and one thread) and the port, times and figures."""
    cols = list(df.columns)
    print(f"{name}: {len(df):,} records x {len(cols)} columns, {repeat} run(s) each",
          flush=True)
    ours, cpu, syn = timed(lambda: synthesize(df, cols, seed=SEED).values, repeat)
    one, _, _ = timed(lambda: synthesize(df, cols, seed=SEED, workers=1).values, repeat)
    goal = (f" | target <= {TARGET:g} s: {'met' if ours <= TARGET else 'MISSED'}"
            if len(df) == 100_000 else "")
    print(f"  this synthesiser  median {ours:8.2f} s (CPU {cpu:.2f} s) | one thread "
          f"{one:8.2f} s | ratio {ours / one:5.2f}{goal}", flush=True)
    rows = [("this synthesiser", figures(df, syn, keys, model))]
    if python is not None:
        port, port_syn = run_port(python, df, repeat)
        print(f"  synthpop-py port  median {port:8.2f} s | this / port ratio "
              f"{ours / port:5.2f}", flush=True)
        rows.append(("synthpop-py port", figures(df, port_syn, keys, model)))
    else:
        print("  synthpop-py port  not run at this size (--port-max)")
    print(f"  {'':<18} {'1-way TVD':>9} {'2-way TVD':>9}  {'pMSE / S_pMSE':<20} repU")
    for label, f in rows:
        print(f"  {label:<18} {f['tvd1']:>9} {f['tvd2']:>9}  {f['pmse']:<20} {f['repu']}",
              flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--port-max", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-random", action="store_true")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    python = port_python()
    print(f"cores: {os.cpu_count()}; load average at start: {os.getloadavg()[0]:.1f}")
    adult_keys = ["sex", "age", "race", "marital-status"]
    warm = adult_table(1000)
    synthesize(warm, list(warm.columns), seed=SEED)  # scikit-learn imported before timing
    for n in (int(s) for s in args.sizes.split(",")):
        df = adult_table(n)
        side_by_side("adult", df, adult_keys, list(df.columns),
                     args.repeat if n < 1_000_000 else 1,
                     python if n <= args.port_max else None)
    if not args.no_random:
        df = random_table(100_000)
        side_by_side("random", df, ["age", "sex", "region", "kids"],
                     [c for c in df.columns if c != "job"], args.repeat, python)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
