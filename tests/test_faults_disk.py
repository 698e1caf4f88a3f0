"""Real file systems that fill up or refuse writes: small tmpfs mounts (root only; where mounts
are not allowed, tests/test_faults.py's patched writes cover every write site instead).

Each command writes to a file system with little room left: it ends with one line naming the
output, the bytes written, the bytes still needed and the free space, exit status 1, and nothing
left on that file system; after space is freed, the same command succeeds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import CORPUS, NGRAMTOOL, assert_one_line_error, run

from ngramtool import hash_files


def _can_mount(probe: Path) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    probe.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)], capture_output=True
    )
    if mounted.returncode == 0:
        subprocess.run(["umount", str(probe)], check=True)
    return mounted.returncode == 0


@pytest.fixture(scope="module")
def mounting(tmp_path_factory: pytest.TempPathFactory) -> None:
    if not _can_mount(tmp_path_factory.mktemp("probe") / "fs"):
        pytest.skip("needs root and tmpfs mounts (tests/test_faults.py patches writes instead)")


Disk = Callable[..., Path]


@pytest.fixture
def disk(mounting: None, tmp_path: Path) -> Iterator[Disk]:
    """``disk(free=N)``: a new tmpfs with about N bytes free (a filler file takes the rest, up to
    ``size`` bytes, which removing the filler frees); ``disk(read_only=True)``: a read-only one.
    Unmounted after the test."""
    mounts: list[Path] = []

    def make(free: int = 0, *, size: int = 0, read_only: bool = False) -> Path:
        point = tmp_path / f"fs{len(mounts)}"
        point.mkdir()
        size = max(size, (free // 4096 + 64) * 4096)  # room for the directory's pages
        options = f"size={size}" + (",ro" if read_only else "")
        subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(point)], check=True)
        mounts.append(point)
        if not read_only:
            filler_size = os.statvfs(point).f_bavail * 4096 - free
            with (point / "filler").open("wb") as filler:
                filler.truncate(0)
                filler.write(b"\0" * max(filler_size, 0))
        return point

    yield make
    for point in mounts:
        subprocess.run(["umount", "-l", str(point)], check=False)


def _left(point: Path) -> list[str]:
    """What a run left on a test file system besides its filler."""
    return sorted(p.name for p in point.iterdir() if p.name != "filler")


def _free_up(point: Path) -> None:
    (point / "filler").unlink()


@pytest.fixture(scope="module")
def corpus_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("index") / "c.ngidx"
    hash_files([CORPUS], out, heads=2)
    return out


def test_hash_refuses_before_it_starts_when_the_estimate_does_not_fit(disk: Disk) -> None:
    point = disk(free=1_000_000)
    result = run("hash", CORPUS, "-o", point / "x.ngidx")
    assert_one_line_error(result, 1, f"not enough free space for {point / 'x.ngidx'}: about ")
    err = result.stderr.decode()
    assert "bytes per token) but " in err and "pass --no-space-check to try anyway" in err
    assert _left(point) == []


def test_a_disk_that_fills_while_hashing_leaves_nothing_and_says_how_much(disk: Disk) -> None:
    point = disk(free=1_000_000, size=32_000_000)
    result = run("hash", CORPUS, "-o", point / "x.ngidx", "--no-space-check")
    assert_one_line_error(result, 1, f"cannot write {point / 'x.ngidx'}: no space left on device (wrote ")
    err = result.stderr.decode()
    assert " of about 21" in err and "MB more needed; " in err and "nothing was left behind" in err
    assert _left(point) == []
    _free_up(point)
    assert run("hash", CORPUS, "-o", point / "x.ngidx", "-q").returncode == 0
    assert _left(point) == ["x.ngidx"]


def test_a_full_disk_under_a_saved_token_file_leaves_no_index_either(disk: Disk, tmp_path: Path) -> None:
    point = disk(free=50_000)
    result = run(
        "hash", CORPUS, "-o", tmp_path / "x.ngidx", "--save-tokens", point / "x.ds", "--no-space-check"
    )
    assert_one_line_error(result, 1, f"cannot write {point / 'x.ds'}: no space left on device (wrote ")
    assert _left(point) == [] and not (tmp_path / "x.ngidx").exists()


def test_a_full_disk_under_a_stream_names_the_file(disk: Disk) -> None:
    point = disk(free=2_000_000)
    with (point / "s.stream").open("wb") as out:
        result = subprocess.run(
            [*NGRAMTOOL, "hash", str(CORPUS), "-o", "-"], stdout=out, stderr=subprocess.PIPE
        )
    err = result.stderr.decode()
    assert result.returncode == 1, err
    assert (
        f"cannot write the stream to standard output ({point / 's.stream'}): no space left on device" in err
    )
    assert "it ends without its trailer, so readers reject it" in err
    inspected = run("inspect", point / "s.stream")
    assert inspected.returncode == 1 and b"stream truncated" in inspected.stderr


@pytest.mark.parametrize(
    ("command", "output"),
    [
        (("export", "{index}", "-o", "{point}/x.layers"), "x.layers"),
        (("tokenize", str(CORPUS), "-o", "{point}/ids.npy"), "ids.npy"),
        (
            ("collisions", str(CORPUS), "--heads", "2", "--save-types", "{point}/c.ngtypes.npz"),
            "c.ngtypes.npz",
        ),
        (
            ("collisions", str(CORPUS), "--heads", "2", "--table", "4099,8191", "--plot", "{point}/p.png"),
            "p.png",
        ),
        (("vocab", "--export", "{point}/lut.npy"), "lut.npy"),
        (("spec", "save", "{point}/spec.json", "--heads", "4"), "spec.json"),
        (("hash", str(CORPUS), "-o", "{point}/shards/", "--no-space-check", "-q"), "shards/"),
    ],
)
def test_every_command_that_writes_a_file_leaves_nothing_on_a_full_disk(
    disk: Disk, corpus_index: Path, command: tuple[str, ...], output: str
) -> None:
    point = disk(free=0)
    args = [part.format(point=point, index=corpus_index) for part in command]
    result = run(*args)
    assert_one_line_error(result, 1, "no space left on device")
    assert f"cannot write {point / output}".rstrip("/") in result.stderr.decode()
    left = [p for p in point.rglob("*") if p.name != "filler" and not p.is_dir()]
    assert left == [], left


def test_a_full_disk_under_merge_keeps_the_shards(disk: Disk) -> None:
    point = disk(free=200_000)
    (point / "a.txt").write_text("a few words " * 200)
    assert (
        run("hash", point / "a.txt", "-o", f"{point}/out/", "-q", "-t", "bytes", "--heads", "1").returncode
        == 0
    )
    (point / "filler2").write_bytes(b"\0" * (os.statvfs(point).f_bavail * 4096))
    result = run("merge", point / "out")
    assert_one_line_error(
        result, 1, f"cannot write {point / 'out' / 'dataset.json'}: no space left on device"
    )
    assert sorted(p.name for p in (point / "out").iterdir()) == ["a.txt.ngidx", "vocab"]


def test_a_vocabulary_cache_on_a_full_disk_is_skipped(disk: Disk, tmp_path: Path) -> None:
    point = disk(free=0)
    result = run("hash", CORPUS, "-o", tmp_path / "x.ngidx", "-q", env={"NGRAMTOOL_CACHE_DIR": str(point)})
    assert result.returncode == 0, result.stderr.decode()
    assert [p for p in point.rglob("*") if p.is_file() and p.name != "filler"] == []


def test_a_read_only_file_system_is_named(disk: Disk) -> None:
    point = disk(read_only=True)
    result = run("hash", CORPUS, "-o", point / "x.ngidx", "--no-space-check")
    assert_one_line_error(
        result, 1, f"cannot write {point / 'x.ngidx'}: read-only file system (wrote 0 B of about"
    )
    assert "write to a writable file system" in result.stderr.decode()
