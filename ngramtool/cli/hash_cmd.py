"""``ngramtool hash``: text or token files -> an index directory of Engram rows."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from ..inputs.sources import TokenFileReader
from ..inputs.stream import decide_source
from ..model.mapping import NgramHashMapping
from ..model.presets import default_compress, default_tokenizer, pad_defaulted
from ..run.executors import HashEvents, HashOutcome, run_hash
from ..run.planning import HashPlan
from ..run.request import HashRequest, OutputOptions, RunOptions
from ..run.summary import JobSummary
from ..tokenizers import DEFAULT_TOKENIZER
from ..util.errors import UsageError
from ..util.wording import plural
from .command import Command
from .options import (
    CORPUS_VOCABULARY_OPTIONS,
    MASKING_OPTIONS,
    READING_OPTIONS,
    SPEC_OPTIONS,
    TEXT_READING_OPTIONS,
    TOKEN_FILE_OPTIONS,
    BackendOpt,
    ChecksumOpt,
    CorpusInputsArg,
    CorpusVocabularyOptions,
    DeviceOpt,
    JsonOpt,
    MaskingOptions,
    OptionGroup,
    PresetOpt,
    QuietOpt,
    ReadingOptions,
    SpecOptions,
    TokenFileOptions,
    VerboseOpt,
    WorkersOpt,
    option_groups,
    refuse_idle_options,
)
from .progress_lines import rate_text
from .render import (
    InputProgress,
    note_assumed_tokenizer,
    print_json,
    print_notes,
    say_backend,
    skipped_note,
    stderr,
    warn_unsafe_cuts,
)

HELP = """Hash text into an index directory of Engram table rows.

Tokenizes, canonicalizes and hashes; a trainer memory-maps the result.

The index holds manifest.json, tokens.npy (raw ids), rows.npy ([T, L, (N-1)*K] table rows)
and doc_offsets.npy; see docs/formats.md. With --rows lazy it holds no rows.npy: readers compute
the rows from the tokens (4 bytes per token on disk instead of 4 + the rows).

[bold]Examples[/]

  ngramtool hash examples/corpus.txt                      # -> examples/corpus.txt.ngidx
  ngramtool hash a.txt b.txt -o out.ngidx --force --json
  cat corpus.txt | ngramtool hash -o corpus.ngidx          # stdin when no INPUT is given
  ngramtool hash docs.jsonl.zst --boundary reset --add-eot  # .jsonl/.json, .gz/.bz2/.xz/.zst
  ngramtool hash train.parquet --text-key content          # parquet: one row, one document
  ngramtool hash saved_dataset/ -o ds.ngidx               # an HF datasets.save_to_disk directory
  zcat dump.jsonl.gz | ngramtool hash --format jsonl -o dump.ngidx
  ngramtool hash chats.jsonl -t qwen/tokenizer.json --add-eot
  ngramtool hash --tokens ids.npy --vocab-size 50257 -o ids.ngidx
  ngramtool hash --tokens train.bin --tokenizer r50k_base.tiktoken     # nanoGPT/llm.c/Megatron .bin
  ngramtool hash --tokens part-0.npy --token-format raw --token-dtype uint16 --eos-id 50279 -t olmo.json
  ngramtool hash corpus.txt --save-tokens corpus.bin --save-format llmc
  ngramtool hash corpus.txt --rows lazy                   # tokens-only: rows computed when read
  ngramtool hash 'data/*.parquet' -o out/ --resume             # one index shard per file
  ngramtool hash 'shards/*.txt' -o out/ --shard-index 3 --num-shards 8   # this worker's subset
  ngramtool hash big.parquet -o out/ --row-groups-per-shard 4    # a shard per 4 row groups
  ngramtool hash corpus.txt --tokenizer tokenizer.json --heads 4 --table 262144 --layers 2,15
  ngramtool hash corpus.txt --preset tutorial
  ngramtool hash chat.jsonl -t v41/tokenizer.json --spec v41.json --mask-token 128815 --masked barrier
  ngramtool hash corpus.txt --checksum sha256                 # a cryptographic digest of every array

In Python: ngramtool.hash_files(["corpus.txt"], "corpus.ngidx") does the same.
"""


@dataclass(frozen=True)
class HashRunOptions(OptionGroup):
    """How and where the hash runs, and how it writes the index: the library's
    :class:`~ngramtool.RunOptions` and part of its :class:`~ngramtool.OutputOptions`."""

    rows: Annotated[
        str,
        typer.Option(
            "--rows",
            help="'stored': write rows.npy; 'lazy': a tokens-only index whose rows are computed "
            "from its tokens when read (the same rows).",
        ),
    ] = "stored"
    workers: WorkersOpt = None
    backend: BackendOpt = "auto"
    device: DeviceOpt = None
    checksum: ChecksumOpt = "xxh3-128"
    verbose: VerboseOpt = False
    shard_index: Annotated[
        int | None, typer.Option("--shard-index", help="Sharded run: this worker's number (0-based).", min=0)
    ] = None
    num_shards: Annotated[
        int | None,
        typer.Option("--num-shards", help="Sharded run: how many workers share the inputs.", min=1),
    ] = None
    resume: Annotated[
        bool,
        typer.Option("--resume", help="Sharded run: skip shards already finished."),
    ] = False
    row_groups_per_shard: Annotated[
        int | None,
        typer.Option(
            "--row-groups-per-shard",
            help="Sharded run: split a parquet file with more row groups into shards of this many.",
            min=1,
        ),
    ] = None
    engine: Annotated[
        str, typer.Option("--engine", help="Sharded run: 'local' (this process) or 'ray' (Ray tasks).")
    ] = "local"
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            help="With --engine ray: a running cluster ('auto', ray://...); default: start one.",
        ),
    ] = None
    no_space_check: Annotated[
        bool,
        typer.Option(
            "--no-space-check",
            help="Start even when the outputs' estimated size exceeds the free disk space.",
        ),
    ] = False

    def outputs(self, save_tokens: Path | None, save_format: str | None, force: bool) -> OutputOptions:
        """What the run writes: the rows and checksum of these options, and the other outputs."""
        given = {"save_tokens": save_tokens, "save_format": save_format, "force": force}
        return self.make(OutputOptions, **given, space_check=not self.no_space_check)


HASH_RUN_OPTIONS = HashRunOptions.placeholder()


@option_groups
def hash_command(
    ctx: typer.Context,
    inputs: CorpusInputsArg = None,
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            "-o",
            help="Index directory (default: first INPUT + .ngidx); - for a stream on stdout; "
            "DIR/ (trailing slash, or an existing directory that is empty or holds shards) for one "
            "shard per input file.",
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing index.")] = False,
    tokens: TokenFileOptions = TOKEN_FILE_OPTIONS,
    save_tokens: Annotated[
        Path | None, typer.Option("--save-tokens", help="Also write the raw ids as a token file here.")
    ] = None,
    save_format: Annotated[
        str | None, typer.Option("--save-format", help="Format of --save-tokens (default: from its suffix).")
    ] = None,
    vocab: CorpusVocabularyOptions = CORPUS_VOCABULARY_OPTIONS,
    preset: PresetOpt = None,
    spec_options: SpecOptions = SPEC_OPTIONS,
    boundary: Annotated[
        str,
        typer.Option(
            "--boundary", help="'none': pad only at stream start (Engram); 'reset': at every document."
        ),
    ] = "none",
    masking: MaskingOptions = MASKING_OPTIONS,
    reading: ReadingOptions = READING_OPTIONS,
    running: HashRunOptions = HASH_RUN_OPTIONS,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Hash INPUT... into an index directory (or, with -o DIR/, one index shard per input file)."""
    tokenizer, vocab_size = vocab.tokenizer, vocab.vocab_size
    if tokens.tokens_file is not None and inputs:
        raise UsageError("give text `inputs` (or -) or `tokens_file`, not both and not neither")
    inputs = tokens.inputs(inputs, "hash -o corpus.ngidx")
    source, _ = decide_source(tokens.source(inputs, reading))  # a token file INPUT reads as one
    tokens_file = source.path if isinstance(source, TokenFileReader) else None
    _refuse_idle_options(ctx, tokens_file, tokenizer, vocab_size, save_tokens, running.engine, output)
    reading.refuse_eot_token_without_add_eot(ctx)
    chosen = spec_options.choose(preset)

    def mapping() -> NgramHashMapping:
        """The tokenizer, vocabulary and spec of the options, built once the request is checked."""
        if vocab_size is not None and (tokens_file is None or tokenizer is not None):
            raise UsageError("`vocab_size` applies only to `tokens_file` without `tokenizer`")
        canonical = tokens_file is not None and tokenizer is None and vocab_size is not None
        return chosen.mapping(
            None if canonical else tokenizer or default_tokenizer(preset),
            special=reading.special,
            compress=not vocab.no_compress and default_compress(preset),
            vocab_size=vocab_size,
            masking=masking,
            engine=reading.engine(),
        )

    outputs = running.outputs(save_tokens, save_format, force)
    request = HashRequest(source, output, mapping, boundary, outputs, running.make(RunOptions))
    assumed = tokens_file is not None and tokenizer is None and vocab_size is None
    with InputProgress.new_bar(quiet) as bar:
        outcome = run_hash(request, _Progress(bar, quiet, running.verbose, tokens_file if assumed else None))
    plan = outcome.plan
    if plan.idle is not None:
        _report_idle_worker(plan.idle, as_json, quiet)
        return
    to_stderr = not plan.sharded and outcome.summaries[0].output == "-"
    if not (quiet or as_json) and outcome.lost_boundaries:
        _warn_lost_boundaries(outcome)
    _report(outcome, as_json, quiet, running.verbose, to_stderr=to_stderr)
    if not (quiet or as_json) and pad_defaulted(
        spec_options.spec_file, spec_options.pad_id, plan.mapping.tokenizer
    ):
        stderr.print(
            f"note: the canonical pad id is {plan.spec.pad_id} by default (no tokenizer names a pad); "
            "pass --pad-id to choose it",
            markup=False,
        )


class _Progress(HashEvents, InputProgress):
    """The run as it goes: notes when it is planned, a progress bar (on a terminal) while it hashes."""

    def __init__(self, bar: Any, quiet: bool, verbose: bool, assumed_for: Path | None) -> None:
        """``assumed_for``: the token file whose ids are taken to be the default tokenizer's."""
        super().__init__(bar, "hashing", quiet)
        self.verbose, self.assumed_for = verbose, assumed_for
        self.jobs = self.done = 0
        self.total: int | None = None
        self.engine = "local"

    def planned(self, plan: HashPlan) -> None:
        if self.verbose and plan.backend is not None:
            say_backend(plan.backend)
        if self.assumed_for is not None:
            note_assumed_tokenizer(self.assumed_for, DEFAULT_TOKENIZER, plan.mapping.raw_size, self.quiet)
        skipped = len(plan.outputs) - len(plan.jobs)
        if not self.quiet and skipped > 0:
            stderr.print(
                f"skipping {plural(skipped, 'finished shard')} of {len(plan.outputs):,}", markup=False
            )

    def started(self, total_bytes: int | None, jobs: int, engine: str) -> None:
        self.jobs, self.total, self.engine = jobs, total_bytes, engine
        super().started(total_bytes, jobs, engine)
        if engine == "ray":
            self.bar.update(self.task, total=jobs, description="hashing shards on Ray")
        else:
            self.bar.update(self.task, total=total_bytes)

    def advanced(self, nbytes: int, ntokens: int) -> None:
        super().advanced(nbytes, ntokens)
        shard = f" shard {self.done + 1}/{self.jobs}" if self.jobs > 1 else ""
        advance = nbytes if self.total else 1
        self.bar.update(self.task, advance=advance, description=f"hashing{shard} {_rate(self.rate())}")

    def finished(self, summary: JobSummary) -> None:
        self.done += 1
        if self.engine == "ray":  # the bar counts shards
            self.bar.advance(self.task)


def _refuse_idle_options(
    ctx: typer.Context,
    tokens_file: str | None,
    tokenizer: str | None,
    vocab_size: int | None,
    save_tokens: Path | None,
    engine: str,
    output: str | None,
) -> None:
    """Options that would do nothing with the others given are usage errors."""
    if tokens_file is None:
        refuse_idle_options(
            ctx, ["token_format", "token_dtype", "eos_id"], "to a token file (--tokens FILE, or one INPUT)"
        )
    else:
        refuse_idle_options(ctx, TEXT_READING_OPTIONS, "to text INPUT files, not to --tokens")
        if tokenizer is None and vocab_size is not None:
            refuse_idle_options(ctx, ["no_compress"], "with a tokenizer, and --vocab-size replaces it")
    if output == "-" and sys.stdout.isatty():
        raise UsageError(
            "-o - writes a binary stream to standard output, which is a terminal: redirect it to a "
            "file or a pipe (-o - > corpus.ngstream, or -o - | ngramtool inspect -)"
        )
    if save_tokens is None:
        refuse_idle_options(ctx, ["save_format"], "with --save-tokens FILE", "add --save-tokens FILE")
        if output == "-":
            refuse_idle_options(
                ctx, ["force"], "to an output that may exist (an index, --save-tokens), not to -o -'s stream"
            )
    if engine != "ray":
        refuse_idle_options(ctx, ["ray_address"], "with --engine ray", "add --engine ray")
    else:
        refuse_idle_options(ctx, ["workers"], "to the local engine (each Ray task tokenizes on one thread)")


def _report_idle_worker(idle: dict[str, int], as_json: bool, quiet: bool) -> None:
    """Say that this worker's selection is empty (array jobs may have more workers than inputs)."""
    shard_index, num_shards, num_inputs = idle["shard_index"], idle["num_shards"], idle["num_inputs"]
    if as_json:
        print_json({"shards": [], **idle})
    elif not quiet:
        stderr.print(
            f"nothing to do: worker {shard_index} of {num_shards} takes inputs {shard_index}, "
            f"{shard_index + num_shards}, ... (0-based) and there {'is' if num_inputs == 1 else 'are'} "
            f"only {plural(num_inputs, 'input')}",
            markup=False,
        )


def _warn_lost_boundaries(outcome: HashOutcome) -> None:
    """Warn when --save-tokens wrote several documents in a format that records no boundaries."""
    saved = outcome.plan.jobs[0].outputs
    stem = Path(str(saved.save_tokens)).with_suffix("")
    stderr.print(
        f"warning: {saved.save_tokens} ({saved.save_format}) records no document boundaries: its "
        f"{outcome.lost_boundaries:,} documents read back as one; a datatrove file (--save-tokens "
        f"{stem}.ds) or Megatron files (--save-tokens {stem} --save-format megatron) keep them",
        markup=False,
    )


def _report(outcome: HashOutcome, as_json: bool, quiet: bool, verbose: bool, *, to_stderr: bool) -> None:
    """The run's summary: JSON (a sharded run's always as ``{"shards": [...]}``) or lines on stderr."""
    summaries = outcome.summaries
    warn_unsafe_cuts(sum(s.unsafe_text_cuts for s in summaries))
    print_notes(sorted({note for summary in summaries for note in summary.notes}), quiet)
    if as_json:
        shown = [summary.to_dict() for summary in summaries]
        print_json({"shards": shown} if outcome.plan.sharded else shown[0], to_stderr=to_stderr)
        return
    if quiet:
        return
    for summary in summaries:
        rate = summary.tokens_per_second
        shown_rate = f" ({_rate(rate)})" if rate and summary.num_tokens >= RATE_FROM_TOKENS else ""
        target = "a stream to stdout" if summary.output == "-" else summary.output
        computed = " computed when read (tokens-only)" if summary.rows == "lazy" else ""
        held = (
            f"{plural(summary.num_tokens, 'token')}, {plural(summary.num_documents, 'document')}"
            if summary.num_tokens
            else f"the input holds no tokens ({plural(summary.num_documents, 'empty document')})"
        )
        stderr.print(
            f"wrote {target}: {held}{skipped_note(summary.skipped_records)}, "
            f"rows {summary.rows_dtype} {list(summary.rows_shape)}{computed} in {summary.seconds:.2f} s"
            f"{shown_rate}",
            markup=False,
        )
        if verbose:
            stderr.print(_profile_line(summary.profile), markup=False)


def _profile_line(profile: dict[str, Any]) -> str:
    """Where the CPU time went, e.g. ``cpu 6.8 s, 1.9 cores busy: tokenize 3.7 s, hash 1.3 s, ...``,
    and how long the disk was busy writing the rows, where a thread wrote them (``; disk busy 1.4 s
    of 1.6 s``: near the whole, the disk bounds the run)."""
    seconds = {**profile["stage_cpu_seconds"], "other": profile["other_cpu_seconds"]}
    stages = ", ".join(f"{name} {value:.2f} s" for name, value in seconds.items())
    line = f"cpu {profile['cpu_seconds']:.2f} s, {profile['cores_busy']} cores busy: {stages}"
    if "disk_busy_seconds" in profile:
        line += f"; disk busy {profile['disk_busy_seconds']:.2f} s of {profile['wall_seconds']:.2f} s"
    return line


RATE_FROM_TOKENS = 1000
"""A run of fewer tokens shows no rate: its time is start-up, and the figure would mislead."""


def _rate(tokens_per_second: float) -> str:
    return f"{rate_text(tokens_per_second)} tok/s"


COMMAND = Command("hash", HELP, hash_command)
