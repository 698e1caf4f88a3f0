"""ngramtool: Engram-style n-gram hash memory tooling.

Public API::

    from ngramtool import HashSpec, load_tokenizer, build_vocab, hash_ngrams, NgramHasher, open_index
    from ngramtool import read_stream, open_token_file, merge_shards
"""

from .errors import NgramToolError, UsageError
from .formats.dataset import merge_shards
from .formats.index import open_index
from .formats.stream import read_stream
from .formats.tokenfiles import open_token_file
from .hashing import NgramHasher, hash_ngrams
from .spec import HashSpec
from .tokenizers import load_tokenizer
from .version import __version__
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
    "merge_shards",
    "open_index",
    "open_token_file",
    "read_stream",
]
