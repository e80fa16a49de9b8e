"""The audit of a published cross table and secondary suppression (docs/tables.md, "The audit",
"Secondary suppression").

**Audit.** The reader knows every published cell and margin, that cells are non-negative and
that the table adds up (A·x = 0, :attr:`~sdc_core.tables.crosstab.CrossTable.constraints`). For
every suppressed cell c, linear programming (``scipy.optimize.linprog``, HiGHS) finds its feasible
interval [lo_c, hi_c] = [min x_c, max x_c] subject to x_published fixed, A·x = 0 and b_lo ≤ x ≤ b_hi
(default 0 ≤ x < ∞; a caller may add what the reader knows besides, e.g. "less than 5" → x ≤ 4). The
suppressed cells split into independent groups (cells linked by a constraint holding two of them),
and each group is solved alone, without two programmes per cell (docs/tables.md, "The audit's
bound"): every solution is a feasible table, so a cell's least and largest value over the solutions
found lie in its interval, and a cell is decided once they reach its protection (and differ); only
the cells left get programmes of their own, which make their intervals exact. A time limit leaves
the cells not decided unchecked. A primary cell of value x is protected when lo ≤ x − lower and hi ≥
x + upper (sdc_core/tables/cell_rules.py); its exposure is by how much either bound falls short;
with ``rules`` only primary cells can be exposed (every suppressed cell still says whether it is
pinned). Without ``rules`` a suppressed cell is exposed when it is pinned (lo = hi). With a
household id (the table's ``unit``) the rules count persons and the report also gives each hidden
cell's ``persons`` and the range of persons a reader can infer, [0 when lo = 0 else 1, hi] (a person
has at least one record in a cell they fall in, and no more persons than records): the threshold
rule's protection in records (lo ≤ 0, hi ≥ t) is that range reaching 0 and t. The relaxation is
exact for 1- and 2-way tables (their constraint matrices are totally unimodular: the LP's bounds are
whole numbers); for a 3-way table ``integer=True`` gives the integer interval
(``scipy.optimize.milp``), which can be narrower. The programmes are solved in units of the table's
largest value (HiGHS's tolerances are absolute); a count table's bounds are then rounded inwards to
whole numbers, and a sum table's are compared within 10⁻⁶ of its largest value.

**Secondary suppression.** Extra cells are suppressed so that every primary cell passes the
audit, at the least cost (the suppressed total, or the number of cells):

- ``milp`` (exact, small tables): one binary s_i per cell and, for each primary cell p and
  direction, a deviation y with A·y = 0, y_p = +upper_p (or −lower_p), −x_i·s_i ≤ y_i ≤ M·s_i
  (a published cell cannot move; a suppressed one cannot go below 0; M = the grand total plus
  the largest protection): minimise Σ w_i·s_i. A feasible deviation is exactly an interval that
  reaches x_p + upper_p (x_p − lower_p), so the optimum is a cheapest pattern (up to M).
- ``hypercube`` (scales): for each primary cell, largest first, the cheapest "cube" of 2^d
  cells (one partner level per axis, a margin allowed; with a hierarchy on an axis, a move
  of that axis that keeps its sums: a sibling's path down to a leaf, or the cell's ancestors,
  :func:`sdc_core.tables.hierarchy.moves`) whose alternating deviation ±δ keeps every sum: the
  cells that decrease must hold at least upper_p, those that increase besides p
  at least lower_p; the cells already suppressed cost nothing. Cubes are combined when none is
  enough alone. Then the audit runs, and for a primary still exposed more cubes are added, up
  to ``rounds`` times.

``auto`` uses ``milp`` when cells × (1 + 2·primaries) ≤ :data:`MILP_MAX_VARIABLES`, else
``hypercube``; the MILP stops after ``time_limit`` seconds with its best pattern (then not
proven the cheapest, and the heuristic's pattern is taken instead when it costs less). A
secondary cell the audit pins is published again (the reader can work it out, so publishing it
changes no interval). Either way the result carries its audit, which is the guarantee.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, OptimizeWarning, linprog, milp
from scipy.sparse.csgraph import connected_components

from sdc_core.errors import SdcInputError
from sdc_core.tables.cell_rules import RuleResult
from sdc_core.tables.crosstab import CrossTable
from sdc_core.tables.hierarchy import Parents, flat_parents, moves

#: How secondary cells are chosen (:func:`secondary_suppression`'s ``method``)
SecondaryMethod = Literal["auto", "milp", "hypercube", "gauss"]

#: The largest exact problem (variables of the MILP) ``auto`` hands to ``milp``
MILP_MAX_VARIABLES = 5_000
#: Hypercubes considered per primary cell: first (the partners already suppressed, then those
#: of largest value, on each axis), and for a cell the audit still finds exposed
MAX_CUBES, MAX_REPAIR_CUBES = 1_000, 20_000
#: Tolerance of the protection check: for sums relative to the table's largest value (the LP's
#: bounds are floats); counts are rounded inwards to whole numbers first
TOL = 1e-6

#: With ``exact=None``, the audit gives the exact interval of every cell of a group of at most
#: this many linked suppressed cells (two programmes a cell at most); of a larger group, only
#: the exposed cells' (the others are decided by the solutions found, module docstring)
EXACT_CELLS = 200

STATUS = ("published", "primary", "secondary")

#: ``progress(done, total, label)``: the cells decided so far, of all suppressed cells
Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class AuditReport:
    """The audit of a published table (module docstring); made by :func:`audit`.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per suppressed cell: ``cell`` (its row in the table's frame), the labels,
        ``value``, ``lo``, ``hi``, ``primary``, ``lower`` and ``upper`` (required),
        ``short_low`` = max(0, lo − (value − lower)), ``short_high`` = max(0, value + upper −
        hi), ``pinned`` (lo = hi), ``exposed``, ``exact`` (lo and hi are the reader's interval;
        else [lo, hi] lies inside it, found by solutions that already show the cell protected)
        and ``checked`` (False: not decided in the time allowed, lo and hi missing); with a
        household id also ``persons`` and, in a count table, the range ``persons_lo``,
        ``persons_hi`` a reader can infer.
    unit : str or None
        The household column whose distinct values the rules counted (None: the records).

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.tables.crosstab import crosstab
    >>> from sdc_core.tables.suppression_audit import audit
    >>> t = crosstab(pd.DataFrame({"a": ["x"] * 3 + ["y"] * 9}), ["a"])
    >>> report = audit(t, [True, False, False])
    >>> report.passes, report.frame[["a", "lo", "hi"]].values.tolist()
    (False, [['x', 3.0, 3.0]])
    """

    frame: pd.DataFrame
    unit: str | None = None

    @property
    def passes(self) -> bool:
        """No suppressed cell is exposed and every one was checked."""
        return not bool(self.frame["exposed"].any()) and self.unchecked_cells == 0

    @property
    def exposed_cells(self) -> int:
        """How many suppressed cells are exposed."""
        return int(self.frame["exposed"].sum())

    @property
    def unchecked_cells(self) -> int:
        """How many suppressed cells the audit could not decide in the time allowed."""
        return int((~self.frame["checked"]).sum()) if "checked" in self.frame else 0

    def findings(self, columns: tuple[str, ...] = ()) -> list[str]:
        """One sentence per exposed cell, then how many were not checked (empty when the table
        passes)."""
        out = []
        for _, r in self.frame[self.frame["exposed"]].iterrows():
            name = ", ".join(str(r[c]) for c in columns) or f"cell {r['cell']}"
            if r["pinned"]:
                out.append(f"{name}: the published table pins it to {r['lo']:g}")
            else:
                out.append(f"{name}: its interval [{r['lo']:g}, {r['hi']:g}] falls short of the "
                           f"protection by {r['short_low']:g} below and {r['short_high']:g} "
                           "above")
        if self.unchecked_cells:
            out.append(f"{self.unchecked_cells:,} of the {len(self.frame):,} hidden cells were "
                       "not checked in the time allowed: the audit does not say they are "
                       "protected")
        return out


def _mask(table: CrossTable, mask: object, what: str) -> np.ndarray:
    m = np.asarray(mask, dtype=bool)
    if m.shape != (len(table.frame),):
        raise SdcInputError(f"{what} needs one entry per cell of the table "
                            f"({len(table.frame)}), not {m.size}")
    return m


def audit(table: CrossTable, suppressed: object, rules: RuleResult | None = None,
          bounds: tuple[np.ndarray, np.ndarray] | None = None, integer: bool = False,
          exact: bool | None = None, time_limit: float | None = None,
          progress: Progress | None = None) -> AuditReport:
    """The feasible interval of every suppressed cell given everything published.

    [lo_c, hi_c] = [min x_c, max x_c] subject to x_i = v_i for every published cell i,
    A·x = 0 (each margin is the sum of its cells) and b_lo ≤ x ≤ b_hi (default x ≥ 0). A cell of
    ``rules``' primary mask is exposed when lo > v − lower or hi < v + upper; without
    ``rules``, any suppressed cell when lo = hi. Every table a programme finds is feasible, so
    [min, max] of a cell over those found is inside its interval: a cell is safe once they
    reach its protection (and differ), without a programme of its own (module docstring).

    Parameters
    ----------
    table : CrossTable
        The table (:func:`~sdc_core.tables.crosstab.crosstab`).
    suppressed : array-like of bool
        One per row of ``table.frame``: True for a hidden cell or margin.
    rules : RuleResult, optional
        The primary cells and their required protection (sdc_core/tables/cell_rules.py).
    bounds : (array, array), optional
        What the reader knows of each cell besides (low, high; default 0 and ∞).
    integer : bool, default False
        Whole-number cells (integer programming, one programme per cell and side; the LP's
        bounds already are for 1- and 2-way count tables).
    exact : bool, optional
        True: every interval exact (two programmes per cell at most); False: the exposed
        cells' only; None (default): also every cell of a group of at most
        :data:`EXACT_CELLS` linked suppressed cells.
    time_limit : float, optional
        Seconds allowed; the cells not decided by then are ``checked`` False (and the table
        does not pass). None: no limit.
    progress : callable, optional
        Called as ``progress(done, total, label)`` before each programme: the cells decided,
        of all suppressed cells (an exception it raises stops the audit).

    Returns
    -------
    AuditReport
        One row per suppressed cell with its interval and exposure.

    Raises
    ------
    SdcInputError
        When a mask has the wrong length or the published values admit no table.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.tables.crosstab import crosstab
    >>> from sdc_core.tables.suppression_audit import audit
    >>> t = crosstab(pd.DataFrame({"a": ["x"] * 3 + ["y"] * 9}), ["a"])
    >>> audit(t, [True, True, False]).frame[["a", "lo", "hi", "exposed"]].values.tolist()
    [['x', 0.0, 12.0, False], ['y', 0.0, 12.0, False]]
    """
    return _audit(table, suppressed, rules, bounds, integer, exact,
                  _Clock(time_limit, progress))


def _audit(table: CrossTable, suppressed: object, rules: RuleResult | None,
           bounds: tuple[np.ndarray, np.ndarray] | None, integer: bool, exact: bool | None,
           clock: _Clock) -> AuditReport:
    """:func:`audit` within ``clock``'s time."""
    s = _mask(table, suppressed, "the suppressed mask")
    clock.start(int(s.sum()), "auditing the hidden cells")
    x = table.values
    n = len(x)
    primary = np.zeros(n, dtype=bool) if rules is None else _mask(table, rules.primary, "rules")
    need_lo = np.zeros(n) if rules is None else np.asarray(rules.lower, dtype=np.float64)
    need_hi = np.zeros(n) if rules is None else np.asarray(rules.upper, dtype=np.float64)
    want = (np.where(primary, x - need_lo, np.inf), np.where(primary, x + need_hi, -np.inf))
    found = _scaled(table.constraints, x, s, want, table.sum_column is None, bounds, integer,
                    exact, clock)
    lo, hi, tol = found.lo, found.hi, found.tol
    idx = np.flatnonzero(s)
    v = x[idx]
    # a primary cell's shortfall (an interval not exact need not hold the value: no other
    # cell has one)
    short_low = np.where(primary[idx], np.maximum(0.0, lo - (v - need_lo[idx])), 0.0)
    short_high = np.where(primary[idx], np.maximum(0.0, v + need_hi[idx] - hi), 0.0)
    pinned = (hi - lo <= tol) & found.exact  # a cell decided otherwise has differed
    exposed = (short_low > tol) | (short_high > tol) if rules is not None else pinned
    exposed &= found.checked  # a cell not decided in time is no finding (it is unchecked)
    frame = table.frame.loc[idx, list(table.columns)].reset_index(drop=True)
    frame.insert(0, "cell", idx)
    frame = frame.assign(value=v, lo=lo, hi=hi, primary=primary[idx], lower=need_lo[idx],
                         upper=need_hi[idx], short_low=short_low, short_high=short_high,
                         pinned=pinned, exposed=exposed, exact=found.exact,
                         checked=found.checked)
    if table.unit is not None:
        frame["persons"] = table.contributors[idx]
        if table.sum_column is None:  # the records' interval bounds the persons'
            frame["persons_lo"] = np.where(found.checked, np.where(lo <= 0, 0.0, 1.0), np.nan)
            frame["persons_hi"] = hi
    return AuditReport(frame, table.unit)


@dataclass(frozen=True)
class Intervals:
    """The interval of each suppressed cell in the table's units (:func:`intervals`): ``lo``
    and ``hi`` (NaN when not checked), ``exact`` (the reader's interval; else [lo, hi] lies
    inside it), ``checked`` (decided in the time allowed) and ``tol``, the tolerance of a
    comparison with them (whole counts compare exactly; sums within 10⁻⁶ of the largest
    value)."""

    lo: np.ndarray
    hi: np.ndarray
    exact: np.ndarray
    checked: np.ndarray
    tol: float


def intervals(a: sparse.csr_matrix, x: np.ndarray, suppressed: np.ndarray,
              want: tuple[np.ndarray, np.ndarray], counts: bool = True,
              integer: bool = False, exact: bool | None = None,
              time_limit: float | None = None, progress: Progress | None = None,
              label: str = "auditing the hidden cells") -> Intervals:
    """[min x_c, max x_c] of every suppressed cell c subject to A·x = 0, x ≥ 0 and the others
    fixed at their values, decided as the audit decides (module docstring; docs/tables.md,
    "The audit's bound"): a cell is decided once the solutions found reach ``want`` (the
    values its interval must reach below and above, ∞ and −∞ for none) and differ.

    Parameters
    ----------
    a : scipy.sparse.csr_matrix
        The constraints A (rows × cells); a published figure that is not a cell (a figure of
        another table adding some of them) is a column of its own, never suppressed.
    x : numpy.ndarray
        The true values, A·x = 0.
    suppressed : numpy.ndarray of bool
        The cells the reader does not see.
    want : (numpy.ndarray, numpy.ndarray)
        Per cell, the least value the interval must reach and the largest.
    counts : bool, default True
        Whole-number cells: the bounds round inwards.
    integer, exact, time_limit, progress
        As :func:`audit`'s.
    label : str
        What ``progress`` is told is going on.

    Returns
    -------
    Intervals
        One entry per suppressed cell, in the order of ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import sparse
    >>> a = sparse.csr_matrix([[1.0, 1.0, -1.0]])  # x0 + x1 = 12
    >>> x = np.array([3.0, 9.0, 12.0])
    >>> got = intervals(a, x, np.array([True, True, False]), (x - 3, x + 3))
    >>> got.lo.tolist(), got.hi.tolist(), bool(got.checked.all())
    ([0.0, 0.0], [12.0, 12.0], True)
    """
    clock = _Clock(time_limit, progress)
    s = np.asarray(suppressed, dtype=bool)
    clock.start(int(s.sum()), label)
    return _scaled(a, np.asarray(x, dtype=np.float64), s, want, counts, None, integer, exact,
                   clock)


def _scaled(a: sparse.csr_matrix, x: np.ndarray, s: np.ndarray,
            want: tuple[np.ndarray, np.ndarray], counts: bool,
            bounds: tuple[np.ndarray, np.ndarray] | None, integer: bool, exact: bool | None,
            clock: _Clock) -> Intervals:
    """:func:`_intervals` in units of the largest value (HiGHS's tolerances are absolute),
    brought back to the table's units; counts rounded inwards to whole numbers."""
    n = len(x)
    b_lo = np.zeros(n) if bounds is None else np.asarray(bounds[0], dtype=np.float64)
    b_hi = np.full(n, np.inf) if bounds is None else np.asarray(bounds[1], dtype=np.float64)
    scale = 1.0 if integer else max(1.0, float(np.abs(x).max(initial=0.0)))
    whole = scale if counts and not integer else 0.0
    found = _intervals(a, x / scale, s, b_lo / scale, b_hi / scale,
                       (want[0] / scale, want[1] / scale), integer, exact, clock, whole)
    lo, hi = found.lo * scale + 0.0, found.hi * scale + 0.0  # + 0.0: no "-0.0"
    if counts and not integer:  # counts are whole: the bounds round inwards
        whole_lo, whole_hi = np.ceil(lo - 1e-6) + 0.0, np.floor(hi + 1e-6) + 0.0
        keep = found.exact | (whole_lo <= whole_hi)  # else both inside one gap: as found
        lo, hi = np.where(keep, whole_lo, lo), np.where(keep, whole_hi, hi)
        scale = 1.0
    return Intervals(lo, hi, found.exact, found.checked, TOL * scale)


class _OutOfTime(Exception):
    """The audit's time ran out: the cells not decided stay unchecked."""


class _Clock:
    """A time limit shared by the steps of one audit or suppression, and their progress
    reports: ``progress(done, total, label)`` before each programme or cube search."""

    def __init__(self, limit: float | None, progress: Progress | None) -> None:
        self.deadline = None if limit is None else time.monotonic() + float(limit)
        self.progress = progress
        self.total, self.done, self.label = 0, 0, ""

    def start(self, total: int, label: str) -> None:
        """A new step of ``total`` items."""
        self.total, self.done, self.label = total, 0, label

    def left(self, decided: int = 0) -> float | None:
        """Before a programme: report the items done (``decided`` besides :attr:`done`) and
        give the seconds left (None: no limit); :class:`_OutOfTime` when none are."""
        if self.progress is not None:
            self.progress(min(self.done + decided, self.total), self.total, self.label)
        if self.deadline is None:
            return None
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise _OutOfTime
        return left


@dataclass(frozen=True)
class _Found:
    """Each suppressed cell's interval (NaN when not checked), whether it is the exact one and
    whether the cell was decided."""

    lo: np.ndarray
    hi: np.ndarray
    exact: np.ndarray
    checked: np.ndarray


@dataclass(frozen=True)
class _Group:
    """One group of linked suppressed cells: A_g·y = rhs, b_lo ≤ y ≤ b_hi; ``whole``: y·whole
    is a whole number in every table the reader considers (a count table in units of its
    largest value; 0: a table of sums)."""

    a: sparse.csr_matrix
    rhs: np.ndarray
    b_lo: np.ndarray
    b_hi: np.ndarray
    whole: float = 0.0


def _intervals(a: sparse.csr_matrix, x: np.ndarray, s: np.ndarray, b_lo: np.ndarray,
               b_hi: np.ndarray, want: tuple[np.ndarray, np.ndarray], integer: bool,
               exact: bool | None, clock: _Clock, whole: float = 0.0) -> _Found:
    """min and max of each suppressed cell, one group of linked cells at a time, the smallest
    groups first; once the time runs out, the cells left are not checked."""
    idx = np.flatnonzero(s)
    m = len(idx)
    lo, hi = np.full(m, np.nan), np.full(m, np.nan)
    ex, checked = np.zeros(m, dtype=bool), np.zeros(m, dtype=bool)
    if m == 0:
        return _Found(lo, hi, ex, checked)
    a_s = a[:, idx].tocsr()
    rhs = -(a[:, ~s] @ x[~s])
    rows = np.flatnonzero(np.diff(a_s.indptr) > 0)
    pub_rows = np.flatnonzero(np.diff(a_s.indptr) == 0)
    if len(pub_rows) and np.abs(rhs[pub_rows]).max() > TOL * max(1.0, np.abs(x).max()):
        raise SdcInputError("the published values do not add up to the published margins")
    a_s, rhs = a_s[rows], rhs[rows]
    link = (a_s.T @ a_s).tocsr()
    n_groups, group = connected_components(link, directed=False)
    a_csc = a_s.tocsc()
    order = np.argsort(group, kind="stable")
    starts = np.searchsorted(group[order], np.arange(n_groups + 1))
    for g in np.argsort(np.diff(starts), kind="stable"):
        members = order[starts[g]:starts[g + 1]]
        sub = a_csc[:, members].tocsr()
        eq = np.flatnonzero(np.diff(sub.indptr) > 0)
        cells = idx[members]
        box = _Group(sub[eq], rhs[eq], b_lo[cells], b_hi[cells], whole)
        if integer:
            got = _integer_bounds(box, clock)
        else:
            whole = exact if exact is not None else len(members) <= EXACT_CELLS
            got = _group_bounds(box, want[0][cells], want[1][cells], whole, clock)
        lo[members], hi[members], ex[members], checked[members] = got
        clock.done += int(got[3].sum())
        if not got[3].all():
            break
    return _Found(lo, hi, ex, checked)


def _solve(box: _Group, c: np.ndarray, left: float | None,
           a_ub: sparse.csr_matrix | None = None,
           vertex: bool = True) -> tuple[int, np.ndarray | None]:
    """One programme, min c·y over the group and a_ub·y ≤ 0 (HiGHS's interior point method, to
    a vertex by its crossover, or with ``vertex`` False to a point inside the optimal face —
    for c = 0, inside the whole feasible set; its simplex method when that fails numerically):
    the status (0 optimal, 3 unbounded) and the solution."""
    options: dict[str, object] = {"presolve": False}
    if not vertex:
        options["run_crossover"] = "off"  # passed to HiGHS as it is
    if left is not None:
        options["time_limit"] = left
    bounds = np.c_[box.b_lo, box.b_hi]
    b_ub = None if a_ub is None else np.zeros(a_ub.shape[0])
    with warnings.catch_warnings():  # scipy warns that it passes run_crossover on verbatim
        warnings.simplefilter("ignore", OptimizeWarning)
        res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=box.a, b_eq=box.rhs, bounds=bounds,
                      method="highs-ipm", options=options)
    if res.status == 4:  # numerical difficulties: the simplex method, with presolve
        options = {k: v for k, v in options.items() if k == "time_limit"}
        res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=box.a, b_eq=box.rhs, bounds=bounds,
                      method="highs", options=options)
    if res.status == 1:
        raise _OutOfTime
    if res.status == 2:
        raise SdcInputError("the published values admit no table (they contradict the "
                            "margins or the known bounds)")
    if res.status not in (0, 3):
        raise SdcInputError(f"the audit's linear programme failed: {res.message}")
    return int(res.status), (res.x if res.status == 0 else None)


def _reach(box: _Group, pick: np.ndarray, target: np.ndarray, sign: float,
           left: float | None) -> np.ndarray | None:
    """A feasible table that brings as many ``pick`` cells as it can to their ``target``:
    max Σ min(y_j, target_j) (``sign`` −1; +1: min Σ max(y_j, target_j)), with one variable
    z_j per cell picked, z_j ≤ y_j and z_j ≤ target_j (reversed for +1); None when unbounded."""
    cols = np.flatnonzero(pick)
    k, m = len(cols), box.a.shape[1]
    link = sparse.csr_matrix((np.full(k, sign), (np.arange(k), cols)), shape=(k, m))
    a_ub = sparse.hstack([link, -sign * sparse.identity(k)]).tocsr()  # sign·(y − z) ≤ 0
    a_eq = sparse.hstack([box.a, sparse.csr_matrix((box.a.shape[0], k))]).tocsr()
    z_lo = np.full(k, -np.inf) if sign < 0 else target[cols]
    z_hi = target[cols] if sign < 0 else np.full(k, np.inf)
    big = _Group(a_eq, box.rhs, np.r_[box.b_lo, z_lo], np.r_[box.b_hi, z_hi])
    status, y = _solve(big, np.r_[np.zeros(m), np.full(k, sign)], left, a_ub)
    return None if y is None else y[:m]


def _group_bounds(box: _Group, want_lo: np.ndarray, want_hi: np.ndarray, exact: bool,
                  clock: _Clock) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The cells of one group: lo, hi, whether each is exact, whether each was decided.

    Every programme's solution is a feasible table, so [seen_lo, seen_hi], the least and
    largest value of a cell over the solutions found, lies inside its interval. A cell is
    decided once seen_lo ≤ ``want_lo``, seen_hi ≥ ``want_hi`` and seen_lo < seen_hi (its
    protection is reached and it is not pinned; a cell without protection has want_lo = ∞ and
    want_hi = −∞: it is decided once it is not pinned), or once both its bounds are exact.
    First a point inside the feasible set, then programmes that bring many undecided cells
    to their protection at once (:func:`_reach`, above and below), while each round decides
    at least a tenth of those left; then a programme per side still short (or, with
    ``exact``, per side), a side skipped when a solution already reaches the reader's bound
    b_lo or b_hi; an exposed cell gets both sides exact."""
    m = box.a.shape[1]
    if box.a.shape[0] == 0:  # no constraint: each cell anywhere within what the reader knows
        return box.b_lo.copy(), box.b_hi.copy(), np.ones(m, bool), np.ones(m, bool)
    seen_lo, seen_hi = np.full(m, np.inf), np.full(m, -np.inf)
    lo, hi = np.full(m, np.nan), np.full(m, np.nan)
    ex_lo, ex_hi = np.zeros(m, dtype=bool), np.zeros(m, dtype=bool)

    def see(y: np.ndarray | None) -> None:
        nonlocal seen_lo, seen_hi
        if y is None:
            return
        y_lo, y_hi = y, y
        if box.whole:  # whole cells: a value found bounds the interval's whole ends
            y_lo = np.ceil(y * box.whole - 1e-6) / box.whole
            y_hi = np.floor(y * box.whole + 1e-6) / box.whole
        seen_lo, seen_hi = np.minimum(seen_lo, y_lo), np.maximum(seen_hi, y_hi)
        at_lo = ~ex_lo & np.isfinite(box.b_lo) & (seen_lo <= box.b_lo + TOL)
        at_hi = ~ex_hi & np.isfinite(box.b_hi) & (seen_hi >= box.b_hi - TOL)
        lo[at_lo], hi[at_hi] = box.b_lo[at_lo], box.b_hi[at_hi]
        ex_lo[at_lo], ex_hi[at_hi] = True, True

    def short() -> tuple[np.ndarray, np.ndarray]:
        """The cells whose known values fall short below, and above."""
        flat = ~(seen_hi > seen_lo + TOL)
        # exposed on one side: the other side exact too (the finding gives both)
        exposed = (ex_hi & (hi < want_hi - TOL)) | (ex_lo & (lo > want_lo + TOL))
        low = ((seen_lo > want_lo + TOL) | flat | exposed | exact) & ~ex_lo
        high = ((seen_hi < want_hi - TOL) | flat | exposed | exact) & ~ex_hi
        return low, high

    def decided() -> int:
        low, high = short()
        return int((~(low | high)).sum())

    def single(j: int, sign: float) -> None:
        c = np.zeros(m)
        c[j] = sign
        status, y = _solve(box, c, clock.left(decided()))
        target, flags = (hi, ex_hi) if sign < 0 else (lo, ex_lo)
        target[j], flags[j] = (-np.inf * sign, True) if y is None else (y[j], True)
        see(y)

    try:
        if not exact:
            # a point inside the feasible set: a cell not pinned differs there from a vertex
            see(_solve(box, np.zeros(m), clock.left(0), vertex=False)[1])
            for _ in range(m):
                before = decided()
                for pick, sign in zip(short()[::-1], (-1.0, 1.0)):
                    target = want_hi if sign < 0 else want_lo
                    pick = pick & np.isfinite(target)
                    if pick.any():
                        see(_reach(box, pick, target, sign, clock.left(before)))
                if decided() == m or decided() - before < max(1, (m - before) // 10):
                    break
        for j in range(m):
            for _ in range(2):  # each programme makes one side exact
                low, high = short()
                if high[j] or low[j]:
                    single(j, -1.0 if high[j] else 1.0)
    except _OutOfTime:
        pass
    low, high = short()
    checked = ~(low | high)
    exact_both = ex_lo & ex_hi
    out_lo = np.where(ex_lo, lo, seen_lo)
    out_hi = np.where(ex_hi, hi, seen_hi)
    out_lo[~checked], out_hi[~checked] = np.nan, np.nan
    return out_lo, out_hi, exact_both & checked, checked


def _integer_bounds(box: _Group, clock: _Clock
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The integer interval of each cell of one group (``scipy.optimize.milp``): two
    programmes a cell, a bound some solution already reaches (x_j = b_lo or b_hi) the answer
    itself; the cells left when the time runs out are not checked."""
    m = box.a.shape[1]
    if box.a.shape[0] == 0:
        return box.b_lo.copy(), box.b_hi.copy(), np.ones(m, bool), np.ones(m, bool)
    lo, hi = np.full(m, np.nan), np.full(m, np.nan)
    seen_lo, seen_hi = np.full(m, np.inf), np.full(m, -np.inf)
    done = 0
    try:
        for sign, out in ((-1.0, hi), (1.0, lo)):
            for j in range(m):
                bound = box.b_hi[j] if sign < 0 else box.b_lo[j]
                if np.isfinite(bound) and (seen_hi[j] >= bound - TOL if sign < 0
                                           else seen_lo[j] <= bound + TOL):
                    out[j] = bound
                    continue
                c = np.zeros(m)
                c[j] = sign
                left = clock.left(done)
                res = milp(c, constraints=LinearConstraint(box.a, box.rhs, box.rhs),
                           integrality=np.ones(m), bounds=Bounds(box.b_lo, box.b_hi),
                           options={} if left is None else {"time_limit": left})
                if res.status == 1:
                    raise _OutOfTime
                if res.status == 3:
                    out[j] = -np.inf * sign
                elif not res.success:
                    raise SdcInputError("the published values admit no table (they "
                                        "contradict the margins or the known bounds)")
                else:
                    out[j] = float(res.x[j])
                    seen_lo, seen_hi = np.minimum(seen_lo, res.x), np.maximum(seen_hi, res.x)
                if sign > 0:
                    done += 1
    except _OutOfTime:
        pass
    checked = ~np.isnan(lo) & ~np.isnan(hi)
    return lo, hi, checked, checked


@dataclass(frozen=True)
class SuppressionResult:
    """The table's cells with their status and the audit of the pattern
    (:func:`secondary_suppression`).

    Parameters
    ----------
    status : numpy.ndarray
        "published", "primary", "secondary" or (cells given as ``hidden``) "unpublished", one
        per row of the table's frame.
    method : str
        ``milp``, ``hypercube``, ``gauss``, or one of them then ``+hypercube`` (its pattern
        repaired).
    report : AuditReport
        The audit of the suppressed pattern with the rules' protection.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.tables.crosstab import crosstab
    >>> from sdc_core.tables.cell_rules import threshold_rule
    >>> from sdc_core.tables.suppression_audit import secondary_suppression
    >>> t = crosstab(pd.DataFrame({"a": ["x"] * 3 + ["y"] * 9 + ["z"] * 7}), ["a"])
    >>> r = secondary_suppression(t, threshold_rule(t, 5))
    >>> r.status.tolist(), r.report.passes
    (['primary', 'published', 'secondary', 'published'], True)
    """

    status: np.ndarray
    method: str
    report: AuditReport

    @property
    def suppressed(self) -> np.ndarray:
        """True for a primary or secondary cell."""
        return self.status != "published"

    def published(self, table: CrossTable) -> pd.DataFrame:
        """The table as published: the labels, the value (missing when suppressed) and
        ``status``."""
        out = table.frame[list(table.columns)].copy()
        out[table.value_column] = table.frame[table.value_column].where(~self.suppressed)
        out["status"] = self.status
        return out


def _weights(table: CrossTable, cost: str) -> np.ndarray:
    """The cost of suppressing each cell: its value (+ a small count term that breaks ties
    towards fewer cells) or 1."""
    if cost == "count":
        return np.ones(len(table.frame))
    if cost != "total":
        raise SdcInputError(f"cost must be 'total' or 'count', not {cost!r}")
    return table.values + 1.0 / (len(table.frame) + 1)


def secondary_suppression(table: CrossTable, rules: RuleResult,
                          method: SecondaryMethod = "auto",
                          cost: Literal["total", "count"] = "total", rounds: int = 5,
                          time_limit: float = 10.0, budget: float | None = None,
                          progress: Progress | None = None,
                          hidden: np.ndarray | None = None) -> SuppressionResult:
    """Suppress further cells so that every primary cell passes the audit (module docstring).

    Minimises Σ w_i over the suppressed cells, w_i = the cell's value (``cost="total"``, plus
    1/(cells + 1) to prefer fewer cells among equal totals) or 1 (``cost="count"``).

    Parameters
    ----------
    table : CrossTable
        The table.
    rules : RuleResult
        The primary cells and their protection (sdc_core/tables/cell_rules.py).
    method : {"auto", "milp", "hypercube", "gauss"}
        Exact or heuristic (module docstring); ``auto`` picks by size; ``gauss``: Gaussian
        elimination (:mod:`sdc_core.tables.gauss`), its pattern repaired by hypercubes where
        the audit finds a primary cell exposed.
    cost : {"total", "count"}
        What to minimise.
    rounds : int, default 5
        The hypercube method's rounds of audit and repair.
    time_limit : float, default 10
        Seconds allowed to the MILP (then its best pattern so far, not proven the cheapest,
        repaired by the heuristic if its audit fails).
    budget : float, optional
        Seconds allowed to the whole suppression and its audits: past them, no further cube is
        added and the cells the last audit has not decided are not checked (the result does
        not pass). None: no limit.
    progress : callable, optional
        ``progress(done, total, label)`` as the cubes are chosen and the audits run (an
        exception it raises stops the suppression).
    hidden : array-like of bool, optional
        Cells that are never published (the inner cells of a finer table that only its
        margins are published from: linked tables, sdc_core/tables/linked.py): suppressed at
        no cost from the start, never published again, status ``unpublished``.

    Returns
    -------
    SuppressionResult
        The status of each cell and the audit (``report.passes`` unless no pattern protects
        some primary cell, e.g. a table without partners).

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.tables.crosstab import crosstab
    >>> from sdc_core.tables.cell_rules import threshold_rule
    >>> from sdc_core.tables.suppression_audit import secondary_suppression
    >>> df = pd.DataFrame({"a": list("xxxyyyyyyy"), "b": list("uvvuuuvvvv")})
    >>> t = crosstab(df, ["a", "b"])
    >>> r = secondary_suppression(t, threshold_rule(t, 2))
    >>> r.report.passes, int(r.suppressed.sum())
    (True, 4)
    """
    primary = _mask(table, rules.primary, "rules")
    never = np.zeros(len(primary), dtype=bool) if hidden is None \
        else _mask(table, hidden, "hidden") & ~primary
    w = np.where(never, 0.0, _weights(table, cost))
    n, k = len(primary), 2 * int(primary.sum())
    if method not in ("auto", "milp", "hypercube", "gauss"):
        raise SdcInputError(f"method must be auto, milp, hypercube or gauss, not {method!r}")
    use_milp = method == "milp" or (method == "auto" and n * (1 + k) <= MILP_MAX_VARIABLES)
    s = primary | never
    used = "hypercube"
    report = None
    proven = False
    clock = _Clock(budget, progress)
    if method == "gauss":
        from sdc_core.tables.gauss import gauss_pattern

        clock.start(int((~(primary | never)).sum()), "Gaussian elimination")

        def tick() -> None:
            clock.left()
            clock.done += 1
        try:
            s, used = gauss_pattern(table, primary, w, never, tick), "gauss"
            report = _audit(table, s, rules, None, False, None, clock)
        except _OutOfTime:  # out of time before a pattern: today's heuristic from the start
            s = primary | never
    elif primary.any() and use_milp:
        limit = time_limit if budget is None else min(time_limit, budget)
        found, proven = _milp_pattern(table, rules, w, limit, never)
        if found is not None:
            s, used = found | primary | never, "milp"
            report = _audit(table, s, rules, None, False, None, clock)
    if report is None or not report.passes:
        repair = report if used in ("milp", "gauss") else None
        s, report = _hypercube(table, rules, w, s, repair, rounds, clock)
        used = f"{used}+hypercube" if repair is not None else used
    elif used == "milp" and not proven:  # stopped by the time limit: the heuristic may be cheaper
        s_h, report_h = _hypercube(table, rules, w, primary | never, None, rounds, clock)
        if report_h.passes and w[s_h].sum() < w[s].sum():
            s, report, used = s_h, report_h, "hypercube"
    # a secondary cell the reader can work out exactly is published: it tells nothing new, and
    # every other interval stays as it was
    cells = report.frame["cell"].to_numpy()
    known = (report.frame["pinned"].to_numpy() & ~report.frame["primary"].to_numpy()
             & report.frame["checked"].to_numpy() & ~never[cells])
    s[cells[known]] = False
    report = AuditReport(report.frame[~known].reset_index(drop=True), report.unit)
    status = np.where(primary, "primary", np.where(
        never, "unpublished", np.where(s, "secondary", "published")))
    return SuppressionResult(status.astype(object), used, report)


def _milp_pattern(table: CrossTable, rules: RuleResult, w: np.ndarray,
                  time_limit: float, never: np.ndarray) -> tuple[np.ndarray | None, bool]:
    """The exact pattern (module docstring), or None when the solver finds none in time, and
    whether it is proven the cheapest; the ``never`` published cells are suppressed from the
    start."""
    scale = max(1.0, float(np.abs(table.values).max(initial=0.0)))  # as in the audit
    x = table.values / scale
    a = table.constraints
    n, e = len(x), a.shape[0]
    prim = np.flatnonzero(rules.primary)
    targets = [(p, rules.upper[p] / scale) for p in prim if rules.upper[p] > 0] + \
        [(p, -rules.lower[p] / scale) for p in prim if rules.lower[p] > 0]
    if not targets:
        return np.asarray(rules.primary, dtype=bool), True
    kb = len(targets)
    big = float(x[~table.margin].sum()) + float(max(abs(t) for _, t in targets))
    eye_k, eye_n = sparse.identity(kb, format="csr"), sparse.identity(n, format="csr")
    s_part = sparse.vstack([sparse.csr_matrix((kb * e, n)),
                            sparse.vstack([sparse.diags(x)] * kb),
                            sparse.vstack([-big * eye_n] * kb)])
    y_part = sparse.vstack([sparse.kron(eye_k, a), sparse.kron(eye_k, eye_n),
                            sparse.kron(eye_k, eye_n)])
    matrix = sparse.hstack([s_part, y_part]).tocsr()
    lo_c = np.r_[np.zeros(kb * e), np.zeros(kb * n), np.full(kb * n, -np.inf)]
    hi_c = np.r_[np.zeros(kb * e), np.full(kb * n, np.inf), np.zeros(kb * n)]
    lb = np.r_[np.asarray(rules.primary | never, dtype=float), np.full(kb * n, -np.inf)]
    ub = np.r_[np.ones(n), np.full(kb * n, np.inf)]
    for b, (p, t) in enumerate(targets):
        lb[n + b * n + p] = ub[n + b * n + p] = t
    res = milp(np.r_[w, np.zeros(kb * n)], constraints=LinearConstraint(matrix, lo_c, hi_c),
               integrality=np.r_[np.ones(n), np.zeros(kb * n)], bounds=Bounds(lb, ub),
               options={"time_limit": time_limit, "presolve": False})
    if res.x is None:
        return None, False
    return np.asarray(res.x[:n] > 0.5), res.status == 0


def _axis_moves(tree: Parents, i: int, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """The moves of position ``i`` on an axis (:func:`sdc_core.tables.hierarchy.moves`) as
    arrays: moves × positions and their signs (0 past a move's end). A flat axis has every
    partner (each other level, sign −1, and the margin, +1; from the margin each level, +1),
    built at once; a hierarchy's moves at most ``max(limit, positions)``."""
    size = len(tree)
    if tree == flat_parents(size - 1):
        last = size - 1
        q = np.arange(last) if i == last else np.r_[np.delete(np.arange(last), i), last]
        sign = np.ones((len(q), 2), dtype=np.int64)
        if i != last:
            sign[:-1, 1] = -1
        return np.column_stack([np.full(len(q), i, dtype=np.int64), q]), sign
    found = moves(tree, i, max(limit, size))
    width = max((len(m[0]) for m in found), default=1)
    pos = np.full((max(1, len(found)), width), i, dtype=np.int64)
    sign = np.zeros(pos.shape, dtype=np.int64)
    for r, (q, sg) in enumerate(found):
        pos[r, :len(q)], sign[r, :len(sg)] = q, sg
    return pos, sign


def _cubes(trees: tuple[Parents, ...], p: int, values: np.ndarray, hidden: np.ndarray,
           limit: int = MAX_CUBES) -> tuple[np.ndarray, np.ndarray]:
    """The cubes of cell p: (corners: cubes × corners flat indices, signs: the same, +1, −1 or
    0 for a corner that is no part of the cube; corner 0 is p itself). A cube takes one move
    per axis (:func:`sdc_core.tables.hierarchy.moves`: on a flat axis the partner is another
    level, sign −1, or the margin, sign +1; from a margin a level, sign +1) and its corners
    are their products. Past ``limit`` cubes, each axis keeps the moves whose cells are
    already ``hidden``, then those of largest value."""
    shape = tuple(len(t) for t in trees)
    coords = np.unravel_index(p, shape)
    strides = np.array([int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))])
    options = []
    for d, tree in enumerate(trees):
        i = int(coords[d])
        pos, sign = _axis_moves(tree, i, limit)
        options.append(((pos - i) * strides[d], sign))
    total = int(np.prod([len(o) for o, _ in options], dtype=np.int64))
    if total > limit:
        per_axis = max(2, int(limit ** (1 / len(shape))))
        for d, (off, sign) in enumerate(options):
            if len(off) > per_axis:
                cells = p + off[:, 1:]
                moved = sign[:, 1:] != 0
                least = np.where(moved, values[cells], np.inf).min(axis=1)
                all_hidden = np.where(moved, hidden[cells], True).all(axis=1)
                keep = np.lexsort((-least, ~all_hidden))[:per_axis]
                options[d] = (off[keep], sign[keep])
    grids = np.meshgrid(*[np.arange(len(o)) for o, _ in options], indexing="ij")
    picks = [g.ravel() for g in grids]
    n_cubes = len(picks[0])
    corners = np.full((n_cubes, 1), p, dtype=np.int64)
    signs = np.ones((n_cubes, 1), dtype=np.int64)
    for (off, sign), pick in zip(options, picks):  # the product of the moves, axis by axis
        corners = (corners[:, :, None] + off[pick][:, None, :]).reshape(n_cubes, -1)
        signs = (signs[:, :, None] * sign[pick][:, None, :]).reshape(n_cubes, -1)
    return corners, signs


def _hypercube(table: CrossTable, rules: RuleResult, w: np.ndarray, s: np.ndarray,
               report: AuditReport | None, rounds: int,
               clock: _Clock) -> tuple[np.ndarray, AuditReport]:
    """The hypercube heuristic (module docstring): cubes for each primary cell, then audit and
    repair; the pattern and its last audit (once ``clock``'s time is out, the pattern so far
    and its audit, whose cells left are not checked)."""
    s = s.copy()
    x = table.values
    todo = np.flatnonzero(rules.primary)
    if report is not None:
        todo = report.frame.loc[report.frame["exposed"], "cell"].to_numpy()
    used: dict[int, set[int]] = {}
    limit = MAX_CUBES if report is None else MAX_REPAIR_CUBES
    for _ in range(max(1, rounds)):
        clock.start(len(todo), "choosing the secondary cells")
        try:
            for p in todo[np.argsort(-x[todo], kind="stable")]:
                clock.left()
                _protect(p, table.tree, x, w, s, rules.lower[p], rules.upper[p],
                         used.setdefault(p, set()), limit)
                clock.done += 1
        except _OutOfTime:
            pass
        rep = _audit(table, s, rules, None, False, None, clock)
        limit = MAX_REPAIR_CUBES
        todo = rep.frame.loc[rep.frame["exposed"], "cell"].to_numpy()
        if len(todo) == 0:
            break
    return s, rep


def _cube_keys(corners: np.ndarray, part: np.ndarray) -> np.ndarray:
    """One number per cube for the set of its cells (the corners of ``part``): the sum of a
    mixing of each cell's index modulo 2⁶⁴, the same whatever the corners' order."""
    mixed = (corners.astype(np.uint64) + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)
    mixed ^= mixed >> np.uint64(29)
    return np.where(part, mixed, np.uint64(0)).sum(axis=1, dtype=np.uint64)


def _protect(p: int, trees: tuple[Parents, ...], x: np.ndarray, w: np.ndarray, s: np.ndarray,
             lower: float, upper: float, used: set[int], limit: int) -> None:
    """Suppress the corners of the cheapest cube(s) that give p its protection (in place);
    ``used`` holds the cubes already taken for p, by the key of their cells
    (:func:`_cube_keys`; a later round takes new ones); ``limit`` the cubes considered
    (:func:`_cubes`)."""
    corners, signs = _cubes(trees, p, x, s, limit)
    vals = x[corners]
    part = signs != 0
    minus = np.where(signs < 0, vals, np.inf).min(axis=1)  # how far p can rise
    plus = np.where((signs > 0) & (np.arange(corners.shape[1]) > 0), vals, np.inf).min(axis=1)
    plus = np.minimum(plus, x[p])  # how far p can fall
    cost = np.where(s[corners] | ~part, 0.0, w[corners]).sum(axis=1)
    keys = _cube_keys(corners, part)
    fresh = ~np.isin(keys, np.fromiter(used, dtype=np.uint64, count=len(used)))
    ok = fresh & (minus >= upper - TOL) & (plus >= lower - TOL)
    if ok.any():
        best = int(np.flatnonzero(ok)[np.argmin(cost[ok])])
        used.add(int(keys[best]))
        s[corners[best][part[best]]] = True
        return
    # no cube alone: add cubes by cost per unit of protection until their sum is enough
    gain = np.minimum(minus / max(upper, TOL), plus / max(lower, TOL))
    useful = fresh & (gain > 0)
    up = down = 0.0
    for i in np.flatnonzero(useful)[np.argsort(cost[useful] / gain[useful], kind="stable")]:
        used.add(int(keys[i]))
        s[corners[i][part[i]]] = True
        up, down = up + minus[i], down + plus[i]
        if up >= upper - TOL and down >= lower - TOL:
            return
