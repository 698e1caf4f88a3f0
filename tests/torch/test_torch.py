"""ngramtool.torch datasets: IndexDataset, StreamDataset and TokenFileDataset windows against the
index they read, the rows hash_ngrams gives and each other."""

from __future__ import annotations

import importlib
import io
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import corpus_prefix, golden_rows, run, spec_from_golden

from ngramtool import OutputOptions, TokenFileReader

torch = pytest.importorskip("torch")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402

from ngramtool import NgramHashMapping, build_vocab, hash_files, hash_ngrams, load_tokenizer, open_index  # noqa: E402
from ngramtool.formats.stream import StreamWriter, read_stream  # noqa: E402
from ngramtool.formats.tokenfiles import TOKEN_FORMATS, TokenFileWriter  # noqa: E402
from ngramtool.spec.hashspec import HashSpec  # noqa: E402
from ngramtool.torch import IndexDataset, StreamDataset, TokenFileDataset  # noqa: E402
from ngramtool.util.errors import NgramToolError, UsageError  # noqa: E402

SEQ_LEN = 64
PADDINGS = ("sequence", "stream")


@pytest.fixture(scope="module")
def text(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return corpus_prefix(tmp_path_factory.mktemp("text"), "small.txt", 30000)


@pytest.fixture(scope="module")
def index_dir(text: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("index") / "small.ngidx"
    hash_files(
        text, out, mapping=NgramHashMapping.build("cl100k_base", heads=2, layer_ids=[0, 3], table_sizes=1009)
    )
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
    for name in ("ngramtool.torch", "ngramtool.torch.engram"):
        monkeypatch.delitem(sys.modules, name, raising=False)
        with pytest.raises(NgramToolError, match=r"pip install 'ngramtool\[torch\]'"):
            importlib.import_module(name)


# -------------------------------------------------------------- padding and TokenFileDataset
def test_index_dataset_sequence_padding_hashes_each_window_alone(index_dir: Path) -> None:
    index = open_index(index_dir)
    vocab = build_vocab(load_tokenizer("cl100k_base"))
    dataset = IndexDataset(index_dir, SEQ_LEN, random=True, seed=5, padding="sequence")
    for i in (0, 3, len(dataset) - 1):
        item = dataset[i]
        start = item["start"]
        canonical = vocab.canonicalize(np.asarray(index.tokens[start : start + SEQ_LEN]))
        assert np.array_equal(item["rows"].numpy(), hash_ngrams(canonical, index.spec))
        assert np.array_equal(item["rows"][2:].numpy(), index.rows[start + 2 : start + SEQ_LEN])  # past N-1
    with pytest.raises(UsageError, match="`padding` must be 'sequence' or 'stream'"):
        IndexDataset(index_dir, SEQ_LEN, padding="document")


R50K_SPEC = HashSpec(heads=2, layer_ids=(0, 3), table_sizes=(1009, 1013), vocab_size=32962, pad_id=7)


@pytest.fixture(scope="module")
def token_files(text: Path, r50k_path: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The text's r50k ids in every token format, split into three documents, and the indexes that
    ``hash --tokens`` makes of the Megatron file (rows stored, and tokens only)."""
    folder = tmp_path_factory.mktemp("tokenfiles")
    ids = load_tokenizer(str(r50k_path)).encode(text.read_text(encoding="utf-8"))
    names = {
        "npy": "t.npy",
        "nanogpt": "t.bin",
        "llmc": "t_llmc.bin",
        "megatron": "t_mg",
        "datatrove": "t.ds",
    }
    paths = {}
    for fmt in TOKEN_FORMATS:
        with TokenFileWriter(folder / names[fmt], fmt, 50257) as writer:
            writer.append(ids, [0, 1000, 2500])
            paths[fmt] = writer.commit().path
    source, mapping = (
        TokenFileReader(paths["megatron"]),
        NgramHashMapping.build(str(r50k_path), spec=R50K_SPEC),
    )
    paths["stored"] = hash_files(source, folder / "stored.ngidx", mapping=mapping).path
    lazy_rows = OutputOptions(rows="lazy")
    paths["lazy"] = hash_files(source, folder / "lazy.ngidx", mapping=mapping, outputs=lazy_rows).path
    return paths


def test_token_file_windows_in_every_format_and_both_paddings(token_files, r50k_path: Path) -> None:
    vocab = build_vocab(load_tokenizer(str(r50k_path)))
    stored = open_index(token_files["stored"])
    for padding in ("sequence", "stream"):
        reference = list(IndexDataset(token_files["stored"], SEQ_LEN, padding=padding))
        for fmt in [*TOKEN_FORMATS, "lazy", "stored"]:
            tokenizer = None if fmt in ("lazy", "stored") else str(r50k_path)
            dataset = TokenFileDataset(
                token_files[fmt], SEQ_LEN, tokenizer=tokenizer, spec=R50K_SPEC, padding=padding
            )
            assert len(dataset) == len(reference) and dataset.spec == R50K_SPEC
            assert_same_items(list(dataset), reference)
        for item in reference[:: len(reference) // 5]:
            start = item["start"]
            if padding == "stream":
                expected = stored.rows[start : start + SEQ_LEN]
            else:
                window = np.asarray(stored.tokens[start : start + SEQ_LEN])
                expected = hash_ngrams(vocab.canonicalize(window), R50K_SPEC)
            assert np.array_equal(item["rows"].numpy(), expected)


def test_token_file_dataset_with_workers_and_random_windows(token_files, r50k_path: Path) -> None:
    dataset = TokenFileDataset(
        token_files["datatrove"], SEQ_LEN, tokenizer=str(r50k_path), spec=R50K_SPEC, random=True, seed=3
    )
    serial = list(DataLoader(dataset, batch_size=4))
    assert_same_items(list(DataLoader(dataset, batch_size=4, num_workers=2)), serial)
    index_items = list(
        DataLoader(
            IndexDataset(token_files["stored"], SEQ_LEN, random=True, seed=3, padding="sequence"),
            batch_size=4,
        )
    )
    assert_same_items(serial, index_items)


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_token_files_give_hash_ngrams_rows(tmp_path: Path, data) -> None:
    """Random byte-tokenizer ids, any window length: sequence padding hashes each window alone,
    stream padding equals the whole stream's rows."""
    spec = HashSpec(heads=2, layer_ids=(1,), table_sizes=(1009, 1013), vocab_size=227, pad_id=0)
    vocab = build_vocab(load_tokenizer("bytes"))
    ids = np.asarray(data.draw(st.lists(st.integers(0, 255), min_size=2, max_size=200)), dtype=np.uint16)
    seq_len = data.draw(st.integers(1, len(ids) - 1))
    path = tmp_path / f"r{len(list(tmp_path.iterdir()))}.npy"
    np.save(path, ids)
    stream = hash_ngrams(vocab.canonicalize(ids), spec)
    for padding in ("sequence", "stream"):
        dataset = TokenFileDataset(path, seq_len, tokenizer="bytes", spec=spec, padding=padding, random=True)
        for i in range(min(len(dataset), 4)):
            item = dataset[i]
            start = item["start"]
            window = ids[start : start + seq_len]
            expected = (
                stream[start : start + seq_len]
                if padding == "stream"
                else hash_ngrams(vocab.canonicalize(window), spec)
            )
            assert np.array_equal(item["rows"].numpy(), expected)
            assert item["tokens"].tolist() == ids[start : start + seq_len + 1].tolist()


def test_token_file_dataset_errors(token_files, r50k_path: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="is a token file: give the `tokenizer` that made its ids"):
        TokenFileDataset(token_files["npy"], SEQ_LEN, tokenizer=None)
    with pytest.raises(
        NgramToolError, match=r"was written with tokenizer .*r50k.*, not cl100k_base .*`tokenizer=None`"
    ):
        TokenFileDataset(token_files["lazy"], SEQ_LEN, tokenizer="cl100k_base")
    with pytest.raises(NgramToolError, match="was hashed with its own spec"):
        TokenFileDataset(token_files["lazy"], SEQ_LEN, tokenizer=None, spec=HashSpec(vocab_size=32962))
    with pytest.raises(UsageError, match="`token_format` applies to token files"):
        TokenFileDataset(token_files["lazy"], SEQ_LEN, tokenizer=None, token_format="npy")
    read_as_bytes = TokenFileDataset(
        token_files["npy"], SEQ_LEN, tokenizer="bytes"
    )  # another tokenizer's ids
    with pytest.raises(
        NgramToolError, match=r"t\.npy: token id \d+ at position \d+ is outside the 256 raw ids"
    ):
        read_as_bytes[0]


def test_golden_vectors_through_the_datasets(hash_golden, deepseek_tokenizer_path, tmp_path: Path) -> None:
    """Each golden batch as the documents of a token file (one token more, so that the last
    sequence makes a window): windows of one sequence's length give the reference's rows, from
    a tokens-only index (both paddings: ``reset`` makes the stream rows the padded ones) and, for
    the DeepSeek-V3 configurations, from the raw ids with the tokenizer."""
    for number, config in enumerate(hash_golden["configs"]):
        spec = spec_from_golden(config["config"])
        dsv3 = config["config"].get("uses_deepseek_v3_lookup_table", False)
        for case_number, case in enumerate(config["cases"]):
            expected = golden_rows(case)
            length = expected.shape[1]
            name = tmp_path / f"golden{number}_{case_number}"
            with TokenFileWriter(name, "megatron", spec.vocab_size) as writer:
                for sequence in [*case["compressed_ids"], [0]]:
                    writer.append(sequence, [0])
                tokens = writer.commit().path
            index = hash_files(
                TokenFileReader(tokens),
                name.with_suffix(".ngidx"),
                mapping=NgramHashMapping.build(None, spec=spec, vocab_size=spec.vocab_size),
                boundary="reset",
                outputs=OutputOptions(rows="lazy"),
            ).path
            datasets = [
                TokenFileDataset(index, length, tokenizer=None, padding=padding) for padding in PADDINGS
            ]
            datasets += [IndexDataset(index, length, padding=padding) for padding in PADDINGS]
            if dsv3:
                raw = name.with_suffix(".npy")
                np.save(raw, np.asarray([*np.ravel(case["input_ids"]), case["input_ids"][0][0]], np.uint32))
                tokenizer = str(deepseek_tokenizer_path)
                datasets.append(TokenFileDataset(raw, length, tokenizer=tokenizer, spec=spec))
            for dataset in datasets:
                assert len(dataset) == expected.shape[0]
                for b in range(expected.shape[0]):
                    assert np.array_equal(dataset[b]["rows"].numpy(), expected[b]), case["description"]
