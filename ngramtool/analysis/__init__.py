"""Analysis of n-gram hash tables: collisions on a corpus, sizes and costs, spec lint (docs/analysis.md).

Plain functions over numpy arrays and HashSpecs; nothing here prints::

    from ngramtool.analysis import count_ngram_types, sweep_collisions, size_memory, lint_spec
"""

from ..util.lazy import lazy_names

# name -> the module that defines it: a command imports only the analysis it runs
_API = {
    "CollisionReport": "reports",
    "Finding": "lint",
    "HashConstants": "lint",
    "NgramTypeCounter": "counting",
    "NgramTypes": "counting",
    "SizeReport": "sizing",
    "analyse_collisions": "reports",
    "count_ngram_types": "counting",
    "expected_all_heads_shared": "expectations",
    "expected_collision_ratio": "expectations",
    "expected_indistinguishable": "expectations",
    "expected_max_per_row": "expectations",
    "expected_mean_per_row": "expectations",
    "expected_rows_used": "expectations",
    "expected_shared_share": "expectations",
    "fit_table": "sizing",
    "lint_constants": "lint",
    "lint_spec": "lint",
    "size_memory": "sizing",
    "sweep_collisions": "reports",
}

__all__ = sorted(_API)

__getattr__, __dir__ = lazy_names(__name__, _API)
