"""explain: every intermediate value of a short text's rows, and that they add up to hash_ngrams'."""

from __future__ import annotations

import pytest

from ngramtool import NgramHashMapping, build_vocab, hash_ngrams, load_tokenizer
from ngramtool.tools.explain import explain
from ngramtool.util.errors import UsageError


def test_explain_agrees_with_hash():
    explained = explain("the horse", NgramHashMapping.build(heads=2))
    tok = load_tokenizer("cl100k_base")
    canonical = build_vocab(tok).canonicalize(tok.encode("the horse"))
    spec = explained.spec
    rows = hash_ngrams(canonical, spec)
    for record in explained.tokens:
        for gram in record["ngrams"]:
            li = spec.layer_ids.index(gram["layer"])
            for head in gram["heads"]:
                col = spec.column(gram["order"], head["head"])
                assert head["row"] == rows[record["position"], li, col]
                assert head["hash"] + head["offset"] == head["row"]
                assert gram["mix"] % head["prime"] == head["hash"]
    assert explained.tokens[1]["ngrams"][0]["window"] == canonical[:2].tolist()
    assert explained.backend.name == "numpy" and explained.left_out == 0  # a short text: numba not loaded


def test_limit_layer_and_preset():
    text = "word " * 99 + "end"  # 100 tokens
    explained = explain(text, NgramHashMapping.build(heads=1, layer_ids=[1]), limit=5)
    assert explained.num_tokens == 100 and len(explained.tokens) == 5 and explained.left_out == 95
    assert len(explain(text, NgramHashMapping.build(heads=1, layer_ids=[1]), limit=0).tokens) == 100
    one_layer = explain("the horse", layer=15)
    assert {gram["layer"] for record in one_layer.tokens for gram in record["ngrams"]} == {15}
    tutorial = NgramHashMapping.build(spec="tutorial")  # a preset
    assert explain("the horse", tutorial).spec.heads == 4
    with pytest.raises(
        UsageError, match=r"`layer` 99 is not one of the Engram layers \[1, 15\] \(`layer_ids`\)"
    ):
        explain("x", layer=99)
