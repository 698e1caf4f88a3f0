"""Tokens-only indexes (``hash --rows lazy``): no rows on disk, the same rows on every read.

Rows read from a tokens-only index equal the golden vectors and a stored index's rows byte for
byte (any span, any boundary, any chunking of the writes); verify, export, inspect, merge and
resume treat it as an index; damaged tokens fail their block checksums."""

from __future__ import annotations

import json
import shutil
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from conftest import CORPUS, assert_one_line_error, golden_rows, run, run_json, spec_from_golden
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ngramtool import (
    NgramHashMapping,
    OutputOptions,
    RunOptions,
    TokenFileReader,
    hash_files,
    merge_shards,
    open_index,
)
from ngramtool.formats import tokenblocks
from ngramtool.formats.index import Index, IndexMeta, IndexWriter
from ngramtool.formats.tokenfiles import TokenFileWriter
from ngramtool.hashing.hasher import NgramHasher
from ngramtool.spec.hashspec import HashSpec
from ngramtool.tokenizers import tokenizer_record
from ngramtool.tokenizers.vocab import identity_vocab, vocab_record
from ngramtool.tools.export import export_path
from ngramtool.tools.verify import verify_path
from ngramtool.util.errors import NgramToolError, UsageError

SMALL = {"heads": 2, "table_sizes": 3001, "tokenizer": "bytes"}


@pytest.fixture(scope="module")
def corpus_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The bundled corpus hashed twice with the demo spec: rows stored, and tokens only."""
    root = tmp_path_factory.mktemp("pair")
    hash_files(CORPUS, root / "stored.ngidx")
    hash_files(CORPUS, root / "lazy.ngidx", outputs=OutputOptions(rows="lazy"))
    return root / "stored.ngidx", root / "lazy.ngidx"


# ----------------------------------------------------------------------- the same rows
def test_golden_vectors_from_a_tokens_only_index(hash_golden, tmp_path):
    """Each golden batch as the documents of one Megatron token file, hashed with a reset at every
    document: the rows read back are the reference's, for every sequence and every span."""
    for number, config in enumerate(hash_golden["configs"]):
        spec = spec_from_golden(config["config"])
        for case_number, case in enumerate(config["cases"]):
            batch = np.asarray(case["compressed_ids"])
            tokens = tmp_path / f"golden{number}_{case_number}"
            with TokenFileWriter(tokens, "megatron", spec.vocab_size) as writer:
                for sequence in batch:
                    writer.append(sequence, [0])
                writer.commit()
            source = TokenFileReader(f"{tokens}.bin")
            mapping = NgramHashMapping.build(None, spec=spec, vocab_size=spec.vocab_size)
            options = {"mapping": mapping, "boundary": "reset"}
            lazy_rows = OutputOptions(rows="lazy", force=True)
            lazy = hash_files(
                source, tmp_path / f"lazy{number}_{case_number}.ngidx", outputs=lazy_rows, **options
            )
            stored_rows = OutputOptions(force=True)
            stored = hash_files(
                source, tmp_path / f"stored{number}_{case_number}.ngidx", outputs=stored_rows, **options
            )
            length = batch.shape[1]
            expected = golden_rows(case)
            assert np.array_equal(np.asarray(lazy.rows), expected.reshape(-1, *expected.shape[2:]))
            assert np.array_equal(np.asarray(lazy.rows), np.asarray(stored.rows))
            for lo in range(lazy.rows.shape[0]):
                for hi in range(lo + 1, min(lo + 5, lazy.rows.shape[0]) + 1):
                    b, t = divmod(lo, length)
                    assert np.array_equal(lazy.rows[lo:hi], stored.rows[lo:hi]), case["description"]
                    assert np.array_equal(lazy.rows[lo], expected[b, t])


def _write(dest: Path, spec: HashSpec, ids: np.ndarray, starts: list[int], cuts: list[int], **meta) -> Index:
    """An index of ``ids`` (canonical = raw: an identity table) appended in the pieces ``cuts``
    makes; rows hashed as a hash run hashes them when stored."""
    vocab = identity_vocab(spec.vocab_size)
    info = IndexMeta(
        spec=spec, tokenizer=tokenizer_record(None), vocab=vocab_record(vocab), lut=vocab.lut, **meta
    )
    hasher = NgramHasher(spec, boundary=info.boundary)
    with IndexWriter(dest, info, force=True) as writer:
        bounds = [0, *cuts, ids.shape[0]]
        for lo, hi in pairwise(bounds):
            local = np.asarray([s - lo for s in starts if lo <= s < hi or (hi == ids.shape[0] and s == hi)])
            rows = hasher(ids[lo:hi], local) if info.storage == "stored" else None
            writer.append(ids[lo:hi].astype(np.uint32), rows, local)
        writer.commit()
    return open_index(dest)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), boundary=st.sampled_from(["none", "reset"]))
def test_any_span_of_a_random_corpus_equals_the_stored_rows(
    small_spec, tmp_path, monkeypatch, data, boundary
):
    monkeypatch.setattr(tokenblocks, "BLOCK_TOKENS", data.draw(st.sampled_from([1, 7, 64, 4096])))
    ids = np.asarray(data.draw(st.lists(st.integers(0, small_spec.vocab_size - 1), min_size=1, max_size=300)))
    starts = sorted({0, *data.draw(st.lists(st.integers(0, len(ids)), max_size=6))})
    cuts = sorted(data.draw(st.sets(st.integers(1, len(ids)), max_size=4)))
    folder = tmp_path / f"case{len(list(tmp_path.iterdir()))}"
    stored = _write(folder / "stored", small_spec, ids, starts, cuts, boundary=boundary)
    lazy = _write(folder / "lazy", small_spec, ids, starts, cuts, boundary=boundary, storage="lazy")
    assert not (folder / "lazy" / "rows.npy").exists() and not lazy.stores_rows
    assert np.array_equal(lazy.doc_offsets, stored.doc_offsets)
    assert np.array_equal(np.asarray(lazy.rows), np.asarray(stored.rows))
    for _ in range(8):
        lo = data.draw(st.integers(0, len(ids) - 1))
        hi = data.draw(st.integers(lo, len(ids)))
        assert np.array_equal(lazy.rows[lo:hi], stored.rows[lo:hi])
        assert np.array_equal(lazy.rows[lo, 1], stored.rows[lo, 1])
        assert np.array_equal(lazy.window(lo, hi - lo)[1], stored.window(lo, hi - lo)[1])
    assert lazy.rows[-1].tolist() == stored.rows[-1].tolist()
    assert lazy.rows[len(ids) :].shape == (0, *stored.rows.shape[1:])


def test_the_cli_writes_the_same_rows_in_fewer_bytes(corpus_pair, tmp_path):
    stored, lazy = corpus_pair
    assert sorted(p.name for p in lazy.iterdir()) == [
        "doc_offsets.npy",
        "lut.npy",
        "manifest.json",
        "token_crc32.npy",
        "tokens.npy",
    ]
    report = run_json("inspect", lazy)
    assert report["rows_storage"] == "lazy" and report["format_version"] == "1.2"
    assert report["bytes_on_disk"]["per_token"] <= 5  # besides the vocabulary's lookup table
    assert run_json("inspect", stored)["bytes_on_disk"]["per_token"] > 128
    assert report["first"] == run_json("inspect", stored)["first"]
    manifest = json.loads((lazy / "manifest.json").read_text())
    assert manifest["rows"]["storage"] == "lazy" and "rows" not in manifest["arrays"]
    assert manifest["arrays"]["token_crc32"]["block_tokens"] == tokenblocks.BLOCK_TOKENS
    a, b = open_index(stored), open_index(lazy)
    for lo in (0, 1, 2, 4095, 4096, 100_000, len(a) - 3):
        assert np.array_equal(a.rows[lo : lo + 2049], b.rows[lo : lo + 2049])
    result = run("hash", CORPUS, "-o", tmp_path / "cli.ngidx", "--rows", "lazy")
    assert result.returncode == 0, result.stderr.decode()
    assert "computed when read (tokens-only)" in result.stderr.decode()
    assert np.array_equal(np.asarray(open_index(tmp_path / "cli.ngidx").tokens), np.asarray(b.tokens))


def test_verify_export_and_datasets_read_it_as_a_stored_index(corpus_pair, tmp_path):
    torch_data = pytest.importorskip("ngramtool.torch")
    stored, lazy = corpus_pair
    report = verify_path(lazy)
    assert report.checks[-1].startswith("block checksums of all 158,122 tokens")
    ours, _ = export_path(lazy, tmp_path / "lazy.layers")
    theirs, _ = export_path(stored, tmp_path / "stored.layers")
    for name in ("rows_layer1.npy", "rows_layer15.npy"):
        assert (ours / name).read_bytes() == (theirs / name).read_bytes()
    assert (
        json.loads((ours / "layers.json").read_text())["layers"]
        == json.loads((theirs / "layers.json").read_text())["layers"]
    )
    for padding in ("stream", "sequence"):
        a = torch_data.IndexDataset(stored, 512, random=True, seed=4, padding=padding)
        b = torch_data.IndexDataset(lazy, 512, random=True, seed=4, padding=padding)
        for i in (0, 5, len(a) - 1):
            assert all(np.array_equal(np.asarray(a[i][k]), np.asarray(b[i][k])) for k in ("tokens", "rows"))


def test_a_sharded_tokens_only_run_merges_and_resumes_only_as_it_was_made(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    text = CORPUS.read_text(encoding="utf-8")
    for i in range(3):
        (inputs / f"p{i}.txt").write_text(text[i * 3000 : (i + 1) * 3000], encoding="utf-8")
    hash_files(
        str(inputs / "p*.txt"),
        f"{tmp_path / 'lazy'}/",
        mapping=NgramHashMapping.build(**SMALL),
        outputs=OutputOptions(rows="lazy"),
    )
    hash_files(str(inputs / "p*.txt"), f"{tmp_path / 'stored'}/", mapping=NgramHashMapping.build(**SMALL))
    merge_shards(tmp_path / "lazy")
    merge_shards(tmp_path / "stored")
    lazy, stored = open_index(tmp_path / "lazy"), open_index(tmp_path / "stored")
    assert lazy.kind == "dataset" and not lazy.stores_rows and stored.stores_rows
    assert np.array_equal(np.asarray(lazy.rows), np.asarray(stored.rows))
    assert np.array_equal(lazy.rows[2990:3010], stored.rows[2990:3010])  # across two shards
    assert "every shard verified" in verify_path(tmp_path / "lazy").checks[-1]
    assert np.array_equal(lazy.checked_tokens[2990:3010], stored.tokens[2990:3010])  # across two shards
    with pytest.raises(UsageError, match=r"another row storage \(`rows`\)"):
        hash_files(
            str(inputs / "p*.txt"),
            f"{tmp_path / 'lazy'}/",
            mapping=NgramHashMapping.build(**SMALL),
            run=RunOptions(resume=True),
        )
    shutil.copytree(
        tmp_path / "stored" / "p1.txt.ngidx", tmp_path / "lazy" / "p1.txt.ngidx", dirs_exist_ok=True
    )
    with pytest.raises(NgramToolError, match=r"another row storage \(`rows`\)"):
        merge_shards(tmp_path / "lazy")


# ---------------------------------------------------------------------- damage and misuse
def _damaged(lazy: Path, tmp_path: Path, position: int) -> Path:
    """A copy whose token at ``position`` was changed (the manifest's checksum kept as it was)."""
    copy = Path(shutil.copytree(lazy, tmp_path / "damaged.ngidx"))
    tokens = np.load(copy / "tokens.npy", mmap_mode="r+")
    tokens[position] ^= 1
    tokens.flush()
    return copy


def test_tokens_that_fail_their_checksum_give_no_rows(corpus_pair, tmp_path):
    _, lazy = corpus_pair
    damaged = open_index(_damaged(lazy, tmp_path, 5000))
    assert np.array_equal(damaged.rows[:4096], open_index(lazy).rows[:4096])  # another block
    with pytest.raises(
        NgramToolError, match=r"tokens 4,096 to 8,191 fail their checksum \(crc32 [0-9a-f]{8}, recorded"
    ):
        damaged.rows[4000:5001]
    with pytest.raises(NgramToolError, match="fail their checksum"):
        damaged.rows[8193]  # its context reaches back into the damaged block
    result = run("export", tmp_path / "damaged.ngidx", "-o", tmp_path / "out.layers")
    assert_one_line_error(result, 1, "fail their checksum")
    assert not (tmp_path / "out.layers").exists()
    assert_one_line_error(run("verify", tmp_path / "damaged.ngidx"), 1, "tokens.npy: data xxh3-128")


def test_datasets_refuse_damaged_tokens_in_either_padding(corpus_pair, tmp_path):
    """Windows hashed alone (``padding="sequence"``) read the tokens, not the rows: their blocks
    are checked all the same."""
    torch_data = pytest.importorskip("ngramtool.torch")
    _, lazy = corpus_pair
    damaged = _damaged(lazy, tmp_path, 5000)
    datasets = [torch_data.IndexDataset(damaged, 2048, padding=padding) for padding in ("stream", "sequence")]
    datasets.append(torch_data.TokenFileDataset(damaged, 2048, tokenizer=None))
    for dataset in datasets:
        assert dataset[0]["rows"].shape == (2048, 2, 16)  # tokens 0 to 2,048: an intact block
        with pytest.raises(NgramToolError, match=r"tokens 4,096 to 8,191 fail their checksum"):
            dataset[2]  # tokens 4,096 to 6,144
    assert np.array_equal(open_index(damaged).checked_tokens[:4096], open_index(lazy).tokens[:4096])


def test_verify_checks_every_block_even_when_the_checksum_was_rewritten(corpus_pair, tmp_path):
    _, lazy = corpus_pair
    damaged = _damaged(lazy, tmp_path, 150_000)
    manifest = json.loads((damaged / "manifest.json").read_text())
    from ngramtool.formats.checksum import array_checksum, field_name, recorded

    record = manifest["arrays"]["tokens"]
    algorithm, _ = recorded(record, "data")
    tokens = np.load(damaged / "tokens.npy")
    record[field_name("data", algorithm)] = array_checksum(tokens, algorithm)
    (damaged / "manifest.json").write_text(json.dumps(manifest))
    assert_one_line_error(run("verify", damaged), 1, "tokens 147,456 to 151,551 fail their checksum")


def test_misuse_is_one_clear_error(corpus_pair, tmp_path):
    _, lazy = corpus_pair
    assert_one_line_error(
        run("hash", CORPUS, "-o", "-", "--rows", "lazy"), 2, "--rows lazy writes a tokens-only index"
    )
    assert_one_line_error(run("hash", CORPUS, "--rows", "sometimes"), 2, "--rows must be 'stored' or 'lazy'")
    with pytest.raises(NgramToolError, match="tokens-only index: its rows are computed from its tokens"):
        Index(lazy).rows[:3]  # opened without open_index's rows function
    for change, field in [
        (
            lambda m: m["arrays"].update(rows=m["arrays"]["tokens"]),
            "'arrays.token_crc32' and no 'arrays.rows'",
        ),
        (lambda m: m["arrays"].pop("token_crc32"), "lists 'arrays.token_crc32'"),
        (lambda m: m["rows"].update(storage="elsewhere"), "field 'rows.storage' must be one of"),
    ]:
        copy = Path(shutil.copytree(lazy, tmp_path / f"m{len(list(tmp_path.iterdir()))}.ngidx"))
        manifest = json.loads((copy / "manifest.json").read_text())
        change(manifest)
        (copy / "manifest.json").write_text(json.dumps(manifest))
        assert_one_line_error(run("inspect", copy), 1, field)
