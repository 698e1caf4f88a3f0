"""Which reader reads an input: its form, from ``input_format`` or from its name.

Forms: ``text`` (plain text: each input one document, or ``doc_sep`` separated), ``jsonl`` (one
JSON object per line, each a document, its text under ``text_key``), ``parquet`` (each row a
document, its text in column ``text_key``) and ``arrow`` (the same from Arrow files: a directory
written by HF ``datasets.save_to_disk``, or one ``.arrow`` file). Text and JSONL may be compressed
(gzip, bzip2, xz, zstd: known by their first bytes, so stdin works too); the name's compression
suffix is dropped before its form is read from it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from ..util.errors import UsageError
from .chat import CHAT_KEY
from .compressed import COMPRESSION_SUFFIXES
from .dependencies import require

FORMATS = ("text", "jsonl", "parquet", "arrow")
RECORD_FORMATS = frozenset({"jsonl", "parquet", "arrow"})
"""Forms whose documents are records, their text under a key or in a column."""
DEFAULT_TEXT_KEY = "text"
ERRORS = ("strict", "replace", "skip")
_SUFFIX_FORMATS = {
    ".jsonl": "jsonl",
    ".json": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".arrow": "arrow",
}
_NEEDS_PYARROW = frozenset({"parquet", "arrow"})
SAVED_DATASET_STATE = "state.json"  # what datasets.save_to_disk writes beside its Arrow files
SAVED_DATASET_DICT = "dataset_dict.json"


def input_form(source: str, input_format: str | None = None, text_key: str | None = None) -> str:
    """The form of one input (a path or ``-``): ``input_format`` when given, else from the name
    (``.jsonl``/``.json``/``.ndjson``, ``.parquet``, ``.arrow``, a ``save_to_disk`` directory;
    a compression suffix is looked through). Any other name is plain text, or JSONL when a
    ``text_key`` is named (JSONL was always read with ``json_key``)."""
    if input_format is not None:
        if input_format not in FORMATS:
            raise UsageError(f"`input_format` must be one of {', '.join(FORMATS)} (got {input_format!r})")
        return input_format
    if source != "-":
        path = Path(source)
        if path.is_dir() and is_saved_dataset(path):
            return "arrow"
        name = path.name.lower()
        stem = Path(name).stem if Path(name).suffix in COMPRESSION_SUFFIXES else name
        form = _SUFFIX_FORMATS.get(Path(stem).suffix)
        if form is not None:
            return form
    return "jsonl" if text_key is not None else "text"


def is_saved_dataset(path: Path) -> bool:
    """Whether a directory was written by ``datasets.save_to_disk`` (a Dataset or a DatasetDict)."""
    return (path / SAVED_DATASET_STATE).is_file() or (path / SAVED_DATASET_DICT).is_file()


def saved_dataset_files(path: Path) -> list[Path]:
    """The Arrow files of a ``save_to_disk`` directory, in order; a DatasetDict names its splits."""
    if (path / SAVED_DATASET_DICT).is_file() and not (path / SAVED_DATASET_STATE).is_file():
        splits = _json_field(path / SAVED_DATASET_DICT, "splits") or []
        shown = ", ".join(f"{path}/{split}" for split in splits) or "none recorded"
        raise UsageError(
            f"{path} holds a DatasetDict (splits: {', '.join(splits) or 'none'}): give one split's "
            f"directory ({shown})"
        )
    files = _json_field(path / SAVED_DATASET_STATE, "_data_files")
    if not isinstance(files, list) or not all(isinstance(f, dict) and "filename" in f for f in files):
        raise UsageError(f"{path}/{SAVED_DATASET_STATE} lists no Arrow files (`_data_files`): is it damaged?")
    return [path / entry["filename"] for entry in files]


def _json_field(path: Path, field: str) -> object:
    """One field of a small JSON file written beside a saved dataset."""
    try:
        return json.loads(path.read_text(encoding="utf-8")).get(field)
    except (OSError, ValueError, AttributeError) as exc:
        raise UsageError(f"{path}: unreadable ({exc})") from None


def check_reading(
    inputs: Sequence[str] = (),
    *,
    input_format: str | None = None,
    text_key: str | None = None,
    doc_sep: str | None = None,
    errors: str = "strict",
) -> list[str]:
    """The form of each input, after refusing reading options that do not fit them (called before
    any work; see :func:`check_input`): ``errors=skip`` skips bad records, so some input must
    have records."""
    check_errors(errors)
    if doc_sep == "":
        raise UsageError("`doc_sep` must not be empty")
    if text_key == "":
        raise UsageError("`text_key` must not be empty")
    forms = [check_input(source, input_format, text_key, doc_sep) for source in inputs]
    if errors == "skip" and not any(form in RECORD_FORMATS for form in forms):
        raise UsageError(
            "`errors=skip` skips bad records (JSONL lines, parquet or dataset rows) and applies only to "
            "them: plain text has no records; pass `errors=replace` to substitute U+FFFD for invalid UTF-8"
        )
    return forms


def check_errors(errors: str) -> None:
    """Refuse an unknown ``errors`` policy."""
    if errors not in ERRORS:
        raise UsageError(f"`errors` must be 'strict', 'replace' or 'skip' (got {errors!r})")


def check_input(source: str, input_format: str | None, text_key: str | None, doc_sep: str | None) -> str:
    """The form of one input, refusing what cannot read it: ``doc_sep`` cuts plain text only;
    parquet and Arrow need a file (not stdin) and pyarrow."""
    form = input_form(source, input_format, text_key)
    shown = "stdin" if source == "-" else source
    if doc_sep is not None and form in RECORD_FORMATS:
        raise UsageError(
            f"`doc_sep` cuts plain text into documents, but {shown} is read as {form}, whose records are "
            "documents already: drop `doc_sep`"
            + ("" if text_key is None else " (naming `text_key` reads records)")
        )
    if form in _NEEDS_PYARROW:
        if source == "-":
            raise UsageError(f"{form} input is read from a file, not from stdin: name the file")
        require("pyarrow", f"reading {form} input")
    return form


def record_key(forms: Sequence[str], text_key: str | None) -> str | None:
    """The key or column the record inputs are read under (None when every input is plain text)."""
    return (text_key or DEFAULT_TEXT_KEY) if any(form in RECORD_FORMATS for form in forms) else None


def text_key_of(text_key: str | None, json_key: str | None, chat_template: bool = False) -> str | None:
    """The text key given as ``text_key`` or as its older name ``json_key`` (not both); with
    ``chat_template``, :func:`chat_key` of it."""
    if text_key is not None and json_key is not None and text_key != json_key:
        raise UsageError("`json_key` is the older name of `text_key`: give one of them")
    return chat_key(text_key if text_key is not None else json_key, chat_template)


def chat_key(text_key: str | None, chat_template: bool) -> str | None:
    """The key a reading names: ``text_key``, or with ``chat_template`` ``messages`` when none is
    named (naming a key reads an input of no known suffix, or stdin, as JSONL)."""
    return CHAT_KEY if chat_template and text_key is None else text_key
