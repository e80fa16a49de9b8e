"""Column roles for a release: quasi-identifiers, sensitive columns, weight, numeric columns for
utility measures, and columns not released. Suggestions come from the inferred kinds."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pandas as pd

from sdc_core.io import Kind, infer_kinds

#: Column names that usually are quasi-identifiers (demographics and geography).
_QI_NAME = re.compile(r"^(age|sex|gender|race|ethnic\w*|marital\w*|zip\w*|post\w*code|region|"
                      r"district|county|municipality|birth\w*|dob|nationality|occupation|"
                      r"education|urbrur|hhsize)$", re.IGNORECASE)
_WEIGHT_NAME = re.compile(r"^(\w*_)?(weight|wgt|w)$", re.IGNORECASE)


@dataclass(frozen=True)
class Roles:
    qi: list[str] = field(default_factory=list)
    sensitive: list[str] = field(default_factory=list)
    weight: str | None = None
    numeric: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        """Contradictions a user should fix (a column in two exclusive roles)."""
        out = []
        for a, b in (("qi", "sensitive"), ("qi", "ignore"), ("sensitive", "ignore")):
            both = sorted(set(getattr(self, a)) & set(getattr(self, b)))
            if both:
                out.append(f"{', '.join(both)}: tagged both {_LABEL[a]} and {_LABEL[b]}")
        if self.weight and self.weight in self.qi + self.sensitive:
            out.append(f"{self.weight}: the weight cannot also be a key or sensitive column")
        return out


_LABEL = {"qi": "quasi-identifier", "sensitive": "sensitive", "ignore": "not released"}

#: Roles of the built-in ACTG 175 example, as in seed 003.
EXAMPLE_ROLES = Roles(
    qi=["age", "gender", "race"], sensitive=["treat"],
    numeric=["age", "wtkg", "preanti", "cd40", "cd420", "cd496", "cd80", "cd820", "days",
             "karnof"],
    ignore=["pidnum"])


def suggest_roles(df: pd.DataFrame, kinds: dict[str, Kind] | None = None) -> Roles:
    """Identifiers are not released; numeric columns feed the utility measures; columns named
    like common demographics (age, sex, region, …) are suggested as quasi-identifiers, a numeric
    column named like a weight (complete and positive, as a weight must be) as the weight."""
    kinds = kinds or infer_kinds(df)
    ignore = [c for c, k in kinds.items() if k is Kind.IDENTIFIER]
    qi = [c for c, k in kinds.items() if k is not Kind.IDENTIFIER and _QI_NAME.match(str(c))]
    weights = [c for c, k in kinds.items() if k is Kind.NUMERIC and _WEIGHT_NAME.match(str(c))
               and df[c].notna().all() and (df[c] > 0).all()]
    numeric = [c for c, k in kinds.items() if k is Kind.NUMERIC and c not in weights]
    return Roles(qi=qi, numeric=numeric, ignore=ignore, weight=weights[0] if weights else None)
