"""Bad input in the new forms: one clear line naming the file and where, exit 1, nothing left behind;
``errors=skip`` over compressed JSONL and parquet; missing extras name their pip command."""

from __future__ import annotations

import bz2
import io
import json
import random
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import assert_one_line_error, run
from corpus_forms import COMPRESSORS, jsonl_bytes, write_record_forms

import ngramtool.inputs.compressed as compressed
from ngramtool.inputs import check_reading, iter_text_pieces
from ngramtool.inputs.compressed import sniff_compression
from ngramtool.util.errors import MissingDependencyError, NgramToolError, UsageError

_random = random.Random(0)
DOCS = [" ".join(str(_random.getrandbits(24)) for _ in range(300)) for _ in range(300)]


def pieces(path, **reading):
    return list(iter_text_pieces(str(path), **reading))


@pytest.mark.parametrize("suffix", list(COMPRESSORS))
def test_a_truncated_compressed_file_names_the_file_and_the_offset_reached(tmp_path, suffix):
    compress = (
        COMPRESSORS[suffix] if suffix != ".bz2" else lambda data: bz2.compress(data, 1)
    )  # 100 KB blocks
    data = compress(jsonl_bytes(DOCS))
    path = tmp_path / f"docs.jsonl{suffix}"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(NgramToolError) as caught:
        pieces(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: the ") and "data ends early, after " in message
    assert "decompressed bytes: the file is truncated" in message
    reached = int(message.split("after ")[1].split(" decompressed")[0].replace(",", ""))
    assert 0 < reached < len(jsonl_bytes(DOCS))


@pytest.mark.parametrize("suffix", list(COMPRESSORS))
def test_a_truncated_file_gives_every_good_byte_before_the_error(tmp_path, suffix, monkeypatch):
    """Blocks are gathered before they are handed on: what was decompressed before the damage still
    reaches the reader, and the offset named is the number of bytes it received."""
    monkeypatch.setattr(compressed, "BLOCK_BYTES", 1 << 16)
    data = jsonl_bytes(DOCS)
    packed = COMPRESSORS[suffix](data) if suffix != ".bz2" else bz2.compress(data, 1)
    stream, _ = compressed.open_decompressed(
        io.BufferedReader(io.BytesIO(packed[: len(packed) * 3 // 4])), "d"
    )
    received = []
    with pytest.raises(NgramToolError, match="ends early") as caught:
        while block := stream.read1(1 << 30):
            received.append(block)
    reached = int(str(caught.value).split("after ")[1].split(" decompressed")[0].replace(",", ""))
    assert reached == len(b"".join(received)) > 0
    assert data.startswith(b"".join(received))


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_corrupt_compressed_data_names_the_file_and_the_offset(tmp_path, suffix):
    data = bytearray(COMPRESSORS[suffix](jsonl_bytes(DOCS)))
    data[-6] ^= 0xFF  # in the checksum that ends the data
    path = tmp_path / f"docs.jsonl{suffix}"
    path.write_bytes(bytes(data))
    with pytest.raises(
        NgramToolError, match=rf"^{path}: corrupt (gzip|zstd) data after [\d,]+ decompressed bytes"
    ):
        pieces(path)


def test_hash_of_a_truncated_file_is_one_line_exit_1_and_leaves_nothing(tmp_path):
    data = COMPRESSORS[".gz"](jsonl_bytes(DOCS))
    (tmp_path / "d.jsonl.gz").write_bytes(data[:-20])
    result = run("hash", "d.jsonl.gz", "-o", "out.ngidx", cwd=tmp_path)
    assert_one_line_error(result, 1, "d.jsonl.gz: the gzip data ends early, after ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.jsonl.gz"]


def test_a_bad_line_of_compressed_jsonl_names_its_line_and_skip_counts_it(tmp_path):
    lines = jsonl_bytes(["one", "two"]) + b"not json\n" + b'{"body": 1}\n' + jsonl_bytes(["three"])
    path = tmp_path / "d.jsonl.zst"
    path.write_bytes(COMPRESSORS[".zst"](lines))
    with pytest.raises(NgramToolError, match=rf"{path}:3: not valid JSON"):
        pieces(path)
    read = pieces(path, errors="skip")
    assert [p.text for p in read if p.doc_start] == ["one", "two", "three"]
    assert sum(p.skipped for p in read) == 2
    assert sum(p.nbytes for p in read) == path.stat().st_size


def test_progress_bytes_of_a_compressed_input_add_up_to_its_size(tmp_path):
    paths = write_record_forms(tmp_path, DOCS)
    for form in ("jsonl.gz", "jsonl.xz", "parquet", "arrow"):
        assert sum(p.nbytes for p in pieces(paths[form])) == paths[form].stat().st_size, form


def test_parquet_without_the_column_lists_its_columns(tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"id": [1, 2], "content": ["a", "b"], "url": ["u", "v"]}), path)
    with pytest.raises(NgramToolError) as caught:
        pieces(path)
    assert str(caught.value) == (
        f"{path}: no column 'text' (its columns: id, content, url); its string columns: content, url; "
        "name the column that holds the text with `text_key`"
    )
    assert [p.text for p in pieces(path, text_key="content")] == ["a", "b"]
    with pytest.raises(NgramToolError, match="column 'id' holds int64, not strings"):
        pieces(path, text_key="id")


def test_a_null_row_is_a_bad_record(tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"text": ["a", None, "c", None]}), path)
    with pytest.raises(NgramToolError, match=rf"{path}: row 1 has no text \(null in column 'text'\)"):
        pieces(path)
    read = pieces(path, errors="skip")
    assert [p.text for p in read if p.doc_start] == ["a", "c"]
    assert sum(p.skipped for p in read) == 2


def test_a_truncated_parquet_file_is_one_line_and_leaves_nothing(tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"text": DOCS}), path)
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(
        NgramToolError, match=rf"^{path}: not a readable parquet file \(.*\): it is truncated"
    ):
        pieces(path)
    result = run("hash", "t.parquet", "-o", "out.ngidx", cwd=tmp_path)
    assert_one_line_error(result, 1, "t.parquet: not a readable parquet file")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.parquet"]


def test_dataset_dicts_arrow_errors_and_stdin(tmp_path):
    import datasets

    datasets.DatasetDict({"train": datasets.Dataset.from_dict({"text": ["a"]})}).save_to_disk(
        str(tmp_path / "dd")
    )
    with pytest.raises(
        UsageError, match=r"holds a DatasetDict \(splits: train\): give one split's directory"
    ):
        pieces(tmp_path / "dd")
    assert [p.text for p in pieces(tmp_path / "dd" / "train") if p.doc_start] == ["a"]
    (tmp_path / "bad.arrow").write_bytes(b"not arrow at all")
    with pytest.raises(NgramToolError, match="not a readable Arrow file"):
        pieces(tmp_path / "bad.arrow")
    with pytest.raises(UsageError, match="parquet input is read from a file, not from stdin"):
        check_reading(["-"], input_format="parquet")
    with pytest.raises(UsageError, match="is a directory; give the files inside it"):
        pieces(tmp_path)


def test_options_that_do_not_fit_the_forms(tmp_path):
    paths = write_record_forms(tmp_path, ["a"])
    with pytest.raises(UsageError, match=r"`doc_sep` cuts plain text .* is read as parquet"):
        check_reading([str(paths["parquet"])], doc_sep="\n")
    with pytest.raises(UsageError, match="`input_format` must be one of text, jsonl, parquet, arrow"):
        check_reading(["a.txt"], input_format="csv")
    assert check_reading([str(p) for p in paths.values()], errors="skip")
    result = run("hash", "x.txt", "--format", "csv", cwd=tmp_path)
    assert_one_line_error(result, 2, "--format must be one of text, jsonl, parquet, arrow (got 'csv')")


def test_compression_is_known_by_its_first_bytes_not_by_its_name(tmp_path):
    assert [sniff_compression(COMPRESSORS[s](b"x")[:10]) for s in COMPRESSORS] == [
        "gzip",
        "bz2",
        "xz",
        "zstd",
    ]
    assert sniff_compression(b"BZh91AY&SY"[:9]) is None and sniff_compression(b"plain text") is None
    path = tmp_path / "no_suffix"
    path.write_bytes(COMPRESSORS[".xz"]("compressed ünïcode".encode()))
    assert "".join(p.text for p in pieces(path)) == "compressed ünïcode"


@pytest.mark.parametrize(
    ("module", "name", "extra"), [("zstandard", "t.txt.zst", "zstd"), ("pyarrow", "t.parquet", "parquet")]
)
def test_a_missing_extra_is_one_line_with_its_pip_command(tmp_path, monkeypatch, module, name, extra):
    paths = write_record_forms(tmp_path, ["a"])
    path = tmp_path / name
    if module == "zstandard":
        path.write_bytes(COMPRESSORS[".zst"](b"text"))
    else:
        path.write_bytes(paths["parquet"].read_bytes())
    monkeypatch.setitem(sys.modules, module, None)  # import fails as if it were not installed
    monkeypatch.setitem(sys.modules, f"{module}.parquet", None)
    with pytest.raises(MissingDependencyError) as caught:
        pieces(path)
    assert str(caught.value).endswith(f"which is not installed: pip install 'ngramtool[{extra}]'")
    assert "\n" not in str(caught.value)


def test_a_dataset_row_of_the_wrong_type_names_the_column(tmp_path):
    import datasets

    datasets.Dataset.from_dict({"text": [1, 2]}).save_to_disk(str(tmp_path / "nums"))
    with pytest.raises(NgramToolError, match="column 'text' holds int64, not strings"):
        pieces(tmp_path / "nums")
    meta = json.loads((tmp_path / "nums" / "state.json").read_text())
    assert meta["_data_files"]
