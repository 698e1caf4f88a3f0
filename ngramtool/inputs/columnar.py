"""Parquet files and Arrow files (HF ``datasets.save_to_disk`` directories): each row one document,
its text in one string column (or its chat in a column of lists of messages, rendered through a
chat template: :mod:`.chat`), read in record batches of that column alone so that memory stays
bounded whatever the file's size.

Parquet is read row group by row group (``row_groups`` selects a range of them: a sharded run can
split one large file); Arrow files (the IPC stream format ``datasets`` writes) batch by batch from
a memory map. Both need pyarrow (the ``parquet`` extra).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..util.errors import NgramToolError, UsageError
from .chat import CHAT_KEY, ChatRecordError, ChatTemplate
from .dependencies import require
from .forms import saved_dataset_files
from .pieces import Documents, Errors, TextPiece, record_runs

BATCH_ROWS = 1024  # rows decoded at a time: a batch of long documents stays a few MiB
READ_BUFFER_BYTES = 1 << 20  # parquet is read through a buffer of this size, page by page: never a
# whole row group's column chunk at once (which can be hundreds of MB in a large file)


def _pyarrow() -> Any:
    return require("pyarrow", "reading parquet and Arrow input")


def _unreadable(name: str, kind: str, exc: Exception) -> NgramToolError:
    """The error for a parquet or Arrow file that pyarrow cannot read."""
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return NgramToolError(
        f"{name}: not a readable {kind} file ({detail}): it is truncated or damaged (an interrupted "
        "download or copy?); get it again"
    )


def text_column(schema: Any, name: str, key: str, chat: bool = False) -> None:
    """Refuse a schema without a string column ``key`` (with ``chat``: a column of lists, the
    messages): the message lists the columns there are."""
    pa = _pyarrow()
    if key not in schema.names:
        if not chat and CHAT_KEY in schema.names and _holds_chats(pa, schema.field(CHAT_KEY).type):
            raise UsageError(
                f"{name}: no column {key!r}, and column {CHAT_KEY!r} holds chats: pass `chat_template=True` "
                "to render each chat through the tokenizer's chat template, or name a string column with "
                "`text_key`"
            )
        strings = [field.name for field in schema if _holds_strings(pa, field.type)]
        hint = f"; its string columns: {', '.join(strings)}" if strings else ""
        raise NgramToolError(
            f"{name}: no column {key!r} (its columns: {', '.join(schema.names) or 'none'}){hint}; "
            "name the column that holds the text with `text_key`"
        )
    kind = schema.field(key).type
    if chat and not _holds_chats(pa, kind):
        raise NgramToolError(
            f"{name}: column {key!r} holds {kind}, not chats (lists of messages); name the column that "
            "holds them with `text_key`"
        )
    if not chat and not _holds_strings(pa, kind):
        raise NgramToolError(
            f"{name}: column {key!r} holds {kind}, not strings; name the column that holds the text "
            "with `text_key`"
        )


def _holds_strings(pa: Any, kind: Any) -> bool:
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind) or _is_string_view(pa, kind))


def _holds_chats(pa: Any, kind: Any) -> bool:
    """Whether a column's type can hold chats: lists (of messages)."""
    return bool(pa.types.is_list(kind) or pa.types.is_large_list(kind))


def _is_string_view(pa: Any, kind: Any) -> bool:
    check = getattr(pa.types, "is_string_view", None)
    return bool(check is not None and check(kind))


def _row_texts(
    values: list[Any], name: str, key: str, first_row: int, errors: Errors, chat: ChatTemplate | None
) -> list[str | None]:
    """The rows' texts (their chats rendered by ``chat``); a null, or a chat the template refuses,
    is a bad record: an error, or (``errors="skip"``) None, skipped and counted by
    :func:`~.pieces.record_runs`."""
    if errors != "skip" and None in values:
        row = first_row + values.index(None)
        raise NgramToolError(
            f"{name}: row {row:,} has no text (null in column {key!r}); pass `errors=skip` to skip such rows"
        )
    if chat is None:
        return values
    where = f"{name}: row {{:,}}"
    return [
        None if value is None else _rendered(chat, value, where.format(first_row + i), key, errors)
        for i, value in enumerate(values)
    ]


def _rendered(chat: ChatTemplate, value: Any, where: str, key: str, errors: Errors) -> str | None:
    """One row's chat rendered; None for a chat the template refuses under ``errors="skip"``."""
    try:
        return chat.render(value)
    except ChatRecordError as exc:
        if errors == "skip":
            return None
        raise NgramToolError(f"{where}: {key!r}: {exc}; pass `errors=skip` to skip such rows") from None


def parquet_row_groups(path: str) -> int:
    """How many row groups a parquet file has (for splitting it across shards)."""
    return int(_open_parquet(path).metadata.num_row_groups)


def parquet_share(path: str, row_groups: tuple[int, int] | None) -> int:
    """The bytes of a parquet file that ``row_groups`` (first, stop) stand for (for progress): the
    file's size in proportion to their rows."""
    size = Path(path).stat().st_size
    if row_groups is None:
        return size
    meta = _open_parquet(path).metadata
    total = meta.num_rows or 1
    rows = sum(meta.row_group(i).num_rows for i in range(*row_groups))
    return size * rows // total


def _open_parquet(path: str) -> Any:
    pq = require("pyarrow.parquet", "reading parquet input")
    try:
        return pq.ParquetFile(path, buffer_size=READ_BUFFER_BYTES, pre_buffer=False)
    except FileNotFoundError:
        raise UsageError(f"input file not found: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"input {path} is a directory; give the parquet files inside it") from None
    except Exception as exc:  # pyarrow's ArrowInvalid / OSError for a damaged footer
        raise _unreadable(path, "parquet", exc) from None


def parquet_pieces(
    path: str,
    key: str,
    errors: Errors,
    row_groups: tuple[int, int] | None = None,
    chat: ChatTemplate | None = None,
) -> Iterator[Documents | TextPiece]:
    """The rows of a parquet file (or of the row groups ``row_groups`` = (first, stop)), a batch of
    rows at a time as :class:`Documents`, read one column in batches of ``BATCH_ROWS`` rows;
    ``chat``: the template that renders the chat of each row."""
    pa = _pyarrow()
    with _open_parquet(path) as handle:
        meta = handle.metadata
        text_column(handle.schema_arrow, path, key, chat is not None)
        first, stop = row_groups or (0, meta.num_row_groups)
        if not 0 <= first <= stop <= meta.num_row_groups:
            raise UsageError(
                f"{path} has {meta.num_row_groups} row groups; [{first}, {stop}) is not among them"
            )
        size = Path(path).stat().st_size
        total = meta.num_rows or 1
        row = sum(meta.row_group(i).num_rows for i in range(first))
        try:
            batches = handle.iter_batches(
                batch_size=BATCH_ROWS, row_groups=list(range(first, stop)), columns=[key], use_threads=False
            )
            yield from record_runs(_parquet_blocks(batches, path, key, errors, chat, row, size, total))
        except (pa.ArrowException, OSError) as exc:
            raise _unreadable(path, "parquet", exc) from None


def _parquet_blocks(
    batches: Iterable[Any],
    path: str,
    key: str,
    errors: Errors,
    chat: ChatTemplate | None,
    row: int,
    size: int,
    total: int,
) -> Iterator[tuple[list[str | None], int]]:
    """(texts, file bytes) of each record batch: the bytes are the file's size in proportion to the
    rows read; ``row`` is the first batch's first row, ``total`` the file's rows."""
    taken = 0  # file bytes accounted for so far
    for batch in batches:
        share = size * (row + batch.num_rows) // total - taken
        taken += share
        yield _row_texts(batch.column(0).to_pylist(), path, key, row, errors, chat), share
        row += batch.num_rows


def arrow_pieces(
    source: str, key: str, errors: Errors, chat: ChatTemplate | None = None
) -> Iterator[Documents | TextPiece]:
    """The rows of a ``datasets.save_to_disk`` directory (its Arrow files in order) or of one Arrow
    file, a record batch at a time as :class:`Documents`; ``chat``: the template that renders the
    chat of each row."""
    path = Path(source)
    files = saved_dataset_files(path) if path.is_dir() else [path]

    def blocks() -> Iterator[tuple[list[str | None], int]]:
        row = 0
        for file in files:
            for values, nbytes in _arrow_batches(file, key, chat is not None):
                yield _row_texts(values, str(file), key, row, errors, chat), nbytes
                row += len(values)

    yield from record_runs(blocks())


def _arrow_batches(file: Path, key: str, chat: bool) -> Iterator[tuple[list[Any], int]]:
    """(column values, file bytes) of each record batch of an Arrow file (stream or file format);
    ``chat``: the column holds chats, not strings."""
    pa = _pyarrow()
    if not file.is_file():
        raise UsageError(f"input file not found: {file}")
    try:
        with pa.memory_map(str(file)) as source:
            reader = _arrow_reader(pa, source)
            text_column(reader.schema, str(file), key, chat)
            index = reader.schema.get_field_index(key)
            position = 0
            for batch in reader:
                now = source.tell()
                yield batch.column(index).to_pylist(), now - position
                position = now
            if position < source.size():
                yield [], source.size() - position
    except NgramToolError:
        raise
    except (pa.ArrowException, OSError) as exc:
        raise _unreadable(str(file), "Arrow", exc) from None


def _arrow_reader(pa: Any, source: Any) -> Any:
    """A batch iterator over an Arrow IPC stream (what ``datasets`` writes) or IPC file."""
    try:
        return pa.ipc.open_stream(source)
    except pa.ArrowInvalid:
        source.seek(0)
        file_reader = pa.ipc.open_file(source)
        return _FileBatches(file_reader)


class _FileBatches:
    """The batches of an Arrow IPC file with the stream reader's ``schema`` and iteration."""

    def __init__(self, reader: Any) -> None:
        self.schema = reader.schema
        self._reader = reader

    def __iter__(self) -> Iterator[Any]:
        for i in range(self._reader.num_record_batches):
            yield self._reader.get_batch(i)
