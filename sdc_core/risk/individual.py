"""Individual re-identification risk (sdcMicro's ``indivRisk``, Benedetti–Franconi).

With sample frequency f = f_k and estimated population frequency F = F_k, p = f/F:

- F ≤ f (no weights, or a class not larger in the population): r = 1/f
- f = 1:  r = p/(1−p) · ln(1/p)
- f = 2:  r = p/(1−p) − (p/(1−p))² · ln(1/p)
- f ≥ 3:  r = p/(f − 1 + p)

Non-integer f (from ``alpha`` < 1) takes the case of ⌊f⌋ (f < 2 the first, f < 3 the second).
Without weights r = 1/f_k, so the global risk equals the keys' re-identification risk
100 · mean(1/f_k).
"""

from __future__ import annotations

import numpy as np


def individual_risk(fk: np.ndarray, Fk: np.ndarray) -> np.ndarray:
    """r_i for every record from its f_k and F_k (see the module docstring)."""
    f = np.asarray(fk, dtype=np.float64)
    F = np.asarray(Fk, dtype=np.float64)
    risk = 1.0 / f
    sampled = f < F
    if not sampled.any():
        return risk
    fs, p = f[sampled], f[sampled] / F[sampled]
    odds = p / (1.0 - p)
    log_inv = np.log(1.0 / p)
    risk[sampled] = np.where(fs < 2, odds * log_inv,
                             np.where(fs < 3, odds - odds**2 * log_inv, p / (fs - 1.0 + p)))
    return risk
