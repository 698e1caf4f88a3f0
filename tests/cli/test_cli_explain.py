"""``ngramtool explain`` through a subprocess: its tables, --json, --limit and its errors (the values:
tests/tools/test_explain.py)."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import assert_one_line_error, run

from ngramtool import NgramHashMapping
from ngramtool.tools.explain import explain


def test_explain_prints_the_librarys_explanation(tmp_path):
    result = run("explain", "the horse", "--json", "--heads", "2")
    assert result.returncode == 0, result.stderr.decode()
    report = json.loads(result.stdout)
    explained = explain("the horse", NgramHashMapping.build(heads=2))
    assert report["tokens"] == explained.tokens and report["spec"] == explained.spec.to_dict()
    assert report["num_tokens"] == 2 and report["truncated"] is False
    table = run("explain", "the horse", "--layer", "15").stdout.decode()
    assert "= row" in table and "token 1" in table


def test_explain_rejects_a_layer_outside_the_spec():
    result = run("explain", "x", "--layer", "99")
    assert_one_line_error(result, 2, "--layer 99 is not one of the Engram layers")


def test_explain_refuses_text_that_is_not_utf8():
    result = subprocess.run(
        [sys.executable, "-m", "ngramtool", "explain", b"caf\xe9"], capture_output=True, timeout=120
    )
    assert_one_line_error(result, 2, "TEXT is not valid UTF-8")


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
