"""ngramtool.torch.RowsCollate: rows added to the batches of a plain list, HF datasets, litdata-
and Megatron-style items, equal to hash_ngrams of each sequence."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from conftest import golden_rows, spec_from_golden
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
datasets = pytest.importorskip("datasets")

from torch.utils.data import DataLoader  # noqa: E402

from ngramtool import hash_ngrams  # noqa: E402
from ngramtool.spec.hashspec import HashSpec  # noqa: E402
from ngramtool.tokenizers.vocab import identity_vocab  # noqa: E402
from ngramtool.torch import NgramRows, RowsCollate  # noqa: E402
from ngramtool.util.errors import UsageError  # noqa: E402

SPEC = HashSpec(heads=2, layer_ids=(0, 3), table_sizes=(1009, 2003), vocab_size=300, pad_id=7)
LUT = np.random.default_rng(0).permutation(np.concatenate([np.arange(300), np.arange(200)]))
SEQUENCES = np.random.default_rng(1).integers(0, 500, (12, 33))


def expected(sequence) -> np.ndarray:
    """hash_ngrams of one raw sequence, mapped through LUT: padded at its start."""
    return hash_ngrams(LUT[np.asarray(sequence)], SPEC)


def assert_rows(rows, sequences) -> None:
    assert len(rows) == len(sequences)
    for got, sequence in zip(rows, sequences, strict=True):
        assert got.dtype == torch.int32 and np.array_equal(got.numpy(), expected(sequence))


def test_golden_vectors(hash_golden, deepseek_vocab):
    """The golden batches' raw ids, as a plain list's items and as HF columns, give the
    reference's rows."""
    for config in hash_golden["configs"]:
        spec = spec_from_golden(config["config"])
        dsv3 = config["config"].get("uses_deepseek_v3_lookup_table", False)
        collate = RowsCollate(spec, deepseek_vocab if dsv3 else identity_vocab(spec.vocab_size))
        for case in config["cases"]:
            expected = golden_rows(case)
            assert np.array_equal(collate(case["input_ids"])["rows"].numpy(), expected), case["description"]
            columns = collate({"input_ids": [np.asarray(ids) for ids in case["input_ids"]]})
            assert np.array_equal(torch.stack(columns["rows"]).numpy(), expected)


@settings(max_examples=40)
@given(
    lengths=st.lists(st.integers(0, 30), min_size=1, max_size=5),
    seed=st.integers(0, 2**31),
    form=st.sampled_from(["list", "numpy", "tensors", "columns", "dicts"]),
)
def test_random_batches_equal_hash_ngrams_and_ngram_rows(lengths, seed, form):
    """Random raw ids in each kind of batch: each sequence's rows are hash_ngrams of its own
    canonical ids (ragged only as HF columns), equal to NgramRows on the stacked batch."""
    rng = np.random.default_rng(seed)
    if form != "columns":
        lengths = [lengths[0]] * len(lengths)  # items are stacked: one length
    sequences = [rng.integers(0, 500, length) for length in lengths]
    batch = {
        "list": [sequence.tolist() for sequence in sequences],
        "numpy": [np.require(sequence, requirements="C") for sequence in sequences],
        "tensors": [torch.from_numpy(sequence) for sequence in sequences],
        "columns": {"input_ids": [sequence.tolist() for sequence in sequences]},
        "dicts": [{"input_ids": torch.from_numpy(sequence)} for sequence in sequences],
    }[form]
    rows = RowsCollate(SPEC, LUT)(batch)["rows"]
    assert_rows(rows, sequences)
    if form != "columns":
        assert torch.equal(rows, NgramRows(SPEC, LUT)(torch.from_numpy(np.stack(sequences))))


def test_read_only_id_arrays_are_copied_without_a_warning():
    """Tokenizers and memory maps give read-only arrays: the batch gets tensors of its own."""
    sequences = [row.copy() for row in SEQUENCES[:3]]
    for sequence in sequences:
        sequence.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        batch = RowsCollate(SPEC, LUT)(sequences)
        ragged = RowsCollate(SPEC, LUT)({"input_ids": [sequences[0][:5], sequences[1]]})
    assert_rows(batch["rows"], SEQUENCES[:3])
    assert_rows(ragged["rows"], [SEQUENCES[0][:5], SEQUENCES[1]])
    batch["input_ids"][0, 0] = -5  # writable, and not the caller's array
    assert sequences[0][0] == SEQUENCES[0, 0]


@pytest.mark.parametrize("workers", [0, 2])
def test_a_plain_list_through_a_dataloader(workers):
    plain = [row.tolist() for row in SEQUENCES]  # a list of lists of ids
    loader = DataLoader(plain, batch_size=4, num_workers=workers, collate_fn=RowsCollate(SPEC, LUT))
    batches = list(loader)
    assert [batch["rows"].shape for batch in batches] == [(4, 33, 2, 4)] * 3
    for i, batch in enumerate(batches):
        assert torch.equal(batch["input_ids"], torch.from_numpy(SEQUENCES[4 * i : 4 * i + 4]))
        assert_rows(batch["rows"], SEQUENCES[4 * i : 4 * i + 4])


def test_hf_datasets_with_transform_and_as_collate_fn():
    ragged = [row[: 20 + i].tolist() for i, row in enumerate(SEQUENCES)]
    table = datasets.Dataset.from_dict({"input_ids": ragged, "label": list(range(12))})
    transformed = table.with_transform(RowsCollate(SPEC, LUT))
    assert_rows([transformed[3]["rows"]], [ragged[3]])  # one example
    assert_rows(transformed[2:6]["rows"], ragged[2:6])  # a batch of sequences of several lengths
    equal = datasets.Dataset.from_dict({"input_ids": SEQUENCES.tolist()}).with_format("torch")
    batch = next(iter(DataLoader(equal, batch_size=5, collate_fn=RowsCollate(SPEC, LUT))))
    assert batch["rows"].shape == (5, 33, 2, 4)
    assert_rows(batch["rows"], SEQUENCES[:5])


def test_megatron_and_litdata_items():
    """Megatron's GPTDataset yields dicts of tensors ("tokens", "labels", ...); litdata's
    TokensLoader yields a tensor per block."""
    megatron = [
        {
            "tokens": torch.from_numpy(row[:-1]),
            "labels": torch.from_numpy(row[1:]),
            "loss_mask": torch.ones(32),
        }
        for row in SEQUENCES[:3]
    ]
    batch = RowsCollate(SPEC, LUT, key="tokens")(megatron)
    assert set(batch) == {"tokens", "labels", "loss_mask", "rows"}
    assert_rows(batch["rows"], SEQUENCES[:3, :-1])
    litdata = [torch.from_numpy(row) for row in SEQUENCES[:3]]
    assert_rows(RowsCollate(SPEC, LUT)(litdata)["rows"], SEQUENCES[:3])


def test_it_pickles_and_names_a_missing_field():
    collate = pickle.loads(pickle.dumps(RowsCollate(SPEC, LUT, key="tokens", rows_key="ngram_rows")))
    assert_rows(collate({"tokens": torch.from_numpy(SEQUENCES[:2])})["ngram_rows"], SEQUENCES[:2])
    with pytest.raises(UsageError, match="the batch has no field 'tokens' \\(it has 'input_ids'\\)"):
        collate({"input_ids": [[1, 2]]})
