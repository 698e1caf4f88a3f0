"""The documentation's examples run and print what the pages show (see tests/markdown_docs.py).

``python -m pytest tests/test_docs.py --update-docs`` writes what the commands print now into
the pages instead of failing; review the change with ``git diff``.
"""

from __future__ import annotations

import os
import re
import subprocess
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from markdown_docs import PAGES, REPO, docs_environment, install_command, page_report, start_page

PAGE_IDS = [str(path.relative_to(REPO)) for path in PAGES]
FENCE = re.compile(r"^[ \t]*```(\w*)\n(.*?)^[ \t]*```", re.M | re.S)
SKIP_MARKER = re.compile(r"^[ \t]*<!--\s*skip\b(.*?)-->", re.M | re.S)
SKIP_KINDS = ("gpu", "benchmark", "training", "network", "system")
"""What a skipped block may need: a GPU, a benchmark's time and machine, a training run's time,
the network (a Hub dataset), or the system (a mount as root, a shell's background job, a Slurm
cluster): tests that run the same code offline are named in the page."""


@pytest.fixture(scope="module")
def page_runs(tmp_path_factory: pytest.TempPathFactory, request) -> dict[Path, Future]:
    """Every page running, one process per page, as many at once as there are cores."""
    bin_directory = tmp_path_factory.mktemp("docs-bin")
    install_command(bin_directory)
    env = docs_environment(bin_directory)
    update = request.config.getoption("update_docs")

    def run(path: Path) -> dict[str, list[str]]:
        process: subprocess.Popen = start_page(path, tmp_path_factory.mktemp("page"), env, update)
        return page_report(process)

    pool = ThreadPoolExecutor(max_workers=min(4, len(os.sched_getaffinity(0))))
    request.addfinalizer(pool.shutdown)
    return {path: pool.submit(run, path) for path in PAGES}


@pytest.mark.parametrize("path", PAGES, ids=PAGE_IDS)
def test_page_examples_print_what_the_page_shows(path: Path, page_runs: dict[Path, Future]) -> None:
    report = page_runs[path].result()
    assert not report["mismatches"], "\n\n".join(report["mismatches"])


@pytest.mark.parametrize("path", PAGES, ids=PAGE_IDS)
def test_every_transcript_is_a_console_block(path: Path) -> None:
    """A block that shows a ``$`` command is tagged ``console``, so that it runs."""
    for language, body in FENCE.findall(path.read_text(encoding="utf-8")):
        first = body.lstrip().split("\n", 1)[0]
        if first.startswith("$ "):
            assert language == "console", (
                f"{path.name}: untested transcript ({language or 'untagged'}): {first}"
            )


@pytest.mark.parametrize("path", PAGES, ids=PAGE_IDS)
def test_only_blocks_that_cannot_run_here_are_skipped(path: Path) -> None:
    """Every skip marker leaves out the one next block, saying why, and the reason is one of
    SKIP_KINDS: everything else runs on a CPU, offline, in seconds."""
    kinds = "|".join(SKIP_KINDS)
    for marker in SKIP_MARKER.findall(path.read_text(encoding="utf-8")):
        assert re.fullmatch(rf': next "({kinds}): [^"]+"\s*', marker), (
            f'{path.name}: skip{marker}: write skip: next "KIND: why" with KIND one of {SKIP_KINDS}'
        )
