"""The speedrun family equals its formula: modded-nanogpt's bigram hash (PR #201, ``get_bigram_hash``)
and parameter-golf's trigram (``TrigramHashEmbedding``), each read literally in torch int32 here, on
every CPU backend, through the serving states, in a spec file, and in ``collisions``."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import run, run_json

from ngramtool import HashSpec, HashState, NgramHasher, hash_ngrams
from ngramtool.analysis.counting import NgramTypeCounter
from ngramtool.analysis.reports import sweep_collisions
from ngramtool.hashing.backends import BACKENDS
from ngramtool.util.errors import UsageError

torch = pytest.importorskip("torch")

V = 50304  # GPT-2's vocabulary as modded-nanogpt pads it
CPU_BACKENDS = [name for name, backend in BACKENDS.items() if backend.available("cpu")]


def modded_nanogpt_bigram(x: torch.Tensor, table: int) -> torch.Tensor:
    """modded-nanogpt's get_bigram_hash as its code reads: int32 ids, position 0 set to the reserved
    row first, then every later position XORs 36313 x[t] with 27191 times the (already rewritten)
    x[t-1], modulo table - 1."""
    mod = table - 1
    x = x.to(torch.int32).clone()
    x[0] = mod
    x[1:] = torch.bitwise_xor(36313 * x[1:], 27191 * x[:-1]) % mod
    return x


def parameter_golf_trigram(t: torch.Tensor, table: int) -> torch.Tensor:
    """parameter-golf's TrigramHashEmbedding.trigram_hash: positions 0 and 1 the padding bucket."""
    t = t.to(torch.int32)
    mod = table - 1
    out = torch.full_like(t, mod)
    out[2:] = torch.bitwise_xor(torch.bitwise_xor(36313 * t[2:], 27191 * t[1:-1]), 18731 * t[:-2]) % mod
    return out


def parameter_golf_bigram(t: torch.Tensor, table: int) -> torch.Tensor:
    """parameter-golf's BigramHashEmbedding.bigram_hash: position 0 the padding bucket, t[0] kept."""
    t = t.to(torch.int32)
    mod = table - 1
    out = torch.empty_like(t)
    out[0] = mod
    out[1:] = torch.bitwise_xor(36313 * t[1:], 27191 * t[:-1]) % mod
    return out


def speedrun(tables: tuple[int, ...], first_token: str = "reserved", vocab: int = V) -> HashSpec:
    return HashSpec(
        family="speedrun", max_ngram=len(tables) + 1, heads=1, layer_ids=(0,), table_sizes=tables,
        vocab_size=vocab, first_token=first_token,
    )  # fmt: skip


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("table", [5 * V, 84602880, 1000])
def test_modded_nanogpt_bigram_hash(backend, table):
    """Position 0 gets the reserved row; position 1 hashes the reserved id (its code writes it into
    x[0] before reading x[t-1]); products of the reserved id wrap in int32."""
    rng = np.random.default_rng(table)
    spec = speedrun((table,))
    for length in (1, 2, 3, 500):
        x = rng.integers(0, V, length)
        expected = modded_nanogpt_bigram(torch.from_numpy(x), table).numpy()
        rows = np.asarray(hash_ngrams(x, spec, backend=backend))[:, 0, 0]
        assert rows.tolist() == expected.tolist()
    assert expected[0] == table - 1


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_parameter_golf_trigram_and_bigram(backend):
    """``first_token="kept"``: windows reaching before the start get the reserved row, x[0] is itself."""
    rng = np.random.default_rng(1)
    spec = speedrun((10240, 5003), "kept", vocab=1024)
    for length in (1, 2, 3, 700):
        t = rng.integers(0, 1024, length)
        rows = np.asarray(hash_ngrams(t, spec, offsets=False, backend=backend))[:, 0]
        assert rows[:, 0].tolist() == parameter_golf_bigram(torch.from_numpy(t), 10240).tolist()
        assert rows[:, 1].tolist() == parameter_golf_trigram(torch.from_numpy(t), 5003).tolist()


def test_chunks_and_serving_give_the_formula():
    """A batch hashed in chunks, or token by token as a request is served, is still one sequence."""
    x = np.random.default_rng(2).integers(0, V, 200)
    spec = speedrun((5 * V,))
    expected = modded_nanogpt_bigram(torch.from_numpy(x), 5 * V).tolist()
    hasher = NgramHasher(spec)
    chunks = np.concatenate([hasher(x[:1]), hasher(x[1:2]), hasher(x[2:])])[:, 0, 0]
    state = HashState(spec)
    served = np.concatenate([state.extend(x[:1]), *(state.extend(x[i : i + 1]) for i in range(1, 200))])
    assert chunks.tolist() == expected == served[:, 0, 0].tolist()
    batch = np.stack([x[:100], x[100:]])
    rows = hash_ngrams(batch, spec)[:, :, 0, 0]  # each batch row its own sequence
    assert rows.tolist() == [modded_nanogpt_bigram(torch.from_numpy(row), 5 * V).tolist() for row in batch]


def test_the_family_in_a_spec_file_and_its_constraints(tmp_path):
    path = tmp_path / "speedrun.json"
    run("spec", "save", path, "--family", "speedrun", "--table", "84602880")
    saved = json.loads(path.read_text())
    assert (saved["family"], saved["table_sizes"], saved["first_token"]) == (
        "speedrun",
        [84602880],
        "reserved",
    )
    assert saved["pad_id"] == saved["vocab_size"] == 50257  # the start marker: one past the last id
    kept = HashSpec.from_dict({**saved, "first_token": "kept"})
    assert kept.fingerprint != HashSpec.from_dict(saved).fingerprint
    with pytest.raises(UsageError, match="give heads=1"):
        HashSpec(family="speedrun", heads=2, max_ngram=2, table_sizes=(100,), vocab_size=10)
    with pytest.raises(UsageError, match="give max_ngram 2 or 3"):
        HashSpec(family="speedrun", heads=1, max_ngram=4, table_sizes=(100,) * 3, vocab_size=10)
    with pytest.raises(UsageError, match="first_token"):
        HashSpec(first_token="kept")


@pytest.mark.parametrize("first_token", ["reserved", "kept"])
@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("cut_start", ["ends the first chunk", "opens the second"])
def test_collision_figures_count_the_rows_the_formula_gives(first_token, compiled, cut_start):
    """Every table size of a sweep: the rows used are the distinct rows of the hashed sequence,
    whichever chunk carries a document start at the cut between two chunks."""
    rng = np.random.default_rng(4)
    tokens = rng.integers(0, 300, 4000)
    specs = [speedrun((table, table), first_token, vocab=300) for table in (401, 9001)]
    counter = NgramTypeCounter(specs[0], boundary="reset", compiled=compiled)
    at_end = cut_start == "ends the first chunk"
    counter.update(tokens[:1500], np.array([0, 700, 1500] if at_end else [0, 700]))
    counter.update(tokens[1500:], np.array([100] if at_end else [0, 100]))
    for spec, report in zip(specs, sweep_collisions(counter.result(), specs, compiled=compiled), strict=True):
        rows = hash_ngrams(tokens, spec, offsets=False, doc_starts=[0, 700, 1500, 1600])[:, 0]
        assert [head.rows for head in report.heads] == [len(set(rows[:, c].tolist())) for c in (0, 1)]
        assert [head.table for head in report.heads] == list(spec.table_sizes)


def test_collisions_answer_the_widened_table_on_text(tmp_path):
    """collisions --family speedrun --table 84602880: the sweep of modded-nanogpt's two tables."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat. " * 50 + "a dog ran in the fog. " * 50, encoding="utf-8")
    result = run_json("collisions", corpus, "--family", "speedrun", "--table", "251520,84602880")
    tables = [entry["table_sizes"][0] for entry in result["tables"]]
    assert tables == [251520, 84602880] and result["vocab_size"] == 50257
