"""ngramtool: Engram-style n-gram hash memory tooling.

The public API (each function's docstring has a runnable example)::

    import ngramtool

    mapping = ngramtool.NgramHashMapping.build("cl100k_base", spec="engram-27b")  # the object to hold
    ids = mapping.encode("the cat sat")                              # raw ids, as hashing reads text
    rows = mapping.rows(ids)                                         # [T, layers, (N-1) x heads]
    index = ngramtool.hash_files(["corpus.txt"], "corpus.ngidx", mapping=mapping)  # `ngramtool hash`
    index = ngramtool.open_index("corpus.ngidx")                     # an index or a merged dataset
    spec = ngramtool.resolve_spec(preset="engram-27b", tokenizer="cl100k_base")
    rows = ngramtool.hash_ngrams(canonical_ids, spec)                # arrays in, arrays out

Each name is imported when it is first used, so a program that only reads a stream or an index
loads no tokenizer machinery. See docs/architecture.md for the layers beneath these names.
"""

from __future__ import annotations

import logging

from .util.lazy import lazy_names
from .util.version import __version__

# name -> the module that defines it
_API = {
    "BatchHashState": "hashing.serving",
    "CompressedVocab": "tokenizers.vocab",
    "CorpusReader": "inputs.sources",
    "NgramHashMapping": "model.mapping",
    "OutputOptions": "run.request",
    "RunOptions": "run.request",
    "TokenFileReader": "inputs.sources",
    "HashSpec": "spec.hashspec",
    "HashState": "hashing.serving",
    "NgramHasher": "hashing.hasher",
    "NgramToolError": "util.errors",
    "UsageError": "util.errors",
    "build_vocab": "tokenizers.vocab",
    "hash_files": "api",
    "hash_ngrams": "hashing.hasher",
    "hash_texts": "api",
    "load_tokenizer": "tokenizers",
    "measure_collisions": "analysis.measurement",
    "measure_row_cache": "analysis.row_cache",
    "merge_shards": "formats.dataset",
    "open_index": "formats.artifacts",
    "open_token_file": "formats.tokenfiles",
    "read_stream": "formats.stream",
    "resolve_spec": "model.presets",
}

__all__ = ["__version__", *sorted(_API)]

# The library logs through stdlib logging (logger "ngramtool") and shows nothing unless the
# application configures logging; the command line shows it with NGRAMTOOL_LOG_LEVEL.
logging.getLogger(__name__).addHandler(logging.NullHandler())


__getattr__, __dir__ = lazy_names(__name__, _API)  # each public name imported on first use
