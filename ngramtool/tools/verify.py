"""Re-derive every row of an index or a stream and check every checksum.

The rows of an index are a pure function of its tokens, its lookup table, its HashSpec, its
document offsets and its boundary policy, all of which the index carries. ``verify_index``
recomputes them chunk by chunk (bounded memory) and raises at the first difference. A
tokens-only index stores no rows to compare: its tokens are checked block by block against their
checksums, and every token must map to a canonical id (so that its rows can be computed).
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..formats.artifacts import IndexLike, Kind, expect_kind, open_index
from ..formats.checksum import array_checksum, recorded
from ..formats.index import Index, iter_index_chunks, negative_ids_of, spec_record
from ..formats.stream import StreamReader, read_stream
from ..hashing.hasher import NgramHasher
from ..spec.hashspec import HashSpec
from ..tokenizers.vocab import CompressedVocab, table_vocab
from ..util.chunks import canonical_chunks, checked_chunks
from ..util.errors import NgramToolError
from ..util.lookup import DEAD
from ..util.wording import all_of, plural


@dataclass
class VerifyReport:
    """What was checked, for the summary."""

    num_tokens: int = 0
    num_documents: int = 0
    checks: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Table:
    """A lookup table read once: its vocabulary, and what it is (identity, compression's form)."""

    vocab: CompressedVocab
    identity: bool
    compression_form: bool


@dataclass
class _Seen:
    """Work the shards of a dataset share: lookup table files hashed, tables examined, derived
    constants computed."""

    lut_digests: dict[tuple[str, str], str] = field(default_factory=dict)  # (real path, algorithm) -> digest
    tables: dict[tuple[str, str], _Table] = field(default_factory=dict)  # (algorithm, digest) -> table
    derived: dict[str, dict[str, Any]] = field(default_factory=dict)  # spec fingerprint -> constants

    def lut_digest(self, index: Index, algorithm: str) -> str:
        """The checksum of the index's lookup table (a table shared by shards is hashed once)."""
        key = (os.path.realpath(index.array_path("lut")), algorithm)
        if key not in self.lut_digests:
            self.lut_digests[key] = array_checksum(index.lut, algorithm)
        return self.lut_digests[key]

    def table(self, index: Index, algorithm: str, digest: str) -> _Table:
        """The index's lookup table, whose checksum is ``digest``, examined (once per content)."""
        if (algorithm, digest) not in self.tables:
            self.tables[algorithm, digest] = _examine_lut(index.lut)
        return self.tables[algorithm, digest]

    def derived_constants(self, spec: HashSpec) -> dict[str, Any]:
        """The manifest record of the spec's derived constants (computed once per spec)."""
        if spec.fingerprint not in self.derived:
            self.derived[spec.fingerprint] = spec_record(spec)["derived"]
        return self.derived[spec.fingerprint]


def _examine_lut(lut: np.ndarray) -> _Table:
    """The vocabulary of a lookup table, and whether it is the identity or has the form the
    compression gives: -1 (no token) or a canonical id, numbered by first use in raw id order,
    every one of 0..V'-1 used. Entries marked DEAD (-2, ``mask_tokens``) hide the canonical id
    they had, so they are left out of both checks, and with any of them the numbering by first
    use is not checked (the first use of an id may be the DEAD one)."""
    vocab = table_vocab(lut)
    lut, size = vocab.lut, vocab.size
    alive = lut != DEAD
    identity = bool(np.array_equal(lut[alive], np.arange(lut.shape[0])[alive]))
    used = lut[lut >= 0]
    values, first_use = np.unique(used, return_index=True)
    if alive.all():
        numbered = np.array_equal(values, np.arange(size)) and np.all(np.diff(first_use) > 0)
    else:
        numbered = bool(np.all(values < size))
    compression_form = bool(np.all(lut >= DEAD) and numbered)
    return _Table(vocab, identity, compression_form)


def _check_rows(
    stored: np.ndarray, expected: np.ndarray, first_position: int, spec: HashSpec, what: str = "rows"
) -> None:
    """Raise at the first difference, saying which manifest claim the stored row breaks, if any."""
    if np.array_equal(stored, expected):
        return
    bad = np.argwhere(stored != expected)[0]
    t, layer, col = (int(x) for x in bad)
    value, wanted = int(stored[t, layer, col]), int(expected[t, layer, col])
    low = int(spec.offsets[layer, col])
    high = low + int(spec.primes.reshape(spec.num_layers, -1)[layer, col])
    if value < 0 <= wanted:
        hint = "; a negative row marks a masked token, and this token is not masked (negative_ids 'mask')"
    elif not low <= value < high:
        hint = (
            f"; it lies outside that column's table rows [{low}, {high}), which rows with the column "
            "offsets added (offsets_added true) never do"
        )
    else:
        hint = ""
    raise NgramToolError(
        f"{what} differ from the recomputation at token {first_position + t} (layer index {layer}, "
        f"column {col}): stored {value}, expected {wanted}{hint}"
    )


def _check_descriptions(manifest: dict[str, Any], spec: HashSpec, table: _Table, seen: _Seen) -> None:
    """The manifest's descriptions of the spec, vocabulary and rows agree with what was read."""
    vocab, recorded_vocab = table.vocab, manifest["vocab"]
    if vocab.fingerprint != recorded_vocab["fingerprint"]:
        raise NgramToolError("the lookup table does not match the vocabulary fingerprint in the manifest")
    sizes = (recorded_vocab["size"], recorded_vocab["raw_size"])
    if sizes != (spec.vocab_size, vocab.raw_size):
        raise NgramToolError(
            f"the manifest's vocabulary sizes {sizes[0]}/{sizes[1]} disagree with "
            f"the spec's V'={spec.vocab_size} and the lookup table's {vocab.raw_size} raw ids"
        )
    if not recorded_vocab["compressed"] and not table.identity:
        raise NgramToolError(
            "the manifest says the vocabulary is not compressed (compressed false), but the lookup "
            "table is not the identity map"
        )
    if recorded_vocab["compressed"] and not table.compression_form:
        raise NgramToolError(
            "the manifest says the vocabulary is compressed (compressed true), but the lookup table "
            "is not one the compression makes (canonical ids numbered by first use, every one used)"
        )
    recorded = manifest["spec"]
    if recorded["fingerprint"] != spec.fingerprint:
        raise NgramToolError("the HashSpec fields do not match the spec fingerprint in the manifest")
    if recorded["derived"] != seen.derived_constants(spec):
        raise NgramToolError(
            "the manifest's derived constants (multipliers, primes, offsets, rows per layer) are not "
            "the spec's: size tables from the spec, not from this manifest"
        )
    if manifest["rows"]["dtype"] != spec.row_dtype.newbyteorder("<").str:
        raise NgramToolError(f"the manifest's row dtype is not the spec's {spec.row_dtype}")


def verify_index(index: Index, seen: _Seen | None = None) -> VerifyReport:
    """Check the checksums, the fingerprints and every row of an index; raise at the first problem.

    Opening the index checked the manifest's fields and the arrays' shapes and document offsets.
    ``seen`` carries the tables already examined across the shards of a dataset.
    """
    seen = seen if seen is not None else _Seen()
    report = VerifyReport(num_tokens=len(index), num_documents=int(index.manifest["num_documents"]))
    manifest = index.manifest
    algorithms: Counter[str] = Counter()
    for name, record in manifest["arrays"].items():
        algorithm, expected = recorded(record, "data")
        if name == "lut":
            actual = seen.lut_digest(index, algorithm)
            table = seen.table(index, algorithm, actual)
        else:
            actual = array_checksum(index.mapped(name), algorithm)
        if actual != expected:
            raise NgramToolError(
                f"{record['file']}: data {algorithm} {actual[:16]}... does not match the manifest"
            )
        algorithms[algorithm] += 1
    report.checks.append(
        ", ".join(f"{algorithm} of {plural(count, 'array')}" for algorithm, count in algorithms.items())
    )
    _check_descriptions(manifest, index.spec, table, seen)
    report.checks.append("counts, vocabulary, spec fingerprint and derived constants")
    if index.token_blocks is not None:
        index.token_blocks.check_all()
        for _ in checked_chunks(iter_index_chunks(index), table.vocab):
            pass  # an id without a canonical id raises, naming its position
        report.checks.append(
            f"block checksums of {all_of(len(index), 'token')}; every token has a canonical id "
            "(tokens-only: the rows are computed from them when read)"
        )
        return report
    hasher = NgramHasher(index.spec, boundary=manifest["boundary"], negative_ids=negative_ids_of(manifest))
    for lo, chunk, canonical in canonical_chunks(iter_index_chunks(index), table.vocab):
        stored = np.asarray(index.rows[lo : lo + chunk.tokens.shape[0]])
        _check_rows(stored, hasher(canonical, chunk.doc_starts), lo, index.spec)
    report.checks.append(f"{all_of(len(index), 'row')} re-derived (boundary {manifest['boundary']})")
    return report


def verify_stream(reader: StreamReader) -> VerifyReport:
    """Read a whole stream (CRCs, trailer, checksum) and re-derive every row."""
    table = _examine_lut(reader.lut)
    _check_descriptions(reader.manifest, reader.spec, table, _Seen())
    manifest = reader.manifest
    hasher = NgramHasher(reader.spec, boundary=manifest["boundary"], negative_ids=negative_ids_of(manifest))
    for first, chunk, canonical in canonical_chunks(reader, table.vocab):
        _check_rows(chunk.rows, hasher(canonical, chunk.doc_starts), first, reader.spec)
    return VerifyReport(
        num_tokens=reader.num_tokens,
        num_documents=reader.num_documents,
        checks=[
            f"chunk CRCs, trailer counts and stream {reader.checksum}",
            "vocabulary, spec fingerprint and derived constants",
            f"{all_of(reader.num_tokens, 'row')} re-derived",
        ],
    )


def verify_dataset(dataset: IndexLike) -> VerifyReport:
    """Verify every shard of a merged dataset (opening it already checked each shard's manifest hash).

    Shards are opened one after the other; a lookup table the shards share is hashed and examined once.
    """
    manifest = dataset.manifest
    report = VerifyReport(num_tokens=len(dataset), num_documents=int(manifest["num_documents"]))
    seen = _Seen()
    start = 0
    for shard in dataset.shards:
        try:
            verify_index(shard, seen)
        except NgramToolError as exc:
            raise NgramToolError(f"shard {shard.path} (dataset tokens from {start:,}): {exc}") from None
        start += len(shard)
    report.checks.append(f"{plural(len(dataset.shards), 'shard manifest')} match dataset.json")
    report.checks.append(
        f"every shard verified: checksums, fingerprints, {all_of(len(dataset), 'row')} re-derived"
    )
    left_out = manifest.get("left_out", [])
    if left_out:
        names = ", ".join(entry["path"] for entry in left_out[:3]) + (", ..." if len(left_out) > 3 else "")
        report.checks.append(
            f"{plural(len(left_out), 'entry', 'entries')} left out when merged ({names}; see dataset.json)"
        )
    return report


def verify(index: IndexLike) -> VerifyReport:
    """Verify an index or every shard of a merged dataset (see :func:`verify_index`)."""
    return verify_dataset(index) if index.kind == "dataset" else verify_index(index.shards[0])


def verify_path(path: str | Path) -> VerifyReport:
    """Verify what ``path`` holds: an index, a merged dataset or a stream file (``-``: a stream on
    stdin); raise at the first problem, naming it.

    >>> from ngramtool.tools.verify import verify_path
    >>> report = verify_path("corpus.ngidx")
    >>> report.num_tokens, report.checks[-1]
    (158122, 'all 158,122 rows re-derived (boundary none)')
    """
    if str(path) == "-":
        return verify_stream(read_stream(sys.stdin.buffer))
    hint = f"only these hold rows to verify; `ngramtool inspect {path}` describes other files"
    kind = expect_kind(path, [Kind.INDEX, Kind.DATASET, Kind.STREAM], hint)
    if kind is Kind.STREAM:
        with Path(path).open("rb") as source:
            return verify_stream(read_stream(source))
    return verify(open_index(path))
