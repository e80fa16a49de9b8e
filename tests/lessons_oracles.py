"""The oracles of the Lessons page's tasks (``ui.logic.lessons``), written in plain pandas /
numpy / statsmodels on the household survey, seed 004's pet question and the built-in example.

tests/test_lessons.py checks the tasks and checks against them; the helpers that find a solving
setting (:func:`most_unique_third`, :func:`best_coarsening_oracle`, :func:`perturb_solutions`,
:func:`rr_fewest`, :func:`hidden_total_oracle`, :func:`analysis_settings`) also drive the page's
widgets in tests/test_app_lessons.py."""

from functools import cache

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf

from sdc_core.data.io import read_table
from sdc_core.examples import example
from sdc_core.methods.banding import measured
from sdc_core.methods.randomized_response import coin_survey
from sdc_core.recipe import apply_recipe, make_recipe
from sdc_core.tables.responses import pet_survey
from sdc_core.teaching import HOUSEHOLD_PATH
from ui.logic import lessons
from ui.logic.workbench import evaluate, recipe_json

Z95 = 1.959963984540054
K = 5  # the k of the coarsening task


#: The page's sliders of the perturbation lesson: method → (maximum, step), from 0
#: (views/lessons.py; tests/test_app_lessons.py checks the page offers these).
PERTURB_SLIDERS = {"pram": (0.5, 0.05), "rank_swap": (20.0, 0.5)}
#: The sixth lesson's sliders: method → (maximum, step), from 0 (views/lessons.py).
ANALYSIS_SLIDERS = {"band": (30, 1), "noise": (300, 10)}


@cache
def household() -> pd.DataFrame:
    return read_table(HOUSEHOLD_PATH)


def class_sizes(df: pd.DataFrame, keys: list[str]) -> pd.Series:
    """f_k of every record: the number of records sharing its values of ``keys``."""
    return df.groupby(keys, dropna=False)[keys[0]].transform("size")


# 1 · Who is unique? -------------------------------------------------------------------------

def percent_unique_oracle(third: str | None) -> float:
    keys = ["region", "sex"] + ([third] if third else [])
    return 100.0 * float((class_sizes(household(), keys) == 1).mean())


def most_unique_third() -> str:
    shares = {c: percent_unique_oracle(c) for c in lessons.UNIQUE_THIRD}
    return max(shares, key=shares.get)


# 2 · Coarsen --------------------------------------------------------------------------------

def coarsened_age(age: pd.Series, width: int, top: int | None) -> pd.Series:
    """Top-code (ages above ``top`` become ``top``), then band: floor(x / w)·w + w / 2."""
    a = age.astype(float)
    if top is not None:
        a = a.where(a <= top, float(top))
    if width:
        a = np.floor(a / width) * width + width / 2.0
    return a


@cache
def coarsen_oracle(width: int, top: int | None) -> tuple[int, int, float]:
    """(smallest class, records in classes under k, IL1 of age) by the documented formula:
    mean |x′ − x| / (max x − min x) (only age changes, so it is also IL1 overall)."""
    df = household()
    age = df["age"].astype(float)
    released = coarsened_age(df["age"], width, top)
    fk = class_sizes(df.assign(age=released), ["region", "sex", "age"])
    loss = float((released - age).abs().mean() / (age.max() - age.min()))
    return int(fk.min()), int((fk < K).sum()), loss


def best_coarsening_oracle(widths=lessons.WIDTHS) -> tuple[int, int | None, float]:
    """Exhaustively: the (width, top) reaching k ≥ 5 at the least IL1; on a tie the narrowest
    band, then the highest top code (no top coding counts highest)."""
    feasible = [(w, t, coarsen_oracle(w, t)[2]) for w in widths for t in lessons.TOPS
                if coarsen_oracle(w, t)[0] >= K]
    least = min(loss for _, _, loss in feasible)
    ties = [(w, t, loss) for w, t, loss in feasible if loss <= least + 1e-12]
    return min(ties, key=lambda c: (c[0], -(c[1] if c[1] is not None else 1000)))


# 3 · Perturb --------------------------------------------------------------------------------

def slider_values(method: str) -> list[float]:
    """Every value the page's slider for ``method`` offers, from 0 in its steps."""
    high, step = PERTURB_SLIDERS[method]
    return [round(i * step, 10) for i in range(int(round(high / step)) + 1)]


@cache
def perturb_solutions() -> dict[str, float]:
    """Per method, the least amount the page offers at which the linkage attack re-identifies
    at most half of the released keys' Σ 1/f_k (the key of a method that never does is
    missing)."""
    found = {}
    for method in PERTURB_SLIDERS:
        for amount in slider_values(method):
            after = lessons.perturb(method, amount).after
            if after["linkage_reidentifications"] <= after["expected_reidentifications"] / 2:
                found[method] = amount
                break
    return found


# 4 · Randomized response --------------------------------------------------------------------

def rr_oracle(n: int) -> tuple[float, float]:
    """(π̂ = 2λ̂ − ½, half-width 1.96·√(λ̂(1 − λ̂)/n) / ½) from the survey's own reports."""
    _, reports, _ = coin_survey(n, lessons.RR_TRUTH, lessons.RR_Q, lessons.RR_SEED)
    assert len(reports) == n
    lam = float((reports == "yes").mean())
    return 2 * lam - 0.5, Z95 * np.sqrt(lam * (1 - lam) / n) / 0.5


def rr_fewest() -> int:
    return next(n for n in lessons.RR_SIZES if rr_oracle(n)[1] <= 0.05)


# 5 · Publishing counts ----------------------------------------------------------------------

def hidden_total_oracle() -> tuple[int, int]:
    """(participants − Σ shown − exact non-response, the true total of the hidden options)."""
    df = pet_survey()
    answers = df[lessons.COUNTS_QUESTION]
    counts = answers.dropna().value_counts()
    shown = int(counts[counts >= 5].sum())
    nonresponse = int(answers.isna().sum())
    return len(df) - shown - nonresponse, int(counts[counts < 5].sum())


# 6 · Does the analysis survive? -------------------------------------------------------------

@cache
def actg() -> pd.DataFrame:
    return read_table(example("actg175").path)


def regression(df: pd.DataFrame) -> pd.DataFrame:
    """The lesson's regression by statsmodels: estimate, standard error and 95 % interval per
    term."""
    fit = smf.ols(lessons.ANALYSIS_FORMULA, data=df).fit()
    ci = fit.conf_int(0.05)
    return pd.DataFrame({"estimate": fit.params, "se": fit.bse, "low": ci[0], "high": ci[1]})


@cache
def analysis_oracle(method: str, amount: float) -> tuple[float, float, bool, bool]:
    """(linkage risk %, mean CI overlap, every original estimate inside its protected
    interval, every term within J ≥ 0.75 and |θ_p − θ_o|/se_o < 1): the table protected by the
    lesson's recipe (``apply_recipe``), the regression refitted by statsmodels on both tables
    and J = ½[(U − L)/(U_o − L_o) + (U − L)/(U_p − L_p)] averaged over the terms; the risk is
    the Protect page's linkage attack."""
    steps = lessons.analysis_steps(method, amount)
    protected = apply_recipe(make_recipe(steps, lessons.ANALYSIS_SEED), actg()).data
    # ages written as bands ("40–49") are fitted as their midpoints, as the analyses read them
    o, p = regression(actg()), regression(measured(actg(), protected))
    low, high = np.maximum(o["low"], p["low"]), np.minimum(o["high"], p["high"])
    j = 0.5 * ((high - low) / (o["high"] - o["low"]) + (high - low) / (p["high"] - p["low"]))
    inside = bool(((p["low"] <= o["estimate"]) & (o["estimate"] <= p["high"])).all())
    terms = bool(((j >= 0.75) & ((p["estimate"] - o["estimate"]).abs() / o["se"] < 1)).all())
    roles = example("actg175").roles
    wb = evaluate(actg(), recipe_json(steps, lessons.ANALYSIS_SEED), roles.qi, None, 5,
                  "wildcard", 1.0, roles.numeric)
    return float(wb.after["linkage_risk_percent"]), float(j.mean()), inside, terms


def analysis_met(method: str, amount: float) -> bool:
    risk, j, inside, terms = analysis_oracle(method, amount)
    return risk <= lessons.ANALYSIS_RISK and j >= 0.9 and inside and terms


def analysis_values(method: str) -> list[int]:
    high, step = ANALYSIS_SLIDERS[method]
    return list(range(0, high + 1, step))


@cache
def analysis_settings() -> dict[str, dict[str, list[int]]]:
    """Per method, the amounts the page offers that meet the task (``met``), that bring the
    risk down but break the regression (``broken``) and that leave the risk too high
    (``risky``)."""
    out = {}
    for method in ANALYSIS_SLIDERS:
        kinds: dict[str, list[int]] = {"met": [], "broken": [], "risky": []}
        for amount in analysis_values(method):
            risk = analysis_oracle(method, amount)[0]
            kind = "met" if analysis_met(method, amount) else \
                "risky" if risk > lessons.ANALYSIS_RISK else "broken"
            kinds[kind].append(amount)
        out[method] = kinds
    return out


# 8 · One household, five people -------------------------------------------------------------

def household_oracle() -> tuple[float, np.ndarray]:
    """The eighth lesson's household from the whole-households survey in plain pandas: of the
    households of five whose members each have f_k ≥ 5 on district, sex and age group, the one
    whose 1 − Π(1 − 1/f_k) most exceeds its largest 1/f_k; its risk and its members' r."""
    from sdc_core.teaching_households import HOUSEHOLDS_PATH

    df = read_table(HOUSEHOLDS_PATH)
    r = 1.0 / class_sizes(df, ["district", "sex", "agegroup"])
    best, best_gap, best_r = None, -1.0, np.array([])
    for _, members in r.groupby(df["hid"]):
        if len(members) != 5 or members.max() > 0.2:
            continue
        risk = 1.0 - float(np.prod(1.0 - members.to_numpy()))
        if risk - members.max() > best_gap:
            best, best_gap, best_r = risk, risk - members.max(), members.to_numpy()
    assert best is not None
    return best, best_r


# 9 · A synthetic file -------------------------------------------------------------------------

def synthetic_oracle(original: pd.DataFrame, release: pd.DataFrame, keys: list[str],
                     target: str) -> tuple[int, int, float, float]:
    """The ninth lesson's figures of a synthetic release, record by record in plain Python
    (the survey has no blanks): records copied whole (equal to some original record on every
    column), replicated uniques (unique on the keys in both), DiSCO and DiO of ``target``
    (percent of the original's records whose keys carry one value of ``target`` in the
    release, resp. in the original, equal to their own)."""
    whole = {tuple(r) for r in original.itertuples(index=False)}
    copies = sum(tuple(r) in whole for r in release.itertuples(index=False))
    key = [tuple(r) for r in original[keys].itertuples(index=False)]
    key_s = [tuple(r) for r in release[keys].itertuples(index=False)]
    count_o: dict[tuple, int] = {}
    count_s: dict[tuple, int] = {}
    for q in key:
        count_o[q] = count_o.get(q, 0) + 1
    for q in key_s:
        count_s[q] = count_s.get(q, 0) + 1
    repu = sum(count_o[q] == 1 and count_s.get(q, 0) == 1 for q in key)

    def disclosed(table_keys: list[tuple], values: list) -> float:
        held: dict[tuple, set] = {}
        for q, v in zip(table_keys, values, strict=True):
            held.setdefault(q, set()).add(v)
        hits = sum(len(held.get(q, ())) == 1 and v in held[q]
                   for q, v in zip(key, original[target], strict=True))
        return 100.0 * hits / len(original)

    return copies, repu, disclosed(key_s, list(release[target])), \
        disclosed(key, list(original[target]))
