"""litdata itself: token blocks written by its ``optimize`` and read by its ``StreamingDataset`` /
``TokensLoader`` / ``StreamingDataLoader`` get their rows from RowsCollate, equal to hash_ngrams of
each block."""

from __future__ import annotations

import functools
import multiprocessing
from collections.abc import Iterator

import numpy as np
import pytest
from conftest import CORPUS

torch = pytest.importorskip("torch")
litdata = pytest.importorskip("litdata")

from ngramtool import NgramHashMapping, hash_ngrams  # noqa: E402
from ngramtool.torch import RowsCollate  # noqa: E402

BLOCK = 65  # 64 inputs and the next token as their targets


@functools.cache
def mapping() -> NgramHashMapping:
    return NgramHashMapping.build("cl100k_base", heads=2, table_sizes=4099)


def tokenize(line: str) -> Iterator[torch.Tensor]:
    """litdata's ``fn``: one document's ids, which TokensLoader concatenates into blocks."""
    yield torch.from_numpy(mapping().encode(line).astype(np.int32))


@pytest.mark.filterwarnings("ignore:The given buffer is not writable:UserWarning")  # litdata's reader
def test_rows_of_litdata_token_blocks(tmp_path):
    lines = [line for line in CORPUS.read_text(encoding="utf-8").splitlines() if len(line) > 40][:150]
    mapping()  # loaded before litdata's worker forks
    start_method = multiprocessing.get_start_method()
    try:  # litdata sets the start method of the whole process (spawn by default): fork, and put it back
        litdata.optimize(fn=tokenize, inputs=lines, output_dir=str(tmp_path / "tokens"), chunk_size=1 << 20,
                         item_loader=litdata.TokensLoader(), num_workers=1, start_method="fork")  # fmt: skip
    finally:
        multiprocessing.set_start_method(start_method, force=True)
    dataset = litdata.StreamingDataset(
        str(tmp_path / "tokens"), item_loader=litdata.TokensLoader(block_size=BLOCK)
    )
    stream = np.concatenate([mapping().encode(line) for line in lines])
    assert len(dataset) == len(stream) // BLOCK > 8
    collate = RowsCollate(mapping().spec, mapping().vocab)
    loader = litdata.StreamingDataLoader(dataset, batch_size=8, collate_fn=collate)
    blocks = []
    for batch in loader:
        assert set(batch) == {"input_ids", "rows"} and batch["input_ids"].shape[1] == BLOCK
        for ids, rows in zip(batch["input_ids"].numpy(), batch["rows"].numpy(), strict=True):
            assert np.array_equal(rows, hash_ngrams(mapping().canonical(ids), mapping().spec))
            blocks.append(ids)
    assert np.array_equal(np.concatenate(blocks), stream[: len(blocks) * BLOCK])
