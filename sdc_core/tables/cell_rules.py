"""Primary suppression rules for cross tables (docs/tables.md, "Primary rules").

Each rule marks the sensitive (primary) cells of a :class:`~sdc_core.tables.crosstab.CrossTable` —
cells and margins alike — and says how much protection each needs: the audit
(sdc_core/tables/suppression_audit.py) requires the feasible interval [lo, hi] of a primary cell of
value x to reach lo ≤ x − lower and hi ≥ x + upper.

- threshold (counts): primary when 0 < m < t, m the cell's contributors (its records, or with a
  household id its distinct persons); in a count table of n records the interval must reach 0
  and t (lower = n, upper = max(t − n, 0)); in a magnitude table lower = upper = pct/100 · x.
- dominance (n, k): primary when x₁ + … + x_n > k/100 · x; protection up to the total at which
  the n largest would make exactly k %: upper = 100/k · (x₁ + … + x_n) − x, lower = min(x, upper).
- p %: primary when x − x₁ − x₂ < p/100 · x₁; lower = min(x, p/100 · x₁), upper = p/100 · x₁.

**Interval protection** (:func:`interval_protection`, where the steward asks for it) raises a
primary cell's protection to at least q % of its value on each side: lower = max(lower,
min(x, q/100 · x)), upper = max(upper, q/100 · x) — the feasible interval must reach
[x (1 − q/100), x (1 + q/100)], and secondary suppression adds cells until it does.

With a household id the contributions x₁ ≥ x₂ ≥ … are per-person sums
(:func:`sdc_core.tables.crosstab.crosstab`'s ``unit``; docs/tables.md, "The unit of protection").

A table's rule travels as a :class:`Rule` (its name and numbers, checked when it is made); its
text, ``threshold:5``, ``dominance:2,85``, ``p:10``, is what reports and JSON print and what
the command line's ``--rule`` reads (:meth:`Rule.parse`).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from sdc_core.checks import shown
from sdc_core.errors import SdcInputError
from sdc_core.tables.crosstab import CrossTable

#: Seed 004's option threshold (sdc_core/tables/responses.py, ``response_table``'s ``t``)
DEFAULT_THRESHOLD = 5

#: The numbers the rules take (docs/tables.md, "Primary rules"), as the Tables page's fields
#: do: the threshold t and the dominance rule's n whole numbers, its k, the p of the p % rule
#: and a magnitude table's threshold protection pct percentages. Within them no protection
#: (100/k · x, p/100 · x₁) leaves the numbers a sum column may reach (crosstab's MAX_TOTAL).
T_RANGE = (1, 1000)
N_RANGE = (1, 10)
K_RANGE = (1.0, 100.0)
P_RANGE = (0.1, 100.0)


def check_parameter(name: str, value: object, bounds: tuple[float, float],
                    whole: bool = False) -> float:
    """``value``, a number within ``bounds`` (a whole one with ``whole``), or an
    :class:`SdcInputError` of one line naming ``name``: text, True/False, infinity and NaN
    are refused like a number out of range."""
    low, high = bounds
    what = f"a whole number from {low:,} to {high:,}" if whole else \
        f"a number from {low:g} to {high:g}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise SdcInputError(f"{name} must be {what}, not {shown(value)}")
    try:
        v = float(value)
    except OverflowError:  # a whole number past float's range
        raise SdcInputError(f"{name} must be {what}, not {shown(value)}") from None
    if not low <= v <= high or (whole and not v.is_integer()):  # NaN is never within
        raise SdcInputError(f"{name} must be {what}, not {v:g}")
    return v


#: The primary rules and how many parameters each takes
RULES = {"threshold": 1, "dominance": 2, "p": 1}
#: Each rule's text with its default numbers (the message of a rule given too few or too many)
_EXAMPLES = {"threshold": "threshold:5", "dominance": "dominance:2,85", "p": "p:10"}


def _number_text(v: float) -> str:
    """``v`` in at most six significant digits when that is exact (5, 85, 12.5), else in full."""
    short = f"{v:g}"
    return short if float(short) == v else repr(v)


@dataclass(frozen=True)
class Rule:
    """A table's primary rule (docs/tables.md, "Primary rules"), checked on construction:
    each number within its range (:func:`check_parameter`), else an :class:`SdcInputError` of
    one line naming it. Kept as floats, so a rule made from ``(5,)`` or read from
    ``"threshold:5"`` is one value.

    Parameters
    ----------
    name : {"threshold", "dominance", "p"}
        The rule (:data:`RULES`): threshold t (0 < m < t contributors), dominance (n, k)
        (x₁ + … + x_n > k/100 · x) or p % (x − x₁ − x₂ < p/100 · x₁).
    parameters : tuple of float
        (t,), (n, k) or (p,), within :data:`T_RANGE`, :data:`N_RANGE`, :data:`K_RANGE`,
        :data:`P_RANGE`.

    Raises
    ------
    SdcInputError
        An unknown rule, too few or too many numbers, a number out of its range.

    Examples
    --------
    >>> Rule("dominance", (2, 85)).text
    'dominance:2,85'
    >>> Rule.parse("p:12.5") == Rule("p", (12.5,))
    True
    >>> Rule("threshold", (0,))
    Traceback (most recent call last):
    ...
    sdc_core.errors.SdcInputError: t must be a whole number from 1 to 1,000, not 0
    """

    name: str
    parameters: tuple[float, ...]
    #: What each rule's numbers are called, their ranges and whether each is a whole number
    CHECKS: ClassVar[dict[str, tuple[tuple[str, tuple[float, float], bool], ...]]] = {
        "threshold": (("t", T_RANGE, True),),
        "dominance": (("n", N_RANGE, True), ("k", K_RANGE, False)),
        "p": (("p", P_RANGE, False),)}

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or self.name not in RULES:
            raise SdcInputError("rule must be threshold:T, dominance:N,K or p:P, not "
                                f"{shown(self.name)}")
        if not isinstance(self.parameters, tuple | list) \
                or len(self.parameters) != RULES[self.name]:
            raise SdcInputError(f"rule {self.name} takes {RULES[self.name]} number(s): "
                                + _EXAMPLES[self.name])
        checked = tuple(check_parameter(what, value, bounds, whole)
                        for value, (what, bounds, whole)
                        in zip(self.parameters, self.CHECKS[self.name]))
        object.__setattr__(self, "parameters", checked)  # as floats: one rule, one value

    @classmethod
    def parse(cls, text: str) -> Rule:
        """The rule a text names (the command line's ``--rule``): ``threshold:5`` →
        ``Rule("threshold", (5.0,))``; ``dominance:2,85``; ``p:10``."""
        name, _, params = str(text).partition(":")
        if name not in RULES:
            raise SdcInputError("rule must be threshold:T, dominance:N,K or p:P, not "
                                f"{shown(text)}")
        try:
            values = tuple(float(v) for v in params.split(",")) if params else ()
        except ValueError:
            raise SdcInputError(f"rule {shown(text)}: its parameters must be numbers") from None
        return cls(name, values)

    @property
    def text(self) -> str:
        """``name:numbers``, as reports, JSON and ``--rule`` write it: ``threshold:5``,
        ``dominance:2,85``, ``p:12.5`` (each number as short as it is exact)."""
        return f"{self.name}:" + ",".join(_number_text(v) for v in self.parameters)

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class RuleResult:
    """The primary cells of a rule and the protection each needs (module docstring).

    Parameters
    ----------
    rule : str
        The rule and its parameters, e.g. ``"threshold:5"``.
    primary : numpy.ndarray
        True for a sensitive cell, one per row of the table's frame.
    lower, upper : numpy.ndarray
        The required lower and upper protection (0 where not primary), in the table's values.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.tables.crosstab import crosstab
    >>> from sdc_core.tables.cell_rules import threshold_rule
    >>> r = threshold_rule(crosstab(pd.DataFrame({"a": ["x"] * 3 + ["y"] * 9}), ["a"]), t=5)
    >>> r.primary.tolist(), r.lower.tolist(), r.upper.tolist()
    ([True, False, False], [3.0, 0.0, 0.0], [2.0, 0.0, 0.0])
    """

    rule: str
    primary: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    def __or__(self, other: RuleResult) -> RuleResult:
        """Both rules: primary under either, the larger protection of the two."""
        return RuleResult(f"{self.rule}+{other.rule}", self.primary | other.primary,
                          np.maximum(self.lower, other.lower),
                          np.maximum(self.upper, other.upper))


#: Interval protection's q, in % of a primary cell's value
Q_RANGE = (0.1, 100.0)


def interval_protection(rules: RuleResult, table: CrossTable, q: float) -> RuleResult:
    """``rules`` with every primary cell's protection at least q % of its value x on each
    side (module docstring): lower = max(lower, min(x, q/100 · x)), upper = max(upper,
    q/100 · x).

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.tables.crosstab import crosstab
    >>> t = crosstab(pd.DataFrame({"a": ["x"] * 3 + ["y"] * 9}), ["a"])
    >>> r = interval_protection(threshold_rule(t, 5), t, 100)
    >>> r.rule, r.lower.tolist(), r.upper.tolist()
    ('threshold:5+interval:100', [3.0, 0.0, 0.0], [3.0, 0.0, 0.0])
    """
    q = check_parameter("interval protection", q, Q_RANGE)
    x = table.values
    want = q / 100.0 * x
    return RuleResult(f"{rules.rule}+interval:{_number_text(q)}", rules.primary,
                      np.where(rules.primary, np.maximum(rules.lower, np.minimum(x, want)), 0.0),
                      np.where(rules.primary, np.maximum(rules.upper, want), 0.0))


def _result(rule: str, primary: np.ndarray, lower: np.ndarray,
            upper: np.ndarray) -> RuleResult:
    return RuleResult(rule, primary, np.where(primary, lower, 0.0),
                      np.where(primary, upper, 0.0))


def threshold_rule(table: CrossTable, t: int = DEFAULT_THRESHOLD,
                   pct: float = 10.0) -> RuleResult:
    """The threshold rule: a cell with 0 < m < t contributors is primary, m its records, or
    with a household id (the table's ``unit``) its distinct persons.

    Count table of n records: lower = n, upper = max(t − n, 0) (the interval must reach 0 and
    t; a reader who knows a cell's records knows its persons lie in [1, n] when n > 0, so the
    records' interval reaching 0 and t is what lets the persons be 0 or t). Magnitude table:
    lower = upper = pct/100 · x, x the cell's sum.

    Parameters
    ----------
    table : CrossTable
        The table (:func:`~sdc_core.tables.crosstab.crosstab`).
    t : int, default 5
        The threshold (seed 004's option threshold), a whole number in :data:`T_RANGE`.
    pct : float, default 10
        A magnitude table's protection, in % of the cell's sum (:data:`P_RANGE`).

    Returns
    -------
    RuleResult
        The primary mask and the protection.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.tables.crosstab import crosstab
    >>> from sdc_core.tables.cell_rules import threshold_rule
    >>> t = crosstab(pd.DataFrame({"a": ["x"] * 2 + ["y"] * 7}), ["a"])
    >>> threshold_rule(t, t=3).primary.tolist()
    [True, False, False]
    """
    t = int(check_parameter("t", t, T_RANGE, whole=True))
    m = table.contributors
    primary = (m > 0) & (m < t)
    if table.sum_column is None:
        n = table.frame["count"].to_numpy(dtype=np.float64)
        return _result(f"threshold:{t}", primary, n, np.maximum(t - n, 0.0))
    share = check_parameter("pct", pct, P_RANGE) / 100.0
    x = table.values
    return _result(f"threshold:{t}", primary, share * x, share * x)


def _tops(table: CrossTable, n: int) -> np.ndarray:
    """The n largest contributions per cell (cells × n)."""
    if table.sum_column is None:
        raise SdcInputError("the dominance and p % rules take a magnitude table (a sum column)")
    have = [c for c in table.frame.columns if c.startswith("x") and c[1:].isdigit()]
    if len(have) < n:
        raise SdcInputError(f"the rule needs the {n} largest contributions per cell; the table "
                            f"keeps {len(have)} (crosstab's top)")
    return table.frame[[f"x{j + 1}" for j in range(n)]].to_numpy(dtype=np.float64)


def dominance_rule(table: CrossTable, n: int = 2, k: float = 85.0) -> RuleResult:
    """The dominance (n, k) rule: a cell is primary when its n largest contributions exceed k %
    of its total, x₁ + … + x_n > k/100 · x.

    Protection: upper = 100/k · (x₁ + … + x_n) − x (how far the total must be able to rise for
    the n largest to make no more than k %), lower = min(x, upper).

    Parameters
    ----------
    table : CrossTable
        A magnitude table keeping at least ``n`` contributions (``crosstab(..., top=n)``).
    n : int, default 2
        How many largest contributors, a whole number in :data:`N_RANGE`.
    k : float, default 85
        The share in % (1 ≤ k ≤ 100, :data:`K_RANGE`).

    Returns
    -------
    RuleResult
        The primary mask and the protection.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.tables.crosstab import crosstab
    >>> from sdc_core.tables.cell_rules import dominance_rule
    >>> df = pd.DataFrame({"a": ["x", "x", "x", "y", "y"], "y": [90, 5, 5, 50, 50]})
    >>> dominance_rule(crosstab(df, ["a"], "y", top=1), n=1, k=80).primary.tolist()
    [True, False, False]
    """
    n = int(check_parameter("n", n, N_RANGE, whole=True))
    k = check_parameter("k", k, K_RANGE)
    top_sum = _tops(table, n).sum(axis=1)
    x = table.values
    primary = (x > 0) & (top_sum > k / 100.0 * x)
    upper = np.maximum(100.0 / k * top_sum - x, 0.0)
    return _result(f"dominance:{n},{k:g}", primary, np.minimum(x, upper), upper)


def p_rule(table: CrossTable, p: float = 10.0) -> RuleResult:
    """The p % rule: a cell is primary when x − x₁ − x₂ < p/100 · x₁ (the second-largest
    contributor, subtracting its own x₂ from the total, would estimate x₁ within p %).

    Protection: lower = min(x, p/100 · x₁), upper = p/100 · x₁ — at least p % of x₁ on each side
    of the cell's value (more than the least amount p/100 · x₁ − (x − x₁ − x₂)).

    Parameters
    ----------
    table : CrossTable
        A magnitude table (``crosstab(..., sum_column=...)``).
    p : float, default 10
        The percentage (0.1 ≤ p ≤ 100, :data:`P_RANGE`).

    Returns
    -------
    RuleResult
        The primary mask and the protection.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.tables.crosstab import crosstab
    >>> from sdc_core.tables.cell_rules import p_rule
    >>> df = pd.DataFrame({"a": ["x", "x", "x", "y", "y", "y"], "y": [50, 45, 3, 20, 20, 20]})
    >>> p_rule(crosstab(df, ["a"], "y"), p=10).primary.tolist()
    [True, False, False]
    """
    p = check_parameter("p", p, P_RANGE)
    share = p / 100.0
    tops = _tops(table, 2)
    x = table.values
    primary = (tops[:, 0] > 0) & (x - tops[:, 0] - tops[:, 1] < share * tops[:, 0])
    need = share * tops[:, 0]
    return _result(f"p:{p:g}", primary, np.minimum(x, need), need)
