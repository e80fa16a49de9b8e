"""The dashboard's Streamlit glue (state, page frame, widgets' callbacks, cached calls); the
pure presentation logic is in :mod:`ui.logic`, the server's infrastructure in :mod:`ui.infra`
(docs/architecture.md)."""
