"""datatrove: :class:`HashStep`, a pipeline step that hashes the documents of any datatrove reader
into index shards (extra ``datatrove``; docs/scale.md).

Each datatrove task (rank) writes one shard per input file its reader reads, named after the file
(``NAME.ngidx``), with the lookup table stored once in the folder's ``vocab/``: the shards
``ngramtool hash FILES -o DIR/ --num-shards N --shard-index RANK`` writes, byte for byte (given one
creation time, ``SOURCE_DATE_EPOCH``), since datatrove's readers give rank ``r`` the files
``r, r+N, ...`` as ``--num-shards`` does. ``ngramtool merge DIR`` makes them one dataset. The step
builds the same :class:`~ngramtool.run.jobs.HashJob` as a sharded ``hash`` run and runs it with
the documents' text as its input (:func:`~ngramtool.run.jobs.run_hash_job`).

Documents that name no file (``metadata["file_path"]``: a reader of HF datasets, documents made
by hand) make one shard per rank, ``rank-00000.ngidx``, ... . A shard is finished exactly when its
directory exists, so a rerun (datatrove reruns the tasks that did not complete) passes over the
documents of the shards that one of its earlier tries finished and hashes the rest.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .util.errors import MissingDependencyError, NgramToolError, UsageError

try:
    from datatrove.pipeline.base import PipelineStep
except ImportError as exc:
    raise MissingDependencyError(
        f"ngramtool.datatrove needs datatrove ({exc}); install it with: pip install 'ngramtool[datatrove]'"
    ) from None

from .formats.index import timestamp
from .hashing.backends import choose_backend
from .inputs.encoding import worker_count
from .inputs.sources import CorpusReader
from .model.mapping import NgramHashMapping
from .run.jobs import HashJob, job_meta, run_hash_job
from .run.request import OutputOptions, RunOptions
from .run.shards import SHARD_SUFFIX, plan_shards
from .spec.hashspec import check_boundary_policy
from .tokenizers import DEFAULT_TOKENIZER
from .util.atomic import reclaim_leftovers

FILE_PATH = "file_path"
"""The metadata key under which datatrove's readers record each document's input file."""


class HashStep(PipelineStep):
    """Hash the documents of a datatrove pipeline into one index shard per input file (see the
    module docstring); the step ends the pipeline (it yields no documents: put a writer before
    it to keep them).

    Args:
        output_folder: the folder of the shards (created; every task writes into it).
        mapping: the tokenizer, vocabulary and spec (:meth:`ngramtool.NgramHashMapping.build`);
            None: cl100k_base and the default spec. Each task rebuilds it from its recipe (and
            the vocabulary's disk cache), so the step pickles small for Slurm.
        boundary: ``none`` pads only at the stream start (Engram); ``reset`` at every document.
        add_eot: append the tokenizer's end-of-sequence token after each document.
        eot_token: the token ``add_eot`` appends (None: from the tokenizer's configuration).
        text_key: the key the reader took the text from, recorded in each shard's manifest as
            ``hash --text-key`` records it (None: ``text``, datatrove's and ngramtool's default).
        outputs: ``rows``, ``checksum``, ``force`` (hash again the shards that exist); a token file
            (``save_tokens``) is one file, not shards, and is refused.
        run: ``workers`` (tokenizer threads; None: the cores the task may use), ``backend``,
            ``device``; datatrove assigns the shards, so the sharding options are refused.

    Examples:
        >>> from datatrove.executor import LocalPipelineExecutor
        >>> from datatrove.pipeline.readers import JsonlReader
        >>> from ngramtool.datatrove import HashStep
        >>> pipeline = [JsonlReader("corpus/"), HashStep("shards/")]
        >>> LocalPipelineExecutor(pipeline, tasks=2, logging_dir="logs/").run()  # doctest: +SKIP
    """

    name = "ngramtool hash"
    type = "🔢 - HASH"

    def __init__(
        self,
        output_folder: str | Path,
        mapping: NgramHashMapping | None = None,
        *,
        boundary: str = "none",
        add_eot: bool = False,
        eot_token: str | None = None,
        text_key: str | None = None,
        outputs: OutputOptions | None = None,
        run: RunOptions | None = None,
    ) -> None:
        super().__init__()
        check_boundary_policy(boundary)
        self.outputs = outputs or OutputOptions()
        self.run_options = run or RunOptions()
        if self.outputs.save_tokens is not None:
            raise UsageError("HashStep writes index shards; `save_tokens` makes one token file: drop it")
        if self.run_options.shards_asked:
            raise UsageError(
                "datatrove's tasks are HashStep's shards: drop `shard_index`, `num_shards`, `resume`, "
                "`row_groups_per_shard` and `engine` (finished shards are always passed over)"
            )
        self.output_folder = str(output_folder)
        self.recipe: dict[str, Any] | None = None if mapping is None else mapping.to_payload()
        self.boundary = boundary
        self.reader = CorpusReader((), text_key=text_key, add_eot=add_eot, eot_token=eot_token)
        self.created = timestamp()  # one creation time for the shards of every task

    def run(self, data: Iterable[Any] | None, rank: int = 0, world_size: int = 1) -> Iterator[Any]:
        """Hash this task's documents into its shards (datatrove calls this once per rank)."""
        self._hash(data or (), rank)
        yield from ()

    def _hash(self, documents: Iterable[Any], rank: int) -> None:
        """One job per run of consecutive documents of one input file, as a sharded run plans them."""
        template = self._template()
        out_dir = Path(self.output_folder)
        out_dir.mkdir(parents=True, exist_ok=True)
        reclaim_leftovers(out_dir, SHARD_SUFFIX)  # what killed tries left, of shards no live task writes
        made: dict[str, str] = {}
        for source, group in itertools.groupby(documents, key=_input_file):
            job, finished = self._shard_job(template, source, rank)
            name, shown = Path(job.dest).name, source or f"rank {rank}"
            if name in made:
                raise _clash(name, shown, made[name])
            made[name] = shown
            if finished:  # by an earlier try of this task
                self.stat_update("shards_finished_before", unit="task")
                continue
            with self.track_time(unit="shard"):
                summary = run_hash_job(job, documents=(document.text for document in group))
            self.stat_update("shards", unit="task")
            self.stat_update("documents", value=summary.num_documents, unit="shard")
            self.stat_update("tokens", value=summary.num_tokens, unit="shard")

    def _template(self) -> HashJob:
        """The job every shard of this task starts from: the mapping (loaded here, in the task's
        process), the backend, the options."""
        if self.recipe is None:
            mapping = NgramHashMapping.build(DEFAULT_TOKENIZER)
        else:
            mapping = NgramHashMapping.from_payload(self.recipe)
        choice = choose_backend(self.run_options.backend, self.run_options.device)
        return HashJob(
            source=self.reader,
            dest="",
            mapping=mapping,
            boundary=self.boundary,
            outputs=self.outputs,
            workers=worker_count(self.run_options.workers),
            backend=choice.name,
            device=choice.device,
            created=self.created,
            shared_vocab=True,
        )

    def _shard_job(self, template: HashJob, source: str | None, rank: int) -> tuple[HashJob, bool]:
        """The job of the shard of ``source`` (None: the rank's documents that name no file), and
        whether that shard is finished already, with the same settings."""
        reader = self.reader.with_paths(() if source is None else (source,))
        job = dataclasses.replace(template, source=reader)
        [shard] = plan_shards(
            [source or f"rank-{rank:05d}"],
            Path(self.output_folder),
            shard_index=0,
            num_shards=1,
            expected=job_meta(job).manifest(),
            resume=True,
            force=self.outputs.force,
        )
        return dataclasses.replace(job, dest=str(shard.dest)), shard.done


def _clash(name: str, source: str, earlier: str) -> NgramToolError:
    """The error for documents that would make a shard made already in this task."""
    if source == earlier:
        return NgramToolError(
            f"the documents of {source} come apart, with other files' between them: HashStep needs each "
            "file's documents together (no step before it may reorder them)"
        )
    return NgramToolError(
        f"{source} and {earlier} would both make the shard {name}: give the input files names of their own"
    )


def _input_file(document: Any) -> str | None:
    """The input file a document was read from, as its reader records it (None: not recorded)."""
    path = document.metadata.get(FILE_PATH)
    return None if path is None else str(path)
