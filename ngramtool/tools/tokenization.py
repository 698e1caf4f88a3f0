"""The ids of text inputs exactly as hashing reads them: raw or canonical, streamed, saved or listed
(what ``ngramtool tokenize`` shows)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..formats.npy import atomic_npy
from ..inputs import check_reading, refuse_repeated_inputs
from ..inputs.encoding import iter_token_chunks
from ..inputs.sources import CorpusReader
from ..model.mapping import NgramHashMapping
from ..util.atomic import check_output_file
from ..util.chunks import TokenChunk, canonical_chunks
from ..util.errors import UsageError


class Tokenized:
    """Text inputs (paths, saved dataset directories or ``-``, in any form hashing reads; or a
    :class:`~ngramtool.CorpusReader` with reading options) and how they become ids: the
    tokenizer and vocabulary of ``mapping`` (or of a function that builds it, called once the
    inputs are checked; None: cl100k_base's compressed vocabulary).

    Iterating it more than once reads the inputs again (stdin only once). ``hard_cuts`` and
    ``skipped`` count the unsafe text cuts and the skipped bad records of the reads so far.

    Examples:
        >>> from ngramtool.tools.tokenization import Tokenized
        >>> text = Tokenized(["corpus.txt"])
        >>> records, more = text.first(3)
        >>> [(r["text"], r["raw_id"], r["canonical_id"]) for r in records[1:]], more
        ([(' Welcome', 20776, 7140), (' to', 311, 258)], True)
    """

    def __init__(
        self,
        source: Sequence[str | Path] | CorpusReader,
        mapping: NgramHashMapping | Callable[[], NgramHashMapping] | None = None,
    ) -> None:
        reader = (
            source if isinstance(source, CorpusReader) else CorpusReader(tuple(str(name) for name in source))
        )
        self.inputs = list(reader.paths)
        refuse_repeated_inputs(self.inputs)
        check_reading(
            self.inputs,
            input_format=reader.input_format,
            text_key=reader.text_key,
            doc_sep=reader.doc_sep,
            errors=reader.errors,
        )
        self.reading = reader.reading
        if not isinstance(mapping, NgramHashMapping):
            mapping = mapping() if mapping is not None else NgramHashMapping.build()
        if mapping.tokenizer is None:
            raise UsageError("tokenizing text needs a `tokenizer`")
        self.tokenizer = mapping.tokenizer
        self.vocab = mapping.vocab
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
