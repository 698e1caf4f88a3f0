"""Where hash jobs run: a whole run from a :class:`HashRequest`, its plan, and the executors.

:func:`run_hash` is what ``ngramtool hash`` and :func:`ngramtool.hash_files` do: check the
request, load the tokenizer and vocabulary, resolve the spec, plan one job per output (one index,
a pipe stream, or one shard per input file) and run the jobs, in this process one after another
(``engine="local"``) or as Ray tasks (``engine="ray"``). Both executors run the same function,
:func:`ngramtool.jobs.run_hash_job`, on the same jobs, so their outputs are identical byte for
byte (given one creation time, see ``HashJob.created``).

Sharded runs: one index per input file, a deterministic subset per worker, resumable. A shard is
finished exactly when its directory exists: indexes are built under a ``.partial`` name and
renamed into place when complete, so ``kill -9`` at any moment leaves no directory that looks
finished, and a rerun with ``resume`` skips the finished ones and redoes the rest.

The run reports to a :class:`HashEvents` object (progress, what it planned); the library prints
nothing.
"""

from __future__ import annotations

import dataclasses
import glob
import logging
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .backends import BackendChoice, choose_backend
from .encode import worker_count
from .errors import NgramToolError, UsageError
from .formats.atomic import (
    check_output_file,
    locked_destination,
    reclaim_leftovers,
    refuse_busy,
    unfinished_destination,
)
from .formats.checksum import DEFAULT_CHECKSUM, check_algorithm
from .formats.dataset import DATASET
from .formats.index import MANIFEST, ROW_STORAGE, VOCAB_STORE, read_manifest, timestamp
from .formats.settings import settings_difference
from .formats.tokenfiles import FORMATS_WITH_DOCUMENTS, check_boundary
from .inputs import check_reading, input_form, input_size, parquet_row_groups, refuse_repeated_inputs
from .jobs import (
    HashJob,
    input_bytes,
    job_meta,
    job_vocab,
    output_sizes,
    run_hash_job,
    save_format,
    token_file,
)
from .presets import pad_defaulted, resolve_spec
from .progress import Progress
from .space import check_free_space, expected_tokens, text_bytes_per_token
from .spec import HashSpec
from .tokenizers import DEFAULT_TOKENIZER, Tokenizer
from .wording import byte_size, plural

log = logging.getLogger(__name__)
ENGINES = ("local", "ray")
SHARD_SUFFIX = ".ngidx"
_GLOB_CHARS = set("*?[")


@dataclass(frozen=True)
class HashRequest:
    """Everything a hash run is asked to do (the parameters of :func:`ngramtool.hash_files`).

    ``tokenizer`` None: :data:`DEFAULT_TOKENIZER`, except for a token file with ``vocab_size``
    (its ids are canonical already). ``spec`` (a HashSpec) or ``spec_file`` give the whole spec;
    otherwise ``preset`` and the spec fields are resolved by :func:`ngramtool.resolve_spec`.
    ``output`` ``-`` is a pipe stream on stdout; ``DIR/`` (or an existing directory that is
    empty or holds shards) one index shard per input file.
    """

    inputs: tuple[str, ...] = ()
    output: str | None = None
    tokens_file: str | None = None
    token_format: str | None = None
    token_dtype: str | None = None
    eos_id: int | None = None
    tokenizer: str | None = None
    no_compress: bool = False
    vocab_size: int | None = None
    spec: HashSpec | None = None
    spec_file: str | None = None
    preset: str | None = None
    max_ngram: int | None = None
    heads: int | None = None
    layer_ids: tuple[int, ...] | None = None
    table_sizes: tuple[int, ...] | None = None
    seed: int | None = None
    pad_id: int | None = None
    boundary: str = "none"
    special: str | None = None
    add_eot: bool = False
    eot_token: str | None = None
    input_format: str | None = None
    text_key: str | None = None
    doc_sep: str | None = None
    errors: str = "strict"
    row_groups_per_shard: int | None = None
    save_tokens: str | None = None
    save_format: str | None = None
    workers: int | None = None
    force: bool = False
    backend: str = "auto"
    device: str | None = None
    shard_index: int | None = None
    num_shards: int | None = None
    resume: bool = False
    engine: str = "local"
    ray_address: str | None = None
    no_space_check: bool = False
    checksum: str = DEFAULT_CHECKSUM
    rows: str = "stored"


@dataclass(frozen=True)
class HashPlan:
    """What a run will do, known before any hashing.

    Attributes:
        backend: the backend and device that hash.
        spec: the spec of every output.
        jobs: the jobs to run (a sharded run: the shards not finished yet).
        outputs: every output of this worker, in input order (a sharded run: finished shards
            included).
        assumed_tokenizer: the tokenizer a token file's ids are taken to come from when none was
            named (None when one was, or ``vocab_size`` was given), and its id count.
        pad_defaulted: nothing chose the pad, so it is canonical id 0.
    """

    backend: BackendChoice
    spec: HashSpec
    jobs: tuple[HashJob, ...]
    outputs: tuple[str, ...]
    assumed_tokenizer: tuple[str, int] | None
    pad_defaulted: bool


@dataclass
class HashOutcome:
    """What a run did.

    Attributes:
        summaries: one per job that ran (see :func:`ngramtool.jobs.run_hash_job`), in job order.
        sharded: whether the output is a directory of shards.
        idle: for a worker whose selection of inputs is empty, ``{"shard_index", "num_shards",
            "num_inputs"}``; None otherwise.
        lost_boundaries: the documents of a token file saved (``save_tokens``) in a format that
            records no document boundaries, when there were several; else 0.
    """

    plan: HashPlan | None
    summaries: list[dict[str, Any]] = field(default_factory=list)
    sharded: bool = False
    idle: dict[str, int] | None = None
    lost_boundaries: int = 0


class HashEvents(Progress):
    """What a hash run reports while it runs (see :class:`ngramtool.progress.Progress`); every
    method does nothing here (override what you show)."""

    def planned(self, plan: HashPlan) -> None:
        """The run is planned; hashing starts next."""

    def finished(self, summary: dict[str, Any]) -> None:
        """A job finished (a Ray run: in completion order)."""


# --------------------------------------------------------------------------------- the run
def run_hash(
    request: HashRequest, events: HashEvents | None = None, documents: Iterable[str] | None = None
) -> HashOutcome:
    """Run a hash request to completion (see the module docstring); every output is published
    atomically. Usage errors are raised before any work is done.

    ``documents`` (strings, each one document) are the input instead of files: the request then
    names no inputs, and its output is one index or a stream.
    """
    events = events or HashEvents()
    inputs = expand_inputs(list(request.inputs))
    _check_request(request, inputs, documents is not None)
    sharded = is_sharded_output(request.output)
    if not sharded and (
        request.shard_index is not None or request.num_shards is not None or request.resume
        or request.engine != "local" or request.row_groups_per_shard is not None
    ):  # fmt: skip
        raise UsageError(
            "`shard_index`, `num_shards`, `resume`, `row_groups_per_shard` and `engine` apply to sharded "
            "runs: `output=DIR/`"
        )
    choice = choose_backend(request.backend, request.device)
    check_algorithm(request.checksum)
    tokenizer = request.tokenizer
    assumed = request.tokens_file is not None and tokenizer is None and request.vocab_size is None
    if request.tokens_file is None or assumed:
        tokenizer = tokenizer or DEFAULT_TOKENIZER
    if request.tokens_file is not None:
        check_boundary(
            request.boundary,
            request.tokens_file,
            request.token_format,
            dtype=request.token_dtype,
            eos_id=request.eos_id,
        )
    if request.vocab_size is not None and (request.tokens_file is None or tokenizer is not None):
        raise UsageError("`vocab_size` applies only to `tokens_file` without `tokenizer`")
    shared = {
        f.name: getattr(request, f.name) for f in dataclasses.fields(HashJob) if hasattr(request, f.name)
    }
    template = HashJob(
        **{
            **shared,
            "inputs": tuple(inputs),
            "dest": "",
            "spec": HashSpec(),
            "tokenizer": tokenizer,
            "workers": worker_count(request.workers),
            "created": timestamp(),
            "backend": choice.name,
            "device": choice.device,
        }
    )
    with events.step("preparing the vocabulary"):
        tok, vocab = job_vocab(template)
    spec = request.spec or resolve_spec(
        spec_file=request.spec_file,
        preset=request.preset,
        tokenizer=tok,
        vocab=vocab,
        max_ngram=request.max_ngram,
        heads=request.heads,
        layer_ids=request.layer_ids,
        table_sizes=request.table_sizes,
        seed=request.seed,
        pad_id=request.pad_id,
    )
    template = dataclasses.replace(template, spec=spec)
    expected = job_meta(template, tok, vocab, spec).manifest()  # resolves add_eot's token up front
    if request.save_tokens is not None:  # checked before any work is done
        check_output_file(request.save_tokens, request.force, inputs, what="`save_tokens` file")
        fmt = save_format(request.save_tokens, request.save_format, vocab.raw_size)
        template = dataclasses.replace(template, save_format=fmt)
    outcome = HashOutcome(plan=None, sharded=sharded)
    if sharded:
        index, count = shard_selection(request.shard_index, request.num_shards)
        shards = _plan_sharded(
            template,
            Path(str(request.output)),
            index,
            count,
            request.resume,
            expected,
            request.row_groups_per_shard,
        )
        if not shards:
            outcome.idle = {"shard_index": index, "num_shards": count, "num_inputs": len(inputs)}
            return outcome
        todo = [shard for shard in shards if not shard.done]
        jobs = [
            dataclasses.replace(
                template, inputs=(s.source,), dest=str(s.dest), shared_vocab=True, row_groups=s.row_groups
            )
            for s in todo
        ]
        if request.engine == "ray":  # Ray parallelizes across shards: one tokenizer thread per task
            jobs = [dataclasses.replace(job, workers=1) for job in jobs]
    else:
        sources = [request.tokens_file] if request.tokens_file is not None else inputs
        dest = request.output if request.output is not None else _default_output(sources[0])
        shards, todo, jobs = [], [], [dataclasses.replace(template, dest=dest)]
    outputs = tuple(str(shard.dest) for shard in shards) if sharded else (jobs[0].dest,)
    refuse_busy([path for job in jobs for path in (job.dest, job.save_tokens) if path is not None])
    if documents is None and jobs:
        jobs = _with_space_estimates(jobs, tok, vocab.raw_size, check=not request.no_space_check)
    outcome.plan = HashPlan(
        backend=choice,
        spec=spec,
        jobs=tuple(jobs),
        outputs=outputs,
        assumed_tokenizer=(DEFAULT_TOKENIZER, vocab.raw_size) if assumed else None,
        pad_defaulted=request.spec is None and pad_defaulted(request.spec_file, request.pad_id, tok),
    )
    log.info(
        "planned %d job(s) of %d output(s) on %s (%s)", len(jobs), len(outputs), choice.name, request.engine
    )
    events.planned(outcome.plan)
    if sharded:
        out_dir = Path(str(request.output))
        out_dir.mkdir(parents=True, exist_ok=True)
        reclaim_leftovers(out_dir, SHARD_SUFFIX)  # what killed runs left, of any shard no live run writes
    if request.engine == "ray":
        events.started(None, len(jobs), "ray")
        outcome.summaries = run_ray(jobs, request.ray_address, on_done=events.finished)
    else:
        outcome.summaries = run_local(jobs, events, documents)
    if not sharded:
        outcome.lost_boundaries = _lost_boundaries(template, outcome.summaries[0])
    return outcome


def _with_space_estimates(
    jobs: list[HashJob], tokenizer: Tokenizer | None, raw_size: int, *, check: bool
) -> list[HashJob]:
    """The jobs with their estimated token counts; with ``check``, a run whose outputs would not
    fit in the free space of their file systems is refused before it starts (:mod:`ngramtool.space`)."""
    first = jobs[0]
    per_token = None
    if first.tokens_file is None and tokenizer is not None:
        per_token = text_bytes_per_token([name for job in jobs for name in job.inputs], tokenizer)
    counted = [
        dataclasses.replace(
            job,
            expected_tokens=token_file(job).num_tokens
            if job.tokens_file is not None
            else expected_tokens(input_bytes(job), per_token),
        )
        for job in jobs
    ]
    if not check or any(job.expected_tokens is None for job in counted):
        return counted
    needs = [
        (size.path, size.at(job.expected_tokens or 0))
        for job in counted
        for size in output_sizes(job, raw_size)
    ]
    tokens = sum(job.expected_tokens or 0 for job in counted)
    if first.tokens_file is not None:
        basis = f"{plural(tokens, 'token')} in {first.tokens_file}"
    else:
        text = input_size([name for job in counted for name in job.inputs]) or 0
        basis = (
            f"about {plural(tokens, 'token')}: {byte_size(text)} of text at {per_token:.1f} bytes per token"
        )
    check_free_space(needs, basis)
    return counted


def _check_request(request: HashRequest, inputs: list[str], documents: bool) -> None:
    """The checks that need nothing loaded."""
    if documents:
        if inputs or request.tokens_file is not None or request.output is None:
            raise UsageError(
                "documents given as strings need an `output` and neither `inputs` nor `tokens_file`"
            )
        if is_sharded_output(request.output):
            raise UsageError("documents given as strings make one index, not shards: name an `output` index")
    elif bool(inputs) == (request.tokens_file is not None):
        raise UsageError("give text `inputs` (or -) or `tokens_file`, not both and not neither")
    refuse_repeated_inputs(inputs)
    if request.boundary not in ("none", "reset"):
        raise UsageError(f"`boundary` must be 'none' or 'reset' (got {request.boundary!r})")
    if request.engine not in ENGINES:
        raise UsageError(f"`engine` must be one of {', '.join(ENGINES)} (got {request.engine!r})")
    if request.rows not in ROW_STORAGE:
        raise UsageError(f"`rows` must be 'stored' or 'lazy' (got {request.rows!r})")
    if request.rows == "lazy" and request.output == "-":
        raise UsageError(
            "`rows=lazy` writes a tokens-only index directory; a stream (`output=-`) carries the rows: "
            "drop one of them"
        )
    if request.tokens_file is None:
        check_reading(
            inputs,
            input_format=request.input_format,
            text_key=request.text_key,
            doc_sep=request.doc_sep,
            errors=request.errors,
        )
    if request.row_groups_per_shard is not None and request.row_groups_per_shard < 1:
        raise UsageError(f"`row_groups_per_shard` must be at least 1 (got {request.row_groups_per_shard})")
    if request.spec is not None and (request.spec_file is not None or request.preset is not None):
        raise UsageError("`spec` gives the whole hash spec: drop `spec_file` and `preset`")


def _default_output(source: str) -> str:
    if source == "-":
        raise UsageError("reading stdin: name the output directory with `output`")
    return source.rstrip("/" + os.sep) + SHARD_SUFFIX


def _lost_boundaries(job: HashJob, summary: dict[str, Any]) -> int:
    """The documents of the saved token file when its format records no boundaries (else 0)."""
    if job.save_tokens is None or job.save_format in FORMATS_WITH_DOCUMENTS or summary["num_documents"] < 2:
        return 0
    return int(summary["num_documents"])


# ------------------------------------------------------------------------------- executors
def run_local(
    jobs: list[HashJob], events: HashEvents, documents: Iterable[str] | None = None
) -> list[dict[str, Any]]:
    """Run jobs one after another in this process; returns their summaries in order.
    ``documents`` are the input of the one job (see :func:`run_hash`)."""
    sizes = [None if documents is not None else input_bytes(job) for job in jobs]
    events.started(None if None in sizes else sum(s for s in sizes if s is not None), len(jobs), "local")
    summaries = []
    for job in jobs:
        summary = run_hash_job(job, events.advanced, documents)
        events.finished(summary)
        summaries.append(summary)
    return summaries


def _run_remote(payload: dict[str, Any]) -> dict[str, Any]:
    """A Ray task: the job arrives as JSON values (:meth:`HashJob.to_payload`)."""
    return run_hash_job(HashJob.from_payload(payload))


def run_ray(jobs: list[HashJob], address: str | None = None, on_done: Any = None) -> list[dict[str, Any]]:
    """Run each job as a Ray task (one CPU each) and return the summaries in job order.

    ``address`` connects to an existing cluster (``auto``, or ``ray://host:10001``); None starts
    a local Ray instance for this run and stops it afterwards. ``on_done`` is called with each
    summary as its job finishes, in completion order.
    """
    try:
        import ray
    except ImportError:
        raise UsageError("`engine=ray` needs Ray: pip install 'ngramtool[ray]'") from None
    started_here = not ray.is_initialized()
    if started_here:
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise NgramToolError(f"cannot reach a Ray cluster at {address!r}: {exc}") from None
    try:
        task = ray.remote(num_cpus=1)(_run_remote)
        refs = [task.remote(job.to_payload()) for job in jobs]
        position = {ref: i for i, ref in enumerate(refs)}
        results: list[dict[str, Any] | None] = [None] * len(refs)
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            try:
                summary = ray.get(done[0])
            except ray.exceptions.RayTaskError as exc:
                cause = exc.cause if isinstance(exc.cause, NgramToolError) else None
                if cause is not None:
                    raise cause from None
                raise NgramToolError(f"a Ray task failed: {exc}") from None
            results[position[done[0]]] = summary
            if on_done is not None:
                on_done(summary)
        return [r for r in results if r is not None]
    finally:
        if started_here:
            ray.shutdown()


# ------------------------------------------------------------------------------ shard planning
def expand_inputs(patterns: Iterable[str]) -> list[str]:
    """Expand quoted glob patterns (sorted; ``**`` matches any number of directories, none included);
    plain paths and ``-`` pass through unchanged."""
    out: list[str] = []
    for pattern in patterns:
        if pattern == "-" or Path(pattern).exists() or not _GLOB_CHARS & set(pattern):
            out.append(pattern)
            continue
        matches = sorted(glob.glob(pattern, recursive=True))
        if not matches:
            raise UsageError(f"no file matches {pattern!r}")
        out.extend(matches)
    return out


def is_sharded_output(output: str | None) -> bool:
    """Whether ``output`` asks for one shard per input: a trailing slash, or an existing directory
    that is empty or already holds shards. Any other existing directory that is not an index is
    refused, so that a mistyped output never scatters shards into it."""
    if output is None or output == "-":
        return False
    if not output.strip("/" + os.sep):
        raise UsageError(
            f"`output={output!r}` names no output: give an index directory, or DIR/ for a sharded run"
            " (is a variable in the path empty?)"
        )
    path = Path(output)
    if output.endswith(("/", os.sep)):
        if (path / MANIFEST).is_file():
            raise UsageError(
                f"{output} is an index, so it cannot hold shards: drop the trailing slash to replace "
                "it (with `force=True`), or name a new directory for a sharded run"
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
        f"add a trailing slash (`output={output}/`); for a single index, choose a new name"
    )


def shard_selection(
    shard_index: int | None, num_shards: int | None, env: Mapping[str, str] = os.environ
) -> tuple[int, int]:
    """(i, n): this worker takes inputs i, i+n, i+2n, ...

    From the arguments when given, else RANK/WORLD_SIZE (torchrun), else a Slurm job array
    (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT), else (0, 1).
    """
    if (shard_index is None) != (num_shards is None):
        raise UsageError("`shard_index` and `num_shards` go together")
    if shard_index is not None and num_shards is not None:
        index, count = shard_index, num_shards
    elif "RANK" in env and "WORLD_SIZE" in env:
        index, count = int(env["RANK"]), int(env["WORLD_SIZE"])
    elif "SLURM_ARRAY_TASK_ID" in env and "SLURM_ARRAY_TASK_COUNT" in env:
        first = int(env.get("SLURM_ARRAY_TASK_MIN", "0"))
        index, count = int(env["SLURM_ARRAY_TASK_ID"]) - first, int(env["SLURM_ARRAY_TASK_COUNT"])
    else:
        index, count = 0, 1
    if count < 1 or not 0 <= index < count:
        raise UsageError(f"shard {index} of {count} does not exist: need 0 <= index < count")
    return index, count


@dataclass(frozen=True)
class Shard:
    """One input file (or some of a parquet file's row groups) and the index it becomes; ``done``
    when that index is already complete."""

    source: str
    dest: Path
    done: bool
    row_groups: tuple[int, int] | None = None


def _plan_sharded(
    template: HashJob,
    out_dir: Path,
    shard_index: int,
    num_shards: int,
    resume: bool,
    expected: dict[str, Any],
    row_groups_per_shard: int | None,
) -> list[Shard]:
    """This worker's shards (finished ones marked when resuming; ``expected`` is the manifest this
    run writes, whose settings a finished shard must share)."""
    if template.tokens_file is not None or template.save_tokens is not None:
        raise UsageError("a sharded run hashes text files: `tokens_file` and `save_tokens` make one index")
    return plan_shards(
        list(template.inputs),
        out_dir,
        shard_index=shard_index,
        num_shards=num_shards,
        expected=expected,
        resume=resume,
        force=template.force,
        row_groups_per_shard=row_groups_per_shard,
        input_format=template.input_format,
    )


def plan_shards(
    inputs: list[str],
    out_dir: Path,
    *,
    shard_index: int,
    num_shards: int,
    expected: dict[str, Any],
    resume: bool,
    force: bool,
    row_groups_per_shard: int | None = None,
    input_format: str | None = None,
) -> list[Shard]:
    """This worker's shards, in order, with finished ones marked (``resume``) or refused.

    ``expected`` is the manifest this run writes (without counts and arrays): a finished shard is
    skipped only when its settings agree with it (:func:`settings_difference`). With
    ``row_groups_per_shard``, a parquet file with more row groups than that is split into shards of
    that many row groups (``NAME.rgFIRST-LAST.ngidx``).
    """
    if "-" in inputs:
        raise UsageError("a sharded run reads files, not stdin")
    units = _shard_units(inputs, row_groups_per_shard, input_format)
    names = [name for _, _, name in units]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise UsageError(f"inputs share file names {duplicates[:3]}: each shard is named after its file")
    shards = []
    for source, row_groups, name in units[shard_index::num_shards]:
        dest = out_dir / f"{name}{SHARD_SUFFIX}"
        done = (dest / MANIFEST).is_file()
        if done and not force:
            if not resume:
                raise UsageError(
                    f"{dest} already exists: pass `resume=True` to skip finished shards or `force=True`"
                )
            differs = settings_difference(expected, read_manifest(dest))
            if differs is not None:
                raise UsageError(
                    f"{dest} was made with another {differs.setting} ({differs.theirs} there, "
                    f"{differs.ours} in this run): remove it, or pass `force=True` to hash it again"
                )
        shards.append(Shard(source, dest, done and not force, row_groups))
    return shards


def _shard_units(
    inputs: list[str], row_groups_per_shard: int | None, input_format: str | None
) -> list[tuple[str, tuple[int, int] | None, str]]:
    """(input, row groups or None, shard name) of each shard: one per input, or one per
    ``row_groups_per_shard`` row groups of a parquet file that has more."""
    units: list[tuple[str, tuple[int, int] | None, str]] = []
    for source in inputs:
        name = Path(source).name
        groups = 0
        if row_groups_per_shard is not None and input_form(source, input_format) == "parquet":
            groups = parquet_row_groups(source)
        if groups <= (row_groups_per_shard or 0):
            units.append((source, None, name))
            continue
        assert row_groups_per_shard is not None
        for first in range(0, groups, row_groups_per_shard):
            stop = min(first + row_groups_per_shard, groups)
            units.append((source, (first, stop), f"{name}.rg{first:05d}-{stop - 1:05d}"))
    return units


def holds_shards(directory: Path) -> bool:
    """Whether an existing directory can take a sharded run's output without a trailing slash.

    True when it is empty or holds only what sharded runs write there: finished shards
    (``NAME.ngidx`` indexes), the leftovers of killed ones (``.partial`` directories, set-aside
    shards, lock files), the shards' shared ``vocab/`` folder, and a merged ``dataset.json``. A
    directory with anything else in it (the inputs, other files) is not.
    """
    return all(_is_shard_output(entry) for entry in directory.iterdir())


def _is_shard_output(entry: Path) -> bool:
    """Whether a directory entry is something a sharded run writes."""
    if entry.name == DATASET:
        return entry.is_file()
    if entry.name == VOCAB_STORE:
        return entry.is_dir()
    if entry.name.endswith(SHARD_SUFFIX):
        return (entry / MANIFEST).is_file()
    unfinished = unfinished_destination(entry.name)
    final = unfinished[0] if unfinished is not None else locked_destination(entry.name)
    return final is not None and (final.endswith(SHARD_SUFFIX) or final == DATASET)
