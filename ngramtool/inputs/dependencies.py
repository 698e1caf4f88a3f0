"""Optional packages that some input forms need: imported when first needed, or one clear error
with the pip command that adds them."""

from __future__ import annotations

import importlib
from types import ModuleType

from ..errors import MissingDependencyError

EXTRAS = {"zstandard": "zstd", "pyarrow": "parquet"}
"""The package extra of ngramtool that installs each optional module."""


def require(module: str, purpose: str) -> ModuleType:
    """``module`` imported, or MissingDependencyError: ``<purpose> needs <module>: pip install ...``."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependencyError(
            f"{purpose} needs {module}, which is not installed: pip install 'ngramtool[{EXTRAS[module]}]'"
        ) from None
