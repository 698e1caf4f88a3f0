"""The command line's options and arguments: the typer types the commands share, the parsing of
their values, and the checks of which were given.

The CLI holds no algorithm: it parses, calls the library and renders (:mod:`.render`). Library
errors name the parameters of the function called; :func:`option_for` spells them as this command
line's options.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import UsageError, idle_parameters
from ..formats.tokenfiles import READ_FORMATS
from ..spec import HashSpec

# ------------------------------------------------------------------------------ option types
CorpusInputsArg = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="INPUT",
        help="Corpus files (text, JSONL, compressed, parquet, datasets directories) or - for stdin "
        "[default: stdin when it is not a terminal].",
        show_default=False,
    ),
]
"""The INPUT argument of the commands that read a corpus (hash, tokenize)."""
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
    typer.Option(
        "--token-format",
        help=f"Format of the token file: {', '.join(READ_FORMATS)} (raw: a headerless memmap, OLMo/Dolma).",
    ),
]
TokenDtypeOpt = Annotated[
    str | None,
    typer.Option("--token-dtype", help="Token type of a raw (headerless) token file: uint16 or uint32."),
]
EosIdOpt = Annotated[
    int | None,
    typer.Option(
        "--eos-id",
        help="Cut a token file that records no documents after each of these ids (OLMo's EOS).",
        min=0,
    ),
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
TextKeyOpt = Annotated[
    str | None,
    typer.Option(
        "--text-key",
        "--json-key",
        help="The key (JSONL) or column (parquet, datasets) that holds the text [default: text]; naming it "
        "reads an input of no known suffix (or stdin) as JSONL. --json-key is its older name.",
        show_default=False,
    ),
]
FormatOpt = Annotated[
    str | None,
    typer.Option(
        "--format",
        help="Form of every INPUT: text, jsonl, parquet or arrow (default: from each name; compression "
        "is recognized by its first bytes). See docs/inputs.md.",
        show_default=False,
    ),
]
DocSepOpt = Annotated[
    str | None, typer.Option("--doc-sep", help="Plain text: this literal string separates documents.")
]
ErrorsOpt = Annotated[
    str,
    typer.Option(
        "--errors",
        help="Bad input: 'strict' (stop, name the offset or line), 'replace' (invalid UTF-8 -> U+FFFD) "
        "or, for records (JSONL, parquet, datasets), 'skip' (skip and count bad records).",
    ),
]
SpecialOpt = Annotated[
    str | None,
    typer.Option(
        "--special",
        help="Special-token strings in the text: 'none' (plain text), 'all' (each becomes its id) or "
        "NAME,... (only those). Default: as the tokenizer library does (HF tokenizer.json: ids, "
        "tiktoken: text).",
        show_default=False,
    ),
]
AddEotOpt = Annotated[
    bool,
    typer.Option(
        "--add-eot",
        help="Append the end-of-sequence token after each document (tokenizer_config.json eos_token, "
        "the post-processor's, tiktoken's <|endoftext|>, or --eot-token).",
    ),
]
EotTokenOpt = Annotated[
    str | None,
    typer.Option("--eot-token", help="With --add-eot: the end-of-sequence token to append, by its string."),
]
# Spec options default to None (not given): the library fills them from --preset or HashSpec.
MaxNgramOpt = Annotated[
    int | None,
    typer.Option("--max-ngram", "-n", help="N: hash orders 2..N.", show_default=str(HashSpec.max_ngram)),
]
HeadsOpt = Annotated[
    int | None,
    typer.Option("--heads", "-k", help="K: hash heads per order.", show_default=str(HashSpec.heads)),
]
LayersOpt = Annotated[
    str | None,
    typer.Option(
        "--layers",
        help="Engram layer ids, comma-separated.",
        show_default=",".join(map(str, HashSpec.layer_ids)),
    ),
]
TableOpt = Annotated[
    str | None,
    typer.Option(
        "--table",
        help="Base table size per order 2..N (one value applies to all).",
        show_default=str(HashSpec.table_sizes[0]),
    ),
]
SeedOpt = Annotated[
    int | None,
    typer.Option("--seed", help="Global seed of the multipliers.", show_default=str(HashSpec.seed)),
]
PresetOpt = Annotated[
    str | None,
    typer.Option(
        "--preset", help="Start from a named configuration: engram-demo, engram-27b, engram-40b, tutorial."
    ),
]
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
        help="Tokenizer threads (default: all cores; hash adds a hash thread per 8, at most 4); "
        "ids never depend on it.",
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
ChecksumOpt = Annotated[
    str,
    typer.Option(
        "--checksum",
        help="Checksum of the data written: xxh3-128 (fast, detects corruption) or sha256 (cryptographic).",
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


ForceOpt = Annotated[bool, typer.Option("--force", help="Replace an existing output file.")]
DimOpt = Annotated[int | None, typer.Option("--dim", help="Values per row, per head.", min=1)]


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


def spec_fields(
    max_ngram: int | None,
    heads: int | None,
    layers: str | None,
    table: str | None,
    seed: int | None,
    pad_id: int | None,
) -> dict[str, Any]:
    """The spec options as :func:`ngramtool.resolve_spec` parameters (None: not given)."""
    return {
        "max_ngram": max_ngram,
        "heads": heads,
        "layer_ids": None if layers is None else tuple(parse_int_list(layers, "--layers")),
        "table_sizes": None if table is None else tuple(parse_int_list(table, "--table")),
        "seed": seed,
        "pad_id": pad_id,
    }


# Library parameters whose option is not --NAME-WITH-DASHES.
_OPTIONS = {
    "layer_ids": "--layers",
    "table_sizes": "--table",
    "spec_file": "--spec",
    "tokens_file": "--tokens",
    "output": "-o",
    "inputs": "INPUT files",
    "input_format": "--format",
}


def option_for(parameter: str) -> str:
    """How this command line spells a library parameter (``table_sizes`` -> ``--table``)."""
    return _OPTIONS.get(parameter, "--" + parameter.replace("_", "-"))


TEXT_READING_OPTIONS = ("input_format", "text_key", "doc_sep", "errors", "add_eot", "eot_token", "special")
"""Parameters that only change how text is read."""


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
    if given:
        raise idle_parameters([option_name(ctx, name) for name in given], applies, alternative)


def refuse_eot_token_without_add_eot(ctx: typer.Context, add_eot: bool) -> None:
    """--eot-token names what --add-eot appends: alone it would do nothing."""
    if not add_eot:
        refuse_idle_options(ctx, ["eot_token"], "with --add-eot", "add --add-eot")


def inputs_or_stdin(inputs: list[str] | None, command: str) -> list[str]:
    """The INPUT files, or ``-`` (stdin) when none are given and stdin is not a terminal; on a
    terminal, the usage error that says what to give."""
    if inputs:
        return inputs
    if sys.stdin is not None and not sys.stdin.isatty():
        return ["-"]
    raise UsageError(
        f"give INPUT files (text, JSONL, parquet, compressed: see --help), - for stdin, or pipe the text "
        f"in: cat corpus.txt | ngramtool {command}"
    )
