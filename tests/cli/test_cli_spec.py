"""``ngramtool spec show|save|lint`` through a subprocess: saved files, shown constants, findings
and exit codes, and the options a spec file or an index overrides."""

from __future__ import annotations

import json

from conftest import assert_one_line_error, run, run_json

from ngramtool import HashSpec


def test_spec_save_show_and_lint(files, tmp_path):
    saved = tmp_path / "small.json"
    options = ("--vocab-size", "1000", "--heads", "2", "--table", "5003", "--layers", "7", "--max-ngram", "2")
    assert run("spec", "save", saved, *options, "-q").returncode == 0
    expected = HashSpec(max_ngram=2, heads=2, layer_ids=(7,), table_sizes=(5003,), pad_id=0, vocab_size=1000)
    assert HashSpec.from_json(saved.read_text()) == expected
    shown = run_json("spec", "show", "--spec", saved)
    assert shown["fingerprint"] == expected.fingerprint
    assert shown["derived"]["primes"] == [[[5003, 5009]]]  # the two smallest primes >= 5003
    assert [int(m) % 2 for m in shown["derived"]["multipliers"][0]] == [1, 1]
    lint = run("spec", "lint", "--spec", saved, "--json")
    assert lint.returncode == 1  # 5003 lies 3 rows from 5 x V' = 5000
    assert [f["code"] for f in json.loads(lint.stdout)["findings"]] == ["near-vocab-multiple"]
    clean = tmp_path / "shown.json"
    clean.write_bytes(run("spec", "show", "--preset", "engram-27b", "--json").stdout)
    assert run("spec", "lint", clean).returncode == 0
    for target in (files["index"], files["index"] / "manifest.json"):  # tables of 101 rows, V'=256
        findings = json.loads(run("spec", "lint", target, "--json").stdout)["findings"]
        assert [f["code"] for f in findings] == ["table-below-vocab"], target
    assert run("spec", "lint", "--preset", "tutorial").returncode == 0


def test_spec_commands_refuse_options_that_spec_files_override(tmp_path):
    saved = tmp_path / "s.json"
    assert run("spec", "save", saved, "--heads", "2", "--tokenizer", "bytes", "-q").returncode == 0
    for args, fragment in [
        (("spec", "save", tmp_path / "o.json", "--spec", saved, "--heads", "4"), "drop --heads"),
        (("spec", "lint", "--spec", saved, "--seed", "3"), "drop --seed"),
        (("spec", "show", "--spec", saved, "--preset", "tutorial"), "drop --preset"),
        (("spec", "show", "--spec", saved, "--no-compress"), "--no-compress applies only with --tokenizer"),
    ]:
        result = run(*args)
        err = result.stderr.decode()
        assert result.returncode == 2 and fragment in err and "Traceback" not in err, (args, err)
    assert not (tmp_path / "o.json").exists()
    assert run_json("spec", "show", "--spec", saved)["heads"] == 2


def test_spec_show_holds_the_v41_preset_to_its_declared_rows():
    shown = run_json("spec", "show", "--preset", "deepseek-v4.1-flash")
    assert shown["declared_rows"] == [384006168, 384016682] and shown["declared_rows_match"] is True
    assert [int(m) for m in shown["derived"]["multipliers"][0]] == [
        76632096046245,
        4839876093313,
        35959672319349,
        73987337458391,
    ]
    other = run("spec", "show", "--preset", "deepseek-v4.1-flash", "--table", "16000100")
    assert other.returncode == 0
    assert (
        "layer 1 derives 384,007,824 rows but deepseek-v4.1-flash's checkpoint declares"
        in other.stdout.decode()
    )


def test_spec_show_sizes_the_tables_in_any_row_encoding():
    """``--encoding`` (with the preset's dim) and ``--row-bytes``: every layer's rows times the bytes
    of a row worked out by hand, plus the encoding's per-tensor scale once per layer's table."""
    shown = run_json("spec", "show", "--preset", "engram-27b", "--encoding", "fp8-e8m0")
    rows = [sum(sum(order) for order in layer) for layer in shown["derived"]["primes"]]
    # 80 e4m3 values and one e8m0 scale per 32 values (three, the last block partial): 83 B
    assert shown["table_bytes"] == {
        "encoding": "fp8-e8m0",
        "dim": 80,
        "row_bytes": 83,
        "layer_bytes": [r * 83 for r in rows],
        "total_bytes": sum(rows) * 83,
    }
    options = ("--heads", "2", "--table", "1000", "--layers", "1")
    nvfp4 = run_json("spec", "show", *options, "--encoding", "nvfp4", "--dim", "160")["table_bytes"]
    # 160 E2M1 values in 80 B, an E4M3 scale per 16 values (10 B), one fp32 scale per table
    assert nvfp4["row_bytes"] == 90 and nvfp4["layer_bytes"] == [(1009 + 1013 + 1019 + 1021) * 90 + 4]
    plain = run("spec", "show", *options, "--row-bytes", "160")
    assert plain.returncode == 0
    assert "tables as rows of 160 B: layer 1 649,920 B; 649,920 B (650 kB) in all" in plain.stdout.decode()
    assert_one_line_error(run("spec", "show", *options, "--row-bytes", "160", "--dim", "8"), 2, "not both")
    assert_one_line_error(run("spec", "show", *options, "--encoding", "q4_k"), 2, "whole blocks of 256")
