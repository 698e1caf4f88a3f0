"""Every public function's docstring example runs and prints what it shows.

The examples run in a directory that holds the bundled corpus as ``corpus.txt`` and its index
``corpus.ngidx`` (``ngramtool hash corpus.txt -o corpus.ngidx``), as a reader would have them.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import shutil
from pathlib import Path

import pytest
from conftest import CORPUS

import ngramtool

MODULES = (
    "ngramtool.analysis.measurement",
    "ngramtool.analysis.row_cache",
    "ngramtool.analysis.sizing",
    "ngramtool.hashing.backends.barrier",
    "ngramtool.api",
    "ngramtool.formats.artifacts",
    "ngramtool.tools.describe",
    "ngramtool.util.errors",
    "ngramtool.tools.engine_constants",
    "ngramtool.tools.engine_files",
    "ngramtool.tools.engine_vectors",
    "ngramtool.tools.explain",
    "ngramtool.tools.export",
    "ngramtool.formats.dataset",
    "ngramtool.formats.stream",
    "ngramtool.formats.tokenfiles.reading",
    "ngramtool.formats.tokenfiles.registry",
    "ngramtool.hashing.hasher",
    "ngramtool.inputs.chat",
    "ngramtool.inputs.fields",
    "ngramtool.inputs.sources",
    "ngramtool.util.lookup",
    "ngramtool.model.mapping",
    "ngramtool.model.configs",
    "ngramtool.model.presets",
    "ngramtool.hashing.rawrows",
    "ngramtool.hashing.serving",
    "ngramtool.run.request",
    "ngramtool.spec.hashspec",
    "ngramtool.tools.tokenization",
    "ngramtool.tokenizers",
    "ngramtool.tokenizers.load",
    "ngramtool.torch.collate",
    "ngramtool.torch.rows",
    "ngramtool.tools.verify",
    "ngramtool.tokenizers.vocab",
)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def examples() -> list[doctest.DocTest]:
    """Every docstring with an example in MODULES."""
    finder = doctest.DocTestFinder(exclude_empty=True)
    found = []
    for name in MODULES:
        found += [test for test in finder.find(importlib.import_module(name)) if test.examples]
    return sorted(found, key=lambda test: test.name)


@pytest.fixture(scope="module")
def reader_directory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with corpus.txt and corpus.ngidx in it."""
    folder = tmp_path_factory.mktemp("doctests")
    shutil.copy(CORPUS, folder / "corpus.txt")
    ngramtool.hash_files([str(folder / "corpus.txt")], str(folder / "corpus.ngidx"))
    return folder


@pytest.mark.parametrize("test", examples(), ids=lambda test: test.name.removeprefix("ngramtool."))
def test_docstring_examples_run(test: doctest.DocTest, reader_directory: Path, monkeypatch) -> None:
    monkeypatch.chdir(reader_directory)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report: list[str] = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


def test_every_public_name_has_an_example():
    documented = {test.name.rpartition(".")[2] for test in examples()}
    for name in ngramtool.__all__:
        value = getattr(ngramtool, name)
        if inspect.isfunction(value) or inspect.isclass(value):
            assert name in documented, f"ngramtool.{name} has no example in its docstring"
