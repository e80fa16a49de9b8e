"""What the tests that read ui/state.py's source share (tests/test_page_state.py,
tests/test_resume.py)."""

#: ui/state.py's helpers that take a widget's key (first argument; forget_widgets: every
#: positional argument and ``prefix``)
WIDGET_HELPERS = {"bind", "widget", "has_widget", "set_widget", "forget_widgets", "add_one",
                  "count"}
