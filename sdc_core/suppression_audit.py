"""The audit of a published cross table and secondary suppression (docs/tables.md, "The audit",
"Secondary suppression").

**Audit.** The reader knows every published cell and margin, that cells are non-negative and
that the table adds up (A·x = 0, :attr:`~sdc_core.crosstab.CrossTable.constraints`). For every
suppressed cell c, linear programming (``scipy.optimize.linprog``, HiGHS) finds its feasible
interval [lo_c, hi_c] = [min x_c, max x_c] subject to x_published fixed, A·x = 0 and
b_lo ≤ x ≤ b_hi (default 0 ≤ x < ∞; a caller may add what the reader knows besides, e.g.
"less than 5" → x ≤ 4). The suppressed cells split into independent groups (cells linked by a
constraint holding two of them), and each group is solved alone. A primary cell of value x is
protected when lo ≤ x − lower and hi ≥ x + upper (sdc_core/cell_rules.py); its exposure is
by how much either bound falls short; with ``rules`` only primary cells can be exposed (every
suppressed cell still says whether it is pinned). Without ``rules`` a suppressed cell is exposed
when it is pinned (lo = hi). With a household id (the table's ``unit``) the rules count persons
and the report also gives each hidden cell's ``persons`` and the range of persons a reader can
infer, [0 when lo = 0 else 1, hi] (a person has at least one record in a cell they fall in, and
no more persons than records): the threshold rule's protection in records (lo ≤ 0, hi ≥ t) is
that range reaching 0 and t. The relaxation is exact for 1- and 2-way tables (their constraint
matrices are totally unimodular: the LP's bounds are whole numbers); for a 3-way table
``integer=True`` gives the integer interval (``scipy.optimize.milp``), which can be narrower.
The programmes are solved in units of the table's largest value (HiGHS's tolerances are
absolute); a count table's bounds are then rounded inwards to whole numbers, and a sum table's
are compared within 10⁻⁶ of its largest value.

**Secondary suppression.** Extra cells are suppressed so that every primary cell passes the
audit, at the least cost (the suppressed total, or the number of cells):

- ``milp`` (exact, small tables): one binary s_i per cell and, for each primary cell p and
  direction, a deviation y with A·y = 0, y_p = +upper_p (or −lower_p), −x_i·s_i ≤ y_i ≤ M·s_i
  (a published cell cannot move; a suppressed one cannot go below 0; M = the grand total plus
  the largest protection): minimise Σ w_i·s_i. A feasible deviation is exactly an interval that
  reaches x_p + upper_p (x_p − lower_p), so the optimum is a cheapest pattern (up to M).
- ``hypercube`` (scales): for each primary cell, largest first, the cheapest "cube" of 2^d
  cells (one partner level per axis, a margin allowed) whose alternating deviation ±δ keeps
  every sum: the cells that decrease must hold at least upper_p, those that increase besides p
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

import itertools
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, linprog, milp
from scipy.sparse.csgraph import connected_components

from sdc_core.cell_rules import RuleResult
from sdc_core.crosstab import CrossTable
from sdc_core.errors import SdcInputError

#: The largest exact problem (variables of the MILP) ``auto`` hands to ``milp``
MILP_MAX_VARIABLES = 5_000
#: Hypercubes considered per primary cell (the partner levels nearest in value beyond)
MAX_CUBES = 20_000
#: Tolerance of the protection check: for sums relative to the table's largest value (the LP's
#: bounds are floats); counts are rounded inwards to whole numbers first
TOL = 1e-6

STATUS = ("published", "primary", "secondary")


@dataclass(frozen=True)
class AuditReport:
    """The audit of a published table (module docstring); made by :func:`audit`.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per suppressed cell: ``cell`` (its row in the table's frame), the labels,
        ``value``, ``lo``, ``hi``, ``primary``, ``lower`` and ``upper`` (required),
        ``short_low`` = max(0, lo − (value − lower)), ``short_high`` = max(0, value + upper −
        hi), ``pinned`` (lo = hi) and ``exposed``; with a household id also ``persons`` and, in
        a count table, the range ``persons_lo``, ``persons_hi`` a reader can infer.
    unit : str or None
        The household column whose distinct values the rules counted (None: the records).

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.crosstab import crosstab
    >>> from sdc_core.suppression_audit import audit
    >>> t = crosstab(pd.DataFrame({"a": ["x"] * 3 + ["y"] * 9}), ["a"])
    >>> report = audit(t, [True, False, False])
    >>> report.passes, report.frame[["a", "lo", "hi"]].values.tolist()
    (False, [['x', 3.0, 3.0]])
    """

    frame: pd.DataFrame
    unit: str | None = None

    @property
    def passes(self) -> bool:
        """No suppressed cell is exposed."""
        return not bool(self.frame["exposed"].any())

    @property
    def exposed_cells(self) -> int:
        """How many suppressed cells are exposed."""
        return int(self.frame["exposed"].sum())

    def findings(self, columns: tuple[str, ...] = ()) -> list[str]:
        """One sentence per exposed cell (empty when the table passes)."""
        out = []
        for _, r in self.frame[self.frame["exposed"]].iterrows():
            name = ", ".join(str(r[c]) for c in columns) or f"cell {r['cell']}"
            if r["pinned"]:
                out.append(f"{name}: the published table pins it to {r['lo']:g}")
            else:
                out.append(f"{name}: its interval [{r['lo']:g}, {r['hi']:g}] falls short of the "
                           f"protection by {r['short_low']:g} below and {r['short_high']:g} "
                           "above")
        return out


def _mask(table: CrossTable, mask: object, what: str) -> np.ndarray:
    m = np.asarray(mask, dtype=bool)
    if m.shape != (len(table.frame),):
        raise SdcInputError(f"{what} needs one entry per cell of the table "
                            f"({len(table.frame)}), not {m.size}")
    return m


def audit(table: CrossTable, suppressed: object, rules: RuleResult | None = None,
          bounds: tuple[np.ndarray, np.ndarray] | None = None,
          integer: bool = False) -> AuditReport:
    """The feasible interval of every suppressed cell given everything published.

    [lo_c, hi_c] = [min x_c, max x_c] subject to x_i = v_i for every published cell i,
    A·x = 0 (each margin is the sum of its cells) and b_lo ≤ x ≤ b_hi (default x ≥ 0). A cell of
    ``rules``' primary mask is exposed when lo > v − lower or hi < v + upper; without
    ``rules``, any suppressed cell when lo = hi.

    Parameters
    ----------
    table : CrossTable
        The table (:func:`~sdc_core.crosstab.crosstab`).
    suppressed : array-like of bool
        One per row of ``table.frame``: True for a hidden cell or margin.
    rules : RuleResult, optional
        The primary cells and their required protection (sdc_core/cell_rules.py).
    bounds : (array, array), optional
        What the reader knows of each cell besides (low, high; default 0 and ∞).
    integer : bool, default False
        Whole-number cells (integer programming; the LP's bounds already are for 1- and 2-way
        count tables).

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
    >>> from sdc_core.crosstab import crosstab
    >>> from sdc_core.suppression_audit import audit
    >>> t = crosstab(pd.DataFrame({"a": ["x"] * 3 + ["y"] * 9}), ["a"])
    >>> audit(t, [True, True, False]).frame[["a", "lo", "hi", "exposed"]].values.tolist()
    [['x', 0.0, 12.0, False], ['y', 0.0, 12.0, False]]
    """
    s = _mask(table, suppressed, "the suppressed mask")
    x = table.values
    n = len(x)
    b_lo = np.zeros(n) if bounds is None else np.asarray(bounds[0], dtype=np.float64)
    b_hi = np.full(n, np.inf) if bounds is None else np.asarray(bounds[1], dtype=np.float64)
    # the programmes in units of the largest value: HiGHS's tolerances are absolute
    scale = 1.0 if integer else max(1.0, float(np.abs(x).max(initial=0.0)))
    lo, hi = _intervals(table.constraints, x / scale, s, b_lo / scale, b_hi / scale, integer)
    lo, hi = lo * scale + 0.0, hi * scale + 0.0  # + 0.0: no "-0.0"
    if table.sum_column is None and not integer:  # counts are whole: the bounds round inwards
        lo, hi = np.ceil(lo - 1e-6) + 0.0, np.floor(hi + 1e-6) + 0.0
        scale = 1.0
    idx = np.flatnonzero(s)
    primary = np.zeros(n, dtype=bool) if rules is None else _mask(table, rules.primary, "rules")
    need_lo = np.zeros(n) if rules is None else np.asarray(rules.lower, dtype=np.float64)
    need_hi = np.zeros(n) if rules is None else np.asarray(rules.upper, dtype=np.float64)
    v = x[idx]
    short_low = np.maximum(0.0, lo - (v - need_lo[idx]))
    short_high = np.maximum(0.0, v + need_hi[idx] - hi)
    tol = TOL * scale  # whole counts compare exactly; sums within HiGHS's relative tolerance
    pinned = hi - lo <= tol
    exposed = (short_low > tol) | (short_high > tol) if rules is not None else pinned
    frame = table.frame.loc[idx, list(table.columns)].reset_index(drop=True)
    frame.insert(0, "cell", idx)
    frame = frame.assign(value=v, lo=lo, hi=hi, primary=primary[idx], lower=need_lo[idx],
                         upper=need_hi[idx], short_low=short_low, short_high=short_high,
                         pinned=pinned, exposed=exposed)
    if table.unit is not None:
        frame["persons"] = table.contributors[idx]
        if table.sum_column is None:  # the records' interval bounds the persons'
            frame["persons_lo"], frame["persons_hi"] = np.where(lo <= 0, 0.0, 1.0), hi
    return AuditReport(frame, table.unit)


def _intervals(a: sparse.csr_matrix, x: np.ndarray, s: np.ndarray, b_lo: np.ndarray,
               b_hi: np.ndarray, integer: bool) -> tuple[np.ndarray, np.ndarray]:
    """min and max of each suppressed cell, one group of linked cells at a time."""
    idx = np.flatnonzero(s)
    if len(idx) == 0:
        return np.zeros(0), np.zeros(0)
    a_s = a[:, idx].tocsr()
    rhs = -(a[:, ~s] @ x[~s])
    rows = np.flatnonzero(np.diff(a_s.indptr) > 0)
    pub_rows = np.flatnonzero(np.diff(a_s.indptr) == 0)
    if len(pub_rows) and np.abs(rhs[pub_rows]).max() > TOL * max(1.0, np.abs(x).max()):
        raise SdcInputError("the published values do not add up to the published margins")
    a_s, rhs = a_s[rows], rhs[rows]
    link = (a_s.T @ a_s).tocsr()
    n_groups, group = connected_components(link, directed=False)
    lo, hi = np.empty(len(idx)), np.empty(len(idx))
    a_csc = a_s.tocsc()
    order = np.argsort(group, kind="stable")
    starts = np.searchsorted(group[order], np.arange(n_groups + 1))
    for g in range(n_groups):
        members = order[starts[g]:starts[g + 1]]
        sub = a_csc[:, members]
        eq = np.flatnonzero(np.diff(sub.tocsr().indptr) > 0)
        lo[members], hi[members] = _group_bounds(sub.tocsr()[eq], rhs[eq], b_lo[idx[members]],
                                                 b_hi[idx[members]], integer)
    return lo, hi


def _group_bounds(a: sparse.csr_matrix, rhs: np.ndarray, b_lo: np.ndarray, b_hi: np.ndarray,
                  integer: bool) -> tuple[np.ndarray, np.ndarray]:
    """min and max of each cell of one group: two programmes a cell, except that a bound some
    solution already reaches (x_j = b_lo or b_hi in a feasible table) is the answer itself."""
    m = a.shape[1]
    if a.shape[0] == 0:
        return b_lo.copy(), b_hi.copy()
    lo, hi = np.empty(m), np.empty(m)
    seen_lo, seen_hi = np.full(m, np.inf), np.full(m, -np.inf)
    for sign, out in ((-1.0, hi), (1.0, lo)):
        for j in range(m):
            bound = b_hi[j] if sign < 0 else b_lo[j]
            if np.isfinite(bound) and (seen_hi[j] >= bound - TOL if sign < 0
                                       else seen_lo[j] <= bound + TOL):
                out[j] = bound
                continue
            c = np.zeros(m)
            c[j] = sign
            if integer:
                res = milp(c, constraints=LinearConstraint(a, rhs, rhs),
                           integrality=np.ones(m), bounds=Bounds(b_lo, b_hi))
                ok, unbounded = res.success, res.status == 3
            else:
                res = linprog(c, A_eq=a, b_eq=rhs, bounds=np.c_[b_lo, b_hi], method="highs")
                ok, unbounded = res.status == 0, res.status == 3
            if unbounded:
                out[j] = -np.inf * sign
            elif not ok:
                raise SdcInputError("the published values admit no table (they contradict the "
                                    "margins or the known bounds)")
            else:
                out[j] = float(res.x[j])
                seen_lo, seen_hi = np.minimum(seen_lo, res.x), np.maximum(seen_hi, res.x)
    return lo, hi


@dataclass(frozen=True)
class SuppressionResult:
    """The table's cells with their status and the audit of the pattern
    (:func:`secondary_suppression`).

    Parameters
    ----------
    status : numpy.ndarray
        "published", "primary" or "secondary", one per row of the table's frame.
    method : str
        ``milp``, ``hypercube``, or ``milp+hypercube`` (the exact pattern repaired).
    report : AuditReport
        The audit of the suppressed pattern with the rules' protection.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.crosstab import crosstab
    >>> from sdc_core.cell_rules import threshold_rule
    >>> from sdc_core.suppression_audit import secondary_suppression
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
                          method: Literal["auto", "milp", "hypercube"] = "auto",
                          cost: Literal["total", "count"] = "total", rounds: int = 5,
                          time_limit: float = 10.0) -> SuppressionResult:
    """Suppress further cells so that every primary cell passes the audit (module docstring).

    Minimises Σ w_i over the suppressed cells, w_i = the cell's value (``cost="total"``, plus
    1/(cells + 1) to prefer fewer cells among equal totals) or 1 (``cost="count"``).

    Parameters
    ----------
    table : CrossTable
        The table.
    rules : RuleResult
        The primary cells and their protection (sdc_core/cell_rules.py).
    method : {"auto", "milp", "hypercube"}
        Exact or heuristic (module docstring); ``auto`` picks by size.
    cost : {"total", "count"}
        What to minimise.
    rounds : int, default 5
        The hypercube method's rounds of audit and repair.
    time_limit : float, default 10
        Seconds allowed to the MILP (then its best pattern so far, not proven the cheapest,
        repaired by the heuristic if its audit fails).

    Returns
    -------
    SuppressionResult
        The status of each cell and the audit (``report.passes`` unless no pattern protects
        some primary cell, e.g. a table without partners).

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.crosstab import crosstab
    >>> from sdc_core.cell_rules import threshold_rule
    >>> from sdc_core.suppression_audit import secondary_suppression
    >>> df = pd.DataFrame({"a": list("xxxyyyyyyy"), "b": list("uvvuuuvvvv")})
    >>> t = crosstab(df, ["a", "b"])
    >>> r = secondary_suppression(t, threshold_rule(t, 2))
    >>> r.report.passes, int(r.suppressed.sum())
    (True, 4)
    """
    primary = _mask(table, rules.primary, "rules")
    w = _weights(table, cost)
    n, k = len(primary), 2 * int(primary.sum())
    if method not in ("auto", "milp", "hypercube"):
        raise SdcInputError(f"method must be auto, milp or hypercube, not {method!r}")
    use_milp = method == "milp" or (method == "auto" and n * (1 + k) <= MILP_MAX_VARIABLES)
    s = primary.copy()
    used = "hypercube"
    report = None
    proven = False
    if primary.any() and use_milp:
        found, proven = _milp_pattern(table, rules, w, time_limit)
        if found is not None:
            s, used = found | primary, "milp"
            report = audit(table, s, rules)
    if report is None or not report.passes:
        repair = report if used == "milp" else None
        s, report = _hypercube(table, rules, w, s, repair, rounds)
        used = "milp+hypercube" if repair is not None else used
    elif used == "milp" and not proven:  # stopped by the time limit: the heuristic may be cheaper
        s_h, report_h = _hypercube(table, rules, w, primary.copy(), None, rounds)
        if report_h.passes and w[s_h].sum() < w[s].sum():
            s, report, used = s_h, report_h, "hypercube"
    # a secondary cell the reader can work out exactly is published: it tells nothing new, and
    # every other interval stays as it was
    known = report.frame["pinned"].to_numpy() & ~report.frame["primary"].to_numpy()
    s[report.frame["cell"].to_numpy()[known]] = False
    report = AuditReport(report.frame[~known].reset_index(drop=True), report.unit)
    status = np.where(primary, "primary", np.where(s, "secondary", "published"))
    return SuppressionResult(status.astype(object), used, report)


def _milp_pattern(table: CrossTable, rules: RuleResult, w: np.ndarray,
                  time_limit: float) -> tuple[np.ndarray | None, bool]:
    """The exact pattern (module docstring), or None when the solver finds none in time, and
    whether it is proven the cheapest."""
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
    lb = np.r_[np.asarray(rules.primary, dtype=float), np.full(kb * n, -np.inf)]
    ub = np.r_[np.ones(n), np.full(kb * n, np.inf)]
    for b, (p, t) in enumerate(targets):
        lb[n + b * n + p] = ub[n + b * n + p] = t
    res = milp(np.r_[w, np.zeros(kb * n)], constraints=LinearConstraint(matrix, lo_c, hi_c),
               integrality=np.r_[np.ones(n), np.zeros(kb * n)], bounds=Bounds(lb, ub),
               options={"time_limit": time_limit, "presolve": False})
    if res.x is None:
        return None, False
    return np.asarray(res.x[:n] > 0.5), res.status == 0


def _cubes(shape: tuple[int, ...], p: int, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every cube of cell p: (corners: cubes × 2^d flat indices, signs: the same, +1 or −1;
    corner 0 is p itself). Per axis the partner is another level (sign −1) or the margin
    (sign +1; from a margin: a level, sign +1)."""
    coords = np.unravel_index(p, shape)
    options = []
    for d, size in enumerate(shape):
        i = coords[d]
        if i == size - 1:
            opts = [(q, 1) for q in range(size - 1)]
        else:
            opts = [(q, -1) for q in range(size - 1) if q != i] + [(size - 1, 1)]
        options.append(opts)
    total = int(np.prod([len(o) for o in options], dtype=np.int64))
    if total > MAX_CUBES:  # keep the partners of largest value on the longest axes
        per_axis = max(2, int(MAX_CUBES ** (1 / len(shape))))
        for d, opts in enumerate(options):
            if len(opts) > per_axis:
                def val(o: tuple[int, int], d: int = d) -> float:
                    c = [int(v) for v in coords]
                    c[d] = int(o[0])
                    return float(values[np.ravel_multi_index(tuple(c), shape)])
                options[d] = sorted(opts, key=val, reverse=True)[:per_axis]
    grids = np.meshgrid(*[np.arange(len(o)) for o in options], indexing="ij")
    pick_q = [np.array([o[0] for o in opts])[g.ravel()] for opts, g in zip(options, grids)]
    pick_s = [np.array([o[1] for o in opts])[g.ravel()] for opts, g in zip(options, grids)]
    q, sg = np.stack(pick_q, axis=1), np.stack(pick_s, axis=1)
    corners, signs = [], []
    for subset in itertools.product((0, 1), repeat=len(shape)):
        pick = np.array(subset, dtype=bool)
        idx = tuple(np.where(pick[d], q[:, d], coords[d]) for d in range(len(shape)))
        corners.append(np.ravel_multi_index(idx, shape))
        signs.append(np.prod(np.where(pick, sg, 1), axis=1))
    return np.stack(corners, axis=1), np.stack(signs, axis=1)


def _hypercube(table: CrossTable, rules: RuleResult, w: np.ndarray, s: np.ndarray,
               report: AuditReport | None, rounds: int) -> tuple[np.ndarray, AuditReport]:
    """The hypercube heuristic (module docstring): cubes for each primary cell, then audit and
    repair; the pattern and its last audit."""
    s = s.copy()
    x = table.values
    shape = table.shape
    todo = np.flatnonzero(rules.primary)
    if report is not None:
        todo = report.frame.loc[report.frame["exposed"], "cell"].to_numpy()
    used: dict[int, set[int]] = {}
    for _ in range(max(1, rounds)):
        for p in todo[np.argsort(-x[todo], kind="stable")]:
            _protect(p, shape, x, w, s, rules.lower[p], rules.upper[p], used.setdefault(p, set()))
        rep = audit(table, s, rules)
        todo = rep.frame.loc[rep.frame["exposed"], "cell"].to_numpy()
        if len(todo) == 0:
            break
    return s, rep


def _protect(p: int, shape: tuple[int, ...], x: np.ndarray, w: np.ndarray, s: np.ndarray,
             lower: float, upper: float, used: set[int]) -> None:
    """Suppress the corners of the cheapest cube(s) that give p its protection (in place);
    ``used`` holds the cubes already taken for p (a later round takes new ones)."""
    corners, signs = _cubes(shape, p, x)
    vals = x[corners]
    minus = np.where(signs < 0, vals, np.inf).min(axis=1)  # how far p can rise
    plus = np.where((signs > 0) & (np.arange(corners.shape[1]) > 0), vals, np.inf).min(axis=1)
    plus = np.minimum(plus, x[p])  # how far p can fall
    cost = np.where(s[corners], 0.0, w[corners]).sum(axis=1)
    fresh = ~np.isin(np.arange(len(cost)), np.fromiter(used, dtype=np.int64, count=len(used)))
    ok = fresh & (minus >= upper - TOL) & (plus >= lower - TOL)
    if ok.any():
        best = int(np.flatnonzero(ok)[np.argmin(cost[ok])])
        used.add(best)
        s[corners[best]] = True
        return
    # no cube alone: add cubes by cost per unit of protection until their sum is enough
    gain = np.minimum(minus / max(upper, TOL), plus / max(lower, TOL))
    useful = fresh & (gain > 0)
    up = down = 0.0
    for i in np.flatnonzero(useful)[np.argsort(cost[useful] / gain[useful], kind="stable")]:
        used.add(int(i))
        s[corners[i]] = True
        up, down = up + minus[i], down + plus[i]
        if up >= upper - TOL and down >= lower - TOL:
            return
