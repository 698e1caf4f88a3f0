"""A hash run's plan, made once: the checks that need nothing loaded, the mapping, the backend,
the save format, the outputs (one index, a stream, or a shard per input file) and their sizes.

The jobs of a plan hold what it loaded (:class:`~ngramtool.run.jobs.HashJob`): nothing is loaded
or derived again in this process; a Ray worker rebuilds only the mapping, from its payload.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..formats.artifacts import Kind
from ..formats.index import timestamp
from ..formats.schema import INDEX_NEGATIVE_IDS
from ..formats.tokenfiles import refuse_reset_without_documents
from ..hashing.backends import BackendChoice, check_backend, choose_backend
from ..inputs import check_reading, refuse_repeated_inputs
from ..inputs.encoding import worker_count
from ..inputs.sources import CorpusReader, Source, TokenFileReader
from ..inputs.stream import decide_source, opened_token_file
from ..model.mapping import NgramHashMapping
from ..spec.hashspec import HashSpec
from ..tokenizers import DEFAULT_TOKENIZER
from ..util.atomic import check_output_file, refuse_busy
from ..util.errors import UsageError
from ..util.progress import Progress
from ..util.wording import byte_size, plural
from .jobs import HashJob, job_meta, output_sizes, save_format, source_bytes
from .request import HashRequest
from .shards import SHARD_SUFFIX, expand_inputs, is_sharded_output, plan_shards, shard_selection
from .space import check_free_space, expected_tokens, text_bytes_per_token


@dataclass(frozen=True)
class HashPlan:
    """What a run will do, known before any hashing.

    Attributes:
        backend: the backend and device that hash, resolved once (None: a tokens-only index,
            which hashes nothing).
        mapping: the tokenizer, vocabulary and spec of every output.
        jobs: the jobs to run (a sharded run: the shards not finished yet).
        outputs: every output of this worker, in input order (a sharded run: finished shards
            included).
        sharded: whether the output is a directory of shards.
        assumed_tokenizer: the tokenizer a token file's ids are taken to come from when no mapping
            was given, and its id count; else None.
        idle: for a worker whose selection of inputs is empty, ``{"shard_index", "num_shards",
            "num_inputs"}``; else None.
    """

    backend: BackendChoice | None
    mapping: NgramHashMapping
    jobs: tuple[HashJob, ...]
    outputs: tuple[str, ...]
    sharded: bool
    assumed_tokenizer: tuple[str, int] | None = None
    idle: dict[str, int] | None = None

    @property
    def spec(self) -> HashSpec:
        """The spec of every output."""
        return self.mapping.spec


def plan_hash(request: HashRequest, progress: Progress, *, documents: bool = False) -> HashPlan:
    """The plan of a request (see the module docstring); usage errors are raised before any work.

    ``documents``: the input comes as strings (the request's source names no paths).
    """
    source = _expanded(request.source)
    _check_source(request, source, documents)
    if not documents:
        source = _decided(source)
    sharded = is_sharded_output(request.output)
    if not sharded and request.run.shards_asked:
        raise UsageError(
            "`shard_index`, `num_shards`, `resume`, `row_groups_per_shard` and `engine` apply to sharded "
            "runs: `output=DIR/`"
        )
    input_bytes = None if documents else source_bytes(source)
    if request.outputs.rows == "lazy":  # nothing hashes: the options are checked, nothing imported
        check_backend(request.run.backend, request.run.device)
        choice = None
    else:
        choice = choose_backend(request.run.backend, request.run.device, input_bytes=input_bytes)
    if isinstance(source, TokenFileReader) and request.boundary == "reset":
        refuse_reset_without_documents(opened_token_file(source), source.path)
    mapping, assumed = request.mapping, None
    if not isinstance(mapping, NgramHashMapping):
        with progress.step("preparing the vocabulary"):
            mapping = mapping() if mapping is not None else NgramHashMapping.build(DEFAULT_TOKENIZER)
        if request.mapping is None and isinstance(source, TokenFileReader):
            assumed = (DEFAULT_TOKENIZER, mapping.raw_size)
    if mapping.negative_ids not in INDEX_NEGATIVE_IDS:
        raise UsageError(
            f"an index records masked tokens as {' or '.join(INDEX_NEGATIVE_IDS)}, not "
            f"`negative_ids={mapping.negative_ids}`: build the mapping with one of them"
        )
    outputs = request.outputs
    template = HashJob(
        source=source,
        dest="",
        mapping=mapping,
        boundary=request.boundary,
        outputs=outputs,
        workers=worker_count(request.run.workers),
        backend=choice.name if choice is not None else request.run.backend,
        device=choice.device if choice is not None else request.run.device,
        created=timestamp(),
    )
    expected = job_meta(template).manifest()  # resolves add_eot's token up front
    if outputs.save_tokens is not None:  # checked before any work is done
        check_output_file(outputs.save_tokens, outputs.force, source.paths, what="`save_tokens` file")
        fmt = save_format(outputs.save_tokens, outputs.save_format, mapping.raw_size)
        template = dataclasses.replace(template, outputs=dataclasses.replace(outputs, save_format=fmt))
    if sharded:
        jobs, all_outputs, idle = _sharded_jobs(template, request, expected)
        if idle is not None:
            return HashPlan(choice, mapping, (), (), True, assumed, idle)
    else:
        dest = request.output if request.output is not None else _default_output(source.paths[0])
        jobs, all_outputs = [dataclasses.replace(template, dest=dest)], (dest,)
    refuse_busy([path for job in jobs for path in (job.dest, job.outputs.save_tokens) if path is not None])
    if not documents and jobs:
        measured = [
            dataclasses.replace(
                job, input_bytes=input_bytes if job.source is source else source_bytes(job.source)
            )
            for job in jobs
        ]
        jobs = _with_space_estimates(measured, check=outputs.space_check)
    return HashPlan(choice, mapping, tuple(jobs), all_outputs, sharded, assumed)


def _expanded(source: Source | None) -> Source | None:
    """The source with its glob patterns expanded."""
    if isinstance(source, CorpusReader):
        return source.with_paths(expand_inputs(source.paths), source.row_groups)
    return source


def _decided(source: Source | None) -> Source:
    """The source as what it is (:func:`ngramtool.inputs.stream.decide_source`): a token file given
    among the inputs is read as one; an index, a dataset or a stream is hashed already."""
    assert source is not None
    decided, kind = decide_source(source)
    if kind in (Kind.INDEX, Kind.DATASET, Kind.STREAM):
        path = decided.paths[0]
        raise UsageError(
            f"{path} is {'a stream' if kind is Kind.STREAM else 'an index'} already: hash its text or "
            f"token file (ngramtool inspect {path} shows what it holds)"
        )
    return decided


def _check_source(request: HashRequest, source: Source | None, documents: bool) -> None:
    """The checks of the source that need nothing loaded."""
    paths = () if source is None else source.paths
    if documents:
        if paths or not isinstance(source, CorpusReader) or request.output is None:
            raise UsageError(
                "documents given as strings need an `output` and neither `inputs` nor `tokens_file`"
            )
        if is_sharded_output(request.output):
            raise UsageError("documents given as strings make one index, not shards: name an `output` index")
    elif not paths:
        raise UsageError("give text `inputs` (or -) or `tokens_file`, not both and not neither")
    if isinstance(source, CorpusReader):
        refuse_repeated_inputs(list(paths))
    if request.outputs.rows == "lazy" and request.output == "-":
        raise UsageError(
            "`rows=lazy` writes a tokens-only index directory; a stream (`output=-`) carries the rows: "
            "drop one of them"
        )
    if isinstance(source, CorpusReader):
        check_reading(
            list(paths),
            input_format=source.input_format,
            text_key=source.text_key,
            doc_sep=source.doc_sep,
            errors=source.errors,
        )


def _sharded_jobs(
    template: HashJob, request: HashRequest, expected: dict[str, Any]
) -> tuple[list[HashJob], tuple[str, ...], dict[str, int] | None]:
    """The jobs of this worker's unfinished shards, every output of this worker, and the idle
    record of a worker with no inputs."""
    source = template.source
    if isinstance(source, TokenFileReader) or template.outputs.save_tokens is not None:
        raise UsageError("a sharded run hashes text files: `tokens_file` and `save_tokens` make one index")
    run = request.run
    index, count = shard_selection(run.shard_index, run.num_shards)
    shards = plan_shards(
        list(source.paths),
        Path(str(request.output)),
        shard_index=index,
        num_shards=count,
        expected=expected,
        resume=run.resume,
        force=template.outputs.force,
        row_groups_per_shard=run.row_groups_per_shard,
        input_format=source.input_format,
    )
    if not shards:
        return [], (), {"shard_index": index, "num_shards": count, "num_inputs": len(source.paths)}
    workers = 1 if run.engine == "ray" else template.workers  # Ray parallelizes across shards
    jobs = [
        dataclasses.replace(
            template,
            source=source.with_paths((shard.source,), shard.row_groups),
            dest=str(shard.dest),
            shared_vocab=True,
            workers=workers,
        )
        for shard in shards
        if not shard.done
    ]
    return jobs, tuple(str(shard.dest) for shard in shards), None


def _with_space_estimates(jobs: list[HashJob], *, check: bool) -> list[HashJob]:
    """The jobs with their estimated token counts; with ``check``, a run whose outputs would not
    fit in the free space of their file systems is refused before it starts (:mod:`ngramtool.run.space`)."""
    first = jobs[0]
    tokenizer = first.mapping.tokenizer
    per_token = None
    if isinstance(first.source, CorpusReader) and tokenizer is not None:
        per_token = text_bytes_per_token([name for job in jobs for name in job.source.paths], tokenizer)
    counted = [
        dataclasses.replace(
            job,
            expected_tokens=opened_token_file(job.source).num_tokens
            if isinstance(job.source, TokenFileReader)
            else expected_tokens(job.input_bytes, per_token),
        )
        for job in jobs
    ]
    if not check or any(job.expected_tokens is None for job in counted):
        return counted
    needs = [(size.path, size.at(job.expected_tokens or 0)) for job in counted for size in output_sizes(job)]
    tokens = sum(job.expected_tokens or 0 for job in counted)
    if isinstance(first.source, TokenFileReader):
        basis = f"{plural(tokens, 'token')} in {first.source.path}"
    else:
        text = sum(job.input_bytes or 0 for job in counted)
        basis = (
            f"about {plural(tokens, 'token')}: {byte_size(text)} of text at {per_token:.1f} bytes per token"
        )
    check_free_space(needs, basis)
    return counted


def _default_output(source: str) -> str:
    if source == "-":
        raise UsageError("reading stdin: name the output directory with `output`")
    return source.rstrip("/" + os.sep) + SHARD_SUFFIX
