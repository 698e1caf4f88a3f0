"""``ngramtool tokenize``: raw (and canonical) token ids of text, printed, saved or shown."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Annotated

import numpy as np
import typer
from rich.table import Table
from rich.text import Text

from ..errors import UsageError
from ..formats.npy import atomic_npy
from ..pipeline import TokenChunk, iter_token_chunks
from ..textio import check_reading
from ..wording import plural
from .common import (
    AddEotOpt,
    DocSepOpt,
    EotTokenOpt,
    ErrorsOpt,
    ForceOpt,
    JsonKeyOpt,
    JsonOpt,
    NoCompressOpt,
    QuietOpt,
    SpecialOpt,
    TokenizerOpt,
    check_output_file,
    print_json,
    refuse_eot_token_without_add_eot,
    refuse_idle_options,
    refuse_repeated_inputs,
    resolve_vocab,
    skipped_note,
    stderr,
    stdout,
    warn_unsafe_cuts,
)
from .terminal import escape_controls

HELP = """Tokenize text into raw ids, or Engram canonical ids with --canonical.

Without -o the ids are printed, one line per document. With -o FILE.npy they are saved as
uint32 (raw) or int64 (canonical). --show renders the text with token boundaries and each
token's normalized key. The ids are those `hash` hashes: for an HF tokenizer.json, by default
exactly what the tokenizers library's encode(document).ids gives (see --special).

[bold]Examples[/]

  ngramtool tokenize examples/corpus.txt -o corpus.npy
  echo "Hello, World" | ngramtool tokenize - --canonical
  ngramtool tokenize notes.txt --show --limit 40
  ngramtool tokenize docs.jsonl --json-key text --json
  ngramtool tokenize chat.txt --tokenizer tokenizer.json --special none   # specials as text
"""


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("tokenize", help=HELP)(tokenize_command)


def tokenize_command(
    ctx: typer.Context,
    inputs: Annotated[list[str], typer.Argument(help="Text files, or - for stdin.")],
    tokenizer: TokenizerOpt = "cl100k_base",
    no_compress: NoCompressOpt = False,
    canonical: Annotated[
        bool, typer.Option("--canonical", help="Output canonical ids instead of raw ids.")
    ] = False,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Save the ids as .npy.")] = None,
    show: Annotated[
        bool, typer.Option("--show", help="Render token boundaries and normalized keys.")
    ] = False,
    limit: Annotated[int, typer.Option("--limit", help="Tokens shown by --show and --json.", min=1)] = 200,
    json_key: JsonKeyOpt = None,
    doc_sep: DocSepOpt = None,
    errors: ErrorsOpt = "strict",
    special: SpecialOpt = None,
    add_eot: AddEotOpt = False,
    eot_token: EotTokenOpt = None,
    force: ForceOpt = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Tokenize INPUT...."""
    refuse_repeated_inputs(inputs)
    refuse_eot_token_without_add_eot(ctx, add_eot)
    if output is not None and (show or as_json):
        raise UsageError("-o saves the ids; combine it with neither --show nor --json")
    if show and as_json:
        raise UsageError(
            "--show renders the tokens for reading and --json prints them as records: choose one"
        )
    if output is not None:
        check_output_file(output, force, inputs)
    else:
        refuse_idle_options(ctx, ["force"], "with -o FILE", "add -o FILE")
    if show or as_json:
        refuse_idle_options(ctx, ["canonical"], "to printed or saved ids (--show and --json list both)")
    else:
        fix = None if output is not None else "add --show"  # -o and --show do not combine
        refuse_idle_options(ctx, ["limit"], "with --show or --json", fix)
    check_reading(json_key, doc_sep, errors)
    tok, vocab = resolve_vocab(tokenizer, no_compress, quiet=quiet, special=special)
    counts = _Counts(
        iter_token_chunks(
            inputs,
            tok,
            json_key=json_key,
            doc_sep=doc_sep,
            errors=errors,
            add_eot=add_eot,
            eot_token=eot_token,
        )
    )
    chunks = iter(counts)
    if output is not None:
        count = 0
        with atomic_npy(output, np.dtype(np.int64 if canonical else np.uint32)) as writer:
            for chunk in chunks:
                ids = vocab.canonicalize(chunk.tokens, first_position=count) if canonical else chunk.tokens
                writer.append(ids)
                count += chunk.tokens.shape[0]
        if not quiet:
            kind = "canonical id" if canonical else "raw id"
            stderr.print(
                f"wrote {plural(count, kind)} to {output}{skipped_note(counts.skipped)}", markup=False
            )
        warn_unsafe_cuts(counts.hard_cuts)
        return
    if show or as_json:
        raw, more = _first_tokens(chunks, limit)
        records = [
            {
                "raw_id": r,
                "canonical_id": int(vocab.lut[r]),
                "text": tok.token_bytes(r).decode("utf-8", "replace"),
                "key": vocab.keys[int(vocab.lut[r])],
            }
            for r in raw.tolist()
        ]
        if as_json:
            print_json(
                {
                    "tokenizer": tok.name,
                    "vocab_size": vocab.size,
                    "limit": limit,
                    "truncated": more,
                    "skipped_records": counts.skipped,
                    "tokens": records,
                }
            )
        else:
            _render(records)
            if more:
                stderr.print(f"(first {plural(limit, 'token')}; --limit shows more)")
        counts.report(quiet or as_json)
        return
    position = 0
    printer = _IdPrinter()
    for chunk in chunks:
        ids = vocab.canonicalize(chunk.tokens, first_position=position) if canonical else chunk.tokens
        printer.write(ids, chunk.doc_starts)
        position += chunk.tokens.shape[0]
    sys.stdout.write("\n")
    counts.report(quiet)


class _Counts:
    """Passes chunks through, counting the unsafe text cuts and skipped records among them."""

    def __init__(self, chunks: Iterable[TokenChunk]) -> None:
        self.chunks = chunks
        self.hard_cuts = 0
        self.skipped = 0

    def __iter__(self) -> Iterator[TokenChunk]:
        for chunk in self.chunks:
            self.hard_cuts += chunk.hard_cuts
            self.skipped += chunk.skipped_records
            yield chunk

    def report(self, quiet: bool) -> None:
        """Warn about unsafe cuts (always) and say how many records were skipped (unless quiet)."""
        warn_unsafe_cuts(self.hard_cuts)
        if self.skipped and not quiet:
            stderr.print(f"note: skipped {plural(self.skipped, 'bad record')} (--errors skip)", markup=False)


def _first_tokens(chunks, limit: int) -> tuple[np.ndarray, bool]:
    """The first ``limit`` ids, and whether the input holds more."""
    parts = [np.zeros(0, dtype=np.uint32)]
    have = 0
    for chunk in chunks:
        taken = chunk.tokens[: limit - have]
        parts.append(taken)
        have += taken.shape[0]
        if chunk.tokens.shape[0] > taken.shape[0]:
            return np.concatenate(parts), True
    return np.concatenate(parts), False


class _IdPrinter:
    """Prints ids space-separated, one line per document (an empty document is an empty line)."""

    def __init__(self) -> None:
        self.started = False  # whether the first document has begun
        self.line_has_ids = False

    def write(self, ids: np.ndarray, doc_starts: np.ndarray) -> None:
        """Print a chunk's ids; ``doc_starts`` are the positions in it where documents start."""
        bounds = [0, *doc_starts.tolist(), ids.shape[0]]
        starts = [False, *[True] * len(doc_starts)]
        for lo, hi, is_start in zip(bounds[:-1], bounds[1:], starts, strict=True):
            if is_start:
                if self.started:
                    sys.stdout.write("\n")
                self.started, self.line_has_ids = True, False
            if hi > lo:
                if self.line_has_ids:
                    sys.stdout.write(" ")
                sys.stdout.write(" ".join(map(str, ids[lo:hi].tolist())))
                self.line_has_ids = True


def _render(records: list[dict]) -> None:
    styles = ("black on bright_cyan", "black on bright_yellow")
    separator = "" if stdout.color_system else "|"  # without colour, mark the boundaries
    text = Text()
    for i, record in enumerate(records):
        text.append(escape_controls(record["text"]), style=styles[i % 2])
        text.append(separator)
    stdout.print(text)
    grid = Table(title=plural(len(records), "token"), title_justify="left")
    for name in ("#", "raw id", "text", "canonical", "normalized key"):
        grid.add_column(name, justify="right" if name in ("#", "raw id", "canonical") else "left")
    for i, record in enumerate(records):
        grid.add_row(
            str(i),
            str(record["raw_id"]),
            repr(record["text"]),
            str(record["canonical_id"]),
            repr(record["key"]),
        )
    stdout.print(grid)
