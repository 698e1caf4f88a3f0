"""``ngramtool size``: tables, parameters, bytes and traffic of an Engram memory, without a corpus."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from ..analysis.sizing import PCIE_X16, SizeReport, size_engram
from ..model.presets import PRESETS
from ..spec.families import TABLE_SIZES_IN_WORDS
from ..util.parsing import parse_amount, parse_size
from ..util.wording import byte_size, plural
from .command import Command
from .options import ENCODINGS, LAYOUT_OPTIONS, DimOpt, JsonOpt, LayoutOptions, given_options, option_groups
from .render import print_json, print_line, print_table, report_table

HELP = f"""Size an Engram memory from its layout alone, without a corpus.

Tables and rows (with the real primes; a checkpoint's declared rows next to
them), parameters, bytes per row encoding ({ENCODINGS}; int8-gG for any group G),
AdamW state, what one token reads, the read bandwidth at a decode rate and its
share of a PCIe link, each tensor-parallel rank's rows (--tp: by column), each
expert-parallel rank's rows of every table (--ep: as Megatron-LM splits them),
and the table's share of the model. Options you give override the preset (default: engram-demo).
--heads counts heads PER ORDER.

[bold]Examples[/]

  ngramtool size                                  # the Engram demo
  ngramtool size --preset engram-27b --tokens-per-second 2e6 --json
  ngramtool size --preset engram-27b --backbone-params 21e9
  ngramtool size --preset engram-27b --budget 5.7e9   # table that fits
  ngramtool size --budget 10GB --encoding fp8-e8m0    # bytes that fit
  ngramtool size --heads 4 --max-ngram 4 --table 1000003 --dim 32
  ngramtool size --preset deepseek-v4.1-flash --tp 8  # rows of 8 ranks
  ngramtool size --preset deepseek-v4.1-flash --ep 4  # Megatron's split
  ngramtool size --preset qwen3.8-flash-next          # NVFP4, IQ4_NL, MLX ...
  ngramtool size --preset longcat-flash --budget 10GB --encoding nvfp4
"""


@option_groups
def size_command(
    ctx: typer.Context,
    preset_name: Annotated[str, typer.Option("--preset", help=f"{', '.join(PRESETS)}.")] = "engram-demo",
    layout: LayoutOptions = LAYOUT_OPTIONS,
    dim: DimOpt = None,
    budget: Annotated[
        str | None,
        typer.Option(
            "--budget",
            help="Find the largest per-head table that fits: parameters (5.7e9), or bytes with a unit "
            "(10GB, 512GiB) of rows in --encoding (default bf16) or of --row-bytes each.",
            show_default=False,
        ),
    ] = None,
    encoding: Annotated[
        str | None,
        typer.Option(
            "--encoding",
            help=f"With a --budget in bytes: the row encoding ({ENCODINGS}, int8-gG).",
            show_default=False,
        ),
    ] = None,
    row_bytes: Annotated[
        int | None,
        typer.Option(
            "--row-bytes", help="With a --budget in bytes: bytes per row (in place of --encoding).", min=1
        ),
    ] = None,
    tokens_per_second: Annotated[
        float | None,
        typer.Option(
            "--tokens-per-second",
            help="Decode rate R: the read bandwidth R x bytes/token, and its share of a PCIe link.",
        ),
    ] = None,
    backbone_params: Annotated[
        float | None,
        typer.Option("--backbone-params", help="Backbone parameters P, for the table's share."),
    ] = None,
    fp8_block: Annotated[
        int, typer.Option("--fp8-block", help="fp8: values per fp32 scale along a row.", min=1)
    ] = 128,
    tp: Annotated[
        int | None,
        typer.Option("--tp", help="Tensor-parallel ranks R: split each layer's table by column over R."),
    ] = None,
    ep: Annotated[
        str | None,
        typer.Option(
            "--ep",
            help="Expert-parallel ranks R: each rank's contiguous rows of every table as Megatron-LM "
            "splits them (start(r) = r x (rows // R) + min(r, rows mod R)).",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Report the sizes and costs of a memory."""
    amount = None if budget is None else parse_amount(budget, "--budget")
    sized = size_engram(
        preset_name,
        **layout.fields,
        dim=dim,
        budget=None if amount is None or amount.in_bytes else amount.value,
        budget_bytes=amount.value if amount is not None and amount.in_bytes else None,
        encoding=encoding,
        row_bytes=row_bytes,
        tokens_per_second=tokens_per_second,
        backbone_params=backbone_params,
        fp8_block=fp8_block,
        tp=tp,
        ep=None if ep is None else parse_size(ep, "--ep"),
    )
    data = sized.to_dict()
    if as_json:
        print_json(data)
        return
    modified = given_options(ctx) & {*LayoutOptions.names(), "dim", "budget"}
    _render(f"{preset_name} (modified)" if modified else preset_name, sized.report, data)


def _si(value: float, unit: str = "") -> str:
    for factor, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.2f} {prefix}{unit}"
    return f"{value:g} {unit}".strip()


def _in_words(count: int) -> str:
    for factor, word in ((1e9, "billion"), (1e6, "million")):
        if count >= factor:
            return f"{count / factor:.3g} {word}"
    return f"{count:,}"


def _render(name: str, report: SizeReport, data: dict[str, Any]) -> None:
    spec = report.spec
    print_line(f"[bold]{name}[/]: {report.tables_in_words}")
    grid = report_table()
    grid.add_column("figure")
    grid.add_column("value", justify="right")
    grid.add_column("note")
    primes = spec.primes.ravel()
    sizes = f"{int(primes.min()):,} .. {int(primes.max()):,}"
    rows = [
        ("rows per table", sizes, TABLE_SIZES_IN_WORDS[spec.family]),
        (
            "rows per layer",
            ", ".join(f"{rows:,}" for rows in report.rows_per_layer),
            f"layers {list(spec.layer_ids)}"
            + (f", padded to a multiple of {report.row_multiple}" if report.row_multiple > 1 else ""),
        ),
        *_declared_rows(report),
        ("rows", f"{report.rows:,}", plural(report.tables, "table")),
        ("dim per head", f"{report.dim}", "values per row"),
        ("memory width e_t", f"{report.memory_width:,}", "per layer: (N-1) x K x dim"),
        ("parameters", f"{report.params:,}", _in_words(report.params)),
        *(
            [("  before prime rounding", f"{report.nominal_params:,}", "bases x K x L x dim")]
            if spec.family == "engram"
            else []
        ),
        ("AdamW moments", _si(report.adamw_bytes, "B"), "two fp32 moments"),
        ("rows read per token", f"{report.rows_per_token}", "one per table"),
        ("values read per token", f"{report.values_per_token:,}", ""),
        ("share of rows per token", f"{report.touched_fraction:.3g}", "rows read / rows"),
    ]
    if data["budget"]:
        rows.extend(_budget_rows(data["budget"]))
    if data["backbone"]:
        backbone = data["backbone"]
        rows.append(("backbone parameters", f"{backbone['backbone_params']:,.0f}", ""))
        rows.append(("table / backbone", f"{backbone['table_to_backbone']:.3f}", ""))
        rows.append(("table share", f"{backbone['table_share']:.1%}", "paper: 20-25% of the sparse budget"))
    for row in rows:
        grid.add_row(*row)
    print_table(grid)
    print_table(_storage_table(report, data["offload"], data["tensor_parallel"]), drop=("format",))
    if data["tensor_parallel"]:
        print_table(_tensor_parallel_table(report, data["tensor_parallel"]))
    if data["expert_parallel"]:
        print_table(_expert_parallel_table(data["expert_parallel"]))


def _budget_rows(fit: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The figure rows of a budget: parameters, or bytes of rows of an encoding (or a size)."""
    found = f"largest base table that fits: {fit['table']:,}"
    if fit["unit"] == "parameters":
        return [("budget", f"{fit['budget']:,.0f}", found)]
    rows = f"{fit['encoding']} rows" if fit["encoding"] else "--row-bytes"
    return [
        ("budget", byte_size(round(fit["budget"])), found),
        ("  bytes per row", f"{fit['row_bytes']:,}", rows),
    ]


def _declared_rows(report: SizeReport) -> list[tuple[str, str, str]]:
    """The figure row of a checkpoint's declared rows per layer, saying whether the spec derives them."""
    if report.declared_rows is None:
        return []
    note = (
        "equal to the derived rows"
        if report.declared_rows_match
        else "[bold red]NOT the derived rows: the spec does not give the checkpoint's tables[/]"
    )
    return [("declared rows per layer", ", ".join(f"{rows:,}" for rows in report.declared_rows), note)]


def _storage_table(
    report: SizeReport, offload: dict[str, Any] | None, tensor_parallel: dict[str, Any] | None
) -> Table:
    """Bytes per row encoding: a row, the tables, one token's reads and, with a decode rate, the read
    bandwidth and its PCIe link shares; with --tp, the largest rank's tables. Figures never wrap:
    where they do not fit with the format notes, the notes are left out."""
    grid = report_table(
        f"storage by encoding, rows of {report.dim} values (fp8: + one fp32 scale per {report.fp8_block})"
    )
    grid.add_column("encoding")
    grid.add_column("B/row", justify="right")
    grid.add_column("tables", justify="right", no_wrap=True)
    grid.add_column("bytes/token", justify="right")
    if tensor_parallel:
        grid.add_column("largest\nrank", justify="right", no_wrap=True)
    if offload:
        grid.add_column(f"at\n{_si(offload['tokens_per_second'], 'tok/s')}", justify="right", no_wrap=True)
        for link in PCIE_X16:
            grid.add_column(f"{link} ({_si(PCIE_X16[link], 'B/s')})", justify="right")
    grid.add_column("format", no_wrap=True)
    for encoding in report.encodings:
        name, row_bytes = encoding.name, report.row_bytes[encoding.name]
        if row_bytes is None:
            reason = f"n/a: dim not a multiple of {encoding.block}"
            grid.add_row(name, "n/a", *[""] * (len(grid.columns) - 3), reason)
            continue
        cells = [
            name,
            f"{row_bytes:,}",
            _si(report.table_bytes[name], "B"),
            f"{report.bytes_per_token[name]:,}",
        ]
        if tensor_parallel:
            cells.append(_si(max(shard["table_bytes"][name] for shard in tensor_parallel["shards"]), "B"))
        if offload:
            cells.append(_si(offload[name]["bytes_per_second"], "B/s"))
            cells.extend(f"{share:.1%}" for share in offload[name]["link_share"].values())
        grid.add_row(*cells, encoding.description)
    return grid


def _tensor_parallel_table(report: SizeReport, tensor_parallel: dict[str, Any]) -> Table:
    """Each rank's columns and its contiguous row range [start, end) of each layer's table."""
    title = (
        f"tensor parallel over {plural(tensor_parallel['ranks'], 'rank')}: "
        f"{tensor_parallel['columns_per_rank']} of the {report.tables_per_layer} columns each, "
        f"{plural(tensor_parallel['rows_read_per_token_per_rank'], 'row')} read per token"
    )
    grid = report_table(title)
    grid.add_column("rank", justify="right")
    grid.add_column("columns")
    for layer in report.spec.layer_ids:
        grid.add_column(f"layer {layer} [start, end)", justify="right", no_wrap=True)
    grid.add_column("rows", justify="right")
    for shard in tensor_parallel["shards"]:
        first, end = shard["columns"]
        grid.add_row(
            str(shard["rank"]),
            f"{first}-{end - 1}" if end - first > 1 else str(first),
            *(f"{start:,}..{stop:,}" for start, stop in shard["row_ranges"]),
            f"{shard['rows']:,}",
        )
    return grid


EP_RANKS_SHOWN = 8
"""Ranks the --ep table shows as columns (--json has every rank)."""


def _expert_parallel_table(expert_parallel: dict[str, Any]) -> Table:
    """Each table's rows and each rank's contiguous range [start, end) of them, as Megatron splits
    them; the last line each rank's rows."""
    ranks = expert_parallel["ranks"]
    shown = min(ranks, EP_RANKS_SHOWN)
    more = f"; ranks {shown}.. in --json" if ranks > shown else ""
    grid = report_table(
        f"expert parallel over {plural(ranks, 'rank')}: rows [start, end) of every table, "
        f"start(r) = r x (rows // {ranks}) + min(r, rows mod {ranks}){more}"
    )
    for name in ("layer", "order", "head", "rows"):
        grid.add_column(name, justify="right")
    for rank in range(shown):
        grid.add_column(f"rank {rank}", justify="right", no_wrap=True)
    for table in expert_parallel["tables"]:
        cells = [str(table["layer"]), str(table["order"]), str(table["head"]), f"{table['rows']:,}"]
        grid.add_row(*cells, *(f"{lo:,}..{hi:,}" for lo, hi in table["ranges"][:shown]))
    grid.add_row("", "", "", "rows", *(f"{rows:,}" for rows in expert_parallel["rank_rows"][:shown]))
    return grid


COMMAND = Command("size", HELP, size_command)
