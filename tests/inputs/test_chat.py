"""Chat records: rendered through the tokenizer's chat template to the ids of HF's
``apply_chat_template(chat, tokenize=True)``, in the sandbox HF uses; a dotted ``text_key`` picks
one field; what goes wrong is one line naming the record or the template's file."""

from __future__ import annotations

import hashlib
import json
import sys
from datetime import datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from chat_data import CHATS, QWEN_STYLE_TEMPLATE, chat_tokenizer, hf_chat_ids, write_chats
from tokenizers import Tokenizer, processors

from ngramtool import CorpusReader
from ngramtool.formats.settings import settings_difference
from ngramtool.inputs import ChatTemplate, iter_text_pieces
from ngramtool.inputs.encoding import iter_token_chunks, tokenization_record
from ngramtool.inputs.fields import field_value
from ngramtool.tokenizers import load_tokenizer
from ngramtool.util.errors import MissingDependencyError, NgramToolError, UsageError

KINDS = ("qwen-style", "glm-style", "deepseek-v3")


def document_ids(inputs, tokenizer, **reading) -> list[list[int]]:
    """The ids of each document of the inputs, as hashing reads them."""
    chunks = list(iter_token_chunks([str(path) for path in inputs], tokenizer, **reading))
    tokens = np.concatenate([chunk.tokens for chunk in chunks])
    starts = np.concatenate([chunk.doc_starts for chunk in chunks])
    return [part.tolist() for part in np.split(tokens, starts[1:])]


@pytest.fixture(scope="module", params=KINDS)
def kind_tokenizer(request, tmp_path_factory):
    """(kind, tokenizer.json path) of each test tokenizer with its chat template beside it."""
    return request.param, chat_tokenizer(tmp_path_factory.mktemp(request.param), request.param)


def test_chats_give_the_ids_of_hf_apply_chat_template(kind_tokenizer, tmp_path):
    _, path = kind_tokenizer
    chats = write_chats(tmp_path / "chats.jsonl", CHATS)
    assert document_ids([chats], load_tokenizer(str(path)), chat_template=True) == hf_chat_ids(path, CHATS)


def test_a_parquet_column_of_chats_reads_as_the_jsonl_records(kind_tokenizer, tmp_path):
    _, path = kind_tokenizer
    tokenizer = load_tokenizer(str(path))
    pq.write_table(pa.table({"messages": CHATS}), tmp_path / "chats.parquet", row_group_size=2)
    chats = write_chats(tmp_path / "chats.jsonl", CHATS)
    parquet = document_ids([tmp_path / "chats.parquet"], tokenizer, chat_template=True)
    assert parquet == document_ids([chats], tokenizer, chat_template=True)


def test_the_rendered_text_gets_no_post_processor_tokens(tmp_path):
    """A post-processor that wraps every text (a BOS, an EOS) wraps a plain document; a rendered chat
    carries the template's own marks and is encoded without it, as HF encodes it
    (``add_special_tokens=False``): no doubled BOS."""
    path = chat_tokenizer(tmp_path / "wrapped", "qwen-style", "<|im_start|>{{ messages[0].content }}")
    core = Tokenizer.from_file(str(path))
    start, end = core.token_to_id("<|im_start|>"), core.token_to_id("<|endoftext|>")
    core.post_processor = processors.TemplateProcessing(
        single="<|im_start|> $A <|endoftext|>",
        special_tokens=[("<|im_start|>", start), ("<|endoftext|>", end)],
    )
    core.save(str(path))
    tokenizer = load_tokenizer(str(path))
    chat = [[{"role": "user", "content": "Hello world"}]]
    chats = write_chats(tmp_path / "chats.jsonl", chat)
    plain = tmp_path / "plain.jsonl"
    plain.write_text(json.dumps({"text": "Hello world"}) + "\n", encoding="utf-8")
    [rendered] = document_ids([chats], tokenizer, chat_template=True)
    assert [rendered] == hf_chat_ids(path, chat)
    assert rendered[0] == start and rendered.count(start) == 1 and end not in rendered
    assert document_ids([plain], tokenizer) == [[start, *rendered[1:], end]]
    record = tokenization_record(tokenizer, chat_template=True, record_key="messages")
    assert (record["document_prefix"], record["document_suffix"]) == ([], [])


def test_the_manifest_records_the_template_and_resume_tells_templates_apart(tmp_path):
    path = chat_tokenizer(tmp_path / "qwen", "qwen-style")
    tokenizer = load_tokenizer(str(path))
    record = tokenization_record(tokenizer, chat_template=True, record_key="messages")
    assert record["chat_template"] == {
        "sha256": hashlib.sha256(QWEN_STYLE_TEMPLATE.encode()).hexdigest(),
        "special_tokens": {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"},
        "source": "tokenizer_config.json",
    }
    plain = tokenization_record(tokenizer, record_key="messages")
    assert "chat_template" not in plain  # manifests without chats are as before
    other = dict(record, chat_template={**record["chat_template"], "sha256": "0" * 64})
    found = settings_difference(
        {**_manifest(), "tokenization": record}, {**_manifest(), "tokenization": other}
    )
    assert found is not None and found.setting == "chat template (`chat_template`)"
    found = settings_difference(
        {**_manifest(), "tokenization": record}, {**_manifest(), "tokenization": plain}
    )
    assert found is not None and found.setting == "chat template (`chat_template`)"
    moved = dict(record, chat_template={**record["chat_template"], "source": "chat_template.jinja"})
    assert (
        settings_difference({**_manifest(), "tokenization": record}, {**_manifest(), "tokenization": moved})
        is None
    )


def _manifest() -> dict:
    """The settings of a manifest besides its tokenization, alike for both sides."""
    return {"tokenizer": {"fingerprint": "t"}, "vocab": {"fingerprint": "v"}, "spec": {"fingerprint": "s"},
            "boundary": "none"}  # fmt: skip


def test_a_chat_template_jinja_file_comes_before_the_config_and_named_templates_give_default(tmp_path):
    path = chat_tokenizer(tmp_path / "qwen", "qwen-style")
    (path.parent / "chat_template.jinja").write_text("[{{ messages | length }}]", encoding="utf-8")
    tokenizer = load_tokenizer(str(path))
    assert ChatTemplate.of(tokenizer).render(CHATS[1]) == "[4]"
    assert ChatTemplate.of(tokenizer).file.name == "chat_template.jinja"
    (path.parent / "chat_template.jinja").unlink()
    named = [{"name": "tool_use", "template": "tools"}, {"name": "default", "template": "{{ eos_token }}"}]
    chat_tokenizer(tmp_path / "qwen", "qwen-style", named)
    assert ChatTemplate.of(load_tokenizer(str(path))).render(CHATS[0]) == "<|im_end|>"


def test_the_template_gets_what_hf_gives_it():
    template = (
        "{{ bos_token }}|{{ add_generation_prompt }}|{{ tools }}|{{ documents }}|"
        "{{ {'k': '\u00e9<'} | tojson }}|"
        "{{ [1, 2] | tojson(indent=1) }}|{{ strftime_now('%Y') }}|{{ dict(a=1) }}|"
        "{% for m in messages %}{% if loop.index > 1 %}{% break %}{% endif %}{{ m.role }}{% endfor %}"
    )
    chat = ChatTemplate(template, Path("tokenizer_config.json"), {"bos_token": "<s>"})
    years = [datetime.now().strftime("%Y")]
    rendered = chat.render(CHATS[0])
    years.append(datetime.now().strftime("%Y"))  # the clock may pass midnight of New Year's Eve
    head, tail = '<s>|False|None|None|{"k": "\u00e9<"}|[\n 1,\n 2\n]|', "|{'a': 1}|system"
    assert rendered in [head + year + tail for year in years]


@pytest.mark.parametrize(
    ("template", "said"),
    [
        ("{{ messages.append(1) }}", "access to attribute 'append' of 'list' object is unsafe"),
        ("{{ messages[0].update({'role': 'x'}) }}", "is unsafe"),
        ("{% include 'secrets.txt' %}", "it may not load 'secrets.txt'"),
        ("{{ ''.__class__.__mro__ }}", "__class__"),
        ("{% set ns = namespace() %}{% set ns._x = 1 %}", "begins with _"),
    ],
)
def test_a_template_that_leaves_the_sandbox_is_one_line_naming_its_file(tmp_path, template, said):
    path = chat_tokenizer(tmp_path / "bad", "glm-style", template)
    chats = write_chats(tmp_path / "chats.jsonl", CHATS)
    with pytest.raises(NgramToolError) as caught:
        document_ids([chats], load_tokenizer(str(path)), chat_template=True, errors="skip")
    message = str(caught.value)
    assert message.startswith(
        f"{path.parent / 'tokenizer_config.json'}: the chat template did what the sandbox forbids"
    )
    assert said in message and "\n" not in message


def test_a_template_that_does_not_parse_names_its_file_and_line(tmp_path):
    path = chat_tokenizer(tmp_path / "bad", "glm-style", "ok\n{% for m in messages %}")
    with pytest.raises(
        NgramToolError, match=r"tokenizer_config.json: the chat template does not parse: .* \(line 2\)"
    ):
        ChatTemplate.of(load_tokenizer(str(path)))


def test_a_chat_the_template_refuses_names_the_line_or_is_skipped(tmp_path):
    path = chat_tokenizer(tmp_path / "glm", "glm-style")
    tokenizer = load_tokenizer(str(path))
    chats = write_chats(
        tmp_path / "chats.jsonl", [CHATS[0], [{"role": "robot", "content": "beep"}], CHATS[2], "hi", []]
    )
    with pytest.raises(NgramToolError) as caught:
        document_ids([chats], tokenizer, chat_template=True)
    assert str(caught.value) == (
        f"{chats}:2: 'messages': the chat template refused this chat: unknown role: robot; fix the line or "
        "pass `errors=skip` to skip bad records"
    )
    pieces = list(iter_text_pieces(str(chats), chat=ChatTemplate.of(tokenizer), errors="skip"))
    assert [piece.skipped for piece in pieces if piece.skipped] == [1, 2]
    assert document_ids([chats], tokenizer, chat_template=True, errors="skip") == hf_chat_ids(
        path, [CHATS[0], CHATS[2]]
    )


@pytest.mark.parametrize(
    ("value", "said"),
    [("hi", "the chat is a JSON string, not a list of messages"), ([], "the chat holds no messages"),
     ([["x"]], "a message is a JSON array, not an object")],
)  # fmt: skip
def test_a_record_that_holds_no_chat_says_what_it_holds(tmp_path, value, said):
    path = chat_tokenizer(tmp_path / "glm", "glm-style")
    chats = write_chats(tmp_path / "chats.jsonl", [value])
    with pytest.raises(NgramToolError, match=f"chats.jsonl:1: 'messages': {said}; fix the line"):
        document_ids([chats], load_tokenizer(str(path)), chat_template=True)


def test_chat_records_without_chat_template_say_what_to_pass(tmp_path):
    chats = write_chats(tmp_path / "chats.jsonl", CHATS)
    for errors in ("strict", "skip"):  # not a bad record to skip: every record is a chat
        with pytest.raises(UsageError) as caught:
            list(iter_text_pieces(str(chats), errors=errors))
        assert str(caught.value) == (
            f"{chats}:1: this record holds a chat ('messages': a list of messages), not 'text': pass "
            "`chat_template=True` to render each chat through the tokenizer's chat template, or pick one "
            "field with `text_key=messages.-1.content`"
        )
    pq.write_table(pa.table({"messages": CHATS}), tmp_path / "chats.parquet")
    with pytest.raises(UsageError, match="column 'messages' holds chats: pass `chat_template=True`"):
        list(iter_text_pieces(str(tmp_path / "chats.parquet")))


def test_a_dotted_text_key_reads_a_nested_field(tmp_path):
    chats = write_chats(tmp_path / "chats.jsonl", CHATS)
    last = [piece.text for piece in iter_text_pieces(str(chats), text_key="messages.-1.content")]
    assert last == [chat[-1]["content"] for chat in CHATS]
    first = [piece.text for piece in iter_text_pieces(str(chats), text_key="messages.0.content")]
    assert first == [chat[0]["content"] for chat in CHATS]
    with pytest.raises(NgramToolError, match=r"chats.jsonl:1: no key 'messages.9.content' in this record"):
        list(iter_text_pieces(str(chats), text_key="messages.9.content"))


def test_field_value_reads_keys_with_dots_first():
    record = {"a.b": 1, "a": {"b": 2, "c": [3, {"d": 4}]}}
    assert field_value(record, "a.b") == 1
    assert [field_value(record, key) for key in ("a.c.0", "a.c.-1.d", "a.c.1.d")] == [3, 4, 4]
    assert [field_value(record, key) for key in ("a.x", "a.c.2", "a.c.x", "a.b.c")].count(
        field_value({}, "z")
    ) == 4


def test_a_tokenizer_without_a_chat_template_is_a_usage_error(tmp_path):
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "tokenizer.json").write_bytes(chat_tokenizer(tmp_path / "glm", "glm-style").read_bytes())
    with pytest.raises(
        UsageError, match=r"tokenizer.json has no chat template: no chat_template in .*; pick"
    ):
        ChatTemplate.of(load_tokenizer(str(bare / "tokenizer.json")))
    with pytest.raises(
        UsageError, match=r"cl100k_base has none: pick the text with `text_key=messages\.-1\.content`"
    ):
        ChatTemplate.of(load_tokenizer("cl100k_base"))


def test_plain_text_read_as_text_is_refused_with_chat_template(tmp_path):
    path = chat_tokenizer(tmp_path / "glm", "glm-style")
    text = tmp_path / "notes.txt"
    text.write_text("hello", encoding="utf-8")
    with pytest.raises(UsageError, match="is read as plain text"):
        document_ids([text], load_tokenizer(str(path)), chat_template=True, input_format="text")


def test_the_corpus_reader_reads_chats_under_messages():
    reader = CorpusReader(["-"], chat_template=True)
    assert reader.text_key == "messages" and reader.record_key() == "messages"
    assert reader.reading["chat_template"] is True
    assert CorpusReader.from_dict(reader.to_dict()) == reader


def test_without_jinja2_the_error_names_the_chat_extra(tmp_path, monkeypatch):
    path = chat_tokenizer(tmp_path / "glm", "glm-style")
    monkeypatch.setitem(sys.modules, "jinja2", None)  # import fails as if it were not installed
    with pytest.raises(MissingDependencyError) as caught:
        ChatTemplate.of(load_tokenizer(str(path)))
    assert str(caught.value) == (
        "rendering chat templates needs jinja2, which is not installed: pip install 'ngramtool[chat]'"
    )
