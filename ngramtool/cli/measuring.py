"""What the measuring commands (``collisions``, ``cache``) share: reading options whose --errors
defaults to an index's, the progress of a counting pass, the --plot file, and the files written
beside the report."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from ..util.atomic import check_output_file, staged_file
from ..util.errors import NgramToolError, UsageError
from .options import CORPUS_FILES, STDIN_DEFAULT, ReadingOptions, corpus_inputs
from .render import InputProgress, stderr

PLOT_SUFFIXES = {".png", ".pdf", ".svg"}

MeasuredInputs = Annotated[
    list[str] | None,
    corpus_inputs(f"{CORPUS_FILES} {STDIN_DEFAULT}, an index directory, or one token file."),
]
MaxTokensOpt = Annotated[
    int | None, typer.Option("--max-tokens", help="Read only the first N tokens.", min=1)
]


@dataclass(frozen=True)
class MeasuredReadingOptions(ReadingOptions):
    """The reading options, --errors defaulting to an index's."""

    errors: Annotated[
        str | None,
        typer.Option(
            "--errors",
            help="Bad input: 'strict' (stop, name the offset or line), 'replace' (invalid UTF-8 -> U+FFFD) "
            "or, for records (JSONL, parquet, datasets), 'skip' (skip and count bad records). "
            "[default: strict]",
            show_default=False,
        ),
    ] = None


MEASURED_READING_OPTIONS = MeasuredReadingOptions.placeholder()


class CountingProgress(InputProgress):
    """A progress bar over the input bytes (on a terminal) with the counting rate, or plain lines
    (off a terminal)."""

    def __init__(self, bar: Any, quiet: bool) -> None:
        super().__init__(bar, "counting", quiet)

    def started(self, total_bytes: int | None, jobs: int, engine: str) -> None:
        super().started(total_bytes, jobs, engine)
        self.bar.update(self.task, total=total_bytes)

    def advanced(self, nbytes: int, ntokens: int) -> None:
        super().advanced(nbytes, ntokens)
        self.bar.update(self.task, advance=nbytes, description=f"counting {self.rate() / 1e6:.2f}M tok/s")


def plot_figure(plot: Path, force: bool, inputs: Sequence[str]) -> type:
    """matplotlib's Figure for the --plot file ``plot``, checked before the long pass: a usage
    error for a file that exists (without --force), is an input, or has a suffix no format has;
    a one-line error saying how to get matplotlib when it is missing."""
    try:
        from matplotlib.figure import Figure  # no pyplot, no GUI backend
    except ImportError:
        raise NgramToolError("--plot needs matplotlib: pip install 'ngramtool[plot]'") from None
    check_output_file(plot, force, inputs, what="--plot file")
    if plot.suffix.lower() not in PLOT_SUFFIXES:
        raise UsageError(f"--plot {plot}: use one of {', '.join(sorted(PLOT_SUFFIXES))}")
    return Figure


def save_plot(figure: Any, path: Path) -> None:
    """Write ``figure`` to ``path`` in the format its suffix names, beside it and renamed into
    place, as every output."""
    try:
        with staged_file(path) as tmp, tmp.open("wb") as handle:
            figure.savefig(handle, dpi=120, format=path.suffix.lstrip(".").lower())
    except OSError as exc:
        raise NgramToolError(f"cannot write the plot {path}: {exc.strerror}") from None


class SideOutputs:
    """The files a measuring command writes beside its report (--plot, --save-types), said after
    the report: ``wrote FILE`` on stderr (unless quiet), or the failure. A failed file never costs
    the report: every file is tried, the report printed, then :meth:`finish` fails (exit 1)."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.written: list[Path] = []
        self.failures: list[NgramToolError] = []

    def write(self, path: Path, write: Callable[[], None]) -> None:
        """Write ``path`` with ``write``, keeping its failure for :meth:`finish`."""
        try:
            write()
        except NgramToolError as exc:
            self.failed(exc)
        else:
            self.wrote(path)

    def wrote(self, path: Path) -> None:
        """``path`` was written (by the library, while measuring)."""
        self.written.append(path)

    def failed(self, error: NgramToolError) -> None:
        """A file could not be written (by the library: its figures stand)."""
        self.failures.append(error)

    def finish(self) -> None:
        """Say what was written; then raise the failure (several: one line naming each)."""
        sys.stdout.flush()  # the report first
        if not self.quiet:
            for path in self.written:
                stderr.print(f"wrote {path}", markup=False)
        if len(self.failures) == 1:
            raise self.failures[0]
        if self.failures:
            raise NgramToolError("; ".join(map(str, self.failures)))
