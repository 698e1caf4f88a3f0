"""Run the examples of README.md and docs/*.md, with sybil, and compare what they print.

Every page runs in its own directory (a copy of ``examples/``, and ``tests/data``), in order,
as a reader who types its blocks one after another would run them:

- a ```` ```console ```` block is a terminal session: each ``$ COMMAND`` line (a line ending in
  ``\\`` continues it) runs in bash, and what it prints (stdout and stderr together) must equal
  the lines below it, up to the next ``$`` line, once :func:`mask` has replaced what changes from
  run to run (timings, rates, dates, temporary paths) on both sides;
- a ```` ```python ```` block runs (a ``>>>`` block as a doctest); an HTML comment
  ``<!-- invisible-code-block: python -->`` runs too, unseen: it prepares files a block needs;
- ``<!-- skip: next "KIND: why" -->`` before a block leaves it out, where KIND is ``gpu`` (it
  needs a CUDA GPU), ``benchmark`` (minutes, machine-dependent figures) or ``training`` (a
  training run); tests/test_docs.py refuses any other skip. That is the one marker.

Other blocks (```` ```bash ```` without output, ```` ```json ````, untagged) are not run.
:func:`run_page` returns each mismatch; with ``update=True`` it writes what the commands really
printed into the page instead (``python -m pytest tests/test_docs.py --update-docs``).
"""

from __future__ import annotations

import contextlib
import difflib
import doctest
import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from unittest import SkipTest

from sybil import Example, Sybil
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser

REPO = Path(__file__).resolve().parent.parent
PAGES = (REPO / "README.md", *sorted((REPO / "docs").glob("*.md")))
COLUMNS = 80
"""The terminal width the examples are run (and shown) at."""
COMMAND_TIMEOUT_S = 300
PAGE_TIMEOUT_S = 900
SHOWN_DIRECTORY = "/tmp/docs"
"""How a page's own directory is written in the outputs the update writes."""

# What differs from one run to the next, masked the same way on both sides.
_MASKS = (
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:\d\d|Z)?"), "<DATE>"),
    (re.compile(r"\b\d+(\.\d+)? ?([kKMG]|Mtok|Ktok)?( tok| tokens)?/s\b"), "<RATE>/s"),
    (re.compile(r"\b\d+(\.\d+)? s\b"), "<SECONDS> s"),
    (re.compile(r"\b\d+(\.\d+)? cores busy\b"), "<CORES> cores busy"),
    # The progress line's durations: "ETA 2m05s (1m40s elapsed)".
    (re.compile(r"\bETA \d[\dhms]*"), "ETA <DURATION>"),
    (re.compile(r"\(\d[\dhms]* elapsed\)"), "(<DURATION> elapsed)"),
    (re.compile(r"\b\d+(\.\d+)? ?(ms|µs)\b"), "<SECONDS> ms"),
    # Timings and their derivatives in JSON: a float (an int for a rate) under a timing key.
    (
        re.compile(
            r'("(?:\w*seconds|tokens_per_second|cores_busy|tokenize|canonicalize|hash|write|sha256|xxh3-128|'
            r'peak_rss\w*|\w*_per_second)": )-?\d+(\.\d+)?(e-?\d+)?'
        ),
        r"\1<TIME>",
    ),
    (re.compile(r"(?<![\w.])/(?:tmp|var/tmp|private/tmp)/[^\s'\"]*"), "<TMP>"),
    # The modification time in `ls -l`: "Dec  1 04:37".
    (re.compile(r"\b[A-Z][a-z]{2} [ \d]\d \d\d:\d\d\b"), "<MTIME>"),
    (re.compile(r"\.partial\.[0-9a-z]{6,}|\.[0-9a-z]{8}\.partial"), ".<RANDOM>.partial"),
)


def mask(text: str) -> str:
    """``text`` with what changes from run to run replaced, trailing spaces and blank lines gone."""
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return "\n".join(line.rstrip() for line in text.rstrip("\n").split("\n")).strip("\n")


# ------------------------------------------------------------------------------ console blocks
@dataclass
class Command:
    """One ``$`` command of a console block and the output the page shows for it."""

    line: int  # 0-based line of the ``$`` within the block's source
    source: list[str]  # the command's lines as shown, ``$ `` included
    expected: list[str]

    @property
    def script(self) -> str:
        """The command as bash reads it."""
        return "\n".join(self.source)[2:]


def parse_console(source: str) -> list[Command]:
    """The commands of a console block; text before the first ``$`` line is an error."""
    commands: list[Command] = []
    continued = False
    for number, line in enumerate(source.rstrip("\n").split("\n")):
        if continued:
            commands[-1].source.append(line)
        elif line.startswith("$ ") or line == "$":
            commands.append(Command(number, [line], []))
        elif commands:
            commands[-1].expected.append(line)
        else:
            raise ValueError(f"a console block must start with a '$ ' line, not {line!r}")
        continued = not commands[-1].expected and line.endswith("\\")
    return commands


@dataclass
class Mismatch:
    """A command whose output is not what the page shows."""

    path: Path
    line: int  # 1-based line of the ``$`` in the page
    command: str
    expected: str
    actual: str

    def __str__(self) -> str:
        diff = difflib.unified_diff(
            self.expected.split("\n"), self.actual.split("\n"), "shown", "printed", lineterm="", n=2
        )
        return f"{self.path.relative_to(REPO)}:{self.line}: $ {self.command}\n" + "\n".join(diff)


@dataclass
class Page:
    """What running one page gathers: its mismatches, skipped blocks, and updated blocks."""

    path: Path
    directory: Path
    env: dict[str, str]
    update: bool = False
    mismatches: list[Mismatch] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    replacements: list[tuple[int, int, str]] = field(default_factory=list)


class ConsoleEvaluator:
    """Runs a console block in the page's directory and compares each command's output."""

    def __init__(self, page: Page) -> None:
        self.page = page

    def __call__(self, example: Example) -> None:
        commands = parse_console(str(example.parsed))
        outputs = run_commands([command.script for command in commands], self.page)
        changed = False
        for command, actual in zip(commands, outputs, strict=True):
            expected = "\n".join(command.expected)
            if mask(expected) == mask(actual):
                continue
            if self.page.update:
                command.expected = actual.rstrip("\n").split("\n") if actual.strip() else []
                changed = True
            else:
                line = example.line + 1 + command.line
                self.page.mismatches.append(
                    Mismatch(self.page.path, line, command.script, expected, actual.rstrip("\n"))
                )
        if changed:
            self.page.replacements.append(block_replacement(example, commands))


def run_commands(scripts: list[str], page: Page) -> list[str]:
    """Run ``scripts`` one after another in one bash, as typed; return what each printed."""
    sentinel = f"--- {uuid.uuid4().hex} ---"
    lines = ["exec 2>&1"]
    for script in scripts:
        lines += [script, f"__rc=$?; printf '\\n%s\\n' '{sentinel}'; (exit $__rc)"]
    result = subprocess.run(
        ["bash", "-c", "\n".join(lines)],
        cwd=page.directory,
        env=page.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        timeout=COMMAND_TIMEOUT_S,
        check=False,
    )
    text = result.stdout.decode("utf-8", errors="backslashreplace").replace(
        str(page.directory), SHOWN_DIRECTORY
    )
    pieces = text.split(f"\n{sentinel}\n")
    outputs = pieces[: len(scripts)]
    if len(outputs) < len(scripts):  # the shell stopped early (an `exit` in the block)
        outputs += ["<the shell stopped before this command>"] * (len(scripts) - len(outputs))
    return outputs


def block_replacement(example: Example, commands: list[Command]) -> tuple[int, int, str]:
    """The span of the block's source in the page and its text with the new outputs."""
    text = example.document.text
    start = example.region.start
    fence_line_start = text.rfind("\n", 0, start) + 1
    prefix = text[fence_line_start:start]
    body_start = text.index("\n", start) + 1
    body_end = text.rindex("\n", start, example.region.end) + 1
    lines = [line for command in commands for line in (*command.source, *command.expected)]
    body = "".join(f"{prefix}{line}\n" if line else "\n" for line in lines)
    return body_start, body_end, body


# ------------------------------------------------------------------------------ one page
def docs_environment(bin_directory: Path) -> dict[str, str]:
    """The environment the examples run in: this checkout's ngramtool first on the PATH, a fixed
    width, no colour, and none of the variables that would change what a command does."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("SLURM_", "NGRAMTOOL_TEST", "TRITON_", "RAY_", "FORCE_", "PY_COLOR"))
        and key
        not in {"RANK", "WORLD_SIZE", "LOCAL_RANK", "SOURCE_DATE_EPOCH", "TERMINAL_WIDTH", "GITHUB_ACTIONS"}
        and key not in {"NO_COLOR", "CLICOLOR_FORCE", "TTY_COMPATIBLE", "LINES"}
    }
    env.update(
        COLUMNS=str(COLUMNS),
        LC_ALL="C.UTF-8",
        PYTHONUNBUFFERED="1",
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        PATH=os.pathsep.join([str(bin_directory), str(Path(sys.executable).parent), os.environ["PATH"]]),
    )
    return env


def install_command(bin_directory: Path) -> None:
    """An ``ngramtool`` executable that runs this interpreter on this checkout."""
    bin_directory.mkdir(parents=True, exist_ok=True)
    script = bin_directory / "ngramtool"
    script.write_text(
        f"#!{sys.executable}\nimport sys\nfrom ngramtool.cli.app import main\nsys.exit(main())\n",
        encoding="utf-8",
    )
    script.chmod(0o755)


def prepare_directory(directory: Path) -> None:
    """What a reader has beside them: the bundled examples and the test data's tokenizers."""
    shutil.copytree(REPO / "examples", directory / "examples", ignore=shutil.ignore_patterns("*.ngidx"))
    (directory / "tests").mkdir()
    (directory / "tests" / "data").symlink_to(REPO / "tests" / "data")


def make_sybil(page: Page) -> Sybil:
    """The parsers of a page: skip markers, console blocks and Python blocks."""
    return Sybil(
        parsers=[
            SkipParser(),
            CodeBlockParser("console", ConsoleEvaluator(page)),
            PythonCodeBlockParser(doctest_optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE),
        ],
    )


def run_page(page: Page) -> Page:
    """Run every example of ``page`` in its directory, in order; with ``update`` write the new
    outputs into the page."""
    prepare_directory(page.directory)
    os.chdir(page.directory)  # for the Python blocks: this runs in a process of its own
    document = make_sybil(page).parse(page.path)
    for example in document.examples():
        try:
            example.evaluate()
        except SkipTest as reason:
            page.skipped.append(f"{page.path.name}:{example.line}: {reason}")
        except Exception as error:  # a Python block that failed
            page.mismatches.append(
                Mismatch(page.path, example.line, "(python block)", "", f"{type(error).__name__}: {error}")
            )
    if page.replacements:
        write_replacements(page)
    return page


def write_replacements(page: Page) -> None:
    """Put the updated blocks into the page (from the last, so that earlier offsets hold)."""
    text = page.path.read_text(encoding="utf-8")
    for start, end, body in sorted(page.replacements, reverse=True):
        text = text[:start] + body + text[end:]
    page.path.write_text(text, encoding="utf-8")


def start_page(path: Path, directory: Path, env: dict[str, str], update: bool) -> subprocess.Popen:
    """Run one page in a process of its own (pages run side by side); see :func:`page_report`."""
    return subprocess.Popen(
        [sys.executable, __file__, str(path), str(directory), *(["--update"] if update else [])],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def page_report(process: subprocess.Popen) -> dict[str, list[str]]:
    """What :func:`main` of a page's process reported: its mismatches and skipped blocks."""
    out, err = process.communicate(timeout=PAGE_TIMEOUT_S)
    assert process.returncode == 0, err
    return json.loads(out)


def main(argv: list[str]) -> int:
    """``markdown_docs.py PAGE DIRECTORY [--update]``: run a page, print a JSON report."""
    path, directory = Path(argv[0]), Path(argv[1])
    with contextlib.redirect_stdout(sys.stderr):  # what the Python blocks print is not the report
        page = run_page(Page(path, directory, dict(os.environ), update="--update" in argv))
    print(json.dumps({"mismatches": [str(m) for m in page.mismatches], "skipped": page.skipped}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
