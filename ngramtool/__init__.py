"""ngramtool: Engram-style n-gram hash memory tooling.

Public API::

    from ngramtool import HashSpec, load_tokenizer, build_vocab, hash_ngrams, NgramHasher, open_index
"""

__version__ = "0.1.0"

from .errors import NgramToolError, UsageError  # noqa: E402
from .formats.index import open_index  # noqa: E402
from .hashing import NgramHasher, hash_ngrams  # noqa: E402
from .spec import HashSpec  # noqa: E402
from .tokenizers import load_tokenizer  # noqa: E402
from .vocab import CompressedVocab, build_vocab  # noqa: E402

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
