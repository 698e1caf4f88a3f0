"""The executors run the same job: a Ray run writes the same bytes as a local one; jobs cross to
Ray as JSON and back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import CORPUS, run

from ngramtool import CorpusReader, NgramHashMapping, OutputOptions, RunOptions, hash_files
from ngramtool.run.jobs import HashJob
from ngramtool.util.errors import UsageError

SPEC = {"heads": 2, "table_sizes": 3001, "tokenizer": "bytes"}


def test_a_job_crosses_to_other_processes_as_json():
    mapping = NgramHashMapping.build("bytes", heads=2)
    job = HashJob(
        CorpusReader(("a.txt",), add_eot=True), "a.ngidx", mapping, outputs=OutputOptions(force=True)
    )
    assert HashJob.from_payload(job.to_payload()) == job
    assert HashJob.from_payload(json.loads(json.dumps(job.to_payload()))) == job  # plain JSON values
    assert isinstance(job.to_payload()["mapping"]["spec"], str)


def test_ray_engine_output_is_byte_identical_to_local(tmp_path, monkeypatch):
    pytest.importorskip("ray")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")  # one creation time: identical manifests
    parts = tmp_path / "parts"
    parts.mkdir()
    text = CORPUS.read_text(encoding="utf-8")[:30000]
    for i in range(3):
        (parts / f"p{i}.txt").write_text(text[i * 10000 : (i + 1) * 10000], encoding="utf-8")
    local, remote = tmp_path / "local", tmp_path / "ray"
    hash_files(str(parts / "*.txt"), f"{local}/", mapping=NgramHashMapping.build(**SPEC))
    hash_files(
        str(parts / "*.txt"),
        f"{remote}/",
        mapping=NgramHashMapping.build(**SPEC),
        run=RunOptions(engine="ray"),
    )
    local_files = sorted(p.relative_to(local) for p in local.rglob("*") if p.is_file())
    assert local_files == sorted(p.relative_to(remote) for p in remote.rglob("*") if p.is_file())
    assert len(local_files) == 13  # 3 shards x (manifest + 3 arrays) + their shared vocabulary table
    for name in local_files:
        assert (local / name).read_bytes() == (remote / name).read_bytes(), name


def test_engine_option_needs_a_sharded_run(tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("hello")
    with pytest.raises(UsageError, match="apply to sharded runs"):
        hash_files(
            text, tmp_path / "x.ngidx", mapping=NgramHashMapping.build(**SPEC), run=RunOptions(engine="ray")
        )
    result = run("hash", str(text), "-o", str(tmp_path / "x.ngidx"), "--engine", "ray", "-t", "bytes")
    assert result.returncode == 2 and b"--engine apply to sharded runs: -o DIR/" in result.stderr
    assert Path(tmp_path / "x.ngidx").exists() is False
    with pytest.raises(UsageError, match="`row_groups_per_shard` and `engine` apply to sharded runs"):
        hash_files(
            text,
            tmp_path / "x.ngidx",
            mapping=NgramHashMapping.build(**SPEC),
            run=RunOptions(row_groups_per_shard=2),
        )
    split = run(
        "hash", str(text), "-o", str(tmp_path / "x.ngidx"), "--row-groups-per-shard", "2", "-t", "bytes"
    )
    assert split.returncode == 2 and b"--row-groups-per-shard and --engine apply to sharded" in split.stderr
