"""The fast tokenizer engine against its reference, alone and inside ``ngramtool hash``, side by side.

    python benchmarks/bench_tokenizers.py --mb 2        # seconds: checks that it works
    python benchmarks/bench_tokenizers.py --mb 60       # the table in docs/performance.md

For cl100k_base (reference: tiktoken) and the DeepSeek-V3 tokenizer.json (reference: HF
``tokenizers``), in one run, each in a child process on the same text (bench_pipeline.py's mix of
eleven languages, seeded):

- the reference alone on 2 threads (tiktoken ``encode_ordinary_batch``; HF ``encode_batch``), the
  text cut at newlines into 256 KB pieces;
- the engine alone (fastokens ``encode_batch_flat`` on 2 threads, loaded as ngramtool loads it);
- ``ngramtool hash --workers 2`` with ``--tokenizer-engine reference``, ``fastokens`` and
  ``fastokens --no-engine-check`` (what the run-time check costs);

and prints each rate as a multiple of the reference alone (for the hash runs both the whole
process, start-up and loading included, and the streaming after loading, ``hash -v``'s
``wall_seconds``), whether the index arrays (tokens, rows, document offsets, lookup table) are
byte-identical to the reference run's, the CPU seconds of each run, and the CPU nanoseconds per
token of each stage of each hash run (tokenize, canonicalize, hash, checksum, write, other: the
main thread's reading and cutting, and the engine's own threads).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_pipeline import STAGES, _cpu_seconds, make_text, newline_pieces, pipeline, stage_seconds

REPO = Path(__file__).resolve().parent.parent
TOKENIZERS = {
    "cl100k_base": "cl100k_base",
    "DeepSeek-V3": str(REPO / "tests" / "data" / "tokenizers" / "deepseek-v3.tokenizer.json.gz"),
}
THREADS = 2
RUNS = (("reference", []), ("fastokens", []), ("fastokens", ["--no-engine-check"]))
ARRAYS = ("tokens", "rows", "doc_offsets", "lut")


def alone(which: str, tokenizer: str, path: Path) -> dict:
    """The reference or the engine alone in a child process: tokens, seconds, CPU seconds."""
    command = [sys.executable, __file__, "--alone", which, tokenizer, str(path)]
    env = {**os.environ, "RAYON_NUM_THREADS": str(THREADS)}
    return json.loads(subprocess.run(command, capture_output=True, check=True, env=env).stdout)


def measure_alone(which: str, tokenizer: str, path: str) -> None:
    """Print tokens, seconds and CPU seconds of encoding ``path``'s 256 KB pieces (the child's job)."""
    from ngramtool.tokenizers import load_tokenizer
    from ngramtool.tokenizers.engines import engine_for

    reference = load_tokenizer(tokenizer, engine="reference")
    pieces = newline_pieces(Path(path).read_bytes())
    if which == "engine":
        encode = engine_for("fastokens", reference).encode_joined
    elif hasattr(reference, "_enc"):
        encode = lambda texts: reference._enc.encode_ordinary_batch(texts, num_threads=THREADS)  # noqa: E731
    else:
        encode = lambda texts: reference._tok.encode_batch(texts, add_special_tokens=False)  # noqa: E731
    start, cpu = time.perf_counter(), _cpu_seconds()
    result = encode(pieces)
    seconds, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    tokens = int(result[1].sum()) if which == "engine" else sum(len(x) for x in result)
    print(json.dumps({"tokens": tokens, "seconds": seconds, "cpu_seconds": cpu}))


def hash_run(
    tokenizer: str, path: Path, out_dir: Path, engine: str, extra: list[str]
) -> tuple[dict, float, dict[str, bytes]]:
    """(summary, seconds, the bytes of each array) of ``ngramtool hash`` with ``engine``, its
    index kept in ``out_dir``."""
    index = out_dir / f"{engine}{'-unchecked' if extra else ''}.ngidx"
    args = ["-t", tokenizer, "--tokenizer-engine", engine, *extra, "-o", str(index), "--force"]
    summary, seconds, _, _ = pipeline(path, THREADS, out_dir, args)
    summary["index"] = str(index)
    return summary, seconds, {name: (index / f"{name}.npy").read_bytes() for name in ARRAYS}


def main() -> None:
    if sys.argv[1:2] == ["--alone"]:
        measure_alone(*sys.argv[2:5])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=60, help="MB of text to build (2: seconds)")
    parser.add_argument("--text", type=Path, help="measure this text file instead of building one")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        text = args.text or Path(tmp) / "text.txt"
        if args.text is None:
            make_text(text, args.mb)
        print(
            f"{text.stat().st_size / 1e6:.1f} MB of text; {os.cpu_count()} cores, load average "
            f"{os.getloadavg()[0]:.2f} at the start; {THREADS} threads everywhere"
        )
        for label, tokenizer in TOKENIZERS.items():
            compare(label, tokenizer, text, Path(tmp))
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")


def compare(label: str, tokenizer: str, text: Path, tmp: Path) -> None:
    """One tokenizer's table: the reference and the engine alone, then the hash runs."""
    reference = alone("reference", tokenizer, text)
    base = reference["tokens"] / reference["seconds"]
    print(f"\n{label}")
    columns = ("Mtok/s", "x ref", "stream", "x ref", "CPU s", "same bytes")
    print(f"{'run':<62} " + " ".join(f"{c:>{max(7, len(c))}}" for c in columns))
    engine = alone("engine", tokenizer, text)
    for name, measured in (("reference alone", reference), ("fastokens alone", engine)):
        rate = measured["tokens"] / measured["seconds"]
        same = "yes" if measured["tokens"] == reference["tokens"] else "NO"
        print(
            f"{name:<62} {rate / 1e6:>7.2f} {rate / base:>7.2f} {'':>7} {'':>7} "
            f"{measured['cpu_seconds']:>7.2f} {same:>10}"
        )
    first, profiles = None, []
    for engine_name, extra in RUNS:
        summary, seconds, arrays = hash_run(tokenizer, text, tmp, engine_name, extra)
        first = first or arrays
        rate = summary["num_tokens"] / seconds
        stream = summary["num_tokens"] / summary["profile"]["wall_seconds"]
        name = f"ngramtool hash --tokenizer-engine {engine_name} {' '.join(extra)}"
        same = "yes" if arrays == first else "NO"
        cpu = sum(stage_seconds(summary["profile"]).values())
        print(
            f"{name:<62} {rate / 1e6:>7.2f} {rate / base:>7.2f} {stream / 1e6:>7.2f} {stream / base:>7.2f} "
            f"{cpu:>7.2f} {same:>10}"
        )
        profiles.append((f"{engine_name} {' '.join(extra)}".strip(), summary))
    print(
        "hash: Mtok/s over the whole process (start-up, loading the tokenizer, engine, vocabulary and\n"
        "kernel, fsync); stream: after loading (hash -v's wall_seconds); CPU s: while streaming"
    )
    print(f"\n{'CPU ns per token while streaming':<34} " + " ".join(f"{stage:>12}" for stage in STAGES))
    for name, summary in profiles:
        seconds = stage_seconds(summary["profile"])
        cells = " ".join(f"{seconds[s] / summary['num_tokens'] * 1e9:>12.1f}" for s in STAGES)
        print(f"{name:<34} {cells}")


if __name__ == "__main__":
    main()
