"""Megatron-Core itself: its IndexedDataset opens the .bin/.idx pairs ngramtool writes, ngramtool
reads (and hashes) the pairs its IndexedDatasetBuilder writes, and RowsCollate adds rows to the
batches of its GPTDataset."""

from __future__ import annotations

import itertools
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import CORPUS

torch = pytest.importorskip("torch")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Megatron's notes that Transformer Engine and Apex are absent
    indexed = pytest.importorskip("megatron.core.datasets.indexed_dataset")
    from megatron.core.datasets.gpt_dataset import GPTDataset, GPTDatasetConfig
    from megatron.core.datasets.utils import Split
    from megatron.core.tokenizers.text.libraries.null_tokenizer import NullTokenizer

from torch.utils.data import DataLoader  # noqa: E402

from ngramtool import NgramHashMapping, OutputOptions, TokenFileReader, hash_files, hash_ngrams  # noqa: E402
from ngramtool.formats.tokenfiles import open_token_file  # noqa: E402
from ngramtool.torch import RowsCollate  # noqa: E402

TOKENIZERS = {"cl100k_base": np.int32, "bytes": np.uint16}  # Megatron's dtype: uint16 below 65,500 ids
SEQ_LEN = 32


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return [line.strip() for line in CORPUS.read_text(encoding="utf-8").splitlines() if len(line) > 40][:80]


@pytest.fixture(scope="module")
def jsonl(lines: list[str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("megatron") / "corpus.jsonl"
    path.write_text("".join(json.dumps({"text": line}) + "\n" for line in lines), encoding="utf-8")
    return path


def mapping_of(tokenizer: str) -> NgramHashMapping:
    return NgramHashMapping.build(tokenizer, heads=2, table_sizes=4099)


def hash_with_megatron_tokens(jsonl: Path, folder: Path, tokenizer: str):
    """``ngramtool hash corpus.jsonl --save-tokens corpus --save-format megatron``: the index and
    the prefix of the .bin/.idx pair."""
    prefix = folder / "corpus"
    saved = OutputOptions(save_tokens=str(prefix), save_format="megatron")
    return hash_files(jsonl, folder / "corpus.ngidx", mapping=mapping_of(tokenizer), outputs=saved), prefix


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_megatron_core_opens_what_ngramtool_writes(tokenizer, jsonl, tmp_path):
    index, prefix = hash_with_megatron_tokens(jsonl, tmp_path, tokenizer)
    dataset = indexed.IndexedDataset(str(prefix))
    offsets = index.doc_offsets.tolist()
    assert len(dataset) == len(offsets) - 1 > 1
    assert dataset.index.dtype == TOKENIZERS[tokenizer]
    assert dataset.document_indices.tolist() == list(range(len(offsets)))
    for document, (start, stop) in enumerate(itertools.pairwise(offsets)):
        assert np.array_equal(dataset[document], index.tokens[start:stop])


@pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")  # Megatron's, on numpy 2
@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_ngramtool_reads_what_megatron_core_writes(tokenizer, lines, jsonl, tmp_path):
    """Documents of one sequence and of two (Megatron's sentence-split documents): the same ids,
    boundaries and rows as hashing the text."""
    mapping = mapping_of(tokenizer)
    documents = [mapping.encode(line) for line in lines]
    builder = indexed.IndexedDatasetBuilder(
        str(tmp_path / "corpus.bin"), dtype=indexed.DType.optimal_dtype(mapping.raw_size)
    )
    for number, ids in enumerate(documents):
        if number % 2:
            builder.add_item(torch.from_numpy(ids[:5].astype(np.int64)))
            builder.add_item(torch.from_numpy(ids[5:].astype(np.int64)))
            builder.end_document()
        else:
            builder.add_document(torch.from_numpy(ids.astype(np.int64)), [len(ids)])
    builder.finalize(str(tmp_path / "corpus.idx"))

    token_file = open_token_file(tmp_path / "corpus.bin")
    assert token_file.format == "megatron" and token_file.dtype == TOKENIZERS[tokenizer]
    assert np.array_equal(token_file.tokens, np.concatenate(documents))
    assert token_file.doc_offsets.tolist() == [0, *np.cumsum([len(ids) for ids in documents]).tolist()]
    from_tokens = hash_files(TokenFileReader(tmp_path / "corpus.bin"), tmp_path / "bin.ngidx",
                             mapping=mapping, boundary="reset")  # fmt: skip
    from_text = hash_files(jsonl, tmp_path / "text.ngidx", mapping=mapping, boundary="reset")
    assert from_tokens.doc_offsets.tolist() == from_text.doc_offsets.tolist()
    assert np.array_equal(from_tokens.rows[:], from_text.rows[:])


def test_rows_collate_on_gpt_dataset_batches(jsonl, tmp_path):
    """GPTDataset (its sample index built by the compiled helpers Megatron-Core's wheel ships) over
    ngramtool's files: each item is a window of the shuffled documents, and its rows are
    hash_ngrams of the window's canonical ids."""
    index, prefix = hash_with_megatron_tokens(jsonl, tmp_path, "cl100k_base")
    mapping = mapping_of("cl100k_base")
    config = GPTDatasetConfig(
        random_seed=0,
        sequence_length=SEQ_LEN,
        tokenizer=NullTokenizer(mapping.raw_size),
        reset_position_ids=False,
        reset_attention_mask=False,
        eod_mask_loss=False,
        create_attention_mask=False,
    )
    documents = indexed.IndexedDataset(str(prefix))
    gpt = GPTDataset(
        documents, str(prefix), np.arange(len(documents), dtype=np.int32), None, Split.train, config
    )
    stream = np.concatenate([documents[int(d)] for d in gpt.document_index])
    loader = DataLoader(gpt, batch_size=8, collate_fn=RowsCollate(mapping.spec, mapping.vocab, key="tokens"))
    seen = 0
    for batch in loader:
        assert set(batch) == {"tokens", "labels", "loss_mask", "position_ids", "rows"}
        for tokens, labels, rows in zip(batch["tokens"], batch["labels"], batch["rows"], strict=True):
            start = int(gpt.shuffle_index[seen]) * SEQ_LEN
            assert np.array_equal(tokens.numpy(), stream[start : start + SEQ_LEN])
            assert np.array_equal(labels.numpy(), stream[start + 1 : start + SEQ_LEN + 1])
            assert np.array_equal(rows.numpy(), hash_ngrams(mapping.canonical(tokens.numpy()), mapping.spec))
            seen += 1
    assert seen == len(gpt) == (len(index) - 1) // SEQ_LEN
