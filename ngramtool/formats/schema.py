"""One schema for the JSON that describes indexes, streams and merged datasets, checked on open.

An index's ``manifest.json``, a stream's header manifest and a merged dataset's ``dataset.json``
share most fields; each field is described once here (its type and range), and
:func:`check_document` checks a whole document: the format name, the major version, then every
field. A document that breaks the schema raises :class:`NgramToolError` (exit 1) naming the file
and the field, e.g. ``out/a.ngidx/manifest.json is damaged: field 'boundary' is missing``.
Unknown fields are accepted (minor versions only add fields). Checks that need the arrays (counts
against shapes, document offsets) belong to the readers; see docs/formats.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..spec.hashspec import HashSpec
from ..util.errors import NgramToolError, UsageError
from .checksum import ALGORITHMS, HEX_DIGITS, field_names


class SchemaError(Exception):
    """A field breaks the schema; ``field`` is its dotted path (``spec.heads``, ``shards[3].path``)."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"field {field!r} {problem}")
        self.field = field
        self.problem = problem


Check = Callable[[Any, str], None]  # (value, field path): raises SchemaError


def _json_kind(value: Any) -> str:
    """How JSON calls the value's type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


def _expect(ok: bool, value: Any, field: str, wanted: str) -> None:
    if not ok:
        shown = json.dumps(value)
        shown = shown if len(shown) <= 40 else _json_kind(value)
        raise SchemaError(field, f"must be {wanted}, got {shown}")


def integer(least: int = 0) -> Check:
    """An integer (not a boolean) of at least ``least``."""

    def check(value: Any, field: str) -> None:
        _expect(isinstance(value, int) and not isinstance(value, bool), value, field, "an integer")
        _expect(value >= least, value, field, f"at least {least}")

    return check


def text(*choices: str, pattern: str | None = None) -> Check:
    """A string; one of ``choices`` when given; matching ``pattern`` (whole) when given."""

    def check(value: Any, field: str) -> None:
        _expect(isinstance(value, str), value, field, "a string")
        if choices:
            _expect(value in choices, value, field, "one of " + ", ".join(map(repr, choices)))
        if pattern is not None:
            _expect(re.fullmatch(pattern, value) is not None, value, field, f"a string like {pattern}")

    return check


def boolean(required: bool | None = None) -> Check:
    """A boolean; exactly ``required`` when given."""

    def check(value: Any, field: str) -> None:
        _expect(isinstance(value, bool), value, field, "true or false")
        if required is not None:
            _expect(value is required, value, field, json.dumps(required))

    return check


def nullable(inner: Check) -> Check:
    """null, or what ``inner`` accepts."""

    def check(value: Any, field: str) -> None:
        if value is not None:
            inner(value, field)

    return check


def list_of(item: Check) -> Check:
    """A list whose every item ``item`` accepts."""

    def check(value: Any, field: str) -> None:
        _expect(isinstance(value, list), value, field, "a list")
        for i, entry in enumerate(value):
            item(entry, f"{field}[{i}]")

    return check


def record(required: Mapping[str, Check], optional: Mapping[str, Check] | None = None) -> Check:
    """An object with every ``required`` field and, when present, the ``optional`` ones; other
    fields are accepted."""

    def check(value: Any, field: str) -> None:
        _expect(isinstance(value, dict), value, field or "(the document)", "a JSON object")
        for name, inner in required.items():
            path = f"{field}.{name}" if field else name
            if name not in value:
                raise SchemaError(path, "is missing")
            inner(value[name], path)
        for name, inner in (optional or {}).items():
            if name in value:
                inner(value[name], f"{field}.{name}" if field else name)

    return check


ANY_OBJECT = record({})
SHA256 = text(pattern="[0-9a-f]{64}")
VERSION_PATTERN = r"[0-9]+\.[0-9]+"
VERSION = text(pattern=VERSION_PATTERN)


@lru_cache(maxsize=32)
def _spec_from_json(fields_json: str) -> HashSpec:
    """A HashSpec from canonical JSON (cached: the shards of a dataset share one spec object, and
    with it the derived constants computed once)."""
    return HashSpec.from_dict(json.loads(fields_json))


def spec_from_record(spec_record: dict[str, Any]) -> HashSpec:
    """The HashSpec of a manifest's ``spec`` record (its fields, without fingerprint and derived)."""
    fields = {k: v for k, v in spec_record.items() if k not in ("fingerprint", "derived")}
    return _spec_from_json(json.dumps(fields, sort_keys=True))


def _spec(value: Any, field: str) -> None:
    record({"fingerprint": SHA256, "derived": ANY_OBJECT})(value, field)
    try:
        spec_from_record(value)
    except UsageError as exc:  # the spec's own validation names its fields: plainly, in a document
        raise SchemaError(field, f"is not a valid hash spec: {exc.spelled(str)}") from None


TOKENIZER = record(
    {"name": nullable(text()), "fingerprint": nullable(text()), "n_vocab": nullable(integer(1))}
)
VOCAB = record({"compressed": boolean(), "size": integer(1), "raw_size": integer(1), "fingerprint": SHA256})
ROWS = record({"dtype": text("<i4", "<i8"), "layout": text()}, {"storage": text("stored", "lazy")})


def with_checksum(prefix: str, fields: Mapping[str, Check]) -> Check:
    """A record of ``fields`` and exactly one checksum field named by its algorithm,
    ``PREFIX_xxh3_128`` or ``PREFIX_sha256`` (:mod:`ngramtool.formats.checksum`)."""
    names = field_names(prefix)
    digests = {
        name: text(pattern=f"[0-9a-f]{{{HEX_DIGITS[algorithm]}}}") for algorithm, name in names.items()
    }
    fields_and_digests = record(fields, digests)

    def check(value: Any, field: str) -> None:
        fields_and_digests(value, field)
        present = [name for name in names.values() if name in value]
        if len(present) != 1:
            where = f"{field}." if field else ""
            problem = "is missing" if not present else f"is given {len(present)} times ({', '.join(present)})"
            raise SchemaError(f"{where}{prefix}_*", f"{problem}: one checksum, {' or '.join(names.values())}")

    return check


_ARRAY_FIELDS = {"file": text(), "dtype": text(), "shape": list_of(integer(0))}
ARRAY = with_checksum("data", _ARRAY_FIELDS)
# Every index has these; it has "rows" (stored) or "token_crc32" (tokens-only, format 1.2).
ARRAY_NAMES = ("tokens", "doc_offsets", "lut")
ROW_ARRAYS = {
    "rows": ARRAY,
    "token_crc32": with_checksum("data", {**_ARRAY_FIELDS, "block_tokens": integer(1)}),
}

# What every description of hashed rows carries: index manifests, stream manifests, datasets.
_DESCRIPTION = {
    "format": text(),
    "format_version": VERSION,
    "tool_version": text(),
    "created": text(),
    "tokenizer": TOKENIZER,
    "vocab": VOCAB,
    "spec": _spec,
    "boundary": text("none", "reset"),
    "rows": ROWS,
}
# Format 1 defines one masking policy and rows that always include the column offsets.
INDEX_NEGATIVE_IDS = ("mask", "barrier")
"""How an output's masked (DEAD) tokens may have been hashed (``negative_ids``)."""
_ROW_POLICY = {"negative_ids": text(*INDEX_NEGATIVE_IDS), "offsets_added": boolean(True)}
_OPTIONAL = {"tokenization": ANY_OBJECT, "source_row_groups": list_of(integer(0))}

STREAM_MANIFEST = record(
    {**_DESCRIPTION, **_ROW_POLICY, "sources": list_of(text())},
    {**_OPTIONAL, "checksum": text(*ALGORITHMS)},  # the trailer's algorithm; absent: sha256 (before 1.2)
)
INDEX_MANIFEST = record(
    {
        **_DESCRIPTION,
        **_ROW_POLICY,
        "sources": list_of(text()),
        "num_tokens": integer(0),
        "num_documents": integer(0),
        "arrays": record(dict.fromkeys(ARRAY_NAMES, ARRAY), ROW_ARRAYS),
    },
    _OPTIONAL,
)
SHARD_RECORD = with_checksum(
    "manifest", {"path": text(), "num_tokens": integer(0), "num_documents": integer(0)}
)
LEFT_OUT = record({"path": text(), "reason": text()})
DATASET = record(
    {
        **_DESCRIPTION,
        "num_tokens": integer(0),
        "num_documents": integer(0),
        "num_shards": integer(1),
        "shards": list_of(SHARD_RECORD),
    },
    {**_OPTIONAL, "left_out": list_of(LEFT_OUT)},
)


def check_document(
    document: Any, schema: Check, *, source: Path | str, format_name: str, major: int, fix: str
) -> dict[str, Any]:
    """``document`` checked against ``schema``: an object of format ``format_name``, major version
    ``major``, every field valid. Raises NgramToolError naming ``source`` (and the field); ``fix``
    ends the message of a damaged document (what to do about it)."""
    if not isinstance(document, dict):
        raise NgramToolError(f"{source} is damaged: not a JSON object; {fix}")
    if document.get("format") != format_name:
        raise NgramToolError(f"{source}: not an {format_name} manifest (format {document.get('format')!r})")
    version = document.get("format_version")
    readable = isinstance(version, str) and re.fullmatch(VERSION_PATTERN, version)
    if readable and int(version.split(".")[0]) != major:
        raise NgramToolError(
            f"{source} uses {format_name} format {version}; this ngramtool reads {major}.x: upgrade ngramtool"
        )
    try:
        schema(document, "")
    except SchemaError as exc:
        raise NgramToolError(f"{source} is damaged: {exc}; {fix}") from None
    return document


def load_json_document(path: Path, **expect: Any) -> dict[str, Any]:
    """Read and check the JSON file at ``path`` (see :func:`check_document` for ``expect``)."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise NgramToolError(f"{path}: unreadable ({exc})") from None
    return check_document(document, source=path, **expect)
