"""The Ray engine runs the same per-shard function as the local run: byte-identical output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CORPUS

pytest.importorskip("ray")

ARGS = ["--heads", "2", "--table", "3001", "--tokenizer", "bytes", "-q"]


def run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}  # one creation time: identical manifests
    return subprocess.run(
        [sys.executable, "-m", "ngramtool", *args], capture_output=True, env=env, timeout=300
    )


def test_ray_engine_output_is_byte_identical_to_local(tmp_path):
    parts = tmp_path / "parts"
    parts.mkdir()
    text = CORPUS.read_text(encoding="utf-8")[:30000]
    for i in range(3):
        (parts / f"p{i}.txt").write_text(text[i * 10000 : (i + 1) * 10000], encoding="utf-8")
    local, remote = tmp_path / "local", tmp_path / "ray"
    assert run("hash", str(parts / "*.txt"), "-o", f"{local}/", *ARGS).returncode == 0
    result = run("hash", str(parts / "*.txt"), "-o", f"{remote}/", "--engine", "ray", *ARGS)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    local_files = sorted(p.relative_to(local) for p in local.rglob("*") if p.is_file())
    assert local_files == sorted(p.relative_to(remote) for p in remote.rglob("*") if p.is_file())
    assert len(local_files) == 13  # 3 shards x (manifest + 3 arrays) + their shared vocabulary table
    for name in local_files:
        assert (local / name).read_bytes() == (remote / name).read_bytes(), name


def test_engine_option_needs_a_sharded_run(tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("hello")
    result = run("hash", str(text), "-o", str(tmp_path / "x.ngidx"), "--engine", "ray", *ARGS)
    assert result.returncode == 2 and b"apply to sharded runs" in result.stderr
    assert Path(tmp_path / "x.ngidx").exists() is False
