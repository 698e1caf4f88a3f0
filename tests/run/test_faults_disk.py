"""Small file systems that fill up or refuse writes: a real tmpfs mount where mounts are allowed
(root), else a simulated one (tests/fakedisk.py: the same commands with ``open`` and ``statvfs``
under the folder limited to its capacity). Neither is skipped: every test runs one or the other.

Each command writes to a file system with little room left: it ends with one line naming the
output, the bytes written, the bytes still needed and the free space, exit status 1, and nothing
left on that file system; after space is freed, the same command succeeds.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import CORPUS, NGRAMTOOL, assert_one_line_error
from fakedisk import FakeDisk

from ngramtool import NgramHashMapping, hash_files

FAKE_DISK = Path(__file__).parent.parent / "fakedisk.py"
_PAGE = 4096


def _can_mount(probe: Path) -> bool:
    """Whether tmpfs mounts work here (root; ``NGRAMTOOL_TEST_SIMULATED_DISKS=1`` says no, to test
    the simulated disks where mounts work)."""
    if os.environ.get("NGRAMTOOL_TEST_SIMULATED_DISKS") == "1":
        return False
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
def mounts(tmp_path_factory: pytest.TempPathFactory) -> bool:
    return _can_mount(tmp_path_factory.mktemp("probe") / "fs")


class SmallDisk:
    """A small file system at ``point`` with about ``free`` bytes free; :meth:`free_up` makes
    ``size`` bytes free. Mounted: a tmpfs whose filler file takes the rest. Simulated: a folder
    that ngramtool, run through :meth:`run`, sees as a file system of that capacity."""

    def __init__(self, point: Path, free: int, size: int, read_only: bool, mounted: bool) -> None:
        self.point, self.size, self.read_only, self.mounted = point, size, read_only, mounted
        self.capacity = free
        if not mounted:
            return
        options = f"size={size}" + (",ro" if read_only else "")
        subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(point)], check=True)
        if not read_only:
            self._fill("filler", os.statvfs(point).f_bavail * _PAGE - free)

    def argv(self) -> list[str]:
        """The command line that runs ngramtool with this file system."""
        if self.mounted:
            return list(NGRAMTOOL)
        capacity = "ro" if self.read_only else str(self.capacity)
        return [sys.executable, str(FAKE_DISK), str(self.point), capacity, "ngramtool"]

    def run(self, *args: object, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        """``ngramtool ARGS...`` writing to this file system."""
        return subprocess.run(
            [*self.argv(), *map(str, args)],
            capture_output=True,
            env={**os.environ, **(env or {})},
            timeout=300,
        )

    def fill(self) -> None:
        """Leave no free space."""
        if self.mounted:
            self._fill("filler2", os.statvfs(self.point).f_bavail * _PAGE)
        else:
            self.capacity = FakeDisk(str(self.point), 0).used()

    def free_up(self) -> None:
        """Make ``size`` bytes free."""
        if self.mounted:
            (self.point / "filler").unlink()
        else:
            self.capacity = self.size

    def left(self) -> list[str]:
        """The files a run left on this file system (fillers aside)."""
        return sorted(
            str(p.relative_to(self.point))
            for p in self.point.rglob("*")
            if not p.name.startswith("filler") and not p.is_dir()
        )

    def _fill(self, name: str, size: int) -> None:
        with (self.point / name).open("wb") as filler:
            filler.write(b"\0" * max(size, 0))


Disk = Callable[..., SmallDisk]


@pytest.fixture
def disk(mounts: bool, tmp_path: Path) -> Iterator[Disk]:
    """``disk(free=N)``: a new small file system with about N bytes free (``size``: the bytes free
    after :meth:`SmallDisk.free_up`); ``disk(read_only=True)``: a read-only one."""
    made: list[SmallDisk] = []

    def make(free: int = 0, *, size: int = 0, read_only: bool = False) -> SmallDisk:
        point = tmp_path / f"fs{len(made)}"
        point.mkdir()
        size = max(size, (free // _PAGE + 64) * _PAGE)  # room for the directory's pages
        made.append(SmallDisk(point, free, size, read_only, mounts))
        return made[-1]

    yield make
    for small in made:
        if small.mounted:
            subprocess.run(["umount", "-l", str(small.point)], check=False)


@pytest.fixture(scope="module")
def corpus_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("index") / "c.ngidx"
    hash_files([CORPUS], out, mapping=NgramHashMapping.build("cl100k_base", heads=2))
    return out


def test_hash_refuses_before_it_starts_when_the_estimate_does_not_fit(disk: Disk) -> None:
    small = disk(free=1_000_000)
    point = small.point
    result = small.run("hash", CORPUS, "-o", point / "x.ngidx")
    assert_one_line_error(result, 1, f"not enough free space for {point / 'x.ngidx'}: about ")
    err = result.stderr.decode()
    assert "bytes per token) but " in err and "pass --no-space-check to try anyway" in err
    assert small.left() == []


def test_a_disk_that_fills_while_hashing_leaves_nothing_and_says_how_much(disk: Disk) -> None:
    small = disk(free=1_000_000, size=32_000_000)
    point = small.point
    result = small.run("hash", CORPUS, "-o", point / "x.ngidx", "--no-space-check")
    assert_one_line_error(result, 1, f"cannot write {point / 'x.ngidx'}: no space left on device (wrote ")
    err = result.stderr.decode()
    # the estimate comes from the input size, then from the tokens per input byte seen so far
    assert re.search(r"\(wrote [\d.]+ [kM]B of about [\d.]+ MB: about [\d.]+ MB more needed; ", err)
    assert "nothing was left behind" in err
    assert small.left() == []
    small.free_up()
    assert small.run("hash", CORPUS, "-o", point / "x.ngidx", "-q").returncode == 0
    assert {name.split("/")[0] for name in small.left()} == {"x.ngidx"}


def test_a_full_disk_under_a_saved_token_file_leaves_no_index_either(disk: Disk, tmp_path: Path) -> None:
    small = disk(free=50_000)
    point = small.point
    result = small.run(
        "hash", CORPUS, "-o", tmp_path / "x.ngidx", "--save-tokens", point / "x.ds", "--no-space-check"
    )
    assert_one_line_error(result, 1, f"cannot write {point / 'x.ds'}: no space left on device (wrote ")
    assert small.left() == [] and not (tmp_path / "x.ngidx").exists()


def test_a_full_disk_under_a_stream_names_the_file(disk: Disk) -> None:
    small = disk(free=2_000_000)
    point = small.point
    with (point / "s.stream").open("wb") as out:
        result = subprocess.run(
            [*small.argv(), "hash", str(CORPUS), "-o", "-"], stdout=out, stderr=subprocess.PIPE
        )
    err = result.stderr.decode()
    assert result.returncode == 1, err
    assert (
        f"cannot write the stream to standard output ({point / 's.stream'}): no space left on device" in err
    )
    assert "it ends without its trailer, so readers reject it" in err
    inspected = small.run("inspect", point / "s.stream")
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
    small = disk(free=0)
    point = small.point
    args = [part.format(point=point, index=corpus_index) for part in command]
    result = small.run(*args)
    assert_one_line_error(result, 1, "no space left on device")
    assert f"cannot write {point / output}".rstrip("/") in result.stderr.decode()
    assert small.left() == []


def test_a_full_disk_under_merge_keeps_the_shards(disk: Disk) -> None:
    small = disk(free=200_000)
    point = small.point
    (point / "a.txt").write_text("a few words " * 200)
    assert (
        small.run(
            "hash", point / "a.txt", "-o", f"{point}/out/", "-q", "-t", "bytes", "--heads", "1"
        ).returncode
        == 0
    )
    small.fill()
    result = small.run("merge", point / "out")
    assert_one_line_error(
        result, 1, f"cannot write {point / 'out' / 'dataset.json'}: no space left on device"
    )
    assert sorted(p.name for p in (point / "out").iterdir()) == ["a.txt.ngidx", "vocab"]


def test_a_vocabulary_cache_on_a_full_disk_is_skipped(disk: Disk, tmp_path: Path) -> None:
    small = disk(free=0)
    point = small.point
    result = small.run(
        "hash", CORPUS, "-o", tmp_path / "x.ngidx", "-q", env={"NGRAMTOOL_CACHE_DIR": str(point)}
    )
    assert result.returncode == 0, result.stderr.decode()
    assert small.left() == []


def test_a_read_only_file_system_is_named(disk: Disk) -> None:
    small = disk(read_only=True)
    point = small.point
    result = small.run("hash", CORPUS, "-o", point / "x.ngidx", "--no-space-check")
    assert_one_line_error(
        result, 1, f"cannot write {point / 'x.ngidx'}: read-only file system (wrote 0 B of about"
    )
    assert "write to a writable file system" in result.stderr.decode()
