"""``ngramtool vocab`` through a subprocess: its report and --export (the figures:
tests/tools/test_describe.py)."""

from __future__ import annotations

import json

import numpy as np
from conftest import run


def test_vocab_reports_and_exports(tmp_path):
    out = tmp_path / "lut.npy"
    result = run("vocab", "--json", "--top", "3", "--export", str(out))
    assert result.returncode == 0, result.stderr.decode()
    report = json.loads(result.stdout)
    assert report["vocab"]["size"] == 62_330 and report["assigned_ids"] == 100_261
    assert len(report["largest_groups"]) == 3
    lut = np.load(out)
    assert lut.shape == (100_277,) and int(lut.max()) + 1 == 62_330
    assert report["largest_groups"][0]["size"] == int(np.bincount(lut[lut >= 0]).max())
    assert "62,330" in run("vocab").stdout.decode()


def test_vocab_no_compress_reports_the_identity():
    result = run("vocab", "--no-compress", "--json")
    report = json.loads(result.stdout)
    assert report["vocab"]["compressed"] is False and report["largest_groups"] == []
    assert "identity map" in run("vocab", "--no-compress").stdout.decode()
