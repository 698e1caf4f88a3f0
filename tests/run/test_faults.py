"""Faults while writing outputs, and what holds after each (docs/reliability.md).

A full disk at every write call of every kind of output (a patched write, so it runs everywhere;
tests/run/test_faults_disk.py fills real file systems), kill -9 at 20 random moments followed by a
rerun, SIGTERM, SIGINT and SIGHUP mid-run, a second signal, two writers of one output at once,
owner records and the reclaiming of dead runs' leftovers, an output directory removed mid-run,
the free-space check, and a damaged output caught by ``verify``.
"""

from __future__ import annotations

import errno
import io
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from conftest import CORPUS, NGRAMTOOL, assert_one_line_error, corpus_prefix, run

from ngramtool import NgramHashMapping, OutputOptions, TokenFileReader, hash_files, open_index
from ngramtool.analysis.measurement import measure_collisions
from ngramtool.formats.checksum import SHA256, array_checksum
from ngramtool.formats.dataset import merge_shards, survey_shards
from ngramtool.formats.stream import read_stream
from ngramtool.formats.tokenfiles import open_token_file
from ngramtool.model.presets import save_spec_file
from ngramtool.spec.hashspec import HashSpec
from ngramtool.tokenizers import load_tokenizer
from ngramtool.tokenizers.vocab import build_vocab
from ngramtool.tools.describe import describe_vocab
from ngramtool.tools.export import export_path
from ngramtool.tools.tokenization import Tokenized
from ngramtool.tools.verify import verify_path
from ngramtool.util import atomic
from ngramtool.util import signals as interrupts
from ngramtool.util.atomic import (
    OutputBusy,
    OutputError,
    OutputLock,
    Owner,
    Staged,
    close_quietly,
    leftovers_of,
    reclaim_leftovers,
    this_owner,
)
from ngramtool.util.errors import NgramToolError

SMALL = {"tokenizer": "bytes", "heads": 1, "table_sizes": 1009}


# ----------------------------------------------------------------------------- a patched disk
class FaultyDisk:
    """Every file opened for writing through ``Path.open`` counts its write calls, and so does
    every ``os.pwrite`` (all files together); from the ``fail_at``-th on, a call writes half of its
    bytes (a ``pwrite``: none) and fails with ``error``, as a filling disk does. ``fail_at`` None
    only counts."""

    def __init__(self, fail_at: int | None = None, error: int = errno.ENOSPC) -> None:
        self.fail_at, self.error, self.writes = fail_at, error, 0

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        real_open = Path.open
        disk = self

        def opened(path: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            handle = real_open(path, mode, *args, **kwargs)
            return _FaultyFile(handle, disk) if set(mode) & set("wa+") else handle

        monkeypatch.setattr(Path, "open", opened)
        real_pwrite = os.pwrite

        def pwrite(fd: int, data: Any, offset: int) -> int:  # the O_DIRECT writers' way
            disk.writes += 1
            if disk.fail_at is not None and disk.writes >= disk.fail_at:
                raise OSError(disk.error, os.strerror(disk.error))
            return real_pwrite(fd, data, offset)

        monkeypatch.setattr(os, "pwrite", pwrite)


class _FaultyFile:
    def __init__(self, handle: Any, disk: FaultyDisk) -> None:
        self._handle, self._disk = handle, disk

    def write(self, data: Any) -> int:
        self._disk.writes += 1
        if self._disk.fail_at is not None and self._disk.writes >= self._disk.fail_at:
            self._handle.write(data[: len(data) // 2])
            raise OSError(self._disk.error, os.strerror(self._disk.error))
        return self._handle.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)

    def __enter__(self) -> _FaultyFile:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._handle.__exit__(*exc_info)


@pytest.fixture(scope="module")
def text(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return corpus_prefix(tmp_path_factory.mktemp("text"), "t.txt", 3000)


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory, text: Path) -> Path:
    """Two finished shards to merge."""
    folder = tmp_path_factory.mktemp("shards")
    for name in ("a.txt", "b.txt"):
        (folder / name).write_text(text.read_text(encoding="utf-8"), encoding="utf-8")
    out = folder / "out"
    hash_files([folder / "a.txt", folder / "b.txt"], f"{out}/", mapping=NgramHashMapping.build(**SMALL))
    return out


def _stream_to(path: Path) -> Callable[[], Any]:
    """hash_files to ``-`` with standard output going to ``path`` (opened through the disk)."""

    def write() -> None:
        with path.open("wb") as handle:
            sys.stdout = SimpleNamespace(buffer=handle)  # type: ignore[assignment]
            try:
                hash_files([TEXT[0]], "-", mapping=NgramHashMapping.build(**SMALL))
            finally:
                sys.stdout = sys.__stdout__

    return write


TEXT: list[Path] = []  # the module's text file, for the write sites below


def _index_saving(out: Path, saved: Path, fmt: str | None = None) -> Any:
    """An index ``out/x.ngidx`` of the module's text, its tokens also saved at ``saved``."""
    outputs = OutputOptions(save_tokens=saved, save_format=fmt)
    return hash_files([TEXT[0]], out / "x.ngidx", mapping=NgramHashMapping.build(**SMALL), outputs=outputs)


# Each write site: what it writes into a fresh folder ``out``, and the outputs it may name.
SITES: dict[str, tuple[Callable[[Path], Any], tuple[str, ...]]] = {
    "index and a datatrove token file": (
        lambda out: _index_saving(out, out / "x.ds"),
        ("x.ngidx", "x.ds"),
    ),
    "index and Megatron files": (
        lambda out: _index_saving(out, out / "m", "megatron"),
        ("x.ngidx", "m.bin"),
    ),
    "index and an llm.c file": (
        lambda out: _index_saving(out, out / "x.bin", "llmc"),
        ("x.ngidx", "x.bin"),
    ),
    "shards": (
        lambda out: hash_files([TEXT[0]], f"{out}/s/", mapping=NgramHashMapping.build(**SMALL)),
        ("s/t.txt.ngidx", "s/vocab/"),
    ),
    "per-layer export": (
        lambda out: export_path(TEXT[1], out / "x.layers"),
        ("x.layers",),
    ),
    "tokenize -o": (
        lambda out: Tokenized([TEXT[0]], NgramHashMapping.build("bytes")).save(out / "ids.npy"),
        ("ids.npy",),
    ),
    "saved type counts": (
        lambda out: measure_collisions(
            [TEXT[0]],
            NgramHashMapping.build("bytes", heads=1),
            table_sizes=[1009],
            save_types=out / "c.ngtypes.npz",
        ),
        ("c.ngtypes.npz",),
    ),
    "spec file": (
        lambda out: save_spec_file(HashSpec(heads=2), out / "spec.json"),
        ("spec.json",),
    ),
    "vocab --export": (
        lambda out: describe_vocab("bytes", export=out / "lut.npy"),
        ("lut.npy",),
    ),
    "merge": (
        lambda out: merge_shards(TEXT[2]),
        ("dataset.json",),
    ),
}


@pytest.fixture(scope="module", autouse=True)
def _site_inputs(text: Path, shards: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    index = tmp_path_factory.mktemp("index") / "i.ngidx"
    hash_files([text], index, mapping=NgramHashMapping.build(**SMALL))
    TEXT[:] = [text, index, shards]
    build_vocab(load_tokenizer("bytes"))  # the vocabulary cache is in place: the runs below write the same


def _entries(folder: Path) -> list[str]:
    """What lies in ``folder``: files and hidden entries (the folders a sharded run makes for its
    output may stay, empty)."""
    return sorted(
        str(p.relative_to(folder)) for p in folder.rglob("*") if not p.is_dir() or p.name.startswith(".")
    )


def _a_whole_shared_table(path: Path) -> bool:
    """A sharded run's shared lookup table, whole (shards finished later use it): not a leftover."""
    return path.parent.name == "vocab" and array_checksum(np.load(path), SHA256) == path.stem


@pytest.mark.parametrize("site", SITES)
def test_a_full_disk_at_every_write_of_every_output_leaves_nothing_and_says_how_much(
    site: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write, names = SITES[site]
    counting = FaultyDisk()
    counting.install(monkeypatch)
    (tmp_path / "count").mkdir()
    write(tmp_path / "count")  # a whole run: how many writes it makes
    monkeypatch.undo()
    assert counting.writes > 0
    calls = range(1, counting.writes + 1)
    chosen = sorted({*calls[:: max(1, len(calls) // 12)], calls[-1]})  # at most ~13 of them
    for fail_at in chosen:
        out = tmp_path / f"at{fail_at}"
        out.mkdir()
        before = _entries(TEXT[2]) if site == "merge" else []
        FaultyDisk(fail_at).install(monkeypatch)
        with pytest.raises(NgramToolError) as caught:
            write(out)
        monkeypatch.undo()
        message = str(caught.value)
        assert isinstance(caught.value, OutputError), message
        assert "no space left on device (wrote " in message and "nothing was left behind" in message
        scratch = "cannot write the collision analysis's scratch files in "  # counting spills there
        assert any(
            f"cannot write {folder / name}".rstrip("/") in message
            for folder in (out, TEXT[2])
            for name in names
        ) or (site == "saved type counts" and message.startswith(scratch)), message
        left = [name for name in _entries(out) if not _a_whole_shared_table(out / name)]
        assert left == [], f"write {fail_at} of {counting.writes}: {left}"
        if site == "merge":
            assert _entries(TEXT[2]) == before


def test_a_full_disk_under_a_stream_names_the_file_and_the_stream_is_rejected(
    text: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    FaultyDisk(fail_at=3).install(monkeypatch)
    with pytest.raises(OutputError) as caught:
        _stream_to(tmp_path / "s.bin")()
    monkeypatch.undo()
    message = str(caught.value)
    assert f"cannot write the stream to its file ({tmp_path / 's.bin'}): no space left on device" in message
    assert "it ends without its trailer, so readers reject it" in message
    result = run("inspect", tmp_path / "s.bin")
    assert result.returncode == 1 and b"stream truncated" in result.stderr


@pytest.mark.parametrize(
    ("error", "reason", "fix"),
    [
        (errno.EDQUOT, "disk quota exceeded", "free some of the quota"),
        (errno.EFBIG, "file too large", "ulimit -f"),
        (errno.EROFS, "read-only file system", "write to a writable file system"),
    ],
)
def test_a_quota_a_size_limit_and_a_read_only_file_system_are_named(
    text: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: int, reason: str, fix: str
) -> None:
    FaultyDisk(fail_at=4, error=error).install(monkeypatch)
    with pytest.raises(
        OutputError, match=f"cannot write {tmp_path / 'x.ngidx'}: {reason} \\(wrote "
    ) as caught:
        hash_files([text], tmp_path / "x.ngidx", mapping=NgramHashMapping.build(**SMALL))
    assert fix in str(caught.value)
    assert list(tmp_path.iterdir()) == []


def test_a_full_disk_keeps_the_vocabulary_cache_out_of_the_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache is an optimisation: a write that fails leaves no file and the run goes on."""
    monkeypatch.setenv("NGRAMTOOL_CACHE_DIR", str(tmp_path / "cache"))
    disk = FaultyDisk(fail_at=1)
    disk.install(monkeypatch)
    vocab = build_vocab(load_tokenizer("bytes"))
    assert vocab.raw_size == 256 and disk.writes >= 1  # it tried
    assert [p for p in (tmp_path / "cache").rglob("*") if p.is_file()] == []


def test_an_abandoned_file_closes_even_when_flushing_fails_again(tmp_path: Path) -> None:
    handle = (tmp_path / "f").open("wb")
    handle.write(b"x" * 10)  # buffered
    real = handle.raw.write

    def full(data: Any) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    handle.raw.write = full  # type: ignore[method-assign]
    close_quietly(handle)  # the flush fails; the error is dropped and the descriptor closed
    handle.raw.write = real  # type: ignore[method-assign]
    assert handle.raw.closed


# ------------------------------------------------------------------------------- the space check
def test_hash_refuses_early_when_the_estimate_exceeds_the_free_space(
    text: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("ngramtool.run.space.free_bytes", lambda path: 5000)
    out = tmp_path / "out"
    with pytest.raises(
        NgramToolError, match=f"not enough free space for {out / 'x.ngidx'}: about "
    ) as caught:
        hash_files([text], out / "x.ngidx", mapping=NgramHashMapping.build(**SMALL))
    assert "bytes per token) but " in str(caught.value) and "5 kB free" in str(caught.value)
    assert "`no_space_check=True`" in str(caught.value)
    assert not out.exists()
    index = hash_files(
        [text],
        out / "x.ngidx",
        mapping=NgramHashMapping.build(**SMALL),
        outputs=OutputOptions(space_check=False),
    )
    assert len(index) == len(text.read_bytes())


def test_the_space_estimate_is_close_to_what_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    needed: list[tuple[str, int]] = []
    monkeypatch.setattr("ngramtool.run.planning.check_free_space", lambda needs, basis: needed.extend(needs))
    index = hash_files(
        [CORPUS],
        tmp_path / "c.ngidx",
        mapping=NgramHashMapping.build("cl100k_base", heads=2),
        outputs=OutputOptions(save_tokens=tmp_path / "c.npy"),
    )
    written = {name: sum(p.stat().st_size for p in (tmp_path / name).rglob("*")) for name in ("c.ngidx",)}
    written["c.npy"] = (tmp_path / "c.npy").stat().st_size
    estimate = {Path(path).name: nbytes for path, nbytes in needed}
    assert len(index) == 158122
    for name, size in written.items():
        assert 0.8 < estimate[name] / size < 1.25, (name, estimate[name], size)
    needed.clear()
    hash_files(
        TokenFileReader(tmp_path / "c.npy"),
        tmp_path / "again.ngidx",
        mapping=NgramHashMapping.build("cl100k_base", heads=2),
    )
    assert dict(needed)[str(tmp_path / "again.ngidx")] == pytest.approx(written["c.ngidx"], rel=0.01)


def test_the_cli_check_is_skipped_with_no_space_check(text: Path, tmp_path: Path) -> None:
    result = run("hash", text, "-o", tmp_path / "x.ngidx", "--no-space-check", "-q", "-t", "bytes")
    assert result.returncode == 0, result.stderr.decode()


# ---------------------------------------------------------------------------------------- owners
def test_a_second_writer_of_one_output_is_refused_by_name(tmp_path: Path) -> None:
    with (
        Staged(tmp_path / "x.npy"),
        pytest.raises(
            OutputBusy, match=f"x.npy is being written by pid {os.getpid()} on {socket.gethostname()}"
        ),
    ):
        Staged(tmp_path / "x.npy")
    assert list(tmp_path.iterdir()) == []


def _dead_pid() -> int:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True
    )
    return int(done.stdout)


def test_liveness_compares_the_start_time_so_a_reused_pid_is_not_alive() -> None:
    me = this_owner()
    assert me.alive() is True
    assert Owner(me.pid, me.host, (me.started or 0) + 1, me.boot).alive() is False  # pid reused since
    assert Owner(_dead_pid(), me.host, None, me.boot).alive() is False
    assert Owner(me.pid, me.host, me.started, "another-boot").alive() is False
    assert Owner(me.pid, "elsewhere.example", me.started, me.boot).alive() is None  # cannot be told


def _hold(dest: Path, directory: bool = True) -> subprocess.Popen:
    """Another process that writes ``dest`` (holds its lock and a partial output, a directory or a
    file) until killed."""
    code = (
        "import sys, time\nfrom ngramtool.util.atomic import Staged\n"
        f"s = Staged({str(dest)!r}, directory={directory})\nprint('ready', flush=True)\ntime.sleep(600)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert process.stdout is not None and process.stdout.readline() == b"ready\n"
    return process


def test_a_live_runs_partial_is_never_reclaimed_and_a_dead_ones_is(tmp_path: Path, text: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    live = _hold(out / "a.txt.ngidx")
    try:
        names = sorted(p.name for p in out.iterdir())
        assert len(names) == 2 and names[0].startswith(".a.txt.ngidx.") and names[1] == ".a.txt.ngidx.lock"
        (out / ".c.txt.ngidx.0dead000.partial").mkdir()  # a killed run's, older than owner records
        assert reclaim_leftovers(out, ".ngidx") == [out / ".c.txt.ngidx.0dead000.partial"]
        assert sorted(p.name for p in out.iterdir()) == names
        _, left_out = survey_shards(out)
        assert (
            left_out[0]["reason"]
            == f"unfinished: a.txt.ngidx is being written by pid {live.pid} on {socket.gethostname()}"
        )
        with pytest.raises(OutputBusy, match=f"being written by pid {live.pid}"):
            hash_files([text], out / "a.txt.ngidx", mapping=NgramHashMapping.build(**SMALL))
    finally:
        live.kill()
        live.wait()
    assert reclaim_leftovers(out, ".ngidx") == [out / names[0]]  # its owner died: reclaimed
    assert list(out.iterdir()) == []


def test_the_next_writer_reclaims_a_killed_runs_partial_and_nothing_else(tmp_path: Path, text: Path) -> None:
    dead = _hold(tmp_path / "x.ngidx")
    dead.kill()
    dead.wait()
    (tmp_path / ".x.ngidx.layers.1a2b3c4d.partial").mkdir()  # another output's (x.ngidx.layers)
    hash_files([text], tmp_path / "x.ngidx", mapping=NgramHashMapping.build(**SMALL))
    assert sorted(p.name for p in tmp_path.iterdir()) == [".x.ngidx.layers.1a2b3c4d.partial", "x.ngidx"]


def test_the_next_writer_reclaims_the_old_output_a_killed_run_set_aside(tmp_path: Path, text: Path) -> None:
    """A run killed between replacing an output and removing the old one leaves ``.NAME.replaced-PID``
    (found by the kill -9 test below): the next writer of NAME removes it, not another output's."""
    hash_files([text], tmp_path / "x.ngidx", mapping=NgramHashMapping.build(**SMALL))
    shutil.copytree(tmp_path / "x.ngidx", tmp_path / ".x.ngidx.replaced-999999")
    (tmp_path / ".x.ngidx.layers.replaced-4242").mkdir()  # another output's (x.ngidx.layers)
    assert leftovers_of(tmp_path / "x.ngidx") == [tmp_path / ".x.ngidx.replaced-999999"]
    hash_files(
        [text],
        tmp_path / "x.ngidx",
        mapping=NgramHashMapping.build(**SMALL),
        outputs=OutputOptions(force=True),
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == [".x.ngidx.layers.replaced-4242", "x.ngidx"]


@pytest.mark.parametrize("site", SITES)
def test_every_output_refuses_a_live_writer_and_reclaims_a_killed_ones_leftovers(
    site: str, tmp_path: Path
) -> None:
    write, names = SITES[site]
    out = tmp_path / "out"
    out.mkdir()
    dest = (TEXT[2] if site == "merge" else out) / names[0].rstrip("/")
    dest.parent.mkdir(exist_ok=True)
    before = _entries(dest.parent)
    live = _hold(dest, directory=dest.suffix in {".ngidx", ".layers"})
    try:
        with pytest.raises(OutputBusy, match=f"{dest.name} is being written by pid {live.pid} on "):
            write(out)
    finally:
        live.kill()
        live.wait()
    assert len(leftovers_of(dest)) == 1  # the killed writer's partial output
    write(out)
    assert leftovers_of(dest) == [] and not atomic.lock_path(dest).exists()
    hidden = [name for name in _entries(dest.parent) if name not in before and "/." in f"/{name}"]
    assert hidden == [] and dest.exists()


def test_the_vocabulary_cache_reclaims_a_killed_writers_leftovers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NGRAMTOOL_CACHE_DIR", str(tmp_path))
    tokenizer = load_tokenizer("bytes")
    build_vocab(tokenizer)
    (entry,) = [p for p in tmp_path.rglob("*") if p.is_file()]
    entry.unlink()
    dead = _hold(entry, directory=False)
    dead.kill()
    dead.wait()
    assert len(leftovers_of(entry)) == 1
    assert build_vocab(tokenizer).raw_size == 256
    assert [p.name for p in entry.parent.iterdir()] == [entry.name]


def test_without_locks_the_owner_record_decides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_locks(fd: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(atomic.fcntl, "flock", no_locks)
    lock = atomic.lock_path(tmp_path / "x.npy")
    lock.write_text(
        f'{{"pid": {_dead_pid()}, "host": "{socket.gethostname()}", "started": null, "boot": null}}'
    )
    (tmp_path / ".x.npy.0dead000.partial").write_bytes(b"left by a dead run")
    with Staged(tmp_path / "x.npy") as staged:  # the owner is dead: taken over, its partial reclaimed
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([".x.npy.lock", staged.path.name])
        staged.path.write_bytes(b"new")
        staged.publish()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.npy"]
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        record = this_owner()
        lock.write_text(f'{{"pid": {live.pid}, "host": "{record.host}", "started": null, "boot": null}}')
        with pytest.raises(
            OutputBusy, match=f"pid {live.pid} .*this file system has no locks: if that run is gone, remove"
        ):
            Staged(tmp_path / "x.npy")
    finally:
        live.kill()
        live.wait()


def test_a_lock_file_removed_meanwhile_is_made_again(tmp_path: Path) -> None:
    first = OutputLock(tmp_path / "x")
    first.release()
    second = OutputLock(tmp_path / "x")
    assert atomic.lock_path(tmp_path / "x").exists()
    second.release()
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------------------- signals
def _signals_at_default() -> None:
    """In the child: the stop signals at their defaults, whatever the tests inherited (a suite run
    as a background job starts with SIGINT ignored, which ngramtool then keeps ignoring)."""
    for signum in interrupts.SIGNALS:
        signal.signal(signum, signal.SIG_DFL)


def _writer(out: Path, *extra: str) -> subprocess.Popen:
    """``ngramtool hash - -o out`` reading standard input that the test feeds: it holds its outputs
    open until the input ends."""
    process = subprocess.Popen(
        [*NGRAMTOOL, "hash", "-", "-o", str(out), "-t", "bytes", *extra],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_signals_at_default,
    )
    assert process.stdin is not None
    process.stdin.write(b"some text to hash " * 2000)
    process.stdin.flush()
    return process


def _wait_for(condition: Callable[[], bool], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)]
)
def test_a_signal_mid_run_removes_every_partial_output(tmp_path: Path, signum: int, code: int) -> None:
    process = _writer(tmp_path / "x.ngidx", "--save-tokens", str(tmp_path / "x.ds"))
    _wait_for(lambda: any(tmp_path.glob(".x.ds.offsets.*.partial")))  # the last output it begins
    process.send_signal(signum)
    _, err = process.communicate(timeout=60)
    assert process.returncode == code, err.decode()
    name = signal.Signals(signum).name
    assert err.decode() == f"error: interrupted by {name}: stopped, and removed the outputs it had begun\n"
    assert list(tmp_path.iterdir()) == []


def test_sigterm_mid_stream_leaves_a_stream_that_readers_reject() -> None:
    process = _writer(Path("-"))
    assert process.stdout is not None
    head = process.stdout.read(1000)  # it has begun the stream
    process.send_signal(signal.SIGTERM)
    rest, err = process.communicate(timeout=60)
    assert process.returncode == 143, err.decode()
    with pytest.raises(NgramToolError, match="stream truncated"):
        list(read_stream(io.BytesIO(head + rest)))


def test_sigterm_while_runs_are_sorted_on_threads_exits_at_once_leaving_nothing(tmp_path: Path) -> None:
    """``collisions`` of a token file counts on two threads; a SIGTERM once the sorting threads
    have started (buffers of 1,024 keys: thousands of runs, seconds of work) stops it with the
    one-line message and exit 143, and its scratch files (unlinked from the start) leave nothing
    in ``TMPDIR``."""
    ids = tmp_path / "ids.npy"
    np.save(ids, np.random.default_rng(0).integers(0, 256, 2_000_000, dtype=np.uint32))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    small_buffers = (
        "import sys; from ngramtool.analysis import counting; counting.FLUSH_BYTES = 4096; "
        "from ngramtool.cli.app import main; sys.argv[0] = 'ngramtool'; main()"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", small_buffers, "collisions", str(ids), "-t", "bytes", "--table", "1009", "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(scratch)},
        preexec_fn=_signals_at_default,
    )

    def spilling() -> bool:  # a scratch file is open: runs are being sorted and spilled
        try:
            return any(str(scratch) in os.readlink(fd) for fd in Path(f"/proc/{process.pid}/fd").iterdir())
        except OSError:  # a file closed meanwhile, or the process not started yet
            return False

    _wait_for(spilling)
    assert len(list(Path(f"/proc/{process.pid}/task").iterdir())) >= 3  # the sorting threads
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143, err.decode()
    assert err.decode().startswith("error: interrupted by SIGTERM") and err.decode().count("\n") == 1
    assert list(scratch.iterdir()) == []


def test_a_signal_in_a_step_that_must_not_stop_halfway_waits_for_its_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(interrupts, "_STATE", interrupts._State())
    done = []
    with pytest.raises(interrupts.Interrupted) as caught, interrupts.shielded():
        interrupts._on_signal(signal.SIGTERM, None)  # arrives inside: recorded, not raised
        done.append("finished")
    assert done == ["finished"] and caught.value.exit_code == 143


def test_a_second_signal_exits_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(interrupts, "_STATE", interrupts._State())
    exits: list[int] = []

    def exit_now(code: int) -> None:
        exits.append(code)
        raise SystemExit(code)

    monkeypatch.setattr(interrupts.os, "_exit", exit_now)
    with pytest.raises(interrupts.Interrupted):
        interrupts._on_signal(signal.SIGINT, None)
    with pytest.raises(SystemExit), interrupts.shielded():  # even inside a step that must not stop halfway
        interrupts._on_signal(signal.SIGTERM, None)
    assert exits == [143]


def test_publishing_is_never_cut_in_half_by_a_signal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where two names cannot be swapped, a signal between the two renames that replace a
    directory waits: the new output is in place, the old one removed, and only then the run stops."""
    monkeypatch.setattr(interrupts, "_STATE", interrupts._State())
    monkeypatch.setattr(atomic, "_exchanged", lambda a, b: False)
    dest = tmp_path / "out"
    dest.mkdir()
    (dest / "old").write_text("old")
    real_replace = os.replace

    def replace_then_signal(src: Any, dst: Any) -> None:
        real_replace(src, dst)
        if Path(dst).name.startswith(".out.replaced-"):  # the old output was set aside
            interrupts._on_signal(signal.SIGTERM, None)

    monkeypatch.setattr(os, "replace", replace_then_signal)
    staged = Staged(dest, directory=True)
    (staged.path / "new").write_text("new")
    with pytest.raises(interrupts.Interrupted):
        staged.publish()
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["new", "out"]


def test_a_directory_is_replaced_in_one_step_and_a_run_dead_after_it_leaves_the_new_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The new output and the old trade names at once (no moment without ``out``, found by the
    kill -9 test below); a run that dies before it removes the old one leaves it under the
    temporary name, and the next writer removes it."""
    dest = tmp_path / "out"
    dest.mkdir()
    (dest / "old").write_text("old")
    probe = tmp_path / "probe"
    probe.mkdir()
    if not atomic._exchanged(probe, dest):
        pytest.skip("this file system cannot swap two names")
    atomic._exchanged(probe, dest)  # back as they were
    probe.rmdir()

    def rename(src: Any, dst: Any) -> None:
        raise AssertionError(f"renamed {src} to {dst}: not one step")

    monkeypatch.setattr(os, "replace", rename)
    monkeypatch.setattr(atomic, "remove_path", lambda path: False)  # the run dies before removing
    staged = Staged(dest, directory=True)
    (staged.path / "new").write_text("new")
    staged.publish()
    assert [p.name for p in dest.iterdir()] == ["new"]
    assert [p.name for p in staged.path.iterdir()] == ["old"]  # the old output, under the temporary name
    monkeypatch.undo()
    Staged(dest, directory=True).discard()  # the next writer
    assert [p.name for p in tmp_path.iterdir()] == ["out"] and [p.name for p in dest.iterdir()] == ["new"]


def test_an_old_output_set_aside_by_a_run_that_died_before_replacing_it_is_put_back(
    tmp_path: Path, text: Path
) -> None:
    """Where names cannot be swapped, a run killed between its two renames leaves ``NAME`` missing
    and the old output as ``.NAME.replaced-PID``: the next writer puts it back, so a run without
    ``--force`` refuses to replace it and one with ``--force`` replaces it."""
    hash_files([text], tmp_path / "x.ngidx", mapping=NgramHashMapping.build(**SMALL))
    os.replace(tmp_path / "x.ngidx", tmp_path / ".x.ngidx.replaced-999999")
    result = run("hash", text, "-o", tmp_path / "x.ngidx", "-q")
    assert_one_line_error(result, 2, "x.ngidx already exists")
    assert [p.name for p in tmp_path.iterdir()] == ["x.ngidx"]
    verify_path(tmp_path / "x.ngidx")
    os.replace(tmp_path / "x.ngidx", tmp_path / ".x.ngidx.replaced-999999")
    hash_files(
        [text],
        tmp_path / "x.ngidx",
        mapping=NgramHashMapping.build(**SMALL),
        outputs=OutputOptions(force=True),
    )
    assert [p.name for p in tmp_path.iterdir()] == ["x.ngidx"]
    verify_path(tmp_path / "x.ngidx")


# ------------------------------------------------------------------------------ two writers at once
def test_a_second_run_writing_the_same_output_exits_1_naming_the_first(tmp_path: Path) -> None:
    first = _writer(tmp_path / "x.ngidx")
    _wait_for(lambda: atomic.lock_path(tmp_path / "x.ngidx").exists())
    second = run("hash", CORPUS, "-o", tmp_path / "x.ngidx", "--force", "-q")
    assert_one_line_error(second, 1, f"x.ngidx is being written by pid {first.pid} on {socket.gethostname()}")
    _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err.decode()
    assert [p.name for p in tmp_path.iterdir()] == ["x.ngidx"]
    assert len(open_index(tmp_path / "x.ngidx")) == len(b"some text to hash " * 2000)


def test_an_output_directory_removed_mid_run_is_named(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    process = _writer(out / "x.ngidx")
    _wait_for(lambda: any(out.glob(".x.ngidx.*.partial")))
    subprocess.run(["rm", "-rf", str(out)], check=True)
    _, err = process.communicate(timeout=120)
    message = err.decode()
    assert process.returncode == 1, message
    gone = f"its directory {out} was removed while it was being written"
    assert message.startswith(f"error: cannot write {out / 'x.ngidx'}: {gone} (wrote ")
    assert "recreate it and run again" in message and len(message.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------ kill -9, then rerun
def _identity(path: Path) -> tuple[int, int]:
    """What tells one published directory from the next at the same path."""
    info = path.stat()
    return info.st_ino, info.st_ctime_ns


def test_kill_9_at_20_random_moments_then_a_rerun_leaves_valid_outputs_and_nothing_else(
    tmp_path: Path,
) -> None:
    source = tmp_path / "in.txt"
    source.write_text(CORPUS.read_text(encoding="utf-8")[:30_000], encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    args = [
        "hash",
        str(source),
        "-o",
        str(out / "x.ngidx"),
        "--save-tokens",
        str(out / "x.ds"),
        "--force",
        "-q",
    ]
    outputs = OutputOptions(save_tokens=out / "x.ds", force=True)
    began = time.monotonic()
    assert subprocess.run([*NGRAMTOOL, *args], capture_output=True).returncode == 0
    whole = time.monotonic() - began  # how long a run takes on this machine now
    verify_path(out / "x.ngidx")
    rerun = _identity(out / "x.ngidx")  # the output known to verify
    moments = random.Random(14)
    for _ in range(20):
        process = subprocess.Popen([*NGRAMTOOL, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(moments.uniform(0, whole))
        process.kill()
        process.wait()
        published = _identity(out / "x.ngidx") != rerun
        if published:  # the killed run finished its outputs: what looks complete verifies
            verify_path(out / "x.ngidx")
        assert open_token_file(out / "x.ds").num_tokens == len(open_index(out / "x.ngidx"))
        hash_files([source], out / "x.ngidx", outputs=outputs)  # the rerun
        rerun = _identity(out / "x.ngidx")
        assert sorted(p.name for p in out.iterdir()) == ["x.ds", "x.ds.index", "x.ngidx"]
    verify_path(out / "x.ngidx")


# ----------------------------------------------------------------------------- damage and verify
@pytest.mark.parametrize(
    "damage",
    ["flip a row", "flip a token", "truncate the rows", "drop a document offset", "edit the manifest"],
)
def test_verify_catches_a_damaged_output(text: Path, tmp_path: Path, damage: str) -> None:
    index = tmp_path / "x.ngidx"
    hash_files([text], index, mapping=NgramHashMapping.build(**SMALL))
    verify_path(index)  # whole
    if damage == "flip a row":
        _flip(index / "rows.npy", 300)
    elif damage == "flip a token":
        _flip(index / "tokens.npy", 200)
    elif damage == "truncate the rows":
        os.truncate(index / "rows.npy", (index / "rows.npy").stat().st_size - 4)
    elif damage == "drop a document offset":
        np.save(index / "doc_offsets.npy", np.array([0], dtype=np.int64))
    else:
        manifest = (index / "manifest.json").read_text()
        tokens = len(text.read_bytes())
        edited = manifest.replace(f'"num_tokens": {tokens}', f'"num_tokens": {tokens - 1}')
        assert edited != manifest
        (index / "manifest.json").write_text(edited)
    result = run("verify", index)
    assert result.returncode == 1 and result.stderr.startswith(b"error: "), result.stderr
    assert len(result.stderr.decode().splitlines()) == 1


def _flip(path: Path, offset: int) -> None:
    with path.open("r+b") as handle:
        handle.seek(offset)
        byte = handle.read(1)
        handle.seek(offset)
        handle.write(bytes([byte[0] ^ 0x01]))
