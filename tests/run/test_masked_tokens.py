"""DEAD tokens (``--mask-token``) through a hash run: the rows each convention defines, in stored
and tokens-only indexes and streams, recorded in the manifest, re-derived by verify, and kept
apart from outputs made another way."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from conftest import assert_one_line_error, run

import ngramtool
from ngramtool import NgramHashMapping, hash_ngrams
from ngramtool.cli.options import MaskingOptions
from ngramtool.formats.settings import settings_difference
from ngramtool.util.lookup import DEAD

TEXT = "the cat sat on the mat\nthe dog ate the bone\n"
SPEC = ("--heads", "2", "--table", "4099")
THE = 279  # cl100k_base's id of " the"
LAYOUT = {"heads": 2, "table_sizes": 4099}


@pytest.fixture(scope="module")
def text_file(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("masked") / "t.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


def test_a_mapping_with_dead_tokens_hashes_them_by_its_convention():
    plain = NgramHashMapping.build("cl100k_base", **LAYOUT)
    mapping = NgramHashMapping.build("cl100k_base", mask_tokens=[THE], negative_ids="barrier", **LAYOUT)
    ids = mapping.encode(TEXT)
    assert THE in ids.tolist()
    canonical = mapping.canonical(ids)
    assert (canonical[ids == THE] == DEAD).all()
    assert np.array_equal(canonical[ids != THE], plain.canonical(ids)[ids != THE])
    assert np.array_equal(mapping.rows(ids), hash_ngrams(canonical, mapping.spec, negative_ids="barrier"))
    assert np.array_equal(mapping.rows(ids), plain.rows(ids, masked=ids == THE, negative_ids="barrier"))
    assert (mapping.rows(ids, negative_ids="mask")[ids == THE] == -1).all()
    again = pickle.loads(pickle.dumps(mapping))
    assert again == mapping and again.mask_tokens == (THE,) and again.negative_ids == "barrier"
    assert again != plain and mapping.vocab.fingerprint != plain.vocab.fingerprint


@pytest.mark.parametrize("masked", ["barrier", "minus-one"])
def test_hash_writes_the_rows_of_the_convention_and_verify_rederives_them(text_file, tmp_path, masked):
    convention = {"barrier": "barrier", "minus-one": "mask"}[masked]
    mapping = NgramHashMapping.build("cl100k_base", mask_tokens=[THE], negative_ids=convention, **LAYOUT)
    expected = mapping.rows(mapping.encode(TEXT))
    options = (*SPEC, "--mask-token", str(THE), "--masked", masked, "-q")
    stored, lazy, stream = tmp_path / "s.ngidx", tmp_path / "l.ngidx", tmp_path / "x.ngstream"
    assert run("hash", text_file, "-o", stored, *options).returncode == 0
    assert run("hash", text_file, "-o", lazy, "--rows", "lazy", *options).returncode == 0
    piped = run("hash", text_file, "-o", "-", *options)
    assert piped.returncode == 0
    stream.write_bytes(piped.stdout)
    for path in (stored, lazy):
        index = ngramtool.open_index(path)
        assert index.manifest["negative_ids"] == convention
        assert np.array_equal(np.asarray(index.rows[:]), expected)
    with stream.open("rb") as handle:
        chunks = list(ngramtool.read_stream(handle))
    assert np.array_equal(np.concatenate([chunk.rows for chunk in chunks]), expected)
    for path in (stored, lazy, stream):
        result = run("verify", path)
        assert result.returncode == 0, result.stderr.decode()


def test_outputs_of_another_convention_are_not_the_same_settings(text_file, tmp_path):
    made = {}
    for masked in ("barrier", "minus-one"):
        out = tmp_path / f"{masked}.ngidx"
        assert (
            run(
                "hash", text_file, "-o", out, *SPEC, "--mask-token", str(THE), "--masked", masked, "-q"
            ).returncode
            == 0
        )
        made[masked] = ngramtool.open_index(out).manifest
    difference = settings_difference(made["barrier"], made["minus-one"])
    assert difference is not None and "negative_ids" in difference.setting


def test_the_v41_preset_defaults_to_the_barrier():
    assert MaskingOptions().settings("deepseek-v4.1-flash")["negative_ids"] == "barrier"
    assert MaskingOptions().settings("engram-demo")["negative_ids"] == "mask"
    assert MaskingOptions(masked="minus-one").settings("deepseek-v4.1-flash")["negative_ids"] == "mask"
    chosen = MaskingOptions(mask_token="5,7", masked="minus-one").settings(None)
    assert chosen == {"mask_tokens": (5, 7), "negative_ids": "mask"}
    assert MaskingOptions(mask_token="5").settings("deepseek-v4.1-flash")["negative_ids"] == "barrier"


def test_bad_masking_options_are_usage_errors(text_file, tmp_path):
    out = tmp_path / "x.ngidx"
    assert_one_line_error(run("hash", text_file, "-o", out, "--masked", "nope"), 2, "--masked must be")
    result = run("hash", text_file, "-o", out, "--mask-token", "99999999", "--masked", "barrier")
    assert_one_line_error(result, 2, "--mask-token: 99999999 is not a token id of this tokenizer")
    assert_one_line_error(run("hash", text_file, "-o", out, "--mask-token", "x"), 2, "--mask-token")
    unsaid = run("hash", text_file, "-o", out, "--mask-token", str(THE))
    assert_one_line_error(unsaid, 2, "--mask-token needs the convention its DEAD tokens hash by")
    assert not out.exists()


def test_an_index_is_never_made_with_the_demos_negative_ids(text_file, tmp_path):
    """An index records masked tokens as mask or barrier: a mapping with "hash" is refused before
    anything is written."""
    mapping = NgramHashMapping.build("cl100k_base", negative_ids="hash", **LAYOUT)
    out = tmp_path / "h.ngidx"
    with pytest.raises(ngramtool.UsageError, match="`negative_ids=hash`"):
        ngramtool.hash_files([str(text_file)], str(out), mapping=mapping)
    assert list(tmp_path.iterdir()) == []
