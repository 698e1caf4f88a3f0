"""Numpy arrays and torch tensors side by side, without importing torch unless it is in use.

Inputs may be either kind; outputs match the input's kind (and a tensor's device).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np


def is_tensor(value: object) -> bool:
    """Whether ``value`` is a torch tensor (False whenever torch has not been imported)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def as_array(value: Any) -> Any:
    """A torch tensor as it is, or anything else as a numpy array.

    Unsigned tensors wider than a byte become int64: torch cannot compare or reduce them.
    """
    if not is_tensor(value):
        return np.asarray(value)
    torch = sys.modules["torch"]
    wide_unsigned = [getattr(torch, name, None) for name in ("uint16", "uint32", "uint64")]  # torch >= 2.3
    if value.dtype in wide_unsigned:
        return value.to(torch.int64)
    return value


def device_of(value: object) -> str:
    """The device that holds ``value``: a tensor's device, ``"cpu"`` for anything else."""
    return str(value.device) if is_tensor(value) else "cpu"


def to_numpy(value: Any) -> np.ndarray:
    """A numpy view (CPU tensors, arrays) or host copy (device tensors) of ``value``."""
    if is_tensor(value):
        return value.detach().cpu().numpy()
    return np.asarray(value)


def to_tensor(value: Any, device: str) -> Any:
    """``value`` as a torch tensor on ``device`` (no copy when it already is one there)."""
    import torch

    if is_tensor(value):
        return value.to(device)
    array = np.asarray(value)
    if not (array.flags.c_contiguous and array.flags.writeable):
        array = np.array(array)  # torch.from_numpy wants writable, contiguous memory
    return torch.from_numpy(array).to(device)


def like(result: Any, template: object) -> Any:
    """``result`` converted to the kind of ``template``: numpy for numpy, a tensor on its device."""
    if is_tensor(template):
        return to_tensor(result, str(template.device))
    return to_numpy(result)


def is_integer(array: Any) -> bool:
    """Whether a numpy array or torch tensor holds integers (bool is not an integer here)."""
    if is_tensor(array):
        dtype = array.dtype
        return not (dtype.is_floating_point or dtype.is_complex or dtype == sys.modules["torch"].bool)
    return bool(np.issubdtype(array.dtype, np.integer))
