"""examples/train_tiny.py trains on the bundled corpus and its loss falls (a short CI run)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

pytest.importorskip("torch")

TRAIN_TINY = REPO / "examples" / "train_tiny.py"


@pytest.mark.parametrize("rows", [[], ["--rows", "stored"]], ids=["forward", "stored"])
def test_train_tiny_loss_falls(tmp_path: Path, rows: list[str]) -> None:
    """Rows hashed in the model's forward (the default), or read from the index by the loader."""
    result = subprocess.run(
        [sys.executable, str(TRAIN_TINY), "--steps", "30", "--log-every", "10", *rows],
        capture_output=True,
        text=True,
        cwd=tmp_path,  # the script finds the corpus itself
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    where = "read from the index" if rows else "hashed in the model's forward (NgramRows)"
    assert f"rows {where}" in result.stdout
    assert len(re.findall(r"^step +\d+ +loss [\d.]+", result.stdout, re.M)) == 3
    match = re.search(r"^loss: first ([\d.]+) -> last ([\d.]+) \(falling: True\)$", result.stdout, re.M)
    assert match, result.stdout
    assert float(match.group(2)) < float(match.group(1))
