"""What a hash job and a hash run report, as typed values with ``to_dict()`` for ``--json``."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class JobSummary:
    """What one hash job wrote.

    Attributes:
        output: the index directory, or ``-`` for a stream.
        num_tokens: tokens written.
        num_documents: documents written.
        input_bytes: input bytes read.
        seconds: wall time of the streaming part (after the tokenizer and vocabulary were loaded).
        rows_shape: ``(T, L, C)`` of the rows.
        rows_dtype: the rows' dtype name.
        rows: ``stored`` or ``lazy``.
        tokenizer: the tokenizer's name (None for canonical ids).
        vocab_size: V'.
        spec_fingerprint: the spec's fingerprint.
        boundary: ``none`` or ``reset``.
        unsafe_text_cuts: text cuts where the ids may differ from the whole text's.
        skipped_records: bad records skipped (``errors=skip``).
        profile: CPU and wall seconds per stage (:class:`ngramtool.util.profiling.StageClock`).
        notes: choices the reading made that a user should know (a headerless file's type).
    """

    output: str
    num_tokens: int
    num_documents: int
    input_bytes: int
    seconds: float
    rows_shape: tuple[int, int, int]
    rows_dtype: str
    rows: str
    tokenizer: str | None
    vocab_size: int
    spec_fingerprint: str
    boundary: str
    unsafe_text_cuts: int
    skipped_records: int
    profile: dict[str, Any]
    notes: tuple[str, ...] = ()

    @property
    def tokens_per_second(self) -> int | None:
        """Tokens written per wall second (None when no time was measured)."""
        return round(self.num_tokens / self.seconds) if self.seconds > 0 else None

    def to_dict(self) -> dict[str, Any]:
        """The summary as JSON values, in the order ``--json`` prints them."""
        values = asdict(self)
        if not self.notes:  # said only when there is something to say
            del values["notes"]
        ordered = {
            key: values[key] for key in ("output", "num_tokens", "num_documents", "input_bytes", "seconds")
        }
        return {**ordered, "tokens_per_second": self.tokens_per_second, **values,
                "rows_shape": list(self.rows_shape)}  # fmt: skip
