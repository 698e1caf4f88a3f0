"""JSONL: one document per line, its text under one key (``text`` unless ``text_key`` names
another); bad records are errors that name the line, or with ``errors="skip"`` are skipped and
counted."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import BinaryIO

from ..errors import NgramToolError
from .pieces import Errors, TextPiece, invalid_utf8

_JSON_KINDS = {dict: "object", list: "array", str: "string", int: "number", float: "number", bool: "boolean"}


class _BadRecord(NgramToolError):
    """A JSONL line that gives no text: not UTF-8, not JSON, no object with the key, or no string."""


class _JsonlRecords:
    """The texts of JSONL lines, under one key; errors name the line and say what it holds."""

    def __init__(self, name: str, key: str, errors: Errors) -> None:
        self.name = name
        self.key = key
        self.errors = errors
        self.key_seen = False  # whether an earlier record had the key
        self.offset = 0  # bytes before the current line

    def text(self, raw: bytes, line_no: int) -> str | None:
        """The text of one line (None for a blank line); raises _BadRecord for a bad record."""
        offset, self.offset = self.offset, self.offset + len(raw)
        where = f"{self.name}:{line_no}"
        try:
            line = raw.decode("utf-8", "replace" if self.errors == "replace" else "strict")
        except UnicodeDecodeError as exc:
            byte = exc.object[exc.start]
            raise _BadRecord(invalid_utf8(self.name, offset + exc.start, byte, skippable=True)) from None
        if line_no == 1:
            line = line.removeprefix("\ufeff")
        if not line.strip():
            return None
        skip = "fix the line or pass `errors=skip` to skip bad records"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            fix = skip if self.key_seen else "is this a JSONL file (one JSON object per line)?"
            raise _BadRecord(f"{where}: not valid JSON: {exc.msg} at column {exc.colno}; {fix}") from None
        if not isinstance(record, dict):
            raise _BadRecord(f"{where}: the line holds a JSON {_kind(record)}, not an object; {skip}")
        if self.key not in record:
            keys = _key_list(record)
            if self.key_seen:
                raise _BadRecord(
                    f"{where}: this record has no key {self.key!r} (its keys: {keys}) though earlier "
                    f"records have it; {skip}"
                )
            raise _BadRecord(
                f"{where}: no key {self.key!r} in this record (its keys: {keys}); name the key that holds "
                "the text with `text_key`"
            )
        self.key_seen = True
        value = record[self.key]
        if not isinstance(value, str):
            raise _BadRecord(f"{where}: {self.key!r} holds a JSON {_kind(value)}, not text; {skip}")
        return _no_lone_surrogates(value, where, self.errors)


def _kind(value: object) -> str:
    """The JSON name of a decoded value's type."""
    return _JSON_KINDS.get(type(value), "null")


def _key_list(record: dict, shown: int = 8) -> str:
    """A record's keys, quoted, the first ``shown`` of them."""
    keys = ", ".join(repr(key) for key in list(record)[:shown])
    more = f", ... ({len(record):,} in all)" if len(record) > shown else ""
    return (keys + more) or "none"


def jsonl_pieces(
    stream: BinaryIO, name: str, errors: Errors, key: str, consumed: Callable[[], int]
) -> Iterator[TextPiece]:
    """One piece per record; with ``errors="skip"`` bad records are counted, not raised.
    ``consumed()`` counts the source bytes read so far (compressed ones for a compressed input)."""
    records = _JsonlRecords(name, key, errors)
    skipped = nbytes = seen = 0
    for line_no, raw in enumerate(stream, start=1):
        now = consumed()
        nbytes, seen = nbytes + now - seen, now
        try:
            text = records.text(raw, line_no)
        except _BadRecord:
            if errors != "skip":
                raise
            skipped += 1
            continue
        if text is not None:
            yield TextPiece(text, True, nbytes, skipped=skipped)
            skipped = nbytes = 0
    nbytes += consumed() - seen
    if skipped or nbytes:  # bad or blank lines at the end: their count and bytes
        yield TextPiece("", False, nbytes, skipped=skipped)


def _no_lone_surrogates(text: str, where: str, errors: Errors) -> str:
    """JSON can escape lone surrogates (\\ud800), which are not text: an error, or U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        if errors != "replace":
            raise _BadRecord(
                f"{where}: the text holds a lone surrogate escape (not valid Unicode); "
                "pass `errors=replace` to substitute U+FFFD"
            ) from None
        return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)
    return text
