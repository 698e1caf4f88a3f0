"""Errors that the command line reports as one clear line instead of a traceback.

A library error names the parameters of the function that was called, in backticks
(```table_sizes` must ...``, ``pass `errors=replace```), never a command-line option; the command
line spells them as its options (``--table must ...``, ``pass --errors replace``) with
:meth:`NgramToolError.spelled`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

_PARAMETER = re.compile(r"`(\w+)(?:=([^`]*))?`")


class NgramToolError(Exception):
    """A problem with the user's input or environment: the message says what and how to fix it.

    The CLI prints it as ``error: <message>`` and exits with ``exit_code`` (1: runtime, 2: usage).
    A parameter is named in backticks, ```heads```, a value given to it as ```errors=replace```
    (```add_eot=True``` for a switch); ``parameters`` lists the names the message mentions.

    Examples:
        >>> from ngramtool import NgramToolError
        >>> error = NgramToolError("bad.txt: invalid UTF-8; pass `errors=replace` to substitute U+FFFD")
        >>> error.parameters, error.exit_code
        (('errors',), 1)
        >>> error.spelled(lambda name: "--" + name)
        'bad.txt: invalid UTF-8; pass --errors replace to substitute U+FFFD'
    """

    exit_code = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.parameters = tuple(dict.fromkeys(match.group(1) for match in _PARAMETER.finditer(message)))

    def spelled(self, spell: Callable[[str], str]) -> str:
        """The message with each parameter spelled by ``spell`` (e.g. as a command-line option):
        ```name``` becomes ``spell(name)``, ```name=value``` ``spell(name) value`` and
        ```name=True``` just ``spell(name)``."""

        def spelled_name(match: re.Match[str]) -> str:
            option, value = spell(match.group(1)), match.group(2)
            return option if value in (None, "True") else f"{option} {value}"

        return _PARAMETER.sub(spelled_name, str(self))


class UsageError(NgramToolError):
    """An invalid parameter or combination of parameters (exit code 2).

    Examples:
        >>> from ngramtool import HashSpec, UsageError
        >>> try:
        ...     HashSpec(heads=0)
        ... except UsageError as error:
        ...     print(error, "|", error.spelled(lambda name: "--" + name), "|", error.exit_code)
        `heads` must be at least 1 (got 0) | --heads must be at least 1 (got 0) | 2
    """

    exit_code = 2


class MissingDependencyError(NgramToolError, ImportError):
    """An optional dependency is not installed: the message names the pip command that adds it.

    It is an ``ImportError`` too, so ``pytest.importorskip`` and ``except ImportError`` treat a
    module that needs it (``ngramtool.torch``) as any module whose import fails.
    """


def idle_parameters(names: Sequence[str], applies: str, alternative: str | None = None) -> UsageError:
    """The usage error for parameters given where they would do nothing: ``a, b apply only
    <applies>: drop them[ or <alternative>]`` (``names`` as the message should show them)."""
    verb, pronoun = ("applies", "it") if len(names) == 1 else ("apply", "them")
    fix = f"drop {pronoun}" + (f" or {alternative}" if alternative else "")
    return UsageError(f"{', '.join(names)} {verb} only {applies}: {fix}")
