"""Faults for the test server only (its PYTHONPATH starts here, so Python loads this module at
start-up), each touching nothing the other's test does (tests/e2e/test_faults.py):

* listing the riskiest classes of a data set with a column ``fault_trigger`` raises, so a test
  can make one session's computation fail while others go on;
* the Protect page's settings refuse a band width of 13, so that a test can make a widget's
  callback inside a fragment fail."""

import ui.logic.protect
import ui.logic.risk_tables

_riskiest_classes = ui.logic.risk_tables.riskiest_classes


def _failing_riskiest_classes(df, *args, **kwargs):
    if "fault_trigger" in df.columns:
        raise RuntimeError("injected fault")
    return _riskiest_classes(df, *args, **kwargs)


ui.logic.risk_tables.riskiest_classes = _failing_riskiest_classes

_with_value = ui.logic.protect.ProtectSettings.with_value


def _failing_with_value(self, method, param, column, value):
    if param == "width" and value == 13:
        raise RuntimeError("injected callback fault")
    return _with_value(self, method, param, column, value)


ui.logic.protect.ProtectSettings.with_value = _failing_with_value
