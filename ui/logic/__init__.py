"""Pure presentation logic of the dashboard: settings, figures, the report, links' contents.
Nothing here imports Streamlit (docs/architecture.md, "Layers"; tests/test_layers.py)."""
