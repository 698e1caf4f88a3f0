"""``ngramtool spec export|check|vectors``: the constants an inference engine needs, written for
it, a deployment's constants checked against the derived ones, and vectors for its own tests."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ..model.mapping import NgramHashMapping
from ..model.presets import preset
from ..tools.engine_check import CheckReport, ConstantCheck, RuleCheck, check_deployment
from ..tools.engine_constants import EngineConstants
from ..tools.engine_files import FORMATS, export_constants, format_of, read_deployed
from ..tools.engine_gguf import DEFAULT_PREFIX, padded_for_model
from ..tools.engine_megatron import (
    FILE_FORMAT as MEGATRON,
)
from ..tools.engine_megatron import (
    FORMAT,
    SEMANTICS,
    VERSION,
    artifact_text,
    check_megatron_token_map,
    megatron_token_map,
    read_megatron_token_map,
    write_megatron_token_map,
)
from ..tools.engine_vectors import engine_vectors, write_vectors
from ..util.atomic import check_output_file
from ..util.errors import UsageError
from ..util.parsing import parse_size
from ..util.wording import plural
from .options import ForceOpt, JsonOpt, QuietOpt, given_options, option_groups
from .render import print_json, stderr, stdout
from .spec_options import SPEC_COMMAND_OPTIONS, SpecCommandOptions

EXPORT_HELP = """Write the constants an inference engine needs: multipliers, primes,
offsets, the token map (raw id -> canonical id), the compressed pad (and the raw
one), layer ids, rows per layer, V' and the token map's sha256.

The token map comes from the tokenizer: give the model's own with -t. It is
padded to the model's vocabulary with the compressed pad (--model-vocab, or the
spec's model_vocab_size from 'spec from-config'): a GGUF's token count is the
padded size, and llama.cpp requires one entry per token. GGUF keys go under
--gguf-prefix (multipliers as UINT64); --into writes a copy of a GGUF model with
the keys added or replaced, its tensors unchanged, verified before it replaces
anything. --format megatron-token-map writes Megatron-LM's Engram artifact
(megatron-engram-token-map, version 1, as its generate_tokenizer_map.py does).
See docs/commands.md for the keys and tensors of each format.

[bold]Examples[/]

  ngramtool spec export --spec my.json -t tokenizer.json -o engram.gguf
  ngramtool spec export --spec my.json -t tokenizer.json -o engram.safetensors
  ngramtool spec export --spec my.json -t cl100k_base -o -     # JSON to stdout
  ngramtool spec export --preset deepseek-v4.1-flash -t tokenizer.json \\
      --into model.gguf -o model.engram.gguf
  ngramtool spec export --spec my.json -t tokenizer.json --pad-id 1 --model-vocab 129280 \\
      --format megatron-token-map -o map.json
"""

CHECK_HELP = """Compare what a deployment holds with the derived constants.

TARGET is a GGUF model (KV keys or engram.* tensors), a safetensors file, a file
of 'spec export', or a Megatron-LM token map (megatron-engram-token-map). Each
constant is ok, or differs at its first differing index (both values shown), or
is absent. The rules engines validate are checked on TARGET's own constants: odd
multipliers at most INT64_MAX/V', primes prime, distinct and ascending and
summing to the rows, token map entries and the pad below V', one entry per raw
id; a GGUF's token map has one entry per token of the GGUF (llama.cpp), and
entries past the tokenizer's ids are the compressed pad. Exit status 1 on any
mismatch or failed rule. Without -t the token map is not compared.

[bold]Examples[/]

  ngramtool spec check --preset deepseek-v4.1-flash -t tokenizer.json model.gguf
  ngramtool spec check --spec my.json -t cl100k_base engram.safetensors --json
  ngramtool spec check --spec my.json -t tokenizer.json --pad-id 1 map.json
"""

VECTORS_HELP = """Write test vectors for an engine's own test suite, as JSON.

For TEXT (one document; - reads stdin): the raw ids, the canonical ids, and each
layer's rows: unmasked, and with a span of DEAD tokens (--masked-span) under
both conventions (barrier, DeepSeek-V4.1's reference; minus-one, TileKernels');
then the barrier case replayed as an engine serves it: a prefill chunk
(--prefill tokens), a draft of two other tokens rolled back (the model rejects
them), one decode step per token. The format is in docs/deepseek-v4.1.md.

[bold]Examples[/]

  ngramtool spec vectors "The quick brown fox" --spec v41.json -t tokenizer.json -o vectors.json
  ngramtool spec vectors - --preset deepseek-v4.1-flash -t tokenizer.json -o - < prompt.txt
"""

OutputOpt = Annotated[
    str,
    typer.Option("--output", "-o", help="The file to write; '-' writes JSON to stdout.", show_default=False),
]
FormatOpt = Annotated[
    str | None,
    typer.Option(
        "--format",
        help=f"{', '.join(FORMATS.values())}, or {MEGATRON} (Megatron-LM's Engram artifact, JSON).",
        show_default="from the suffix of -o",
    ),
]
ModelVocabOpt = Annotated[
    str | None,
    typer.Option(
        "--model-vocab",
        help="The model's vocabulary (its embedding rows, config.json vocab_size): the token map "
        "is padded to it with the compressed pad.",
        show_default="the spec's model_vocab_size, else the tokenizer's ids",
    ),
]
KeyLengthOpt = Annotated[
    int | None,
    typer.Option(
        "--dim", help="Values per row and head: GGUF key_length.", min=1, show_default="the preset's"
    ),
]
PrefixOpt = Annotated[
    str,
    typer.Option("--gguf-prefix", help="The prefix of the GGUF keys."),
]


# ---------------------------------------------------------------------------------- export
@option_groups
def export_command(
    ctx: typer.Context,
    output: OutputOpt,
    options: SpecCommandOptions = SPEC_COMMAND_OPTIONS,
    file_format: FormatOpt = None,
    into: Annotated[
        Path | None,
        typer.Option(
            "--into",
            help="A GGUF model: -o is a copy of it with the keys added or replaced.",
            show_default=False,
        ),
    ] = None,
    gguf_prefix: PrefixOpt = DEFAULT_PREFIX,
    dim: KeyLengthOpt = None,
    model_vocab: ModelVocabOpt = None,
    force: ForceOpt = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Write the engine constants of a spec and tokenizer (json, npz, safetensors, gguf, or
    Megatron-LM's token map)."""
    if "tokenizer" not in given_options(ctx):
        raise UsageError(
            "spec export writes the token map (raw id -> canonical id), which needs the model's "
            "tokenizer: pass --tokenizer/-t (e.g. -t tokenizer.json)"
        )
    megatron = file_format == MEGATRON
    if megatron and into is not None:
        raise UsageError(f"--format {MEGATRON} writes a JSON artifact: drop --into")
    if output == "-":
        if not megatron and (format_of("-.json", file_format) != "json" or into is not None):
            raise UsageError("-o - writes JSON to stdout: drop --format and --into, or give a file")
        if as_json:
            raise UsageError("-o - writes the constants to stdout, where --json would print the summary")
    constants = _derived(ctx, options, dim, tokenizer=True, model_vocab=model_vocab)
    if megatron:
        artifact = megatron_token_map(constants, tokenizer=str(options.tokenizer))
        if output == "-":
            stdout.out(artifact_text(artifact), end="", highlight=False)
            return
        write_megatron_token_map(artifact, output, force=force)
        summary: dict[str, Any] = {"output": output, "format": MEGATRON, "semantics": SEMANTICS}
        if as_json:
            print_json({**summary, **_shape(constants)})
        elif not quiet:
            stderr.print(_written_line(summary, constants), markup=False)
        return
    if into is not None:
        constants = padded_for_model(constants, into)
    if output == "-":
        print_json(constants.to_json_dict())
        summary = {"output": "-", "format": "json"}
    else:
        summary = export_constants(
            constants, output, file_format=file_format, force=force, gguf_prefix=gguf_prefix, into=into
        )
    if as_json:
        print_json({**summary, **_shape(constants)})
    elif not quiet:
        stderr.print(_written_line(summary, constants), markup=False)


def _shape(constants: EngineConstants) -> dict[str, Any]:
    """What the summary says about the constants."""
    token_map = constants.token_map
    return {
        "layer_ids": constants.layer_ids.tolist(),
        "rows": constants.rows.tolist(),
        "compressed_vocab_size": constants.compressed_vocab_size,
        "pad_id": constants.pad_id,
        "raw_pad_id": constants.raw_pad_id,
        "key_length": constants.key_length,
        "token_map_length": None if token_map is None else len(token_map),
        "token_map_padded_from": constants.token_map_padded_from,
        "token_map_unassigned": constants.unassigned,
        "token_map_sha256": constants.token_map_sha256,
    }


def _written_line(summary: dict[str, Any], constants: EngineConstants) -> str:
    """``wrote F (gguf, 10 keys, multipliers UINT64 array): layers ..., token map ...``."""
    what = summary["format"]
    keys = summary.get("keys")
    if keys is not None:
        multipliers = next(kind for key, kind in keys.items() if key.endswith(".multipliers"))
        what += f", {len(keys)} keys, multipliers {multipliers}"
    if "into" in summary:
        what += f", a copy of {summary['into']} with its tensors unchanged"
    raw_pad = f" (raw {constants.raw_pad_id})" if constants.raw_pad_id is not None else ""
    holes = f" ({constants.unassigned:,} without a token: -1)" if constants.unassigned else ""
    token_map = constants.token_map
    assert token_map is not None  # export loads the tokenizer
    padded = constants.token_map_padded_from
    if padded is not None:
        holes += f", padded from {padded:,} with the compressed pad {constants.pad_id}"
    if summary["format"] == MEGATRON:
        return (
            f"wrote {summary['output']} ({FORMAT} {VERSION}, for {SEMANTICS}): layers "
            f"{constants.layer_ids.tolist()}, V'={constants.compressed_vocab_size:,}, "
            f"pad {constants.pad_id}{raw_pad}, remap of {len(token_map):,} raw ids{holes}"
        )
    return (
        f"wrote {summary['output']} ({what}): layers {constants.layer_ids.tolist()}, "
        f"rows {constants.rows.tolist()}, V'={constants.compressed_vocab_size:,}, "
        f"pad {constants.pad_id}{raw_pad}, token map of {len(token_map):,} raw ids{holes}, "
        f"sha256 {constants.token_map_sha256}"
    )


def _derived(
    ctx: typer.Context,
    options: SpecCommandOptions,
    dim: int | None,
    *,
    tokenizer: bool,
    model_vocab: str | None = None,
) -> EngineConstants:
    """The constants of the options: with the tokenizer's token map (``tokenizer``, padded to
    --model-vocab, else the spec's model_vocab_size), else the spec's alone; ``key_length`` is
    --dim, else the preset's."""
    key_length = dim if dim is not None or options.preset_name is None else preset(options.preset_name).dim
    model = None if model_vocab is None else parse_size(model_vocab, "--model-vocab")
    if not tokenizer:
        if model is not None:
            raise UsageError("--model-vocab pads the token map, which needs the model's tokenizer: pass -t")
        return EngineConstants.from_spec(options.resolve(ctx), key_length=key_length)
    chosen = options.choose(options.preset_name)
    mapping = _mapping(options)
    raw_pad = options.pad_id
    if chosen.spec_file is not None and raw_pad is not None:
        raw_pad = _raw_pad_of(mapping, raw_pad)
    return EngineConstants.from_mapping(
        mapping, raw_pad_id=raw_pad, key_length=key_length, model_vocab_size=model
    )


def _raw_pad_of(mapping: NgramHashMapping, raw_pad: int) -> int:
    """``--pad-id`` beside ``--spec`` (the spec holds the compressed pad): the raw id it names."""
    lut = mapping.vocab.lut
    if not 0 <= raw_pad < len(lut) or int(lut[raw_pad]) != mapping.spec.pad_id:
        raise UsageError(
            f"--pad-id {raw_pad} does not map to the spec's compressed pad {mapping.spec.pad_id}: "
            "give the raw id of the pad the spec was made with"
        )
    return raw_pad


def _mapping(options: SpecCommandOptions) -> NgramHashMapping:
    """The mapping of the options' tokenizer and spec; a released model's preset must have its
    own tokenizer's V' (:func:`ngramtool.model.presets.check_released_vocabulary`)."""
    return options.choose(options.preset_name).mapping(
        options.tokenizer, special=None, compress=not options.no_compress, vocab_size=options.vocab_size
    )


# --------------------------------------------------------------------------------- vectors
@option_groups
def vectors_command(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="The text, read as one document; - reads stdin.")],
    output: OutputOpt,
    options: SpecCommandOptions = SPEC_COMMAND_OPTIONS,
    masked_span: Annotated[
        str | None,
        typer.Option(
            "--masked-span",
            help="START:END, the token positions that are DEAD in the masked cases.",
            show_default="a sixth of the tokens, a third in",
        ),
    ] = None,
    prefill: Annotated[
        int | None,
        typer.Option("--prefill", help="Tokens of the prefill chunk.", min=1, show_default="half"),
    ] = None,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Write test vectors (ids and rows of TEXT, masked and served) for an engine's tests."""
    if "tokenizer" not in given_options(ctx):
        raise UsageError("vectors start from text, tokenized as the model does: pass --tokenizer/-t")
    span = _span(masked_span)
    if output != "-":
        check_output_file(output, force, what="vectors file")
    mapping = _mapping(options)
    source = sys.stdin.read() if text == "-" else text
    vectors = engine_vectors(mapping, source, masked_span=span, prefill=prefill)
    if output == "-":
        print_json(vectors)
        return
    write_vectors(vectors, output, force=force)
    if not quiet:
        stderr.print(
            f"wrote {output}: {plural(len(vectors['raw_ids']), 'token')}, layers {vectors['layer_ids']}, "
            f"DEAD span {vectors['masked_span']}, {plural(len(vectors['serving']['steps']), 'serving step')}",
            markup=False,
        )


def _span(text: str | None) -> tuple[int, int] | None:
    """``START:END`` as two ints; anything else is a usage error."""
    if text is None:
        return None
    start, colon, end = text.partition(":")
    if not (colon and start.strip().isdigit() and end.strip().isdigit()):
        raise UsageError(f"--masked-span must be START:END token positions, e.g. 4:9 (got {text!r})")
    return int(start), int(end)


# ----------------------------------------------------------------------------------- check
@option_groups
def check_command(
    ctx: typer.Context,
    target: Annotated[
        Path,
        typer.Argument(
            help="A GGUF model, a safetensors file, or a file of 'spec export'.", show_default=False
        ),
    ],
    options: SpecCommandOptions = SPEC_COMMAND_OPTIONS,
    gguf_prefix: Annotated[
        str | None,
        typer.Option(
            "--gguf-prefix",
            help="The prefix of the GGUF keys.",
            show_default="the one <arch>.engram. prefix that TARGET uses",
        ),
    ] = None,
    dim: KeyLengthOpt = None,
    model_vocab: ModelVocabOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Compare a deployment's constants with the derived ones; exit 1 on any mismatch."""
    megatron = read_megatron_token_map(target)
    if megatron is not None:
        report = _check_megatron(ctx, options, target, megatron, model_vocab)
    else:
        deployed = read_deployed(target, gguf_prefix=gguf_prefix)
        derived = _derived(
            ctx, options, dim, tokenizer="tokenizer" in given_options(ctx), model_vocab=model_vocab
        )
        report = check_deployment(deployed, derived)
    if as_json:
        print_json(report.to_dict())
    else:
        _render_report(report)
    if not report.ok:
        raise typer.Exit(1)


def _check_megatron(
    ctx: typer.Context,
    options: SpecCommandOptions,
    target: Path,
    found: dict[str, Any],
    model_vocab: str | None,
) -> CheckReport:
    """A Megatron token map against the one the options derive."""
    if "tokenizer" not in given_options(ctx):
        raise UsageError(f"{target} is a Megatron token map of raw ids: pass the model's tokenizer (-t)")
    constants = _derived(ctx, options, None, tokenizer=True, model_vocab=model_vocab)
    return check_megatron_token_map(target, found, constants, tokenizer=str(options.tokenizer))


def _render_report(report: CheckReport) -> None:
    stdout.print(f"{report.target} ({report.kind}) against the derived constants", markup=False)
    width = max(len(check.name) for check in report.constants)
    for check in report.constants:
        stdout.print(f"  {check.name:<{width}}  {_constant_text(check)}", markup=False)
    stdout.print("rules", markup=False)
    for rule in report.rules:
        stdout.print(f"  {_rule_text(rule)}", markup=False)
    differing = [check.name for check in report.constants if check.status == "differs"]
    failed = sum(rule.status == "failed" for rule in report.rules)
    if report.ok:
        stdout.print("ok: every constant found matches and every rule holds", markup=False)
    else:
        parts = [f"{', '.join(differing)} differ{'s' if len(differing) == 1 else ''}"] if differing else []
        parts += [f"{failed} rule{'s' if failed != 1 else ''} failed"] if failed else []
        stdout.print(f"mismatch: {'; '.join(parts)}", markup=False)


def _constant_text(check: ConstantCheck) -> str:
    source = f" [{check.source}]" if check.source else ""
    if check.status == "named otherwise":
        return (
            f"named otherwise (no id changes): derived for {check.expected!r}, found {check.found!r}{source}"
        )
    if check.status != "differs":
        return check.status + source
    at = f" at index {check.index}" if check.index is not None else ""
    where = f" ({check.where})" if check.where else ""
    detail = f"; {check.detail}" if check.detail else ""
    return f"DIFFERS{at}{where}: expected {check.expected}, found {check.found}{detail}{source}"


def _rule_text(rule: RuleCheck) -> str:
    if rule.status == "ok":
        return f"ok      {rule.rule}"
    if rule.status == "not checked":
        return f"-       {rule.rule}: not checked, {rule.detail}"
    at = f"index {rule.index}, " if rule.index is not None else ""
    detail = f" ({rule.detail})" if rule.detail else ""
    return f"FAILED  {rule.rule}: {at}value {rule.value}{detail}"
