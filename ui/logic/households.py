"""How the pages speak of households (docs/measures.md, "Household risk"); no Streamlit."""

from __future__ import annotations

from collections.abc import Sequence

from ui.logic.text import md, md_list


def household_caption(household: str, level: Sequence[str], households: int,
                      records: int) -> str:
    """The Data page's line under the household id: how many households, their mean size and
    the columns constant within every one of them (household-level)."""
    size = records / households if households else 0.0
    text = (f"{households:,} households of {size:.2f} records on average in {md(household)}. ")
    if level:
        return text + (f"Constant within every household (household-level): {md_list(level)}; "
                       "the protection keeps them so.")
    return text + "No other column is constant within every household."
