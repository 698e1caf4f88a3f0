"""``ngramtool hash``: text or token files -> an index directory of Engram rows."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer

from ..executors import HashEvents, HashOutcome, HashPlan, HashRequest, run_hash
from ..wording import plural
from .common import (
    TEXT_READING_OPTIONS,
    AddEotOpt,
    BackendOpt,
    DeviceOpt,
    DocSepOpt,
    EotTokenOpt,
    ErrorsOpt,
    HeadsOpt,
    JsonKeyOpt,
    JsonOpt,
    LayersOpt,
    MaxNgramOpt,
    NoCompressOpt,
    OptionalTokenizerOpt,
    PadOpt,
    PresetOpt,
    QuietOpt,
    SeedOpt,
    SpecFileOpt,
    SpecialOpt,
    TableOpt,
    TokenFormatOpt,
    TokensFileOpt,
    TokenVocabSizeOpt,
    VerboseOpt,
    WorkersOpt,
    byte_progress,
    note_assumed_tokenizer,
    print_json,
    refuse_eot_token_without_add_eot,
    refuse_idle_options,
    say_backend,
    show_progress,
    skipped_note,
    spec_fields,
    status,
    stderr,
    warn_unsafe_cuts,
)

HELP = """Hash text into an index directory of Engram table rows.

Tokenizes, canonicalizes and hashes; a trainer memory-maps the result.

The index holds manifest.json, tokens.npy (raw ids), rows.npy ([T, L, (N-1)*K] table rows)
and doc_offsets.npy; see docs/formats.md.

[bold]Examples[/]

  ngramtool hash examples/corpus.txt                      # -> examples/corpus.txt.ngidx
  ngramtool hash a.txt b.txt -o out.ngidx --force --json
  cat corpus.txt | ngramtool hash - -o corpus.ngidx
  ngramtool hash docs.jsonl --json-key text --boundary reset --add-eot
  ngramtool hash chats.jsonl --json-key text -t qwen/tokenizer.json --add-eot
  ngramtool hash --tokens ids.npy --vocab-size 50257 -o ids.ngidx
  ngramtool hash --tokens train.bin --tokenizer r50k_base.tiktoken     # nanoGPT/llm.c/Megatron .bin
  ngramtool hash corpus.txt --save-tokens corpus.bin --save-format llmc
  ngramtool hash 'shards/*.txt' -o out/ --resume               # one index shard per file
  ngramtool hash 'shards/*.txt' -o out/ --shard-index 3 --num-shards 8   # this worker's subset
  ngramtool hash corpus.txt --tokenizer tokenizer.json --heads 4 --table 262144 --layers 2,15
  ngramtool hash corpus.txt --preset tutorial

In Python: ngramtool.hash_files(["corpus.txt"], "corpus.ngidx") does the same.
"""


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("hash", help=HELP)(hash_command)


def hash_command(
    ctx: typer.Context,
    inputs: Annotated[
        list[str] | None,
        typer.Argument(metavar="INPUT", help="Text files, or - for stdin.", show_default=False),
    ] = None,
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
    tokens_file: TokensFileOpt = None,
    token_format: TokenFormatOpt = None,
    save_tokens: Annotated[
        Path | None, typer.Option("--save-tokens", help="Also write the raw ids as a token file here.")
    ] = None,
    save_format: Annotated[
        str | None, typer.Option("--save-format", help="Format of --save-tokens (default: from its suffix).")
    ] = None,
    vocab_size: TokenVocabSizeOpt = None,
    tokenizer: OptionalTokenizerOpt = None,
    no_compress: NoCompressOpt = False,
    preset: PresetOpt = None,
    max_ngram: MaxNgramOpt = None,
    heads: HeadsOpt = None,
    layers: LayersOpt = None,
    table: TableOpt = None,
    seed: SeedOpt = None,
    pad_id: PadOpt = None,
    spec_file: SpecFileOpt = None,
    boundary: Annotated[
        str,
        typer.Option(
            "--boundary", help="'none': pad only at stream start (Engram); 'reset': at every document."
        ),
    ] = "none",
    add_eot: AddEotOpt = False,
    eot_token: EotTokenOpt = None,
    special: SpecialOpt = None,
    json_key: JsonKeyOpt = None,
    doc_sep: DocSepOpt = None,
    errors: ErrorsOpt = "strict",
    workers: WorkersOpt = None,
    backend: BackendOpt = "auto",
    device: DeviceOpt = None,
    verbose: VerboseOpt = False,
    shard_index: Annotated[
        int | None, typer.Option("--shard-index", help="Sharded run: this worker's number (0-based).", min=0)
    ] = None,
    num_shards: Annotated[
        int | None,
        typer.Option("--num-shards", help="Sharded run: how many workers share the inputs.", min=1),
    ] = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Sharded run: skip shards already finished.")
    ] = False,
    engine: Annotated[
        str, typer.Option("--engine", help="Sharded run: 'local' (this process) or 'ray' (Ray tasks).")
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            help="With --engine ray: a running cluster ('auto', ray://...); default: start one.",
        ),
    ] = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Hash INPUT... into an index directory (or, with -o DIR/, one index shard per input file)."""
    _refuse_idle_options(ctx, tokens_file, tokenizer, vocab_size, save_tokens, engine, output)
    refuse_eot_token_without_add_eot(ctx, add_eot)
    request = HashRequest(
        inputs=tuple(inputs or ()),
        output=output,
        tokens_file=None if tokens_file is None else str(tokens_file),
        token_format=token_format,
        tokenizer=tokenizer,
        no_compress=no_compress,
        vocab_size=vocab_size,
        spec_file=None if spec_file is None else str(spec_file),
        preset=preset,
        **spec_fields(max_ngram, heads, layers, table, seed, pad_id),
        boundary=boundary,
        special=special,
        add_eot=add_eot,
        eot_token=eot_token,
        json_key=json_key,
        doc_sep=doc_sep,
        errors=errors,
        save_tokens=None if save_tokens is None else str(save_tokens),
        save_format=save_format,
        workers=workers,
        force=force,
        backend=backend,
        device=device,
        shard_index=shard_index,
        num_shards=num_shards,
        resume=resume,
        engine=engine,
        ray_address=ray_address,
    )
    with byte_progress(show_progress(quiet), None) as bar:
        outcome = run_hash(request, _Progress(bar, quiet, verbose, tokens_file))
    if outcome.idle is not None:
        _report_idle_worker(outcome.idle, as_json, quiet)
        return
    to_stderr = not outcome.sharded and outcome.summaries[0]["output"] == "-"
    if not (quiet or as_json) and outcome.lost_boundaries:
        _warn_lost_boundaries(outcome)
    _report(outcome, as_json, quiet, verbose, to_stderr=to_stderr)
    plan = outcome.plan
    if not (quiet or as_json) and plan is not None and plan.pad_defaulted:
        stderr.print(
            f"note: the canonical pad id is {plan.spec.pad_id} by default (no tokenizer names a pad); "
            "pass --pad-id to choose it",
            markup=False,
        )


class _Progress(HashEvents):
    """The run as it goes: notes when it is planned, a progress bar (on a terminal) while it hashes."""

    def __init__(self, bar: Any, quiet: bool, verbose: bool, tokens_file: Path | None) -> None:
        self.bar, self.quiet, self.verbose, self.tokens_file = bar, quiet, verbose, tokens_file
        self.task = bar.add_task("hashing", total=None)
        self.jobs = self.done = self.written = 0
        self.total: int | None = None
        self.engine = "local"
        self.started_at = time.perf_counter()

    def step(self, what: str) -> Any:
        return status(what, not self.quiet)

    def planned(self, plan: HashPlan) -> None:
        if self.verbose:
            say_backend(plan.backend)
        if plan.assumed_tokenizer is not None:
            note_assumed_tokenizer(self.tokens_file, *plan.assumed_tokenizer, self.quiet)
        skipped = len(plan.outputs) - len(plan.jobs)
        if not self.quiet and skipped > 0:
            stderr.print(
                f"skipping {plural(skipped, 'finished shard')} of {len(plan.outputs):,}", markup=False
            )

    def started(self, total_bytes: int | None, jobs: int, engine: str) -> None:
        self.jobs, self.total, self.engine = jobs, total_bytes, engine
        self.started_at = time.perf_counter()
        if engine == "ray":
            self.bar.update(self.task, total=jobs, description="hashing shards on Ray")
        else:
            self.bar.update(self.task, total=total_bytes)

    def advanced(self, nbytes: int, ntokens: int) -> None:
        self.written += ntokens
        rate = self.written / max(time.perf_counter() - self.started_at, 1e-9)
        shard = f" shard {self.done + 1}/{self.jobs}" if self.jobs > 1 else ""
        advance = nbytes if self.total else 1
        self.bar.update(self.task, advance=advance, description=f"hashing{shard} {_rate(rate)}")

    def finished(self, summary: dict[str, Any]) -> None:
        self.done += 1
        if self.engine == "ray":  # the bar counts shards
            self.bar.advance(self.task)


def _refuse_idle_options(
    ctx: typer.Context,
    tokens_file: Path | None,
    tokenizer: str | None,
    vocab_size: int | None,
    save_tokens: Path | None,
    engine: str,
    output: str | None,
) -> None:
    """Options that would do nothing with the others given are usage errors."""
    if tokens_file is None:
        refuse_idle_options(ctx, ["token_format"], "with --tokens FILE", "add --tokens FILE")
    else:
        refuse_idle_options(ctx, TEXT_READING_OPTIONS, "to text INPUT files, not to --tokens")
        if tokenizer is None and vocab_size is not None:
            refuse_idle_options(ctx, ["no_compress"], "with a tokenizer, and --vocab-size replaces it")
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
    assert outcome.plan is not None
    job = outcome.plan.jobs[0]
    stem = Path(str(job.save_tokens)).with_suffix("")
    stderr.print(
        f"warning: {job.save_tokens} ({job.save_format}) records no document boundaries: its "
        f"{outcome.lost_boundaries:,} documents read back as one; a datatrove file (--save-tokens "
        f"{stem}.ds) or Megatron files (--save-tokens {stem} --save-format megatron) keep them",
        markup=False,
    )


def _report(outcome: HashOutcome, as_json: bool, quiet: bool, verbose: bool, *, to_stderr: bool) -> None:
    """The run's summary: JSON (a sharded run's always as ``{"shards": [...]}``) or lines on stderr."""
    summaries = outcome.summaries
    warn_unsafe_cuts(sum(s["unsafe_text_cuts"] for s in summaries))
    if as_json:
        print_json({"shards": summaries} if outcome.sharded else summaries[0], to_stderr=to_stderr)
        return
    if quiet:
        return
    for summary in summaries:
        rate = f" ({_rate(summary['tokens_per_second'])})" if summary["tokens_per_second"] else ""
        target = "a stream to stdout" if summary["output"] == "-" else summary["output"]
        stderr.print(
            f"wrote {target}: {plural(summary['num_tokens'], 'token')}, "
            f"{plural(summary['num_documents'], 'document')}{skipped_note(summary['skipped_records'])}, "
            f"rows {summary['rows_dtype']} {summary['rows_shape']} in {summary['seconds']:.2f} s{rate}",
            markup=False,
        )
        if verbose:
            stderr.print(_profile_line(summary["profile"]), markup=False)


def _profile_line(profile: dict[str, Any]) -> str:
    """Where the CPU time went, e.g. ``cpu 6.8 s, 1.9 cores busy: tokenize 3.7 s, hash 1.3 s, ...``."""
    seconds = {**profile["stage_cpu_seconds"], "other": profile["other_cpu_seconds"]}
    stages = ", ".join(f"{name} {value:.2f} s" for name, value in seconds.items())
    return f"cpu {profile['cpu_seconds']:.2f} s, {profile['cores_busy']} cores busy: {stages}"


def _rate(tokens_per_second: float) -> str:
    if tokens_per_second >= 1e6:
        return f"{tokens_per_second / 1e6:.2f}M tok/s"
    return f"{tokens_per_second / 1e3:.1f}K tok/s"
