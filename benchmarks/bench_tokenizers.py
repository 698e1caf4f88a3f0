"""The fast tokenizer engines against their reference, alone and inside ``ngramtool hash``, side by side.

    python benchmarks/bench_tokenizers.py --mb 2                      # seconds: checks that it works
    python benchmarks/bench_tokenizers.py --mb 60                     # the table in docs/performance.md
    python benchmarks/bench_tokenizers.py --mb 60 --out /dev/shm      # the index in memory (tmpfs)

For cl100k_base (reference: tiktoken) and the DeepSeek-V3 tokenizer.json (reference: HF
``tokenizers``), in one run, each in a child process on the same text (bench_pipeline.py's mix of
eleven languages, seeded):

- the reference alone on 2 threads (tiktoken ``encode_ordinary_batch``; HF ``encode_batch``), the
  text cut at newlines into 256 KB pieces;
- each engine that serves the tokenizer alone, loaded as ngramtool loads it (fastokens and
  splintr ``encode_batch_flat``, on 2 threads);
- ``ngramtool hash --workers 2`` with ``--tokenizer-engine reference`` and each engine, with and
  without ``--no-engine-check`` (what the run-time check costs): indexes with rows.npy (128 bytes
  per token with the default spec), bound on a disk by writing them;
- ``ngramtool hash --rows lazy`` with each engine: tokens-only indexes, the rate the tokenizer
  allows;

and prints each rate as a multiple of the reference alone (for the hash runs both the whole
process, start-up and loading included, and the streaming after loading, ``hash -v``'s
``wall_seconds``), the MB/s each hash run writes while streaming, the CPU seconds of each run,
whether the index arrays (tokens, rows, document offsets, lookup table) are byte-identical to the
reference run's with the same ``--rows``, and the CPU nanoseconds per token of each stage of each
hash run (tokenize, canonicalize, hash, checksum, write, other: the main thread's reading and
cutting, and the engine's own threads). The indexes go to ``--out`` (default: a temporary
directory, on a disk, where the rows are written with ``O_DIRECT``; ``/dev/shm`` holds them in
memory, whose new pages this machine's hypervisor hands over slowly), each removed once measured.
The package's bytecode is compiled first, as an installed copy's is
(``bench_overhead.compile_package``).

Then the ceilings: for each whole-process target (:data:`TARGETS`, multiples of the reference
alone), the fastest a run with each engine could be on this machine, from what is not ngramtool's
measured alone in the same run: a process that only imports numpy, builds the engine and encodes a
line (start-up; with rows stored, then also readying llvmlite to link the kernel's kept code);
the engine's rate and CPU a token alone; writing the index's bytes as its rows
are written, at the cheapest, and the rate the device takes them at (:func:`write_price`); then
the same with ngramtool's own compute (canonicalize, hash, checksum) as its hash run measured it;
with rows stored, then also with the disk as it went in that hash run (``hash -v``'s
``disk_busy_seconds``: the wall time of its writes, while the machine tokenized and hashed beside
them). And the least CPU a token could take while streaming with rows stored, beside
:data:`STREAMING_NS`. A target whose ceiling is below it is out of reach on the machine, whatever
ngramtool does.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_overhead import compile_package
from bench_pipeline import STAGES, _cpu_seconds, make_text, newline_pieces, pipeline, stage_seconds

REPO = Path(__file__).resolve().parent.parent
TOKENIZERS = {
    "cl100k_base": "cl100k_base",
    "DeepSeek-V3": str(REPO / "tests" / "data" / "tokenizers" / "deepseek-v3.tokenizer.json.gz"),
}
THREADS = 2
ENGINES = ("fastokens", "splintr")
LAZY = ["--rows", "lazy"]
ARRAYS = ("tokens", "rows", "doc_offsets", "lut")
TARGETS = {"cl100k_base": {"rows stored": 2.5, "--rows lazy": 4.0}, "DeepSeek-V3": {"rows stored": 20.0}}
"""The whole-process targets: ``hash``'s Mtok/s as a multiple of the reference alone, by mode."""
STREAMING_NS = 120
"""The streaming target: CPU ns a token while streaming, rows stored."""
OWN_STAGES = ("canonicalize", "hash", "checksum")
"""ngramtool's own compute while streaming with rows stored (not the tokenizer, not the write)."""
STARTS = 3  # engine start-ups timed; the best counts
PRICED_BYTES = 1 << 30  # written (twice) to price a byte of the index
LINE = "The quick brown fox jumps over the lazy dog.\n"


def runs(engines: list[str]) -> list[tuple[str, list[str]]]:
    """The hash runs: the reference, each engine with and without the check, then tokens-only."""
    stored = [("reference", [])] + [(e, extra) for e in engines for extra in ([], ["--no-engine-check"])]
    return stored + [(engine, LAZY) for engine in ["reference", *engines]]


def serving(tokenizer: str) -> list[str]:
    """The engines installed and offered for ``tokenizer``; prints a line for each other."""
    from ngramtool.tokenizers import load_tokenizer
    from ngramtool.tokenizers.engines import EngineUnavailable, engine_for

    reference, found = load_tokenizer(tokenizer, engine="reference"), []
    for engine in ENGINES:
        try:
            engine_for(engine, reference)
        except EngineUnavailable as exc:
            print(f"  {engine}: not offered ({str(exc).split(':')[0]})")
            continue
        found.append(engine)
    return found


def alone(which: str, tokenizer: str, path: Path) -> dict:
    """The reference or an engine alone in a child process: tokens, seconds, CPU seconds."""
    command = [sys.executable, __file__, "--alone", which, tokenizer, str(path)]
    env = {**os.environ, "RAYON_NUM_THREADS": str(THREADS)}
    return json.loads(subprocess.run(command, capture_output=True, check=True, env=env).stdout)


def measure_alone(which: str, tokenizer: str, path: str) -> None:
    """Print tokens, seconds and CPU seconds of encoding ``path``'s 256 KB pieces (the child's job)."""
    from ngramtool.tokenizers import load_tokenizer
    from ngramtool.tokenizers.engines import engine_for

    reference = load_tokenizer(tokenizer, engine="reference")
    pieces = newline_pieces(Path(path).read_bytes())
    if which != "reference":
        encode = engine_for(which, reference).encode_joined
    elif hasattr(reference, "_enc"):
        encode = lambda texts: reference._enc.encode_ordinary_batch(texts, num_threads=THREADS)  # noqa: E731
    else:
        encode = lambda texts: reference._tok.encode_batch(texts, add_special_tokens=False)  # noqa: E731
    start, cpu = time.perf_counter(), _cpu_seconds()
    result = encode(pieces)
    seconds, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    tokens = int(result[1].sum()) if which != "reference" else sum(len(x) for x in result)
    print(json.dumps({"tokens": tokens, "seconds": seconds, "cpu_seconds": cpu}))


def engine_recipe(engine: str, tokenizer: str, folder: Path) -> Path:
    """A JSON file in ``folder`` saying what ``hash`` builds ``engine`` from for ``tokenizer`` (a
    tiktoken encoding's ranks file, pattern and matched special tokens; or the tokenizer.json)."""
    from ngramtool.tokenizers import load_tokenizer
    from ngramtool.tokenizers.engines import _matched_special
    from ngramtool.tokenizers.hf import names_not_special
    from ngramtool.tokenizers.protocol import _read_maybe_gz
    from ngramtool.tokenizers.tiktoken_files import TiktokenTokenizer
    from ngramtool.tokenizers.tiktoken_splintr import pinned_fastokens_pattern, pinned_splintr_pattern

    reference = load_tokenizer(tokenizer, engine="reference")
    recipe: dict = {"engine": engine}
    if isinstance(reference, TiktokenTokenizer):
        ranks = folder / "ranks.tiktoken"
        ranks.write_bytes(reference.rank_lines)
        pinned = pinned_splintr_pattern if engine == "splintr" else pinned_fastokens_pattern
        pattern = pinned(reference._enc, reference.fingerprint)
        recipe |= {"ranks": str(ranks), "pattern": pattern, "special": _matched_special(reference)}
    else:
        document = _read_maybe_gz(reference.path)
        if isinstance(reference.special, tuple):
            document = names_not_special(document, reference.special)
        (folder / "tokenizer.json").write_bytes(document)
        recipe["json"] = str(folder / "tokenizer.json")
    path = folder / f"{engine}.json"
    path.write_text(json.dumps(recipe), encoding="utf-8")
    return path


def engine_startup(recipe: Path, hashing: bool = False) -> float:
    """The best wall seconds over :data:`STARTS` child processes that each import numpy, build the
    engine of ``recipe`` and encode a line: what any run with that engine takes before it streams.
    With ``hashing``, each also readies llvmlite to link machine code (:func:`ready_linker`), the
    least a run that hashes with the kernel's kept code does before its first rows (numba itself
    is not imported: ``ngramtool.hashing.backends.stored_rows``). All of it holds the GIL, so none
    of it overlaps."""
    command = [sys.executable, __file__, "--startup", str(recipe), *(["--hashing"] if hashing else [])]
    seconds = []
    for _ in range(STARTS):
        start = time.perf_counter()
        subprocess.run(command, check=True)
        seconds.append(time.perf_counter() - start)
    return min(seconds)


def ready_linker() -> None:
    """Import llvmlite and make the JIT linker that kept machine code is loaded into."""
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    machine = llvm.Target.from_default_triple().create_target_machine()
    llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)


def build_engine(recipe_path: str, hashing: bool = False) -> None:
    """Build the engine of a recipe and encode a line (the child's job; nothing of ngramtool's);
    with ``hashing``, then ready llvmlite's linker (:func:`ready_linker`)."""
    import numpy  # noqa: F401  (every ngramtool run imports it)

    _build_engine(json.loads(Path(recipe_path).read_text(encoding="utf-8")))
    if hashing:
        ready_linker()


def _build_engine(recipe: dict) -> None:
    """Build the engine ``recipe`` names and encode a line with it."""
    if recipe["engine"] == "splintr":
        import splintr

        ranks = Path(recipe["ranks"]).read_bytes()
        tok = splintr.Tokenizer.from_bytes(ranks, recipe["pattern"], recipe["special"])
        tok.pcre2(True).encode_ordinary(LINE)
        return
    import fastokens

    if "json" in recipe:
        tok = fastokens.Tokenizer.from_json_str(Path(recipe["json"]).read_text(encoding="utf-8"))
    else:
        tok = fastokens.Tokenizer.from_tiktoken(
            recipe["ranks"], pattern=recipe["pattern"], special_tokens=recipe["special"]
        )
    tok.encode(LINE, add_special_tokens=False)


def write_price(directory: Path, nbytes: int) -> tuple[float, float]:
    """(CPU seconds, wall seconds) to write ``nbytes`` into a new file in ``directory`` as an
    index's rows are written (16 MiB aligned slabs, ``O_DIRECT`` where the file system takes it,
    fsync at the end), right after a file as large there was written and removed: the cheapest
    pages a page cache has to give, and the rate the device takes bytes at."""
    from ngramtool.formats.directio import OutputFile, aligned_bytes
    from ngramtool.formats.npy import SLAB_BYTES

    slab = aligned_bytes(SLAB_BYTES)
    slab[:] = 1
    price = (0.0, 0.0)
    for _ in range(2):
        with tempfile.TemporaryDirectory(dir=directory) as folder:
            start, wall = time.process_time(), time.perf_counter()
            out = OutputFile(Path(folder) / "rows.npy")
            for offset in range(0, nbytes, SLAB_BYTES):
                out.write(slab, offset)
            out.close()
            price = (time.process_time() - start, time.perf_counter() - wall)
    return price


def hash_run(
    tokenizer: str, path: Path, out_dir: Path, engine: str, extra: list[str]
) -> tuple[dict, float, dict[str, str], int]:
    """(summary, seconds, the digest of each array, bytes of the index) of ``ngramtool hash`` with
    ``engine``, its index written in ``out_dir`` and removed."""
    index = out_dir / f"bench-tokenizers-{engine}.ngidx"
    args = ["-t", tokenizer, "--tokenizer-engine", engine, *extra, "-o", str(index), "--force", "-q"]
    try:
        summary, seconds, _, _ = pipeline(path, THREADS, out_dir, args)
        digests = {
            name: _digest(index / f"{name}.npy") for name in ARRAYS if (index / f"{name}.npy").exists()
        }
        size = sum(file.stat().st_size for file in index.iterdir())
    finally:
        shutil.rmtree(index, ignore_errors=True)
    return summary, seconds, digests, size


def _digest(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "blake2b").hexdigest()


def main() -> None:
    if sys.argv[1:2] == ["--alone"]:
        measure_alone(*sys.argv[2:5])
        return
    if sys.argv[1:2] == ["--startup"]:
        build_engine(sys.argv[2], hashing=sys.argv[3:4] == ["--hashing"])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=60, help="MB of text to build (2: seconds)")
    parser.add_argument("--text", type=Path, help="measure this text file instead of building one")
    parser.add_argument(
        "--out", type=Path, help="where the indexes are written (default: a temporary directory)"
    )
    args = parser.parse_args()
    compile_package(REPO)
    with tempfile.TemporaryDirectory() as tmp:
        text = args.text or Path(tmp) / "text.txt"
        if args.text is None:
            make_text(text, args.mb)
        out = args.out or Path(tmp)
        print(
            f"{text.stat().st_size / 1e6:.1f} MB of text; indexes written to {out}; {os.cpu_count()} cores, "
            f"load average {os.getloadavg()[0]:.2f} at the start; {THREADS} threads everywhere"
        )
        for label, tokenizer in TOKENIZERS.items():
            compare(label, tokenizer, text, out)
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")


def compare(label: str, tokenizer: str, text: Path, out: Path) -> None:
    """One tokenizer's table: the reference and the engines alone, then the hash runs, then the
    ceilings of each whole-process target."""
    print(f"\n{label}")
    engines = serving(tokenizer)
    reference = alone("reference", tokenizer, text)
    base = reference["tokens"] / reference["seconds"]
    columns = ("Mtok/s", "x ref", "stream", "x ref", "CPU s", "MB/s", "same")
    print(f"{'run':<44} " + " ".join(f"{c:>7}" for c in columns))
    alone_runs: dict[str, dict] = {}
    for name in ["reference", *engines]:
        measured = alone_runs[name] = reference if name == "reference" else alone(name, tokenizer, text)
        rate = measured["tokens"] / measured["seconds"]
        same = "yes" if measured["tokens"] == reference["tokens"] else "NO"
        blank = f"{'':>7} {'':>7}"
        print(
            f"{name + ' alone':<44} {rate / 1e6:>7.2f} {rate / base:>7.2f} {blank} "
            f"{measured['cpu_seconds']:>7.2f} {'':>7} {same:>7}"
        )
    firsts: dict[bool, dict[str, str]] = {}
    profiles: list[tuple[str, dict]] = []
    index_bytes: dict[str, int] = {}
    own: dict[str, float] = {}  # engine -> ngramtool's own compute, CPU s a token, rows stored
    disk: dict[str, float] = {}  # engine -> the seconds its rows-stored run's disk was busy
    for engine, extra in runs(engines):
        summary, seconds, digests, size = hash_run(tokenizer, text, out, engine, extra)
        first = firsts.setdefault(extra == LAZY, digests)
        index_bytes.setdefault("--rows lazy" if extra == LAZY else "rows stored", size)
        rate = summary["num_tokens"] / seconds
        streaming = summary["profile"]["wall_seconds"]
        stream = summary["num_tokens"] / streaming
        name = f"hash {engine} {' '.join(extra)}".strip()
        same = "yes" if digests == first else "NO"
        stages = stage_seconds(summary["profile"])
        if not extra:
            own[engine] = sum(stages[stage] for stage in OWN_STAGES) / summary["num_tokens"]
            disk[engine] = summary["profile"].get("disk_busy_seconds", 0.0)
        print(
            f"{name:<44} {rate / 1e6:>7.2f} {rate / base:>7.2f} {stream / 1e6:>7.2f} {stream / base:>7.2f} "
            f"{sum(stages.values()):>7.2f} {size / 1e6 / streaming:>7.0f} {same:>7}"
        )
        profiles.append((name.removeprefix("hash "), summary))
    print(
        "hash: Mtok/s over the whole process (start-up, loading the tokenizer, engine, vocabulary and\n"
        "kernel, fsync); stream: after loading (hash -v's wall_seconds); CPU s: while streaming; MB/s:\n"
        "the index's bytes per streaming second; same: the arrays equal the reference run's (same --rows)"
    )
    print(f"\n{'CPU ns per token while streaming':<36} " + " ".join(f"{stage:>12}" for stage in STAGES))
    for name, summary in profiles:
        seconds = stage_seconds(summary["profile"])
        cells = " ".join(f"{seconds[s] / summary['num_tokens'] * 1e9:>12.1f}" for s in STAGES)
        print(f"{name:<36} {cells}")
    if engines:
        bytes_per_token = {mode: size / reference["tokens"] for mode, size in index_bytes.items()}
        engine_runs = {engine: alone_runs[engine] for engine in engines}
        ceilings(label, tokenizer, engine_runs, own, disk, bytes_per_token, base, out)


def ceilings(
    label: str,
    tokenizer: str,
    engine_runs: dict[str, dict],
    own: dict[str, float],
    disk_busy: dict[str, float],
    bytes_per_token: dict[str, float],
    base: float,
    out: Path,
) -> None:
    """Print the fastest each whole-process target's run could be on this machine, beside the
    target, and the least CPU a token could take while streaming with rows stored, beside
    :data:`STREAMING_NS`: first from pieces outside ngramtool measured alone in this run (the
    engine's start-up, its rate and CPU alone, the index's bytes written as the rows are, at the
    cheapest, and the device's rate for them: :func:`write_price`), then adding ngramtool's own
    compute as its hash run measured it, and for rows stored (``as run``) the disk's busy seconds
    in that run in place of the device's rate alone, when they are longer."""
    with tempfile.TemporaryDirectory() as folder:
        recipes = {engine: engine_recipe(engine, tokenizer, Path(folder)) for engine in engine_runs}
        startup = {engine: engine_startup(recipe) for engine, recipe in recipes.items()}
        hashing_startup = {engine: engine_startup(recipe, hashing=True) for engine, recipe in recipes.items()}
    byte, byte_wall = (seconds / PRICED_BYTES for seconds in write_price(out, PRICED_BYTES))
    print(
        "\nCeilings on this machine. start-up: a process that imports numpy, builds the engine and "
        f"encodes a line (best of {STARTS}; rows stored:\nthen also readies llvmlite to link the kernel's "
        "kept code, as hashing must before its first rows);\nengine: its Mtok/s and CPU a token alone, "
        "above; write: the "
        f"index's bytes written as its rows are, into a file in\n{out} just after one as large was removed "
        f"({byte * 1e9:.3f} CPU ns a byte); disk: the rate that write went at ({1 / byte_wall / 1e9:.2f} "
        f"GB/s),\nin tokens of the index a second; own: ngramtool's {', '.join(OWN_STAGES)} in the hash run "
        "above.\nceiling = tokens / (start-up + streaming), streaming = the longest of tokens / the engine's "
        f"rate alone,\ntokens x CPU a token / {THREADS} cores (CPU a token = engine + write, + own) and "
        "tokens / the disk's rate;\nas run: + own, with the disk as busy as in the hash run above "
        "(its writes' wall seconds, hash -v's disk busy)"
    )
    columns = ("start-up", "engine", "write", "disk", "own", "ceiling", "+ own", "as run", "target")
    print(f"{'target':<37} {'engine':<10} " + " ".join(f"{c:>9}" for c in columns) + "  reachable")
    for mode, multiple in TARGETS.get(label, {}).items():
        write = bytes_per_token[mode] * byte
        for engine, measured in engine_runs.items():
            engine_ns, tokens = measured["cpu_seconds"] / measured["tokens"], measured["tokens"]
            disk = tokens * bytes_per_token[mode] * byte_wall
            mine = own[engine] if mode == "rows stored" else 0.0
            seconds = [
                max(measured["seconds"], tokens * (engine_ns + write + x) / THREADS, disk) for x in (0, mine)
            ]
            seconds.append(max(seconds[1], disk_busy.get(engine, 0.0) if mode == "rows stored" else 0.0))
            begin = hashing_startup[engine] if mode == "rows stored" else startup[engine]
            bare, with_own, as_run = (tokens / (begin + streaming) for streaming in seconds)
            target = multiple * base
            verdict = _reachable(bare >= target, with_own >= target, as_run >= target)
            print(
                f"{f'{mode}, {multiple:g}x the reference':<37} {engine:<10} {begin:>8.2f}s "
                f"{engine_ns * 1e9:>7.1f}ns {write * 1e9:>7.1f}ns {tokens / disk / 1e6:>5.1f}M/s "
                f"{mine * 1e9:>7.1f}ns {bare / 1e6:>5.2f}M/s {with_own / 1e6:>5.2f}M/s "
                f"{as_run / 1e6:>5.2f}M/s {target / 1e6:>5.2f}M/s  {verdict}"
            )
    write = bytes_per_token["rows stored"] * byte
    for engine, measured in engine_runs.items():
        engine_ns = measured["cpu_seconds"] / measured["tokens"]
        least = (engine_ns + write) * 1e9
        print(
            f"{f'streaming, at most {STREAMING_NS} CPU ns a token':<37} {engine:<10} {'':>9} "
            f"{engine_ns * 1e9:>7.1f}ns {write * 1e9:>7.1f}ns {'':>9} {own[engine] * 1e9:>7.1f}ns "
            f"{least:>7.1f}ns "
            f"{least + own[engine] * 1e9:>7.1f}ns {'':>9} {STREAMING_NS:>7d}ns  "
            f"{_reachable(least <= STREAMING_NS, least + own[engine] * 1e9 <= STREAMING_NS)}"
        )
    print("(streaming: the ceiling columns are the least CPU ns a token: engine + write, and + own)")


def _reachable(bare: bool, with_own: bool, as_run: bool = True) -> str:
    """``yes``, ``no``, ``not with own compute`` or ``not with the disk as it ran``."""
    if not bare:
        return "no"
    if not with_own:
        return "not with own compute"
    return "yes" if as_run else "not with the disk as it ran"


if __name__ == "__main__":
    main()
