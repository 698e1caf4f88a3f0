"""Megatron-LM's Engram token map (``megatron-engram-token-map`` version 1): ``spec export --format
megatron-token-map`` writes, byte for byte, what Megatron's ``tools/engram/generate_tokenizer_map.py``
writes for the test tokenizers, here by an independent rendition of its rules (transformers'
AutoTokenizer, the Engram normalizer chain, PCG64 multipliers, ``json.dump`` sorted and compact);
``spec check`` compares one field by field and applies the checks its ``EngramConfig`` makes."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_one_line_error, run

pytest.importorskip("transformers")

DATA = Path(__file__).parent.parent / "data" / "tokenizers"


def generator_rendition(
    tokenizer: str, *, pad: int, layer_ids: list[int], order: int, seed: int, padded: int | None
) -> str:
    """What Megatron's generator writes: every id below len(tokenizer) decoded, its key the
    normalized text (the raw token where the text holds U+FFFD, the text where normalizing empties
    it), first occurrence numbered; the map extended with remap[pad]; odd PCG64 multipliers."""
    from tokenizers import Regex, normalizers
    from transformers import AutoTokenizer

    loaded = AutoTokenizer.from_pretrained(tokenizer)
    sentinel = "\ue000"
    chain = normalizers.Sequence(
        [
            normalizers.NFKC(),
            normalizers.NFD(),
            normalizers.StripAccents(),
            normalizers.Lowercase(),
            normalizers.Replace(Regex(r"[ \t\r\n]+"), " "),
            normalizers.Replace(Regex(r"^ $"), sentinel),
            normalizers.Strip(),
            normalizers.Replace(sentinel, " "),
        ]
    )
    keys: dict[str, int] = {}
    remap = []
    for token_id in range(len(loaded)):
        text = loaded.decode([token_id], skip_special_tokens=False)
        key = (
            loaded.convert_ids_to_tokens(token_id) if "\ufffd" in text else chain.normalize_str(text) or text
        )
        remap.append(keys.setdefault(key, len(keys)))
    size, compressed = len(remap), len(keys)
    remap += [remap[pad]] * ((padded or size) - size)
    half = max(1, int(np.iinfo(np.int64).max // compressed) // 2)
    multipliers = {
        str(layer): [
            int(v) for v in np.random.default_rng(seed + 10007 * layer).integers(0, half, order) * 2 + 1
        ]
        for layer in layer_ids
    }
    artifact = {
        "format": "megatron-engram-token-map",
        "version": 1,
        "tokenizer_name_or_path": tokenizer,
        "source_vocab_size": len(remap),
        "tokenizer_vocab_size": size,
        "compressed_vocab_size": compressed,
        "normalization": "NFKC+NFD+StripAccents+Lowercase+WhitespaceCollapse",
        "pad_token_id": pad,
        "compressed_pad_token_id": remap[pad],
        "max_ngram_order": order,
        "hash_seed": seed,
        "layer_ids": layer_ids,
        "layer_multipliers": multipliers,
        "remap": remap,
    }
    return json.dumps(artifact, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"


@pytest.fixture(scope="module")
def tokenizer_dirs(tmp_path_factory) -> dict[str, str]:
    """The test tokenizers as directories a Hugging Face loader reads."""
    deepseek = tmp_path_factory.mktemp("deepseek-v3")
    with gzip.open(DATA / "deepseek-v3.tokenizer.json.gz", "rb") as packed:
        (deepseek / "tokenizer.json").write_bytes(packed.read())
    shutil.copy(DATA / "deepseek-v3.tokenizer_config.json", deepseek / "tokenizer_config.json")
    return {
        "deepseek-v3": str(deepseek),
        "qwen-style": str(DATA / "qwen-style"),
        "glm-style": str(DATA / "glm-style"),
    }


CASES = [
    # (tokenizer, raw pad, model vocabulary, layers, N, seed)
    ("deepseek-v3", 1, 129280, [1, 15], 3, 0),
    ("qwen-style", 1011, None, [1, 15], 3, 0),
    ("qwen-style", 1000, 1024, [2, 5], 4, 7),
    ("glm-style", 1000, 1152, [3], 2, 0),
]


@pytest.mark.parametrize(("name", "pad", "padded", "layers", "order", "seed"), CASES)
def test_the_export_is_what_megatrons_generator_writes(
    tmp_path, tokenizer_dirs, name, pad, padded, layers, order, seed
):
    tokenizer = tokenizer_dirs[name]
    out = tmp_path / "map.json"
    layout = ["--layers", ",".join(map(str, layers)), "--max-ngram", str(order), "--seed", str(seed)]
    model = ["--model-vocab", str(padded)] if padded else []
    result = run(
        "spec",
        "export",
        "-t",
        tokenizer,
        "--pad-id",
        pad,
        *layout,
        *model,
        "--format",
        "megatron-token-map",
        "-o",
        out,
    )
    assert result.returncode == 0, result.stderr.decode()
    expected = generator_rendition(
        tokenizer, pad=pad, layer_ids=layers, order=order, seed=seed, padded=padded
    )
    assert out.read_text(encoding="utf-8") == expected
    checked = run("spec", "check", "-t", tokenizer, "--pad-id", pad, *layout, out)
    assert checked.returncode == 0, checked.stdout.decode()


def test_check_names_the_first_differing_remap_entry_and_each_field(tmp_path, tokenizer_dirs):
    tokenizer = tokenizer_dirs["qwen-style"]
    out = tmp_path / "map.json"
    run(
        "spec",
        "export",
        "-t",
        tokenizer,
        "--pad-id",
        "1000",
        "--model-vocab",
        "1100",
        "--format",
        "megatron-token-map",
        "-o",
        out,
    )
    artifact = json.loads(out.read_text())
    wrong = dict(
        artifact, remap=[*artifact["remap"][:500], artifact["remap"][500] + 1, *artifact["remap"][501:]]
    )
    (tmp_path / "remap.json").write_text(json.dumps(wrong))
    result = run("spec", "check", "-t", tokenizer, "--pad-id", "1000", tmp_path / "remap.json")
    assert result.returncode == 1
    assert "remap                    DIFFERS at index 500 (raw id 500)" in result.stdout.decode()
    padded = dict(artifact, remap=[*artifact["remap"][:-1], 3])  # the last padded id: not the pad
    (tmp_path / "padded.json").write_text(json.dumps(padded))
    report = json.loads(
        run("spec", "check", "-t", tokenizer, "--pad-id", "1000", tmp_path / "padded.json", "--json").stdout
    )
    failed = {rule["rule"]: rule for rule in report["rules"] if rule["status"] == "failed"}
    assert failed["entries past tokenizer_vocab_size are the compressed pad"]["index"] == 1099
    seeded = dict(
        artifact, hash_seed=1, layer_multipliers={"1": artifact["layer_multipliers"]["1"], "15": [3, 5, 7]}
    )
    (tmp_path / "seeded.json").write_text(json.dumps(seeded))
    report = json.loads(
        run("spec", "check", "-t", tokenizer, "--pad-id", "1000", tmp_path / "seeded.json", "--json").stdout
    )
    by_name = {check["name"]: check for check in report["constants"]}
    assert (
        by_name["hash_seed"]["status"] == "differs"
        and by_name["layer_multipliers"]["where"] == "layer 15, lag 0"
    )
    renamed = dict(artifact, tokenizer_name_or_path="Qwen/Qwen-style")
    (tmp_path / "renamed.json").write_text(json.dumps(renamed))
    assert (
        run("spec", "check", "-t", tokenizer, "--pad-id", "1000", tmp_path / "renamed.json").returncode == 0
    )


def test_what_the_artifact_cannot_carry_is_refused(tmp_path, tokenizer_dirs):
    tokenizer = tokenizer_dirs["qwen-style"]
    out = tmp_path / "map.json"
    fields = ("--format", "megatron-token-map", "-o", out)
    assert_one_line_error(
        run("spec", "export", "-t", tokenizer, "--model-vocab", "900", "--pad-id", "1000", *fields),
        2,
        "smaller than the tokenizer",
    )
    assert_one_line_error(
        run("spec", "export", "-t", tokenizer, "--family", "tutorial", "--pad-id", "1000", *fields),
        2,
        "spec save",
    )
    assert_one_line_error(run("spec", "export", "-t", "cl100k_base", *fields), 2, "has no token")
    assert not out.exists()
