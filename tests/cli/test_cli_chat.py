"""--chat-template and dotted --text-key on the command line: every command that reads text
(hash, tokenize, collisions, cache) renders chat records to HF apply_chat_template's ids; chat
records without the option, a template the sandbox refuses and a tokenizer without a template are
one line each; --resume tells templates apart."""

from __future__ import annotations

import json

import numpy as np
import pytest
from chat_data import CHATS, chat_tokenizer, hf_chat_ids, write_chats
from conftest import assert_one_line_error, run


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The chats as JSONL, and the Qwen-style and DeepSeek-V3 tokenizers with their templates."""
    root = tmp_path_factory.mktemp("chat")
    write_chats(root / "chats.jsonl", CHATS)
    chat_tokenizer(root / "qwen", "qwen-style")
    chat_tokenizer(root / "deepseek", "deepseek-v3")
    return root


def printed_ids(result) -> list[list[int]]:
    assert result.returncode == 0, result.stderr.decode()
    return [[int(word) for word in line.split()] for line in result.stdout.decode().splitlines()]


@pytest.mark.parametrize("kind", ["qwen", "deepseek"])
def test_tokenize_chat_template_prints_the_ids_of_hf_apply_chat_template(folder, kind):
    tokenizer = folder / kind / "tokenizer.json"
    result = run("tokenize", "chats.jsonl", "-t", tokenizer, "--chat-template", cwd=folder)
    assert printed_ids(result) == hf_chat_ids(tokenizer, CHATS)


def test_hash_collisions_and_cache_read_chats_alike(folder):
    tokenizer = folder / "qwen" / "tokenizer.json"
    total = sum(map(len, hf_chat_ids(tokenizer, CHATS)))
    result = run(
        "hash", "chats.jsonl", "-t", tokenizer, "--chat-template", "-o", "c.ngidx", "--force", cwd=folder
    )
    assert result.returncode == 0, result.stderr.decode()
    assert f"wrote c.ngidx: {total} tokens, 3 documents" in result.stderr.decode()
    manifest = json.loads((folder / "c.ngidx" / "manifest.json").read_text())
    assert manifest["tokenization"]["chat_template"]["source"] == "tokenizer_config.json"
    assert manifest["tokenization"]["json_key"] == "messages"
    inspected = run("inspect", "c.ngidx", cwd=folder).stdout.decode()
    assert "--chat-template (sha256 " in inspected
    for command in (["collisions", "--table", "4099"], ["cache", "--rows", "10"]):
        result = run(*command, "chats.jsonl", "-t", tokenizer, "--chat-template", cwd=folder)
        assert result.returncode == 0, result.stderr.decode()
        assert result.stdout.decode().startswith(f"{total} tokens in 3 documents from chats.jsonl")


def test_chat_records_without_the_option_say_what_to_pass(folder):
    for command in ("hash", "tokenize", "collisions"):
        result = run(command, "chats.jsonl", "-t", folder / "qwen" / "tokenizer.json", cwd=folder)
        assert_one_line_error(
            result,
            2,
            "chats.jsonl:1: this record holds a chat ('messages': a list of messages), not 'text': pass "
            "--chat-template to render each chat through the tokenizer's chat template, or pick one field "
            "with --text-key messages.-1.content",
        )


def test_a_dotted_text_key_picks_one_field(folder):
    tokenizer = folder / "qwen" / "tokenizer.json"
    picked = run("tokenize", "chats.jsonl", "-t", tokenizer, "--text-key", "messages.-1.content", cwd=folder)
    lines = "".join(json.dumps({"text": chat[-1]["content"]}) + "\n" for chat in CHATS)
    (folder / "last.jsonl").write_text(lines, encoding="utf-8")
    assert printed_ids(picked) == printed_ids(run("tokenize", "last.jsonl", "-t", tokenizer, cwd=folder))


def test_a_template_the_sandbox_refuses_is_one_line_naming_its_file(folder):
    tokenizer = chat_tokenizer(folder / "bad", "qwen-style", "{{ messages.pop() }}")
    result = run("hash", "chats.jsonl", "-t", tokenizer, "--chat-template", "-o", "bad.ngidx", cwd=folder)
    assert_one_line_error(
        result,
        1,
        f"error: {folder / 'bad' / 'tokenizer_config.json'}: the chat template did what the sandbox forbids",
    )
    assert not (folder / "bad.ngidx").exists()


def test_a_tokenizer_without_a_chat_template_is_a_usage_error(folder, tmp_path):
    (tmp_path / "tokenizer.json").write_bytes((folder / "qwen" / "tokenizer.json").read_bytes())
    result = run("tokenize", "chats.jsonl", "-t", tmp_path / "tokenizer.json", "--chat-template", cwd=folder)
    assert_one_line_error(result, 2, "tokenizer.json has no chat template: no chat_template in ")
    result = run("tokenize", "chats.jsonl", "--chat-template", cwd=folder)
    assert_one_line_error(
        result, 2, "cl100k_base has none: pick the text with --text-key messages.-1.content"
    )


def test_chat_template_is_refused_with_tokens(folder, tmp_path):
    np.save(tmp_path / "ids.npy", np.arange(10, dtype=np.uint32))
    result = run("hash", "--tokens", tmp_path / "ids.npy", "--chat-template", "-o", tmp_path / "t.ngidx")
    assert_one_line_error(result, 2, "--chat-template")


def test_resume_refuses_shards_made_with_another_template(folder):
    parts = folder / "parts"
    parts.mkdir()
    for name in ("a", "b"):
        write_chats(parts / f"{name}.jsonl", CHATS)
    tokenizer = chat_tokenizer(folder / "changing", "qwen-style")
    made = run("hash", "parts/a.jsonl", "-t", tokenizer, "--chat-template", "-o", "shards/", cwd=folder)
    assert made.returncode == 0, made.stderr.decode()
    chat_tokenizer(folder / "changing", "qwen-style", "{% for m in messages %}{{ m.content }}{% endfor %}")
    args = ("hash", "parts/a.jsonl", "parts/b.jsonl", "-t", tokenizer, "--chat-template", "-o", "shards/")
    result = run(*args, "--resume", cwd=folder)
    assert_one_line_error(
        result, 2, "shards/a.jsonl.ngidx was made with another chat template (--chat-template)"
    )
