"""numba installed but failing to import (built for another NumPy): ``auto`` hashes and counts with
numpy after one warning line that names the cause, ``--backend numba`` is a one-line usage
error, and numba is imported at most once per process, only where something would use it.

The command-line tests put a fake ``numba`` package first on ``PYTHONPATH`` whose import raises
what numba's raises; the library tests replace :func:`ngramtool.hashing.backends.import_failure`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import assert_one_line_error, run

from ngramtool import NgramHashMapping
from ngramtool.analysis.row_cache import CacheOptions, measure_row_cache
from ngramtool.hashing import backends
from ngramtool.hashing.backends import FallbackWarning, choose_backend, use_numba
from ngramtool.util.errors import UsageError

CAUSE = "Numba needs NumPy 2.2 or less. Got NumPy 2.4."
WARNING = (
    "warning: numba is installed but does not import (Numba needs NumPy 2.2 or less. Got NumPy 2.4): "
    "using numpy instead (the same results, slower); pip install -U numba"
)
SPEC_ARGS = ("--tokenizer", "bytes", "--heads", "2", "--table", "101")
FAKE_NUMBA = f"""
import os
with open(os.environ["FAKE_NUMBA_IMPORTS"], "a") as log:
    log.write("imported\\n")
raise ImportError({CAUSE!r})
"""


@pytest.fixture
def broken(tmp_path: Path) -> dict[str, str]:
    """The environment of a process whose numba does not import; ``FAKE_NUMBA_IMPORTS`` is the
    file that gets a line each time the process tries."""
    (tmp_path / "fake" / "numba").mkdir(parents=True)
    (tmp_path / "fake" / "numba" / "__init__.py").write_text(FAKE_NUMBA, encoding="utf-8")
    path = [str(tmp_path / "fake"), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {"PYTHONPATH": os.pathsep.join(path), "FAKE_NUMBA_IMPORTS": str(tmp_path / "imports.log")}


def _imports(env: dict[str, str]) -> int:
    """How many times the process under ``env`` imported the fake numba."""
    log = Path(env["FAKE_NUMBA_IMPORTS"])
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_hash_falls_back_to_numpy_with_one_warning_line(files, broken, tmp_path):
    # From stdin the input's size is unknown: auto takes numba, which does not import.
    auto, numpy = tmp_path / "auto.ngidx", tmp_path / "numpy.ngidx"
    text = Path(files["a"]).read_bytes()
    fallback = run("hash", "-", "-o", auto, "-q", *SPEC_ARGS, stdin=text, env=broken)
    assert fallback.returncode == 0, fallback.stderr.decode()
    assert fallback.stderr.decode().splitlines() == [WARNING]
    assert _imports(broken) == 1
    asked = run("hash", "-", "-o", numpy, "-q", "--backend", "numpy", *SPEC_ARGS, stdin=text)
    assert asked.returncode == 0, asked.stderr.decode()
    for array in ("tokens.npy", "rows.npy", "doc_offsets.npy", "lut.npy"):
        assert (auto / array).read_bytes() == (numpy / array).read_bytes()


@pytest.mark.parametrize("command", ["hash", "collisions", "explain"])
def test_a_small_input_never_tries_numba(files, broken, tmp_path, command):
    """Below ``SMALL_INPUT_BYTES`` auto takes numpy's kernels without importing numba: no warning."""
    args = {
        "hash": (files["a"], "-o", tmp_path / "small.ngidx", "-q"),
        "collisions": (files["a"],),
        "explain": ("the horse",),
    }[command]
    result = run(command, *args, *SPEC_ARGS, env=broken)
    assert result.returncode == 0, result.stderr.decode()
    assert result.stderr.decode() == "" and _imports(broken) == 0


@pytest.mark.parametrize(
    ("command", "source"), [("collisions", "stdin"), ("cache", "text"), ("cache", "index")]
)
def test_the_analysis_falls_back_to_numpy_with_one_warning_line(files, broken, command, source):
    args = {"stdin": ["-", *SPEC_ARGS], "text": [files["a"], *SPEC_ARGS], "index": [files["index"]]}[source]
    text = Path(files["a"]).read_bytes() if source == "stdin" else None
    fallback = run(command, *args, stdin=text, env=broken)
    assert fallback.returncode == 0, fallback.stderr.decode()
    assert fallback.stderr.decode().splitlines() == [WARNING]
    assert _imports(broken) == 1
    usual = run(command, *args, stdin=text)
    assert usual.returncode == 0, usual.stderr.decode()
    assert fallback.stdout == usual.stdout


def test_asking_for_numba_is_one_line_naming_the_cause(files, broken, tmp_path):
    result = run("hash", files["a"], "-o", tmp_path / "x.ngidx", "--backend", "numba", *SPEC_ARGS, env=broken)
    assert_one_line_error(result, 2, "the numba backend cannot run: numba is installed but does not import")
    assert len(result.stderr.decode().splitlines()) == 1 and "Got NumPy 2.4" in result.stderr.decode()
    assert "pip install -U numba" in result.stderr.decode()
    assert not (tmp_path / "x.ngidx").exists()


def test_what_does_not_hash_does_not_import_numba(files, broken):
    assert run("inspect", files["index"], "--rows", "0", env=broken).returncode == 0
    assert run("size", env=broken).returncode == 0
    made = "from ngramtool import HashSpec, NgramHasher; NgramHasher(HashSpec())"
    subprocess.run([sys.executable, "-c", made], env={**os.environ, **broken}, check=True)
    assert _imports(broken) == 0


@pytest.fixture
def numba_broken(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process's numba is taken to be installed and not to import; no warning given yet."""
    find_spec = backends.importlib.util.find_spec
    monkeypatch.setattr(
        backends, "import_failure", lambda package: CAUSE.rstrip(".") if package == "numba" else None
    )
    monkeypatch.setattr(
        backends.importlib.util,
        "find_spec",
        lambda name, *rest: object() if name == "numba" else find_spec(name, *rest),
    )
    monkeypatch.setattr(backends, "_WARNED", set())


def test_auto_takes_numpy_and_warns_once(numba_broken):
    with pytest.warns(
        FallbackWarning, match=r"numba is installed but does not import \(Numba needs"
    ) as caught:
        assert [choose_backend("auto").name for _ in range(3)] == ["numpy"] * 3
        assert use_numba(None, "counting with compiled kernels") is False
    assert len(caught) == 1


def test_numba_by_name_is_a_usage_error_naming_the_cause(numba_broken):
    with pytest.raises(
        UsageError, match=r"the numba backend cannot run: .*Got NumPy 2\.4\): pip install -U numba"
    ):
        choose_backend("numba")
    with pytest.raises(UsageError, match=r"the compiled row-cache pass needs numba, but numba is installed"):
        use_numba(True, "the compiled row-cache pass")


def test_compiled_false_never_imports(monkeypatch):
    def refuse(package: str) -> str:
        raise AssertionError("compiled=False imported numba")

    monkeypatch.setattr(backends, "import_failure", refuse)
    assert use_numba(False, "counting with compiled kernels") is False


def test_a_package_that_raises_anything_is_reported_with_its_first_line(tmp_path, monkeypatch):
    (tmp_path / "brokenpkg").mkdir()
    (tmp_path / "brokenpkg" / "__init__.py").write_text(
        'raise AttributeError("no attribute _ARRAY_API\\nmore")'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    backends.import_failure.cache_clear()
    try:
        assert backends.import_failure("brokenpkg") == "no attribute _ARRAY_API"
        assert backends.import_failure("no_such_package_here") is None
        assert backends.import_failure("numpy") is None
    finally:
        backends.import_failure.cache_clear()


def test_the_row_cache_pass_without_numba_says_what_to_install(monkeypatch, tmp_path):
    """numba not installed: the numpy pass, with one warning that names the extra."""
    find_spec = backends.importlib.util.find_spec
    monkeypatch.setattr(
        backends.importlib.util,
        "find_spec",
        lambda name, *rest: None if name == "numba" else find_spec(name, *rest),
    )
    monkeypatch.setattr(backends, "_WARNED", set())
    text = tmp_path / "t.txt"
    text.write_text("the cat sat on the mat. " * 50, encoding="utf-8")
    mapping = NgramHashMapping.build("bytes", heads=2, table_sizes=101)
    with pytest.warns(
        FallbackWarning, match=r"numba is not installed: the row-cache pass runs in numpy"
    ) as caught:
        result = measure_row_cache(text, mapping, cache=CacheOptions(budget_rows=(10,)))
    assert result.engine == "numpy" and len(caught) == 1
    assert "pip install 'ngramtool[numba]'" in str(caught[0].message)
