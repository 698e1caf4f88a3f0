"""Table sizes by independent arithmetic: primes found by trial division, PCIe bandwidth by hand."""

from __future__ import annotations

import math

PCIE4 = 16e9 * 16 * (128 / 130) / 8  # 16 GT/s per lane, 16 lanes, 128b/130b, bits -> bytes


def trial_prime(n: int) -> bool:
    return n >= 2 and all(n % d for d in range(2, math.isqrt(n) + 1))


def prime_chain(base: int, count: int) -> list[int]:
    """The ``count`` smallest primes >= base: Engram's sizes when every order shares one base."""
    out, candidate = [], base
    while len(out) < count:
        if trial_prime(candidate):
            out.append(candidate)
        candidate += 1
    return out


def chain_params(base: int, tables: int, dim: int) -> int:
    return sum(prime_chain(base, tables)) * dim
