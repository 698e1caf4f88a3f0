"""``ngramtool bench``: hashing throughput of each backend next to the torch reference."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ..hashing.backends import choose_backend
from ..model.presets import resolve_spec
from ..tools.benchmarking import BenchReport, default_backends, run_bench
from ..util.wording import plural
from .command import Command
from .options import JsonOpt, PresetOpt, SpecFileOpt
from .render import print_json, stderr, stdout

HELP = """Measure every hashing backend against the torch reference and the copy bandwidth.

Hashes random canonical ids with each backend, next to the straightforward torch reference (one
CPU thread, on the same ids up to --reference-tokens) and the device's measured memory copy
bandwidth, in one run.

Reported per backend: tokens/s, output GB/s, bytes read + written GB/s and their share of the
copy bandwidth, and the speed-up over the reference (also per CPU thread). The table is
Markdown. The spec is the Engram demo's (N=3, K=8, layers 1 and 15) unless --spec or --preset
gives another.

[bold]Examples[/]

  ngramtool bench                                     # numba, numpy and torch on the CPU, 10M tokens
  ngramtool bench --tokens 100000000 --device cuda    # triton and torch on the GPU
  ngramtool bench --backend numpy --backend torch --json
"""


def bench_command(
    tokens: Annotated[int, typer.Option("--tokens", help="Tokens per run.", min=1)] = 10_000_000,
    backends: Annotated[
        list[str] | None,
        typer.Option(
            "--backend",
            "-b",
            help="auto, numba, numpy, torch or triton; repeat for several. [default: all usable on --device]",
            show_default=False,
        ),
    ] = None,
    device: Annotated[str, typer.Option("--device", help="cpu, cuda or cuda:N.")] = "cpu",
    repeats: Annotated[int, typer.Option("--repeats", help="Runs per backend; the best counts.", min=1)] = 3,
    reference_tokens: Annotated[
        int,
        typer.Option(
            "--reference-tokens", help="The reference hashes at most this many of the tokens.", min=1
        ),
    ] = 10_000_000,
    spec_file: SpecFileOpt = None,
    preset: PresetOpt = None,
    as_json: JsonOpt = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Say which backend runs where.")] = False,
) -> None:
    """Benchmark the hashing backends."""
    # With nothing usable on the device, "auto" raises the error that says what to install.
    choices = [choose_backend(name, device) for name in backends or default_backends(device) or ["auto"]]
    if verbose:
        for choice in choices:
            stderr.print(choice.describe(), markup=False)
    base = preset if spec_file is not None else preset or "engram-demo"
    spec = resolve_spec(spec_file=spec_file, preset=base)
    report = run_bench(
        spec,
        tokens=tokens,
        backends=[choice.name for choice in choices],
        device=choices[0].device,
        repeats=repeats,
        reference_tokens=reference_tokens,
    )
    if as_json:
        print_json(report.to_dict())
    else:
        stdout.print(render(report), markup=False)


def render(report: BenchReport) -> str:
    """The report as a few header lines and a Markdown table."""
    spec = report.spec
    row_bytes = spec.num_layers * spec.num_columns * spec.row_dtype.itemsize
    lines = [
        f"ngramtool bench: {plural(report.tokens, 'token')} on {report.device} ({report.device_name})",
        f"spec: N={spec.max_ngram}, K={spec.heads}, layers {list(spec.layer_ids)}, "
        f"{row_bytes} row bytes/token ({spec.row_dtype.name})",
        f"memory copy bandwidth: {report.copy_bytes_per_second / 1e9:.1f} GB/s read + written",
        "",
        "| backend | device | threads | Mtok/s | out GB/s | read+written GB/s | % of copy | x reference "
        "| x ref per core | identical |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    measured = [*report.results, *([report.reference] if report.reference else [])]
    for result in measured:
        row = report.summary(result)
        lines.append(
            f"| {row['backend']} | {row['device']} | {row['threads'] or '-'} "
            f"| {row['tokens_per_second'] / 1e6:.2f} | {row['output_gb_per_second']:.2f} "
            f"| {row['moved_gb_per_second']:.2f} | {row['percent_of_copy_bandwidth']:.1f} "
            f"| {_ratio(row['x_reference'])} | {_ratio(row['x_reference_per_core'])} "
            f"| {'yes' if row['identical'] else 'NO'} |"
        )
    if report.reference is None:
        lines.append("(no reference: torch is not installed; pip install 'ngramtool[torch]')")
    elif report.reference.tokens < report.tokens:
        first = report.reference.tokens
        lines.append(f"(the reference ran on the first {plural(first, 'token')}; rates are per token)")
    return "\n".join(lines)


def _ratio(value: Any) -> str:
    return "-" if value is None else f"{value:.1f}"


COMMAND = Command("bench", HELP, bench_command)
