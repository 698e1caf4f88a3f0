"""``ngramtool hash``: text or token files -> an index directory of Engram rows."""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from ..engines import ENGINES, run_ray
from ..errors import UsageError
from ..formats.index import MANIFEST, timestamp
from ..formats.tokenfiles import FORMATS_WITH_DOCUMENTS
from ..jobs import HashJob, input_bytes, job_meta, job_vocab, run_hash_job
from ..jobs import save_format as resolve_save_format
from ..shards import Shard, expand_inputs, holds_shards, plan_shards, remove_stale_partials, shard_selection
from ..textio import check_reading
from ..wording import plural
from .common import (
    DEFAULT_TOKENIZER,
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
    QuietOpt,
    SeedOpt,
    SpecFileOpt,
    SpecialOpt,
    SpecOptions,
    TableOpt,
    TokenFormatOpt,
    TokensFileOpt,
    TokenVocabSizeOpt,
    VerboseOpt,
    WorkersOpt,
    byte_progress,
    check_output_file,
    note_assumed_tokenizer,
    print_json,
    refuse_eot_token_without_add_eot,
    refuse_idle_options,
    refuse_idle_reset,
    refuse_repeated_inputs,
    resolve_backend,
    show_progress,
    skipped_note,
    status,
    stderr,
    warn_unsafe_cuts,
    worker_count,
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
"""


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("hash", help=HELP)(hash_command)


def hash_command(
    ctx: typer.Context,
    inputs: Annotated[
        list[str] | None, typer.Argument(help="Text files, or - for stdin.", show_default=False)
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
    max_ngram: MaxNgramOpt = SpecOptions.max_ngram,
    heads: HeadsOpt = SpecOptions.heads,
    layers: LayersOpt = SpecOptions.layers,
    table: TableOpt = SpecOptions.table,
    seed: SeedOpt = SpecOptions.seed,
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
    inputs = expand_inputs(inputs or [])
    if bool(inputs) == (tokens_file is not None):
        raise UsageError("give text INPUT files (or -) or --tokens FILE, not both and not neither")
    refuse_repeated_inputs(inputs)
    if boundary not in ("none", "reset"):
        raise UsageError(f"--boundary must be 'none' or 'reset' (got {boundary!r})")
    if engine not in ENGINES:
        raise UsageError(f"--engine must be one of {', '.join(ENGINES)} (got {engine!r})")
    _refuse_idle_options(ctx, tokens_file, tokenizer, vocab_size, save_tokens, engine, output)
    refuse_eot_token_without_add_eot(ctx, add_eot)
    if tokens_file is None:
        check_reading(json_key, doc_sep, errors)
    sharded = _is_sharded(output)
    if not sharded and (shard_index is not None or num_shards is not None or resume or engine != "local"):
        raise UsageError("--shard-index, --num-shards, --resume and --engine apply to sharded runs: -o DIR/")
    choice = resolve_backend(backend, device, verbose)
    assumed_tokenizer = tokens_file is not None and tokenizer is None and vocab_size is None
    if assumed_tokenizer:
        tokenizer = DEFAULT_TOKENIZER
    if tokens_file is not None:
        refuse_idle_reset(boundary, tokens_file, token_format)
    if vocab_size is not None and (tokens_file is None or tokenizer is not None):
        raise UsageError("--vocab-size applies only to --tokens without --tokenizer")
    template = HashJob(
        inputs=tuple(inputs),
        dest="",
        spec_json="",
        tokenizer=tokenizer if tokens_file is not None else tokenizer or DEFAULT_TOKENIZER,
        no_compress=no_compress,
        vocab_size=vocab_size,
        boundary=boundary,
        json_key=json_key,
        doc_sep=doc_sep,
        errors=errors,
        add_eot=add_eot,
        special=special,
        eot_token=eot_token,
        tokens_file=str(tokens_file) if tokens_file is not None else None,
        token_format=token_format,
        save_tokens=str(save_tokens) if save_tokens is not None else None,
        save_format=save_format,
        workers=worker_count(workers),
        force=force,
        created=timestamp(),
        backend=choice.name,
        device=choice.device,
    )
    with status("preparing the vocabulary", not quiet):
        tok, vocab = job_vocab(template)
    if assumed_tokenizer:
        note_assumed_tokenizer(tokens_file, vocab, quiet)
    options = SpecOptions(max_ngram, heads, layers, table, seed, pad_id, spec_file)
    spec = options.build(vocab, tok)
    template = dataclasses.replace(template, spec_json=spec.to_json())
    expected = job_meta(template, tok, vocab, spec).manifest()  # resolves --add-eot's token up front
    if save_tokens is not None:  # checked before any work is done
        check_output_file(save_tokens, force, inputs, what="--save-tokens file")
        template = dataclasses.replace(
            template, save_format=resolve_save_format(str(save_tokens), save_format, vocab.raw_size)
        )
    if sharded:
        index, count = shard_selection(shard_index, num_shards)
        shards = _plan_sharded(template, Path(output), index, count, resume, expected)
        if not shards:
            _report_idle_worker(index, count, len(inputs), as_json, quiet)
            return
        Path(output).mkdir(parents=True, exist_ok=True)
        summaries = _run_sharded(template, shards, quiet, engine, ray_address)
        to_stderr = False
    else:
        sources = [str(tokens_file)] if tokens_file is not None else inputs
        dest = output if output is not None else str(_default_output(sources[0]))
        summaries = _run_with_progress([dataclasses.replace(template, dest=dest)], quiet)
        to_stderr = dest == "-"
        if not (quiet or as_json):
            _warn_lost_boundaries(template, summaries[0])
    _report(summaries, as_json, quiet, verbose, sharded=sharded, to_stderr=to_stderr)
    if not (quiet or as_json) and options.pad_defaulted(tok):
        stderr.print(
            f"note: the canonical pad id is {spec.pad_id} by default (no tokenizer names a pad); "
            "pass --pad-id to choose it",
            markup=False,
        )


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


def _is_sharded(output: str | None) -> bool:
    """Whether -o asks for one shard per input: a trailing slash, or an existing directory that is
    empty or already holds shards. Any other existing directory that is not an index is refused, so
    that a mistyped -o never scatters shards into it."""
    if output is None or output == "-":
        return False
    if not output.strip("/" + os.sep):
        raise UsageError(
            f"-o {output!r} names no output: give an index directory, or DIR/ for a sharded run"
            " (is a variable in the path empty?)"
        )
    path = Path(output)
    if output.endswith(("/", os.sep)):
        if (path / MANIFEST).is_file():
            raise UsageError(
                f"{output} is an index, so it cannot hold shards: drop the trailing slash to replace "
                "it (with --force), or name a new directory for a sharded run"
            )
        if path.exists() and not path.is_dir():
            raise UsageError(f"{output.rstrip('/' + os.sep)} is a file: name a directory for a sharded run")
        return True
    if not path.is_dir() or (path / MANIFEST).exists():
        return False
    if holds_shards(path):
        return True
    raise UsageError(
        f"{output} is a directory that holds neither an index nor shards: for a sharded run into it, "
        f"add a trailing slash (-o {output}/); for a single index, choose a new name"
    )


def _plan_sharded(
    template: HashJob,
    out_dir: Path,
    shard_index: int,
    num_shards: int,
    resume: bool,
    expected: dict[str, Any],
) -> list[Shard]:
    """This worker's shards (finished ones marked when resuming; ``expected`` is the manifest this
    run writes, whose settings a finished shard must share)."""
    if template.tokens_file is not None or template.save_tokens is not None:
        raise UsageError("a sharded run hashes text files: --tokens and --save-tokens make one index")
    return plan_shards(
        list(template.inputs),
        out_dir,
        shard_index=shard_index,
        num_shards=num_shards,
        expected=expected,
        resume=resume,
        force=template.force,
    )


def _run_sharded(
    template: HashJob, shards: list[Shard], quiet: bool, engine: str, ray_address: str | None
) -> list[dict[str, Any]]:
    """Hash the shards not finished yet, locally or as Ray tasks."""
    todo = [shard for shard in shards if not shard.done]
    for shard in todo:
        remove_stale_partials(shard)
    jobs = [
        dataclasses.replace(template, inputs=(s.source,), dest=str(s.dest), shared_vocab=True) for s in todo
    ]
    if not quiet and len(todo) < len(shards):
        stderr.print(
            f"skipping {plural(len(shards) - len(todo), 'finished shard')} of {len(shards):,}", markup=False
        )
    if engine == "ray":
        # Ray parallelizes across shards: one tokenizer thread per task.
        jobs = [dataclasses.replace(job, workers=1) for job in jobs]
        with byte_progress(show_progress(quiet), len(jobs)) as bar:
            task = bar.add_task("hashing shards on Ray", total=len(jobs))
            return run_ray(jobs, ray_address, on_done=lambda _summary: bar.advance(task))
    return _run_with_progress(jobs, quiet)


def _report_idle_worker(
    shard_index: int, num_shards: int, num_inputs: int, as_json: bool, quiet: bool
) -> None:
    """Say that this worker's selection is empty (array jobs may have more workers than inputs)."""
    if as_json:
        print_json(
            {"shards": [], "shard_index": shard_index, "num_shards": num_shards, "num_inputs": num_inputs}
        )
    elif not quiet:
        stderr.print(
            f"nothing to do: worker {shard_index} of {num_shards} takes inputs {shard_index}, "
            f"{shard_index + num_shards}, ... (0-based) and there {'is' if num_inputs == 1 else 'are'} "
            f"only {plural(num_inputs, 'input')}",
            markup=False,
        )


def _warn_lost_boundaries(job: HashJob, summary: dict[str, Any]) -> None:
    """Warn when --save-tokens wrote several documents in a format that records no boundaries."""
    if job.save_tokens is None or job.save_format in FORMATS_WITH_DOCUMENTS or summary["num_documents"] < 2:
        return
    stem = Path(job.save_tokens).with_suffix("")
    stderr.print(
        f"warning: {job.save_tokens} ({job.save_format}) records no document boundaries: its "
        f"{summary['num_documents']:,} documents read back as one; a datatrove file (--save-tokens "
        f"{stem}.ds) or Megatron files (--save-tokens {stem} --save-format megatron) keep them",
        markup=False,
    )


def _run_with_progress(jobs: list[HashJob], quiet: bool) -> list[dict[str, Any]]:
    """Run jobs in order under one progress bar (bytes across all of them, tokens/s)."""
    sizes = [input_bytes(job) for job in jobs]
    total = None if None in sizes else sum(s for s in sizes if s is not None)
    summaries = []
    started = time.perf_counter()
    written = 0
    with byte_progress(show_progress(quiet), total) as bar:
        task = bar.add_task("hashing", total=total)

        def advance(nbytes: int, ntokens: int) -> None:
            nonlocal written
            written += ntokens
            rate = written / max(time.perf_counter() - started, 1e-9)
            shard = f" shard {len(summaries) + 1}/{len(jobs)}" if len(jobs) > 1 else ""
            bar.update(task, advance=nbytes if total else 1, description=f"hashing{shard} {_rate(rate)}")

        for job in jobs:  # the local engine: one job after another in this process
            summaries.append(run_hash_job(job, advance))
    return summaries


def _report(
    summaries: list[dict[str, Any]],
    as_json: bool,
    quiet: bool,
    verbose: bool,
    *,
    sharded: bool,
    to_stderr: bool,
) -> None:
    """The run's summary: JSON (a sharded run's always as ``{"shards": [...]}``) or lines on stderr."""
    warn_unsafe_cuts(sum(s["unsafe_text_cuts"] for s in summaries))
    if as_json:
        print_json({"shards": summaries} if sharded else summaries[0], to_stderr=to_stderr)
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


def _default_output(source: str) -> Path:
    if source == "-":
        raise UsageError("reading stdin: name the output directory with -o")
    return Path(source + ".ngidx")


def _rate(tokens_per_second: float) -> str:
    if tokens_per_second >= 1e6:
        return f"{tokens_per_second / 1e6:.2f}M tok/s"
    return f"{tokens_per_second / 1e3:.1f}K tok/s"
