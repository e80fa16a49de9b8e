"""Randomized response lab: the coin-flip survey of seed 002, simulated. Its ε and best guess
come from the function the Protect page uses for the same step (docs/measures.md,
"Deniability: what perturbation buys"; :func:`ui.logic.lessons.coin_deniability`)."""

import streamlit as st

from sdc_core.methods.randomized_response import coin_survey, estimate_spread
from sdc_core.names import tile
from ui import charts
from ui.logic.figures import spread_figure
from ui.logic.lessons import coin_deniability
from ui.sidebar import render_sidebar

st.title("Randomized response lab")
st.caption("How can a survey learn how many students broke the honour code when nobody admits "
           "it? Each student flips a coin: heads, answer truthfully; tails, flip again and "
           "answer yes on heads, no on tails. Any single yes may be the coin; the share of "
           "violators can still be estimated.")

c1, c2, c3, c4 = st.columns(4)
n = c1.number_input("Participants", 10, 1_000_000, 1000, step=100, key="w_rr_n")
truth = c2.slider("True share of violators", 0.0, 1.0, 0.2, 0.01, key="w_rr_truth")
q = c3.slider("Probability of answering truthfully (q)", 0.05, 1.0, 0.5, 0.05, key="w_rr_q",
              help="q = ½ is the coin flip. Otherwise the answer is a fair coin.")
seed = c4.number_input("Seed", 0, 2**31 - 1, 2, key="w_rr_seed",
                       help="Fixed for teaching: the same seed replays the same survey.")

answers, reports, est = coin_survey(int(n), truth, q, int(seed))
yes = int((answers == "yes").sum())
deny = coin_deniability(answers, q)

m = st.columns(4)
m[0].metric("Observed share of 'yes'", f"{est['observed_share']:.3f}",
            help="λ̂: the share of randomized answers that say yes.")
m[1].metric("Estimated share of violators", f"{est['estimate']:.3f}",
            f"{est['estimate'] - yes / n:+.3f} against the truth", delta_color="off")
m[2].metric("95 % interval", f"{est['ci_low']:.3f} – {est['ci_high']:.3f}",
            help="π̂ ± 1.96 · SE, SE = √(λ̂(1−λ̂)/n) / q.")
m[3].metric("Privacy ε", f"{deny.epsilon:.3f}" if deny.deniable else "∞",
            help="ε = ln max over reports k of P(k | violator)/P(k | not) = ln((q + (1−q)/2) / "
                 "((1−q)/2)): the Protect page's local-DP ε for the same randomized response step.")
st.caption(deny.meaning + ".")
g = st.columns(4)
g[0].metric(tile("guess_accuracy"), f"{deny.guess_accuracy:.3f}",
            f"{100 * (deny.guess_accuracy - deny.baseline):+.1f} points over the baseline",
            delta_color="off",
            help="Σ_k max_i P(k|i)·π_i: whoever reads a student's report and guesses the "
                 "likelier true answer is right this often.")
g[1].metric(tile("baseline"), f"{deny.baseline:.3f}",
            help="max_i π_i: guessing the commoner true answer for everyone, no report seen.")
if "yes" in deny.posterior.columns and "yes" in deny.posterior.index:
    g[2].metric("P(violator | 'yes')", f"{deny.posterior.loc['yes', 'yes']:.3f}",
                help="The posterior: P(k|yes)·π / Σ_j P(k|j)·π_j for the report 'yes'.")
st.markdown(
    f"P(yes | violator) = q + (1−q)/2 = {q + (1 - q) / 2:.3f} and P(yes | not) = (1−q)/2 = "
    f"{(1 - q) / 2:.3f}, so λ = qπ + (1−q)/2 and the estimate is π̂ = (λ̂ − (1−q)/2) / q"
    + (" = 2λ̂ − ½ for the coin flip." if q == 0.5 else ".")
    + f" Here {int((reports != answers).sum())} of {int(n)} answers were changed by the coins.")

sizes = [50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000]
spread = estimate_spread(sizes, truth, q, replications=40, seed=int(seed))
charts.show(spread_figure(spread, truth), "randomized_response_spread", key="rr_spread",
            context=f"simulated surveys: true share {truth:g}, q = {q:g}, 40 per size; "
                    f"seed {int(seed)}")
st.caption("Each dot is one simulated survey (40 per size). The noise the coins add shrinks "
           "like 1/√n: privacy costs participants, not accuracy in the limit.")
render_sidebar()
