"""What a hash run is asked to do, as values: the source, the mapping and two option groups.

:class:`HashRequest` is what :func:`ngramtool.hash_files` and ``ngramtool hash`` hand to
:func:`ngramtool.run.executors.run_hash`: the source (a :class:`~ngramtool.CorpusReader` or a
:class:`~ngramtool.TokenFileReader`), the output path, the :class:`~ngramtool.NgramHashMapping`,
the boundary policy, and two groups: :class:`OutputOptions` (what is written and how) and
:class:`RunOptions` (where and how the work runs). Each group checks its values once, when it is
made; adding a hash option is one field in one group (and one flag in ``cli/options.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..formats.checksum import DEFAULT_CHECKSUM, check_algorithm
from ..formats.index import ROW_STORAGE
from ..inputs.sources import Source
from ..model.mapping import NgramHashMapping
from ..spec.hashspec import check_boundary_policy
from ..util.errors import UsageError

ENGINES = ("local", "ray")


@dataclass(frozen=True)
class OutputOptions:
    """What a run writes beside the rows, and how.

    Attributes:
        rows: ``stored`` (``rows.npy``) or ``lazy``: a tokens-only index (at most 5 bytes per
            token) whose rows are computed from its tokens when read, byte for byte the same.
        checksum: the outputs' data checksum, ``xxh3-128`` (fast, for integrity) or ``sha256``
            (cryptographic); see docs/formats.md.
        save_tokens: also write the raw ids as a token file at this path.
        save_format: its format (``npy``, ``nanogpt``, ``llmc``, ``megatron``, ``datatrove``;
            None: from the suffix).
        force: replace existing outputs.
        space_check: refuse a run whose outputs' estimated size (from the input size and the
            spec) exceeds the free space of their file systems, before it starts.

    Examples:
        >>> from ngramtool import OutputOptions
        >>> OutputOptions(rows="lazy", force=True).rows
        'lazy'
        >>> OutputOptions(rows="some")
        Traceback (most recent call last):
        ngramtool.util.errors.UsageError: `rows` must be 'stored' or 'lazy' (got 'some')
    """

    rows: str = "stored"
    checksum: str = DEFAULT_CHECKSUM
    save_tokens: str | None = None
    save_format: str | None = None
    force: bool = False
    space_check: bool = True

    def __post_init__(self) -> None:
        if self.rows not in ROW_STORAGE:
            raise UsageError(f"`rows` must be 'stored' or 'lazy' (got {self.rows!r})")
        check_algorithm(self.checksum)
        if self.save_tokens is not None:
            object.__setattr__(self, "save_tokens", str(self.save_tokens))


@dataclass(frozen=True)
class RunOptions:
    """Where and how a run does its work; the rows never depend on any of it.

    Attributes:
        workers: tokenizer threads (None: all cores).
        backend: what computes the rows (``auto``, ``numba``, ``numpy``, ``torch``, ``triton``).
        device: where the hash runs (``cpu``, ``cuda``, ``cuda:N``); None: ``cpu`` for ``auto``,
            else the backend's first usable device.
        shard_index: with ``num_shards``, hash only this worker's share of the inputs.
        num_shards: the workers sharing a sharded run (None: from ``RANK``/``WORLD_SIZE``, or
            ``SLURM_ARRAY_*``).
        resume: skip the shards already finished with the same settings.
        row_groups_per_shard: split a parquet file with more row groups into shards of this many.
        engine: ``local``, or ``ray`` to run the shards as Ray tasks.
        ray_address: the Ray cluster (``auto``, ``ray://...``, ``HOST:PORT``); None:
            ``RAY_ADDRESS``, else a local Ray instance.

    Examples:
        >>> from ngramtool import RunOptions
        >>> RunOptions(workers=2, backend="numpy").shards_asked, RunOptions(resume=True).shards_asked
        (False, True)
    """

    workers: int | None = None
    backend: str = "auto"
    device: str | None = None
    shard_index: int | None = None
    num_shards: int | None = None
    resume: bool = False
    row_groups_per_shard: int | None = None
    engine: str = "local"
    ray_address: str | None = None

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise UsageError(f"`engine` must be one of {', '.join(ENGINES)} (got {self.engine!r})")
        if self.row_groups_per_shard is not None and self.row_groups_per_shard < 1:
            raise UsageError(f"`row_groups_per_shard` must be at least 1 (got {self.row_groups_per_shard})")

    @property
    def shards_asked(self) -> bool:
        """Whether any option that applies only to sharded runs is set."""
        return (
            self.shard_index is not None
            or self.num_shards is not None
            or self.resume
            or self.engine != "local"
            or self.row_groups_per_shard is not None
        )


@dataclass(frozen=True)
class HashRequest:
    """Everything a hash run is asked to do (what :func:`ngramtool.hash_files` takes).

    Attributes:
        source: the text inputs or the token file; None when the documents come as strings.
        output: the index directory; ``-``: a pipe stream on stdout; ``DIR/`` (or an existing
            directory that is empty or holds shards): one index shard per input file. None: the
            first input + ``.ngidx``.
        mapping: the tokenizer, vocabulary and spec; or a function that builds them, called
            once the request's checks pass (so a mistake in the request is reported before any
            tokenizer loads); None: the default mapping (:meth:`NgramHashMapping.build`), for a
            token file the ids assumed to be its tokenizer's.
        boundary: ``none`` pads only at the stream start (Engram); ``reset`` at every document.
        outputs: what is written and how.
        run: where and how the work runs.
    """

    source: Source | None
    output: str | None = None
    mapping: NgramHashMapping | Callable[[], NgramHashMapping] | None = None
    boundary: str = "none"
    outputs: OutputOptions = field(default_factory=OutputOptions)
    run: RunOptions = field(default_factory=RunOptions)

    def __post_init__(self) -> None:
        check_boundary_policy(self.boundary)
        if self.output is not None:
            object.__setattr__(self, "output", str(self.output))
