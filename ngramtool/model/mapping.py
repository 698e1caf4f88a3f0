"""The object users hold: a tokenizer, its compressed vocabulary and a hash spec, as one value.

Every row ngramtool computes depends on three things: the tokenizer that turns text into raw ids,
the compressed vocabulary that maps raw ids to canonical ids (docs/engram-spec.md §2), and the
HashSpec that turns canonical ids into rows (§3). :class:`NgramHashMapping` (named after the Engram
demo's class that does the same job) holds the three together, the way tiktoken's ``Encoding``
holds a tokenizer's ranks: built once from a tokenizer name or file plus a preset or spec fields,
then handed to every command and function that needs them.

    >>> import ngramtool
    >>> mapping = ngramtool.NgramHashMapping.build("cl100k_base", heads=2, table_sizes=4099)
    >>> ids = mapping.encode("the cat sat on the mat")
    >>> ids.tolist(), mapping.canonical(ids).tolist()
    ([1820, 8415, 7731, 389, 279, 5634], [241, 3233, 5222, 229, 241, 3853])
    >>> mapping.rows(ids).shape  # [tokens, layers, (N-1) x heads]
    (6, 2, 4)

It is a frozen value: it pickles (to a Ray worker or a DataLoader process) as its recipe, the
tokenizer's name and the spec, and the other side rebuilds the vocabulary from its disk cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypedDict, Unpack

import numpy as np

from ..hashing.backends import NegativeIds, check_negative_ids
from ..hashing.hasher import SequenceHasher
from ..spec.families.stored import StoredConstants
from ..spec.hashspec import HashSpec
from ..tokenizers import DEFAULT_TOKENIZER, Tokenizer, encode_document, load_tokenizer
from ..tokenizers.vocab import CompressedVocab, build_vocab, identity_vocab, with_dead_tokens
from ..util.errors import NgramToolError, UsageError
from ..util.lookup import canonical_ids
from .configs import check_declared, config_fields, spec_fields
from .presets import PRESETS, check_released_vocabulary, resolve_spec


class SpecFields(TypedDict, total=False):
    """The spec fields a caller may give (see :func:`ngramtool.resolve_spec`)."""

    max_ngram: int | None
    heads: int | None
    layer_ids: tuple[int, ...] | list[int] | None
    table_sizes: int | tuple[int, ...] | list[int] | None
    seed: int | None
    pad_id: int | None
    family: str | None
    stored: StoredConstants | None
    eos_fill: bool | None
    stop_token: int | None
    first_token: str | None
    model_vocab_size: int | None


@dataclass(frozen=True, eq=False)
class NgramHashMapping:
    """A tokenizer, its vocabulary and a hash spec: text -> raw ids -> canonical ids -> rows.

    Build it with :meth:`build` (or :meth:`from_payload`); the fields are what was loaded.

    Attributes:
        tokenizer: the loaded tokenizer; None for ids that are canonical already (``vocab_size``).
        vocab: the raw -> canonical map (the identity map without compression).
        spec: the hash spec; its V' is the vocabulary's.
        tokenizer_name: the name or path the tokenizer was loaded from (None without one).
        special: how the tokenizer reads special-token strings in text (``none``, ``all``, names;
            None: the tokenizer library's own way).
        mask_tokens: raw ids that are DEAD (image tokens and the like): ``vocab`` maps them to
            :data:`~ngramtool.util.lookup.DEAD`, a negative canonical id.
        negative_ids: what a negative (masked) id is to the hash: ``"mask"`` (rows -1, the pad to
            other windows; TileKernels), ``"barrier"`` (windows see the pad from it back, its own
            rows are those of an all-pad window; DeepSeek-V4.1) or ``"hash"`` (the Engram demo).
        vocab_mismatch: a released model's preset built on purpose with another vocabulary
            (``allow_vocab_mismatch``): the preset, the model's V' and this vocabulary's; recorded
            in every manifest.
        engine, engine_check: what encodes the tokenizer's text (``auto``, ``reference`` or a fast
            engine's name; the ids are the same) and whether a sample of it is encoded again by
            the reference (docs/tokenizers.md).

    Examples:
        >>> from ngramtool import NgramHashMapping
        >>> mapping = NgramHashMapping.build("cl100k_base", spec="engram-27b")
        >>> mapping.tokenizer.name, mapping.vocab_size, mapping.spec.layer_ids
        ('cl100k_base', 62330, (2, 15))
    """

    tokenizer: Tokenizer | None
    vocab: CompressedVocab
    spec: HashSpec
    tokenizer_name: str | None = None
    special: str | None = None
    mask_tokens: tuple[int, ...] = ()
    negative_ids: NegativeIds = "mask"
    vocab_mismatch: dict[str, Any] | None = None
    engine: str = "auto"
    engine_check: bool = True
    _hashers: dict[tuple[str, str, str | None], SequenceHasher] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __repr__(self) -> str:
        """One line: the tokenizer, V', the spec's fingerprint and what else changes the ids."""
        words = [] if self.tokenizer is None else [repr(self.tokenizer.name)]
        words += [f"V'={self.vocab_size}", f"spec={self.spec.fingerprint[:16]}"]
        if self.special is not None:
            words.append(f"special={self.special!r}")
        if self.mask_tokens:
            words.append(f"mask_tokens={len(self.mask_tokens)}")
        if self.negative_ids != "mask":
            words.append(f"negative_ids={self.negative_ids!r}")
        return f"<NgramHashMapping {' '.join(words)}>"

    @classmethod
    def build(
        cls,
        tokenizer: str | Path | None = DEFAULT_TOKENIZER,
        *,
        spec: HashSpec | str | Path | None = None,
        spec_file: str | Path | None = None,
        special: str | None = None,
        compress: bool = True,
        vocab_size: int | None = None,
        mask_tokens: Sequence[int] = (),
        negative_ids: NegativeIds = "mask",
        allow_vocab_mismatch: bool = False,
        engine: str = "auto",
        engine_check: bool = True,
        **fields: Unpack[SpecFields],
    ) -> NgramHashMapping:
        """Load the tokenizer, build its compressed vocabulary (from the disk cache after the
        first time) and resolve the spec.

        Args:
            tokenizer: a tiktoken name, a ``*.tiktoken`` file, an HF ``tokenizer.json`` (or its
                directory) or ``bytes``; None for ids that are canonical already (give
                ``vocab_size``).
            spec: a HashSpec or a preset name (the fields given override it), or a spec file's
                path (the whole spec); None: the fields over HashSpec's defaults.
            spec_file: a spec file's path, named as such (giving ``spec`` or fields too is an
                error).
            special: which special-token strings in text become their ids.
            compress: False: the identity vocabulary (raw ids hashed as they are).
            vocab_size: V' of ids that are canonical already (``tokenizer=None``).
            mask_tokens: raw ids that are DEAD wherever they occur (e.g. a model's image token).
            negative_ids: what a DEAD or other negative id is to the hash (see the class).
            allow_vocab_mismatch: build a released model's preset (``deepseek-v4.1-flash``) with a
                tokenizer whose V' is not the model's; without it that is a usage error naming both.
            engine: what encodes the text: ``auto`` (a fast engine for large inputs), ``reference``
                or an engine's name (``fastokens``, ``splintr``); the ids are the same.
            engine_check: re-encode a sample of an engine's text with the reference.
            fields: ``max_ngram``, ``heads``, ``layer_ids``, ``table_sizes``, ``seed``,
                ``pad_id`` (a raw id of the tokenizer), as for :func:`ngramtool.resolve_spec`.

        Examples:
            >>> from ngramtool import NgramHashMapping
            >>> demo = NgramHashMapping.build("cl100k_base", spec="engram-demo")
            >>> demo.spec.layer_ids, demo.vocab_size, demo.spec.pad_id
            ((1, 15), 62330, 62325)
            >>> NgramHashMapping.build(None, vocab_size=1000, heads=2).spec.vocab_size
            1000
        """
        unknown = sorted(set(fields) - set(SpecFields.__annotations__))
        if unknown:
            raise UsageError(
                f"unknown spec field `{unknown[0]}`: give {', '.join(SpecFields.__annotations__)}"
            )
        if tokenizer is None:
            if vocab_size is None:
                raise UsageError("pre-tokenized ids without a tokenizer need `vocab_size`")
            tok, vocab = None, identity_vocab(vocab_size)
        else:
            if vocab_size is not None:
                raise UsageError("`vocab_size` applies only to ids without a `tokenizer`")
            tok = load_tokenizer(str(tokenizer), special, engine, engine_check)
            vocab = build_vocab(tok, compress=compress)
        check_negative_ids(negative_ids)
        resolved = cls._spec(spec, spec_file, tok, vocab, fields, allow_vocab_mismatch)
        masked = tuple(sorted({int(raw) for raw in mask_tokens}))
        name = None if tokenizer is None else str(tokenizer)
        preset_name = spec if isinstance(spec, str) and spec_file is None else None
        mismatch = check_released_vocabulary(preset_name, vocab.size, allow=True)
        dead = with_dead_tokens(vocab, masked)
        return cls(
            tok,
            dead,
            resolved,
            name,
            special,
            masked,
            negative_ids,
            mismatch,
            engine if tokenizer is not None else "auto",
            engine_check,
        )

    @classmethod
    def from_config(
        cls,
        config: str | Path,
        tokenizer: str | Path | None,
        *,
        special: str | None = None,
        compress: bool | None = None,
        vocab_size: int | None = None,
        constants: str | Path | StoredConstants | None = None,
    ) -> NgramHashMapping:
        """The mapping of a released model's ``config.json`` (:mod:`ngramtool.model.configs`) and
        its tokenizer, held to what the config declares (each layer's rows, V'); the config's
        image and video placeholder ids are DEAD tokens, hashed as its layout's reference does
        (``barrier`` for DeepSeek-V4.1, else ``mask``); without a tokenizer the ids are canonical
        and no raw id is masked.

        Args:
            config: the model's ``config.json`` (DeepSeek-V4.1's ``engram_*`` keys, nested or
                flat; LongCat's; Qwen3.8's; the Engram demo's fields).
            tokenizer: the model's own tokenizer (its vocabulary gives V' and maps the config's
                raw pad id); None with ``vocab_size`` for the multipliers alone (the config's pad
                id is then taken as canonical; LongCat's ``vocab_size`` is the config's).
            special: as for :meth:`build`.
            compress: as for :meth:`build`; default: as the model hashes (raw ids for LongCat
                and Qwen3.8, compressed for Engram).
            vocab_size: as for :meth:`build`.
            constants: the checkpoint file that stores the constants (Qwen3.8's
                ``ple_embedding.*`` tensors; :func:`~ngramtool.spec.families.stored.read_stored_constants`),
                or the constants themselves; required for a family ``stored`` config, refused
                for others.

        Raises:
            NgramToolError: a config without the fields, a V4.1 config without a key that changes
                rows, derived rows or V' other than the config declares.
        """
        found = config_fields(config)
        fields = spec_fields(found, constants, config)
        if tokenizer is None and vocab_size is None and fields.get("family") == "longcat":
            vocab_size = found.declared.get("vocab_size")
        mapping = cls.build(
            tokenizer,
            special=special,
            compress=found.compress if compress is None else compress,
            vocab_size=vocab_size,
            negative_ids=found.negative_ids,  # type: ignore[arg-type]
            **fields,
        )
        check_declared(found, mapping.spec, config)
        if tokenizer is None or not found.mask_tokens:
            return mapping
        for key, raw in found.mask_tokens.items():
            try:
                with_dead_tokens(mapping.vocab, (raw,))
            except UsageError:
                raise NgramToolError(
                    f"{config}: {key} = {raw} is not a token id of {mapping.name}: the config is "
                    "another model's, or the tokenizer is"
                ) from None
        masked = tuple(sorted(found.mask_tokens.values()))
        return replace(mapping, vocab=with_dead_tokens(mapping.vocab, masked), mask_tokens=masked)

    @staticmethod
    def _spec(
        spec: HashSpec | str | Path | None,
        spec_file: str | Path | None,
        tokenizer: Tokenizer | None,
        vocab: CompressedVocab,
        fields: SpecFields,
        allow_vocab_mismatch: bool,
    ) -> HashSpec:
        """The spec of ``spec`` and the fields, over this vocabulary."""
        given = any(value is not None for value in fields.values())
        if isinstance(spec, HashSpec) and spec_file is None and not given:
            return _fitting(spec, vocab)
        is_preset = isinstance(spec, HashSpec) or (isinstance(spec, str) and spec in PRESETS)
        if spec_file is None and not is_preset:
            spec, spec_file = None, spec  # a spec file's path
        return resolve_spec(
            preset=spec,  # type: ignore[arg-type]
            spec_file=spec_file,
            tokenizer=tokenizer,
            vocab=vocab,
            allow_vocab_mismatch=allow_vocab_mismatch,
            **fields,
        )

    # ------------------------------------------------------------------------- what it holds
    @property
    def vocab_size(self) -> int:
        """V': the canonical ids' count."""
        return self.vocab.size

    @property
    def name(self) -> str:
        """How messages name the raw id space: the tokenizer's, or the one of ``vocab_size``."""
        if self.tokenizer is not None:
            return f"tokenizer {self.tokenizer.name}"
        return "the vocabulary of `vocab_size`"

    @property
    def raw_size(self) -> int:
        """V: the raw id space (the tokenizer's ids)."""
        return self.vocab.raw_size

    # ------------------------------------------------------------------------------ the work
    def encode(self, text: str) -> np.ndarray:
        """The raw ids (uint32) of ``text`` read as one document, as hashing reads it (the
        tokenizer's document prefix and suffix included)."""
        if self.tokenizer is None:
            raise UsageError("text needs a `tokenizer`: this mapping holds canonical ids only")
        return encode_document(self.tokenizer, text)

    def canonical(self, raw_ids: Any, *, first_position: int = 0) -> np.ndarray:
        """Canonical ids (int64) of raw ids; an id outside the raw id space, or one without a
        token, is an error naming its position (``first_position`` is that of ``raw_ids[0]``)."""
        return canonical_ids(self.vocab.lut, raw_ids, first_position=first_position)

    def rows(
        self,
        raw_ids: Any,
        *,
        before: Any = None,
        doc_starts: Any = None,
        masked: Any = None,
        negative_ids: NegativeIds | None = None,
        backend: str = "auto",
        device: str | None = None,
    ) -> Any:
        """Rows ``[T, L, (N-1)K]`` of raw ids ``[T]``.

        Args:
            raw_ids: raw token ids of the tokenizer.
            before: the raw ids that precede them (the last N-1 are the context; None: the pad).
            doc_starts: positions where documents start (windows there see the pad before them).
            masked: bool ``[T]``, tokens to mask: their rows and what other windows see of
                them follow ``negative_ids``.
            negative_ids: ``"mask"`` (masked rows are -1, other windows see the pad),
                ``"barrier"`` (a masked token is DEAD: windows see the pad from it back, and its
                own rows are those of an all-pad window; DeepSeek-V4.1) or ``"hash"``, as for
                :class:`ngramtool.NgramHasher`; None: the mapping's own.
            backend: what computes the rows (``auto``, ``numba``, ...); every backend gives the same.
            device: where to hash (``cpu``, ``cuda:N``; None: where the ids live).

        Examples:
            >>> import numpy as np
            >>> from ngramtool import NgramHashMapping
            >>> mapping = NgramHashMapping.build("cl100k_base", heads=2, table_sizes=4099)
            >>> ids = mapping.encode("one two three four")
            >>> whole = mapping.rows(ids)
            >>> np.array_equal(mapping.rows(ids[2:], before=ids[:2]), whole[2:])  # context carried
            True
            >>> int(mapping.rows(ids, masked=[False, True, False, False])[1].max())  # a masked token
            -1
        """
        lead = 0 if before is None else len(before)
        ids = self.canonical(np.concatenate([np.asarray(before), np.asarray(raw_ids)]) if lead else raw_ids)
        if masked is not None:
            mask = np.asarray(masked, dtype=bool)
            if mask.shape != (ids.shape[0] - lead,):
                raise UsageError(
                    f"`masked` needs one flag per id ({ids.shape[0] - lead}), got shape {mask.shape}"
                )
            ids[lead:][mask] = -1
        key = (negative_ids or self.negative_ids, backend, device)
        if key not in self._hashers:
            self._hashers[key] = SequenceHasher(
                self.spec, negative_ids=key[0], backend=backend, device=device, check_ids=False
            )
        return self._hashers[key](ids[lead:], ids[:lead] if lead else None, doc_starts)

    # ------------------------------------------------------------------- to other processes
    def to_payload(self) -> dict[str, Any]:
        """The mapping as plain JSON values: the tokenizer's name, ``special``, whether the
        vocabulary is compressed, V' without a tokenizer, the spec, the DEAD raw ids and the
        masking convention (:meth:`from_payload`)."""
        return {
            "tokenizer": self.tokenizer_name,
            "special": self.special,
            "compress": self.vocab.compressed,
            "vocab_size": self.vocab.size if self.tokenizer is None else None,
            "spec": self.spec.to_json(),
            "mask_tokens": list(self.mask_tokens),
            "negative_ids": self.negative_ids,
            "vocab_mismatch": self.vocab_mismatch,
            "engine": self.engine,
            "engine_check": self.engine_check,
        }

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> NgramHashMapping:
        """The mapping :meth:`to_payload` describes, its tokenizer and vocabulary loaded here.

        Examples:
            >>> from ngramtool import NgramHashMapping
            >>> mapping = NgramHashMapping.build("cl100k_base", heads=2)
            >>> again = NgramHashMapping.from_payload(mapping.to_payload())
            >>> again == mapping, again.spec == mapping.spec
            (True, True)
        """
        spec = HashSpec.from_json(payload["spec"])
        masked = tuple(payload.get("mask_tokens", ()))
        recorded = {
            "negative_ids": payload.get("negative_ids", "mask"),
            "vocab_mismatch": payload.get("vocab_mismatch"),
            "engine": payload.get("engine", "auto"),
            "engine_check": payload.get("engine_check", True),
        }
        if payload["tokenizer"] is None:
            vocab = with_dead_tokens(identity_vocab(payload["vocab_size"]), masked)
            return cls(None, vocab, spec, mask_tokens=masked, **recorded)
        tokenizer = load_tokenizer(
            payload["tokenizer"], payload["special"], recorded["engine"], recorded["engine_check"]
        )
        vocab = build_vocab(tokenizer, compress=payload["compress"])
        fitting = _fitting(spec, vocab)
        name, special = payload["tokenizer"], payload["special"]
        return cls(tokenizer, with_dead_tokens(vocab, masked), fitting, name, special, masked, **recorded)

    def __eq__(self, other: object) -> bool:
        """Equal when built from the same recipe into the same vocabulary and spec."""
        if not isinstance(other, NgramHashMapping):
            return NotImplemented
        return (self.to_payload(), self.vocab.fingerprint) == (other.to_payload(), other.vocab.fingerprint)

    def __hash__(self) -> int:
        return hash((self.tokenizer_name, self.special, self.vocab.fingerprint, self.spec.fingerprint))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its payload: the other process loads the tokenizer and vocabulary itself."""
        return (NgramHashMapping.from_payload, (self.to_payload(),))


def _fitting(spec: HashSpec, vocab: CompressedVocab) -> HashSpec:
    """``spec`` when it was made for this vocabulary's V'; else a usage error naming both."""
    if spec.vocab_size != vocab.size:
        raise UsageError(f"the spec was made for V'={spec.vocab_size} but the vocabulary has V'={vocab.size}")
    return spec
