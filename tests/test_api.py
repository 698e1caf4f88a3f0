"""hash_files and hash_texts: what ``ngramtool hash`` does, from Python, byte for byte."""

from __future__ import annotations

import filecmp
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest
import xxhash
from conftest import CORPUS, run

import ngramtool
from ngramtool import (
    CorpusReader,
    NgramHashMapping,
    OutputOptions,
    RunOptions,
    TokenFileReader,
    build_vocab,
    hash_files,
    hash_ngrams,
    hash_texts,
    load_tokenizer,
)
from ngramtool.tools.describe import describe_vocab
from ngramtool.util.errors import NgramToolError, UsageError

ARRAYS = ("tokens.npy", "rows.npy", "doc_offsets.npy", "lut.npy")


def test_hash_files_writes_what_the_command_line_writes(tmp_path):
    """The bundled corpus hashed by hash_files and by `ngramtool hash`: the same bytes."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(CORPUS.read_bytes())
    index = ngramtool.hash_files(
        [str(corpus)], str(tmp_path / "out.ngidx"), mapping=NgramHashMapping.build("cl100k_base")
    )
    result = run("hash", "corpus.txt", "-o", "cli.ngidx", cwd=tmp_path, env={"SOURCE_DATE_EPOCH": "0"})
    assert result.returncode == 0, result.stderr.decode()
    for name in ARRAYS:
        assert filecmp.cmp(tmp_path / "out.ngidx" / name, tmp_path / "cli.ngidx" / name, shallow=False), name
    assert len(index) == 158_122 and index.kind == "index"
    ours, theirs = (
        json.loads((tmp_path / d / "manifest.json").read_text()) for d in ("out.ngidx", "cli.ngidx")
    )
    for manifest in (ours, theirs):
        del manifest["created"], manifest["sources"]
    assert ours == theirs


def test_hash_writes_an_index_whose_rows_equal_the_library(sample, tmp_path):
    out = tmp_path / "idx"
    index = hash_files(
        [sample / "a.txt", sample / "b.txt"], out, mapping=NgramHashMapping.build("cl100k_base", heads=4)
    )
    assert index.manifest["num_tokens"] == len(index) > 5000
    assert index.manifest["num_documents"] == 2
    tok = load_tokenizer("cl100k_base")
    expected_tokens = np.concatenate([tok.encode((sample / n).read_text()) for n in ("a.txt", "b.txt")])
    assert np.array_equal(index.tokens, expected_tokens)
    assert index.doc_offsets.tolist() == [0, len(tok.encode((sample / "a.txt").read_text())), len(index)]
    canonical = build_vocab(tok).canonicalize(expected_tokens)
    assert np.array_equal(index.rows, hash_ngrams(canonical, index.spec))
    assert index.spec.heads == 4 and index.spec.vocab_size == 62_330
    assert index.spec.pad_id == build_vocab(tok).lut[100_257]  # <|endoftext|> mapped through the LUT
    manifest = index.manifest
    assert manifest["tokenizer"]["name"] == "cl100k_base"
    assert manifest["spec"]["fingerprint"] == index.spec.fingerprint
    assert manifest["arrays"]["rows"]["shape"] == [len(index), 2, 8]
    for name, record in manifest["arrays"].items():
        data = np.load(out / record["file"])
        assert xxhash.xxh3_128(data.tobytes()).hexdigest() == record["data_xxh3_128"], name


def test_hash_reset_boundary_matches_library(sample, tmp_path):
    index = hash_files([sample / "a.txt", sample / "b.txt"], tmp_path / "reset", boundary="reset")
    canonical = build_vocab(load_tokenizer("cl100k_base")).canonicalize(np.asarray(index.tokens))
    expected = hash_ngrams(canonical, index.spec, doc_starts=index.doc_offsets[:-1])
    assert np.array_equal(index.rows, expected)
    assert index.manifest["boundary"] == "reset"


def test_hash_refuses_to_overwrite_without_force(sample, tmp_path):
    out = tmp_path / "idx"
    hash_files(sample / "a.txt", out)
    with pytest.raises(UsageError, match="`force=True`"):
        hash_files(sample / "a.txt", out)
    assert hash_files(sample / "b.txt", out, outputs=OutputOptions(force=True)).manifest["sources"] == [
        str(sample / "b.txt")
    ]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary leftovers


def test_hash_pretokenized_npy(tmp_path):
    ids = np.random.default_rng(0).integers(0, 1000, 5000).astype(np.uint16)
    np.save(tmp_path / "ids.npy", ids)
    # workers sets the hash threads with a token file too
    index = hash_files(
        TokenFileReader(tmp_path / "ids.npy"),
        tmp_path / "ids.ngidx",
        mapping=NgramHashMapping.build(None, vocab_size=1000),
        run=RunOptions(workers=2),
    )
    assert index.spec.vocab_size == 1000 and index.spec.pad_id == 0
    assert np.array_equal(index.rows, hash_ngrams(ids.astype(np.int64), index.spec))
    with pytest.raises(UsageError, match="`vocab_size` applies only to ids without a `tokenizer`"):
        NgramHashMapping.build("cl100k_base", vocab_size=1000)


def test_empty_input_gives_an_empty_index(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    index = hash_files(empty, tmp_path / "empty.ngidx")
    assert len(index) == 0 and index.rows.shape == (0, 2, 16)
    assert index.doc_offsets.tolist() == [0, 0]


def test_invalid_utf8_names_the_offset_and_replace_carries_on(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"abc\xffdef")
    with pytest.raises(NgramToolError, match="byte offset 3") as caught:
        hash_files(bad, tmp_path / "o")
    assert caught.value.exit_code == 1 and "`errors=replace`" in str(caught.value)
    assert not (tmp_path / "o").exists()
    replaced = hash_files(CorpusReader(bad, errors="replace"), tmp_path / "o")
    assert replaced.tokens.tolist() == load_tokenizer("cl100k_base").encode("abc\ufffddef").tolist()


def test_outputs_follow_the_umask_not_private_temp_modes(sample, tmp_path):
    out = tmp_path / "perm.ngidx"
    hash_files(sample / "a.txt", out)
    lut = tmp_path / "lut.npy"
    describe_vocab(export=lut)
    mask = os.umask(0)
    os.umask(mask)
    assert out.stat().st_mode & 0o777 == 0o777 & ~mask
    assert lut.stat().st_mode & 0o777 == 0o666 & ~mask


def test_the_umask_survives_outputs_made_on_many_threads_at_once(tmp_path):
    """Reading the umask to give outputs their modes never sets it, even for a moment: a hash run
    keeps a kernel's code on its warm-up thread while it creates its outputs. (Setting it to read
    it, from two threads at once, could leave it 0: world-writable outputs.)"""
    from concurrent.futures import ThreadPoolExecutor

    from ngramtool.util import atomic

    def read(_: int) -> set[int]:
        return {atomic._umask() for _ in range(20_000)}

    old_mask, old_interval = os.umask(0o027), sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch as often as they can
    try:
        with ThreadPoolExecutor(4) as pool:
            seen = set().union(*pool.map(read, range(4)))
        with atomic.staged_file(tmp_path / "out") as staged:
            staged.write_bytes(b"x")
        assert seen == {0o027} and os.umask(0o027) == 0o027
    finally:
        sys.setswitchinterval(old_interval)
        os.umask(old_mask)
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o640


def test_hash_texts_equals_hashing_the_same_documents_from_jsonl(tmp_path):
    docs = ["the cat sat on the mat", "", "a dog <|endoftext|> and a cat\nand more"]
    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_text("\n".join(json.dumps({"text": d}) for d in docs) + "\n")
    mapping = NgramHashMapping.build("cl100k_base", heads=2)
    from_strings = hash_texts(
        (d for d in docs), tmp_path / "s.ngidx", mapping=mapping, boundary="reset", add_eot=True
    )
    reader = CorpusReader([jsonl], text_key="text", add_eot=True)
    from_file = hash_files(reader, tmp_path / "f.ngidx", mapping=mapping, boundary="reset")
    assert np.array_equal(from_strings.tokens, from_file.tokens)
    assert np.array_equal(from_strings.rows, from_file.rows)
    assert from_strings.doc_offsets.tolist() == from_file.doc_offsets.tolist()
    assert from_strings.manifest["sources"] == [] and from_strings.manifest["tokenization"]["add_eot"]
    with pytest.raises(NgramToolError, match="documents must be strings, got bytes"):
        hash_texts([b"bytes"], tmp_path / "b.ngidx")  # type: ignore[list-item]
    with pytest.raises(UsageError, match="one index, not shards"):
        hash_texts(docs, f"{tmp_path}/shards/")


def test_a_sharded_run_returns_its_shards_and_a_spec_or_preset_gives_the_spec(tmp_path):
    for i in range(3):
        (tmp_path / f"p{i}.txt").write_text(f"shard {i} " * 50)
    shards = hash_files(
        str(tmp_path / "p*.txt"), f"{tmp_path}/out/", mapping=NgramHashMapping.build("bytes", spec="tutorial")
    )
    assert [Path(shard.path).name for shard in shards] == ["p0.txt.ngidx", "p1.txt.ngidx", "p2.txt.ngidx"]
    assert shards[0].spec.heads == 4 and shards[0].spec.layer_ids == (1,)  # the tutorial preset
    again = hash_files(
        str(tmp_path / "p*.txt"),
        f"{tmp_path}/out/",
        mapping=NgramHashMapping.build("bytes", spec="tutorial"),
        run=RunOptions(resume=True),
    )
    assert [shard.path for shard in again] == [shard.path for shard in shards]  # finished ones too
    spec = shards[0].spec
    index = hash_files(
        tmp_path / "p0.txt", tmp_path / "one.ngidx", mapping=NgramHashMapping.build("bytes", spec=spec)
    )
    assert np.array_equal(index.rows, shards[0].rows)
    with pytest.raises(
        UsageError, match=r"cannot read `spec_file` nope\.json"
    ):  # neither a preset nor a file
        hash_files(
            tmp_path / "p0.txt",
            tmp_path / "x",
            mapping=NgramHashMapping.build("cl100k_base", spec="nope.json"),
        )


def test_hash_files_to_a_stream_returns_nothing(tmp_path, capfdbinary):
    (tmp_path / "t.txt").write_text("hello stream")
    assert hash_files(tmp_path / "t.txt", "-", mapping=NgramHashMapping.build("bytes")) is None
    assert capfdbinary.readouterr().out.startswith(b"NGRMSTRM")
