"""Errors that the command line reports as one clear line instead of a traceback."""


class NgramToolError(Exception):
    """A problem with the user's input or environment: the message says what and how to fix it.

    The CLI prints it as ``error: <message>`` and exits with ``exit_code`` (1: runtime, 2: usage).
    """

    exit_code = 1


class UsageError(NgramToolError):
    """An invalid option or option combination (exit code 2)."""

    exit_code = 2


class MissingDependencyError(NgramToolError, ImportError):
    """An optional dependency is not installed: the message names the pip command that adds it.

    It is an ``ImportError`` too, so ``pytest.importorskip`` and ``except ImportError`` treat a
    module that needs it (``ngramtool.torch``) as any module whose import fails.
    """
