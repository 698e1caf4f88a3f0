"""merge over shard directories with leftovers, the merged arrays' indexing, and export's checks."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_one_line_error, hash_corpus_shards, run

from ngramtool import merge_shards, open_index
from ngramtool.formats.dataset import DATASET, MergedIndex
from ngramtool.tools.export import LAYOUT_FILE, export_per_layer
from ngramtool.util import atomic
from ngramtool.util.errors import NgramToolError


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three index shards (bytes tokenizer), not merged."""
    return hash_corpus_shards(tmp_path_factory.mktemp("shards"), 3, 3000)


@pytest.fixture()
def merged(shards: Path, tmp_path: Path) -> Path:
    """A private, merged copy of the shards."""
    out = tmp_path / "merged"
    shutil.copytree(shards, out)
    merge_shards(out)
    return out


def _whole_rows(directory: Path) -> np.ndarray:
    return np.concatenate([np.load(directory / f"p{i}.txt.ngidx" / "rows.npy") for i in range(3)])


@pytest.fixture()
def fsynced(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The inodes of everything fsynced (files and directories), in order."""
    inodes: list[int] = []
    real = os.fsync

    def record(fd: int) -> None:
        inodes.append(os.fstat(fd).st_ino)
        real(fd)

    monkeypatch.setattr(os, "fsync", record)
    return inodes


def test_merge_skips_hidden_leftovers_of_killed_writers(merged: Path) -> None:
    # What killed writers leave: a set-aside old shard, a finished-looking .partial directory.
    shutil.copytree(merged / "p0.txt.ngidx", merged / ".p0.txt.ngidx.replaced-1234")
    shutil.copytree(merged / "p1.txt.ngidx", merged / ".p1.txt.ngidx.x1y2.partial")
    index = open_index(merged)  # the leftovers are not "shards dataset.json does not list"
    dataset = merge_shards(merged)
    assert [s["path"] for s in dataset["shards"]] == [f"p{i}.txt.ngidx" for i in range(3)]
    assert dataset["num_tokens"] == len(index) == len(_whole_rows(merged))


def test_dataset_json_is_fsynced_with_its_directory(merged: Path, fsynced: list[int]) -> None:
    merge_shards(merged)
    assert fsynced[-2:] == [(merged / DATASET).stat().st_ino, merged.stat().st_ino]
    assert not [p.name for p in merged.iterdir() if p.name.startswith(".")]


def test_merged_rows_index_like_numpy_arrays(merged: Path) -> None:
    index = open_index(merged)
    assert isinstance(index, MergedIndex)
    rows, tokens = _whole_rows(merged), np.concatenate([s.tokens for s in index.shards])
    boundary = len(index.shards[0])
    for key in (
        (slice(None, 10), 0),
        (5, 1, 2),
        (slice(boundary - 3, boundary + 4), 1, slice(1, 3)),
        (slice(-4, None), slice(None), 0),
        (-1, 0),
        -1,
        boundary,
        slice(boundary - 2, boundary + 2),
        (np.int64(7),),
    ):
        assert np.array_equal(index.rows[key], rows[key]), key
    assert index.tokens[boundary] == tokens[boundary] and index.tokens[2:5].tolist() == tokens[2:5].tolist()
    for view, whole in ((index.rows, rows), (index.tokens, tokens)):
        assert (view.shape, view.dtype, view.ndim, view.nbytes) == (
            whole.shape,
            whole.dtype,
            whole.ndim,
            whole.nbytes,
        )
    for fancy in ([1, 2], np.arange(3), rows[:, 0, 0] > 0, True, (Ellipsis, 0)):
        with pytest.raises(TypeError, match="an int or a contiguous slice on the first axis"):
            index.rows[fancy]
    with pytest.raises(IndexError, match="out of bounds"):
        index.rows[len(rows), 0]


def test_export_of_a_merged_dataset_is_the_concatenation(merged: Path, tmp_path: Path) -> None:
    out = tmp_path / "layers"
    record = export_per_layer(open_index(merged), out)
    rows = _whole_rows(merged)
    for li, layer in enumerate(record["layers"]):
        assert np.array_equal(np.load(out / layer["file"]), rows[:, li, :])


@pytest.mark.parametrize("merge", [False, True])
def test_export_refuses_rows_that_do_not_match_their_checksum(
    merged: Path, tmp_path: Path, merge: bool
) -> None:
    rows_file = merged / "p1.txt.ngidx" / "rows.npy"
    data_start = np.load(rows_file, mmap_mode="r").offset
    with rows_file.open("r+b") as handle:  # one flipped bit in the data, the header intact
        handle.seek(data_start + 40)
        byte = handle.read(1)[0]
        handle.seek(data_start + 40)
        handle.write(bytes([byte ^ 1]))
    source = merged if merge else merged / "p1.txt.ngidx"
    out = tmp_path / "exports" / "layers"
    result = run("export", str(source), "-o", str(out))
    assert_one_line_error(result, 1, f"{rows_file}: the rows do not match the xxh3-128")
    assert len(result.stderr.decode().strip().splitlines()) == 1
    assert list(out.parent.iterdir()) == []


def test_export_force_replaces_the_old_export_only_once_the_new_one_is_in_place(
    merged: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fsynced: list[int]
) -> None:
    out = tmp_path / "layers"
    shard = open_index(merged / "p0.txt.ngidx")
    export_per_layer(shard, out)
    layout = (out / LAYOUT_FILE).read_text()
    assert (out / LAYOUT_FILE).stat().st_ino in fsynced
    real_replace, real_exchange = os.replace, atomic._exchanged

    def refuse_publishing(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        if Path(src).name.endswith(".partial") and Path(dst) == out:
            raise PermissionError(13, "Permission denied")
        real_replace(src, dst)

    def refuse_exchange(a: Path, b: Path) -> bool:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse_publishing)
    monkeypatch.setattr(atomic, "_exchanged", refuse_exchange)  # the one-step replacement, refused too
    with pytest.raises(NgramToolError, match=f"cannot write {out}: permission denied"):
        export_per_layer(open_index(merged), out, force=True)
    assert (out / LAYOUT_FILE).read_text() == layout  # the old export is still whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["layers", "merged"]
    monkeypatch.setattr(os, "replace", real_replace)
    monkeypatch.setattr(atomic, "_exchanged", real_exchange)
    record = export_per_layer(open_index(merged), out, force=True)
    assert record["layers"][0]["shape"][0] == len(_whole_rows(merged))
    assert json.loads((out / LAYOUT_FILE).read_text()) == record
    assert sorted(p.name for p in tmp_path.iterdir()) == ["layers", "merged"]


def test_export_of_the_current_directory_names_the_output_after_it(merged: Path) -> None:
    result = run("export", ".", "--json", cwd=merged / "p2.txt.ngidx")
    assert result.returncode == 0, result.stderr.decode()
    out = merged / "p2.txt.ngidx.layers"
    assert json.loads(result.stdout)["output"] == str(out) and (out / LAYOUT_FILE).is_file()


def test_export_usage_errors(merged: Path, tmp_path: Path) -> None:
    shard = merged / "p0.txt.ngidx"
    assert_one_line_error(run("export", str(shard), "-o", "-", cwd=tmp_path), 2, "not stdout")
    assert not (tmp_path / "-").exists()
    expected = "an index directory (with manifest.json) or a merged dataset (with dataset.json)"
    missing = run("export", str(tmp_path / "nope.ngidx"))
    assert_one_line_error(missing, 2, f"nope.ngidx does not exist: give {expected}")
    assert_one_line_error(run("export", str(shard / "rows.npy")), 2, f"rows.npy is not {expected}")
