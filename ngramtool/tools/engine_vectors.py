"""Test vectors for an engine's own test suite: ids and rows of a text, masked and served.

``ngramtool spec vectors`` writes, for one text: the raw ids as the tokenizer gives them, the
canonical ids, and the rows of every layer in three cases (nothing masked; a span of DEAD tokens
under each masking convention), plus the same rows as an engine computes them incrementally: a
prefill chunk, a speculative draft of other tokens that the model rejects, rolled back, then one
decode step per token (:class:`ngramtool.HashState`). The format is in docs/deepseek-v4.1.md
("Vectors for an engine's tests").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ..hashing.backends import MASKED_CONVENTIONS
from ..hashing.hasher import hash_ngrams
from ..hashing.serving import HashState
from ..model.mapping import NgramHashMapping
from ..util.atomic import check_output_file, staged_file
from ..util.errors import NgramToolError, UsageError
from ..util.wording import plural
from .engine_constants import EngineConstants

FORMAT = "ngramtool.engram-vectors"
FORMAT_VERSION = 1
DRAFT = 2  # draft tokens the serving replay decodes, rolls back and decodes again


def engine_vectors(
    mapping: NgramHashMapping,
    text: str,
    *,
    masked_span: tuple[int, int] | None = None,
    prefill: int | None = None,
) -> dict[str, Any]:
    """The vectors of ``text`` (see the module docstring) as plain JSON values.

    Args:
        mapping: the tokenizer, vocabulary and spec (it must have a tokenizer).
        text: the text, read as one document.
        masked_span: token positions ``[start, end)`` that are DEAD in the masked cases
            (default: a sixth of the tokens, from a third in).
        prefill: the tokens of the prefill chunk in the serving replay (default: half).

    Examples:
        >>> from ngramtool import NgramHashMapping
        >>> mapping = NgramHashMapping.build("cl100k_base", heads=2, table_sizes=4099)
        >>> vectors = engine_vectors(mapping, "one two three four five six seven eight nine ten")
        >>> [case["name"] for case in vectors["cases"]], vectors["masked_span"]
        (['unmasked', 'barrier', 'minus-one'], [3, 4])
    """
    if mapping.tokenizer is None:
        raise UsageError("vectors start from text: give the model's `tokenizer`")
    raw = mapping.encode(text)
    length = raw.shape[0]
    if length < 2:
        raise UsageError(f"the text has {length} token(s): give a text of at least two tokens")
    start, end = masked_span if masked_span is not None else (length // 3, length // 3 + max(1, length // 6))
    if not 0 <= start < end <= length:
        raise UsageError(
            f"`masked_span` [{start}, {end}) must lie within the text's {plural(length, 'token')}"
        )
    cut = prefill if prefill is not None else length // 2
    if not 1 <= cut < length:
        raise UsageError(f"`prefill` must leave at least one token to decode: 1 <= prefill < {length}")
    canonical = mapping.canonical(raw)
    dead = np.zeros(length, dtype=bool)
    dead[start:end] = True
    masked_ids = np.where(dead, -1, canonical)
    cases = [_case("unmasked", mapping, canonical, None)]
    cases += [_case(name, mapping, masked_ids, convention) for name, convention in MASKED_CONVENTIONS.items()]
    spec = mapping.spec
    constants = EngineConstants.from_mapping(mapping)
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "tokenizer": mapping.tokenizer.name,
        "spec": spec.to_dict(),
        "spec_fingerprint": spec.fingerprint,
        "layer_ids": list(spec.layer_ids),
        "columns": "(n-2)*K + head, rows with each layer's offsets added",
        "pad_id": spec.pad_id,
        "compressed_vocab_size": spec.vocab_size,
        "token_map_sha256": constants.token_map_sha256,
        "text": text,
        "raw_ids": raw.astype(np.int64).tolist(),
        "canonical_ids": canonical.tolist(),
        "masked_span": [start, end],
        "token_mask": (~dead).tolist(),
        "cases": cases,
        "serving": _serving(mapping, masked_ids, cut, cases[1]),
    }


def write_vectors(vectors: dict[str, Any], path: str | Path, *, force: bool = False) -> None:
    """Write ``vectors`` as JSON (a temporary file renamed into place); an existing file is
    replaced only with ``force``."""
    path = Path(path)
    check_output_file(path, force, what="vectors file")
    try:
        with staged_file(path) as tmp:
            tmp.write_text(json.dumps(vectors) + "\n", encoding="utf-8")
    except OSError as exc:
        raise NgramToolError(f"cannot write {path}: {exc.strerror}") from None


def _case(name: str, mapping: NgramHashMapping, ids: np.ndarray, convention: str | None) -> dict[str, Any]:
    """One case: the ids the hash sees (-1 for DEAD) and each layer's rows."""
    rows = hash_ngrams(ids, mapping.spec, negative_ids=convention or "mask")
    return {
        "name": name,
        "negative_ids": convention,
        "ids": ids.tolist(),
        "rows": _by_layer(mapping, rows),
    }


def _serving(mapping: NgramHashMapping, ids: np.ndarray, cut: int, case: dict[str, Any]) -> dict[str, Any]:
    """The barrier case replayed as an engine serves it: a prefill chunk, a draft of ``DRAFT``
    tokens the model rejects (other ids than the accepted ones: ``(|id| + 1) mod V'``), rolled
    back, then one decode step per accepted token. Each step's rows are checked against one-shot
    hashing (of the prefix and the draft, for the draft) before they are written."""
    spec = mapping.spec
    state = HashState(spec, negative_ids=case["negative_ids"])
    draft = min(DRAFT, ids.shape[0] - cut)
    rejected = (np.abs(ids[cut : cut + draft]) + 1) % spec.vocab_size
    with_draft = hash_ngrams(np.concatenate([ids[:cut], rejected]), spec, negative_ids=case["negative_ids"])
    whole = np.stack([np.array(layer["rows"]) for layer in case["rows"]], axis=1)
    steps: list[dict[str, Any]] = []

    def extend(chunk: np.ndarray, lo: int, op: str, expected: np.ndarray) -> None:
        rows = np.asarray(state.extend(chunk))
        if not np.array_equal(rows, expected[lo : lo + chunk.shape[0]]):
            raise NgramToolError(f"internal error: the {op} at {lo} differs from one-shot hashing")
        positions = [lo, lo + chunk.shape[0]]
        steps.append(
            {"op": op, "positions": positions, "ids": chunk.tolist(), "rows": _by_layer(mapping, rows)}
        )

    extend(ids[:cut], 0, "prefill", whole)
    extend(rejected, cut, "draft", with_draft)
    state.rollback(draft)
    steps.append({"op": "rollback", "count": draft})
    for position in range(cut, ids.shape[0]):
        extend(ids[position : position + 1], position, "decode", whole)
    return {"case": case["name"], "steps": steps}


def _by_layer(mapping: NgramHashMapping, rows: np.ndarray) -> list[dict[str, Any]]:
    """Rows ``[T, L, C]`` as one ``{"layer_id", "rows": [T][C]}`` record per layer."""
    array = np.asarray(rows)
    return [
        {"layer_id": layer, "rows": array[:, index].tolist()}
        for index, layer in enumerate(mapping.spec.layer_ids)
    ]
