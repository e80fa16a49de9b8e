"""What reading in a capped child process costs (``sdc_core.capped.read_capped``): the same
bounded ``read_table`` in this process against the child's (a fork of the warm helper, the
file's bytes sent to it, the table sent back as an Arrow stream and rebuilt), for a typical
10 MB CSV and a 100 MB Parquet file, in the same run. Medians of 5 after one warm-up run (which
also starts the helper).

    python -m bench.bench_capped
"""

from __future__ import annotations

import io

from bench.common import median_seconds, survey_table
from sdc_core.capped import read_capped
from sdc_core.io import read_table

ALLOWANCE = 10**10
CAP = 16 * 10**9


def files() -> list[tuple[str, str, bytes]]:
    """(label, name, bytes): a CSV of about 10 MB and a Parquet file of about 100 MB."""
    csv = survey_table(300_000).to_csv(index=False).encode()
    buf = io.BytesIO()
    survey_table(6_000_000, seed=1).to_parquet(buf)
    parquet = buf.getvalue()
    return [(f"CSV, 300,000 rows ({len(csv) / 1e6:.0f} MB)", "t.csv", csv),
            (f"Parquet, 6,000,000 rows ({len(parquet) / 1e6:.0f} MB)", "t.parquet", parquet)]


def main() -> None:
    print(f"{'file':<40}{'in process':>12}{'in a child':>12}{'ratio':>8}")
    for label, name, raw in files():
        here = median_seconds(lambda raw=raw, name=name: read_table(raw, name,
                                                                    max_table=ALLOWANCE),
                              repeat=5)
        there = median_seconds(lambda raw=raw, name=name: read_capped(
            raw, name, cap=CAP, max_table=ALLOWANCE), repeat=5)
        print(f"{label:<40}{here:>11.2f}s{there:>11.2f}s{there / here:>7.2f}×")


if __name__ == "__main__":
    main()
