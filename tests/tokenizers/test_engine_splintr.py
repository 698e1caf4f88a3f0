"""The splintr engine's own rules: tiktoken encodings only, a pinned pattern without possessive
quantifiers, ``auto``'s order (fastokens, splintr, reference), and its refusals and mismatches
reported as for any engine. Its ids against the reference: test_engines.py."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from conftest import CORPUS, DATA, assert_one_line_error, run

from ngramtool import NgramHashMapping, hash_texts
from ngramtool.tokenizers import engines, load_tokenizer
from ngramtool.tokenizers.engine_choice import EngineTokenizer
from ngramtool.tokenizers.guard import EngineMismatch
from ngramtool.tokenizers.tiktoken_files import TiktokenTokenizer
from ngramtool.tokenizers.tiktoken_splintr import without_possessives
from ngramtool.util.errors import UsageError

pytest.importorskip("splintr")

DEEPSEEK = str(DATA / "tokenizers" / "deepseek-v3.tokenizer.json.gz")
GLM = str(DATA / "tokenizers" / "glm-style" / "tokenizer.json")


def test_possessive_marks_are_dropped_and_nothing_else():
    r"""``?+ *+ ++ {m,n}+`` lose their ``+``; a plain ``+``, escapes (``\p{L}+``), classes holding
    ``+`` and group flags stay."""
    assert without_possessives(
        r"'(?i:[sd])|[^\r\n\p{L}]?+\p{L}++|\p{N}{1,3}+|[+]++[\r\n]*+|\s++$|\s+(?!\S)"
    ) == (r"'(?i:[sd])|[^\r\n\p{L}]?\p{L}+|\p{N}{1,3}|[+]+[\r\n]*|\s+$|\s+(?!\S)")
    assert without_possessives(r"\p{L}+\x{85}+a+") == r"\p{L}+\x{85}+a+"


@pytest.mark.parametrize("name", [DEEPSEEK, GLM])
def test_splintr_is_not_offered_for_a_tokenizer_json(name):
    """Its ids differ from the tokenizers library's on tokenizer.json files: a usage error that
    says so and names the alternatives."""
    with pytest.raises(UsageError, match=r"serves tiktoken encodings only.*use fastokens or reference"):
        load_tokenizer(name, engine="splintr")


def test_an_encoding_without_a_pinned_pattern_gets_no_engine():
    """A tiktoken encoding whose pattern was not verified (here cl100k_base's ranks under another
    pattern) gets neither engine."""
    import tiktoken

    enc = load_tokenizer("cl100k_base", engine="reference")._enc
    other = tiktoken.Encoding(
        "other", pat_str=enc._pat_str + r"|\p{M}", mergeable_ranks=enc._mergeable_ranks, special_tokens={}
    )
    reference = TiktokenTokenizer(other, "other")
    for engine in ("splintr", "fastokens"):
        with pytest.raises(engines.EngineUnavailable, match=r"not .*offered for it"):
            engines.engine_for(engine, reference)


def test_auto_prefers_splintr_then_fastokens_then_the_reference_for_tiktoken(monkeypatch):
    """For a tiktoken encoding auto takes the first engine, the fastest over a whole run first
    (splintr starts in a fraction of fastokens' time), that is installed in its verified version;
    when none is, the reasons for declining each are kept."""
    reference = load_tokenizer("cl100k_base", engine="reference")
    assert EngineTokenizer(reference, "auto").decide(1 << 30).name == "splintr"
    installed = dict(engines.ENGINE_VERSIONS)
    monkeypatch.setattr(engines, "installed_version", lambda name: installed[name])
    installed["splintr"] = "0.0.1"
    chosen = EngineTokenizer(reference, "auto")
    assert chosen.decide(1 << 30).name == "fastokens" and chosen.declined is None
    installed["fastokens"] = None
    declined = EngineTokenizer(reference, "auto")
    assert declined.decide(1 << 30) is None
    assert (
        "splintr 0.0.1 is installed" in declined.declined
        and "fastokens is not installed" in declined.declined
    )


def test_auto_takes_each_engine_where_it_repays_its_start_up(monkeypatch):
    """splintr from 8 MB of a tiktoken encoding's text; fastokens, slower to start, only from 32 MB
    when splintr cannot serve; below that the reference, with splintr's reason kept."""
    reference = load_tokenizer("cl100k_base", engine="reference")
    assert EngineTokenizer(reference, "auto").decide(7 << 20) is None
    assert EngineTokenizer(reference, "auto").decide(8 << 20).name == "splintr"
    installed = dict(engines.ENGINE_VERSIONS)
    monkeypatch.setattr(engines, "installed_version", lambda name: installed[name])
    installed["splintr"] = None
    middle = EngineTokenizer(reference, "auto")
    assert middle.decide(16 << 20) is None and "splintr is not installed" in middle.declined
    assert EngineTokenizer(reference, "auto").decide(32 << 20).name == "fastokens"


def test_fastokens_without_a_writable_temporary_directory_is_declined(monkeypatch):
    """The ranks file fastokens loads cannot be written: the engine is declined with the fix, and
    auto keeps the reference instead of failing."""
    import tempfile

    def unwritable(*args, **kwargs):
        raise OSError(28, "No space left on device")

    reference = load_tokenizer("cl100k_base", engine="reference")
    monkeypatch.setattr(tempfile, "TemporaryDirectory", unwritable)
    with pytest.raises(engines.EngineUnavailable, match="set TMPDIR to a writable directory"):
        engines.engine_for("fastokens", reference)
    installed = dict(engines.ENGINE_VERSIONS, splintr=None)
    monkeypatch.setattr(engines, "installed_version", lambda name: installed[name])
    auto = EngineTokenizer(reference, "auto")
    assert auto.decide(1 << 30) is None and "TMPDIR" in auto.declined


def test_splintr_with_pcre2s_own_white_space_is_refused_at_start_up():
    r"""Given tiktoken's pattern with PCRE2's ``\s`` (which matches U+180E, tiktoken's does not),
    splintr splits whitespace before U+180E otherwise: a canary refuses it."""
    reference = load_tokenizer("cl100k_base", engine="reference")
    pattern = without_possessives(reference._enc._pat_str)
    loose = engines.SplintrEncoder(
        reference.rank_lines, pattern, {}, "0.22.0", engines.build_digest(reference, pattern, {})
    )
    assert not np.array_equal(loose.encode("a  \u180e b"), reference.encode("a  \u180e b"))
    with pytest.raises(engines.EngineUnavailable, match="canary"):
        EngineTokenizer(reference, "auto").use(loose)


def test_a_wrong_splintr_is_caught_at_run_time(tmp_path, monkeypatch):
    """splintr's ids changed on one piece of text (as a bug of the library would): the run stops
    naming the engine and its version, and nothing is published."""
    tokenizer = EngineTokenizer(load_tokenizer("cl100k_base", engine="reference"), "splintr")
    engine = tokenizer.engine
    right = engine.encode_joined

    def wrong(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        ids, counts = right(texts)
        return (ids + np.uint32(any("NEEDLE" in text for text in texts))), counts

    monkeypatch.setattr(engine, "encode_joined", wrong)
    mapping = dataclasses.replace(NgramHashMapping.build("cl100k_base"), tokenizer=tokenizer)
    with pytest.raises(EngineMismatch, match=r"splintr 0\.22\.0 gave other ids"):
        hash_texts(["plain text", "the NEEDLE"], tmp_path / "x.ngidx", mapping=mapping)
    assert not (tmp_path / "x.ngidx").exists()


def test_splintr_through_the_command_line(tmp_path):
    """hash --tokenizer-engine splintr writes the reference's rows and records the engine; asked
    for a tokenizer.json it is a one-line usage error."""
    (tmp_path / "a.txt").write_text(CORPUS.read_text(encoding="utf-8")[:20000], encoding="utf-8")
    for engine in ("splintr", "reference"):
        result = run("hash", tmp_path / "a.txt", "-o", tmp_path / engine, "--tokenizer-engine", engine)
        assert result.returncode == 0, result.stderr.decode()
    assert (tmp_path / "splintr" / "rows.npy").read_bytes() == (
        tmp_path / "reference" / "rows.npy"
    ).read_bytes()
    recorded = json.loads((tmp_path / "splintr" / "manifest.json").read_text())["tokenizer"]["engine"]
    assert recorded == {"name": "splintr", "version": "0.22.0", "checked_every": 256}
    refused = run("tokenize", "-", "-t", DEEPSEEK, "--tokenizer-engine", "splintr", stdin=b"x")
    assert_one_line_error(refused, 2, "serves tiktoken encodings only")
