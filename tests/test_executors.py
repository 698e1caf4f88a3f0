"""The executors run the same job: a Ray run writes the same bytes as a local one; jobs cross to
Ray as JSON and back."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CORPUS, run

from ngramtool import HashSpec, hash_files
from ngramtool.errors import UsageError
from ngramtool.jobs import HashJob

SPEC = {"heads": 2, "table_sizes": 3001, "tokenizer": "bytes"}


def test_a_job_crosses_to_other_processes_as_json():
    job = HashJob(("a.txt",), "a.ngidx", HashSpec(heads=2), tokenizer="bytes", add_eot=True)
    assert HashJob.from_payload(job.to_payload()) == job
    assert isinstance(job.to_payload()["spec"], str)


def test_ray_engine_output_is_byte_identical_to_local(tmp_path, monkeypatch):
    pytest.importorskip("ray")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")  # one creation time: identical manifests
    parts = tmp_path / "parts"
    parts.mkdir()
    text = CORPUS.read_text(encoding="utf-8")[:30000]
    for i in range(3):
        (parts / f"p{i}.txt").write_text(text[i * 10000 : (i + 1) * 10000], encoding="utf-8")
    local, remote = tmp_path / "local", tmp_path / "ray"
    hash_files(str(parts / "*.txt"), f"{local}/", **SPEC)
    hash_files(str(parts / "*.txt"), f"{remote}/", engine="ray", **SPEC)
    local_files = sorted(p.relative_to(local) for p in local.rglob("*") if p.is_file())
    assert local_files == sorted(p.relative_to(remote) for p in remote.rglob("*") if p.is_file())
    assert len(local_files) == 13  # 3 shards x (manifest + 3 arrays) + their shared vocabulary table
    for name in local_files:
        assert (local / name).read_bytes() == (remote / name).read_bytes(), name


def test_engine_option_needs_a_sharded_run(tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("hello")
    with pytest.raises(UsageError, match="apply to sharded runs"):
        hash_files(text, tmp_path / "x.ngidx", engine="ray", **SPEC)
    result = run("hash", str(text), "-o", str(tmp_path / "x.ngidx"), "--engine", "ray", "-t", "bytes")
    assert result.returncode == 2 and b"--engine apply to sharded runs: -o DIR/" in result.stderr
    assert Path(tmp_path / "x.ngidx").exists() is False
    with pytest.raises(UsageError, match="`row_groups_per_shard` and `engine` apply to sharded runs"):
        hash_files(text, tmp_path / "x.ngidx", row_groups_per_shard=2, **SPEC)
    split = run(
        "hash", str(text), "-o", str(tmp_path / "x.ngidx"), "--row-groups-per-shard", "2", "-t", "bytes"
    )
    assert split.returncode == 2 and b"--row-groups-per-shard and --engine apply to sharded" in split.stderr
