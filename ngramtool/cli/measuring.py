"""What the measuring commands (``collisions``, ``cache``) share: their input as the library takes
it, the progress of a counting pass, the --plot file, and the files written
beside the report."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any

import typer

from ..analysis.measurement import MeasureOptions, saved_parts
from ..formats.artifacts import Kind
from ..inputs.stream import decide_source
from ..model.mapping import NgramHashMapping
from ..model.presets import default_compress, default_tokenizer
from ..util.atomic import check_output_file, staged_file
from ..util.errors import NgramToolError, UsageError
from .options import (
    CORPUS_FILES,
    STDIN_DEFAULT,
    CorpusVocabularyOptions,
    MaskingOptions,
    ReadingOptions,
    SpecChoice,
    TokenFileOptions,
    corpus_inputs,
    refuse_idle_options,
)
from .render import InputProgress, note_assumed_tokenizer, stderr

PLOT_SUFFIXES = {".png", ".pdf", ".svg"}
# What an index, a merged dataset or a stream carries itself: these options do nothing with one.
CARRIED = (
    "tokenizer", "no_compress", "vocab_size", "max_ngram", "heads", "layers", "seed", "pad_id",
    "spec_file", "preset", "mask_token", "masked", "allow_vocab_mismatch", "boundary",
)  # fmt: skip
# What saved type counts may change of the spec they recorded.
PART_FIELDS = ("heads", "layers", "seed", "spec_file")

MeasuredInputs = Annotated[
    list[str] | None,
    corpus_inputs(f"{CORPUS_FILES} {STDIN_DEFAULT}, an index directory, or one token file."),
]
MaxTokensOpt = Annotated[
    int | None, typer.Option("--max-tokens", help="Read only the first N tokens.", min=1)
]


class CountingProgress(InputProgress):
    """A progress bar over the input bytes (on a terminal) with the counting rate, or plain lines
    (off a terminal)."""

    def __init__(self, bar: Any, quiet: bool) -> None:
        super().__init__(bar, "counting", quiet)

    def started(self, total_bytes: int | None, jobs: int, engine: str) -> None:
        super().started(total_bytes, jobs, engine)
        self.bar.update(self.task, total=total_bytes)

    def advanced(self, nbytes: int, ntokens: int) -> None:
        super().advanced(nbytes, ntokens)
        self.bar.update(self.task, advance=nbytes, description=f"counting {self.rate() / 1e6:.2f}M tok/s")


def plot_figure(plot: Path, force: bool, inputs: Sequence[str]) -> type:
    """matplotlib's Figure for the --plot file ``plot``, checked before the long pass: a usage
    error for a file that exists (without --force), is an input, or has a suffix no format has;
    a one-line error saying how to get matplotlib when it is missing."""
    try:
        from matplotlib.figure import Figure  # no pyplot, no GUI backend
    except ImportError:
        raise NgramToolError("--plot needs matplotlib: pip install 'ngramtool[plot]'") from None
    check_output_file(plot, force, inputs, what="--plot file")
    if plot.suffix.lower() not in PLOT_SUFFIXES:
        raise UsageError(f"--plot {plot}: use one of {', '.join(sorted(PLOT_SUFFIXES))}")
    return Figure


def save_plot(figure: Any, path: Path) -> None:
    """Write ``figure`` to ``path`` in the format its suffix names, beside it and renamed into
    place, as every output."""
    try:
        with staged_file(path) as tmp, tmp.open("wb") as handle:
            figure.savefig(handle, dpi=120, format=path.suffix.lstrip(".").lower())
    except OSError as exc:
        raise NgramToolError(f"cannot write the plot {path}: {exc.strerror}") from None


class SideOutputs:
    """The files a measuring command writes beside its report (--plot, --save-types), said after
    the report: ``wrote FILE`` on stderr (unless quiet), or the failure. A failed file never costs
    the report: every file is tried, the report printed, then :meth:`finish` fails (exit 1)."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.written: list[Path] = []
        self.failures: list[NgramToolError] = []

    def write(self, path: Path, write: Callable[[], None]) -> None:
        """Write ``path`` with ``write``, keeping its failure for :meth:`finish`."""
        try:
            write()
        except NgramToolError as exc:
            self.failed(exc)
        else:
            self.wrote(path)

    def wrote(self, path: Path) -> None:
        """``path`` was written (by the library, while measuring)."""
        self.written.append(path)

    def failed(self, error: NgramToolError) -> None:
        """A file could not be written (by the library: its figures stand)."""
        self.failures.append(error)

    def finish(self) -> None:
        """Say what was written; then raise the failure (several: one line naming each)."""
        sys.stdout.flush()  # the report first
        if not self.quiet:
            for path in self.written:
                stderr.print(f"wrote {path}", markup=False)
        if len(self.failures) == 1:
            raise self.failures[0]
        if self.failures:
            raise NgramToolError("; ".join(map(str, self.failures)))


@dataclass(frozen=True)
class Measured:
    """A measuring command's input as the library takes it: the source, the mapping of text or a
    token file (None: an artifact's own, or saved counts), the spec fields of saved counts, and
    the reading of the pass."""

    source: Any
    mapping: NgramHashMapping | None
    spec_fields: dict[str, Any] | None
    options: MeasureOptions
    assumed: bool = False  # a token file's ids taken as the default tokenizer's (none was named)

    def note_assumed(self, quiet: bool) -> None:
        """Say which tokenizer a token file's ids are taken to come from, when none was named."""
        if self.assumed and self.mapping is not None and self.mapping.tokenizer is not None:
            name, raw = self.mapping.tokenizer.name, self.mapping.raw_size
            note_assumed_tokenizer(self.source.paths[0], name, raw, quiet)


def measured_input(
    ctx: typer.Context,
    inputs: list[str],
    tokens: TokenFileOptions,
    vocab: CorpusVocabularyOptions,
    chosen: SpecChoice,
    reading: ReadingOptions,
    options: MeasureOptions,
    *,
    masking: MaskingOptions | None = None,
    sweep: bool = False,
) -> Measured:
    """What ``collisions`` and ``cache`` measure: the input's kind decided once (saved counts, an
    artifact, or text and token files, which the options' mapping reads), the options that would
    do nothing with it refused. ``sweep``: --table is a sweep, analysed over any input."""
    if saved_parts(inputs):
        merging = (
            *PART_FIELDS,
            "inputs",
            "table",
            "save_types",
            "plot",
            "force",
            "as_json",
            "quiet",
            "per_head",
        )
        counting = [param.name for param in ctx.command.params if param.name not in merging]
        refuse_idle_options(ctx, counting, "to counting, not to saved partial counts")
        fields = {**chosen.fields, "spec_file": chosen.spec_file}
        parts = {name: fields[name] for name in ("heads", "layer_ids", "seed", "spec_file")}
        return Measured(inputs, None, {k: v for k, v in parts.items() if v is not None}, options)
    source, kind = decide_source(tokens.source(inputs, reading))
    if kind is not Kind.TOKEN_FILE:
        refuse_idle_options(
            ctx, ["token_format", "token_dtype", "eos_id"], "to a token file (--tokens FILE, or one INPUT)"
        )
    if kind in (Kind.INDEX, Kind.DATASET, Kind.STREAM):
        carried = [*CARRIED, *(() if sweep else ("table",))]
        refuse_idle_options(ctx, carried, f"to text and token files: {inputs[0]} carries its own")
        return Measured(source, None, None, options)
    fields = chosen.fields if not sweep else {k: v for k, v in chosen.fields.items() if k != "table_sizes"}
    canonical = kind is Kind.TOKEN_FILE and vocab.tokenizer is None and vocab.vocab_size is not None
    if vocab.vocab_size is not None and not canonical:
        raise UsageError("--vocab-size applies only to a token file without --tokenizer")
    if canonical:
        refuse_idle_options(ctx, ["no_compress"], "with a tokenizer, and --vocab-size replaces it")
    mapping = replace(chosen, fields=fields).mapping(
        None if canonical else vocab.tokenizer or default_tokenizer(chosen.preset),
        special=reading.special,
        compress=not vocab.no_compress and default_compress(chosen.preset),
        vocab_size=vocab.vocab_size if canonical else None,
        masking=masking,
        engine=reading.engine(),
    )
    assumed = kind is Kind.TOKEN_FILE and vocab.tokenizer is None and vocab.vocab_size is None
    return Measured(source, mapping, None, options, assumed)
