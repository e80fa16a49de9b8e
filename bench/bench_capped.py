"""What reading in a capped child process costs (``sdc_core.capped.read_capped``): the same
bounded ``read_table`` in this process against the child's (a fork of the warm helper, the
file's bytes sent to it, the table sent back as an Arrow stream and rebuilt), for a typical
10 MB CSV and a 100 MB Parquet file, in the same run. Medians of 5 after one warm-up run (which
also starts the helper). A child is a new process whose memory is touched for the first time,
so the first read of a fresh interpreter (its imports not timed) is shown too.

    python -m bench.bench_capped
"""

from __future__ import annotations

import io
import subprocess
import sys
import tempfile
from pathlib import Path
from statistics import median

from bench.common import median_seconds, survey_table
from sdc_core.capped import read_capped
from sdc_core.data.io import read_table

ALLOWANCE = 10**10
CAP = 16 * 10**9
ROOT = Path(__file__).resolve().parents[1]
_FIRST = """
import sys, time
sys.path.insert(0, {root!r})
from pathlib import Path
from sdc_core.data.io import read_table
raw = Path({path!r}).read_bytes()
read_table(b"a,b\\n1,2\\n", "w.csv")
start = time.perf_counter()
read_table(raw, {name!r}, max_table={allowance})
print(time.perf_counter() - start)
"""


def files() -> list[tuple[str, str, bytes]]:
    """(label, name, bytes): a CSV of about 10 MB and a Parquet file of about 100 MB."""
    csv = survey_table(300_000).to_csv(index=False).encode()
    buf = io.BytesIO()
    survey_table(6_000_000, seed=1).to_parquet(buf)
    parquet = buf.getvalue()
    return [(f"CSV, 300,000 rows ({len(csv) / 1e6:.0f} MB)", "t.csv", csv),
            (f"Parquet, 6,000,000 rows ({len(parquet) / 1e6:.0f} MB)", "t.parquet", parquet)]


def first_read(raw: bytes, name: str, repeat: int = 5) -> float:
    """Median seconds of the first read in a fresh interpreter."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(raw)
        code = _FIRST.format(root=str(ROOT), path=str(path), name=name, allowance=ALLOWANCE)
        return median(float(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                           text=True, check=True).stdout)
                      for _ in range(repeat))


def main() -> None:
    print(f"{'file':<36}{'in process':>12}{'first read':>12}{'in a child':>12}"
          f"{'ratio':>8}{'to first':>10}")
    for label, name, raw in files():
        here = median_seconds(lambda raw=raw, name=name: read_table(raw, name,
                                                                    max_table=ALLOWANCE),
                              repeat=5)
        first = first_read(raw, name)
        there = median_seconds(lambda raw=raw, name=name: read_capped(
            raw, name, cap=CAP, max_table=ALLOWANCE), repeat=5)
        print(f"{label:<36}{here:>11.2f}s{first:>11.2f}s{there:>11.2f}s{there / here:>7.2f}×"
              f"{there / first:>9.2f}×")


if __name__ == "__main__":
    main()
