"""An import that passed is remembered per machine (:func:`ngramtool.hashing.backends.import_failure`):
a later process with the same installed files does not import the package to choose a backend,
anything installed, changed or removed beside it makes it try again, failures are never
remembered, and a remembered pass that no longer holds is worded when the backend hashes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ngramtool import HashSpec
from ngramtool.hashing import backends
from ngramtool.util.errors import UsageError

CHECK = "from ngramtool.hashing.backends import import_failure; print(import_failure('memopkg'))"
PACKAGE = """
import os
with open(os.environ["MEMO_IMPORTS"], "a") as log:
    log.write("imported\\n")
{body}
"""


@pytest.fixture
def place(tmp_path: Path) -> Path:
    """A directory put first on the path of the processes :func:`_check` starts."""
    (tmp_path / "site" / "memopkg").mkdir(parents=True)
    return tmp_path / "site"


def _write(place: Path, body: str = "") -> None:
    (place / "memopkg" / "__init__.py").write_text(PACKAGE.format(body=body), encoding="utf-8")


def _check(place: Path) -> str:
    """``import_failure('memopkg')`` in a new process, its cache and import log beside ``place``."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(place), *filter(None, [os.environ.get("PYTHONPATH")])]),
        "NGRAMTOOL_CACHE_DIR": str(place.parent / "cache"),
        "MEMO_IMPORTS": str(place.parent / "imports.log"),
    }
    done = subprocess.run([sys.executable, "-c", CHECK], env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _imports(place: Path) -> int:
    log = place.parent / "imports.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_a_pass_is_remembered_and_not_imported_again(place):
    _write(place)
    assert [_check(place), _check(place), _check(place)] == ["None"] * 3
    assert _imports(place) == 1
    (entry,) = (place.parent / "cache" / "imports").iterdir()
    assert entry.name.startswith("memopkg-")


def test_a_changed_package_or_anything_installed_beside_it_is_imported_again(place):
    _write(place)
    assert _check(place) == "None" and _imports(place) == 1
    _write(place, body="VALUE = 2")
    assert _check(place) == "None" and _imports(place) == 2
    (place / "otherdist-1.0.dist-info").mkdir()
    assert _check(place) == "None" and _imports(place) == 3
    assert _check(place) == "None" and _imports(place) == 3


def test_a_failure_is_never_remembered(place):
    _write(place, body='raise ImportError("built for another NumPy")')
    assert [_check(place), _check(place)] == ["built for another NumPy"] * 2
    assert _imports(place) == 2
    assert not (place.parent / "cache" / "imports").exists()


def test_a_remembered_pass_that_no_longer_holds_is_worded_when_the_backend_hashes(monkeypatch, tmp_path):
    monkeypatch.setenv("NGRAMTOOL_CACHE_DIR", str(tmp_path))  # no kernel code kept: numba must run
    monkeypatch.setattr("ngramtool.hashing.backends.stored_rows._LOADED", {})
    monkeypatch.setattr(
        backends, "_import_error", lambda package: "Numba needs NumPy 2.2" if package == "numba" else None
    )
    worded = r"^the numba backend cannot run: numba is installed but does not import"
    spec = HashSpec(vocab_size=4321)
    with pytest.raises(UsageError, match=worded):
        numba = backends.BACKENDS["numba"].kernel(spec, offsets=True, negative_ids="mask", device="cpu")
        numba.rows(np.zeros(4, np.int64), np.zeros(2, np.int64), np.zeros(0, np.int64))
    kernel = backends.BACKENDS["numpy"].kernel(HashSpec(), offsets=True, negative_ids="mask", device="cpu")
    assert kernel.rows(np.zeros(4, np.int64), np.zeros(2, np.int64), np.zeros(0, np.int64)).shape[0] == 4
