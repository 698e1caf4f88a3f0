"""``ngramtool collisions``: how a corpus's n-grams really use the hash tables, against uniform hashing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from rich.table import Table

from ..analysis.counting import NgramTypes
from ..analysis.expectations import expected_collision_ratio
from ..analysis.measurement import CollisionsResult, MeasureOptions, PartNotSaved, measure_collisions
from ..analysis.reports import CollisionReport
from ..spec.families import family_note
from ..util.allocator import unpool_large_blocks
from ..util.wording import plural
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
    READING_OPTIONS,
    TOKEN_FILE_OPTIONS,
    CorpusVocabularyOptions,
    ForceOpt,
    JsonOpt,
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
    first_only,
    print_json,
    print_line,
    print_notes,
    print_table,
    report_table,
    skipped_note,
    stderr,
    warn_unsafe_cuts,
)

HELP = """Measure how a corpus's n-grams share the rows of each hash table.

Per table size and order: the collision ratio 1 - rows/types of its heads on
every layer (mean, min, max) next to the uniform-random expectation. With
--per-head, per layer, order and head: distinct n-grams (types), the rows they
occupy, the collision ratio, token-weighted shared rows, n-grams per row, and
the n-grams that collide on every head, each next to its expectation (--json
always has them). See docs/analysis.md.

INPUT is text (tokenized as 'hash' does), an index directory (its own spec and
boundary), or a token file (.npy, .bin, .ds). --table takes one or more base
sizes, each applied to every order: a sweep in one pass over the corpus.

[bold]Examples[/]

  cat corpus.txt | ngramtool collisions --table 262144      # stdin when no INPUT is given
  ngramtool collisions examples/corpus.txt --heads 4 --layers 1 --per-head
  ngramtool collisions train.parquet --table 262144,1048576
  ngramtool collisions examples/corpus.txt --table 16384,262144 --plot s.png
  ngramtool collisions corpus.ngidx --json
  ngramtool collisions ids.npy --vocab-size 62330 --max-tokens 200000
  ngramtool collisions examples/corpus.txt --preset tutorial --table 16384   # the chapter's hash
"""


@dataclass(frozen=True)
class SweepSpecOptions(SpecOptions):
    """The spec options, --table taking several sizes: a sweep."""

    table: Annotated[
        str | None,
        typer.Option(
            "--table",
            help="Base table size(s), comma-separated; each applies to every order (a sweep). "
            "[default: 646400, or the index's / --spec's sizes]",
        ),
    ] = None


SWEEP_SPEC_OPTIONS = SweepSpecOptions.placeholder()


@option_groups
def collisions_command(
    ctx: typer.Context,
    inputs: MeasuredInputs = None,
    tokens: TokenFileOptions = TOKEN_FILE_OPTIONS,
    vocab: CorpusVocabularyOptions = CORPUS_VOCABULARY_OPTIONS,
    spec_options: SweepSpecOptions = SWEEP_SPEC_OPTIONS,
    preset: PresetOpt = None,
    boundary: MeasuredBoundaryOpt = None,
    reading: ReadingOptions = READING_OPTIONS,
    workers: WorkersOpt = None,
    max_tokens: MaxTokensOpt = None,
    save_types: Annotated[
        Path | None,
        typer.Option(
            "--save-types",
            help="Also save the distinct n-gram counts (FILE.ngtypes.npz): parts of shards merge exactly.",
        ),
    ] = None,
    plot: Annotated[
        Path | None,
        typer.Option("--plot", help="Draw measured vs expected collision ratio against table size (PNG)."),
    ] = None,
    per_head: Annotated[
        bool,
        typer.Option(
            "--per-head",
            help="Also every head's figures, and the n-grams that collide on all heads of an order "
            "(--json always has them).",
        ),
    ] = False,
    force: ForceOpt = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Analyse the collisions of INPUT."""
    reading.refuse_eot_token_without_add_eot(ctx)
    if plot is None and save_types is None:
        refuse_idle_options(ctx, ["force"], "with --plot or --save-types (the files it may replace)")
    figure = plot_figure(plot, force, inputs or []) if plot is not None else None
    inputs = tokens.inputs(inputs, "collisions --table 262144")
    chosen = spec_options.choose(preset)
    measured = measured_input(
        ctx, inputs, tokens, vocab, chosen, reading, MeasureOptions(boundary, max_tokens, workers), sweep=True
    )
    outputs = SideOutputs(quiet)
    unpool_large_blocks()  # the per-chunk arrays' memory given back: a bounded peak (allocator.py)
    with InputProgress.new_bar(quiet) as bar:
        try:
            result = measure_collisions(
                measured.source,
                measured.mapping,
                table_sizes=chosen.fields["table_sizes"],
                spec_fields=measured.spec_fields,
                options=measured.options if measured.spec_fields is None else None,
                save_types=save_types,
                force=force,
                progress=CountingProgress(bar, quiet),
            )
        except PartNotSaved as unsaved:  # the figures stand: reported, then the part's failure
            result = unsaved.result
            outputs.failed(unsaved)
    measured.note_assumed(quiet)
    print_notes(result.notes, quiet)
    warn_unsafe_cuts(result.hard_cuts)
    if not result.reports:  # an empty shard's part still merges: not a failure
        outputs.finish()
        if not quiet:
            stderr.print(f"note: the input holds no tokens: saved the empty part {save_types}", markup=False)
        return
    if as_json:
        print_json(result.to_dict())
    else:
        _render(result, per_head)
    if save_types is not None and not outputs.failures:
        outputs.wrote(save_types)
    if plot is not None:
        draw = figure(figsize=(7.5, 4.5), layout="constrained")
        outputs.write(plot, lambda: _plot(draw, plot, result.types, result.reports))
    outputs.finish()


# --------------------------------------------------------------------------------- output
def _share(value: float) -> str:
    """A share as a percentage; tiny non-zero values in scientific notation."""
    if value == 0 or value >= 1e-4:
        return f"{value:.2%}"
    return f"{value:.1e}"


def _render(result: CollisionsResult, per_head: bool) -> None:
    """The input, the distinct n-grams, each order's collision ratio at each table size, and with
    ``per_head`` each head's figures and the all-heads figures."""
    data, reports = result.to_dict(), result.reports
    source, spec = data["input"], reports[0].spec
    print_line(
        f"[bold]{plural(source['tokens'], 'token')}[/] in {plural(source['documents'], 'document')} from "
        f"{', '.join(source['sources'])}; tokenizer {data['tokenizer']}, V'={data['vocab_size']:,}, "
        f"boundary {source['boundary']}{skipped_note(source['skipped_records'])}"
    )
    print_line(
        f"N={spec.max_ngram}, K={plural(spec.heads, 'head')} per order, layers {list(spec.layer_ids)}: "
        f"{plural(spec.max_ngram - 1, 'order')} x {plural(spec.heads, 'head')} = "
        f"{plural(spec.num_columns, 'table')} per layer{family_note(spec.family)}"
    )
    orders = report_table("distinct n-grams")
    for name in ("n", "distinct n-grams (types)", "occurrences", "types / occurrences"):
        orders.add_column(name, justify="right")
    for row in data["orders"]:
        orders.add_row(
            str(row["order"]),
            f"{row['types']:,}",
            f"{row['occurrences']:,}",
            f"{row['types'] / row['occurrences']:.3f}",
        )
    print_table(orders)
    print_table(_summary_table(reports, list(result.types)))
    if not per_head:
        print_line("(per head and on every head of an order: --per-head; every figure: --json)")
        return
    for report in reports:
        print_table(_head_table(report), drop=("max/row (exp)", "mean/row (exp)", "shared tok (exp)"))
        print_table(_order_table(report))


@dataclass(frozen=True)
class _Spread:
    """The collision ratios of one order's heads, on every layer, at one table size."""

    base: int  # the base table size
    tables: np.ndarray  # each head's table size M
    measured: np.ndarray  # each head's collision ratio
    expected: np.ndarray  # each head's uniform-random expectation


def _spread(report: CollisionReport, order: int) -> _Spread:
    heads = [h for h in report.heads if h.order == order]
    return _Spread(
        report.spec.table_sizes[order - 2],
        np.array([h.table for h in heads]),
        np.array([h.collision for h in heads]),
        np.array([h.expected_collision for h in heads]),
    )


def _summary_table(reports: list[CollisionReport], orders: list[int]) -> Table:
    """One row per table size and order: the mean, min and max of the heads' collision ratios."""
    spec = reports[0].spec
    grid = report_table(
        f"collision ratio over {plural(spec.heads, 'head')} x {plural(spec.num_layers, 'layer')} per order "
        "(uniform-random expectation)"
    )
    for name in ("base table", "n", "mean (exp)", "min", "max", "ratio"):
        grid.add_column(name, justify="right")
    for report in reports:
        previous = None
        for order in orders:
            spread = _spread(report, order)
            mean, expected = spread.measured.mean(), spread.expected.mean()
            grid.add_row(
                *first_only(spread.base != previous, f"{spread.base:,}"),
                str(order),
                f"{_share(mean)} ({_share(expected)})",
                _share(spread.measured.min()),
                _share(spread.measured.max()),
                f"{mean / expected:.3f}" if expected > 0 else "-",
            )
            previous = spread.base
    return grid


def _head_table(report: CollisionReport) -> Table:
    sizes = ", ".join(f"{t:,}" for t in sorted(set(report.spec.table_sizes)))
    grid = report_table(f"base table {sizes}: per head, measured (uniform-random expectation)")
    columns = (
        "layer",
        "n",
        "head",
        "M",
        "rows used",
        "collision (exp)",
        "ratio",
        "shared tok (exp)",
        "mean/row (exp)",
        "max/row (exp)",
    )
    for name in columns:
        grid.add_column(name, justify="right")
    previous = None
    for h in report.heads:
        first = (h.layer, h.order) != previous
        previous = (h.layer, h.order)
        ratio = h.collision_vs_expected
        grid.add_row(
            *first_only(first, str(h.layer), str(h.order)),
            str(h.head),
            f"{h.table:,}",
            f"{h.rows:,}",
            f"{_share(h.collision)} ({_share(h.expected_collision)})",
            f"{ratio:.3f}" if ratio is not None else "-",
            f"{_share(h.shared_tokens)} ({_share(h.expected_shared)})",
            f"{h.mean_per_row:.2f} ({h.expected_mean_per_row:.2f})",
            f"{h.max_per_row} ({h.expected_max_per_row:.1f})",
        )
    return grid


def _order_table(report: CollisionReport) -> Table:
    grid = report_table("all heads of an order together")
    for name in ("layer", "n", "types", "shared on every head (exp)", "indistinguishable (exp)"):
        grid.add_column(name, justify="right")
    for o in report.orders:
        grid.add_row(
            str(o.layer),
            str(o.order),
            f"{o.types:,}",
            f"{_share(o.all_heads_shared)} ({_share(o.expected_all_heads_shared)})",
            f"{_share(o.indistinguishable)} ({_share(o.expected_indistinguishable)})",
        )
    return grid


def _plot(figure: Any, path: Path, types: dict[int, NgramTypes], reports: list[CollisionReport]) -> None:
    """Measured (mean over layers and heads, with their range) and expected collision ratio vs M."""
    axes = figure.add_subplot()
    for i, (order, grams) in enumerate(types.items()):
        spreads = [_spread(report, order) for report in reports]
        tables = np.array([s.tables.mean() for s in spreads])
        mean = np.array([s.measured.mean() for s in spreads])
        low = np.array([s.measured.min() for s in spreads])
        high = np.array([s.measured.max() for s in spreads])
        axes.errorbar(
            tables, mean, yerr=[mean - low, high - mean], fmt="o", color=f"C{i}", capsize=3,
            label=f"{order}-grams measured ({grams.types:,} distinct)",
        )  # fmt: skip
        grid = np.geomspace(tables.min() / 2, tables.max() * 2, 200)
        expected = [expected_collision_ratio(grams.types, round(m)) for m in grid]
        axes.plot(grid, expected, color=f"C{i}", linewidth=1, label=f"{order}-grams uniform random")
    axes.set_xscale("log")
    axes.set_xlabel("table size M (rows per head)")
    axes.set_ylabel("collision ratio 1 - rows / types")
    axes.set_title("n-gram hash collisions: measured vs uniform-random expectation")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize="small")
    save_plot(figure, path)


COMMAND = Command("collisions", HELP, collisions_command)
