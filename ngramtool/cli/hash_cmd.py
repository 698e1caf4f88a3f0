"""``ngramtool hash``: text or token files -> an index directory of Engram rows."""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from ..errors import UsageError
from ..formats.index import IndexMeta, IndexWriter
from ..formats.stream import FORMAT_NAME as STREAM_FORMAT
from ..formats.stream import STREAM_MAJOR, STREAM_MINOR, StreamWriter
from ..formats.tokenfiles import (
    TOKEN_FORMATS,
    TokenFileWriter,
    iter_token_file_chunks,
    open_token_file,
)
from ..hashing import NgramHasher
from ..pipeline import hash_chunks, iter_token_chunks
from ..vocab import identity_vocab
from .common import (
    DocSepOpt,
    ErrorsOpt,
    HeadsOpt,
    JsonKeyOpt,
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
    WorkersOpt,
    byte_progress,
    input_size,
    print_json,
    resolve_vocab,
    show_progress,
    stderr,
    tokenizer_record,
    vocab_record,
    worker_count,
)

DEFAULT_TOKENIZER = "cl100k_base"

HELP = """Hash text into an index directory of Engram table rows.

Tokenizes, canonicalizes and hashes; a trainer memory-maps the result.

The index holds manifest.json, tokens.npy (raw ids), rows.npy ([T, L, (N-1)*K] table rows)
and doc_offsets.npy; see docs/formats.md.

[bold]Examples[/]

  ngramtool hash examples/corpus.txt                      # -> examples/corpus.txt.ngidx
  ngramtool hash a.txt b.txt -o out.ngidx --force --json
  cat corpus.txt | ngramtool hash - -o corpus.ngidx
  ngramtool hash docs.jsonl --json-key text --boundary reset --add-eot
  ngramtool hash --tokens ids.npy --vocab-size 50257 -o ids.ngidx
  ngramtool hash --tokens train.bin --tokenizer r50k_base.tiktoken     # nanoGPT/llm.c/Megatron .bin
  ngramtool hash corpus.txt --save-tokens corpus.bin --save-format llmc
  ngramtool hash corpus.txt --tokenizer tokenizer.json --heads 4 --table 262144 --layers 2,15
"""


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("hash", help=HELP)(hash_command)


def hash_command(
    inputs: Annotated[
        list[str] | None, typer.Argument(help="Text files, or - for stdin.", show_default=False)
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Index directory (default: first INPUT + .ngidx).")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing index.")] = False,
    tokens_file: Annotated[
        Path | None,
        typer.Option(
            "--tokens", help="Pre-tokenized raw ids (.npy, nanoGPT/llm.c/Megatron .bin, datatrove .ds)."
        ),
    ] = None,
    token_format: Annotated[
        str | None, typer.Option("--token-format", help=f"Format of --tokens: {', '.join(TOKEN_FORMATS)}.")
    ] = None,
    save_tokens: Annotated[
        Path | None, typer.Option("--save-tokens", help="Also write the raw ids as a token file here.")
    ] = None,
    save_format: Annotated[
        str | None, typer.Option("--save-format", help="Format of --save-tokens (default: from its suffix).")
    ] = None,
    vocab_size: Annotated[
        int | None,
        typer.Option("--vocab-size", help="With --tokens and no --tokenizer: ids are canonical below this."),
    ] = None,
    tokenizer: Annotated[
        str | None,
        typer.Option(
            "--tokenizer",
            "-t",
            help="tiktoken name, *.tiktoken file, tokenizer.json, or 'bytes'. [default: cl100k_base]",
        ),
    ] = None,
    no_compress: NoCompressOpt = False,
    max_ngram: MaxNgramOpt = 3,
    heads: HeadsOpt = 8,
    layers: LayersOpt = "1,15",
    table: TableOpt = "646400",
    seed: SeedOpt = 0,
    pad_id: PadOpt = None,
    spec_file: SpecFileOpt = None,
    boundary: Annotated[
        str,
        typer.Option(
            "--boundary", help="'none': pad only at stream start (Engram); 'reset': at every document."
        ),
    ] = "none",
    add_eot: Annotated[
        bool, typer.Option("--add-eot", help="Append the end-of-text token after each document.")
    ] = False,
    json_key: JsonKeyOpt = None,
    doc_sep: DocSepOpt = None,
    errors: ErrorsOpt = "strict",
    workers: WorkersOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Hash INPUT... into an index directory."""
    inputs = inputs or []
    if bool(inputs) == (tokens_file is not None):
        raise UsageError("give text INPUT files (or -) or --tokens FILE.npy, not both and not neither")
    if boundary not in ("none", "reset"):
        raise UsageError(f"--boundary must be 'none' or 'reset' (got {boundary!r})")
    to_stdout = output is not None and str(output) == "-"
    if tokens_file is not None and tokenizer is None and vocab_size is not None:
        tok, vocab = None, identity_vocab(vocab_size)
    else:
        if vocab_size is not None:
            raise UsageError("--vocab-size applies only to --tokens without --tokenizer")
        tok, vocab = resolve_vocab(tokenizer or DEFAULT_TOKENIZER, no_compress, quiet=quiet)
    spec = SpecOptions(max_ngram, heads, layers, table, seed, pad_id, spec_file).build(vocab, tok)
    sources = [str(tokens_file)] if tokens_file is not None else inputs
    dest = output or _default_output(sources[0])
    meta = IndexMeta(
        spec=spec,
        tokenizer=tokenizer_record(tok) if tok is not None else {"name": None, "fingerprint": None},
        vocab=vocab_record(vocab),
        boundary=boundary,
        lut=vocab.lut,
        sources=tuple(sources),
    )
    if tokens_file is not None:
        total = open_token_file(tokens_file, token_format).nbytes
        chunks = iter_token_file_chunks(tokens_file, token_format)
    else:
        chunks = iter_token_chunks(
            inputs,
            tok,
            json_key=json_key,
            doc_sep=doc_sep,
            errors=errors,
            add_eot=add_eot,
            workers=worker_count(workers),
        )
        total = input_size(inputs)
    hasher = NgramHasher(spec, boundary=boundary)
    started = time.perf_counter()
    hard_cuts = 0
    nbytes = 0
    if save_tokens is not None:
        token_sink = TokenFileWriter(
            save_tokens, _save_format(save_tokens, save_format, vocab.raw_size), vocab.raw_size
        )
    else:
        token_sink = contextlib.nullcontext()
    if to_stdout:
        stream_version = f"{STREAM_MAJOR}.{STREAM_MINOR}"
        writer = StreamWriter(
            sys.stdout.buffer, meta.manifest(STREAM_FORMAT, stream_version), vocab.lut, spec
        )
    else:
        writer = IndexWriter(dest, meta, force=force)
    written = 0
    with writer, token_sink, byte_progress(show_progress(quiet), total) as bar:
        task = bar.add_task("hashing", total=total)
        for chunk, _, rows in hash_chunks(chunks, vocab, hasher):
            writer.append(chunk.tokens, rows, chunk.doc_starts)
            if save_tokens is not None:
                token_sink.append(chunk.tokens, chunk.doc_starts)
            hard_cuts += chunk.hard_cuts
            nbytes += chunk.nbytes
            written += chunk.tokens.shape[0]
            rate = written / max(time.perf_counter() - started, 1e-9)
            bar.update(
                task, advance=chunk.nbytes if total else 1, description=f"hashing {rate / 1e6:.2f}M tok/s"
            )
        manifest = writer.commit()
        if save_tokens is not None:
            token_sink.commit()
    seconds = time.perf_counter() - started
    summary = {
        "output": str(dest),
        "num_tokens": manifest["num_tokens"],
        "num_documents": manifest["num_documents"],
        "input_bytes": nbytes,
        "seconds": round(seconds, 3),
        "tokens_per_second": round(manifest["num_tokens"] / seconds) if seconds > 0 else None,
        "rows_shape": [manifest["num_tokens"], spec.num_layers, spec.num_columns],
        "rows_dtype": spec.row_dtype.name,
        "tokenizer": meta.tokenizer["name"],
        "vocab_size": vocab.size,
        "spec_fingerprint": spec.fingerprint,
        "boundary": boundary,
        "unsafe_text_cuts": hard_cuts,
    }
    if hard_cuts:
        stderr.print(
            f"warning: {hard_cuts} text cut(s) fell inside very long runs without spaces or line breaks; "
            "the ids at those cuts may differ from tokenizing the text whole"
        )
    if as_json:
        print_json(summary, to_stderr=to_stdout)
    elif not quiet:
        rate = f" ({_rate(summary['tokens_per_second'])})" if summary["tokens_per_second"] else ""
        docs = summary["num_documents"]
        target = "a stream to stdout" if to_stdout else dest
        stderr.print(
            f"wrote {target}: {summary['num_tokens']:,} tokens, {docs:,} document{'s' if docs != 1 else ''}, "
            f"rows {summary['rows_dtype']} {summary['rows_shape']} in {seconds:.2f} s{rate}",
            markup=False,
        )


def _default_output(source: str) -> Path:
    if source == "-":
        raise UsageError("reading stdin: name the output directory with -o")
    return Path(source + ".ngidx")


SUFFIX_FORMATS = {".npy": "npy", ".ds": "datatrove", ".bin": "nanogpt"}
UINT16_IDS = 1 << 16


def _save_format(path: Path, given: str | None, raw_size: int) -> str:
    """The --save-tokens format: as given, else from the suffix; nanoGPT's uint16 must hold every id."""
    fmt = given or SUFFIX_FORMATS.get(path.suffix)
    if fmt is None:
        raise UsageError(
            f"cannot tell the format of --save-tokens {path}: "
            f"pass --save-format {{{','.join(TOKEN_FORMATS)}}}"
        )
    if fmt == "nanogpt" and raw_size > UINT16_IDS:
        raise UsageError(
            f"nanoGPT .bin files hold uint16 ids but this tokenizer has {raw_size:,} ids: "
            "pass --save-format llmc or megatron (they store uint32/int32 ids)"
        )
    return fmt


def _rate(tokens_per_second: float) -> str:
    if tokens_per_second >= 1e6:
        return f"{tokens_per_second / 1e6:.2f}M tok/s"
    return f"{tokens_per_second / 1e3:.1f}K tok/s"
