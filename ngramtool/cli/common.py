"""Options, resolution helpers and output helpers shared by the commands.

The CLI holds no algorithm: it parses, calls the library and renders.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, BinaryIO

import typer
from rich.console import Console
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
from rich.table import Table

from ..backends import BackendChoice, choose_backend
from ..errors import UsageError
from ..formats.tokenfiles import TOKEN_FORMATS
from ..spec import HashSpec
from ..tokenizers import Tokenizer, load_tokenizer
from ..vocab import CompressedVocab, build_vocab
from ..wording import plural

stdout = Console(highlight=False, soft_wrap=True)
stderr = Console(stderr=True, highlight=False, soft_wrap=True)

# ------------------------------------------------------------------------------ option types
TokenizerOpt = Annotated[
    str,
    typer.Option(
        "--tokenizer",
        "-t",
        help="tiktoken name (cl100k_base works offline), path to a *.tiktoken file, "
        "path to an HF tokenizer.json, or 'bytes'.",
    ),
]
OptionalTokenizerOpt = Annotated[
    str | None,
    typer.Option(
        "--tokenizer",
        "-t",
        help="tiktoken name, *.tiktoken file, tokenizer.json, or 'bytes'. [default: cl100k_base]",
    ),
]
TokensFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--tokens", help="Pre-tokenized raw ids (.npy, nanoGPT/llm.c/Megatron .bin, datatrove .ds)."
    ),
]
TokenFormatOpt = Annotated[
    str | None,
    typer.Option("--token-format", help=f"Format of the token file: {', '.join(TOKEN_FORMATS)}."),
]
TokenVocabSizeOpt = Annotated[
    int | None,
    typer.Option(
        "--vocab-size", help="With a token file and no --tokenizer: ids are canonical below this.", min=1
    ),
]
NoCompressOpt = Annotated[
    bool, typer.Option("--no-compress", help="Skip Engram vocabulary compression (identity map).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar or summary on stderr.")]
JsonKeyOpt = Annotated[
    str | None, typer.Option("--json-key", help="Read JSONL: one document per line, text under KEY.")
]
DocSepOpt = Annotated[
    str | None, typer.Option("--doc-sep", help="Plain text: this literal string separates documents.")
]
ErrorsOpt = Annotated[
    str, typer.Option("--errors", help="Invalid UTF-8: 'strict' (stop, name the offset) or 'replace'.")
]
MaxNgramOpt = Annotated[int, typer.Option("--max-ngram", "-n", help="N: hash orders 2..N.")]
HeadsOpt = Annotated[int, typer.Option("--heads", "-k", help="K: hash heads per order.")]
LayersOpt = Annotated[str, typer.Option("--layers", help="Engram layer ids, comma-separated.")]
TableOpt = Annotated[
    str, typer.Option("--table", help="Base table size per order 2..N (one value applies to all).")
]
SeedOpt = Annotated[int, typer.Option("--seed", help="Global seed of the multipliers.")]
PadOpt = Annotated[
    int | None,
    typer.Option(
        "--pad-id", help="RAW pad id (mapped through the vocabulary); default: the tokenizer's pad/eot."
    ),
]
WorkersOpt = Annotated[
    int | None,
    typer.Option(
        "--workers",
        "-j",
        help="Tokenizer threads (default: all cores; hash also hashes on up to 4); ids never depend on it.",
        min=1,
    ),
]
BackendOpt = Annotated[
    str,
    typer.Option(
        "--backend",
        help="Hash backend: auto, numba, numpy, torch or triton (identical rows; auto = fastest).",
    ),
]
DeviceOpt = Annotated[
    str | None, typer.Option("--device", help="Where to hash: cpu, cuda or cuda:N (default: cpu for auto).")
]
VerboseOpt = Annotated[
    bool,
    typer.Option("--verbose", "-v", help="Say which backend and device hash (hash: and where CPU went)."),
]
SpecFileOpt = Annotated[
    Path | None, typer.Option("--spec", help="Load the hash spec from a JSON file (ngramtool spec save).")
]


def parse_int_list(text: str, option: str) -> list[int]:
    """'1,15' -> [1, 15]; a clear usage error otherwise."""
    try:
        values = [_integer(part) for part in text.split(",") if part]
    except ValueError:
        raise UsageError(
            f"{option} takes comma-separated integers (1e6 style allowed), got {text!r}"
        ) from None
    if not values:
        raise UsageError(f"{option} needs at least one value")
    return values


def _integer(text: str) -> int:
    """An integer written plainly or as an exact power-of-ten form (2.2624e6); anything else fails."""
    if "e" not in text.lower():
        return int(text)
    value = float(text)
    if not value.is_integer():
        raise ValueError(text)
    return int(value)


TEXT_READING_OPTIONS = ("json_key", "doc_sep", "errors", "add_eot")
"""Parameters that only change how text is read."""
TEXT_INPUT_OPTIONS = (*TEXT_READING_OPTIONS, "workers")
"""Parameters that only change how text is read and tokenized (``hash`` also hashes on --workers)."""


def given_options(ctx: typer.Context) -> set[str]:
    """Names of the parameters the user set on the command line (or through the environment)."""
    # By name: typer ships its own copy of click, whose ParameterSource is not click's.
    explicit = ("COMMANDLINE", "ENVIRONMENT")
    return {name for name in ctx.params if getattr(ctx.get_parameter_source(name), "name", None) in explicit}


def option_name(ctx: typer.Context, parameter: str) -> str:
    """The command-line spelling of a parameter: its long option (``tokens_file`` -> ``--tokens``)."""
    param = next(p for p in ctx.command.params if p.name == parameter)
    return max(param.opts, key=len)


def refuse_idle_options(
    ctx: typer.Context, parameters: Iterable[str], applies: str, alternative: str | None = None
) -> None:
    """Refuse the ``parameters`` given on the command line: here they would do nothing.

    The usage error reads ``--x applies only <applies>: drop it[ or <alternative>]``.
    """
    explicit = given_options(ctx)
    given = [name for name in parameters if name in explicit]
    if not given:
        return
    names = ", ".join(option_name(ctx, name) for name in given)
    verb, pronoun = ("applies", "it") if len(given) == 1 else ("apply", "them")
    fix = f"drop {pronoun}" + (f" or {alternative}" if alternative else "")
    raise UsageError(f"{names} {verb} only {applies}: {fix}")


def refuse_repeated_inputs(inputs: Iterable[str]) -> None:
    """Refuse an input named twice (``-`` twice, or two names of one file): it would be read twice."""
    seen: dict[Any, str] = {}
    for name in inputs:
        key = _file_identity(name)
        if key in seen:
            shown = "stdin (-)" if name == "-" else name
            alias = f" (also as {seen[key]})" if seen[key] != name else ""
            raise UsageError(f"input {shown} is given twice{alias}: name each input once")
        seen[key] = name


def _file_identity(name: str) -> Any:
    """What tells two inputs apart: the file itself (device and inode) when it exists, else the name."""
    if name == "-":
        return name
    try:
        info = os.stat(name)
    except OSError:
        return name
    return info.st_dev, info.st_ino


SPEC_FLAGS = {
    "--max-ngram": "max_ngram",
    "--heads": "heads",
    "--layers": "layers",
    "--table": "table",
    "--seed": "seed",
    "--pad-id": "pad_id",
}


@dataclass(frozen=True)
class SpecOptions:
    """The hash-spec options as given on the command line."""

    max_ngram: int = HashSpec.max_ngram  # the defaults are HashSpec's
    heads: int = HashSpec.heads
    layers: str = ",".join(map(str, HashSpec.layer_ids))
    table: str = str(HashSpec.table_sizes[0])
    seed: int = HashSpec.seed
    pad_id: int | None = None
    spec_file: Path | None = None

    def build(
        self, vocab: CompressedVocab | None, tokenizer: Tokenizer | None, vocab_size: int | None = None
    ) -> HashSpec:
        """The HashSpec: from --spec, or from the options with V' and the pad from the vocabulary."""
        if self.spec_file is not None:
            defaults = SpecOptions(spec_file=self.spec_file)
            clash = [
                option
                for option, field in SPEC_FLAGS.items()
                if getattr(self, field) != getattr(defaults, field)
            ]
            if clash:
                raise UsageError(f"--spec gives the whole hash spec: drop {', '.join(clash)}")
            return load_spec_file(self.spec_file, vocab)
        tables = parse_int_list(self.table, "--table")
        if len(tables) == 1:
            tables = tables * max(self.max_ngram - 1, 1)
        size = vocab.size if vocab is not None else vocab_size
        if size is None:
            raise UsageError("the vocabulary size is unknown: name a --tokenizer or pass --vocab-size")
        return HashSpec(
            max_ngram=self.max_ngram,
            heads=self.heads,
            layer_ids=tuple(parse_int_list(self.layers, "--layers")),
            table_sizes=tuple(tables),
            seed=self.seed,
            pad_id=self._canonical_pad(vocab, tokenizer),
            vocab_size=size,
        )

    def pad_defaulted(self, tokenizer: Tokenizer | None) -> bool:
        """Whether nothing chose the pad (no --pad-id, --spec or tokenizer pad), so it is 0."""
        return self.spec_file is None and self._raw_pad(tokenizer) is None

    def _raw_pad(self, tokenizer: Tokenizer | None) -> int | None:
        """--pad-id, else the tokenizer's pad or end-of-text id, else None."""
        if self.pad_id is not None:
            return self.pad_id
        return tokenizer.pad_token_id if tokenizer is not None else None

    def _canonical_pad(self, vocab: CompressedVocab | None, tokenizer: Tokenizer | None) -> int:
        raw = self._raw_pad(tokenizer)
        if raw is None:
            return 0
        if vocab is None:
            return raw
        if not 0 <= raw < vocab.raw_size or int(vocab.lut[raw]) < 0:
            raise UsageError(f"--pad-id {raw} is not a token id of this tokenizer")
        return int(vocab.lut[raw])


def load_spec_file(path: Path, vocab: CompressedVocab | None) -> HashSpec:
    """A HashSpec from JSON; its vocab_size must match the vocabulary in use."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read --spec {path}: {exc.strerror}") from None
    spec = HashSpec.from_json(text)
    if vocab is not None and spec.vocab_size != vocab.size:
        raise UsageError(
            f"--spec {path} was made for V'={spec.vocab_size} but this vocabulary has "
            f"V'={vocab.size}; use the tokenizer it was made for"
        )
    return spec


def resolve_vocab(
    tokenizer_name: str, no_compress: bool, *, quiet: bool = False
) -> tuple[Tokenizer, CompressedVocab]:
    """Load the tokenizer and its compressed vocabulary (built once, then read from the cache)."""
    tokenizer = load_tokenizer(tokenizer_name)
    with status(f"preparing the compressed vocabulary of {tokenizer.name}", not (no_compress or quiet)):
        vocab = build_vocab(tokenizer, compress=not no_compress)
    return tokenizer, vocab


# ------------------------------------------------------------------------------------ output
def show_progress(quiet: bool) -> bool:
    """Progress bars only on a terminal, and never with --quiet."""
    return not quiet and stderr.is_terminal


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


def print_json(data: Any, *, to_stderr: bool = False) -> None:
    """JSON on stdout (stderr when stdout carries binary data), one document."""
    out = sys.stderr if to_stderr else sys.stdout
    out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    out.flush()


@contextmanager
def binary_input(path: str) -> Iterator[BinaryIO]:
    """stdin's bytes for ``-``, else the file opened for reading."""
    if path == "-":
        yield sys.stdin.buffer
        return
    with Path(path).open("rb") as handle:
        yield handle


def worker_count(requested: int | None) -> int:
    """--workers, defaulting to the cores this process may use.

    The count also sizes the thread pool of the HF ``tokenizers`` library (``RAYON_NUM_THREADS``,
    read when the pool first starts) unless the environment sets it already.
    """
    if requested is not None:
        count = requested
    else:
        count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    os.environ.setdefault("RAYON_NUM_THREADS", str(count))
    return count


def print_table(table: Table) -> None:
    """Print a table at its natural width: numbers are never cut (a narrow terminal wraps lines)."""
    natural = Measurement.get(stdout, stdout.options.update_width(10_000), table).maximum
    width = stdout.width
    stdout.width = max(width, natural)
    try:
        stdout.print(table)
    finally:
        stdout.width = width


def resolve_backend(backend: str, device: str | None, verbose: bool) -> BackendChoice:
    """Check --backend/--device up front; with --verbose, say on stderr what will hash."""
    choice = choose_backend(backend, device)
    if verbose:
        stderr.print(choice.describe(), markup=False)
    return choice


ForceOpt = Annotated[bool, typer.Option("--force", help="Replace an existing output file.")]


def check_output_file(
    path: Path, force: bool, inputs: list[str] | tuple[str, ...] = (), what: str = "output"
) -> None:
    """Refuse, before any work, an output that would clobber an input, a directory or (without
    --force) an existing file; create missing parent directories."""
    path = Path(path)
    if str(path) == "-":
        raise UsageError(f"the {what} must be a file path; '-' (stdout) is not supported here")
    if path.is_dir():
        raise UsageError(f"the {what} {path} is a directory; give a file path")
    if path.exists() and not path.is_file():
        raise UsageError(
            f"the {what} {path} is not a regular file (a device or a pipe): outputs are written to a "
            "temporary file and renamed into place; give a file path"
        )
    for name in inputs:
        if name != "-" and Path(name).exists() and path.exists() and path.resolve() == Path(name).resolve():
            raise UsageError(f"the {what} {path} is also an input: it would be overwritten")
    if path.exists() and not force:
        raise UsageError(f"{path} already exists; pass --force to replace it")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create the directory of {path}: {exc.strerror}") from None


def warn_unsafe_cuts(count: int) -> None:
    """Warn (even with --quiet) when text was cut where the ids may differ from the whole text's."""
    if count:
        stderr.print(
            f"warning: {plural(count, 'text cut')} fell inside very long runs without spaces or "
            "line breaks (or, for a tokenizer that prefixes every text, inside very long documents); "
            "the ids at those cuts may differ from tokenizing the text whole",
            markup=False,
        )
