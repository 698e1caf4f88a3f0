"""Where hash jobs run: a whole run from a :class:`~ngramtool.run.request.HashRequest`, and the
executors.

:func:`run_hash` is what ``ngramtool hash`` and :func:`ngramtool.hash_files` do: plan the run once
(:func:`ngramtool.run.planning.plan_hash`: the checks, the mapping, one job per output) and run the
jobs, in this process one after another (``engine="local"``) or as Ray tasks (``engine="ray"``).
Both executors run the same function, :func:`ngramtool.run.jobs.run_hash_job`, on the same jobs,
so their outputs are identical byte for byte (given one creation time, see ``HashJob.created``).

The run reports to a :class:`HashEvents` object (progress, what it planned); the library prints
nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..formats.tokenfiles import FORMATS_WITH_DOCUMENTS
from ..util.atomic import reclaim_leftovers
from ..util.errors import NgramToolError, UsageError
from ..util.progress import Progress
from .jobs import HashJob, run_hash_job
from .planning import HashPlan, plan_hash
from .request import HashRequest
from .shards import SHARD_SUFFIX
from .summary import JobSummary

log = logging.getLogger(__name__)


@dataclass
class HashOutcome:
    """What a run did.

    Attributes:
        plan: what it planned.
        summaries: one per job that ran (see :func:`ngramtool.run.jobs.run_hash_job`), in job order.
        lost_boundaries: the documents of a token file saved (``save_tokens``) in a format that
            records no document boundaries, when there were several; else 0.
    """

    plan: HashPlan
    summaries: list[JobSummary] = field(default_factory=list)
    lost_boundaries: int = 0


class HashEvents(Progress):
    """What a hash run reports while it runs (see :class:`ngramtool.util.progress.Progress`); every
    method does nothing here (override what you show)."""

    def planned(self, plan: HashPlan) -> None:
        """The run is planned; hashing starts next."""

    def finished(self, summary: JobSummary) -> None:
        """A job finished (a Ray run: in completion order)."""


def run_hash(
    request: HashRequest, events: HashEvents | None = None, documents: Iterable[str] | None = None
) -> HashOutcome:
    """Run a hash request to completion (see the module docstring); every output is published
    atomically. Usage errors are raised before any work is done.

    ``documents`` (strings, each one document) are the input instead of files: the request's
    source then names no paths, and its output is one index or a stream.
    """
    events = events or HashEvents()
    plan = plan_hash(request, events, documents=documents is not None)
    outcome = HashOutcome(plan)
    if plan.idle is not None:
        return outcome
    jobs = list(plan.jobs)
    hashing = plan.backend.name if plan.backend is not None else "no backend (tokens only)"
    log.info("planned %d job(s) of %d output(s) on %s (%s)", len(jobs), len(plan.outputs), hashing,
             request.run.engine)  # fmt: skip
    events.planned(plan)
    if plan.sharded:
        out_dir = Path(str(request.output))
        out_dir.mkdir(parents=True, exist_ok=True)
        reclaim_leftovers(out_dir, SHARD_SUFFIX)  # what killed runs left, of any shard no live run writes
    if request.run.engine == "ray":
        events.started(None, len(jobs), "ray")
        outcome.summaries = run_ray(jobs, request.run.ray_address, on_done=events.finished)
    else:
        outcome.summaries = run_local(jobs, events, documents)
    if not plan.sharded:
        outcome.lost_boundaries = _lost_boundaries(jobs[0], outcome.summaries[0])
    return outcome


def _lost_boundaries(job: HashJob, summary: JobSummary) -> int:
    """The documents of the saved token file when its format records no boundaries (else 0)."""
    saved = job.outputs
    if saved.save_tokens is None or saved.save_format in FORMATS_WITH_DOCUMENTS or summary.num_documents < 2:
        return 0
    return summary.num_documents


def run_local(
    jobs: list[HashJob], events: HashEvents, documents: Iterable[str] | None = None
) -> list[JobSummary]:
    """Run jobs one after another in this process; returns their summaries in order.
    ``documents`` are the input of the one job (see :func:`run_hash`)."""
    sizes = [None if documents is not None else job.input_bytes for job in jobs]
    events.started(None if None in sizes else sum(s for s in sizes if s is not None), len(jobs), "local")
    summaries = []
    for job in jobs:
        summary = run_hash_job(job, events.advanced, documents)
        events.finished(summary)
        summaries.append(summary)
    return summaries


def _run_remote(payload: dict[str, Any]) -> JobSummary:
    """A Ray task: the job arrives as JSON values (:meth:`HashJob.to_payload`)."""
    return run_hash_job(HashJob.from_payload(payload))


def run_ray(jobs: list[HashJob], address: str | None = None, on_done: Any = None) -> list[JobSummary]:
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
        results: list[JobSummary | None] = [None] * len(refs)
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
