"""Counter-based randomness: every draw is a pure function of (seed, step, draw, record id).

A stateful stream would make a record's draw depend on how many records came before it (row
order, chunking, engine). Here, for the stream key K = key(seed, step, draw) and record id r:

- ``mix64`` is the SplitMix64 finaliser: z ^= z >> 30; z *= 0xBF58476D1CE4E5B9; z ^= z >> 27;
  z *= 0x94D049BB133111EB; z ^= z >> 31 (all mod 2⁶⁴);
- ``u64(r, K) = mix64(r · γ + K)`` with γ = 0x9E3779B97F4A7C15: the r-th output of a SplitMix64
  stream whose state starts at K;
- ``uniform(r, K) = (u64 >> 11) · 2⁻⁵³`` in [0, 1);
- ``key(seed, step, draw) = mix64(mix64(seed · γ + step) ^ draw · γ)``.

``step`` is the index of the step in a recipe and ``draw`` tells apart the draws of one step
(flip or not, which value, …), so adding a step never changes the draws of the others.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_MASK = (1 << 64) - 1
#: The largest seed: draws are keyed on 64 bits, so a larger one would repeat a smaller one.
MAX_SEED = _MASK


def mix64(z: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser on a uint64 array (wrapping arithmetic)."""
    z = np.asarray(z, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def _mix64_int(z: int) -> int:
    z &= _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def key(seed: int, step: int, draw: int) -> int:
    """The stream key of one draw of one recipe step."""
    g = int(GAMMA)
    return _mix64_int(_mix64_int(seed * g + step) ^ ((draw * g) & _MASK))


def record_ids(n: int) -> np.ndarray:
    """The default record ids: row positions 0..n−1."""
    return np.arange(n, dtype=np.uint64)


def u64(rid: np.ndarray, stream: int) -> np.ndarray:
    """64 random bits per record id."""
    with np.errstate(over="ignore"):
        return mix64(np.asarray(rid, dtype=np.uint64) * GAMMA + np.uint64(stream))


def uniform(rid: np.ndarray, stream: int) -> np.ndarray:
    """A uniform double in [0, 1) per record id."""
    return (u64(rid, stream) >> np.uint64(11)).astype(np.float64) * (2.0 ** -53)


def ids_from_column(values: np.ndarray) -> np.ndarray:
    """Record ids from an id column: integers as they are, anything else hashed (pandas'
    fixed-key SipHash of the text), so that ids do not depend on row order."""
    arr = np.asarray(values)
    if np.issubdtype(arr.dtype, np.integer):
        return arr.astype(np.uint64)
    return pd.util.hash_array(arr.astype(str).astype(object))


#: Mixed with a stream key K to give the stream of the second uniform of a normal draw
#: (the first 64 bits of the fractional part of √2).
NORMAL_ANGLE = 0x6A09E667F3BCC908


def box_muller(u1: np.ndarray, u2: np.ndarray) -> np.ndarray:
    """z = √(−2 ln(1 − u₁)) · cos(2π u₂) for uniforms in [0, 1): a standard normal.

    ``1 − u₁`` lies in (0, 1] and is exact (u₁ is a multiple of 2⁻⁵³), so the logarithm is
    finite: u₁ = 0 gives z = 0 and the largest |z| is √(106 ln 2) ≈ 8.57 (the normal is cut
    there, a tail of probability 10⁻¹⁷). Computed in place, one temporary besides the result.
    """
    r = np.subtract(1.0, u1)
    np.log(r, out=r)
    r *= -2.0
    np.sqrt(r, out=r)
    z = np.multiply(u2, 2.0 * np.pi)
    np.cos(z, out=z)
    z *= r
    return z


def normal(rid: np.ndarray, stream: int) -> np.ndarray:
    """A standard normal double per record id: ``box_muller(uniform(r, K), uniform(r, K′))``.

    K is the stream key (``key(seed, step, draw)``) and K′ = mix64(K ⊕ c) with
    c = ``NORMAL_ANGLE``: a second counter-based stream derived from K alone, so the draw is a
    pure function of (K, r) like every other one, and a step that needs a uniform and a normal
    uses two draw numbers as usual. Only the cosine half of the Box–Muller pair is used: one
    normal per (stream, record). Bit-for-bit the same wherever ``log`` and ``cos`` round the
    same way (numpy's own loops on one platform); elsewhere within a few ulps.
    """
    second = _mix64_int(int(stream) ^ NORMAL_ANGLE)
    return box_muller(uniform(rid, stream), uniform(rid, second))
