"""Released models' configs read into specs: DeepSeek-V4.1's ``engram_*`` keys (nested or flat),
held to the rows and V' they declare; the Engram demo's and Qwen3.8's fields as before."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_one_line_error, load_json, run, run_json

from ngramtool import HashSpec, NgramHashMapping, hash_ngrams
from ngramtool.model.configs import check_declared, config_fields
from ngramtool.util.errors import NgramToolError, UsageError

V3_COMPRESSED = 98627  # DeepSeek-V3's tokenizer (tests/data/compress_deepseek_v3.json)
V41_ROWS = [384006168, 384016682]  # FAMILIES.md §1, families.json
V41_KEYS = {
    "engram_layer_ids": [1, 14],
    "engram_max_ngram_size": 4,
    "engram_n_heads": 8,
    "engram_head_dim": 256,
    "engram_vocab_size": 16000000,
    "engram_num_embeddings": V41_ROWS,
    "engram_compressed_vocab_size": V3_COMPRESSED,
    "engram_pad_token_id": 2,
}


def write_config(folder: Path, name: str, config: dict) -> Path:
    path = folder / name
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def nested(keys: dict, holder: str = "text_config") -> dict:
    """A released multimodal config: the engram keys under ``holder``."""
    return {"model_type": "deepseek_v41", holder: {"hidden_size": 5120, "vocab_size": 129280, **keys}}


def flat(keys: dict) -> dict:
    """``inference/config.json``: the keys at the top level, the pad spelled ``engram_pad_id``."""
    keys = dict(keys)
    keys["engram_pad_id"] = keys.pop("engram_pad_token_id")
    return {"dim": 5120, **keys}


def multipliers_by_formula(vocab_size: int, layer_ids: list[int], n: int) -> list[list[int]]:
    """FAMILIES.md §1: per layer, PCG64 seeded 10007 x layer, r < (INT64_MAX // V') // 2, 2r+1."""
    bound = ((2**63 - 1) // vocab_size) // 2
    rows = []
    for layer in layer_ids:
        r = np.random.default_rng(10007 * layer).integers(0, bound, size=n, dtype=np.int64)
        rows.append((r * 2 + 1).tolist())
    return rows


@pytest.mark.parametrize(
    "config",
    [nested(V41_KEYS), nested(V41_KEYS, "language_config"), flat(V41_KEYS)],
    ids=["text_config", "language_config", "flat"],
)
def test_a_v41_config_with_the_v3_tokenizer(tmp_path, deepseek_tokenizer_path, config):
    path = write_config(tmp_path, "config.json", config)
    mapping = NgramHashMapping.from_config(path, deepseek_tokenizer_path)
    spec = mapping.spec
    assert spec.rows_per_layer.tolist() == V41_ROWS
    assert (spec.max_ngram, spec.heads, spec.layer_ids, spec.table_sizes) == (4, 8, (1, 14), (16000000,) * 3)
    assert spec.vocab_size == V3_COMPRESSED and spec.pad_id == int(mapping.vocab.lut[2]) == 2
    assert spec.multipliers.tolist() == multipliers_by_formula(V3_COMPRESSED, [1, 14], 4)
    assert spec.multipliers.tolist() != multipliers_by_formula(129280, [1, 14], 4)  # the raw V: wrong
    found = config_fields(path)
    assert found.layout == "deepseek-v4.1" and found.declared["dim"] == 256
    assert found.read["pad_id"].endswith("engram_pad_id" if "dim" in config else "engram_pad_token_id")


def test_the_released_multipliers_come_from_the_declared_compressed_size(tmp_path):
    """With V'=99,092 (V4.1's own tokenizer), the multipliers are families.json's."""
    golden = json.loads((Path(__file__).parent / "data" / "families.json").read_text())
    config = nested({**V41_KEYS, "engram_compressed_vocab_size": 99092})
    mapping = NgramHashMapping.from_config(write_config(tmp_path, "c.json", config), None, vocab_size=99092)
    assert mapping.spec.multipliers.tolist() == golden["families"]["deepseek-v4.1"]["multipliers"]


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"engram_num_embeddings": [384006168, 384016681]}, "layer 14 derives 384,016,682 rows but"),
        ({"engram_vocab_size": 16000100}, "layer 1 derives"),
        ({"engram_num_embeddings": [384006168]}, "declares 1 layers' rows but the spec has 2 layers"),
        (
            {"engram_compressed_vocab_size": 99092},
            "V'=98,627 but text_config.engram_compressed_vocab_size declares 99,092",
        ),
    ],
)
def test_a_config_that_disagrees_with_itself_or_the_tokenizer_is_refused(tmp_path, change, fragment):
    path = write_config(tmp_path, "config.json", nested({**V41_KEYS, **change}))
    spec = HashSpec(
        max_ngram=4,
        layer_ids=(1, 14),
        table_sizes=(change.get("engram_vocab_size", 16000000),) * 3,
        vocab_size=V3_COMPRESSED,
    )
    with pytest.raises(NgramToolError, match=fragment.replace("'", ".")):
        check_declared(config_fields(path), spec, path)


@pytest.mark.parametrize(
    "missing",
    [
        "engram_max_ngram_size",
        "engram_n_heads",
        "engram_layer_ids",
        "engram_vocab_size",
        "engram_pad_token_id",
    ],
)
def test_a_v41_config_without_a_key_that_changes_rows_names_it(tmp_path, missing):
    keys = {name: value for name, value in V41_KEYS.items() if name != missing}
    path = write_config(tmp_path, "config.json", nested(keys))
    with pytest.raises(NgramToolError, match=f"without text_config.{missing}"):
        config_fields(path)


def test_the_demo_layout_keeps_its_reading(tmp_path):
    demo = {
        "engram_config": {
            "max_ngram_size": 3,
            "n_head_per_ngram": 8,
            "engram_vocab_size": [646400, 646400],
            "layer_ids": [1, 15],
            "pad_id": 2,
        }
    }
    found = config_fields(write_config(tmp_path, "demo.json", demo))
    assert found.layout == "engram" and found.declared == {}
    assert found.fields == {
        "max_ngram": 3,
        "heads": 8,
        "table_sizes": (646400, 646400),
        "layer_ids": (1, 15),
        "pad_id": 2,
    }


def test_the_configs_image_token_is_dead_and_hashed_as_a_barrier(tmp_path, deepseek_tokenizer_path):
    config = nested({**V41_KEYS, "image_token_id": 128000})
    path = write_config(tmp_path, "config.json", config)
    assert config_fields(path).mask_tokens == {"text_config.image_token_id": 128000}
    mapping = NgramHashMapping.from_config(path, deepseek_tokenizer_path)
    assert mapping.mask_tokens == (128000,) and mapping.negative_ids == "barrier"
    assert int(mapping.canonical([128000])[0]) < 0
    assert NgramHashMapping.from_config(path, None, vocab_size=V3_COMPRESSED).mask_tokens == ()


def test_an_image_token_the_tokenizer_lacks_is_named_by_its_key(tmp_path, deepseek_tokenizer_path):
    path = write_config(tmp_path, "config.json", nested({**V41_KEYS, "image_token_id": 200000}))
    with pytest.raises(NgramToolError, match=r"text_config\.image_token_id = 200000 is not a token id"):
        NgramHashMapping.from_config(path, deepseek_tokenizer_path)


def test_the_released_pad_of_the_v41_preset():
    # The V4.1 preset's pad is raw id 2 whatever the tokenizer calls its pad (cl100k_base: 100257).
    mapping = NgramHashMapping.build("cl100k_base", spec="deepseek-v4.1-flash", allow_vocab_mismatch=True)
    assert mapping.spec.pad_id == int(mapping.vocab.lut[2])


# ------------------------------------------------------------------------- LongCat, Qwen3.8
LONGCAT_KEYS = {
    "vocab_size": 1000,
    "emb_neighbor_num": 3,
    "emb_split_num": 2,
    "ngram_vocab_size_ratio": 5.003,
}


def test_a_longcat_config_gives_its_polynomial_spec(tmp_path):
    """FAMILIES.md §3 / families.json's first LongCat case: m = int(ratio x V), raw ids, pad 0."""
    golden = load_json("families.json")["families"]["longcat"]["cases"][0]
    path = write_config(tmp_path, "longcat.json", LONGCAT_KEYS)
    found = config_fields(path)
    assert found.layout == "longcat" and found.negative_ids == "barrier" and not found.compress
    assert found.fields["table_sizes"] == golden["m"] == 5003
    mapping = NgramHashMapping.from_config(path, None)
    assert mapping.spec.family == "longcat" and mapping.spec.vocab_size == 1000
    assert mapping.spec.primes.reshape(-1).tolist() == golden["mods"]
    rows = mapping.rows(np.asarray(golden["tokens"]))
    assert np.asarray(rows)[:, 0, :].tolist() == golden["ids"]
    aliases = {"vocab_size": 1000, "oe_neighbor_num": 3, "oe_split_num": 2, "ngram_vocab_size_ratio": 5.003}
    assert config_fields(write_config(tmp_path, "oe.json", aliases)).fields == found.fields


def test_a_longcat_config_holds_the_vocabulary_to_its_v(tmp_path):
    path = write_config(tmp_path, "longcat.json", {**LONGCAT_KEYS, "vocab_size": 50257})
    assert NgramHashMapping.from_config(path, "gpt2").spec.vocab_size == 50257
    with pytest.raises(NgramToolError, match="LongCat's weights are powers of V"):
        NgramHashMapping.from_config(path, "cl100k_base")
    without = write_config(
        tmp_path, "no_ratio.json", {"emb_neighbor_num": 3, "emb_split_num": 2, "vocab_size": 9}
    )
    with pytest.raises(NgramToolError, match="without ngram_vocab_size_ratio"):
        config_fields(without)


QWEN_KEYS = {
    "ngram_size": 3,
    "heads_per_ngram": 2,
    "ngram_vocab_size_base": 1000,
    "make_ngram_vocab_size_divisible_by": 128,
    "ple_layer_ids": [2],
    "eos_token_id": 50256,
}


def qwen_constants(tmp_path, sizes=(1009, 1013, 1019, 1021)):
    """A checkpoint shard holding Qwen3.8's three I64 tensors (here: Engram-like constants)."""
    from safetensors.numpy import save_file

    multipliers = np.array([[3, 1000003, 2000001]], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])[None].astype(np.int64)
    path = tmp_path / "model-00001.safetensors"
    save_file(
        {
            "ple_embedding.layer_multipliers": multipliers,
            "ple_embedding.ngram_heads_vocab_sizes": np.array([sizes], dtype=np.int64),
            "ple_embedding.ngram_heads_offsets": offsets,
        },
        str(path),
    )
    return path


def test_a_qwen_config_reads_its_stored_constants_and_fills_with_eos(tmp_path):
    path = write_config(tmp_path, "qwen.json", QWEN_KEYS)
    assert config_fields(path).layout == "qwen3.8"
    with pytest.raises(UsageError, match=r"give the \.safetensors file with ple_embedding"):
        NgramHashMapping.from_config(path, "gpt2")
    mapping = NgramHashMapping.from_config(path, "gpt2", constants=qwen_constants(tmp_path))
    spec = mapping.spec
    assert (spec.family, spec.eos_fill, spec.pad_id, spec.layer_ids) == ("stored", True, 50256, (2,))
    assert spec.rows_per_layer.tolist() == [4096]  # 4,062 rows padded to a multiple of 128
    assert spec.multipliers.tolist() == [[3, 1000003, 2000001]]
    ids = np.array([5, 6, 7, 50256, 8, 9, 10])
    rows = mapping.rows(ids)
    # After the EOS a segment starts: its lookbacks hold the EOS id, as at the sequence start.
    fresh = mapping.rows(np.array([50256, 50256, 8, 9, 10]))[2:]
    assert np.array_equal(rows[4:], fresh)
    assert not np.array_equal(rows[4], hash_ngrams(ids, replace(spec, eos_fill=False))[4])
    small = write_config(tmp_path, "big_base.json", {**QWEN_KEYS, "ngram_vocab_size_base": 2000})
    with pytest.raises(NgramToolError, match="the constants are another model's"):
        NgramHashMapping.from_config(small, "gpt2", constants=qwen_constants(tmp_path))


# ---------------------------------------------------------------------------- the command
def test_from_config_writes_the_checked_spec(tmp_path, deepseek_tokenizer_path):
    config = write_config(tmp_path, "config.json", nested(V41_KEYS))
    out = tmp_path / "v41.json"
    report = run_json("spec", "from-config", config, out, "-t", deepseek_tokenizer_path)
    assert report["layout"] == "deepseek-v4.1" and report["rows_per_layer"] == V41_ROWS
    assert report["declared"]["rows"] == V41_ROWS and report["defaulted"] == []
    assert report["masked"] == "barrier" and report["mask_tokens"] == {}
    spec = HashSpec.from_json(out.read_text())
    assert spec.rows_per_layer.tolist() == V41_ROWS and spec.vocab_size == V3_COMPRESSED
    shown = run("spec", "from-config", config, tmp_path / "again.json", "-t", deepseek_tokenizer_path)
    err = shown.stderr.decode()
    assert shown.returncode == 0 and "text_config.engram_max_ngram_size -> --max-ngram 4" in err
    assert "engram_num_embeddings = 384,006,168 384,016,682: the derived rows per layer match" in err


def test_from_config_refuses_mismatches_and_writes_nothing(tmp_path, deepseek_tokenizer_path):
    out = tmp_path / "v41.json"
    wrong_size = write_config(tmp_path, "a.json", nested({**V41_KEYS, "engram_compressed_vocab_size": 99092}))
    result = run("spec", "from-config", wrong_size, out, "-t", deepseek_tokenizer_path)
    assert_one_line_error(result, 1, "engram_compressed_vocab_size declares 99,092")
    wrong_rows = write_config(tmp_path, "b.json", nested({**V41_KEYS, "engram_num_embeddings": [1, 2]}))
    result = run("spec", "from-config", wrong_rows, out, "--vocab-size", str(V3_COMPRESSED))
    assert_one_line_error(
        result, 1, "layer 1 derives 384,006,168 rows but text_config.engram_num_embeddings declares 1"
    )
    default_tokenizer = run("spec", "from-config", write_config(tmp_path, "c.json", nested(V41_KEYS)), out)
    assert_one_line_error(default_tokenizer, 1, "use the model's own tokenizer")
    (tmp_path / "bad.json").write_text("{not json")
    assert_one_line_error(run("spec", "from-config", tmp_path / "bad.json", out), 1, "not a JSON config")
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == [
        "a.json",
        "b.json",
        "bad.json",
        "c.json",
    ]
