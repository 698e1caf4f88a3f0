"""Scratch files of the collision analysis: nothing named on disk, whatever ends the process, and a
full disk is a one-line error that says where and what to do."""

from __future__ import annotations

import errno
import os
import tempfile

import numpy as np
import pytest

from ngramtool import HashSpec, NgramToolError
from ngramtool.analysis import scratch
from ngramtool.analysis.counting import NgramTypeCounter
from ngramtool.analysis.scratch import ScratchFile


@pytest.fixture
def temp_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def test_scratch_files_have_no_name_so_nothing_outlives_the_process(temp_dir):
    """Unlinked from the start: a ``kill -9`` leaves nothing in the temporary directory to reclaim."""
    file = ScratchFile()
    data = np.arange(100_000, dtype=np.uint64)
    at = file.append(data[:10])
    assert file.append(data) == at + 80
    assert np.array_equal(file.read(np.uint64, 100_000, 80), data)
    assert list(temp_dir.iterdir()) == []
    file.close()
    assert list(temp_dir.iterdir()) == []


def test_counting_many_runs_leaves_no_files(temp_dir):
    spec = HashSpec(max_ngram=3, heads=1, layer_ids=(0,), table_sizes=(7, 7), pad_id=0, vocab_size=500)
    counter = NgramTypeCounter(spec, flush_keys=1000)
    counter.update(np.random.default_rng(0).integers(0, 500, 50_000))
    types = counter.result()
    assert types[3].occurrences == 50_000 and list(temp_dir.iterdir()) == []


@pytest.mark.parametrize("threads", [1, 2])
def test_a_full_disk_under_the_scratch_files_is_one_line_that_says_what_to_do(temp_dir, monkeypatch, threads):
    """In the counter's thread or in a sorting thread (raised where the stream waits for it)."""
    written = []

    def fills_up(fd, data, offset):
        if sum(written) >= 20_000:
            raise OSError(errno.ENOSPC, "No space left on device")
        written.append(min(len(data), 8192))
        return written[-1]

    monkeypatch.setattr(scratch.os, "pwrite", fills_up)
    spec = HashSpec(max_ngram=3, heads=1, layer_ids=(0,), table_sizes=(7, 7), pad_id=0, vocab_size=500)
    counter = NgramTypeCounter(spec, flush_keys=1000, threads=threads)
    with pytest.raises(NgramToolError) as caught:
        counter.update(np.random.default_rng(0).integers(0, 500, 50_000))
    message = str(caught.value)
    assert "\n" not in message
    assert (
        f"cannot write the collision analysis's scratch files in {temp_dir}: no space left on device (wrote "
        in message
    )
    assert "nothing was left behind" in message
    assert "set TMPDIR to a file system with more room" in message
    assert list(temp_dir.iterdir()) == []


def test_discarded_pages_are_given_back_and_the_rest_kept(temp_dir):
    """A hole punched where a merge has read for the last time: its pages are freed (the file's
    allocated blocks shrink) and read as zeros, the bytes around it are untouched."""
    file = ScratchFile()
    data = np.arange(1 << 18, dtype=np.uint64) + 1  # 2 MiB, no zeros
    file.append(data)
    before = os.fstat(file._fd).st_blocks
    file.discard(8 * 1000, 8 * 200_000)
    if os.fstat(file._fd).st_blocks == before:
        pytest.skip("this file system does not punch holes")
    assert os.fstat(file._fd).st_blocks < before - 2 * 8 * 190_000 // 1024
    back = file.read(np.uint64, data.shape[0], 0)
    assert np.array_equal(back[:1000], data[:1000]) and np.array_equal(back[201_000:], data[201_000:])
    assert not back[1000:201_000].any()
    file.close()
    file.discard(0, 8)  # a closed file: nothing to give back, no error
