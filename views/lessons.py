"""Lessons page: eight short lessons, each with one task and a live check (``ui.logic.lessons``)."""

from collections.abc import Callable
from typing import Any

import streamlit as st

from sdc_core.methods.randomized_response import coin_survey, estimate_spread
from sdc_core.names import tile
from sdc_core.tables.responses import audit
from sdc_core.utility.validity import HOLDS, TERM_OVERLAP, TERM_SE
from ui import charts, state
from ui.guard import guarded
from ui.infra import pace
from ui.logic import lessons, run_times
from ui.logic.figures import spread_figure
from ui.logic.lessons import LESSONS, Check
from ui.logic.text import md, number
from ui.page import guarded_part
from ui.sidebar import render_sidebar

#: The lessons in their order
LESSON_KEYS = list(LESSONS)


def control(widget: Callable[..., Any], key: str, default: Any, *args: Any, **kwargs: Any) -> Any:
    """A lesson's widget, seeded from the session's lesson settings, which keep its value."""
    values = state.lesson_values()
    state.bind(key, values.get(key, default))
    values[key] = widget(*args, key=key, **kwargs)
    return values[key]


def reset(lesson: str) -> None:
    """Forget a lesson's settings and its progress (a button callback)."""
    prefix = f"w_l_{lesson}_"
    values = state.lesson_values()
    for key in [k for k in values if k.startswith(prefix)]:
        del values[key]
    state.forget_widgets(prefix=prefix)
    state.lessons_done().discard(lesson)


def verdict(lesson: str, check: Check) -> None:
    """Show whether the task is met; a met task counts as done until the lesson is reset."""
    if check.met:
        if lesson not in (done := state.lessons_done()):
            done.add(lesson)
            st.rerun()  # the lesson list and the progress show it at once
        st.success(f"**Task met.** {check.message}", icon=":material/task_alt:")
    else:
        st.info(check.message, icon=":material/pending:")


def task(text: str) -> None:
    st.markdown(f":material/assignment: **Task:** {text}")


def who_is_unique() -> None:
    df = lessons.household()
    base = lessons.unique_keys(None)
    st.markdown(
        f"The household survey in front of you has {len(df):,} records: one person each, with "
        "region, age, sex, household size, occupation, income and whether they receive "
        "benefits. An attacker knows a few facts about a neighbour — their **quasi-"
        "identifiers** — and looks for the records that match. If only one record matches, "
        "the attacker has found the neighbour and reads the rest: income, benefits. Knowing "
        f"region and sex alone, the smallest group of matching records has {base.min_k:g} "
        "people.")
    task("the attacker also learns one more fact. Which one leaves the most people alone in "
         "their group (a **unique** record)? Try each.")
    third = control(st.radio, "w_l_unique_third", None, "Third fact the attacker knows",
                    [None, *lessons.UNIQUE_THIRD], horizontal=True,
                    format_func=lambda c: "nothing more" if c is None else c.replace("_", " "))
    p = lessons.unique_keys(third)
    m = st.columns(3)
    m[0].metric("Unique records", f"{p.percent_unique:.1f} %",
                help="Records no other record shares the known facts with (f_k = 1).")
    m[1].metric(tile("expected_reidentifications"), number(round(p.expected_reidentifications, 1)),
                help="Σ 1/f_k: the attacker picks one of the f_k matching records.")
    m[2].metric("Smallest group", f"{p.min_k:g}")
    verdict("unique", lessons.check_unique(third))
    st.markdown("**The riskiest groups** (f_k is the number of records that match)")
    st.dataframe(lessons.riskiest(third), hide_index=True, width="stretch")


def coarsen() -> None:
    df = lessons.household()
    raw = lessons.coarsen(0)
    st.markdown(
        f"Publishing exact ages makes many people findable: with region, sex and age, "
        f"{raw.small:,} of the {len(df):,} records are in groups of fewer than "
        f"{lessons.COARSEN_K}. **Banding** publishes each age as its band (width 10: 34 "
        "becomes 30–39), so more people share each value; **top coding** publishes "
        "every age above a limit as the limit, because the very old are few. Both protect "
        "and both lose: the information loss IL1 measures how far the published ages (a "
        "band counted as its middle, 35) are from the true ones.")
    task(f"make every record share its region, sex and age band with at least "
         f"{lessons.COARSEN_K - 1} others (**k ≥ {lessons.COARSEN_K}**), losing as little as "
         "possible.")
    left, right = st.columns(2)
    width = control(left.slider, "w_l_coarsen_width", 0, "Band width of age (years; 0 = "
                    "exact ages)", 0, max(lessons.WIDTHS), step=1)
    top = control(right.select_slider, "w_l_coarsen_top", None, "Top-code age at (older ages "
                  "are published as it)", list(lessons.TOPS),
                  format_func=lambda t: "no top coding" if t is None else str(t))
    now = lessons.coarsen(int(width), top)
    m = st.columns(3)
    m[0].metric("Smallest group", now.min_k,
                help="The fewest records that share a region, sex and age band.")
    m[1].metric(f"Records in groups under {lessons.COARSEN_K}", f"{now.small:,}")
    m[2].metric("IL1 of age", f"{now.loss:.4f}", help="Information loss: 0 = ages unchanged.")
    verdict("coarsen", lessons.check_coarsen(now, lessons.best_coarsening()))


def perturb() -> None:
    before = lessons.perturb("pram", 0.0).after
    st.markdown(
        "Banding makes groups bigger. **Perturbation** instead moves values at random: PRAM "
        "replaces a category by another with a small probability, rank swapping exchanges a "
        "value with a close one. The released keys then look as unique as before — "
        f"{number(round(before['expected_reidentifications'], 1))} expected re-identifications "
        "on region, age and sex — but some of them are false. An attacker who knows the true "
        "values (the **linkage attack**) may be sent to the wrong record.")
    task("perturb until the attacker re-identifies **at most half** as many people as the "
         "released keys suggest.")
    left, right = st.columns(2)
    method = control(left.radio, "w_l_perturb_method", "pram", "Method",
                     list(lessons.PERTURB_METHODS),
                     format_func=lambda m: lessons.PERTURB_METHODS[m][0])
    high, step = lessons.PERTURB_SLIDERS[method]
    if method == "pram":
        amount = control(right.slider, "w_l_perturb_p", 0.0, "Flip probability p", 0.0, high,
                         step=step)
    else:
        amount = control(right.slider, "w_l_perturb_window", 0.0, "Swap window (% of ranks)",
                         0.0, high, step=step)
    wb = lessons.perturb(method, float(amount))
    m = st.columns(2)
    m[0].metric(tile("expected_reidentifications"),
                number(round(wb.after["expected_reidentifications"], 1)),
                help="How unique the released values look, read as if they were true.")
    m[1].metric(tile("linkage_reidentifications"),
                number(round(wb.after["linkage_reidentifications"], 1)),
                help="What an attacker who knows the true region, age and sex re-identifies.")
    verdict("perturb", lessons.check_perturb(wb))


def randomized_response() -> None:
    st.markdown(
        f"A survey asks a question nobody answers honestly. Each participant flips a coin: "
        "heads, they answer truthfully; tails, they flip again and answer yes on heads, no on "
        "tails. Any single yes may be the coin, so answering is safe. The share of true yes "
        f"answers (here {lessons.RR_TRUTH:g}) can still be estimated: π̂ = 2λ̂ − ½, with λ̂ "
        "the share of yes answers. The coin adds noise, which more participants average out.")
    task(f"find the **fewest participants** for which the 95 % interval of the estimate is "
         f"within **±{lessons.RR_MARGIN:g}**.")
    n = control(st.select_slider, "w_l_randomized-response_n", lessons.RR_SIZES[0],
                "Participants", lessons.RR_SIZES)
    estimate, margin = lessons.rr_margin(int(n))
    m = st.columns(2)
    m[0].metric("Estimated share", f"{estimate:.3f}", f"{estimate - lessons.RR_TRUTH:+.3f} "
                "against the truth", delta_color="off")
    m[1].metric("95 % interval", f"±{margin:.3f}", help="1.96 standard errors.")
    answers, _, _ = coin_survey(int(n), lessons.RR_TRUTH, lessons.RR_Q, lessons.RR_SEED)
    deny = lessons.coin_deniability(answers, lessons.RR_Q)
    st.caption(f"What the coin buys each participant: {deny.meaning} (the Protect page's "
               "figure for the same step).")
    verdict("randomized-response", lessons.check_rr(int(n)))
    spread = estimate_spread(lessons.RR_SIZES, lessons.RR_TRUTH, lessons.RR_Q, replications=40,
                             seed=lessons.RR_SEED)
    charts.show(spread_figure(spread, lessons.RR_TRUTH), "lesson_randomized_response",
                key="lesson_rr_spread", context=f"simulated coin-flip surveys: true share "
                f"{lessons.RR_TRUTH:g}, 40 per size; seed {lessons.RR_SEED}")


def counts() -> None:
    naive, safe = lessons.counts_tables()
    hidden = [o.option for o in naive.options if o.count is None]
    st.markdown(
        f"A survey organiser may see how {naive.participants} participants answered "
        f"\"{lessons.COUNTS_QUESTION}\", but an option chosen by fewer than {naive.t} people "
        f"is shown only as \"less than {naive.t}\": a count of 1 or 2 could point at a "
        "person. Here is the table as a naive tool publishes it, with the exact number of "
        "people who did not answer.")
    st.dataframe(naive.frame(), hide_index=True)
    task(f"how many people chose {' or '.join(hidden)}, together? Work it out from the "
         "table.")
    answer = control(st.number_input, "w_l_counts_answer", None,
                     f"{' and '.join(hidden)} together", 0, naive.participants, step=1,
                     placeholder="a number")
    check = lessons.check_counts(None if answer is None else int(answer), naive)
    verdict("counts", check)
    if check.met:
        st.markdown(
            "**The rule.** Publish non-response as the interval that the shown counts allow "
            "anyway — N − Σ shown − m·(T − 1) to N − Σ shown, with m hidden options — so it "
            "adds nothing to what the reader knows:")
        st.dataframe(safe.frame(), hide_index=True)
        result = audit(safe)
        st.caption("Audit of this table (integer programming over the hidden counts): "
                   + ("passed: " + "; ".join(f"{md(o.option)} can be anything from {o.low} to "
                                             f"{o.high}" for o in result.options)
                      if result.passes else "; ".join(result.findings())) + ".")


def analysis() -> None:
    before = lessons.survive("band", 0)
    st.markdown(
        f"Protection is only worth it if the data still answer the questions they were "
        f"released for. In ACTG 175, the AIDS trial data the other pages open with "
        f"({len(lessons.actg()):,} patients), a researcher fits the regression "
        f"`{lessons.ANALYSIS_FORMULA}` (CD4 count at 20 weeks on age, treatment and baseline "
        "CD4). Fitted on the protected table, each coefficient has a new 95 % interval; the "
        "**CI overlap** J = ½[(U − L)/(U_o − L_o) + (U − L)/(U_p − L_p)] is 1 when it is the "
        "original interval, near 0 or below when they part. Unprotected, the linkage attack "
        f"on age, gender and race re-identifies {before.risk:.2f} % of the patients.")
    task(f"protect age until the attack re-identifies **at most {lessons.ANALYSIS_RISK:g} %** "
         f"of the patients while the regression **still holds** (mean CI overlap ≥ "
         f"{HOLDS:g}, every original estimate inside its protected interval, every term's "
         f"overlap at least {TERM_OVERLAP:g} and moved by less than {TERM_SE:g} standard error).")
    left, right = st.columns(2)
    method = control(left.radio, "w_l_analysis_method", "band", "Method",
                     list(lessons.ANALYSIS_METHODS),
                     format_func=lambda m: lessons.ANALYSIS_METHODS[m][0])
    _, _, high, step = lessons.ANALYSIS_METHODS[method]
    if method == "band":
        amount = control(right.slider, "w_l_analysis_width", 0, "Band width of age (years; 0 = "
                         "exact ages)", 0, high, step=step)
    else:
        amount = control(right.slider, "w_l_analysis_p", 0, "Noise amount p (sd of the noise, "
                         "% of the sd of age)", 0, high, step=step)
    now = lessons.survive(method, float(amount))
    m = st.columns(2)
    m[0].metric(tile("linkage_risk_percent"), f"{now.risk:.2f} %",
                help="Expected share of patients an attacker who knows their true age, gender "
                     "and race re-identifies.")
    m[1].metric(tile("mean_ci_overlap"), f"{now.result.mean_ci_overlap:.3f}",
                help="The mean of J over the regression's terms: 1 = the original intervals.")
    verdict("analysis", lessons.check_analysis(now))
    st.markdown("**The intervals**, original and protected, term by term")
    st.dataframe(lessons.analysis_intervals(now), hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.3f")
                                for c in ("original", "protected", "CI overlap")})


def deniability() -> None:
    raw = lessons.deny_answers()[lessons.DENY_COLUMN]
    shares = ", ".join(f"{v} {n} %" for v, n in lessons.DENY_SHARES.items())
    st.markdown(
        f"{len(raw)} people answered a multiple-choice question: {shares}. **Random "
        "relabeling** protects each answer: with probability α it is replaced by a draw from "
        "the answers' own distribution, so the tables barely move. What does α buy a "
        "respondent? The **local-DP ε**: whatever their true answer, a released one is at most "
        "e^ε times likelier under it than under any other. ε = ∞ means none: the release can "
        "prove an answer. The same figure is on the Protect page, for every perturbed column.")
    task("choose the **smallest α** for which **ε ≤ ln 10** (about 2.30): no released answer "
         "is more than ten times likelier from one true answer than from another.")
    alpha = control(st.select_slider, "w_l_deniability_alpha", lessons.DENY_ALPHAS[1],
                    "Relabeling probability α", list(lessons.DENY_ALPHAS))
    d = lessons.deny(float(alpha))
    m = st.columns(3)
    m[0].metric(tile("epsilon"), f"{d.epsilon:.3f}" if d.deniable else "∞",
                help="ln max over released k and true i, j of P(k|i)/P(k|j).")
    m[1].metric(tile("guess_accuracy"), f"{d.guess_accuracy:.3f}",
                help="Σ_k max_i P(k|i)·π_i: an attacker guesses the likeliest true answer of "
                     "each released one.")
    m[2].metric(tile("baseline"), f"{d.baseline:.3f}",
                help="max_i π_i: guessing the commonest answer, the release unseen.")
    st.caption(d.meaning)
    verdict("deniability", lessons.check_deny(float(alpha)))
    st.markdown("**Posterior**: P(true answer | released answer), one column per released "
                "answer")
    st.dataframe(d.posterior.round(3), width="content")


def one_household() -> None:
    members = lessons.one_household()
    st.markdown(
        "People live in households, and households are released whole. An attacker who knows "
        "a person's **district, sex and age group** finds them among the f_k records that share "
        "them: their risk is r = 1/f_k. Below are the five members of one household; none is "
        f"found among fewer than {int(members['records like them (f_k)'].min())} records. But "
        "finding **any one** of them finds the household — and then every member, since the "
        "release keeps them together under one household id.")
    task("what is the chance that **at least one** of the five is re-identified, if each is "
         "independently, with their own r? Enter it to three decimals.")
    st.dataframe(members.drop(columns="household risk R"), hide_index=True, width="stretch",
                 column_config={"risk r = 1/f_k": st.column_config.NumberColumn(format="%.4f")})
    answer = control(st.number_input, "w_l_household_answer", None, "The household's risk",
                     min_value=0.0, max_value=1.0, step=0.001, format="%.3f",
                     placeholder="a number from 0 to 1")
    verdict("household", lessons.check_household(answer))


def synthetic() -> None:
    df = lessons.synthesis_input()
    st.markdown(
        f"A **synthetic file** replaces the {len(df):,} records of the household survey with "
        "records drawn from a model of it: sequential CART draws each column, one after "
        "another, from the records in a leaf of a decision tree fitted on the columns before "
        "it. No synthetic row is made from one person — but is it no one's? The **minimum "
        "leaf size** sets how many real records each draw mixes. **DiSCO** counts the people "
        "whose region, age, sex and household size single out one value of *benefit* in the "
        "synthetic file, and it is theirs: an attacker who knows those four facts reads their "
        "benefit off the file, correctly. **DiO** is the same count in the survey itself: "
        "what the file gives away before any synthesis. (The weight is left out: it describes "
        "the sample, not a person.)")
    task("choose the **smallest minimum leaf size** for which **DiSCO of benefit is at most "
         "half of DiO**.")
    leaf = control(st.select_slider, "w_l_synthetic_leaf", lessons.SYNTH_LEAVES[0],
                   "Minimum leaf size (records in a leaf)", list(lessons.SYNTH_LEAVES))
    now = lessons.synthesise(int(leaf))
    m = [*st.columns(2), *st.columns(2)]  # two by two: the projector's figures stay whole
    m[0].metric("Records copied whole", number(now.copies),
                help="Synthetic records equal to a record of the survey on every column.")
    m[1].metric(tile("replicated_uniques"), number(now.risk.replicated_uniques),
                help="People unique on the four keys in the survey whose keys are unique in "
                     "the synthetic file too.")
    m[2].metric(tile("disco_percent"), f"{now.disco:.1f} %",
                help="Of the people, those whose keys carry one value of benefit in the "
                     "synthetic file, equal to their own.")
    m[3].metric(tile("disco_original_percent"), f"{now.dio:.1f} %",
                help="The same count in the survey itself.")
    verdict("synthetic", lessons.check_synthetic(int(leaf)))


@st.fragment
@guarded_part
def class_pace() -> None:
    """The class at a glance, for the teacher in the projector view: the sessions connected to
    this server process and whether it keeps up with their moves (:mod:`ui.infra.pace`;
    docs/teaching.md, "The class at a glance"). Counts and seconds only; the button reruns
    this part alone."""
    times = run_times.window_times(*pace.RECORD.snapshot())
    text, button = st.columns([3, 1], vertical_alignment="center")  # the button's label whole
    line = run_times.class_line(times, pace.sessions_connected())
    if run_times.busy(times):
        text.warning(line, icon=":material/hourglass_top:")
    else:
        text.markdown(f":material/groups: {line}")
    button.button("Refresh", key="w_class_pace", icon=":material/refresh:",
                  help="The figures as they are now: the sessions connected to this server "
                       "process, and the page runs that ended in the last minute.")


VIEWS = {"unique": who_is_unique, "coarsen": coarsen, "perturb": perturb,
         "randomized-response": randomized_response, "counts": counts, "analysis": analysis,
         "deniability": deniability, "household": one_household, "synthetic": synthetic}

st.title("Lessons")
st.caption("Nine short lessons for a workshop. Each explains what is on the screen, sets one "
           "task and says as soon as it is met, computed live by the same code as the other "
           "pages. Progress is kept for this session; each lesson can be reset.")
if state.projector():
    class_pace()
done = state.lessons_done()
left, right = st.columns([1, 3], gap="large")
with left:
    state.bind("w_lesson", state.lesson() if state.lesson() in LESSONS else LESSON_KEYS[0])
    chosen = st.radio("Lesson", LESSON_KEYS, key="w_lesson",
                      format_func=lambda k: f"{LESSON_KEYS.index(k) + 1}. {LESSONS[k].title}")
    state.set_lesson(chosen)
with right:
    lesson = LESSONS[chosen]
    st.header(f"{LESSON_KEYS.index(chosen) + 1}. {lesson.title}", anchor=False)
    st.caption(f"On {lesson.goal}.")
    VIEWS[chosen]()
    st.button("Reset this lesson", key=f"reset_{chosen}", icon=":material/restart_alt:",
              on_click=guarded(reset), args=(chosen,))
with left:
    finished = [k for k in LESSON_KEYS if k in done]
    st.progress(len(finished) / len(LESSON_KEYS),
                text=f"{len(finished)} of {len(LESSON_KEYS)} lessons done")
    for k in finished:
        st.markdown(f":material/check_circle: {LESSON_KEYS.index(k) + 1}. {LESSONS[k].title}")
render_sidebar(lesson_data=lesson.data)
