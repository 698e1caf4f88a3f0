"""The ids of an input exactly as hashing reads them: raw or canonical, streamed, saved or listed
(what ``ngramtool tokenize`` shows). Text is tokenized; a token file, an index, a dataset or a
stream gives the ids it holds (:func:`ngramtool.inputs.stream.open_stream`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..formats.artifacts import Kind
from ..formats.npy import atomic_npy
from ..inputs.sources import CorpusReader, TokenFileReader
from ..inputs.stream import decide_source, open_stream
from ..model.mapping import NgramHashMapping
from ..util.atomic import check_output_file
from ..util.chunks import TokenChunk, canonical_chunks


class Tokenized:
    """An input (paths, saved dataset directories or ``-``, in any form hashing reads; a
    :class:`~ngramtool.CorpusReader` with reading options; a token file, an index, a dataset or a
    stream) and how it becomes ids: the tokenizer and vocabulary of ``mapping`` (or of a
    function that builds it, called once the input is known; None: cl100k_base's compressed
    vocabulary), or an artifact's own lookup table.

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
        source: Sequence[str | Path] | CorpusReader | TokenFileReader,
        mapping: NgramHashMapping | Callable[[], NgramHashMapping] | None = None,
    ) -> None:
        reader, kind = decide_source(source)
        self.inputs = list(reader.paths)
        if kind is not Kind.TEXT and kind is not Kind.TOKEN_FILE:
            self.mapping = None  # an index, a dataset or a stream: its own lookup table
        elif not isinstance(mapping, NgramHashMapping):
            self.mapping = mapping() if mapping is not None else NgramHashMapping.build()
        else:
            self.mapping = mapping
        self.stream = open_stream(reader, self.mapping)
        self.vocab = self.stream.vocab
        self.hard_cuts = 0
        self.skipped = 0

    @property
    def notes(self) -> tuple[str, ...]:
        """Choices the reading made that a user should know (a headerless file's type)."""
        return self.stream.notes

    @property
    def tokenizer_name(self) -> str | None:
        """The name of the tokenizer the ids are of (None: canonical ids)."""
        return (self.stream.tokenizer or {}).get("name")

    def chunks(self, canonical: bool = False) -> Iterator[tuple[TokenChunk, np.ndarray]]:
        """(chunk, ids) in order: the chunk's raw ids, or with ``canonical`` its canonical ids
        (int64; an id without a token is an error naming its position)."""
        chunks = self._counted(self.stream.chunks())
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
        tokenizer = self.mapping.tokenizer if self.mapping is not None else None
        records = [
            {
                "raw_id": raw,
                "canonical_id": int(lut[raw]),
                "text": tokenizer.token_bytes(raw).decode("utf-8", "replace") if tokenizer else str(raw),
                "key": self.vocab.keys[int(lut[raw])],
            }
            for raw in np.concatenate(parts).tolist()
        ]
        return records, more
