"""A released model's preset (deepseek-v4.1-flash, V'=99,092) with a tokenizer whose compressed
vocabulary is another (cl100k_base's 62,330, DeepSeek-V3's 98,627) would hash other rows than the
model's: every command and the library refuse it, unless the user says it on purpose
(--allow-vocab-mismatch), and then every manifest records it."""

from __future__ import annotations

import json

import pytest
from conftest import assert_one_line_error, run

from ngramtool import NgramHashMapping
from ngramtool.model.presets import resolve_spec
from ngramtool.util.errors import UsageError

PRESET = ("--preset", "deepseek-v4.1-flash")
BOTH = "whose tokenizer has V'=99,092, but tokenizer cl100k_base has V'=62,330"


@pytest.fixture(scope="module")
def text(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("mismatch") / "t.txt"
    path.write_text("The hacker ethic. Information wants to be free.\n", encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    "command",
    [
        ["hash", "{text}", "-o", "{out}"],
        ["collisions", "{text}"],
        ["cache", "{text}"],
        ["explain", "hello world"],
        ["tokenize", "{text}", "--canonical"],
        ["spec", "show", "-t", "cl100k_base"],
        ["spec", "lint", "-t", "cl100k_base"],
        ["spec", "export", "-t", "cl100k_base", "-o", "{out}"],
    ],
    ids=lambda command: " ".join(part for part in command if not part.startswith(("{", "-"))),
)
def test_every_command_refuses_the_preset_with_another_vocabulary(command, text, tmp_path):
    out = tmp_path / "out"
    args = [part.format(text=text, out=out) for part in command]
    result = run(*args, *PRESET)
    assert_one_line_error(result, 2, BOTH)
    assert "--allow-vocab-mismatch" in result.stderr.decode()
    assert not out.exists()


def test_on_purpose_the_manifest_records_it_and_lint_reports_it(text, tmp_path):
    out = tmp_path / "x.ngidx"
    result = run("hash", text, "-o", out, *PRESET, "--allow-vocab-mismatch", "-q")
    assert result.returncode == 0, result.stderr.decode()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["vocab_mismatch"] == {
        "preset": "deepseek-v4.1-flash",
        "model_vocab_size": 99092,
        "vocab_size": 62330,
    }
    lint = run("spec", "lint", out)
    assert lint.returncode == 1 and "vocab-mismatch" in lint.stdout.decode()
    lint = run("spec", "lint", "-t", "cl100k_base", *PRESET, "--allow-vocab-mismatch", "--json")
    assert "vocab-mismatch" in [finding["code"] for finding in json.loads(lint.stdout)["findings"]]


def test_the_flag_alone_is_refused(text):
    assert_one_line_error(run("hash", text, "--allow-vocab-mismatch"), 2, "applies only with a released")


def test_the_model_vocabulary_and_other_presets_pass():
    assert run("spec", "show", *PRESET, "--vocab-size", "99092").returncode == 0
    assert run("spec", "show", "--preset", "engram-27b", "-t", "cl100k_base").returncode == 0


def test_the_library_refuses_it_too(deepseek_tokenizer_path):
    with pytest.raises(UsageError, match="V'=99,092, but tokenizer cl100k_base has V'=62,330"):
        NgramHashMapping.build("cl100k_base", spec="deepseek-v4.1-flash")
    with pytest.raises(UsageError, match="V'=98,627"):  # DeepSeek-V3's own tokenizer is not V4.1's
        NgramHashMapping.build(str(deepseek_tokenizer_path), spec="deepseek-v4.1-flash")
    with pytest.raises(UsageError, match="`vocab_size` has V'=1,000"):
        resolve_spec(preset="deepseek-v4.1-flash", vocab_size=1000)
    mapping = NgramHashMapping.build("cl100k_base", spec="deepseek-v4.1-flash", allow_vocab_mismatch=True)
    assert mapping.vocab_mismatch == {
        "preset": "deepseek-v4.1-flash",
        "model_vocab_size": 99092,
        "vocab_size": 62330,
    }
    assert NgramHashMapping.from_payload(mapping.to_payload()).vocab_mismatch == mapping.vocab_mismatch
