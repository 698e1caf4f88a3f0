"""Chats as text: a record's messages rendered through the tokenizer's own chat template, as HF
``transformers`` renders them in ``apply_chat_template`` (docs/inputs.md#chat-data).

The template is the ``chat_template.jinja`` beside the tokenizer.json, else the ``chat_template``
of the ``tokenizer_config.json`` there (HF's order; of a list of named templates, ``default``).
It renders in the sandbox of :mod:`.chat_sandbox` with what HF passes: the messages,
``add_generation_prompt`` false, no ``tools`` or ``documents``, and the config's special tokens
(``bos_token``, ``eos_token``, ``unk_token``, ``sep_token``, ``pad_token``, ``cls_token``,
``mask_token``). The messages are prepared as HF prepares them: keys that hold null are dropped,
and a message's reasoning (the first of ``reasoning_content``, ``thinking``, ``reasoning``) is
given as both ``thinking`` and ``reasoning_content``. The rendered text carries the template's own
marks (a BOS), so it is encoded without the post-processor's (HF encodes it with
``add_special_tokens=False``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..util.errors import NgramToolError, UsageError
from .dependencies import require
from .fields import json_kind

CHAT_KEY = "messages"
"""Where a record holds its chat unless ``text_key`` says otherwise."""
TEMPLATE_FILE = "chat_template.jinja"
SPECIAL_TOKENS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
REASONING_KEYS = ("reasoning_content", "thinking", "reasoning")
OLDEST_JINJA2 = (3, 1, 6)  # older releases have known sandbox escapes (HF refuses them too)
PICK_A_FIELD = "`text_key=messages.-1.content`"


class ChatRecordError(NgramToolError):
    """A record whose chat cannot be rendered: not a list of messages, or the template refused it
    (the reader names the record, and ``errors=skip`` skips it)."""


class ChatTemplate:
    """A tokenizer's chat template, compiled in the sandbox: :meth:`render` turns a record's
    messages into the text HF's ``apply_chat_template`` renders for them.

    Attributes:
        text: the template's source.
        file: the file it was read from (``chat_template.jinja`` or ``tokenizer_config.json``).
        special_tokens: the config's special tokens, as the template sees them.
        sha256: the hex sha256 of ``text``.

    Examples:
        >>> from pathlib import Path
        >>> from ngramtool.inputs.chat import ChatTemplate
        >>> template = "{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
        >>> chat = ChatTemplate(template, Path("tokenizer_config.json"), {"bos_token": "<s>"})
        >>> chat.render([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}])
        '<s><user>Hi<assistant>Hello'
    """

    def __init__(self, text: str, file: Path, special_tokens: dict[str, str]) -> None:
        self.text = text
        self.file = file
        self.special_tokens = dict(special_tokens)
        self.sha256 = hashlib.sha256(text.encode("utf-8")).hexdigest()
        self._template = _compiled(text, file)

    @classmethod
    def of(cls, tokenizer: Any) -> ChatTemplate:
        """The chat template of an HF tokenizer (read from the files beside its tokenizer.json);
        a usage error for a tokenizer that has none."""
        config = getattr(tokenizer, "config_path", None)
        if config is None:
            raise UsageError(
                f"`chat_template` renders chats through an HF tokenizer's chat template (in the "
                f"tokenizer_config.json beside its tokenizer.json); {tokenizer.name} has none: pick the "
                f"text with {PICK_A_FIELD}"
            )
        settings = _config(config)
        jinja_file = config.parent / TEMPLATE_FILE
        if jinja_file.is_file():
            text, file = _read_text(jinja_file), jinja_file
        else:
            text, file = _config_template(settings, config, tokenizer.name), config
        return cls(text, file, _special_tokens(settings))

    def render(self, chat: object) -> str:
        """The text of one record's chat (a list of ``{role, content, ...}`` objects).

        Raises:
            ChatRecordError: the chat is not a list of messages, or the template refused it
                (``raise_exception``) or failed on it.
            NgramToolError: the template did what the sandbox forbids (naming its file).
        """
        from jinja2.exceptions import SecurityError

        messages = _prepared(chat)
        try:
            return self._template.render(
                messages=messages,
                tools=None,
                documents=None,
                add_generation_prompt=False,
                **self.special_tokens,
            )
        except SecurityError as exc:
            raise NgramToolError(
                f"{self.file}: the chat template did what the sandbox forbids ({_first_line(exc)}); "
                "a template gets the messages and the special tokens, as in HF apply_chat_template, "
                "and nothing else"
            ) from None
        except Exception as exc:  # raise_exception, or any failure of the template's code on this chat
            raise ChatRecordError(f"the chat template refused this chat: {_first_line(exc)}") from None

    def record(self) -> dict[str, Any]:
        """What the manifest's ``tokenization`` records of it: the sha256 of its text, the special
        tokens it was given and its file's name (``source``: provenance, not compared)."""
        return {"sha256": self.sha256, "special_tokens": self.special_tokens, "source": self.file.name}


def _compiled(text: str, file: Path) -> Any:
    """The template compiled in the sandbox; one line naming ``file`` when it does not parse."""
    from importlib.metadata import version  # 20 ms to import: only with a template

    jinja2 = require("jinja2", "rendering chat templates")
    installed = version("jinja2")
    if tuple(int(part) for part in installed.split(".")[:3] if part.isdigit()) < OLDEST_JINJA2:
        raise NgramToolError(
            f"rendering chat templates needs jinja2 3.1.6 or later (older releases have sandbox escapes), "
            f"not {installed}: pip install -U 'ngramtool[chat]'"
        )
    from .chat_sandbox import compile_template

    try:
        return compile_template(text)
    except jinja2.TemplateSyntaxError as exc:
        problem = f"{exc.message} (line {exc.lineno})"
        raise NgramToolError(f"{file}: the chat template does not parse: {problem}") from None


def _prepared(chat: object) -> list[dict[str, Any]]:
    """The messages as HF hands them to the template: null keys dropped, reasoning aliased."""
    if not isinstance(chat, list):
        raise ChatRecordError(f"the chat is a JSON {json_kind(chat)}, not a list of messages")
    if not chat:
        raise ChatRecordError("the chat holds no messages")
    messages = []
    for message in chat:
        if not isinstance(message, dict):
            raise ChatRecordError(f"a message is a JSON {json_kind(message)}, not an object")
        kept = {key: value for key, value in message.items() if value is not None}
        reasoning = next((kept[key] for key in REASONING_KEYS if key in kept), None)
        if reasoning is not None:
            kept = {"thinking": reasoning, **kept, "reasoning_content": reasoning}
        messages.append(kept)
    return messages


def _config(config: Path) -> dict[str, Any]:
    """The tokenizer_config.json (empty when there is none)."""
    if not config.is_file():
        return {}
    try:
        settings = json.loads(_read_text(config))
    except json.JSONDecodeError as exc:
        raise NgramToolError(f"{config}: not valid JSON ({exc.msg} at line {exc.lineno}); fix it") from None
    if not isinstance(settings, dict):
        raise NgramToolError(f"{config} is not a JSON object; fix it")
    return settings


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise NgramToolError(f"cannot read {path}: {exc}") from None


def _config_template(settings: dict[str, Any], config: Path, tokenizer: str) -> str:
    """The config's ``chat_template``: a string, or of a list of named templates the ``default``."""
    found = settings.get("chat_template")
    if isinstance(found, list):
        named = {entry.get("name"): entry.get("template") for entry in found if isinstance(entry, dict)}
        if "default" not in named:
            names = ", ".join(repr(name) for name in named) or "none"
            raise UsageError(
                f"{config}: named chat templates ({names}) but none named 'default', which "
                f"`chat_template` renders with; pick the text with {PICK_A_FIELD}"
            )
        found = named["default"]
    if found is None:
        raise UsageError(
            f"{tokenizer} has no chat template: no chat_template in {config} and no {TEMPLATE_FILE} "
            f"beside it; pick the text with {PICK_A_FIELD}"
        )
    if not isinstance(found, str):
        raise NgramToolError(f"{config}: its chat_template holds a JSON {json_kind(found)}, not a template")
    return found


def _special_tokens(settings: dict[str, Any]) -> dict[str, str]:
    """The config's special tokens by name (a string, or an added token's ``content``)."""
    tokens = {}
    for name in SPECIAL_TOKENS:
        value = settings.get(name)
        content = value.get("content") if isinstance(value, dict) else value
        if isinstance(content, str):
            tokens[name] = content
    return tokens


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
