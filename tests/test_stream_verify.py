"""The pipe stream, inspect, verify and the per-layer export, through the CLI and the library."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import CORPUS

from ngramtool import open_index
from ngramtool.errors import NgramToolError
from ngramtool.formats.stream import read_stream
from ngramtool.verify import verify_index

HASH_ARGS = ["--heads", "2", "--table", "5003", "--boundary", "reset"]


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ngramtool", *args], input=stdin, capture_output=True, timeout=120
    )


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
    result = run("hash", *map(str, texts), "-o", str(out), "-q", *HASH_ARGS)
    assert result.returncode == 0, result.stderr.decode()
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
    assert run("verify", str(index_dir), "-q").returncode == 0
    copy = tmp_path / "copy.ngidx"
    subprocess.run(["cp", "-r", str(index_dir), str(copy)], check=True)
    rows = np.load(copy / "rows.npy", mmap_mode="r+")
    rows[1234, 1, 3] += 1
    rows.flush()
    del rows
    result = run("verify", str(copy))
    assert result.returncode == 1
    assert b"sha256" in result.stderr  # the checksum catches it first
    manifest = json.loads((copy / "manifest.json").read_text())
    data = np.load(copy / "rows.npy")
    import hashlib

    manifest["arrays"]["rows"]["data_sha256"] = hashlib.sha256(data.tobytes()).hexdigest()
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(NgramToolError, match=r"at token 1234 \(layer index 1, column 3\)"):
        verify_index(open_index(copy))


def test_newer_major_format_is_refused(index_dir, tmp_path):
    copy = tmp_path / "future.ngidx"
    subprocess.run(["cp", "-r", str(index_dir), str(copy)], check=True)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["format_version"] = "2.0"
    (copy / "manifest.json").write_text(json.dumps(manifest))
    result = run("inspect", str(copy))
    assert result.returncode == 1 and b"upgrade ngramtool" in result.stderr


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
    assert run("inspect", str(tmp_path / "nope")).returncode == 2
    assert run("inspect", str(tmp_path)).returncode == 2
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"hello world")
    result = run("verify", str(junk))
    assert result.returncode == 1 and b"not an ngramtool stream" in result.stderr
