"""Analysis of n-gram hash tables: collisions on a corpus, sizes and costs, spec lint (docs/analysis.md).

Plain functions over numpy arrays and HashSpecs; nothing here prints::

    from ngramtool.analysis import count_ngram_types, sweep_collisions, size_memory, lint_spec
"""

from .counting import NgramTypeCounter, NgramTypes, count_ngram_types
from .expectations import (
    expected_all_heads_shared,
    expected_collision_ratio,
    expected_indistinguishable,
    expected_max_per_row,
    expected_mean_per_row,
    expected_rows_used,
    expected_shared_share,
)
from .lint import Finding, HashConstants, lint_constants, lint_spec
from .reports import CollisionReport, analyse_collisions, sweep_collisions
from .sizing import SizeReport, fit_table, size_memory

__all__ = [
    "CollisionReport",
    "Finding",
    "HashConstants",
    "NgramTypeCounter",
    "NgramTypes",
    "SizeReport",
    "analyse_collisions",
    "count_ngram_types",
    "expected_all_heads_shared",
    "expected_collision_ratio",
    "expected_indistinguishable",
    "expected_max_per_row",
    "expected_mean_per_row",
    "expected_rows_used",
    "expected_shared_share",
    "fit_table",
    "lint_constants",
    "lint_spec",
    "size_memory",
    "sweep_collisions",
]
