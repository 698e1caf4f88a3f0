"""Start-up and per-file overhead of ``ngramtool hash``: one tiny file, N small files into one index,
and N small files sharded (one index per file), each in a child process.

    python benchmarks/bench_overhead.py --files 200 --repeats 1   # seconds: checks that it works
    python benchmarks/bench_overhead.py                           # 2,000 files, best of 3
    python benchmarks/bench_overhead.py --code /tmp/base --json   # another checkout of the code

It writes ``--files`` small text files (a few hundred bytes to a few KB each, cut at spaces from the
bundled corpus at seeded offsets, so every run builds the same bytes) into a temporary directory,
and times, round after round (``--repeats``; the best of each measure counts), in child processes:

- ``import``: ``python -c "import ngramtool"``, the floor of any command;
- ``version``: ``ngramtool --version``, the floor of the command line;
- ``start-up``: ``ngramtool hash`` of one tiny file (a few words) into an index, tiktoken
  encoding (``--tokenizer-engine reference``);
- ``start-up, splintr`` and ``start-up, fastokens``: the same with each fast engine
  (``--tokenizer-engine splintr``, the one ``auto`` takes for a tiktoken encoding, and
  ``fastokens``);
- ``one index``: ``ngramtool hash DIR/f*.txt -o one.ngidx --force --quiet``, the N files named on
  the command line, into one index;
- ``shards``: ``ngramtool hash 'DIR/*.txt' -o shards/ --force --quiet``, the pattern expanded by
  ngramtool, one index shard per file.

Each run is timed by the wall clock and by the CPU seconds of the child (user + system, the delta
of ``getrusage(RUSAGE_CHILDREN)``); every output is removed before its run, so that every run
writes fresh indexes. For ``one index`` and ``shards`` it derives the per-file overhead,
(seconds - start-up seconds) / N in ms, by the wall clock and by CPU (CPU is what a shared machine
distorts less), and tokens/s over the whole run (start-up included; the tokens are read from the
manifests). A run's stages are compared with each other as ratios (CPU / wall; shards / one index),
which hold better across a noisy machine than the absolute times.

``--code DIR`` measures another checkout of the code with this venv: DIR (the directory that holds
the ``ngramtool`` package; default: this checkout) goes first on the children's PYTHONPATH, and
the children run in the temporary directory, so that neither the current directory nor the
editable install shadows it (checked: the script stops if ``ngramtool`` is imported from
elsewhere).

Before timing, the measured package's bytecode is compiled beside its sources
(:func:`compile_package`), as ``pip install`` compiles it: on a machine that sets
``PYTHONDONTWRITEBYTECODE=1`` an editable checkout would otherwise compile every module it imports
on every run, 0.1 s of ``hash``'s start-up that no installed copy pays.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "examples" / "corpus.txt"
FAST_ENGINES = ("splintr", "fastokens")  # the fast engines timed at start-up beside tiktoken
STARTS = tuple(f"start-up, {engine}" for engine in FAST_ENGINES)
STAGES = ("import", "version", "start-up", *STARTS, "one index", "shards")
MIN_BYTES, MAX_BYTES = 300, 4000  # the sizes of the small files
TINY_TEXT = "The quick brown fox jumps over the lazy dog.\n"


@dataclass
class Stage:
    """The best wall and CPU seconds of one stage over the rounds, and its tokens."""

    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    tokens: int = 0

    @property
    def best_seconds(self) -> float:
        """The fastest round by the wall clock."""
        return min(self.seconds)

    @property
    def best_cpu(self) -> float:
        """The round that used the least CPU."""
        return min(self.cpu)


def make_files(directory: Path, count: int) -> int:
    """Write ``count`` files ``f00000.txt``... of ``MIN_BYTES`` to ``MAX_BYTES`` bytes of the bundled
    corpus, each cut at spaces from a seeded offset; their total size in bytes."""
    corpus = CORPUS.read_text(encoding="utf-8")
    rng = random.Random(0)
    total = 0
    for number in range(count):
        size = rng.randint(MIN_BYTES, MAX_BYTES)
        start = corpus.find(" ", rng.randrange(len(corpus) - 2 * MAX_BYTES)) + 1
        end = corpus.rfind(" ", start, start + size)
        text = corpus[start : end if end > start else start + size].strip() + "\n"
        data = text.encode("utf-8")
        (directory / f"f{number:05d}.txt").write_bytes(data)
        total += len(data)
    return total


def child_env(code: Path) -> dict[str, str]:
    """The environment of the children: ``code`` first on PYTHONPATH."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(code), *filter(None, [env.get("PYTHONPATH")])])
    return env


def compile_package(code: Path) -> None:
    """Write the bytecode of ``code``'s ngramtool package into its ``__pycache__`` folders (ignored by
    git), as ``pip install`` does, so that the children import it instead of compiling the sources."""
    if not compileall.compile_dir(code / "ngramtool", quiet=1):
        raise SystemExit(f"{code / 'ngramtool'}: a module did not compile")


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """(wall seconds, child CPU seconds, stdout) of ``command`` in a child process; stops on failure."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        shown = " ".join(command if len(command) < 12 else [*command[:8], "...", *command[-4:]])
        raise SystemExit(f"failed with status {done.returncode}: {shown}\n{done.stderr.strip()[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu, done.stdout


def index_tokens(index: Path) -> int:
    """The tokens of an index, from its manifest."""
    return int(json.loads((index / "manifest.json").read_text(encoding="utf-8"))["num_tokens"])


def describe(code: Path) -> str:
    """``code``'s commit, and whether its package differs from it (without taking git's locks)."""
    git = ["git", "--no-optional-locks", "-C", str(code)]
    try:
        commit = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        changed = subprocess.run(
            [*git, "status", "--porcelain", "--", "ngramtool"], capture_output=True, text=True
        )
    except OSError:
        return "not a git checkout"
    if commit.returncode != 0:
        return "not a git checkout"
    dirty = f", {len(changed.stdout.splitlines())} changed files in ngramtool/" if changed.stdout else ""
    return commit.stdout.strip() + dirty


def remove(path: Path) -> None:
    """Remove an output of an earlier run, file or directory."""
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()


def measure(code: Path, count: int, repeats: int, extra: list[str], work: Path) -> dict:
    """Build the files in ``work``, run every stage ``repeats`` times in turn, and return the numbers."""
    inputs = work / "in"
    inputs.mkdir()
    text_bytes = make_files(inputs, count)
    tiny = work / "tiny.txt"
    tiny.write_text(TINY_TEXT, encoding="utf-8")
    env = child_env(code)
    compile_package(code)
    hash_cmd = [sys.executable, "-m", "ngramtool", "hash"]
    files = sorted(str(path) for path in inputs.glob("*.txt"))
    outputs = {
        "start-up": work / "tiny.ngidx",
        **{start: work / f"tiny-{engine}.ngidx" for start, engine in zip(STARTS, FAST_ENGINES, strict=True)},
        "one index": work / "one.ngidx",
        "shards": work / "shards",
    }
    tiny_cmd = [*hash_cmd, str(tiny), "--force", "--quiet", *extra, "--tokenizer-engine"]
    commands = {
        "import": [sys.executable, "-c", "import ngramtool; print(ngramtool.__file__)"],
        "version": [sys.executable, "-m", "ngramtool", "--version"],
        "start-up": [*tiny_cmd, "reference", "-o", str(outputs["start-up"])],
        **{
            start: [*tiny_cmd, engine, "-o", str(outputs[start])]
            for start, engine in zip(STARTS, FAST_ENGINES, strict=True)
        },
        "one index": [*hash_cmd, *files, "-o", str(outputs["one index"]), "--force", "--quiet", *extra],
        "shards": [*hash_cmd, f"{inputs}/*.txt", "-o", f"{outputs['shards']}/", "--force", "--quiet", *extra],
    }
    *_, where = timed(commands["import"], work, env)
    if not Path(where.strip()).resolve().is_relative_to(code.resolve()):
        raise SystemExit(f"ngramtool was imported from {where.strip()}, not from {code}")
    for warm in ("start-up", *STARTS, "one index"):  # untimed: caches (vocabulary, ranks,
        timed(commands[warm], work, env)  # the engine's files, compiled kernels) filled

    stages = {name: Stage() for name in STAGES}
    for _ in range(repeats):
        for name in STAGES:
            if name in outputs:
                remove(outputs[name])
            seconds, cpu, _ = timed(commands[name], work, env)
            stages[name].seconds.append(seconds)
            stages[name].cpu.append(cpu)
    stages["start-up"].tokens = index_tokens(outputs["start-up"])
    stages["one index"].tokens = index_tokens(outputs["one index"])
    shards = sorted(outputs["shards"].glob("*/manifest.json"))
    if len(shards) != count:
        raise SystemExit(f"the sharded run wrote {len(shards)} shards, not {count}")
    stages["shards"].tokens = sum(index_tokens(path.parent) for path in shards)
    if stages["shards"].tokens != stages["one index"].tokens:
        print(
            f"note: the shards hold {stages['shards'].tokens:,} tokens, the one index "
            f"{stages['one index'].tokens:,}",
            file=sys.stderr,
        )
    return summarize(code, count, text_bytes, repeats, stages)


def summarize(code: Path, count: int, text_bytes: int, repeats: int, stages: dict[str, Stage]) -> dict:
    """The numbers of a run, as ``--json`` prints them."""
    startup = stages["start-up"]
    result: dict = {
        "code": str(code),
        "commit": describe(code),
        "files": count,
        "text_bytes": text_bytes,
        "repeats": repeats,
        "cores": os.cpu_count(),
        "stages": {},
    }
    for name, stage in stages.items():
        entry = {
            "seconds": stage.best_seconds,
            "cpu_seconds": stage.best_cpu,
            "cpu_per_wall": stage.best_cpu / stage.best_seconds,
            "all_seconds": stage.seconds,
            "all_cpu_seconds": stage.cpu,
        }
        if name in ("one index", "shards"):
            entry["tokens"] = stage.tokens
            entry["tokens_per_second"] = stage.tokens / stage.best_seconds
            entry["ms_per_file"] = (stage.best_seconds - startup.best_seconds) / count * 1e3
            entry["cpu_ms_per_file"] = (stage.best_cpu - startup.best_cpu) / count * 1e3
        result["stages"][name] = entry
    one, sharded = result["stages"]["one index"], result["stages"]["shards"]
    result["shards_over_one"] = {
        "seconds": sharded["seconds"] / one["seconds"],
        "cpu_seconds": sharded["cpu_seconds"] / one["cpu_seconds"],
        "ms_per_file_beyond_one_index": sharded["ms_per_file"] - one["ms_per_file"],
        "cpu_ms_per_file_beyond_one_index": sharded["cpu_ms_per_file"] - one["cpu_ms_per_file"],
    }
    return result


def print_table(result: dict, load: tuple[float, float]) -> None:
    """The numbers of a run as a table."""
    print(
        f"code {result['code']} ({result['commit']}); {result['files']:,} files, "
        f"{result['text_bytes'] / 1e6:.2f} MB of text; best of {result['repeats']}; "
        f"{result['cores']} cores, load average {load[0]:.2f} at the start"
    )
    print(
        f"\n{'stage':>14} {'wall s':>7} {'CPU s':>7} {'CPU/wall':>8} {'x start-up':>10} "
        f"{'ms/file':>8} {'CPU ms/file':>11} {'tokens':>10} {'Ktok/s':>8}"
    )
    startup = result["stages"]["start-up"]
    for name, entry in result["stages"].items():
        per_file = tokens = ""
        if "ms_per_file" in entry:
            per_file = f"{entry['ms_per_file']:>8.2f} {entry['cpu_ms_per_file']:>11.2f}"
            tokens = f"{entry['tokens']:>10,} {entry['tokens_per_second'] / 1e3:>8.1f}"
        print(
            f"{name:>14} {entry['seconds']:>7.2f} {entry['cpu_seconds']:>7.2f} {entry['cpu_per_wall']:>8.2f} "
            f"{entry['cpu_seconds'] / startup['cpu_seconds']:>10.2f} {per_file:>20} {tokens:>19}"
        )
    ratio = result["shards_over_one"]
    print(
        f"\nshards / one index: {ratio['seconds']:.2f}x wall, {ratio['cpu_seconds']:.2f}x CPU; "
        f"a shard costs {ratio['ms_per_file_beyond_one_index']:.2f} ms "
        f"({ratio['cpu_ms_per_file_beyond_one_index']:.2f} CPU ms) more per file than a file in one index"
    )
    print(
        "x start-up = CPU s / start-up CPU s; ms/file = (s - start-up s) / files, by the wall clock and "
        "by CPU; Ktok/s over the whole run, start-up included"
    )
    stages = result["stages"]

    def above(stage: str, base: str) -> str:
        wall = stages[stage]["seconds"] - stages[base]["seconds"]
        return f"{wall:.2f} s wall ({stages[stage]['cpu_seconds'] - stages[base]['cpu_seconds']:.2f} CPU s)"

    print(f"start-up - version: {above('start-up', 'version')}; target 0.4 s")
    for start, engine in zip(STARTS, FAST_ENGINES, strict=True):
        print(f"{engine} - tiktoken: {above(start, 'start-up')}; target 0.3 s")
    print(f"load average {load[1]:.2f} at the end")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--code",
        type=Path,
        default=ROOT,
        help="the checkout whose ngramtool package is measured (first on PYTHONPATH; default: this one)",
    )
    parser.add_argument("--files", type=int, default=2000, help="how many small files")
    parser.add_argument("--repeats", type=int, default=3, help="rounds over the stages; the best counts")
    parser.add_argument("--hash-args", default="", help="more options for every ngramtool hash, e.g. '-j 1'")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON instead of a table")
    args = parser.parse_args()
    if not (args.code / "ngramtool" / "__init__.py").is_file():
        parser.error(f"--code {args.code}: no ngramtool package there")
    if args.files < 1 or args.repeats < 1:
        parser.error("--files and --repeats must be at least 1")
    start_load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-overhead-") as tmp:
        result = measure(args.code.resolve(), args.files, args.repeats, args.hash_args.split(), Path(tmp))
    load = (start_load, os.getloadavg()[0])
    if args.json:
        result["load_average"] = {"start": load[0], "end": load[1]}
        print(json.dumps(result, indent=2))
    else:
        print_table(result, load)


if __name__ == "__main__":
    main()
