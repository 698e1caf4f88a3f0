"""The sandbox a chat template runs in: jinja2's immutable sandbox with what HF ``transformers``
gives a template in ``apply_chat_template``, and nothing more.

A template is code from a tokenizer's files. It runs in ``ImmutableSandboxedEnvironment``
(``trim_blocks`` and ``lstrip_blocks`` on; no attribute that begins with ``_``, no method that
changes a list or a dict) with HF's additions: ``raise_exception(message)``, ``strftime_now(format)``,
``dict`` and ``namespace`` that cannot reach Python's internals (a namespace refuses names that
begin with ``_``), a ``tojson`` filter that does not escape HTML (``ensure_ascii``, ``indent``,
``separators``, ``sort_keys``), the loop controls ``break`` and ``continue``, and the
``{% generation %}`` tag (it marks assistant text, which is rendered as it is). It has no loader:
``include``, ``import`` and ``extends`` are refused as the sandbox refuses the rest.

This module imports jinja2 (the ``chat`` extra); :mod:`.chat` imports it once jinja2 is known to
be there.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, ClassVar, NoReturn

from jinja2 import FunctionLoader, Template, nodes
from jinja2.exceptions import SecurityError, TemplateError
from jinja2.ext import Extension, loopcontrols
from jinja2.parser import Parser
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import Namespace


class _GenerationTag(Extension):
    """``{% generation %}...{% endgeneration %}``: HF marks assistant text with it; its body renders
    as if the tag were not there."""

    tags: ClassVar[set[str]] = {"generation"}

    def parse(self, parser: Parser) -> nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

    def _body(self, caller: Any) -> str:
        return str(caller())


class _Namespace(Namespace):
    """jinja2's ``namespace()``, refusing names that begin with ``_`` (a way to Python's internals)."""

    def __init__(*args: Any, **kwargs: Any) -> None:  # no ``self``: ``namespace(self=...)`` must work
        attributes = dict(*args[1:], **kwargs)
        for name in attributes:
            _check_name(name)
        Namespace.__init__(args[0], attributes)

    def __setitem__(self, name: str, value: Any) -> None:
        _check_name(name)
        Namespace.__setitem__(self, name, value)


def _check_name(name: object) -> None:
    if isinstance(name, str) and name.startswith("_"):
        raise SecurityError(f"a namespace may not hold a name that begins with _ ({name!r})")


class _Dicts:
    """``dict(...)`` and ``dict.fromkeys(...)`` in a template, without the type itself."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict:
        return dict.fromkeys(*args, **kwargs)


def _raise_exception(message: str) -> NoReturn:
    raise TemplateError(message)


def _strftime_now(pattern: str) -> str:
    return datetime.now().strftime(pattern)


def _tojson(
    value: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    return json.dumps(
        value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def _no_other_files(name: str) -> NoReturn:
    raise SecurityError(f"a chat template gets nothing beyond its own text: it may not load {name!r}")


def compile_template(text: str) -> Template:
    """The template ``text`` compiled in the sandbox (jinja2's ``TemplateSyntaxError`` when it
    does not parse)."""
    environment = ImmutableSandboxedEnvironment(
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[_GenerationTag, loopcontrols],
        loader=FunctionLoader(_no_other_files),
    )
    environment.filters["tojson"] = _tojson
    environment.globals.update(
        raise_exception=_raise_exception, strftime_now=_strftime_now, dict=_Dicts(), namespace=_Namespace
    )
    return environment.from_string(text)
