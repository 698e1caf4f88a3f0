"""Spec lint: each finding fires exactly when its condition, recomputed here by hand, holds."""

from __future__ import annotations

import numpy as np
import pytest

from ngramtool import HashSpec, NgramToolError
from ngramtool.analysis.lint import HashConstants, lint_constants, lint_spec
from ngramtool.formats.index import spec_record
from ngramtool.model.presets import PRESETS


def codes(findings) -> list[str]:
    return [f.code for f in findings]


def record(**derived) -> dict:
    """A spec record (the index manifest's schema) with some derived constants replaced."""
    base = spec_record(
        HashSpec(max_ngram=3, heads=2, layer_ids=(0, 4), table_sizes=(1009, 2003), vocab_size=600)
    )
    base["derived"] = {**base["derived"], **derived}
    return base


def test_presets_and_the_engram_defaults_are_clean():
    # LongCat-Flash-Lite's released tables are m + 2i + 1 rows with m = 78 x V: near a multiple
    # of V by design (the finding is the model's, and true of its polynomial hash).
    # modded-nanogpt's bigram table is 5 x its padded vocabulary (50,304), by design too.
    expected = {"longcat-flash": ["near-vocab-multiple"], "speedrun": ["near-vocab-multiple"]}
    for name, chosen in PRESETS.items():
        found = lint_spec(chosen.spec, dim=chosen.dim, hidden_size=chosen.hidden_size)
        assert codes(found) == expected.get(name, []), name


def test_every_finding_has_a_reason_and_a_fix():
    findings = lint_constants(
        HashConstants.from_record(record(multipliers=[["4", "3", "5"], [str(2**62), "7", "9"]])),
        dim=16,
        hidden_size=1000,
    )
    assert codes(findings) == ["even-multiplier", "multiplier-overflow", "dim-not-dividing-hidden"]
    for finding in findings:
        assert finding.message and finding.reason and finding.fix.strip()


@pytest.mark.parametrize(
    ("table", "near"), [(5003, True), (4977, True), (5600, False), (277, False), (523, True)]
)
def test_near_vocab_multiple(table, near):
    vocab = 500
    spec = HashSpec(max_ngram=2, heads=1, layer_ids=(0,), table_sizes=(table,), vocab_size=vocab)
    prime = int(spec.primes[0, 0, 0])
    k = round(prime / vocab)
    assert (k >= 1 and abs(prime - k * vocab) <= 0.05 * vocab) is near
    found = [f for f in lint_spec(spec) if f.code == "near-vocab-multiple"]
    assert bool(found) is near
    if near:
        suggested = int(found[0].fix.split("--table ")[1].split()[0])
        assert abs(suggested - k * vocab) == abs(suggested - (k + 1) * vocab) == vocab // 2


def test_composite_and_duplicate_sizes():
    primes = [[[1009, 1013], [2003, 2011]], [[1019, 1019], [2000, 2017]]]  # a duplicate and an even size
    findings = lint_constants(HashConstants.from_record(record(primes=primes)))
    assert codes(findings) == ["not-prime", "duplicate-table-size"]
    assert "2,000" in findings[0].message and "1,019" in findings[1].message
    assert findings[0].message.startswith("1 table size is not prime: ")
    assert findings[1].message.startswith("1 table size occurs more than once: ")
    assert "layer 4, 2-grams" in findings[1].reason  # same layer and order: identical rows


def test_multiplier_overflow_bound_is_exact():
    bound = (2**63 - 1) // 599  # V'-1 = 599
    ok = HashConstants.from_record(record(multipliers=[[str(bound), "3", "5"], ["7", "9", "11"]]))
    assert "multiplier-overflow" not in codes(lint_constants(ok))
    bad = HashConstants.from_record(record(multipliers=[[str(bound + 1), "3", "5"], ["7", "9", "11"]]))
    assert "multiplier-overflow" in codes(lint_constants(bad))


def test_offsets_past_int32():
    p, q = [n for n in range(1_100_000_000, 1_100_000_200) if all(n % d for d in range(2, 33_200))][:2]
    big = [[[p, q], [907, 911]], [[919, 929], [937, 941]]]  # the small ones above V'=600
    offsets = [[0, p, p + q, p + q + 907], [0, 919, 1848, 2785]]
    as_int32 = lint_constants(HashConstants.from_record(record(primes=big, offsets=offsets), "<i4"))
    assert codes(as_int32) == ["offsets-past-int32"] and "wrap" in as_int32[0].reason
    spec = HashSpec(max_ngram=2, heads=2, layer_ids=(0,), table_sizes=(1_100_000_000,), vocab_size=600)
    assert spec.row_dtype == np.int64
    as_int64 = lint_spec(spec)
    assert codes(as_int64) == ["offsets-past-int32"] and "TileKernels" in as_int64[0].reason


def useful_heads_by_hand(types: int, sizes: list[int]) -> int:
    expected = types
    for h, m in enumerate(sizes):
        expected *= 1 - (1 - 1 / m) ** (types - 1)
        if expected < 1:
            return h + 1
    return len(sizes)


@pytest.mark.parametrize(
    ("heads", "table", "types"), [(40, 1009, None), (8, 646_400, None), (12, 262_144, 111_302)]
)
def test_too_many_heads(heads, table, types):
    spec = HashSpec(max_ngram=2, heads=heads, layer_ids=(0,), table_sizes=(table,), vocab_size=500)
    sizes = [int(p) for p in spec.primes[0, 0]]
    useful = useful_heads_by_hand(types or round(sum(sizes) / heads), sizes)
    found = [f for f in lint_spec(spec, types=types) if f.code == "too-many-heads"]
    assert bool(found) is (useful < heads)
    if found:
        assert f"--heads {useful} " in found[0].fix


@pytest.mark.parametrize(("dim", "hidden"), [(16, 1000), (64, 1024), (80, 1280), (48, 1024)])
def test_dim_must_divide_the_hidden_size(dim, hidden):
    found = lint_spec(HashSpec(), dim=dim, hidden_size=hidden)
    assert bool(found) is (hidden % dim != 0)
    if found:
        suggested = [int(part.split()[0].rstrip(",;")) for part in found[0].fix.split("--dim ")[1:]]
        assert all(hidden % d == 0 for d in suggested)
        assert suggested[0] == min(
            (d for d in range(1, hidden + 1) if hidden % d == 0), key=lambda d: abs(d - dim)
        )


def test_a_record_without_constants_is_a_clear_error():
    with pytest.raises(NgramToolError, match="derived constants"):
        HashConstants.from_record({"heads": 2})
