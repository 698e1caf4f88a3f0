"""Compile the Triton kernel for NVIDIA GPUs ahead of time, on a machine without one.

    python tests/triton_aot.py [ARCH ...]     # default: 80 90 (A100, H100/H200)

Triton's NVIDIA backend lowers the kernel to PTX and assembles a cubin with the ``ptxas`` its
wheel ships, without a driver or GPU. This checks what the CPU interpreter cannot: that every
kernel variant compiles for real GPU targets and that the masked path's modulo is Barrett
reduction (a 64-bit ``mul.hi``, no division instruction). It prints one JSON line per variant
with the registers and spills ``cuobjdump`` reports, and exits 1 on the first failed check.
Run with ``TRITON_INTERPRET`` unset (the interpreter replaces the compiler).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from ngramtool.hashing.backends.triton_backend import (
    BLOCK_TOKENS,
    NUM_WARPS,
    column_rows_kernel,
    engram_rows_kernel,
)

POINTERS = {
    "ext_ptr": "*i64",
    "starts_ptr": "*i8",
    "mult_ptr": "*i64",
    "prime_ptr": "*i64",
    "magic_ptr": "*i64",
}
# (K heads, RESET, MASK, OFFSETS, NARROW int32 rows, SUM): the demo's layout and its edge cases,
# then the kernel of families whose heads have multipliers of their own (SUM: LongCat's sum; it
# always reduces with Barrett, whatever MASK), then the speedrun family's int32 XOR ("speedrun":
# its mix may be negative, so it divides; the first token reserved, then kept).
VARIANTS = [
    (8, True, True, True, True, None),
    (8, False, True, False, False, None),
    (3, True, True, True, False, None),
    (8, True, False, True, True, None),
    (4, True, True, True, True, False),
    (2, False, False, True, False, True),
    (1, True, True, True, True, "speedrun"),
    (1, False, False, True, True, "speedrun-kept"),
]


def compile_variant(
    arch: int, heads: int, reset: bool, mask: bool, offsets: bool, narrow: bool, summed: bool | str | None
) -> dict:
    """Compile one variant for ``sm_<arch>`` (``summed`` None: the Engram kernel; a string: the
    speedrun family's); returns its checks and resource usage."""
    speedrun = isinstance(summed, str)
    column = {"SUM": summed is True, "SPEEDRUN": speedrun, "KEPT": summed == "speedrun-kept"}
    row = "*i32" if narrow else "*i64"
    signature = {**POINTERS, "offset_ptr": row, "out_ptr": row, "num_tokens": "i32", "pad_id": "i32"}
    constants = {
        "LAYERS": 2,
        "N": 3,
        "K": heads,
        "K_POW2": triton.next_power_of_2(heads),
        "RESET": reset,
        "MASK": mask,
        "OFFSETS": offsets,
        **({"NARROW": narrow} if summed is None else column),
        "BLOCK": BLOCK_TOKENS,
    }
    signature.update(dict.fromkeys(constants, "constexpr"))
    function = engram_rows_kernel if summed is None else column_rows_kernel
    names = function.arg_names
    source = ASTSource(
        fn=function,
        signature=signature,
        constexprs={(names.index(name),): value for name, value in constants.items()},
    )
    kernel = triton.compile(source, target=GPUTarget("cuda", arch, 32), options={"num_warps": NUM_WARPS})
    ptx = kernel.asm["ptx"]
    return {
        "arch": f"sm_{arch}",
        "kernel": "engram"
        if summed is None
        else summed
        if speedrun
        else ("column sum" if summed else "column xor"),
        "heads": heads,
        "reset": reset,
        "mask": mask,
        "offsets": offsets,
        "int32_rows": narrow,
        "cubin_bytes": len(kernel.asm["cubin"]),
        "mul_hi_u64": "mul.hi.u64" in ptx,
        "divisions": sorted(set(re.findall(r"\b(?:div|rem)\.[\w.]+", ptx))),
        **resource_usage(kernel.asm["cubin"]),
    }


def resource_usage(cubin: bytes) -> dict:
    """Registers and spill bytes from the cuobjdump that Triton's wheel ships (empty if absent)."""
    tool = Path(triton.backends.nvidia.__file__).parent / "bin" / "cuobjdump"
    if not tool.is_file():
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(cubin)
        text = subprocess.run(
            [str(tool), "--dump-resource-usage", str(path)], capture_output=True, text=True, check=False
        ).stdout
    usage = {}
    for key, pattern in (("registers", r"REG:(\d+)"), ("stack_bytes", r"STACK:(\d+)")):
        if match := re.search(pattern, text):
            usage[key] = int(match.group(1))
    return usage


def main(arches: list[int]) -> int:
    """Compile every variant for every arch; 1 when a check fails."""
    if os.environ.get("TRITON_INTERPRET") == "1":
        print("unset TRITON_INTERPRET: the interpreter replaces the compiler", file=sys.stderr)
        return 1
    for arch in arches:
        for variant in VARIANTS:
            result = compile_variant(arch, *variant)
            print(json.dumps(result))
            barrett = (result["mask"] or result["kernel"] != "engram") and "speedrun" not in result["kernel"]
            barrett_ok = not barrett or (result["mul_hi_u64"] and not result["divisions"])
            if not result["cubin_bytes"] or not barrett_ok:
                print(f"check failed for {result}", file=sys.stderr)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main([int(arch) for arch in sys.argv[1:]] or [80, 90]))
