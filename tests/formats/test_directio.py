"""O_DIRECT output files and their fallback through the page cache (formats/directio.py)."""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

import numpy as np
import pytest

import ngramtool.formats.directio as directio
from ngramtool.formats.directio import ALIGN, OutputFile, aligned_bytes

TMPFS = Path("/dev/shm")


def _payload(nbytes: int, seed: int = 0) -> np.ndarray:
    buffer = aligned_bytes(nbytes)
    buffer[:nbytes] = np.random.default_rng(seed).integers(0, 256, nbytes, dtype=np.uint8)
    return buffer


def _write_two_blocks_and_an_end(output: OutputFile) -> bytes:
    first, second = _payload(2 * ALIGN, 1), _payload(ALIGN + 100, 2)
    output.write(first, 0)
    output.write_end(second, 2 * ALIGN, ALIGN + 100)
    output.close()
    return first.tobytes() + second[: ALIGN + 100].tobytes()


def test_aligned_buffers_are_page_aligned() -> None:
    for size in (1, ALIGN, 3 * ALIGN + 5):
        buffer = aligned_bytes(size)
        assert buffer.__array_interface__["data"][0] % ALIGN == 0
        assert buffer.nbytes >= size and buffer.nbytes % ALIGN == 0


def test_a_direct_file_holds_exactly_what_was_written(tmp_path: Path) -> None:
    output = OutputFile(tmp_path / "direct.bin")
    direct = output.direct  # True where the filesystem takes O_DIRECT (ext4, xfs: this project's disks)
    expected = _write_two_blocks_and_an_end(output)
    assert (tmp_path / "direct.bin").read_bytes() == expected
    unaligned = OutputFile(tmp_path / "unaligned.bin")
    if direct:
        with pytest.raises(ValueError, match="alignment"):
            unaligned.write(_payload(ALIGN)[:100], 0)
    unaligned.close(sync=False)


@pytest.mark.skipif(not TMPFS.is_dir() or not hasattr(os, "O_DIRECT"), reason="no tmpfs at /dev/shm")
def test_a_file_on_tmpfs_is_written_whether_it_takes_o_direct_or_not() -> None:
    """tmpfs refused O_DIRECT at open before Linux 6.6 and takes it since."""
    path = TMPFS / f"ngramtool-directio-{os.getpid()}.bin"
    try:
        output = OutputFile(path)
        expected = _write_two_blocks_and_an_end(output)
        assert path.read_bytes() == expected
    finally:
        path.unlink(missing_ok=True)


def test_the_environment_turns_o_direct_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NGRAMTOOL_DIRECT_IO", "0")
    output = OutputFile(tmp_path / "cached.bin")
    assert not output.direct
    assert (tmp_path / "cached.bin").read_bytes() == b""
    expected = _write_two_blocks_and_an_end(output)
    assert (tmp_path / "cached.bin").read_bytes() == expected


def test_a_refusal_at_the_first_write_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Some filesystems open with O_DIRECT and refuse the first write (EINVAL)."""
    real_pwrite = os.pwrite
    refused = []

    def refuse_direct(fd: int, data: memoryview, offset: int) -> int:
        if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_DIRECT:
            refused.append(offset)
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_pwrite(fd, data, offset)

    monkeypatch.setattr(directio.os, "pwrite", refuse_direct)
    output = OutputFile(tmp_path / "refused.bin", direct=True)
    opened_direct = output.direct
    expected = _write_two_blocks_and_an_end(output)
    assert (tmp_path / "refused.bin").read_bytes() == expected
    assert not output.direct
    assert refused == ([0] if opened_direct else [])


def test_a_refusal_at_open_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_open = os.open

    def refuse_direct(path: str, flags: int, mode: int = 0o777) -> int:
        if flags & getattr(os, "O_DIRECT", 0):
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_open(path, flags, mode)

    monkeypatch.setattr(directio.os, "open", refuse_direct)
    output = OutputFile(tmp_path / "refused.bin")
    assert not output.direct
    expected = _write_two_blocks_and_an_end(output)
    assert (tmp_path / "refused.bin").read_bytes() == expected


def test_other_errors_are_not_mistaken_for_a_refusal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def disk_full(fd: int, data: memoryview, offset: int) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(directio.os, "pwrite", disk_full)
    output = OutputFile(tmp_path / "full.bin")
    with pytest.raises(OSError, match="No space left"):
        output.write(_payload(ALIGN), 0)
    output.close(sync=False)


def test_buffered_output_is_settled_as_it_grows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(directio, "SETTLE_BYTES", 2 * ALIGN)
    settled = []
    settle = OutputFile.settle

    def record(self: OutputFile) -> None:
        settled.append(self._written)
        settle(self)

    monkeypatch.setattr(OutputFile, "settle", record)
    output = OutputFile(tmp_path / "cached.bin", direct=False)
    for i in range(5):
        output.write(_payload(ALIGN, i)[:ALIGN], i * ALIGN)
    output.close()
    assert settled == [2 * ALIGN, 4 * ALIGN]
    assert (tmp_path / "cached.bin").stat().st_size == 5 * ALIGN
