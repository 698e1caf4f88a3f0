"""Every command reads a file as the same thing (``ngramtool.inputs.stream.decide_source``): the
same ids from text, a token file (a headerless ``.bin`` too, with the same note), an index or a
stream, or the same refusal (random bytes, UTF-16). Hash refuses what is hashed already."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import CORPUS, run
from typer.testing import CliRunner

from ngramtool import NgramHashMapping, hash_texts
from ngramtool.cli.app import app

SPEC = ("--heads", "1", "--layers", "1", "--table", "1009")
COMMANDS = ("tokenize", "hash", "collisions", "cache")


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("one-reading")
    text = CORPUS.read_text(encoding="utf-8")[:4000]
    (folder / "text.txt").write_text(text, encoding="utf-8")
    (folder / "docs.jsonl").write_text("".join(json.dumps({"text": p}) + "\n" for p in text.split("\n\n")))
    mapping = NgramHashMapping.build("gpt2", heads=1, layer_ids=[1], table_sizes=1009)
    index = hash_texts([text], folder / "text.ngidx", mapping=mapping)
    ids = np.asarray(index.tokens)
    np.save(folder / "ids.npy", ids)
    ids.astype(np.uint16).tofile(folder / "headerless.bin")
    (folder / "random.dat").write_bytes(np.random.default_rng(0).bytes(5000))
    (folder / "wide.txt").write_bytes(text[:200].encode("utf-16"))
    stream = run("hash", folder / "text.txt", "-o", "-", "-q", *SPEC)
    (folder / "text.ngstream").write_bytes(stream.stdout)
    return {path.name: path for path in folder.iterdir()}


def _read(command: str, path: Path, tmp_path: Path) -> tuple[int | None, str]:
    """(tokens read, or None with the error; the notes said) by one command, in this process."""
    gpt2 = ("-t", "gpt2") if path.suffix in (".npy", ".bin") else ()
    args = {
        "tokenize": [str(path), *gpt2],
        "hash": [str(path), "-o", str(tmp_path / f"{path.name}.{command}.ngidx"), *gpt2, *SPEC, "--json"],
        "collisions": [str(path), *gpt2, *SPEC, "--json"],
        "cache": [str(path), *gpt2, *SPEC, "--rows", "10", "--json"],
    }[command]
    if path.suffix in (".ngidx", ".ngstream") and command != "hash":
        args = [a for a in args if a not in (*SPEC, *gpt2)]
    result = CliRunner().invoke(app, [command, *args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        return None, str(result.exception)
    assert result.exit_code == 0, result.output
    out = result.stdout
    if command == "tokenize":
        return len(out.split()), result.stderr
    data = json.loads(out)
    return (data["num_tokens"] if command == "hash" else data["input"]["tokens"]), result.stderr


@pytest.mark.parametrize(
    ("name", "reads"),
    [
        ("text.txt", "ids"),
        ("docs.jsonl", "ids"),
        ("ids.npy", "ids"),
        ("headerless.bin", "ids"),
        ("text.ngidx", "ids, hash refuses"),
        ("text.ngstream", "ids, hash refuses"),
        ("random.dat", "binary data, not text"),
        ("wide.txt", "UTF-16LE text, not UTF-8"),
    ],
)
def test_every_command_reads_a_file_as_the_same_thing(files, tmp_path, name, reads):
    found = {command: _read(command, files[name], tmp_path) for command in COMMANDS}
    counts = {command: count for command, (count, _) in found.items()}
    if reads.startswith("ids"):
        readers = [c for c in COMMANDS if not (c == "hash" and "hash refuses" in reads)]
        assert len({counts[c] for c in readers}) == 1 and counts[readers[0]], found
        if "hash refuses" in reads:
            assert counts["hash"] is None and "already" in found["hash"][1], found["hash"]
    else:
        for command, (count, said) in found.items():
            assert count is None and reads in said, (command, said)
    notes = {command: "has no header: read as nanoGPT" in said for command, (_, said) in found.items()}
    assert set(notes.values()) == {name == "headerless.bin"}, notes
