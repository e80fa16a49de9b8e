"""The three engines side by side on generated census-like files (issue: DuckDB and Spark).

Data, generated inside DuckDB into a temporary directory (removed afterwards; nothing large is
kept): ``age`` 0–99, ``sex`` F/M, ``region`` R00–R29 (text), ``income`` log-normal rounded to
cents and ``inc1k`` = ⌊income / 1000⌋. Risk is on the 4 keys (age, sex, region, inc1k), the
realistic high-cardinality case; apply runs PRAM of region (p = 0.05), 5-year bands of age and a
rank swap of income (2.5 %); compare measures that output (IL1, eigenvalues and the linkage
attack on the 4 keys, all exact: banding is a public recoding, PRAM is compared exactly); a
second apply microaggregates income (onedims, k = 3).

Every figure is one command (``python -m sdc_core risk|apply …``) in a fresh process: wall time,
and peak memory = the largest sum of the resident sets of the process and all its descendants
(Spark's JVM and Python workers included), sampled every 0.1 s. The baseline, in the same run, is
a bare DuckDB ``GROUP BY`` of the four keys with ``COUNT(*)`` in a fresh process.

Sizes: 10M rows for the three engines (``--rows``), and 100M rows for DuckDB alone under a
memory limit (``--big-rows``, 0 to skip). Medians over ``--repeat`` runs (Spark and the big file
run once: their runs take minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

RECIPE = {"seed": 1, "steps": [
    {"method": "pram", "column": "region", "p": 0.05},
    {"method": "band", "column": "age", "width": 5},
    {"method": "rank_swap", "column": "income", "window_percent": 2.5}]}
QI = "age,sex,region,inc1k"
#: Microaggregation of income, one column on its own in groups of 3 (the scalable variant).
MICRO = {"seed": 1, "steps": [
    {"method": "microaggregation", "columns": ["income"], "k": 3, "algorithm": "onedims"}]}


def generate(path: Path, rows: int) -> None:
    import duckdb

    con = duckdb.connect()
    con.execute("SELECT setseed(0.42)")
    con.execute(f"""
        COPY (SELECT (floor(random() * 100))::BIGINT AS age,
                     CASE WHEN random() < 0.5 THEN 'F' ELSE 'M' END AS sex,
                     'R' || lpad((floor(random() * 30))::BIGINT::VARCHAR, 2, '0') AS region,
                     round(exp(10 + 0.8 * sqrt(-2 * ln(1 - random()))
                               * cos(2 * pi() * random())), 2) AS income
              FROM range({rows}))
        TO '{path}.tmp.parquet' (FORMAT parquet)""")
    con.execute(f"""COPY (SELECT *, floor(income / 1000)::BIGINT AS inc1k
                          FROM '{path}.tmp.parquet') TO '{path}' (FORMAT parquet)""")
    Path(f"{path}.tmp.parquet").unlink()
    con.close()


def _tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and all its descendants."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        p = int(entry)
        children.setdefault(int(fields[1]), []).append(p)
        rss[p] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        total += rss.get(p, 0)
        todo.extend(children.get(p, []))
    return total


def measure(argv: list[str]) -> tuple[float, int]:
    """(wall seconds, peak tree RSS in bytes) of one command; an error stops the benchmark."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss(proc.pid))
            time.sleep(0.1)
    watcher = threading.Thread(target=sample)
    watcher.start()
    _, err = proc.communicate()
    elapsed = time.perf_counter() - start
    done.set()
    watcher.join()
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(argv)}\n{err}")
    return elapsed, peak


def baseline_argv(path: Path, threads: int | None, memory_limit: str | None) -> list[str]:
    settings = (f"con.execute(\"SET threads={threads}\");" if threads else "") + \
        (f"con.execute(\"SET memory_limit='{memory_limit}'\");" if memory_limit else "")
    code = ("import duckdb; con = duckdb.connect();" + settings +
            f"con.execute(\"SELECT count(*) FROM (SELECT age, sex, region, inc1k, count(*) "
            f"FROM read_parquet('{path}') GROUP BY ALL)\").fetchall(); con.close()")
    return [sys.executable, "-c", code]


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "sdc_core", *args]


def run(label: str, argv: list[str], repeat: int, rows: list[dict]) -> dict:
    results = [measure(argv) for _ in range(repeat)]
    row = {"run": label, "seconds": statistics.median(r[0] for r in results),
           "peak_mb": max(r[1] for r in results) / 2**20, "repeat": repeat}
    rows.append(row)
    print(f"  {label:<52} {row['seconds']:8.2f} s  {row['peak_mb']:8.0f} MB  "
          f"(median of {repeat})", flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--big-rows", type=int, default=100_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--memory-limit", default="2GB",
                        help="DuckDB's limit on the big file (default 2GB)")
    parser.add_argument("--engines", default="pandas,duckdb,spark")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args()
    engines = args.engines.split(",")
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="sdc_bench_") as tmp:
        tmpdir = Path(tmp)
        recipe = tmpdir / "recipe.json"
        recipe.write_text(json.dumps(RECIPE))
        micro = tmpdir / "micro.json"
        micro.write_text(json.dumps(MICRO))
        sizes = [(args.rows, engines)] + ([(args.big_rows, ["duckdb"])] if args.big_rows else [])
        for n, names in sizes:
            data = tmpdir / f"census_{n}.parquet"
            t0 = time.perf_counter()
            generate(data, n)
            print(f"{n:,} rows × 4 keys: generated in {time.perf_counter() - t0:.1f} s "
                  f"({data.stat().st_size / 2**20:.0f} MB Parquet)", flush=True)
            big = n == args.big_rows and n != args.rows
            limit = args.memory_limit if big else None
            repeat = 1 if big else args.repeat
            base = run(f"{n:,} baseline: DuckDB GROUP BY … COUNT(*)",
                       baseline_argv(data, None, limit), repeat, rows)
            for name in names:
                extra = ["--engine", name]
                if name == "duckdb" and limit:
                    extra += ["--memory-limit", limit, "--temp-dir", str(tmpdir / "spill")]
                if name == "spark":
                    extra += ["--spark-master", "local[2]"]
                reps = 1 if name == "spark" else repeat
                r = run(f"{n:,} {name} risk", cli("risk", str(data), "--qi", QI, "--json",
                                                  "--no-suda2", *extra), reps, rows)
                r["ratio_to_baseline"] = r["seconds"] / base["seconds"]
                print(f"  {'':<52} {r['ratio_to_baseline']:8.1f} × the baseline")
                out = tmpdir / f"out_{name}_{n}.parquet"
                r = run(f"{n:,} {name} apply (PRAM + banding + rank swap)",
                        cli("apply", str(data), "--recipe", str(recipe), "-o", str(out),
                            *extra), reps, rows)
                r["ratio_to_baseline"] = r["seconds"] / base["seconds"]
                print(f"  {'':<52} {r['ratio_to_baseline']:8.1f} × the baseline")
                r = run(f"{n:,} {name} compare --qi (IL1 + linkage attack)",
                        cli("compare", str(data), str(out), "--qi", QI, "--recipe",
                            str(recipe), "--numeric", "age,income", "--json", *extra),
                        reps, rows)
                r["ratio_to_baseline"] = r["seconds"] / base["seconds"]
                print(f"  {'':<52} {r['ratio_to_baseline']:8.1f} × the baseline")
                _remove(out)
                r = run(f"{n:,} {name} apply (microaggregation onedims)",
                        cli("apply", str(data), "--recipe", str(micro), "-o", str(out),
                            *extra), reps, rows)
                r["ratio_to_baseline"] = r["seconds"] / base["seconds"]
                print(f"  {'':<52} {r['ratio_to_baseline']:8.1f} × the baseline")
                _remove(out)
            data.unlink()
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


def _remove(path: Path) -> None:
    if path.is_dir():
        for f in path.iterdir():
            f.unlink()
        path.rmdir()
    elif path.exists():
        path.unlink()


if __name__ == "__main__":
    main()
