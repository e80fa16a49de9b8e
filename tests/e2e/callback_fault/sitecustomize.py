"""A fault for one test server only (its PYTHONPATH starts here, so Python loads this module at
start-up): the Protect page's settings refuse a band width of 13, so that a test can make a
widget's callback inside a fragment fail (tests/e2e/test_callbacks.py)."""

import ui.logic.protect

_with_value = ui.logic.protect.ProtectSettings.with_value


def _failing_with_value(self, method, param, column, value):
    if param == "width" and value == 13:
        raise RuntimeError("injected callback fault")
    return _with_value(self, method, param, column, value)


ui.logic.protect.ProtectSettings.with_value = _failing_with_value
