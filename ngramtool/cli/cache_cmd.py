"""``ngramtool cache``: how much fast memory a corpus's row reads need (exact LRU and static caches)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from ..analysis.hot_sets import save_hot_set
from ..analysis.measurement import MeasureOptions
from ..analysis.row_cache import POLICIES, CacheFigures, CacheOptions, RowCacheResult, measure_row_cache
from ..model.presets import preset as preset_named
from ..util.atomic import check_output_file
from ..util.errors import UsageError
from ..util.parsing import parse_amount, parse_byte_sizes, parse_sizes
from ..util.wording import byte_size, plural
from .command import Command
from .measuring import (
    CountingProgress,
    MaxTokensOpt,
    MeasuredInputs,
    SideOutputs,
    measured_input,
    plot_figure,
    save_plot,
)
from .options import (
    CORPUS_VOCABULARY_OPTIONS,
    MASKING_OPTIONS,
    READING_OPTIONS,
    SPEC_OPTIONS,
    TOKEN_FILE_OPTIONS,
    CorpusVocabularyOptions,
    DimOpt,
    EncodingOpt,
    ForceOpt,
    JsonOpt,
    MaskingOptions,
    MeasuredBoundaryOpt,
    PresetOpt,
    QuietOpt,
    ReadingOptions,
    RowBytesOpt,
    SpecOptions,
    TokenFileOptions,
    WorkersOpt,
    option_groups,
    refuse_idle_options,
)
from .render import (
    InputProgress,
    print_json,
    print_line,
    print_notes,
    print_table,
    report_table,
)

HELP = f"""Measure how much fast memory the row reads of a corpus need: the caches engines ship.

Every token reads one row per column of every Engram layer (a row of another layer is another
row). Reported: the reads, the distinct rows (the working set, also in bytes) and the hit
ceiling (only first reads miss); for each budget, its rows and the exact hit rate of each
--policy ({", ".join(POLICIES)}; default lru,static): LRU, the best static cache (the most
frequent rows pinned), CLOCK, direct-mapped (a row in slot row mod B), with LRU misses and the
pages they read per token; a Zipf fit; the pages a cold read of a row touches (--page-bytes,
--layout); with --batch-tokens the distinct rows of each batch of N tokens. --split layer divides
each budget evenly among the layers, each its own cache. See docs/analysis.md.

INPUT is text (tokenized as 'hash' does), an index directory or a token file (.npy, .bin, .ds).
Budgets are bytes (--budget 1GB,512MiB) or rows (--rows), at --row-bytes or --encoding rows of
--dim values; the default sweeps 1 MB, 2 MB, 5 MB, ... up to the working set. --export-hot 1GB
-o hot.npz writes the best static set of 1 GB (rows per layer, their reads, a manifest);
--hot hot.npz replays one on this INPUT.

[bold]Examples[/]

  ngramtool cache examples/corpus.txt
  ngramtool cache corpus.txt --preset engram-27b --budget 1GB,5GB --encoding fp8-e8m0
  ngramtool cache corpus.txt --policy lru,clock,direct --split layer --budget 1GB
  ngramtool cache corpus.txt --batch-tokens 2048,8192 --page-bytes 4KiB --layout split
  ngramtool cache corpus.txt --export-hot 1GB -o hot.npz
  ngramtool cache other.txt --hot hot.npz --budget 1GB
  ngramtool cache corpus.ngidx --rows 1000,100000 --per-layer --json
  ngramtool cache chat.jsonl --cold-per-document --plot cache.png
  ngramtool cache ids.npy --vocab-size 62330 --row-bytes 160 --max-tokens 1000000
"""


@option_groups
def cache_command(
    ctx: typer.Context,
    inputs: MeasuredInputs = None,
    tokens: TokenFileOptions = TOKEN_FILE_OPTIONS,
    vocab: CorpusVocabularyOptions = CORPUS_VOCABULARY_OPTIONS,
    preset: PresetOpt = None,
    spec_options: SpecOptions = SPEC_OPTIONS,
    masking: MaskingOptions = MASKING_OPTIONS,
    boundary: MeasuredBoundaryOpt = None,
    reading: ReadingOptions = READING_OPTIONS,
    workers: WorkersOpt = None,
    max_tokens: MaxTokensOpt = None,
    budget: Annotated[
        str | None,
        typer.Option(
            "--budget", help="Cache sizes in bytes, comma-separated: 64MB,1GB,2GiB.", show_default=False
        ),
    ] = None,
    rows: Annotated[
        str | None, typer.Option("--rows", help="Cache sizes in rows, comma-separated.", show_default=False)
    ] = None,
    row_bytes: RowBytesOpt = None,
    encoding: EncodingOpt = None,
    dim: DimOpt = None,
    policy: Annotated[
        str,
        typer.Option("--policy", help=f"The caches to simulate, comma-separated: {', '.join(POLICIES)}."),
    ] = "lru,static",
    split: Annotated[
        str,
        typer.Option(
            "--split", help="'shared': one cache for every layer; 'layer': the budget divided evenly."
        ),
    ] = "shared",
    batch_tokens: Annotated[
        str | None,
        typer.Option(
            "--batch-tokens",
            help="Batch sizes in tokens, comma-separated: the distinct rows each batch reads.",
            show_default=False,
        ),
    ] = None,
    page_bytes: Annotated[
        str, typer.Option("--page-bytes", help="Page size of the table's storage (4096, 4KiB, 2MiB).")
    ] = "4096",
    layout: Annotated[
        str,
        typer.Option(
            "--layout", help="'interleaved': a row's bytes together; 'split': values, scales, biases apart."
        ),
    ] = "interleaved",
    per_layer: Annotated[bool, typer.Option("--per-layer", help="Also one cache per layer.")] = False,
    cold_per_document: Annotated[
        bool,
        typer.Option(
            "--cold-per-document",
            help="Empty the LRU, CLOCK and direct caches at each document (cold starts).",
        ),
    ] = False,
    export_hot: Annotated[
        str | None,
        typer.Option(
            "--export-hot",
            help="Write the best static set of this budget (1GB) to -o FILE.",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="The hot set file of --export-hot (.npz).", show_default=False),
    ] = None,
    hot: Annotated[
        Path | None,
        typer.Option(
            "--hot", help="Replay a hot set (from --export-hot): its hit rate here.", show_default=False
        ),
    ] = None,
    plot: Annotated[
        Path | None,
        typer.Option("--plot", help="Draw the hit rates against the budget (PNG, PDF, SVG)."),
    ] = None,
    force: ForceOpt = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Measure the row cache INPUT needs."""
    reading.refuse_eot_token_without_add_eot(ctx)
    if plot is None and output is None:
        refuse_idle_options(ctx, ["force"], "with --plot or -o (the files it may replace)")
    if (export_hot is None) != (output is None):
        missing = "-o FILE" if output is None else "--export-hot BUDGET"
        raise UsageError(f"--export-hot and -o go together (the budget and its file): add {missing}")
    figure = plot_figure(plot, force, inputs or []) if plot is not None else None
    if output is not None:
        check_output_file(output, force, inputs or [], what="hot set file")
    if budget is not None and rows is not None:
        raise UsageError("give --budget (bytes) or --rows, not both")
    if row_bytes is not None and (encoding is not None or dim is not None):
        raise UsageError("give --row-bytes, or --encoding and --dim, not both")
    cache = CacheOptions(
        budgets=None if budget is None else parse_byte_sizes(budget, "--budget"),
        budget_rows=None if rows is None else parse_sizes(rows, "--rows", minimum=0),
        row_bytes=row_bytes,
        encoding=encoding,
        dim=dim if dim is not None or preset is None or row_bytes is not None else preset_named(preset).dim,
        per_layer=per_layer,
        cold_per_document=cold_per_document,
        policies=_policies(policy),
        split=split,
        batch_tokens=() if batch_tokens is None else parse_sizes(batch_tokens, "--batch-tokens"),
        page_bytes=_one_size(page_bytes, "--page-bytes"),
        layout=layout,
        export_hot=None if export_hot is None else _one_size(export_hot, "--export-hot"),
        hot=hot,
    )
    inputs = tokens.inputs(inputs, "cache --rows 100000")
    options = MeasureOptions(boundary, max_tokens, workers)
    chosen = spec_options.choose(preset)
    measured = measured_input(ctx, inputs, tokens, vocab, chosen, reading, options, masking=masking)
    if measured.spec_fields is not None:
        raise UsageError(f"saved type counts ({inputs[0]}) hold no order of reads: give the corpus itself")
    with InputProgress.new_bar(quiet) as bar:
        result = measure_row_cache(
            measured.source,
            measured.mapping,
            cache=cache,
            options=measured.options,
            progress=CountingProgress(bar, quiet),
        )
    measured.note_assumed(quiet)
    print_notes(result.notes, quiet)
    if as_json:
        print_json(result.to_dict())
    else:
        _render(result)
    outputs = SideOutputs(quiet)
    if output is not None and result.hot_set is not None:
        hot_set = result.hot_set
        outputs.write(output, lambda: save_hot_set(hot_set, output))
    if plot is not None:
        draw = figure(figsize=(7.5, 4.5), layout="constrained")
        outputs.write(plot, lambda: _plot(draw, plot, result.shared))
    outputs.finish()


def _policies(text: str) -> list[str]:
    """The policies of --policy, in the order given (each known, each once)."""
    chosen = [name.strip().lower() for name in text.split(",")]
    if not all(name in POLICIES for name in chosen) or len(set(chosen)) != len(chosen):
        raise UsageError(f"--policy takes {', '.join(POLICIES)}, comma-separated, each once (got {text!r})")
    return chosen


def _one_size(text: str, option: str) -> int:
    """One byte size (4096, 4KiB, 1GB): a bare number is bytes."""
    return parse_byte_sizes(parse_amount(text, option).text, option)[0]


# --------------------------------------------------------------------------------- output
_MOST_TICKS = 8  # budgets labelled on the plot's axis
_NAMES = {"lru": "LRU", "static": "static", "clock": "CLOCK", "direct": "direct"}


def _render(result: RowCacheResult) -> None:
    spec = result.spec
    print_line(
        f"[bold]{plural(result.tokens, 'token')}[/] in {plural(result.documents, 'document')} from "
        f"{', '.join(result.sources)}; tokenizer {result.tokenizer}, V'={spec.vocab_size:,}, "
        f"boundary {result.boundary}"
    )
    encoding = f"{result.encoding} rows of" if result.encoding else "rows of"
    caches = "; each layer its own cache (--split layer)" if result.split == "layer" else ""
    print_line(
        f"layers {list(spec.layer_ids)} x {plural(spec.num_columns, 'column')}: "
        f"{plural(spec.num_layers * spec.num_columns, 'read')} per token; {encoding} {result.row_bytes:,} B"
        f"{caches}{'; caches emptied at each document' if result.cold_per_document else ''}"
    )
    for figures in (result.shared, *result.layers):
        print_table(_summary(figures))
        print_table(_budgets(figures, result.policies), drop=("p99",))
    print_line(
        f"a cold read of a row touches {result.shared.pages_per_read:.2f} pages of {result.page_bytes:,} B "
        f"(rows {result.layout})"
    )
    if result.shared.batches:
        print_table(_batches(result.shared))
    if result.hot is not None:
        hot = result.hot
        print_line(
            f"hot set {hot.path or ''}: {hot.rows:,} rows ({byte_size(hot.budget.get('bytes') or 0)}), "
            f"static {hot.static_hit_rate_claimed:.2%} where measured: "
            f"[bold]{hot.hit_rate:.2%}[/] of the reads here"
        )
    if result.hot_set is not None:
        summary = result.hot_set.summary()
        print_line(
            f"hot set of {byte_size(summary['budget']['bytes'])} ({summary['rows']:,} rows): "
            f"static hit rate {summary['static_hit_rate']:.2%} on this input"
        )


def _name(figures: CacheFigures) -> str:
    if figures.layer is not None:
        return f"layer {figures.layer}"
    split = any(b.rows_per_layer is not None for b in figures.budgets)
    return "all layers, a cache per layer" if split else "all layers, one cache"


def _summary(figures: CacheFigures) -> Table:
    grid = report_table(f"{_name(figures)}: reads")
    for name in ("reads", "distinct rows", "working set", "hit ceiling", "Zipf s (r2)", "top 1%", "top 10%"):
        grid.add_column(name, justify="right")
    grid.add_row(
        f"{figures.accesses:,}",
        f"{figures.unique_rows:,}",
        byte_size(figures.working_set_bytes),
        f"{figures.hit_ceiling:.2%}",
        f"{figures.zipf_exponent:.2f} ({figures.zipf_r2:.2f})",
        f"{figures.top_1pct_share:.2%}",
        f"{figures.top_10pct_share:.2%}",
    )
    return grid


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2%}"


def _budgets(figures: CacheFigures, policies: tuple[str, ...]) -> Table:
    grid = report_table(f"{_name(figures)}: hit rate by budget")
    split = any(b.rows_per_layer is not None for b in figures.budgets)
    lru = "lru" in policies
    names = [
        "budget",
        "rows",
        *(["rows/layer"] if split else []),
        *(f"{_NAMES[policy]} hit" for policy in policies),
        *(["misses per token", "p99", "pages per token"] if lru else []),
    ]
    for name in names:
        grid.add_column(name, justify="right")
    for b in figures.budgets:
        grid.add_row(
            "-" if b.bytes is None else byte_size(b.bytes),
            f"{b.rows:,}",
            *([f"{b.rows_per_layer:,}"] if split else []),
            *(_rate(b.hit_rates[policy]) for policy in policies),
            *(
                [
                    "n/a" if b.misses_per_token_mean is None else f"{b.misses_per_token_mean:.2f}",
                    "n/a" if b.misses_per_token_p99 is None else str(b.misses_per_token_p99),
                    "n/a" if b.lru_pages_per_token is None else f"{b.lru_pages_per_token:.2f}",
                ]
                if lru
                else []
            ),
        )
    return grid


def _batches(figures: CacheFigures) -> Table:
    grid = report_table("distinct rows per batch (each batch moves them once)")
    for name in ("tokens", "batches", "mean", "p50", "p99", "max", "p99 bytes", "reads/row"):
        grid.add_column(name, justify="right")
    for batch in figures.batches:
        if not batch.batches:
            grid.add_row(f"{batch.tokens:,}", "0", *["-"] * 6)
            continue
        assert batch.unique_rows_mean is not None and batch.unique_rows_p99 is not None
        grid.add_row(
            f"{batch.tokens:,}",
            f"{batch.batches:,}",
            f"{batch.unique_rows_mean:,.0f}",
            f"{batch.unique_rows_p50:,.0f}",
            f"{batch.unique_rows_p99:,.0f}",
            f"{batch.unique_rows_max:,}",
            byte_size(round(batch.unique_rows_p99 * batch.row_bytes)),
            f"{batch.dedupe_ratio:.2f}",
        )
    return grid


def _plot(figure: Any, path: Path, figures: CacheFigures) -> None:
    """Each policy's hit rate against the budget, in the unit the budgets were given in (bytes,
    as the default sweep is, or rows), with the ceiling."""
    axes = figure.add_subplot()
    in_bytes = all(b.bytes is not None for b in figures.budgets)
    budgets = sorted((b for b in figures.budgets if b.rows > 0), key=lambda b: b.rows)
    sizes = [b.bytes if in_bytes else b.rows for b in budgets]
    styles = {"lru": "o-", "static": "s--", "clock": "^-", "direct": "v:"}
    labels = {"static": "static (most frequent rows pinned)", "direct": "direct-mapped"}
    for policy in budgets[0].hit_rates if budgets else ():
        shown = [(size, b.hit_rates[policy]) for size, b in zip(sizes, budgets, strict=True)]
        shown = [(size, rate) for size, rate in shown if rate is not None]
        axes.plot(*zip(*shown, strict=True), styles[policy], label=labels.get(policy, _NAMES[policy]))
    axes.axhline(figures.hit_ceiling, color="gray", linewidth=1, label=f"ceiling {figures.hit_ceiling:.1%}")
    if sizes:  # (budgets of no row: only the ceiling)
        axes.set_xscale("log")
    ticks = sizes[:: max(1, -(-len(sizes) // _MOST_TICKS))]  # every k-th budget of a long sweep
    axes.set_xticks(ticks, [byte_size(t) if in_bytes else f"{t:,}" for t in ticks])
    axes.tick_params(axis="x", which="minor", labelbottom=False)
    axes.set_xlabel("budget (bytes)" if in_bytes else "budget (rows)")
    axes.set_ylabel("hit rate")
    axes.set_title(f"row cache, {_name(figures)}: {figures.unique_rows:,} distinct rows")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize="small")
    save_plot(figure, path)


COMMAND = Command("cache", HELP, cache_command)
