"""Sharded runs: one index per input file (or per few row groups of a parquet file), a
deterministic subset per worker, resumable.

A shard is finished exactly when its directory exists: indexes are built under a ``.partial`` name
and renamed into place when complete, so ``kill -9`` at any moment leaves no directory that looks
finished, and a rerun with ``resume`` skips the finished ones and redoes the rest. Which inputs
a worker takes comes from its arguments or its scheduler's environment (torchrun, Slurm arrays).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..formats.dataset import DATASET
from ..formats.index import MANIFEST, VOCAB_STORE, read_manifest
from ..formats.settings import settings_difference
from ..inputs import input_form, parquet_row_groups
from ..util.atomic import locked_destination, unfinished_destination
from ..util.errors import UsageError

SHARD_SUFFIX = ".ngidx"
_GLOB_CHARS = set("*?[")


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
