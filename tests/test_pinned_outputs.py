"""The bytes of what ``hash``, ``tokenize``, ``collisions`` and ``cache`` make of every input form,
pinned (tests/data/pinned_outputs.json): a change to how inputs are read, tokenized, counted or
written that alters one of them fails here, naming the command and the form. After an intended
change, ``python -m pytest tests/test_pinned_outputs.py --update-pins`` writes the new digests;
review them with ``git diff``.

The commands run in this process (typer's runner), on a small spec, over the same documents in
every form: text (plain and compressed), JSONL (plain and compressed), parquet, Arrow, a
``save_to_disk`` directory, standard input; token files of every format; an index, a merged
dataset and a pipe stream.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import CORPUS, DATA, run
from corpus_forms import write_record_forms, write_text_forms
from typer.testing import CliRunner

from ngramtool import NgramHashMapping, OutputOptions, hash_files, hash_texts, merge_shards
from ngramtool.cli.app import app

PINS = DATA / "pinned_outputs.json"
SPEC = ("--heads", "2", "--table", "5003", "--layers", "1")
# Token files hold GPT-2 ids (nanoGPT's uint16 holds no cl100k_base id): read with -t gpt2.
TOKEN_FORMATS = {
    "npy": ("ids.npy", ("-t", "gpt2")),
    "nanogpt": ("nano.bin", ("-t", "gpt2", "--token-format", "nanogpt")),
    "llmc": ("llmc.bin", ("-t", "gpt2", "--token-format", "llmc")),
    "megatron": ("meg_text_document.bin", ("-t", "gpt2", "--token-format", "megatron")),
    "datatrove": ("dt.ds", ("-t", "gpt2")),
    "raw": ("raw.u32", ("-t", "gpt2", "--token-format", "raw", "--token-dtype", "uint32")),
}
TEXT_FORMS = ("txt", "txt.gz", "txt.zst", "jsonl", "jsonl.gz", "jsonl.zst", "parquet", "arrow", "saved")


@pytest.fixture(scope="module")
def forms(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same documents in every form, token files of their ids, an index, a merged dataset and
    a stream."""
    folder = tmp_path_factory.mktemp("forms")
    paragraphs = [p for p in CORPUS.read_text(encoding="utf-8").split("\n\n") if p.strip()][:12]
    paths = {**write_text_forms(folder / "text", "\n\n".join(paragraphs))}
    records = write_record_forms(folder / "records", paragraphs)
    paths.update({name: path for name, path in records.items() if name in TEXT_FORMS or name == "jsonl"})
    paths["saved"] = records["save_to_disk"]
    mapping = NgramHashMapping.build("cl100k_base", heads=2, table_sizes=5003, layer_ids=[1])
    index = hash_texts(paragraphs, folder / "docs.ngidx", mapping=mapping, boundary="reset")
    paths["index"] = Path(index.path)
    gpt2 = NgramHashMapping.build("gpt2", heads=2, table_sizes=5003, layer_ids=[1])
    for name, (file, _) in TOKEN_FORMATS.items():
        if name in ("npy", "raw"):
            continue
        saved = OutputOptions(save_tokens=folder / file, save_format=name, force=True)
        hash_texts(paragraphs, folder / f"{name}.ngidx", mapping=gpt2, outputs=saved)
        paths[name] = folder / file
    ids = np.asarray(hash_texts(paragraphs, folder / "gpt2.ngidx", mapping=gpt2).tokens)
    np.save(folder / "ids.npy", ids)
    paths["npy"] = folder / "ids.npy"
    ids.astype("<u4").tofile(folder / "raw.u32")
    paths["raw"] = folder / "raw.u32"
    shards = folder / "shards"
    for i, form in enumerate(("txt", "txt.gz")):
        hash_files([paths[form]], shards / f"s{i}.ngidx", mapping=mapping)
    merge_shards(shards)
    paths["dataset"] = shards
    stream = run("hash", paths["txt"], "-o", "-", *SPEC, "-q")
    assert stream.returncode == 0, stream.stderr.decode()
    (folder / "doc.ngstream").write_bytes(stream.stdout)
    paths["stream"] = folder / "doc.ngstream"
    return paths


def _invoke(*args: object, stdin: bytes | None = None) -> bytes:
    result = CliRunner().invoke(app, [str(arg) for arg in args], input=stdin)
    assert result.exit_code == 0, (args, result.output, result.exception)
    return result.stdout_bytes


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


def _report(output: bytes) -> str:
    """A --json report without its timings and paths (what differs from run to run)."""
    report = json.loads(output)
    report.pop("run", None)
    report.get("input", {}).pop("sources", None)
    return _digest(json.dumps(report, sort_keys=True).encode())


def _index_arrays(path: Path) -> str:
    return _digest(
        b"".join((path / name).read_bytes() for name in ("tokens.npy", "rows.npy", "doc_offsets.npy"))
    )


@pytest.fixture(scope="module")
def found(forms: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The digest of each command's output on each form."""
    tmp_path = tmp_path_factory.mktemp("outputs")
    found: dict[str, str] = {}
    for form in (*TEXT_FORMS, "stdin"):
        source = ["-"] if form == "stdin" else [forms[form]]
        stdin = forms["txt"].read_bytes() if form == "stdin" else None
        out = tmp_path / f"{form}.ngidx"
        _invoke("hash", *source, "-o", out, *SPEC, "-q", "--boundary", "reset", stdin=stdin)
        found[f"hash {form}"] = _index_arrays(out)
        found[f"tokenize {form}"] = _digest(_invoke("tokenize", *source, stdin=stdin))
        found[f"collisions {form}"] = _report(_invoke("collisions", *source, *SPEC, "--json", stdin=stdin))
        found[f"cache {form}"] = _report(
            _invoke("cache", *source, *SPEC, "--rows", "100,1000", "--json", stdin=stdin)
        )
    for name, (_, options) in TOKEN_FORMATS.items():
        out = tmp_path / f"{name}.tokens.ngidx"
        _invoke("hash", "--tokens", forms[name], *options, "-o", out, *SPEC, "-q")
        found[f"hash {name}"] = _index_arrays(out)
        found[f"collisions {name}"] = _report(_invoke("collisions", forms[name], *options, *SPEC, "--json"))
        found[f"cache {name}"] = _report(
            _invoke("cache", forms[name], *options, *SPEC, "--rows", "100", "--json")
        )
    for name in ("index", "dataset"):
        found[f"collisions {name}"] = _report(_invoke("collisions", forms[name], "--json"))
        found[f"cache {name}"] = _report(_invoke("cache", forms[name], "--rows", "100", "--json"))
    return found


def test_every_command_makes_the_pinned_bytes_of_every_form(found, request):
    if request.config.getoption("update_pins"):
        PINS.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    pinned = json.loads(PINS.read_text(encoding="utf-8"))
    changed = sorted(name for name in {*found, *pinned} if found.get(name) != pinned.get(name))
    assert not changed, f"outputs differ from the pins: {changed} (--update-pins after an intended change)"


def test_forms_of_the_same_documents_agree(found):
    """Every text form of the same documents is the same ids, n-grams and reads."""
    for command in ("hash", "tokenize", "collisions", "cache"):
        records = {
            found[f"{command} {form}"]
            for form in ("jsonl", "jsonl.gz", "jsonl.zst", "parquet", "arrow", "saved")
        }
        assert len(records) == 1, command
        text = {found[f"{command} {form}"] for form in ("txt", "txt.gz", "txt.zst", "stdin")}
        assert len(text) == 1, command
