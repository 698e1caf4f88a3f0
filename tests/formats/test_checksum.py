"""Checksums named by algorithm (formats/checksum.py), the schema's checksum fields, every writer
with XXH3-128 and sha256, and indexes and streams written before XXH3 (format 1.1, sha256)."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import xxhash
from conftest import CORPUS, DATA, assert_one_line_error, run

from ngramtool import NgramHashMapping, OutputOptions, hash_files, open_index
from ngramtool.formats.checksum import (
    array_checksum,
    bytes_checksum,
    checksum_record,
    field_name,
    new_digest,
    recorded,
)
from ngramtool.formats.dataset import merge_shards
from ngramtool.formats.schema import ARRAY, SHARD_RECORD, SchemaError
from ngramtool.formats.stream import read_stream
from ngramtool.tools.export import export_path
from ngramtool.tools.verify import verify_path
from ngramtool.util.errors import NgramToolError, UsageError

OLD_INDEX = DATA / "index_1.1_sha256.ngidx"
OLD_STREAM = DATA / "stream_1.1_sha256.ngstream"
OLD_TEXT = DATA / "index_1.1_sha256.txt"
OLD_SPEC = {"tokenizer": "bytes", "heads": 2, "table_sizes": 1009, "max_ngram": 3}
REFERENCE = {
    "xxh3-128": lambda data: xxhash.xxh3_128(data).hexdigest(),
    "sha256": lambda data: hashlib.sha256(data).hexdigest(),
}


@pytest.mark.parametrize("algorithm", ["xxh3-128", "sha256"])
def test_digests_are_the_reference_implementations(algorithm: str) -> None:
    array = np.random.default_rng(0).integers(-(2**31), 2**31, (1000, 2, 3)).astype(np.int32)
    data = array.tobytes()
    assert array_checksum(array, algorithm) == bytes_checksum(data, algorithm) == REFERENCE[algorithm](data)
    digest = new_digest(algorithm)
    digest.update(data[:999])
    digest.update(data[999:])
    assert digest.hexdigest() == REFERENCE[algorithm](data)


def test_fields_are_named_by_their_algorithm() -> None:
    assert field_name("data", "xxh3-128") == "data_xxh3_128"
    assert field_name("manifest", "sha256") == "manifest_sha256"
    record = {"file": "x.npy", **checksum_record("data", "xxh3-128", "ab" * 16)}
    assert recorded(record, "data") == ("xxh3-128", "ab" * 16)
    with pytest.raises(UsageError, match="`checksum` must be one of xxh3-128, sha256"):
        field_name("data", "md5")


def test_the_schema_wants_exactly_one_checksum_of_the_right_length() -> None:
    base = {"file": "x.npy", "dtype": "<u4", "shape": [3]}
    ARRAY({**base, "data_xxh3_128": "0" * 32}, "arrays.tokens")
    ARRAY({**base, "data_sha256": "0" * 64}, "arrays.tokens")
    with pytest.raises(SchemaError, match=r"'arrays\.tokens\.data_\*' is missing: one checksum"):
        ARRAY(base, "arrays.tokens")
    with pytest.raises(SchemaError, match="is given 2 times"):
        ARRAY({**base, "data_xxh3_128": "0" * 32, "data_sha256": "0" * 64}, "arrays.tokens")
    with pytest.raises(SchemaError, match="data_xxh3_128"):
        ARRAY({**base, "data_xxh3_128": "0" * 64}, "arrays.tokens")  # a sha256's length
    with pytest.raises(SchemaError, match=r"manifest_\*"):
        SHARD_RECORD({"path": "a", "num_tokens": 1, "num_documents": 1}, "shards[0]")


@pytest.mark.parametrize("algorithm", ["xxh3-128", "sha256"])
def test_an_index_records_each_array_with_the_chosen_checksum(tmp_path: Path, algorithm: str) -> None:
    index = hash_files(
        OLD_TEXT,
        tmp_path / "x.ngidx",
        mapping=NgramHashMapping.build(**OLD_SPEC),
        outputs=OutputOptions(checksum=algorithm),
    )
    manifest = index.manifest
    assert manifest["format_version"] == "1.2"
    for name, record in manifest["arrays"].items():
        data = np.ascontiguousarray(getattr(index, name)).tobytes()
        assert recorded(record, "data") == (algorithm, REFERENCE[algorithm](data)), name
    report = verify_path(tmp_path / "x.ngidx")
    assert report.checks[0] == f"{algorithm} of 4 arrays"


def test_a_corrupted_array_fails_verify_whatever_its_checksum(tmp_path: Path) -> None:
    for algorithm in ("xxh3-128", "sha256"):
        path = tmp_path / f"{algorithm}.ngidx"
        hash_files(
            OLD_TEXT,
            path,
            mapping=NgramHashMapping.build(**OLD_SPEC),
            outputs=OutputOptions(checksum=algorithm),
        )
        tokens = np.load(path / "tokens.npy", mmap_mode="r+")
        tokens[3] ^= 1
        tokens.flush()
        del tokens
        with pytest.raises(NgramToolError, match=f"tokens.npy: data {algorithm} .* does not match"):
            verify_path(path)


def test_an_index_of_format_1_1_with_sha256_is_read_and_verified(tmp_path: Path) -> None:
    old = open_index(OLD_INDEX)
    assert old.manifest["format_version"] == "1.1"
    assert all("data_sha256" in record for record in old.manifest["arrays"].values())
    assert np.load(OLD_INDEX / "rows.npy", mmap_mode="r").offset == 128
    report = verify_path(OLD_INDEX)
    assert report.checks[0] == "sha256 of 4 arrays"
    new = hash_files(OLD_TEXT, tmp_path / "new.ngidx", mapping=NgramHashMapping.build(**OLD_SPEC))
    assert np.array_equal(new.rows, old.rows) and np.array_equal(new.tokens, old.tokens)
    export_path(OLD_INDEX, tmp_path / "old.layers")  # export checks the old rows' sha256


def test_a_stream_of_format_1_1_with_a_sha256_trailer_is_read_and_verified() -> None:
    with OLD_STREAM.open("rb") as source:
        reader = read_stream(source)
        assert "checksum" not in reader.manifest and reader.checksum == "sha256"
        assert sum(chunk.tokens.shape[0] for chunk in reader) == len(open_index(OLD_INDEX))
    assert verify_path(OLD_STREAM).checks[0] == "chunk CRCs, trailer counts and stream sha256"


@pytest.mark.parametrize("algorithm", ["xxh3-128", "sha256"])
def test_a_stream_names_its_trailer_checksum_and_a_damaged_one_is_caught(algorithm: str) -> None:
    result = run(
        "hash", str(OLD_TEXT), "-o", "-", "--checksum", algorithm, "-t", "bytes", "--heads", "2", "-q"
    )
    stream = result.stdout
    reader = read_stream(io.BytesIO(stream))
    assert reader.manifest["checksum"] == algorithm and reader.manifest["format_version"] == "1.2"
    payload = b"".join(
        chunk.tokens.tobytes() + chunk.rows.tobytes() + chunk.doc_starts.tobytes() for chunk in reader
    )
    digest = bytes.fromhex(REFERENCE[algorithm](payload))
    assert stream.endswith(digest.ljust(32, b"\0"))  # the trailer's last field
    damaged = stream[:-32] + bytes([stream[-32] ^ 1]) + stream[-31:]
    with pytest.raises(NgramToolError, match=f"stream checksum \\({algorithm}\\) mismatch"):
        list(read_stream(io.BytesIO(damaged)))


def test_merge_and_export_record_the_chosen_checksum(tmp_path: Path) -> None:
    shards = tmp_path / "shards"
    for i in range(2):
        (tmp_path / f"p{i}.txt").write_text(f"part {i} of a small corpus " * 20)
    hash_files(str(tmp_path / "p*.txt"), f"{shards}/", mapping=NgramHashMapping.build(**OLD_SPEC))
    for algorithm in ("sha256", "xxh3-128"):
        dataset = merge_shards(shards, checksum=algorithm)
        assert dataset["format_version"] == "1.2"
        for record in dataset["shards"]:
            manifest_bytes = (shards / record["path"] / "manifest.json").read_bytes()
            assert recorded(record, "manifest") == (algorithm, REFERENCE[algorithm](manifest_bytes))
        assert len(open_index(shards).shard(1)) == dataset["shards"][1]["num_tokens"]
        dest, layers = export_path(shards, tmp_path / f"{algorithm}.layers", checksum=algorithm)
        for layer in layers["layers"]:
            data = np.load(dest / layer["file"]).tobytes()
            assert recorded(layer, "data") == (algorithm, REFERENCE[algorithm](data))
    manifest = shards / "p0.txt.ngidx" / "manifest.json"
    manifest.write_text(manifest.read_text() + " ")
    with pytest.raises(NgramToolError, match="changed since the dataset was merged"):
        open_index(shards).shard(0)


def test_a_dataset_of_format_1_1_with_manifest_sha256_still_opens(tmp_path: Path) -> None:
    shards = tmp_path / "shards"
    shards.mkdir()
    shutil.copytree(OLD_INDEX, shards / "a.ngidx")
    dataset = merge_shards(shards, checksum="sha256")
    dataset["format_version"] = "1.1"  # what 1.1 wrote: manifest_sha256, the only checksum then
    (shards / "dataset.json").write_text(json.dumps(dataset))
    assert len(open_index(shards)) == len(open_index(OLD_INDEX))


def test_the_command_line_takes_and_checks_checksum(tmp_path: Path) -> None:
    out = tmp_path / "x.ngidx"
    result = run("hash", str(CORPUS), "-o", str(out), "--checksum", "sha256", "-v")
    assert result.returncode == 0, result.stderr.decode()
    assert "sha256 " in result.stderr.decode().splitlines()[-1]  # the -v profile names the stage
    assert "data_sha256" in json.loads((out / "manifest.json").read_text())["arrays"]["rows"]
    bad = run("hash", str(CORPUS), "-o", str(tmp_path / "y.ngidx"), "--checksum", "md5")
    assert_one_line_error(bad, 2, "--checksum must be one of xxh3-128, sha256 (got 'md5')")
    for args in (["merge", str(tmp_path), "--checksum", "crc"], ["export", str(out), "--checksum", "crc"]):
        assert_one_line_error(run(*args), 2, "--checksum must be one of xxh3-128, sha256")
