"""Megatron-LM's Engram token map: the artifact its ``tools/engram/generate_tokenizer_map.py``
writes and its ``EngramConfig`` loads (``megatron-engram-token-map``, version 1), written from a
mapping and checked against one.

The generator (NVIDIA/Megatron-LM PR #7231, ``tools/engram/``) maps every raw id of the tokenizer
(``range(len(tokenizer))``) to its compressed id, the Engram demo's first-occurrence projection
(ngramtool's compressed vocabulary: the same lookup table), extends the map to
``--padded-vocab-size`` with the compressed pad, and writes one JSON object, keys sorted, compact,
UTF-8 as is, then a newline:

=============================  ===============================================================
key                            value
=============================  ===============================================================
``format``, ``version``        ``megatron-engram-token-map``, 1
``tokenizer_name_or_path``     the tokenizer as given
``source_vocab_size``          the padded size (the model's vocabulary), the map's length
``tokenizer_vocab_size``       the tokenizer's raw ids
``compressed_vocab_size``      V'
``normalization``              ``NFKC+NFD+StripAccents+Lowercase+WhitespaceCollapse``
``pad_token_id``               the raw pad; ``compressed_pad_token_id`` is ``remap[pad_token_id]``
``max_ngram_order``            N
``hash_seed``                  the multipliers' seed
``layer_ids``                  the Engram layers
``layer_multipliers``          ``{"<layer id>": [N odd integers]}``: numpy PCG64 seeded
                               ``hash_seed + 10007 * layer_id``, bounded by V' (the Engram demo's)
``remap``                      raw id -> compressed id, padded ids -> the compressed pad
=============================  ===============================================================

Megatron's ``deepseek`` variant hashes with the Engram demo's semantics: the compressed pad before
each sequence start, windows that do not reset at document boundaries, and no DEAD barrier (masked
tokens are not a concept there): :data:`SEMANTICS`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..spec.hashspec import INT64_MAX
from ..util.atomic import Staged, check_output_file
from ..util.errors import NgramToolError, UsageError
from .engine_check import CheckReport, ConstantCheck, RuleCheck
from .engine_constants import EngineConstants

FORMAT = "megatron-engram-token-map"
"""The ``format`` of the artifact."""
VERSION = 1
NORMALIZATION = "NFKC+NFD+StripAccents+Lowercase+WhitespaceCollapse"
"""The generator's ``normalization`` field: the Engram demo's normalizer chain, by name."""
FILE_FORMAT = "megatron-token-map"
"""The name ``spec export --format`` gives the artifact."""
SEMANTICS = (
    "Megatron-LM's deepseek variant: the Engram demo's rows (the compressed pad before each "
    "sequence start, no reset at document boundaries, no DEAD barrier)"
)
"""Which rows an engine reading the artifact computes."""
_SCALARS = (
    "version",
    "source_vocab_size",
    "tokenizer_vocab_size",
    "compressed_vocab_size",
    "pad_token_id",
    "compressed_pad_token_id",
    "max_ngram_order",
    "hash_seed",
)
_TEXTS = ("format", "tokenizer_name_or_path", "normalization")


def megatron_token_map(constants: EngineConstants, *, tokenizer: str) -> dict[str, Any]:
    """The artifact of ``constants`` (:meth:`EngineConstants.from_mapping`: their token map padded
    to the model's vocabulary when it is larger), as Megatron's generator writes it for
    ``tokenizer`` (the name or path given).

    Raises UsageError for constants the artifact cannot carry: no token map, no raw pad, a raw id
    without a token (Megatron's generator decodes every id below ``len(tokenizer)``).

    Examples:
        >>> from dataclasses import replace
        >>> from ngramtool import HashSpec
        >>> spec = HashSpec(heads=1, layer_ids=(1,), table_sizes=(10, 10), pad_id=1)
        >>> base = EngineConstants.from_spec(spec)
        >>> constants = replace(base, token_map=np.array([0, 1, 1], dtype=np.int32), raw_pad_id=1)
        >>> artifact = megatron_token_map(constants.padded_to(4), tokenizer="tok")
        >>> artifact["remap"], artifact["source_vocab_size"], artifact["tokenizer_vocab_size"]
        ([0, 1, 1, 1], 4, 3)
    """
    if constants.token_map is None or constants.seed is None:
        raise UsageError("a Megatron token map maps raw ids: give the model's tokenizer (--tokenizer)")
    if constants.raw_pad_id is None:
        raise UsageError(
            "a Megatron token map records the raw pad (pad_token_id): give it with --pad-id "
            "(the raw id whose compressed id is the spec's pad)"
        )
    remap = constants.token_map
    holes = np.flatnonzero(remap < 0)
    if holes.size:
        raise UsageError(
            f"raw id {int(holes[0])} has no token ({holes.size:,} such ids): Megatron's generator maps "
            "every id below len(tokenizer) of a Hugging Face tokenizer; give the model's tokenizer.json"
        )
    tokenizer_ids = len(remap) if constants.token_map_padded_from is None else constants.token_map_padded_from
    return {
        "format": FORMAT,
        "version": VERSION,
        "tokenizer_name_or_path": tokenizer,
        "source_vocab_size": len(remap),
        "tokenizer_vocab_size": tokenizer_ids,
        "compressed_vocab_size": constants.compressed_vocab_size,
        "normalization": NORMALIZATION,
        "pad_token_id": constants.raw_pad_id,
        "compressed_pad_token_id": int(remap[constants.raw_pad_id]),
        "max_ngram_order": constants.max_ngram,
        "hash_seed": constants.seed,
        "layer_ids": [int(x) for x in constants.layer_ids],
        "layer_multipliers": {
            str(int(layer)): [int(m) for m in row]
            for layer, row in zip(constants.layer_ids, constants.multipliers, strict=True)
        },
        "remap": [int(x) for x in remap],
    }


def artifact_text(artifact: dict[str, Any]) -> str:
    """The artifact as the generator writes it: sorted keys, no spaces, UTF-8 as is, a newline."""
    return json.dumps(artifact, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"


def write_megatron_token_map(artifact: dict[str, Any], output: str | Path, *, force: bool = False) -> None:
    """Write ``artifact`` to ``output`` (replaced only with ``force``), staged then renamed."""
    check_output_file(output, force)
    try:
        with Staged(output) as staged:
            staged.path.write_text(artifact_text(artifact), encoding="utf-8", newline="\n")
            staged.publish()
    except OSError as exc:
        raise NgramToolError(f"cannot write {output}: {exc.strerror}") from None


# ------------------------------------------------------------------------------- reading
def read_megatron_token_map(path: str | Path) -> dict[str, Any] | None:
    """The artifact in ``path`` when it is a JSON object of format ``megatron-engram-token-map``;
    None for any other file (another format, not JSON)."""
    path = Path(path)
    try:
        with path.open("rb") as handle:
            if handle.read(64).lstrip()[:1] != b"{":
                return None
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return record if isinstance(record, dict) and record.get("format") == FORMAT else None


# ------------------------------------------------------------------------------ checking
@dataclass(frozen=True)
class _Values:
    """One list field of the artifact, flattened, and what each index is."""

    values: list[Any]
    where: list[str]


def _lists(artifact: dict[str, Any], layer_ids: list[int]) -> dict[str, _Values]:
    """``layer_ids``, ``layer_multipliers`` (by the derived layers, each lag) and ``remap``."""
    multipliers = artifact.get("layer_multipliers")
    multipliers = multipliers if isinstance(multipliers, dict) else {}
    flat: list[Any] = []
    where: list[str] = []
    for layer in layer_ids:
        row = multipliers.get(str(layer))
        row = row if isinstance(row, list) else [None]
        flat += row
        where += [f"layer {layer}, lag {lag}" for lag in range(len(row))]
    remap = artifact.get("remap")
    remap = remap if isinstance(remap, list) else []
    layers = artifact.get("layer_ids")
    layers = layers if isinstance(layers, list) else []
    return {
        "layer_ids": _Values(layers, [f"index {i}" for i in range(len(layers))]),
        "layer_multipliers": _Values(flat, where),
        "remap": _Values(remap, [f"raw id {i}" for i in range(len(remap))]),
    }


def check_megatron_token_map(
    path: str | Path, found: dict[str, Any], constants: EngineConstants, *, tokenizer: str
) -> CheckReport:
    """Compare the artifact ``found`` (read from ``path``) with the one ``constants`` make
    (:func:`megatron_token_map`), field by field (lists: the first differing entry, e.g. ``raw id
    128815``), and apply the checks Megatron's ``EngramConfig`` makes when it loads one. A
    differing ``tokenizer_name_or_path`` is reported but changes no id.

    When the constants' map is not padded (no model vocabulary was given), it is padded to the
    ``source_vocab_size`` the artifact records where that is larger; without a known raw pad, the
    artifact's ``pad_token_id`` is taken where it maps to the compressed pad.
    """
    recorded, pad = found.get("source_vocab_size"), found.get("pad_token_id")
    token_map = constants.token_map
    if token_map is None:
        raise UsageError("a Megatron token map maps raw ids: give the model's tokenizer (--tokenizer)")
    unpadded = constants.token_map_padded_from is None
    if unpadded and _is_id(recorded) and recorded > len(token_map):
        constants = constants.padded_to(recorded)
    known = _is_id(pad) and pad < len(token_map) and int(token_map[pad]) == constants.pad_id
    if constants.raw_pad_id is None and known:
        constants = replace(constants, raw_pad_id=pad)
    expected = megatron_token_map(constants, tokenizer=tokenizer)
    checks = [_compare_value(name, found, expected) for name in (*_TEXTS, *_SCALARS)]
    derived_layers = [int(x) for x in expected["layer_ids"]]
    ours, theirs = _lists(expected, derived_layers), _lists(found, derived_layers)
    for name, values in ours.items():
        checks.append(_compare_list(name, theirs[name], values))
    return CheckReport(str(path), "Megatron token map", tuple(checks), tuple(_load_rules(found)))


def _compare_value(name: str, found: dict[str, Any], expected: dict[str, Any]) -> ConstantCheck:
    source = f"JSON {name}"
    if name not in found:
        return ConstantCheck(name, "absent")
    if found[name] == expected[name]:
        return ConstantCheck(name, "ok", source)
    if name == "tokenizer_name_or_path":
        return ConstantCheck(name, "named otherwise", source, expected=expected[name], found=found[name])
    return ConstantCheck(name, "differs", source, expected=expected[name], found=found[name])


def _compare_list(name: str, found: _Values, expected: _Values) -> ConstantCheck:
    source = f"JSON {name}"
    if not found.values:
        return ConstantCheck(name, "absent")
    for index, (want, have) in enumerate(zip(expected.values, found.values, strict=False)):
        if want != have:
            return ConstantCheck(name, "differs", source, index, expected.where[index], want, have)
    if len(found.values) == len(expected.values):
        return ConstantCheck(name, "ok", source)
    index = min(len(found.values), len(expected.values))
    detail = f"holds {len(found.values):,} values, expected {len(expected.values):,}"
    where = (expected.where if len(expected.values) > index else found.where)[index]
    want = expected.values[index] if len(expected.values) > index else None
    have = found.values[index] if len(found.values) > index else None
    return ConstantCheck(name, "differs", source, index, where, want, have, detail)


def _load_rules(found: dict[str, Any]) -> list[RuleCheck]:
    """What Megatron's ``EngramConfig._load_tokenizer_map`` (and ``validate_vocabulary``) require of
    an artifact on its own."""
    remap = found.get("remap")
    remap = remap if isinstance(remap, list) else []
    size = found.get("compressed_vocab_size")
    source = found.get("source_vocab_size")
    tokenizer = found.get("tokenizer_vocab_size")
    pad = found.get("pad_token_id")
    rules = [
        RuleCheck("format and version 1", "ok")
        if found.get("version") == VERSION
        else RuleCheck("format and version 1", "failed", value=repr(found.get("version")))
    ]
    length = "the remap has source_vocab_size entries"
    rules.append(
        RuleCheck(length, "ok")
        if len(remap) == source
        else RuleCheck(length, "failed", value=len(remap), detail=f"source_vocab_size is {source!r}")
    )
    bad = next(
        (i for i, x in enumerate(remap) if not _is_id(x) or not isinstance(size, int) or x >= size), None
    )
    entries = f"remap entries are integers in [0, compressed_vocab_size = {size!r})"
    rules.append(
        RuleCheck(entries, "ok") if bad is None else RuleCheck(entries, "failed", bad, repr(remap[bad]))
    )
    pad_rule = "compressed_pad_token_id is remap[pad_token_id]"
    if not _is_id(pad) or pad >= len(remap):
        rules.append(
            RuleCheck(pad_rule, "failed", value=repr(pad), detail="pad_token_id is no raw id of the remap")
        )
    elif found.get("compressed_pad_token_id") != remap[pad]:
        detail = f"remap[{pad}] is {remap[pad]}"
        rules.append(
            RuleCheck(pad_rule, "failed", value=repr(found.get("compressed_pad_token_id")), detail=detail)
        )
    else:
        rules.append(RuleCheck(pad_rule, "ok"))
    rules.append(_multiplier_rule(found, size))
    rules.append(_padding_rule(remap, tokenizer, found.get("compressed_pad_token_id")))
    return rules


def _multiplier_rule(found: dict[str, Any], size: Any) -> RuleCheck:
    rule = "each layer has max_ngram_order odd multipliers in [1, INT64_MAX // (V' - 1)]"
    multipliers = found.get("layer_multipliers")
    if not isinstance(multipliers, dict) or not isinstance(size, int) or size < 1:
        return RuleCheck(rule, "failed", detail="no layer_multipliers object, or no compressed_vocab_size")
    bound = INT64_MAX // max(size - 1, 1)
    for layer in found.get("layer_ids") or []:
        row = multipliers.get(str(layer))
        if not isinstance(row, list) or len(row) != found.get("max_ngram_order"):
            return RuleCheck(rule, "failed", value=repr(row), detail=f"layer {layer}")
        for lag, value in enumerate(row):
            if not _is_id(value) or value % 2 == 0 or not 1 <= value <= bound:
                return RuleCheck(rule, "failed", lag, repr(value), f"layer {layer}, lag {lag}")
    return RuleCheck(rule, "ok")


def _padding_rule(remap: list[Any], tokenizer: Any, pad: Any) -> RuleCheck:
    rule = "entries past tokenizer_vocab_size are the compressed pad"
    if not _is_id(tokenizer) or tokenizer > len(remap):
        return RuleCheck(rule, "not checked", detail=f"tokenizer_vocab_size is {tokenizer!r}")
    wrong = next((i for i in range(tokenizer, len(remap)) if remap[i] != pad), None)
    return RuleCheck(rule, "ok") if wrong is None else RuleCheck(rule, "failed", wrong, repr(remap[wrong]))


def _is_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
