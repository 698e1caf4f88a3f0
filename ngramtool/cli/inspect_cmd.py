"""``ngramtool inspect``: what an index directory or a stream holds."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from ..formats.artifacts import Kind, detect
from ..formats.tokenfiles import TOKEN_FORMATS
from ..spec.families import family_note
from ..tools.describe import describe_path
from ..util.wording import plural
from .command import Command
from .options import JsonOpt, refuse_idle_options
from .render import first_only, print_json, print_table

HELP = """Show what an index, a merged dataset, a stream or a token file holds.

Index, dataset and stream: manifest, shapes, spec and the first rows; token files: format,
dtype, counts and the first ids.

[bold]Examples[/]

  ngramtool inspect corpus.ngidx
  ngramtool inspect corpus.ngidx --rows 5 --json
  ngramtool hash corpus.txt -o - | ngramtool inspect -
  ngramtool inspect train.bin                     # nanoGPT / llm.c / Megatron .bin, datatrove .ds, .npy
"""


def inspect_command(
    ctx: typer.Context,
    path: Annotated[
        str, typer.Argument(help="Index directory, stream file, token file, or - for a stream on stdin.")
    ],
    rows: Annotated[int, typer.Option("--rows", help="How many leading tokens' rows to show.", min=0)] = 3,
    token_format: Annotated[
        str | None, typer.Option("--token-format", help=f"A token file's format: {', '.join(TOKEN_FORMATS)}.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Inspect PATH."""
    if path == "-" or detect(path) in (Kind.INDEX, Kind.DATASET):
        refuse_idle_options(ctx, ["token_format"], "to a token file, not to an index, a dataset or a stream")
    report = describe_path(path, rows, token_format)
    if as_json:
        print_json(report)
    else:
        _render(report)


def _render(report: dict[str, Any]) -> None:
    if report["kind"] == "token file":
        _render_token_file(report)
        return
    spec = report["spec"]
    orders = spec["max_ngram"] - 1
    info = Table.grid(padding=(0, 2))
    info.add_column(style="bold")
    info.add_column()
    info.add_row(
        report["kind"],
        f"{report['path']}  ({report['format']} {report['format_version']}, "
        f"ngramtool {report['tool_version']}, {report['created']})",
    )
    info.add_row("tokens", _counts(report))
    tok = report["tokenizer"]
    info.add_row("tokenizer", f"{tok.get('name')} (fingerprint {str(tok.get('fingerprint'))[:16]})")
    vocab = report["vocab"]
    kind = "compressed" if vocab["compressed"] else "identity"
    info.add_row(
        "vocabulary",
        f"V' = {plural(vocab['size'], 'canonical id')} of {vocab['raw_size']:,} ({kind}; "
        f"fingerprint {vocab['fingerprint'][:16]})",
    )
    info.add_row(
        "spec",
        f"N={spec['max_ngram']}, layers {spec['layer_ids']}: {plural(orders, 'order')} x "
        f"{plural(spec['heads'], 'head')} = {plural(spec['tables_per_layer'], 'table')} per layer; "
        f"base sizes {spec['table_sizes']}, seed {spec['seed']}, pad {spec['pad_id']}"
        f"{family_note(spec.get('family', 'engram'))} (fingerprint {spec['fingerprint'][:16]})",
    )
    info.add_row(
        "tables",
        ", ".join(
            f"layer {lid}: {plural(n, 'row')}"
            for lid, n in zip(spec["layer_ids"], spec["rows_per_layer"], strict=True)
        ),
    )
    lazy = report["rows_storage"] == "lazy"
    computed = ", computed from the tokens when read (tokens-only)" if lazy else ""
    info.add_row(
        "rows",
        f"{spec['row_dtype']} [{report['num_tokens']}, {len(spec['layer_ids'])}, "
        f"{spec['tables_per_layer']}], boundary {report['boundary']}{computed}",
    )
    disk = report.get("bytes_on_disk")
    if disk is not None:
        per_token = "" if disk["per_token"] is None else f"; {disk['per_token']:,} per token besides it"
        info.add_row(
            "on disk",
            f"{plural(disk['total'], 'byte')}, {disk['lookup_table']:,} of them the lookup table{per_token}",
        )
    stream = report.get("stream")
    if stream is not None:
        checked = f"chunk CRCs, trailer counts and {stream['checksum']} checked"
        info.add_row("stream", f"{plural(stream['chunks'], 'chunk')}; {checked}")
    info.add_row("tokenization", _tokenization_line(report["tokenization"]))
    if report["kind"] == "dataset":
        info.add_row(
            "shards",
            f"{len(report['shards'])}: "
            + ", ".join(s["path"] for s in report["shards"][:6])
            + (" ..." if len(report["shards"]) > 6 else ""),
        )
    print_table(info)
    if report["first"]:
        grid = Table(title=f"first {plural(len(report['first']), 'token')}", title_justify="left")
        for name in ("t", "token", "layer", "rows (column (n-2)*K + head)"):
            grid.add_column(name, justify="left" if name.startswith("rows") else "right")
        for entry in report["first"]:
            for li, layer_rows in enumerate(entry["rows"]):
                grid.add_row(
                    *first_only(li == 0, str(entry["position"]), str(entry["token"])),
                    str(spec["layer_ids"][li]),
                    " ".join(map(str, layer_rows)),
                )
        print_table(grid)


def _tokenization_line(record: dict[str, Any] | None) -> str:
    """How the input became ids, in one line (docs/formats.md, ``tokenization``)."""
    if record is None:
        return "not recorded (written before format 1.1)"
    if record.get("input") == "tokens":
        return "ids read from a token file (--tokens)"
    special = record.get("special")
    parts = [f"special tokens: {special if isinstance(special, str) else ','.join(special or [])}"]
    eot = record.get("eot")
    added = record.get("add_eot") and eot
    parts.append(f"--add-eot {eot['token']!r} (id {eot['id']})" if added else "no --add-eot")
    before, after = record.get("document_prefix"), record.get("document_suffix")
    if before or after:
        parts.append(f"post-processor ids {before} + text + {after}")
    for key, option in (("json_key", "--text-key"), ("doc_sep", "--doc-sep"), ("format", "--format")):
        if record.get(key):
            parts.append(f"{option} {record[key]!r}")
    if record.get("chat_template"):
        parts.append(f"--chat-template (sha256 {record['chat_template']['sha256'][:12]}...)")
    parts.append(f"errors {record.get('errors')}")
    return "; ".join(parts)


def _counts(report: dict[str, Any]) -> str:
    """``158,122 tokens in 1 document``."""
    return f"{plural(report['num_tokens'], 'token')} in {plural(report['num_documents'], 'document')}"


def _render_token_file(report: dict[str, Any]) -> None:
    info = Table.grid(padding=(0, 2))
    info.add_column(style="bold")
    info.add_column()
    bounds = "" if report["document_boundaries"] else " (this format records no document boundaries)"
    info.add_row("token file", f"{report['path']}  ({report['format']}, {report['dtype']})")
    info.add_row("tokens", _counts(report) + bounds)
    for name, size in report["files"].items():
        info.add_row("file", f"{name}  {plural(size, 'byte')}")
    info.add_row("first ids", " ".join(map(str, report["first_tokens"])))
    print_table(info)


COMMAND = Command("inspect", HELP, inspect_command)
