"""The collision analysis under its former name: every name imported from here lives in one of
three modules, and is re-exported so that existing imports keep working.

* :mod:`ngramtool.analysis.counting`: exact counting of the distinct n-grams of a corpus, with
  occurrence counts (:class:`NgramTypeCounter`, :class:`NgramTypes`, :func:`count_ngram_types`).
* :mod:`ngramtool.analysis.expectations`: what uniform-random hashing would give for every figure
  (``expected_*``).
* :mod:`ngramtool.analysis.reports`: the per-table collision figures of one spec or a sweep of
  table sizes (:func:`analyse_collisions`, :func:`sweep_collisions`, :class:`CollisionReport`).

Module constants are not re-exported: set them (or patch a function) on the module that holds them.
"""

from __future__ import annotations

from .counting import (
    KeyCodec,
    NgramTypeCounter,
    NgramTypes,
    _counting_kernels,
    _merge,
    count_ngram_types,
    key_codec,
)
from .expectations import (
    expected_all_heads_shared,
    expected_collision_ratio,
    expected_indistinguishable,
    expected_max_per_row,
    expected_mean_per_row,
    expected_rows_used,
    expected_shared_share,
)
from .reports import (
    CollisionReport,
    HeadStats,
    OrderStats,
    _DenseLoads,
    _SparseLoads,
    _Tally,
    analyse_collisions,
    sweep_collisions,
)

__all__ = [
    "CollisionReport",
    "HeadStats",
    "KeyCodec",
    "NgramTypeCounter",
    "NgramTypes",
    "OrderStats",
    "_DenseLoads",
    "_SparseLoads",
    "_Tally",
    "_counting_kernels",
    "_merge",
    "analyse_collisions",
    "count_ngram_types",
    "expected_all_heads_shared",
    "expected_collision_ratio",
    "expected_indistinguishable",
    "expected_max_per_row",
    "expected_mean_per_row",
    "expected_rows_used",
    "expected_shared_share",
    "key_codec",
    "sweep_collisions",
]
