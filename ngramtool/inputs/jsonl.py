"""JSONL: one document per line, its text under one key (``text`` unless ``text_key`` names
another, or a dotted path: :mod:`.fields`), or its chat rendered through a chat template
(:mod:`.chat`); bad records are errors that name the line, or with ``errors="skip"`` are skipped
and counted."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import BinaryIO, Literal

from ..util.errors import NgramToolError, UsageError
from .chat import CHAT_KEY, PICK_A_FIELD, ChatRecordError, ChatTemplate
from .fields import MISSING, field_value, json_kind
from .pieces import Documents, Errors, TextPiece, invalid_utf8, record_runs


class _BadRecord(NgramToolError):
    """A JSONL line that gives no text: not UTF-8, not JSON, no object with the key, or no string."""


class _JsonlRecords:
    """The texts of JSONL lines, under one key (or the chats there rendered by ``chat``); errors
    name the line and say what it holds.

    Lines are read in blocks (:meth:`texts`): a block that is valid UTF-8 is decoded at once, and
    each line holding nothing but a JSON object with a string under the key (the common case,
    without ``chat``) is parsed by the JSON scanner alone; any other line goes through
    :meth:`line_text`, which reads it as a line on its own would be read and names what is wrong
    with it.
    """

    def __init__(self, name: str, key: str, errors: Errors, chat: ChatTemplate | None = None) -> None:
        self.name = name
        self.key = key
        self.errors = errors
        self.chat = chat
        self.key_seen = False  # whether an earlier record had the key
        self.offset = 0  # bytes before the current line
        self.line_no = 0  # lines read so far
        self._scan = json_scanner()

    def texts(self, block: bytes) -> list[str | None]:
        """The text of each record of a block of whole lines, None for each bad one skipped
        (``errors="skip"``); blank lines give nothing. Raises _BadRecord for a bad record."""
        try:
            decoded = block.decode("utf-8")
        except UnicodeDecodeError:  # line by line, to name the offset or replace or skip the line
            return self._raw_texts(block)
        self.offset += len(block)
        lines = decoded.split("\n")
        fed = not lines[-1]  # the block ends with a line feed
        if fed:
            lines.pop()
        if self.line_no == 0:
            lines[0] = lines[0].removeprefix("\ufeff")
        escapes = "\\ud" in decoded or "\\uD" in decoded  # \ud800-\udfff: maybe a lone surrogate
        scan, key, first, found = self._scan, self.key, self.line_no, False
        plain = self.chat is None  # a chat is rendered by line_text
        texts: list[str | None] = []
        keep = texts.append
        for line_no, line in enumerate(lines, start=first + 1):
            try:
                record, end = scan(line, 0)
            except (StopIteration, ValueError):
                record = end = None
            value = record.get(key) if type(record) is dict else None
            if (
                plain
                and type(value) is str
                and (end == len(line) or line[end:] == "\r")
                and (not escapes or _is_text(value))
            ):
                found = True
                keep(value)
                continue
            self.key_seen = self.key_seen or found
            whole_line = line + "\n" if fed or line_no < first + len(lines) else line  # as read alone
            text = self._checked(whole_line, line_no)
            if text is not False:
                keep(text)
        self.key_seen = self.key_seen or found
        self.line_no = first + len(lines)
        return texts

    def _raw_texts(self, block: bytes) -> list[str | None]:
        """:meth:`texts` of a block that is not all valid UTF-8, line by line."""
        lines = block.split(b"\n")
        raws = [line + b"\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
        texts: list[str | None] = []
        for raw in raws:
            self.line_no += 1
            offset, self.offset = self.offset, self.offset + len(raw)
            try:
                line = raw.decode("utf-8", "replace" if self.errors == "replace" else "strict")
            except UnicodeDecodeError as exc:
                byte = exc.object[exc.start]
                bad = _BadRecord(invalid_utf8(self.name, offset + exc.start, byte, skippable=True))
                if self.errors != "skip":
                    raise bad from None
                texts.append(None)
                continue
            if self.line_no == 1:
                line = line.removeprefix("\ufeff")
            text = self._checked(line, self.line_no)
            if text is not False:
                texts.append(text)
        return texts

    def _checked(self, line: str, line_no: int) -> str | Literal[False] | None:
        """:meth:`line_text`, with a bad record skipped (None) under ``errors="skip"``; False
        for a blank line."""
        try:
            text = self.line_text(line, line_no)
        except _BadRecord:
            if self.errors != "skip":
                raise
            return None
        return False if text is None else text

    def line_text(self, line: str, line_no: int) -> str | None:
        """The text of one decoded line (None for a blank line); raises _BadRecord for a bad record."""
        where = f"{self.name}:{line_no}"
        if not line.strip():
            return None
        skip = "fix the line or pass `errors=skip` to skip bad records"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            fix = skip if self.key_seen else "is this a JSONL file (one JSON object per line)?"
            raise _BadRecord(f"{where}: not valid JSON: {exc.msg} at column {exc.colno}; {fix}") from None
        if not isinstance(record, dict):
            raise _BadRecord(f"{where}: the line holds a JSON {json_kind(record)}, not an object; {skip}")
        value = field_value(record, self.key)
        if value is MISSING:
            keys = _key_list(record)
            if self.key_seen:
                raise _BadRecord(
                    f"{where}: this record has no key {self.key!r} (its keys: {keys}) though earlier "
                    f"records have it; {skip}"
                )
            if (
                self.chat is None
                and isinstance(record.get(CHAT_KEY), list)
                and not _starts_in(record, self.key)
            ):
                raise UsageError(
                    f"{where}: this record holds a chat ({CHAT_KEY!r}: a list of messages), not "
                    f"{self.key!r}: pass `chat_template=True` to render each chat through the tokenizer's "
                    f"chat template, or pick one field with {PICK_A_FIELD}"
                )
            raise _BadRecord(
                f"{where}: no key {self.key!r} in this record (its keys: {keys}); name the key that holds "
                "the text with `text_key`"
            )
        self.key_seen = True
        if self.chat is not None:
            try:
                value = self.chat.render(value)
            except ChatRecordError as exc:
                raise _BadRecord(f"{where}: {self.key!r}: {exc}; {skip}") from None
        elif not isinstance(value, str):
            raise _BadRecord(f"{where}: {self.key!r} holds a JSON {json_kind(value)}, not text; {skip}")
        return _no_lone_surrogates(value, where, self.errors)


def _starts_in(record: dict, key: str) -> bool:
    """Whether a dotted ``key`` begins with a key of the record (the path ends further in)."""
    return "." in key and key.partition(".")[0] in record


def json_scanner() -> Callable[[str, int], tuple[object, int]]:
    """The JSON scanner that parses plain records: ``scan(line, index)`` gives the value that
    starts at ``index`` and where it ends (what ``json.loads`` runs, without its checks around)."""
    return json.JSONDecoder().scan_once  # type: ignore[attr-defined,no-any-return]


def _key_list(record: dict, shown: int = 8) -> str:
    """A record's keys, quoted, the first ``shown`` of them."""
    keys = ", ".join(repr(key) for key in list(record)[:shown])
    more = f", ... ({len(record):,} in all)" if len(record) > shown else ""
    return (keys + more) or "none"


READ_BYTES = 1 << 20  # bytes of lines read at a time


def jsonl_pieces(
    stream: BinaryIO,
    name: str,
    errors: Errors,
    key: str,
    consumed: Callable[[], int],
    chat: ChatTemplate | None = None,
) -> Iterator[Documents | TextPiece]:
    """The records, as :class:`Documents` (:func:`~.pieces.record_runs`: the records of a block of
    lines, between bad ones); with ``errors="skip"`` bad records are counted, not raised.
    ``consumed()`` counts the source bytes read so far (compressed ones for a compressed input);
    ``chat``: the template that renders each record's chat (under ``key``) as its text."""
    records = _JsonlRecords(name, key, errors, chat)

    def blocks() -> Iterator[tuple[list[str | None], int]]:
        seen = 0
        for block in _line_blocks(stream):
            now = consumed()
            yield records.texts(block), now - seen
            seen = now
        yield [], consumed() - seen

    return record_runs(blocks())


def _line_blocks(stream: BinaryIO) -> Iterator[bytes]:
    """The stream in blocks of whole lines, each ending with a line feed (the last line of the
    input may not), as soon as they arrive (``read1``: a pipe is not waited on)."""
    held: list[bytes] = []  # the start of a line that the next read continues
    while data := stream.read1(READ_BYTES):  # type: ignore[attr-defined]
        end = data.rfind(b"\n") + 1
        if not end:
            held.append(data)
            continue
        yield b"".join([*held, data[:end]]) if held else data[:end]
        held = [data[end:]] if end < len(data) else []
    if held:
        yield b"".join(held)


def _is_text(value: str) -> bool:
    """Whether a decoded string is text (holds no lone surrogate from a JSON escape)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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
