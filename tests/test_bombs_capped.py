"""Issue 51, finding 1: the files that got past the formats' own bounds are read in a child
process whose memory is capped (``sdc_core.capped``), so none takes the reading process past
its budget.

Each file of ``tests/hostile_files.ROUND4`` is made here, written to disk and read in a fresh
interpreter by the command line's reader (``read_bounded``) with ``SDC_MEMORY_BUDGET=100MB``:
the interpreter's peak resident memory may grow by at most :data:`SLACK` while it reads (the
files decode to 2.4 to 30 times the budget, which the reader held before), the child that read
it stays within its cap, and the refusal is one line. The server's side (uploads, the ledger,
the size of each uploader) is tests/test_upload_gate.py."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from sdc_core import capped
from tests.child_probe import PEAK
from tests.conftest import ROOT
from tests.hostile_files import ROUND4, csv_wide

BUDGET = 100_000_000
#: What the reading interpreter's peak may grow by: the file's bytes and the answer, not a
#: table (the old reader grew by what the file decodes to, 280 MB to 7 GB here)
SLACK = 60_000_000
#: The scales at which each file decodes to several times :data:`BUDGET`
SCALES = {"stata strl named": 1.0, "parquet footer lie": 0.1, "xlsx far cell": 1.0,
          "zsav unknown cases": 0.3, "parquet int columns": 1.0}

_PROBE = """
import json, os, resource, sys, threading, time
sys.path.insert(0, {root!r})
from pathlib import Path
from sdc_core import capped
from sdc_core.cli import read_bounded
from sdc_core.errors import SdcInputError

def status(pid, field):
    with open(f"/proc/{{pid}}/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field + ":"))

read_bounded(Path({warm!r}))  # the helper started, the readers loaded
helper = capped._running().proc.pid
children, done = {{}}, threading.Event()

def watch():  # the peak of each child of the helper, read until it ends
    while not done.is_set():
        try:
            with open(f"/proc/{{helper}}/task/{{helper}}/children") as f:
                for pid in f.read().split():
                    children[pid] = max(children.get(pid, 0), status(pid, "VmHWM"))
        except (OSError, StopIteration):
            pass
        time.sleep(0.005)

threading.Thread(target=watch, daemon=True).start()
before = status("self", "VmHWM")  # ru_maxrss would keep the parent's peak across exec
start = time.perf_counter()
try:
    df = read_bounded(Path({path!r}))
    message = None
except SdcInputError as err:
    message = str(err)
seconds = time.perf_counter() - start
done.set()
print(json.dumps({{"message": message, "seconds": seconds,
                  "grew": status("self", "VmHWM") - before,
                  "helper": status(helper, "VmRSS"), "child": max(children.values(), default=0)}}))
"""


def probe(path, tmp_path) -> dict:
    """Read ``path`` as the command line does, in a fresh interpreter with the budget set."""
    warm = tmp_path / "warm.csv"
    warm.write_bytes(b"a,b\n1,2\n")
    code = _PROBE.format(root=str(ROOT), path=str(path), warm=str(warm))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600, check=True, env={"SDC_MEMORY_BUDGET": str(BUDGET),
                                                       "PATH": "/usr/bin:/bin"})
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("bomb", sorted(SCALES))
def test_each_new_bomb_is_refused_in_one_line_within_the_budget(bomb, tmp_path):
    name, raw = ROUND4[bomb](SCALES[bomb])
    (tmp_path / name).write_bytes(raw)
    result = probe(tmp_path / name, tmp_path)
    message = result["message"]
    assert message is not None, f"{bomb} was read"
    assert "\n" not in message
    assert message.startswith(str(tmp_path / name) + ": ")
    assert ("needs more memory than this session may still use (100.0 MB)" in message
            or "this session may use" in message or "for one cell" in message), message
    assert result["grew"] < SLACK, f"{bomb}: the reader grew {result['grew'] / 1e6:.0f} MB"
    # the child: what it shares with the helper, and at most the budget more (its cap)
    assert result["child"] < result["helper"] + BUDGET + capped.BASE + 50_000_000, \
        f"{bomb}: the child took {result['child'] / 1e6:.0f} MB"


def test_the_cap_refuses_what_no_format_bound_saw(tmp_path):
    """The Parquet file whose footer says 1 byte: its format bound passes it, its reading is
    stopped by the cap (the old reader held 830 MB of its 300 MB, and 4.2 GB of the full-size
    file's 3 GB, before it refused the table)."""
    name, raw = ROUND4["parquet footer lie"](SCALES["parquet footer lie"])
    (tmp_path / name).write_bytes(raw)
    message = probe(tmp_path / name, tmp_path)["message"]
    assert message == (f"{tmp_path / name}: reading it needs more memory than this session may "
                       "still use (100.0 MB); try a smaller file (or a sample of it)")


def test_the_command_line_refuses_a_bomb_with_exit_2_and_one_line(tmp_path):
    name, raw = ROUND4["stata strl named"](1.0)
    (tmp_path / name).write_bytes(raw)
    done = subprocess.run([sys.executable, "-m", "sdc_core", "risk", str(tmp_path / name),
                           "--qi", "k"], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env={"SDC_MEMORY_BUDGET": "100MB",
                                                      "PATH": "/usr/bin:/bin"})
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert "strl_named.dta: reading it needs more memory than this session may still use" \
        in lines[0]


_ESTIMATE = """
import json, resource, sys
sys.path.insert(0, {root!r})
from pathlib import Path
from sdc_core.data.io import read_table
from ui.infra import memory
raw = Path({path!r}).read_bytes()
memory.upload_need(b"a,b\\n1,2\\n", "warm.csv", read_table)
before = peak()
need = memory.upload_need(raw, "wide.csv", read_table)
print(json.dumps({{"need": need, "grew": peak()
                   - before}}))
"""


def test_the_estimate_of_a_wide_csv_parses_a_bounded_sample(tmp_path):
    """2,000 lines of 10,000 numbers (40 MB): the estimate used to parse every line of a file
    of at most 2,000 (3.4 GB at 40,000 columns); it parses at most ``SAMPLE_BYTES`` of it,
    and still says the table is larger than the file."""
    name, raw = csv_wide(1.0, columns=10_000)
    (tmp_path / name).write_bytes(raw)
    code = PEAK + _ESTIMATE.format(root=str(ROOT), path=str(tmp_path / name))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["grew"] < SLACK, f"the estimate grew {result['grew'] / 1e6:.0f} MB"
    assert result["need"] > 2 * len(raw)  # 8-byte numbers from 2-byte cells, and more
