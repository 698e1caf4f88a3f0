"""ngramtool: Engram-style n-gram hash memory tooling.

Public API::

    from ngramtool import HashSpec, load_tokenizer, build_vocab, hash_ngrams, NgramHasher, open_index
"""

__version__ = "0.1.0"

from .errors import NgramToolError, UsageError
from .formats.index import open_index
from .hashing import NgramHasher, hash_ngrams
from .spec import HashSpec
from .tokenizers import load_tokenizer
from .vocab import CompressedVocab, build_vocab

__all__ = [
    "CompressedVocab",
    "HashSpec",
    "NgramHasher",
    "NgramToolError",
    "UsageError",
    "__version__",
    "build_vocab",
    "hash_ngrams",
    "load_tokenizer",
    "open_index",
]
