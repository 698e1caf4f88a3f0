"""``ngramtool collisions``: how a corpus's n-grams really use the hash tables, against uniform hashing."""

from __future__ import annotations

import resource
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from rich import box
from rich.table import Table

from ..analysis.collisions import (
    CollisionReport,
    NgramTypeCounter,
    NgramTypes,
    expected_collision_ratio,
    sweep_collisions,
)
from ..analysis.partials import SUFFIX as PARTS_SUFFIX
from ..analysis.partials import load_and_merge, load_types, merge_types, recorded_specs, spec_record
from ..analysis.partials import save_types as save_partial_types
from ..errors import NgramToolError, UsageError
from ..formats.dataset import DATASET, MergedIndex
from ..formats.index import MANIFEST, open_index
from ..formats.tokenfiles import iter_token_file_chunks, open_token_file
from ..jobs import vocab_name
from ..pipeline import CHUNK_TOKENS, TokenChunk, iter_index_chunks, iter_token_chunks
from ..spec import HashSpec
from ..textio import check_reading, input_size
from ..vocab import identity_vocab
from ..wording import plural
from .common import (
    DEFAULT_TOKENIZER,
    TEXT_INPUT_OPTIONS,
    AddEotOpt,
    DocSepOpt,
    EotTokenOpt,
    ErrorsOpt,
    ForceOpt,
    HeadsOpt,
    JsonKeyOpt,
    JsonOpt,
    LayersOpt,
    MaxNgramOpt,
    NoCompressOpt,
    OptionalTokenizerOpt,
    PadOpt,
    QuietOpt,
    SeedOpt,
    SpecFileOpt,
    SpecialOpt,
    SpecOptions,
    TokenFormatOpt,
    TokensFileOpt,
    TokenVocabSizeOpt,
    WorkersOpt,
    byte_progress,
    check_output_file,
    given_options,
    note_assumed_tokenizer,
    option_name,
    parse_int_list,
    print_json,
    print_table,
    refuse_eot_token_without_add_eot,
    refuse_idle_options,
    refuse_idle_reset,
    refuse_repeated_inputs,
    resolve_vocab,
    show_progress,
    skipped_note,
    status,
    stderr,
    stdout,
    warn_unsafe_cuts,
    worker_count,
)
from .spec_cmd import SPEC_OPTION_NAMES

TOKEN_SUFFIXES = (".npy", ".bin", ".ds")

HELP = """Measure how a corpus's n-grams share the rows of each hash table.

Per layer, order and head: distinct n-grams (types), the rows they occupy, the
collision ratio 1 - rows/types, token-weighted shared rows, n-grams per row,
and the n-grams that collide on every head, each next to its uniform-random
expectation. See docs/analysis.md.

INPUT is text (tokenized as 'hash' does), an index directory (its own spec and
boundary), or a token file (.npy, .bin, .ds). --table takes one or more base
sizes, each applied to every order: a sweep in one pass over the corpus.

[bold]Examples[/]

  ngramtool collisions examples/corpus.txt --heads 4 --layers 1
  ngramtool collisions examples/corpus.txt --table 16384,262144 --plot s.png
  ngramtool collisions corpus.ngidx --json
  ngramtool collisions ids.npy --vocab-size 62330 --max-tokens 200000
"""


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("collisions", help=HELP)(collisions_command)


@dataclass(frozen=True)
class _InputOptions:
    """What to read and how (text as ``hash`` reads it, token files, an index)."""

    inputs: list[str]
    tokens_file: Path | None
    token_format: str | None
    vocab_size: int | None
    tokenizer: str | None
    no_compress: bool
    boundary: str
    json_key: str | None
    doc_sep: str | None
    errors: str
    add_eot: bool
    eot_token: str | None
    special: str | None
    workers: int
    max_tokens: int | None
    quiet: bool


@dataclass(frozen=True)
class _Source:
    """Raw token chunks, how to canonicalize them, and the spec and boundary that go with them."""

    kind: str
    sources: list[str]
    streams: Iterable[Iterator[TokenChunk]]  # independent streams (a dataset's shards, opened in turn)
    canonicalize: Callable[..., np.ndarray]  # (raw ids, first_position=) -> canonical ids
    spec: HashSpec
    boundary: str
    total_bytes: int | None
    tokenizer: str | None
    vocab_fingerprint: str
    parts: list[Path] = field(default_factory=list)  # saved partial counts to merge instead of counting
    analysed: list[HashSpec] = field(default_factory=list)  # the specs the parts analysed (a sweep)


PLOT_SUFFIXES = {".png", ".pdf", ".svg"}


def collisions_command(
    ctx: typer.Context,
    inputs: Annotated[
        list[str] | None,
        typer.Argument(help="Text files or -, an index directory, or one token file.", show_default=False),
    ] = None,
    tokens_file: TokensFileOpt = None,
    token_format: TokenFormatOpt = None,
    vocab_size: TokenVocabSizeOpt = None,
    tokenizer: OptionalTokenizerOpt = None,
    no_compress: NoCompressOpt = False,
    max_ngram: MaxNgramOpt = SpecOptions.max_ngram,
    heads: HeadsOpt = SpecOptions.heads,
    layers: LayersOpt = SpecOptions.layers,
    table: Annotated[
        str | None,
        typer.Option(
            "--table",
            help="Base table size(s), comma-separated; each applies to every order (a sweep). "
            "[default: 646400, or the index's / --spec's sizes]",
        ),
    ] = None,
    seed: SeedOpt = SpecOptions.seed,
    pad_id: PadOpt = None,
    spec_file: SpecFileOpt = None,
    boundary: Annotated[
        str,
        typer.Option("--boundary", help="'none': pad only at stream start (Engram); 'reset': per document."),
    ] = "none",
    add_eot: AddEotOpt = False,
    eot_token: EotTokenOpt = None,
    special: SpecialOpt = None,
    json_key: JsonKeyOpt = None,
    doc_sep: DocSepOpt = None,
    errors: ErrorsOpt = "strict",
    workers: WorkersOpt = None,
    max_tokens: Annotated[
        int | None, typer.Option("--max-tokens", help="Analyse only the first N tokens.", min=1)
    ] = None,
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
    force: ForceOpt = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Analyse the collisions of INPUT."""
    if boundary not in ("none", "reset"):
        raise UsageError(f"--boundary must be 'none' or 'reset' (got {boundary!r})")
    refuse_repeated_inputs(inputs or [])
    refuse_eot_token_without_add_eot(ctx, add_eot)
    if plot is None and save_types is None:
        refuse_idle_options(ctx, ["force"], "with --plot or --save-types (the files it may replace)")
    sweep = sorted(set(parse_int_list(table, "--table"))) if table is not None else []
    options = SpecOptions(max_ngram, heads, layers, seed=seed, pad_id=pad_id, spec_file=spec_file)
    read = _InputOptions(
        inputs or [], tokens_file, token_format, vocab_size, tokenizer, no_compress, boundary,
        json_key, doc_sep, errors, add_eot, eot_token, special, worker_count(workers), max_tokens, quiet,
    )  # fmt: skip
    source = _open_source(ctx, read, options)
    figure = _figure_class() if plot is not None else None  # fail before the long pass, not after
    if plot is not None:
        check_output_file(plot, force, inputs or [], what="--plot file")
        if plot.suffix.lower() not in PLOT_SUFFIXES:
            raise UsageError(f"--plot {plot}: use one of {', '.join(sorted(PLOT_SUFFIXES))}")
    if save_types is not None:
        if not str(save_types).endswith(PARTS_SUFFIX):
            raise UsageError(
                f"--save-types {save_types}: name it *{PARTS_SUFFIX} so that collisions reads it back"
            )
        check_output_file(save_types, force, inputs or [], what="--save-types file")
    orders = source.spec.max_ngram - 1
    specs = (
        [replace(source.spec, table_sizes=(t,) * orders) for t in sweep] or source.analysed or [source.spec]
    )
    streams = _first_tokens(source.streams, max_tokens) if max_tokens else source.streams
    started = time.perf_counter()
    if source.parts:
        types, meta = load_and_merge(source.parts)
        documents, tokens, skipped = meta["documents"], meta["tokens"], meta["skipped_records"]
    else:
        types, documents, tokens, skipped = _count(source, streams, quiet)
    counted = time.perf_counter()
    if save_types is not None:
        meta = {"max_ngram": source.spec.max_ngram, "vocab_size": source.spec.vocab_size,
                "pad_id": source.spec.pad_id, "boundary": source.boundary,
                "vocab_fingerprint": source.vocab_fingerprint, "tokens": tokens, "documents": documents,
                "skipped_records": skipped,
                "sources": source.sources, "spec": spec_record(specs),
                "tokenizer": source.tokenizer}  # fmt: skip
        save_partial_types(save_types, types, meta)
    if tokens == 0 and save_types is not None:  # an empty shard's part still merges: not a failure
        if not quiet:
            stderr.print(f"note: the input holds no tokens: saved the empty part {save_types}", markup=False)
        return
    if tokens == 0:
        raise NgramToolError("the input holds no tokens: nothing to analyse")
    with status(f"analysing {plural(len(specs), 'table size')}", not quiet):
        reports = sweep_collisions(types, specs)
    finished = time.perf_counter()
    data = {
        "input": {
            "kind": source.kind,
            "sources": source.sources,
            "tokens": tokens,
            "documents": documents,
            "max_tokens": max_tokens,
            "boundary": source.boundary,
            "skipped_records": skipped,
        },
        "tokenizer": source.tokenizer,
        "vocab_size": source.spec.vocab_size,
        "spec": spec_record(specs),
        "orders": [{"order": n, "types": t.types, "occurrences": t.occurrences} for n, t in types.items()],
        "tables": [r.to_dict() for r in reports],
        "run": {
            "seconds_counting": round(counted - started, 3),
            "seconds_analysing": round(finished - counted, 3),
            "tokens_per_second_counting": round(tokens / max(counted - started, 1e-9)),
            "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        },
    }
    if plot is not None:
        _plot(figure(figsize=(7.5, 4.5), layout="constrained"), plot, types, reports)
    if as_json:
        print_json(data)
    else:
        _render(data, reports)


# ---------------------------------------------------------------------------------- inputs
def _open_source(ctx: typer.Context, read: _InputOptions, options: SpecOptions) -> _Source:
    """Classify INPUT (text, index directory, token file) and set up its chunks and spec."""
    inputs, tokens_file = read.inputs, read.tokens_file
    parts = [name.endswith(PARTS_SUFFIX) for name in inputs]
    if any(parts) and not all(parts):
        raise UsageError(
            f"partial counts (*{PARTS_SUFFIX}) are merged alone, not mixed with text, token files or "
            "indexes: give only the parts"
        )
    if inputs and all(parts):
        counting = ["tokens_file", "token_format", "vocab_size", "tokenizer", "no_compress", "boundary"]
        counting += ["max_ngram", "pad_id"]  # N and the pad are fixed when the n-grams are counted
        refuse_idle_options(
            ctx, [*counting, *TEXT_INPUT_OPTIONS, "max_tokens"], "to counting, not to saved partial counts"
        )
        return _parts_source(ctx, read, options)
    if tokens_file is not None and inputs:
        raise UsageError("give INPUT or --tokens FILE, not both")
    if tokens_file is None and len(inputs) == 1 and Path(inputs[0]).is_dir():
        folder = Path(inputs[0])
        if not ((folder / MANIFEST).is_file() or (folder / DATASET).is_file()):
            raise UsageError(
                f"{folder} is a directory but neither an ngramtool index nor a merged dataset: "
                "give the text files inside it"
            )
        refuse_idle_options(ctx, TEXT_INPUT_OPTIONS, "to text input, not to an index")
        return _index_source(ctx, Path(inputs[0]))
    if tokens_file is None and len(inputs) == 1 and (read.token_format or _looks_like_tokens(inputs[0])):
        tokens_file, inputs = Path(inputs[0]), []
    if tokens_file is None and not inputs:
        raise UsageError("give text INPUT files (or -), an index directory, or a token file")
    if any(Path(i).is_dir() or _looks_like_tokens(i) for i in inputs):
        raise UsageError("an index directory or a token file is analysed alone: give just that one INPUT")
    if tokens_file is not None:
        refuse_idle_options(ctx, TEXT_INPUT_OPTIONS, "to text input, not to a token file")
        refuse_idle_reset(read.boundary, tokens_file, read.token_format)
    else:
        refuse_idle_options(ctx, ["token_format"], "to a token file (--tokens FILE or one INPUT)")
        check_reading(read.json_key, read.doc_sep, read.errors)
    if tokens_file is not None and read.tokenizer is None and read.vocab_size is not None:
        refuse_idle_options(ctx, ["no_compress"], "with a tokenizer, and --vocab-size replaces it")
        tok, vocab = None, identity_vocab(read.vocab_size)
    else:
        if read.vocab_size is not None:
            raise UsageError("--vocab-size applies only to a token file without --tokenizer")
        tok, vocab = resolve_vocab(
            read.tokenizer or DEFAULT_TOKENIZER, read.no_compress, quiet=read.quiet, special=read.special
        )
        if tokens_file is not None and read.tokenizer is None:
            note_assumed_tokenizer(tokens_file, vocab, read.quiet)
    spec = options.build(vocab, tok)
    name = tok.name if tok is not None else None
    if tokens_file is not None:
        total = open_token_file(tokens_file, read.token_format).nbytes
        chunks = iter_token_file_chunks(
            tokens_file, read.token_format, vocab_size=vocab.raw_size, vocab_name=vocab_name(tok)
        )
        sources = [str(tokens_file)]
        return _Source(
            "tokens",
            sources,
            [chunks],
            vocab.canonicalize,
            spec,
            read.boundary,
            total,
            name,
            vocab.fingerprint,
        )
    chunks = iter_token_chunks(
        inputs,
        tok,
        json_key=read.json_key,
        doc_sep=read.doc_sep,
        errors=read.errors,
        add_eot=read.add_eot,
        eot_token=read.eot_token,
        chunk_tokens=min(CHUNK_TOKENS, read.max_tokens or CHUNK_TOKENS),
        workers=read.workers,
    )
    total = input_size(inputs)
    return _Source(
        "text", inputs, [chunks], vocab.canonicalize, spec, read.boundary, total, name, vocab.fingerprint
    )


def _parts_source(ctx: typer.Context, read: _InputOptions, options: SpecOptions) -> _Source:
    """Saved partial counts (--save-types): merged instead of counted.

    The specs are those the parts analysed (one, or each table size of a sweep), with the spec
    options given (--heads, --layers, --seed) in place of their values, or --spec; N, V' and the
    pad always come from the parts. Parts that recorded other specs are refused when merged.
    """
    paths = [Path(name) for name in read.inputs]
    meta = load_types(paths[0])[1]
    explicit = given_options(ctx)
    analysed = recorded_specs(meta)
    if options.spec_file is not None:
        spec, analysed = options.build(None, None, meta["vocab_size"]), []
    elif analysed:
        overrides: dict[str, Any] = {}
        if "heads" in explicit:
            overrides["heads"] = options.heads
        if "layers" in explicit:
            overrides["layer_ids"] = tuple(parse_int_list(options.layers, "--layers"))
        if "seed" in explicit:
            overrides["seed"] = options.seed
        analysed = [replace(recorded, **overrides) for recorded in analysed]
        spec = analysed[0]
    else:
        spec = HashSpec(
            max_ngram=meta["max_ngram"],
            heads=options.heads,
            layer_ids=tuple(parse_int_list(options.layers, "--layers")),
            table_sizes=(int(SpecOptions.table),) * (meta["max_ngram"] - 1),
            seed=options.seed,
            pad_id=meta["pad_id"],
            vocab_size=meta["vocab_size"],
        )
    if (spec.max_ngram, spec.vocab_size, spec.pad_id) != (
        meta["max_ngram"],
        meta["vocab_size"],
        meta["pad_id"],
    ):
        raise UsageError("--spec does not match the N, V' and pad the partial counts were made with")
    return _Source(
        "partial counts", read.inputs, [], lambda raw, first_position: raw, spec, meta["boundary"], None,
        meta.get("tokenizer"), meta["vocab_fingerprint"], paths, analysed,
    )  # fmt: skip


def _looks_like_tokens(name: str) -> bool:
    """A token file by its suffix: .npy, .bin (nanoGPT, llm.c, Megatron) or .ds (datatrove)."""
    return Path(name).suffix in TOKEN_SUFFIXES


def _index_source(ctx: typer.Context, path: Path) -> _Source:
    """An index directory: its tokens, its lookup table, its spec and its boundary policy."""
    carried = {*SPEC_OPTION_NAMES, "boundary", "tokenizer", "no_compress", "vocab_size", "token_format"}
    clash = given_options(ctx) & (carried - {"table"})
    if clash:
        names = ", ".join(option_name(ctx, c) for c in sorted(clash))
        raise UsageError(
            f"{path} is an index: it carries its own spec, vocabulary and boundary; drop {names}"
        )
    index = open_index(path)
    lut = np.asarray(index.lut)
    shards = index.shards if isinstance(index, MergedIndex) else [index]
    return _Source(
        "dataset" if isinstance(index, MergedIndex) else "index",
        [str(path)],
        # A dataset: each shard its own stream, opened only when it is read.
        (iter_index_chunks(shard) for shard in shards),
        lambda raw, first_position: lut[raw],
        index.spec,
        index.manifest["boundary"],
        int(index.tokens.nbytes),
        index.manifest["tokenizer"].get("name"),
        index.manifest["vocab"]["fingerprint"],
    )


def _first_tokens(streams: Iterable[Iterator[TokenChunk]], limit: int) -> Iterator[Iterator[TokenChunk]]:
    """The streams cut after ``limit`` tokens in all (later streams are left out)."""
    left = limit

    def cut(chunks: Iterator[TokenChunk]) -> Iterator[TokenChunk]:
        nonlocal left
        for chunk in chunks:
            if left <= 0:
                return
            size = chunk.tokens.shape[0]
            take = min(left, size)
            starts = chunk.doc_starts if take == size else chunk.doc_starts[chunk.doc_starts < take]
            yield replace(chunk, tokens=chunk.tokens[:take], doc_starts=starts)
            left -= take

    for chunks in streams:  # streams after the limit are never opened
        if left <= 0:
            return
        yield cut(chunks)


def _count(
    source: _Source, streams: Iterable[Iterable[TokenChunk]], quiet: bool
) -> tuple[dict[int, NgramTypes], int, int, int]:
    """Count each independent stream's distinct n-grams and merge them (exact): (types, documents,
    tokens, skipped bad records).

    Warns when text was cut where its ids may differ from tokenizing it whole, as ``hash`` does.
    """
    parts, documents, tokens, hard_cuts, skipped = [], 0, 0, 0, 0
    started = time.perf_counter()
    with byte_progress(show_progress(quiet), source.total_bytes) as bar:
        task = bar.add_task("counting", total=source.total_bytes)
        for chunks in streams:
            counter = NgramTypeCounter(source.spec, boundary=source.boundary)
            for chunk in chunks:
                counter.update(
                    source.canonicalize(chunk.tokens, first_position=counter.tokens), chunk.doc_starts
                )
                documents += int(chunk.doc_starts.shape[0])
                hard_cuts += chunk.hard_cuts
                skipped += chunk.skipped_records
                rate = (tokens + counter.tokens) / max(time.perf_counter() - started, 1e-9)
                bar.update(task, advance=chunk.nbytes, description=f"counting {rate / 1e6:.2f}M tok/s")
            parts.append(counter.result())
            tokens += counter.tokens
    warn_unsafe_cuts(hard_cuts)
    return (parts[0] if len(parts) == 1 else merge_types(parts)), documents, tokens, skipped


# --------------------------------------------------------------------------------- output
def _share(value: float) -> str:
    """A share as a percentage; tiny non-zero values in scientific notation."""
    if value == 0 or value >= 1e-4:
        return f"{value:.2%}"
    return f"{value:.1e}"


def _render(data: dict[str, Any], reports: list[CollisionReport]) -> None:
    source, spec = data["input"], reports[0].spec
    stdout.print(
        f"[bold]{plural(source['tokens'], 'token')}[/] in {plural(source['documents'], 'document')} from "
        f"{', '.join(source['sources'])}; tokenizer {data['tokenizer']}, V'={data['vocab_size']:,}, "
        f"boundary {source['boundary']}{skipped_note(source['skipped_records'])}"
    )
    stdout.print(
        f"N={spec.max_ngram}, K={plural(spec.heads, 'head')} per order, layers {list(spec.layer_ids)}: "
        f"{plural(spec.max_ngram - 1, 'order')} x {plural(spec.heads, 'head')} = "
        f"{plural(spec.num_columns, 'table')} per layer"
    )
    orders = Table(title="distinct n-grams", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for name in ("n", "distinct n-grams (types)", "occurrences", "types / occurrences"):
        orders.add_column(name, justify="right")
    for row in data["orders"]:
        orders.add_row(
            str(row["order"]),
            f"{row['types']:,}",
            f"{row['occurrences']:,}",
            f"{row['types'] / row['occurrences']:.3f}",
        )
    stdout.print(orders)
    for report in reports:
        print_table(_head_table(report))
        print_table(_order_table(report))


def _head_table(report: CollisionReport) -> Table:
    sizes = ", ".join(f"{t:,}" for t in sorted(set(report.spec.table_sizes)))
    grid = Table(
        title=f"base table {sizes}: per head, measured (uniform-random expectation)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
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
            str(h.layer) if first else "",
            str(h.order) if first else "",
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
    grid = Table(
        title="all heads of an order together", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False
    )
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


def _figure_class() -> type:
    """matplotlib's Figure (no pyplot, no GUI backend), or a one-line error saying how to get it."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise NgramToolError("--plot needs matplotlib: pip install 'ngramtool[plot]'") from None
    return Figure


def _plot(figure: Any, path: Path, types: dict[int, NgramTypes], reports: list[CollisionReport]) -> None:
    """Measured (mean over layers and heads, with their range) and expected collision ratio vs M."""
    axes = figure.add_subplot()
    for i, (order, grams) in enumerate(types.items()):
        points = [[h for h in r.heads if h.order == order] for r in reports]
        tables = np.array([np.mean([h.table for h in heads]) for heads in points])
        measured = [np.array([h.collision for h in heads]) for heads in points]
        mean = np.array([m.mean() for m in measured])
        spread = np.array([[mean[j] - m.min(), m.max() - mean[j]] for j, m in enumerate(measured)]).T
        axes.errorbar(
            tables, mean, yerr=spread, fmt="o", color=f"C{i}", capsize=3,
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
    try:
        figure.savefig(path, dpi=120)
    except OSError as exc:
        raise NgramToolError(f"cannot write the plot {path}: {exc.strerror}") from None
