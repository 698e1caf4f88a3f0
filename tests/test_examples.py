"""The example scripts run offline from another working directory and print what they promise."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
TIMEOUT_S = 60


def run_example(name: str, cwd: Path) -> str:
    """Run ``examples/<name>`` with this interpreter from ``cwd``; return its stdout."""
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Both scripts' stdout, each run from an empty directory (paths must not depend on the cwd)."""
    cwd = tmp_path_factory.mktemp("examples-cwd")
    return {name: run_example(name, cwd) for name in ("hash_with_python.py", "read_index.py")}


def test_hash_with_python_streams_the_same_rows(outputs: dict[str, str]) -> None:
    out = outputs["hash_with_python.py"]
    assert "chunked == whole: True" in out
    assert "V' = 62,330 canonical ids" in out
    tokens = int(re.search(r"-> ([\d,]+) tokens", out).group(1).replace(",", ""))
    assert f"rows: int32 ({tokens}, 2, 16)" in out  # [T, L, (N-1)*K] for the demo spec
    assert re.search(r"hash_ngrams\s+[\d.]+ s\s+[\d.]+M tok/s", out)
    # The printed rows of 'This is the J' at positions 8..11 lie inside layer 1's table.
    printed = re.findall(r"^\s+(\d+)\s+'[^']*'\s+\d+\s+\d+\s+\[([\d, ]+)\]\s+\[([\d, ]+)\]$", out, re.M)
    assert [int(p[0]) for p in printed] == [8, 9, 10, 11]
    layer_rows = int(re.search(r"rows per layer \[(\d+),", out).group(1))
    for _, bigram, trigram in printed:
        bigram_rows = [int(x) for x in bigram.split(",")]
        trigram_rows = [int(x) for x in trigram.split(",")]
        # Order-2 columns precede order-3 columns in the layer's table, and all rows fit in it.
        assert max(bigram_rows) < min(trigram_rows) <= max(trigram_rows) < layer_rows


def test_read_index_reads_what_hash_wrote(outputs: dict[str, str]) -> None:
    out = outputs["read_index.py"]
    tokens = int(re.search(r"tokens\s+([\d,]+) in 1 document", out).group(1).replace(",", ""))
    expected_tokens = re.search(r"-> ([\d,]+) tokens", outputs["hash_with_python.py"]).group(1)
    assert tokens == int(expected_tokens.replace(",", ""))  # the CLI and the library tokenize alike
    assert re.search(rf"tokens\s+uint32\s+\({tokens},\)", out)
    assert re.search(rf"rows\s+int32\s+\({tokens}, 2, 8\)", out)  # --heads 4, layers 1,15
    assert f"[0, {tokens}]" in out  # doc_offsets of one document
    assert "text 'This is the Jargon File'" in out
    assert "rows (6, 2, 8)" in out
    assert out.count("-> vectors (6, 8, 4) -> per token (6, 32)") == 2
    assert "rows match hash_ngrams: True" in out


def test_no_example_shells_out_to_the_command_line():
    """The examples show the library: none runs `ngramtool` (or anything else) in a subprocess."""
    for path in EXAMPLES.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {
            alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
        }
        imported |= {
            node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
        }
        assert not imported & {"subprocess", "os"}, (
            f"{path.name} imports {sorted(imported & {'subprocess', 'os'})}"
        )
