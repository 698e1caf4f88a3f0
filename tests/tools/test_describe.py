"""describe: what an index, a dataset, a stream or a token file holds; a tokenizer's vocabulary."""

from __future__ import annotations

import numpy as np
import pytest

from ngramtool import NgramHashMapping, OutputOptions, hash_files
from ngramtool.tools.describe import describe_path, describe_vocab
from ngramtool.util.errors import UsageError


def test_vocab_reports_and_exports(tmp_path):
    out = tmp_path / "lut.npy"
    report = describe_vocab(top=3, export=out)
    assert report["vocab"]["size"] == 62_330 and report["assigned_ids"] == 100_261
    assert len(report["largest_groups"]) == 3 and report["exported"] == str(out)
    lut = np.load(out)
    assert lut.shape == (100_277,) and int(lut.max()) + 1 == 62_330
    assert report["largest_groups"][0]["size"] == int(np.bincount(lut[lut >= 0]).max())
    with pytest.raises(UsageError, match="`force=True`"):
        describe_vocab(export=out)


def test_vocab_no_compress_reports_the_identity():
    report = describe_vocab(no_compress=True)
    assert report["vocab"]["compressed"] is False and report["largest_groups"] == []
    assert report["vocab"]["size"] == report["vocab"]["raw_size"] == 100_277


def test_describe_an_index_and_a_token_file(tmp_path):
    (tmp_path / "t.txt").write_text("hello index")
    hash_files(
        tmp_path / "t.txt",
        tmp_path / "t.ngidx",
        mapping=NgramHashMapping.build("bytes"),
        outputs=OutputOptions(save_tokens=tmp_path / "t.npy"),
    )
    report = describe_path(tmp_path / "t.ngidx", rows=2)
    assert report["kind"] == "index" and report["num_tokens"] == 11
    assert [entry["token"] for entry in report["first"]] == list(b"he")
    assert report["spec"]["tables_per_layer"] == 16 and report["tokenization"]["input"] == "text"
    tokens = describe_path(tmp_path / "t.npy")
    assert tokens["kind"] == "token file" and tokens["first_tokens"] == list(b"hello index")
    with pytest.raises(UsageError, match="does not exist: give an index directory"):
        describe_path(tmp_path / "nope")
    with pytest.raises(
        UsageError, match="it is a directory that holds neither an index nor a merged dataset"
    ):
        describe_path(tmp_path)
