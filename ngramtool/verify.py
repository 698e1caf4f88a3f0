"""Re-derive every row of an index or a stream and check every checksum.

The rows of an index are a pure function of its tokens, its lookup table, its HashSpec, its
document offsets and its boundary policy, all of which the index carries. ``verify_index``
recomputes them chunk by chunk (bounded memory) and raises at the first difference.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .errors import NgramToolError
from .formats.dataset import MergedIndex
from .formats.index import Index, spec_record
from .formats.stream import FORMAT_NAME as STREAM_FORMAT
from .formats.stream import StreamReader
from .hashing import NgramHasher
from .pipeline import iter_index_chunks
from .spec import HashSpec
from .vocab import CompressedVocab

READ_BYTES = 16 << 20


@dataclass
class VerifyReport:
    """What was checked, for the summary."""

    num_tokens: int = 0
    num_documents: int = 0
    checks: list[str] = field(default_factory=list)


def _file_data_sha256(path: Path, offset: int) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        handle.seek(offset)
        while block := handle.read(READ_BYTES):
            digest.update(block)
    return digest.hexdigest()


def _vocab_from_lut(lut: np.ndarray) -> CompressedVocab:
    lut = np.asarray(lut, dtype=np.int64)
    size = int(lut.max(initial=-1)) + 1
    return CompressedVocab(lut, tuple(str(i) for i in range(size)), True, "")


def _check_rows(stored: np.ndarray, expected: np.ndarray, first_position: int, what: str = "rows") -> None:
    if np.array_equal(stored, expected):
        return
    bad = np.argwhere(stored != expected)[0]
    t, layer, col = (int(x) for x in bad)
    raise NgramToolError(
        f"{what} differ from the recomputation at token {first_position + t} (layer index {layer}, "
        f"column {col}): stored {int(stored[t, layer, col])}, expected {int(expected[t, layer, col])}"
    )


def _check_descriptions(manifest: dict[str, Any], spec: HashSpec, vocab: CompressedVocab) -> None:
    """The manifest's descriptions of the spec, vocabulary and rows agree with what was read."""
    recorded_vocab = manifest.get("vocab") or {}
    if vocab.fingerprint != recorded_vocab.get("fingerprint"):
        raise NgramToolError("the lookup table does not match the vocabulary fingerprint in the manifest")
    sizes = (recorded_vocab.get("size"), recorded_vocab.get("raw_size"))
    if sizes != (spec.vocab_size, vocab.raw_size):
        raise NgramToolError(
            f"the manifest's vocabulary sizes {sizes[0]}/{sizes[1]} disagree with "
            f"the spec's V'={spec.vocab_size} and the lookup table's {vocab.raw_size} raw ids"
        )
    recorded = manifest.get("spec") or {}
    if recorded.get("fingerprint") != spec.fingerprint:
        raise NgramToolError("the HashSpec fields do not match the spec fingerprint in the manifest")
    if recorded.get("derived") != spec_record(spec)["derived"]:
        raise NgramToolError(
            "the manifest's derived constants (multipliers, primes, offsets, rows per layer) are not "
            "the spec's: size tables from the spec, not from this manifest"
        )
    if (manifest.get("rows") or {}).get("dtype") != spec.row_dtype.newbyteorder("<").str:
        raise NgramToolError(f"the manifest's row dtype is not the spec's {spec.row_dtype}")


def verify_index(index: Index) -> VerifyReport:
    """Check the checksums, the fingerprints and every row of an index; raise at the first problem."""
    report = VerifyReport(num_tokens=len(index), num_documents=int(index.doc_offsets.shape[0] - 1))
    manifest = index.manifest
    if (manifest.get("num_tokens"), manifest.get("num_documents")) != (
        report.num_tokens,
        report.num_documents,
    ):
        raise NgramToolError(
            f"the manifest counts {manifest.get('num_tokens')} tokens and {manifest.get('num_documents')} "
            f"documents but the arrays hold {report.num_tokens} and {report.num_documents}"
        )
    for name, record in manifest["arrays"].items():
        array = getattr(index, name)
        offset = int(getattr(array, "offset", 128))
        actual = _file_data_sha256(index.path / record["file"], offset)
        if actual != record["data_sha256"]:
            raise NgramToolError(
                f"{record['file']}: data sha256 {actual[:16]}... does not match the manifest"
            )
    report.checks.append(f"sha256 of {len(manifest['arrays'])} arrays")
    vocab = _vocab_from_lut(index.lut)
    _check_descriptions(manifest, index.spec, vocab)
    report.checks.append("counts, vocabulary, spec fingerprint and derived constants")
    offsets = np.asarray(index.doc_offsets)
    if offsets.size == 0 or offsets[0] != 0 or offsets[-1] != len(index) or np.any(np.diff(offsets) < 0):
        raise NgramToolError("doc_offsets must rise from 0 to the token count")
    hasher = NgramHasher(index.spec, boundary=manifest["boundary"])
    lo = 0
    for chunk in iter_index_chunks(index):
        hi = lo + chunk.tokens.shape[0]
        expected = hasher(vocab.canonicalize(chunk.tokens, first_position=lo), chunk.doc_starts)
        _check_rows(np.asarray(index.rows[lo:hi]), expected, lo)
        lo = hi
    report.checks.append(f"all {len(index):,} rows re-derived (boundary {manifest['boundary']})")
    return report


def verify_stream(reader: StreamReader) -> VerifyReport:
    """Read a whole stream (CRCs, trailer, checksum) and re-derive every row."""
    if reader.manifest.get("format") != STREAM_FORMAT:
        raise NgramToolError(f"the stream's manifest names format {reader.manifest.get('format')!r}")
    vocab = _vocab_from_lut(reader.lut)
    _check_descriptions(reader.manifest, reader.spec, vocab)
    hasher = NgramHasher(reader.spec, boundary=reader.manifest["boundary"])
    for chunk in reader:
        canonical = vocab.canonicalize(chunk.tokens, first_position=reader.num_tokens - chunk.tokens.shape[0])
        expected = hasher(canonical, chunk.doc_starts)
        _check_rows(chunk.rows, expected, reader.num_tokens - chunk.tokens.shape[0])
    return VerifyReport(
        num_tokens=reader.num_tokens,
        num_documents=reader.num_documents,
        checks=[
            "chunk CRCs, trailer counts and stream sha256",
            "vocabulary, spec fingerprint and derived constants",
            f"all {reader.num_tokens:,} rows re-derived",
        ],
    )


def verify_dataset(dataset: MergedIndex) -> VerifyReport:
    """Verify every shard of a merged dataset (opening it already checked each shard's manifest hash)."""
    report = VerifyReport(num_tokens=len(dataset), num_documents=int(dataset.doc_offsets.shape[0] - 1))
    start = 0
    for shard in dataset.shards:
        try:
            verify_index(shard)
        except NgramToolError as exc:
            raise NgramToolError(f"shard {shard.path} (dataset tokens from {start:,}): {exc}") from None
        start += len(shard)
    report.checks.append(f"{len(dataset.shards)} shard manifests match dataset.json")
    report.checks.append(
        f"every shard verified: checksums, fingerprints, all {len(dataset):,} rows re-derived"
    )
    return report
