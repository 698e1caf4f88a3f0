"""The ids of text inputs exactly as hashing reads them: raw or canonical, streamed, saved or listed
(what ``ngramtool tokenize`` shows)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .chunks import TokenChunk, canonical_chunks
from .encode import iter_token_chunks
from .formats.atomic import check_output_file
from .formats.npy import atomic_npy
from .inputs import Errors, check_reading, refuse_repeated_inputs, text_key_of
from .tokenizers import load_tokenizer
from .vocab import build_vocab


class Tokenized:
    """Text inputs (paths, saved dataset directories or ``-``, in any form hashing reads) and how
    they become ids: the tokenizer (``special``), its vocabulary (``no_compress``: the identity
    map) and the reading options of hashing (``text_key``, or its older name ``json_key``).

    Iterating it more than once reads the inputs again (stdin only once). ``hard_cuts`` and
    ``skipped`` count the unsafe text cuts and the skipped bad records of the reads so far.

    >>> from ngramtool.tokenization import Tokenized
    >>> text = Tokenized(["corpus.txt"])
    >>> records, more = text.first(3)
    >>> [(r["text"], r["raw_id"], r["canonical_id"]) for r in records[1:]], more
    ([(' Welcome', 20776, 7140), (' to', 311, 258)], True)
    """

    def __init__(
        self,
        inputs: Sequence[str | Path],
        *,
        tokenizer: str = "cl100k_base",
        special: str | None = None,
        no_compress: bool = False,
        input_format: str | None = None,
        text_key: str | None = None,
        json_key: str | None = None,
        doc_sep: str | None = None,
        errors: Errors = "strict",
        add_eot: bool = False,
        eot_token: str | None = None,
    ) -> None:
        self.inputs = [str(name) for name in inputs]
        refuse_repeated_inputs(self.inputs)
        text_key = text_key_of(text_key, json_key)
        check_reading(
            self.inputs, input_format=input_format, text_key=text_key, doc_sep=doc_sep, errors=errors
        )
        self.reading: dict[str, Any] = {
            "input_format": input_format,
            "text_key": text_key,
            "doc_sep": doc_sep,
            "errors": errors,
            "add_eot": add_eot,
            "eot_token": eot_token,
        }
        self.tokenizer = load_tokenizer(tokenizer, special)
        self.vocab = build_vocab(self.tokenizer, compress=not no_compress)
        self.hard_cuts = 0
        self.skipped = 0

    def chunks(self, canonical: bool = False) -> Iterator[tuple[TokenChunk, np.ndarray]]:
        """(chunk, ids) in order: the chunk's raw ids, or with ``canonical`` its canonical ids
        (int64; an id without a token is an error naming its position)."""
        chunks = self._counted(iter_token_chunks(self.inputs, self.tokenizer, **self.reading))
        if not canonical:
            yield from ((chunk, chunk.tokens) for chunk in chunks)
            return
        for _, chunk, ids in canonical_chunks(chunks, self.vocab):
            yield chunk, ids

    def _counted(self, chunks: Iterator[TokenChunk]) -> Iterator[TokenChunk]:
        for chunk in chunks:
            self.hard_cuts += chunk.hard_cuts
            self.skipped += chunk.skipped_records
            yield chunk

    def save(self, output: str | Path, *, canonical: bool = False, force: bool = False) -> int:
        """Write every id to ``output`` as ``.npy`` (uint32 raw ids, or int64 canonical ids);
        returns how many. An existing file is replaced only with ``force``."""
        check_output_file(output, force, self.inputs)
        count = 0
        with atomic_npy(Path(output), np.dtype(np.int64 if canonical else np.uint32)) as writer:
            for _, ids in self.chunks(canonical):
                writer.append(ids)
                count += ids.shape[0]
        return count

    def first(self, limit: int) -> tuple[list[dict[str, Any]], bool]:
        """The records of the first ``limit`` tokens (raw id, canonical id, text, normalized key),
        and whether the input holds more."""
        parts = [np.zeros(0, dtype=np.uint32)]
        have, more = 0, False
        for chunk, _ in self.chunks():
            taken = chunk.tokens[: limit - have]
            parts.append(taken)
            have += taken.shape[0]
            if chunk.tokens.shape[0] > taken.shape[0]:
                more = True
                break
        lut = self.vocab.lut
        records = [
            {
                "raw_id": raw,
                "canonical_id": int(lut[raw]),
                "text": self.tokenizer.token_bytes(raw).decode("utf-8", "replace"),
                "key": self.vocab.keys[int(lut[raw])],
            }
            for raw in np.concatenate(parts).tolist()
        ]
        return records, more
