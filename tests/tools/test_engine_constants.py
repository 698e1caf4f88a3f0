"""The engine constants (ngramtool.tools.engine_constants), their files (engine_files, engine_gguf)
and the deployment check (engine_check): values, layouts, dtypes, GGUF types, the --into copy and
what bad input does."""

from __future__ import annotations

import hashlib
import json

import gguf
import numpy as np
import pytest
from conftest import load_json
from safetensors import safe_open

from ngramtool import NgramHashMapping
from ngramtool.tools import engine_gguf
from ngramtool.tools.engine_check import check_deployment
from ngramtool.tools.engine_constants import EngineConstants
from ngramtool.tools.engine_files import export_constants, read_deployed
from ngramtool.util.errors import NgramToolError, UsageError

SMALL = {"heads": 2, "table_sizes": 1000, "layer_ids": (1, 2)}
PRIMES_KEY = "deepseek41.engram.primes"


@pytest.fixture(scope="module")
def small() -> EngineConstants:
    """A small spec over cl100k_base (16 raw ids without a token)."""
    return EngineConstants.from_mapping(NgramHashMapping.build("cl100k_base", **SMALL), key_length=16)


@pytest.fixture(scope="module")
def flash() -> EngineConstants:
    """The DeepSeek-V4.1-Flash preset's constants, V' given (no tokenizer: no token map)."""
    mapping = NgramHashMapping.build(None, spec="deepseek-v4.1-flash", vocab_size=99092)
    return EngineConstants.from_mapping(mapping, key_length=256)


def tiny_model(path, **keys: int) -> dict[str, np.ndarray]:
    """A small GGUF model with a few tensors (and UINT32 ``keys``); returns the tensors."""
    tensors = {
        "token_embd.weight": np.arange(24, dtype=np.float32).reshape(4, 6),
        "blk.0.ffn.weight": np.linspace(-1, 1, 40).astype(np.float16).reshape(5, 8),
        "blk.0.ids": np.arange(7, dtype=np.int32),
    }
    writer = gguf.GGUFWriter(str(path), "deepseek41")
    writer.add_uint32("deepseek41.block_count", 1)
    writer.add_string("general.name", "tiny")
    for key, value in keys.items():
        writer.add_uint32(key, value)
    for name, tensor in tensors.items():
        writer.add_tensor(name, tensor)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return tensors


def leftovers(folder) -> list[str]:
    """Temporary outputs and locks left in ``folder``."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


# ---------------------------------------------------------------------------------- derived
def test_the_flash_preset_gives_the_published_constants(flash):
    golden = load_json("families.json")["families"]["deepseek-v4.1"]
    assert flash.multipliers.tolist() == golden["multipliers"]
    assert flash.rows.tolist() == golden["rows_per_layer"] == [384006168, 384016682]
    assert flash.primes.shape == (2, 24) and flash.primes.min() == 16000057 and flash.primes.max() == 16000889
    assert flash.primes.reshape(-1).tolist() == np.asarray(golden["primes"]).reshape(-1).tolist()
    assert flash.offsets.reshape(-1).tolist() == np.asarray(golden["offsets"]).reshape(-1).tolist()
    assert flash.token_map is None and flash.token_map_sha256 is None and flash.raw_pad_id is None


def test_the_token_map_is_the_vocabulary_as_int32_with_its_digest(small):
    mapping = NgramHashMapping.build("cl100k_base", **SMALL)
    assert small.token_map.dtype == np.int32 and small.token_map.tolist() == mapping.vocab.lut.tolist()
    assert small.unassigned == 16 and int(small.token_map.min()) == -1  # cl100k's holes stay -1
    expected = hashlib.sha256(mapping.vocab.lut.astype("<i4").tobytes()).hexdigest()
    assert small.token_map_sha256 == expected
    assert (small.pad_id, small.raw_pad_id) == (mapping.spec.pad_id, 100257)  # <|endoftext|>


def test_a_raw_pad_must_map_to_the_spec_pad():
    mapping = NgramHashMapping.build("cl100k_base", **SMALL)
    with pytest.raises(UsageError, match="does not map"):
        EngineConstants.from_mapping(mapping, raw_pad_id=5)


# ------------------------------------------------------------------------------------ files
def test_gguf_keys_have_explicit_types_and_64_bit_multipliers(flash, tmp_path):
    path = tmp_path / "flash.gguf"
    export_constants(flash, path)
    reader = gguf.GGUFReader(path)
    multipliers = reader.fields["deepseek41.engram.multipliers"]
    assert multipliers.types == [gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.UINT64]
    assert multipliers.contents() == flash.multipliers.reshape(-1).tolist()
    assert max(multipliers.contents()) > 2**32  # 47-bit values survive
    primes = reader.fields[PRIMES_KEY]
    assert (
        primes.types[-1] == gguf.GGUFValueType.UINT32
        and primes.contents() == flash.primes.reshape(-1).tolist()
    )
    assert reader.fields["deepseek41.engram.rows"].contents() == [384006168, 384016682]
    for key, value in [("pad_id", flash.pad_id), ("compressed_vocab_size", 99092), ("head_count", 8),
                       ("key_length", 256), ("max_ngram_size", 4)]:  # fmt: skip
        field = reader.fields[f"deepseek41.engram.{key}"]
        assert field.types == [gguf.GGUFValueType.UINT32] and field.contents() == value, key
    assert reader.fields["general.architecture"].contents() == "deepseek41"
    assert "deepseek41.engram.token_map" not in reader.fields  # no tokenizer, no map
    assert check_deployment(read_deployed(path), flash).ok


def test_the_token_map_goes_to_gguf_as_int32_and_reads_back(small, tmp_path):
    path = tmp_path / "small.gguf"
    export_constants(small, path, gguf_prefix="other.engram")
    field = gguf.GGUFReader(path).fields["other.engram.token_map"]
    assert field.types == [gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.INT32]
    assert field.contents() == small.token_map.tolist()
    report = check_deployment(read_deployed(path), small)  # the one prefix is found
    assert report.ok and {c.name: c.status for c in report.constants}["token_map"] == "ok"


def test_safetensors_holds_the_tensors_with_their_dtypes_and_shapes(small, tmp_path):
    path = tmp_path / "small.safetensors"
    summary = export_constants(small, path)
    assert summary["tensors"]["engram.multipliers"] == ["int64", [2, 3]]
    with safe_open(str(path), framework="numpy") as handle:
        tensors = {name: handle.get_tensor(name) for name in handle.keys()}  # noqa: SIM118
        metadata = handle.metadata()
    assert {name: (t.dtype.str, t.shape) for name, t in tensors.items()} == {
        "engram.token_map": ("<i4", (100277,)),
        "engram.multipliers": ("<i8", (2, 3)),
        "engram.primes": ("<i8", (2, 4)),
        "engram.offsets": ("<i8", (2, 4)),
    }
    assert tensors["engram.primes"].tolist() == small.primes.tolist()
    assert metadata["token_map_sha256"] == small.token_map_sha256
    assert json.loads(metadata["layer_ids"]) == [1, 2] and json.loads(metadata["pad_id"]) == small.pad_id
    assert check_deployment(read_deployed(path), small).ok


@pytest.mark.parametrize("suffix", ["json", "npz"])
def test_json_and_npz_read_back_whole(small, tmp_path, suffix):
    path = tmp_path / f"small.{suffix}"
    export_constants(small, path)
    report = check_deployment(read_deployed(path), small)
    statuses = {c.name: c.status for c in report.constants}
    assert report.ok and set(statuses.values()) == {"ok"}, statuses
    assert all(rule.status == "ok" for rule in report.rules), report.rules
    if suffix == "json":
        record = json.loads(path.read_text())
        assert record["primes"] == small.primes.tolist() and record["token_map_length"] == 100277


def test_an_existing_output_is_kept_without_force(small, tmp_path):
    path = tmp_path / "small.json"
    path.write_text("mine")
    with pytest.raises(UsageError, match="already exists"):
        export_constants(small, path)
    assert path.read_text() == "mine"
    export_constants(small, path, force=True)
    assert json.loads(path.read_text())["format"] == "ngramtool.engram-constants"
    assert leftovers(tmp_path) == []


# ------------------------------------------------------------------------------------- into
def test_into_adds_the_keys_and_keeps_every_tensor_byte_for_byte(small, tmp_path):
    model = tmp_path / "model.gguf"
    tensors = tiny_model(model, **{"deepseek41.engram.pad_id": 999999})  # an old pad, replaced
    out = tmp_path / "model.engram.gguf"
    summary = export_constants(small, out, into=model)
    assert summary["keys"]["deepseek41.engram.multipliers"] == "UINT64 array"
    source, copy = gguf.GGUFReader(model), gguf.GGUFReader(out)
    for ours, theirs in zip(source.tensors, copy.tensors, strict=True):
        assert (ours.name, ours.tensor_type, ours.shape.tolist()) == (
            theirs.name,
            theirs.tensor_type,
            theirs.shape.tolist(),
        )
        assert (
            np.asarray(theirs.data).tobytes()
            == np.asarray(ours.data).tobytes()
            == tensors[ours.name].tobytes()
        )
    assert copy.fields["general.name"].contents() == "tiny"
    assert copy.fields["deepseek41.block_count"].contents() == 1
    assert copy.fields["deepseek41.engram.pad_id"].contents() == small.pad_id
    assert leftovers(tmp_path) == []
    assert check_deployment(read_deployed(out), small).ok


def test_a_copy_that_does_not_verify_is_never_published(small, tmp_path, monkeypatch):
    model = tmp_path / "model.gguf"
    tiny_model(model)
    copy_data = engine_gguf._copy_tensor_data

    def corrupting(reader, source, path):
        digests = copy_data(reader, source, path)
        with path.open("r+b") as handle:  # one flipped byte in the last tensor's data
            handle.seek(-32, 2)  # the last tensor: 7 int32 values, padded to 32 bytes
            byte = handle.read(1)
            handle.seek(-1, 1)
            handle.write(bytes([byte[0] ^ 0xFF]))
        return digests

    monkeypatch.setattr(engine_gguf, "_copy_tensor_data", corrupting)
    out = tmp_path / "out.gguf"
    with pytest.raises(NgramToolError, match=r"tensor blk\.0\.ids differs"):
        export_constants(small, out, into=model)
    assert not out.exists() and leftovers(tmp_path) == []


def test_into_leaves_out_stale_keys_of_the_prefix_and_refuses_constant_tensors(small, tmp_path):
    model = tmp_path / "model.gguf"
    stale = {"deepseek41.engram.pad_token_id": 7, "deepseek41.engram.offsets": 3}  # another dialect's
    tiny_model(model, **stale)
    out = tmp_path / "model.engram.gguf"
    export_constants(small, out, into=model)
    copy = gguf.GGUFReader(out)
    assert not set(stale) & set(copy.fields) and copy.fields["deepseek41.block_count"].contents() == 1
    assert check_deployment(read_deployed(out), small).ok
    with_tensors = tmp_path / "tensors.gguf"
    writer = gguf.GGUFWriter(str(with_tensors), "deepseek41")
    writer.add_tensor("engram.primes", np.arange(8, dtype=np.int64))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(NgramToolError, match=r"holds the engram constants as tensors \(engram\.primes\)"):
        export_constants(small, tmp_path / "x.gguf", into=with_tensors)
    with pytest.raises(UsageError, match=r"name the output \*\.gguf"):
        export_constants(small, tmp_path / "x.npz", into=model)
    assert not (tmp_path / "x.gguf").exists() and not (tmp_path / "x.npz").exists()


def test_a_u32_token_map_reads_its_holes_as_minus_one(small, tmp_path):
    """FAMILIES.md allows a u32 token map: cl100k_base's 16 holes are then 0xFFFFFFFF."""
    path = tmp_path / "u32.gguf"
    writer = gguf.GGUFWriter(str(path), "deepseek41")
    for key, (value, kind, item) in engine_gguf.gguf_entries(small).items():
        if key.endswith("token_map"):
            value = np.asarray(value, dtype=np.int32).view(np.uint32).tolist()
            item = gguf.GGUFValueType.UINT32
        writer.add_key_value(key, value, kind, sub_type=item)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    report = check_deployment(read_deployed(path), small)
    token_map = next(c for c in report.constants if c.name == "token_map")
    assert token_map.status == "ok" and report.ok, report.to_dict()


# ------------------------------------------------------------------------------------ check
def test_one_changed_prime_is_found_at_its_index_with_both_values(small, tmp_path):
    path = tmp_path / "small.gguf"
    export_constants(small, path)
    reader = gguf.GGUFReader(path, "r+")
    field = reader.fields[PRIMES_KEY]
    field.parts[field.data[5]][0] = 1051  # layer 2, order 2, head 1 (derived: 1033)
    reader.data.flush()
    del reader
    report = check_deployment(read_deployed(path), small)
    assert not report.ok
    (differs,) = [c for c in report.constants if c.status == "differs"]
    assert (differs.name, differs.index, differs.expected, differs.found) == ("primes", 5, 1033, 1051)
    assert differs.where == "layer 2, order 2, head 1" and PRIMES_KEY in differs.source
    failed = {r.rule: r for r in report.rules if r.status == "failed"}
    assert list(failed) == ["each layer's primes sum to its rows"] and failed[next(iter(failed))].index == 1


def test_the_rules_judge_the_files_own_constants(flash, tmp_path):
    bad = flash.to_json_dict()
    bad["multipliers"][1][2] += 1  # even
    bad["primes"][0][3], bad["primes"][0][4] = bad["primes"][0][4], bad["primes"][0][3]  # out of order
    bad["pad_id"] = 99092  # not below V'
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    report = check_deployment(read_deployed(path), flash)
    failed = {
        r.rule.split(" ")[0] + " " + r.rule.split(" ")[1]: (r.index, r.value)
        for r in report.rules
        if r.status == "failed"
    }
    assert failed == {
        "multipliers are": (6, flash.multipliers[1, 2] + 1),
        "primes ascend": (4, int(flash.primes[0, 3])),
        "offsets are": (4, int(flash.offsets[0, 4])),  # the stored offsets no longer fit the primes
        "the pad": (0, 99092),
    }
    differing = {c.name: c.index for c in report.constants if c.status == "differs"}
    assert differing == {"multipliers": 6, "primes": 3, "pad_id": 0}


def test_a_token_map_of_another_length_is_one_error(small, tmp_path):
    record = small.to_json_dict()
    record["token_map"] = record["token_map"][:1000]
    path = tmp_path / "short.json"
    path.write_text(json.dumps(record))
    with pytest.raises(NgramToolError, match="has 1,000 entries but the tokenizer has 100,277 raw ids"):
        check_deployment(read_deployed(path), small)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("notes.gguf", b"plain text, not a model", "is not a GGUF file"),
        ("empty.safetensors", b"\x02\x00\x00\x00\x00\x00\x00\x00{}", "holds none of the tensors"),
        ("random.bin", b"\x00" * 32, "is neither a GGUF"),
        ("other.json", b'{"hello": 1}', "is not an engine constants file"),
    ],
)
def test_bad_targets_are_one_clear_error(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(NgramToolError, match=message):
        read_deployed(path)


def test_a_gguf_without_the_keys_is_one_clear_error(tmp_path):
    model = tmp_path / "model.gguf"
    tiny_model(model)
    with pytest.raises(NgramToolError, match="holds no engram constants"):
        read_deployed(model)
