"""Population uniqueness: how much of the *population* is unique on the keys, estimated from a
sample (the released file) and the sampling fraction.

Everything reads only the **class-size histogram** of the sample's key table: ``s_j`` classes
of size j, ``n = Σ j·s_j`` records, ``u = Σ s_j`` classes, ``s_1`` sample uniques; and the
sampling fraction ``π = n/N`` (N the population size; given as either). Each model estimates
S_1, the number of population uniques; it is reported as a count and as the share S_1/N of the
population. The sample uniqueness is ``s_1/n``.

**Zayatz** (1991; as in Dankar, El Emam, Neisa & Roffey 2012, BMC Med Inform Decis Mak 12:66,
Appendix A). Bayes' rule, with the population's class-size proportions estimated by the
sample's (p_j = s_j/u) and simple random sampling without replacement (hypergeometric)::

    P(f=1 | F=j) = j · C(N−j, n−1) / C(N, n) = j · (n/N) · Π_{i=1}^{j−1} (N−n−i+1)/(N−i)
    P(F=1 | f=1) = s_1 · P(f=1|F=1) / Σ_j s_j · P(f=1|F=j)
    S_1 = s_1 · P(F=1 | f=1) · N/n,        share = s_1 · P(F=1 | f=1) / n

(P(f=1|F=j) = 0 when j − 1 > N − n; N = n/π need not be whole, the product is its extension.)
At π = 1 only j = 1 has P > 0, so the share is the sample uniqueness.

**Pitman** (Hoshino 2001, "Applying Pitman's sampling formula to microdata disclosure risk
assessment", J. Official Statistics 17(4)). Pitman's sampling formula gives the probability of
the sample's partition; as a function of (θ, α), 0 < α < 1, θ > −α, the log-likelihood is::

    ℓ(θ, α) = Σ_{i=1}^{u−1} log(θ + iα) − Σ_{i=1}^{n−1} log(θ + i)
              + Σ_{j≥2} s_j Σ_{k=1}^{j−1} log(k − α)

and the maximum-likelihood (θ̂, α̂) solves the score equations::

    ∂ℓ/∂θ = Σ_{i=1}^{u−1} 1/(θ + iα) − Σ_{i=1}^{n−1} 1/(θ + i) = 0
    ∂ℓ/∂α = Σ_{i=1}^{u−1} i/(θ + iα) − Σ_{j≥2} s_j Σ_{k=1}^{j−1} 1/(k − α) = 0

(computed with digamma: Σ_{i=1}^{n−1} 1/(θ+i) = ψ(θ+n) − ψ(θ+1), Σ_{k=1}^{j−1} 1/(k−α) =
ψ(j−α) − ψ(1−α), Σ_{i=1}^{u−1} 1/(θ+iα) = [ψ(θ/α+u) − ψ(θ/α+1)]/α, the last by a power series
in (u−1)α/θ when θ/α > 20u, where the digamma difference would cancel). They are solved by
profiling (``scipy.optimize.brentq`` twice): for each α the first equation has one root θ(α) in
(−α, ∞), and the second is then solved in α ∈ (0, 1). The expected number of population
uniques for a population of size N is Hoshino's large-N form::

    S_1 = Γ(θ̂ + 1) / Γ(θ̂ + α̂) · N^α̂

valid only when the maximum likelihood is interior (0 < α̂ < 1, θ̂ > −α̂) and 0 ≤ S_1 ≤ N;
otherwise the model is reported as invalid. Pitman's S_1 does not depend on the sample beyond
(θ̂, α̂), so at π = 1 it is *not* s_1/n (on ARX's adult file 0.53002, against 0.51429).

**SNB**, the slide negative binomial (Chen & Keller-McNulty 1998, "Estimation of
identification disclosure risk in microdata", J. Official Statistics 14(1)). The K non-empty
population classes have sizes F with F − 1 negative binomial::

    P(F = j) = C(j + k − 2, j − 1) · p^k · (1 − p)^{j−1},  j = 1, 2, …     (k > 0, 0 < p < 1)

so S_1 = K · p^k. With Bernoulli sampling at rate π a class keeps f ~ Bin(F, π) records, and
f − Bin(1, π) is negative binomial (k, p′) with p′ = p / (p + π(1 − p)), q′ = 1 − p′::

    P(f = 0) = (1 − π) p′^k,     P(f = 1) = p′^k (π + (1 − π) k q′),
    E[f] = π (1 + k (1 − p)/p)

K, k and p are estimated by the method of moments on the number of sample classes, sample
uniques and records: u = K (1 − P(f=0)), s_1 = K P(f=1), n = K E[f]; eliminating K::

    P(f=1) = (s_1/u) (1 − P(f=0)),    E[f] = (n/u) (1 − P(f=0)),    K = u / (1 − P(f=0))

(solved with ``scipy.optimize.root`` in log k and logit p). Valid when these equations have a
solution with k > 0, 0 < p < 1 and 0 ≤ S_1 ≤ N. At π = 1, K = u and S_1 = u · s_1/u = s_1. At π
= 1 a solution exists exactly when the sample is over-dispersed against the Poisson,
s_1/u > exp(−(n/u − 1)). (The choice of the moments u, s_1 and n is ours: the paper's own text
was not at hand; with u, s_1 and s_2 instead, ARX's Dankar reference at π = 0.2 is not met.)

**Dankar's decision rule** (Dankar et al. 2012): no sample uniques: 0; π ≤ 0.1: Pitman when it
is valid, else Zayatz; π > 0.1: the smaller of Zayatz and SNB when SNB is valid, else Zayatz.

**The histogram of a table** (:func:`class_histogram`): the classes are the groups of records
with equal values on every key column, a missing value being a category of its own (the
``na="category"`` reading of :func:`sdc_core.keys.encode_keys`; the wildcard reading of
:mod:`sdc_core.classes` makes overlapping classes, which have no class-size histogram).
:func:`histogram_of_classes` reads the same histogram off a risk profile's class sizes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import brentq, root
from scipy.special import digamma, gammaln, zeta

from sdc_core.classes import ClassSizes
from sdc_core.errors import SdcInputError
from sdc_core.keys import KeyCodes, combine_codes, encode_keys

MODELS = ("zayatz", "pitman", "snb")
#: Dankar's threshold on the sampling fraction between Pitman and the Zayatz/SNB pair.
DANKAR_FRACTION = 0.1


@dataclass(frozen=True)
class ClassHistogram:
    """``counts[i]`` classes of size ``sizes[i]`` (sizes increasing, distinct, counts > 0)."""

    sizes: np.ndarray
    counts: np.ndarray

    @property
    def n(self) -> int:
        """Records: Σ j·s_j."""
        return int(np.dot(self.sizes, self.counts))

    @property
    def u(self) -> int:
        """Classes: Σ s_j."""
        return int(self.counts.sum())

    @property
    def uniques(self) -> int:
        """Sample uniques s_1."""
        return int(self.counts[0]) if len(self.sizes) and self.sizes[0] == 1 else 0

    def to_json(self) -> dict[str, int]:
        return {str(int(j)): int(c) for j, c in zip(self.sizes, self.counts)}


def histogram(hist: ClassHistogram | Mapping[int, int]
              | tuple[Sequence[int], Sequence[int]]) -> ClassHistogram:
    """A :class:`ClassHistogram` from a mapping size → number of classes, or a pair of arrays
    (sizes, counts); sizes must be whole numbers ≥ 1, counts whole numbers ≥ 0 (zero counts
    are dropped, repeated sizes added), with at least one record."""
    if isinstance(hist, ClassHistogram):
        return hist
    sizes: Sequence[int]
    counts: Sequence[int]
    if isinstance(hist, Mapping):
        sizes, counts = list(hist.keys()), list(hist.values())
    else:
        try:
            sizes, counts = hist
        except (TypeError, ValueError):
            raise SdcInputError("the class-size histogram must be a mapping size → classes or "
                                "a pair (sizes, counts)") from None
    s = _whole_array("class sizes", sizes)
    c = _whole_array("class counts", counts)
    if s.shape != c.shape:
        raise SdcInputError(f"the histogram has {len(s)} sizes but {len(c)} counts")
    if (s < 1).any():
        raise SdcInputError("class sizes must be whole numbers ≥ 1")
    if (c < 0).any():
        raise SdcInputError("class counts must be whole numbers ≥ 0")
    keep = c > 0
    if not keep.any():
        raise SdcInputError("the class-size histogram holds no records")
    sizes_u, inverse = np.unique(s[keep], return_inverse=True)
    counts_u = np.bincount(inverse, weights=c[keep]).astype(np.int64)
    return ClassHistogram(sizes_u.astype(np.int64), counts_u)


def _whole_array(name: str, values: Sequence[int]) -> np.ndarray:
    try:
        a = np.asarray(values, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise SdcInputError(f"{name} must be whole numbers") from None
    if not np.isfinite(a).all() or (a != np.round(a)).any():
        raise SdcInputError(f"{name} must be whole numbers")
    return a.astype(np.int64)


def class_histogram(df: pd.DataFrame, keys: Sequence[str]) -> ClassHistogram:
    """The class-size histogram of ``df`` on the key columns (a missing value is a category of
    its own; see the module docstring). O(n): one bincount over the combined key codes and one
    over the class sizes."""
    if len(df) == 0:
        raise SdcInputError("the table has no rows")
    return histogram_of_codes(encode_keys(df, keys, na="category"))


def histogram_of_codes(codes: KeyCodes) -> ClassHistogram:
    """The class-size histogram of already encoded keys (``na="category"`` codes, as
    :func:`class_histogram` encodes them): one bincount over the combined key codes and one
    over the class sizes."""
    key, bound = combine_codes(codes.codes, codes.cards)
    per_class = np.bincount(key, minlength=bound)
    per_class = per_class[per_class > 0]
    by_size = np.bincount(per_class)
    sizes = np.flatnonzero(by_size)
    return ClassHistogram(sizes.astype(np.int64), by_size[sizes].astype(np.int64))


def histogram_of_classes(classes: ClassSizes) -> ClassHistogram:
    """The class-size histogram from already computed class sizes (a risk profile's
    ``classes``): its exact classes (same values and same missing positions) are the classes
    here, whatever its ``na`` reading, so this equals :func:`class_histogram` on the same keys.
    One bincount over the records and one over the classes."""
    per_class = np.bincount(classes.class_id, minlength=classes.n_labels)
    per_class = per_class[per_class > 0]
    if len(per_class) == 0:
        raise SdcInputError("the table has no rows")
    by_size = np.bincount(per_class)
    sizes = np.flatnonzero(by_size)
    return ClassHistogram(sizes.astype(np.int64), by_size[sizes].astype(np.int64))


def resolve_fraction(n: int, sampling_fraction: float | None = None,
                     population_size: float | None = None) -> tuple[float, float]:
    """(π, N) from exactly one of them: π in (0, 1], N ≥ n; the other is n/π or n/N."""
    if (sampling_fraction is None) == (population_size is None):
        raise SdcInputError("give either the sampling fraction or the population size, not "
                            "both or neither")
    if sampling_fraction is not None:
        try:
            f = float(sampling_fraction)
        except (TypeError, ValueError):
            raise SdcInputError(f"the sampling fraction must be a number in (0, 1], not "
                                f"{sampling_fraction!r}") from None
        if not (0.0 < f <= 1.0):
            raise SdcInputError(f"the sampling fraction must lie in (0, 1], not {f:g}")
        return f, n / f
    try:
        big_n = float(population_size)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise SdcInputError(f"the population size must be a number, not "
                            f"{population_size!r}") from None
    if not np.isfinite(big_n) or big_n < n:
        raise SdcInputError(f"the population size must be at least the sample size {n:,}, not "
                            f"{big_n:g}")
    return n / big_n, big_n


# --- Zayatz ------------------------------------------------------------------------------------

def log_p_single(sizes: np.ndarray, n: int, big_n: float) -> np.ndarray:
    """log P(f=1 | F=j) (hypergeometric, module docstring) for every size j, one N: a cumulative
    sum over i < max j of log((N−n−i+1)/(N−i)) = log1p(−(n−1)/(N−i)), −∞ once N−n−i+1 ≤ 0."""
    i = np.arange(1, int(sizes.max()), dtype=np.float64)
    x = (n - 1) / (big_n - i)
    with np.errstate(divide="ignore"):
        terms = np.where(x < 1.0, np.log1p(-np.minimum(x, 1.0)), -np.inf)
    cum = np.concatenate([[0.0], np.cumsum(terms)])
    return np.log(sizes) + np.log(n / big_n) + cum[sizes - 1]


def zayatz_share(hist: ClassHistogram, big_n: np.ndarray) -> np.ndarray:
    """Zayatz's share of population uniques S_1/N for each population size in ``big_n`` (a
    loop over the sizes N; each is O(largest class))."""
    s1 = hist.uniques
    big_n = np.atleast_1d(np.asarray(big_n, dtype=np.float64))
    out = np.zeros(len(big_n))
    if s1 == 0:
        return out
    for m, nn in enumerate(big_n):
        lp = log_p_single(hist.sizes, hist.n, float(nn))
        w = hist.counts * np.exp(lp - lp.max())
        out[m] = s1 * (w[0] / w.sum()) / hist.n
    return out


# --- Pitman ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PitmanFit:
    """The maximum-likelihood (θ, α) of Pitman's sampling formula, or why there is none."""

    theta: float | None
    alpha: float | None
    reason: str | None = None

    def parameters(self) -> dict[str, float]:
        """θ and α, or nothing without a fit (both are set or neither)."""
        if self.theta is None or self.alpha is None:
            return {}
        return {"theta": self.theta, "alpha": self.alpha}


#: Terms of the series used for Σ 1/(θ+iα), Σ i/(θ+iα) and their squared forms when
#: θ/α > _SERIES_RATIO·u.
_SERIES_TERMS = 18
_SERIES_RATIO = 20.0
_POWERS = np.arange(_SERIES_TERMS)
#: (m + 1), the series' weights for the squared forms: 1/(r+i)² = Σ_m (−1)^m (m+1) i^m/r^(m+2).
_SQUARED = np.arange(1, _SERIES_TERMS + 1, dtype=np.float64)


@dataclass(frozen=True)
class _PitmanData:
    """What the score needs: n, u, the sizes ≥ 2 with their counts, and the normalised power
    sums Q_m = Σ_{i=1}^{u−1} (i/(u−1))^m, m = 0…_SERIES_TERMS + 1."""

    n: int
    u: int
    sizes: np.ndarray
    counts: np.ndarray
    power_sums: np.ndarray

    @classmethod
    def of(cls, hist: ClassHistogram) -> _PitmanData:
        big = hist.sizes >= 2
        u = hist.u
        if u > 1:
            x = np.arange(1, u, dtype=np.float64) / (u - 1)
            q = np.empty(_SERIES_TERMS + 2)
            term = np.ones_like(x)
            for m in range(_SERIES_TERMS + 2):
                q[m] = term.sum()
                term *= x
        else:
            q = np.zeros(_SERIES_TERMS + 2)
        return cls(hist.n, u, hist.sizes[big].astype(np.float64),
                   hist.counts[big].astype(np.float64), q)


def _class_sums(d: _PitmanData, theta: float, alpha: float) -> tuple[float, float]:
    """(Σ_{i=1}^{u−1} 1/(θ+iα), Σ_{i=1}^{u−1} i/(θ+iα)) for α > 0, without cancellation: with
    r = θ/α, from digamma when r ≤ 20u, else from the series Σ_i 1/(r+i) = Σ_m (−1)^m
    Σ_i i^m / r^(m+1) (ratio (u−1)/r ≤ 1/20)."""
    u = d.u
    r = theta / alpha
    if r <= _SERIES_RATIO * u:
        s = (digamma(r + u) - digamma(r + 1.0)) / alpha
        return float(s), float(((u - 1) - theta * s) / alpha)
    x = (u - 1) / r
    signs = (-x) ** _POWERS
    s = float(np.dot(signs, d.power_sums[:_SERIES_TERMS])) / r / alpha
    t = float(np.dot(signs, d.power_sums[1:_SERIES_TERMS + 1])) * x / alpha
    return s, t


def _theta_curvature(d: _PitmanData, theta: float, alpha: float) -> tuple[float, float]:
    """(∂²ℓ/∂θ², A₂) at (θ, α), α > 0: ∂²ℓ/∂θ² = Σ_{i=1}^{n−1} 1/(θ+i)² − A₂ with A₂ =
    Σ_{i=1}^{u−1} 1/(θ+iα)². With the trigamma ψ′(x) = ζ(2, x) and r = θ/α, the first sum is
    ψ′(θ+1) − ψ′(θ+n) and A₂ = [ψ′(r+1) − ψ′(r+u)]/α² when r ≤ 20u, else the series
    Σ_m (−1)^m (m+1) Σ_i i^m/r^(m+2) (over α²). One call of ζ for all the trigammas."""
    r = theta / alpha
    if r <= _SERIES_RATIO * d.u:
        p = zeta(2.0, np.array([theta + 1.0, theta + d.n, r + 1.0, r + d.u]))
        a2 = float(p[2] - p[3]) / alpha ** 2
    else:
        p = zeta(2.0, np.array([theta + 1.0, theta + d.n]))
        x = (d.u - 1) / r
        a2 = float(np.dot(_SQUARED * (-x) ** _POWERS, d.power_sums[:_SERIES_TERMS])) / (
            r * alpha) ** 2
    return float(p[0] - p[1]) - a2, a2


def _moment_square_sums(d: _PitmanData, theta: float, alpha: float, s: float, t: float,
                        a2: float) -> tuple[float, float]:
    """(B₂, C₂) = (Σ_{i=1}^{u−1} i/(θ+iα)², Σ_{i=1}^{u−1} i²/(θ+iα)²) from s = Σ 1/(θ+iα),
    t = Σ i/(θ+iα) and A₂ (α > 0). As i/(θ+iα)² = [1/(θ+iα) − θ/(θ+iα)²]/α, B₂ = (s − θA₂)/α
    and C₂ = (t − θB₂)/α; these cancel when r = θ/α is large, so for r > 20u the series
    Σ_i i^k/(r+i)² = Σ_m (−1)^m (m+1) Σ_i i^(m+k)/r^(m+2), k = 1, 2 (over α²), is used."""
    r = theta / alpha
    if r <= _SERIES_RATIO * d.u:
        b2 = (s - theta * a2) / alpha
        return b2, (t - theta * b2) / alpha
    x = (d.u - 1) / r
    w = _SQUARED * (-x) ** _POWERS
    b2 = float(np.dot(w, d.power_sums[1:_SERIES_TERMS + 1])) * x / r / alpha ** 2
    c2 = float(np.dot(w, d.power_sums[2:_SERIES_TERMS + 2])) * (x / alpha) ** 2
    return b2, c2


def _record_sums(d: _PitmanData, theta: float) -> float:
    """Σ_{i=1}^{n−1} 1/(θ+i) = ψ(θ+n) − ψ(θ+1)."""
    return float(digamma(theta + d.n) - digamma(theta + 1.0))


def _alpha_sums(d: _PitmanData, alpha: float) -> float:
    """Σ_{j≥2} s_j Σ_{k=1}^{j−1} 1/(k−α) = Σ_j s_j [ψ(j−α) − ψ(1−α)]."""
    return float(np.dot(d.counts, digamma(d.sizes - alpha) - digamma(1.0 - alpha)))


def _newton(f: Callable[[float], tuple[float, float]], x: float, lo: float, hi: float,
            xtol: float, rtol: float, first: tuple[float, float] | None = None,
            pole: float | None = None, maxiter: int = 500) -> float:
    """The root in (lo, hi) of a function that is positive left of it and negative right of it
    (``hi`` may be ∞), by Newton's method from ``x`` kept inside a bracket (Numerical Recipes'
    "rtsafe"). ``f(x)`` returns (f, f′) (``first``: that at the start).

    Every value narrows the bracket [lo, hi] to the last points of each sign; a step that would
    leave it, or follow one that did not halve |f|, is a bisection instead: with hi = ∞,
    x ← 4·max(x, 1); with a ``pole`` of f below lo, geometric in the distance to it while the
    bracket spans more than a factor 16 in that distance (so a root 10⁻⁶ from the pole takes a
    few steps, not twenty). Stops when a step is at most xtol + rtol·|x| (and takes it): after
    a Newton step the error is then of the order of its square, after a bisection at most the
    step. Stops too at the rounding noise of f: when a Newton step shorter than 10⁻⁶ of the
    distance to the bracket's first ends did not halve |f| (the true f would have dropped by
    far more), returning the better of the two points."""
    ends = (lo, hi)
    fx, dfx = f(x) if first is None else first
    slow = False
    for _ in range(maxiter):
        if fx == 0.0:
            return x
        if fx > 0.0:
            lo = x
        else:
            hi = x
        new = x - fx / dfx if dfx < 0.0 else np.nan
        bisect = slow or not lo < new < hi
        if bisect and hi == np.inf:
            new = 4.0 * max(x, 1.0)
            if new > 1e300:
                raise ArithmeticError("no root: the function stays positive")
        elif bisect and pole is not None and hi - pole > 16.0 * (lo - pole):
            new = pole + math.sqrt((lo - pole) * (hi - pole))
        elif bisect:
            new = 0.5 * (lo + hi)
        if abs(new - x) <= xtol + rtol * abs(x):
            return new
        f_new, df_new = f(new)
        slow = abs(f_new) > 0.5 * abs(fx)
        if slow and not bisect and abs(new - x) <= 1e-6 * min(new - ends[0], ends[1] - new):
            return new if abs(f_new) < abs(fx) else x
        x, fx, dfx = new, f_new, df_new
    raise RuntimeError(f"Newton's method did not converge in {maxiter} iterations")


def _ewens_theta(d: _PitmanData) -> float:
    """The Ewens root θ₀ (α = 0, where Σ 1/(θ+iα) = (u−1)/θ) of ∂ℓ/∂θ in (0, ∞); it exists when
    2 ≤ u < n."""
    def g(t: float) -> float:
        return (d.u - 1) / t - (digamma(t + d.n) - digamma(t + 1.0))
    hi = max(1.0, float(d.u))
    while g(hi) > 0:
        hi *= 4.0
        if hi > 1e300:
            raise ArithmeticError("∂ℓ/∂θ has no root")
    return brentq(g, 1e-300, hi, xtol=1e-13, rtol=1e-15, maxiter=500)


def _theta_of_alpha(d: _PitmanData, alpha: float, start: float) -> float:
    """The root θ(α) of ∂ℓ/∂θ in (−α, ∞) (it exists when 2 ≤ u < n), by :func:`_newton` from
    ``start`` with the slope ∂²ℓ/∂θ² (:func:`_theta_curvature`). ∂ℓ/∂θ is the first of Pitman's
    score equations (module docstring); ∂ℓ/∂α is not needed here."""
    def g(t: float) -> tuple[float, float]:
        return _class_sums(d, t, alpha)[0] - _record_sums(d, t), _theta_curvature(d, t, alpha)[0]

    lo = -alpha * (1.0 - 1e-15)
    return _newton(g, start if start > lo else 0.5 * lo, lo, np.inf, 1e-13, 1e-15,
                   pole=-alpha)


class _Profile:
    """∂ℓ/∂α along the profile θ(α), with its derivative (for :func:`_newton`)::

        d/dα ∂ℓ/∂α(θ(α), α) = ℓ_αα − ℓ_θα² / ℓ_θθ,        θ′(α) = −ℓ_θα / ℓ_θθ

    with ℓ_θθ = Σ_{i<n} 1/(θ+i)² − A₂, ℓ_θα = −B₂ and ℓ_αα = −C₂ − Σ_{j≥2} s_j Σ_{k=1}^{j−1}
    1/(k−α)², the last ψ′(1−α) − ψ′(j−α) (A₂, B₂, C₂: :func:`_theta_curvature`,
    :func:`_moment_square_sums`). Each θ(α) starts from the last one moved along θ′."""

    def __init__(self, d: _PitmanData, theta: float) -> None:
        self.d, self.alpha, self.theta, self.slope = d, 0.0, theta, 0.0

    def __call__(self, alpha: float) -> tuple[float, float]:
        d = self.d
        start = self.theta + self.slope * (alpha - self.alpha)
        theta = _theta_of_alpha(d, alpha, start)
        s, t = _class_sums(d, theta, alpha)
        l_tt, a2 = _theta_curvature(d, theta, alpha)
        b2, c2 = _moment_square_sums(d, theta, alpha, s, t, a2)
        l_aa = -c2 - float(np.dot(d.counts, zeta(2.0, 1.0 - alpha) - zeta(2.0, d.sizes - alpha)))
        self.alpha, self.theta, self.slope = alpha, theta, b2 / l_tt
        return t - _alpha_sums(d, alpha), l_aa - b2 * b2 / l_tt


def fit_pitman(hist: ClassHistogram | Mapping[int, int]
               | tuple[Sequence[int], Sequence[int]]) -> PitmanFit:
    """Maximum likelihood of Pitman's sampling formula from the histogram (module docstring).

    ∂ℓ/∂α at α → 0 is the Ewens value Σ_{i<u} i/θ₀ − Σ_j s_j (ψ(j) − ψ(1)) (θ₀ the Ewens
    root); at α → 1 it tends to −∞. The fit is valid when the former is positive, so that
    ∂ℓ/∂α changes sign inside (0, 1) (checked at α = 10⁻¹² and 1 − 10⁻¹²).

    The root in α is found by Newton's method on the profile score (:class:`_Profile`), kept
    inside that bracket, to |Δα| ≤ 10⁻¹⁵(1 + α); each θ(α) by Newton's method too, warm-started,
    to |Δθ| ≤ 10⁻¹³ + 10⁻¹⁵|θ| (about 25 evaluations of the score in all, against some 400 for
    nested bisection-type solvers)."""
    hist = histogram(hist)
    if hist.u < 2:
        return PitmanFit(None, None, "Pitman needs at least two classes")
    if hist.u == hist.n:
        return PitmanFit(None, None, "every class is unique: the likelihood grows without "
                                     "bound in θ")
    d = _PitmanData.of(hist)
    theta0 = _ewens_theta(d)
    g_lo = (d.u * (d.u - 1) / 2.0) / theta0 - float(np.dot(d.counts, digamma(d.sizes)
                                                          - digamma(1.0)))
    outside = PitmanFit(None, None, "the maximum-likelihood α is not inside (0, 1)")
    if not g_lo > 0:
        return outside
    profile = _Profile(d, theta0)
    lo, hi = 1e-12, 1.0 - 1e-12
    at_lo = profile(lo)
    if not at_lo[0] > 0:
        return outside
    from_lo = (profile.alpha, profile.theta, profile.slope)
    if not profile(hi)[0] < 0:
        return outside
    profile.alpha, profile.theta, profile.slope = from_lo
    alpha = _newton(profile, lo, lo, hi, 1e-15, 1e-15, first=at_lo)
    return PitmanFit(_theta_of_alpha(d, alpha, profile.theta + profile.slope
                                     * (alpha - profile.alpha)), alpha)


def pitman_count(fit: PitmanFit, big_n: np.ndarray) -> np.ndarray:
    """Hoshino's S_1 = Γ(θ+1)/Γ(θ+α) · N^α for each N (NaN without a fit)."""
    big_n = np.atleast_1d(np.asarray(big_n, dtype=np.float64))
    if fit.theta is None or fit.alpha is None:
        return np.full(len(big_n), np.nan)
    t, a = fit.theta, fit.alpha
    return np.exp(gammaln(t + 1.0) - gammaln(t + a) + a * np.log(big_n))


# --- SNB ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SnbFit:
    """SNB parameters at one sampling fraction: k, p and K (population classes), or why not."""

    k: float | None
    p: float | None
    classes: float | None
    reason: str | None = None

    def parameters(self) -> dict[str, float]:
        """k, p and the classes K, or nothing without a fit (all are set or none)."""
        if self.k is None or self.p is None or self.classes is None:
            return {}
        return {"k": self.k, "p": self.p, "classes": self.classes}


def _snb_terms(k: np.ndarray | float, p: np.ndarray | float, f: float
               ) -> tuple[Any, Any, Any]:
    """P(f=0), P(f=1) and E[f] of the thinned SNB (module docstring): arrays for arrays of
    k and p, numbers for numbers."""
    q = 1.0 - p
    pp = p / (p + f * q)
    qq = f * q / (p + f * q)
    a = np.exp(k * np.log(pp))
    p0 = (1.0 - f) * a
    p1 = a * (f + (1.0 - f) * k * qq)
    ef = f * (1.0 + k * q / p)
    return p0, p1, ef


def _snb_equations(x: np.ndarray, f: float, r1: float, rbar: float) -> np.ndarray:
    k = np.exp(x[0])
    p = 1.0 / (1.0 + np.exp(-x[1]))
    p0, p1, ef = _snb_terms(k, p, f)
    rest = 1.0 - p0
    return np.array([p1 / rest / r1 - 1.0, ef / rest / rbar - 1.0])


#: Starting grid of (log k, logit p) for the SNB moment equations.
_GRID_X, _GRID_Y = np.meshgrid(np.linspace(-12.0, 8.0, 41), np.linspace(-12.0, 12.0, 49))


def fit_snb(hist: ClassHistogram, f: float) -> SnbFit:
    """Method-of-moments SNB at sampling fraction ``f`` (module docstring)."""
    hist = histogram(hist)
    s1, u, n = hist.uniques, hist.u, hist.n
    if s1 == 0:
        return SnbFit(None, None, None, "no sample uniques: SNB's moment equations have no "
                                        "solution")
    if hist.u == hist.n:
        return SnbFit(None, None, None, "every class is unique: SNB's moment equations have no "
                                        "solution")
    r1, rbar = s1 / u, n / u
    with np.errstate(all="ignore"):
        k, p = np.exp(_GRID_X), 1.0 / (1.0 + np.exp(-_GRID_Y))
        p0, p1, ef = _snb_terms(k, p, f)
        resid = np.hypot(p1 / (1.0 - p0) / r1 - 1.0, ef / (1.0 - p0) / rbar - 1.0)
        resid[~np.isfinite(resid)] = np.inf
        order = np.argsort(resid, axis=None)[:4]
        for idx in order:
            x0 = np.array([_GRID_X.flat[idx], _GRID_Y.flat[idx]])
            sol = root(_snb_equations, x0, args=(f, r1, rbar), method="hybr",
                       options={"xtol": 1e-14})
            if np.all(np.isfinite(sol.fun)) and np.max(np.abs(sol.fun)) < 1e-9:
                k1 = float(np.exp(sol.x[0]))
                p_1 = float(1.0 / (1.0 + np.exp(-sol.x[1])))
                if 0.0 < p_1 < 1.0 and k1 > 0.0 and np.isfinite(k1):
                    big_k = u / (1.0 - float(_snb_terms(k1, p_1, f)[0]))
                    return SnbFit(k1, p_1, big_k)
    return SnbFit(None, None, None, "SNB's moment equations have no solution with k > 0 and "
                                    "0 < p < 1")


def snb_count(fit: SnbFit) -> float:
    """S_1 = K · p^k (NaN without a fit)."""
    if fit.k is None or fit.p is None or fit.classes is None:
        return float("nan")
    return float(fit.classes * np.exp(fit.k * np.log(fit.p)))


# --- results -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class ModelEstimate:
    """One model's population uniques: ``count`` = S_1, ``share`` = S_1/N; both ``None`` when
    the model is invalid or undefined, with the ``reason``."""

    share: float | None
    count: float | None
    reason: str | None = None
    parameters: dict[str, float] = field(default_factory=dict)


def _estimate(count: float, big_n: float, invalid: str | None,
              parameters: dict[str, float] | None = None) -> ModelEstimate:
    if invalid is not None:
        return ModelEstimate(None, None, invalid, parameters or {})
    if not np.isfinite(count) or count < 0 or count > big_n * (1 + 1e-12):
        return ModelEstimate(None, None, f"the estimate {count:g} lies outside [0, N]",
                             parameters or {})
    return ModelEstimate(float(count / big_n), float(count), None, parameters or {})


@dataclass(frozen=True)
class PopulationUniqueness:
    """Population uniqueness of one sample under each model (module docstring)."""

    sampling_fraction: float
    population_size: float
    sample_size: int
    classes: int
    sample_uniques: int
    sample_uniqueness: float
    zayatz: ModelEstimate
    pitman: ModelEstimate
    snb: ModelEstimate
    dankar: ModelEstimate
    dankar_model: str | None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "sampling_fraction": self.sampling_fraction,
            "population_size": self.population_size,
            "sample_size": self.sample_size,
            "classes": self.classes,
            "sample_uniques": self.sample_uniques,
            "sample_uniqueness": self.sample_uniqueness,
        }
        reasons: dict[str, str] = {}
        for name in (*MODELS, "dankar"):
            est: ModelEstimate = getattr(self, name)
            out[name] = est.share
            out[f"{name}_count"] = est.count
            if est.reason is not None:
                reasons[name] = est.reason
        out["dankar_model"] = self.dankar_model
        out["reasons"] = reasons
        out["pitman_parameters"] = dict(self.pitman.parameters)
        out["snb_parameters"] = dict(self.snb.parameters)
        return out


def dankar_choice(f: float, s1: int, zayatz: ModelEstimate, pitman: ModelEstimate,
                  snb: ModelEstimate) -> tuple[ModelEstimate, str | None]:
    """Dankar's decision rule (module docstring): the estimate and the model's name."""
    if s1 == 0:
        return ModelEstimate(0.0, 0.0, None), None
    if f <= DANKAR_FRACTION:
        if pitman.share is not None:
            return pitman, "pitman"
        return zayatz, "zayatz"
    if snb.share is not None and zayatz.share is not None and snb.share < zayatz.share:
        return snb, "snb"
    return zayatz, "zayatz"


def population_uniqueness(hist: ClassHistogram | Mapping[int, int]
                          | tuple[Sequence[int], Sequence[int]],
                          sampling_fraction: float | None = None,
                          population_size: float | None = None,
                          pitman: PitmanFit | None = None) -> PopulationUniqueness:
    """Every model's population uniqueness from the class-size histogram and either the
    sampling fraction or the population size (``pitman``: a fit to reuse, from
    :func:`fit_pitman` on the same histogram)."""
    h = histogram(hist)
    f, big_n = resolve_fraction(h.n, sampling_fraction, population_size)
    s1 = h.uniques
    z = float(zayatz_share(h, np.array([big_n]))[0])
    zay = ModelEstimate(z, z * big_n, None)
    fit = pitman if pitman is not None else fit_pitman(h)
    pit = _estimate(float(pitman_count(fit, np.array([big_n]))[0]), big_n, fit.reason,
                    fit.parameters())
    sfit = fit_snb(h, f)
    snb = _estimate(snb_count(sfit), big_n, sfit.reason, sfit.parameters())
    dankar, model = dankar_choice(f, s1, zay, pit, snb)
    return PopulationUniqueness(f, big_n, h.n, h.u, s1, s1 / h.n, zay, pit, snb, dankar, model)


def dankar_estimate(hist: ClassHistogram | Mapping[int, int]
                    | tuple[Sequence[int], Sequence[int]],
                    sampling_fraction: float | None = None,
                    population_size: float | None = None) -> tuple[ModelEstimate, str | None]:
    """Dankar's estimate and the model's name, as :func:`population_uniqueness` gives them
    (``.dankar``, ``.dankar_model``), fitting only the models the rule reads: none without
    sample uniques; at π ≤ 0.1 Pitman, and Zayatz only when Pitman is invalid; above, Zayatz
    and SNB (a sweep reads only this figure, once per setting)."""
    h = histogram(hist)
    f, big_n = resolve_fraction(h.n, sampling_fraction, population_size)
    s1 = h.uniques
    if s1 == 0:
        return dankar_choice(f, s1, *(ModelEstimate(None, None),) * 3)
    unused = ModelEstimate(None, None, "not needed by Dankar's rule")
    pit = snb = unused
    if f <= DANKAR_FRACTION:
        fit = fit_pitman(h)
        pit = _estimate(float(pitman_count(fit, np.array([big_n]))[0]), big_n, fit.reason,
                        fit.parameters())
        if pit.share is not None:
            return dankar_choice(f, s1, unused, pit, snb)
    z = float(zayatz_share(h, np.array([big_n]))[0])
    zay = ModelEstimate(z, z * big_n, None)
    if f > DANKAR_FRACTION:
        sfit = fit_snb(h, f)
        snb = _estimate(snb_count(sfit), big_n, sfit.reason, sfit.parameters())
    return dankar_choice(f, s1, zay, pit, snb)


@dataclass(frozen=True)
class UniquenessCurve:
    """Each model's share of population uniques against the sampling fraction (NaN where the
    model is invalid); ``dankar_model`` names Dankar's pick at each fraction."""

    fractions: np.ndarray
    zayatz: np.ndarray
    pitman: np.ndarray
    snb: np.ndarray
    dankar: np.ndarray
    dankar_model: tuple[str | None, ...]
    sample_uniqueness: float

    def to_json(self) -> dict[str, Any]:
        def listed(a: np.ndarray) -> list[float | None]:
            return [None if not np.isfinite(v) else float(v) for v in a]
        return {"sampling_fraction": [float(v) for v in self.fractions],
                "zayatz": listed(self.zayatz), "pitman": listed(self.pitman),
                "snb": listed(self.snb), "dankar": listed(self.dankar),
                "dankar_model": list(self.dankar_model),
                "sample_uniqueness": self.sample_uniqueness}


def uniqueness_curve(hist: ClassHistogram | Mapping[int, int]
                     | tuple[Sequence[int], Sequence[int]],
                     fractions: Sequence[float] | np.ndarray | None = None,
                     points: int = 40) -> UniquenessCurve:
    """Every model against the sampling fraction, by default ``points`` log-spaced fractions
    from 0.001 to 1. Pitman is fitted once (its fit does not depend on the fraction); Zayatz is
    computed for all fractions at once; SNB is solved per fraction."""
    h = histogram(hist)
    if fractions is None:
        if points < 2:
            raise SdcInputError(f"the curve needs at least 2 points, not {points}")
        fr = np.logspace(-3.0, 0.0, points)
        fr[-1] = 1.0
    else:
        fr = np.asarray(fractions, dtype=np.float64).ravel()
        if len(fr) == 0:
            raise SdcInputError("the curve needs at least one sampling fraction")
        bad = ~((fr > 0) & (fr <= 1))
        if bad.any():
            raise SdcInputError(f"sampling fractions must lie in (0, 1], not {fr[bad][0]:g}")
    big_n = h.n / fr
    s1 = h.uniques
    zay = zayatz_share(h, big_n)
    fit = fit_pitman(h)
    pit_count = pitman_count(fit, big_n)
    pit = np.where((pit_count >= 0) & (pit_count <= big_n * (1 + 1e-12)), pit_count / big_n,
                   np.nan)
    snb = np.array([snb_count(fit_snb(h, float(f))) for f in fr]) / big_n
    snb = np.where((snb >= 0) & (snb <= 1 + 1e-12), snb, np.nan)
    dankar = np.empty(len(fr))
    models: list[str | None] = []
    for i, f in enumerate(fr):
        est, model = dankar_choice(
            float(f), s1, ModelEstimate(float(zay[i]), None),
            ModelEstimate(None if np.isnan(pit[i]) else float(pit[i]), None),
            ModelEstimate(None if np.isnan(snb[i]) else float(snb[i]), None))
        dankar[i] = est.share if est.share is not None else np.nan
        models.append(model)
    return UniquenessCurve(fr, zay, pit, snb, dankar, tuple(models), s1 / h.n)
