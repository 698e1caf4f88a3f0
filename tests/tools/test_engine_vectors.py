"""Vectors for engines' test suites: ids and rows of a text, a DEAD span under both conventions,
and the rows of a prefill, a rolled-back draft and decode steps, equal to one-shot hashing."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ngramtool import NgramHashMapping, hash_ngrams
from ngramtool.hashing.backends.barrier import pad_row
from ngramtool.tools.engine_vectors import engine_vectors
from ngramtool.util.errors import UsageError

TEXT = "Engram tables are addressed by hashing the last few tokens of the context."


@pytest.fixture(scope="module")
def v41(deepseek_tokenizer_path) -> NgramHashMapping:
    """The V4.1 layout over the DeepSeek-V3 tokenizer (V'=98,627)."""
    return NgramHashMapping.build(  # DeepSeek-V3's tokenizer stands in for V4.1's (another V')
        str(deepseek_tokenizer_path), spec="deepseek-v4.1-flash", allow_vocab_mismatch=True
    )


def layer_rows(record: list[dict]) -> np.ndarray:
    """``[T, L, C]`` from the per-layer records."""
    return np.stack([np.array(layer["rows"]) for layer in record], axis=1)


def test_the_vectors_of_a_text(v41):
    vectors = json.loads(json.dumps(engine_vectors(v41, TEXT, masked_span=(4, 7), prefill=5)))
    raw = v41.encode(TEXT)
    assert vectors["raw_ids"] == raw.tolist() and vectors["canonical_ids"] == v41.canonical(raw).tolist()
    assert vectors["layer_ids"] == [1, 14] and vectors["compressed_vocab_size"] == 98627
    assert vectors["token_mask"] == [not 4 <= t < 7 for t in range(len(raw))]
    cases = {case["name"]: case for case in vectors["cases"]}
    canonical = v41.canonical(raw)
    assert np.array_equal(layer_rows(cases["unmasked"]["rows"]), hash_ngrams(canonical, v41.spec))
    dead = np.zeros(len(raw), dtype=bool)
    dead[4:7] = True
    barrier = layer_rows(cases["barrier"]["rows"])
    assert np.array_equal(barrier, v41.rows(raw, masked=dead, negative_ids="barrier"))
    assert (barrier[4:7] == pad_row(v41.spec, offsets=True)).all()  # DEAD: the all-pad window
    assert (layer_rows(cases["minus-one"]["rows"])[4:7] == -1).all()
    assert cases["barrier"]["ids"][4:7] == [-1, -1, -1]


def test_the_serving_replay_gives_the_one_shot_rows(v41):
    vectors = engine_vectors(v41, TEXT, prefill=3)
    whole = layer_rows(vectors["cases"][1]["rows"])
    steps = vectors["serving"]["steps"]
    assert [step["op"] for step in steps[:3]] == ["prefill", "draft", "rollback"]
    draft = steps[1]
    accepted = vectors["cases"][1]["ids"][3:5]
    assert draft["positions"] == [3, 5] and all(a != b for a, b in zip(draft["ids"], accepted, strict=True))
    ids = np.array(vectors["cases"][1]["ids"][:3] + draft["ids"])
    with_draft = hash_ngrams(ids, v41.spec, negative_ids="barrier")
    assert np.array_equal(layer_rows(draft["rows"]), with_draft[3:])
    decoded = [step for step in steps if step["op"] == "decode"]
    assert len(decoded) == len(vectors["raw_ids"]) - 3
    replayed = np.concatenate([layer_rows(step["rows"]) for step in (steps[0], *decoded)])
    assert np.array_equal(replayed, whole)


def test_bad_spans_and_splits_are_usage_errors(v41):
    length = len(v41.encode(TEXT))
    for options, fragment in [
        ({"masked_span": (3, 3)}, "must lie within"),
        ({"masked_span": (0, length + 1)}, "must lie within"),
        ({"prefill": length}, "at least one token to decode"),
    ]:
        with pytest.raises(UsageError, match=fragment):
            engine_vectors(v41, TEXT, **options)
    with pytest.raises(UsageError, match="at least two tokens"):
        engine_vectors(NgramHashMapping.build("bytes", heads=2, table_sizes=1009), "a")
