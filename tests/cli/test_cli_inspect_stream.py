"""``ngramtool inspect`` of what every index-like path holds: a pipe stream (a file, stdin), an
index with stored rows, a tokens-only index and a merged dataset, as a table and as ``--json``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import CORPUS, NGRAMTOOL, SPEC, hash_corpus_shards, run

HASH_ARGS = ("--tokenizer", SPEC["tokenizer"], "--heads", "2", "--table", "3001", "-q")
TEXT_CHARS = 20_000


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A stream file, an index, a tokens-only index (all of one text) and a merged dataset."""
    folder = tmp_path_factory.mktemp("inspect")
    text = folder / "text.txt"
    text.write_text(CORPUS.read_text(encoding="utf-8")[:TEXT_CHARS], encoding="utf-8")
    paths = {name: folder / name for name in ("c.stream", "c.ngidx", "lazy.ngidx")}
    with paths["c.stream"].open("wb") as out:
        subprocess.run([*NGRAMTOOL, "hash", text, "-o", "-", *HASH_ARGS], stdout=out, check=True)
    for name, rows in (("c.ngidx", "stored"), ("lazy.ngidx", "lazy")):
        done = run("hash", text, "-o", paths[name], "--rows", rows, *HASH_ARGS)
        assert done.returncode == 0, done.stderr.decode()
    out = hash_corpus_shards(folder, 2, 4000)
    merged = run("merge", out)
    assert merged.returncode == 0, merged.stderr.decode()
    return {**paths, "dataset": out}


def _inspect(*args: object, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    result = run("inspect", *args, stdin=stdin, env={"COLUMNS": "120"})
    assert result.returncode == 0, result.stderr.decode()
    assert not result.stderr, result.stderr.decode()
    return result


@pytest.mark.parametrize("source", ["file", "stdin"])
def test_a_stream_shows_what_it_holds(made, source):
    data = made["c.stream"].read_bytes()
    args = ["-"] if source == "stdin" else [made["c.stream"]]
    shown = _inspect(*args, "--rows", "2", stdin=data if source == "stdin" else None).stdout.decode()
    index = json.loads(_inspect(made["c.ngidx"], "--json").stdout)
    assert shown.startswith("stream ")
    assert f"{index['num_tokens']:,} tokens in 1 document" in shown
    assert "2 orders x 2 heads = 4 tables per layer" in shown and "tokenizer     bytes" in shown
    assert f"int32 [{index['num_tokens']}, 2, 4], boundary none\n" in shown  # its rows are stored
    assert "chunk CRCs, trailer counts and xxh3-128 checked" in shown
    assert "first 2 tokens" in shown


@pytest.mark.parametrize("source", ["file", "stdin"])
def test_a_streams_json_matches_the_index_of_the_same_text(made, source):
    data = made["c.stream"].read_bytes()
    args = ["-"] if source == "stdin" else [made["c.stream"]]
    report = json.loads(_inspect(*args, "--json", stdin=data if source == "stdin" else None).stdout)
    index = json.loads(_inspect(made["c.ngidx"], "--json").stdout)
    assert report["kind"] == "stream" and report["format"] == "ngramtool-stream"
    assert report["rows_storage"] == "stored" and report["stream"] == {"chunks": 1, "checksum": "xxh3-128"}
    for key in ("num_tokens", "num_documents", "tokenizer", "vocab", "spec", "boundary", "first"):
        assert report[key] == index[key], key


@pytest.mark.parametrize(
    ("name", "kind", "rows"),
    [
        ("c.ngidx", "index", ", boundary none\n"),
        ("lazy.ngidx", "index", "computed from the tokens when read (tokens-only)"),
        ("dataset", "dataset", ", boundary none\n"),
    ],
)
def test_indexes_and_datasets_still_show(made, name, kind, rows):
    shown = _inspect(made[name], "--rows", "1").stdout.decode()
    assert shown.startswith(kind) and rows in shown and "first 1 token" in shown
    assert "stream " not in shown
    report = json.loads(_inspect(made[name], "--json").stdout)
    assert report["kind"] == kind and "stream" not in report
    assert report["rows_storage"] == ("lazy" if name == "lazy.ngidx" else "stored")
