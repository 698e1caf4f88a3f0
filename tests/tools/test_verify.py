"""The pipe stream, inspect, verify and the per-layer export, through the CLI and the library."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
import xxhash
from conftest import CORPUS, run

from ngramtool import NgramHashMapping, hash_files, open_index
from ngramtool.formats.stream import read_stream
from ngramtool.tools.describe import describe_path
from ngramtool.tools.verify import verify_index, verify_path
from ngramtool.util.errors import NgramToolError

HASH_ARGS = ["--heads", "2", "--table", "5003", "--boundary", "reset"]


@pytest.fixture(scope="module")
def texts(tmp_path_factory) -> list[Path]:
    folder = tmp_path_factory.mktemp("texts")
    text = CORPUS.read_text(encoding="utf-8")
    paths = []
    for i, (lo, hi) in enumerate(((0, 15000), (15000, 15000), (15000, 40000))):  # the middle file is empty
        path = folder / f"part{i}.txt"
        path.write_text(text[lo:hi], encoding="utf-8")
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def index_dir(texts, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("idx") / "c.ngidx"
    hash_files(
        texts, out, mapping=NgramHashMapping.build("cl100k_base", heads=2, table_sizes=5003), boundary="reset"
    )
    return out


@pytest.fixture(scope="module")
def stream_bytes(texts) -> bytes:
    result = run("hash", *map(str, texts), "-o", "-", "-q", *HASH_ARGS)
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout


def test_stream_carries_exactly_the_index(index_dir, stream_bytes):
    index = open_index(index_dir)
    reader = read_stream(io.BytesIO(stream_bytes))
    chunks = list(reader)
    assert reader.num_tokens == len(index) and reader.num_documents == 3
    assert np.array_equal(np.concatenate([c.tokens for c in chunks]), index.tokens)
    assert np.array_equal(np.concatenate([c.rows for c in chunks]), index.rows)
    assert np.array_equal(reader.lut, index.lut)
    assert reader.spec == index.spec
    assert reader.manifest["format"] == "ngramtool-stream"


@pytest.mark.parametrize("cut", [5, 100, -3, -40])
def test_truncated_stream_is_an_error(stream_bytes, cut):
    data = stream_bytes[:cut]
    with pytest.raises(NgramToolError, match=r"truncated|not an ngramtool stream"):
        list(read_stream(io.BytesIO(data)))


@pytest.mark.parametrize("where", [30, 0.5, 0.9, -60])
def test_corrupted_stream_is_an_error(stream_bytes, where):
    data = bytearray(stream_bytes)
    data[int(len(data) * where) if isinstance(where, float) else where] ^= 0x40
    with pytest.raises(NgramToolError, match=r"CRC|corrupted|checksum"):
        list(read_stream(io.BytesIO(bytes(data))))


def test_pipe_into_inspect_and_verify(stream_bytes):
    inspected = run("inspect", "-", "--json", "--rows", "2", stdin=stream_bytes)
    assert inspected.returncode == 0, inspected.stderr.decode()
    report = json.loads(inspected.stdout)
    assert report["kind"] == "stream" and report["num_documents"] == 3
    assert len(report["first"]) == 2 and len(report["first"][0]["rows"]) == 2
    verified = run("verify", "-", "--json", stdin=stream_bytes)
    assert verified.returncode == 0, verified.stderr.decode()
    assert json.loads(verified.stdout)["ok"] is True
    bad = run("verify", "-", stdin=stream_bytes[:-1])
    assert bad.returncode == 1 and b"truncated" in bad.stderr


def test_verify_passes_and_catches_a_changed_row(index_dir, tmp_path):
    assert verify_path(index_dir).checks[-1].startswith("all ")
    copy = tmp_path / "copy.ngidx"
    subprocess.run(["cp", "-r", str(index_dir), str(copy)], check=True)
    rows = np.load(copy / "rows.npy", mmap_mode="r+")
    rows[1234, 1, 3] += 1
    rows.flush()
    del rows
    with pytest.raises(NgramToolError, match="data xxh3-128") as caught:  # the checksum catches it first
        verify_path(copy)
    assert caught.value.exit_code == 1
    manifest = json.loads((copy / "manifest.json").read_text())
    data = np.load(copy / "rows.npy")
    manifest["arrays"]["rows"]["data_xxh3_128"] = xxhash.xxh3_128(data.tobytes()).hexdigest()
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(NgramToolError, match=r"at token 1234 \(layer index 1, column 3\)"):
        verify_index(open_index(copy))


def test_newer_major_format_is_refused(index_dir, tmp_path):
    copy = tmp_path / "future.ngidx"
    subprocess.run(["cp", "-r", str(index_dir), str(copy)], check=True)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["format_version"] = "2.0"
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(NgramToolError, match="upgrade ngramtool"):
        describe_path(copy)


def test_inspect_index_json_and_table(index_dir):
    result = run("inspect", str(index_dir), "--json")
    report = json.loads(result.stdout)
    index = open_index(index_dir)
    assert report["kind"] == "index" and report["num_tokens"] == len(index)
    assert report["spec"]["tables_per_layer"] == 4
    assert report["first"][0]["rows"] == index.rows[0].tolist()
    assert "2 orders x 2 heads = 4 tables per layer" in run("inspect", str(index_dir)).stdout.decode()


def test_export_per_layer(index_dir, tmp_path):
    out = tmp_path / "layers"
    result = run("export", str(index_dir), "--layout", "per-layer", "-o", str(out), "--json")
    assert result.returncode == 0, result.stderr.decode()
    index = open_index(index_dir)
    layout = json.loads((out / "layers.json").read_text())
    for li, layer in enumerate(layout["layers"]):
        assert layer["layer_id"] == index.spec.layer_ids[li]
        assert np.array_equal(np.load(out / layer["file"]), index.rows[:, li, :])
    again = run("export", str(index_dir), "-o", str(out))
    assert again.returncode == 2 and b"--force" in again.stderr
    assert run("export", str(index_dir), "--layout", "weird").returncode == 2


def test_inspect_and_verify_bad_paths(tmp_path):
    for command in ("inspect", "verify"):
        missing = run(command, str(tmp_path / "nope"))
        assert missing.returncode == 2 and b"nope does not exist: give an index" in missing.stderr
    assert run("inspect", str(tmp_path)).returncode == 2
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"hello world")
    result = run("verify", str(junk))
    assert result.returncode == 2 and b"`ngramtool inspect " in result.stderr


# ------------------------------------------------------------------ damaged streams and manifests
def test_data_after_a_streams_end_is_an_error(stream_bytes):
    for tail in (stream_bytes, b"x"):  # two streams back to back, or any trailing bytes
        with pytest.raises(NgramToolError, match="data follows the stream's end"):
            list(read_stream(io.BytesIO(stream_bytes + tail)))


def test_an_impossible_chunk_length_is_called_corruption(stream_bytes):
    from ngramtool.formats import stream

    header_len = stream._HEADER.size + stream._HEADER.unpack(stream_bytes[: stream._HEADER.size])[4]
    table_len = stream._U64.unpack(stream_bytes[header_len : header_len + 8])[0]
    chunk = header_len + 8 + table_len
    for claim in (1 << 40, 1 << 62):
        damaged = bytearray(stream_bytes)
        damaged[chunk + 8 : chunk + 16] = claim.to_bytes(8, "little")  # the chunk's token count
        with pytest.raises(NgramToolError, match="stream corrupted: a chunk header after 0 tokens claims"):
            list(read_stream(io.BytesIO(bytes(damaged))))


def test_big_chunks_are_split_into_frames_readers_accept(index_dir, monkeypatch):
    from ngramtool.formats import stream

    monkeypatch.setattr(stream, "MAX_FRAME_BYTES", 40_000)  # a few hundred tokens per frame
    index = open_index(index_dir)
    out = io.BytesIO()
    manifest = {k: v for k, v in index.manifest.items() if k not in ("num_tokens", "num_documents", "arrays")}
    manifest["format"] = stream.FORMAT_NAME
    writer = stream.StreamWriter(out, manifest, np.asarray(index.lut), index.spec)
    starts = np.asarray(index.doc_offsets[:-1])
    writer.append(np.asarray(index.tokens), np.asarray(index.rows), starts)
    writer.commit()
    reader = read_stream(io.BytesIO(out.getvalue()))
    chunks = list(reader)
    assert len(chunks) > 10 and reader.num_documents == len(starts)
    assert np.array_equal(np.concatenate([c.rows for c in chunks]), np.asarray(index.rows))
    positions = np.cumsum([0] + [c.tokens.shape[0] for c in chunks[:-1]])
    rebuilt = np.concatenate([c.doc_starts + p for c, p in zip(chunks, positions, strict=True)])
    assert rebuilt.tolist() == starts.tolist()


def _damage(index_dir: Path, tmp_path: Path, change) -> Path:
    """A copy of the index whose manifest ``change`` edited."""
    import shutil

    copy = tmp_path / f"damaged{len(list(tmp_path.iterdir()))}.ngidx"
    shutil.copytree(index_dir, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    change(manifest)
    (copy / "manifest.json").write_text(json.dumps(manifest))
    return copy


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda m: m.update(num_tokens=5), "the manifest counts 5 tokens"),
        (lambda m: m.update(num_documents=9), "9 documents"),
        (lambda m: m["spec"]["derived"].update(primes=[[[7]]]), "derived constants"),
        (lambda m: m["vocab"].update(size=7), "vocabulary sizes"),
        (lambda m: m["rows"].update(dtype="<i8"), "row dtype"),
    ],
)
def test_verify_checks_what_the_manifest_describes(index_dir, tmp_path, change, message):
    damaged = _damage(index_dir, tmp_path, change)
    with pytest.raises(NgramToolError, match=message):
        verify_index(open_index(damaged))


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda m: m["arrays"]["rows"].update(file="../elsewhere/rows.npy"), "not a file name"),
        (lambda m: m["arrays"].pop("lut"), "damaged: field 'arrays.lut' is missing"),
        (lambda m: m.update(arrays=[]), "damaged"),
        (lambda m: m["spec"].update(heads="2"), "damaged"),
    ],
)
def test_a_damaged_manifest_is_a_runtime_error(index_dir, tmp_path, change, message):
    damaged = _damage(index_dir, tmp_path, change)
    for read in (verify_path, describe_path):
        with pytest.raises(NgramToolError) as caught:
            read(damaged)
        assert caught.value.exit_code == 1 and message in str(caught.value), (read, str(caught.value))


def test_a_damaged_manifest_is_one_line_on_the_command_line(index_dir, tmp_path):
    damaged = _damage(index_dir, tmp_path, lambda m: m["arrays"].pop("lut"))
    for command in ("verify", "inspect"):
        result = run(command, str(damaged))
        err = result.stderr.decode()
        assert result.returncode == 1 and "Traceback" not in err and len(err.splitlines()) == 1, err
        assert "damaged: field 'arrays.lut' is missing" in err


def test_an_empty_array_file_is_named(index_dir, tmp_path):
    damaged = _damage(index_dir, tmp_path, lambda m: None)
    (damaged / "tokens.npy").write_bytes(b"")
    with pytest.raises(NgramToolError, match=r"tokens\.npy: cannot read this array"):
        verify_path(damaged)
