"""benchmarks/bench_loader.py runs end to end at a tiny size and reports every input it promises."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from conftest import REPO

pytest.importorskip("torch")

SCRIPT = REPO / "benchmarks" / "bench_loader.py"


def test_every_input_gets_a_rate_and_its_bytes_on_disk(tmp_path):
    args = ["--tokens", "50000", "--seq-len", "64", "--batch", "2", "--batches", "2", "--workers", "0", "1"]
    result = subprocess.run(
        [sys.executable, str(SCRIPT), *args, "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    rows = dict(re.findall(r"^\| ([^|]+?) \| ([\d.]+ \| [\d.]+ \| [\d.]+) \|$", result.stdout, re.MULTILINE))
    kinds = {"stored, warm", "stored, cold", "lazy", "TokenFileDataset", "NgramRows in forward"}
    assert set(rows) == (kinds if hasattr(os, "posix_fadvise") else kinds - {"stored, cold"})
    per_token = {kind: float(cells.split(" | ")[0]) for kind, cells in rows.items()}
    rates = [float(rate) for cells in rows.values() for rate in cells.split(" | ")[1:]]
    assert per_token["stored, warm"] > 128 > per_token["lazy"]  # the demo spec's rows: 128 bytes a token
    assert per_token["TokenFileDataset"] == per_token["NgramRows in forward"] == 4.0  # uint32 .npy
    assert all(rate > 0 for rate in rates)
    assert list(tmp_path.iterdir()) == []  # the corpus was built in a temporary directory, removed
