"""Streamlit helpers shared by the pages (state, formatting). No maths here."""
