"""An upload much larger in memory than on disk, and what the memory ledger (``ui.infra.memory``,
docs/deploying.md) counts of it: the real-server tests of admission (tests/test_load.py,
tests/test_processes.py) size their budgets by it."""

import numpy as np
import pandas as pd

from sdc_core.data.io import read_table
from ui.infra import memory


def small_numbers_csv(n: int) -> bytes:
    """Two-digit ages and one-digit codes: a table much larger in memory (8 bytes a value)
    than on disk (2–3 bytes)."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"age": rng.integers(10, 100, n),
                       **{f"code_{c}": rng.integers(0, 10, n) for c in "abcdefg"}})
    return df.to_csv(index=False).encode()


#: 100,000 rows: 1.7 MB on disk
UPLOAD = small_numbers_csv(100_000)
HELD = memory.held_bytes(read_table(UPLOAD, "big.csv"))  # once read
NEED = memory.upload_need(UPLOAD, "big.csv", read_table)  # admitted while it is read
