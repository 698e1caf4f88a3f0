"""The Engram torch modules at their first import path; they live in :mod:`ngramtool.torch.engram`."""

from .torch.engram import DEMO_CLAMP, SHORT_CONV_EPS, EngramGate, EngramMemory, RMSNorm, ShortConv, rms_norm

__all__ = ["DEMO_CLAMP", "SHORT_CONV_EPS", "EngramGate", "EngramMemory", "RMSNorm", "ShortConv", "rms_norm"]
