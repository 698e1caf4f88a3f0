"""Sharded runs: one index per input file, a deterministic subset per worker, resumable.

A shard is finished exactly when its directory exists: indexes are built under a ``.partial``
name and renamed into place when complete, so ``kill -9`` at any moment leaves no directory that
looks finished, and a rerun with ``resume`` skips the finished ones and redoes the rest.
"""

from __future__ import annotations

import glob
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import UsageError
from .formats.atomic import partial_pattern
from .formats.dataset import DATASET
from .formats.index import MANIFEST, VOCAB_STORE, read_manifest
from .formats.settings import settings_difference

SHARD_SUFFIX = ".ngidx"
_GLOB_CHARS = set("*?[")


def expand_inputs(patterns: list[str]) -> list[str]:
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


def shard_selection(
    shard_index: int | None, num_shards: int | None, env: Mapping[str, str] = os.environ
) -> tuple[int, int]:
    """(i, n): this worker takes inputs i, i+n, i+2n, ...

    From the options when given, else RANK/WORLD_SIZE (torchrun), else a Slurm job array
    (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT), else (0, 1).
    """
    if (shard_index is None) != (num_shards is None):
        raise UsageError("--shard-index and --num-shards go together")
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
    """One input file and the index it becomes; ``done`` when that index is already complete."""

    source: str
    dest: Path
    done: bool


def plan_shards(
    inputs: list[str],
    out_dir: Path,
    *,
    shard_index: int,
    num_shards: int,
    expected: dict[str, Any],
    resume: bool,
    force: bool,
) -> list[Shard]:
    """This worker's shards, in order, with finished ones marked (``resume``) or refused.

    ``expected`` is the manifest this run writes (without counts and arrays): a finished shard is
    skipped only when its settings agree with it (:func:`settings_difference`).
    """
    if "-" in inputs:
        raise UsageError("a sharded run reads files, not stdin")
    names = [Path(source).name for source in inputs]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise UsageError(f"inputs share file names {duplicates[:3]}: each shard is named after its file")
    shards = []
    for source in inputs[shard_index::num_shards]:
        dest = out_dir / f"{Path(source).name}{SHARD_SUFFIX}"
        done = (dest / MANIFEST).is_file()
        if done and not force:
            if not resume:
                raise UsageError(f"{dest} already exists: pass --resume to skip finished shards or --force")
            differs = settings_difference(expected, read_manifest(dest))
            if differs is not None:
                raise UsageError(
                    f"{dest} was made with another {differs.setting} ({differs.theirs} there, "
                    f"{differs.ours} in this run): remove it, or pass --force to hash it again"
                )
        shards.append(Shard(source, dest, done and not force))
    return shards


def remove_stale_partials(shard: Shard) -> None:
    """Delete what a killed run left of this shard (``.NAME.XXXX.partial`` directories)."""
    for leftover in shard.dest.parent.glob(partial_pattern(shard.dest.name)):
        shutil.rmtree(leftover, ignore_errors=True)


def holds_shards(directory: Path) -> bool:
    """Whether an existing directory can take a sharded run's output without a trailing slash.

    True when it is empty or holds only what sharded runs write there: finished shards
    (``NAME.ngidx`` indexes), the ``.partial`` leftovers of killed ones, the shards' shared
    ``vocab/`` folder, and a merged ``dataset.json``. A directory with anything else in it (the
    inputs, other files) is not.
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
    return entry.match(partial_pattern(f"*{SHARD_SUFFIX}"))
