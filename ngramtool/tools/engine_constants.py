"""The constants an inference engine needs to hash n-grams as a model was trained (docs/engram-spec.md
§2-§3): multipliers, primes, offsets, the token map (raw id -> canonical id) and the pad, with
the layer ids, rows per layer, V' and a digest of the token map.

None of them is stored in a checkpoint; an engine gets them from a file that
:mod:`ngramtool.tools.engine_files` writes and ``ngramtool spec check`` compares. The layout is
the same in every file:

- ``multipliers`` int64 [L, N]: per layer, lag 0 (the current token) .. N-1;
- ``primes`` and ``offsets`` int64 [L, (N-1)K]: per layer, column ``(n-2)*K + head`` (orders
  2..N, heads 0..K-1); a flat array (a GGUF key) is layer-major, then column;
- ``token_map`` int32 [V]: ``token_map[raw id]`` = canonical id, ``-1`` for a raw id that has no
  token (cl100k_base has 16 such holes; a tokenizer never emits them). A model's embedding is
  padded past its tokenizer (DeepSeek-V3: 128,815 tokenizer ids, ``vocab_size`` 129,280), a GGUF's
  token count is the padded size and llama.cpp requires one map entry per token: the map is then
  padded to the model's size with the compressed pad (as Megatron maps its padded ids), and
  ``token_map_padded_from`` says where the padding starts (the tokenizer's size);
- ``token_map_sha256``: sha256 of the token map as int32 little-endian bytes (``-1`` is
  ``ff ff ff ff``), 4 bytes per raw id in raw-id order: two maps with the same V' but another
  assignment differ here.
"""

from __future__ import annotations

import hashlib
import importlib
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Any

import numpy as np

from ..model.mapping import NgramHashMapping
from ..spec.hashspec import HashSpec
from ..util.errors import MissingDependencyError, UsageError

FORMAT = "ngramtool.engram-constants"
"""The ``format`` field of an exported JSON file."""
FORMAT_VERSION = 1


def token_map_sha256(token_map: np.ndarray) -> str:
    """sha256 (hex) of a token map as int32 little-endian bytes, raw id 0 first.

    Examples:
        >>> import numpy as np
        >>> token_map_sha256(np.array([0, 1, -1]))[:16]
        'de25d19943926b20'
    """
    return hashlib.sha256(np.asarray(token_map).astype("<i4").tobytes()).hexdigest()


@dataclass(frozen=True, eq=False)
class EngineConstants:
    """The constants of one spec (and tokenizer) in the layout engines read (see the module).

    Attributes:
        layer_ids: int64 [L], the Engram layers.
        max_ngram: N (orders 2..N).
        heads: K, heads per order.
        compressed_vocab_size: V'.
        pad_id: the compressed (canonical) pad, the id engines put before a sequence start.
        multipliers: int64 [L, N].
        primes: int64 [L, (N-1)K], column ``(n-2)*K + head``.
        offsets: int64 [L, (N-1)K], exclusive prefix sums of each layer's primes.
        rows: int64 [L], rows of each layer's table (the sum of its primes).
        token_map: int32 [V] raw id -> canonical id (-1: no token); None without a tokenizer.
        raw_pad_id: the raw pad the compressed one comes from, when known.
        key_length: values per row and head (the model's head dim), when known.
        token_map_padded_from: where the token map's padding to the model's vocabulary starts (the
            tokenizer's raw id count; every entry from there is the compressed pad); None: not
            padded.
        seed: the multipliers' seed (Megatron's artifact records it as ``hash_seed``; engines
            read the multipliers themselves), when known.

    Examples:
        >>> from ngramtool import HashSpec
        >>> constants = EngineConstants.from_spec(HashSpec(heads=2, layer_ids=(1,), table_sizes=(1000, 2000)))
        >>> constants.primes.tolist(), constants.rows.tolist(), constants.token_map is None
        ([[1009, 1013, 2003, 2011]], [6036], True)
    """

    layer_ids: np.ndarray
    max_ngram: int
    heads: int
    compressed_vocab_size: int
    pad_id: int
    multipliers: np.ndarray
    primes: np.ndarray
    offsets: np.ndarray
    rows: np.ndarray
    token_map: np.ndarray | None = None
    raw_pad_id: int | None = None
    key_length: int | None = None
    token_map_padded_from: int | None = None
    seed: int | None = None

    @classmethod
    def from_spec(cls, spec: HashSpec, *, key_length: int | None = None) -> EngineConstants:
        """The constants a spec derives, without a token map (ids are canonical already); a spec
        whose heads have multipliers of their own (the tutorial, LongCat) has no such constants."""
        if not spec.layer_mix:
            raise UsageError(
                f"engine constants are the multiply-XOR layout's (multipliers per layer and lag); family "
                f"{spec.family!r} has multipliers per head: give engines its spec file (spec save) instead"
            )
        return cls(
            layer_ids=np.array(spec.layer_ids, dtype=np.int64),
            max_ngram=spec.max_ngram,
            heads=spec.heads,
            compressed_vocab_size=spec.vocab_size,
            pad_id=spec.pad_id,
            multipliers=np.array(spec.multipliers, dtype=np.int64),
            primes=spec.primes.reshape(spec.num_layers, spec.num_columns).astype(np.int64),
            offsets=np.array(spec.offsets, dtype=np.int64),
            rows=np.array(spec.rows_per_layer, dtype=np.int64),
            key_length=key_length,
            seed=spec.seed,
        )

    @classmethod
    def from_mapping(
        cls,
        mapping: NgramHashMapping,
        *,
        raw_pad_id: int | None = None,
        key_length: int | None = None,
        model_vocab_size: int | None = None,
    ) -> EngineConstants:
        """The constants of a mapping: its spec's, and the token map of its vocabulary when it has
        a tokenizer (a ``vocab_size``-only mapping has none).

        Args:
            mapping: the tokenizer, vocabulary and spec.
            raw_pad_id: the raw id the spec's pad was mapped from (default: the tokenizer's pad,
                when it maps to the spec's pad); it must map to the spec's pad.
            key_length: values per row and head (the model's head dim), when known.
            model_vocab_size: the model's embedding rows (default: the spec's
                ``model_vocab_size``): the token map is padded to them with the compressed pad
                (:meth:`padded_to`).

        Examples:
            >>> from ngramtool import NgramHashMapping
            >>> mapping = NgramHashMapping.build("cl100k_base", heads=2, table_sizes=1000, layer_ids=(1,))
            >>> constants = EngineConstants.from_mapping(mapping)
            >>> constants.token_map.shape, constants.pad_id, constants.raw_pad_id
            ((100277,), 62325, 100257)
        """
        if mapping.mask_tokens:
            raise UsageError(
                "the token map of a mapping with `mask_tokens` marks them DEAD (-2); engines mask "
                "tokens with a token mask, not the token map: build the mapping without `mask_tokens`"
            )
        constants = cls.from_spec(mapping.spec, key_length=key_length)
        if mapping.tokenizer is None:
            if raw_pad_id is not None:
                raise UsageError(
                    "`raw_pad_id` needs a mapping with a tokenizer (ids without one are canonical)"
                )
            return constants
        lut = mapping.vocab.lut
        pad = mapping.spec.pad_id
        if raw_pad_id is None:
            default = mapping.tokenizer.pad_token_id
            raw_pad_id = (
                default if default is not None and 0 <= default < len(lut) and lut[default] == pad else None
            )
        elif not 0 <= raw_pad_id < len(lut) or int(lut[raw_pad_id]) != pad:
            raise UsageError(f"`raw_pad_id` {raw_pad_id} does not map to the spec's compressed pad {pad}")
        constants = replace(constants, token_map=lut.astype(np.int32), raw_pad_id=raw_pad_id)
        model = model_vocab_size if model_vocab_size is not None else mapping.spec.model_vocab_size
        return constants if model is None else constants.padded_to(model)

    def padded_to(self, size: int) -> EngineConstants:
        """These constants with the token map padded to ``size`` entries (a model's vocabulary)
        with the compressed pad; unchanged when it has that many already.

        Examples:
            >>> from ngramtool import HashSpec
            >>> spec = HashSpec(heads=1, layer_ids=(1,), table_sizes=(10, 10), pad_id=2)
            >>> base = EngineConstants.from_spec(spec)
            >>> padded = replace(base, token_map=np.array([0, 1, 2], dtype=np.int32)).padded_to(5)
            >>> padded.token_map.tolist(), padded.token_map_padded_from
            ([0, 1, 2, 2, 2], 3)
        """
        if self.token_map is None:
            raise UsageError("the constants hold no token map to pad: give the model's tokenizer")
        have = len(self.token_map) if self.token_map_padded_from is None else self.token_map_padded_from
        if size < have:
            raise UsageError(
                f"the model's vocabulary ({size:,} rows) is smaller than the tokenizer's {have:,} ids: "
                "give the model's config.json vocab_size (--model-vocab), or its own tokenizer"
            )
        if size == len(self.token_map):
            return self
        token_map = np.full(size, self.pad_id, dtype=np.int32)
        token_map[:have] = self.token_map[:have]
        return replace(self, token_map=token_map, token_map_padded_from=have if size > have else None)

    @property
    def num_layers(self) -> int:
        """L, the number of Engram layers."""
        return len(self.layer_ids)

    @property
    def token_map_sha256(self) -> str | None:
        """sha256 of the token map (:func:`token_map_sha256`); None without one."""
        return None if self.token_map is None else token_map_sha256(self.token_map)

    @property
    def unassigned(self) -> int:
        """Raw ids without a token (``-1`` in the token map)."""
        return 0 if self.token_map is None else int(np.count_nonzero(self.token_map < 0))

    def to_json_dict(self) -> dict[str, Any]:
        """The constants as plain JSON types: the exported JSON file, which ``spec check`` reads back."""
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "layer_ids": self.layer_ids.tolist(),
            "max_ngram": self.max_ngram,
            "heads": self.heads,
            "compressed_vocab_size": self.compressed_vocab_size,
            "pad_id": self.pad_id,
            "raw_pad_id": self.raw_pad_id,
            "key_length": self.key_length,
            "rows": self.rows.tolist(),
            "multipliers": self.multipliers.tolist(),
            "primes": self.primes.tolist(),
            "offsets": self.offsets.tolist(),
            "token_map_sha256": self.token_map_sha256,
            "token_map_length": None if self.token_map is None else len(self.token_map),
            "token_map_padded_from": self.token_map_padded_from,
            "token_map": None if self.token_map is None else self.token_map.tolist(),
        }


def require_engine_package(module: str) -> ModuleType:
    """``module`` (``gguf`` or ``safetensors``) imported, or one line naming the pip command."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependencyError(
            f"GGUF and safetensors files need {module}, which is not installed: "
            "pip install 'ngramtool[engines]'"
        ) from None


@dataclass(frozen=True)
class Found:
    """One constant as a file holds it.

    Attributes:
        values: the integers, flattened (layer-major, then column), in the file's own dtype.
        source: where and how it is stored (``KV deepseek41.engram.primes (UINT32 array)``).
    """

    values: np.ndarray
    source: str


@dataclass(frozen=True)
class DeployedConstants:
    """The constants a deployment file holds (a GGUF, a safetensors file, an exported JSON or npz).

    Attributes:
        path: the file.
        kind: ``GGUF``, ``safetensors``, ``JSON`` or ``npz``.
        found: constant name (an :class:`EngineConstants` field) -> each place that holds it.
        token_map_sha256: the digest the file records, if any.
        token_count: the tokens of a GGUF model's vocabulary (``tokenizer.ggml.tokens``, llama.cpp's
            ``n_vocab``), when it has one: llama.cpp requires one token map entry per token.
    """

    path: str
    kind: str
    found: dict[str, tuple[Found, ...]]
    token_map_sha256: str | None = None
    token_count: int | None = None

    def first(self, name: str) -> Found | None:
        """The first place that holds the constant ``name`` (None: the file lacks it)."""
        places = self.found.get(name, ())
        return places[0] if places else None
