"""The numpy backend: an adapter over :class:`ngramtool.hashing.NumpyRows` (CPU, one thread)."""

from __future__ import annotations

from ..hashing import NumpyRows
from ..spec import HashSpec


def devices() -> tuple[str, ...]:
    """numpy computes on the CPU."""
    return ("cpu",)


def unavailable_reason(device_type: str) -> str:
    """Why numpy cannot run on ``device_type`` (anything but the CPU)."""
    return (
        f"the numpy backend runs on the CPU, not {device_type}: use `device=cpu`, "
        "or `backend=torch` or triton for a GPU"
    )


def make_kernel(spec: HashSpec, *, offsets: bool, negative_ids: str, device: str) -> NumpyRows:
    """The numpy evaluator (``device`` is the CPU)."""
    return NumpyRows(spec, offsets=offsets, negative_ids=negative_ids)
