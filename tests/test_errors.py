"""Errors: optional dependencies missing at import time are ImportErrors that say how to install them."""

from __future__ import annotations

import subprocess
import sys

from ngramtool.util.errors import MissingDependencyError, NgramToolError, UsageError


def test_missing_dependency_is_an_import_error_and_a_one_line_tool_error():
    error = MissingDependencyError("x needs y: pip install 'ngramtool[y]'")
    assert isinstance(error, ImportError)
    assert isinstance(error, NgramToolError)
    assert error.exit_code == 1
    assert UsageError.exit_code == 2


def test_torch_modules_without_torch_raise_import_error_with_the_install_hint():
    # torch hidden from the import system, as on a machine without the extra.
    program = """
import sys
sys.modules["torch"] = None
for name in ("ngramtool.torch", "ngramtool.torch.engram"):
    try:
        __import__(name)
    except ImportError as exc:
        print(name, type(exc).__name__, exc)
    else:
        raise SystemExit(name + " imported without torch")
"""
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    for line in lines:
        assert "MissingDependencyError" in line
        assert "pip install 'ngramtool[torch]'" in line
