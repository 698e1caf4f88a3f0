"""Lint an n-gram hash configuration: each finding says what is wrong, why it matters, and the fix.

A :class:`HashConstants` holds the numbers a hash kernel consumes (multipliers, table sizes,
offsets, row dtype). ngramtool derives them from a :class:`~ngramtool.spec.hashspec.HashSpec`, which rules
out some mistakes by construction (sizes are distinct primes, multipliers odd and bounded); the
same checks matter for constants that come from elsewhere (an index manifest, another tool).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..formats.artifacts import Kind, detect
from ..formats.dataset import read_dataset
from ..formats.index import MANIFEST, read_manifest, spec_record
from ..spec.hashspec import INT32_LIMIT, INT64_MAX, HashSpec
from ..util.errors import NgramToolError, UsageError
from ..util.primes import is_prime
from ..util.wording import agree, plural
from .expectations import expected_shared_share

NEAR_MULTIPLE = 0.05  # a table size within 5% of V' of some k * V' is flagged


@dataclass(frozen=True)
class HashConstants:
    """The derived constants of a hash: what a kernel consumes.

    Attributes:
        vocab_size: V'; ids fed to the hash are below it.
        layer_ids: the Engram layers.
        multipliers: [L][N] Python ints (external values may not fit int64).
        primes: int64 [L, N-1, K] table sizes.
        offsets: int64 [L, (N-1)K] first row of each column in the layer's table.
        row_dtype: the dtype the rows are stored in.
        family: the hash family (docs/families.md). The tutorial's and LongCat's table sizes are
            not prime by their definition, and their heads have multipliers (or weights) of their
            own: the prime, duplicate-size and multiplier checks are Engram's and stored constants'.
        vocab_mismatch: a released model's preset used with a vocabulary of another V' on purpose
            (:func:`ngramtool.model.presets.check_released_vocabulary`), as a manifest records it.
    """

    vocab_size: int
    layer_ids: tuple[int, ...]
    multipliers: tuple[tuple[int, ...], ...]
    primes: np.ndarray
    offsets: np.ndarray
    row_dtype: np.dtype
    family: str = "engram"
    vocab_mismatch: dict[str, Any] | None = None

    @property
    def prime_sized(self) -> bool:
        """Whether the family sizes tables by primes searched for, one multiplier set per layer."""
        return self.family in ("engram", "stored")

    @classmethod
    def from_spec(cls, spec: HashSpec) -> HashConstants:
        """The constants ngramtool derives from ``spec``."""
        per_layer = spec.multipliers.tolist() if spec.layer_mix else []
        return cls(
            spec.vocab_size,
            spec.layer_ids,
            tuple(tuple(int(m) for m in row) for row in per_layer),
            spec.primes,
            spec.offsets,
            spec.row_dtype,
            spec.family,
        )

    @classmethod
    def from_record(cls, record: Mapping[str, Any], row_dtype: str | None = None) -> HashConstants:
        """The constants of a spec record with a ``derived`` block (index manifest, ``spec show --json``).

        ``row_dtype`` (e.g. ``"<i4"``) is the dtype the rows were stored in; by default the record's
        own ``row_dtype``, else the smallest that ngramtool would choose.
        """
        try:
            derived = record["derived"]
            layers, heads = len(record["layer_ids"]), int(record["heads"])
            primes = np.asarray(derived["primes"], dtype=np.int64).reshape(layers, -1, heads)
            offsets = np.asarray(derived["offsets"], dtype=np.int64).reshape(layers, -1)
            family = str(record.get("family", "engram"))
            per_layer = derived["multipliers"] if family in ("engram", "stored") else []
            multipliers = tuple(tuple(int(m) for m in row) for row in per_layer)
            vocab_size = int(record["vocab_size"])
        except (KeyError, TypeError, ValueError) as exc:
            raise NgramToolError(
                f"not a spec record with derived constants ({exc!r}); give an index directory, its "
                "manifest.json, or the output of 'ngramtool spec show --json'"
            ) from None
        last = primes.reshape(layers, -1)[:, -1]
        needs64 = int((offsets[:, -1] + last).max()) >= INT32_LIMIT
        dtype = row_dtype or record.get("row_dtype") or ("<i8" if needs64 else "<i4")
        layer_ids = tuple(record["layer_ids"])
        return cls(vocab_size, layer_ids, multipliers, primes, offsets, np.dtype(dtype), family)


@dataclass(frozen=True)
class Finding:
    """One lint warning: a stable ``code``, what was found, why it matters, and how to fix it."""

    code: str
    message: str
    reason: str
    fix: str

    def to_dict(self) -> dict[str, str]:
        """The four fields."""
        return asdict(self)


def recorded_constants(target: str | Path) -> HashConstants:
    """The constants an index, a merged dataset, a manifest.json or a spec JSON file (``ngramtool
    spec show --json``, or a saved spec whose constants are derived) records."""
    target = Path(target)
    kind = detect(target)
    if kind is Kind.DATASET:
        manifest = read_dataset(target)
    elif kind is Kind.INDEX:
        manifest = read_manifest(target)
    elif target.name == MANIFEST:
        manifest = read_manifest(target.parent)
    else:
        try:
            manifest = {"spec": json.loads(target.read_text(encoding="utf-8"))}
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise UsageError(f"cannot read {target} as JSON: {exc}") from None
    rows = manifest.get("arrays", {}).get("rows", {}).get("dtype")
    if not isinstance(manifest.get("spec"), dict):
        raise UsageError(f"{target} holds no spec record")
    if "derived" not in manifest["spec"]:  # a saved spec: derive the constants from its fields
        manifest["spec"] = spec_record(HashSpec.from_dict(manifest["spec"]))
    constants = HashConstants.from_record(manifest["spec"], rows)
    return replace(constants, vocab_mismatch=manifest.get("vocab_mismatch"))


def lint_spec(
    spec: HashSpec, *, dim: int | None = None, hidden_size: int | None = None, types: int | None = None
) -> list[Finding]:
    """Lint the constants ngramtool derives from ``spec`` (see :func:`lint_constants`)."""
    return lint_constants(HashConstants.from_spec(spec), dim=dim, hidden_size=hidden_size, types=types)


def lint_constants(
    constants: HashConstants,
    *,
    dim: int | None = None,
    hidden_size: int | None = None,
    types: int | None = None,
) -> list[Finding]:
    """Every finding for ``constants``.

    Args:
        constants: what to check.
        dim: values per row (per head), for the hidden-size check.
        hidden_size: the width the memory is meant to fit; ``dim`` should divide it.
        types: expected distinct n-grams per order, for the heads check (default: the table size).
    """
    by_primes = constants.prime_sized
    findings = [
        *_other_vocabulary(constants),
        *_tables_below_vocab(constants),
        *_near_vocab_multiples(constants),
        *(_bad_primes(constants) if by_primes else []),
        *(_duplicate_sizes(constants) if by_primes else []),
        *_multipliers(constants),
        *_row_overflow(constants),
        *_too_many_heads(constants, types),
    ]
    if dim is not None and hidden_size is not None:
        findings.extend(_dim_vs_hidden(constants, dim, hidden_size))
    return findings


def _where(constants: HashConstants, li: int, oi: int) -> str:
    return f"layer {constants.layer_ids[li]}, {oi + 2}-grams"


def _other_vocabulary(c: HashConstants) -> list[Finding]:
    mismatch = c.vocab_mismatch
    if mismatch is None:
        return []
    name, model = mismatch["preset"], mismatch["model_vocab_size"]
    return [
        Finding(
            "vocab-mismatch",
            f"the preset {name} is the released model, whose tokenizer has V'={model:,}, but these "
            f"constants were made for V'={mismatch['vocab_size']:,}",
            "the multipliers and the pad follow V': these rows are not the ones the model was trained "
            "with, so a table of the model read at them returns other rows",
            f"use the model's own tokenizer (V'={model:,}), or a spec of your own model (spec from-config)",
        )
    ]


def _sizes_finding(
    code: str, sizes: set[int], verbs: tuple[str, str], reason: str, fix: str
) -> list[Finding]:
    """The finding ``code`` listing ``sizes`` (``N table sizes are <verbs>: a, b, ...``), or none."""
    if not sizes:
        return []
    listed = sorted(sizes)
    says = f"{plural(len(listed), 'table size')} {agree(len(listed), *verbs)}: "
    return [Finding(code, says + ", ".join(f"{p:,}" for p in listed[:6]), reason, fix)]


def _tables_below_vocab(c: HashConstants) -> list[Finding]:
    v = c.vocab_size
    return _sizes_finding(
        "table-below-vocab",
        {int(p) for p in c.primes.ravel() if p < v},
        (f"is smaller than V'={v:,}", f"are smaller than V'={v:,}"),
        "a table with fewer rows than the vocabulary has tokens cannot give even the 2-grams of "
        "one token distinct rows: most n-grams collide (a size written 646,400 and read as two "
        "sizes, 646 and 400, looks like this)",
        "give tables of several times V' (the Engram demo: 5 x V'); write sizes as 646400, "
        "646_400 or 646,400 (one size) and separate several with commas (262144,1048576)",
    )


def _near_vocab_multiples(c: HashConstants) -> list[Finding]:
    v = c.vocab_size
    near = sorted({int(p) for p in c.primes.ravel() if _near_multiple(int(p), v)})
    if not near:
        return []
    k = round(near[0] / v)
    return [
        Finding(
            "near-vocab-multiple",
            f"{plural(len(near), 'table size')} {agree(len(near), 'lies', 'lie')} within "
            f"{NEAR_MULTIPLE:.0%} of V' of a multiple of V'={v:,} "
            f"(e.g. {near[0]:,} vs {k} x V' = {k * v:,})",
            "a radix-style n-gram hash (prev * V' + cur) mod M with M close to k * V' keeps only about k "
            "distinct predecessors per token; Engram's multiply-XOR is not radix-style, but the alignment "
            "buys nothing and breaks any consumer that hashes that way",
            f"move the base size away from every multiple of V', e.g. --table {round((k + 0.5) * v)} "
            f"(halfway between {k} and {k + 1} x V')",
        )
    ]


def _near_multiple(size: int, vocab_size: int) -> bool:
    """True when ``size`` is within NEAR_MULTIPLE * V' of k * V' for some k >= 1."""
    k = round(size / vocab_size)
    return k >= 1 and abs(size - k * vocab_size) <= NEAR_MULTIPLE * vocab_size


def _bad_primes(c: HashConstants) -> list[Finding]:
    return _sizes_finding(
        "not-prime",
        {int(p) for p in c.primes.ravel() if not is_prime(int(p))},
        ("is not prime", "are not prime"),
        "mix mod M with a composite M = a*b leaks structure of mix mod a; with an even M the row's "
        "parity is the XOR of the ids' parities (odd multipliers), so half the rows pair up",
        "use the smallest unused prime above each size, as Engram does (ngramtool derives them "
        "from the base sizes: regenerate the constants with 'ngramtool spec show --json')",
    )


def _duplicate_sizes(c: HashConstants) -> list[Finding]:
    counts = Counter(int(p) for p in c.primes.ravel())
    same_mix = [
        _where(c, li, oi)
        for li in range(c.primes.shape[0])
        for oi in range(c.primes.shape[1])
        if len(set(c.primes[li, oi].tolist())) < c.primes.shape[2]
    ]
    wasted = (
        f"; within {', '.join(same_mix)} heads share one mix, so equal sizes give identical rows "
        "and the extra head is wasted"
        if same_mix
        else ""
    )
    return _sizes_finding(
        "duplicate-table-size",
        {p for p, n in counts.items() if n > 1},
        ("occurs more than once", "occur more than once"),
        "Engram makes every table size of the whole memory distinct so that no two heads collide "
        f"on the same n-grams{wasted}",
        "give every (layer, order, head) its own prime: derive them with one shared 'seen' set "
        "(docs/engram-spec.md §3.2), as 'ngramtool spec show' does",
    )


def _multipliers(c: HashConstants) -> list[Finding]:
    even, overflow = [], []
    for li, row in enumerate(c.multipliers):
        for lag, m in enumerate(row):
            where = f"layer {c.layer_ids[li]} lag {lag}: {m}"
            if m % 2 == 0:
                even.append(where)
            if m * (c.vocab_size - 1) > INT64_MAX or m < 0:
                overflow.append(where)
    out = []
    if even:
        out.append(
            Finding(
                "even-multiplier",
                f"{plural(len(even), 'even multiplier')}: {'; '.join(even[:4])}",
                "an even multiplier m = 2^j * u zeroes the low j bits of every product and, once products "
                "wrap, maps ids 2^(64-j) apart to the same value; an odd multiplier makes id -> id * m a "
                "bijection mod 2^64, so the XOR mix keeps every bit of every id",
                "use odd multipliers 2r+1, as Engram does (docs/engram-spec.md §3.1)",
            )
        )
    if overflow:
        bound = INT64_MAX // c.vocab_size
        out.append(
            Finding(
                "multiplier-overflow",
                f"{plural(len(overflow), 'multiplier')} times V'-1 = {c.vocab_size - 1:,} leave int64: "
                + "; ".join(overflow[:4]),
                "products wrap around and mixes turn negative; floor modulo (numpy, torch) and "
                "truncating modulo (C, CUDA) then disagree, so two implementations give different rows",
                f"keep every multiplier in [1, {bound:,}] (floor((2^63-1)/V')), as Engram's derivation "
                "does, and feed only canonical ids below V'",
            )
        )
    return out


def _row_overflow(c: HashConstants) -> list[Finding]:
    last = c.primes.reshape(c.primes.shape[0], -1)[:, -1]
    rows = c.offsets[:, -1] + last
    over = [(c.layer_ids[li], int(r)) for li, r in enumerate(rows) if r >= INT32_LIMIT]
    if not over:
        return []
    listing = ", ".join(f"layer {layer}: {r:,} rows" for layer, r in over)
    if c.row_dtype.itemsize <= 4:
        reason = "rows are stored as int32, so offsets and rows past 2^31 - 1 wrap to negative numbers"
    else:
        reason = (
            "ngramtool stores these rows as int64, but consumers with int32 offsets or rows "
            "(TileKernels' make_offsets and engram_hash) overflow"
        )
    return [
        Finding(
            "offsets-past-int32",
            f"offsets reach past 2^31 ({listing})",
            reason,
            "keep each layer's table below 2^31 rows (smaller tables, fewer heads, or more Engram "
            "layers), or use int64 offsets and rows everywhere",
        )
    ]


def _too_many_heads(c: HashConstants, types: int | None) -> list[Finding]:
    heads = c.primes.shape[2]
    excess = []
    for li in range(c.primes.shape[0]):
        for oi in range(c.primes.shape[1]):
            sizes = [int(p) for p in c.primes[li, oi]]
            t = types if types is not None else round(sum(sizes) / heads)
            useful = _useful_heads(t, sizes)
            if useful < heads:
                excess.append((_where(c, li, oi), t, useful))
    if not excess:
        return []
    where, t, useful = excess[0]
    also = f" (and {plural(len(excess) - 1, 'more layer/order group')})" if len(excess) > 1 else ""
    return [
        Finding(
            "too-many-heads",
            f"{where}{also}: {heads} heads, but with {t:,} distinct n-grams fewer than one is expected to "
            f"collide on all of the first {useful} heads",
            "a head helps while it separates n-grams that collide on every other head; past that point it "
            "costs a full table and adds no distinguishability (uniform-random estimate, docs/analysis.md)",
            f"use --heads {useful} and spend the rows on larger tables"
            + ("" if types is not None else ", or pass --types with the corpus's distinct n-gram count"),
        )
    ]


def _useful_heads(types: int, sizes: list[int]) -> int:
    """Heads until the expected n-grams that collide on every head drop below one."""
    expected = float(types)
    for h, size in enumerate(sizes):
        expected *= expected_shared_share(types, size)
        if expected < 1.0:
            return h + 1
    return len(sizes)


def _dim_vs_hidden(c: HashConstants, dim: int, hidden: int) -> list[Finding]:
    if hidden % dim == 0:
        return []
    per_layer = c.primes.shape[1] * c.primes.shape[2]
    divisors = [d for d in range(1, math.isqrt(hidden) + 1) if hidden % d == 0]
    divisors = sorted({*divisors, *(hidden // d for d in divisors)}, key=lambda d: (abs(d - dim), d))
    exact = f"; --dim {hidden // per_layer} makes e_t exactly {hidden}" if hidden % per_layer == 0 else ""
    return [
        Finding(
            "dim-not-dividing-hidden",
            f"--dim {dim} does not divide the hidden size {hidden} "
            f"({hidden} = {hidden // dim} x {dim} + {hidden % dim})",
            "the memory vector is a concatenation of per-head slices of dim values; when dim does not "
            "divide the hidden size the slices cannot tile it, and projections and kernels that work "
            "in hidden-size blocks need padding",
            f"use a divisor of {hidden} near {dim}: {', '.join(f'--dim {d}' for d in divisors[:3])}{exact}",
        )
    ]
