"""ngramtool.datatrove.HashStep in real datatrove pipelines (LocalPipelineExecutor, 2 tasks): the
shards of ``ngramtool hash --num-shards 2`` byte for byte, mergeable, resumed as datatrove resumes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import CORPUS, run

pytest.importorskip("datatrove")
pytest.importorskip("orjson")  # datatrove's JsonlReader

from datatrove.data import Document
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.readers import JsonlReader

from ngramtool import NgramHashMapping, OutputOptions, RunOptions, hash_texts, open_index
from ngramtool.datatrove import HashStep
from ngramtool.formats.dataset import merge_shards
from ngramtool.util.errors import MissingDependencyError, NgramToolError, UsageError

SPEC = ("--tokenizer", "cl100k_base", "--heads", "2", "--table", "4099")
EPOCH = "1700000000"


@pytest.fixture(scope="module")
def mapping() -> NgramHashMapping:
    return NgramHashMapping.build("cl100k_base", heads=2, table_sizes=4099)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three JSONL files of corpus lines (the 2 tasks take files 0 and 2, and 1)."""
    folder = tmp_path_factory.mktemp("datatrove") / "corpus"
    folder.mkdir()
    lines = [line.strip() for line in CORPUS.read_text(encoding="utf-8").splitlines() if len(line) > 40]
    for part in range(3):
        records = [json.dumps({"text": line}) for line in lines[part * 40 : (part + 1) * 40]]
        (folder / f"part-{part}.jsonl").write_text("\n".join(records) + "\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def hashed_by_the_command(corpus: Path) -> Path:
    """``ngramtool hash corpus/*.jsonl -o DIR/ --num-shards 2 --shard-index i``, i = 0, 1."""
    out = corpus.parent / "hashed"
    inputs = sorted(str(path) for path in corpus.iterdir())
    for rank in range(2):
        result = run("hash", *inputs, "-o", f"{out}/", "--num-shards", 2, "--shard-index", rank, *SPEC,
                     env={"SOURCE_DATE_EPOCH": EPOCH})  # fmt: skip
        assert result.returncode == 0, result.stderr.decode()
    return out


def files_of(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` by its relative path, with its bytes."""
    return {str(path.relative_to(folder)): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


def modified(folder: Path) -> dict[str, int]:
    """The modification time of every array under ``folder``, by relative path."""
    return {str(path.relative_to(folder)): path.stat().st_mtime_ns for path in folder.rglob("*.npy")}


def hash_with_datatrove(corpus: Path, out: Path, logs: Path, mapping: NgramHashMapping, **executor) -> None:
    """The 2-task pipeline JsonlReader -> HashStep, run locally."""
    pipeline = [JsonlReader(str(corpus)), HashStep(out, mapping)]
    LocalPipelineExecutor(pipeline, tasks=2, workers=1, logging_dir=str(logs), **executor).run()


def test_the_shards_of_hash_num_shards_byte_for_byte(corpus, hashed_by_the_command, mapping, tmp_path,
                                                     monkeypatch):  # fmt: skip
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    hash_with_datatrove(corpus, tmp_path / "shards", tmp_path / "logs", mapping)
    shards = files_of(tmp_path / "shards")
    assert sorted(name.split("/")[0] for name in shards if name.endswith("manifest.json")) == [
        "part-0.jsonl.ngidx", "part-1.jsonl.ngidx", "part-2.jsonl.ngidx"
    ]  # fmt: skip
    assert shards == files_of(hashed_by_the_command)
    merged = merge_shards(tmp_path / "shards")
    dataset = open_index(tmp_path / "shards")
    assert (
        merged["num_tokens"]
        == len(dataset)
        == sum(len(open_index(p)) for p in hashed_by_the_command.glob("*.ngidx"))
    )


def test_a_rerun_skips_the_completed_tasks_and_the_finished_shards(corpus, hashed_by_the_command, mapping,
                                                                   tmp_path, monkeypatch):  # fmt: skip
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    out, logs = tmp_path / "shards", tmp_path / "logs"
    hash_with_datatrove(corpus, out, logs, mapping, local_tasks=1)  # only task 0 runs: one of two
    assert sorted(path.name for path in out.glob("*.ngidx")) == ["part-0.jsonl.ngidx", "part-2.jsonl.ngidx"]
    first = modified(out)

    hash_with_datatrove(corpus, out, logs, mapping)  # datatrove skips task 0: it completed
    assert files_of(out) == files_of(hashed_by_the_command)
    assert {name: ns for name, ns in modified(out).items() if name in first} == first
    stats = json.loads((logs / "stats" / "00001.json").read_text())
    assert any(
        step["name"].endswith("ngramtool hash") and step["stats"]["shards"]["total"] == 1 for step in stats
    )

    # Task 1 died after its shard was finished: its rerun passes over that shard.
    (logs / "completions" / "00001").unlink()
    before = modified(out)
    hash_with_datatrove(corpus, out, logs, mapping)
    assert modified(out) == before
    step = next(s for s in json.loads((logs / "stats" / "00001.json").read_text()) if "HASH" in s["name"])
    assert step["stats"]["shards_finished_before"]["total"] == 1 and "shards" not in step["stats"]


def test_documents_that_name_no_file_make_one_shard_per_rank(mapping, tmp_path):
    texts = ["The cat sat on the mat.", "", "Hello world, once more."]
    documents = [Document(text=text, id=str(i)) for i, text in enumerate(texts)]
    list(HashStep(tmp_path / "shards", mapping, boundary="reset").run(iter(documents), rank=3, world_size=4))
    shard = open_index(tmp_path / "shards" / "rank-00003.ngidx")
    alone = hash_texts(texts, tmp_path / "alone.ngidx", mapping=mapping, boundary="reset")
    assert shard.doc_offsets.tolist() == alone.doc_offsets.tolist()
    assert np.array_equal(shard.rows[:], alone.rows[:]) and np.array_equal(shard.tokens[:], alone.tokens[:])


def test_documents_of_one_file_must_come_together(mapping, tmp_path):
    documents = [Document(text=f"line {i}", id=str(i), metadata={"file_path": f"/data/{i % 2}.jsonl"})
                 for i in range(4)]  # fmt: skip
    with pytest.raises(NgramToolError, match=r"the documents of /data/0.jsonl come apart"):
        list(HashStep(tmp_path / "shards", mapping).run(iter(documents)))
    twins = [
        Document(text="a b", id=str(i), metadata={"file_path": f"/data/{i}/part.jsonl"}) for i in range(2)
    ]
    with pytest.raises(
        NgramToolError, match=r"/data/1/part.jsonl and /data/0/part.jsonl would both make the shard"
    ):
        list(HashStep(tmp_path / "shards", mapping).run(iter(twins)))


def test_options_that_do_not_apply_are_refused(tmp_path):
    with pytest.raises(UsageError, match="`save_tokens` makes one token file"):
        HashStep(tmp_path, outputs=OutputOptions(save_tokens=str(tmp_path / "ids.npy")))
    with pytest.raises(UsageError, match="datatrove's tasks are HashStep's shards"):
        HashStep(tmp_path, run=RunOptions(num_shards=2, shard_index=0))


def test_without_datatrove_the_error_names_the_extra(monkeypatch):
    monkeypatch.delitem(sys.modules, "ngramtool.datatrove")
    monkeypatch.setitem(sys.modules, "datatrove.pipeline.base", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'ngramtool\[datatrove\]'"):
        import ngramtool.datatrove  # noqa: F401
