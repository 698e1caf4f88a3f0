"""Shared fixtures and helpers: golden data from tests/data, offline caches, small specs, and the
one ``run()`` that drives the command line in a subprocess (the CLI tests' only way in)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ngramtool.spec import HashSpec
from ngramtool.tokenizers import load_tokenizer
from ngramtool.vocab import CompressedVocab, build_vocab

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "examples" / "corpus.txt"
NGRAMTOOL = (sys.executable, "-m", "ngramtool")


@pytest.fixture(scope="session", autouse=True)
def _offline_caches(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every test runs with an empty tiktoken cache and its own vocabulary cache: nothing downloads."""
    os.environ["TIKTOKEN_CACHE_DIR"] = str(tmp_path_factory.mktemp("tiktoken-cache"))
    os.environ["NGRAMTOOL_CACHE_DIR"] = str(tmp_path_factory.mktemp("ngramtool-cache"))


def run(
    *args: object,
    stdin: bytes | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess:
    """``ngramtool ARGS...`` in a subprocess, as users run it (stdout and stderr captured as bytes)."""
    return subprocess.run(
        [*NGRAMTOOL, *map(str, args)],
        input=stdin,
        capture_output=True,
        cwd=cwd,
        env=None if env is None else {**os.environ, **env},
        timeout=timeout,
    )


def run_json(*args: object, cwd: Path | None = None) -> dict:
    """``ngramtool ARGS... --json``: its exit status must be 0; returns the JSON it printed."""
    result = run(*args, "--json", cwd=cwd)
    assert result.returncode == 0, result.stderr.decode()
    return json.loads(result.stdout)


def assert_one_line_error(result: subprocess.CompletedProcess, code: int, fragment: str) -> None:
    """The command failed with ``code`` and one ``error:`` line containing ``fragment``."""
    err = result.stderr.decode()
    assert result.returncode == code, err
    assert "Traceback" not in err
    assert fragment in err, err


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first ~40 KB of the bundled corpus, as two files."""
    folder = tmp_path_factory.mktemp("sample")
    text = CORPUS.read_text(encoding="utf-8")
    (folder / "a.txt").write_text(text[:20000], encoding="utf-8")
    (folder / "b.txt").write_text(text[20000:40000], encoding="utf-8")
    return folder


def load_json(name: str) -> dict:
    """A golden file from tests/data."""
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def spec_from_golden(config: dict) -> HashSpec:
    """The HashSpec of a golden configuration (pad is the compressed pad id)."""
    return HashSpec(
        max_ngram=config["max_ngram_size"],
        heads=config["n_head_per_ngram"],
        layer_ids=tuple(config["layer_ids"]),
        table_sizes=tuple(config["engram_vocab_size"]),
        seed=config["seed"],
        pad_id=config.get("pad_id_compressed", config["pad_id"]),
        vocab_size=config["compressed_vocab_size"],
    )


@pytest.fixture(scope="session")
def hash_golden() -> dict:
    return load_json("hash_small.json")


@pytest.fixture(scope="session")
def deepseek_tokenizer_path() -> Path:
    return DATA / "tokenizers" / "deepseek-v3.tokenizer.json.gz"


@pytest.fixture(scope="session")
def deepseek_vocab(deepseek_tokenizer_path: Path) -> CompressedVocab:
    """The DeepSeek-V3 tokenizer's compressed vocabulary (the golden vectors' lookup table)."""
    return build_vocab(load_tokenizer(str(deepseek_tokenizer_path)))


def golden_rows(case: dict) -> np.ndarray:
    """A golden case's rows as one array [B, T, L, C]."""
    return np.stack([layer["embedding_rows"] for layer in case["layers"]], axis=2)


@pytest.fixture(scope="session")
def r50k_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The r50k_base ranks unzipped under their encoding name."""
    dest = tmp_path_factory.mktemp("ranks") / "r50k_base.tiktoken"
    with gzip.open(DATA / "tokenizers" / "r50k_base.tiktoken.gz") as src, dest.open("wb") as out:
        shutil.copyfileobj(src, out)
    return dest


@pytest.fixture(scope="session")
def small_spec() -> HashSpec:
    """Small tables so that collisions and all code paths are exercised quickly."""
    return HashSpec(
        max_ngram=3, heads=2, layer_ids=(0, 5), table_sizes=(1000, 1500), pad_id=1, vocab_size=500
    )


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--update-docs``: tests/test_docs.py writes real outputs into the pages instead of failing."""
    parser.addoption(
        "--update-docs",
        action="store_true",
        default=False,
        help="write what the documented commands print into README.md and docs/*.md",
    )
