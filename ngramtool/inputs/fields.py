"""Where a record's text is: a key, or a dotted path into nested objects and arrays.

``text_key="messages.-1.content"`` reads ``record["messages"][-1]["content"]``: each part after a
dot is a key of an object or, in an array, an index (negative ones count from the end). A key that
holds a dot itself is read as it is first: a record with a key ``"a.b"`` gives that key's value.
"""

from __future__ import annotations

from typing import Final

MISSING: Final = object()
"""What :func:`field_value` gives for a field the record does not have."""
_JSON_KINDS = {dict: "object", list: "array", str: "string", int: "number", float: "number", bool: "boolean"}


def field_value(record: dict, key: str) -> object:
    """The value of ``key`` in a decoded JSON object: the key itself, else the dotted path
    (:mod:`this module <ngramtool.inputs.fields>`); :data:`MISSING` when neither is there.

    Examples:
        >>> from ngramtool.inputs.fields import field_value
        >>> chat = {"messages": [{"role": "user", "content": "Hi"}, {"role": "bot", "content": "Hello"}]}
        >>> field_value(chat, "messages.-1.content"), field_value(chat, "messages.0.role")
        ('Hello', 'user')
    """
    if key in record:
        return record[key]
    if "." not in key:
        return MISSING
    value: object = record
    for part in key.split("."):
        value = _step(value, part)
        if value is MISSING:
            return MISSING
    return value


def _step(value: object, part: str) -> object:
    """``value[part]`` for an object, ``value[int(part)]`` for an array, else :data:`MISSING`."""
    if isinstance(value, dict):
        return value.get(part, MISSING)
    if isinstance(value, list):
        try:
            index = int(part)
        except ValueError:
            return MISSING
        return value[index] if -len(value) <= index < len(value) else MISSING
    return MISSING


def json_kind(value: object) -> str:
    """The JSON name of a decoded value's type (``object``, ``array``, ``string``, ...)."""
    return _JSON_KINDS.get(type(value), "null")
