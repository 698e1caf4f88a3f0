"""The CLI's plain option values (text, whole numbers, flags, paths) taken as they are, without
building a pydantic validator for each option on every run.

Typer (0.29 here) coerces each parameter's value through a pydantic ``TypeAdapter`` that it builds
when the command runs: importing pydantic and building one for each of a command's 40-odd
options costs 0.1-0.2 s of every run, where the values are mostly ``None``, a default or a
string that stays one. :func:`install` gives typer a builder that answers those values at once
and builds typer's own coercion, once, for any other value (so a bad number keeps typer's
wording, which :mod:`ngramtool.cli.terminal` turns into one line). With a typer that coerces
otherwise, :func:`install` leaves it as it is. It changes typer for the whole process: another
typer app run in the same process gets the same values as before, sooner.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_DECIMAL = re.compile(r"[+-]?[0-9]+", re.ASCII)
_OTHER = object()  # a value the plain way leaves to typer's coercion
_MOST_DIGITS = 4000  # int() refuses longer strings of digits (sys.get_int_max_str_digits: 4300)


def _text(value: Any) -> Any:
    return value if type(value) is str else _OTHER


def _whole(value: Any, least: float | None = None, most: float | None = None) -> Any:
    """A whole number within the option's range (typer words a number out of it, and reads
    any other spelling: spaces, underscores, ``12.0``, more digits than Python converts)."""
    if type(value) is str and len(value) <= _MOST_DIGITS and _DECIMAL.fullmatch(value):
        value = int(value)
    if type(value) is not int or (least is not None and value < least) or (most is not None and value > most):
        return _OTHER
    return value


def _flag(value: Any) -> Any:
    return value if type(value) is bool else _OTHER


def _path(value: Any) -> Any:
    """A path that does not exist or can be read (typer words one it cannot read)."""
    if type(value) is not str and not isinstance(value, Path):
        return _OTHER
    if "\x00" in str(value) or (os.path.exists(value) and not os.access(value, os.R_OK)):
        return _OTHER
    return value if isinstance(value, Path) else Path(value)


def _texts(value: Any) -> Any:
    if isinstance(value, (list, tuple)) and all(type(item) is str for item in value):
        return list(value)
    return _OTHER


def install() -> bool:
    """Have typer coerce plain option values at once (see the module docstring); whether it was
    installed. Not installed (False) where typer does not build a coercion per parameter the way
    this module extends (an older or a newer typer), or it is installed already."""
    try:
        from typer import _coercion, core
    except ImportError:
        return False
    original = getattr(core, "build_runtime_param", None)
    base = getattr(_coercion, "RuntimeParam", None)
    if original is None or base is None or getattr(original, "plain_values", False):
        return False
    if not hasattr(base, "coerce") or not hasattr(base, "_coerce_value"):
        return False
    try:
        plain_param = _plain_param_class(base, original)
    except TypeError:  # a RuntimeParam this module cannot extend (not a frozen dataclass)
        return False

    def build(descriptor: Any) -> Any:
        plain = _plain_way(descriptor)
        if plain is None:
            return original(descriptor)
        try:
            return plain_param(
                parameter_info=descriptor.parameter_info,
                annotation=descriptor.annotation,
                descriptor=descriptor,
                plain=plain,
            )
        except TypeError:  # a RuntimeParam with other fields, or still abstract
            return original(descriptor)

    build.plain_values = True  # type: ignore[attr-defined]
    core.build_runtime_param = build
    return True


def _plain_param_class(base: type, original: Callable[[Any], Any]) -> type:
    """typer's ``RuntimeParam`` extended: a plain annotation's values at once, any other value
    by typer's own coercion (``original(descriptor)``, built when first needed)."""

    @dataclass(frozen=True)
    class PlainRuntimeParam(base):  # type: ignore[misc, valid-type]
        descriptor: Any = None
        plain: Callable[[Any], Any] = _text
        typer_way: list[Any] = field(default_factory=list, hash=False, compare=False)

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            coerced = self.plain(value)
            if coerced is not _OTHER:
                return coerced
            if not self.typer_way:
                self.typer_way.append(original(self.descriptor))
            return self.typer_way[0]._coerce_value(value, param=param, ctx=ctx)

    return PlainRuntimeParam


def _plain_way(descriptor: Any) -> Callable[[Any], Any] | None:
    """The plain coercion of a parameter, or None where typer's own is needed: choices, a file, a
    parser or click type of its own, a clamped number, a path that must exist or be written or
    resolved, another annotation."""
    try:
        annotation, info = descriptor.annotation, descriptor.parameter_info
        custom = info.parser is not None or getattr(info, "click_type", None) is not None
        if custom or descriptor.is_file or descriptor.is_choice:
            return None
        if annotation is int:
            return None if info.clamp else functools.partial(_whole, least=info.min, most=info.max)
        if annotation is Path:
            either = info.file_okay and info.dir_okay
            checked = info.exists or info.resolve_path or info.writable or not either
            return None if checked or info.path_type not in (None, Path) else _path
        return {str: _text, bool: _flag, list[str]: _texts}.get(annotation)
    except (AttributeError, TypeError):  # a typer whose parameters look otherwise
        return None
