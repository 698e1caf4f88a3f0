"""``ngramtool spec show|save|lint``: a hash spec's derived constants, its JSON file, and its pitfalls.

Also home of the spec resolution that ``size`` shares: a preset fills the options the user did
not give on the command line.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table

from ..analysis.lint import Finding, HashConstants, lint_constants
from ..analysis.sizing import PRESETS, preset
from ..errors import NgramToolError, UsageError
from ..formats.dataset import DATASET, read_dataset
from ..formats.index import MANIFEST, read_manifest, spec_record
from ..spec import HashSpec
from ..wording import plural
from .common import (
    HeadsOpt,
    JsonOpt,
    LayersOpt,
    MaxNgramOpt,
    NoCompressOpt,
    PadOpt,
    QuietOpt,
    SeedOpt,
    SpecFileOpt,
    SpecOptions,
    TableOpt,
    TokenizerOpt,
    given_options,
    load_spec_file,
    option_name,
    print_json,
    print_table,
    refuse_idle_options,
    resolve_vocab,
    stderr,
    stdout,
)

PresetOpt = Annotated[
    str | None,
    typer.Option("--preset", help=f"Start from a named configuration: {', '.join(PRESETS)}."),
]
VocabSizeOpt = Annotated[
    int | None,
    typer.Option("--vocab-size", help="V' without a tokenizer (canonical ids are below it).", min=1),
]
DimOpt = Annotated[int | None, typer.Option("--dim", help="Values per row, per head.", min=1)]

SPEC_OPTION_NAMES = ("max_ngram", "heads", "layers", "table", "seed", "pad_id", "spec_file")

HELP = """Show, save and lint hash specs.

A spec's derived constants (multipliers, primes, offsets) are what an Engram
hash kernel consumes. --preset starts from a named configuration; options you
give override it.

[bold]Examples[/]

  ngramtool spec show                        # cl100k_base, default options
  ngramtool spec show --preset engram-27b --json
  ngramtool spec save my.json --heads 4 --table 262144 --layers 2
  ngramtool hash corpus.txt --spec my.json
  ngramtool spec lint --preset tutorial --hidden-size 1000
  ngramtool spec lint corpus.txt.ngidx       # an index's constants
"""

SHOW_HELP = """Print a spec's derived constants: multipliers, primes, offsets, rows, row dtype.

[bold]Examples[/]

  ngramtool spec show --heads 4 --table 262144 --layers 2
  ngramtool spec show --preset engram-27b --json > engram-27b.json
  ngramtool spec show --spec my.json --tokenizer tokenizer.json
"""
SAVE_HELP = """Write a spec as JSON, to pass to --spec (hash, explain, collisions, spec).

[bold]Examples[/]

  ngramtool spec save my.json --heads 4 --table 262144 --layers 2
  ngramtool spec save dsv3.json --preset engram-27b --force
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

spec_app = typer.Typer(help=HELP, no_args_is_help=True, rich_markup_mode="rich")


def register(app: typer.Typer) -> None:
    """Add the ``spec`` command group to the app."""
    app.add_typer(spec_app, name="spec")


# ------------------------------------------------------------------------------ resolution
def build_spec(
    ctx: typer.Context,
    options: SpecOptions,
    *,
    preset_name: str | None,
    tokenizer: str | None,
    no_compress: bool = False,
    vocab_size: int | None = None,
) -> HashSpec:
    """The HashSpec of a command's options.

    ``--spec FILE`` wins. Otherwise a preset supplies every option not given on the command line
    (V' and the pad id too, unless a tokenizer is named); without a preset, V' and the pad id come
    from the tokenizer (``tokenizer=None``: never load one) or from ``--vocab-size``.
    """
    given = given_options(ctx)
    if vocab_size is not None and "tokenizer" in given:
        raise UsageError("--vocab-size replaces the tokenizer's V': give one of --vocab-size and --tokenizer")
    if vocab_size is not None:
        refuse_idle_options(ctx, ["no_compress"], "with a tokenizer, and --vocab-size replaces it")
    if options.spec_file is not None:
        named = [name for name in (*SPEC_OPTION_NAMES, "preset_name") if name in given - {"spec_file"}]
        if named:
            clash = ", ".join(option_name(ctx, name) for name in named)
            raise UsageError(f"--spec gives the whole hash spec: drop {clash}")
        if "tokenizer" not in given:
            refuse_idle_options(ctx, ["no_compress"], "with --tokenizer (to check --spec against)")
        vocab = resolve_vocab(tokenizer, no_compress)[1] if tokenizer and "tokenizer" in given else None
        return load_spec_file(options.spec_file, vocab)
    base = preset(preset_name).spec if preset_name else None
    load = (
        tokenizer is not None
        and vocab_size is None
        and (base is None or given & {"tokenizer", "no_compress"})
    )
    tok, vocab = resolve_vocab(tokenizer, no_compress) if load else (None, None)
    if base is not None:
        options = _fill_from(base, options, given, keep_pad=vocab is not None)
    return options.build(vocab, tok, vocab_size=vocab_size or (base.vocab_size if base else None))


def _fill_from(base: HashSpec, options: SpecOptions, given: set[str], *, keep_pad: bool) -> SpecOptions:
    """``options`` with every option the user did not give taken from ``base``.

    The pad id stays as given (or unset, meaning the tokenizer's) when a tokenizer supplies V'.
    """
    sizes = base.table_sizes
    values = {
        "max_ngram": base.max_ngram,
        "heads": base.heads,
        "layers": ",".join(map(str, base.layer_ids)),
        "table": str(sizes[0]) if len(set(sizes)) == 1 else ",".join(map(str, sizes)),
        "seed": base.seed,
        "pad_id": options.pad_id if keep_pad else base.pad_id,
    }
    return replace(options, **{name: value for name, value in values.items() if name not in given})


# ------------------------------------------------------------------------------------ show
@spec_app.command("show", help=SHOW_HELP)
def show_command(
    ctx: typer.Context,
    preset_name: PresetOpt = None,
    tokenizer: TokenizerOpt = "cl100k_base",
    no_compress: NoCompressOpt = False,
    vocab_size: VocabSizeOpt = None,
    max_ngram: MaxNgramOpt = SpecOptions.max_ngram,
    heads: HeadsOpt = SpecOptions.heads,
    layers: LayersOpt = SpecOptions.layers,
    table: TableOpt = SpecOptions.table,
    seed: SeedOpt = SpecOptions.seed,
    pad_id: PadOpt = None,
    spec_file: SpecFileOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print the derived constants: multipliers, primes, offsets, rows per layer, row dtype."""
    options = SpecOptions(max_ngram, heads, layers, table, seed, pad_id, spec_file)
    spec = build_spec(
        ctx,
        options,
        preset_name=preset_name,
        tokenizer=tokenizer,
        no_compress=no_compress,
        vocab_size=vocab_size,
    )
    record = _spec_report(spec)
    if as_json:
        print_json(record)
        return
    stdout.print(
        f"[bold]HashSpec[/] {spec.fingerprint[:16]}: N={spec.max_ngram} (orders 2..{spec.max_ngram}), "
        f"K={plural(spec.heads, 'head')} per order, layers {list(spec.layer_ids)}, "
        f"base tables {list(spec.table_sizes)}, seed {spec.seed}, V'={spec.vocab_size:,}, "
        f"canonical pad {spec.pad_id}"
    )
    stdout.print(
        f"multipliers = 2r+1 with r < half_bound = {spec.half_bound:,} (floor(floor((2^63-1)/V')/2)); "
        f"rows stored as {spec.row_dtype}"
    )
    grid = Table(
        title="derived constants per layer", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False
    )
    for name in ("layer", "multipliers (lag 0..N-1)", "order", "primes (heads 0..K-1)", "offsets", "rows"):
        grid.add_column(name, justify="right" if name in ("layer", "order", "rows") else "left")
    for li, layer in enumerate(spec.layer_ids):
        for oi in range(spec.max_ngram - 1):
            first = oi == 0
            cols = slice(oi * spec.heads, (oi + 1) * spec.heads)
            grid.add_row(
                str(layer) if first else "",
                " ".join(str(m) for m in spec.multipliers[li].tolist()) if first else "",
                str(oi + 2),
                " ".join(str(p) for p in spec.primes[li, oi].tolist()),
                " ".join(str(o) for o in spec.offsets[li, cols].tolist()),
                f"{int(spec.rows_per_layer[li]):,}" if first else "",
            )
    print_table(grid)


def _spec_report(spec: HashSpec) -> dict[str, Any]:
    """The spec, its fingerprint and derived constants (the index manifest's schema) plus extras."""
    return {**spec_record(spec), "row_dtype": spec.row_dtype.str, "half_bound": spec.half_bound}


# ------------------------------------------------------------------------------------ save
@spec_app.command("save", help=SAVE_HELP)
def save_command(
    ctx: typer.Context,
    output: Annotated[Path, typer.Argument(help="The JSON file to write (read back with --spec).")],
    preset_name: PresetOpt = None,
    tokenizer: TokenizerOpt = "cl100k_base",
    no_compress: NoCompressOpt = False,
    vocab_size: VocabSizeOpt = None,
    max_ngram: MaxNgramOpt = SpecOptions.max_ngram,
    heads: HeadsOpt = SpecOptions.heads,
    layers: LayersOpt = SpecOptions.layers,
    table: TableOpt = SpecOptions.table,
    seed: SeedOpt = SpecOptions.seed,
    pad_id: PadOpt = None,
    spec_file: SpecFileOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing file.")] = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Write the spec as JSON for --spec (hash, explain, collisions, spec show/lint)."""
    options = SpecOptions(max_ngram, heads, layers, table, seed, pad_id, spec_file)
    spec = build_spec(
        ctx,
        options,
        preset_name=preset_name,
        tokenizer=tokenizer,
        no_compress=no_compress,
        vocab_size=vocab_size,
    )
    if output.exists() and not force:
        raise UsageError(f"{output} already exists; pass --force to replace it")
    try:
        output.write_text(json.dumps(spec.to_dict(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    except OSError as exc:
        raise NgramToolError(f"cannot write {output}: {exc.strerror}") from None
    if as_json:
        print_json({"output": str(output), "spec": spec.to_dict(), "fingerprint": spec.fingerprint})
    elif not quiet:
        stderr.print(f"wrote {output} (spec {spec.fingerprint[:16]}, V'={spec.vocab_size:,})")


# ------------------------------------------------------------------------------------ lint
@spec_app.command("lint", help=LINT_HELP)
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
    preset_name: PresetOpt = None,
    tokenizer: TokenizerOpt = "cl100k_base",
    no_compress: NoCompressOpt = False,
    vocab_size: VocabSizeOpt = None,
    max_ngram: MaxNgramOpt = SpecOptions.max_ngram,
    heads: HeadsOpt = SpecOptions.heads,
    layers: LayersOpt = SpecOptions.layers,
    table: TableOpt = SpecOptions.table,
    seed: SeedOpt = SpecOptions.seed,
    pad_id: PadOpt = None,
    spec_file: SpecFileOpt = None,
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
        recorded = {*SPEC_OPTION_NAMES, "preset_name", "vocab_size", "tokenizer", "no_compress"}
        clash = sorted(given_options(ctx) & recorded)
        if clash:
            names = ", ".join(option_name(ctx, c) for c in clash)
            raise UsageError(f"TARGET carries its own constants; drop {names}")
        constants, label = _recorded_constants(target), str(target)
    else:
        options = SpecOptions(max_ngram, heads, layers, table, seed, pad_id, spec_file)
        spec = build_spec(
            ctx,
            options,
            preset_name=preset_name,
            tokenizer=tokenizer,
            no_compress=no_compress,
            vocab_size=vocab_size,
        )
        constants, label = HashConstants.from_spec(spec), f"spec {spec.fingerprint[:16]}"
    if preset_name is not None:
        chosen = preset(preset_name)
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


def _recorded_constants(target: Path) -> HashConstants:
    """Constants from an index directory, a manifest.json, or a spec record JSON file."""
    if target.is_dir() and (target / DATASET).is_file():
        manifest = read_dataset(target)
    elif target.is_dir():
        manifest = read_manifest(target)
    elif target.name == MANIFEST:
        manifest = read_manifest(target.parent)
    else:
        try:
            manifest = {"spec": json.loads(target.read_text(encoding="utf-8"))}
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise UsageError(f"cannot read {target} as JSON: {exc}") from None
    rows = manifest.get("arrays", {}).get("rows", {}).get("dtype")
    if not isinstance(manifest.get("spec"), dict):
        raise UsageError(f"{target} holds no spec record")
    if "derived" not in manifest["spec"]:  # a `spec save` file: derive the constants from its fields
        manifest["spec"] = spec_record(HashSpec.from_dict(manifest["spec"]))
    return HashConstants.from_record(manifest["spec"], rows)


def _render_findings(label: str, findings: list[Finding]) -> None:
    if not findings:
        stdout.print(f"{label}: no findings")
        return
    for finding in findings:
        stdout.print(f"[bold yellow]warning[/] [bold]{finding.code}[/]: {finding.message}")
        stdout.print(f"  [dim]why:[/] {finding.reason}")
        stdout.print(f"  [dim]fix:[/] {finding.fix}")
    stdout.print(f"{label}: {plural(len(findings), 'finding')}")
