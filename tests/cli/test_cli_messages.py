"""What a new user reads: tokenizer names as people type them, outputs the tool never replaces,
summaries in agreement with their counts, and a family's moduli named as what they are."""

from __future__ import annotations

import gzip
import shutil

import pytest
from conftest import DATA, assert_one_line_error, run

from ngramtool.tokenizers import load_tokenizer
from ngramtool.util.errors import UsageError


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("cl100k_bas", "unknown tokenizer 'cl100k_bas': did you mean 'cl100k_base'?"),
        ("CL100K_BASE", "did you mean 'cl100k_base'?"),
        ("deepseek-ai/DeepSeek-V3", "looks like an HF Hub id, and ngramtool never downloads: pass the path"),
        (
            str(DATA / "tokenizers" / "qwen-style" / "tokenizer_config.json"),
            "pass the tokenizer.json beside it",
        ),
    ],
)
def test_tokenizer_names_as_people_type_them(name, fragment):
    assert_one_line_error(run("tokenize", "-t", name, stdin=b"hello"), 2, fragment)


def test_an_openai_model_name_is_its_encoding():
    assert (
        load_tokenizer("gpt-4").encode("hello world").tolist()
        == load_tokenizer("cl100k_base").encode("hello world").tolist()
    )
    assert run("tokenize", "-t", "gpt-4", stdin=b"hello world").stdout.split() == [b"15339", b"1917"]


def test_a_hub_id_uses_the_tokenizer_json_in_the_local_hf_cache(tmp_path, monkeypatch):
    snapshot = tmp_path / "hub" / "models--org--tiny" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    shutil.copy(DATA / "tokenizers" / "qwen-style" / "tokenizer.json", snapshot / "tokenizer.json")
    (tmp_path / "hub" / "models--org--tiny" / "refs").mkdir()
    (tmp_path / "hub" / "models--org--tiny" / "refs" / "main").write_text("abc123")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    expected = load_tokenizer(str(snapshot / "tokenizer.json")).encode("hello world").tolist()
    assert load_tokenizer("org/tiny").encode("hello world").tolist() == expected
    with pytest.raises(UsageError, match="never downloads"):
        load_tokenizer("org/absent")


def test_a_file_that_is_not_an_index_is_never_replaced(tmp_path):
    (tmp_path / "x.txt").write_text("some text")
    for args in (["-o", "x.txt"], ["-o", "x.txt", "--force"]):
        result = run("hash", "x.txt", *args, cwd=tmp_path)
        assert_one_line_error(
            result, 2, "x.txt is a file that is not an ngramtool index, and ngramtool never"
        )
        assert "--force" not in result.stderr.decode()
    assert (tmp_path / "x.txt").read_text() == "some text"


def test_summaries_agree_with_their_counts(tmp_path):
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "two.txt").write_text("a few words")
    empty = run("hash", "empty.txt", "-o", "e.ngidx", cwd=tmp_path).stderr.decode()
    assert "wrote e.ngidx: the input holds no tokens (1 empty document), rows int32 [0, 2, 16]" in empty
    small = run("hash", "two.txt", "empty.txt", "-o", "s.ngidx", cwd=tmp_path).stderr.decode()
    assert "wrote s.ngidx: 3 tokens, 2 documents, rows" in small
    assert "tok/s" not in small and "tok/s" not in empty  # no rate of a few tokens' start-up
    saved = run("tokenize", "empty.txt", "-o", "e.npy", cwd=tmp_path).stderr.decode()
    assert "wrote no ids (the input holds no tokens) to e.npy" in saved


def test_explain_names_moduli_that_are_not_prime():
    tutorial = run("explain", "the cat", "--preset", "tutorial").stdout.decode()
    assert "modulus" in tutorial and "prime" not in tutorial
    engram = run("explain", "the cat", "--heads", "1").stdout.decode()
    assert "prime" in engram and "modulus" not in engram


def test_a_gzipped_tokenizer_config_is_refused_too(tmp_path):
    config = tmp_path / "tokenizer_config.json.gz"
    config.write_bytes(gzip.compress(b"{}"))
    with pytest.raises(UsageError, match="settings, not its vocabulary"):
        load_tokenizer(str(config))
