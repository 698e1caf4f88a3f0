"""Every setting that changes tokens or rows is recorded in the manifest (``tokenization``) and
compared, by one function, when a sharded run resumes and when shards are merged."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA

from ngramtool import open_index
from ngramtool.formats.settings import settings_difference
from ngramtool.formats.stream import read_stream

BYTES = ["--tokenizer", "bytes", "--heads", "2", "--table", "3001"]
QWEN = str(DATA / "tokenizers" / "qwen-style" / "tokenizer.json")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ngramtool", *args], capture_output=True, timeout=300)


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
    args = ["--json-key", "text", "--tokenizer", QWEN, "--add-eot", "--heads", "2", "-q"]
    assert run("hash", str(docs), "-o", str(out), *args).returncode == 0
    manifest = open_index(out).manifest
    assert manifest["format_version"] == "1.1"
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
    }
    shown = run("inspect", str(out)).stdout.decode()
    assert f"special tokens: all; --add-eot '<|im_end|>' (id {im_end}); --json-key 'text'" in shown
    stream = run("hash", str(docs), "-o", "-", *args)
    assert stream.returncode == 0, stream.stderr.decode()
    reader = read_stream(io.BytesIO(stream.stdout))
    assert reader.manifest["tokenization"] == manifest["tokenization"]
    assert reader.manifest["format_version"] == "1.1"
    ids = tmp_path / "ids.npy"
    assert run("tokenize", str(docs), "--json-key", "text", "-o", str(ids), "-q").returncode == 0
    from_ids = tmp_path / "ids.ngidx"
    assert run("hash", "--tokens", str(ids), "-o", str(from_ids), "-q").returncode == 0
    assert open_index(from_ids).manifest["tokenization"]["input"] == "tokens"


def _strip_tokenization(index: Path) -> None:
    """Make an index look written by format 1.0, which recorded no tokenization."""
    manifest_path = index / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    del manifest["tokenization"]
    manifest["format_version"] = "1.0"
    manifest_path.write_text(json.dumps(manifest))


def test_indexes_without_a_tokenization_record_still_open_and_verify(texts, tmp_path):
    out = tmp_path / "old.ngidx"
    assert run("hash", str(texts / "t0.txt"), "-o", str(out), "-q", *BYTES).returncode == 0
    _strip_tokenization(out)
    assert len(open_index(out)) > 0
    assert run("verify", str(out), "-q").returncode == 0
    inspected = run("inspect", str(out))
    assert inspected.returncode == 0
    assert b"tokenization  not recorded (written before format 1.1)" in inspected.stdout


@pytest.mark.parametrize(
    ("first", "second", "setting"),
    [
        (["--boundary", "reset"], [], "another boundary (--boundary)"),
        (["--add-eot", "--eot-token", "|"], [], "another --add-eot (true there, false in this run)"),
        (["--add-eot", "--eot-token", "|"], ["--add-eot", "--eot-token", "#"], "end-of-sequence token"),
        (["--special", "all"], [], "special-token rule (--special)"),
        (["--errors", "replace"], [], "--errors"),
        ([], ["--heads", "3"], "another hash spec"),
    ],
)
def test_resume_refuses_finished_shards_made_with_other_settings(texts, tmp_path, first, second, setting):
    out = f"{tmp_path / 'out'}/"
    pattern = str(texts / "*.txt")
    made = run("hash", pattern, "-o", out, "--num-shards", "2", "--shard-index", "0", "-q", *BYTES, *first)
    assert made.returncode == 0, made.stderr.decode()
    resumed = run("hash", pattern, "-o", out, "--resume", "-q", *BYTES, *second)
    err = resumed.stderr.decode()
    assert resumed.returncode == 2, err
    assert setting in err and "pass --force" in err and "t0.txt.ngidx" in err
    assert run("hash", pattern, "-o", out, "--resume", "-q", *BYTES, *first).returncode == 0


def test_resume_refuses_a_shard_that_recorded_no_tokenization(texts, tmp_path):
    out = tmp_path / "out"
    pattern = str(texts / "*.txt")
    assert (
        run(
            "hash", pattern, "-o", f"{out}/", "--num-shards", "3", "--shard-index", "0", "-q", *BYTES
        ).returncode
        == 0
    )
    _strip_tokenization(out / "t0.txt.ngidx")
    resumed = run("hash", pattern, "-o", f"{out}/", "--resume", "-q", *BYTES)
    assert resumed.returncode == 2 and b"another tokenization (not recorded" in resumed.stderr


@pytest.mark.parametrize(
    ("odd", "setting"),
    [
        (["--add-eot", "--eot-token", "|"], "another --add-eot"),
        (["--boundary", "reset"], "another boundary"),
        (["--special", "all"], "another special-token rule (--special)"),
    ],
)
def test_merge_refuses_shards_made_with_other_settings(texts, tmp_path, odd, setting):
    out = tmp_path / "mixed"
    assert run("hash", str(texts / "t0.txt"), "-o", str(out / "a.ngidx"), "-q", *BYTES).returncode == 0
    assert run("hash", str(texts / "t1.txt"), "-o", str(out / "b.ngidx"), "-q", *BYTES, *odd).returncode == 0
    merged = run("merge", str(out))
    err = merged.stderr.decode()
    assert merged.returncode == 1 and setting in err and "b.ngidx" in err and "a.ngidx" in err, err


def test_merged_dataset_records_the_shared_tokenization(texts, tmp_path):
    out = tmp_path / "ds"
    args = ["-q", *BYTES, "--add-eot", "--eot-token", "|"]
    assert run("hash", str(texts / "*.txt"), "-o", f"{out}/", *args).returncode == 0
    assert run("merge", str(out), "-q").returncode == 0
    dataset = json.loads((out / "dataset.json").read_text())
    assert dataset["format_version"] == "1.1"
    assert dataset["tokenization"]["eot"] == {"id": ord("|"), "token": "|", "source": "--eot-token"}
    _strip_tokenization(out / "t2.txt.ngidx")
    refused = run("merge", str(out))
    assert refused.returncode == 1 and b"t2.txt.ngidx has another tokenization" in refused.stderr


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
    assert settings_difference(base, other).setting == "boundary (--boundary)"
    other = {**base, "tokenization": {"special": "none", "add_eot": True}}
    differs = settings_difference(base, other)
    assert (differs.setting, differs.ours, differs.theirs) == (
        "special-token rule (--special)",
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
