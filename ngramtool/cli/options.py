"""The command line's options and arguments: the typer types the commands share, the option
groups (options that go together, passed to a command as one value), the parsing of their values,
and the checks of which were given.

The CLI holds no algorithm: it parses, calls the library and renders (:mod:`.render`). Library
errors name the parameters of the function called; :func:`option_for` spells them as this command
line's options.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Annotated, Any, TypeVar, get_type_hints

import typer

from ..analysis.sizing import DEFAULT_ENCODING, encodings
from ..formats.tokenfiles import READ_FORMATS
from ..hashing.backends import MASKED_CONVENTIONS
from ..inputs.sources import CorpusReader, TokenFileReader
from ..model.mapping import NgramHashMapping
from ..model.presets import PRESETS, resolve_spec
from ..model.presets import preset as preset_named
from ..spec.families import FAMILIES
from ..spec.hashspec import HashSpec
from ..tokenizers import DEFAULT_TOKENIZER
from ..tokenizers.engines import ENGINE_CHOICES
from ..util.errors import UsageError, idle_parameters
from ..util.parsing import parse_id, parse_ids, parse_sizes

_Made = TypeVar("_Made")


# ------------------------------------------------------------------------------ option types
def corpus_inputs(help_text: str) -> Any:
    """The INPUT argument of a command that reads a corpus, with its help (typed Any, as
    ``typer.Argument`` is)."""
    return typer.Argument(metavar="INPUT", help=help_text, show_default=False)


CORPUS_FILES = "Corpus files (text, JSONL, compressed, parquet, datasets directories) or -"
STDIN_DEFAULT = "[default: stdin when it is not a terminal]"
CorpusInputsArg = Annotated[list[str] | None, corpus_inputs(f"{CORPUS_FILES} for stdin {STDIN_DEFAULT}.")]
"""The INPUT argument of the commands that read a corpus (hash, tokenize)."""
NoCompressOpt = Annotated[
    bool, typer.Option("--no-compress", help="Skip Engram vocabulary compression (identity map).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar or summary on stderr.")]
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
PresetOpt = Annotated[
    str | None,
    typer.Option("--preset", help=f"Start from a named configuration: {', '.join(PRESETS)}."),
]
SpecFileOpt = Annotated[
    Path | None, typer.Option("--spec", help="Load the hash spec from a JSON file (ngramtool spec save).")
]
MeasuredBoundaryOpt = Annotated[
    str | None,
    typer.Option(
        "--boundary",
        help="'none': pad only at stream start (Engram); 'reset': per document. [default: none, or the "
        "index's]",
        show_default=False,
    ),
]
"""``--boundary`` of the commands that measure an input (collisions, cache): an index has its own."""
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
        help="Hash backend: auto, numba, numpy, torch or triton (identical rows; auto: the fastest, "
        "numpy for a file under 4 MiB).",
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
AllowVocabMismatchOpt = Annotated[
    bool,
    typer.Option(
        "--allow-vocab-mismatch",
        help="Use a released model's --preset with a tokenizer whose V' is not the model's, on purpose "
        "(the rows are then not the model's; the manifest records it).",
    ),
]
ForceOpt = Annotated[bool, typer.Option("--force", help="Replace an existing output file.")]
DimOpt = Annotated[int | None, typer.Option("--dim", help="Values per row, per head.", min=1)]
ENCODINGS = ", ".join(encoding.name for encoding in encodings())
"""The row encodings' names, for help texts (int8-gG: any group G)."""
EncodingOpt = Annotated[
    str | None,
    typer.Option(
        "--encoding",
        help=f"Row encoding: {ENCODINGS}, int8-gG. [default: {DEFAULT_ENCODING}]",
        show_default=False,
    ),
]
RowBytesOpt = Annotated[
    int | None, typer.Option("--row-bytes", help="Bytes per row (in place of --encoding).", min=1)
]


# ------------------------------------------------------------------------------ option groups
@dataclass(frozen=True)
class OptionGroup:
    """Options that go together, as one value: a frozen dataclass whose fields are the options,
    each annotated ``Annotated[type, typer.Option(...)]`` and with its default.

    A command declares a group with one parameter whose default is the group's
    :meth:`placeholder` (``spec_options: SpecOptions = SPEC_OPTIONS``), under :func:`option_groups`:
    the group's options take that parameter's place on the command line and in ``--help``, and the
    command receives the group. A variant (another help, default or type of an option) is a
    subclass that declares the field again: it keeps its place.
    """

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The parameters of the group's options, in their order."""
        return tuple(option.name for option in fields(cls))

    @classmethod
    def placeholder(cls, *order: str) -> Any:
        """The default of the parameter that declares the group (typed Any, as ``typer.Option`` is:
        it stands for the group). ``order``: the group's options in another order than its fields'."""
        return _Placeholder(cls, order or cls.names())

    def values(self) -> dict[str, Any]:
        """The options by parameter name: the library's functions name them the same."""
        return {name: getattr(self, name) for name in self.names()}

    def make(self, cls: type[_Made], **values: Any) -> _Made:
        """A ``cls``, a dataclass of the library's (:class:`~ngramtool.RunOptions`), of the options
        named as its fields, and of ``values`` for the others."""
        named = [option.name for option in fields(cls) if option.name not in values]
        return cls(**{name: getattr(self, name) for name in named}, **values)


@dataclass(frozen=True)
class _Placeholder:
    """Where a command's signature takes an option group's options, and in which order."""

    group: type[OptionGroup]
    order: tuple[str, ...]

    def __post_init__(self) -> None:
        if sorted(self.order) != sorted(self.group.names()):
            raise TypeError(f"{self.group.__name__} orders {self.group.names()}, not {self.order}")

    def parameters(self, kind: Any) -> list[inspect.Parameter]:
        """The group's options as parameters of a signature."""
        hints = get_type_hints(self.group, include_extras=True)  # strings resolved in each class's module
        defaults = {option.name: option.default for option in fields(self.group)}
        return [
            inspect.Parameter(name, kind, default=defaults[name], annotation=hints[name])
            for name in self.order
        ]


def option_groups(command: Callable[..., None]) -> Callable[..., None]:
    """The command as typer registers it: each parameter whose default is an option group's
    :meth:`~OptionGroup.placeholder` is replaced, in place, by the group's options, and ``command``
    is called with the group made of their values.

    Typer reads what it registers with ``inspect.signature`` and ``typing.get_type_hints``: the
    command's ``__signature__`` and ``__annotations__`` are rewritten, the annotations resolved
    (under ``from __future__ import annotations`` they are strings of the command's module).
    """
    hints = get_type_hints(command, include_extras=True)
    parameters: list[inspect.Parameter] = []
    groups: dict[str, _Placeholder] = {}
    for parameter in inspect.signature(command).parameters.values():
        if isinstance(parameter.default, _Placeholder):
            groups[parameter.name] = parameter.default
            parameters += parameter.default.parameters(parameter.kind)
        else:
            parameters.append(parameter.replace(annotation=hints.get(parameter.name, parameter.annotation)))

    @functools.wraps(command)
    def with_groups(**values: Any) -> None:
        for name, placeholder in groups.items():
            values[name] = placeholder.group(**{option: values.pop(option) for option in placeholder.order})
        command(**values)

    with_groups.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    with_groups.__annotations__ = {parameter.name: parameter.annotation for parameter in parameters}
    return with_groups


@dataclass(frozen=True)
class TokenFileOptions(OptionGroup):
    """Pre-tokenized ids to read instead of text (``--tokens``), and how to read them."""

    tokens_file: Annotated[
        Path | None,
        typer.Option(
            "--tokens", help="Pre-tokenized raw ids (.npy, nanoGPT/llm.c/Megatron .bin, datatrove .ds)."
        ),
    ] = None
    token_format: Annotated[
        str | None,
        typer.Option(
            "--token-format",
            help=f"Format of the token file: {', '.join(READ_FORMATS)} "
            "(raw: a headerless memmap, OLMo/Dolma).",
        ),
    ] = None
    token_dtype: Annotated[
        str | None,
        typer.Option("--token-dtype", help="Token type of a raw (headerless) token file: uint16 or uint32."),
    ] = None
    eos_id: Annotated[
        int | None,
        typer.Option(
            "--eos-id",
            help="Cut a token file that records no documents after each of these ids (OLMo's EOS).",
            min=0,
        ),
    ] = None

    def reader(self) -> TokenFileReader:
        """The reader of the token file (``tokens_file`` given)."""
        return TokenFileReader(self.tokens_file, self.token_format, self.token_dtype, self.eos_id)

    def names_format(self) -> bool:
        """Whether an option says how to read a token file (its format, its dtype, its EOS)."""
        return self.token_format is not None or self.token_dtype is not None or self.eos_id is not None

    def source(self, inputs: list[str], reading: ReadingOptions) -> CorpusReader | TokenFileReader:
        """What is read: ``--tokens FILE``, or the one INPUT when an option says how to read it as
        a token file; else the INPUT files as text, with the reading options."""
        if self.tokens_file is None and len(inputs) == 1 and self.names_format():
            return TokenFileReader(inputs[0], self.token_format, self.token_dtype, self.eos_id)
        return self.reader() if self.tokens_file is not None else reading.reader(inputs)

    def inputs(self, inputs: list[str] | None, command: str) -> list[str]:
        """The INPUT files: with a token file, those given (none, or one a command refuses); else
        those given or stdin (:func:`inputs_or_stdin`)."""
        return (inputs or []) if self.tokens_file is not None else inputs_or_stdin(inputs, command)


TOKEN_FILE_OPTIONS = TokenFileOptions.placeholder()


@dataclass(frozen=True)
class TokenizerOptions(OptionGroup):
    """The tokenizer (cl100k_base unless named) and whether its vocabulary is compressed."""

    tokenizer: Annotated[
        str,
        typer.Option(
            "--tokenizer",
            "-t",
            help="tiktoken name (cl100k_base works offline), path to a *.tiktoken file, "
            "path to an HF tokenizer.json, or 'bytes'.",
        ),
    ] = DEFAULT_TOKENIZER
    no_compress: NoCompressOpt = False


TOKENIZER_OPTIONS = TokenizerOptions.placeholder()


@dataclass(frozen=True)
class CorpusVocabularyOptions(OptionGroup):
    """What a corpus's ids are ids of: a tokenizer (None: not named) and whether its vocabulary is
    compressed, or, for a token file of canonical ids, V' alone."""

    vocab_size: Annotated[
        int | None,
        typer.Option(
            "--vocab-size", help="With a token file and no --tokenizer: ids are canonical below this.", min=1
        ),
    ] = None
    tokenizer: Annotated[
        str | None,
        typer.Option(
            "--tokenizer",
            "-t",
            help="tiktoken name, *.tiktoken file, tokenizer.json, or 'bytes'. [default: cl100k_base]",
        ),
    ] = None
    no_compress: NoCompressOpt = False


CORPUS_VOCABULARY_OPTIONS = CorpusVocabularyOptions.placeholder()


# Spec options default to None (not given): the library fills them from --preset or HashSpec.
@dataclass(frozen=True)
class LayoutOptions(OptionGroup):
    """The layout of the hash tables: N, K, the Engram layers and the base table sizes."""

    max_ngram: Annotated[
        int | None,
        typer.Option("--max-ngram", "-n", help="N: hash orders 2..N.", show_default=str(HashSpec.max_ngram)),
    ] = None
    heads: Annotated[
        int | None,
        typer.Option("--heads", "-k", help="K: hash heads per order.", show_default=str(HashSpec.heads)),
    ] = None
    layers: Annotated[
        str | None,
        typer.Option(
            "--layers",
            help="Engram layer ids, comma-separated.",
            show_default=",".join(map(str, HashSpec.layer_ids)),
        ),
    ] = None
    table: Annotated[
        str | None,
        typer.Option(
            "--table",
            help="Base table size per order 2..N (one value applies to all); 646400, 646_400 and "
            "646,400 are one size.",
            show_default=str(HashSpec.table_sizes[0]),
        ),
    ] = None

    @property
    def fields(self) -> dict[str, Any]:
        """The options as :func:`ngramtool.resolve_spec` parameters (None: not given); parsing
        ``--layers`` and ``--table`` here, a usage error names them."""
        return {
            "max_ngram": self.max_ngram,
            "heads": self.heads,
            "layer_ids": None if self.layers is None else tuple(parse_ids(self.layers, "--layers")),
            "table_sizes": None if self.table is None else tuple(parse_sizes(self.table, "--table")),
        }


LAYOUT_OPTIONS = LayoutOptions.placeholder()


@dataclass(frozen=True)
class SpecOptions(LayoutOptions):
    """A hash spec: its layout, seed and pad, or a spec file (``--spec``) that gives it whole."""

    seed: Annotated[
        int | None,
        typer.Option(
            "--seed", help="Global seed of the multipliers.", show_default="0; the tutorial family: 2026"
        ),
    ] = None
    pad_id: Annotated[
        int | None,
        typer.Option(
            "--pad-id", help="RAW pad id (mapped through the vocabulary); default: the tokenizer's pad/eot."
        ),
    ] = None
    family: Annotated[
        str | None,
        typer.Option(
            "--family",
            help=f"The hash family: {', '.join(FAMILIES)} (docs/families.md). Default: the preset's, "
            "else engram; 'stored' comes from a checkpoint (spec from-config --constants).",
            show_default=False,
        ),
    ] = None
    stop_token: Annotated[
        str | None,
        typer.Option(
            "--stop-token",
            help="LongCat as sglang serves it: the walk back stops at this RAW id (an EOS) at "
            "lookback j > 0; the id's own n-grams include it. Default: the reference's walk.",
            show_default=False,
        ),
    ] = None
    spec_file: SpecFileOpt = None
    allow_vocab_mismatch: AllowVocabMismatchOpt = False

    @property
    def fields(self) -> dict[str, Any]:
        """The options but ``spec_file`` as :func:`ngramtool.resolve_spec` parameters (None: not given)."""
        stop = None if self.stop_token is None else parse_id(self.stop_token, "--stop-token")
        extra = {"family": self.family, "stop_token": stop}
        return {**super().fields, "seed": self.seed, "pad_id": self.pad_id, **extra}

    def choose(self, preset: str | None) -> SpecChoice:
        """The spec these options choose over ``preset`` (parses ``--layers`` and ``--table`` now);
        ``--family speedrun`` alone starts from the ``speedrun`` preset (raw GPT-2 ids, one table)."""
        if preset is None and self.family == "speedrun" and self.spec_file is None:
            preset = "speedrun"
        return SpecChoice(preset, self.spec_file, self.fields, self.allow_vocab_mismatch)


SPEC_OPTIONS = SpecOptions.placeholder()


@dataclass(frozen=True)
class MaskingOptions(OptionGroup):
    """DEAD tokens (an image span's placeholder ids and the like) and how the hash treats them."""

    mask_token: Annotated[
        str | None,
        typer.Option(
            "--mask-token",
            help="Raw ids of tokens that take no part (DEAD: e.g. the image token), comma-separated.",
            show_default=False,
        ),
    ] = None
    masked: Annotated[
        str | None,
        typer.Option(
            "--masked",
            help="How DEAD tokens hash: 'barrier' (DeepSeek-V4.1: windows see the pad from a DEAD "
            "token back, and it gets all-pad rows) or 'minus-one' (TileKernels: its rows are -1, "
            "other windows see the pad). Default: the preset's; with --mask-token and no "
            "--preset, required.",
            show_default=False,
        ),
    ] = None

    def settings(self, preset: str | None) -> dict[str, Any]:
        """``mask_tokens`` and ``negative_ids`` for :meth:`ngramtool.NgramHashMapping.build`."""
        tokens = () if self.mask_token is None else tuple(parse_ids(self.mask_token, "--mask-token"))
        if self.masked is None and tokens and preset is None:
            raise UsageError(
                "--mask-token needs the convention its DEAD tokens hash by: --masked barrier "
                "(DeepSeek-V4.1's reference) or --masked minus-one (TileKernels)"
            )
        if self.masked is None:
            convention = preset_named(preset).negative_ids if preset is not None else "mask"
        elif self.masked in MASKED_CONVENTIONS:
            convention = MASKED_CONVENTIONS[self.masked]
        else:
            raise UsageError(f"--masked must be 'barrier' or 'minus-one' (got {self.masked!r})")
        return {"mask_tokens": tokens, "negative_ids": convention}


MASKING_OPTIONS = MaskingOptions.placeholder()


@dataclass(frozen=True)
class ReadingOptions(OptionGroup):
    """How text INPUT is read: the end-of-sequence token, special tokens, the input's form, its
    documents and what bad input does."""

    add_eot: Annotated[
        bool,
        typer.Option(
            "--add-eot",
            help="Append the end-of-sequence token after each document (tokenizer_config.json eos_token, "
            "the post-processor's, tiktoken's <|endoftext|>, or --eot-token).",
        ),
    ] = False
    eot_token: Annotated[
        str | None,
        typer.Option(
            "--eot-token", help="With --add-eot: the end-of-sequence token to append, by its string."
        ),
    ] = None
    special: SpecialOpt = None
    input_format: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="Form of every INPUT: text, jsonl, parquet or arrow (default: from each name; compression "
            "is recognized by its first bytes). See docs/inputs.md.",
            show_default=False,
        ),
    ] = None
    text_key: Annotated[
        str | None,
        typer.Option(
            "--text-key",
            "--json-key",
            help="The key (JSONL; a dotted path reads a nested field: messages.-1.content) or column "
            "(parquet, datasets) that holds the text [default: text; messages with --chat-template]; "
            "naming it reads an input of no known suffix (or stdin) as JSONL. --json-key is its older name.",
            show_default=False,
        ),
    ] = None
    chat_template: Annotated[
        bool,
        typer.Option(
            "--chat-template",
            help="Records hold chats (lists of role/content messages): render each through the chat "
            "template of the HF tokenizer (tokenizer_config.json beside its tokenizer.json), as "
            "apply_chat_template does (extra 'chat'). See docs/inputs.md.",
        ),
    ] = False
    doc_sep: Annotated[
        str | None, typer.Option("--doc-sep", help="Plain text: this literal string separates documents.")
    ] = None
    errors: Annotated[
        str,
        typer.Option(
            "--errors",
            help="Bad input: 'strict' (stop, name the offset or line), 'replace' (invalid UTF-8 -> U+FFFD) "
            "or, for records (JSONL, parquet, datasets), 'skip' (skip and count bad records).",
        ),
    ] = "strict"
    tokenizer_engine: Annotated[
        str,
        typer.Option(
            "--tokenizer-engine",
            help=f"What encodes the text: {', '.join(ENGINE_CHOICES)}. 'auto': the first fast engine (extra "
            "'fast'; splintr, then fastokens for tiktoken encodings; fastokens for a tokenizer.json) "
            "installed and verified for the tokenizer, when the input is large; the ids are the same "
            "(docs/tokenizers.md).",
            envvar="NGRAMTOOL_TOKENIZER_ENGINE",
        ),
    ] = "auto"
    no_engine_check: Annotated[
        bool,
        typer.Option(
            "--no-engine-check",
            help="Do not re-encode a sample of the text (the first pieces' beginnings, 1 piece in 256) "
            "with the reference tokenizer.",
        ),
    ] = False

    def values(self) -> dict[str, Any]:
        """The reading options by parameter name; the engine options go to the mapping
        (:meth:`engine`)."""
        return {name: value for name, value in super().values().items() if name not in ENGINE_OPTIONS}

    def engine(self) -> dict[str, Any]:
        """``engine`` and ``engine_check`` for :meth:`ngramtool.NgramHashMapping.build`."""
        return {"engine": self.tokenizer_engine, "engine_check": not self.no_engine_check}

    def reader(self, inputs: Iterable[str]) -> CorpusReader:
        """The reader of the text ``inputs``."""
        reading = {
            name: value for name, value in self.values().items() if name != "special"
        }  # the tokenizer's
        return CorpusReader(tuple(inputs), **reading)

    def refuse_eot_token_without_add_eot(self, ctx: typer.Context) -> None:
        """--eot-token names what --add-eot appends: alone it would do nothing."""
        if not self.add_eot:
            refuse_idle_options(ctx, ["eot_token"], "with --add-eot", "add --add-eot")


READING_OPTIONS = ReadingOptions.placeholder()


ENGINE_OPTIONS = ("tokenizer_engine", "no_engine_check")
TEXT_READING_OPTIONS = (
    "input_format", "text_key", "chat_template", "doc_sep", "errors", "add_eot", "eot_token", "special",
    *ENGINE_OPTIONS,
)  # fmt: skip
"""The parameters of :class:`ReadingOptions`, in the order a usage error names them."""


@dataclass(frozen=True)
class SpecChoice:
    """The hash spec that a command's options choose: a preset, a spec file, and the fields given
    over them (:func:`ngramtool.resolve_spec` parameters; None: not given)."""

    preset: str | None = None
    spec_file: Path | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    allow_vocab_mismatch: bool = False

    def __post_init__(self) -> None:
        if self.allow_vocab_mismatch and self.preset is None:
            raise UsageError("--allow-vocab-mismatch applies only with a released model's --preset: drop it")

    def mapping(
        self,
        tokenizer: str | None,
        *,
        special: str | None,
        compress: bool,
        vocab_size: int | None = None,
        masking: MaskingOptions | None = None,
        engine: dict[str, Any] | None = None,
    ) -> NgramHashMapping:
        """:meth:`ngramtool.NgramHashMapping.build` of ``tokenizer`` (None: ids canonical below
        ``vocab_size``) with this spec and, when given, the DEAD tokens and their convention and
        the tokenizer engine (:meth:`ReadingOptions.engine`)."""
        vocab = {"special": special, "compress": compress, "vocab_size": vocab_size}
        masked = masking.settings(self.preset) if masking is not None else {}
        return NgramHashMapping.build(
            tokenizer,
            spec=self.preset,
            spec_file=self.spec_file,
            allow_vocab_mismatch=self.allow_vocab_mismatch,
            **vocab,
            **masked,
            **(engine or {}),
            **self.fields,
        )

    def resolve(self, *, tokenizer: str | None, no_compress: bool, vocab_size: int | None) -> HashSpec:
        """:func:`ngramtool.resolve_spec` of this spec, V' from ``tokenizer`` or ``vocab_size``."""
        vocab = {"tokenizer": tokenizer, "no_compress": no_compress, "vocab_size": vocab_size}
        return resolve_spec(
            preset=self.preset,
            spec_file=self.spec_file,
            allow_vocab_mismatch=self.allow_vocab_mismatch,
            **vocab,
            **self.fields,
        )


# Library parameters whose option is not --NAME-WITH-DASHES.
_OPTIONS = {
    "mask_tokens": "--mask-token",
    "negative_ids": "--masked",
    "layer_ids": "--layers",
    "table_sizes": "--table",
    "budget_bytes": "--budget",
    "spec_file": "--spec",
    "tokens_file": "--tokens",
    "output": "-o",
    "inputs": "INPUT files",
    "input_format": "--format",
}


def option_for(parameter: str) -> str:
    """How this command line spells a library parameter (``table_sizes`` -> ``--table``)."""
    return _OPTIONS.get(parameter, "--" + parameter.replace("_", "-"))


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
