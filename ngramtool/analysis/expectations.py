"""What uniform-random hashing would give for every collision figure: T distinct n-grams landing
independently and uniformly in each head's M rows, which then use M(1-(1-1/M)^T) rows on average.

Definitions and derivations are in docs/analysis.md; :mod:`ngramtool.analysis.reports` sets these
figures beside the measured ones.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


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
    from T ~ 1000); the exact multinomial maximum differs for tiny T.
    """
    if types == 0:
        return 0.0
    lam = types / table
    top = int(lam + 12.0 * math.sqrt(lam) + 40.0)
    k = np.arange(top + 1, dtype=np.float64)
    log_fact = np.concatenate([[0.0], np.cumsum(np.log(k[1:]))])
    pmf = np.exp(-lam + k * math.log(lam) - log_fact)
    tail = np.cumsum(pmf[::-1])[::-1]  # tail[k] = P(X >= k)
    with np.errstate(divide="ignore"):
        p_max_at_least = -np.expm1(table * np.log1p(-np.minimum(tail[1:], 1.0)))
    return float(p_max_at_least.sum())


def _log1p_neg(x: float) -> float:
    """log(1 - x), -inf at x = 1."""
    return -math.inf if x >= 1.0 else math.log1p(-x)
