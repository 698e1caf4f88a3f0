"""Headerless token memmaps (OLMo, Dolma): ``token_format=raw`` with its dtype, documents cut at
``eos_id`` or read from Dolma's ``.csv.gz`` metadata; their errors."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from conftest import assert_one_line_error, run
from hypothesis import given, settings
from hypothesis import strategies as st

import ngramtool
from ngramtool.formats.tokenfiles import iter_token_file_chunks, open_token_file
from ngramtool.util.errors import NgramToolError, UsageError

EOS = 7


def _starts(chunks) -> list[int]:
    starts, position = [], 0
    for chunk in chunks:
        starts += (chunk.doc_starts + position).tolist()
        position += chunk.tokens.shape[0]
    return starts


@settings(max_examples=60)
@given(
    ids=st.lists(st.integers(0, 9), max_size=60),
    dtype=st.sampled_from(["uint16", "uint32"]),
    chunk=st.integers(1, 9),
)
def test_documents_end_after_each_eos(tmp_path_factory, ids, dtype, chunk):
    path = tmp_path_factory.mktemp("raw") / "part-0.npy"
    np.asarray(ids, dtype=dtype).tofile(path)
    file = open_token_file(path, "raw", dtype=dtype, eos_id=EOS)
    ends = [i + 1 for i, token in enumerate(ids) if token == EOS and i + 1 < len(ids)]
    assert file.doc_offsets.tolist() == [0, *ends, len(ids)]
    assert file.tokens.tolist() == ids and file.has_documents
    chunks = list(iter_token_file_chunks(path, "raw", chunk, dtype=dtype, eos_id=EOS))
    assert np.concatenate([c.tokens for c in chunks] or [np.zeros(0)]).tolist() == ids
    assert _starts(chunks) == [0, *ends]


def _dolma(tmp_path, docs: list[list[int]], dtype: str = "uint16"):
    """A Dolma-style token memmap and its metadata: start,end,id,src,loc rows."""
    path = tmp_path / "part-00000.npy"
    np.concatenate([np.asarray(d, dtype=dtype) for d in docs]).tofile(path)
    rows, start = [], 0
    for i, doc in enumerate(docs):
        rows.append(f'{start},{start + len(doc)},doc-{i},"s3://bucket/a,b.json.gz",{i}\n')
        start += len(doc)
    with gzip.open(tmp_path / "part-00000.csv.gz", "wt") as handle:
        handle.writelines(rows)
    return path


def test_dolma_metadata_gives_the_documents(tmp_path):
    path = _dolma(tmp_path, [[1, 2, 3], [4], [], [5, 6]])
    file = open_token_file(path, "raw", dtype="uint16")
    assert file.doc_offsets.tolist() == [0, 3, 4, 4, 6]
    assert file.describe()["documents_from"] == "part-00000.csv.gz"
    assert file.describe()["document_boundaries"] is True
    assert open_token_file(path, "raw", dtype="uint16", eos_id=4).doc_offsets.tolist() == [0, 4, 6]


def test_dolma_metadata_that_does_not_fit_is_refused(tmp_path):
    path = _dolma(tmp_path, [[1, 2, 3], [4]])
    with pytest.raises(
        NgramToolError, match=r"its documents end at token 4 but part-00000\.npy holds 2 tokens"
    ):
        open_token_file(path, "raw", dtype="uint32")
    with gzip.open(tmp_path / "part-00000.csv.gz", "wt") as handle:
        handle.write("0,3,a,s,0\n4,4,b,s,1\n")
    with pytest.raises(
        NgramToolError, match=r"csv.gz:2: the document spans tokens 4 to 4 but the one before it"
    ):
        open_token_file(path, "raw", dtype="uint16")


def test_raw_files_need_their_dtype_and_a_whole_number_of_tokens(tmp_path):
    path = tmp_path / "ids.npy"
    np.arange(5, dtype=np.uint16).tofile(path)
    with pytest.raises(UsageError, match=r"has no \.npy header: OLMo and Dolma write headerless"):
        open_token_file(path)
    with pytest.raises(UsageError, match="stores no token type: pass `token_dtype`"):
        open_token_file(path, "raw")
    with pytest.raises(UsageError, match="`token_dtype` must be one of uint16, uint32"):
        open_token_file(path, "raw", dtype="int8")
    with pytest.raises(NgramToolError, match="10 bytes is not a whole number of uint32 tokens"):
        open_token_file(path, dtype="uint32")  # the dtype implies raw
    assert open_token_file(path, dtype="uint16").format == "raw"
    np.save(tmp_path / "real.npy", np.arange(3, dtype=np.uint16))
    with pytest.raises(UsageError, match="`token_dtype` applies to headerless files"):
        open_token_file(tmp_path / "real.npy", "npy", dtype="uint16")
    with pytest.raises(UsageError, match="records its documents: `eos_id` applies"):
        ds = tmp_path / "x.ds"
        np.arange(3, dtype=np.uint16).tofile(ds)
        np.asarray([3], dtype="<u8").tofile(tmp_path / "x.ds.index")
        open_token_file(ds, eos_id=1)


def test_hash_and_collisions_read_a_raw_memmap_by_its_eos(tmp_path):
    ids = np.asarray([9906, 1917, 100257, 16041, 100257, 1584], dtype=np.uint32)
    ids.tofile(tmp_path / "olmo.npy")
    args = ["--token-format", "raw", "--token-dtype", "uint32", "--eos-id", "100257"]
    result = run(
        "hash", "--tokens", "olmo.npy", *args, "-o", "o.ngidx", "--boundary", "reset", "-q", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr.decode()
    index = ngramtool.open_index(tmp_path / "o.ngidx")
    assert index.tokens.tolist() == ids.tolist() and index.doc_offsets.tolist() == [0, 3, 5, 6]
    no_eos = run(
        "hash", "--tokens", "olmo.npy", *args[:4], "-o", "p.ngidx", "--boundary", "reset", cwd=tmp_path
    )
    assert_one_line_error(
        no_eos, 2, "records none: it reads as one document; drop --boundary reset, pass --eos-id"
    )
    counted = run("collisions", "olmo.npy", *args, "--heads", "1", "--table", "4099", "--json", cwd=tmp_path)
    assert counted.returncode == 0, counted.stderr.decode()
    assert b'"documents": 3' in counted.stdout
    idle = run("hash", "x.txt", "y.txt", "--eos-id", "3", cwd=tmp_path)
    assert_one_line_error(idle, 2, "--eos-id applies only to a token file (--tokens FILE, or one INPUT)")
