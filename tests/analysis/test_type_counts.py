"""Saved n-gram type counts: per-shard parts merge exactly to the single-machine answer, and parts
counted another way (tokenization, boundary, vocabulary, spec) are refused."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ngramtool import CorpusReader, NgramHashMapping, hash_files, merge_shards
from ngramtool.analysis.counting import NgramTypeCounter, count_ngram_types
from ngramtool.analysis.measurement import MeasureOptions, measure_collisions
from ngramtool.analysis.type_counts import (
    analysed_specs_record,
    load_and_merge,
    load_types,
    merge_types,
    recorded_specs,
    save_types,
)
from ngramtool.spec.hashspec import HashSpec
from ngramtool.util.errors import NgramToolError, UsageError

SPEC = HashSpec(max_ngram=3, heads=2, layer_ids=(0,), table_sizes=(101, 103), pad_id=0, vocab_size=50)


def brute_force(streams: list[list[int]]) -> dict[int, Counter]:
    """Distinct n-grams with counts over independent streams, from the definition."""
    out: dict[int, Counter] = {2: Counter(), 3: Counter()}
    for ids in streams:
        padded = [SPEC.pad_id] * 2 + ids
        for t in range(len(ids)):
            for n in (2, 3):
                out[n][tuple(padded[t + 3 - n : t + 3])] += 1
    return out


def as_counter(types, order: int) -> Counter:
    windows = types[order].windows()  # column k is lag k: reverse to reading order
    return Counter(
        {tuple(w[::-1].tolist()): int(c) for w, c in zip(windows, types[order].counts, strict=True)}
    )


@settings(max_examples=40)
@given(st.lists(st.lists(st.integers(0, 49), max_size=40), min_size=1, max_size=5))
def test_merged_parts_equal_the_brute_force_union(streams):
    parts = [count_ngram_types(np.asarray(ids, dtype=np.int64), SPEC) for ids in streams]
    merged = merge_types(parts)
    expected = brute_force(streams)
    for order in (2, 3):
        assert as_counter(merged, order) == expected[order]


def test_save_load_merge_round_trip_and_refusals(tmp_path):
    rng = np.random.default_rng(0)
    streams = [rng.integers(0, 50, size) for size in (300, 10, 200)]
    paths = []
    for i, ids in enumerate(streams):
        counter = NgramTypeCounter(SPEC)
        counter.update(ids)
        meta = {"max_ngram": 3, "vocab_size": 50, "pad_id": 0, "boundary": "none", "vocab_fingerprint": "v",
                "tokens": len(ids), "documents": 1}  # fmt: skip
        path = tmp_path / f"p{i}.ngtypes.npz"
        save_types(path, counter.result(), meta)
        paths.append(path)
    merged, meta = load_and_merge(paths)
    assert meta["tokens"] == 510 and meta["documents"] == 3
    direct = merge_types([count_ngram_types(ids, SPEC) for ids in streams])
    for order in (2, 3):
        assert np.array_equal(merged[order].keys, direct[order].keys)
        assert np.array_equal(merged[order].counts, direct[order].counts)
    odd = tmp_path / "odd.ngtypes.npz"
    save_types(odd, count_ngram_types(streams[0], SPEC), {**meta, "boundary": "reset"})
    with pytest.raises(UsageError, match="another boundary"):
        load_and_merge([paths[0], odd])


def test_parts_equal_counting_the_dataset(tmp_path):
    folder = tmp_path / "shards"
    texts = ["the cat sat on the mat. " * 20, "a dog and a cat and a mat. " * 15]
    for i, text in enumerate(texts):
        (tmp_path / f"t{i}.txt").write_text(text)
    hash_files(str(tmp_path / "t*.txt"), f"{folder}/", mapping=NgramHashMapping.build("bytes", heads=2))
    merge_shards(folder)
    whole = measure_collisions(folder, table_sizes=[257]).to_dict()
    parts = []
    for i in range(2):
        part = tmp_path / f"t{i}.ngtypes.npz"
        measure_collisions(folder / f"t{i}.txt.ngidx", save_types=part)
        parts.append(part)
    merged = measure_collisions(parts, table_sizes=[257], spec_fields={"heads": 2}).to_dict()
    assert merged["orders"] == whole["orders"]
    assert merged["tables"] == whole["tables"]


def counted(text: Path, options: dict) -> dict:
    """measure_collisions' source, mapping and options for settings named one by one."""
    reading = {key: options.pop(key) for key in ("add_eot", "eot_token") if key in options}
    boundary = options.pop("boundary", None)
    compress = not options.pop("no_compress", False)
    mapping = NgramHashMapping.build(options.pop("tokenizer"), compress=compress, **options)
    source = CorpusReader([str(text)], **reading)
    return {"source": source, "mapping": mapping, "options": MeasureOptions(boundary=boundary)}


@pytest.mark.parametrize(
    ("options", "setting"),
    [
        ({"add_eot": True, "eot_token": "."}, "another `add_eot`"),
        ({"special": "all"}, "another special-token rule (`special`)"),
        ({"boundary": "reset"}, "another boundary (`boundary`)"),
        ({"no_compress": True}, "another vocabulary"),
        ({"tokenizer": "cl100k_base"}, "another tokenizer (`tokenizer`)"),
    ],
)
def test_parts_counted_with_other_settings_are_refused(tmp_path, options, setting):
    text = tmp_path / "t.txt"
    text.write_text("the cat sat on the mat. " * 20)
    base, odd = tmp_path / "base.ngtypes.npz", tmp_path / "odd.ngtypes.npz"
    measure_collisions(text, NgramHashMapping.build("bytes"), save_types=base)
    measure_collisions(**counted(text, {"tokenizer": "bytes", **options}), save_types=odd)
    for paths in ([base, odd], [odd, base]):
        with pytest.raises(UsageError, match=r"was counted with another .* than .*: cannot merge") as caught:
            load_and_merge(paths)
        assert setting in str(caught.value), str(caught.value)
    again = tmp_path / "again.ngtypes.npz"
    measure_collisions(text, NgramHashMapping.build("bytes"), save_types=again)
    assert load_and_merge([base, again])[1]["tokens"] == 2 * 480  # counted alike: merged
    assert load_types(base)[1]["tokenization"]["input"] == "text"


def _part(path, ids, spec_record=None):
    """Save the counts of ``ids`` as a part, recording ``spec_record`` as its analysed spec."""
    meta = {"max_ngram": 3, "vocab_size": 50, "pad_id": 0, "boundary": "none", "vocab_fingerprint": "v",
            "tokens": len(ids), "documents": 1}  # fmt: skip
    if spec_record is not None:
        meta["spec"] = spec_record
    save_types(path, count_ngram_types(np.asarray(ids, dtype=np.int64), SPEC), meta)
    return path


def test_parts_that_recorded_other_specs_are_refused_in_either_order(tmp_path):
    sweep = [replace(SPEC, table_sizes=(t, t)) for t in (101, 211)]
    one = _part(tmp_path / "one.ngtypes.npz", [1, 2, 3], analysed_specs_record([SPEC]))
    two = _part(tmp_path / "two.ngtypes.npz", [4, 5, 6], analysed_specs_record(sweep))
    same = _part(tmp_path / "same.ngtypes.npz", [7, 8], analysed_specs_record(sweep))
    for paths in ([one, two], [two, one]):
        with pytest.raises(UsageError, match=r"another spec .* cannot merge"):
            load_and_merge(paths)
    meta = load_and_merge([two, same])[1]
    assert recorded_specs(meta) == sweep and meta["tokens"] == 5
    assert recorded_specs(load_and_merge([one])[1]) == [SPEC]


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_a_damaged_part_is_a_one_line_error(tmp_path, damage):
    path = _part(tmp_path / "p.ngtypes.npz", list(range(40)), analysed_specs_record([SPEC]))
    data = bytearray(path.read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    else:  # a byte inside the first array's data: the zip's CRC-32 check fails on reading it
        data[data.index(b"\x93NUMPY") + 200] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(NgramToolError, match="not a readable partial count file"):
        load_types(path)
