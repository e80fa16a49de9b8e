"""Server time of the Lessons page's checks, uncached: what one slider move of a lesson costs
(target: ≤ 100 ms, a move that feels instant), and the one-off search for the Coarsen lesson's
best setting (the first learner on a server pays it; the result is kept); and every position
of every lesson's slider, uncached, as the server's warm-up computes them at start-up.

Each figure calls the lesson's function with its cache cleared (``lru_cache.cache_clear``), so
it measures the computation, not the cache. Baseline in the same run: a bare
``groupby(...).transform("size")`` of the household survey on region, age and sex. Lessons 1–3
use the household survey (3,000 records), lesson 6 ACTG 175 (2,139 patients).

Run: ``python -m bench.bench_lessons``
"""

from __future__ import annotations

from bench.common import median_seconds, report
from ui.logic import lessons


def uncached(func, *args):
    def run():
        func.cache_clear()
        return func(*args)
    return run


def main() -> None:
    df = lessons.household()
    baseline = median_seconds(lambda: df.groupby(["region", "age", "sex"])["age"]
                              .transform("size"))
    base = "groupby size (3,000 records)"
    print(f"Lessons page checks on the household survey ({len(df):,} records)")
    moves = [
        ("1 who is unique: a third key", uncached(lessons.unique_keys, "age")),
        ("2 coarsen: band + top code", uncached(lessons.coarsen, 7, 80)),
        ("3 perturb: PRAM p = 0.3", uncached(lessons.perturb, "pram", 0.3)),
        ("3 perturb: rank swap 5 %", uncached(lessons.perturb, "rank_swap", 5.0)),
        ("4 randomized response: n = 2000", uncached(lessons.rr_margin, 2000)),
        ("5 publishing counts: the tables", lessons.counts_tables),
        ("6 analysis: bands of 12 years", uncached(lessons.survive, "band", 12.0)),
        ("6 analysis: noise p = 100", uncached(lessons.survive, "noise", 100.0)),
    ]
    for name, func in moves:
        print(report(name, median_seconds(func), base, baseline, target=0.1))

    def best() -> None:
        lessons.coarsen.cache_clear()
        lessons._search_coarsening.cache_clear()
        lessons.best_coarsening()
    print(report("2 coarsen: best of 30 × 6 settings", median_seconds(best, repeat=3), base,
                 baseline))

    positions = list(lessons.slider_positions())

    def every_position() -> None:  # what the server's warm-up computes (ui/infra/warmup.py)
        for fn in {p.func for p in positions}:
            fn.cache_clear()
        for position in positions:
            position()
    print(report(f"every slider position ({len(positions)})",
                 median_seconds(every_position, repeat=3), base, baseline))


if __name__ == "__main__":
    main()
