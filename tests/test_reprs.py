"""The objects users hold print as one short line that says what they are: no memory address, no
vocabulary, no arrays (``<Encoding 'cl100k_base'>`` is tiktoken's)."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import CORPUS, DATA, hash_corpus_shards

from ngramtool import (
    BatchHashState,
    HashSpec,
    HashState,
    NgramHasher,
    NgramHashMapping,
    OutputOptions,
    hash_files,
    load_tokenizer,
    merge_shards,
    open_index,
)
from ngramtool.formats.tokenfiles import open_token_file
from ngramtool.hashing.hasher import SequenceHasher
from ngramtool.spec.families.stored import StoredConstants

MAX_CHARS = 200
DEEPSEEK = DATA / "tokenizers" / "deepseek-v3.tokenizer.json.gz"
ADDRESS = re.compile(r"0x[0-9a-f]{6,}")
FINGERPRINT = re.compile(r"\b[0-9a-f]{16}\b")


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A mapping, an index and a tokens-only index of a piece of the corpus, a merged dataset, a
    token file and a stream file."""
    folder = tmp_path_factory.mktemp("reprs")
    text = folder / "text.txt"
    text.write_text(CORPUS.read_text(encoding="utf-8")[:20_000], encoding="utf-8")
    mapping = NgramHashMapping.build("cl100k_base", heads=2, table_sizes=5003)
    made: dict[str, Any] = {"folder": folder, "mapping": mapping}
    for name, rows in (("stored.ngidx", "stored"), ("lazy.ngidx", "lazy")):
        made[name] = hash_files([text], folder / name, mapping=mapping, outputs=OutputOptions(rows=rows))
    merge_shards(hash_corpus_shards(folder, 2, 3000))
    made["dataset"] = folder / "out"
    np.save(folder / "ids.npy", np.asarray(made["stored.ngidx"].tokens))
    made["ids.npy"] = folder / "ids.npy"
    return made


def _hf(path: Path) -> Any:
    pytest.importorskip("tokenizers")
    return load_tokenizer(str(path))


def _torch(name: str) -> Any:
    pytest.importorskip("torch")
    import ngramtool.torch

    return getattr(ngramtool.torch, name)


BUILDERS: dict[str, Callable[[dict[str, Any]], tuple[Any, list[str]]]] = {
    "tokenizer": lambda m: (m["mapping"].tokenizer, ["cl100k_base", "n_vocab=100277", "special='none'"]),
    "tiktoken": lambda m: (load_tokenizer("cl100k_base", engine="reference"), ["'cl100k_base'"]),
    "bytes": lambda m: (load_tokenizer("bytes"), ["ByteTokenizer", "'bytes'", "n_vocab=256"]),
    "hf": lambda m: (_hf(DEEPSEEK), ["HFTokenizer", "deepseek-v3.tokenizer.json", "n_vocab=128815"]),
    "mapping": lambda m: (m["mapping"], ["NgramHashMapping", "'cl100k_base'", "V'=62330", _fp(m)]),
    "vocab": lambda m: (m["mapping"].vocab, ["CompressedVocab", "V=100277", "V'=62330", "compressed"]),
    "spec": lambda m: (m["mapping"].spec, ["HashSpec(", "heads=2", "vocab_size=62330"]),
    "hasher": lambda m: (
        NgramHasher(m["mapping"].spec),
        ["NgramHasher", _fp(m), "backend='auto'", "position=0"],
    ),
    "sequence hasher": lambda m: (SequenceHasher(m["mapping"].spec), ["SequenceHasher", _fp(m)]),
    "hash state": lambda m: (_extended(HashState(m["mapping"].spec)), ["HashState", _fp(m), "length=3"]),
    "batch state": lambda m: (BatchHashState(m["mapping"].spec, 4), ["BatchHashState", _fp(m), "slots=4"]),
    "index": lambda m: (
        m["stored.ngidx"],
        ["<Index", "stored.ngidx", f"tokens={_tokens(m)} documents=1 rows=int32[{_tokens(m)}, 2, 4]", _fp(m)],
    ),
    "tokens-only index": lambda m: (open_index(m["lazy.ngidx"].path), ["lazy.ngidx", "lazy", _fp(m)]),
    "computed rows": lambda m: (
        open_index(m["lazy.ngidx"].path).rows,
        ["ComputedRows", f"shape=[{_tokens(m)}, 2, 4]", "dtype=int32"],
    ),
    "merged tokens": lambda m: (open_index(m["dataset"]).tokens, ["ConcatArray", "dtype=uint32"]),
    "stored constants": lambda m: (
        StoredConstants.from_arrays([[3, 5, 7]] * 4, [[11, 13, 17, 19]] * 4, [[0, 11, 24, 41]] * 4),
        ["StoredConstants", "layers=4", "columns=4", "rows=[60, 60, 60, 60]"],
    ),
    "merged dataset": lambda m: (open_index(m["dataset"]), ["MergedIndex", "out", "shards=2", "tokens="]),
    "token file": lambda m: (
        open_token_file(m["ids.npy"]),
        ["TokenFile", "ids.npy", "format='npy'", "tokens="],
    ),
    "index dataset": lambda m: (
        _torch("IndexDataset")(m["stored.ngidx"].path, 64),
        ["IndexDataset", "stored.ngidx", "seq_len=64", "windows=", _fp(m)],
    ),
    "token file dataset": lambda m: (
        _torch("TokenFileDataset")(m["ids.npy"], 64, tokenizer="cl100k_base", spec=m["mapping"].spec),
        ["TokenFileDataset", "ids.npy", "tokens=", "seq_len=64", _fp(m)],
    ),
    "stream dataset": lambda m: (_torch("StreamDataset")("c.stream", 32), ["StreamDataset", "'c.stream'"]),
    "stream dataset of a file object": lambda m: (_torch("StreamDataset")(io.BytesIO(), 32), ["<BytesIO>"]),
    "ngram rows": lambda m: (
        _torch("NgramRows")(m["mapping"].spec, m["mapping"].vocab),
        ["NgramRows(", "heads=2", "V'=62,330", _fp(m)],
    ),
    "rows collate": lambda m: (
        _torch("RowsCollate")(m["mapping"].spec, m["mapping"].vocab),
        ["RowsCollate", "'input_ids'", "'rows'", "NgramRows(", _fp(m)],
    ),
}


def _fp(made: dict[str, Any]) -> str:
    """The short spec fingerprint the reprs show."""
    return made["mapping"].spec.fingerprint[:16]


def _tokens(made: dict[str, Any]) -> int:
    return len(made["stored.ngidx"])


def _extended(state: HashState) -> HashState:
    state.extend([5, 17, 42])
    return state


@pytest.mark.parametrize("name", BUILDERS)
def test_repr_is_one_short_line_that_identifies_the_object(made, name):
    thing, identifying = BUILDERS[name](made)
    text = repr(thing)
    assert "\n" not in text and len(text) <= MAX_CHARS, text
    assert not ADDRESS.search(text), text
    for field in identifying:
        assert field in text, (field, text)


def test_a_mapping_shows_what_else_changes_the_ids():
    mapping = NgramHashMapping.build("bytes", special="all", mask_tokens=[7], negative_ids="barrier", heads=2)
    text = repr(mapping)
    assert "special='all'" in text and "mask_tokens=1" in text and "negative_ids='barrier'" in text
    assert repr(NgramHashMapping.build(None, vocab_size=1000, heads=2)).startswith(
        "<NgramHashMapping V'=1000 "
    )


def test_a_hasher_shows_its_options_not_at_their_defaults():
    spec = HashSpec(heads=2, table_sizes=(1009, 1009), vocab_size=1000, pad_id=0)
    text = repr(NgramHasher(spec, boundary="reset", offsets=False, negative_ids="hash", backend="numpy"))
    assert "backend='numpy'" in text and "boundary='reset'" in text
    assert "offsets=False" in text and "negative_ids='hash'" in text
    assert FINGERPRINT.search(text)
