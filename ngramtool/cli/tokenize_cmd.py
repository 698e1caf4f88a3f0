"""``ngramtool tokenize``: raw (and canonical) token ids of text, printed, saved or shown."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import numpy as np
import typer
from rich.table import Table
from rich.text import Text

from ..model.presets import default_compress, default_tokenizer
from ..tools.tokenization import Tokenized
from ..util.errors import UsageError
from ..util.wording import plural
from .command import Command
from .options import (
    TOKENIZER_OPTIONS,
    AllowVocabMismatchOpt,
    CorpusInputsArg,
    ForceOpt,
    JsonOpt,
    QuietOpt,
    ReadingOptions,
    SpecChoice,
    TokenizerOptions,
    given_options,
    inputs_or_stdin,
    option_groups,
    refuse_idle_options,
)
from .render import print_json, print_notes, print_table, skipped_note, stderr, stdout, warn_unsafe_cuts
from .terminal import escape_controls

HELP = """Tokenize text into raw ids, or Engram canonical ids with --canonical.

Without -o the ids are printed, one line per document. With -o FILE.npy they are saved as
uint32 (raw) or int64 (canonical). --show renders the text with token boundaries and each
token's normalized key. The ids are those `hash` hashes: for an HF tokenizer.json, by default
exactly what the tokenizers library's encode(document).ids gives (see --special).

[bold]Examples[/]

  ngramtool tokenize examples/corpus.txt -o corpus.npy
  echo "Hello, World" | ngramtool tokenize --canonical    # no INPUT: reads stdin
  ngramtool tokenize notes.txt --show --limit 40
  ngramtool tokenize docs.jsonl.gz --json
  ngramtool tokenize train.parquet --text-key content -o ids.npy
  ngramtool tokenize chat.txt --tokenizer tokenizer.json --special none   # specials as text
  ngramtool tokenize notes.txt --preset tutorial --canonical    # the tutorial's raw GPT-2 ids
"""


TOKENIZE_READING = ReadingOptions.placeholder(
    "input_format",
    "text_key",
    "chat_template",
    "doc_sep",
    "errors",
    "special",
    "add_eot",
    "eot_token",
    "tokenizer_engine",
    "no_engine_check",
)
"""Tokenize's reading options: the form of the text first, the end-of-sequence token last."""


@option_groups
def tokenize_command(
    ctx: typer.Context,
    inputs: CorpusInputsArg = None,
    vocab: TokenizerOptions = TOKENIZER_OPTIONS,
    preset: Annotated[
        str | None,
        typer.Option(
            "--preset",
            help="The tokenizer and vocabulary of a preset (tutorial: gpt2, raw ids); a released "
            "model's preset checks that the tokenizer is the model's.",
        ),
    ] = None,
    allow_vocab_mismatch: AllowVocabMismatchOpt = False,
    canonical: Annotated[
        bool, typer.Option("--canonical", help="Output canonical ids instead of raw ids.")
    ] = False,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Save the ids as .npy.")] = None,
    show: Annotated[
        bool, typer.Option("--show", help="Render token boundaries and normalized keys.")
    ] = False,
    limit: Annotated[int, typer.Option("--limit", help="Tokens shown by --show and --json.", min=1)] = 200,
    reading: ReadingOptions = TOKENIZE_READING,
    force: ForceOpt = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Tokenize INPUT...."""
    reading.refuse_eot_token_without_add_eot(ctx)
    if output is not None and (show or as_json):
        raise UsageError("-o saves the ids; combine it with neither --show nor --json")
    if show and as_json:
        raise UsageError(
            "--show renders the tokens for reading and --json prints them as records: choose one"
        )
    if output is None:
        refuse_idle_options(ctx, ["force"], "with -o FILE", "add -o FILE")
    if show or as_json:
        refuse_idle_options(ctx, ["canonical"], "to printed or saved ids (--show and --json list both)")
    else:
        fix = None if output is not None else "add --show"  # -o and --show do not combine
        refuse_idle_options(ctx, ["limit"], "with --show or --json", fix)
    reader = reading.reader(inputs_or_stdin(inputs, "tokenize"))
    chosen = SpecChoice(preset, allow_vocab_mismatch=allow_vocab_mismatch)
    named = "tokenizer" in given_options(ctx) or preset is None
    tokenizer = vocab.tokenizer if named else default_tokenizer(preset)
    compress = not vocab.no_compress and default_compress(preset)
    engine = reading.engine()
    text = Tokenized(
        reader,
        lambda: chosen.mapping(tokenizer, special=reading.special, compress=compress, engine=engine),
    )
    print_notes(text.notes, quiet or as_json)
    if output is not None:
        count = text.save(output, canonical=canonical, force=force)
        if not quiet:
            kind = "canonical id" if canonical else "raw id"
            held = plural(count, kind) if count else "no ids (the input holds no tokens)"
            stderr.print(f"wrote {held} to {output}{skipped_note(text.skipped)}", markup=False)
        warn_unsafe_cuts(text.hard_cuts)
        return
    if show or as_json:
        records, more = text.first(limit)
        if as_json:
            print_json(
                {
                    "tokenizer": text.tokenizer_name,
                    "vocab_size": text.vocab.size,
                    "limit": limit,
                    "truncated": more,
                    "skipped_records": text.skipped,
                    "tokens": records,
                }
            )
        else:
            _render(records)
            if more:
                stderr.print(f"(first {plural(limit, 'token')}; --limit shows more)")
        _report_counts(text, quiet or as_json)
        return
    printer = _IdPrinter()
    for chunk, ids in text.chunks(canonical):
        printer.write(ids, chunk.doc_starts)
    sys.stdout.write("\n")
    _report_counts(text, quiet)


def _report_counts(text: Tokenized, quiet: bool) -> None:
    """Warn about unsafe cuts (always) and say how many records were skipped (unless quiet)."""
    warn_unsafe_cuts(text.hard_cuts)
    if text.skipped and not quiet:
        stderr.print(f"note: skipped {plural(text.skipped, 'bad record')} (--errors skip)", markup=False)


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
        # Token texts are shown as Python writes them: never wrapped inside the quotes.
        grid.add_column(
            name, justify="right" if name in ("#", "raw id", "canonical") else "left", no_wrap=True
        )
    for i, record in enumerate(records):
        grid.add_row(
            str(i),
            str(record["raw_id"]),
            repr(record["text"]),
            str(record["canonical_id"]),
            repr(record["key"]),
        )
    print_table(grid)


COMMAND = Command("tokenize", HELP, tokenize_command)
