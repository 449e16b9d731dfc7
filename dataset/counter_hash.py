"""Counter-based random numbers: every draw is a pure function of its keys.

A sequential generator (``random.Random``) makes the n-th value depend on every draw
before it, so a dataset drawn from one cannot be cut into slices that are generated
apart. Here a value is ``mix(seed, key0, key1, ...)``: the keys name the draw (which
chat, which message, which property), so any process can compute any slice of a
dataset and get the same numbers. The mixer is splitmix64's finalizer, applied after
adding each key, which passes the usual avalanche tests for this use.
"""

from __future__ import annotations

import math

__all__ = ["MASK64", "hash64", "index_below", "lognormal", "mix", "unit"]

MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E37_79B9_7F4A_7C15
_MUL1 = 0xBF58_476D_1CE4_E5B9
_MUL2 = 0x94D0_49BB_1331_11EB
_TWO_POW_53 = float(1 << 53)


def hash64(seed: int, *keys: int) -> int:
    """A 64-bit value determined by ``seed`` and ``keys`` alone (non-negative ints)."""
    z = seed & MASK64
    for key in keys:
        z = (z + _GOLDEN + (key & MASK64)) & MASK64
        z = ((z ^ (z >> 30)) * _MUL1) & MASK64
        z = ((z ^ (z >> 27)) * _MUL2) & MASK64
        z ^= z >> 31
    return z


def mix(z: int) -> int:
    """splitmix64's step: a well-mixed 64-bit value of the 64-bit ``z`` (for chains of
    draws, each the mix of the one before)."""
    z = (z + _GOLDEN) & MASK64
    z = ((z ^ (z >> 30)) * _MUL1) & MASK64
    z = ((z ^ (z >> 27)) * _MUL2) & MASK64
    return z ^ (z >> 31)


def unit(seed: int, *keys: int) -> float:
    """A float in [0, 1) determined by ``seed`` and ``keys``."""
    return (hash64(seed, *keys) >> 11) / _TWO_POW_53


def index_below(n: int, seed: int, *keys: int) -> int:
    """An int in ``0..n-1`` determined by ``seed`` and ``keys`` (``n`` >= 1)."""
    return hash64(seed, *keys) % n


def lognormal(sigma: float, seed: int, *keys: int) -> float:
    """A log-normal variate (mu 0) by Box-Muller from two keyed uniforms."""
    u1 = 1.0 - unit(seed, *keys, 0)  # in (0, 1]: log is finite
    u2 = unit(seed, *keys, 1)
    normal = math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
    return math.exp(sigma * normal)
