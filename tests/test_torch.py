"""ngramtool.torch: IndexDataset and StreamDataset windows against the index they read."""

from __future__ import annotations

import importlib
import io
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import CORPUS, run

torch = pytest.importorskip("torch")

from torch.utils.data import DataLoader  # noqa: E402

from ngramtool import hash_files, open_index  # noqa: E402
from ngramtool.errors import NgramToolError  # noqa: E402
from ngramtool.formats.stream import StreamWriter, read_stream  # noqa: E402
from ngramtool.torch import IndexDataset, StreamDataset  # noqa: E402

SEQ_LEN = 64


@pytest.fixture(scope="module")
def text(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("text") / "small.txt"
    path.write_text(CORPUS.read_text(encoding="utf-8")[:30000], encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def index_dir(text: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("index") / "small.ngidx"
    hash_files(text, out, heads=2, table_sizes=1009, layer_ids=[0, 3])
    return out


@pytest.fixture(scope="module")
def stream_bytes(text: Path) -> bytes:
    result = run("hash", text, "-o", "-", "-q", "--heads", "2", "--table", "1009", "--layers", "0,3")
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout


def rechunked(stream: bytes, sizes: tuple[int, ...]) -> bytes:
    """The same stream re-framed into chunks of the given sizes (cycled)."""
    reader = read_stream(io.BytesIO(stream))
    chunks = list(reader)
    tokens, rows = np.concatenate([c.tokens for c in chunks]), np.concatenate([c.rows for c in chunks])
    out = io.BytesIO()
    writer = StreamWriter(out, reader.manifest, reader.lut, reader.spec)
    lo, i = 0, 0
    while lo < tokens.shape[0]:
        hi = lo + sizes[i % len(sizes)]
        writer.append(tokens[lo:hi], rows[lo:hi], np.zeros(1 if lo == 0 else 0, dtype=np.int64))
        lo, i = hi, i + 1
    writer.commit()
    return out.getvalue()


def assert_same_items(got: list[dict], expected: list[dict]) -> None:
    """Items or batches equal key by key (``start`` is an int in items, a tensor in batches)."""
    assert len(got) == len(expected)
    for a, b in zip(got, expected, strict=True):
        assert a.keys() == b.keys() == {"tokens", "rows", "start"}
        assert all(torch.equal(torch.as_tensor(a[key]), torch.as_tensor(b[key])) for key in a)


def test_windows_are_index_slices(index_dir: Path) -> None:
    index = open_index(index_dir)
    dataset = IndexDataset(index_dir, SEQ_LEN)
    assert len(dataset) == (len(index) - 1) // SEQ_LEN > 10
    for i in (0, 1, 7, len(dataset) - 1):
        item = dataset[i]
        start = i * SEQ_LEN
        assert item["start"] == start
        assert item["tokens"].dtype == torch.int64 and item["tokens"].shape == (SEQ_LEN + 1,)
        assert item["rows"].dtype == torch.int32 and item["rows"].shape == (SEQ_LEN, 2, 4)
        assert np.array_equal(item["tokens"].numpy(), index.tokens[start : start + SEQ_LEN + 1])
        assert np.array_equal(item["rows"].numpy(), index.rows[start : start + SEQ_LEN])
    with pytest.raises(IndexError):
        dataset[len(dataset)]


def starts(dataset: IndexDataset) -> list[int]:
    return [dataset[i]["start"] for i in range(len(dataset))]


def test_random_windows_are_seeded_per_epoch(index_dir: Path) -> None:
    index = open_index(index_dir)
    dataset = IndexDataset(index_dir, SEQ_LEN, random=True, seed=7)
    first = starts(dataset)
    assert first == starts(IndexDataset(index_dir, SEQ_LEN, random=True, seed=7))
    assert first != starts(IndexDataset(index_dir, SEQ_LEN, random=True, seed=8))
    assert any(s % SEQ_LEN for s in first)  # not the fixed grid
    assert min(first) >= 0 and max(first) + SEQ_LEN + 1 <= len(index)
    dataset.set_epoch(1)
    assert starts(dataset) != first
    item = dataset[3]
    start = item["start"]
    assert np.array_equal(item["tokens"].numpy(), index.tokens[start : start + SEQ_LEN + 1])
    assert np.array_equal(item["rows"].numpy(), index.rows[start : start + SEQ_LEN])


def test_pickled_dataset_reopens_its_memory_maps(index_dir: Path) -> None:
    dataset = IndexDataset(index_dir, SEQ_LEN, random=True, seed=1)
    copy = pickle.loads(pickle.dumps(dataset))
    assert copy._source is None  # no memory map travels to a worker
    assert_same_items([copy[5]], [dataset[5]])


def test_dataloader_workers_give_the_same_batches(index_dir: Path) -> None:
    dataset = IndexDataset(index_dir, SEQ_LEN, random=True, seed=3)
    serial = list(DataLoader(dataset, batch_size=4))
    parallel = list(DataLoader(dataset, batch_size=4, num_workers=2))
    assert_same_items(parallel, serial)
    assert serial[0]["rows"].shape == (4, SEQ_LEN, 2, 4)


def test_stream_dataset_equals_index_dataset(index_dir: Path, stream_bytes: bytes) -> None:
    expected = list(IndexDataset(index_dir, SEQ_LEN))
    assert_same_items(list(StreamDataset(io.BytesIO(stream_bytes), SEQ_LEN)), expected)
    # Windows straddle chunks of every size around the window length.
    for sizes in ((1, 7, 63, 64, 65, 200), (SEQ_LEN + 1,), (5000,)):
        stream = rechunked(stream_bytes, sizes)
        assert_same_items(list(StreamDataset(io.BytesIO(stream), SEQ_LEN)), expected)


def test_stream_dataset_with_workers_reads_once(index_dir: Path, stream_bytes: bytes, tmp_path: Path) -> None:
    path = tmp_path / "small.ngstream"
    path.write_bytes(rechunked(stream_bytes, (1000,)))
    dataset = StreamDataset(path, SEQ_LEN)
    serial = list(DataLoader(dataset, batch_size=4))
    assert_same_items(list(DataLoader(dataset, batch_size=4, num_workers=2)), serial)
    assert_same_items(serial, list(DataLoader(IndexDataset(index_dir, SEQ_LEN), batch_size=4)))


def test_file_object_stream_is_read_once(stream_bytes: bytes) -> None:
    dataset = StreamDataset(io.BytesIO(stream_bytes), SEQ_LEN)
    assert list(dataset)
    with pytest.raises(NgramToolError, match="read already"):
        list(dataset)


def test_missing_stream_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(NgramToolError, match="cannot read the stream"):
        list(StreamDataset(tmp_path / "missing.ngstream", SEQ_LEN))


@pytest.mark.parametrize("cut", [-40, 0.5])
def test_truncated_stream_raises(stream_bytes: bytes, cut: float) -> None:
    data = stream_bytes[: int(len(stream_bytes) * cut) if isinstance(cut, float) else cut]
    with pytest.raises(NgramToolError, match="truncated"):
        list(StreamDataset(io.BytesIO(data), SEQ_LEN))


def test_short_index_is_an_error(index_dir: Path) -> None:
    with pytest.raises(NgramToolError, match="too few"):
        IndexDataset(index_dir, len(open_index(index_dir)))


def test_arguments_are_whole_numbers(index_dir: Path) -> None:
    for options, message in [
        ({"seq_len": 64.5}, "seq_len must be an integer"),
        ({"seq_len": 0}, "seq_len must be at least 1"),
        ({"seq_len": SEQ_LEN, "seed": -1}, "seed must be at least 0"),
    ]:
        with pytest.raises(NgramToolError, match=message):
            IndexDataset(index_dir, **options)
    dataset = IndexDataset(index_dir, SEQ_LEN, random=True, seed=7)
    assert dataset[torch.tensor(3)]["start"] == dataset[np.int64(3)]["start"] == dataset[3]["start"]
    with pytest.raises(IndexError):
        dataset[len(dataset)]


def test_import_without_torch_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # makes `import torch` fail
    for name in ("ngramtool.torch", "ngramtool.engram"):
        monkeypatch.delitem(sys.modules, name, raising=False)
        with pytest.raises(NgramToolError, match=r"pip install 'ngramtool\[torch\]'"):
            importlib.import_module(name)
