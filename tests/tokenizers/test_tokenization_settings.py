"""Every setting that changes tokens or rows is recorded in the manifest (``tokenization``) and
compared, by one function, when a sharded run resumes and when shards are merged."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from conftest import DATA, grouped, run

from ngramtool import (
    CorpusReader,
    NgramHashMapping,
    RunOptions,
    TokenFileReader,
    hash_files,
    merge_shards,
    open_index,
)
from ngramtool.formats.settings import settings_difference
from ngramtool.formats.stream import read_stream
from ngramtool.tools.tokenization import Tokenized
from ngramtool.tools.verify import verify_path
from ngramtool.util.errors import NgramToolError, UsageError

BYTES = {"tokenizer": "bytes", "heads": 2, "table_sizes": 3001}
QWEN = str(DATA / "tokenizers" / "qwen-style" / "tokenizer.json")


WIDE = {"COLUMNS": "200"}
"""A terminal wide enough that no line of ``inspect`` wraps (at 80 columns where a line wraps
depends on the length of the test's temporary path)."""


@pytest.fixture()
def texts(tmp_path) -> Path:
    folder = tmp_path / "texts"
    folder.mkdir()
    for i in range(3):
        (folder / f"t{i}.txt").write_text(f"document {i}\nsecond line {i}\n", encoding="utf-8")
    return folder


def test_index_and_stream_manifests_record_the_tokenization(tmp_path):
    docs = tmp_path / "chats.jsonl"
    docs.write_text('{"text": "<|im_start|>user\\nHi<|im_end|>"}\n{"text": "Bye"}\n', encoding="utf-8")
    out = tmp_path / "chats.ngidx"
    reader = CorpusReader([docs], text_key="text", add_eot=True)
    manifest = hash_files(reader, out, mapping=NgramHashMapping.build(QWEN, heads=2)).manifest
    assert manifest["format_version"] == "1.2"
    im_end = json.loads(Path(QWEN).read_text())["added_tokens"][2]["id"]
    assert manifest["tokenization"] == {
        "input": "text",
        "special": "all",
        "add_eot": True,
        "eot": {
            "id": im_end,
            "token": "<|im_end|>",
            "source": "tokenizer_config.json eos_token",
        },
        "document_prefix": [],
        "document_suffix": [],
        "json_key": "text",
        "doc_sep": None,
        "errors": "strict",
        "format": None,
    }
    shown = run("inspect", str(out), env=WIDE).stdout.decode()
    assert f"special tokens: all; --add-eot '<|im_end|>' (id {im_end}); --text-key 'text'" in shown
    args = ["--json-key", "text", "--tokenizer", QWEN, "--add-eot", "--heads", "2", "-q"]
    stream = run("hash", str(docs), "-o", "-", *args)
    assert stream.returncode == 0, stream.stderr.decode()
    reader = read_stream(io.BytesIO(stream.stdout))
    assert reader.manifest["tokenization"] == manifest["tokenization"]
    assert reader.manifest["format_version"] == "1.2"
    ids = tmp_path / "ids.npy"
    Tokenized(CorpusReader([docs], text_key="text")).save(ids)
    from_ids = hash_files(TokenFileReader(ids), tmp_path / "ids.ngidx")
    assert from_ids.manifest["tokenization"]["input"] == "tokens"


def _strip_tokenization(index: Path) -> None:
    """Make an index look written by format 1.0, which recorded no tokenization."""
    manifest_path = index / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    del manifest["tokenization"]
    manifest["format_version"] = "1.0"
    manifest_path.write_text(json.dumps(manifest))


def test_indexes_without_a_tokenization_record_still_open_and_verify(texts, tmp_path):
    out = tmp_path / "old.ngidx"
    hash_files(texts / "t0.txt", out, mapping=NgramHashMapping.build(**BYTES))
    _strip_tokenization(out)
    assert len(open_index(out)) > 0
    assert verify_path(out).num_tokens > 0
    inspected = run("inspect", str(out), env=WIDE)
    assert inspected.returncode == 0
    assert b"tokenization  not recorded (written before format 1.1)" in inspected.stdout


@pytest.mark.parametrize(
    ("first", "second", "setting"),
    [
        ({"boundary": "reset"}, {}, "another boundary (`boundary`)"),
        ({"add_eot": True, "eot_token": "|"}, {}, "another `add_eot` (true there, false in this run)"),
        ({"add_eot": True, "eot_token": "|"}, {"add_eot": True, "eot_token": "#"}, "end-of-sequence token"),
        ({"special": "all"}, {}, "special-token rule (`special`)"),
        ({"errors": "replace"}, {}, "`errors`"),
        ({}, {"heads": 3}, "another hash spec"),
    ],
)
def test_resume_refuses_finished_shards_made_with_other_settings(texts, tmp_path, first, second, setting):
    out = f"{tmp_path / 'out'}/"
    pattern = str(texts / "*.txt")
    source, options = grouped(pattern, num_shards=2, shard_index=0, **{**BYTES, **first})
    hash_files(source, out, **options)
    with pytest.raises(UsageError) as refused:
        source, options = grouped(pattern, resume=True, **{**BYTES, **second})
        hash_files(source, out, **options)
    err = str(refused.value)
    assert setting in err and "pass `force=True`" in err and "t0.txt.ngidx" in err
    source, options = grouped(pattern, resume=True, **{**BYTES, **first})
    assert len(hash_files(source, out, **options)) == 3


def test_resume_refuses_a_shard_that_recorded_no_tokenization(texts, tmp_path):
    out = tmp_path / "out"
    pattern = str(texts / "*.txt")
    hash_files(
        pattern,
        f"{out}/",
        mapping=NgramHashMapping.build(**BYTES),
        run=RunOptions(shard_index=0, num_shards=3),
    )
    _strip_tokenization(out / "t0.txt.ngidx")
    with pytest.raises(UsageError, match=r"another tokenization \(not recorded"):
        hash_files(pattern, f"{out}/", mapping=NgramHashMapping.build(**BYTES), run=RunOptions(resume=True))


@pytest.mark.parametrize(
    ("odd", "setting"),
    [
        ({"add_eot": True, "eot_token": "|"}, "another `add_eot`"),
        ({"boundary": "reset"}, "another boundary"),
        ({"special": "all"}, "another special-token rule (`special`)"),
    ],
)
def test_merge_refuses_shards_made_with_other_settings(texts, tmp_path, odd, setting):
    out = tmp_path / "mixed"
    hash_files(texts / "t0.txt", out / "a.ngidx", mapping=NgramHashMapping.build(**BYTES))
    source, options = grouped(texts / "t1.txt", **{**BYTES, **odd})
    hash_files(source, out / "b.ngidx", **options)
    with pytest.raises(NgramToolError) as refused:
        merge_shards(out)
    err = str(refused.value)
    assert refused.value.exit_code == 1 and setting in err and "b.ngidx" in err and "a.ngidx" in err, err


def test_resume_and_merge_name_settings_as_options_on_the_command_line(texts, tmp_path):
    out = tmp_path / "mixed"
    hash_files(texts / "t0.txt", out / "a.ngidx", mapping=NgramHashMapping.build(**BYTES))
    hash_files(
        texts / "t1.txt", out / "b.ngidx", mapping=NgramHashMapping.build(**{**BYTES, "special": "all"})
    )
    merged = run("merge", str(out))
    assert merged.returncode == 1 and b"another special-token rule (--special)" in merged.stderr
    shards = f"{tmp_path / 'shards'}/"
    hash_files(str(texts / "*.txt"), shards, mapping=NgramHashMapping.build(**BYTES), boundary="reset")
    resumed = run(
        "hash", str(texts / "*.txt"), "-o", shards, "--resume", "-t", "bytes", "-k", "2", "--table", "3001"
    )
    err = resumed.stderr.decode()
    assert resumed.returncode == 2 and "another boundary (--boundary)" in err and "pass --force" in err, err


def test_merged_dataset_records_the_shared_tokenization(texts, tmp_path):
    out = tmp_path / "ds"
    hash_files(
        CorpusReader(str(texts / "*.txt"), add_eot=True, eot_token="|"),
        f"{out}/",
        mapping=NgramHashMapping.build(**BYTES),
    )
    dataset = merge_shards(out)
    assert dataset["format_version"] == "1.2"
    assert dataset["tokenization"]["eot"] == {"id": ord("|"), "token": "|", "source": "--eot-token"}
    _strip_tokenization(out / "t2.txt.ngidx")
    with pytest.raises(NgramToolError, match=r"t2\.txt\.ngidx has another tokenization"):
        merge_shards(out)


def test_settings_difference_names_the_first_setting_that_differs():
    base = {
        "tokenizer": {"fingerprint": "a" * 64},
        "vocab": {"fingerprint": "b" * 64},
        "spec": {"fingerprint": "c" * 64},
        "boundary": "none",
        "tokenization": {"special": "all", "add_eot": False},
    }
    assert settings_difference(base, json.loads(json.dumps(base))) is None
    other = {**base, "boundary": "reset", "tokenization": {"special": "none", "add_eot": False}}
    assert settings_difference(base, other).setting == "boundary (`boundary`)"
    other = {**base, "tokenization": {"special": "none", "add_eot": True}}
    differs = settings_difference(base, other)
    assert (differs.setting, differs.ours, differs.theirs) == (
        "special-token rule (`special`)",
        '"all"',
        '"none"',
    )
    other = {**base, "tokenizer": {"fingerprint": "d" * 64}, "boundary": "reset"}
    assert settings_difference(base, other).theirs == "dddddddddddd..."

    def with_eot(source: str) -> dict:
        eot = {"id": 7, "token": "</s>", "source": source}
        return {**base, "tokenization": {**base["tokenization"], "add_eot": True, "eot": eot}}

    assert settings_difference(with_eot("a"), with_eot("b")) is None  # where it was found: not compared
    old = {key: value for key, value in base.items() if key != "tokenization"}
    assert settings_difference(base, old).setting == "tokenization"
    assert settings_difference(old, old) is None
