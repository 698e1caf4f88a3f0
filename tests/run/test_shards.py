"""Sharded runs (selection, resume, crash safety), merge, and reading a merged dataset as one index
(ngramtool.run.executors; the command line's messages about them too)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import CORPUS, run

from ngramtool import NgramHashMapping, RunOptions, hash_files, merge_shards, open_index
from ngramtool.formats.dataset import MergedIndex
from ngramtool.run.shards import expand_inputs, plan_shards, shard_selection
from ngramtool.tools.verify import verify_path
from ngramtool.util.errors import NgramToolError, UsageError

SPEC_ARGS = ["--heads", "2", "--table", "3001", "--tokenizer", "bytes"]
SPEC = {"heads": 2, "table_sizes": 3001, "tokenizer": "bytes"}


@pytest.fixture()
def parts(tmp_path) -> Path:
    folder = tmp_path / "parts"
    folder.mkdir()
    text = CORPUS.read_text(encoding="utf-8")[:40000]
    for i in range(5):
        (folder / f"p{i}.txt").write_text(text[i * 8000 : (i + 1) * 8000], encoding="utf-8")
    return folder


def test_shard_selection_sources():
    assert shard_selection(2, 4, {}) == (2, 4)
    assert shard_selection(None, None, {"RANK": "1", "WORLD_SIZE": "3"}) == (1, 3)
    env = {"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "5", "SLURM_ARRAY_TASK_COUNT": "4"}
    assert shard_selection(None, None, env) == (2, 4)
    assert shard_selection(None, None, {}) == (0, 1)
    with pytest.raises(UsageError):
        shard_selection(4, 4, {})
    with pytest.raises(UsageError):
        shard_selection(1, None, {})


def test_workers_partition_the_inputs(parts, tmp_path):
    inputs = expand_inputs([str(parts / "*.txt")])
    assert [Path(p).name for p in inputs] == [f"p{i}.txt" for i in range(5)]
    taken = []
    for i in range(3):
        shards = plan_shards(
            inputs, tmp_path, shard_index=i, num_shards=3, expected={}, resume=False, force=False
        )
        taken += [s.source for s in shards]
    assert sorted(taken) == inputs and len(set(taken)) == 5
    with pytest.raises(UsageError, match="no file matches"):
        expand_inputs([str(parts / "*.nothing")])


def test_double_star_patterns_recurse_in_sorted_order(tmp_path):
    for name in ["z.txt", "b/deeper/c.txt", "a/y.txt", "a/x.md", "b/a.txt"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(f"text of {name}")
    expected = [str(tmp_path / n) for n in ["a/y.txt", "b/a.txt", "b/deeper/c.txt", "z.txt"]]
    assert expand_inputs([str(tmp_path / "**" / "*.txt")]) == expected
    assert expand_inputs([str(tmp_path / "b" / "**" / "*.txt")]) == expected[1:3]
    out = tmp_path / "out"
    result = run("hash", "**/*.txt", "-o", f"{out}/", "-q", *SPEC_ARGS, cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode()
    assert sorted(p.name for p in out.iterdir()) == [
        "a.txt.ngidx",
        "c.txt.ngidx",
        "vocab",  # the shards' shared lookup table
        "y.txt.ngidx",
        "z.txt.ngidx",
    ]


def test_sharded_run_resume_and_merge(parts, tmp_path):
    out = tmp_path / "out"
    pattern = str(parts / "*.txt")
    first_worker = RunOptions(shard_index=0, num_shards=2)
    hash_files(pattern, f"{out}/", mapping=NgramHashMapping.build(**SPEC), run=first_worker)
    assert sorted(p.name for p in out.iterdir()) == ["p0.txt.ngidx", "p2.txt.ngidx", "p4.txt.ngidx", "vocab"]
    with pytest.raises(UsageError, match="`resume=True`"):
        hash_files(pattern, f"{out}/", mapping=NgramHashMapping.build(**SPEC))
    with pytest.raises(UsageError, match="another hash spec"):
        hash_files(
            pattern,
            f"{out}/",
            mapping=NgramHashMapping.build(**{**SPEC, "heads": 3}),
            run=RunOptions(resume=True),
        )
    # A killed run leaves only a .partial directory: it is not a finished shard and is cleaned up.
    (out / ".p1.txt.ngidx.abc123.partial").mkdir()
    resumed = run("hash", pattern, "-o", f"{out}/", "--resume", *SPEC_ARGS)
    assert resumed.returncode == 0, resumed.stderr.decode()
    assert b"skipping 3 finished shards of 5" in resumed.stderr
    assert not list(out.glob(".*.partial"))
    dataset = merge_shards(out)
    assert dataset["num_shards"] == 5 and dataset["shards"][0]["path"] == "p0.txt.ngidx"
    assert verify_path(out).num_tokens == dataset["num_tokens"]

    merged_index = open_index(out)
    assert isinstance(merged_index, MergedIndex)
    singles = [open_index(out / f"p{i}.txt.ngidx") for i in range(5)]
    assert len(merged_index) == sum(len(s) for s in singles) == dataset["num_tokens"]
    whole_rows = np.concatenate([np.asarray(s.rows) for s in singles])
    whole_tokens = np.concatenate([np.asarray(s.tokens) for s in singles])
    start = len(singles[0]) - 5  # a window across the first shard boundary
    tokens, rows = merged_index.window(start, 20)
    assert np.array_equal(tokens, whole_tokens[start : start + 20])
    assert np.array_equal(rows, whole_rows[start : start + 20])
    assert merged_index.doc_offsets.tolist() == np.cumsum([0] + [len(s) for s in singles]).tolist()
    # Each shard equals hashing its file alone.
    alone = hash_files(parts / "p3.txt", tmp_path / "alone.ngidx", mapping=NgramHashMapping.build(**SPEC))
    assert np.array_equal(alone.rows, singles[3].rows)


def test_merge_refuses_mixed_specs_and_changed_shards(parts, tmp_path):
    out = tmp_path / "mixed"
    hash_files(parts / "p0.txt", out / "a.ngidx", mapping=NgramHashMapping.build(**SPEC))
    hash_files(parts / "p1.txt", out / "b.ngidx", mapping=NgramHashMapping.build("bytes"))
    with pytest.raises(NgramToolError, match="another hash spec") as refused:
        merge_shards(out)
    assert refused.value.exit_code == 1
    good = tmp_path / "good"
    for name in ("a", "b"):
        hash_files(
            parts / ("p0.txt" if name == "a" else "p1.txt"),
            good / f"{name}.ngidx",
            mapping=NgramHashMapping.build(**SPEC),
        )
    merge_shards(good)
    manifest = good / "b.ngidx" / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"num_documents": 1', '"num_documents": 1 '))
    with pytest.raises(NgramToolError, match="changed since the dataset was merged") as changed:
        verify_path(good)  # a shard is checked when it is first read
    assert changed.value.exit_code == 1
    with pytest.raises(UsageError):
        merge_shards(tmp_path / "nothing-here")


def test_torch_dataset_reads_a_merged_dataset(parts, tmp_path):
    torch_data = pytest.importorskip("ngramtool.torch")
    out = tmp_path / "ds"
    hash_files(str(parts / "*.txt"), f"{out}/", mapping=NgramHashMapping.build(**SPEC))
    merge_shards(out)
    dataset = torch_data.IndexDataset(out, seq_len=100)
    merged = open_index(out)
    item = dataset[len(dataset) // 2]
    start = item["start"]
    assert item["tokens"].tolist() == merged.tokens[start : start + 101].tolist()
    assert item["rows"].numpy().tolist() == merged.rows[start : start + 100].tolist()


def test_stale_or_incomplete_datasets_are_detected(parts, tmp_path):
    out = tmp_path / "stale"
    hash_files([parts / "p0.txt", parts / "p1.txt"], f"{out}/", mapping=NgramHashMapping.build(**SPEC))
    merge_shards(out)
    hash_files(parts / "p2.txt", f"{out}/", mapping=NgramHashMapping.build(**SPEC))
    result = run("verify", str(out), "--json")
    assert result.returncode == 1 and b"does not list" in result.stderr
    assert json.loads(result.stdout)["ok"] is False
    import shutil

    shutil.rmtree(out / "p2.txt.ngidx")
    shutil.rmtree(out / "p1.txt.ngidx")
    with pytest.raises(NgramToolError, match="is missing") as missing:
        open_index(out)
    assert missing.value.exit_code == 1


def test_an_existing_directory_becomes_shards_only_when_it_is_empty_or_holds_shards(parts, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "thesis.txt").write_text("important")
    pattern = str(parts / "p[01].txt")
    refused = run("hash", pattern, "-o", str(home), *SPEC_ARGS)
    assert refused.returncode == 2 and b"Traceback" not in refused.stderr
    assert b"add a trailing slash (-o " in refused.stderr and b"choose a new name" in refused.stderr
    assert sorted(p.name for p in home.iterdir()) == ["thesis.txt"]
    hash_files(pattern, f"{home}/", mapping=NgramHashMapping.build(**SPEC))  # the slash says so
    assert (home / "p1.txt.ngidx" / "manifest.json").is_file()
    empty = tmp_path / "empty"
    empty.mkdir()
    hash_files(pattern, empty, mapping=NgramHashMapping.build(**SPEC))
    assert sorted(p.name for p in empty.iterdir()) == ["p0.txt.ngidx", "p1.txt.ngidx", "vocab"]
    hash_files(
        str(parts / "*.txt"), empty, mapping=NgramHashMapping.build(**SPEC), run=RunOptions(resume=True)
    )  # it holds shards now
    assert len(list(empty.glob("*.ngidx"))) == 5
    killed = tmp_path / "killed"
    killed.mkdir()
    (killed / ".p0.txt.ngidx.abc123.partial").mkdir()  # all a killed run left behind
    hash_files(pattern, killed, mapping=NgramHashMapping.build(**SPEC))
    assert sorted(p.name for p in killed.iterdir()) == ["p0.txt.ngidx", "p1.txt.ngidx", "vocab"]


def test_outputs_that_cannot_take_shards_are_usage_errors(parts, tmp_path):
    pattern = str(parts / "p[01].txt")
    data = tmp_path / "data"
    data.mkdir()
    (data / "corpus.txt").write_text("some text to hash", encoding="utf-8")
    hash_files(data / "corpus.txt", mapping=NgramHashMapping.build(**SPEC))  # data/corpus.txt.ngidx
    cases = {
        str(data): "add a trailing slash",  # an index among other files is not a shard directory
        f"{data / 'corpus.txt.ngidx'}/": "is an index, so it cannot hold shards",
        f"{data / 'corpus.txt'}/": "is a file",
        "": "names no output",
    }
    for output, message in cases.items():
        with pytest.raises(UsageError) as refused:
            hash_files(pattern, output, mapping=NgramHashMapping.build(**SPEC))
        assert message in str(refused.value), (output, str(refused.value))
    result = run("hash", pattern, "-o", "", *SPEC_ARGS)
    assert result.returncode == 2 and b"-o '' names no output" in result.stderr
    assert sorted(p.name for p in data.iterdir()) == ["corpus.txt", "corpus.txt.ngidx"]
    assert not list((data / "corpus.txt.ngidx").glob("*.ngidx"))


def test_a_worker_without_inputs_says_so_and_succeeds(parts, tmp_path):
    out = tmp_path / "idle"
    args = ["hash", str(parts / "p[012].txt"), "-o", f"{out}/", "--shard-index", "4", "--num-shards", "5"]
    result = run(*args, *SPEC_ARGS)
    assert result.returncode == 0, result.stderr.decode()
    assert b"worker 4 of 5" in result.stderr and b"only 3 inputs" in result.stderr
    assert not out.exists()
    report = run(*args, "--json", *SPEC_ARGS)
    assert report.returncode == 0, report.stderr.decode()
    assert json.loads(report.stdout) == {"shards": [], "shard_index": 4, "num_shards": 5, "num_inputs": 3}
    one = hash_files(parts / "p0.txt", f"{tmp_path}/one/", mapping=NgramHashMapping.build(**SPEC))
    assert [str(shard.path) for shard in one] == [f"{tmp_path}/one/p0.txt.ngidx"]
    assert (
        hash_files(
            str(parts / "p[012].txt"),
            f"{out}/",
            mapping=NgramHashMapping.build(**SPEC),
            run=RunOptions(shard_index=4, num_shards=5),
        )
        == []
    )
    quiet = run(*args, "-q", *SPEC_ARGS)
    assert quiet.returncode == 0 and quiet.stderr == b""


def test_counts_agree_with_their_nouns(parts, tmp_path):
    out = tmp_path / "one"
    hash_files(parts / "p0.txt", f"{out}/", mapping=NgramHashMapping.build(**SPEC))
    merged = run("merge", str(out))
    assert merged.returncode == 0, merged.stderr.decode()
    assert b": 1 shard, " in merged.stderr and b"tokens, 1 document, " in merged.stderr
    (tmp_path / "a.txt").write_text("a")
    single = run("hash", str(tmp_path / "a.txt"), "-o", str(tmp_path / "a.ngidx"), *SPEC_ARGS)
    assert b": 1 token, 1 document, " in single.stderr
