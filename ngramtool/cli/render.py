"""What the commands print: tables and lines fitted to the terminal's width, JSON, progress on
stderr, and the notes and warnings that several commands share."""

from __future__ import annotations

import json
import sys
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TextIO

from rich import box
from rich.measure import Measurement
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.segment import Segment, Segments
from rich.table import Table
from rich.text import Text

from ..hashing.backends import BackendChoice, FallbackWarning
from ..util.progress import Progress as Events
from ..util.wording import plural
from .progress_lines import ProgressLines
from .terminal import Console, escape_json_controls

stdout = Console(highlight=False, soft_wrap=True)
stderr = Console(stderr=True, highlight=False, soft_wrap=True)


# ------------------------------------------------------------------------------ progress
def show_progress(quiet: bool) -> bool:
    """Progress bars only on a terminal, and never with --quiet."""
    return not quiet and stderr.is_terminal


def plain_progress(what: str, quiet: bool) -> ProgressLines:
    """Plain progress lines on stderr where no bar shows: off a terminal, unless --quiet."""
    return ProgressLines(
        what, not quiet and not stderr.is_terminal, lambda line: stderr.print(line, markup=False)
    )


@contextmanager
def status(message: str, enabled: bool = True) -> Iterator[None]:
    """A spinner on stderr while something slow happens (only on a terminal)."""
    if enabled and stderr.is_terminal:
        with stderr.status(message):
            yield
    else:
        yield


def byte_progress(enabled: bool, total: int | None) -> Progress:
    """A progress bar over input bytes, with tokens/s in the description."""
    return Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        DownloadColumn() if total else MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=stderr,
        disable=not enabled,
        transient=True,
    )


class InputProgress(Events):
    """A pass over the input as it goes, on stderr: a bar over the input bytes on a terminal (made
    by :meth:`new_bar`, open while the pass runs), plain lines off one, nothing with --quiet; each
    step a spinner. A command's subclass says what the bar shows as the pass advances."""

    def __init__(self, bar: Progress, what: str, quiet: bool) -> None:
        self.bar, self.quiet = bar, quiet
        self.task = bar.add_task(what, total=None)
        self.lines = plain_progress(what, quiet)
        self.tokens = 0
        self.started_at = time.perf_counter()

    @staticmethod
    def new_bar(quiet: bool) -> Progress:
        """The bar to make the progress with, open (``with``) while the pass runs."""
        return byte_progress(show_progress(quiet), None)

    def step(self, what: str) -> Any:
        return status(what, not self.quiet)

    def started(self, total_bytes: int | None, jobs: int, engine: str) -> None:
        self.started_at = time.perf_counter()
        self.lines.started(total_bytes)

    def advanced(self, nbytes: int, ntokens: int) -> None:
        self.lines.advanced(nbytes, ntokens)
        self.tokens += ntokens

    def rate(self) -> float:
        """Tokens per second since the pass started."""
        return self.tokens / max(time.perf_counter() - self.started_at, 1e-9)


# ------------------------------------------------------------------------------ output
def print_json(data: Any, *, to_stderr: bool = False) -> None:
    """JSON on stdout (stderr when stdout carries binary data), one document; the control characters
    that JSON leaves as they are (DEL, C1, bidirectional overrides) are escaped as well."""
    out = sys.stderr if to_stderr else sys.stdout
    out.write(escape_json_controls(json.dumps(data, indent=2, ensure_ascii=False)) + "\n")
    out.flush()


def report_table(title: str | None = None) -> Table:
    """A table of figures as the reporting commands print them: a rule under the header, no
    borders, two spaces between columns."""
    return Table(
        title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True
    )


def print_table(table: Table, drop: Sequence[str] = ()) -> None:
    """Print a table within the terminal's width (``COLUMNS``; 80 when not a terminal).

    A column made with ``no_wrap=True`` (numbers) is never cut or wrapped; the others wrap at
    spaces, widest first, so a long header or a ``measured (expected)`` cell stacks on two lines.
    If the table is still too wide, the columns named in ``drop`` are left out, in that order, and
    a note says which (every figure stays in ``--json``); if even that is not enough, it is
    printed at the width it needs. Rows are not padded with trailing spaces.
    """
    width = stdout.width
    left_out = []
    for name in drop:
        if _fit_columns(table, width) <= width:
            break
        left_out.append(name)
        table.columns = [column for column in table.columns if column.header != name]
    fitted = _fit_columns(table, width)
    if table.title:  # a line of its own, not wrapped to the table's width
        stdout.print(table.title, markup=False)
        table.title = None
    for line in stdout.render_lines(table, stdout.options.update_width(fitted), pad=False):
        stdout.print(Segments(_strip_trailing_space(line)))
    if left_out:
        stdout.print(f"(not shown at this width: {', '.join(left_out)}; see --json)", markup=False)


def _fit_columns(table: Table, width: int) -> int:
    """Give each column of ``table`` a width so that the table fits ``width`` if it can; returns
    the table's width. Long headers stack first; then wrapping columns give up space, widest
    first, down to their longest word."""
    for column in table.columns:
        column.width = None
    natural = Measurement.get(stdout, stdout.options.update_width(10_000), table).maximum
    widths = [max(map(_cell_width, [column.header, *column.cells])) for column in table.columns]
    stacked_headers = [
        wide if column.no_wrap else max(_longest_word(column.header), *map(_cell_width, column.cells))
        for column, wide in zip(table.columns, widths, strict=True)
    ]
    words = [
        wide if column.no_wrap else max(map(_longest_word, [column.header, *column.cells]))
        for column, wide in zip(table.columns, widths, strict=True)
    ]
    excess = natural - width
    for least in (stacked_headers, words):
        while excess > 0:
            slack = [i for i, (now, low) in enumerate(zip(widths, least, strict=True)) if now > low]
            if not slack:
                break
            widths[max(slack, key=lambda i: widths[i])] -= 1
            excess -= 1
    for column, fitted in zip(table.columns, widths, strict=True):
        column.width = fitted
    return width + max(excess, 0)


def _cell_text(cell: Any) -> str:
    """What a cell (rich markup or a rich Text) shows."""
    return cell.plain if isinstance(cell, Text) else Text.from_markup(str(cell)).plain


def _cell_width(cell: Any) -> int:
    """The widest line of a cell."""
    return max(Text(line).cell_len for line in _cell_text(cell).split("\n"))


def _longest_word(cell: Any) -> int:
    """The widest word of a cell: a wrapping column cannot be narrower."""
    return max((Text(word).cell_len for word in _cell_text(cell).split()), default=0)


def _strip_trailing_space(line: list[Segment]) -> list[Segment]:
    """A rendered line without the spaces that pad it to the table's width."""
    while line and not line[-1].control and not line[-1].text.strip():
        line = line[:-1]
    if line and not line[-1].control:
        last = line[-1]
        line = [*line[:-1], Segment(last.text.rstrip(), last.style)]
    return [*line, Segment.line()]


def first_only(first: bool, *cells: str) -> tuple[str, ...]:
    """Cells that a table shows on the first row of a group only (``layer``, ``n``): blank on the
    rows below it."""
    return cells if first else ("",) * len(cells)


def print_line(markup: str) -> None:
    """Print a line of rich markup within the terminal's width, wrapped as :func:`print_table`
    wraps a column: at spaces, never inside a word, and without trailing spaces."""
    line = Table.grid()
    line.add_column()
    line.add_row(markup)
    print_table(line)


# ------------------------------------------------------------------------------ notes
def say_backend(choice: BackendChoice) -> None:
    """The ``--verbose`` line that says which backend hashes where."""
    stderr.print(choice.describe(), markup=False)


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """The library's :class:`~ngramtool.hashing.backends.FallbackWarning` as one ``warning:`` line on
    stderr (a command's whole run shows it once); other warnings as Python shows them."""
    if issubclass(category, FallbackWarning):
        stderr.print(f"warning: {message}", markup=False)
    else:
        _python_show_warning(message, category, filename, lineno, file, line)


_python_show_warning = warnings.showwarning
warnings.showwarning = _show_warning  # the commands print what the library warns, in their words


def note_assumed_tokenizer(tokens_file: object, tokenizer: str, raw_ids: int, quiet: bool) -> None:
    """Say on stderr (unless --quiet) which tokenizer a token file's ids are taken to come from."""
    if not quiet:
        stderr.print(
            f"note: no --tokenizer given: the ids of {tokens_file} are taken as {tokenizer} "
            f"ids ({raw_ids:,} of them); if another tokenizer made them, name it with "
            "--tokenizer NAME (--vocab-size N for ids that are canonical already)",
            markup=False,
        )


def print_notes(notes: Sequence[str], quiet: bool) -> None:
    """The choices a reading made that a user should know (a headerless file's type), one line
    each on stderr, unless --quiet."""
    if not quiet:
        for note in notes:
            stderr.print(f"note: {note}", markup=False)


def skipped_note(count: int) -> str:
    """`` (N bad records skipped)`` for a summary line, or nothing when none were."""
    return f" ({plural(count, 'bad record')} skipped)" if count else ""


def warn_unsafe_cuts(count: int) -> None:
    """Warn (even with --quiet) when text was cut where the ids may differ from the whole text's."""
    if count:
        stderr.print(
            f"warning: {plural(count, 'text cut')} fell inside very long runs without spaces or "
            "line breaks (or, for a tokenizer that prefixes every text, inside very long documents); "
            "the ids at those cuts may differ from tokenizing the text whole",
            markup=False,
        )
