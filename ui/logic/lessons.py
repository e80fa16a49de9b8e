"""The lessons of the Lessons page: for each, its task and the check that says whether the task
is met, as plain functions on the core (no Streamlit; the page draws them).

1. *Who is unique?* — the attacker knows a person's region and sex in the household survey:
   find the third fact that leaves the most records alone in their class (f_k = 1).
2. *Coarsen* — band age (and top-code the oldest ages) until every record shares its region,
   sex and age band with at least four others (k ≥ 5), at the least information loss IL1 over
   the band widths and top codes offered.
3. *Perturb* — PRAM on region or rank swapping of age until the linkage attack re-identifies
   at most half as many people as the released keys suggest (Σ 1/f_k).
4. *Randomized response* — the fewest participants of a coin-flip survey for which the 95 %
   interval of the estimate is within ±0.05.
5. *Publishing counts* — from the naive table of seed 004's pet question, work out the hidden
   counts' total N − Σ shown − non-response.
6. *Does the analysis survive?* — band age, or add noise to it, in ACTG 175 until the linkage
   attack's risk is at most 1 % while the regression ``cd420 ~ age + C(treat) + cd40`` still
   holds (:func:`sdc_core.utility.validity.verdict`: mean CI overlap ≥ 0.9, every original
   estimate inside its protected interval, every term within CI overlap 0.75 and 1 SE).
7. *Deniability: what α buys* — the smallest α of random relabeling of a multiple-choice answer
   (shares 0.5/0.3/0.2) for which the local-DP ε is at most ln 10: no answer is more than ten
   times likelier than another to have given a released one (docs/measures.md, "Deniability:
   what perturbation buys").
8. *One household, five people: who is at risk?* — in the whole-households survey, an attacker
   who knows a person's district, sex and age group finds them among f_k records (r = 1/f_k);
   the learner works out the risk that at least one member of a five-person household is
   re-identified, 1 − Π(1 − r_i) (docs/measures.md, "Household risk"), and sees the table's
   households re-identified beside its persons.
9. *A synthetic file: no one's record, still someone's secret?* — synthesise the household
   survey by sequential CART and raise the minimum leaf size until DiSCO of benefit is at most
   half of what the file itself discloses (DiO), at the smallest leaf size offered that does
   it; the page shows the records copied whole and the replicated uniques as the leaves grow
   (docs/measures.md, "Disclosure risk of a synthetic release").

The randomized response lab and these lessons read ε from the same function as the Protect page
(:func:`sdc_core.risk.deniability.recipe_deniability` and what it composes:
:func:`~sdc_core.risk.deniability.step_matrix`, :func:`~sdc_core.risk.deniability.deniability`).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache, lru_cache, partial

import pandas as pd

from sdc_core.data.io import read_table
from sdc_core.examples import example
from sdc_core.methods.randomized_response import Z95, coin_survey
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.risk import RiskProfile, risk_profile, riskiest_classes
from sdc_core.risk.deniability import (
    Deniability,
    deniability,
    prior,
    recipe_deniability,
    step_matrix,
)
from sdc_core.risk.household import HouseholdRisk, composition_uniques, household_risk
from sdc_core.risk.synthetic import SyntheticRisk, synthetic_risk
from sdc_core.roles import EXAMPLE_ROLES
from sdc_core.tables.responses import (
    PublishedQuestion,
    naive_publication,
    pet_survey,
    response_table,
)
from sdc_core.utility import il1
from sdc_core.utility.analysis import AnalysisResult, parse_spec
from sdc_core.utility.validity import (
    HOLDS,
    TERM_OVERLAP,
    TERM_SE,
    Validity,
    verdict,
    verdict_text,
    worst_term,
)
from ui.logic.workbench import Workbench, evaluate, recipe_json


@dataclass(frozen=True)
class Lesson:
    key: str
    title: str
    goal: str
    #: The data the lesson works on, as the sidebar names it.
    data: str


#: The data of lessons 4 and 5, made on the page.
COIN_DATA = "Coin-flip surveys, simulated on the page"
PET_DATA = "A survey of 100 people's favourite animal, made up for the lesson"
ANSWER_DATA = "One multiple-choice answer of 100 people (A 50, B 30, C 20), made up for the lesson"

LESSONS: dict[str, Lesson] = {lesson.key: lesson for lesson in (
    Lesson("unique", "Who is unique?", "why being alone in a class is the risk",
           example("household").name),
    Lesson("coarsen", "Coarsen", "k-anonymity by banding, at the least loss",
           example("household").name),
    Lesson("perturb", "Perturb", "what the released keys hide from the risk measures",
           example("household").name),
    Lesson("randomized-response", "Randomized response", "privacy paid for in participants",
           COIN_DATA),
    Lesson("counts", "Publishing counts", "why N − Σ shown counts leaks", PET_DATA),
    Lesson("analysis", "Does the analysis survive?",
           "protection that still lets a regression give the same answer",
           example("actg175").name),
    Lesson("deniability", "Deniability: what α buys",
           "what random relabeling lets a respondent deny, and what it costs", ANSWER_DATA),
    Lesson("household", "One household, five people: who is at risk?",
           "why a household is at more risk than any of its members",
           example("households").name),
    Lesson("synthetic", "A synthetic file: no one's record, still someone's secret?",
           "what a synthetic file still gives away", example("household").name),
)}


@dataclass(frozen=True)
class Check:
    """Whether a task is met, and why, on the learner's numbers."""

    met: bool
    message: str


@cache
def household() -> pd.DataFrame:
    """The teaching data set the first three lessons use (read once; never changed)."""
    return read_table(example("household").path)


# 1 · Who is unique? ----------------------------------------------------------------------------

UNIQUE_KNOWN = ["region", "sex"]  # what the attacker knows in any case
UNIQUE_THIRD = ["household_size", "occupation", "age"]  # the third fact to choose


@lru_cache(maxsize=8)
def unique_keys(third: str | None) -> RiskProfile:
    """The risk profile of the household survey when the attacker knows region, sex and
    ``third`` (None: only region and sex)."""
    return risk_profile(household(), UNIQUE_KNOWN + ([third] if third else []))


def riskiest(third: str | None, top: int = 5) -> pd.DataFrame:
    """The ``top`` groups of records with the highest risk when the attacker knows region, sex
    and ``third`` (the Risk page's table)."""
    return riskiest_classes(household(), unique_keys(third), top=top)


def check_unique(third: str | None) -> Check:
    """Met when ``third`` is the fact that leaves the most records unique."""
    shares = {c: unique_keys(c).percent_unique for c in UNIQUE_THIRD}
    worst = max(shares, key=shares.__getitem__)
    if third != worst:
        now = unique_keys(third).percent_unique
        return Check(False, f"Not yet: with {third or 'nothing more'} known, {now:.1f} % of "
                     "the records are unique; another fact leaves more people alone in their "
                     "class.")
    p = unique_keys(third)
    return Check(True, f"Right: with {worst} as well, {p.percent_unique:.1f} % of the records "
                 f"are alone in their class (f_k = 1). Whoever knows a neighbour's region, sex "
                 f"and {worst} finds such a record for certain, and reads everything else in "
                 f"it. Each adds a whole 1 to the expected re-identifications Σ 1/f_k = "
                 f"{p.expected_reidentifications:,.1f}; a record in a class of 10 adds 0.1.")


# 2 · Coarsen ------------------------------------------------------------------------------------

COARSEN_KEYS = ["region", "sex", "age"]
COARSEN_K = 5
WIDTHS = range(1, 31)  # band widths of age offered (0 = off)
TOPS = (None, 90, 85, 80, 75, 70)  # top codes of age offered (None = off)


@dataclass(frozen=True)
class Coarsened:
    width: int
    top: int | None
    min_k: int
    small: int  # records in classes of fewer than COARSEN_K
    loss: float  # IL1 of age


@lru_cache(maxsize=256)
def coarsen(width: int, top: int | None = None) -> Coarsened:
    """The household survey with age top-coded at ``top`` (ages above it become ``top``; None:
    not) and then banded with ``width`` (0: not banded): the smallest class, the records in
    classes smaller than k, and IL1 of age."""
    df = household()
    steps = ([{"method": "top_bottom_code", "column": "age", "top": int(top)}] if top else []) \
        + ([{"method": "band", "column": "age", "width": int(width)}] if width else [])
    out = apply_recipe(parse_recipe({"version": 1, "seed": 0, "steps": steps}), df).data
    fk = risk_profile(out, COARSEN_KEYS).fk
    loss = il1(df, out, ["age"], columns=["age"]).summary()["IL1_overall"]
    return Coarsened(int(width), top, int(fk.min()), int((fk < COARSEN_K).sum()), float(loss))


_SEARCH = threading.Lock()


def best_coarsening() -> Coarsened:
    """The band width and top code that reach k ≥ 5 at the least IL1 (on a tie, the narrowest
    band with the highest top code). Searched once per server (about 2 s): a class that opens
    the lesson at the same moment waits for one search instead of running one each."""
    with _SEARCH:
        return _search_coarsening()


@cache
def _search_coarsening() -> Coarsened:
    return min((c for c in (coarsen(w, t) for w in WIDTHS for t in TOPS)
                if c.min_k >= COARSEN_K),
               key=lambda c: (c.loss, c.width, -(c.top or 1000)))


def check_coarsen(now: Coarsened, best: Coarsened) -> Check:
    if now.min_k < COARSEN_K:
        return Check(False, f"Not yet: {now.small:,} records are in classes of fewer than "
                     f"{COARSEN_K} (the smallest has {now.min_k}).")
    if now.loss > best.loss + 1e-12:
        return Check(False, f"Every class has at least {COARSEN_K} records, but IL1 is "
                     f"{now.loss:.4f}: other settings also reach k ≥ {COARSEN_K} and lose "
                     "less. Try narrower bands, with the oldest ages top-coded.")
    coded = f", ages above {now.top} published as {now.top}," if now.top else ""
    return Check(True, f"Right: bands of {now.width} years{coded} are the least loss (IL1 "
                 f"{now.loss:.4f}) at which every record shares its region, sex and age band "
                 f"with at least {COARSEN_K - 1} others.")


# 3 · Perturb ------------------------------------------------------------------------------------

PERTURB_KEYS = ["region", "age", "sex"]
PERTURB_METHODS = {"pram": ("PRAM on region", "p"), "rank_swap": ("Rank swapping of age",
                                                                   "window_percent")}
#: Each perturbation's slider, from 0: its largest amount and its step
PERTURB_SLIDERS = {"pram": (0.5, 0.05), "rank_swap": (20.0, 0.5)}
PERTURB_SEED = 42


@lru_cache(maxsize=64)  # every position of both sliders (slider_positions)
def perturb(method: str, amount: float) -> Workbench:
    """The household survey after PRAM of region with flip probability ``amount``, or rank
    swapping of age within ``amount`` % of ranks: both readings of the risk (as on Protect)."""
    column = "region" if method == "pram" else "age"
    steps = ([{"method": method, "column": column, PERTURB_METHODS[method][1]: amount}]
             if amount else [])
    return evaluate(household(), recipe_json(steps, PERTURB_SEED), PERTURB_KEYS, None, 5,
                    "wildcard", 1.0, ["age", "income"])


def check_perturb(wb: Workbench) -> Check:
    """Met when the attack re-identifies at most half the released keys' Σ 1/f_k."""
    naive = wb.after["expected_reidentifications"]
    linked = wb.after["linkage_reidentifications"]
    if linked <= naive / 2:
        return Check(True, f"Right: the released keys still look as unique as before "
                     f"({naive:,.0f} expected re-identifications), but an attacker who knows "
                     f"the true values finds only {linked:,.0f}: moved values send them to "
                     "the wrong record, which the key-based measures cannot see.")
    return Check(False, f"Not yet: the attack re-identifies {linked:,.0f}, more than half of "
                 f"{naive:,.0f}.")


# 4 · Randomized response --------------------------------------------------------------------------

RR_SIZES = [100, 200, 500, 1000, 2000, 5000, 10000]
RR_TRUTH, RR_Q, RR_SEED, RR_MARGIN = 0.2, 0.5, 2, 0.05


@lru_cache(maxsize=16)
def rr_margin(n: int) -> tuple[float, float]:
    """The estimate and the half-width 1.96·SE of its 95 % interval, from one coin-flip survey
    of ``n`` participants (true share ``RR_TRUTH``, seed ``RR_SEED``)."""
    _, _, row = coin_survey(n, RR_TRUTH, RR_Q, RR_SEED)
    return float(row["estimate"]), float(Z95 * row["se"])


def check_rr(n: int) -> Check:
    """Met at the fewest participants (of ``RR_SIZES``) whose interval is within ±0.05."""
    enough = [m for m in RR_SIZES if rr_margin(m)[1] <= RR_MARGIN]
    margin = rr_margin(n)[1]
    if margin > RR_MARGIN:
        return Check(False, f"Not yet: with {n:,} participants the estimate is only known to "
                     f"±{margin:.3f}.")
    if enough and n > enough[0]:
        return Check(False, f"±{margin:.3f} is within ±{RR_MARGIN}, but fewer participants "
                     "would do: each one costs a survey interview.")
    return Check(True, f"Right: {n:,} participants give ±{margin:.3f}. The coin doubles the "
                 "standard error (SE = √(λ̂(1−λ̂)/n) / q with q = ½), so a coin-flip survey "
                 "needs about four times the participants of a direct one for the same "
                 "precision.")


# 5 · Publishing counts ----------------------------------------------------------------------------

COUNTS_QUESTION = "favourite animal"


def counts_tables() -> tuple[PublishedQuestion, PublishedQuestion]:
    """Seed 004's pet question published naively (exact non-response) and by the rule."""
    df = pet_survey()
    safe = response_table(df, COUNTS_QUESTION, len(df), 10, 5)
    responses = int(df[COUNTS_QUESTION].notna().sum())
    return naive_publication(safe, responses), safe


def hidden_total(table: PublishedQuestion) -> int:
    """What a reader of the naive table works out: N − Σ shown counts − non-response."""
    shown = sum(o.count for o in table.options if o.count is not None)
    assert table.nonresponse is not None, "the naive table publishes its exact non-response"
    return table.participants - shown - table.nonresponse.low


def check_counts(answer: int | None, naive: PublishedQuestion) -> Check:
    if answer is None:
        return Check(False, "Not yet: enter a number.")
    total = hidden_total(naive)
    hidden = [o.option for o in naive.options if o.count is None]
    if answer != total:
        return Check(False, f"Not yet: {answer} is not what the table gives away. Start from "
                     "the participants and take away everything the table shows.")
    least = max(0, total - (naive.t - 1) * (len(hidden) - 1))
    assert naive.nonresponse is not None, "the naive table publishes its exact non-response"
    return Check(True, f"Right: {naive.participants} − "
                 f"{' − '.join(str(o.count) for o in naive.options if o.count is not None)}"
                 f" − {naive.nonresponse.low} = {total}. So {' and '.join(hidden)} together "
                 f"are {total}, and each is at least {least}"
                 ": the exact non-response narrowed what \"less than 5\" was meant to hide.")


# 6 · Does the analysis survive? -------------------------------------------------------------------

ANALYSIS_NAME = "CD4 at 20 weeks"
ANALYSIS_FORMULA = "cd420 ~ age + C(treat) + cd40"
#: method → (label, the recipe parameter the slider sets, its maximum, its step); 0 is off
ANALYSIS_METHODS = {"band": ("Banding of age", "width", 30, 1),
                    "noise": ("Additive noise on age", "p", 300, 10)}
ANALYSIS_RISK = 1.0  # the target: linkage risk at most this, in % of the patients
ANALYSIS_SEED = 42


@cache
def actg() -> pd.DataFrame:
    """ACTG 175, the data of the sixth lesson (read once; never changed)."""
    return read_table(example("actg175").path)


@cache
def analysis_validity() -> Validity:
    """The regression of the sixth lesson, estimated once on the original ACTG 175."""
    spec = parse_spec({"confidence": 0.95, "analyses": [
        {"name": ANALYSIS_NAME, "kind": "ols", "formula": ANALYSIS_FORMULA}]})
    return Validity(spec, actg())


@dataclass(frozen=True)
class Survival:
    """One setting of the sixth lesson: the linkage attack's risk (``risk``: 100 · mean p_i,
    ``linked``: Σ p_i) and the regression compared term by term."""

    method: str
    amount: float
    risk: float
    linked: float
    result: AnalysisResult

    @property
    def verdict(self) -> str:
        """"holds" when the mean CI overlap J̄ ≥ 0.9, every original estimate lies in its
        protected interval and every term holds (J ≥ 0.75, moved by less than 1 SE;
        :func:`sdc_core.utility.validity.verdict`)."""
        return verdict(self.result)


def analysis_steps(method: str, amount: float) -> list[dict]:
    """The recipe steps of a setting: bands of ``amount`` years, or additive noise with sd
    ``amount`` % of the sd of age; none at 0."""
    if not amount:
        return []
    if method == "band":
        return [{"method": "band", "column": "age", "width": int(amount)}]
    return [{"method": "noise", "columns": ["age"], "kind": "additive", "p": float(amount)}]


@lru_cache(maxsize=64)
def survive(method: str, amount: float) -> Survival:
    """ACTG 175 with age banded or noised by ``amount``: the linkage attack on age, gender and
    race (as on Protect) and the regression of the original against the protected table."""
    roles = EXAMPLE_ROLES
    wb = evaluate(actg(), recipe_json(analysis_steps(method, amount), ANALYSIS_SEED), roles.qi,
                  None, 5, "wildcard", 1.0, roles.numeric)
    report = analysis_validity().compare(wb.applied.data, changed=wb.changed, with_pmse=False)
    return Survival(method, float(amount), float(wb.after["linkage_risk_percent"]),
                    float(wb.after["linkage_reidentifications"]), report.analyses[0])


def analysis_intervals(now: Survival) -> pd.DataFrame:
    """Per term of the regression: the estimate and its 95 % interval on the original and on
    the protected table, the CI overlap J = ½[(U − L)/(U_o − L_o) + (U − L)/(U_p − L_p)]
    (L, U the larger lower and the smaller upper bound), and whether the original estimate
    lies in the protected interval."""
    return pd.DataFrame([{
        "term": t.term, "original": t.original,
        "original 95 % CI": f"{t.original_low:.3f} to {t.original_high:.3f}",
        "protected": t.protected,
        "protected 95 % CI": f"{t.protected_low:.3f} to {t.protected_high:.3f}",
        "CI overlap": t.ci_overlap, "original inside": bool(t.original_in_protected_ci)}
        for t in now.result.terms])


def check_analysis(now: Survival) -> Check:
    """Met when the linkage risk is at most ``ANALYSIS_RISK`` % and the regression holds."""
    j = now.result.mean_ci_overlap
    attack = f"the linkage attack re-identifies {now.risk:.2f} % of the patients " \
             f"({now.linked:,.0f} people)"
    if now.risk > ANALYSIS_RISK:
        return Check(False, f"Not yet: {attack}; the target is at most {ANALYSIS_RISK:g} %. "
                     f"The regression {'holds' if now.verdict == 'holds' else 'has moved'} "
                     f"(mean CI overlap {j:.3f}).")
    worst = worst_term(now.result)
    if now.verdict != "holds":
        outside = [t.term for t in now.result.terms if not t.original_in_protected_ci]
        away = f"; the original estimate of {', '.join(outside)} lies outside its protected " \
               "interval" if outside else ""
        return Check(False, f"Not yet: {attack}, within the target, but the regression no "
                     f"longer holds: {verdict_text(now.result)}{away}. Protect less, or "
                     "another way.")
    # within the target, age was protected, and the regression has an age term that moved
    assert worst is not None, "a regression on protected age has a term that moved"
    return Check(True, f"Right: {attack}, at most {ANALYSIS_RISK:g} %, and the regression holds: "
                 f"mean CI overlap {j:.3f} ≥ {HOLDS:g}, every original estimate inside its "
                 f"protected interval, every term within CI overlap {TERM_OVERLAP:g} and "
                 f"{TERM_SE:g} SE. The term "
                 f"that moved most is {worst.term} (by {abs(worst.std_diff):.2f} SE, overlap "
                 f"{worst.ci_overlap:.3f}): a data user would draw the same conclusions from "
                 "the protected table.")


# 7 · Deniability: what α buys ------------------------------------------------------------------

DENY_COLUMN = "answer"
DENY_SHARES = {"A": 50, "B": 30, "C": 20}  # seed 000's example distribution 0.5/0.3/0.2
DENY_ALPHAS = tuple(round(0.05 * i, 2) for i in range(1, 21))  # α offered: 0.05 … 1
DENY_TARGET = math.log(10)  # ε ≤ ln 10: at most ten times likelier
DENY_SEED = 0


@cache
def deny_answers() -> pd.DataFrame:
    """The answers of the seventh lesson: 100 people, A 50, B 30, C 20."""
    return pd.DataFrame({DENY_COLUMN: [v for v, n in DENY_SHARES.items() for _ in range(n)]})


@lru_cache(maxsize=32)
def deny(alpha: float) -> Deniability:
    """The exact deniability of random relabeling of the answer with probability ``alpha``:
    the Protect page's figure for the same recipe step (:func:`recipe_deniability`)."""
    recipe = parse_recipe({"version": 1, "seed": DENY_SEED, "steps": [
        {"method": "relabel", "column": DENY_COLUMN, "alpha": float(alpha)}]})
    return recipe_deniability(recipe, deny_answers())[0]


def check_deny(alpha: float) -> Check:
    """Met at the smallest α offered whose ε is at most ln 10."""
    now = deny(alpha)
    enough = [a for a in DENY_ALPHAS if deny(a).epsilon <= DENY_TARGET]
    if now.epsilon > DENY_TARGET:
        return Check(False, f"Not yet: at α = {alpha:g}, ε = {now.epsilon:.3f} > ln 10 = "
                     f"{DENY_TARGET:.3f}: a released answer can be e^ε = "
                     f"{math.exp(now.epsilon):.1f} times likelier from one true answer than "
                     "from another.")
    if enough and alpha > enough[0]:
        return Check(False, f"ε = {now.epsilon:.3f} is within ln 10, but a smaller α would do: "
                     "each step of α redraws more answers, and the tables drift further from "
                     "the truth.")
    return Check(True, f"Right: α = {alpha:g} gives ε = {now.epsilon:.3f} ≤ ln 10 = "
                 f"{DENY_TARGET:.3f}. The rarest answer decides: a released C comes from a "
                 "true C with probability 1 − α + α·0.2 and from an A or a B with α·0.2, so ε "
                 "= ln((1 − 0.8α)/(0.2α)). An attacker who guesses the likeliest true answer "
                 f"is right {100 * now.guess_accuracy:.1f} % of the time, against "
                 f"{100 * now.baseline:.0f} % guessing A for everyone.")


def coin_deniability(answers: pd.Series, keep_probability: float) -> Deniability:
    """The exact deniability of the coin-flip survey's randomized response (seed 002) on the
    true ``answers``: the step's matrix as the method builds it (:func:`step_matrix`, over the
    categories yes and no) and the answers' distribution, as the Protect page computes it for
    the same step (:func:`deniability`). ε = ln 3 for the coin, q = ½."""
    step = {"method": "randomized_response", "column": "answer",
            "keep_probability": float(keep_probability), "categories": ["yes", "no"]}
    column = answers.rename("answer")
    pi, blanks = prior(column)
    return deniability(step_matrix(step, column), pi, column="answer",
                       method="randomized_response", n_blank=blanks)


# 8 · One household, five people -----------------------------------------------------------------

HOUSEHOLD_KEYS = ["district", "sex", "agegroup"]  # what the attacker knows of each person
HOUSEHOLD_ID = "hid"
HOUSEHOLD_SIZE = 5
#: The lesson's household: of the households of five whose members are each found among at
#: least five records (r ≤ 0.2), the one whose risk most exceeds its riskiest member's.
HOUSEHOLD_MAX_MEMBER_RISK = 0.2
#: An answer within this of the household's risk (shown to three decimals) is right.
HOUSEHOLD_TOLERANCE = 0.0005


@cache
def households() -> pd.DataFrame:
    """The whole-households survey the eighth lesson uses (read once; never changed)."""
    return read_table(example("households").path)


@cache
def households_risk() -> HouseholdRisk:
    """Household risk of the survey by the lesson's keys, without weights (r = 1/f_k)."""
    return household_risk(households(), HOUSEHOLD_KEYS, HOUSEHOLD_ID)


@cache
def one_household() -> pd.DataFrame:
    """The lesson's household (see :data:`HOUSEHOLD_MAX_MEMBER_RISK`): its members with their
    keys, f_k, r = 1/f_k and the household's risk R."""
    df, h = households(), households_risk()
    d = df.assign(r=h.individual, R=h.risk)
    per = d.groupby(HOUSEHOLD_ID).agg(n=("r", "size"), top=("r", "max"), R=("R", "first"))
    pick = per[(per["n"] == HOUSEHOLD_SIZE) & (per["top"] <= HOUSEHOLD_MAX_MEMBER_RISK)]
    chosen = (pick["R"] - pick["top"]).idxmax()
    members = d[d[HOUSEHOLD_ID] == chosen]
    return pd.DataFrame({"relation": members["relation"], "age": members["age"],
                         **{c: members[c] for c in HOUSEHOLD_KEYS},
                         "records like them (f_k)": (1 / members["r"]).round().astype(int),
                         "risk r = 1/f_k": members["r"], "household risk R": members["R"]}
                        ).reset_index(drop=True)


def check_household(answer: float | None) -> Check:
    """Met when ``answer`` is the household's risk 1 − Π(1 − r_i) within
    :data:`HOUSEHOLD_TOLERANCE`; a wrong answer that is a common mistake says which."""
    members = one_household()
    r = members["risk r = 1/f_k"].to_numpy()
    R = float(members["household risk R"].iloc[0])
    if answer is None:
        return Check(False, "Not yet: enter the household's risk, a number from 0 to 1.")
    if abs(answer - R) <= HOUSEHOLD_TOLERANCE:
        h = households_risk()
        unique = composition_uniques(households(), HOUSEHOLD_KEYS, HOUSEHOLD_ID)
        return Check(True, f"Right: R = 1 − Π(1 − r_i) = {R:.3f}, {R / r.max():.1f} times the "
                     f"riskiest member's {r.max():.3f}. Over the whole file the attacker "
                     f"expects to re-identify {float(h.individual.sum()):.0f} people one by "
                     f"one, but {h.expected_reidentifications:.0f} people through their "
                     f"households; and {unique:,} of the {h.n_households:,} households are "
                     "the only one with their members' district, sex and age groups: knowing "
                     "who lives together finds them at once.")
    mistakes = [(float(r.max()), "that is the riskiest member alone: the household is found "
                 "when any member is"),
                (float(r.sum()), "the sum counts twice the cases where two members are found "
                 "(and can pass 1): take the chance that nobody is found, Π(1 − r_i), from 1"),
                (float(r.mean()), "that is the members' average: the household is found when "
                 "any member is"),
                (float(r.prod()), "that is the chance that every member is found: the "
                 "household is found when any member is")]
    for value, why in mistakes:
        if abs(answer - value) <= HOUSEHOLD_TOLERANCE:
            return Check(False, f"Not yet: {answer:.3f} — {why}.")
    return Check(False, f"Not yet: {answer:.3f} is not the chance that at least one of the "
                 "five is re-identified, each independently with their own r.")


# 9 · A synthetic file ----------------------------------------------------------------------------

SYNTH_KEYS = ["region", "age", "sex", "household_size"]  # the survey's keys
SYNTH_SENSITIVE = "benefit"
SYNTH_DROPPED = "weight"  # a weight describes the sample, not a person: not synthesised
SYNTH_LEAVES = (1, 2, 3, 5, 10, 20, 50, 100)  # the minimum leaf sizes offered
SYNTH_SEED = 42


@dataclass(frozen=True)
class Synthesised:
    """One synthesis of the household survey (without its weight) at a minimum leaf size:
    the release, how many of its records copy an original record whole (every column
    equal), and its replicated uniques and DiSCO of benefit beside the file's own DiO."""

    min_leaf: int
    release: pd.DataFrame
    copies: int
    risk: SyntheticRisk

    @property
    def disco(self) -> float:
        return self.risk.disco[SYNTH_SENSITIVE].disco_percent

    @property
    def dio(self) -> float:
        return self.risk.disco[SYNTH_SENSITIVE].disco_original_percent


def synthesis_input() -> pd.DataFrame:
    """The household survey as the ninth lesson synthesises it: every column but the weight."""
    return household().drop(columns=SYNTH_DROPPED)


@lru_cache(maxsize=len(SYNTH_LEAVES))
def synthesise(min_leaf: int) -> Synthesised:
    """The survey synthesised by sequential CART (docs/methods.md, "Synthesis (sequential
    CART)") with ``min_leaf`` and the lesson's seed, and its figures."""
    df = synthesis_input()
    recipe = parse_recipe({"seed": SYNTH_SEED, "steps": [
        {"method": "synthesize", "min_leaf": min_leaf}]})
    release = apply_recipe(recipe, df).data
    copies = int(release.merge(df.drop_duplicates(), how="inner").shape[0])
    risk = synthetic_risk(df, release, SYNTH_KEYS, [SYNTH_SENSITIVE])
    return Synthesised(min_leaf, release, copies, risk)


def check_synthetic(min_leaf: int) -> Check:
    """Met when DiSCO of benefit is at most half the file's DiO at ``min_leaf`` and at no
    smaller leaf size offered."""
    now = synthesise(min_leaf)
    bound = now.dio / 2
    if now.disco > bound:
        return Check(False, f"Not yet: DiSCO is {now.disco:.1f} % of the people, more than "
                     f"half the file's own {now.dio:.1f} % ({bound:.1f} %).")
    smaller = [m for m in SYNTH_LEAVES if m < min_leaf and synthesise(m).disco <= bound]
    if smaller:
        return Check(False, f"Not yet: leaves of {min_leaf} keep DiSCO at or under "
                     f"{bound:.1f} %, but leaves of {smaller[0]} do too and keep more of the "
                     "data's detail: take the smallest.")
    return Check(True, f"Right: with leaves of at least {min_leaf} records DiSCO falls to "
                 f"{now.disco:.1f} % from the file's {now.dio:.1f} %. Yet {now.copies:,} of the "
                 f"{len(now.release):,} synthetic records equal a real person's record on every "
                 f"column, and {now.risk.replicated_uniques:,} people unique in "
                 "the survey are unique in the synthetic file too: no row was made from one "
                 "person, and an attacker who knows someone's region, age, sex and household "
                 f"size still reads their benefit off the file, correctly, for {now.disco:.1f} "
                 "% of the people.")


def slider_positions() -> Iterator[Callable[[], object]]:
    """Every position of each lesson's slider, its other control as the lesson opens, as
    calls of the cached functions the Lessons page makes there, with the same arguments: made
    once, each position's figures are in the caches every session reads
    (``ui.infra.warmup.warm`` makes them at start-up, a class's first move at each position
    then only draws). In the order a class meets them: the lessons' order, a slider from its
    start; at most each cache's size."""
    yield from (partial(coarsen, w, None) for w in (0, *WIDTHS))
    for method, (high, step) in PERTURB_SLIDERS.items():
        yield from (partial(perturb, method, round(step * i, 6))
                    for i in range(round(high / step) + 1))
    yield from (partial(rr_margin, n) for n in RR_SIZES)
    for method, (_, _, high, step) in ANALYSIS_METHODS.items():
        yield from (partial(survive, method, float(a)) for a in range(0, high + 1, step))
    yield from (partial(deny, a) for a in DENY_ALPHAS)
    yield from (partial(synthesise, leaf) for leaf in SYNTH_LEAVES)
