"""``ngramtool spec export|check`` through a subprocess: the files written, the report, exit codes
and one-line errors for bad input."""

from __future__ import annotations

import json

import gguf
import numpy as np
from conftest import assert_one_line_error, run

SMALL = ("--heads", "2", "--table", "1000", "--layers", "1,2", "-t", "cl100k_base")


def test_export_then_check_a_gguf_and_find_one_changed_prime(tmp_path):
    path = tmp_path / "engram.gguf"
    result = run("spec", "export", *SMALL, "-o", path)
    err = result.stderr.decode()
    assert result.returncode == 0, err
    assert "multipliers UINT64 array" in err and "token map of 100,277 raw ids" in err
    ok = run("spec", "check", *SMALL, path)
    assert ok.returncode == 0 and "ok: every constant found matches" in ok.stdout.decode()
    reader = gguf.GGUFReader(path, "r+")
    field = reader.fields["deepseek41.engram.primes"]
    field.parts[field.data[5]][0] = 1051
    reader.data.flush()
    del reader
    changed = run("spec", "check", *SMALL, path)
    out = changed.stdout.decode()
    assert changed.returncode == 1, changed.stderr.decode()
    assert (
        "primes                 DIFFERS at index 5 (layer 2, order 2, head 1): expected 1033, found 1051"
        in out
    )
    assert "mismatch: primes differs; 1 rule failed" in out
    report = json.loads(run("spec", "check", *SMALL, path, "--json").stdout)
    assert not report["ok"]
    primes = next(c for c in report["constants"] if c["name"] == "primes")
    assert (primes["index"], primes["expected"], primes["found"]) == (5, 1033, 1051)


def test_export_needs_the_tokenizer_and_keeps_existing_files(tmp_path):
    assert_one_line_error(
        run("spec", "export", "--preset", "deepseek-v4.1-flash", "-o", tmp_path / "e.json"),
        2,
        "--tokenizer/-t",
    )
    existing = tmp_path / "e.json"
    existing.write_text("mine")
    assert_one_line_error(run("spec", "export", *SMALL, "-o", existing), 2, "pass --force")
    assert existing.read_text() == "mine"


def test_export_json_to_stdout_and_check_it(tmp_path):
    result = run("spec", "export", *SMALL, "-o", "-", "-q")
    record = json.loads(result.stdout)
    assert record["format"] == "ngramtool.engram-constants" and len(record["token_map"]) == 100277
    path = tmp_path / "e.json"
    path.write_bytes(result.stdout)
    assert run("spec", "check", *SMALL, path).returncode == 0
    record["token_map"] = record["token_map"][:10]
    path.write_text(json.dumps(record))
    assert_one_line_error(
        run("spec", "check", *SMALL, path), 1, "has 10 entries but the tokenizer has 100,277"
    )


def test_bad_targets_and_a_failed_into_give_one_line(tmp_path):
    notes = tmp_path / "notes.gguf"
    notes.write_text("not a model")
    assert_one_line_error(run("spec", "check", *SMALL, notes), 1, "is not a GGUF file")
    out = tmp_path / "out.gguf"
    assert_one_line_error(run("spec", "export", *SMALL, "--into", notes, "-o", out), 1, "is not a GGUF file")
    assert not out.exists()
    model = tmp_path / "model.gguf"
    writer = gguf.GGUFWriter(str(model), "deepseek41")
    writer.add_tensor("token_embd.weight", np.ones((2, 4), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    assert_one_line_error(run("spec", "check", *SMALL, model), 1, "holds no engram constants")
    plain = tmp_path / "plain.safetensors"
    plain.write_bytes(b"\x02\x00\x00\x00\x00\x00\x00\x00{}")
    assert_one_line_error(run("spec", "check", *SMALL, plain), 1, "holds none of the tensors")


def test_the_released_preset_refuses_a_tokenizer_of_another_size(tmp_path, deepseek_tokenizer_path):
    result = run(
        "spec",
        "export",
        "--preset",
        "deepseek-v4.1-flash",
        "-t",
        deepseek_tokenizer_path,
        "-o",
        tmp_path / "e.npz",
    )
    fragment = "--preset deepseek-v4.1-flash is the released model, whose tokenizer has V'=99,092, but"
    assert_one_line_error(result, 2, fragment)
    assert "tokenizer deepseek-v3.tokenizer.json has V'=98,627" in result.stderr.decode()
    assert not (tmp_path / "e.npz").exists()
    vectors = run(
        "spec", "vectors", "a b c", "--preset", "deepseek-v4.1-flash", "-t", "cl100k_base", "-o", "-"
    )
    assert_one_line_error(vectors, 2, "V'=62,330")
    released = run("spec", "show", "--preset", "deepseek-v4.1-flash", "--json")  # V'=99,092 itself
    assert released.returncode == 0


def test_vectors_are_written_for_a_text_and_bad_options_refused(tmp_path):
    path = tmp_path / "vectors.json"
    text = "one two three four five six seven eight"
    result = run("spec", "vectors", text, *SMALL, "--masked-span", "2:4", "--prefill", "3", "-o", path)
    assert result.returncode == 0, result.stderr.decode()
    vectors = json.loads(path.read_text())
    assert vectors["format"] == "ngramtool.engram-vectors" and vectors["masked_span"] == [2, 4]
    assert [case["name"] for case in vectors["cases"]] == ["unmasked", "barrier", "minus-one"]
    assert vectors["serving"]["steps"][0] == {
        **vectors["serving"]["steps"][0],
        "op": "prefill",
        "positions": [0, 3],
    }
    assert_one_line_error(run("spec", "vectors", text, *SMALL, "-o", path), 2, "already exists")
    assert_one_line_error(
        run("spec", "vectors", text, "--heads", "2", "-o", tmp_path / "x.json"), 2, "--tokenizer"
    )
    bad_span = run("spec", "vectors", text, *SMALL, "--masked-span", "5", "-o", tmp_path / "x.json")
    assert_one_line_error(bad_span, 2, "--masked-span must be START:END")
    beyond = run("spec", "vectors", text, *SMALL, "--masked-span", "0:99", "-o", tmp_path / "x.json")
    assert_one_line_error(beyond, 2, "must lie within the text's 8 tokens")
    assert not (tmp_path / "x.json").exists()
