"""Exact primality and the Engram prime search (docs/engram-spec.md §3.2)."""

from __future__ import annotations

# Deterministic Miller-Rabin: these witnesses are exact for every n < 3.3e24,
# far beyond int64 (Sorenson & Webster 2015).
_WITNESSES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)


def is_prime(n: int) -> bool:
    """Return True when ``n`` is prime (exact for every n below 3.3e24)."""
    if n < 2:
        return False
    for p in _WITNESSES:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for a in _WITNESSES:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def next_prime(start: int, seen: set[int]) -> int:
    """Smallest prime strictly greater than ``start`` that is not in ``seen``."""
    candidate = start + 1
    while candidate in seen or not is_prime(candidate):
        candidate += 1
    return candidate
