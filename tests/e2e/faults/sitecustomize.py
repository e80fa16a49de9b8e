"""A fault for the test server only (its PYTHONPATH starts here, so Python loads this module at
start-up): listing the riskiest classes of a data set with a column ``fault_trigger`` raises, so a
test can make one session's computation fail while others go on."""

import ui.logic.risk_tables

_riskiest_classes = ui.logic.risk_tables.riskiest_classes


def _failing_riskiest_classes(df, *args, **kwargs):
    if "fault_trigger" in df.columns:
        raise RuntimeError("injected fault")
    return _riskiest_classes(df, *args, **kwargs)


ui.logic.risk_tables.riskiest_classes = _failing_riskiest_classes
