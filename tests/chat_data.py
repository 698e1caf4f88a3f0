"""Chat test data: the test tokenizers with chat templates beside them, chats that exercise what
HF does to messages and gives to templates, and HF ``apply_chat_template``'s ids for them (the
reference that ``--chat-template`` must equal)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

from conftest import DATA

TOKENIZERS = DATA / "tokenizers"

# Written for these tests in the manner of each family's template (not copied from a model): the
# ChatML turns of Qwen, with a default system prompt, loop controls, the {% generation %} tag, the
# reasoning of a message, tool calls as JSON and indented blocks that trim_blocks/lstrip_blocks tidy.
QWEN_STYLE_TEMPLATE = """\
{%- if messages[0].role == 'system' %}
    {{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}
{%- else %}
    {{- '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}
{%- endif %}
{% for message in messages %}
    {% if message.role == 'system' and loop.first %}{% continue %}{% endif %}
<|im_start|>{{ message.role }}
    {% if message.reasoning_content is defined %}
<think>
{{ message.reasoning_content }}
</think>

    {% endif %}
    {% if message.role == 'assistant' %}
{% generation %}{{ message.content }}{% endgeneration %}
    {%- else %}
{{ message.content }}
    {%- endif %}
    {% for call in message.tool_calls | default([]) %}

<tool_call>
{{ call | tojson }}
</tool_call>
    {%- endfor %}
<|im_end|>
{% endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %}"""

# GLM-4's turns: [gMASK]<sop> first, then <|role|> and the text on its own line; a namespace
# counts the turns, dict() builds a value, raise_exception refuses an unknown role.
GLM_STYLE_TEMPLATE = """\
[gMASK]<sop>
{%- set ns = namespace(turns=0) %}
{%- set marks = dict(system='<|system|>', user='<|user|>', assistant='<|assistant|>') %}
{%- for message in messages %}
    {%- if message.role not in marks %}
        {{- raise_exception('unknown role: ' + message.role) }}
    {%- endif %}
    {%- set ns.turns = ns.turns + 1 %}
{{ marks[message.role] }}
{{ message.content | trim }}
{%- endfor %}
{%- if ns.turns > 2 %}{{ eos_token }}{% endif %}"""

CHATS = [
    [
        {"role": "system", "content": "Answer in one line."},
        {"role": "user", "content": "What is the hacker ethic?"},
        {"role": "assistant", "content": "Information wants to be free."},
    ],
    [
        {"role": "user", "content": "Spell it out: <|im_end|> or <|user|>?", "reasoning_content": None},
        {"role": "assistant", "content": "  Both are markers.  ", "reasoning_content": "They are special."},
        {"role": "user", "content": "Caf\u00e9 cr\u00e8me \u2615"},
        {"role": "assistant", "content": "Oui.", "thinking": "French."},
    ],
    [
        {"role": "user", "content": "Call the tool."},
        {
            "role": "assistant",
            "content": "Calling.",
            "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"x": "\u00e9"}}}],
        },
    ],
]
"""Chats with what HF prepares: a key that holds null (dropped: not ``defined`` for a template),
reasoning under reasoning_content and under thinking (given under both names), non-ASCII text in
tool calls (tojson keeps it), special-token strings in the text (matched, as HF's tokenizer
matches them)."""

TEMPLATES = {"qwen-style": QWEN_STYLE_TEMPLATE, "glm-style": GLM_STYLE_TEMPLATE}


def chat_tokenizer(folder: Path, kind: str, template: str | None = None) -> Path:
    """``folder`` holding the test tokenizer ``kind`` (``qwen-style``, ``glm-style`` or
    ``deepseek-v3``) and its tokenizer_config.json with ``template`` as its chat_template (default:
    the one above, or DeepSeek-V3's own); returns the tokenizer.json's path."""
    folder.mkdir(parents=True, exist_ok=True)
    if kind == "deepseek-v3":
        gz = TOKENIZERS / "deepseek-v3.tokenizer.json.gz"
        (folder / "tokenizer.json").write_bytes(gzip.decompress(gz.read_bytes()))
        config = json.loads((TOKENIZERS / "deepseek-v3.tokenizer_config.json").read_text(encoding="utf-8"))
    else:
        shutil.copy(TOKENIZERS / kind / "tokenizer.json", folder / "tokenizer.json")
        config = json.loads((TOKENIZERS / kind / "tokenizer_config.json").read_text(encoding="utf-8"))
        config["chat_template"] = TEMPLATES[kind]
    if template is not None:
        config["chat_template"] = template
    (folder / "tokenizer_config.json").write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
    return folder / "tokenizer.json"


def hf_chat_ids(tokenizer_json: Path, chats: list[list[dict]]) -> list[list[int]]:
    """HF ``apply_chat_template(chat, tokenize=True)`` of each chat, with the tokenizer of the
    folder (as ``AutoTokenizer.from_pretrained`` loads it)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_json.parent))
    found = []
    for chat in chats:
        ids = tokenizer.apply_chat_template(chat, tokenize=True)
        found.append(list(ids if isinstance(ids, list) else ids["input_ids"]))
    return found


def write_chats(path: Path, chats: list[list[dict]], key: str = "messages") -> Path:
    """The chats as JSONL, one record ``{"id": ..., key: chat}`` each."""
    lines = (json.dumps({"id": i, key: chat}, ensure_ascii=False) for i, chat in enumerate(chats))
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path
