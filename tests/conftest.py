"""Shared fixtures and helpers: golden data from tests/data, offline caches, small specs, and the
one ``run()`` that drives the command line in a subprocess (the CLI tests' only way in)."""

from __future__ import annotations

import compileall
import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import hypothesis
import numpy as np
import pytest

from ngramtool import NgramHashMapping, hash_files
from ngramtool.spec.hashspec import HashSpec
from ngramtool.tokenizers import load_tokenizer
from ngramtool.tokenizers.vocab import CompressedVocab, build_vocab

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "examples" / "corpus.txt"
NGRAMTOOL = (sys.executable, "-m", "ngramtool")

# No property test has a deadline: on a shared machine one example can wait 250 ms for a CPU, and
# hypothesis's default would fail it as "unreliable". Tests' own settings build on this profile.
hypothesis.settings.register_profile("suite", deadline=None)
hypothesis.settings.load_profile("suite")


@pytest.fixture(scope="session", autouse=True)
def _compiled_sources() -> None:
    """The package byte-compiled once, so that the commands the tests start do not each compile
    every module again where ``PYTHONDONTWRITEBYTECODE`` is set (CI's machines set it): about a
    third of a second per command."""
    compileall.compile_dir(REPO / "ngramtool", quiet=2, workers=0)


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
    assert "Usage:" not in err and "\u256d" not in err, f"a boxed usage error, not one line: {err}"
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
    parser.addoption(
        "--update-pins",
        action="store_true",
        default=False,
        help="write the digests of the commands' outputs into tests/data/pinned_outputs.json",
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """Two small text files (ASCII, so bytes are ids), an index of both, and a token file."""
    folder = tmp_path_factory.mktemp("analysis")
    text = CORPUS.read_text(encoding="utf-8").encode("ascii", "ignore").decode()
    (folder / "a.txt").write_text(text[1000:4000], encoding="ascii")
    (folder / "b.txt").write_text(text[9000:10500], encoding="ascii")
    np.save(folder / "ids.npy", np.random.default_rng(2).integers(0, 300, 2000).astype(np.uint32))
    index = folder / "ab.ngidx"
    hash_files(
        [folder / "a.txt", folder / "b.txt"],
        index,
        mapping=NgramHashMapping.build("bytes", compress=False, heads=2, layer_ids=[0, 9], table_sizes=101),
        boundary="reset",
    )
    return {"a": folder / "a.txt", "b": folder / "b.txt", "index": index, "ids": folder / "ids.npy"}


SPEC = {"heads": 2, "table_sizes": 3001, "tokenizer": "bytes"}


def hash_corpus_shards(root: Path, count: int, chars: int, *, empty: bool = False) -> Path:
    """``root/out/``: a sharded run over ``count`` pieces of ``chars`` characters of the corpus
    (``p0.txt``, ...), and with ``empty`` one empty file after them."""
    inputs = root / "in"
    inputs.mkdir()
    text = CORPUS.read_text(encoding="utf-8")
    for i in range(count):
        (inputs / f"p{i}.txt").write_text(text[i * chars : (i + 1) * chars], encoding="utf-8")
    if empty:
        (inputs / f"p{count}.txt").write_text("", encoding="utf-8")
    out = root / "out"
    hash_files(str(inputs / "p*.txt"), f"{out}/", mapping=NgramHashMapping.build(**SPEC))
    return out


_MAPPING_FIELDS = ("tokenizer", "spec", "special", "vocab_size", "max_ngram", "heads", "layer_ids",
                   "table_sizes", "seed", "pad_id")  # fmt: skip
_READING = ("input_format", "text_key", "doc_sep", "errors", "add_eot", "eot_token")
_OUTPUTS = ("rows", "checksum", "save_tokens", "save_format", "force")
_RUN = ("workers", "backend", "device", "shard_index", "num_shards", "resume", "engine", "ray_address")


def grouped(source: object, **settings: object) -> tuple[object, dict[str, object]]:
    """(the source, the keyword arguments) of :func:`ngramtool.hash_files` for settings named one by
    one (for tests parametrized over them): the tokenizer and spec fields become the mapping
    (``no_compress``: its identity vocabulary), reading options a CorpusReader, the rest the groups."""
    from ngramtool import CorpusReader, OutputOptions, RunOptions

    def take(names: tuple[str, ...]) -> dict[str, object]:
        return {name: settings.pop(name) for name in names if name in settings}

    mapping = take(_MAPPING_FIELDS)
    compress = not settings.pop("no_compress", False)
    reading = take(_READING)
    if reading:
        paths = (source,) if isinstance(source, str | Path) else tuple(source)  # type: ignore[arg-type]
        source = CorpusReader(paths, **reading)  # type: ignore[arg-type]
    options: dict[str, object] = {"boundary": settings.pop("boundary", "none")}
    if mapping or not compress:
        options["mapping"] = NgramHashMapping.build(
            **{"tokenizer": "cl100k_base", **mapping}, compress=compress
        )  # type: ignore[arg-type]
    options["outputs"] = OutputOptions(**take(_OUTPUTS))  # type: ignore[arg-type]
    options["run"] = RunOptions(**take(_RUN))  # type: ignore[arg-type]
    assert not settings, f"not a hash setting: {sorted(settings)}"
    return source, options


def corpus_prefix(folder: Path, name: str, chars: int) -> Path:
    """``folder/name``: the first ``chars`` characters of the bundled corpus."""
    path = folder / name
    path.write_text(CORPUS.read_text(encoding="utf-8")[:chars], encoding="utf-8")
    return path
