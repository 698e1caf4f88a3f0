#!/usr/bin/env bash
# GPU check: the backend parity tests on CUDA (torch and Triton), NgramRows on CUDA (parity and
# speed), then `ngramtool bench` on the GPU.
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

echo "== parity: numpy, torch (CPU and CUDA) and Triton (CUDA) on the golden vectors (DeepSeek-V4.1's"
echo "   masked tokens too) and random streams"
NGRAMTOOL_TEST_CUDA=1 "$python" -m pytest -q -p no:cacheprovider tests/backends/test_backends.py

echo "== parity: ngramtool.torch.NgramRows on CUDA (auto, triton, torch) against the CPU rows"
NGRAMTOOL_TEST_CUDA=1 "$python" -m pytest -q -p no:cacheprovider tests/torch/test_torch_rows.py

echo "== serving: BatchHashState on CUDA tensors against one-shot hashing"
NGRAMTOOL_TEST_CUDA=1 "$python" -m pytest -q -p no:cacheprovider tests/test_serving.py -k cuda

echo "== NgramRows on CUDA: batches of 8 x 2048 raw cl100k_base ids, the Engram demo spec"
ngram_rows="$("$python" - <<'EOF'
import time

import numpy as np
import torch

from ngramtool import build_vocab, load_tokenizer, resolve_spec
from ngramtool.torch import NgramRows

tokenizer = load_tokenizer("cl100k_base")
vocab = build_vocab(tokenizer)
spec = resolve_spec(tokenizer=tokenizer, vocab=vocab)
valid = np.flatnonzero(vocab.lut >= 0)
ids = torch.from_numpy(valid[np.random.default_rng(0).integers(0, valid.size, (8, 2048))])
expected = NgramRows(spec, vocab)(ids)  # the CPU rows
print("| NgramRows on CUDA | ms per batch of 8 x 2048 | tokens/s | identical to the CPU |")
print("|---|---:|---:|---|")
for backend in ("triton", "torch"):
    module = NgramRows(spec, vocab, backend=backend).to("cuda")
    on_gpu = ids.cuda()
    same = torch.equal(module(on_gpu).cpu(), expected)
    for _ in range(5):
        module(on_gpu)
    torch.cuda.synchronize()
    repeats = 200
    started = time.perf_counter()
    for _ in range(repeats):
        module(on_gpu)
    torch.cuda.synchronize()
    seconds = (time.perf_counter() - started) / repeats
    print(f"| {backend} | {seconds * 1e3:.3f} | {ids.numel() / seconds:,.0f} | {'yes' if same else 'NO'} |")
EOF
)"
echo "$ngram_rows"

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
    echo
    echo "$ngram_rows"
} | tee "$report"

if grep -q "| NO |" "$report"; then
    echo "gpu_check: rows differ from the CPU's (see the 'identical' columns)" >&2
    exit 1
fi
echo "gpu_check: passed; the table is in $report (copy it into docs/performance.md)"
