"""Optional packages that some input forms (and chat templates) need: imported when first needed,
or one clear error with the pip command that adds them."""

from __future__ import annotations

import importlib
from types import ModuleType

from ..util.errors import MissingDependencyError

EXTRAS = {"zstandard": "zstd", "pyarrow": "parquet", "jinja2": "chat"}
"""The package extra of ngramtool that installs each optional module."""


def require(module: str, purpose: str) -> ModuleType:
    """``module`` imported, or MissingDependencyError: ``<purpose> needs <module>: pip install ...``."""
    try:
        return importlib.import_module(module)
    except ImportError:
        extra = EXTRAS[module.partition(".")[0]]  # pyarrow.parquet comes with pyarrow
        raise MissingDependencyError(
            f"{purpose} needs {module}, which is not installed: pip install 'ngramtool[{extra}]'"
        ) from None
