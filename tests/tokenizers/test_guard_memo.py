"""The time guard's passes remembered per machine: a build of an engine that encoded the long runs
in time is not timed again; anything that changes the build, the library or the limits is; an
entry that does not hold its key, or a cache that cannot be written, changes nothing."""

from __future__ import annotations

import json

import pytest

from ngramtool.tokenizers import engines, guard, guard_memo, load_tokenizer
from ngramtool.tokenizers.engine_choice import EngineTokenizer

pytest.importorskip("splintr")


class _Counting:
    """An engine whose calls on a run of the guard's length are counted (everything else its own)."""

    def __init__(self, encoder: engines.Encoder) -> None:
        self.encoder, self.long_runs = encoder, 0

    def __getattr__(self, name: str):
        return getattr(self.encoder, name)

    def encode(self, text: str):
        self.long_runs += len(text) == guard.RUN_CHARS
        return self.encoder.encode(text)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NGRAMTOOL_CACHE_DIR", str(tmp_path))
    return tmp_path


def _start(encoder: engines.Encoder) -> int:
    """Start ``encoder`` as a run does; how many long runs it was given."""
    counting = _Counting(encoder)
    reference = load_tokenizer("cl100k_base", engine="reference")
    EngineTokenizer(reference, "auto").use(counting)
    return counting.long_runs


def _splintr(pattern_extra: str = "") -> engines.SplintrEncoder:
    reference = load_tokenizer("cl100k_base", engine="reference")
    pattern = engines.pinned_splintr_pattern(reference._enc, reference.fingerprint) + pattern_extra
    build = engines.build_digest(reference, pattern, {})
    return engines.SplintrEncoder(
        reference.rank_lines, pattern, {}, engines.ENGINE_VERSIONS["splintr"], build
    )


def test_a_pass_is_remembered_and_the_runs_are_not_timed_again(cache):
    assert _start(_splintr()) == 2
    assert _start(_splintr()) == 0
    (entry,) = (cache / "engines").iterdir()
    form, engine, version, files, build, limits = json.loads(entry.read_text(encoding="utf-8"))
    assert (form, engine, version) == ("ngramtool-time-guard-v1", "splintr", "0.22.0")
    assert (build, limits) == (_splintr().build, [300_000, 1.0])
    assert files and all(file[0].endswith(".so") for file in files)


def test_another_build_or_limit_is_timed_again(cache, monkeypatch):
    assert _start(_splintr()) == 2
    assert _start(_splintr(r"|\p{M}")) == 2  # built from another pattern
    monkeypatch.setattr(guard, "RUN_SECONDS", 2.0)
    assert _start(_splintr()) == 2
    assert len(list((cache / "engines").iterdir())) == 3


def test_a_changed_library_is_timed_again(cache, monkeypatch):
    encoder = _splintr()
    key = guard_memo.memo_key(encoder, (guard.RUN_CHARS, guard.RUN_SECONDS))
    guard_memo.remember(key)
    assert _start(encoder) == 0
    monkeypatch.setattr(encoder, "version", "0.22.1")  # as a reinstall changes what the key holds
    assert guard_memo.memo_key(encoder, (guard.RUN_CHARS, guard.RUN_SECONDS)) != key
    assert _start(encoder) == 2


def test_an_entry_that_does_not_hold_its_key_is_not_trusted(cache):
    assert _start(_splintr()) == 2
    (entry,) = (cache / "engines").iterdir()
    entry.write_text(entry.read_text(encoding="utf-8")[:-1], encoding="utf-8")
    assert _start(_splintr()) == 2
    assert _start(_splintr()) == 0  # the timed pass wrote it again


def test_a_cache_that_cannot_be_written_times_every_start(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("not a directory", encoding="utf-8")
    monkeypatch.setenv("NGRAMTOOL_CACHE_DIR", str(blocked))
    assert _start(_splintr()) == 2
    assert _start(_splintr()) == 2


def test_an_engine_without_a_build_or_a_compiled_library_is_never_remembered():
    reference = load_tokenizer("cl100k_base", engine="reference")
    assert guard_memo.memo_key(reference, (1, 1.0)) is None  # no build
    unnamed = type("Fake", (), {"name": "json", "version": "1", "build": "x"})()
    assert guard_memo.memo_key(unnamed, (1, 1.0)) is None  # a module with no compiled library


def test_a_slow_engine_is_refused_even_after_a_pass_of_another_limit(cache, monkeypatch):
    assert _start(_splintr()) == 2
    monkeypatch.setattr(guard, "RUN_SECONDS", 0.0)
    with pytest.raises(engines.EngineUnavailable, match="took over"):
        _start(_splintr())
