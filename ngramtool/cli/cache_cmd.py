"""``ngramtool cache``: how much fast memory a corpus's row reads need (exact LRU and static caches)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from ..analysis.measurement import MeasureOptions
from ..analysis.row_cache import CacheFigures, CacheOptions, RowCacheResult, measure_row_cache
from ..model.presets import preset as preset_named
from ..util.errors import UsageError
from ..util.parsing import parse_byte_sizes, parse_sizes
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
    ForceOpt,
    JsonOpt,
    MaskingOptions,
    MeasuredBoundaryOpt,
    PresetOpt,
    QuietOpt,
    ReadingOptions,
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

HELP = """Measure how much fast memory the row reads of a corpus need: exact LRU and static caches.

Every token reads one row per column of every Engram layer (a row of another layer is another
row). Reported: the reads, the distinct rows (the working set, also in bytes) and the hit
ceiling (only first reads miss); for each budget, its rows, the exact LRU hit rate, the best
static cache's (the most frequent rows pinned) and LRU misses per token; a Zipf fit of the row
frequencies and the share of reads of the top 1% / 10% of rows. See docs/analysis.md.

INPUT is text (tokenized as 'hash' does), an index directory or a token file (.npy, .bin, .ds).
Budgets are bytes (--budget 1GB,512MiB) or rows (--rows), at --row-bytes or --encoding rows of
--dim values; the default sweeps 1 MB, 2 MB, 5 MB, ... up to the working set.

[bold]Examples[/]

  ngramtool cache examples/corpus.txt
  ngramtool cache examples/corpus.txt --preset engram-27b --budget 1GB,5GB --encoding fp8-e8m0
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
    row_bytes: Annotated[
        int | None, typer.Option("--row-bytes", help="Bytes per row (in place of --encoding).", min=1)
    ] = None,
    encoding: Annotated[
        str | None,
        typer.Option(
            "--encoding",
            help="Row encoding: fp32, bf16, fp8, fp8-e8m0, q8_0, q4_k, q3_k. [default: bf16]",
            show_default=False,
        ),
    ] = None,
    dim: DimOpt = None,
    per_layer: Annotated[bool, typer.Option("--per-layer", help="Also one cache per layer.")] = False,
    cold_per_document: Annotated[
        bool,
        typer.Option(
            "--cold-per-document", help="Empty the LRU cache at each document (a session's cold start)."
        ),
    ] = False,
    plot: Annotated[
        Path | None,
        typer.Option("--plot", help="Draw the LRU and static hit rates against the budget (PNG, PDF, SVG)."),
    ] = None,
    force: ForceOpt = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Measure the row cache INPUT needs."""
    reading.refuse_eot_token_without_add_eot(ctx)
    if plot is None:
        refuse_idle_options(ctx, ["force"], "with --plot (the file it may replace)")
    figure = plot_figure(plot, force, inputs or []) if plot is not None else None
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
    if plot is not None:
        draw = figure(figsize=(7.5, 4.5), layout="constrained")
        outputs.write(plot, lambda: _plot(draw, plot, result.shared))
    outputs.finish()


# --------------------------------------------------------------------------------- output
_MOST_TICKS = 8  # budgets labelled on the plot's axis


def _render(result: RowCacheResult) -> None:
    spec = result.spec
    print_line(
        f"[bold]{plural(result.tokens, 'token')}[/] in {plural(result.documents, 'document')} from "
        f"{', '.join(result.sources)}; tokenizer {result.tokenizer}, V'={spec.vocab_size:,}, "
        f"boundary {result.boundary}"
    )
    encoding = f"{result.encoding} rows of" if result.encoding else "rows of"
    print_line(
        f"layers {list(spec.layer_ids)} x {plural(spec.num_columns, 'column')}: "
        f"{plural(spec.num_layers * spec.num_columns, 'read')} per token; {encoding} {result.row_bytes:,} B"
        f"{'; LRU emptied at each document' if result.cold_per_document else ''}"
    )
    for figures in (result.shared, *result.layers):
        print_table(_summary(figures))
        print_table(_budgets(figures))


def _name(figures: CacheFigures) -> str:
    return "all layers, one cache" if figures.layer is None else f"layer {figures.layer}"


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


def _budgets(figures: CacheFigures) -> Table:
    grid = report_table(f"{_name(figures)}: hit rate by budget")
    for name in ("budget", "rows", "LRU hit", "static hit", "misses/token", "p99"):
        grid.add_column(name, justify="right")
    for b in figures.budgets:
        grid.add_row(
            "-" if b.bytes is None else byte_size(b.bytes),
            f"{b.rows:,}",
            f"{b.lru_hit_rate:.2%}",
            f"{b.static_hit_rate:.2%}",
            f"{b.misses_per_token_mean:.2f}",
            str(b.misses_per_token_p99),
        )
    return grid


def _plot(figure: Any, path: Path, figures: CacheFigures) -> None:
    """LRU and static hit rates against the budget, in the unit the budgets were given in (bytes,
    as the default sweep is, or rows), with the ceiling."""
    axes = figure.add_subplot()
    in_bytes = all(b.bytes is not None for b in figures.budgets)
    budgets = sorted((b for b in figures.budgets if b.rows > 0), key=lambda b: b.rows)
    sizes = [b.bytes if in_bytes else b.rows for b in budgets]
    axes.plot(sizes, [b.lru_hit_rate for b in budgets], "o-", label="LRU")
    axes.plot(sizes, [b.static_hit_rate for b in budgets], "s--", label="static (most frequent rows pinned)")
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
