"""Qwen3.8's two layer numbers: ``ple_layer_ids: [2]`` places the module at ``layers.1.ple`` (the ids
are 1-based) while the multipliers are seeded by the id's position in the list. ``spec from-config``
records both, ``spec show`` prints them, and constants whose multipliers were seeded by another
reading (the module index, or the config's own number) are refused naming the mix-up. The
generator is read here independently (splitmix64 as published, the transformers module's rule)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import assert_one_line_error, run, run_json

from ngramtool import NgramHashMapping
from ngramtool.spec.families.stored import qwen_multipliers
from ngramtool.util.errors import NgramToolError

pytest.importorskip("safetensors")

MASK = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15
VOCAB = 50257


def splitmix(state: int) -> int:
    """splitmix64's next output from ``state`` (Steele, Lea and Flood): state + gamma, then mixed."""
    z = (state + GAMMA) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def generated(index: int, seed: int, n: int = 3) -> list[int]:
    """The ``ple`` module's multipliers for ple_layer_index ``index``: odd, below (2^63-1)/V."""
    half = max(1, ((1 << 63) - 1) // VOCAB // 2)
    return [2 * (splitmix((seed + 10007 * index + GAMMA * (k + 1)) & MASK) % half) + 1 for k in range(n)]


def config(tmp_path, ids=(2,), seed=None):
    keys = {
        "ngram_size": 3, "heads_per_ngram": 2, "ngram_vocab_size_base": 1000,
        "make_ngram_vocab_size_divisible_by": 128, "ple_layer_ids": list(ids), "eos_token_id": 50256,
        "vocab_size": VOCAB, **({} if seed is None else {"seed": seed}),
    }  # fmt: skip
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"text_config": keys}))
    return path


def constants(tmp_path, indices, seed, name="model.safetensors"):
    """A shard holding the ple_embedding tensors, the multipliers generated with ``indices``."""
    from safetensors.numpy import save_file

    sizes = np.array([[1009, 1013, 1019, 1021]] * len(indices), dtype=np.int64)
    offsets = np.concatenate(
        [np.zeros((len(indices), 1), np.int64), np.cumsum(sizes, axis=1)[:, :-1]], axis=1
    )
    multipliers = np.array([generated(i, seed) for i in indices], dtype=np.int64)
    path = tmp_path / name
    save_file(
        {
            "ple_embedding.layer_multipliers": multipliers,
            "ple_embedding.ngram_heads_vocab_sizes": sizes,
            "ple_embedding.ngram_heads_offsets": offsets,
        },
        str(path),
    )
    return path


def test_the_generator_is_the_published_splitmix64():
    assert splitmix(0) == 0xE220A8397B1DCDAF  # splitmix64's first output seeded with 0
    for index in (0, 1, 5):
        assert list(qwen_multipliers(VOCAB, 3, index, 1234)) == generated(index, 1234)


@pytest.mark.parametrize("seed", [None, 0])
def test_both_numbers_are_recorded_and_shown(tmp_path, seed):
    path = config(tmp_path, seed=seed)
    shard = constants(tmp_path, [0], 1234 if seed is None else seed)
    written = run_json("spec", "from-config", path, tmp_path / "q.json", "-t", "gpt2", "--constants", shard)
    stored = written["spec"]["stored"]
    assert (stored["module_indices"], stored["seed_indices"]) == ([1], [0])
    shown = run("spec", "show", "--spec", tmp_path / "q.json", "-t", "gpt2", "--no-compress").stdout.decode()
    assert (
        "layer ids [2] (1-based): modules layers.1.ple; multipliers and tables seeded with index [0]" in shown
    )
    numbered = NgramHashMapping.build("gpt2", spec_file=tmp_path / "q.json", compress=False).spec
    plain = NgramHashMapping.from_config(path, "gpt2", constants=shard).spec
    assert numbered.fingerprint == plain.fingerprint  # the numbers describe, they hash nothing


@pytest.mark.parametrize(("reading", "indices"), [("module index", [1]), ("config's own layer number", [2])])
def test_multipliers_seeded_by_another_reading_are_refused(tmp_path, reading, indices):
    path = config(tmp_path)
    swapped = constants(tmp_path, indices, 1234)
    result = run("spec", "from-config", path, tmp_path / "q.json", "-t", "gpt2", "--constants", swapped)
    assert_one_line_error(result, 1, f"seeded by the {reading}")
    assert not (tmp_path / "q.json").exists()
    with pytest.raises(NgramToolError, match="layer numbers mixed up"):
        NgramHashMapping.from_config(path, "gpt2", constants=swapped)


def test_several_layers_and_constants_of_no_generator(tmp_path):
    """Two ple layers [2, 4]: positions 0, 1 accepted, module indices 1, 3 refused; constants no
    reading generates (another model's) are read as stored."""
    path = config(tmp_path, ids=(2, 4), seed=9)
    assert NgramHashMapping.from_config(path, "gpt2", constants=constants(tmp_path, [0, 1], 9)).spec.stored
    with pytest.raises(NgramToolError, match="module index"):
        NgramHashMapping.from_config(path, "gpt2", constants=constants(tmp_path, [1, 3], 9, "b.safetensors"))
    other = NgramHashMapping.from_config(
        path, "gpt2", constants=constants(tmp_path, [7, 8], 9, "c.safetensors")
    )
    assert other.spec.stored.seed_indices == (0, 1)
