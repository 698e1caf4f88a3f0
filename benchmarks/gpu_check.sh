#!/usr/bin/env bash
# GPU check: the backend parity tests on CUDA (torch and Triton), then `ngramtool bench` on the GPU.
#
#   benchmarks/gpu_check.sh [TOKENS]        # default 100,000,000 tokens
#
# Needs an NVIDIA GPU. Installs into the active Python environment only what the project
# declares (the package with its `test` and `gpu` extras: torch, triton); a CUDA build of torch
# already installed is kept. Prints a short table and writes it, with the date and the GPU's
# name, to $TMPDIR/ngramtool-gpu-check.md, ready for docs/performance.md. Any failure stops the
# script with a non-zero exit code.
set -euo pipefail
cd "$(dirname "$0")/.."

tokens="${1:-100000000}"
python="${PYTHON:-python3}"
report="${TMPDIR:-/tmp}/ngramtool-gpu-check.md"

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "gpu_check: no NVIDIA GPU here (nvidia-smi is missing or sees none); run this on a GPU machine" >&2
    exit 1
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader

"$python" -m pip install -q -e ".[test,gpu]"
unset TRITON_INTERPRET  # compile the Triton kernel for the GPU, never interpret it

gpu="$("$python" - <<'EOF'
import sys

import torch
import triton

if not torch.cuda.is_available():
    sys.exit(f"gpu_check: torch {torch.__version__} does not see the GPU: install a CUDA build of torch")
name = torch.cuda.get_device_name()
print(f"{name}", end="")
print(f"\ntorch {torch.__version__} (CUDA {torch.version.cuda}), triton {triton.__version__}", file=sys.stderr)
EOF
)"

echo "== parity: numpy, torch (CPU and CUDA) and Triton (CUDA) on the golden vectors and random streams"
NGRAMTOOL_TEST_CUDA=1 "$python" -m pytest -q -p no:cacheprovider tests/test_backends.py

echo "== ngramtool bench --tokens $tokens --device cuda"
table="$("$python" -m ngramtool bench --tokens "$tokens" --device cuda --verbose)"
{
    echo "### $gpu, $(date -u +%Y-%m-%d)"
    echo
    echo '```'
    echo "ngramtool bench --tokens $tokens --device cuda"
    echo '```'
    echo
    echo "$table"
} | tee "$report"

if grep -q "| NO |" "$report"; then
    echo "gpu_check: a backend's rows differ from the numpy backend's (see the 'identical' column)" >&2
    exit 1
fi
echo "gpu_check: passed; the table is in $report (copy it into docs/performance.md)"
