"""The token map sized to the model, not the tokenizer: a spec from a config records the model's
``vocab_size``, ``spec export`` pads the map to it with the compressed pad (and says so), and
``spec check`` of a GGUF whose token list is longer than the tokenizer (written here with ``gguf``)
requires one map entry per GGUF token and the compressed pad past the tokenizer's ids, naming the
first raw id that is not."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import run

from ngramtool import NgramHashMapping
from ngramtool.tools.engine_check import check_deployment
from ngramtool.tools.engine_constants import EngineConstants
from ngramtool.tools.engine_files import export_constants, read_deployed

gguf = pytest.importorskip("gguf")

TOKENIZER = str(Path(__file__).parent.parent / "data" / "tokenizers" / "qwen-style")  # 1,022 raw ids
MODEL_TOKENS = 1100


def model_gguf(path, tokens: int = MODEL_TOKENS) -> None:
    """A model GGUF whose vocabulary is padded past the tokenizer: ``tokens`` token strings."""
    writer = gguf.GGUFWriter(str(path), "deepseek41")
    writer.add_uint32("deepseek41.block_count", 1)
    writer.add_token_list([f"<tok{i}>" for i in range(tokens)])
    writer.add_tensor("blk.0.engram.weight", np.arange(16, dtype=np.float32).reshape(4, 4))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def rules(report) -> dict[str, object]:
    return {rule.rule.split(" (")[0].split(" past")[0]: rule for rule in report.rules}


@pytest.fixture(scope="module")
def mapping() -> NgramHashMapping:
    return NgramHashMapping.build(TOKENIZER, heads=2, table_sizes=1000, layer_ids=(1,), pad_id=1000)


def test_the_padded_map_passes_the_gguf_check(tmp_path, mapping):
    model_gguf(tmp_path / "model.gguf")
    constants = EngineConstants.from_mapping(mapping, model_vocab_size=MODEL_TOKENS)
    assert constants.token_map_padded_from == 1022 and len(constants.token_map) == MODEL_TOKENS
    assert (constants.token_map[1022:] == mapping.spec.pad_id).all()
    export_constants(constants, tmp_path / "out.gguf", into=tmp_path / "model.gguf")
    deployed = read_deployed(tmp_path / "out.gguf")
    assert deployed.token_count == MODEL_TOKENS
    report = check_deployment(deployed, EngineConstants.from_mapping(mapping))  # padded as the GGUF says
    assert report.ok, report.to_dict()
    found = rules(report)
    assert found["one token map entry per GGUF token"].status == "ok"
    assert found["token map entries"].status == "ok"


def test_an_unpadded_map_and_a_wrong_padded_entry_are_named(tmp_path, mapping):
    model_gguf(tmp_path / "model.gguf")
    unpadded = EngineConstants.from_mapping(mapping)
    export_constants(unpadded, tmp_path / "short.gguf", into=tmp_path / "model.gguf")
    report = check_deployment(read_deployed(tmp_path / "short.gguf"), unpadded)
    found = rules(report)
    assert not report.ok and found["one token map entry per GGUF token"].status == "failed"
    assert found["one token map entry per GGUF token"].value == 1022
    padded = EngineConstants.from_mapping(mapping, model_vocab_size=MODEL_TOKENS)
    wrong = padded.token_map.copy()
    wrong[1050] = 3
    broken = type(padded)(**{**padded.__dict__, "token_map": wrong})
    export_constants(broken, tmp_path / "wrong.gguf", into=tmp_path / "model.gguf")
    report = check_deployment(read_deployed(tmp_path / "wrong.gguf"), padded)
    found = rules(report)
    assert found["token map entries"].status == "failed" and found["token map entries"].index == 1050
    token_map = next(check for check in report.constants if check.name == "token_map")
    assert (token_map.status, token_map.index, token_map.where) == ("differs", 1050, "raw id 1050")


def test_export_pads_to_the_model_and_says_so(tmp_path):
    """--model-vocab (or the spec's model_vocab_size, or an --into model's token count)."""
    out = tmp_path / "c.json"
    base = ("spec", "export", "-t", TOKENIZER, "--heads", "2", "--table", "1000", "--layers", "1")
    result = run(*base, "--model-vocab", "1,100", "-o", out)
    assert result.returncode == 0 and "padded from 1,022 with the compressed pad" in result.stderr.decode()
    exported = json.loads(out.read_text())
    assert exported["token_map_padded_from"] == 1022 and exported["token_map_length"] == 1100
    model_gguf(tmp_path / "model.gguf")
    into = run(*base, "--into", tmp_path / "model.gguf", "-o", tmp_path / "m.gguf", "--json")
    assert json.loads(into.stdout)["token_map_length"] == MODEL_TOKENS
    checked = run(
        "spec",
        "check",
        "-t",
        TOKENIZER,
        "--heads",
        "2",
        "--table",
        "1000",
        "--layers",
        "1",
        tmp_path / "m.gguf",
    )
    assert checked.returncode == 0, checked.stdout.decode()


def test_a_spec_from_a_config_records_the_models_vocabulary(tmp_path):
    config = {
        "max_ngram_size": 3,
        "n_head_per_ngram": 2,
        "engram_vocab_size": 1000,
        "layer_ids": [1],
        "vocab_size": 1100,
    }
    (tmp_path / "config.json").write_text(json.dumps({"text_config": config}))
    result = run("spec", "from-config", tmp_path / "config.json", tmp_path / "s.json", "-t", TOKENIZER)
    assert result.returncode == 0, result.stderr.decode()
    assert "text_config.vocab_size = 1,100: the model's vocabulary" in result.stderr.decode()
    assert json.loads((tmp_path / "s.json").read_text())["model_vocab_size"] == 1100
    out = tmp_path / "c.json"
    assert run("spec", "export", "--spec", tmp_path / "s.json", "-t", TOKENIZER, "-o", out).returncode == 0
    assert json.loads(out.read_text())["token_map_length"] == 1100
    overridden = run(
        "spec",
        "from-config",
        tmp_path / "config.json",
        tmp_path / "t.json",
        "-t",
        TOKENIZER,
        "--model-vocab",
        "1024",
    )
    assert (
        overridden.returncode == 0
        and json.loads((tmp_path / "t.json").read_text())["model_vocab_size"] == 1024
    )
