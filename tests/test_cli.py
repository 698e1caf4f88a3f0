"""The command line through a subprocess: outputs, exit codes and one-line errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import CORPUS

from ngramtool import build_vocab, hash_ngrams, load_tokenizer, open_index


def run(*args: str, stdin: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ngramtool", *args], input=stdin, capture_output=True, cwd=cwd, timeout=120
    )


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Path:
    """The first ~40 KB of the bundled corpus, as two files."""
    folder = tmp_path_factory.mktemp("sample")
    text = CORPUS.read_text(encoding="utf-8")
    (folder / "a.txt").write_text(text[:20000], encoding="utf-8")
    (folder / "b.txt").write_text(text[20000:40000], encoding="utf-8")
    return folder


def assert_one_line_error(result: subprocess.CompletedProcess, code: int, fragment: str) -> None:
    err = result.stderr.decode()
    assert result.returncode == code, err
    assert "Traceback" not in err
    assert fragment in err, err


def test_hash_writes_an_index_whose_rows_equal_the_library(sample, tmp_path):
    out = tmp_path / "idx"
    result = run(
        "hash", str(sample / "a.txt"), str(sample / "b.txt"), "-o", str(out), "--json", "--heads", "4"
    )
    assert result.returncode == 0, result.stderr.decode()
    summary = json.loads(result.stdout)
    index = open_index(out)
    assert summary["num_tokens"] == len(index) > 5000
    assert summary["num_documents"] == 2
    tok = load_tokenizer("cl100k_base")
    expected_tokens = np.concatenate([tok.encode((sample / n).read_text()) for n in ("a.txt", "b.txt")])
    assert np.array_equal(index.tokens, expected_tokens)
    assert index.doc_offsets.tolist() == [0, len(tok.encode((sample / "a.txt").read_text())), len(index)]
    canonical = build_vocab(tok).canonicalize(expected_tokens)
    assert np.array_equal(index.rows, hash_ngrams(canonical, index.spec))
    assert index.spec.heads == 4 and index.spec.vocab_size == 62_330
    assert index.spec.pad_id == build_vocab(tok).lut[100_257]  # <|endoftext|> mapped through the LUT
    manifest = index.manifest
    assert manifest["tokenizer"]["name"] == "cl100k_base"
    assert manifest["spec"]["fingerprint"] == index.spec.fingerprint
    assert manifest["arrays"]["rows"]["shape"] == [len(index), 2, 8]
    import hashlib

    for name, record in manifest["arrays"].items():
        data = np.load(out / record["file"])
        assert hashlib.sha256(data.tobytes()).hexdigest() == record["data_sha256"], name


def test_hash_verbose_says_backend_and_where_the_cpu_time_went(sample, tmp_path):
    result = run("hash", str(sample / "a.txt"), "-o", str(tmp_path / "v.ngidx"), "-v")
    assert result.returncode == 0, result.stderr
    lines = result.stderr.decode().splitlines()
    from ngramtool.backends import choose_backend  # numba when installed, else numpy

    assert lines[0].startswith(f"backend: {choose_backend('auto').name} on cpu (auto)")
    assert re.fullmatch(
        r"cpu [\d.]+ s, [\d.]+ cores busy: tokenize [\d.]+ s, hash [\d.]+ s, write [\d.]+ s, "
        r"sha256 [\d.]+ s, other [\d.]+ s",
        lines[-1],
    )


def test_hash_reset_boundary_matches_library(sample, tmp_path):
    out = tmp_path / "reset"
    assert (
        run(
            "hash", str(sample / "a.txt"), str(sample / "b.txt"), "-o", str(out), "--boundary", "reset", "-q"
        ).returncode
        == 0
    )
    index = open_index(out)
    canonical = build_vocab(load_tokenizer("cl100k_base")).canonicalize(np.asarray(index.tokens))
    expected = hash_ngrams(canonical, index.spec, doc_starts=index.doc_offsets[:-1])
    assert np.array_equal(index.rows, expected)
    assert index.manifest["boundary"] == "reset"


def test_hash_refuses_to_overwrite_without_force(sample, tmp_path):
    out = tmp_path / "idx"
    assert run("hash", str(sample / "a.txt"), "-o", str(out), "-q").returncode == 0
    assert_one_line_error(run("hash", str(sample / "a.txt"), "-o", str(out)), 2, "--force")
    assert run("hash", str(sample / "b.txt"), "-o", str(out), "-q", "--force").returncode == 0
    assert open_index(out).manifest["sources"] == [str(sample / "b.txt")]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary leftovers


def test_hash_from_stdin_and_default_output(sample, tmp_path):
    data = (sample / "a.txt").read_bytes()
    out = tmp_path / "stdin.ngidx"
    assert run("hash", "-", "-o", str(out), "-q", stdin=data).returncode == 0
    copy = tmp_path / "copy.txt"
    copy.write_bytes(data)
    assert run("hash", str(copy), "-q").returncode == 0
    assert np.array_equal(open_index(out).rows, open_index(str(copy) + ".ngidx").rows)


def test_hash_pretokenized_npy(tmp_path):
    ids = np.random.default_rng(0).integers(0, 1000, 5000).astype(np.uint16)
    np.save(tmp_path / "ids.npy", ids)
    out = tmp_path / "ids.ngidx"
    ids_file = str(tmp_path / "ids.npy")
    # --workers sets the hash threads with --tokens too
    result = run("hash", "--tokens", ids_file, "--vocab-size", "1000", "-o", str(out), "--json", "-j", "2")
    assert result.returncode == 0, result.stderr.decode()
    index = open_index(out)
    assert index.spec.vocab_size == 1000 and index.spec.pad_id == 0
    assert np.array_equal(index.rows, hash_ngrams(ids.astype(np.int64), index.spec))


def test_empty_input_gives_an_empty_index(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    out = tmp_path / "empty.ngidx"
    result = run("hash", str(empty), "-o", str(out), "--json")
    assert result.returncode == 0, result.stderr.decode()
    index = open_index(out)
    assert len(index) == 0 and index.rows.shape == (0, 2, 16)
    assert index.doc_offsets.tolist() == [0, 0]


@pytest.mark.parametrize(
    "args, code, fragment",
    [
        (["hash", "missing.txt"], 2, "input file not found: missing.txt"),
        (["hash", "."], 2, "is a directory"),
        (["hash", "x.txt", "--heads", "0"], 2, "heads (--heads) must be at least 1"),
        (["hash", "x.txt", "--max-ngram", "1"], 2, "max_ngram (--max-ngram) must be at least 2"),
        (["hash", "x.txt", "--table", "1"], 2, "table size (--table) must be at least 2"),
        (["hash", "x.txt", "--tokenizer", "no_such_encoding"], 2, "unknown tokenizer"),
        (["hash", "x.txt", "--table", "12,abc"], 2, "comma-separated integers"),
        (["hash", "x.txt", "--boundary", "sometimes"], 2, "--boundary"),
        (["hash"], 2, "give text INPUT files"),
        (["hash", "x.txt", "--heads", "many"], 2, "Invalid value"),
    ],
)
def test_bad_input_is_a_clear_error(tmp_path, args, code, fragment):
    (tmp_path / "x.txt").write_text("some text")
    assert_one_line_error(run(*args, cwd=tmp_path), code, fragment)


def test_invalid_utf8_names_the_offset_and_replace_carries_on(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"abc\xffdef")
    assert_one_line_error(run("hash", str(bad), "-o", str(tmp_path / "o")), 1, "byte offset 3")
    assert not (tmp_path / "o").exists()
    assert run("hash", str(bad), "-o", str(tmp_path / "o"), "--errors", "replace", "-q").returncode == 0


def test_tokenize_prints_saves_and_shows(tmp_path):
    tok = load_tokenizer("cl100k_base")
    text = "Hello, World\nsecond line"
    result = run("tokenize", "-", stdin=text.encode())
    assert result.returncode == 0
    assert [int(x) for x in result.stdout.split()] == tok.encode(text).tolist()
    out = tmp_path / "ids.npy"
    assert run("tokenize", "-", "--canonical", "-o", str(out), "-q", stdin=text.encode()).returncode == 0
    assert np.load(out).tolist() == build_vocab(tok).canonicalize(tok.encode(text)).tolist()
    shown = run("tokenize", "-", "--json", stdin=b"Hello hello")
    records = json.loads(shown.stdout)["tokens"]
    assert records[0]["key"] == records[1]["key"] == "hello"
    assert records[0]["canonical_id"] == records[1]["canonical_id"]
    assert "normalized key" in run("tokenize", "-", "--show", stdin=b"Hi there").stdout.decode()


def test_explain_json_agrees_with_hash(tmp_path):
    result = run("explain", "the horse", "--json", "--heads", "2")
    assert result.returncode == 0, result.stderr.decode()
    report = json.loads(result.stdout)
    tok = load_tokenizer("cl100k_base")
    canonical = build_vocab(tok).canonicalize(tok.encode("the horse"))
    from ngramtool import HashSpec

    spec = HashSpec.from_dict(report["spec"])
    rows = hash_ngrams(canonical, spec)
    for record in report["tokens"]:
        for gram in record["ngrams"]:
            li = spec.layer_ids.index(gram["layer"])
            for head in gram["heads"]:
                col = spec.column(gram["order"], head["head"])
                assert head["row"] == rows[record["position"], li, col]
                assert head["hash"] + head["offset"] == head["row"]
                assert gram["mix"] % head["prime"] == head["hash"]
    assert report["tokens"][1]["ngrams"][0]["window"] == canonical[:2].tolist()
    table = run("explain", "the horse", "--layer", "15").stdout.decode()
    assert "= row" in table and "token 1" in table


def test_vocab_reports_and_exports(tmp_path):
    out = tmp_path / "lut.npy"
    result = run("vocab", "--json", "--top", "3", "--export", str(out))
    assert result.returncode == 0, result.stderr.decode()
    report = json.loads(result.stdout)
    assert report["vocab"]["size"] == 62_330 and report["assigned_ids"] == 100_261
    assert len(report["largest_groups"]) == 3
    lut = np.load(out)
    assert lut.shape == (100_277,) and int(lut.max()) + 1 == 62_330
    assert report["largest_groups"][0]["size"] == int(np.bincount(lut[lut >= 0]).max())
    assert "62,330" in run("vocab").stdout.decode()


def test_help_has_examples_for_every_command():
    for command in ("hash", "tokenize", "explain", "vocab"):
        result = run(command, "--help")
        assert result.returncode == 0
        assert "Examples" in result.stdout.decode(), command


def test_outputs_follow_the_umask_not_private_temp_modes(sample, tmp_path):
    out = tmp_path / "perm.ngidx"
    assert run("hash", str(sample / "a.txt"), "-o", str(out), "-q").returncode == 0
    lut = tmp_path / "lut.npy"
    assert run("vocab", "--export", str(lut), "--json").returncode == 0
    import os

    mask = os.umask(0)
    os.umask(mask)
    assert out.stat().st_mode & 0o777 == 0o777 & ~mask
    assert lut.stat().st_mode & 0o777 == 0o666 & ~mask


def test_explain_rejects_a_layer_outside_the_spec():
    result = run("explain", "x", "--layer", "99")
    assert_one_line_error(result, 2, "--layer 99 is not one of the Engram layers")


def test_explain_refuses_text_that_is_not_utf8():
    result = subprocess.run(
        [sys.executable, "-m", "ngramtool", "explain", b"caf\xe9"], capture_output=True, timeout=120
    )
    assert_one_line_error(result, 2, "TEXT is not valid UTF-8")


def test_tokenize_prints_one_line_per_document_even_empty_leading_ones(tmp_path):
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "one.txt").write_text("a")
    separated = run("tokenize", "-", "--doc-sep", "@@@", "--tokenizer", "bytes", stdin=b"@@@a@@@b")
    assert separated.stdout == b"\n97\n98\n"
    files = run("tokenize", str(tmp_path / "empty.txt"), str(tmp_path / "one.txt"), "--tokenizer", "bytes")
    assert files.stdout == b"\n97\n"


def test_tokenize_warns_about_unsafe_cuts(tmp_path):
    from ngramtool.textio import MAX_PIECE_CHARS

    (tmp_path / "run.txt").write_text("a" * (MAX_PIECE_CHARS + 10))
    result = run(
        "tokenize", str(tmp_path / "run.txt"), "-o", str(tmp_path / "ids.npy"), "--tokenizer", "bytes"
    )
    assert result.returncode == 0 and b"warning: 1 text cut fell inside very long runs" in result.stderr


def test_tokenize_json_says_when_it_is_truncated():
    text = b"one two three four five"
    report = json.loads(run("tokenize", "-", "--json", "--limit", "3", stdin=text).stdout)
    assert report["truncated"] is True and len(report["tokens"]) == 3
    report = json.loads(run("tokenize", "-", "--json", "--limit", "50", stdin=b"one two").stdout)
    assert report["truncated"] is False and len(report["tokens"]) == 2


def test_vocab_no_compress_reports_the_identity():
    result = run("vocab", "--no-compress", "--json")
    report = json.loads(result.stdout)
    assert report["vocab"]["compressed"] is False and report["largest_groups"] == []
    assert "identity map" in run("vocab", "--no-compress").stdout.decode()


def test_spec_file_refuses_explicit_spec_options(tmp_path):
    from ngramtool import HashSpec

    spec_file = tmp_path / "s.json"
    spec_file.write_text(HashSpec(heads=4, vocab_size=62_330, pad_id=0).to_json())
    (tmp_path / "x.txt").write_text("hello")
    result = run(
        "hash", str(tmp_path / "x.txt"), "--spec", str(spec_file), "--heads", "2", "-o", str(tmp_path / "o")
    )
    assert_one_line_error(result, 2, "--spec gives the whole hash spec: drop --heads")


def test_outputs_never_clobber_inputs_or_existing_files(tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("hello there")
    assert_one_line_error(run("tokenize", str(text), "-o", str(text)), 2, "is also an input")
    assert text.read_text() == "hello there"
    lut = tmp_path / "lut.npy"
    lut.write_text("keep")
    assert_one_line_error(run("vocab", "--export", str(lut)), 2, "--force")
    assert lut.read_text() == "keep"
    keep = tmp_path / "precious"
    keep.mkdir()
    (keep / "thesis.txt").write_text("important")
    index = tmp_path / "i.ngidx"
    assert run("hash", str(text), "-o", str(index), "-q").returncode == 0
    assert_one_line_error(run("export", str(index), "-o", str(keep), "--force"), 2, "not a per-layer export")
    assert (keep / "thesis.txt").read_text() == "important"
    assert_one_line_error(run("export", str(index), "-o", str(index), "--force"), 2, "its own index")


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["hash", "x.txt", "--token-format", "npy"], "--token-format applies only with --tokens FILE"),
        (["hash", "x.txt", "--ray-address", "auto"], "--ray-address applies only with --engine ray"),
        (["hash", "x.txt", "--save-format", "llmc"], "--save-format applies only with --save-tokens FILE"),
        (
            ["hash", "--tokens", "ids.npy", "--json-key", "text"],
            "--json-key applies only to text INPUT files",
        ),
        (["hash", "--tokens", "ids.npy", "--add-eot", "--doc-sep", "x"], "--doc-sep, --add-eot apply only"),
        (["hash", "--tokens", "ids.npy", "--vocab-size", "9", "--no-compress"], "--no-compress applies only"),
        (["hash", "x.txt", "-o", "out/", "--engine", "ray", "--workers", "2"], "--workers applies only"),
        (["tokenize", "x.txt", "--limit", "5"], "--limit applies only with --show or --json"),
        (["tokenize", "x.txt", "--force"], "--force applies only with -o FILE"),
        (["tokenize", "x.txt", "--show", "--canonical"], "--canonical applies only to printed or saved ids"),
        (["vocab", "--force"], "--force applies only with --export FILE"),
        (["inspect", "-", "--token-format", "npy"], "--token-format applies only to a token file"),
    ],
)
def test_options_that_would_do_nothing_are_usage_errors(tmp_path, args, fragment):
    (tmp_path / "x.txt").write_text("some text")
    np.save(tmp_path / "ids.npy", np.arange(5, dtype=np.uint32))
    result = run(*args, cwd=tmp_path)
    assert_one_line_error(result, 2, fragment)
    assert len(result.stderr.decode().strip().splitlines()) == 1
    assert "drop " in result.stderr.decode()  # the fix
    assert not (tmp_path / "x.txt.ngidx").exists() and not (tmp_path / "out").exists()


def test_a_repeated_input_is_refused(tmp_path):
    data = b"read me once"
    result = run("hash", "-", "-", "-o", str(tmp_path / "o"), stdin=data)
    assert_one_line_error(result, 2, "input stdin (-) is given twice")
    (tmp_path / "a.txt").write_bytes(data)
    result = run("hash", "a.txt", "./a.txt", "-o", "o", cwd=tmp_path)
    assert_one_line_error(result, 2, "input ./a.txt is given twice (also as a.txt)")
    assert_one_line_error(run("tokenize", "a.txt", "a.txt", cwd=tmp_path), 2, "input a.txt is given twice")
    assert not (tmp_path / "o").exists()


def test_explain_shows_the_first_tokens_of_a_long_text():
    text = "word " * 99 + "end"  # 100 tokens
    args = ("explain", text, "--heads", "1", "--layers", "1")
    result = run(*args)
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().count("\ntoken ") == 64 and "token 63:" in result.stdout.decode()
    assert "36 tokens of 100 left out" in result.stderr.decode() and "--limit 0" in result.stderr.decode()
    report = json.loads(run(*args, "--json", "--limit", "5").stdout)
    assert report["truncated"] is True and report["num_tokens"] == 100 and len(report["tokens"]) == 5
    everything = run(*args, "--json", "--limit", "0")
    report = json.loads(everything.stdout)
    assert report["truncated"] is False and len(report["tokens"]) == 100 and everything.stderr == b""


def test_hash_says_when_the_pad_id_was_defaulted(tmp_path):
    np.save(tmp_path / "ids.npy", np.arange(50, dtype=np.uint32))
    args = ("hash", "--tokens", str(tmp_path / "ids.npy"), "--vocab-size", "100", "--force")
    result = run(*args, "-o", str(tmp_path / "a"))
    assert result.returncode == 0, result.stderr.decode()
    assert (
        "canonical pad id is 0 by default" in result.stderr.decode() and "--pad-id" in result.stderr.decode()
    )
    chosen = run(*args, "-o", str(tmp_path / "b"), "--pad-id", "7")
    assert chosen.returncode == 0 and b"pad id" not in chosen.stderr
    assert open_index(tmp_path / "b").spec.pad_id == 7
    named = run("hash", "-", "-o", str(tmp_path / "c"), stdin=b"a tokenizer names its pad")
    assert named.returncode == 0 and b"pad id" not in named.stderr


def test_bench_has_no_short_option_for_tokens():
    result = run("bench", "-n", "1000")
    assert result.returncode == 2 and b"No such option: -n" in result.stderr
