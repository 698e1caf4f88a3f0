"""LongCat as sglang serves it: ``HashSpec(family="longcat", stop_token=E)`` against a literal reading
of sglang's n-gram kernel (``compute_n_gram_ids(..., eos_token_id)``, as its kernel test states it:
per request a token table row holding the context and the new tokens, ignored tokens stored
negated, the walk back from ``pos`` stopping at the row's start, at a negative token, or at the EOS
at lookback j > 0), on streams with EOS, ignored tokens and chunks after a context; the spec in
the spec file, the fingerprint and the manifest; the counts of ``collisions``."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import run, run_json
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ngramtool import BatchHashState, HashSpec, HashState, NgramHasher, hash_ngrams
from ngramtool.analysis.counting import NgramTypeCounter
from ngramtool.analysis.reports import analyse_collisions
from ngramtool.hashing.backends import BACKENDS

V, EOS = 40, 2
SPEC = HashSpec(
    family="longcat", max_ngram=4, heads=2, layer_ids=(0,), table_sizes=(97, 97, 97), vocab_size=V
)


def sglang_ids(table_row: list[int], pos: int, spec: HashSpec, eos: int) -> list[int]:
    """sglang's id of every column for the token at column ``pos`` of one request's token table row
    (ignored tokens stored negated): for each sub-table, ``ng += (tok * w[j]) % mod`` while walking
    back j = 0, 1, ...; stop before the row's start, at a negative token, or at ``eos`` when j > 0."""
    ids = []
    for column in range(spec.num_columns):
        order = column // spec.heads + 2
        mod = int(spec.primes.reshape(-1)[column])
        weights = spec.column_multipliers[0, column].tolist()
        ng = 0
        for j in range(order):
            if pos - j < 0:
                break
            tok = table_row[pos - j]
            if tok < 0 or (tok == eos and j > 0):
                break
            ng += (tok * weights[j]) % mod
        ids.append(ng % mod + int(spec.offsets[0, column]))
    return ids


def stop_spec(stop: int | None = EOS) -> HashSpec:
    return HashSpec(
        family="longcat", max_ngram=4, heads=2, layer_ids=(0,), table_sizes=(97, 97, 97), vocab_size=V,
        stop_token=stop,
    )  # fmt: skip


def stream(rng: np.random.Generator, length: int) -> list[int]:
    """Token ids with EOS runs and ignored (negative) tokens among them."""
    ids = rng.integers(0, V, length)
    ids[rng.random(length) < 0.15] = EOS
    ids[rng.random(length) < 0.1] = -1
    return ids.tolist()


def test_the_stop_is_sglangs_kernel_and_the_reference_is_not():
    """6 tokens, one EOS: 6 of the 24 ids differ between sglang and the reference (the mcoplib walk)."""
    spec = HashSpec(
        family="longcat", max_ngram=3, heads=2, layer_ids=(0,), table_sizes=(101, 101), vocab_size=V
    )
    served = HashSpec(**{**spec.to_dict(), "stop_token": EOS})
    tokens = [5, 9, EOS, 7, 11, 13]
    expected = [sglang_ids(tokens, pos, spec, EOS) for pos in range(len(tokens))]
    assert hash_ngrams(np.array(tokens), served, negative_ids="barrier")[:, 0].tolist() == expected
    reference = hash_ngrams(np.array(tokens), spec, negative_ids="barrier")[:, 0]
    assert int((reference != np.array(expected)).sum()) == 6


@pytest.mark.parametrize("backend", [name for name, b in BACKENDS.items() if b.available("cpu")])
def test_every_backend_gives_sglangs_ids_on_streams_with_eos_and_ignored_tokens(backend):
    rng = np.random.default_rng(0)
    spec = stop_spec()
    for _ in range(5):
        tokens = stream(rng, 60)
        expected = [sglang_ids(tokens, pos, spec, EOS) for pos in range(len(tokens))]
        rows = hash_ngrams(np.array(tokens), spec, negative_ids="barrier", backend=backend)
        assert np.asarray(rows)[:, 0].tolist() == expected


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), prompt=st.integers(0, 12), steps=st.integers(0, 12))
def test_chunks_after_a_context_are_sglangs_extend_and_decode(seed, prompt, steps):
    """A request's context in the token table, then an extend chunk and decode steps (each a
    ``column_starts`` further): the serving states and a streaming hasher give sglang's ids."""
    rng = np.random.default_rng(seed)
    spec = stop_spec()
    context = stream(rng, int(rng.integers(0, 10)))
    chunk, decode = stream(rng, prompt), stream(rng, steps)
    row = context + chunk + decode
    expected = [sglang_ids(row, pos, spec, EOS) for pos in range(len(row))]
    state = HashState(spec, negative_ids="barrier")
    batch = BatchHashState(spec, slots=2, negative_ids="barrier")
    hasher = NgramHasher(spec, negative_ids="barrier")
    got_state = [state.extend(np.array(context)), state.extend(np.array(chunk))]
    got_batch = [batch.prefill(1, context), batch.prefill(1, chunk)]
    got_stream = [hasher(np.array(context)), hasher(np.array(chunk))]
    for token in decode:
        got_state.append(state.extend(np.array([token])))
        got_batch.append(batch.step([1], [token]))
        got_stream.append(hasher(np.array([token])))
    for got in (got_state, got_batch, got_stream):
        rows = np.concatenate([np.asarray(part).reshape(-1, 1, spec.num_columns) for part in got])
        assert rows[:, 0].tolist() == expected


def test_the_stop_token_is_in_the_spec_file_the_fingerprint_and_the_manifest(tmp_path):
    served, reference = stop_spec(), stop_spec(None)
    assert served.fingerprint != reference.fingerprint
    assert HashSpec.from_json(served.to_json()) == served and "stop_token" not in reference.to_dict()
    spec_file = tmp_path / "lc.json"
    layout = ("--heads", "2", "--max-ngram", "3", "--table", "5003", "--layers", "0")
    run(
        "spec",
        "save",
        spec_file,
        "--family",
        "longcat",
        *layout,
        "-t",
        "gpt2",
        "--no-compress",
        "--stop-token",
        "50256",
    )
    assert json.loads(spec_file.read_text())["stop_token"] == 50256
    (tmp_path / "c.txt").write_text("one two<|endoftext|> three four\n", encoding="utf-8")
    index = tmp_path / "c.ngidx"
    run("hash", tmp_path / "c.txt", "-o", index, "--spec", spec_file, "-t", "gpt2", "--no-compress",
        "--special", "all")  # fmt: skip
    manifest = json.loads((index / "manifest.json").read_text())
    assert manifest["spec"]["stop_token"] == 50256
    shown = run_json("spec", "show", "--spec", spec_file, "-t", "gpt2", "--no-compress")
    assert "sglang" in shown["conventions"]["follows"]


def test_a_stop_token_is_refused_outside_longcat_and_outside_the_vocabulary():
    with pytest.raises(Exception, match="LongCat's walk as sglang serves it"):
        HashSpec(stop_token=1)
    with pytest.raises(Exception, match="is not an id of the vocabulary"):
        stop_spec(V)


@pytest.mark.parametrize("compiled", [False, True])
def test_collisions_count_the_ngrams_sglang_hashes(compiled):
    """The distinct windows counted are those the served walk sees: each head's rows used equal the
    distinct rows of the hashed stream, and the n-grams those of a literal walk."""
    rng = np.random.default_rng(3)
    spec = stop_spec()
    tokens = [t for t in stream(rng, 3000) if t >= 0]
    counter = NgramTypeCounter(spec, compiled=compiled)
    counter.update(np.array(tokens[:1000]))
    counter.update(np.array(tokens[1000:]))
    report = analyse_collisions(counter.result(), spec, compiled=compiled)
    rows = hash_ngrams(np.array(tokens), spec)[:, 0]
    for head in report.heads:
        order = head.order
        walks = set()
        for pos in range(len(tokens)):
            window = []
            for j in range(order):
                if pos - j < 0 or (j and tokens[pos - j] == EOS):
                    break
                window.append(tokens[pos - j])
            walks.add(tuple(window + [0] * (order - len(window))))
        assert head.types == len(walks)
        assert head.rows == len(set(rows[:, spec.column(order, head.head)].tolist()))
