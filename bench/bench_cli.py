"""The command line as a user meets it, timed as real subprocesses. Targets: ``python -m
sdc_core --help`` ≤ 0.3 s; ``risk --json`` on a 1M-row Parquet file within 1.3× of reading that
file and grouping it.

Baselines in the same run, also subprocesses, so that interpreter start-up is in both:

- for ``--help``: ``python -c pass`` (the bare interpreter);
- for ``risk --json``: ``pandas.read_parquet`` of the same file + ``groupby(QI).size()``.

The table (:func:`bench.common.survey_table`) is written to a temporary directory, removed at the
end.

Run: ``python -m bench.bench_cli [n]``
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import median_seconds, report, survey_table

ROOT = Path(__file__).resolve().parents[1]
QI = ["age", "sex", "region"]


def run(*args: str) -> None:
    """Run ``python *args`` from the project root; fail loudly on a non-zero exit."""
    subprocess.run([sys.executable, *args], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)


def main(n: int) -> None:
    bare = median_seconds(lambda: run("-c", "pass"))
    help_ = median_seconds(lambda: run("-m", "sdc_core", "--help"))
    print("python -m sdc_core --help")
    print("  " + report("--help", help_, "python -c pass", bare, target=0.3))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "survey.parquet"
        survey_table(n).to_parquet(path, index=False)
        grouping = (f"import pandas as pd; pd.read_parquet({str(path)!r})"
                    f".groupby({QI!r}).size()")
        baseline = median_seconds(lambda: run("-c", grouping), repeat=5)
        risk = median_seconds(lambda: run("-m", "sdc_core", "risk", str(path), "--qi",
                                          ",".join(QI), "--json"), repeat=5)
    print(f"risk --json on {n:,} rows (Parquet), 3 QIs")
    print("  " + report("risk --json", risk, "read_parquet + groupby.size()", baseline,
                        ratio_target=1.3 if n == 1_000_000 else None))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
