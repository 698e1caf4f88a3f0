"""ngramtool.torch.engram against the golden gate/ShortConv values, and the causality of the tiny model."""

from __future__ import annotations

import importlib.util
from types import ModuleType

import numpy as np
import pytest
from conftest import REPO, load_json

torch = pytest.importorskip("torch")

from ngramtool import HashSpec, hash_ngrams  # noqa: E402
from ngramtool.tokenizers.vocab import identity_vocab  # noqa: E402
from ngramtool.torch import NgramRows  # noqa: E402
from ngramtool.torch.engram import EngramGate, EngramMemory, ShortConv  # noqa: E402

TRAIN_TINY = REPO / "examples" / "train_tiny.py"
GOLDEN_TOLERANCE = 1e-6  # gate_shortconv_small.json: "compare with tolerance ~1e-6"


@pytest.fixture(scope="module")
def golden() -> dict:
    return load_json("gate_shortconv_small.json")


def tensor(values: list) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float32)


def test_gate_matches_demo_style_golden(golden: dict) -> None:
    case = golden["gate"]
    gate = EngramGate(
        case["hidden_size"], hc_mult=case["hc_mult"], eps=case["eps"], clamp=case["clamp_value"]
    )
    with torch.no_grad():
        gate.query_norm.weight.copy_(tensor(case["weight_hidden_bf16"]))
        gate.key_norm.weight.copy_(tensor(case["weight_embed_bf16"]))
        got = gate(tensor(case["x_bf16"]), tensor(case["k_bf16"]))  # [T, hc]
    torch.testing.assert_close(got, tensor(case["gate_demo_style"]), atol=GOLDEN_TOLERANCE, rtol=0)
    assert got[2, 1].item() == 0.5  # the all-zero hidden state: s = 0, sign(0) = 0


def test_short_conv_matches_golden(golden: dict) -> None:
    case = golden["short_conv"]
    value = tensor(case["value"])  # [B, S, hc, D]
    hc, dim = value.shape[-2:]
    conv = ShortConv(dim, hc_mult=hc, kernel_size=case["kernel_size"], dilation=case["dilation"])
    with torch.no_grad():
        conv.norm.weight.copy_(tensor(case["norm_weight"]))
        conv.conv.weight.copy_(tensor(case["conv_weight[channel][0][tap]"]))
        out = conv(value)
    torch.testing.assert_close(out, tensor(case["short_conv_out"]), atol=GOLDEN_TOLERANCE, rtol=0)
    expected = tensor(case["engram_out = value + short_conv"])
    torch.testing.assert_close(value + out, expected, atol=GOLDEN_TOLERANCE, rtol=0)


def test_memory_table_stays_on_the_cpu_and_masks() -> None:
    memory = EngramMemory(50, 4, 8, 16, max_ngram=3)
    rows = torch.tensor([[[1, 2, 3, 4], [-1, -1, -1, -1]]])
    e = memory.read(rows)
    assert e.shape == (1, 2, 32)
    assert torch.equal(e[0, 1], torch.zeros(32))  # a masked token reads zero vectors
    assert torch.equal(e[0, 0, :8], memory.table.weight[1])  # column 0 first, then column 1, ...
    out = memory(torch.randn(1, 2, 16), rows)
    assert out.shape == (1, 2, 16)
    assert out[0, 0].abs().sum() > 0 and torch.equal(out[0, 1], torch.zeros(16))  # nothing at a masked token
    names = [name for name, _ in memory.named_parameters()]
    memory.to("meta")
    assert memory.table.weight.device.type == "cpu"
    assert memory.key_proj.weight.device.type == "meta"
    assert [name for name, _ in memory.named_parameters()] == names


def test_sparse_table_gradients() -> None:
    memory = EngramMemory(50, 4, 8, 16, sparse=True)
    memory(torch.randn(2, 5, 16), torch.randint(0, 50, (2, 5, 4))).sum().backward()
    assert memory.table.weight.grad.is_sparse
    assert memory.key_proj.weight.grad is not None


def load_train_tiny() -> ModuleType:
    spec = importlib.util.spec_from_file_location("train_tiny", TRAIN_TINY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("hashed_in_forward", [False, True])
def test_tiny_model_is_causal(hashed_in_forward: bool) -> None:
    """Rows given by the caller, or hashed by the model's NgramRows in its forward."""
    vocab_size = 300
    spec = HashSpec(
        max_ngram=3, heads=2, layer_ids=(0,), table_sizes=(211, 307), pad_id=0, vocab_size=vocab_size
    )
    torch.manual_seed(0)
    ngram_rows = NgramRows(spec, identity_vocab(vocab_size)) if hashed_in_forward else None
    model = load_train_tiny().TinyEngramLM(vocab_size, spec, ngram_rows=ngram_rows).eval()
    ids = np.random.default_rng(0).integers(1, vocab_size, size=48)

    def outputs(ids: np.ndarray) -> tuple[np.ndarray, torch.Tensor]:
        rows = hash_ngrams(ids, spec)[:, 0]  # identity vocabulary: the ids are canonical
        given = None if hashed_in_forward else torch.from_numpy(rows)[None]
        with torch.no_grad():
            out = model(torch.from_numpy(ids)[None], given)[0]
        return rows, out

    rows, out = outputs(ids)
    assert out.shape == (48, vocab_size)
    for t in (0, 9, 30, 46):
        changed = ids.copy()
        changed[t + 1] = ids[t + 1] % (vocab_size - 1) + 1
        new_rows, new_out = outputs(changed)
        assert np.array_equal(new_rows[: t + 1], rows[: t + 1])
        assert not np.array_equal(new_rows[t + 1], rows[t + 1])
        assert torch.equal(new_out[: t + 1], out[: t + 1]), f"positions <= {t} saw token {t + 1}"
        assert not torch.equal(new_out[t + 1 :], out[t + 1 :])
