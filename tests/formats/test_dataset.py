"""Datasets of many shards and the files that describe them: merge's left-out entries, one
manifest schema, structural checks on open, verify's checks of the manifest's claims, the shared
vocabulary table, lazy shards under a small open-file limit, documents counted alike."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import xxhash
from conftest import CORPUS, SPEC, assert_one_line_error, hash_corpus_shards, run

from ngramtool import NgramHashMapping, hash_files, merge_shards, open_index, read_stream
from ngramtool.formats.dataset import DATASET
from ngramtool.formats.index import FORMAT_VERSION, VOCAB_STORE, IndexMeta, IndexWriter, store_shared_lut
from ngramtool.formats.npy import atomic_npy, map_npy
from ngramtool.formats.stream import StreamWriter
from ngramtool.hashing.hasher import NgramHasher
from ngramtool.spec.hashspec import HashSpec
from ngramtool.tokenizers import tokenizer_record
from ngramtool.tokenizers.vocab import identity_vocab, vocab_record
from ngramtool.tools.verify import verify_index, verify_stream
from ngramtool.util.errors import NgramToolError


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sharded run's output, not merged: p0..p2 hold text, p3 is an empty file's shard."""
    return hash_corpus_shards(tmp_path_factory.mktemp("sharded"), 3, 2000, empty=True)


@pytest.fixture()
def shards(sharded: Path, tmp_path: Path) -> Path:
    """A private copy of the sharded run's output."""
    return Path(shutil.copytree(sharded, tmp_path / "ds"))


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A self-contained index (its own lut.npy), as a plain run writes it."""
    root = tmp_path_factory.mktemp("single")
    source = root / "a.txt"
    source.write_text(CORPUS.read_text(encoding="utf-8")[:3000], encoding="utf-8")
    hash_files(source, root / "a.ngidx", mapping=NgramHashMapping.build(**SPEC))
    return root / "a.ngidx"


def _copy(index_dir: Path, tmp_path: Path, change: Callable[[dict], object] = lambda m: None) -> Path:
    """A copy of the index whose manifest ``change`` edited."""
    copy = Path(shutil.copytree(index_dir, tmp_path / f"copy{len(list(tmp_path.iterdir()))}.ngidx"))
    _edit_json(copy / "manifest.json", change)
    return copy


def _edit_json(path: Path, change: Callable[[dict], object]) -> None:
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document))


def _replace_array(index_dir: Path, name: str, array: np.ndarray) -> None:
    """Write ``array`` as the index's array ``name`` and make the manifest describe it."""
    np.save(index_dir / f"{name}.npy", array)

    def describe(manifest: dict) -> None:
        record = manifest["arrays"][name]
        record.pop("data_sha256", None)
        record.update(
            shape=list(array.shape),
            dtype=array.dtype.str,
            data_xxh3_128=xxhash.xxh3_128(np.ascontiguousarray(array).tobytes()).hexdigest(),
        )

    _edit_json(index_dir / "manifest.json", describe)


# ------------------------------------------------------------------------------------ merge
def test_merge_names_what_it_would_leave_out_and_refuses_unless_allowed(shards: Path) -> None:
    (shards / ".p9.txt.ngidx.k3j2h1g0.partial").mkdir()  # a killed writer's; p9 never landed
    (shards / "p8.txt.ngidx").mkdir()  # no manifest
    (shards / "p8.txt.ngidx" / "tokens.npy").write_bytes(b"")
    damaged = Path(shutil.copytree(shards / "p0.txt.ngidx", shards / "p7.txt.ngidx"))
    _edit_json(damaged / "manifest.json", lambda m: m.pop("boundary"))
    refused = run("merge", str(shards))
    assert_one_line_error(refused, 1, "3 entries would be left out of the dataset")
    err = refused.stderr.decode()
    for fragment in (
        ".p9.txt.ngidx.k3j2h1g0.partial (unfinished: p9.txt.ngidx does not exist",
        "p8.txt.ngidx (no manifest.json",
        f"p7.txt.ngidx ({damaged / 'manifest.json'} is damaged: field 'boundary' is missing",
        "--allow-missing",
    ):
        assert fragment in err, err
    assert not (shards / DATASET).exists()

    allowed = run("merge", str(shards), "--allow-missing", "--json")
    assert allowed.returncode == 0, allowed.stderr.decode()
    assert "warning: left out 3 entries that are not a finished shard" in allowed.stderr.decode()
    dataset = json.loads(allowed.stdout)
    names = [".p9.txt.ngidx.k3j2h1g0.partial", "p7.txt.ngidx", "p8.txt.ngidx"]
    assert [entry["path"] for entry in dataset["left_out"]] == names
    assert json.loads((shards / DATASET).read_text())["left_out"] == dataset["left_out"]
    assert [s["path"] for s in dataset["shards"]] == [f"p{i}.txt.ngidx" for i in range(4)]
    assert len(open_index(shards)) == dataset["num_tokens"]  # the damaged p7 is known, not "unlisted"
    verified = run("verify", str(shards), "--json")
    assert verified.returncode == 0, verified.stderr.decode()
    assert any("3 entries left out when merged" in check for check in json.loads(verified.stdout)["checks"])


def test_a_partial_directory_beside_its_finished_shard_is_not_left_out(shards: Path) -> None:
    (shards / ".p1.txt.ngidx.a1b2c3d4.partial").mkdir()  # a replacement that was abandoned
    assert "left_out" not in merge_shards(shards)


# ---------------------------------------------------------------------------------- schema
@pytest.mark.parametrize(
    "change, message",
    [
        (lambda m: m.pop("boundary"), "field 'boundary' is missing"),
        (
            lambda m: m.update(boundary="weird"),
            "field 'boundary' must be one of 'none', 'reset', got \"weird\"",
        ),
        (lambda m: m["spec"].update(heads=0), "field 'spec' is not a valid hash spec: heads"),
        (lambda m: m["spec"].pop("fingerprint"), "field 'spec.fingerprint' is missing"),
        (lambda m: m.update(num_tokens="x"), "field 'num_tokens' must be an integer, got \"x\""),
        (lambda m: m.update(num_documents=-1), "field 'num_documents' must be at least 0"),
        (lambda m: m["vocab"].pop("compressed"), "field 'vocab.compressed' is missing"),
        (
            lambda m: m["arrays"]["rows"].update(shape=[1, "a"]),
            "field 'arrays.rows.shape[1]' must be an integer",
        ),
        (lambda m: m.update(tokenization=[1]), "field 'tokenization' must be a JSON object"),
        (lambda m: m.update(offsets_added=False), "field 'offsets_added' must be true"),
        (lambda m: m.update(negative_ids="hash"), "field 'negative_ids' must be one of 'mask'"),
        (lambda m: m.update(format_version=1), "field 'format_version' must be a string"),
    ],
)
def test_a_manifest_that_breaks_the_schema_names_its_file_and_field(
    single: Path, tmp_path: Path, change: Callable[[dict], object], message: str
) -> None:
    damaged = _copy(single, tmp_path, change)
    with pytest.raises(NgramToolError) as caught:
        open_index(damaged)
    assert str(caught.value).startswith(f"{damaged / 'manifest.json'} is damaged: {message}"), caught.value


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda m: m.pop("boundary"), "is damaged: field 'boundary' is missing"),
        (lambda m: m.update(boundary="weird"), "is damaged: field 'boundary' must be one of"),
    ],
)
def test_every_command_reports_a_damaged_manifest_as_a_runtime_error(
    single: Path, tmp_path: Path, change: Callable[[dict], object], message: str
) -> None:
    damaged = _copy(single, tmp_path, change)
    for command in ("verify", "inspect", "collisions"):
        assert_one_line_error(run(command, str(damaged)), 1, f"{damaged / 'manifest.json'} {message}")


def test_manifests_of_format_1_0_and_an_optional_tokenization_object_are_read(
    single: Path, tmp_path: Path
) -> None:
    old = _copy(single, tmp_path, lambda m: m.update(format_version="1.0"))
    assert verify_index(open_index(old)).num_tokens == len(open_index(single))
    described = _copy(single, tmp_path, lambda m: m.update(tokenization={"eos": None, "anything": [1]}))
    assert open_index(described).manifest["tokenization"]["anything"] == [1]


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.pop("shards"), "is damaged: field 'shards' is missing"),
        (lambda d: d["shards"][1].update(num_tokens=None), "field 'shards[1].num_tokens' must be an integer"),
        (lambda d: d.update(num_tokens=d["num_tokens"] + 1), "but its shards add up to"),
        (lambda d: d.update(num_shards=9), "it counts 9 shards"),
        (lambda d: d["shards"][0].update(path="../elsewhere"), "is not a directory name inside"),
        (lambda d: d.update(left_out=[{"path": "x"}]), "field 'left_out[0].reason' is missing"),
    ],
)
def test_a_damaged_dataset_json_names_the_field(
    shards: Path, change: Callable[[dict], object], message: str
) -> None:
    merge_shards(shards)
    _edit_json(shards / DATASET, change)
    with pytest.raises(NgramToolError) as caught:
        open_index(shards)
    assert str(caught.value).startswith(str(shards / DATASET)) and message in str(caught.value), caught.value


def test_a_stream_manifest_is_checked_against_the_schema(single: Path) -> None:
    index = open_index(single)
    manifest = {k: v for k, v in index.manifest.items() if k not in ("num_tokens", "num_documents", "arrays")}
    manifest.update(format="ngramtool-stream")
    del manifest["boundary"]
    out = io.BytesIO()
    writer = StreamWriter(out, manifest, np.asarray(index.lut), index.spec)
    writer.append(np.asarray(index.tokens), np.asarray(index.rows), np.zeros(1, dtype=np.int64))
    writer.commit()
    with pytest.raises(NgramToolError, match="the stream's manifest is damaged: field 'boundary' is missing"):
        verify_stream(read_stream(io.BytesIO(out.getvalue())))


# ------------------------------------------------------------------------ structure on open
def test_opening_checks_the_document_offsets(single: Path, tmp_path: Path) -> None:
    total = len(open_index(single))
    for offsets, documents in (([0, total + 5], 1), ([3, total], 1), ([0, 10, 5, total], 3)):
        damaged = _copy(single, tmp_path, lambda m, d=documents: m.update(num_documents=d))
        _replace_array(damaged, "doc_offsets", np.asarray(offsets, dtype="<i8"))
        with pytest.raises(NgramToolError, match=f"must rise from 0 to the token count {total}"):
            open_index(damaged)


def test_opening_checks_counts_and_shapes_against_the_spec(single: Path, tmp_path: Path) -> None:
    rows = np.load(single / "rows.npy")
    narrow = _copy(single, tmp_path)
    _replace_array(narrow, "rows", np.ascontiguousarray(rows[:, :, :3]))
    with pytest.raises(NgramToolError, match=r"rows is <i4 \[\d+, 2, 3\] but the manifest's counts and spec"):
        open_index(narrow)
    recounted = _copy(single, tmp_path, lambda m: m.update(num_tokens=5))
    with pytest.raises(NgramToolError, match="the manifest counts 5 tokens"):
        open_index(recounted)


def test_map_npy_reads_what_numpy_reads_and_refuses_short_files(tmp_path: Path) -> None:
    arrays = {
        "own": np.arange(24, dtype="<i4").reshape(2, 3, 4),  # written with ngramtool's fixed header
        "long_header": np.arange(6, dtype="<u4").reshape((1,) * 25 + (6,)),  # a header over 128 bytes
        "version2": np.arange(5, dtype=">i8"),
        "empty": np.zeros((0, 2), dtype="<i4"),
    }
    for name, array in arrays.items():
        path = tmp_path / f"{name}.npy"
        if name == "own":
            with atomic_npy(path, array.dtype, array.shape[1:]) as writer:
                writer.append(array)
        else:
            with path.open("wb") as handle:
                np.lib.format.write_array(handle, array, version=(2, 0) if name == "version2" else None)
        mapped = map_npy(path)
        assert mapped.dtype == array.dtype and np.array_equal(mapped, array) and not mapped.flags.writeable
    np.save(tmp_path / "fortran.npy", np.asfortranarray(np.ones((2, 3))))
    short = tmp_path / "short.npy"
    short.write_bytes((tmp_path / "own.npy").read_bytes()[:-4])
    for path, problem in ((tmp_path / "fortran.npy", "Fortran-order"), (short, "92 data bytes, not the 96")):
        with pytest.raises(ValueError, match=problem):
            map_npy(path)


# ----------------------------------------------------------------------- verify's claims
def test_verify_checks_the_vocabulary_is_what_compressed_says(single: Path, tmp_path: Path) -> None:
    plain = _copy(single, tmp_path, lambda m: m["vocab"].update(compressed=False))
    with pytest.raises(NgramToolError, match="says the vocabulary is not compressed"):
        verify_index(open_index(plain))
    lut = np.load(single / "lut.npy")
    swapped = lut.copy()  # canonical ids 0 and 1 trade places: no longer numbered by first use
    swapped[lut == 0], swapped[lut == 1] = 1, 0
    reordered = _copy(single, tmp_path)
    _replace_array(reordered, "lut", swapped)
    fingerprint = hashlib.sha256(swapped.astype("<i8").tobytes()).hexdigest()
    _edit_json(reordered / "manifest.json", lambda m: m["vocab"].update(fingerprint=fingerprint))
    with pytest.raises(NgramToolError, match="is not one the compression makes"):
        verify_index(open_index(reordered))


def test_verify_says_which_row_claim_the_data_break(single: Path, tmp_path: Path) -> None:
    index = open_index(single)
    spec, rows = index.spec, np.load(single / "rows.npy")
    without_offsets = _copy(single, tmp_path)
    _replace_array(
        without_offsets, "rows", np.ascontiguousarray(rows - spec.offsets[None].astype(rows.dtype))
    )
    with pytest.raises(NgramToolError, match=r"outside that column's table rows .*offsets_added true"):
        verify_index(open_index(without_offsets))
    masked = rows.copy()
    masked[7] = -1
    negative = _copy(single, tmp_path)
    _replace_array(negative, "rows", masked)
    with pytest.raises(
        NgramToolError, match=r"at token 7 .*this token is not masked \(negative_ids 'mask'\)"
    ):
        verify_index(open_index(negative))


# ---------------------------------------------------------------------- shared vocabulary
def test_a_sharded_run_stores_its_vocabulary_table_once(sharded: Path) -> None:
    tables = sorted((sharded / VOCAB_STORE).iterdir())
    assert len(tables) == 1
    fingerprint = tables[0].stem
    for shard in sorted(sharded.glob("*.ngidx")):
        manifest = json.loads((shard / "manifest.json").read_text())
        assert not (shard / "lut.npy").exists()
        assert manifest["format_version"] == FORMAT_VERSION
        assert manifest["vocab"]["fingerprint"] == fingerprint
        assert manifest["arrays"]["lut"]["file"] == f"../{VOCAB_STORE}/{fingerprint}.npy"
        assert np.array_equal(open_index(shard).lut, np.load(tables[0]))


def test_a_shard_directory_is_read_on_its_own(sharded: Path, tmp_path: Path) -> None:
    shard = sharded / "p1.txt.ngidx"
    for args in (
        ["verify", str(shard)],
        ["inspect", str(shard)],
        ["export", str(shard), "-o", str(tmp_path / "x")],
    ):
        result = run(*args)
        assert result.returncode == 0, (args, result.stderr.decode())


def test_an_index_moved_out_of_its_directory_names_the_missing_table(shards: Path, tmp_path: Path) -> None:
    fingerprint = next((shards / VOCAB_STORE).iterdir()).name
    moved = Path(shutil.move(shards / "p0.txt.ngidx", tmp_path / "moved.ngidx"))
    result = run("verify", str(moved))
    missing = (tmp_path / VOCAB_STORE / fingerprint).resolve()
    assert_one_line_error(result, 1, f"its vocabulary table {missing} is missing")
    assert "keep the index in that directory" in result.stderr.decode()
    shutil.copytree(shards / VOCAB_STORE, tmp_path / VOCAB_STORE)
    assert verify_index(open_index(moved)).num_tokens > 0


def test_a_damaged_shared_table_is_written_again(tmp_path: Path) -> None:
    lut = np.arange(50, dtype=np.int64)
    record = store_shared_lut(tmp_path, lut)
    path = tmp_path / VOCAB_STORE / Path(record["file"]).name
    assert record["data_sha256"] == Path(record["file"]).stem
    path.write_bytes(path.read_bytes()[:-8])
    assert store_shared_lut(tmp_path, lut) == record
    assert np.array_equal(np.load(path), lut)
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file is left


# --------------------------------------------------------------------- documents counted alike
def test_collisions_counts_the_documents_inspect_counts(shards: Path) -> None:
    merge_shards(shards)
    inspected = json.loads(run("inspect", str(shards), "--json").stdout)
    counted = run("collisions", str(shards), "--json")
    assert counted.returncode == 0, counted.stderr.decode()
    assert inspected["num_documents"] == json.loads(counted.stdout)["input"]["documents"] == 4


# ------------------------------------------------------------------ thousands of shards
MANY = 5000
DISTINCT = 40  # distinct shards, hard-linked in turn into the MANY shard directories
OPEN_FILES = 256


def _many_shards(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, np.ndarray, np.ndarray]:
    """A merged dataset of MANY shards (some empty) with a shared table, its tokens and rows."""
    spec = HashSpec(max_ngram=3, heads=1, layer_ids=(0,), table_sizes=(101, 101), pad_id=0, vocab_size=300)
    vocab = identity_vocab(300)
    meta = IndexMeta(spec, tokenizer_record(None), vocab_record(vocab), "none", vocab.lut)
    source, many = root / "distinct", root / "many"
    rng = np.random.default_rng(0)
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # durability is not under test here
    pieces = []
    for i in range(DISTINCT):
        ids = rng.integers(0, 300, size=int(rng.integers(0, 16))).astype(np.uint32)
        rows = NgramHasher(spec)(ids.astype(np.int64))
        pieces.append((ids, rows))
        with IndexWriter(source / f"d{i:02d}.ngidx", meta, shared_vocab=True) as writer:
            writer.append(ids, rows, np.zeros(1, dtype=np.int64))
            writer.commit()
    shutil.copytree(source / VOCAB_STORE, many / VOCAB_STORE)
    for i in range(MANY):
        shard, original = many / f"s{i:05d}.ngidx", source / f"d{i % DISTINCT:02d}.ngidx"
        shard.mkdir()
        for file in original.iterdir():
            os.link(file, shard / file.name)
    merge_shards(many)
    order = [pieces[i % DISTINCT] for i in range(MANY)]
    return many, np.concatenate([ids for ids, _ in order]), np.concatenate([rows for _, rows in order])


def test_thousands_of_shards_are_read_within_a_small_open_file_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("torch")
    many, tokens, rows = _many_shards(tmp_path, monkeypatch)
    np.save(tmp_path / "expected.npy", tokens)
    script = textwrap.dedent(
        f"""
        import json, resource, sys
        import numpy as np
        resource.setrlimit(resource.RLIMIT_NOFILE, ({OPEN_FILES}, {OPEN_FILES}))
        from typer.testing import CliRunner
        from ngramtool import open_index
        from ngramtool.cli.app import app
        from ngramtool.torch import IndexDataset

        many, expected = sys.argv[1], np.load(sys.argv[2])
        index = open_index(many)
        assert len(index) == expected.shape[0] and len(index.shards) == {MANY}
        data = IndexDataset(many, seq_len=64)
        for i in range(0, len(data), max(1, len(data) // 60)):  # windows across the whole dataset
            item = data[i]
            start = item["start"]
            assert item["tokens"].tolist() == expected[start : start + 65].tolist(), i
        for args in (["verify", many, "--json"], ["inspect", many, "--json", "--rows", "1"],
                     ["export", many, "-o", sys.argv[3], "--json"]):
            result = CliRunner().invoke(app, args)
            assert result.exit_code == 0, (args, result.output, result.exception)
            json.loads(result.stdout)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(many), str(tmp_path / "expected.npy"), str(tmp_path / "layers")],
        capture_output=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    assert np.array_equal(np.load(tmp_path / "layers" / "rows_layer0.npy"), rows[:, 0])
