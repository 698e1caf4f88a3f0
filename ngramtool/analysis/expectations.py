"""What uniform-random hashing would give for every collision figure: T distinct n-grams landing
independently and uniformly in each head's M rows, which then use M(1-(1-1/M)^T) rows on average.

Definitions and derivations are in docs/analysis.md; :mod:`ngramtool.analysis.reports` sets these
figures beside the measured ones.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def expected_rows_used(types: int, table: int) -> float:
    """E[distinct rows] when ``types`` n-grams land uniformly in ``table`` rows: M(1-(1-1/M)^T)."""
    if types == 0:
        return 0.0
    return -table * math.expm1(types * _log1p_neg(1.0 / table))


def expected_collision_ratio(types: int, table: int) -> float:
    """E[1 - rows/types] under uniform hashing: 1 - M(1-(1-1/M)^T)/T, stable for large M."""
    return 0.0 if types == 0 else 1.0 - expected_rows_used(types, table) / types


def expected_shared_share(types: int, table: int) -> float:
    """P(an n-gram's row also holds another of the T-1 others): 1-(1-1/M)^(T-1).

    This is also the expected token-weighted share: the hash ignores how often an n-gram occurs.
    """
    if types < 2:
        return 0.0
    return -math.expm1((types - 1) * _log1p_neg(1.0 / table))


def expected_all_heads_shared(types: int, tables: Sequence[int]) -> float:
    """P(an n-gram shares its row with some other n-gram on every head); heads are independent."""
    return math.prod(expected_shared_share(types, int(m)) for m in tables)


def expected_indistinguishable(types: int, tables: Sequence[int]) -> float:
    """P(some other n-gram has the same row on every head): 1-(1-prod 1/M_h)^(T-1)."""
    if types < 2:
        return 0.0
    same = math.exp(-sum(math.log(int(m)) for m in tables))
    return -math.expm1((types - 1) * _log1p_neg(same))


def expected_mean_per_row(types: int, table: int) -> float:
    """T / E[rows used]: the mean n-grams per used row (ratio of expectations)."""
    used = expected_rows_used(types, table)
    return types / used if used else 0.0


def expected_max_per_row(types: int, table: int) -> float:
    """E[max n-grams in one row], Poisson approximation: rows' loads i.i.d. Poisson(T/M).

    E[max] = sum_{k>=1} 1 - P(Poisson <= k-1)^M. Accurate for large T (within a few percent
    from T ~ 1000); the exact multinomial maximum differs for tiny T. Computed with ``math``'s
    scalar functions and an exactly rounded sum, so that the figure is the same on every CPU
    (numpy's vectorized ``exp`` and ``log`` round differently with and without AVX-512).
    """
    if types == 0:
        return 0.0
    lam = types / table
    spread = 12.0 * math.sqrt(lam) + 40.0
    top, low = int(lam + spread), max(1, int(lam - spread))
    # Below `low`, P(max >= k) is 1.0 to the last bit: P(Poisson < lam - 12 sd) is about 1e-32.
    log_lam, log_fact, pmf = math.log(lam), math.lgamma(low), {}  # lgamma(low) = log((low - 1)!)
    for k in range(low, top + 1):
        log_fact += math.log(k)
        pmf[k] = math.exp(-lam + k * log_lam - log_fact)
    tail, at_least = 0.0, [float(low - 1)]  # tail = P(X >= k), from k = top down to low
    for k in range(top, low - 1, -1):
        tail += pmf[k]
        at_least.append(-math.expm1(table * _log1p_neg(min(tail, 1.0))))
    return math.fsum(at_least)


def _log1p_neg(x: float) -> float:
    """log(1 - x), -inf at x = 1."""
    return -math.inf if x >= 1.0 else math.log1p(-x)
