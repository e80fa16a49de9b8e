"""Attribute-disclosure scan: released columns that give a sensitive column away.

For a sensitive column S and another released column Z, on the records where both are present,
group by Z and let share = Σ_z max_s n(z, s) / Σ_z n(z) over the Z values held by at least two
records (a value held by one record says nothing about determination: that record is unique on Z,
an identity-disclosure matter). Z *determines* S when every such Z value maps to one S value
(share = 1), e.g. ``arms`` → ``treat`` in ACTG 175; it *nearly determines* S when share ≥
``near`` (0.95) and S is not itself nearly constant (its most common value covers less than
``near`` of the records). A column with a distinct value on at least ``identifier_share`` of its
records determines everything trivially: it is reported once, as a direct identifier to drop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from sdc_core.keys import check_columns


@dataclass(frozen=True)
class AttributeFinding:
    """Released column ``column`` Z ``level`` (``"determines"``: share = 1, or ``"nearly
    determines"``: share ≥ ``near``) the sensitive column ``sensitive`` S, with the share
    Σ_z max_s n(z, s) / Σ_z n(z) and the number of Z values (module docstring)."""

    column: str
    sensitive: str
    level: str  # "determines" or "nearly determines"
    share: float
    n_values: int

    def to_dict(self) -> dict[str, object]:
        """The fields as a dict (JSON-ready)."""
        return asdict(self)


@dataclass(frozen=True)
class AttributeScan:
    """The attribute-disclosure scan: the released columns that give a sensitive one away.

    What :func:`attribute_disclosure_scan` found: one :class:`AttributeFinding` per (Z, S) pair
    where Z determines or nearly determines S, and the columns left out as direct identifiers (a
    distinct value on at least ``identifier_share`` of the records). Made by
    :func:`sensitive_report`.

    Parameters
    ----------
    findings : list of AttributeFinding
        Each with ``column`` Z, ``sensitive`` S, ``level`` (``"determines"``: share = 1, or
        ``"nearly determines"``), ``share`` = Σ_z max_s n(z, s) / Σ_z n(z) and ``n_values``.
    direct_identifiers : list of str
        The columns left out of the scan as direct identifiers.

    Examples
    --------
    >>> from sdc_core import example, load_example, risk_profile
    >>> df, qi = load_example(), example("actg175").roles.qi
    >>> from sdc_core import sensitive_report
    >>> _, scan = sensitive_report(df, risk_profile(df, qi), ["treat"])
    >>> finding = scan.findings[0]
    >>> finding.column, finding.level, finding.share, scan.direct_identifiers
    ('arms', 'determines', 1.0, ['pidnum'])
    """

    findings: list[AttributeFinding] = field(default_factory=list)
    direct_identifiers: list[str] = field(default_factory=list)


def is_identifier_like(s: pd.Series, identifier_share: float = 0.95) -> bool:
    """A distinct value on at least ``identifier_share`` of the (at least 2) non-missing records."""
    values = s.dropna()
    return identifier_like(len(values), values.nunique(), identifier_share)


def identifier_like(n_present: int, n_distinct: int, identifier_share: float = 0.95) -> bool:
    """:func:`is_identifier_like` from the column's numbers of present and distinct values."""
    return n_present >= 2 and n_distinct >= identifier_share * n_present


def determination_share(z: pd.Series, s: pd.Series,
                        records: np.ndarray | None = None) -> tuple[float, int] | None:
    """(share, number of Z values) as defined in the module docstring; None when no Z value is
    held by two records with S present. With ``records``, row i stands for that many records
    (a table of (Z, S) counts)."""
    both = z.notna().to_numpy() & s.notna().to_numpy()
    z_code, _ = pd.factorize(z[both])
    s_code, s_levels = pd.factorize(s[both])
    card_s = max(len(s_levels), 1)
    pairs, inverse = np.unique(z_code.astype(np.int64) * card_s + s_code, return_inverse=True)
    counts = np.bincount(inverse, minlength=len(pairs)) if records is None else \
        np.bincount(inverse, weights=np.asarray(records)[both], minlength=len(pairs))
    zc = pairs // card_s
    starts = np.flatnonzero(np.diff(zc, prepend=-1))
    totals = np.add.reduceat(counts, starts)
    maxima = np.maximum.reduceat(counts, starts)
    shared = totals >= 2
    if not shared.any():
        return None
    return float(maxima[shared].sum() / totals[shared].sum()), int(len(starts))


def attribute_disclosure_scan(df: pd.DataFrame, sensitive: Sequence[str],
                              columns: Sequence[str] | None = None, near: float = 0.95,
                              identifier_share: float = 0.95) -> AttributeScan:
    """Scan every pair (Z, S) of a released column Z (default: all columns) and a sensitive S."""
    sens = check_columns(df, sensitive, "sensitive")
    cols = check_columns(df, columns if columns is not None else list(df.columns), "released")
    return scan(sens, cols, lambda c: is_identifier_like(df[c], identifier_share),
                lambda s: df[s].value_counts(normalize=True).max() if df[s].notna().any()
                else 1.0,
                lambda z, s: determination_share(df[z], df[s]), near)


def scan(sensitive: Sequence[str], columns: Sequence[str], is_identifier: Callable[[str], bool],
         mode_share: Callable[[str], float],
         share: Callable[[str, str], tuple[float, int] | None],
         near: float = 0.95) -> AttributeScan:
    """The scan of the module docstring, from functions that answer for one column (is it an
    identifier, the share of its most common value) and one (Z, S) pair: the table or an
    engine's aggregates."""
    identifiers = [c for c in columns if is_identifier(c)]
    findings = []
    for s_col in sensitive:
        mode = mode_share(s_col)
        for z_col in columns:
            if z_col == s_col or z_col in identifiers:
                continue
            result = share(z_col, s_col)
            if result is None:
                continue
            value, n_values = result
            if value == 1.0:
                findings.append(AttributeFinding(z_col, s_col, "determines", value, n_values))
            elif value >= near and mode < near:
                findings.append(AttributeFinding(z_col, s_col, "nearly determines", value,
                                                 n_values))
    return AttributeScan(findings, identifiers)
