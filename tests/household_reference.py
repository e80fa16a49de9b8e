"""The household linkage attack written from its definition (docs/measures.md, "Household
risk"), by loops: for every household h and every released household g of h's size, every
one-to-one pairing of their members is tried; a pairing is allowed when each pair agrees on every
exact column (a blank on either side agrees with anything), and costs Σ over the pairs of the
squared distance on the distance columns (each divided by the original column's standard
deviation, a column left out of a pair where either value is blank). M_h: the g whose cheapest
allowed pairing is the cheapest of all (within 10⁻⁹ · max(1, d_min) of it, in √cost); p_h =
1/|M_h| when h is one of them.

The attacker's values are the true ones with the recipe's public recodings (its banding,
top/bottom coding and recoding steps, and nothing else) run on them: a recipe of those steps
alone, applied to the original.

:func:`uniques_by_loops` counts the households unique by their composition, by loops too."""

from __future__ import annotations

import functools
import math
import statistics
from collections import Counter

import pandas as pd

from sdc_core.methods import Release
from sdc_core.recipe import METHODS, Recipe, apply_recipe


def attacker_values(original: pd.DataFrame, recipe: Recipe | None) -> pd.DataFrame:
    """The true table with the recipe's public recodings, and only them, applied."""
    if recipe is None:
        return original
    public = [s for s in recipe.steps if METHODS[s["method"]].release is Release.RECODING]
    return apply_recipe(Recipe(seed=recipe.seed, steps=public), original).data


def _same(a, b) -> bool:
    if pd.isna(a) or pd.isna(b):
        return True
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return str(a) == str(b)


def brute_household_linkage(y: pd.DataFrame, z: pd.DataFrame, hid: str, exact: list[str],
                            distance: list[str] = (), scale_from: pd.DataFrame | None = None
                            ) -> list[tuple[int, float, int]]:
    """Per household of ``y`` (order of first appearance): (|M_h|, p_h, size)."""
    members: dict = {}
    for i, h in enumerate(y[hid]):
        members.setdefault(h, []).append(i)
    scale = {}
    for c in distance:
        values = [float(v) for v in (scale_from if scale_from is not None else y)[c]
                  if not pd.isna(v)]
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        scale[c] = sd if sd > 0 else 1.0
    yv, zv = y.to_dict("records"), z.to_dict("records")

    def pair_cost(i, j):
        if not all(_same(yv[i][c], zv[j][c]) for c in exact):
            return None
        return sum(((float(yv[i][c]) - float(zv[j][c])) / scale[c]) ** 2 for c in distance
                   if not (pd.isna(yv[i][c]) or pd.isna(zv[j][c])))

    def blank(i, frame):
        return any(pd.isna(frame[i][c]) for c in exact)

    def plain(i, frame):
        return tuple(str(float(v)) if isinstance(v, (int, float)) else str(v)
                     for v in (frame[i][c] for c in exact))

    # with no blank and no distance column, a pairing exists exactly when the two sorted lists
    # of member tuples are equal: such pairs are told apart by that alone
    sorted_y = {h: None if distance or any(blank(i, yv) for i in rows)
                else sorted(plain(i, yv) for i in rows) for h, rows in members.items()}
    sorted_z = {h: None if distance or any(blank(i, zv) for i in rows)
                else sorted(plain(i, zv) for i in rows) for h, rows in members.items()}

    def household_distance(h, g):
        if sorted_y[h] is not None and sorted_z[g] is not None:
            return 0.0 if sorted_y[h] == sorted_z[g] else math.inf
        return paired_distance(h, g)

    def paired_distance(h, g):
        """The cheapest allowed pairing: member k of h paired with each member of g not yet
        taken, the cheapest way to pair the rest after that remembered by the set taken."""
        mine, theirs = members[h], members[g]
        costs = [[pair_cost(i, j) for j in theirs] for i in mine]

        @functools.cache
        def rest(k: int, taken: int) -> float:
            if k == len(mine):
                return 0.0
            return min((costs[k][j] + rest(k + 1, taken | 1 << j)
                        for j in range(len(theirs))
                        if not taken >> j & 1 and costs[k][j] is not None), default=math.inf)

        return math.sqrt(rest(0, 0))

    out = []
    for h, rows in members.items():
        found = {g: household_distance(h, g) for g, other in members.items()
                 if len(other) == len(rows)}
        finite = [d for d in found.values() if d < math.inf]
        if not finite:
            out.append((0, 0.0, len(rows)))
            continue
        d_min = min(finite)
        best = [g for g, d in found.items() if d <= d_min + 1e-9 * max(1.0, d_min)]
        out.append((len(best), 1.0 / len(best) if h in best else 0.0, len(rows)))
    return out


def uniques_by_loops(df: pd.DataFrame, qi: list[str], household: str) -> int:
    """Households whose multiset of members' key tuples no other household has, by loops."""
    compositions = {}
    for h, members in df.groupby(household, sort=False):
        compositions[h] = tuple(sorted(tuple(str(v) for v in row)
                                       for row in members[qi].itertuples(index=False)))
    count = Counter(compositions.values())
    return sum(1 for c in compositions.values() if count[c] == 1)
