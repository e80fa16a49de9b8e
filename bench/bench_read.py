"""What bounding a file by its decoded size costs: ``read_table`` with an allowance (CSV read in
measured chunks, Parquet's text columns first read as dictionaries, Excel's zip directory
looked at) against the plain pandas reader of the same bytes, in the same run. Medians of 5.

    python -m bench.bench_read
"""

from __future__ import annotations

import io

import pandas as pd

from bench.common import median_seconds, survey_table
from sdc_core.data.io import read_table

ALLOWANCE = 10**10


def main() -> None:
    print(f"{'file':<34}{'pandas':>9}{'bounded':>10}{'ratio':>8}")
    for rows in (200_000, 2_000_000):
        df = survey_table(rows)
        csv = df.to_csv(index=False).encode()
        buf = io.BytesIO()
        df.to_parquet(buf)
        parquet = buf.getvalue()
        cases = [
            (f"CSV, {rows:,} rows ({len(csv) / 1e6:.0f} MB)",
             lambda csv=csv: pd.read_csv(io.BytesIO(csv)),
             lambda csv=csv: read_table(csv, "t.csv", max_table=ALLOWANCE)),
            (f"Parquet, {rows:,} rows ({len(parquet) / 1e6:.0f} MB)",
             lambda parquet=parquet: pd.read_parquet(io.BytesIO(parquet)),
             lambda parquet=parquet: read_table(parquet, "t.parquet",
                                                    max_table=ALLOWANCE)),
        ]
        if rows <= 200_000:
            buf = io.BytesIO()
            df.head(50_000).to_excel(buf, index=False)
            xlsx = buf.getvalue()
            cases.append(("Excel, 50,000 rows", lambda xlsx=xlsx: pd.read_excel(io.BytesIO(xlsx)),
                          lambda xlsx=xlsx: read_table(xlsx, "t.xlsx", max_table=ALLOWANCE)))
        for name, plain, bounded in cases:
            base = median_seconds(plain, repeat=5)
            ours = median_seconds(bounded, repeat=5)
            print(f"{name:<34}{base:>8.2f}s{ours:>9.2f}s{ours / base:>7.2f}×")


if __name__ == "__main__":
    main()
