"""How the pages speak of households (docs/measures.md, "Household risk"); no Streamlit.

The Data page's caption of the household id; the tiles (:func:`household_tiles`) of the
household figures of the data as loaded and of a release (both the ``households`` part of an
:class:`sdc_core.assess.Assessment`) that the Risk and Protect pages and the report show."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sdc_core.names import count_text, tile
from sdc_core.risk.household import HouseholdFigures
from ui.logic.text import delta_text, md, md_list
from ui.logic.tiles import Tile


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


@dataclass(frozen=True)
class HouseholdTile:
    """One household figure as a tile: its label, the value and the change as shown."""

    key: str
    name: str
    value: str
    delta: str | None
    help: str

    @property
    def tile(self) -> Tile:
        """The figure as a tile (:mod:`ui.logic.tiles`): a risk, so a fall is good."""
        return Tile(self.name, self.value, self.delta, "inverse", self.help)


def _count_and_share(count: float, percent: float) -> str:
    return f"{count_text(count)} ({percent:.2f} %)"


#: What each tile's figure is (docs/measures.md, "Household risk").
HOUSEHOLD_HELP = {
    "household_risk_pct": "100 · Σ_i R_h(i) / n: the mean over the records of their "
                          "household's risk R_h = 1 − Π_{j∈h}(1 − r_j), the chance that some "
                          "member, and so the household, is re-identified (sdcMicro's "
                          "hier_risk_pct).",
    "household_expected_reidentifications": "Σ_i R_h(i): the expected re-identifications when "
                                            "a household is disclosed as soon as one member is "
                                            "(a household counts once per member).",
    "households": "Records that share a household id are one household.",
    "household_size_mean": "Records per household: n / households.",
    "household_composition_uniques": "Households whose composition, the multiset of their "
                                     "members' key values, no other household has: an "
                                     "attacker who knows every member's keys finds them. In "
                                     "brackets: in % of the households.",
    "household_linkage_reidentified": "The household linkage attack: the attacker knows every "
                                      "member's true keys, applies the recipe's public "
                                      "recodings (banding, top/bottom coding, recoding) to "
                                      "them as the person-level attack does, and matches the "
                                      "household's composition against the released "
                                      "households' (a blank matches any value, perturbed "
                                      "numbers by the nearest); re-identified when exactly "
                                      "one matches, itself. In brackets: in % of the "
                                      "households.",
    "household_linkage_people": "The people in the households the household linkage attack "
                                "re-identifies. In brackets: in % of the records.",
}


#: The Risk page's household tiles of a table, in their order.
RISK_TILES = ("household_risk_pct", "household_expected_reidentifications", "households",
              "household_size_mean", "household_composition_uniques")
#: The Protect page's: the household risk of the release and the household linkage attack.
PROTECT_TILES = ("household_risk_pct", "household_expected_reidentifications",
                 "household_linkage_reidentified", "household_linkage_people")
#: The figures whose change is shown (a risk: down is good); the others describe the table.
_RISKS = frozenset({"household_risk_pct", "household_expected_reidentifications",
                    "household_composition_uniques", "household_linkage_reidentified",
                    "household_linkage_people"})


def household_tiles(after: HouseholdFigures, before: HouseholdFigures | None = None,
                    keys: Sequence[str] = RISK_TILES) -> list[HouseholdTile]:
    """The tiles ``keys`` of a table's household figures ``after`` (:data:`RISK_TILES`,
    :data:`PROTECT_TILES`): a percentage with two decimals, a count whole or with two decimals
    (:func:`~sdc_core.names.count_text`), a count of households or people with its percentage
    in brackets. ``before`` (the original's) gives each risk figure its change."""
    a, b = after.summary(), before.summary() if before is not None else None
    values = {
        "household_risk_pct": f"{a['household_risk_pct']:.2f} %",
        "household_expected_reidentifications":
            count_text(a["household_expected_reidentifications"]),
        "households": f"{a['households']:,}",
        "household_size_mean": f"{a['household_size_mean']:.2f}",
        "household_composition_uniques": _count_and_share(
            a["household_composition_uniques"], a["household_composition_unique_percent"]),
        "household_linkage_reidentified": _count_and_share(
            a["household_linkage_reidentified"], a["household_linkage_reidentified_percent"]),
        "household_linkage_people": _count_and_share(
            a["household_linkage_people"], a["household_linkage_people_percent"]),
    }
    return [HouseholdTile(k, tile(k), values[k],
                          delta_text(a[k], b[k], " points" if k == "household_risk_pct" else "")
                          if b is not None and k in _RISKS else None, HOUSEHOLD_HELP[k])
            for k in keys]


def household_note(figures: HouseholdFigures) -> str:
    """What the household risk is, in one line, with the table's figures (Markdown: the
    column's name escaped)."""
    r = figures.risk
    return (f"Households: records sharing {md(r.household)}. Household risk R_h = 1 − "
            "Π_{j∈h}(1 − r_j), given to each member: the chance that at least one member, "
            "and with them the household, is re-identified, r_j being the individual risk; "
            f"here {r.n_households:,} households of {r.size_mean:.2f} records on average, "
            f"{r.n_single:,} of one person (docs/measures.md, \"Household risk\").")


def household_attack_note(after: HouseholdFigures, before: HouseholdFigures) -> str:
    """The household linkage attack in one line, with its figure before protection (plain
    text, no column name in it)."""
    was = before.attack
    return ("The household linkage attack: the attacker knows every member's true keys, so "
            "the household's composition, applies the recipe's public recodings to them (as "
            "the person-level attack does: a banded age is banded by the attacker too) and "
            "matches the composition against the released households' compositions; a "
            "household is re-identified when exactly one released household matches, itself "
            f"(before protection {was.reidentified:,} households, "
            f"{was.people_reidentified:,} people). Expected: "
            f"{count_text(after.attack.expected_reidentified)} households, "
            f"{count_text(after.attack.expected_people)} people.")
