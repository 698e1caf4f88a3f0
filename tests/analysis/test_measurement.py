"""measure_collisions: figures equal brute force on text, indexes and token files; saved parts
record their specs and merge exactly."""

from __future__ import annotations

import numpy as np
import pytest
from test_collisions import brute_stats, brute_types

from ngramtool import CorpusReader, HashSpec, NgramHashMapping, TokenFileReader
from ngramtool.analysis.measurement import MeasureOptions, measure_collisions
from ngramtool.inputs.stream import open_stream
from ngramtool.util.errors import NgramToolError, UsageError

BYTES = NgramHashMapping.build("bytes", heads=2)


def assert_tables_match(data: dict, ids: list[int], specs: list[HashSpec], doc_starts=None) -> None:
    assert [t["table_sizes"] for t in data["tables"]] == [list(s.table_sizes) for s in specs]
    for table, spec in zip(data["tables"], specs, strict=True):
        assert table["spec_fingerprint"] == spec.fingerprint
        types = brute_types(ids, spec, doc_starts)
        heads, orders = brute_stats(types, spec)
        for h in table["heads"]:
            want = heads[(h["layer"], h["order"], h["head"])]
            assert {k: h[k] for k in want} == pytest.approx(want, rel=1e-12)
            t, m = want["types"], want["table"]
            assert h["expected_collision"] == pytest.approx(1 - m * (1 - (1 - 1 / m) ** t) / t, rel=1e-9)
            assert h["expected_shared"] == pytest.approx(1 - (1 - 1 / m) ** (t - 1), rel=1e-9)
        for o in table["orders"]:
            want = orders[(o["layer"], o["order"])]
            assert {k: o[k] for k in want} == pytest.approx(want, rel=1e-12)
        assert data["orders"] == [
            {"order": n, "types": len(c), "occurrences": sum(c.values())} for n, c in types.items()
        ]


def test_collisions_on_text_sweep_equal_brute_force(files):
    mapping = NgramHashMapping.build("bytes", compress=False, heads=2, layer_ids=[3])
    data = measure_collisions(files["a"], mapping, table_sizes=[257, 61]).to_dict()
    ids = list(files["a"].read_bytes())
    specs = [
        HashSpec(heads=2, layer_ids=(3,), table_sizes=(t, t), pad_id=0, vocab_size=256) for t in (61, 257)
    ]
    assert data["input"]["tokens"] == len(ids) and data["input"]["kind"] == "text"
    assert data["vocab_size"] == 256 and data["tokenizer"] == "bytes"
    assert_tables_match(data, ids, specs)


def test_collisions_on_an_index_use_its_spec_and_boundary(files):
    data = measure_collisions(files["index"]).to_dict()
    a, b = files["a"].read_bytes(), files["b"].read_bytes()
    spec = HashSpec(heads=2, layer_ids=(0, 9), table_sizes=(101, 101), pad_id=0, vocab_size=256)
    assert data["input"] == {
        "kind": "index",
        "sources": [str(files["index"])],
        "tokens": len(a) + len(b),
        "documents": 2,
        "max_tokens": None,
        "boundary": "reset",
        "skipped_records": 0,
    }
    assert_tables_match(data, list(a + b), [spec], doc_starts=[0, len(a)])
    with pytest.raises(
        UsageError, match="is an index: it carries its own spec, vocabulary and boundary; drop `mapping`"
    ):
        measure_collisions(files["index"], NgramHashMapping.build("bytes", heads=4))


def test_collisions_on_a_token_file_with_max_tokens(files):
    mapping = NgramHashMapping.build(None, vocab_size=300, heads=3, layer_ids=[0], max_ngram=4)
    options = MeasureOptions(max_tokens=500)
    data = measure_collisions(files["ids"], mapping, table_sizes=[97], options=options).to_dict()
    ids = np.load(files["ids"])[:500].tolist()
    spec = HashSpec(max_ngram=4, heads=3, layer_ids=(0,), table_sizes=(97,) * 3, pad_id=0, vocab_size=300)
    assert data["input"]["tokens"] == 500 and data["input"]["kind"] == "tokens"
    assert_tables_match(data, ids, [spec])


def test_spec_options_on_partial_counts_replace_only_what_they_name(files, tmp_path):
    parts = tmp_path / "a.ngtypes.npz"
    recorded = measure_collisions(files["a"], BYTES, save_types=parts).to_dict()["spec"]
    merged = measure_collisions(parts, spec_fields={"seed": 7}).to_dict()["spec"]
    assert (merged["heads"], merged["seed"], merged["layer_ids"]) == (2, 7, recorded["layer_ids"])
    with pytest.raises(
        UsageError, match="saved counts are merged, not counted: drop `mapping` and `options`"
    ):
        measure_collisions(parts, options=MeasureOptions(max_tokens=10, boundary="reset"))
    with pytest.raises(UsageError, match="saved counts fix N, V' and the pad: drop `max_ngram`"):
        measure_collisions(parts, spec_fields={"max_ngram": 4})
    with pytest.raises(UsageError, match="`spec_fields` apply to saved counts"):
        measure_collisions(files["a"], BYTES, spec_fields={"seed": 7})


def table_sizes(data: dict) -> tuple[list, list]:
    """The base table sizes the top-level "spec" reports, and those of the analysed tables."""
    spec = data["spec"]
    reported = [s["table_sizes"] for s in spec] if isinstance(spec, list) else [spec["table_sizes"]]
    return reported, [t["table_sizes"] for t in data["tables"]]


def test_parts_record_and_merge_the_analysed_tables(files, tmp_path):
    one, sweep = tmp_path / "one.ngtypes.npz", tmp_path / "sweep.ngtypes.npz"
    counted = measure_collisions(files["a"], BYTES, table_sizes=[4099], save_types=one).to_dict()
    assert table_sizes(counted) == ([[4099, 4099]], [[4099, 4099]]) and counted["spec"]["heads"] == 2
    merged = measure_collisions(one).to_dict()
    assert table_sizes(merged) == table_sizes(counted) and merged["tables"] == counted["tables"]
    swept = measure_collisions(
        files["b"], NgramHashMapping.build("bytes"), table_sizes=[4099, 257], save_types=sweep
    ).to_dict()
    assert table_sizes(swept) == ([[257, 257], [4099, 4099]],) * 2
    assert table_sizes(measure_collisions(sweep).to_dict()) == table_sizes(swept)
    assert table_sizes(measure_collisions(sweep, table_sizes=[300]).to_dict()) == ([[300, 300]],) * 2
    for parts in ([one, sweep], [sweep, one]):
        with pytest.raises(UsageError, match="was counted with another spec than"):
            measure_collisions(parts)


def test_an_empty_shard_saves_its_part(files, tmp_path):
    empty, part, full = tmp_path / "empty.txt", tmp_path / "e.ngtypes.npz", tmp_path / "a.ngtypes.npz"
    empty.write_text("")
    saved = measure_collisions(empty, BYTES, save_types=part)
    assert saved.tokens == 0 and saved.reports == [] and part.is_file()
    with pytest.raises(NgramToolError, match="holds no tokens") as failed:
        measure_collisions(empty, BYTES)
    assert failed.value.exit_code == 1
    alone = measure_collisions(files["a"], BYTES, save_types=full).to_dict()
    merged = measure_collisions([part, full]).to_dict()
    assert merged["tables"] == alone["tables"] and merged["input"]["tokens"] == alone["input"]["tokens"]


def test_the_same_sources_as_hashing(files):
    """measure_collisions reads what hashing reads: paths, a CorpusReader with its reading options,
    a TokenFileReader, or a stream opened already."""
    mapping = NgramHashMapping.build("bytes", compress=False, heads=2, layer_ids=[0, 9])
    paths = measure_collisions([files["a"]], mapping, table_sizes=[101])
    read = measure_collisions(CorpusReader([files["a"]], errors="replace"), mapping, table_sizes=[101])
    opened = measure_collisions(open_stream([files["a"]], mapping), table_sizes=[101])
    assert read.to_dict()["tables"] == paths.to_dict()["tables"] == opened.to_dict()["tables"]
    canonical = NgramHashMapping.build(None, vocab_size=300, heads=2)
    ids = measure_collisions(TokenFileReader(files["ids"]), canonical, table_sizes=[101])
    assert ids.assumed_tokenizer is None and ids.tokens == 2000
    assumed = measure_collisions(TokenFileReader(files["ids"]), table_sizes=[101])
    assert assumed.assumed_tokenizer == ("cl100k_base", 100277)
    with pytest.raises(UsageError, match="a TokenStream is opened already"):
        measure_collisions(open_stream([files["a"]], mapping), mapping)
