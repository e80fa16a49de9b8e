"""The built-in households example and the record swapping step the Protect page makes of
tests/test_app_record_swap.py's settings (a workspace file carries it: tests/test_workspace.py)."""

from __future__ import annotations

from sdc_core.examples import example

EXAMPLE = example("households")
HID = "hid"
PROFILES = [["hsize", "htype"], ["hsize"]]
#: the step the test's settings make: hierarchy region > district, the profiles, rate 0.1
STEP = {"method": "record_swap", "hierarchy": ["region", "district"], "swap_rate": 0.1,
        "similar": PROFILES}
