"""``ngramtool spec show|save|lint``: a hash spec's derived constants, its JSON file, and its pitfalls."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from ..analysis.lint import Finding, HashConstants, lint_constants, recorded_constants
from ..analysis.sizing import TableBytes, table_bytes
from ..formats.index import spec_record
from ..hashing.backends import MASKED_CONVENTIONS
from ..model.configs import ConfigFields, check_declared, config_fields, spec_fields
from ..model.presets import check_released_vocabulary, preset, save_spec_file
from ..spec.families import family_note, semantics
from ..spec.hashspec import HashSpec
from ..tools.engine_megatron import FILE_FORMAT as MEGATRON
from ..tools.engine_megatron import SEMANTICS as MEGATRON_SEMANTICS
from ..util.errors import UsageError
from ..util.parsing import parse_size
from ..util.wording import byte_size, plural
from .command import Command
from .engine_cmd import CHECK_HELP, EXPORT_HELP, VECTORS_HELP, check_command, export_command, vectors_command
from .options import (
    DimOpt,
    EncodingOpt,
    ForceOpt,
    JsonOpt,
    QuietOpt,
    RowBytesOpt,
    SpecChoice,
    given_options,
    option_for,
    option_groups,
    option_name,
    refuse_idle_options,
)
from .render import first_only, print_json, print_table, report_table, stderr, stdout
from .spec_options import (
    SPEC_COMMAND_OPTIONS,
    VOCABULARY_OPTIONS,
    SpecCommandOptions,
    VocabularyOptions,
    build_spec,
)

HELP = """Show, save and lint hash specs.

A spec's derived constants (multipliers, primes, offsets) are what an Engram
hash kernel consumes. --preset starts from a named configuration; options you
give override it.

[bold]Examples[/]

  ngramtool spec show                        # cl100k_base, default options
  ngramtool spec show --preset engram-27b --json
  ngramtool spec save my.json --heads 4 --table 262144 --layers 2
  ngramtool hash corpus.txt --spec my.json
  ngramtool spec from-config model/config.json model.spec.json -t model/tokenizer.json
  ngramtool spec lint --preset tutorial --hidden-size 1000
  ngramtool spec lint corpus.txt.ngidx       # an index's constants
"""

SHOW_HELP = """Print a spec's derived constants: multipliers, primes, offsets, rows, row dtype.

With --encoding (and --dim, default the preset's), or --row-bytes: the tables' bytes
per layer and in all, in that row encoding (the encodings of size and cache).

[bold]Examples[/]

  ngramtool spec show --heads 4 --table 262144 --layers 2
  ngramtool spec show --preset engram-27b --json > engram-27b.json
  ngramtool spec show --spec my.json --tokenizer tokenizer.json
  ngramtool spec show --preset engram-27b --encoding nvfp4 --dim 160
"""
SAVE_HELP = """Write a spec as JSON, to pass to --spec (hash, explain, collisions, spec).

[bold]Examples[/]

  ngramtool spec save my.json --heads 4 --table 262144 --layers 2
  ngramtool spec save dsv3.json --preset engram-27b --force
"""
FROM_CONFIG_HELP = """Write the spec of a released model's config.json, to pass to --spec.

Reads the n-gram fields at the config's top level or in a nested object
(text_config, language_config, engram_config): DeepSeek-V4.1's engram_* keys
(engram_max_ngram_size, engram_n_heads, engram_layer_ids, engram_vocab_size,
engram_pad_token_id or engram_pad_id; each one required), checked against the
declared engram_num_embeddings and engram_compressed_vocab_size (a mismatch is
refused and nothing is written); the Engram demo's max_ngram_size,
n_head_per_ngram, engram_vocab_size, layer_ids, pad_id (a raw id) and seed;
Qwen3.8's ngram_size, heads_per_ngram and ngram_vocab_size_base (fields these
lack keep their defaults, listed). V' and the canonical pad come from
--tokenizer (give the model's own), or --vocab-size for the multipliers alone.

[bold]Examples[/]

  ngramtool spec from-config config.json engram.json -t tokenizer.json
  ngramtool spec from-config inference/config.json v41.json --vocab-size 99092
  ngramtool hash corpus.txt --spec engram.json -t tokenizer.json
"""
LINT_HELP = """Warn about spec pitfalls, each with the reason and the fix.

Checks: table sizes near a multiple of V', non-prime or duplicate sizes, even
or overflowing multipliers, offsets past 2^31, more heads than useful, and a
--dim that does not divide --hidden-size. Exit status 1 when anything is found.
TARGET lints recorded constants: an index, its manifest or 'spec show --json'.

[bold]Examples[/]

  ngramtool spec lint                           # the default options
  ngramtool spec lint --preset tutorial --hidden-size 1000
  ngramtool spec lint --heads 16 --table 1009 --types 5000 --json
  ngramtool spec lint corpus.txt.ngidx
"""


# ------------------------------------------------------------------------------------ show
@option_groups
def show_command(
    ctx: typer.Context,
    options: SpecCommandOptions = SPEC_COMMAND_OPTIONS,
    encoding: EncodingOpt = None,
    dim: DimOpt = None,
    row_bytes: RowBytesOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print the derived constants: multipliers, primes, offsets, rows per layer, row dtype."""
    spec = options.resolve(ctx)
    record = {**_spec_report(spec), "conventions": _conventions(spec, options.preset_name, words=False)}
    chosen = preset(options.preset_name) if options.preset_name is not None else None
    if chosen is not None and chosen.declared_rows is not None:
        record["declared_rows"] = list(chosen.declared_rows)
        record["declared_rows_match"] = not chosen.rows_differing(spec)
    sized = None
    if encoding is not None or dim is not None or row_bytes is not None:
        if dim is None and row_bytes is None and chosen is not None:
            dim = chosen.dim
        sized = table_bytes(spec, row_bytes, encoding, dim)
        record["table_bytes"] = sized.to_dict()
    if as_json:
        print_json(record)
        return
    pad = f"start marker {spec.pad_id}" if spec.family == "speedrun" else f"canonical pad {spec.pad_id}"
    stdout.print(
        f"[bold]HashSpec[/] {spec.fingerprint[:16]}: N={spec.max_ngram} (orders 2..{spec.max_ngram}), "
        f"K={plural(spec.heads, 'head')} per order, layers {list(spec.layer_ids)}, "
        f"base tables {list(spec.table_sizes)}, seed {spec.seed}, V'={spec.vocab_size:,}, "
        f"{pad}{family_note(spec.family)}"
    )
    stdout.print(f"{_constants_in_words(spec)}; rows stored as {spec.row_dtype}")
    for line in _conventions(spec, options.preset_name):
        stdout.print(line, markup=False)
    if chosen is not None and chosen.declared_rows is not None:
        _say_declared_rows(options.preset_name, chosen.rows_differing(spec), chosen.declared_rows)
    grid = report_table("derived constants per layer")
    sizes = "primes" if spec.family == "engram" else "table sizes"
    for name in ("layer", "multipliers (lag 0..N-1)", "order", f"{sizes} (heads 0..K-1)", "offsets", "rows"):
        grid.add_column(name, justify="right" if name in ("layer", "order", "rows") else "left")
    for li, layer in enumerate(spec.layer_ids):
        for oi in range(spec.max_ngram - 1):
            first = oi == 0
            cols = slice(oi * spec.heads, (oi + 1) * spec.heads)
            grid.add_row(
                *first_only(first, str(layer), _multipliers_shown(spec, li, oi))
                if spec.layer_mix
                else (str(layer) if first else "", _multipliers_shown(spec, li, oi)),
                str(oi + 2),
                " ".join(str(p) for p in spec.primes[li, oi].tolist()),
                " ".join(str(o) for o in spec.offsets[li, cols].tolist()),
                *first_only(first, f"{int(spec.rows_per_layer[li]):,}"),
            )
    print_table(grid)
    if sized is not None:
        _say_table_bytes(spec, sized)


def _say_table_bytes(spec: HashSpec, sized: TableBytes) -> None:
    """One line: the tables' bytes in the chosen row encoding, per layer and in all."""
    rows = (
        f"{sized.encoding} rows of {sized.dim} values ({byte_size(sized.row_bytes)} each)"
        if sized.encoding is not None
        else f"rows of {byte_size(sized.row_bytes)}"
    )
    sizes = zip(spec.layer_ids, sized.layer_bytes, strict=True)
    layers = ", ".join(f"layer {layer} {size:,} B" for layer, size in sizes)
    total = f"{sized.total_bytes:,} B ({byte_size(sized.total_bytes)})"
    stdout.print(f"tables as {rows}: {layers}; {total} in all", markup=False)


def _constants_in_words(spec: HashSpec) -> str:
    """One line on how ``spec``'s family derives its constants (what ``spec show`` prints)."""
    if spec.family == "tutorial":
        return (
            f"multipliers per (order, head) from torch's generator seeded {spec.seed} "
            "(randint(1, 2^20) * 2 + 1), the oldest token first; one table per head of its order's size"
        )
    if spec.family == "longcat":
        return (
            f"id = sum of tok[t-j] x (V^j mod m_i) mod m_i, V={spec.vocab_size:,}, m_i = m + 2i + 1; "
            "the walk stops at the sequence start and at ignored tokens"
        )
    if spec.family == "stored":
        return "multipliers, table sizes and offsets as the checkpoint stores them"
    if spec.family == "speedrun":
        return (
            "row = (36313 x(t) XOR 27191 x(t-1) [XOR 18731 x(t-2)]) in int32, floor mod (T - 1), "
            f"one table of T rows per order, row T - 1 reserved; first token {spec.first_token}"
        )
    return f"multipliers = 2r+1 with r < half_bound = {spec.half_bound:,} (floor(floor((2^63-1)/V')/2))"


def _conventions(spec: HashSpec, preset_name: str | None, *, words: bool = True) -> Any:
    """Whose rows the spec gives (its preset's masking convention), the layer numbers and model
    vocabulary it records, and what the engine artifacts of ``spec export`` serve: lines for
    ``spec show``, or (``words=False``) the same as JSON."""
    negative_ids = preset(preset_name).negative_ids if preset_name is not None else "mask"
    options = {"stop_token": spec.stop_token, "eos_fill": spec.eos_fill, "first_token": spec.first_token}
    follows = semantics(spec.family, negative_ids=negative_ids, **options)
    artifacts = (
        {
            "engine constants (json, npz, safetensors, gguf)": "the constants alone; the engine applies "
            "its own masking convention",
            MEGATRON: MEGATRON_SEMANTICS,
        }
        if spec.layer_mix and spec.family == "engram"
        else {"spec file (spec save)": "this family's rows (engine constants are Engram's layout)"}
    )
    record: dict[str, Any] = {"follows": follows, "artifacts": artifacts}
    if spec.model_vocab_size is not None:
        record["model_vocab_size"] = spec.model_vocab_size
    if spec.stored is not None and spec.stored.module_indices is not None:
        record["module_indices"] = list(spec.stored.module_indices)
        record["seed_indices"] = list(spec.stored.seed_indices or ())
    if not words:
        return record
    lines = [f"follows {follows}" + (f" (preset {preset_name})" if preset_name else "")]
    lines += [f"artifact {name}: {serves}" for name, serves in artifacts.items()]
    if spec.model_vocab_size is not None:
        lines.append(f"model vocabulary {spec.model_vocab_size:,}: engine token maps are padded to it")
    if "module_indices" in record:
        lines.append(_layer_numbers(spec))
    return lines


def _layer_numbers(spec: HashSpec) -> str:
    """The line on a stored spec's two layer numbers (Qwen3.8): the module each layer id places,
    and the index its multipliers and tables were seeded with."""
    assert spec.stored is not None and spec.stored.module_indices is not None
    modules = ", ".join(f"layers.{i}.ple" for i in spec.stored.module_indices)
    seeds = list(spec.stored.seed_indices or ())
    return (
        f"layer ids {list(spec.layer_ids)} (1-based): modules {modules}; multipliers and tables "
        f"seeded with index {seeds} (the position in the list)"
    )


def _multipliers_shown(spec: HashSpec, li: int, oi: int) -> str:
    """The multipliers of layer ``li`` (all lags), or of each head of order ``oi + 2`` where heads
    have their own (lags of the order, ``|`` between heads)."""
    if spec.layer_mix:
        return " ".join(str(m) for m in spec.multipliers[li].tolist())
    first = spec.column(oi + 2, 0)
    heads = spec.column_multipliers[li, first : first + spec.heads, : oi + 2]
    return " | ".join(" ".join(str(m) for m in head) for head in heads.tolist())


def _say_declared_rows(
    name: str | None, differing: list[tuple[int, int, int]], declared: tuple[int, ...]
) -> None:
    """The line comparing the derived rows per layer with those the preset's checkpoint declares."""
    shown = " ".join(f"{rows:,}" for rows in declared)
    if not differing:
        stdout.print(f"rows per layer as {name}'s checkpoint declares: {shown}")
        return
    layer, derived, wanted = differing[0]
    stdout.print(
        f"[bold yellow]warning[/]: layer {layer} derives {derived:,} rows but {name}'s checkpoint "
        f"declares {wanted:,} ({shown}): these options index other rows than its tables",
    )


def _spec_report(spec: HashSpec) -> dict[str, Any]:
    """The spec, its fingerprint and derived constants (the index manifest's schema) plus extras."""
    return {**spec_record(spec), "row_dtype": spec.row_dtype.str, "half_bound": spec.half_bound}


# ------------------------------------------------------------------------------------ save
@option_groups
def save_command(
    ctx: typer.Context,
    output: Annotated[
        Path, typer.Argument(metavar="FILE", help="The JSON file to write (read back with --spec).")
    ],
    options: SpecCommandOptions = SPEC_COMMAND_OPTIONS,
    force: ForceOpt = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Write the spec as JSON for --spec (hash, explain, collisions, spec show/lint)."""
    spec = options.resolve(ctx)
    save_spec_file(spec, output, force=force)
    if as_json:
        print_json({"output": str(output), "spec": spec.to_dict(), "fingerprint": spec.fingerprint})
    elif not quiet:
        _report_written(output, spec)


# ----------------------------------------------------------------------------- from-config
@option_groups
def from_config_command(
    ctx: typer.Context,
    config: Annotated[Path, typer.Argument(help="The model's config.json.")],
    output: Annotated[Path, typer.Argument(help="The spec file to write (read back with --spec).")],
    vocab: VocabularyOptions = VOCABULARY_OPTIONS,
    constants: Annotated[
        Path | None,
        typer.Option(
            "--constants",
            help="The checkpoint file that stores the constants (Qwen3.8: the .safetensors shard with "
            "ple_embedding.*; also .npz or .json): required for such a config, refused for others.",
        ),
    ] = None,
    model_vocab: Annotated[
        str | None,
        typer.Option(
            "--model-vocab",
            help="The model's vocabulary (its embedding rows): recorded in the spec, engine token "
            "maps are padded to it.",
            show_default="the config's vocab_size",
        ),
    ] = None,
    force: ForceOpt = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Write the spec of a model config's n-gram fields as JSON for --spec."""
    found = config_fields(config)
    model = None if model_vocab is None else parse_size(model_vocab, "--model-vocab")
    fields = spec_fields(found, constants, config, model_vocab_size=model)
    if not found.compress and "no_compress" not in given_options(ctx):
        vocab = replace(vocab, no_compress=True)  # the model hashes raw ids
    declared_vocab = found.declared.get("vocab_size")
    if declared_vocab is not None and vocab.vocab_size is None and "tokenizer" not in given_options(ctx):
        vocab = replace(vocab, vocab_size=declared_vocab)  # LongCat's V, without a tokenizer
    spec = build_spec(ctx, vocab, SpecChoice(fields=fields))
    check_declared(found, spec, config)
    save_spec_file(spec, output, force=force)
    # What the family takes from the options (a stored spec's tables and seed are the checkpoint's).
    derivable = ("max_ngram", "heads", "table_sizes", "layer_ids", "seed")
    if spec.family != "engram":
        derivable = (
            "max_ngram",
            "heads",
            "layer_ids",
            *(() if spec.family == "stored" else ("table_sizes",)),
        )
    defaulted = [name for name in derivable if name not in found.read]
    if as_json:
        print_json(
            {
                "output": str(output),
                "layout": found.layout,
                "read": found.read,
                "defaulted": defaulted,
                "declared": {name: _plain(value) for name, value in found.declared.items()},
                "mask_tokens": found.mask_tokens,
                "masked": found.negative_ids,
                "spec": spec.to_dict(),
                "rows_per_layer": spec.rows_per_layer.tolist(),
                "fingerprint": spec.fingerprint,
            }
        )
        return
    if quiet:
        return
    for parameter, field in found.read.items():
        stderr.print(f"{field} -> {option_for(parameter)} {_shown(found.fields[parameter])}", markup=False)
    if spec.stored is not None:
        rows = ", ".join(f"{r:,}" for r in spec.stored.rows)
        stderr.print(
            f"{constants}: the stored multipliers, table sizes and offsets "
            f"({plural(spec.num_columns, 'table')} per layer, rows {rows}); segments filled with EOS id "
            f"{spec.pad_id}",
            markup=False,
        )
        if spec.stored.module_indices is not None:
            stderr.print(_layer_numbers(spec), markup=False)
    if model is not None:
        stderr.print(f"--model-vocab {model:,}: the model's vocabulary, recorded in the spec", markup=False)
    if defaulted:
        stderr.print(
            f"not in the config, so the defaults: {', '.join(option_for(name) for name in defaulted)}",
            markup=False,
        )
    _report_declared(found, overridden=model is not None)
    if found.mask_tokens:
        ids = ",".join(map(str, found.mask_tokens.values()))
        masked = next(name for name, value in MASKED_CONVENTIONS.items() if value == found.negative_ids)
        stderr.print(
            f"{', '.join(found.mask_tokens)} = {ids}: DEAD tokens; hash with --mask-token {ids} "
            f"--masked {masked} (a spec file holds no masks)",
            markup=False,
        )
    if found.tokenizer is not None and "tokenizer" not in given_options(ctx) and vocab.vocab_size is None:
        stderr.print(
            f"note: the config names the tokenizer {found.tokenizer!r}; V' here comes from "
            f"{vocab.tokenizer}: pass --tokenizer with that model's tokenizer.json",
            markup=False,
        )
    _report_written(output, spec)


_DECLARED_CHECKS = {
    "model_vocab_size": "the model's vocabulary, recorded: engine token maps are padded to it",
    "seed": "the seed the checkpoint's multipliers are held to",
    "rows": "the derived rows per layer match",
    "vocab_size": "V, whose powers weight the ids, matches the vocabulary",
    "table_ratio": "the table size's ratio to V",
    "table_base": "no stored table is smaller",
    "row_multiple": "the table's rows are padded to a multiple of it",
}


def _report_declared(found: ConfigFields, *, overridden: bool = False) -> None:
    """The lines saying which declared values the spec was checked against (``overridden``: the
    model's vocabulary given as --model-vocab, not the config's)."""
    for name, value in found.declared.items():
        if name == "dim" or (name == "model_vocab_size" and overridden):
            continue  # the row width: not a spec field (size and lint take it as --dim)
        what = _DECLARED_CHECKS.get(name, "the vocabulary's V' matches")
        shown = " ".join(f"{x:,}" for x in value) if isinstance(value, tuple) else f"{value:,}"
        stderr.print(f"{found.declared_read[name]} = {shown}: {what}", markup=False)


def _plain(value: Any) -> Any:
    """A declared value as JSON: a list for a tuple."""
    return list(value) if isinstance(value, tuple) else value


def _report_written(output: Path, spec: HashSpec) -> None:
    """The line saying which spec file was written."""
    stderr.print(f"wrote {output} (spec {spec.fingerprint[:16]}, V'={spec.vocab_size:,})", markup=False)


def _shown(value: Any) -> str:
    """A config value as an option takes it: ``2,15`` for a list."""
    return ",".join(map(str, value)) if isinstance(value, tuple) else str(value)


# ------------------------------------------------------------------------------------ lint
@option_groups
def lint_command(
    ctx: typer.Context,
    target: Annotated[
        Path | None,
        typer.Argument(
            help="Lint recorded constants instead of options: an index directory, its manifest.json, "
            "or the output of 'spec show --json'.",
            show_default=False,
        ),
    ] = None,
    options: SpecCommandOptions = SPEC_COMMAND_OPTIONS,
    dim: DimOpt = None,
    hidden_size: Annotated[
        int | None, typer.Option("--hidden-size", help="The width --dim should divide.", min=1)
    ] = None,
    types: Annotated[
        int | None,
        typer.Option("--types", help="Expected distinct n-grams per order (default: the table size).", min=1),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Warn about pitfalls, each with the reason and the fix; exit 1 when there is a finding."""
    if target is not None:
        recorded = set(SpecCommandOptions.names())
        clash = sorted(given_options(ctx) & recorded)
        if clash:
            names = ", ".join(option_name(ctx, c) for c in clash)
            raise UsageError(f"TARGET carries its own constants; drop {names}")
        constants, label = recorded_constants(target), str(target)
    else:
        spec = options.resolve(ctx)
        mismatch = check_released_vocabulary(options.preset_name, spec.vocab_size, allow=True)
        constants = replace(HashConstants.from_spec(spec), vocab_mismatch=mismatch)
        label = f"spec {spec.fingerprint[:16]}"
    if options.preset_name is not None:
        chosen = preset(options.preset_name)
        dim = dim if dim is not None else chosen.dim
        hidden_size = hidden_size if hidden_size is not None else chosen.hidden_size
    if (dim is None) != (hidden_size is None):
        missing = "--dim" if dim is None else "--hidden-size"
        refuse_idle_options(
            ctx, ["dim", "hidden_size"], f"with {missing} too (the check compares them)", f"add {missing}"
        )
    findings = lint_constants(constants, dim=dim, hidden_size=hidden_size, types=types)
    if as_json:
        print_json({"target": label, "findings": [f.to_dict() for f in findings]})
    else:
        _render_findings(label, findings)
    if findings:
        raise typer.Exit(1)


def _render_findings(label: str, findings: list[Finding]) -> None:
    if not findings:
        stdout.print(f"{label}: no findings")
        return
    for finding in findings:
        stdout.print(f"[bold yellow]warning[/] [bold]{finding.code}[/]: {finding.message}")
        stdout.print(f"  [dim]why:[/] {finding.reason}")
        stdout.print(f"  [dim]fix:[/] {finding.fix}")
    stdout.print(f"{label}: {plural(len(findings), 'finding')}")


COMMAND = Command(
    "spec",
    HELP,
    subcommands=(
        Command("show", SHOW_HELP, show_command),
        Command("save", SAVE_HELP, save_command),
        Command("from-config", FROM_CONFIG_HELP, from_config_command),
        Command("lint", LINT_HELP, lint_command),
        Command("export", EXPORT_HELP, export_command),
        Command("check", CHECK_HELP, check_command),
        Command("vectors", VECTORS_HELP, vectors_command),
    ),
)
