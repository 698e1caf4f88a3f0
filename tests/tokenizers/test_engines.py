"""The fast tokenizer engines (fastokens; splintr for tiktoken encodings): their ids are the
reference's on every test corpus and tokenizer they serve, an engine is refused when a canary
differs or a long run is slow, and a wrong engine is caught by the run-time check before anything
is published. splintr's own refusals and pattern: test_engine_splintr.py."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from conftest import CORPUS, DATA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ngramtool import NgramHashMapping, OutputOptions, hash_files, hash_texts
from ngramtool.formats.settings import settings_difference
from ngramtool.inputs.encoding import iter_text_chunks, iter_token_chunks
from ngramtool.tokenizers import engine_choice, engines, guard, load_tokenizer
from ngramtool.tokenizers.engine_choice import EngineTokenizer, engine_record
from ngramtool.tokenizers.guard import EngineMismatch
from ngramtool.tokenizers.textcuts import safe_cut
from ngramtool.tokenizers.tiktoken_splintr import pcre2_pattern
from ngramtool.util.errors import UsageError

pytest.importorskip("fastokens")
pytest.importorskip("splintr")

QWEN = str(DATA / "tokenizers" / "qwen-style" / "tokenizer.json")
GLM = str(DATA / "tokenizers" / "glm-style" / "tokenizer.json")
DEEPSEEK = str(DATA / "tokenizers" / "deepseek-v3.tokenizer.json.gz")
TEXT = CORPUS.read_text(encoding="utf-8")[:60000]


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("engine") / "corpus.txt"
    tail = "\n<|endoftext|> <|im_end|> <｜end▁of▁sentence｜> [gMASK]<sop><|user|>\r\n\t 12345 \u180e x\n"
    path.write_text(TEXT + tail, encoding="utf-8")
    return str(path)


def _ids(tokenizer, inputs: list[str]) -> np.ndarray:
    return np.concatenate([chunk.tokens for chunk in iter_token_chunks(inputs, tokenizer, workers=2)])


TOKENIZERS = [
    ("fastokens", "cl100k_base", None),
    ("fastokens", "cl100k_base", "<|endoftext|>"),
    ("fastokens", "r50k", "all"),
    ("fastokens", DEEPSEEK, None),
    ("fastokens", QWEN, None),
    ("fastokens", QWEN, "none"),
    ("fastokens", QWEN, "<|im_end|>"),
    ("fastokens", GLM, None),
    ("fastokens", GLM, "none"),
    ("fastokens", GLM, "<|user|>"),
    ("splintr", "cl100k_base", None),
    ("splintr", "cl100k_base", "all"),
    ("splintr", "cl100k_base", "<|endoftext|>"),
    ("splintr", "r50k", None),
    ("splintr", "r50k", "all"),
    ("splintr", "gpt2", None),
]


@pytest.mark.parametrize(("engine", "name", "special"), TOKENIZERS)
def test_the_engine_gives_the_reference_ids_on_the_corpus(engine, name, special, corpus_file, r50k_path):
    """Every offline tokenizer an engine serves, under several special-token rules: the engine's
    ids are the reference's, the texts joined in batches of pieces."""
    spec = str(r50k_path) if name == "r50k" else name
    fast = load_tokenizer(spec, special, engine=engine)
    assert isinstance(fast, EngineTokenizer) and fast.engine is not None and fast.engine.name == engine
    reference = load_tokenizer(spec, special, engine="reference")
    assert np.array_equal(_ids(fast, [corpus_file]), _ids(reference, [corpus_file]))


adversarial = st.lists(
    st.one_of(
        st.text(st.characters(codec="utf-8"), max_size=20),
        st.text(" \t\n\r\u180e\u3000\xa0\u2028", max_size=12),
        st.text("0123456789١٢", min_size=1, max_size=12),
        st.sampled_from(["<|endoftext|>", "<|endoftext", "|>", "<|im_end|>", "<｜end▁of▁sentence｜>", "'s"]),
        st.sampled_from(["[gMASK]", "<sop>", "<|user|>", "[MASK", "<|", "'ſ", "'\u212a"]),
        st.sampled_from(["（）", "Ⅻ", "@゠.x", "𝐀", "👩\u200d👧", "שָׁלוֹם", "你好", "\x00", "ÿ"]),
    ),
    max_size=12,
).map("".join)


@pytest.mark.parametrize(
    ("engine", "name", "special"),
    [
        ("fastokens", "cl100k_base", None),
        ("fastokens", DEEPSEEK, None),
        ("fastokens", GLM, None),
        ("splintr", "cl100k_base", None),
        ("splintr", "cl100k_base", "all"),
        ("splintr", "gpt2", None),
    ],
)
@settings(max_examples=60, suppress_health_check=list(HealthCheck))
@given(text=adversarial, cut_at=st.floats(0, 1))
def test_adversarial_text_and_its_cut_pieces_encode_alike(engine, name, special, text, cut_at):
    """Random Unicode, whitespace and digit runs, special-token look-alikes, known divergences:
    the engine's ids equal the reference's, whole and cut where the reader may cut."""
    fast = load_tokenizer(name, special, engine=engine)
    reference = load_tokenizer(name, special, engine="reference")
    expected = reference.encode(text)
    assert np.array_equal(fast.encode(text), expected)
    cut = safe_cut(text, 0, max(1, int(len(text) * cut_at)))
    if cut > 0 and reference.cut_safe:
        ids, counts = fast.encode_joined([text[:cut], text[cut:]])
        assert np.array_equal(ids, expected) and counts.sum() == expected.shape[0]


@pytest.mark.parametrize(
    ("engine", "name"),
    [("fastokens", "cl100k_base"), ("fastokens", QWEN), ("fastokens", GLM), ("splintr", "gpt2")],
)
def test_lone_surrogates_are_refused_alike(engine, name):
    """Text the engine cannot take (a lone surrogate) is left to the reference, which refuses it."""
    fast = load_tokenizer(name, engine=engine)
    reference = load_tokenizer(name, engine="reference")
    with pytest.raises((UnicodeEncodeError, TypeError)) as refused:
        reference.encode_joined(["a\ud800b"])
    with pytest.raises(refused.type):
        fast.encode_joined(["a\ud800b"])


def test_very_long_lines_encode_alike():
    """A 300,000-character line of mixed text, and the time guard's runs."""
    fast = load_tokenizer(DEEPSEEK, engine="fastokens")
    reference = load_tokenizer(DEEPSEEK, engine="reference")
    line = ("word 123 , ." * 25000)[:300000]
    assert np.array_equal(fast.encode(line), reference.encode(line))


def test_the_pattern_for_pcre2_spells_out_white_space_and_the_end():
    r"""``\s``/``\S`` become Unicode's White_Space (without U+180E) inside and outside classes;
    ``$`` becomes ``\z``; other escapes stay."""
    white = pcre2_pattern(r"\s")
    assert white.startswith("[") and "180E" not in white and r"\x{3000}" in white
    assert pcre2_pattern(r"[^\s\p{L}]+$|\S\n") == (f"[^{white[1:-1]}\\p{{L}}]+\\z|[^{white[1:-1]}]\\n")


class _Wrong:
    """An engine that gives the reference's ids except for text holding ``needle``."""

    name, version = "wrong", "0"

    def __init__(self, reference, needle: str) -> None:
        self.reference, self.needle = reference, needle

    def encode(self, text: str) -> np.ndarray:
        ids = self.reference.encode(text)
        return ids + 1 if self.needle in text and ids.shape[0] else ids

    def encode_joined(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        arrays = [self.encode(text) for text in texts]
        counts = np.asarray([a.shape[0] for a in arrays], dtype=np.int64)
        return (np.concatenate(arrays) if arrays else np.zeros(0, np.uint32)).astype(np.uint32), counts


def test_a_canary_that_differs_refuses_the_engine():
    """An engine wrong on whitespace before U+180E is refused at start-up."""
    reference = load_tokenizer("cl100k_base", engine="reference")
    tokenizer = EngineTokenizer(reference, "auto")
    with pytest.raises(engines.EngineUnavailable, match="canary"):
        tokenizer.use(_Wrong(reference, "\u180e"))
    assert tokenizer.engine is None


def test_an_engine_slow_on_a_long_run_is_refused(monkeypatch):
    """The time guard: a 300,000-character run must encode within the limit."""
    reference = load_tokenizer("cl100k_base", engine="reference")
    monkeypatch.setattr(guard, "RUN_SECONDS", 0.0)
    with pytest.raises(engines.EngineUnavailable, match="took over"):
        EngineTokenizer(reference, "auto").use(_Wrong(reference, "never"))


def _wrong_engine(needle: str, check_every: int = 256) -> EngineTokenizer:
    reference = load_tokenizer("cl100k_base", engine="reference")
    tokenizer = EngineTokenizer(reference, "auto", check_every)
    tokenizer.use(_Wrong(reference, needle))
    return tokenizer


def _mapping(tokenizer: EngineTokenizer) -> NgramHashMapping:
    """cl100k_base's mapping with ``tokenizer`` encoding its text."""
    return dataclasses.replace(NgramHashMapping.build("cl100k_base"), tokenizer=tokenizer)


def test_a_wrong_engine_is_caught_at_run_time_and_nothing_is_published(tmp_path):
    """The first pieces are always checked: the run stops with an error naming the input and the
    offset and how to run without the engine; no index is left."""
    (tmp_path / "a.txt").write_text("plain text\n" * 50, encoding="utf-8")
    (tmp_path / "b.txt").write_text("some text\nwith the NEEDLE in it\n", encoding="utf-8")
    mapping = _mapping(_wrong_engine("NEEDLE"))
    out = tmp_path / "out.ngidx"
    with pytest.raises(EngineMismatch) as caught:
        hash_files([str(tmp_path / "a.txt"), str(tmp_path / "b.txt")], out, mapping=mapping)
    message = str(caught.value)
    assert "b.txt, near byte 0" in message and "--tokenizer-engine reference" in message
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith("out")]


def test_the_sample_reaches_pieces_after_the_first_ones(tmp_path, monkeypatch):
    """A wrong piece far into a run is caught when it is sampled (here every piece is)."""
    monkeypatch.setattr(guard, "CHECK_SLICE_CHARS", 4)
    monkeypatch.setattr(guard, "FIRST_CHECKED_CHARS", 40)  # the first pieces: the first 4
    texts = [f"document {i}" for i in range(300)] + ["the NEEDLE"]
    with pytest.raises(EngineMismatch, match="the text given"):
        hash_texts(texts, tmp_path / "x.ngidx", mapping=_mapping(_wrong_engine("NEEDLE", 1)))
    assert not (tmp_path / "x.ngidx").exists()
    unchecked = _wrong_engine("NEEDLE", 10**9)
    ids = np.concatenate([c.tokens for c in iter_text_chunks(texts, unchecked)])
    assert ids.shape[0] > 0  # past the first pieces and off the sample: not caught (the cost of sampling)


def test_the_first_pieces_are_checked_by_their_beginning_up_to_a_cut(monkeypatch):
    """Of a long first piece the reference encodes only the text up to a cut that keeps the ids
    (about FIRST_CHECKED_CHARS characters) and compares it with the start of the engine's ids of
    the whole piece: a wrong id there stops the run, one past it is left to the sample."""
    monkeypatch.setattr(guard, "FIRST_CHECKED_CHARS", 400)
    reference = load_tokenizer("cl100k_base", engine="reference")
    line = "plain words on a line\n"
    early, late = "NEEDLE " + line * 100, line * 100 + "NEEDLE"
    encoded: list[str] = []

    def compare(text: str) -> None:
        """An engine whose id of the needle is wrong, checked as the first piece of a run."""
        ids = reference.encode(text).copy()
        ids[reference.encode(text[: text.index("NEEDLE")]).shape[0]] += 1
        check = guard.RunCheck(10**9, engine_choice._prefix_cut(reference))
        counts = np.array([ids.shape[0]])
        recorded = lambda t: encoded.append(t) or reference.encode(t)  # noqa: E731
        check.compare([text], ids, counts, recorded, reference.encode, "wrong 0")

    with pytest.raises(EngineMismatch, match="NEEDLE"):
        compare(early)
    compare(late)  # wrong, and not caught: past the cut
    assert late.startswith(encoded[-1]) and safe_cut(late, 0, 400) == len(encoded[-1]) > 0


def test_the_sample_is_about_one_character_in_every_spread_over_the_pieces(monkeypatch):
    """After the first pieces, a piece is checked each time the run passes a multiple of
    every * CHECK_SLICE_CHARS characters: small pieces now and then, each long one."""
    monkeypatch.setattr(guard, "CHECK_SLICE_CHARS", 10)
    monkeypatch.setattr(guard, "FIRST_CHECKED_CHARS", 50)  # passed within the first 4 pieces
    check = guard.RunCheck(every=4)
    chosen = check.chosen(["x" * 25] * 100)
    assert chosen[: guard.FIRST_CHECKED] == [(i, 50) for i in range(guard.FIRST_CHECKED)]
    assert len(chosen) - guard.FIRST_CHECKED == 2500 // 40 - 100 // 40  # multiples of 40 passed
    assert check.chosen(["y" * 1000] * 3) == [(0, 10), (1, 10), (2, 10)]


def test_small_first_pieces_are_checked_until_the_first_characters_have_gone_by(monkeypatch):
    """A run's first pieces are small (the stream's ramp): the first pieces go on past the fourth
    until FIRST_CHECKED_CHARS characters of the run have gone by, then the sample takes over."""
    monkeypatch.setattr(guard, "FIRST_CHECKED_CHARS", 100)
    check = guard.RunCheck(every=1 << 20)
    chosen = check.chosen(["x" * 10] * 30)
    assert chosen == [(i, 100) for i in range(10)]  # 10 pieces of 10 characters reach 100


def test_a_long_piece_without_a_cut_is_checked_by_its_beginning_encoded_twice():
    """No cut that keeps the ids (one long word): the beginning is encoded by both the engine and
    the reference, not the whole piece by the reference."""
    reference = load_tokenizer("cl100k_base", engine="reference")
    text = "x" * (guard.FIRST_CHECKED_CHARS * 4)
    seen: list[int] = []
    check = guard.RunCheck(prefix_cut=engine_choice._prefix_cut(reference))
    ids = reference.encode(text)
    wrong = lambda t: reference.encode(t) + 1  # noqa: E731
    with pytest.raises(EngineMismatch):
        check.compare(
            [text],
            ids,
            np.array([ids.shape[0]]),
            lambda t: seen.append(len(t)) or reference.encode(t),
            wrong,
            "w 0",
        )
    assert seen == [guard.FIRST_CHECKED_CHARS]


def test_auto_keeps_the_reference_for_small_or_unknown_input_and_falls_back(monkeypatch):
    """auto: the engine for large input of known size; the reference for small or unknown, and
    when the engine is not installed (a named engine is then a usage error with the pip hint)."""
    reference = load_tokenizer(QWEN, engine="reference")
    auto = EngineTokenizer(reference, "auto")
    assert auto.decide(1000) is None and auto.decide(None) is None
    assert engine_record(auto)["name"] == "reference"
    assert auto.decide(1 << 30) is not None and engine_record(auto)["name"] == "fastokens"
    monkeypatch.setattr(engines, "installed_version", lambda name: None)
    missing = EngineTokenizer(reference, "auto")
    assert missing.decide(1 << 30) is None and "pip install 'ngramtool[fast]'" in missing.declined
    with pytest.raises(UsageError, match=r"ngramtool\[fast\]"):
        EngineTokenizer(reference, "fastokens")


def test_no_engine_for_bytes_and_an_unknown_engine_is_a_usage_error():
    assert load_tokenizer("bytes", engine="auto") is load_tokenizer("bytes", engine="reference")
    with pytest.raises(UsageError, match="no engine serves bytes"):
        load_tokenizer("bytes", engine="fastokens")
    with pytest.raises(UsageError, match="use one of"):
        load_tokenizer("cl100k_base", engine="quick")
    with pytest.raises(UsageError, match="use one of"):
        NgramHashMapping.build("cl100k_base", engine="quick")


@pytest.mark.parametrize(("fast", "name"), [("fastokens", DEEPSEEK), ("splintr", "cl100k_base")])
def test_an_index_made_with_the_engine_is_the_reference_index(fast, name, tmp_path, corpus_file):
    """Same arrays byte for byte, same fingerprints; the manifest names the engine; resume and
    merge see no difference in settings."""
    made = {}
    for engine in (fast, "reference"):
        mapping = dataclasses.replace(
            NgramHashMapping.build(name), tokenizer=load_tokenizer(name, engine=engine)
        )
        hash_files([corpus_file], tmp_path / engine, mapping=mapping, outputs=OutputOptions(force=True))
        made[engine] = json.loads((tmp_path / engine / "manifest.json").read_text())
    for array in ("tokens", "rows", "doc_offsets", "lut"):
        assert (tmp_path / fast / f"{array}.npy").read_bytes() == (
            tmp_path / "reference" / f"{array}.npy"
        ).read_bytes()
    recorded = {
        "name": fast,
        "version": {"fastokens": "0.3.5", "splintr": "0.22.0"}[fast],
        "checked_every": 256,
    }
    assert made[fast]["tokenizer"]["engine"] == recorded
    assert made["reference"]["tokenizer"]["engine"]["name"] == "reference"
    assert settings_difference(made[fast], made["reference"]) is None


def test_a_fast_engine_gets_more_hash_threads():
    """A hash thread for every two tokenizer threads with an engine (eight with tiktoken)."""
    from ngramtool.run.jobs import MAX_HASH_THREADS, hash_threads

    assert [hash_threads(w, "numba", fast_engine=True) for w in (1, 2, 4, 16)] == [1, 1, 2, MAX_HASH_THREADS]
    assert [hash_threads(w, "numba") for w in (2, 4)] == [1, 1]


def test_an_unverified_engine_version_leaves_the_text_to_the_reference_with_one_note(tmp_path, monkeypatch):
    """A dependency's range may install another version than the verified one: the reference then
    encodes, the ids are the same, and the stream says so once."""
    from dataclasses import replace

    from ngramtool.inputs.stream import open_stream

    monkeypatch.setattr(engines, "installed_version", lambda engine: "9.9.9")
    for engine in engines.AUTO_ORDER["tiktoken"]:
        monkeypatch.setitem(engine_choice.AUTO_MIN_BYTES, ("tiktoken", engine), 0)
    text = tmp_path / "t.txt"
    text.write_text("hello world, " * 200)
    reference = load_tokenizer("cl100k_base", engine="reference")
    mapping = replace(NgramHashMapping.build("cl100k_base"), tokenizer=EngineTokenizer(reference, "auto"))
    stream = open_stream([text], mapping)
    assert len(stream.notes) == len(engines.AUTO_ORDER["tiktoken"])
    assert all("9.9.9 is installed, its ids are verified for" in note for note in stream.notes)
    assert stream.tokenizer["engine"]["name"] == "reference"
    ids = np.concatenate([chunk.tokens for chunk in stream.chunks()])
    assert ids.tolist() == reference.encode("hello world, " * 200).tolist()


@pytest.mark.parametrize("library", ["tiktoken", "tokenizers", "no-such-library-ngramtool"])
def test_a_reference_librarys_version_is_its_distributions(library):
    """The manifest's reference version: the imported module's ``__version__`` where it states one
    (no importlib.metadata at start-up), the same as its distribution's."""
    import importlib.metadata

    try:
        want = importlib.metadata.version(library)
    except importlib.metadata.PackageNotFoundError:
        want = None
    assert engine_choice._version(library) == want


@pytest.mark.parametrize("engine", sorted(engines.ENGINE_VERSIONS))
def test_the_installed_version_is_the_distributions(engine):
    """Read from the module's ``__version__`` where it states one (splintr), else from the
    distribution (fastokens): either way the version pip installed."""
    import importlib.metadata

    pytest.importorskip(engine)
    assert engines.installed_version(engine) == importlib.metadata.version(engines.ENGINE_PACKAGES[engine])


def test_an_engine_that_is_not_installed_has_no_version(monkeypatch):
    monkeypatch.setitem(engines.ENGINE_PACKAGES, "nosuchengine", "nosuchengine-dist")
    assert engines.installed_version("nosuchengine") is None
