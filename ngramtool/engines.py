"""Where hash jobs run: in this process (``local``: one after another) or as Ray tasks (``ray``).

Both run the same function, :func:`ngramtool.jobs.run_hash_job`, on the same picklable jobs, so
their outputs are identical byte for byte (given one creation time, see ``HashJob.created``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .errors import NgramToolError, UsageError
from .jobs import HashJob, run_hash_job

ENGINES = ("local", "ray")
Done = Callable[[dict[str, Any]], None]


def run_ray(
    jobs: list[HashJob], address: str | None = None, on_done: Done | None = None
) -> list[dict[str, Any]]:
    """Run each job as a Ray task (one CPU each) and return the summaries in job order.

    ``address`` connects to an existing cluster (``auto``, or ``ray://host:10001``); None starts
    a local Ray instance for this run and stops it afterwards. ``on_done`` is called as each job
    finishes, in completion order.
    """
    try:
        import ray
    except ImportError:
        raise UsageError("--engine ray needs Ray: pip install 'ngramtool[ray]'") from None
    started_here = not ray.is_initialized()
    if started_here:
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise NgramToolError(f"cannot reach a Ray cluster at {address!r}: {exc}") from None
    try:
        task = ray.remote(num_cpus=1)(run_hash_job)
        refs = [task.remote(job) for job in jobs]
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
