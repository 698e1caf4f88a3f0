"""What a run reads, as values: text inputs with their reading options, or a token file.

:class:`CorpusReader` is a corpus as datatrove's readers take one (paths, form, text key,
separator, error policy) plus how each document ends (``add_eot``); :class:`TokenFileReader` is a
token file with its reading options. Hashing, collisions and tokenize take either; both are plain
frozen values that cross to other processes as JSON (:meth:`to_dict` / ``from_dict``), and their
options are checked once, when the value is made.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from .forms import chat_key, check_errors, input_form, record_key


@dataclass(frozen=True)
class CorpusReader:
    """Text inputs and how they are read.

    Attributes:
        paths: files, HF ``datasets.save_to_disk`` directories, or ``-`` for stdin.
        input_format: the form of every input (``text``, ``jsonl``, ``parquet``, ``arrow``);
            None: each input's name decides.
        text_key: the key (JSONL; a dotted path reads a nested field: ``messages.-1.content``) or
            column (parquet, datasets) of the text; None: ``text`` (``messages`` with
            ``chat_template``).
        doc_sep: plain text: the literal string that separates documents.
        errors: bad input: ``strict`` (stop), ``replace`` (invalid UTF-8 by U+FFFD) or ``skip``
            (bad records skipped and counted).
        add_eot: append the tokenizer's end-of-sequence token after each document.
        eot_token: the token ``add_eot`` appends (None: from the tokenizer's configuration).
        row_groups: (first, stop): only these row groups of a parquet input (a shard's share).
        chat_template: each record holds a chat (a list of ``{role, content}`` messages), rendered
            through the tokenizer's chat template as HF ``apply_chat_template`` renders it
            (docs/inputs.md#chat-data).

    Examples:
        >>> from ngramtool import CorpusReader
        >>> CorpusReader(["docs.jsonl"], text_key="content").paths
        ('docs.jsonl',)
    """

    paths: tuple[str, ...] = ()
    input_format: str | None = None
    text_key: str | None = None
    doc_sep: str | None = None
    errors: str = "strict"
    add_eot: bool = False
    eot_token: str | None = None
    row_groups: tuple[int, int] | None = None
    chat_template: bool = False

    def __post_init__(self) -> None:
        paths = (self.paths,) if isinstance(self.paths, str | Path) else self.paths
        object.__setattr__(self, "paths", tuple(str(path) for path in paths))
        object.__setattr__(self, "text_key", chat_key(self.text_key, self.chat_template))
        check_errors(self.errors)

    @property
    def reading(self) -> dict[str, Any]:
        """The reading options as :func:`ngramtool.inputs.encoding.iter_token_chunks` takes them."""
        return {
            "input_format": self.input_format,
            "text_key": self.text_key,
            "doc_sep": self.doc_sep,
            "errors": self.errors,
            "row_groups": self.row_groups,
            "add_eot": self.add_eot,
            "eot_token": self.eot_token,
            "chat_template": self.chat_template,
        }

    def record_key(self) -> str | None:
        """The key or column the records' text came from (None: no input is made of records)."""
        return record_key(
            [input_form(path, self.input_format, self.text_key) for path in self.paths], self.text_key
        )

    def with_paths(self, paths: Sequence[str], row_groups: tuple[int, int] | None = None) -> CorpusReader:
        """The same reading options over other paths (a shard's input)."""
        return replace(self, paths=tuple(paths), row_groups=row_groups)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (:meth:`from_dict`)."""
        return {"kind": "text", **asdict(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CorpusReader:
        """The reader :meth:`to_dict` describes."""
        fields = {key: value for key, value in data.items() if key != "kind"}
        groups = fields.get("row_groups")
        return cls(
            **{
                **fields,
                "paths": tuple(fields["paths"]),
                "row_groups": None if groups is None else tuple(groups),
            }
        )


@dataclass(frozen=True)
class TokenFileReader:
    """A token file and how it is read (docs/token-files.md).

    Attributes:
        path: ``.npy``, nanoGPT, llm.c or Megatron ``.bin``, datatrove ``.ds``, or raw ids.
        format: its format (None: detected from its name and header).
        dtype: a headerless file's dtype (``uint16`` or ``uint32``; ``format="raw"``).
        eos_id: the id that ends each document of a file that records no documents.

    Examples:
        >>> from ngramtool import TokenFileReader
        >>> TokenFileReader("part-0.npy", format="raw", dtype="uint16", eos_id=50279).options
        {'dtype': 'uint16', 'eos_id': 50279}
    """

    path: str
    format: str | None = None
    dtype: str | None = None
    eos_id: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", str(self.path))

    @property
    def paths(self) -> tuple[str, ...]:
        """The one path, as a tuple (as :class:`CorpusReader` gives its paths)."""
        return (self.path,)

    @property
    def options(self) -> dict[str, Any]:
        """The reading options as :func:`ngramtool.formats.tokenfiles.open_token_file` takes them."""
        return {"dtype": self.dtype, "eos_id": self.eos_id}

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (:meth:`from_dict`)."""
        return {"kind": "tokens", **asdict(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TokenFileReader:
        """The reader :meth:`to_dict` describes."""
        return cls(**{key: value for key, value in data.items() if key != "kind"})


Source = CorpusReader | TokenFileReader


def source_from_dict(data: dict[str, Any]) -> Source:
    """The reader of :meth:`CorpusReader.to_dict` or :meth:`TokenFileReader.to_dict`."""
    return TokenFileReader.from_dict(data) if data["kind"] == "tokens" else CorpusReader.from_dict(data)
