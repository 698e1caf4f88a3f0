"""HF ``tokenizer.json`` files through the ``tokenizers`` package (extra ``hf``): :class:`HFTokenizer`."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ..util.errors import NgramToolError
from .protocol import TokenText, _read_maybe_gz, joined_ids, tokenizer_repr
from .special import SpecialRule, _check_special_names
from .textcuts import cuts_keep_ids

_PAD_WORDS = ("pad",)


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

    def __repr__(self) -> str:
        return tokenizer_repr(self)

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
    """The tokenizer with ``names`` marked non-special (:func:`names_not_special`)."""
    return _hf_core(names_not_special(data, names), path)


def names_not_special(data: bytes, names: tuple[str, ...]) -> bytes:
    """tokenizer.json bytes with the added tokens ``names`` marked non-special, so that reading
    special tokens as text (``encode_special_tokens``) still matches them and only them."""
    document = json.loads(data)
    for added in document.get("added_tokens", []):
        if added.get("content") in names:
            added["special"] = False
    return json.dumps(document, ensure_ascii=False).encode("utf-8")


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
