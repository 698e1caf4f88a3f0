"""ngramtool.torch.NgramRows: raw ids [B, T] -> the reference's rows, in a model's forward.

With ``NGRAMTOOL_TEST_CUDA=1`` (benchmarks/gpu_check.sh on a GPU machine) the CUDA variants run:
the module on the GPU, hashing with the Triton kernel and with torch."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest
from conftest import spec_from_golden
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402
from torch.utils.data import DataLoader, Dataset  # noqa: E402

from ngramtool import hash_ngrams  # noqa: E402
from ngramtool.spec.hashspec import HashSpec  # noqa: E402
from ngramtool.tokenizers.vocab import identity_vocab  # noqa: E402
from ngramtool.torch import NgramRows, RowsCollate  # noqa: E402
from ngramtool.util.errors import NgramToolError, UsageError  # noqa: E402

CUDA = os.environ.get("NGRAMTOOL_TEST_CUDA") == "1"
needs_cuda = pytest.mark.skipif(
    not CUDA, reason="CUDA variants run with NGRAMTOOL_TEST_CUDA=1 (gpu_check.sh)"
)
SPEC = HashSpec(heads=2, layer_ids=(0, 3), table_sizes=(1009, 2003), vocab_size=300, pad_id=7)


def random_table(rng: np.random.Generator, raw: int, canonical: int) -> np.ndarray:
    """A compression-like lookup table: every canonical id used, some raw ids without a token."""
    lut = np.concatenate([np.arange(canonical), rng.integers(0, canonical, raw - canonical)])
    lut = rng.permutation(lut)
    lut[rng.choice(raw, size=raw // 50, replace=False)] = -1
    return lut


LUT = random_table(np.random.default_rng(0), 500, SPEC.vocab_size)
VALID = np.flatnonzero(LUT >= 0)


def expected_rows(ids: np.ndarray, spec: HashSpec = SPEC, lut: np.ndarray = LUT) -> np.ndarray:
    """Each row of raw ``ids`` [B, T] mapped through ``lut`` and hashed as its own stream."""
    return hash_ngrams(lut[ids], spec)


# ------------------------------------------------------------------- the reference's rows
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_golden_vectors_from_raw_ids(hash_golden, deepseek_vocab, dtype):
    """The golden batches' raw DeepSeek-V3 ids (or identity-mapped ids) give the reference's rows."""
    for config in hash_golden["configs"]:
        spec = spec_from_golden(config["config"])
        dsv3 = config["config"].get("uses_deepseek_v3_lookup_table", False)
        module = NgramRows(spec, deepseek_vocab if dsv3 else identity_vocab(spec.vocab_size))
        for case in config["cases"]:
            rows = module(torch.tensor(case["input_ids"], dtype=dtype))
            for li, layer in enumerate(case["layers"]):
                assert rows[:, :, li].tolist() == layer["embedding_rows"], case["description"]


@settings(max_examples=60)
@given(
    batch=st.integers(1, 4),
    length=st.integers(0, 40),
    before=st.integers(0, 3),
    seed=st.integers(0, 2**31),
    backend=st.sampled_from(["auto", "numpy", "torch"]),
)
def test_random_batches_equal_hash_ngrams(batch, length, before, seed, backend):
    rng = np.random.default_rng(seed)
    streams = rng.choice(VALID, size=(batch, before + length))
    module = NgramRows(SPEC, LUT, backend=backend)
    rows = module(torch.from_numpy(streams[:, before:]))
    assert rows.dtype == torch.int32 and rows.shape == (batch, length, 2, SPEC.num_columns)
    assert np.array_equal(rows.numpy(), expected_rows(streams[:, before:]))
    if before:  # stream semantics: the rows of the whole stream
        later = module(torch.from_numpy(streams[:, before:]), preceding=torch.from_numpy(streams[:, :before]))
        assert np.array_equal(later.numpy(), expected_rows(streams)[:, before:])


def test_negative_ids_are_masked_and_missing_preceding_ids_are_the_pad():
    module = NgramRows(SPEC, LUT)
    ids = torch.from_numpy(VALID[[[3, 4, 5, 6]]])
    masked = ids.clone()
    masked[0, 1] = -1
    rows = module(masked)
    assert (rows[0, 1] == -1).all()
    assert np.array_equal(
        rows.numpy(), hash_ngrams(np.where(masked.numpy() < 0, -1, LUT[masked.numpy()]), SPEC)
    )
    assert torch.equal(module(ids, preceding=torch.full((1, 2), -1)), module(ids))
    assert torch.equal(module(ids, preceding=torch.zeros((1, 0), dtype=torch.int64)), module(ids))


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_dead_tokens_as_barriers_in_the_forward_and_the_collate(backend):
    """negative_ids="barrier": DEAD ids cut the windows that reach them, in the module, after
    ``preceding`` and in RowsCollate, as hash_ngrams computes them."""
    rng = np.random.default_rng(3)
    raw = rng.choice(VALID, size=(3, 12))
    raw[rng.random(raw.shape) < 0.2] = -1
    canonical = np.where(raw < 0, -1, LUT[raw])
    expected = hash_ngrams(canonical, SPEC, negative_ids="barrier")
    assert not np.array_equal(expected, hash_ngrams(canonical, SPEC))  # the conventions differ here
    module = NgramRows(SPEC, LUT, backend=backend, negative_ids="barrier")
    assert np.array_equal(module(torch.from_numpy(raw)).numpy(), expected)
    stream = hash_ngrams(canonical.reshape(-1), SPEC, negative_ids="barrier").reshape(expected.shape)
    later = module(torch.from_numpy(raw[1:]), preceding=torch.from_numpy(raw[:-1]))
    assert np.array_equal(later.numpy(), stream[1:])
    collate = RowsCollate(SPEC, LUT, negative_ids="barrier")
    assert np.array_equal(collate(raw.tolist())["rows"].numpy(), expected)


# ------------------------------------------------------------------------ bad input
def test_bad_input_is_one_clear_error():
    module = NgramRows(SPEC, LUT)
    ids = torch.from_numpy(VALID[:12].reshape(2, 6))
    too_big = ids.clone()
    too_big[1, 4] = 500
    with pytest.raises(
        NgramToolError,
        match="`input_ids`: token id 500 at batch row 1, position 4 is at or above the 500 ids",
    ):
        module(too_big)
    hole = ids.clone()
    hole[0, 2] = int(np.flatnonzero(LUT < 0)[0])
    with pytest.raises(NgramToolError, match="batch row 0, position 2 has no token in this tokenizer"):
        module(hole)
    with pytest.raises(
        UsageError, match=r"`input_ids` must hold integer token ids \(int32 or int64\), got torch.float32"
    ):
        module(ids.float())
    with pytest.raises(
        UsageError, match=r"must be \[B, T\] token ids, got a 3-D tensor of shape \(2, 6, 1\)"
    ):
        module(ids[..., None])
    with pytest.raises(UsageError, match=r"a single sequence is ids\.unsqueeze\(0\)"):
        module(ids[0])
    with pytest.raises(UsageError, match="the ids before 1 sequence but `input_ids` holds 2"):
        module(ids, preceding=ids[:1, :2])
    with pytest.raises(NgramToolError, match="`preceding`: token id 999 at batch row 0, position 1"):
        module(ids, preceding=torch.tensor([[1, 999], [1, 2]]))
    with pytest.raises(NgramToolError, match="the spec was made for V'=300 but the lookup table has V'=301"):
        NgramRows(SPEC, np.arange(301))
    with pytest.raises(UsageError, match="`spec` must be a HashSpec"):
        NgramRows("engram-demo", LUT)  # type: ignore[arg-type]


# ------------------------------------------------------------------ a module of a model
class TinyModel(nn.Module):
    """Embeddings of the rows of layer 0 summed with the token embedding, then a linear head."""

    def __init__(self) -> None:
        super().__init__()
        self.rows = NgramRows(SPEC, LUT)
        self.tokens = nn.Embedding(500, 8)
        self.memory = nn.Embedding(int(SPEC.rows_per_layer[0]), 8)
        self.head = nn.Linear(8, 500)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        rows = self.rows(input_ids)[:, :, 0]  # [B, T, C] of Engram layer 0
        hidden = self.tokens(input_ids) + self.memory(rows.long()).sum(dim=2)
        return self.head(hidden)


def test_inside_a_models_forward_with_and_without_autograd():
    torch.manual_seed(0)
    model = TinyModel()
    ids = torch.from_numpy(VALID[np.random.default_rng(1).integers(0, VALID.size, (3, 16))])
    with torch.no_grad():
        quiet = model(ids)
    with torch.inference_mode():
        inferred = model(ids)
    logits = model(ids)
    assert torch.equal(quiet, logits.detach()) and torch.equal(inferred, quiet)
    loss = nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), ids[:, 1:].flatten())
    loss.backward()
    used = model.rows(ids)[:, :, 0].long().unique()
    grad = model.memory.weight.grad
    assert grad is not None and grad[used].abs().sum() > 0
    unused = torch.ones(grad.shape[0], dtype=torch.bool)
    unused[used] = False
    assert grad[unused].abs().sum() == 0  # only the rows read get gradients
    assert "rows.lut" not in model.state_dict()  # derived from spec and vocab, not saved
    model.half()  # converts floating parameters only
    assert model.rows.lut.dtype == torch.int64 and model.rows.offsets.dtype == torch.int32


class _Windows(Dataset):
    """Windows of a random stream whose rows a DataLoader worker computes with NgramRows."""

    def __init__(self) -> None:
        self.ids = torch.from_numpy(VALID[np.random.default_rng(2).integers(0, VALID.size, 400)])
        self.rows = NgramRows(SPEC, LUT)

    def __len__(self) -> int:
        return 10

    def __getitem__(self, i: int) -> torch.Tensor:
        return self.rows(self.ids[None, i * 40 : (i + 1) * 40])[0]


def test_it_pickles_for_dataloader_workers():
    module = NgramRows(SPEC, LUT)
    ids = torch.from_numpy(VALID[None, :20])
    copy = pickle.loads(pickle.dumps(module))
    assert torch.equal(copy(ids), module(ids)) and copy.spec == SPEC
    serial = list(DataLoader(_Windows(), batch_size=5))
    parallel = list(DataLoader(_Windows(), batch_size=5, num_workers=2))
    assert all(torch.equal(a, b) for a, b in zip(serial, parallel, strict=True))
    windows = _Windows()
    assert torch.equal(serial[0][1], torch.from_numpy(expected_rows(windows.ids[None, 40:80].numpy())[0]))


# ------------------------------------------------------------------------------ CUDA
@needs_cuda
@pytest.mark.parametrize("backend", ["auto", "triton", "torch"])
def test_cuda_rows_equal_the_cpu_rows(backend):
    module = NgramRows(SPEC, LUT, backend=backend).to("cuda")
    assert module.lut.device.type == "cuda"
    streams = VALID[np.random.default_rng(3).integers(0, VALID.size, (8, 2051))]
    ids, preceding = torch.from_numpy(streams[:, 3:]), torch.from_numpy(streams[:, :3])
    rows = module(ids.cuda())
    assert rows.device.type == "cuda" and torch.equal(
        rows.cpu(), torch.from_numpy(expected_rows(streams[:, 3:]))
    )
    later = module(ids.cuda().int(), preceding=preceding.cuda())
    assert torch.equal(later.cpu(), torch.from_numpy(expected_rows(streams)[:, 3:]))
    with pytest.raises(UsageError, match="is on cpu but NgramRows is on cuda"):
        module(ids)
